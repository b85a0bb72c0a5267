#include "capi/serialized.h"

#include <openssl/evp.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "pipeline/dali_format.h"

namespace stoker::capi {
namespace {

using json = nlohmann::json;
constexpr const char* kMagic = "stoker.pipeline";
constexpr int kVersion = 1;  // the newest format this stoker reads (_serialize.VERSION)
const std::string kWho = "stoker_pipeline_create";
const std::string kHint =
    "pass the bytes Pipeline.serialize() returned (or the file serialize(filename=...) wrote), "
    "unchanged";

[[noreturn]] void fail(const std::string& what) {
  throw Error(ErrorKind::kInvalidArgument, kWho + ": " + what);
}

std::string sha256_hex(const char* data, size_t n) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_Digest(data, n, md, &len, EVP_sha256(), nullptr))
    throw Error(ErrorKind::kInternal, kWho + ": computing the SHA-256 of the pipeline failed");
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned int i = 0; i < len; ++i) {
    s += hex[md[i] >> 4];
    s += hex[md[i] & 15];
  }
  return s;
}

// The enums that the format writes by name ({"DALIDataType": "FLOAT"}), with the numbers of
// python/stoker/types.py (DALI's; test_c_api.py checks the two agree).
const std::map<std::string, std::map<std::string, int64_t>>& enums() {
  static const std::map<std::string, std::map<std::string, int64_t>> e = {
      {"DALIDataType", {{"NO_TYPE", -1}, {"UINT8", 0}, {"UINT16", 1}, {"UINT32", 2},
                        {"UINT64", 3}, {"INT8", 4}, {"INT16", 5}, {"INT32", 6}, {"INT64", 7},
                        {"FLOAT16", 8}, {"FLOAT", 9}, {"FLOAT64", 10}, {"BOOL", 11}}},
      {"DALIImageType", {{"RGB", 0}, {"BGR", 1}, {"YCbCr", 2}, {"GRAY", 3}, {"ANY_DATA", 4},
                         {"HSV", 5}}},
      {"DALIInterpType", {{"INTERP_NN", 0}, {"INTERP_LINEAR", 1}, {"INTERP_CUBIC", 2},
                          {"INTERP_LANCZOS3", 3}, {"INTERP_TRIANGULAR", 4},
                          {"INTERP_GAUSSIAN", 5}}},
  };
  return e;
}

DType dtype_named(const std::string& name, const std::string& what) {
  auto& t = enums().at("DALIDataType");
  auto it = t.find(name);
  if (it == t.end() || it->second < 0) fail(what + ": '" + name + "' is not an element type");
  return static_cast<DType>(it->second);
}

// A JSON argument value as the schema check takes it (it normalizes the rest).
ArgValue arg_value(const json& v, const ArgDef& def, const std::string& who) {
  if (v.is_object()) {
    if (v.size() == 1) {
      auto e = enums().find(v.begin().key());
      if (e != enums().end() && v.begin().value().is_string()) {
        auto it = e->second.find(v.begin().value().get<std::string>());
        if (it != e->second.end()) return it->second;
      }
    }
    fail(who + ": " + v.dump() + " is not a value of an enum stoker knows");
  }
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    bool all_int = true, all_num = true, all_str = true;
    for (const json& x : v) {
      all_int &= x.is_number_integer();
      all_num &= x.is_number();
      all_str &= x.is_string();
    }
    if (v.empty()) {
      if (def.type == ArgType::kFloatList) return std::vector<double>{};
      if (def.type == ArgType::kStringList) return std::vector<std::string>{};
      return std::vector<int64_t>{};
    }
    if (all_int) return v.get<std::vector<int64_t>>();
    if (all_num) return v.get<std::vector<double>>();
    if (all_str) return v.get<std::vector<std::string>>();
  }
  fail(who + ": the value " + v.dump() + " is not a number, a string or a list of them");
}

