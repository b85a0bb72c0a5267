// include/stoker/c_api.h: a serialized pipeline run without Python.
#include "stoker/c_api.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capi/fed_input.h"
#include "capi/serialized.h"
#include "core/dlpack.h"
#include "core/error.h"
#include "pipeline/executor.h"
#include "pipeline/graph.h"
#include "pipeline/plugin.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#endif

#ifndef STOKER_VERSION_STRING
#define STOKER_VERSION_STRING "unknown"
#endif

using namespace stoker;

namespace {

thread_local std::string last_error;

stoker_status_t status_of(ErrorKind k) {
  switch (k) {
    case ErrorKind::kInvalidArgument: return STOKER_ERROR_INVALID_ARGUMENT;
    case ErrorKind::kTypeMismatch: return STOKER_ERROR_TYPE;
    case ErrorKind::kNotFound: return STOKER_ERROR_NOT_FOUND;
    case ErrorKind::kDecode: return STOKER_ERROR_DECODE;
    case ErrorKind::kIO: return STOKER_ERROR_IO;
    case ErrorKind::kOutOfMemory: return STOKER_ERROR_OUT_OF_MEMORY;
    case ErrorKind::kUnsupported: return STOKER_ERROR_UNSUPPORTED;
    case ErrorKind::kInternal: return STOKER_ERROR_INTERNAL;
  }
  return STOKER_ERROR_INTERNAL;
}

// Runs `f`, turning every exception into a status and this thread's error text: nothing
// crosses the C boundary.
template <typename F>
stoker_status_t guarded(F&& f) {
  try {
    f();
    last_error.clear();
    return STOKER_OK;
  } catch (const Error& e) {
    last_error = e.what();
    return status_of(e.kind());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return STOKER_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = std::string("internal error: ") + e.what();
    return STOKER_ERROR_INTERNAL;
  } catch (...) {
    last_error = "internal error: an unknown exception";
    return STOKER_ERROR_INTERNAL;
  }
}

[[noreturn]] void invalid(const std::string& msg) { throw Error(ErrorKind::kInvalidArgument, msg); }

struct Input {
  capi::FedInputDef def;
  std::shared_ptr<capi::FedQueue> queue;
};

}  // namespace

struct stoker_pipeline {
  std::mutex mu;          // run, and everything but feed
  std::unique_ptr<Executor> exec;
  std::vector<Input> inputs;
  capi::PipelineDef def;
  int64_t runs = 0;       // run() calls that took their fed batches
};

struct stoker_outputs {
  std::vector<Batch> batches;
};

