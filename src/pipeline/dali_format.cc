#include "pipeline/dali_format.h"

#include <cstdio>

#include "core/error.h"

#ifdef STOKER_WITH_PROTOBUF
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "dali_pipeline.pb.h"
#include "pipeline/schema.h"
#endif

namespace stoker {
namespace {

// The first bytes of `data`, printable: "it starts with '\x08\x02...'" in a message.
std::string start_of(const void* data, size_t size) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  std::string start;
  for (size_t i = 0; i < size && i < 24; ++i) {
    if (bytes[i] >= 32 && bytes[i] < 127 && bytes[i] != '\\' && bytes[i] != '\'') {
      start += static_cast<char>(bytes[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", bytes[i]);
      start += buf;
    }
  }
  return "'" + start + (size > 24 ? "...'" : "'");
}

const char* kNeither = "Pass the bytes (or the file) that Pipeline.serialize() wrote, unchanged.";

}  // namespace

#ifndef STOKER_WITH_PROTOBUF

bool dali_format_supported() { return false; }

nlohmann::json dali_pipeline_document(const void* data, size_t size, const std::string& who) {
  fail(ErrorKind::kInvalidArgument,
       who + ": this is not a pipeline serialized by stoker (it starts with " +
       start_of(data, size) + ", where stoker's start with 'stoker.pipeline '), and this build "
       "of stoker cannot read pipelines that DALI serialized (protobuf): it was built without "
       "libprotobuf. For a DALI pipeline, build stoker where libprotobuf is installed ('apt-get "
       "install libprotobuf-dev protobuf-compiler'); otherwise " + std::string(kNeither));
}

#else

bool dali_format_supported() { return true; }

namespace {

using json = nlohmann::json;

// DALI's schema names -> stoker's operators, as scripts/gen_dali_ops.py wrote them from DALI.
const std::map<std::string, std::string>& dali_op_names() {
  static const std::map<std::string, std::string> names = {
#include "pipeline/dali_op_names.inc"
      // Schemas that DALI's fn does not list: its Python-side and internal operators.
      {"readers__TFRecord", "readers.tfrecord"},
      {"_TFRecordReader", "readers.tfrecord"},
      {"_Shape", "shapes"},
      {"_TensorSubscript", "_tensor_subscript"},
      {"_conditional__Split", "_conditional.split"},
      {"_conditional__Merge", "_conditional.merge"},
      {"_conditional__Not", "_conditional.not_"},
      {"_conditional__ValidateLogical", "_conditional.validate_logical"},
  };
  return names;
}

// DALI's arithmetic expression functions whose stoker names differ.
const std::map<std::string, std::string>& arithmetic_names() {
  static const std::map<std::string, std::string> names = {
      {"fdiv", "div"}, {"div", "floordiv"}, {"neq", "ne"}, {"leq", "le"}, {"geq", "ge"},
      {"minus", "neg"},
  };
  return names;
}

const std::map<std::string, const char*>& operator_symbols() {
  static const std::map<std::string, const char*> s = {
      {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}, {"floordiv", "//"}, {"mod", "%"},
      {"pow", "**"}, {"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"},
      {"ge", ">="}, {"bitand", "&"}, {"bitor", "|"}, {"bitxor", "^"}, {"neg", "-"}};
  return s;
}

// The element types DALI writes arithmetic constants with ("$0:int32") -> DALIDataType.
const std::map<std::string, int>& constant_types() {
  static const std::map<std::string, int> t = {
      {"uint8", 0}, {"uint16", 1}, {"uint32", 2}, {"uint64", 3}, {"int8", 4}, {"int16", 5},
      {"int32", 6}, {"int64", 7}, {"float16", 8}, {"float32", 9}, {"float", 9},
      {"float64", 10}, {"double", 10}, {"bool", 11}};
  return t;
}

// Arguments DALI adds to every operator, which say nothing stoker runs by (where it was defined is
// read from _origin_stack_*; a user's name from preserve_name).
bool is_dali_bookkeeping(const std::string& name) {
  return name == "device" || name == "_module" || name == "_display_name" ||
         name == "preserve_name" || name == "preserve" || name == "bytes_per_sample_hint" ||
         name.rfind("_origin_stack_", 0) == 0 || name == "_pipeline_internal" ||
         name == "max_batch_size" || name == "num_threads" || name == "device_id";
}

// A float32 in the fewest digits that read back as the same float32 (0.3f -> 0.3, not
// 0.30000001192092896): what the user wrote in Python, in the common case.
json float_json(float f) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  return std::strtod(buf, nullptr);
}

json argument_json(const dali_proto::Argument& a) {
  if (a.is_vector()) {
    json list = json::array();
    for (const auto& e : a.extra_args()) list.push_back(argument_json(e));
    return list;
  }
  auto one_or_list = [](const auto& field, auto convert) -> json {
    if (field.size() == 1) return convert(field.Get(0));
    json list = json::array();
    for (const auto& x : field) list.push_back(convert(x));
    return list;
  };
  if (a.floats_size()) return one_or_list(a.floats(), [](float f) { return float_json(f); });
  if (a.ints_size()) return one_or_list(a.ints(), [](int64_t i) { return json(i); });
  if (a.bools_size()) return one_or_list(a.bools(), [](bool b) { return json(b); });
  if (a.strings_size())
    return one_or_list(a.strings(), [](const std::string& s) { return json(s); });
  return json();  // an empty value: the argument is left out
}

class Converter {
 public:
  Converter(const dali_proto::PipelineDef& def, std::string who) : def_(def), who_(std::move(who)) {
    for (int i = 0; i < def_.op_size(); ++i)
      for (const auto& out : def_.op(i).output()) producer_.emplace(out.name(), i);
  }