NodeRef node_ref(const json& r, int before, const std::vector<OpRecord>& ops) {
  if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer())
    fail("the serialized pipeline's contents are not what stoker writes (bad node reference " +
         r.dump() + "); " + kHint + ".");
  NodeRef n{r[0].get<int>(), r[1].get<int>()};
  if (n.op < 0 || n.op >= before || n.output < 0 || n.output >= ops[n.op].num_outputs)
    fail("the serialized pipeline's contents are not what stoker writes (node reference " +
         r.dump() + " out of range); " + kHint + ".");
  return n;
}

template <typename T, typename F>
std::vector<std::optional<T>> per_output(const json& v, size_t n, const char* what, F one) {
  std::vector<std::optional<T>> out(n);
  if (v.is_null()) return out;
  if (v.is_array()) {
    if (v.size() != n)
      fail(std::string("the pipeline's ") + what + " has " + std::to_string(v.size()) +
           " entries for " + std::to_string(n) + " outputs");
    for (size_t i = 0; i < n; ++i)
      if (!v[i].is_null()) out[i] = one(v[i]);
    return out;
  }
  for (size_t i = 0; i < n; ++i) out[i] = one(v);
  return out;
}

void read_params(const json& p, PipelineDef& d) {
  ExecutorParams& e = d.params;
  auto get_int = [&](const char* k, int64_t dflt) {
    return p.contains(k) && p[k].is_number_integer() ? p[k].get<int64_t>() : dflt;
  };
  auto get_bool = [&](const char* k, bool dflt) {
    return p.contains(k) && p[k].is_boolean() ? p[k].get<bool>() : dflt;
  };
  if (!p.contains("batch_size") || !p["batch_size"].is_number_integer() ||
      p["batch_size"].get<int64_t>() < 1)
    fail("the serialized pipeline has no batch_size; " + kHint + ".");
  e.batch_size = static_cast<int>(p["batch_size"].get<int64_t>());
  e.num_threads = static_cast<int>(get_int("num_threads", 1));
  e.device_id = p.contains("device_id") && p["device_id"].is_number_integer()
                    ? p["device_id"].get<int>() : -1;
  e.seed = static_cast<uint64_t>(get_int("seed", 0));  // (serialize() writes the seed drawn)
  e.prefetch_queue_depth = static_cast<int>(get_int("prefetch_queue_depth", 2));
  e.exec_async = get_bool("exec_async", true);
  e.exec_pipelined = get_bool("exec_pipelined", true);
  e.enable_checkpointing = get_bool("enable_checkpointing", false);
}

FedInputDef fed_input(const json& args, const json& op, const OpRecord& r, int k,
                      const std::string& where, const std::vector<FedInputDef>& others) {
  if (r.name.empty()) fail(where + " has no name: the C API feeds external sources by name.");
  if (r.num_outputs != 1)
    fail(where + " has " + std::to_string(r.num_outputs) + " outputs; the C API feeds external "
         "sources of one output (give each input an external_source of its own).");
  for (const FedInputDef& other : others)
    if (other.name == r.name)
      fail(where + ": two external sources are named '" + r.name + "'; the C API feeds them by "
           "name, so names must differ.");
  FedInputDef in;
  in.name = r.name;
  in.op = k;
  // One output: each list argument's first entry.
  auto first = [&](const char* key) -> json {
    if (!args.contains(key) || args[key].is_null()) return json();
    const json& v = args[key];
    return v.is_array() ? (v.empty() ? json() : v[0]) : v;
  };
  if (json v = first("layout"); v.is_string()) in.layout = v.get<std::string>();
  if (json v = first("dtype"); !v.is_null()) {
    if (v.is_object() && v.contains("DALIDataType") && v["DALIDataType"].is_string())
      in.dtype = dtype_named(v["DALIDataType"].get<std::string>(), where + ": dtype");
    else if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= 11)
      in.dtype = static_cast<DType>(v.get<int64_t>());
    else
      fail(where + ": dtype " + v.dump() + " is not an element type");
  }
  if (json v = first("ndim"); v.is_number_integer()) in.ndim = v.get<int>();
  if (args.contains("repeat_last") && args["repeat_last"].is_boolean())
    in.repeat_last = args["repeat_last"].get<bool>();
  if (op.contains("external_source") && op["external_source"].is_object()) {
    const json& es = op["external_source"];
    in.gpu = es.contains("gpu") && es["gpu"].is_boolean() && es["gpu"].get<bool>();
  }
  if (!in.layout.empty() && in.ndim && static_cast<int>(in.layout.size()) != *in.ndim)
    fail(where + ": layout '" + in.layout + "' and ndim=" + std::to_string(*in.ndim) + " disagree");
  return in;
}

}  // namespace

