// libFuzzer harness: pipelines DALI serialized (protobuf), read by pipeline/dali_format.h as
// Pipeline.deserialize and stoker_pipeline_create read a model.dali from an untrusted place.
//
// Input: the file's bytes. A few operators are registered here with the schemas' real names
// and some of their arguments, so that mutations reach the argument checks, the subscript and
// arithmetic conversions and the graph walk, not only "stoker does not have this operator".
// Oracle, beyond sanitizer reports: dali_pipeline_document throws only Error(kInvalidArgument);
// a document it returns is one stoker's readers accept the shape of: every node reference
// points at an operator before the one that reads it (or before the end, for the outputs) and
// at one of its outputs, and there is at least one output.
#include <string>

#include "harness.h"
#include "pipeline/dali_format.h"
#include "pipeline/schema.h"

namespace {

using namespace stoker;
using json = nlohmann::json;

void register_schemas() {
  auto arg = [](const std::string& name, ArgType type, bool tensor = false) {
    ArgDef a;
    a.name = name;
    a.type = type;
    a.optional = true;
    a.tensor = tensor;
    return a;
  };
  SchemaRegistry& r = SchemaRegistry::get();
  r.add("cast").inputs(1, 1).arg(arg("dtype", ArgType::kDType));
  r.add("resize").inputs(1, 1).arg(arg("resize_x", ArgType::kFloat, true))
      .arg(arg("interp_type", ArgType::kInterpType));
  r.add("crop_mirror_normalize").inputs(1, 1).arg(arg("mean", ArgType::kFloatList))
      .arg(arg("mirror", ArgType::kInt, true)).arg(arg("output_layout", ArgType::kString));
  r.add("decoders.image").inputs(1, 1).arg(arg("output_type", ArgType::kImageType));
  r.add("readers.file").outputs(2).arg(arg("file_root", ArgType::kString))
      .arg(arg("files", ArgType::kStringList));
  r.add("random.coin_flip").arg(arg("probability", ArgType::kFloat, true));
  r.add("shapes").inputs(1, 1).arg(arg("dtype", ArgType::kDType));
  OpSchema& sub = r.add("_tensor_subscript").inputs(1, 1);
  for (const char* part : {"at_", "lo_", "hi_", "step_"})
    for (int k = 0; k < 4; ++k)
      sub.arg(arg(part + std::to_string(k), ArgType::kInt, true));
  sub.arg(arg("kinds", ArgType::kIntList));
  r.add("_conditional.split").inputs(1, 1).outputs(2).arg(arg("predicate", ArgType::kBool, true))
      .arg(arg("_if_stmt", ArgType::kBool));
  r.add("_conditional.merge").inputs(2, 2).arg(arg("predicate", ArgType::kBool, true));
}

// A protobuf writer for the regressions (varints and length-delimited fields only).
std::string varint(uint64_t v) {
  std::string s;
  do {
    s += static_cast<char>((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
std::string field(int number, uint64_t v) { return varint(uint64_t(number) << 3) + varint(v); }
std::string field(int number, const std::string& bytes) {
  return varint(uint64_t(number) << 3 | 2) + varint(bytes.size()) + bytes;
}
std::string io(const std::string& name) { return field(1, name) + field(2, std::string("cpu")) + field(3, 0); }
std::string string_arg(const std::string& name, const std::string& v) {
  return field(1, name) + field(2, std::string("string")) + field(5, v) + field(8, 0);
}

void check_ref(const json& ref, int before, const json& ops, const char* what) {
  if (!ref.is_array() || ref.size() != 2 || !ref[0].is_number_integer() ||
      !ref[1].is_number_integer())
    fuzz::finding(std::string(what) + ": a malformed node reference " + ref.dump());
  const int op = ref[0].get<int>(), out = ref[1].get<int>();
  if (op < 0 || op >= before || out < 0 || out >= ops[op]["num_outputs"].get<int>())
    fuzz::finding(std::string(what) + ": the node reference " + ref.dump() +
                  " points past its producers");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json doc;
  if (!fuzz::expect_ok_or("dali_pipeline_document", {ErrorKind::kInvalidArgument},
                          [&] { doc = dali_pipeline_document(data, size, "fuzz"); }))
    return 0;
  const json& ops = doc.at("operators");
  for (size_t k = 0; k < ops.size(); ++k) {
    const json& op = ops[k];
    if (!op.at("num_outputs").is_number_integer() || op["num_outputs"].get<int>() < 1)
      fuzz::finding("operator " + std::to_string(k) + " has no outputs");
    for (const json& in : op.at("inputs")) check_ref(in, static_cast<int>(k), ops, "an input");
    for (const auto& [name, ref] : op.at("tensor_args").items())
      check_ref(ref, static_cast<int>(k), ops, "an argument input");
  }
  if (doc.at("outputs").empty()) fuzz::finding("a document without outputs");
  for (const json& o : doc["outputs"]) check_ref(o, static_cast<int>(ops.size()), ops, "an output");
  return 0;
}

// Inputs found while writing the reader (by review) and by fuzzing, replayed first.
std::vector<fuzz::Regression> regressions() {
  // An arithmetic expression nested 100,000 deep: the recursive reading of it exhausted the
  // stack. dali_format.cc now stops at 100.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "neg(";
  deep += "&0";
  for (int i = 0; i < 100000; ++i) deep += ")";
  std::string es = field(5, field(1, std::string("ExternalSource")) + field(3, io("x")) +
                                field(5, std::string("x")));
  std::string arith = field(5, field(1, std::string("_ArithmeticGenericOp")) + field(2, io("x")) +
                                   field(3, io("y")) +
                                   field(4, string_arg("expression_desc", deep)));
  std::string nested = field(1, 1) + field(2, 1) + es + arith + field(7, io("y"));
  // 50,000 casts listed last-first (each reads the next one's output): walking back from the
  // first recursed 50,000 deep. Now refused past 100.
  std::string chain = field(1, 1) + field(2, 1);
  const int n = 50000;
  for (int i = 0; i < n; ++i)
    chain += field(5, field(1, std::string("Cast")) + field(2, io("t" + std::to_string(i + 1))) +
                          field(3, io("t" + std::to_string(i))));
  chain += field(5, field(1, std::string("ExternalSource")) + field(3, io("t" + std::to_string(n))) +
                        field(5, std::string("x")));
  chain += field(7, io("t0"));
  // An input number of 30 digits in an expression: std::stoul threw std::out_of_range.
  std::string big = field(1, 1) + field(2, 1) + es +
                    field(5, field(1, std::string("_ArithmeticGenericOp")) + field(2, io("x")) +
                                 field(3, io("y")) +
                                 field(4, string_arg("expression_desc",
                                                     "neg(&123456789012345678901234567890)"))) +
                    field(7, io("y"));
  // An operator that lists no outputs (found by fuzzing, 2026-11-28): it became an operator of
  // no outputs in the document. Now refused.
  std::string mute = field(1, 1) + field(2, 1) + es +
                     field(5, field(1, std::string("Cast")) + field(2, io("x"))) + field(7, io("x"));
  return {{"dali_format: an expression nested 100,000 deep", fuzz::bytes_of(nested)},
          {"dali_format: a chain of 50,000 operators listed backwards", fuzz::bytes_of(chain)},
          {"dali_format: an input number of 30 digits", fuzz::bytes_of(big)},
          {"dali_format: an operator of no outputs", fuzz::bytes_of(mute)}};
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  register_schemas();
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