  json run() {
    json params = {{"batch_size", def_.batch_size()},
                   {"num_threads", def_.num_threads()},
                   {"exec_pipelined", true},
                   {"exec_async", true},
                   {"enable_checkpointing", def_.enable_checkpointing()}};
    // DALI writes -99999 (CPU_ONLY_DEVICE_ID) for device_id=None.
    params["device_id"] = def_.device_id() >= 0 ? json(def_.device_id()) : json();
    if (def_.seed() != -1) params["seed"] = def_.seed();
    if (def_.prefetch_queue_depth_cpu() == def_.prefetch_queue_depth_gpu())
      params["prefetch_queue_depth"] = def_.prefetch_queue_depth_cpu();
    else
      params["prefetch_queue_depth"] = {{"cpu_size", def_.prefetch_queue_depth_cpu()},
                                        {"gpu_size", def_.prefetch_queue_depth_gpu()}};
    if (def_.pipe_outputs_size() == 0)
      fail("the DALI pipeline has no outputs (set_outputs was never called?)");
    for (int i = 0; i < def_.op_size(); ++i) emit(i);  // in DALI's order (preserved ones too)
    json outputs = json::array(), dtypes = json::array(), ndims = json::array(),
         layouts = json::array();
    bool any_desc = false;
    for (const auto& out : def_.pipe_outputs()) {
      outputs.push_back(resolve(out, "the pipeline's outputs"));
      dtypes.push_back(out.dtype() >= 0 ? json(dtype_name(out.dtype())) : json());
      ndims.push_back(out.ndim() >= 0 ? json(out.ndim()) : json());
      layouts.push_back(!out.layout().empty() ? json(out.layout()) : json());
      any_desc |= out.dtype() >= 0 || out.ndim() >= 0 || !out.layout().empty();
    }
    if (any_desc) {
      params["output_dtype"] = dtypes;
      params["output_ndim"] = ndims;
      params["output_layout"] = layouts;
    }
    return {{"pipeline", params}, {"operators", ops_}, {"outputs", outputs}};
  }

 private:
  using Key = std::pair<std::string, std::string>;  // a tensor: (name, device)

  [[noreturn]] void fail(const std::string& what) const {
    ::stoker::fail(ErrorKind::kInvalidArgument, who_ + ": " + what);
  }

  static std::string dtype_name(int code) {
    static const char* names[] = {"UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32",
                                  "INT64", "FLOAT16", "FLOAT", "FLOAT64", "BOOL"};
    return code >= 0 && code < 12 ? names[code] : "NO_TYPE";
  }

