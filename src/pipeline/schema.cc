#include "pipeline/schema.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/dtype.h"
#include "core/error.h"
#include "pipeline/operator.h"

namespace stoker {

const char* arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::kBool: return "bool";
    case ArgType::kInt: return "int";
    case ArgType::kFloat: return "float";
    case ArgType::kString: return "str";
    case ArgType::kIntList: return "list of int";
    case ArgType::kFloatList: return "list of float";
    case ArgType::kStringList: return "list of str";
    case ArgType::kDType: return "stoker.types.DALIDataType";
    case ArgType::kImageType: return "stoker.types.DALIImageType";
    case ArgType::kInterpType: return "stoker.types.DALIInterpType";
  }
  return "?";
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kCPU: return "cpu";
    case Backend::kGPU: return "gpu";
    case Backend::kMixed: return "mixed";
  }
  return "?";
}

namespace {

std::string num_repr(double d) {
  std::ostringstream s;
  s << d;
  return s.str();
}

template <typename T>
std::string list_repr(const std::vector<T>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) r += ", ";
    if constexpr (std::is_same_v<T, std::string>) r += "'" + v[i] + "'";
    else if constexpr (std::is_same_v<T, double>) r += num_repr(v[i]);
    else r += std::to_string(v[i]);
  }
  return r + "]";
}

const char* value_kind(const ArgValue& v) {
  switch (v.index()) {
    case 0: return "bool";
    case 1: return "int";
    case 2: return "float";
    case 3: return "str";
    case 4: return "list of int";
    case 5: return "list of float";
    default: return "list of str";
  }
}

bool integral(double d) { return std::isfinite(d) && std::floor(d) == d; }

}  // namespace

std::string arg_value_repr(const ArgValue& v) {
  switch (v.index()) {
    case 0: return std::get<bool>(v) ? "True" : "False";
    case 1: return std::to_string(std::get<int64_t>(v));
    case 2: return num_repr(std::get<double>(v));
    case 3: return "'" + std::get<std::string>(v) + "'";
    case 4: return list_repr(std::get<std::vector<int64_t>>(v));
    case 5: return list_repr(std::get<std::vector<double>>(v));
    default: return list_repr(std::get<std::vector<std::string>>(v));
  }
}

OpSchema& OpSchema::arg(ArgDef a) {
  STOKER_ASSERT(!find_arg(a.name), "argument declared twice: " + name_ + "." + a.name);
  args_.push_back(std::move(a));
  return *this;
}

