"""numba_function: a function compiled by numba as a pipeline operator (DALI's
``nvidia.dali.plugin.numba.fn.numba_function``), on the CPU.

It is ``fn.python_function`` underneath, in batch mode: per batch it checks the inputs against
``in_types``/``ins_ndim``, asks ``setup_fn`` for the output shapes (or takes the inputs'),
allocates the outputs and calls the compiled ``run_fn`` once per sample (or once with the
whole batch), outputs first. Both functions are compiled when the operator is defined, for
the exact argument types the arguments declare, so a function numba cannot compile fails
there, as in DALI, and not at the first batch.
"""
import numpy as np

from ... import types as _types
from ...pipeline import DataNode, Pipeline, _user_location
from ...python_function import _PythonFunction, _retyped

__all__ = ["numba_function", "NumbaFunction"]

_MAX_IO = 6  # DALI's limit, on inputs and on outputs alike

_T = _types.DALIDataType
# FLOAT16 is left out as DALI leaves it out: numba has no float16 arithmetic on the CPU.
_NUMERIC = (_T.BOOL, _T.UINT8, _T.UINT16, _T.UINT32, _T.UINT64, _T.INT8, _T.INT16, _T.INT32,
            _T.INT64, _T.FLOAT, _T.FLOAT64)


def _import_numba(where):
    try:
        import numba
        import numba.typed
    except ImportError as e:
        raise ImportError(f"{where}: numba_function compiles run_fn and setup_fn with numba, which "
                          "is not installed here: pip install numba", name="numba") from e
    return numba


def _as_list(value, arg, where):
    if value is None:
        raise TypeError(f"{where}: the argument '{arg}' is required")
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _data_type(t, arg, i, where):
    try:
        if isinstance(t, np.dtype) or (isinstance(t, type) and issubclass(t, np.generic)):
            t = _types.from_numpy_dtype(t)
        if isinstance(t, bool):
            raise TypeError
        t = _T(t)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {arg}[{i}] must be a types.DALIDataType (e.g. types.UINT8), "
                        f"got {t!r}") from None
    if t == _T.FLOAT16:
        raise TypeError(f"{where}: {arg}[{i}] is {t}, which numba_function does not take (numba "
                        "compiles no float16 arithmetic for the CPU; DALI refuses it too): cast "
                        "to types.FLOAT with fn.cast")
    if t not in _NUMERIC:
        raise TypeError(f"{where}: {arg}[{i}] is {t}; numba_function takes bool, integer and "
                        "float types")
    return t


def _ndims(value, arg, where):
    out = []
    for i, d in enumerate(_as_list(value, arg, where)):
        if isinstance(d, np.integer):
            d = int(d)
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"{where}: {arg}[{i}] must be an int (a number of dimensions), "
                            f"got {d!r}")
        if d < 0:
            raise ValueError(f"{where}: {arg}[{i}] is {d}; a number of dimensions is >= 0")
        out.append(d)
    return out


def _check_device(device, where):
    if device in (None, "cpu"):
        return
    if device in ("gpu", "mixed"):
        raise ValueError(f"{where}: stoker's numba_function runs on the CPU only for now; "
                         f"device={device!r} (and blocks/threads_per_block, which only the GPU "
                         "backend uses) is not supported. Use device='cpu' with CPU inputs.")
    raise ValueError(f"{where}: device must be 'cpu', got {device!r}")


class _UserCodeError(Exception):
    """run_fn or setup_fn raised: `stage` names which, `sample` the sample (None: the batch)."""

    def __init__(self, stage, sample, error):
        super().__init__(stage, sample, error)
        self.stage, self.sample, self.error = stage, sample, error


