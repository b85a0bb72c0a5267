// TensorListCPU: a batch as Python sees it. Samples come out as NumPy arrays that share the
// batch's memory; the whole batch goes to frameworks through DLPack without a copy.
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include "core/dlpack.h"
#include "python/common.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#endif

namespace stoker::python {
namespace {

py::dtype numpy_dtype(DType t) { return py::dtype(dtype_name(t)); }

// A capsule that keeps `owner` alive for as long as NumPy needs the memory.
py::capsule keep_alive(std::shared_ptr<void> owner) {
  auto* holder = new std::shared_ptr<void>(std::move(owner));
  return py::capsule(holder, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
}

std::vector<py::ssize_t> c_strides(const std::vector<py::ssize_t>& shape, size_t elem) {
  std::vector<py::ssize_t> st(shape.size());
  py::ssize_t s = static_cast<py::ssize_t>(elem);
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

py::array sample_array(const Batch& b, size_t i) {
  const Sample& s = b[i];
  std::vector<py::ssize_t> shape(s.shape.begin(), s.shape.end());
  return py::array(numpy_dtype(b.dtype()), shape, c_strides(shape, dtype_size(b.dtype())),
                   s.data, keep_alive(s.owner));
}

// The batch as one dense array: zero-copy when contiguous, else one copy.
py::array batch_array(const Batch& b) {
  check_dense(b, "as_array");
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(b.size())};
  Shape sample = b.empty() ? Shape{} : b.shape(0);
  shape.insert(shape.end(), sample.begin(), sample.end());
  if (b.empty()) return py::array(numpy_dtype(b.dtype()), shape);
  if (b.is_contiguous())
    return py::array(numpy_dtype(b.dtype()), shape, c_strides(shape, dtype_size(b.dtype())),
                     b[0].data, keep_alive(b[0].owner));
  py::array out(numpy_dtype(b.dtype()), shape);
  auto* dst = static_cast<uint8_t*>(out.mutable_data());
  for (size_t i = 0; i < b.size(); ++i) {
    std::memcpy(dst, b[i].data, b.sample_bytes(i));
    dst += b.sample_bytes(i);
  }
  return out;
}

// Makes the consumer's `stream` (None: the legacy default stream) wait until the batch is ready.
void order_for_consumer(const Batch& b, const py::object& stream) {
  stoker::order_for_consumer(b, stream.is_none() ? 1 : stream.cast<int64_t>());
}

// The batch as one tensor (N, sample shape...), or with `sample` >= 0 that sample alone.
py::capsule to_dlpack(const Batch& b, int64_t sample = -1) {
  DLManagedTensor* m = stoker::to_dlpack(b, sample, "__dlpack__");
  // The consumer renames the capsule to "used_dltensor" and calls the deleter itself; if it
  // never takes the capsule, its destructor frees the tensor.
  return py::capsule(m, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (t && t->deleter) t->deleter(t);
    }
  });
}

}  // namespace

DType dtype_of_array(const py::array& a) {
  const py::dtype d = a.dtype();
  const std::string order = py::str(d.attr("byteorder"));
  if (order == ">") return DType::kNone;  // (big-endian on this little-endian machine)
  const int64_t size = d.itemsize();
  switch (d.kind()) {
    case 'b': return size == 1 ? DType::kBool : DType::kNone;
    case 'u': return size == 1 ? DType::kUInt8 : size == 2 ? DType::kUInt16
                   : size == 4 ? DType::kUInt32 : size == 8 ? DType::kUInt64 : DType::kNone;
    case 'i': return size == 1 ? DType::kInt8 : size == 2 ? DType::kInt16
                   : size == 4 ? DType::kInt32 : size == 8 ? DType::kInt64 : DType::kNone;
    case 'f': return size == 2 ? DType::kFloat16 : size == 4 ? DType::kFloat32
                   : size == 8 ? DType::kFloat64 : DType::kNone;
    default: return DType::kNone;
  }
}

