// The graph as a front end records it (the Python layer, a serialized pipeline read by the C
// API), and the one place where such records become the executor's checked operators.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/executor.h"

namespace stoker {

// One operator as recorded: argument values not yet checked against the schema.
struct OpRecord {
  std::string schema;                 // "decoders.image"
  std::string device = "cpu";         // "cpu", "gpu" or "mixed"
  std::string name;                   // the user's name=, may be empty
  std::string location;               // where it was defined ("train.py:12"), may be empty
  std::map<std::string, ArgValue> args;
  std::vector<std::pair<std::string, NodeRef>> tensor_args;  // argument inputs, in order
  std::vector<NodeRef> inputs;
  int num_outputs = 1;
  // Takes the next instance number (its random-stream key). Internal operators (schemas starting
  // with '_', such as DataNode.gpu()'s _to_gpu) do not, so that moving data to the GPU changes
  // no random choice; an internal operator that stands for a user's operator (the C API's fed
  // inputs, for external sources) does, so that the others keep their numbers.
  std::optional<bool> keyed;
};

// The executor's graph: each record checked (unknown or bad arguments, missing required ones:
// Error(kInvalidArgument) naming the operator), its defaults filled in, its instance number
// and random seed given.
std::vector<GraphOp> make_graph(const std::vector<OpRecord>& ops, uint64_t pipeline_seed);

}  // namespace stoker