class _Spec:
    """One numba_function's checked arguments and compiled functions. Called with one list of
    samples per input (python_function's batch mode), it returns one list per output."""

    def __init__(self, where, run_fn, out_types, in_types, outs_ndim, ins_ndim, setup_fn,
                 batch_processing, device):
        self.where = where
        _check_device(device, where)
        if run_fn is None:
            raise TypeError(f"{where}: the argument 'run_fn' is required")
        if not callable(run_fn):
            raise TypeError(f"{where}: run_fn must be a function, got {type(run_fn).__name__}")
        if setup_fn is not None and not callable(setup_fn):
            raise TypeError(f"{where}: setup_fn must be a function or None, got "
                            f"{type(setup_fn).__name__}")
        out_types = _as_list(out_types, "out_types", where)
        in_types = _as_list(in_types, "in_types", where)
        outs_ndim = _ndims(outs_ndim, "outs_ndim", where)
        ins_ndim = _ndims(ins_ndim, "ins_ndim", where)
        for what, n in (("out_types", len(out_types)), ("in_types", len(in_types))):
            if not 1 <= n <= _MAX_IO:
                raise ValueError(f"{where}: {what} has {n} types; numba_function has 1 to "
                                 f"{_MAX_IO} {'outputs' if what == 'out_types' else 'inputs'}")
        if len(in_types) != len(ins_ndim):
            raise ValueError(f"{where}: in_types has {len(in_types)} types but ins_ndim has "
                             f"{len(ins_ndim)} entries; give one of each per input")
        if len(out_types) != len(outs_ndim):
            raise ValueError(f"{where}: out_types has {len(out_types)} types but outs_ndim has "
                             f"{len(outs_ndim)} entries; give one of each per output")
        self.out_types = [_data_type(t, "out_types", i, where) for i, t in enumerate(out_types)]
        self.in_types = [_data_type(t, "in_types", i, where) for i, t in enumerate(in_types)]
        self.outs_ndim, self.ins_ndim = outs_ndim, ins_ndim
        if setup_fn is None:
            # Each output is allocated like its input. DALI allocates the input's type and
            # shape whatever out_types/outs_ndim say, so a difference writes past the buffer.
            if len(out_types) != len(in_types):
                raise ValueError(f"{where}: without setup_fn output k has input k's shape and "
                                 f"type, so out_types needs as many types as in_types "
                                 f"({len(out_types)} != {len(in_types)}); give a setup_fn "
                                 "that sets the output shapes")
            for k in range(len(out_types)):
                if (self.out_types[k], outs_ndim[k]) != (self.in_types[k], ins_ndim[k]):
                    raise ValueError(
                        f"{where}: without setup_fn output {k} has input {k}'s shape and type, "
                        f"but out_types[{k}]/outs_ndim[{k}] are {self.out_types[k]}/"
                        f"{outs_ndim[k]} and in_types[{k}]/ins_ndim[{k}] are "
                        f"{self.in_types[k]}/{ins_ndim[k]}; make them equal, or give a setup_fn "
                        "that sets the output shapes")
        self.batch = bool(batch_processing)
        self.out_dtypes = [_types.to_numpy_dtype(t) for t in self.out_types]
        self.in_dtypes = [_types.to_numpy_dtype(t) for t in self.in_types]
        self._functions = (run_fn, setup_fn)
        self.run_fn = self.setup_fn = None

    def compile(self):
        """Compiles run_fn (and setup_fn) for the argument types declared (once)."""
        if self.run_fn is not None:
            return
        run_fn, setup_fn = self._functions
        numba = _import_numba(self.where)
        self._List = numba.typed.List
        nt = numba.types
        self._out_items = [nt.Array(numba.from_dtype(d), n, "C")
                           for d, n in zip(self.out_dtypes, self.outs_ndim)]
        self._in_items = [nt.Array(numba.from_dtype(d), n, "C")
                          for d, n in zip(self.in_dtypes, self.ins_ndim)]
        args = self._out_items + self._in_items
        if self.batch:
            args = [nt.ListType(a) for a in args]
        run = self._compile(numba, run_fn, tuple(args), "run_fn")
        if setup_fn is not None:
            self._shape_item = nt.Array(nt.int64, 1, "C")
            shapes = nt.ListType(nt.ListType(self._shape_item))
            self.setup_fn = self._compile(numba, setup_fn, (shapes, shapes), "setup_fn")
        self.run_fn = run

    def _compile(self, numba, func, argtypes, what):
        func = getattr(func, "py_func", func)  # already decorated with numba.njit
        dispatcher = numba.njit(func)
        try:
            dispatcher.compile(argtypes)
        except numba.core.errors.NumbaError as e:
            sig = ", ".join(str(a) for a in argtypes)
            raise TypeError(f"{self.where}: numba cannot compile {what} ({func.__name__}) in "
                            f"nopython mode for the arguments ({sig}); numba's error is the "
                            "cause above") from e
        return dispatcher

    # ---- run time: called by python_function with the GIL
    def __call__(self, *inputs):
        n = len(inputs[0])
        if n == 0:
            return tuple([] for _ in self.out_types)
        inputs = [self._check_input(k, samples) for k, samples in enumerate(inputs)]
        if self.setup_fn is None:
            shapes = [[a.shape for a in inputs[k]] for k in range(len(self.out_types))]
        else:
            shapes = self._setup(inputs, n)
        outs = [[np.zeros(shape, dtype) for shape in per_sample]
                for per_sample, dtype in zip(shapes, self.out_dtypes)]
        if self.batch:
            args = ([self._typed(o, t) for o, t in zip(outs, self._out_items)] +
                    [self._typed(x, t) for x, t in zip(inputs, self._in_items)])
            try:
                self.run_fn(*args)
            except Exception as e:
                raise _UserCodeError("run_fn", None, e) from e
        else:
            for i in range(n):
                try:
                    self.run_fn(*[o[i] for o in outs], *[x[i] for x in inputs])
                except Exception as e:
                    raise _UserCodeError("run_fn", i, e) from e
        return tuple(outs)

    def _check_input(self, k, samples):
        dtype, ndim = self.in_dtypes[k], self.ins_ndim[k]
        for i, a in enumerate(samples):
            if a.dtype != dtype:
                actual = _types.from_numpy_dtype(a.dtype)
                raise TypeError(
                    f"{self.where}: input {k} is {actual}, but in_types[{k}] is "
                    f"{self.in_types[k]}; give in_types[{k}]=types.{actual.name}, or cast the "
                    "input with fn.cast")
            if a.ndim != ndim:
                raise ValueError(
                    f"{self.where}: input {k} has {a.ndim}-d samples (sample {i} has shape "
                    f"{a.shape}), but ins_ndim[{k}] is {ndim}; give ins_ndim[{k}]={a.ndim}, "
                    "or reshape the input")
        # python_function's samples are copies; numba was compiled for writable C arrays.
        return [np.require(a, requirements=("C", "W", "A")) for a in samples]

    def _setup(self, inputs, n):
        outs = [[np.zeros(ndim, np.int64) for _ in range(n)] for ndim in self.outs_ndim]
        ins = [[np.array(a.shape, np.int64) for a in samples] for samples in inputs]
        try:
            self.setup_fn(self._nested(outs), self._nested(ins))
        except Exception as e:
            raise _UserCodeError("setup_fn", None, e) from e
        for k, per_sample in enumerate(outs):
            for i, shape in enumerate(per_sample):
                if (shape < 0).any():
                    raise ValueError(f"{self.where}: setup_fn gave output {k} of sample {i} the "
                                     f"shape {tuple(int(d) for d in shape)}; every extent must "
                                     "be >= 0")
        return [[tuple(int(d) for d in shape) for shape in per_sample] for per_sample in outs]

    def _typed(self, arrays, item_type):
        lst = self._List.empty_list(item_type)
        for a in arrays:
            lst.append(a)
        return lst

    def _nested(self, shapes):
        outer = self._List()
        for per_sample in shapes:
            outer.append(self._typed(per_sample, self._shape_item))
        return outer

    # ---- definition time
    def record(self, inputs, name):
        from ... import fn
        where = self.where
        if not 1 <= len(inputs) <= _MAX_IO:
            raise TypeError(f"{where}: numba_function takes 1 to {_MAX_IO} inputs, got "
                            f"{len(inputs)}")
        if len(inputs) != len(self.in_types):
            raise ValueError(f"{where}: in_types and ins_ndim describe {len(self.in_types)} "
                             f"input(s), but numba_function got {len(inputs)}")
        if any(isinstance(x, DataNode) and x.device == "gpu" for x in inputs):
            raise ValueError(f"{where}: stoker's numba_function runs on the CPU only for now, "
                             "and an input is on the GPU; give it CPU inputs")
        self.compile()
        kwargs = {} if name is None else {"name": name}
        # The caller names numba_function and tells run_fn's and setup_fn's errors apart from
        # its own checks.
        return fn.python_function(*inputs, function=self, num_outputs=len(self.out_types),
                                  batch_processing=True, _caller=(_NumbaCall, where), **kwargs)


