// Operator schemas: the one place an operator's inputs, outputs and arguments are declared.
// Python's fn.* / ops.* functions, their docstrings and argument checks are generated from these.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#ifdef STOKER_PLUGIN
#include "pipeline/plugin.h"
#endif

namespace stoker {

class Operator;
class OpSpec;

enum class ArgType {
  kBool, kInt, kFloat, kString,
  kIntList, kFloatList, kStringList,
  kDType,      // an element type, stored as its DType code (int)
  kImageType,  // types.DALIImageType, stored as an int
  kInterpType, // types.DALIInterpType, stored as an int
};
const char* arg_type_name(ArgType t);

// A constant argument value after checking: lists keep their element type.
using ArgValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                              std::vector<double>, std::vector<std::string>>;
std::string arg_value_repr(const ArgValue& v);

struct ArgDef {
  std::string name;
  ArgType type = ArgType::kInt;
  std::optional<ArgValue> default_value;  // none: required, unless `optional`
  bool optional = false;                  // may be left out with no default
  std::string doc;
  bool tensor = false;                    // may be a per-sample tensor from another operator
  std::optional<double> min, max;         // for numbers (and each element of number lists)
  std::vector<std::string> choices;       // for strings
  int list_min = 0, list_max = -1;        // element counts for lists (-1: any)
  bool deprecated_alias = false;          // a name kept for old DALI code; see `alias_of`
  std::string alias_of;
};

enum class Backend { kCPU, kGPU, kMixed };
const char* backend_name(Backend b);

using OpFactory = std::function<std::unique_ptr<Operator>(const OpSpec&)>;

class OpSchema {
 public:
  explicit OpSchema(std::string name) : name_(std::move(name)) {}

  // Builder calls, chained in each operator's .cc file.
  OpSchema& doc(std::string d) { doc_ = std::move(d); return *this; }
  OpSchema& inputs(int min, int max, std::vector<std::string> names = {}) {
    min_inputs_ = min; max_inputs_ = max; input_names_ = std::move(names); return *this;
  }
  OpSchema& outputs(int n, std::vector<std::string> names = {}) {
    num_outputs_ = n; output_names_ = std::move(names); return *this;
  }
  OpSchema& arg(ArgDef a);
  OpSchema& input_layouts(std::vector<std::string> l) { input_layouts_ = std::move(l); return *this; }
  OpSchema& random() { random_ = true; return *this; }  // draws random numbers: gets `seed`
  OpSchema& reader() { reader_ = true; return *this; }  // a data source with reader_meta
  OpSchema& backend(Backend b, OpFactory f) { factories_[b] = std::move(f); return *this; }

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  int min_inputs() const { return min_inputs_; }
  int max_inputs() const { return max_inputs_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  int num_outputs() const { return num_outputs_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  const std::vector<ArgDef>& args() const { return args_; }
  const ArgDef* find_arg(const std::string& name) const;
  const std::vector<std::string>& input_layouts() const { return input_layouts_; }
  bool is_random() const { return random_; }
  bool is_reader() const { return reader_; }
  bool has_backend(Backend b) const { return factories_.count(b) > 0; }
  std::vector<Backend> backends() const;
  std::unique_ptr<Operator> create(const OpSpec& spec) const;

  // Checks one constant argument value against its definition; returns the normalised value
  // (ints widened to floats where floats are expected, scalars to one-element lists...).
  // Throws Error(kInvalidArgument / kTypeMismatch) naming the operator and the argument.
  ArgValue check_arg(const std::string& arg_name, const ArgValue& v) const;
  // Throws unless every required argument is present; the message starts with `who` (the
  // operator as OpSpec::display_name() names it: "fn.rotate (train.py:12)").
  void check_required(const std::map<std::string, ArgValue>& args,
                      const std::vector<std::string>& tensor_args, const std::string& who) const;

 private:
  std::string name_, doc_;
  int min_inputs_ = 0, max_inputs_ = 0, num_outputs_ = 1;
  std::vector<std::string> input_names_, output_names_;
  std::vector<ArgDef> args_;
  std::vector<std::string> input_layouts_;
  bool random_ = false, reader_ = false;
  std::map<Backend, OpFactory> factories_;
};

// All schemas, by name ("decoders.image", "resize", ...).
class SchemaRegistry {
 public:
  static SchemaRegistry& get();
  // Defines the operator `name` (once, in the .cc of its CPU backend).
  OpSchema& add(const std::string& name);
  // The schema `name` to add a backend to from another translation unit (the CUDA one of a GPU
  // twin), whichever static initialiser runs first.
  OpSchema& extend(const std::string& name);
  const OpSchema* find(const std::string& name) const;
  const OpSchema& at(const std::string& name) const;  // throws a ValueError-kind error
  std::vector<const OpSchema*> all() const;

 private:
  std::map<std::string, std::unique_ptr<OpSchema>> schemas_;
  std::set<std::string> defined_;
};

#ifndef STOKER_PLUGIN
// Registers a schema at static-initialisation time:
//   STOKER_REGISTER_OP(resize) { schema.doc("...").arg({...}).backend(Backend::kCPU, ...); }
#define STOKER_REGISTER_OP_NAMED(ident, opname)                                   \
  static void stoker_define_##ident(::stoker::OpSchema& schema);                  \
  static const bool stoker_registered_##ident = [] {                              \
    stoker_define_##ident(::stoker::SchemaRegistry::get().add(opname));           \
    return true;                                                                  \
  }();                                                                            \
  static void stoker_define_##ident(::stoker::OpSchema& schema)

// Adds a backend to an operator defined elsewhere (GPU twins, in their .cu):
//   STOKER_REGISTER_BACKEND(resize_gpu, "resize", Backend::kGPU, [](const OpSpec& s) {...});
#define STOKER_REGISTER_BACKEND(ident, opname, backend_value, ...)                \
  static const bool stoker_backend_##ident = [] {                                 \
    ::stoker::SchemaRegistry::get().extend(opname).backend(backend_value, __VA_ARGS__); \
    return true;                                                                  \
  }()
#else
// In a plugin (pipeline/plugin.h): the same declarations, queued until the loader has checked
// the plugin and calls stoker_plugin_register().
#define STOKER_REGISTER_OP_NAMED(ident, opname)                                   \
  static void stoker_define_##ident(::stoker::OpSchema& schema);                  \
  static const bool stoker_registered_##ident = [] {                              \
    ::stoker::plugin_detail::pending().push_back(                                 \
        [] { stoker_define_##ident(::stoker::SchemaRegistry::get().add(opname)); }); \
    return true;                                                                  \
  }();                                                                            \
  static void stoker_define_##ident(::stoker::OpSchema& schema)
#define STOKER_REGISTER_BACKEND(ident, opname, backend_value, ...)                \
  static const bool stoker_backend_##ident = [] {                                 \
    ::stoker::plugin_detail::pending().push_back([] {                             \
      ::stoker::SchemaRegistry::get().extend(opname).backend(backend_value, __VA_ARGS__); \
    });                                                                           \
    return true;                                                                  \
  }()
#endif

}  // namespace stoker
