// Pipelines that NVIDIA DALI serialized (protobuf: DALI's Pipeline.serialize(), the model.dali
// files of a Triton model repository), read into the document of stoker's own format (the JSON
// body that python/stoker/_serialize.py writes), which both front ends load: the Python module
// (Pipeline.deserialize) and the C API (stoker_pipeline_create). One conversion, two readers.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace stoker {

// Whether this build reads DALI's format (it is compiled in where libprotobuf was found).
bool dali_format_supported();

// The stoker document of the DALI pipeline in `data`: DALI's operator names mapped to stoker's
// (deprecated aliases to their successors), its internal operators (arithmetic expressions,
// subscripts, conditionals, shapes, external sources) to stoker's, CPU-to-GPU moves made
// explicit, arguments converted (DALI's float32 values written in their shortest form).
// Throws Error(kInvalidArgument), the message starting with `who`, naming what stoker cannot
// run: not a DALI pipeline, an operator or argument stoker does not have, a GPU-to-CPU move;
// Error(kUnsupported) where this build was made without libprotobuf.
nlohmann::json dali_pipeline_document(const void* data, size_t size, const std::string& who);

}  // namespace stoker