class TensorListCPU {
 public:
  explicit TensorListCPU(Batch b) : batch(std::move(b)) {}
  Batch batch;
};

class TensorListGPU {
 public:
  explicit TensorListGPU(Batch b) : batch(std::move(b)) {}
  Batch batch;
};

py::object wrap_batch(Batch b) {
  if (b.memory() == MemoryKind::kDevice) return py::cast(TensorListGPU(std::move(b)));
  return py::cast(TensorListCPU(std::move(b)));
}

namespace {

// A host copy of a device batch (waits for the batch to be ready).
Batch copy_to_host(const Batch& b) {
  Batch h(b.dtype(), b.layout());
  size_t total = b.total_bytes();
  std::shared_ptr<void> owner(std::malloc(total ? total : 1), std::free);
  if (!owner) throw std::bad_alloc();
  h.resize(b.size());
  auto* base = static_cast<uint8_t*>(owner.get());
  size_t off = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    h[i].owner = owner;
    h[i].data = base + off;
    h[i].shape = b.shape(i);
    h[i].source = b[i].source;
    off += b.sample_bytes(i);
  }
#ifdef STOKER_WITH_CUDA
  py::gil_scoped_release nogil;
  if (b.ready_event()) cuda_event_synchronize(b.ready_event());
  for (size_t i = 0; i < b.size(); ++i) cuda_memcpy_async(h[i].data, b[i].data, b.sample_bytes(i), nullptr);
  cuda_stream_synchronize(nullptr);
#endif
  return h;
}

}  // namespace

void bind_tensor_list(py::module_& m) {
  py::class_<TensorListCPU>(m, "TensorListCPU", R"doc(
A batch of samples in host memory: one dtype, one layout, a shape per sample.

``batch[i]`` is sample i as a NumPy array sharing the batch's memory (it stays valid for as
long as you hold it). ``as_array()`` gives the whole batch as one array when all samples have
the same shape; ``__dlpack__`` hands it to PyTorch, JAX or TensorFlow without a copy.)doc")
      .def("__len__", [](const TensorListCPU& t) { return t.batch.size(); })
      .def("__getitem__", [](const TensorListCPU& t, py::ssize_t i) {
        py::ssize_t n = static_cast<py::ssize_t>(t.batch.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n)
          throw py::index_error("sample index " + std::to_string(i) + " is out of range for a batch of " +
                                std::to_string(n) + " samples");
        const auto k = static_cast<size_t>(i);
        return py::module_::import("stoker.tensors").attr("_sample")(
            sample_array(t.batch, k), t.batch.layout(), t.batch[k].source);
      }, "Sample i as a TensorCPU: a NumPy array sharing the batch's memory, with DALI's methods.")
      .def("at", [](const TensorListCPU& t, size_t i) {
        if (i >= t.batch.size()) throw py::index_error("sample index out of range");
        return sample_array(t.batch, i);
      }, "Sample i as a NumPy array (shares memory).")
      .def("as_array", [](const TensorListCPU& t) { return batch_array(t.batch); },
           "The batch as one NumPy array of shape (N, ...); needs equal sample shapes.")
      .def("as_tensor", [](const TensorListCPU& t) {
        return py::module_::import("stoker.tensors").attr("_dense")(batch_array(t.batch), t.batch.layout());
      }, "The batch as one TensorCPU (as DALI's, its layout with a leading 'N'); needs equal "
         "sample shapes.")
      .def("__array__", [](const TensorListCPU& t, py::object dtype, py::object copy) {
        py::array a = batch_array(t.batch);
        if (!dtype.is_none()) return py::array(a.attr("astype")(dtype));
        return a;
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("shape", [](const TensorListCPU& t) {
        py::list r;
        for (size_t i = 0; i < t.batch.size(); ++i) r.append(py::tuple(py::cast(t.batch.shape(i))));
        return r;
      }, "Each sample's shape, as a list of tuples.")
      .def("layout", [](const TensorListCPU& t) { return t.batch.layout(); })
      .def_property_readonly("dtype", [](const TensorListCPU& t) {
        return py::module_::import("stoker.types").attr("DALIDataType")(static_cast<int>(t.batch.dtype()));
      })
      .def("is_dense_tensor", [](const TensorListCPU& t) {
        return t.batch.is_uniform() && t.batch.is_contiguous();
      })
      .def("source_info", [](const TensorListCPU& t, size_t i) {
        if (i >= t.batch.size()) throw py::index_error("sample index out of range");
        return t.batch[i].source;
      }, "Where sample i came from (a file path or record), or '' if it was made in the pipeline.")
      .def("as_cpu", [](py::object self) { return self; }, "The batch on the CPU (this batch).")
      .def("__dlpack__", [](const TensorListCPU& t, py::object stream, py::kwargs) {
        return to_dlpack(t.batch);
      }, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const TensorListCPU& t) {
        return py::make_tuple(static_cast<int>(kDLCPU), 0);
      })
      .def("__repr__", [](const TensorListCPU& t) -> std::string {
        std::string s = "TensorListCPU(" + std::to_string(t.batch.size()) + " samples, dtype=" +
                        dtype_name(t.batch.dtype()) + ", layout='" + t.batch.layout() + "'";
        if (!t.batch.empty()) s += t.batch.is_uniform() ? ", shape=" + to_string(t.batch.shape(0))
                                                         : ", ragged";
        return s + ")";
      });
}


