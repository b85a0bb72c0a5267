#include "pipeline/graph.h"

#include "core/error.h"

namespace stoker {
namespace {

Backend parse_backend(const std::string& d, const std::string& op) {
  if (d == "cpu") return Backend::kCPU;
  if (d == "gpu") return Backend::kGPU;
  if (d == "mixed") return Backend::kMixed;
  throw Error(ErrorKind::kInvalidArgument,
              "fn." + op + ": device must be 'cpu', 'gpu' or 'mixed', got '" + d + "'");
}

GraphOp make_op(const OpRecord& r, int64_t instance, uint64_t pipeline_seed) {
  GraphOp g;
  OpSpec& s = g.spec;
  s.schema = &SchemaRegistry::get().at(r.schema);
  s.backend = parse_backend(r.device, r.schema);
  s.instance = instance;
  s.name = r.name;
  s.location = r.location;
  for (const auto& [name, value] : r.args) {
    if (!s.schema->find_arg(name))
      throw Error(ErrorKind::kInvalidArgument, s.display_name() + ": unknown argument '" + name + "'");
    s.args[name] = s.schema->check_arg(name, value);
  }
  int k = 0;
  std::vector<std::string> tnames;
  for (const auto& [name, ref] : r.tensor_args) {
    s.tensor_args[name] = k++;
    g.arg_inputs.push_back(ref);
    tnames.push_back(name);
  }
  s.schema->check_required(s.args, tnames, s.display_name());
  for (const ArgDef& a : s.schema->args())
    if (!s.args.count(a.name) && a.default_value && !s.tensor_args.count(a.name))
      s.args[a.name] = *a.default_value;
  g.inputs = r.inputs;
  s.num_inputs = static_cast<int>(g.inputs.size());
  s.num_outputs = r.num_outputs;
  // An explicit seed= wins; otherwise each instance's stream comes from the pipeline seed.
  if (s.args.count("seed") && std::get<int64_t>(s.args["seed"]) >= 0)
    s.seed = static_cast<uint64_t>(std::get<int64_t>(s.args["seed"]));
  else
    s.seed = pipeline_seed;
  return g;
}

}  // namespace

std::vector<GraphOp> make_graph(const std::vector<OpRecord>& ops, uint64_t pipeline_seed) {
  std::vector<GraphOp> graph;
  graph.reserve(ops.size());
  int64_t instance = 0;
  for (const OpRecord& r : ops) {
    graph.push_back(make_op(r, instance, pipeline_seed));
    if (r.keyed.value_or(r.schema.rfind("_", 0) != 0)) ++instance;
  }
  return graph;
}

}  // namespace stoker
