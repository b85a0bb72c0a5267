// What the operators that call back into Python (external_source, python_function) share: the
// registry through which an operator finds its Python side's state, and Python references that
// may be dropped on any thread.
#pragma once
#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/error.h"
#include "pipeline/operator.h"

namespace stoker::python {
namespace py = pybind11;

// False once the interpreter is gone or going: a Python reference must then be leaked, not
// dropped, by whatever C++ object outlives it.
inline bool interpreter_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// A reference to a Python object that may be dropped on any thread (with the GIL taken then).
inline std::shared_ptr<PyObject> hold(PyObject* o) {
  Py_INCREF(o);
  return std::shared_ptr<PyObject>(o, [](PyObject* p) {
    if (!interpreter_alive()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(p);
  });
}

// The states of one kind by id: an OpSpec holds only constants, so the Python layer passes the
// operator the id of a state that it keeps alive for as long as its pipeline definition exists.
// `State` has a public `int64_t id`.
template <class State>
class StateRegistry {
 public:
  static StateRegistry& get() {
    // Never destroyed: operators may outlive static teardown.
    static StateRegistry* r = new StateRegistry;
    return *r;
  }

  // A new state, registered: what the Python binding's constructor returns.
  template <class... Args>
  std::shared_ptr<State> make(Args&&... args) {
    auto s = std::make_shared<State>(std::forward<Args>(args)...);
    std::lock_guard<std::mutex> g(mu_);
    for (auto it = states_.begin(); it != states_.end();)  // forget the dead ones
      it = it->second.expired() ? states_.erase(it) : std::next(it);
    s->id = next_;
    states_[next_++] = s;
    return s;
  }

  // The state named by the spec's argument `id_arg`; fails naming the operator (`what`) when
  // the pipeline definition that made it is gone.
  std::shared_ptr<State> find(const OpSpec& spec, const std::string& id_arg,
                              const std::string& what) {
    std::shared_ptr<State> s;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = states_.find(spec.get<int64_t>(id_arg));
      if (it != states_.end()) s = it->second.lock();
    }
    if (!s)
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": this " + what + " belongs to a pipeline definition that "
                                                    "no longer exists; define the pipeline again");
    return s;
  }

 private:
  std::mutex mu_;
  std::map<int64_t, std::weak_ptr<State>> states_;
  int64_t next_ = 1;
};

}  // namespace stoker::python
