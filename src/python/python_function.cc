// fn.python_function and fn.dl_tensor_python_function: the user's Python code as a CPU batch
// operator of the graph.
//
// The Python side (python/stoker/python_function.py) knows per-sample and batch calls, DLPack,
// what a function may return and how its errors reach the user; it gives this operator one
// `call(iteration, inputs, batch_size, origins)` callable, where `inputs` holds, per input, a list of
// NumPy arrays (copies of the samples, so that a function that writes into its arguments, as
// DALI's allow, changes nothing else), and which returns a tuple with, per output, a list of
// C-contiguous arrays of one dtype and number of dimensions. The operator runs on the
// executor's producer thread like fn.external_source and holds the GIL only to make the arrays
// and to call; the copies in and out run without it, on the thread pool.
//
// An exception from `call` (the user's, chained by the Python side with the operator, line and
// sample in its message) travels through the executor as a PythonError and is raised from
// Pipeline.run() as that very exception object, the user's traceback kept in its __cause__.
#include <pybind11/numpy.h>

#include <cstring>
#include <memory>

#include "core/error.h"
#include "pipeline/operator.h"
#ifdef STOKER_WITH_CUDA
#include <dlpack/dlpack.h>

#include "core/cuda/cuda_util.h"
#include "kernels/cuda/copy_gpu.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"
#endif
#include "python/common.h"
#include "python/state_registry.h"

namespace stoker::python {
namespace {

// The Python exception the user's function (or the checks of what it returned) raised.
class PythonError : public Error {
 public:
  PythonError(ErrorKind kind, const std::string& message, std::shared_ptr<PyObject> exc)
      : Error(kind, message), exc(std::move(exc)) {}
  std::shared_ptr<PyObject> exc;
};

ErrorKind kind_of(const py::error_already_set& e) {
  if (e.matches(PyExc_TypeError)) return ErrorKind::kTypeMismatch;
  if (e.matches(PyExc_MemoryError)) return ErrorKind::kOutOfMemory;
  return ErrorKind::kInvalidArgument;
}

class PythonFunctionState {
 public:
  explicit PythonFunctionState(py::object call) : call_(hold(call.ptr())) {}
  int64_t id = 0;
  // Callers hold the GIL.
  py::object call(int64_t iteration, const py::list& inputs, int batch_size,
                  const py::object& origins) const {
    return py::reinterpret_borrow<py::object>(call_.get())(iteration, inputs, batch_size, origins);
  }

 private:
  std::shared_ptr<PyObject> call_;
};

using Registry = StateRegistry<PythonFunctionState>;

struct Copy {
  void* dst;
  const void* src;
  size_t bytes;
};

void copy_all(ThreadPool& pool, const std::vector<Copy>& copies) {
  pool.parallel_for(static_cast<int64_t>(copies.size()), [&](int64_t i, int) {
    if (copies[i].bytes) std::memcpy(copies[i].dst, copies[i].src, copies[i].bytes);
  });
}

class PythonFunction : public Operator {
 public:
  explicit PythonFunction(const OpSpec& spec) : Operator(spec) {
    state_ = Registry::get().find(spec, "_function_id", "python_function");
    if (spec.has("output_layouts")) layouts_ = spec.get<std::vector<std::string>>("output_layouts");
  }

  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const int n = ws.batch_size;
    check_batch_sizes(ws, n);
    py::gil_scoped_acquire gil;
    // Python objects made here are dropped before the GIL is given back.
    py::list inputs;
    std::vector<Copy> copies;
    for (const Batch* b : ws.inputs) {
      if (b->memory() == MemoryKind::kDevice)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": an input is on the GPU; the 'cpu' python_function takes "
                                    "CPU data");
      py::list samples;
      const py::dtype dt(dtype_name(b->dtype()));
      for (size_t i = 0; i < b->size(); ++i) {
        std::vector<py::ssize_t> shape(b->shape(i).begin(), b->shape(i).end());
        py::array a(dt, shape);
        copies.push_back({a.mutable_data(), (*b)[i].data, b->sample_bytes(i)});
        samples.append(std::move(a));
      }
      inputs.append(std::move(samples));
    }
    {
      py::gil_scoped_release nogil;
      copy_all(*ws.thread_pool, copies);
    }
    convert(invoke(ws, inputs, n), ws, n);
  }

 protected:
  // Calls the Python side (with the GIL); its exceptions become PythonErrors.
  py::object invoke(Workspace& ws, const py::list& inputs, int n) {
    try {
      // In a branch of an `if`, messages name samples by their place in the whole batch.
      return state_->call(ws.iteration, inputs, n,
                          ws.origins ? py::cast(*ws.origins) : py::object(py::none()));
    } catch (py::error_already_set& e) {
      std::string msg = e.what();
      if (msg.rfind(spec_.display_name(), 0) != 0) msg = spec_.display_name() + ": " + msg;
      throw PythonError(kind_of(e), msg, hold(e.value().ptr()));
    }
  }

