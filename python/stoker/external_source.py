"""``fn.external_source``: batches from Python code (DALI's ExternalSource).

    def source(info):                       # a callable; with batch=False it gets a SampleInfo
        return [np.full((2, 2), info.iteration, np.uint8)] * 4
    data = fn.external_source(source=source, batch_info=True, layout="HW")

    with pipe:                              # or feed it from outside, one batch per run()
        pipe.set_outputs(fn.external_source(name="input"))
    pipe.feed_input("input", [np.zeros((2, 2))] * batch_size)

Sources: a callable (taking nothing, the iteration number, BatchInfo with batch_info=True, or
SampleInfo with batch=False), an iterable, or a generator function; or no source and
``Pipeline.feed_input``. A batch is a list of arrays (NumPy, or anything ``np.asarray`` takes)
or one array whose first axis is the batch. StopIteration ends the epoch: ``Pipeline.run()``
raises StopIteration, and ``Pipeline.reset()`` starts the next one.

The source is called on the pipeline's producer thread (with the GIL), up to
``prefetch_queue_depth`` batches ahead of ``run()``.

``timeout=`` (seconds; stoker's own, DALI has none) bounds a call into the source: ``run()``
raises TimeoutError naming the external_source and how long the call has lasted, instead of
hanging on a source that never returns. Off by default (as DALI: a first call that downloads
data, or a breakpoint in the source, may take minutes). Ctrl-C interrupts ``run()`` either way,
and closing or deleting the pipeline, or the interpreter's exit, does not wait for such a call
longer than a couple of seconds.

``parallel=True`` calls the source in the pipeline's worker processes instead (``py_num_workers``
of them, started with ``py_start_method``, 'fork' by default): the source must be a callable
that takes one argument, a SampleInfo (``batch=False``, the default with ``parallel=True``; the
samples of a batch are spread over the workers) or, with ``batch=True``, a BatchInfo
(``batch_info=True``) or the iteration number (each batch goes to one worker). Workers hold
copies of the source (with 'spawn' it is pickled, so it must be defined at module level) and
pass data back through shared memory; the external_source's own ``prefetch_queue_depth``
(default 1) says how many batches they compute ahead. An exception in a worker is raised by
``Pipeline.run()`` naming the source and the sample; workers stop when the pipeline is closed
or deleted.

Checkpoints (as DALI): a callable source that takes an argument (the iteration number,
BatchInfo or SampleInfo) resumes where the checkpoint was taken -- its next call gets the
iteration and epoch_idx that would have come. Other sources (no-argument callables, iterables,
generator functions, feed_input) keep their state in your code: after a restore they start from
the beginning.
"""
import functools
import inspect
import numbers
import pickle
import threading
import weakref

import numpy as np

from . import _C
from . import types as _types

__all__ = ["SampleInfo", "BatchInfo"]


class SampleInfo:
    """What a per-sample source (batch=False) is called with."""
    __slots__ = ("idx_in_epoch", "idx_in_batch", "iteration", "epoch_idx")

    def __init__(self, idx_in_epoch, idx_in_batch, iteration, epoch_idx):
        self.idx_in_epoch = idx_in_epoch
        self.idx_in_batch = idx_in_batch
        self.iteration = iteration
        self.epoch_idx = epoch_idx

    def __repr__(self):
        return (f"SampleInfo(idx_in_epoch={self.idx_in_epoch}, idx_in_batch={self.idx_in_batch}, "
                f"iteration={self.iteration}, epoch_idx={self.epoch_idx})")


class BatchInfo:
    """What a batch source is called with when batch_info=True."""
    __slots__ = ("iteration", "epoch_idx")

    def __init__(self, iteration, epoch_idx):
        self.iteration = iteration
        self.epoch_idx = epoch_idx

    def __repr__(self):
        return f"BatchInfo(iteration={self.iteration}, epoch_idx={self.epoch_idx})"


_CYCLE = {None: "no", False: "no", "no": "no", True: "quiet", "quiet": "quiet", "raise": "raise"}


def _positional_params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 1
    n = 0
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return 1
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n += 1
    return n