const ArgDef* OpSchema::find_arg(const std::string& name) const {
  for (const ArgDef& a : args_)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<Backend> OpSchema::backends() const {
  std::vector<Backend> r;
  for (auto& [b, f] : factories_) r.push_back(b);
  return r;
}

std::unique_ptr<Operator> OpSchema::create(const OpSpec& spec) const {
  auto it = factories_.find(spec.backend);
  if (it == factories_.end()) {
    std::string have;
    for (Backend b : backends()) have += std::string(have.empty() ? "" : ", ") + "'" + backend_name(b) + "'";
    fail(ErrorKind::kInvalidArgument,
         "fn." + name_ + " has no '" + backend_name(spec.backend) + "' backend in this build of "
         "stoker; it runs on: " + have + ". Pass device=" +
         (have.empty() ? std::string("'cpu'") : have.substr(0, have.find(','))) + ".");
  }
  return it->second(spec);
}

ArgValue OpSchema::check_arg(const std::string& arg_name, const ArgValue& v) const {
  const ArgDef* def = find_arg(arg_name);
  STOKER_ASSERT(def, "check_arg on an undeclared argument " + arg_name);
  auto type_error = [&]() -> ArgValue {
    fail(ErrorKind::kTypeMismatch, "fn." + name_ + ": argument '" + arg_name + "' expects " +
                                       arg_type_name(def->type) + ", got " + value_kind(v) + " " +
                                       arg_value_repr(v) + ".");
  };
  auto check_range = [&](double d) {
    if ((def->min && d < *def->min) || (def->max && d > *def->max)) {
      std::string range = def->min && def->max
                              ? "in [" + num_repr(*def->min) + ", " + num_repr(*def->max) + "]"
                          : def->min ? ">= " + num_repr(*def->min)
                                     : "<= " + num_repr(*def->max);
      fail(ErrorKind::kInvalidArgument, "fn." + name_ + ": argument '" + arg_name +
                                            "' must be " + range + ", got " + arg_value_repr(v) + ".");
    }
  };
  auto check_count = [&](size_t n) {
    if (static_cast<int>(n) < def->list_min || (def->list_max >= 0 && static_cast<int>(n) > def->list_max)) {
      std::string want = def->list_min == def->list_max
                             ? std::to_string(def->list_min)
                             : def->list_max < 0 ? "at least " + std::to_string(def->list_min)
                                                 : std::to_string(def->list_min) + " to " + std::to_string(def->list_max);
      fail(ErrorKind::kInvalidArgument, "fn." + name_ + ": argument '" + arg_name + "' takes " +
                                            want + " values, got " + std::to_string(n) + ": " +
                                            arg_value_repr(v) + ".");
    }
  };
  switch (def->type) {
    case ArgType::kBool:
      if (auto* b = std::get_if<bool>(&v)) return *b;
      if (auto* i = std::get_if<int64_t>(&v); i && (*i == 0 || *i == 1)) return *i == 1;
      return type_error();
    case ArgType::kInt:
    case ArgType::kDType:
    case ArgType::kImageType:
    case ArgType::kInterpType: {
      int64_t x;
      if (auto* i = std::get_if<int64_t>(&v)) x = *i;
      else if (auto* b = std::get_if<bool>(&v); b && def->type == ArgType::kInt) x = *b;
      else if (auto* d = std::get_if<double>(&v); d && integral(*d) && def->type == ArgType::kInt) x = static_cast<int64_t>(*d);
      else return type_error();
      if (def->type == ArgType::kDType && (x < 0 || x > static_cast<int>(DType::kBool)))
        fail(ErrorKind::kInvalidArgument, "fn." + name_ + ": argument '" + arg_name +
                                              "' is not a valid data type code: " + std::to_string(x) + ".");
      check_range(static_cast<double>(x));
      return x;
    }
    case ArgType::kFloat: {
      double x;
      if (auto* d = std::get_if<double>(&v)) x = *d;
      else if (auto* i = std::get_if<int64_t>(&v)) x = static_cast<double>(*i);
      else return type_error();
      check_range(x);
      return x;
    }
    case ArgType::kString: {
      auto* s = std::get_if<std::string>(&v);
      if (!s) return type_error();
      if (!def->choices.empty() &&
          std::find(def->choices.begin(), def->choices.end(), *s) == def->choices.end()) {
        fail(ErrorKind::kInvalidArgument, "fn." + name_ + ": argument '" + arg_name + "' must be one of " +
                                              list_repr(def->choices) + ", got '" + *s + "'.");
      }
      return *s;
    }
    case ArgType::kIntList: {
      std::vector<int64_t> r;
      if (auto* l = std::get_if<std::vector<int64_t>>(&v)) r = *l;
      else if (auto* i = std::get_if<int64_t>(&v)) r = {*i};
      else if (auto* dl = std::get_if<std::vector<double>>(&v)) {
        for (double d : *dl) {
          if (!integral(d)) return type_error();
          r.push_back(static_cast<int64_t>(d));
        }
      } else if (auto* d = std::get_if<double>(&v); d && integral(*d)) r = {static_cast<int64_t>(*d)};
      else return type_error();
      check_count(r.size());
      for (int64_t x : r) check_range(static_cast<double>(x));
      return r;
    }
    case ArgType::kFloatList: {
      std::vector<double> r;
      if (auto* l = std::get_if<std::vector<double>>(&v)) r = *l;
      else if (auto* il = std::get_if<std::vector<int64_t>>(&v)) r.assign(il->begin(), il->end());
      else if (auto* d = std::get_if<double>(&v)) r = {*d};
      else if (auto* i = std::get_if<int64_t>(&v)) r = {static_cast<double>(*i)};
      else return type_error();
      check_count(r.size());
      for (double x : r) check_range(x);
      return r;
    }
    case ArgType::kStringList: {
      std::vector<std::string> r;
      if (auto* l = std::get_if<std::vector<std::string>>(&v)) r = *l;
      else if (auto* s = std::get_if<std::string>(&v)) r = {*s};
      else if (auto* il = std::get_if<std::vector<int64_t>>(&v); il && il->empty()) r = {};
      else return type_error();
      check_count(r.size());
      return r;
    }
  }
  return type_error();
}

void OpSchema::check_required(const std::map<std::string, ArgValue>& args,
                              const std::vector<std::string>& tensor_args,
                              const std::string& who) const {
  for (const ArgDef& a : args_) {
    if (a.default_value || a.optional) continue;
    if (args.count(a.name)) continue;
    if (std::find(tensor_args.begin(), tensor_args.end(), a.name) != tensor_args.end()) continue;
    fail(ErrorKind::kInvalidArgument,
         who + ": the argument '" + a.name + "' is required (" + a.doc + ").");
  }
}

SchemaRegistry& SchemaRegistry::get() {
  static SchemaRegistry r;
  return r;
}

OpSchema& SchemaRegistry::add(const std::string& name) {
  STOKER_ASSERT(defined_.insert(name).second, "operator registered twice: " + name);
  return extend(name);
}

OpSchema& SchemaRegistry::extend(const std::string& name) {
  auto& slot = schemas_[name];
  if (!slot) slot = std::make_unique<OpSchema>(name);
  return *slot;
}

const OpSchema* SchemaRegistry::find(const std::string& name) const {
  auto it = schemas_.find(name);
  if (it == schemas_.end() || !defined_.count(name)) return nullptr;
  return it->second.get();
}

const OpSchema& SchemaRegistry::at(const std::string& name) const {
  const OpSchema* s = find(name);
  if (!s) fail(ErrorKind::kInvalidArgument, "there is no operator named '" + name + "' in stoker.");
  return *s;
}

std::vector<const OpSchema*> SchemaRegistry::all() const {
  std::vector<const OpSchema*> r;
  for (auto& [n, s] : schemas_) {
    STOKER_ASSERT(defined_.count(n), "a backend was added to '" + n + "', which is never defined");
    r.push_back(s.get());
  }
  return r;
}

}  // namespace stoker