namespace {

void destroy_executor(std::unique_ptr<Executor> e) {
  if (!e) return;
  // A stage stuck in a callback would make the destructor wait for it; after a while a helper
  // thread takes over, so that destroy returns.
  if (e->stop(std::chrono::milliseconds(2000))) return;
  Executor* raw = e.release();
  std::thread([raw] { delete raw; }).detach();
}

void check_arg_ptr(const void* p, const char* fn, const char* what) {
  if (!p) invalid(std::string(fn) + ": " + what + " is NULL");
}

stoker_pipeline* make_pipeline(const void* data, size_t size, const stoker_pipeline_options_t* o) {
  capi::PipelineDef def = capi::read_serialized(data, size);
  if (o) {
    if (o->num_threads < 0 || o->prefetch_queue_depth < 0 || o->device_id < -1)
      invalid("stoker_pipeline_create: options: num_threads and prefetch_queue_depth must be 0 "
              "(as serialized) or positive, device_id -1 (as serialized) or a GPU's number; got " +
              std::to_string(o->num_threads) + ", " + std::to_string(o->prefetch_queue_depth) +
              ", " + std::to_string(o->device_id));
    if (o->num_threads > 0) def.params.num_threads = o->num_threads;
    if (o->prefetch_queue_depth > 0) def.params.prefetch_queue_depth = o->prefetch_queue_depth;
    if (o->device_id >= 0) def.params.device_id = o->device_id;
  }
  auto p = std::make_unique<stoker_pipeline>();
  std::vector<OpRecord> records = def.ops;
  for (const capi::FedInputDef& in : def.inputs) {
    Input input{in, capi::make_fed_queue(in.repeat_last)};
    OpRecord& r = records[in.op];
    OpRecord fed;
    fed.schema = capi::kFedInputOp;
    fed.device = "cpu";
    fed.name = r.name;
    fed.location = r.location;
    fed.args["layout"] = in.layout;
    fed.args["_feed_id"] = input.queue->id;
    fed.keyed = true;  // the external_source's instance number: the others keep theirs
    r = fed;
    p->inputs.push_back(std::move(input));
  }
  std::vector<GraphOp> graph = make_graph(records, def.params.seed);
  p->exec = std::make_unique<Executor>(def.params, std::move(graph), def.outputs);
  p->def = std::move(def);
  return p.release();
}

// One fed sample's bytes into `dst` (host memory), from host or device memory.
void copy_in(void* dst, const DLTensor& t, size_t bytes) {
  const char* src = static_cast<const char*>(t.data) + t.byte_offset;
  if (t.device.device_type == kDLCUDA) {
#ifdef STOKER_WITH_CUDA
    cuda_memcpy_async(dst, src, bytes, nullptr);
    cuda_stream_synchronize(nullptr);
#else
    throw Error(ErrorKind::kUnsupported, "stoker_pipeline_feed: the data is in GPU memory, and "
                "this stoker was built without CUDA; copy it to host memory first");
#endif
  } else if (bytes) {
    std::memcpy(dst, src, bytes);
  }
}

Input& find_input(stoker_pipeline* p, const char* name, const char* fn) {
  check_arg_ptr(name, fn, "name");
  for (Input& in : p->inputs)
    if (in.def.name == name) return in;
  std::string names;
  for (const Input& in : p->inputs) names += (names.empty() ? "'" : ", '") + in.def.name + "'";
  invalid(std::string(fn) + ": the pipeline has no external source named '" + name + "'; " +
          (names.empty() ? std::string("it has none to feed") : "its inputs are " + names));
}

// Checks one tensor as a sample (or, with `batch`, as a batch) of the input and returns its
// element type and sample shape.
std::pair<DType, Shape> check_tensor(const Input& in, const DLTensor& t, bool batch,
                                     const std::string& what) {
  const std::string who = "stoker_pipeline_feed: external source '" + in.def.name + "': " + what;
  if (t.ndim < (batch ? 1 : 0) || (t.ndim > 0 && !t.shape))
    invalid(who + (batch ? " has no batch axis (ndim 0)" : " has no shape"));
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost &&
      t.device.device_type != kDLCUDA)
    invalid(who + " is in memory of DLPack device type " + std::to_string(t.device.device_type) +
            "; give host (kDLCPU, kDLCUDAHost) or CUDA (kDLCUDA) memory");
  if (t.device.device_type == kDLCUDA && !in.def.gpu)
    invalid(who + " is in device memory; give the external_source device='gpu' for GPU data, "
            "or copy it to host memory");
  DType dt = dtype_from_dl(t.dtype);
  if (dt == DType::kNone)
    throw Error(ErrorKind::kTypeMismatch,
                who + " has the DLPack type (code " + std::to_string(t.dtype.code) + ", " +
                    std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                    " lanes), which stoker has no type for; give bool, integer or float data");
  if (in.def.dtype && *in.def.dtype != dt)
    throw Error(ErrorKind::kTypeMismatch,
                who + " has dtype " + dtype_name(dt) + ", but the external_source declared " +
                    dtype_name(*in.def.dtype));
  Shape full(t.shape, t.shape + t.ndim);
  for (int64_t e : full)
    if (e < 0) invalid(who + " has a negative extent: " + to_string(full));
  if (t.strides) {  // C-contiguous only (strides of size-1 axes do not matter)
    int64_t want = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (t.shape[i] != 1 && t.strides[i] != want)
        invalid(who + " is not C-contiguous (strides given); pass a contiguous copy");
      want *= t.shape[i];
    }
  }
  Shape sample = batch ? Shape(full.begin() + 1, full.end()) : full;
  if (in.def.ndim && static_cast<int>(sample.size()) != *in.def.ndim)
    invalid(who + ": its samples have " + std::to_string(sample.size()) +
            " dimensions, but the external_source declared ndim=" + std::to_string(*in.def.ndim));
  return {dt, sample};
}

