// The element-wise operations of arithmetic_generic (ops/math/arithmetic.cc: the Python operators
// on pipeline nodes and stoker.math), shared by its CPU loop and its GPU kernel
// (kernels/cuda/arithmetic_gpu.cu), so that both name an operation the same way.
#pragma once

namespace stoker {

enum class ArithOp {
  kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kMin, kMax, kPow, kFPow, kAtan2, kClamp,
  kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kXor, kNeg, kAbs,
  kSqrt, kRsqrt, kCbrt, kExp, kLog, kLog2, kLog10, kFabs, kFloor, kCeil,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh
};

// kFloat: computed in floating point; integer and boolean operands give float32, as in DALI.
enum class ArithKind { kArith, kCompare, kBitwise, kFloat };

}  // namespace stoker
