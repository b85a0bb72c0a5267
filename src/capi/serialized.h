// Reading a pipeline that stoker's Python API serialized (python/stoker/_serialize.py writes
// the format: a header line "stoker.pipeline <version> <bytes> <sha256>" and a JSON body), or
// that DALI serialized, so that it runs without Python.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/executor.h"
#include "pipeline/graph.h"

namespace stoker::capi {

// An external source the caller feeds by name.
struct FedInputDef {
  std::string name;
  int op = -1;                    // its index in PipelineDef::ops (an external_source)
  std::string layout;             // declared, or ""
  std::optional<DType> dtype;     // declared
  std::optional<int> ndim;        // declared (sample dimensions)
  bool repeat_last = false;
  bool gpu = false;               // device='gpu': device memory is accepted
};

struct PipelineDef {
  ExecutorParams params;
  std::vector<OpRecord> ops;      // external sources still named "external_source"
  std::vector<NodeRef> outputs;
  std::vector<FedInputDef> inputs;
  // Pipeline(output_dtype=, output_ndim=, output_layout=): per output, nullopt for any.
  std::vector<std::optional<DType>> output_dtype;
  std::vector<std::optional<int>> output_ndim;
  std::vector<std::optional<std::string>> output_layout;
};

// Parses and checks the bytes: stoker's format, or a pipeline DALI serialized (protobuf, read by
// pipeline/dali_format.h into the same document); throws Error(kInvalidArgument) naming what is
// wrong (neither format, truncated, damaged, a newer version, an unknown operator or argument,
// Python code).
PipelineDef read_serialized(const void* data, size_t size);

// The pipeline that a document of stoker's format (the JSON body) describes, checked.
PipelineDef read_document(const nlohmann::json& doc);

}  // namespace stoker::capi