  void check_batch_sizes(const Workspace& ws, int n) const {
    for (size_t k = 0; k < ws.inputs.size(); ++k)
      if (static_cast<int>(ws.input(static_cast<int>(k)).size()) != n)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input " + std::to_string(k) + " has " +
                 std::to_string(ws.input(static_cast<int>(k)).size()) + " samples, input 0 has " +
                 std::to_string(n) + "; the inputs must be batches of the same size");
  }

  // output_layouts' entry for output `o` against the samples the function returned.
  void check_layout(size_t o, const std::string& layout, const Shape& first) const {
    if (layout.empty() || layout.size() == first.size()) return;
    fail(ErrorKind::kInvalidArgument,
         spec_.display_name() + ": argument 'output_layouts' gives output " + std::to_string(o) +
             " the layout '" + layout + "' (" + std::to_string(layout.size()) +
             " dimensions), but the function returned " + std::to_string(first.size()) +
             "-d samples (sample 0 has shape " + to_string(first) + ")");
  }

  std::vector<std::string> layouts_;

 private:
  // Called with the GIL. `r` was checked by the Python side: a tuple of num_outputs lists of
  // `n` C-contiguous arrays each, of one dtype and number of dimensions per list.
  void convert(const py::object& r, Workspace& ws, int n) {
    py::tuple outs = r.cast<py::tuple>();
    STOKER_ASSERT(static_cast<int>(outs.size()) == spec_.num_outputs,
                  "python_function: call() returned the wrong number of outputs");
    ws.outputs.assign(outs.size(), Batch());
    std::vector<Copy> copies;
    std::vector<py::array> keep;
    for (size_t o = 0; o < outs.size(); ++o) {
      py::list samples = outs[o].cast<py::list>();
      STOKER_ASSERT(static_cast<int>(samples.size()) == n, "python_function: unchecked batch size");
      std::string layout = o < layouts_.size() ? layouts_[o] : "";
      if (n == 0) {
        ws.outputs[o] = Batch(DType::kNone, layout);
        continue;
      }
      std::vector<Shape> shapes;
      DType t = DType::kNone;
      for (py::handle h : samples) {
        py::array a = py::reinterpret_borrow<py::array>(h);
        if (t == DType::kNone) t = dtype_of_array(a);
        shapes.emplace_back(a.shape(), a.shape() + a.ndim());
        keep.push_back(std::move(a));
      }
      STOKER_ASSERT(t != DType::kNone, "python_function: unchecked dtype");
      check_layout(o, layout, shapes[0]);
      Batch& b = ws.outputs[o];
      b.allocate(*ws.host_pool, t, shapes, layout);
      for (int i = 0; i < n; ++i) {
        const py::array& a = keep[keep.size() - n + i];
        copies.push_back({b[i].data, a.data(), b.sample_bytes(i)});
      }
    }
    py::gil_scoped_release nogil;
    copy_all(*ws.thread_pool, copies);
  }

  std::shared_ptr<PythonFunctionState> state_;
};

#ifdef STOKER_WITH_CUDA
DType dtype_from_dl(DLDataType t) {
  if (t.lanes != 1) return DType::kNone;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 16 ? DType::kFloat16 : t.bits == 32 ? DType::kFloat32
             : t.bits == 64 ? DType::kFloat64 : DType::kNone;
    case kDLInt:
      return t.bits == 8 ? DType::kInt8 : t.bits == 16 ? DType::kInt16 : t.bits == 32 ? DType::kInt32
             : t.bits == 64 ? DType::kInt64 : DType::kNone;
    case kDLUInt:
      return t.bits == 8 ? DType::kUInt8 : t.bits == 16 ? DType::kUInt16 : t.bits == 32 ? DType::kUInt32
             : t.bits == 64 ? DType::kUInt64 : DType::kNone;
    case 6:  // kDLBool (DLPack 0.8; the headers may be older)
      return t.bits == 8 ? DType::kBool : DType::kNone;
    default:
      return DType::kNone;
  }
}

// A consumed DLPack tensor, released (with the GIL) when this goes.
struct TakenTensor {
  DLManagedTensor* m = nullptr;
  TakenTensor() = default;
  explicit TakenTensor(DLManagedTensor* t) : m(t) {}
  TakenTensor(TakenTensor&& o) noexcept : m(o.m) { o.m = nullptr; }
  TakenTensor& operator=(TakenTensor&&) = delete;
  ~TakenTensor() {
    if (m && m->deleter) m->deleter(m);
  }
};