void feed(stoker_pipeline* p, const char* name, const DLTensor* samples, int n,
          const DLTensor* batch) {
  const char* fn = batch ? "stoker_pipeline_feed_batch" : "stoker_pipeline_feed";
  Input& in = find_input(p, name, fn);
  const int batch_size = p->def.params.batch_size;
  std::vector<Shape> shapes;
  DType dt = DType::kNone;
  if (batch) {
    auto [t, sample] = check_tensor(in, *batch, true, "the batch");
    dt = t;
    n = batch->ndim ? static_cast<int>(batch->shape[0]) : 0;
    shapes.assign(n, sample);
  } else {
    check_arg_ptr(samples, fn, "samples");
    for (int i = 0; i < n; ++i) {
      auto [t, sample] = check_tensor(in, samples[i], false, "sample " + std::to_string(i));
      if (i && (t != dt || sample.size() != shapes[0].size()))
        invalid(std::string(fn) + ": external source '" + in.def.name + "': sample " +
                std::to_string(i) + " is " + dtype_name(t) + " with " + std::to_string(sample.size()) +
                " dimensions, sample 0 " + dtype_name(dt) + " with " + std::to_string(shapes[0].size()) +
                "; the samples of a batch share their type and number of dimensions");
      dt = t;
      shapes.push_back(sample);
    }
  }
  if (n < 1 || n > batch_size)
    invalid(std::string(fn) + ": external source '" + in.def.name + "': the batch has " +
            std::to_string(n) + " samples; it must have 1 to " + std::to_string(batch_size) +
            " (the pipeline's batch_size)");
  Batch b;
  b.allocate(p->exec->host_pool(), dt, shapes, in.def.layout);
  if (batch) {
    DLTensor whole = *batch;
    copy_in(b[0].data, whole, Batch::bytes_for(shapes, dt));
  } else {
    for (int i = 0; i < n; ++i) copy_in(b[i].data, samples[i], b.sample_bytes(i));
  }
  in.queue->push(std::move(b));
}

void check_outputs(const stoker_pipeline* p, const std::vector<Batch>& out) {
  const capi::PipelineDef& d = p->def;
  for (size_t i = 0; i < out.size(); ++i) {
    const Batch& b = out[i];
    if (d.output_dtype[i] && b.dtype() != *d.output_dtype[i])
      throw Error(ErrorKind::kTypeMismatch, "stoker_pipeline_run: output " + std::to_string(i) +
                  " has dtype " + dtype_name(b.dtype()) + ", but output_dtype says " +
                  dtype_name(*d.output_dtype[i]));
    if (d.output_ndim[i] && !b.empty() && b.ndim() != *d.output_ndim[i])
      invalid("stoker_pipeline_run: output " + std::to_string(i) + " has " +
              std::to_string(b.ndim()) + " dimensions, but output_ndim says " +
              std::to_string(*d.output_ndim[i]));
    if (d.output_layout[i] && !d.output_layout[i]->empty() && b.layout() != *d.output_layout[i])
      invalid("stoker_pipeline_run: output " + std::to_string(i) + " has layout '" + b.layout() +
              "', but output_layout says '" + *d.output_layout[i] + "'");
  }
}