PipelineDef read_document(const nlohmann::json& doc);

PipelineDef read_serialized(const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  const size_t magic_len = std::strlen(kMagic);
  if (!bytes || size == 0) fail("the serialized pipeline is empty; " + kHint + ".");
  if (size < magic_len + 1 || std::memcmp(bytes, kMagic, magic_len) != 0 ||
      bytes[magic_len] != ' ')
    return read_document(dali_pipeline_document(data, size, kWho));  // DALI's, or neither
  const char* nl = static_cast<const char*>(std::memchr(bytes, '\n', std::min<size_t>(size, 200)));
  if (!nl)
    fail("the header of the serialized pipeline is damaged or cut short; expected '" +
         std::string(kMagic) + " <version> <size> <sha256>' and a newline; " + kHint + ".");
  std::string header(bytes, nl);
  char sha[65] = {0};
  long long version = 0;
  unsigned long long body_size = 0;
  char tail = 0;
  if (std::sscanf(header.c_str() + magic_len, " %lld %llu %64s%c", &version, &body_size, sha, &tail) != 3 ||
      std::strlen(sha) != 64)
    fail("the header of the serialized pipeline is damaged ('" + header + "'); expected '" +
         std::string(kMagic) + " <version> <size> <sha256>'; " + kHint + ".");
  if (version < 1 || version > kVersion)
    fail("the pipeline was serialized in format version " + std::to_string(version) +
         ", and this stoker reads versions 1 to " + std::to_string(kVersion) +
         ". Load it with the stoker that wrote it (a newer one), or serialize the pipeline again "
         "with this one.");
  const char* body = nl + 1;
  const size_t have = size - static_cast<size_t>(body - bytes);
  if (have != body_size)
    fail(std::string("the serialized pipeline is ") +
         (have < body_size ? "truncated" : "longer than its header says") +
         ": its header announces " + std::to_string(body_size) + " bytes after it, there are " +
         std::to_string(have) + ". Pass the whole of what Pipeline.serialize() returned (a file "
         "may have been cut short while copying).");
  if (sha256_hex(body, have) != sha)
    fail("the serialized pipeline is damaged or was edited: its body does not match the checksum "
         "in its header. Pass the bytes Pipeline.serialize() returned, unchanged.");

  json doc;
  try {
    doc = json::parse(body, body + have);
  } catch (const json::exception& e) {
    fail(std::string("the serialized pipeline's contents are not JSON (") + e.what() + "); " +
         kHint + ".");
  }
  return read_document(doc);
}