def _per_output(value, n, what, where):
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{where}: {what} has {len(value)} entries for {n} outputs; give one "
                             "per output (or a single value for all)")
        return list(value)
    return [value] * n


def _check_same_kind(samples, where, what):
    """Raises TypeError unless the arrays `samples` (`what` names them in the message) share
    dtype and number of dimensions, as the samples of one batch must."""
    if samples:
        dt, nd = samples[0].dtype, samples[0].ndim
        for i, s in enumerate(samples[1:], 1):
            if s.dtype != dt or s.ndim != nd:
                raise TypeError(f"{where}: {what} must share dtype and number of dimensions; "
                                f"sample 0 is {dt} {samples[0].shape}, sample {i} is {s.dtype} "
                                f"{s.shape}")


class _ExternalSource:
    """The Python side of one fn.external_source: produces each iteration's batches."""

    def __init__(self, where, source, num_outputs, batch, batch_info, cycle, dtype, ndim,
                 repeat_last, name, parallel=False, prefetch_queue_depth=1):
        self.where = where
        self.name = name
        self.gpu = False  # device="gpu": set by the adapter
        self.no_copy = False  # no_copy=True: fed arrays are shared, not copied (the adapter)
        # A weak reference to the operator in the pipeline's graph: the producer thread holds
        # this object while it waits for data, and must not keep the pipeline alive with it.
        self.record = lambda: None
        self._n = 1 if num_outputs is None else num_outputs
        self._tuple = num_outputs is not None
        self._batch = batch
        self._batch_info = batch_info
        self._cycle = cycle
        self._dtype = dtype         # per output: NumPy dtype or None
        self._ndim = ndim           # per output: int or None
        self._source = source
        self._lock = threading.Lock()
        # Held by the producer while it calls the source (taken before _lock where both are):
        # run()'s bookkeeping under _lock must not wait for a call that may never return.
        self._call_lock = threading.Lock()
        if source is None:
            self._kind = "feed"
        elif inspect.isgeneratorfunction(source):
            self._kind = "genfunc"
        elif callable(source):
            self._kind = "callable"
            self._nargs = _positional_params(source)
        else:
            try:
                iter(source)
            except TypeError:
                raise TypeError(f"{where}: source must be a callable, an iterable or a generator "
                                f"function, got {type(source).__name__}") from None
            self._kind = "iterable"
        if cycle != "no" and self._kind not in ("iterable", "genfunc"):
            raise ValueError(f"{where}: cycle={cycle!r} needs a source that can start over: an "
                             "iterable or a generator function (a callable decides itself when to "
                             "raise StopIteration)")
        if self._kind == "genfunc" and _positional_params(source) > 0:
            raise TypeError(f"{where}: a generator function source is called without arguments, "
                            f"but {getattr(source, '__name__', source)!r} takes some")
        self.parallel = parallel
        if parallel:
            what = "a SampleInfo" if not batch else (
                "a BatchInfo" if batch_info else "the iteration number")
            if self._kind != "callable":
                raise TypeError(
                    f"{where}: parallel=True needs a callable source (a function or an object "
                    f"with __call__) that takes one argument ({what}), so that any worker can "
                    f"compute any {'sample' if not batch else 'batch'}; got "
                    f"{'no source' if source is None else 'a generator function' if self._kind == 'genfunc' else 'an iterable'}. "
                    "Leave parallel out to run it on the pipeline's thread")
            if self._nargs < 1:
                raise TypeError(
                    f"{where}: with parallel=True the source is called with one argument ({what}), "
                    f"but {getattr(source, '__name__', type(source).__name__)!r} takes none")
        self._depth = prefetch_queue_depth
        self.timeout = None         # seconds a call into the source may last (None: no limit)
        self.layouts = None         # per output: the layout declared, or None
        self.pool = None            # the pipeline's WorkerPool (parallel sources)
        self.pool_index = -1        # this source's index in it
        self._inflight = {}         # (epoch, batch in epoch) -> task ids (parallel)
        self._consumed = []         # task ids whose data the operator has copied by now
        self._it = None
        self._epoch = 0
        self._iter_in_epoch = 0
        self._ended = False
        # Checkpoints: the position after each iteration made, and after the last one run()
        # returned: (epoch_idx, batches into the epoch).
        self._made = {}
        self._delivered = (0, 0)
        self._errors = {}           # iteration -> the exception the source raised there
        self._requested = 0         # run() has asked for iterations below this
        # The C++ operator calls back through a weak reference, so that this object (and the
        # user's source) go away with the pipeline.
        self.state = _C.ExternalSourceState(functools.partial(_fetch, weakref.ref(self)))
        # feed_input's batches wait in the state, converted, for the operator to take them
        # without the GIL (src/python/external_source.cc); it repeats the last one itself.
        self.state.set_repeat_last(bool(repeat_last))

    @property
    def resumable(self):
        """Whether a checkpoint restores this source's position (DALI: callables that take the
        iteration number, BatchInfo or SampleInfo)."""
        return self._kind == "callable" and self._nargs >= 1

    # ---- called from the producer thread (with the GIL)
    def fetch(self, iteration, batch_size):
        try:
            if self.parallel:
                return self._fetch_parallel(batch_size)
            with self._call_lock:
                return self._fetch_locked(iteration, batch_size)
        except StopIteration:
            with self._lock:
                self._ended = True
                self._errors[iteration] = StopIteration()
                self._discard_inflight()
            raise StopIteration(f"{self.where}: the source ended the epoch") from None
        except BaseException as e:  # noqa: B902 (reported to run())
            with self._lock:
                self._errors[iteration] = e
            raise
        finally:
            with self._lock:
                # Where a checkpoint taken after this iteration resumes: an ended epoch resumes
                # with the next one.
                self._made[iteration] = ((self._epoch + 1, 0) if self._ended
                                         else (self._epoch, self._iter_in_epoch))

    def _fetch_parallel(self, batch_size):
        """This batch from the worker processes; sends the next prefetch_queue_depth ahead."""
        with self._lock:
            for tid in self._consumed:  # the operator copied the previous batch out
                self.pool.release(tid)
            self._consumed = []
            if self._ended:
                raise StopIteration
            epoch, k = self._epoch, self._iter_in_epoch
            for j in range(k, k + self._depth + 1):
                if (epoch, j) not in self._inflight:
                    self._inflight[(epoch, j)] = self._submit(epoch, j, batch_size)
            tids = self._inflight.pop((epoch, k))
            self._iter_in_epoch += 1  # a failed batch still takes its place in the epoch
        replies = self.pool.wait(tids, self.pool_index)
        with self._lock:
            self._consumed = list(tids)
        for r in replies:
            if r[0] == "stop":
                raise StopIteration
        for r in replies:
            if r[0] == "error":
                raise self._remote_error(r)
        per_task = [self.pool.views(r) for r in replies]
        if not self._batch:
            samples = [s if self._tuple else s[0] for task in per_task for s in task]
            return self._assemble(samples, batch_size)
        (outs,) = per_task[0]  # one task, one batch: per output a dense array or a list
        return self._normalize(tuple(outs) if self._tuple else outs[0], batch_size)

    def _submit(self, epoch, j, batch_size):
        if self._batch:
            return [self.pool.submit(j % self.pool.num_workers, self.pool_index, [(j, epoch)])]
        infos = [(j * batch_size + i, i, j, epoch) for i in range(batch_size)]
        w = min(self.pool.num_workers, batch_size)
        bounds = [batch_size * c // w for c in range(w + 1)]
        return [self.pool.submit(c, self.pool_index, infos[bounds[c]:bounds[c + 1]])
                for c in range(w)]

    def _discard_inflight(self):
        """Batches sent to the workers ahead, past the end of the epoch (or before a reset)."""
        if self.pool is None:
            return
        for tids in self._inflight.values():
            for t in tids:
                self.pool.discard(t)
        self._inflight.clear()

    def _remote_error(self, reply):
        from ._py_workers import RemoteTraceback
        _, _, label, payload, type_name, text, tb, from_source = reply
        if from_source:
            msg = f"{self.where}: the source raised {type_name}: {text} (for {label}, in a worker process)"
        else:
            msg = f"{text} (for {label}, in a worker process)"
        exc = None
        if payload is not None:
            try:
                original = pickle.loads(payload)
            except Exception:  # noqa: BLE001 (its class is not importable here)
                original = None
            if isinstance(original, BaseException):
                try:
                    exc = type(original)(msg)
                except Exception:  # noqa: BLE001 (a constructor with other arguments)
                    exc = original
                    exc.add_note(msg)
        if exc is None:
            exc = RuntimeError(msg)
        exc.__cause__ = RemoteTraceback(tb)
        return exc

    def _fetch_locked(self, iteration, batch_size):
        if self._ended:  # batches asked for ahead, after the end of the epoch and before reset()
            raise StopIteration
        if self._kind == "feed":
            with self._lock:  # one step against feed_input() and run()'s requested()
                return self._next_fed(iteration, batch_size)
        try:
            out = self._produce(batch_size)
        except StopIteration:
            raise
        except BaseException:
            self._iter_in_epoch += 1  # a failed batch still takes its place in the epoch
            raise
        self._iter_in_epoch += 1
        return out

    def _next_fed(self, iteration, batch_size):
        """Called when the operator found no fed batch waiting in the state."""
        if self.state.has_fed():
            return None  # fed since the operator looked: it takes the batch on its next look
        if iteration < self._requested:
            raise RuntimeError(
                f"{self.where}: no data for this batch: feed the external_source"
                f"{'' if self.name is None else ' ' + repr(self.name)} with "
                "pipe.feed_input(name_or_node, data) before each pipe.run() (or give it a "
                "source=)")
        return None  # the producer is ahead of run(): wait for feed_input

    def _produce(self, batch_size):
        if self._batch:
            return self._normalize(self._next(None), batch_size)
        samples = []
        for i in range(batch_size):
            info = SampleInfo(self._iter_in_epoch * batch_size + i, i, self._iter_in_epoch,
                              self._epoch)
            samples.append(self._next(info))
        return self._assemble(samples, batch_size)

    def _assemble(self, samples, batch_size):
        """Per-sample results -> a tuple of batches."""
        if not self._tuple:
            return self._normalize(samples, batch_size)
        for s in samples:
            if not isinstance(s, (tuple, list)) or len(s) != self._n:
                raise TypeError(f"{self.where}: with num_outputs={self._n} and batch=False each "
                                f"sample must be a tuple of {self._n} arrays, got "
                                f"{type(s).__name__}")
        return self._normalize(tuple([s[k] for s in samples] for k in range(self._n)), batch_size)

    def _restart(self):
        self._it = self._source() if self._kind == "genfunc" else iter(self._source)

    def _next(self, sample_info):
        """One batch (or sample) from the source."""
        if self._kind == "callable":
            if self._nargs == 0:
                return self._source()
            if sample_info is not None:
                return self._source(sample_info)
            if self._batch_info:
                return self._source(BatchInfo(self._iter_in_epoch, self._epoch))
            return self._source(self._iter_in_epoch)
        if self._it is None:
            self._restart()
        try:
            return next(self._it)
        except StopIteration:
            if self._cycle == "no":
                raise
            self._restart()
            if self._cycle == "raise":
                raise
            try:
                return next(self._it)
            except StopIteration:
                raise ValueError(f"{self.where}: cycle={self._cycle!r}, but the source gives no "
                                 "data at all") from None

    def _as_array(self, x, k, what):
        if hasattr(x, "__dlpack_device__") and not isinstance(x, np.ndarray):
            dev = x.__dlpack_device__()
            if dev[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
                if not self.gpu:
                    raise TypeError(f"{self.where}: {what} is in device memory; give "
                                    "external_source device='gpu' for GPU data, or move it to "
                                    "the CPU")
                # device='gpu': GPU arrays take one trip through host memory for now.
                if hasattr(x, "cpu"):
                    x = x.cpu()  # torch
                elif hasattr(x, "get"):
                    x = x.get()  # CuPy
                else:
                    raise TypeError(f"{self.where}: {what} is a {type(x).__name__} in device "
                                    "memory, which stoker cannot read yet; give NumPy, CuPy or "
                                    "torch arrays")
        try:
            a = np.asarray(x)
        except Exception as e:
            raise TypeError(f"{self.where}: {what} is a {type(x).__name__}, not an array") from e
        if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
            raise TypeError(f"{self.where}: {what} has dtype {a.dtype}, which stoker has no type "
                            "for; give bool, integer or float arrays")
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        want = self._dtype[k] if self._dtype else None
        if want is not None and a.dtype != want:
            raise TypeError(f"{self.where}: {what} has dtype {a.dtype}, but dtype="
                            f"{_types.from_numpy_dtype(want).name} was declared for output {k}")
        return np.require(a, requirements="C")  # (ascontiguousarray makes 0-d samples 1-d)

    def _normalize(self, raw, batch_size):
        """The source's result -> a tuple of batches (arrays or lists of arrays), checked."""
        if self._tuple:
            if not isinstance(raw, (tuple, list)) or len(raw) != self._n:
                raise TypeError(f"{self.where}: with num_outputs={self._n} the source must return "
                                f"a tuple of {self._n} batches, got {type(raw).__name__}"
                                f"{'' if not isinstance(raw, (tuple, list)) else ' of ' + str(len(raw))}")
            batches = list(raw)
        else:
            batches = [raw]
        out = []
        for k, b in enumerate(batches):
            if isinstance(b, _C.TensorListCPU):
                b = [b[i] for i in range(len(b))]
            if not isinstance(b, (list, tuple)) and (isinstance(b, np.ndarray) or hasattr(
                    b, "__array__") or hasattr(b, "__dlpack__")):
                a = self._as_array(b, k, f"the batch of output {k}")
                if a.ndim == 0:
                    raise TypeError(f"{self.where}: the batch of output {k} is a scalar; a batch is "
                                    "a list of samples or an array whose first axis is the batch")
                n, sample_ndim = a.shape[0], a.ndim - 1
                dense = a
            else:
                if not isinstance(b, (list, tuple)):
                    raise TypeError(f"{self.where}: a batch must be a list of arrays or one array, "
                                    f"got {type(b).__name__}")
                samples = [self._as_array(s, k, f"sample {i} of output {k}") for i, s in enumerate(b)]
                n = len(samples)
                _check_same_kind(samples, self.where, "the samples of a batch")
                sample_ndim = samples[0].ndim if n else 0
                dense = samples
            if not 1 <= n <= batch_size:
                raise ValueError(f"{self.where}: the batch of output {k} has {n} samples; it must "
                                 f"have 1 to {batch_size} (the pipeline's batch_size)")
            want = self._ndim[k] if self._ndim else None
            if want is not None and sample_ndim != want:
                raise ValueError(f"{self.where}: the samples of output {k} have {sample_ndim} "
                                 f"dimensions, but ndim={want} was declared")
            out.append(dense)
        return tuple(out)

    # ---- called by the Pipeline (main thread)
    def named_by(self, data_node):
        """Whether feed_input(data_node) means this source."""
        return data_node.op is self.record()

    def feed(self, data, layout=None, batch_size=1 << 62):
        if self._kind != "feed":
            raise RuntimeError(f"{self.where}: this external_source has a source; feed_input is "
                               "for external_sources without one")
        batch = self._normalize(data, 1 << 62)
        n = len(batch[0])
        if n > batch_size:
            raise ValueError(f"{self.where}: the batch given to feed_input has {n} samples, "
                             f"more than the pipeline's batch_size ({batch_size})")
        if layout:
            batch = self._with_layout(batch, layout)
        layouts = self.layouts or getattr(batch, "layouts", None) or [""] * len(batch)
        # Copied here (with the GIL this thread holds anyway), taken by the operator without it.
        self.state.push_fed(tuple(batch), [l or "" for l in layouts], self.no_copy)

    def _with_layout(self, batch, layout):
        """feed_input(layout=...): checked when the data arrives against the layout the
        external_source declared and against the data; with none declared it becomes the
        output's layout (DALI finds a mismatch only inside run(), and then the pipeline is
        unusable)."""
        if not isinstance(layout, str):
            raise TypeError(f"{self.where}: feed_input's layout must be a str such as 'HWC', got "
                            f"{type(layout).__name__} {layout!r}")
        declared = self.layouts[0] if self.layouts else None
        if declared and layout != declared:
            raise ValueError(f"{self.where}: feed_input got data with layout {layout!r}, but the "
                             f"external_source declared layout={declared!r}; feed {declared!r} "
                             "data (or leave feed_input's layout out)")
        b = batch[0]
        ndim = b.ndim - 1 if isinstance(b, np.ndarray) else b[0].ndim
        if len(layout) != ndim:
            raise ValueError(f"{self.where}: feed_input's layout {layout!r} has {len(layout)} "
                             f"dimensions, but the samples fed have {ndim}")
        batch = _FedBatch(batch)
        batch.layouts = [layout]
        return batch

    def requested(self, iteration):
        """run() is about to wait for `iteration`."""
        with self._lock:
            self._requested = max(self._requested, iteration + 1)
            for k in [k for k in self._errors if k < iteration]:
                del self._errors[k]
            for k in [k for k in self._made if k < iteration - 1]:
                del self._made[k]
        self.state.notify()

    def delivered(self, iteration):
        """run() has returned (or raised for) `iteration`: a checkpoint now resumes after it."""
        with self._lock:
            self._delivered = self._made.pop(iteration, self._delivered)

    def position(self):
        """(epoch_idx, batches into the epoch) after the last iteration run() returned."""
        with self._lock:
            return self._delivered

    def restore_position(self, epoch, batches):
        with self._call_lock, self._lock:
            self._epoch, self._iter_in_epoch = epoch, batches
            self._delivered = (epoch, batches)

    def error_of(self, iteration):
        with self._lock:
            return self._errors.pop(iteration, None)

    def reset(self):
        """Starts the next epoch; returns the last iteration that ended with StopIteration
        (batches made ahead up to it belong to the old epoch), or -1."""
        with self._call_lock, self._lock:
            stops = [k for k, e in self._errors.items() if isinstance(e, StopIteration)]
            self._ended = False
            self._epoch += 1
            self._iter_in_epoch = 0
            self._delivered = (self._epoch, 0)
            self._discard_inflight()
        self.state.notify()
        return max(stops, default=-1)

    def timeout_error(self, iteration):
        """The TimeoutError for run() when the call into the source that makes `iteration` (or
        an earlier one) has lasted longer than `timeout`; else None."""
        if self.timeout is None:
            return None
        seconds, called_for = self.state.busy()
        if called_for < 0 or called_for > iteration or seconds <= self.timeout:
            return None
        named = "" if self.name is None else f" (name={self.name!r})"
        waiting = " (waiting for its worker processes)" if self.parallel else ""
        return TimeoutError(
            f"{self.where}{named}: the source has not returned for {seconds:.1f} s{waiting}, "
            f"longer than its timeout of {self.timeout:g} s (it was called for iteration "
            f"{called_for}). The call goes on: run() raises this until it returns, then gives "
            "its batch. Make the source return or raise sooner, or give a larger timeout "
            "(None: no limit).")

    def cancel(self):
        self.state.cancel()

    def detach_pool(self):
        """The pipeline closed its workers: forget the batches they were making."""
        with self._lock:
            self._inflight.clear()
            self._consumed = []
            self.pool = None

    def resume(self):
        self.state.resume()


class _FedBatch(tuple):
    """A fed batch (one entry per output) carrying feed_input's layout (`layouts`), which the
    C++ operator takes where the external_source declared none."""


def _fetch(ref, iteration, batch_size):
    es = ref()
    if es is None:
        raise RuntimeError("fn.external_source: the pipeline this source belonged to is gone")
    return es.fetch(iteration, batch_size)


_PYTHON_ONLY = ("source", "cycle", "parallel", "timeout")


def _adapt(kwargs):
    """fn.external_source's call -> schema arguments, a _ExternalSource, and the outputs."""
    from .pipeline import _user_location
    where = f"fn.external_source ({_user_location()})"
    source = kwargs.pop("source", None)
    cycle = kwargs.pop("cycle", None)
    parallel = kwargs.pop("parallel", False)
    parallel = bool(parallel)
    timeout = kwargs.pop("timeout", None)
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
            raise TypeError(f"{where}: timeout must be a number of seconds (or None: no limit), "
                            f"got {type(timeout).__name__} {timeout!r}")
        if not timeout > 0 or timeout == float("inf"):
            raise ValueError(f"{where}: timeout must be a positive, finite number of seconds "
                             f"(or None: no limit), got {timeout!r}")
    if parallel:
        # As DALI: parallel=True makes the source per-sample unless batch= says otherwise, and
        # the data is copied once from the workers' shared memory into the pipeline's pool.
        if kwargs.get("batch") is None:
            kwargs["batch"] = False
        kwargs["no_copy"] = False
    depth = kwargs.get("prefetch_queue_depth")
    if depth is None:
        depth = 1
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"{where}: prefetch_queue_depth must be a positive int, got {depth!r}")
    if isinstance(cycle, str) and cycle not in _CYCLE or not isinstance(cycle, (str, bool, type(None))):
        raise ValueError(f"{where}: cycle must be False/'no', True/'quiet' or 'raise', got {cycle!r}")
    cycle = _CYCLE[cycle]
    num_outputs = kwargs.get("num_outputs")
    if num_outputs is not None and (isinstance(num_outputs, bool) or not isinstance(num_outputs, int)
                                    or num_outputs < 1):
        raise ValueError(f"{where}: num_outputs must be a positive int, got {num_outputs!r}")
    n = 1 if num_outputs is None else num_outputs
    python_side = kwargs.pop("_python_side", None)
    if source is None and num_outputs is not None and python_side is None:
        raise ValueError(f"{where}: num_outputs needs a source; feed_input feeds one output")
    batch = kwargs.get("batch")
    if batch is None:
        batch = True
        kwargs.pop("batch", None)
    layout = _per_output(kwargs.get("layout"), n, "layout", where)
    if layout is not None:
        kwargs["layout"] = layout
    dtypes = _per_output(kwargs.get("dtype"), n, "dtype", where)
    if dtypes is not None:
        kwargs["dtype"] = [int(_types.DALIDataType(d)) for d in dtypes]
        dtypes = [_types.to_numpy_dtype(d) for d in dtypes]
    ndims = _per_output(kwargs.get("ndim"), n, "ndim", where)
    if ndims is not None:
        kwargs["ndim"] = ndims
    if layout is not None and ndims is not None:
        for k, (l, d) in enumerate(zip(layout, ndims)):
            if l and len(l) != d:
                raise ValueError(f"{where}: output {k} has layout {l!r} ({len(l)} dimensions) but "
                                 f"ndim={d}")
    if layout is not None and ndims is None:
        ndims = [len(l) if l else None for l in layout]
    # (fn.experimental.inputs.video brings a Python side of its own: stoker._video.)
    es = python_side or _ExternalSource(
        where, source, num_outputs, bool(batch), bool(kwargs.get("batch_info", False)), cycle,
        dtypes, ndims, bool(kwargs.get("repeat_last", False)), kwargs.get("name"), parallel, depth)
    kwargs["_source_id"] = es.state.id
    es.timeout = None if timeout is None else float(timeout)
    es.layouts = layout
    es.no_copy = bool(kwargs.get("no_copy", False))
    # device='gpu' (as DALI): the batches are read on the CPU, as always, then copied to the GPU.
    device = kwargs.pop("device", None)
    if device not in (None, "cpu", "gpu"):
        raise ValueError(f"{where}: device must be 'cpu' or 'gpu', got {device!r}")
    es.gpu = device == "gpu"

    def wrap(outputs):
        es.record = weakref.ref(outputs[0].op)
        outputs[0].pipeline._external_sources.append(es)
        if es.gpu:
            outputs = tuple(o.gpu() for o in outputs)
        return list(outputs) if num_outputs is not None else outputs[0]

    return kwargs, n, wrap