  // The stoker node of the tensor `io`, emitting its producer first; a CPU tensor a GPU
  // operator reads is moved (DALI moves it implicitly; stoker's graph says so with _to_gpu).
  json resolve(const dali_proto::InputOutput& io, const std::string& reader) {
    Key key{io.name(), io.device()};
    if (auto it = tensors_.find(key); it != tensors_.end()) return it->second;
    auto p = producer_.find(io.name());
    if (p == producer_.end())
      fail(reader + " read the tensor '" + io.name() + "', which no operator of the pipeline "
           "produces: the file is damaged or was not written by DALI's Pipeline.serialize().");
    emit(p->second);
    if (auto it = tensors_.find(key); it != tensors_.end()) return it->second;
    auto cpu = tensors_.find(Key{io.name(), "cpu"});
    if (io.device() == "gpu" && cpu != tensors_.end()) {
      json ref = add_op("_to_gpu", "mixed", {{"_display_name", ".gpu()"}}, json::object(),
                        json::array({cpu->second}), 1, "", "");
      tensors_[key] = ref;
      return ref;
    }
    if (io.device() == "cpu" && tensors_.count(Key{io.name(), "gpu"}))
      fail(reader + " reads '" + io.name() + "' on the CPU, but it is made on the GPU (a .cpu() "
           "in the DALI pipeline). stoker's pipelines move data to the GPU only: compute that "
           "step on the CPU, or take the output from the GPU.");
    fail(reader + " read the tensor '" + io.name() + "' on device '" + io.device() +
         "', where its operator makes it on another: the file is damaged.");
  }

  json add_op(const std::string& op, const std::string& device, json args, json tensor_args,
              json inputs, int num_outputs, const std::string& name, const std::string& location,
              bool preserve = false) {
    ops_.push_back({{"op", op}, {"device", device}, {"name", name}, {"preserve", preserve},
                    {"num_outputs", num_outputs}, {"location", location}, {"args", args},
                    {"tensor_args", tensor_args}, {"inputs", inputs}});
    return json::array({static_cast<int>(ops_.size()) - 1, 0});
  }

  void emit(int index) {
    if (done_.count(index)) return;
    if (!visiting_.insert(index).second)
      fail("the operators of the DALI pipeline read each other in a cycle (at '" +
           def_.op(index).name() + "'): the file is damaged.");
    // DALI writes operators after those they read, so this recursion stays shallow; a file
    // that lists a long chain backwards must not exhaust the stack.
    if (visiting_.size() > kMaxDepth)
      fail("the operators of the DALI pipeline are listed out of order more than " +
           std::to_string(kMaxDepth) + " deep; DALI writes each after those it reads: the file "
           "is damaged or was not written by DALI's Pipeline.serialize().");
    convert(def_.op(index));
    visiting_.erase(index);
    done_.insert(index);
  }

