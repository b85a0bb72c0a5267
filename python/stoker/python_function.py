"""``fn.python_function`` and ``fn.dl_tensor_python_function``: your Python code in the graph.

    def mix(image, noise):                  # per sample (the default): one array per input
        return np.clip(image + noise, 0, 255).astype(np.uint8)
    out = fn.python_function(images, noise, function=mix)

    def stats(images):                      # batch_processing=True: one list per input
        return [img.mean(axis=(0, 1)) for img in images]
    means = fn.python_function(images, function=stats, batch_processing=True)

The function gets NumPy arrays (copies of the samples: writing into them changes nothing
else) and returns, per output, an array or anything ``np.asarray`` takes (a number, a list, an
object with ``__dlpack__``), of bool, integer or float type and of any shape, a 0-d result
staying 0-d; with ``num_outputs > 1`` it returns a tuple. ``fn.dl_tensor_python_function``
passes DLPack capsules instead (per batch by default), as DALI does, and takes capsules back.

It runs on the pipeline's producer thread, with the GIL, while the rest of the pipeline goes
on; it is never removed from the graph. An exception it raises comes out of ``Pipeline.run()``
as an exception of the same type naming the operator, your line and the sample, with your
exception (and its traceback) as its ``__cause__``.
"""
import functools
import weakref

import numpy as np

from . import _C
from .external_source import _check_same_kind

__all__ = []


class _DLPackCapsule:
    """Lets np.from_dlpack take a bare DLPack capsule (what DALI's functions return)."""
    __slots__ = ("capsule",)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU; a capsule of device memory fails in from_dlpack, named below


def _is_capsule(x):
    return type(x).__name__ == "PyCapsule"


