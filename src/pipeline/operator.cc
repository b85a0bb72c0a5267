#include "pipeline/operator.h"

namespace stoker {

std::string OpSpec::display_name() const {
  // Operators that Python syntax builds (`x // y`, `x[0]`, math.sqrt) carry the name the user
  // wrote in `_display_name`; their schema names are internal.
  auto shown = args.find("_display_name");
  std::string n = shown != args.end() && std::holds_alternative<std::string>(shown->second)
                      ? std::get<std::string>(shown->second)
                      : "fn." + (schema ? schema->name() : std::string("?"));
  if (!location.empty()) n += " (" + location + ")";
  return n;
}

void OpSpec::arg_error(const std::string& arg, const std::string& what) const {
  fail(ErrorKind::kInvalidArgument, display_name() + ": argument '" + arg + "' " + what);
}

namespace {

const ArgValue& lookup(const OpSpec& s, const std::string& arg) {
  auto it = s.args.find(arg);
  if (it == s.args.end())
    fail(ErrorKind::kInternal, s.display_name() + ": argument '" + arg +
                                   "' read but not set (missing default in the schema?)");
  return it->second;
}

template <typename T>
const T& typed(const OpSpec& s, const std::string& arg) {
  const ArgValue& v = lookup(s, arg);
  const T* p = std::get_if<T>(&v);
  if (!p) fail(ErrorKind::kInternal, s.display_name() + ": argument '" + arg + "' has an unexpected type");
  return *p;
}

}  // namespace

template <> bool OpSpec::get<bool>(const std::string& a) const { return typed<bool>(*this, a); }
template <> int64_t OpSpec::get<int64_t>(const std::string& a) const { return typed<int64_t>(*this, a); }
template <> int OpSpec::get<int>(const std::string& a) const { return static_cast<int>(typed<int64_t>(*this, a)); }
template <> double OpSpec::get<double>(const std::string& a) const {
  const ArgValue& v = lookup(*this, a);
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return typed<double>(*this, a);
}
template <> float OpSpec::get<float>(const std::string& a) const { return static_cast<float>(get<double>(a)); }
template <> std::string OpSpec::get<std::string>(const std::string& a) const { return typed<std::string>(*this, a); }
template <> std::vector<int64_t> OpSpec::get<std::vector<int64_t>>(const std::string& a) const {
  return typed<std::vector<int64_t>>(*this, a);
}
template <> std::vector<double> OpSpec::get<std::vector<double>>(const std::string& a) const {
  const ArgValue& v = lookup(*this, a);
  if (auto* il = std::get_if<std::vector<int64_t>>(&v)) return std::vector<double>(il->begin(), il->end());
  return typed<std::vector<double>>(*this, a);
}
template <> std::vector<float> OpSpec::get<std::vector<float>>(const std::string& a) const {
  auto d = get<std::vector<double>>(a);
  return std::vector<float>(d.begin(), d.end());
}
template <> std::vector<std::string> OpSpec::get<std::vector<std::string>>(const std::string& a) const {
  return typed<std::vector<std::string>>(*this, a);
}

namespace {

double element_as_double(const Batch& b, int64_t sample, int64_t k) {
  return visit_dtype(b.dtype(), [&](auto t) -> double {
    using T = decltype(t);
    return static_cast<double>(static_cast<const T*>(b[sample].data)[k]);
  });
}

// A tensor marked per-frame (fn.per_frame: layout "F...") holds one value per frame, which no
// operator here takes yet; read as one list per sample it would silently mean something else.
void refuse_per_frame(const OpSpec& spec, const std::string& name, const Batch& b) {
  if (!b.layout().empty() && b.layout()[0] == 'F')
    spec.arg_error(name, "was given per frame (fn.per_frame, layout \"" + b.layout() +
                             "\"), but this operator takes one value per sample, not per frame. "
                             "Give it a per-sample tensor, or apply it frame by frame.");
}

}  // namespace

double Workspace::scalar_arg(const std::string& name, int64_t sample, double fallback) const {
  auto it = spec->tensor_args.find(name);
  if (it != spec->tensor_args.end()) {
    const Batch& b = *arg_inputs[it->second];
    refuse_per_frame(*spec, name, b);
    if (volume(b.shape(sample)) != 1)
      spec->arg_error(name, "expects one value per sample, but sample " + std::to_string(sample) +
                                " of the tensor given has shape " + to_string(b.shape(sample)) + ".");
    return element_as_double(b, sample, 0);
  }
  if (spec->has(name)) return spec->get<double>(name);
  return fallback;
}

std::vector<double> Workspace::list_arg(const std::string& name, int64_t sample,
                                        std::vector<double> fallback) const {
  auto it = spec->tensor_args.find(name);
  if (it != spec->tensor_args.end()) {
    const Batch& b = *arg_inputs[it->second];
    refuse_per_frame(*spec, name, b);
    int64_t n = volume(b.shape(sample));
    std::vector<double> r(n);
    for (int64_t k = 0; k < n; ++k) r[k] = element_as_double(b, sample, k);
    return r;
  }
  if (spec->has(name)) return spec->get<std::vector<double>>(name);
  return fallback;
}

Operator::Operator(const OpSpec& spec) : spec_(spec) {
  if (spec.has("on_error")) {
    std::string p = spec.get<std::string>("on_error");
    on_error_ = p == "skip" ? OnError::kSkip : p == "replace" ? OnError::kReplace : OnError::kRaise;
  }
}

void add_on_error_arg(OpSchema& schema, bool can_replace) {
  std::vector<std::string> choices{"raise", "skip"};
  if (can_replace) choices.push_back("replace");
  schema.arg({.name = "on_error", .type = ArgType::kString, .default_value = std::string("raise"),
              .doc = std::string("stoker: what to do with a sample that cannot be read or decoded: "
                                 "'raise' an error naming the file, 'skip' it (the batch is filled "
                                 "with the next samples; the file is never delivered again)") +
                     (can_replace ? ", or 'replace' it with a fallback (see fallback_value)" : "") +
                     ". Skipped and replaced samples are counted in Pipeline.error_stats() and "
                     "logged once per file.",
              .choices = choices});
}

}  // namespace stoker