  void convert(const dali_proto::OpDef& op) {
    // What DALI adds to every operator.
    std::string device = "cpu";
    bool preserve = false, named = false;
    const dali_proto::Argument *files = nullptr, *lines = nullptr;
    std::map<std::string, const dali_proto::Argument*> args;
    for (const auto& a : op.args()) {
      const std::string& n = a.name();
      if (n == "device" && a.strings_size()) device = a.strings(0);
      else if (n == "preserve" && a.bools_size()) preserve = a.bools(0);
      else if (n == "preserve_name" && a.bools_size()) named = a.bools(0);
      else if (n == "_origin_stack_filename" && a.is_vector()) files = &a;
      else if (n == "_origin_stack_lineno" && a.is_vector()) lines = &a;
      else if (!is_dali_bookkeeping(n)) args[n] = &a;
    }
    const std::string location = origin(files, lines);
    const std::string dali_name = op.name();
    std::string where = "DALI's operator " + dali_name;
    if (!op.inst_name().empty()) where += " '" + op.inst_name() + "'";
    if (!location.empty()) where += " (defined at " + location + ")";
    const std::string name = named ? op.inst_name() : "";
    // Every DALI operator makes at least one tensor; one that lists none cannot be connected.
    if (op.output_size() < 1) fail(where + " makes no outputs: the file is damaged.");

    json inputs = json::array(), tensor_args = json::object();
    for (const auto& in : op.input()) {
      json ref = resolve(in, where);
      if (in.is_argument_input()) tensor_args[in.arg_name()] = ref;
      else inputs.push_back(ref);
    }

    if (dali_name == "ExternalSource" || dali_name == "_ExternalSource")
      return external_source(op, args, device, location, where);
    if (dali_name == "_ArithmeticGenericOp")
      return arithmetic(op, args, inputs, device, location, where);
    if (dali_name == "MakeContiguous") {  // a copy DALI inserts; stoker's batches are contiguous
      if (inputs.size() != 1 || op.output_size() != 1) fail(where + " is malformed");
      auto ref = resolve(op.input(0), where);  // (a mixed MakeContiguous: moved by resolve)
      Key out{op.output(0).name(), op.output(0).device()};
      if (op.output(0).device() == "gpu" && op.input(0).device() == "cpu") {
        dali_proto::InputOutput gpu_in = op.input(0);
        gpu_in.set_device("gpu");
        ref = resolve(gpu_in, where);
      }
      tensors_[out] = ref;
      return;
    }

    auto known = dali_op_names().find(dali_name);
    if (known == dali_op_names().end())
      fail("the pipeline uses " + where + ", which is not an operator of DALI 2.4 that stoker "
           "knows: it may come from a DALI plugin or a newer DALI.");
    const std::string& stoker_name = known->second;
    const OpSchema* schema = SchemaRegistry::get().find(stoker_name);
    if (!schema)
      fail("the pipeline uses " + where + " (fn." + stoker_name + "), which stoker does not "
           "have yet. The operators stoker has are listed in its README's DALI table.");

    json jargs = json::object();
    if (stoker_name == "_tensor_subscript") jargs["kinds"] = subscript_kinds(op, args, where);
    for (const auto& [n, a] : args) {
      if (stoker_name == "_tensor_subscript" && n == "num_subscripts") continue;
      if (!schema->find_arg(n)) {
        std::string names;
        for (const ArgDef& d : schema->args())
          if (d.name[0] != '_' && !d.deprecated_alias) names += (names.empty() ? "" : ", ") + d.name;
        fail(where + " has the argument '" + n + "', which stoker's fn." + stoker_name +
             " does not take. Its arguments are: " + names + ".");
      }
      json v = argument_json(*a);
      if (!v.is_null()) jargs[n] = v;
    }
    json first = add_op(stoker_name, device, jargs, tensor_args, inputs, op.output_size(), name,
                        location, preserve);
    for (int i = 0; i < op.output_size(); ++i)
      tensors_[Key{op.output(i).name(), op.output(i).device()}] = json::array({first[0], i});
  }

  // Where the user defined the operator: the innermost frame of DALI's stack that is not DALI's
  // own code, as "file:line".
  static std::string origin(const dali_proto::Argument* files, const dali_proto::Argument* lines) {
    if (!files) return "";
    int pick = -1;
    for (int i = files->extra_args_size() - 1; i >= 0 && pick < 0; --i) {
      const auto& f = files->extra_args(i);
      if (f.strings_size() && f.strings(0).find("/nvidia/dali/") == std::string::npos) pick = i;
    }
    if (pick < 0) return "";  // (DALI keeps only its own frame for a subscript)
    const auto& f = files->extra_args(pick);
    std::string where = f.strings_size() ? f.strings(0) : "";
    if (lines && pick < lines->extra_args_size() && lines->extra_args(pick).ints_size())
      where += ":" + std::to_string(lines->extra_args(pick).ints(0));
    return where;
  }

  // DALI's subscript arguments (at_k: an index; lo_k, hi_k, step_k: a slice; none: ':') ->
  // stoker's kinds (0: index, 1: slice).
  json subscript_kinds(const dali_proto::OpDef& op,
                       const std::map<std::string, const dali_proto::Argument*>& args,
                       const std::string& where) {
    std::set<std::string> given;
    for (const auto& [n, a] : args) given.insert(n);
    for (const auto& in : op.input())
      if (in.is_argument_input()) given.insert(in.arg_name());
    int n = 0;
    auto it = args.find("num_subscripts");
    if (it != args.end() && it->second->ints_size()) n = static_cast<int>(it->second->ints(0));
    if (n < 1 || n > 32) fail(where + " has no valid num_subscripts");
    json kinds = json::array();
    for (int k = 0; k < n; ++k) {
      const std::string s = std::to_string(k);
      kinds.push_back(given.count("at_" + s) ? 0 : 1);
    }
    return kinds;
  }