class _PythonFunction:
    """The Python side of one python_function operator: calls the user's function."""

    def __init__(self, where, function, num_outputs, batch_processing, dlpack, gpu=False):
        self.where = where
        self.function = function
        self.num_outputs = num_outputs
        self.batch = batch_processing
        self.dlpack = dlpack
        self.gpu = gpu
        # The C++ operator calls back through a weak reference, so that this object (and the
        # user's function) go away with the pipeline.
        self.state = _C.PythonFunctionState(functools.partial(_call, weakref.ref(self)))

    # ---- called from the producer thread (with the GIL)
    def call(self, inputs, batch_size, origins=None):
        """origins: in a branch of an `if`, each sample's place in the whole batch. On the GPU
        each input is a TensorListGPU, and what comes back is DLPack capsules of device memory
        (the operator copies them into the pipeline's memory)."""
        # device='gpu' given, or taken from GPU inputs (the operator then passes TensorListGPUs).
        self.gpu = self.gpu or any(isinstance(b, _C.TensorListGPU) for b in inputs)
        if self.gpu:
            inputs = [[self._device_sample(b[i]) for i in range(len(b))] for b in inputs]
        elif self.dlpack:
            inputs = [[a.__dlpack__() for a in samples] for samples in inputs]
        n = len(inputs[0]) if inputs else batch_size
        if self.batch:
            try:
                r = self.function(*inputs)
            except Exception as e:
                raise self._chain(e, None) from e
            outs = self._outputs(r, "the function's result")
            return tuple(self._batch(o, k, n) for k, o in enumerate(outs))
        per_output = [[] for _ in range(self.num_outputs)]
        for i in range(n):
            at = i if origins is None else origins[i]
            try:
                r = self.function(*[samples[i] for samples in inputs])
            except Exception as e:
                raise self._chain(e, at) from e
            for k, x in enumerate(self._outputs(r, f"the result for sample {at}")):
                per_output[k].append(self._array(x, f"output {k} of sample {at}"))
        return tuple(self._same_kind(samples, k) for k, samples in enumerate(per_output))

    def _chain(self, e, sample):
        """The exception run() raises for `e`: of e's type where it takes a message (else
        RuntimeError), saying where; `raise ... from e` keeps the user's traceback."""
        at = "with the whole batch (batch_processing=True)" if sample is None else f"for sample {sample}"
        return _retyped(e, f"{self.where}: the function raised {type(e).__name__} {at}: {e}")

    def _outputs(self, r, what):
        """The function's return value -> one value per output."""
        n = self.num_outputs
        if r is None:
            raise TypeError(f"{self.where}: the function returned None ({what}); it must return "
                            f"{'an array' if n == 1 else f'a tuple of {n} outputs'} "
                            f"(num_outputs={n})")
        if isinstance(r, tuple):
            if len(r) != n:
                raise ValueError(f"{self.where}: the function returned a tuple of {len(r)} "
                                 f"outputs ({what}), but num_outputs={n}")
            return r
        if n != 1:
            raise TypeError(f"{self.where}: with num_outputs={n} the function must return a tuple "
                            f"of {n} outputs, got {type(r).__name__} ({what})")
        return (r,)

    def _device_sample(self, t):
        """A sample of GPU data as the function gets it: a DLPack capsule
        (dl_tensor_python_function), else a CuPy array (as DALI gives), else a torch tensor,
        else stoker's TensorGPU (which has __dlpack__ and __cuda_array_interface__)."""
        if self.dlpack:
            return t.__dlpack__()
        lib = _gpu_array_library()
        if lib is None:
            return t
        return lib.asarray(t) if lib.__name__ == "cupy" else lib.from_dlpack(t)

    def _device_capsule(self, x, what):
        """A GPU result -> a DLPack capsule the operator takes the data from."""
        if _is_capsule(x):
            return x
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"{self.where}: {what} is a {type(x).__name__}; the 'gpu' "
                            "python_function returns GPU arrays that have __dlpack__ (CuPy, torch, "
                            "JAX) or DLPack capsules")
        dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
        if dev != 2:  # kDLCUDA
            raise TypeError(f"{self.where}: {what} is in host memory; the 'gpu' python_function "
                            "returns GPU data (move it with cupy.asarray(x) or x.cuda())")
        return x.__dlpack__()

    def _array(self, x, what):
        if self.gpu:
            return self._device_capsule(x, what)
        if self.dlpack and _is_capsule(x):
            x = _DLPackCapsule(x)
        if hasattr(x, "__dlpack__") and not isinstance(x, np.ndarray):
            dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
            if dev not in (1, 3):  # kDLCPU, kDLCUDAHost
                raise TypeError(f"{self.where}: {what} is in device memory; the 'cpu' "
                                "python_function takes host data back (move it to the CPU)")
            try:
                x = np.from_dlpack(x)
            except Exception as e:
                raise TypeError(f"{self.where}: {what} could not be read through DLPack: "
                                f"{e}") from e
        try:
            a = np.asarray(x)
        except Exception as e:
            raise TypeError(f"{self.where}: {what} is a {type(x).__name__}, which np.asarray "
                            "cannot take; return NumPy arrays") from e
        if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
            raise TypeError(f"{self.where}: {what} has dtype {a.dtype}, which stoker has no type "
                            "for; return bool, integer or float data")
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        return np.require(a, requirements="C")  # (ascontiguousarray makes 0-d results 1-d)

    def _batch(self, b, k, n):
        """One output of a batch call: a list (or tuple) of n samples, or one array whose first
        axis is the batch."""
        if isinstance(b, (list, tuple)):
            samples = [self._array(x, f"sample {i} of output {k}") for i, x in enumerate(b)]
        elif self.gpu and hasattr(b, "__dlpack__") and hasattr(b, "__len__"):
            samples = [self._array(b[i], f"sample {i} of output {k}") for i in range(len(b))]
        elif _is_capsule(b) or hasattr(b, "__dlpack__") or isinstance(b, np.ndarray):
            a = self._array(b, f"output {k}")
            if a.ndim == 0:
                raise TypeError(f"{self.where}: output {k} is a scalar; with batch_processing=True "
                                f"the function returns a list of {n} samples per output")
            samples = list(a)
        else:
            raise TypeError(f"{self.where}: with batch_processing=True the function returns a list "
                            f"of samples per output, got {type(b).__name__} for output {k}")
        if len(samples) != n:
            raise ValueError(f"{self.where}: output {k} has {len(samples)} samples, but the batch "
                             f"has {n}; return one sample per sample of the inputs")
        return self._same_kind(samples, k)

    def _same_kind(self, samples, k):
        if not self.gpu:  # capsules: the operator checks them
            _check_same_kind(samples, self.where, f"the samples of output {k}")
        return samples


