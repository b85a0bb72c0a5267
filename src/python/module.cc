// stoker._C: the private extension module. The public API is the Python package around it.
#include <pybind11/numpy.h>

#include <cstdio>

#include "codecs/video/video_codec.h"
#include "core/error.h"
#include "core/log.h"
#include "pipeline/dali_format.h"
#include "pipeline/plugin.h"
#include "python/common.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#endif

namespace stoker::python {

namespace {

// A Python int past 64 bits (shape=[2**64]) fails pybind11's cast with a bare "Unable to
// cast Python instance" RuntimeError.
int64_t to_int64(const py::handle& h, const std::string& what) {
  try {
    return h.cast<int64_t>();
  } catch (const py::cast_error&) {
    throw py::value_error(what + ": " + std::string(py::repr(h)) +
                          " does not fit in 64 bits (the largest value is 2**63 - 1).");
  }
}

}  // namespace

ArgValue to_arg_value(const py::handle& obj, const std::string& what) {
  if (py::isinstance<py::bool_>(obj)) return obj.cast<bool>();
  if (py::hasattr(obj, "value") && py::hasattr(obj, "name") && py::isinstance<py::int_>(obj))
    return obj.cast<int64_t>();  // IntEnum members
  if (py::isinstance<py::int_>(obj)) return to_int64(obj, what);
  if (py::isinstance<py::float_>(obj)) return obj.cast<double>();
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  // (Not a class such as np.float32, whose tolist is an unbound method.)
  if (py::isinstance<py::array>(obj) || (!py::isinstance<py::type>(obj) && py::hasattr(obj, "dtype") &&
                                         py::hasattr(obj, "tolist"))) {
    return to_arg_value(obj.attr("tolist")(), what);
  }
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::sequence seq = obj.cast<py::sequence>();
    // Nested lists of numbers (a 2x3 matrix) are taken flat, in row-major order.
    bool nested = false;
    for (py::handle h : seq) nested |= py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h);
    if (nested) {
      py::list flat;
      for (py::handle h : seq) {
        if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
          ArgValue inner = to_arg_value(h, what);
          if (auto* il = std::get_if<std::vector<int64_t>>(&inner)) for (auto x : *il) flat.append(x);
          else if (auto* dl = std::get_if<std::vector<double>>(&inner)) for (auto x : *dl) flat.append(x);
          else throw py::type_error(what + ": nested lists must hold numbers.");
        } else {
          flat.append(h);
        }
      }
      return to_arg_value(flat, what);
    }
    bool all_int = true, all_num = true, all_str = true;
    for (py::handle h : seq) {
      bool is_bool = py::isinstance<py::bool_>(h);
      bool is_int = py::isinstance<py::int_>(h) && !is_bool;
      bool is_num = is_int || py::isinstance<py::float_>(h);
      all_int &= is_int;
      all_num &= is_num;
      all_str &= py::isinstance<py::str>(h);
    }
    if (all_int) {
      std::vector<int64_t> r;
      for (py::handle h : seq) r.push_back(to_int64(h, what));
      return r;
    }
    if (all_num) return seq.cast<std::vector<double>>();
    if (all_str) return seq.cast<std::vector<std::string>>();
  }
  throw py::type_error(what + ": cannot use a value of type '" +
                       std::string(py::str(py::type::handle_of(obj).attr("__name__"))) + "' (" +
                       std::string(py::repr(obj)) + "); expected a number, a string, or a list of them.");
}

