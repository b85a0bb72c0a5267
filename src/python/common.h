// Shared pieces of the Python bindings.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/batch.h"
#include "pipeline/schema.h"

namespace stoker::python {
namespace py = pybind11;

// Python value -> ArgValue (bool, int, float, str, lists of those, NumPy scalars and arrays,
// enums through their int value). Throws TypeError naming `what` for anything else.
ArgValue to_arg_value(const py::handle& obj, const std::string& what);
py::object from_arg_value(const ArgValue& v);

void bind_tensor_list(py::module_& m);
void bind_tensor_list_gpu(py::module_& m);
void bind_pipeline(py::module_& m);
void bind_external_source(py::module_& m);
void bind_python_function(py::module_& m);
void bind_remote(py::module_& m);
py::object wrap_batch(Batch b);

// The element type of a NumPy array, kNone where stoker has none (or for another byte order);
// without NumPy's dtype name, which costs a call into Python code per array.
DType dtype_of_array(const py::array& a);

}  // namespace stoker::python