  void external_source(const dali_proto::OpDef& op,
                       const std::map<std::string, const dali_proto::Argument*>& args,
                       const std::string& device, const std::string& location,
                       const std::string& where) {
    static const std::set<std::string> kept = {"dtype", "ndim", "layout", "batch", "repeat_last",
                                               "no_copy", "blocking", "use_copy_kernel", "cycle",
                                               "prefetch_queue_depth", "num_outputs"};
    json jargs = json::object();
    for (const auto& [n, a] : args) {
      if (n == "cuda_stream" || n == "name") continue;  // (a stream of the process that wrote it)
      if (!kept.count(n))
        fail(where + " has the argument '" + n + "', which stoker's fn.external_source does not "
             "take in a deserialized pipeline.");
      json v = argument_json(*a);
      if (v.is_null()) continue;
      // stoker's external_source takes one entry per output.
      if ((n == "dtype" || n == "ndim" || n == "layout") && !v.is_array()) v = json::array({v});
      jargs[n] = v;
    }
    if (op.output_size() < 1) fail(where + " has no outputs");
    if (op.output_size() > 1) jargs["num_outputs"] = op.output_size();
    json first = add_op("external_source", "cpu", jargs, json::object(), json::array(),
                        op.output_size(), op.inst_name(), location);
    ops_.back()["external_source"] = {{"gpu", device == "gpu"}, {"timeout", nullptr}};
    for (int i = 0; i < op.output_size(); ++i) {
      json ref = json::array({first[0], i});
      tensors_[Key{op.output(i).name(), "cpu"}] = ref;
      if (device == "gpu") {  // as stoker's own device='gpu' external source: read, then moved
        tensors_[Key{op.output(i).name(), "gpu"}] =
            add_op("_to_gpu", "mixed", {{"_display_name", ".gpu()"}}, json::object(),
                   json::array({ref}), 1, "", "");
      }
    }
  }

  // DALI's arithmetic: an expression ("add(&0 $0:int32)", possibly nested) over the operator's
  // inputs (&k) and constants ($k:type, from integer_constants or real_constants) -> one
  // stoker arithmetic_generic per function call.
  void arithmetic(const dali_proto::OpDef& op,
                  const std::map<std::string, const dali_proto::Argument*>& args,
                  const json& inputs, const std::string& device, const std::string& location,
                  const std::string& where) {
    auto text = args.find("expression_desc");
    if (text == args.end() || !text->second->strings_size())
      fail(where + " has no expression_desc");
    std::vector<json> ints, reals;
    if (auto it = args.find("integer_constants"); it != args.end()) {
      json v = argument_json(*it->second);
      if (v.is_array()) ints.assign(v.begin(), v.end()); else if (!v.is_null()) ints.push_back(v);
    }
    if (auto it = args.find("real_constants"); it != args.end()) {
      json v = argument_json(*it->second);
      if (v.is_array()) reals.assign(v.begin(), v.end()); else if (!v.is_null()) reals.push_back(v);
    }
    const std::string& e = text->second->strings(0);
    size_t pos = 0;
    Operand result = expression(e, pos, inputs, ints, reals, device, location, where);
    while (pos < e.size() && e[pos] == ' ') ++pos;
    if (pos != e.size() || !result.node.is_array())
      fail(where + ": cannot read the expression '" + e + "'");
    if (op.output_size() != 1) fail(where + " is malformed (it has no single output)");
    tensors_[Key{op.output(0).name(), op.output(0).device()}] = result.node;
  }

  struct Operand {
    json node;          // a node reference, or null for a constant
    double value = 0;   // the constant
    int dtype = -1;
  };

