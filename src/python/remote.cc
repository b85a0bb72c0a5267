// The file system for URLs (readers/remote.h), backed by a Python object (python/stoker/
// _remote.py: fsspec). Called from the readers' threads: each call takes the GIL; the Python side
// releases it while the network works.
#include "python/common.h"
#include "python/state_registry.h"
#include "readers/remote.h"

namespace stoker::python {
namespace {

ErrorKind kind_of_exception(const py::handle& e) {
  if (PyErr_GivenExceptionMatches(e.ptr(), PyExc_FileNotFoundError)) return ErrorKind::kNotFound;
  if (PyErr_GivenExceptionMatches(e.ptr(), PyExc_NotADirectoryError)) return ErrorKind::kInvalidArgument;
  if (PyErr_GivenExceptionMatches(e.ptr(), PyExc_IsADirectoryError)) return ErrorKind::kInvalidArgument;
  if (PyErr_GivenExceptionMatches(e.ptr(), PyExc_ImportError)) return ErrorKind::kUnsupported;
  return ErrorKind::kIO;
}

class PyRemoteFiles final : public readers::RemoteFiles {
 public:
  explicit PyRemoteFiles(const py::object& impl) : impl_(hold(impl.ptr())) {}

  std::vector<readers::RemoteEntry> list(const std::string& url) override {
    py::gil_scoped_acquire gil;
    try {
      std::vector<readers::RemoteEntry> out;
      for (py::handle e : impl().attr("list")(url)) {
        py::tuple t = e.cast<py::tuple>();
        out.push_back({t[0].cast<std::string>(), t[1].cast<bool>()});
      }
      return out;
    } catch (py::error_already_set& e) {
      const ErrorKind kind = kind_of_exception(e.type());
      throw Error(kind, std::string(py::str(e.value())));
    }
  }

  std::vector<readers::RemoteRead> read(const std::vector<std::string>& urls) override {
    py::gil_scoped_acquire gil;
    try {
      return results(impl().attr("read")(urls));
    } catch (py::error_already_set& e) {
      throw Error(kind_of_exception(e.type()), std::string(py::str(e.value())));
    }
  }

  std::vector<readers::RemoteRead> read_ranges(const std::vector<std::string>& urls,
                                               const std::vector<int64_t>& offsets,
                                               const std::vector<int64_t>& sizes) override {
    py::gil_scoped_acquire gil;
    try {
      return results(impl().attr("read_ranges")(urls, offsets, sizes));
    } catch (py::error_already_set& e) {
      throw Error(kind_of_exception(e.type()), std::string(py::str(e.value())));
    }
  }

  // A list of bytes or exceptions, one per file or range (with the GIL held).
  static std::vector<readers::RemoteRead> results(const py::object& list) {
      std::vector<readers::RemoteRead> out;
      for (py::handle r : list) {
        readers::RemoteRead one;
        if (py::isinstance<py::bytes>(r)) {
          char* data = nullptr;
          Py_ssize_t n = 0;
          PyBytes_AsStringAndSize(r.ptr(), &data, &n);
          one.data.assign(data, static_cast<size_t>(n));
          one.ok = true;
        } else {
          one.error = kind_of_exception(r);
          one.message = std::string(py::str(r));
        }
        out.push_back(std::move(one));
      }
      return out;
  }

  int64_t size(const std::string& url) override {
    py::gil_scoped_acquire gil;
    try {
      return impl().attr("size")(url).cast<int64_t>();
    } catch (py::error_already_set& e) {
      throw Error(kind_of_exception(e.type()), std::string(py::str(e.value())));
    }
  }

  std::string read_range(const std::string& url, int64_t offset, int64_t n) override {
    py::gil_scoped_acquire gil;
    try {
      py::object r = impl().attr("read_range")(url, offset, n);
      char* data = nullptr;
      Py_ssize_t k = 0;
      if (PyBytes_AsStringAndSize(r.ptr(), &data, &k) != 0) throw py::error_already_set();
      return std::string(data, static_cast<size_t>(k));
    } catch (py::error_already_set& e) {
      throw Error(kind_of_exception(e.type()), std::string(py::str(e.value())));
    }
  }

 private:
  py::handle impl() const { return py::handle(impl_.get()); }
  std::shared_ptr<PyObject> impl_;
};

}  // namespace

void bind_remote(py::module_& m) {
  m.def("set_remote_files", [](py::object impl) {
    readers::set_remote_files(impl.is_none() ? nullptr : std::make_shared<PyRemoteFiles>(impl));
  }, py::arg("impl"),
     "Installs the file system the readers read URLs through: an object with list(url) -> "
     "[(url, is_dir)], read(urls) -> [bytes or exception], size(url) -> int, "
     "read_range(url, offset, n) -> bytes and read_ranges(urls, offsets, sizes) -> [bytes or "
     "exception]; None removes it.");
}

}  // namespace stoker::python