PipelineDef read_document(const json& doc) {
  PipelineDef d;
  if (!doc.is_object() || !doc.contains("pipeline") || !doc["pipeline"].is_object() ||
      !doc.contains("operators") || !doc["operators"].is_array() || !doc.contains("outputs") ||
      !doc["outputs"].is_array() || doc["outputs"].empty())
    fail("the serialized pipeline's contents are not what stoker writes (no parameters, "
         "operators or outputs); " + kHint + ".");
  read_params(doc["pipeline"], d);

  int k = 0;
  for (const json& op : doc["operators"]) {
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() ||
        !op.contains("device") || !op["device"].is_string() || !op.contains("num_outputs") ||
        !op["num_outputs"].is_number_integer() || op["num_outputs"].get<int>() < 1 ||
        !op.contains("args") || !op["args"].is_object() || !op.contains("tensor_args") ||
        !op["tensor_args"].is_object() || !op.contains("inputs") || !op["inputs"].is_array())
      fail("the serialized pipeline's contents are not what stoker writes (operator " +
           std::to_string(k) + " is malformed); " + kHint + ".");
    OpRecord r;
    r.schema = op["op"].get<std::string>();
    r.device = op["device"].get<std::string>();
    r.name = op.contains("name") && op["name"].is_string() ? op["name"].get<std::string>() : "";
    r.location = op.contains("location") && op["location"].is_string()
                     ? op["location"].get<std::string>() : "";
    r.num_outputs = op["num_outputs"].get<int>();
    const std::string where = "fn." + r.schema + (r.location.empty() ? "" : " (defined at " + r.location + ")");
    for (const auto& [name, ref] : op["tensor_args"].items())
      r.tensor_args.emplace_back(name, node_ref(ref, k, d.ops));
    for (const json& in : op["inputs"]) r.inputs.push_back(node_ref(in, k, d.ops));
    if (r.schema == "external_source") {
      // Its schema is the Python module's (it calls Python): the C API puts a fed input in its
      // place, declared by the arguments read here.
      d.inputs.push_back(fed_input(op["args"], op, r, k, where, d.inputs));
      d.ops.push_back(std::move(r));
      ++k;
      continue;
    }
    const OpSchema* schema = SchemaRegistry::get().find(r.schema);
    if (!schema)
      fail("the pipeline uses the operator " + where + ", which this stoker does not have. It may "
           "come from a plugin library that is not loaded in this process or from a newer stoker.");
    if (r.schema == "python_function" || r.schema == "dl_tensor_python_function")
      fail(where + " runs a Python function, which a serialized pipeline cannot hold.");
    for (const auto& [name, value] : op["args"].items()) {
      const ArgDef* def = schema->find_arg(name);
      if (!def || name == "_source_id" || name == "_function_id") {
        std::string known;
        for (const ArgDef& a : schema->args())
          if (a.name[0] != '_') known += (known.empty() ? "" : ", ") + a.name;
        fail(where + " has the argument '" + name + "', which this stoker's fn." + r.schema +
             " does not take (a pipeline from another version of stoker?). Its arguments are: " +
             known + ".");
      }
      if (value.is_null()) continue;
      r.args[name] = arg_value(value, *def, where + ": argument '" + name + "'");
    }
    d.ops.push_back(std::move(r));
    ++k;
  }
  for (const json& o : doc["outputs"]) d.outputs.push_back(node_ref(o, k, d.ops));

  const json& p = doc["pipeline"];
  const size_t n = d.outputs.size();
  auto field = [&](const char* key) -> json { return p.contains(key) ? p[key] : json(); };
  d.output_dtype = per_output<DType>(field("output_dtype"), n, "output_dtype", [](const json& v) {
    if (!v.is_string()) fail("the pipeline's output_dtype holds " + v.dump() + ", not a type name");
    return dtype_named(v.get<std::string>(), "the pipeline's output_dtype");
  });
  d.output_ndim = per_output<int>(field("output_ndim"), n, "output_ndim", [](const json& v) {
    if (!v.is_number_integer()) fail("the pipeline's output_ndim holds " + v.dump() + ", not a number");
    return v.get<int>();
  });
  d.output_layout = per_output<std::string>(field("output_layout"), n, "output_layout",
                                            [](const json& v) {
    if (!v.is_string()) fail("the pipeline's output_layout holds " + v.dump() + ", not a layout");
    return v.get<std::string>();
  });
  return d;
}

}  // namespace stoker::capi