class _NumbaCall(_PythonFunction):
    """python_function's caller for a numba_function: errors name numba_function and, for an
    error in run_fn or setup_fn, the function and the sample; its own checks raise as they are."""

    def call(self, inputs, batch_size, origins=None):
        try:
            outs = self.function(*inputs)
        except _UserCodeError as u:
            e = u.error
            if u.sample is not None:
                at = f"for sample {u.sample if origins is None else origins[u.sample]}"
            elif u.stage == "run_fn":
                at = "with the whole batch (batch_processing=True)"
            else:
                at = "with the whole batch"
            raise _retyped(e, f"{self.where}: {u.stage} raised {type(e).__name__} {at}: "
                              f"{e}") from e
        n = len(inputs[0])
        return tuple(self._batch(o, k, n) for k, o in enumerate(outs))


def numba_function(*inputs, run_fn=None, out_types=None, in_types=None, outs_ndim=None,
                   ins_ndim=None, setup_fn=None, batch_processing=False, blocks=None,
                   threads_per_block=None, device=None, name=None, preserve=None, seed=None,
                   bytes_per_sample_hint=None):
    """Runs ``run_fn``, compiled by numba in nopython mode, in the pipeline (CPU).

    ``run_fn(out0, ..., in0, ...)`` gets the output arrays to fill, then the input arrays: one
    sample's, or with ``batch_processing=True`` lists of the batch's samples. ``out_types``,
    ``in_types`` (types.DALIDataType) and ``outs_ndim``, ``ins_ndim`` say each one's type and
    number of dimensions; an input that differs is an error. 1 to 6 inputs and outputs.

    ``setup_fn(outs, ins)``, called once per batch, sets the output shapes:
    ``outs[k][i][d] = ...`` from ``ins[k][i][d]`` (output/input k, sample i, dimension d).
    Without it output k has input k's shape and type.

    ``blocks`` and ``threads_per_block`` belong to DALI's GPU backend; stoker's numba_function
    runs on the CPU only, and ``device='gpu'`` raises ValueError. Needs numba
    (``pip install numba``). ``preserve``, ``seed`` and ``bytes_per_sample_hint`` are accepted
    for DALI's sake; the operator is never pruned.
    """
    where = f"numba_function ({_user_location()})"
    _check_device(device, where)
    if Pipeline.current() is None:
        raise RuntimeError(f"{where}: numba_function must be called while a pipeline is being "
                           "defined: inside a @pipeline_def function, inside `with pipe:`, or in "
                           "define_graph().")
    spec = _Spec(where, run_fn, out_types, in_types, outs_ndim, ins_ndim, setup_fn,
                 batch_processing, device)
    return spec.record(inputs, name)


class NumbaFunction:
    """DALI's ``nvidia.dali.plugin.numba.NumbaFunction``: numba_function as an operator object
    (the ops API). The functions are compiled here, once; calling the object adds the operator
    to the pipeline being defined."""

    def __init__(self, run_fn=None, out_types=None, in_types=None, outs_ndim=None,
                 ins_ndim=None, setup_fn=None, device="cpu", batch_processing=False,
                 blocks=None, threads_per_block=None, name=None, preserve=None, seed=None,
                 bytes_per_sample_hint=None):
        where = f"NumbaFunction ({_user_location()})"
        self._spec = _Spec(where, run_fn, out_types, in_types, outs_ndim, ins_ndim, setup_fn,
                           batch_processing, device)
        self._spec.compile()
        self._name = name

    def __call__(self, *inputs, name=None):
        if Pipeline.current() is None:
            raise RuntimeError(f"{self._spec.where}: a NumbaFunction must be called while a "
                               "pipeline is being defined (in define_graph(), inside `with "
                               "pipe:` or a @pipeline_def function).")
        return self._spec.record(inputs, name if name is not None else self._name)