void bind_tensor_list_gpu(py::module_& m) {
  py::class_<TensorListGPU>(m, "TensorListGPU", R"doc(
A batch of samples in GPU memory. Hand it to a framework without a copy
(``torch.from_dlpack(batch)``: the framework's stream waits for the batch, nobody waits on the
host), or copy it to the host with ``as_cpu()``.)doc")
      .def("__len__", [](const TensorListGPU& t) { return t.batch.size(); })
      .def("__getitem__", [](py::object self, py::ssize_t i) -> py::object {
        const auto& t = self.cast<const TensorListGPU&>();
        const auto n = static_cast<py::ssize_t>(t.batch.size());
        if (i < -n || i >= n) throw py::index_error("sample index out of range");
        return py::module_::import("stoker.tensors").attr("TensorGPU")(self, i < 0 ? i + n : i);
      }, "Sample i as a TensorGPU (no copy): to frameworks through __dlpack__, to CuPy and Numba "
         "through __cuda_array_interface__, to the host with as_cpu().")
      .def("_sample_dlpack", [](const TensorListGPU& t, size_t i, py::object stream) {
        if (i >= t.batch.size()) throw py::index_error("sample index out of range");
        order_for_consumer(t.batch, stream);
        return to_dlpack(t.batch, static_cast<int64_t>(i));
      }, py::arg("i"), py::arg("stream") = py::none())
      .def("_synchronize", [](const TensorListGPU& t) {
#ifdef STOKER_WITH_CUDA
        py::gil_scoped_release nogil;
        if (t.batch.ready_event()) cuda_event_synchronize(t.batch.ready_event());
#else
        (void)t;
#endif
      }, "Waits until the batch's data is ready on the GPU.")
      .def("copy_to_external", [](const TensorListGPU& t, uintptr_t ptr, py::object cuda_stream,
                                  bool non_blocking, bool use_copy_kernel) {
        // DALI's: the batch, samples back to back, into device memory at `ptr`, queued on
        // `cuda_stream` (None: the legacy default stream; an int, or an object with a
        // `cuda_stream` (torch) or `ptr` (CuPy) attribute) after the batch is ready.
        check_dense(t.batch, "copy_to_external");
        int64_t s = 1;
        if (!cuda_stream.is_none()) {
          py::object h = py::hasattr(cuda_stream, "cuda_stream") ? cuda_stream.attr("cuda_stream")
                         : py::hasattr(cuda_stream, "ptr") ? cuda_stream.attr("ptr") : cuda_stream;
          s = h.cast<int64_t>();
          if (s == 0) s = 1;  // (0 is the legacy default stream too)
        }
#ifdef STOKER_WITH_CUDA
        py::gil_scoped_release nogil;
        order_for_consumer(t.batch, s);
        void* stream = s == 1 ? nullptr : reinterpret_cast<void*>(static_cast<intptr_t>(s));
        auto* dst = reinterpret_cast<uint8_t*>(ptr);
        if (t.batch.is_contiguous() && !t.batch.empty()) {
          cuda_memcpy_async(dst, t.batch[0].data, t.batch.total_bytes(), stream);
        } else {
          for (size_t i = 0; i < t.batch.size(); ++i) {
            cuda_memcpy_async(dst, t.batch[i].data, t.batch.sample_bytes(i), stream);
            dst += t.batch.sample_bytes(i);
          }
        }
        if (!non_blocking) cuda_stream_synchronize(stream);
#else
        (void)ptr; (void)non_blocking;
#endif
        (void)use_copy_kernel;
      }, py::arg("ptr"), py::arg("cuda_stream") = py::none(), py::arg("non_blocking") = false,
         py::arg("use_copy_kernel") = false,
         "Copies the batch (equal sample shapes), samples back to back, into device memory at "
         "`ptr`, on `cuda_stream` after the batch is ready; waits for the copy unless "
         "non_blocking.")
      .def("_sample_ptr", [](const TensorListGPU& t, size_t i) {
        if (i >= t.batch.size()) throw py::index_error("sample index out of range");
        return reinterpret_cast<intptr_t>(t.batch[i].data);
      })
      .def("as_cpu", [](const TensorListGPU& t) { return TensorListCPU(copy_to_host(t.batch)); },
           "A copy of the batch in host memory (a TensorListCPU).")
      .def("as_tensor", [](py::object self) {
        return py::module_::import("stoker.tensors").attr("TensorGPU")(self);
      }, "The batch as one TensorGPU (no copy); needs equal sample shapes.")
      .def("shape", [](const TensorListGPU& t) {
        py::list r;
        for (size_t i = 0; i < t.batch.size(); ++i) r.append(py::tuple(py::cast(t.batch.shape(i))));
        return r;
      })
      .def("layout", [](const TensorListGPU& t) { return t.batch.layout(); })
      .def_property_readonly("dtype", [](const TensorListGPU& t) {
        return py::module_::import("stoker.types").attr("DALIDataType")(static_cast<int>(t.batch.dtype()));
      })
      .def_property_readonly("device_id", [](const TensorListGPU& t) { return t.batch.device(); })
      .def("is_dense_tensor", [](const TensorListGPU& t) {
        return t.batch.is_uniform() && t.batch.is_contiguous();
      })
      .def("source_info", [](const TensorListGPU& t, size_t i) {
        if (i >= t.batch.size()) throw py::index_error("sample index out of range");
        return t.batch[i].source;
      })
      .def("data_ptr", [](const TensorListGPU& t) {
        return t.batch.empty() ? 0 : reinterpret_cast<intptr_t>(t.batch[0].data);
      }, "The device address of the first sample.")
      .def("__dlpack__", [](const TensorListGPU& t, py::object stream, py::kwargs) {
        order_for_consumer(t.batch, stream);
        return to_dlpack(t.batch);
      }, py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const TensorListGPU& t) {
        return py::make_tuple(static_cast<int>(kDLCUDA), t.batch.device());
      })
      .def("__repr__", [](const TensorListGPU& t) {
        std::string s = "TensorListGPU(" + std::to_string(t.batch.size()) + " samples, dtype=" +
                        dtype_name(t.batch.dtype()) + ", layout='" + t.batch.layout() +
                        "', device=" + std::to_string(t.batch.device());
        if (!t.batch.empty()) s += t.batch.is_uniform() ? ", shape=" + to_string(t.batch.shape(0)) : ", ragged";
        return s + ")";
      });
}

}  // namespace stoker::python