const Batch& output_batch(stoker_outputs* o, int output, const char* fn) {
  check_arg_ptr(o, fn, "outputs");
  if (output < 0 || output >= static_cast<int>(o->batches.size()))
    invalid(std::string(fn) + ": there is no output " + std::to_string(output) + "; the pipeline has " +
            std::to_string(o->batches.size()) + " (0 to " + std::to_string(o->batches.size() - 1) + ")");
  return o->batches[output];
}

int64_t dlpack_stream(void* s) { return s ? static_cast<int64_t>(reinterpret_cast<intptr_t>(s)) : 1; }

}  // namespace

extern "C" {

int stoker_c_api_version(void) { return STOKER_C_API_VERSION; }
const char* stoker_version(void) { return STOKER_VERSION_STRING; }
const char* stoker_last_error(void) { return last_error.c_str(); }

stoker_status_t stoker_load_plugin(const char* path) {
  return guarded([&] {
    check_arg_ptr(path, "stoker_load_plugin", "path");
    load_plugin(path);
  });
}

stoker_status_t stoker_pipeline_create(const void* data, size_t size,
                                       const stoker_pipeline_options_t* options,
                                       stoker_pipeline_t* pipeline) {
  return guarded([&] {
    check_arg_ptr(pipeline, "stoker_pipeline_create", "pipeline (the handle to set)");
    *pipeline = nullptr;
    check_arg_ptr(data, "stoker_pipeline_create", "data");
    *pipeline = make_pipeline(data, size, options);
  });
}

stoker_status_t stoker_pipeline_create_from_file(const char* path,
                                                 const stoker_pipeline_options_t* options,
                                                 stoker_pipeline_t* pipeline) {
  return guarded([&] {
    check_arg_ptr(pipeline, "stoker_pipeline_create_from_file", "pipeline (the handle to set)");
    *pipeline = nullptr;
    check_arg_ptr(path, "stoker_pipeline_create_from_file", "path");
    std::ifstream f(path, std::ios::binary);
    if (!f)
      throw Error(ErrorKind::kNotFound, std::string("stoker_pipeline_create_from_file: cannot open '") +
                  path + "': " + std::strerror(errno));
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad())
      throw Error(ErrorKind::kIO, std::string("stoker_pipeline_create_from_file: reading '") + path + "' failed");
    try {
      *pipeline = make_pipeline(bytes.data(), bytes.size(), options);
    } catch (const Error& e) {
      throw Error(e.kind(), std::string(e.what()) + " (file '" + path + "')");
    }
  });
}

void stoker_pipeline_destroy(stoker_pipeline_t p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> g(p->mu);
    for (Input& in : p->inputs) in.queue->cancel();
    destroy_executor(std::move(p->exec));
  }
  delete p;
}

int stoker_pipeline_batch_size(stoker_pipeline_t p) { return p ? p->def.params.batch_size : 0; }
int stoker_pipeline_num_inputs(stoker_pipeline_t p) { return p ? static_cast<int>(p->inputs.size()) : 0; }
const char* stoker_pipeline_input_name(stoker_pipeline_t p, int i) {
  if (!p || i < 0 || i >= static_cast<int>(p->inputs.size())) return nullptr;
  return p->inputs[i].def.name.c_str();
}
int stoker_pipeline_num_outputs(stoker_pipeline_t p) { return p ? static_cast<int>(p->def.outputs.size()) : 0; }

stoker_status_t stoker_pipeline_feed(stoker_pipeline_t p, const char* name, const DLTensor* samples,
                                     int num_samples) {
  return guarded([&] {
    check_arg_ptr(p, "stoker_pipeline_feed", "pipeline");
    feed(p, name, samples, num_samples, nullptr);
  });
}

stoker_status_t stoker_pipeline_feed_batch(stoker_pipeline_t p, const char* name, const DLTensor* batch) {
  return guarded([&] {
    check_arg_ptr(p, "stoker_pipeline_feed_batch", "pipeline");
    check_arg_ptr(batch, "stoker_pipeline_feed_batch", "batch");
    feed(p, name, nullptr, 0, batch);
  });
}