py::object from_arg_value(const ArgValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

namespace {

py::dict arg_def_dict(const ArgDef& a) {
  py::dict d;
  d["name"] = a.name;
  d["type"] = arg_type_name(a.type);
  d["has_default"] = a.default_value.has_value();
  d["default"] = a.default_value ? from_arg_value(*a.default_value) : py::none();
  d["optional"] = a.optional;
  d["doc"] = a.doc;
  d["tensor"] = a.tensor;
  d["min"] = a.min ? py::cast(*a.min) : py::none();
  d["max"] = a.max ? py::cast(*a.max) : py::none();
  d["choices"] = a.choices;
  d["alias_of"] = a.alias_of;
  return d;
}

py::dict schema_dict(const OpSchema& s) {
  py::dict d;
  d["name"] = s.name();
  d["doc"] = s.doc();
  d["min_inputs"] = s.min_inputs();
  d["max_inputs"] = s.max_inputs();
  d["input_names"] = s.input_names();
  d["num_outputs"] = s.num_outputs();
  d["output_names"] = s.output_names();
  py::list args;
  for (const ArgDef& a : s.args()) args.append(arg_def_dict(a));
  d["args"] = args;
  py::list backends;
  for (Backend b : s.backends()) backends.append(backend_name(b));
  d["backends"] = backends;
  d["random"] = s.is_random();
  d["reader"] = s.is_reader();
  d["input_layouts"] = s.input_layouts();
  return d;
}

// core/log.h's sink while the interpreter runs: Python's logging, logger "stoker", at the
// message's level. Called from any thread; it takes the GIL. Past the interpreter's start of
// exit (a thread that asks for the GIL then is stopped where it stands), or where logging
// fails, the line goes to stderr.
void log_to_python(LogLevel level, const std::string& message) {
#if PY_VERSION_HEX >= 0x030D0000
  const bool running = Py_IsInitialized() && !Py_IsFinalizing();
#else
  const bool running = Py_IsInitialized() && !_Py_IsFinalizing();
#endif
  if (running) {
    py::gil_scoped_acquire gil;
    try {
      // A path in the message may hold bytes that are not UTF-8: escaped, as in errors.
      py::object text = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
          message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace"));
      if (!text) throw py::error_already_set();
      py::module_::import("logging").attr("getLogger")("stoker").attr("log")(
          static_cast<int>(level), text);
      return;
    } catch (...) {
      PyErr_Clear();
    }
  }
  std::fprintf(stderr, "%s\n", message.c_str());
}

}  // namespace

}  // namespace stoker::python

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  using namespace stoker;
  using namespace stoker::python;
  m.doc() = "stoker's C++ core. Use the public package `stoker` instead.";

  set_log_sink(&log_to_python);
  // From the interpreter's exit on, straight to stderr (see log_to_python).
  py::module_::import("atexit").attr("register")(py::cpp_function([] { set_log_sink(nullptr); }));

  static py::exception<Error> decode_error(m, "DecodeError", PyExc_RuntimeError);
  static py::exception<Error> internal_error(m, "InternalError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind()) {
        case ErrorKind::kInvalidArgument: type = PyExc_ValueError; break;
        case ErrorKind::kTypeMismatch: type = PyExc_TypeError; break;
        case ErrorKind::kNotFound: type = PyExc_FileNotFoundError; break;
        case ErrorKind::kDecode: type = decode_error.ptr(); break;
        case ErrorKind::kIO: type = PyExc_OSError; break;
        case ErrorKind::kOutOfMemory: type = PyExc_MemoryError; break;
        case ErrorKind::kUnsupported: type = PyExc_NotImplementedError; break;
        case ErrorKind::kInternal: type = internal_error.ptr(); break;
      }
      // A message may quote bytes of a file (a key, a name, a path); those that are not UTF-8
      // are escaped, where PyErr_SetString would raise a bare UnicodeDecodeError instead.
      const std::string what = e.what();
      PyObject* text = PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()),
                                            "backslashreplace");
      if (!text) return;  // (MemoryError already set)
      PyErr_SetObject(type, text);
      Py_DECREF(text);
    }
  });

  m.def("load_plugin", [](const std::string& path) { return load_plugin(path); }, py::arg("path"),
        "Loads a plugin library and registers its operators; returns their names.");
  m.def("schemas", [] {
    py::list r;
    for (const OpSchema* s : SchemaRegistry::get().all()) r.append(schema_dict(*s));
    return r;
  }, "Every operator schema as a dict.");
  m.def("check_arg", [](const std::string& op, const std::string& name, py::handle value) {
    const OpSchema& s = SchemaRegistry::get().at(op);
    ArgValue v = to_arg_value(value, "fn." + op + ": argument '" + name + "'");
    return from_arg_value(s.check_arg(name, v));
  }, py::arg("op"), py::arg("name"), py::arg("value"),
     "Checks one constant argument against the schema; returns it normalised.");
  m.def("video_frame_count", [](py::buffer data) {
    py::buffer_info b = data.request();
    if (b.itemsize != 1 || b.ndim != 1 || (b.ndim == 1 && b.strides[0] != 1))
      throw Error(ErrorKind::kInvalidArgument, "video_frame_count: the encoded video must be a "
                                               "contiguous 1-D array of bytes");
    const auto* p = static_cast<const uint8_t*>(b.ptr);
    const size_t n = static_cast<size_t>(b.size);
    py::gil_scoped_release nogil;
    if (n == 0) throw Error(ErrorKind::kDecode, "the encoded video is empty (0 bytes)");
    return codecs::video::VideoFile::open_memory(p, n)->info().num_frames();
  }, py::arg("data"), "Frames in an encoded video (bytes in memory), as decoders.video counts them.");
  m.def("video_gpu_decode_counts", [] {
    const codecs::video::GpuDecodeCounts c = codecs::video::gpu_decode_counts();
    return py::dict(py::arg("nvdec") = c.nvdec, py::arg("cpu") = c.cpu);
  }, "Frames this process decoded for the video operators' GPU devices: on NVDEC, and on the "
     "CPU (streams NVDEC does not take), then copied.");
  m.attr("reads_dali_pipelines") = dali_format_supported();
  m.def("dali_pipeline_document", [](py::bytes data) {
    std::string bytes = data;
    return dali_pipeline_document(bytes.data(), bytes.size(), "Pipeline.deserialize").dump();
  }, py::arg("data"),
     "A pipeline that DALI serialized (protobuf), as the JSON body of stoker's format.");
#ifdef STOKER_WITH_CUDA
  m.attr("built_with_cuda") = true;
  m.def("cuda_device_count", [] { return cuda_device_count(); },
        "GPUs stoker can use here (0 without a driver or a GPU).");
#else
  m.attr("built_with_cuda") = false;
  m.def("cuda_device_count", [] { return 0; }, "GPUs stoker can use here (this build has no CUDA).");
#endif
  bind_tensor_list(m);
  bind_tensor_list_gpu(m);
  bind_pipeline(m);
  bind_external_source(m);
  bind_remote(m);
  bind_python_function(m);
}
