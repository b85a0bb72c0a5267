#!/usr/bin/env bash
# Builds the C++ core and its gtests with AddressSanitizer and UndefinedBehaviorSanitizer (its own
# build folder; no Python module and no CUDA, to save time) and runs them. Any sanitizer report
# fails the run: UBSan halts at its first report, ASan at its first error, and LeakSanitizer
# checks for leaks when the tests exit.
# Usage: bash scripts/sanitize.sh                                   (what CI runs)
#        STOKER_GTEST_ARGS="--gtest_filter=ImageCodec*" bash scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_deps.sh

BUILD=${STOKER_ASAN_BUILD_DIR:-build/asan}
JOBS=${STOKER_JOBS:-$(nproc)}
# -O1: ASan's recommendation (usable speed, exact reports); -g1: line numbers in the stacks
# without the size of full debug info.
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_C_FLAGS="$SAN" \
      -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" \
      -DSTOKER_BUILD_TESTS=ON -DSTOKER_BUILD_PYTHON=OFF -DSTOKER_CUDA=OFF >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target stoker_tests

echo "== C++ tests (gtest) under ASan + UBSan"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
if command -v llvm-symbolizer >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer); fi
"$BUILD"/stoker_tests --gtest_brief=1 ${STOKER_GTEST_ARGS:-}