// device='gpu': the function gets the samples of GPU inputs (CuPy arrays, torch tensors or
// DLPack capsules: python/stoker/python_function.py) and returns GPU arrays, which are copied
// into the pipeline's memory. The pipeline's stream is synchronized before the call, and with
// synchronize_stream (the default) the device after it, so the function may use any stream.
class GpuPythonFunction final : public PythonFunction {
 public:
  explicit GpuPythonFunction(const OpSpec& spec)
      : PythonFunction(spec), sync_(spec.get<bool>("synchronize_stream")) {}

  void run_batch(Workspace& ws) override {
    const int n = ws.batch_size;
    check_batch_sizes(ws, n);
    for (size_t k = 0; k < ws.inputs.size(); ++k)
      if (ws.input(static_cast<int>(k)).memory() != MemoryKind::kDevice)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input " + std::to_string(k) + " is on the CPU; the 'gpu' "
             "python_function takes GPU data (move it with .gpu(), or run it with device='cpu')");
    // The executor's threads do not hold the GIL: it is taken only around the Python work.
    cuda_stream_synchronize(ws.gpu->stream());
    std::vector<std::vector<TakenTensor>> taken;
    auto release = [&] {  // the producers' deleters may need the GIL
      py::gil_scoped_acquire gil;
      taken.clear();
    };
    try {
      {
        py::gil_scoped_acquire gil;
        py::list inputs;
        for (const Batch* b : ws.inputs) inputs.append(wrap_batch(*b));
        py::tuple outs = invoke(ws, inputs, n).cast<py::tuple>();
        STOKER_ASSERT(static_cast<int>(outs.size()) == spec_.num_outputs,
                      "python_function: call() returned the wrong number of outputs");
        for (size_t o = 0; o < outs.size(); ++o) {
          taken.emplace_back();
          for (py::handle h : outs[o].cast<py::list>()) taken.back().emplace_back(take(h, o));
        }
      }
      copy_outputs(ws, taken, n);  // waits for the copies: the results may go after it
    } catch (...) {
      release();
      throw;
    }
    release();
  }

 private:
  DLManagedTensor* take(py::handle h, size_t output) const {
    PyObject* cap = h.ptr();
    if (!PyCapsule_IsValid(cap, "dltensor"))
      fail(ErrorKind::kTypeMismatch, spec_.display_name() + ": output " + std::to_string(output) +
                                         " is not an unused DLPack capsule");
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    PyCapsule_SetName(cap, "used_dltensor");
    return m;
  }

  void copy_outputs(Workspace& ws, const std::vector<std::vector<TakenTensor>>& taken, int n) {
    if (sync_) cuda_device_synchronize();
    ws.outputs.assign(taken.size(), Batch());
    for (size_t o = 0; o < taken.size(); ++o) {
      const std::string layout = o < layouts_.size() ? layouts_[o] : "";
      const std::string what = spec_.display_name() + ": output " + std::to_string(o);
      STOKER_ASSERT(static_cast<int>(taken[o].size()) == n, "python_function: unchecked batch size");
      if (n == 0) {
        ws.outputs[o] = Batch(DType::kNone, layout, MemoryKind::kDevice, ws.gpu->device());
        continue;
      }
      std::vector<Shape> shapes;
      DType t = DType::kNone;
      for (int i = 0; i < n; ++i) {
        const DLTensor& d = taken[o][i].m->dl_tensor;
        const std::string sample = what + ", sample " + std::to_string(i);
        if (d.device.device_type != kDLCUDA && d.device.device_type != kDLCUDAManaged)
          fail(ErrorKind::kInvalidArgument, sample + ", is not in GPU memory (DLPack device type " +
                                                std::to_string(d.device.device_type) + ")");
        if (d.device.device_type == kDLCUDA && d.device.device_id != ws.gpu->device())
          fail(ErrorKind::kInvalidArgument, sample + ", is on GPU " + std::to_string(d.device.device_id) +
                                                "; the pipeline runs on GPU " + std::to_string(ws.gpu->device()));
        DType dt = dtype_from_dl(d.dtype);
        if (dt == DType::kNone)
          fail(ErrorKind::kTypeMismatch, sample + ", has a DLPack type stoker has no type for (code " +
                                             std::to_string(d.dtype.code) + ", " +
                                             std::to_string(d.dtype.bits) + " bits)");
        Shape s(d.shape, d.shape + d.ndim);
        if (i == 0) t = dt;
        if (i > 0 && (dt != t || s.size() != shapes[0].size()))
          fail(ErrorKind::kTypeMismatch,
               what + ": the samples must share type and number of dimensions; sample 0 is " +
                   dtype_name(t) + " " + to_string(shapes[0]) + ", sample " + std::to_string(i) +
                   " is " + dtype_name(dt) + " " + to_string(s));
        shapes.push_back(s);
      }
      check_layout(o, layout, shapes[0]);
      Batch b = allocate_device_batch(ws, t, shapes, layout);
      std::vector<kernels::cuda::CopyJob> jobs(n);
      const size_t elem = dtype_size(t);
      for (int i = 0; i < n; ++i) {
        const DLTensor& d = taken[o][i].m->dl_tensor;
        std::vector<int64_t> strides = d.strides ? std::vector<int64_t>(d.strides, d.strides + d.ndim)
                                                 : kernels::cuda::dense_strides(shapes[i]);
        const auto* src = static_cast<const uint8_t*>(d.data) + d.byte_offset;
        if (!kernels::cuda::make_copy_job(&jobs[i], src, b[i].data, shapes[i], strides,
                                          kernels::cuda::dense_strides(shapes[i])))
          fail(ErrorKind::kUnsupported,
               what + ", sample " + std::to_string(i) + ": a strided result of more than " +
                   std::to_string(kernels::cuda::kMaxCopyDims) + " dimensions; return a "
                   "contiguous array");
      }
      kernels::cuda::strided_copy_gpu(ws, elem, jobs);
      ws.outputs[o] = std::move(b);
    }
    cuda_stream_synchronize(ws.gpu->stream());
  }

  bool sync_;
};
#endif