  Operand expression(const std::string& e, size_t& pos, const json& inputs,
                     const std::vector<json>& ints, const std::vector<json>& reals,
                     const std::string& device, const std::string& location,
                     const std::string& where, int depth = 0) {
    auto bad = [&] {
      fail(where + ": cannot read the arithmetic expression '" +
           (e.size() > 200 ? e.substr(0, 200) + "..." : e) + "'");
    };
    if (depth > static_cast<int>(kMaxDepth)) bad();
    while (pos < e.size() && e[pos] == ' ') ++pos;
    if (pos >= e.size()) bad();
    auto number = [&]() {
      size_t start = pos;
      while (pos < e.size() && std::isdigit(static_cast<unsigned char>(e[pos]))) ++pos;
      if (start == pos || pos - start > 9) bad();
      return std::stoul(e.substr(start, pos - start));
    };
    if (e[pos] == '&') {
      ++pos;
      size_t k = number();
      if (k >= inputs.size()) bad();
      return {inputs[k]};
    }
    if (e[pos] == '$') {
      ++pos;
      size_t k = number();
      if (pos >= e.size() || e[pos] != ':') bad();
      size_t start = ++pos;
      while (pos < e.size() && std::isalnum(static_cast<unsigned char>(e[pos]))) ++pos;
      auto t = constant_types().find(e.substr(start, pos - start));
      if (t == constant_types().end()) bad();
      const bool is_float = t->second == 8 || t->second == 9 || t->second == 10;
      const std::vector<json>& pool = is_float ? reals : ints;
      if (k >= pool.size() || !pool[k].is_number()) bad();
      return {json(), pool[k].get<double>(), t->second};
    }
    size_t start = pos;
    while (pos < e.size() && (std::isalnum(static_cast<unsigned char>(e[pos])) || e[pos] == '_'))
      ++pos;
    std::string fname = e.substr(start, pos - start);
    if (fname.empty() || pos >= e.size() || e[pos] != '(') bad();
    ++pos;
    std::vector<Operand> operands;
    for (;;) {
      while (pos < e.size() && e[pos] == ' ') ++pos;
      if (pos >= e.size()) bad();
      if (e[pos] == ')') { ++pos; break; }
      operands.push_back(
          expression(e, pos, inputs, ints, reals, device, location, where, depth + 1));
    }
    if (fname == "plus" && operands.size() == 1 && operands[0].node.is_array())
      return operands[0];  // unary +
    auto renamed = arithmetic_names().find(fname);
    const std::string stoker_op = renamed != arithmetic_names().end() ? renamed->second : fname;
    json nodes = json::array(), constants = json::array(), dtypes = json::array(),
         positions = json::array();
    for (size_t i = 0; i < operands.size(); ++i) {
      if (operands[i].node.is_array()) {
        nodes.push_back(operands[i].node);
      } else {
        constants.push_back(operands[i].value);
        dtypes.push_back(operands[i].dtype);
        positions.push_back(static_cast<int>(i));
      }
    }
    if (nodes.empty()) fail(where + ": the expression '" + e + "' has no tensor operand");
    auto sym = operator_symbols().find(stoker_op);
    json args = {{"op", stoker_op},
                 {"_display_name", sym != operator_symbols().end()
                                       ? std::string("operator ") + sym->second
                                       : "math." + stoker_op}};
    if (!constants.empty()) {
      args["constants"] = constants;
      args["constant_dtypes"] = dtypes;
      args["constant_positions"] = positions;
    }
    return {add_op("arithmetic_generic", device, args, json::object(), nodes, 1, "", location)};
  }

  static constexpr size_t kMaxDepth = 100;  // (DALI writes depth 1: each operator after its inputs)
  const dali_proto::PipelineDef& def_;
  const std::string who_;
  std::map<std::string, int> producer_;  // tensor name -> the DALI operator that makes it
  std::map<Key, json> tensors_;          // tensor -> stoker node reference [op, output]
  std::set<int> done_, visiting_;
  json ops_ = json::array();
};

}  // namespace

nlohmann::json dali_pipeline_document(const void* data, size_t size, const std::string& who) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  dali_proto::PipelineDef def;
  if (!data || size == 0 || size > static_cast<size_t>(INT32_MAX) ||
      // (Partial, then checked: ParseFromArray logs a missing required field to stderr.)
      !def.ParsePartialFromArray(data, static_cast<int>(size)) || !def.IsInitialized())
    fail(ErrorKind::kInvalidArgument,
         who + ": this is neither a pipeline serialized by stoker (those start with "
         "'stoker.pipeline ') nor one serialized by DALI (protobuf), or it was cut short or "
         "damaged: it starts with " + start_of(data, size) + ". " + kNeither);
  if (def.batch_size() < 1)
    fail(ErrorKind::kInvalidArgument,
         who + ": the DALI pipeline has batch_size " + std::to_string(def.batch_size()) +
         "; a positive one was expected (the file is damaged?).");
  return Converter(def, who).run();
}

#endif  // STOKER_WITH_PROTOBUF

}  // namespace stoker