stoker_status_t stoker_pipeline_run(stoker_pipeline_t p, stoker_outputs_t* outputs) {
  return guarded([&] {
    check_arg_ptr(outputs, "stoker_pipeline_run", "outputs (the handle to set)");
    *outputs = nullptr;
    check_arg_ptr(p, "stoker_pipeline_run", "pipeline");
    std::lock_guard<std::mutex> g(p->mu);
    for (const Input& in : p->inputs) {
      const int64_t fed = in.queue->fed();
      if (fed <= p->runs && !(in.queue->repeat_last() && fed > 0))
        invalid("stoker_pipeline_run: the external source '" + in.def.name + "' has no data for "
                "this iteration: feed it with stoker_pipeline_feed before each run (it was fed " +
                std::to_string(fed) + " time(s) for " + std::to_string(p->runs + 1) + " run(s))");
    }
    ++p->runs;  // (a failed iteration used its fed batches too)
    auto out = std::make_unique<stoker_outputs>();
    out->batches = p->exec->next();
    check_outputs(p, out->batches);
    *outputs = out.release();
  });
}

int stoker_outputs_count(stoker_outputs_t o) { return o ? static_cast<int>(o->batches.size()) : 0; }
int stoker_outputs_num_samples(stoker_outputs_t o, int i) {
  return o && i >= 0 && i < static_cast<int>(o->batches.size()) ? static_cast<int>(o->batches[i].size()) : 0;
}
const char* stoker_outputs_layout(stoker_outputs_t o, int i) {
  return o && i >= 0 && i < static_cast<int>(o->batches.size()) ? o->batches[i].layout().c_str() : nullptr;
}
int stoker_outputs_on_gpu(stoker_outputs_t o, int i) {
  return o && i >= 0 && i < static_cast<int>(o->batches.size()) &&
         o->batches[i].memory() == MemoryKind::kDevice;
}

stoker_status_t stoker_outputs_tensor(stoker_outputs_t o, int output, void* cuda_stream,
                                      DLManagedTensor** tensor) {
  return guarded([&] {
    check_arg_ptr(tensor, "stoker_outputs_tensor", "tensor (the pointer to set)");
    *tensor = nullptr;
    const Batch& b = output_batch(o, output, "stoker_outputs_tensor");
    DLManagedTensor* t = to_dlpack(b, -1, ("stoker_outputs_tensor: output " + std::to_string(output)).c_str());
    order_for_consumer(b, dlpack_stream(cuda_stream));
    *tensor = t;
  });
}

stoker_status_t stoker_outputs_sample(stoker_outputs_t o, int output, int sample, void* cuda_stream,
                                      DLManagedTensor** tensor) {
  return guarded([&] {
    check_arg_ptr(tensor, "stoker_outputs_sample", "tensor (the pointer to set)");
    *tensor = nullptr;
    const Batch& b = output_batch(o, output, "stoker_outputs_sample");
    if (sample < 0 || sample >= static_cast<int>(b.size()))
      invalid("stoker_outputs_sample: output " + std::to_string(output) + " has " +
              std::to_string(b.size()) + " samples; there is no sample " + std::to_string(sample));
    DLManagedTensor* t = to_dlpack(b, sample, "stoker_outputs_sample");
    order_for_consumer(b, dlpack_stream(cuda_stream));
    *tensor = t;
  });
}

stoker_status_t stoker_outputs_wait(stoker_outputs_t o) {
  return guarded([&] {
    check_arg_ptr(o, "stoker_outputs_wait", "outputs");
#ifdef STOKER_WITH_CUDA
    for (const Batch& b : o->batches)
      if (b.memory() == MemoryKind::kDevice && b.ready_event()) cuda_event_synchronize(b.ready_event());
#endif
  });
}

void stoker_outputs_release(stoker_outputs_t o) { delete o; }

}  // extern "C"