OpSchema& python_function_args(OpSchema& schema, bool batch_default) {
  return schema.inputs(0, 256).outputs(1)
      .arg({.name = "function", .type = ArgType::kString, .optional = true,
            .doc = "(a Python callable) The function to run. Per sample (batch_processing="
                   "False) it gets one array per input and returns one array per output (a "
                   "tuple when num_outputs > 1); per batch it gets one list of arrays per input "
                   "and returns one list per output. Outputs may be anything np.asarray takes, "
                   "of any shape and of bool, integer or float type."})
      .arg({.name = "num_outputs", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "The number of outputs.", .min = 1})
      .arg({.name = "batch_processing", .type = ArgType::kBool, .default_value = batch_default,
            .doc = "True: the function is called once per batch, with lists of samples; False: "
                   "once per sample."})
      .arg({.name = "output_layouts", .type = ArgType::kStringList, .optional = true,
            .doc = "The layout of the outputs: one for all, or a list with one per output (a "
                   "shorter list leaves the rest without layout)."})
      .arg({.name = "synchronize_stream", .type = ArgType::kBool, .default_value = true,
            .doc = "device='gpu': synchronize the device after the function returns, so that "
                   "the work it queued on any stream is finished before its results are read "
                   "(False: the function must finish its GPU work itself)."})
      .arg({.name = "_function_id", .type = ArgType::kInt,
            .doc = "Set by the Python layer: the function this operator calls."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<PythonFunction>(s); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kGPU, [](const OpSpec& s) { return std::make_unique<GpuPythonFunction>(s); })
#endif
      ;
}

}  // namespace

STOKER_REGISTER_OP_NAMED(python_function, "python_function") {
  python_function_args(schema, false)
      .doc("Runs a Python function in the pipeline, on NumPy arrays: per sample, or per batch "
           "with batch_processing=True. The function runs on the pipeline's thread with the "
           "GIL, so it is as fast as Python is; it is never removed from the graph, even when "
           "its outputs are not used. An exception it raises comes out of Pipeline.run() "
           "naming the operator, the line and the sample, with your traceback as its cause.");
}

STOKER_REGISTER_OP_NAMED(dl_tensor_python_function, "dl_tensor_python_function") {
  python_function_args(schema, true)
      .doc("Runs a Python function in the pipeline on DLPack tensors: the function gets each "
           "sample as a DLPack capsule (torch.utils.dlpack.from_dlpack, np.from_dlpack of an "
           "object with __dlpack__, ...), per batch (lists of capsules; the default) or per "
           "sample, and returns capsules, objects with __dlpack__ or arrays.");
}

void bind_python_function(py::module_& m) {
  py::class_<PythonFunctionState, std::shared_ptr<PythonFunctionState>>(
      m, "PythonFunctionState",
      "The link between fn.python_function's Python side and its operator.")
      .def(py::init([](py::object call) { return Registry::get().make(call); }), py::arg("call"))
      .def_property_readonly("id", [](const PythonFunctionState& s) { return s.id; },
                             "The value of the operator's _function_id argument.");
  // Registered after the translator of stoker's own errors, so tried before it: the user's
  // exception object itself goes to Python.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PythonError& e) {
      PyObject* exc = e.exc.get();
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
    }
  });
}

}  // namespace stoker::python