def _retyped(e, msg):
    """An exception of e's type saying `msg`, or a RuntimeError where e's type takes no message
    (a constructor with other arguments); `raise ... from e` then keeps the user's traceback."""
    try:
        new = type(e)(msg)
        if type(new) is not type(e) or str(new) not in (msg, repr(msg)):
            raise TypeError
    except Exception:  # noqa: BLE001
        new = RuntimeError(msg)
    return new


def _gpu_array_library():
    """CuPy where it is installed (DALI's python_function gives CuPy arrays), else torch."""
    for name in ("cupy", "torch"):
        try:
            return __import__(name)
        except ImportError:
            continue
    return None


def _call(ref, iteration, inputs, batch_size, origins):
    pf = ref()
    if pf is None:
        raise RuntimeError("fn.python_function: the pipeline this function belonged to is gone")
    return pf.call(inputs, batch_size, origins)


def _adapter(op_name, dlpack):
    def adapt(kwargs):
        from .pipeline import Pipeline, _user_location
        where = f"fn.{op_name} ({_user_location()})"
        if Pipeline.current() is None:
            raise RuntimeError(f"{where}: python_function must be called while a pipeline is being "
                               "defined: inside a @pipeline_def function, inside `with pipe:`, or "
                               "in define_graph() (its function belongs to one pipeline).")
        function = kwargs.pop("function", None)
        if function is None:
            raise TypeError(f"{where}: the argument 'function' (a callable) is required")
        if not callable(function):
            raise TypeError(f"{where}: 'function' must be a callable, got "
                            f"{type(function).__name__}")
        n = kwargs.get("num_outputs", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{where}: num_outputs must be a positive int, got {n!r}")
        batch = kwargs.get("batch_processing")
        batch = dlpack if batch is None else bool(batch)
        kwargs["batch_processing"] = batch
        layouts = kwargs.get("output_layouts")
        if layouts is not None:
            if isinstance(layouts, str):
                layouts = [layouts] * n
            elif not isinstance(layouts, (list, tuple)) or not all(
                    isinstance(l, str) for l in layouts):
                raise TypeError(f"{where}: output_layouts must be a string or a list of strings, "
                                f"got {layouts!r}")
            elif len(layouts) > n:
                raise ValueError(f"{where}: output_layouts has {len(layouts)} layouts for "
                                 f"num_outputs={n}")
            kwargs["output_layouts"] = list(layouts)
        # A plugin built on python_function (numba_function) brings its own caller class and
        # the name its messages give.
        cls, where = kwargs.pop("_caller", None) or (_PythonFunction, where)
        pf = cls(where, function, n, batch, dlpack, gpu=kwargs.get("device") == "gpu")
        kwargs["_function_id"] = pf.state.id
        kwargs["preserve"] = True  # as in DALI: a function may be run for its side effects

        def wrap(outputs):
            pipe = outputs[0].pipeline
            pipe.__dict__.setdefault("_python_functions", []).append(pf)
            return outputs[0] if n == 1 else list(outputs)

        return kwargs, n, wrap

    return adapt


_adapt_python_function = _adapter("python_function", False)
_adapt_dl_tensor_python_function = _adapter("dl_tensor_python_function", True)
