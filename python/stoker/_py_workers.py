"""Worker processes for ``fn.external_source(parallel=True)`` (DALI's parallel external source).

A pipeline with parallel sources starts ``py_num_workers`` processes (``py_start_method``
'fork' or 'spawn') when it is built, or at ``Pipeline.start_py_workers()``. Each worker holds a
copy of every parallel source. The pipeline sends a worker a *task* -- some SampleInfos of one
batch (per-sample sources) or one BatchInfo (batch sources) -- over a pipe; the worker calls the
source, writes the arrays into a shared-memory segment it owns (one per task slot, grown when a
result does not fit, reused otherwise) and answers with the segment's name and where each array
lies in it. The pipeline maps the segment, hands NumPy views of it to the operator, which copies
them once into the pipeline's memory pool, and gives the slot back for the next task.

Errors: an exception in a worker is sent back (pickled when it can be, always with its
traceback as text) and raised by ``Pipeline.run()`` with the source and the sample named; a
worker that dies is reported with its exit code. Workers exit when the pipeline is closed or
deleted, when their parent process dies, and at interpreter exit.
"""
import atexit
import gc
import importlib
import itertools
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import threading
import traceback
import types
from multiprocessing import resource_tracker, shared_memory

import numpy as np

__all__ = []

# Every open pool, strongly: a pipeline that dies in a reference cycle takes its pool with it
# into the garbage collector's finalisation, which may finalise the pool's pipes and processes
# before the pipeline's __del__ closes the pool (closing their file descriptors twice). Held
# here, a pool stays whole until close(). Pools still open at interpreter exit are closed then,
# before multiprocessing terminates the workers (atexit runs this first: it is registered later).
_live_pools = set()
_live_lock = threading.Lock()


@atexit.register
def _close_all():
    with _live_lock:
        pools = list(_live_pools)
    for pool in pools:
        pool.close()

_ALIGN = 64
_START_METHODS = ("fork", "spawn")


class SourceSpec:
    """What a worker needs to call one parallel source."""

    def __init__(self, where, source, per_sample, batch_info, num_outputs):
        self.where = where
        self.source = source
        self.per_sample = per_sample
        self.batch_info = batch_info
        self.num_outputs = num_outputs  # None: one output, not a tuple


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (set as __cause__)."""

    def __init__(self, tb):
        super().__init__(tb)
        self.tb = tb

    def __str__(self):
        return "\n\n(in the worker process)\n" + self.tb


# ---------------------------------------------------------------------------- worker side

def _leaf(x, where, what):
    """One array of a source's result as a host NumPy array (checks as the serial source does)."""
    if hasattr(x, "__dlpack_device__") and not isinstance(x, np.ndarray):
        if x.__dlpack_device__()[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
            raise TypeError(f"{where}: {what} is in device memory; a parallel external_source "
                            "must return host (CPU) arrays")
    try:
        a = np.asarray(x)
    except Exception as e:
        raise TypeError(f"{where}: {what} is a {type(x).__name__}, not an array") from e
    if a.dtype.kind not in "biuf" or a.dtype.itemsize > 8:
        raise TypeError(f"{where}: {what} has dtype {a.dtype}, which stoker has no type for; give "
                        "bool, integer or float arrays")
    return a


def _flatten(spec, out, label):
    """A source's result -> (structure, arrays): per-sample results become one array per output,
    batch results one dense array or a list of arrays per output."""
    n = spec.num_outputs
    if spec.per_sample:
        if n is None:
            return [_leaf(out, spec.where, label)]
        if not isinstance(out, (tuple, list)) or len(out) != n:
            raise TypeError(f"{spec.where}: with num_outputs={n} and batch=False each sample must "
                            f"be a tuple of {n} arrays, got {type(out).__name__}")
        return [_leaf(x, spec.where, f"output {k} of {label}") for k, x in enumerate(out)]
    batches = [out]
    if n is not None:
        if not isinstance(out, (tuple, list)) or len(out) != n:
            raise TypeError(f"{spec.where}: with num_outputs={n} the source must return a tuple of "
                            f"{n} batches, got {type(out).__name__}")
        batches = list(out)
    flat = []
    for k, b in enumerate(batches):
        if isinstance(b, (list, tuple)):
            flat.append([_leaf(s, spec.where, f"sample {i} of output {k}") for i, s in enumerate(b)])
        else:
            flat.append(_leaf(b, spec.where, f"the batch of output {k}"))
    return flat


class _Segments:
    """The worker's shared-memory segments, one per task slot."""

    def __init__(self, prefix):
        self._prefix = prefix
        self._by_slot = {}
        self._gen = itertools.count()

    def get(self, slot, nbytes):
        shm = self._by_slot.get(slot)
        if shm is None or shm.size < nbytes:
            if shm is not None:
                shm.close()
                shm.unlink()
            size = max(nbytes, 4096, 0 if shm is None else 2 * shm.size)
            name = f"{self._prefix}_{slot}_{next(self._gen)}"
            shm = shared_memory.SharedMemory(name=name, create=True, size=size)
            self._by_slot[slot] = shm
        return shm

    def close(self):
        for shm in self._by_slot.values():
            try:
                shm.close()
                shm.unlink()
            except (OSError, BufferError):
                pass
        self._by_slot.clear()


def _pack(segments, slot, arrays_tree):
    """Writes every array of the tree into the slot's segment; returns (name, layout tree)."""
    leaves = []

    def walk(node):
        if isinstance(node, list):
            return [walk(x) for x in node]
        leaves.append(node)
        return len(leaves) - 1

    index_tree = walk(arrays_tree)
    offsets, total = [], 0
    for a in leaves:
        total = (total + _ALIGN - 1) // _ALIGN * _ALIGN
        offsets.append(total)
        total += a.nbytes
    shm = segments.get(slot, total)
    specs = []
    for a, off in zip(leaves, offsets):
        dst = np.ndarray(a.shape, a.dtype, buffer=shm.buf, offset=off)
        np.copyto(dst, a, casting="no")
        specs.append((off, a.dtype.str, a.shape))
        del dst

    def fill(node):
        if isinstance(node, list):
            return [fill(x) for x in node]
        return specs[node]

    return shm.name, fill(index_tree)


def _error_reply(task_id, label, exc, from_source):
    """from_source: the user's source raised it (else stoker's checks of what it returned)."""
    try:
        payload = pickle.dumps(exc)
    except Exception:  # noqa: BLE001 (unpicklable exceptions travel as text)
        payload = None
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return ("error", task_id, label, payload, type(exc).__name__, str(exc), tb, from_source)


def _run_task(sources, segments, msg):
    from .external_source import BatchInfo, SampleInfo
    _, task_id, src_index, slot, infos = msg
    spec = sources[src_index]
    results = []
    for info in infos:
        if spec.per_sample:
            arg = SampleInfo(*info)
        elif spec.batch_info:
            arg = BatchInfo(*info)
        else:
            arg = info[0]
        label = repr(arg) if spec.per_sample or spec.batch_info else f"iteration {arg}"
        try:
            out = spec.source(arg)
        except StopIteration:
            return ("stop", task_id, label)
        except BaseException as e:  # noqa: B902 (everything goes back to the pipeline)
            return _error_reply(task_id, label, e, True)
        try:
            results.append(_flatten(spec, out, "the sample" if spec.per_sample else "the batch"))
        except BaseException as e:  # noqa: B902
            return _error_reply(task_id, label, e, False)
    try:
        name, layout = _pack(segments, slot, results)
    except BaseException as e:  # noqa: B902 (e.g. /dev/shm is full)
        e = RuntimeError(f"{spec.where}: a worker process could not write its data to shared "
                         f"memory ({type(e).__name__}: {e}); make /dev/shm larger or the batches "
                         "smaller")
        return _error_reply(task_id, label, e, False)
    return ("ok", task_id, name, layout)


def _worker_main(worker_id, conn, sources, pickled, prefix):
    # Ctrl-C goes to the whole process group: the pipeline's process handles it and closes us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if pickled:
        loader, loads_kwargs = pickled  # (a module's name, or the pickler itself), kwargs
        if isinstance(loader, str):
            loader = importlib.import_module(loader)
        sources = [loader.loads(s, **loads_kwargs) for s in sources]
    else:
        # A forked copy of the parent's objects: the cyclic GC must not finalise any of them
        # (a pipeline copy's destructor would try to stop threads that do not exist here).
        gc.freeze()
    parent = multiprocessing.parent_process()
    segments = _Segments(f"{prefix}_{worker_id}")
    try:
        while True:
            if not conn.poll(0.5):
                if parent is not None and not parent.is_alive():
                    return
                continue
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg[0] == "stop":
                return
            reply = _run_task(sources, segments, msg)
            try:
                conn.send(reply)
            except (BrokenPipeError, OSError):
                return
    finally:
        segments.close()


# ---------------------------------------------------------------------------- pipeline side

def _callback_pickler(pickler):
    """Pipeline(py_callback_pickler=...) as DALI takes it: None (pickle), a module or object
    with dumps and loads, or (that, dumps_kwargs, loads_kwargs) with the last two optional."""
    if pickler is None:
        return pickle, {}, {}
    extra = ()
    if isinstance(pickler, tuple):
        if not 1 <= len(pickler) <= 3:
            raise ValueError("Pipeline: py_callback_pickler as a tuple is (pickler, "
                             f"dumps_kwargs, loads_kwargs), got {len(pickler)} entries.")
        pickler, extra = pickler[0], pickler[1:]
    if not all(callable(getattr(pickler, m, None)) for m in ("dumps", "loads")):
        raise TypeError(f"Pipeline: py_callback_pickler must have dumps and loads (a module such "
                        f"as dill or cloudpickle), got {pickler!r}.")
    kwargs = [dict(k or {}) for k in extra] + [{}] * (2 - len(extra))
    return pickler, kwargs[0], kwargs[1]


class WorkerPool:
    """The worker processes of one pipeline."""

    def __init__(self, specs, num_workers, start_method, pickler=None):
        if start_method not in _START_METHODS:
            raise ValueError(f"Pipeline: py_start_method must be 'fork' or 'spawn', got "
                             f"{start_method!r}")
        ctx = multiprocessing.get_context(start_method)
        pickled = None
        payload = specs
        if start_method == "spawn":
            pickler, dumps_kwargs, loads_kwargs = _callback_pickler(pickler)
            pickled = (pickler.__name__ if isinstance(pickler, types.ModuleType) else pickler,
                       loads_kwargs)
            payload = []
            for s in specs:
                try:
                    payload.append(pickler.dumps(s, **dumps_kwargs))
                except Exception as e:
                    raise TypeError(
                        f"{s.where}: with py_start_method='spawn' the source is sent to the worker "
                        f"processes by pickling, and {getattr(s.source, '__name__', s.source)!r} "
                        f"cannot be pickled ({type(e).__name__}: {e}); define it at module level "
                        "(not a lambda or a local function) or use py_start_method='fork'") from e
        # Workers create the shared memory; forked ones must report it to this process's
        # resource tracker (not start their own, which would unlink it when they exit).
        resource_tracker.ensure_running()
        self._where = [s.where for s in specs]
        self._owner_pid = os.getpid()
        self._prefix = f"stk{os.getpid()}x{id(self) & 0xffffff:x}"
        self._lock = threading.Lock()        # task bookkeeping
        self._send_lock = threading.Lock()   # pipes are written from two threads
        self._closed = False
        self._procs, self._conns = [], []
        self._task_ids = itertools.count()
        self._tasks = {}                     # task id -> (worker, slot)
        self._results = {}                   # task id -> reply
        self._discarded = set()              # task ids whose replies nobody wants
        self._free_slots = [[] for _ in range(num_workers)]
        self._num_slots = [0] * num_workers
        self._mapped = {}                    # segment name -> SharedMemory (attached)
        self._slot_names = {}                # (worker, slot) -> segment name
        self._names_seen = set()
        self._to_close = []                  # mappings still exported to arrays
        try:
            for w in range(num_workers):
                parent_conn, child_conn = ctx.Pipe(duplex=True)
                p = ctx.Process(target=_worker_main, name=f"stoker-py-worker-{w}", daemon=True,
                                args=(w, child_conn, payload, pickled, self._prefix))
                p.start()
                child_conn.close()
                self._procs.append(p)
                self._conns.append(parent_conn)
        except BaseException:
            self.close()
            raise
        with _live_lock:
            _live_pools.add(self)

    @property
    def num_workers(self):
        return len(self._procs)

    @property
    def pids(self):
        return [p.pid for p in self._procs]

    def submit(self, worker, src_index, infos):
        """Sends one task; returns its id."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._where[src_index]}: the pipeline's worker processes "
                                   "were shut down (the pipeline was closed)")
            slots = self._free_slots[worker]
            if slots:
                slot = slots.pop()
            else:
                slot = self._num_slots[worker]
                self._num_slots[worker] += 1
            tid = next(self._task_ids)
            self._tasks[tid] = (worker, slot)
        with self._send_lock:
            try:
                self._conns[worker].send(("task", tid, src_index, slot, infos))
            except (BrokenPipeError, OSError) as e:
                raise RuntimeError(self._dead_message(worker, self._where[src_index])) from e
        return tid

    def _dead_message(self, worker, where):
        p = self._procs[worker]
        p.join(0.1)
        code = p.exitcode
        how = "is still running" if code is None else (
            f"was killed by signal {-code}" if code < 0 else f"exited with code {code}")
        return (f"{where}: parallel worker process {worker} (pid {p.pid}) {how} before returning "
                "its data; the source may have crashed the interpreter or run out of memory")

    def wait(self, tids, src_index):
        """The replies of these tasks, in order; receives other replies on the way."""
        want = list(tids)
        while True:
            with self._lock:
                if all(t in self._results for t in want):
                    return [self._results.pop(t) for t in want]
                if self._closed:
                    raise RuntimeError(f"{self._where[src_index]}: the pipeline was closed while "
                                       "waiting for its worker processes")
            ready = multiprocessing.connection.wait(self._conns, timeout=0.1)
            for conn in ready:
                w = self._conns.index(conn)
                try:
                    reply = conn.recv()
                except (EOFError, OSError):
                    if self._closed:
                        continue
                    raise RuntimeError(self._dead_message(w, self._where[src_index])) from None
                self._on_reply(reply)

    def _on_reply(self, reply):
        tid = reply[1]
        with self._lock:
            if reply[0] == "ok":
                worker, slot = self._tasks[tid]
                self._slot_names[(worker, slot)] = reply[2]
                self._names_seen.add(reply[2])
            if tid in self._discarded:
                self._discarded.discard(tid)
                self._release_locked(tid)
                return
            self._results[tid] = reply

    def views(self, reply):
        """The arrays of an 'ok' reply, as NumPy views of the shared memory: per task entry, the
        layout tree with each leaf replaced by its array."""
        _, _, name, layout = reply
        shm = self._map(name)

        def build(node):
            if isinstance(node, list):
                return [build(x) for x in node]
            off, dt, shape = node
            return np.ndarray(shape, np.dtype(dt), buffer=shm.buf, offset=off)

        return build(layout)

    def _map(self, name):
        with self._lock:
            shm = self._mapped.get(name)
            if shm is None:
                shm = shared_memory.SharedMemory(name=name)
                self._mapped[name] = shm
            return shm

    def release(self, tid):
        """The task's data was used up: its slot takes the next task."""
        with self._lock:
            self._release_locked(tid)

    def _release_locked(self, tid):
        worker, slot = self._tasks.pop(tid)
        self._free_slots[worker].append(slot)
        self._results.pop(tid, None)
        # Mappings of segments the worker has since replaced are no longer needed.
        live = set(self._slot_names.values())
        for name in [n for n in self._mapped if n not in live]:
            self._to_close.append(self._mapped.pop(name))
        self._close_mappings()

    def discard(self, tid):
        """Nobody will use this task's data (the epoch ended before it)."""
        with self._lock:
            if tid in self._results:
                self._release_locked(tid)
            elif tid in self._tasks:
                self._discarded.add(tid)

    def _close_mappings(self):
        keep = []
        for shm in self._to_close:
            try:
                shm.close()
            except BufferError:  # an array still looks at it; try again later
                keep.append(shm)
        self._to_close = keep

    def close(self):
        """Stops the workers (waits a little, then terminates them) and frees the shared memory."""
        if os.getpid() != self._owner_pid:
            return  # a forked copy (in a worker) must not stop its siblings
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            with self._send_lock:
                for conn in self._conns:
                    try:
                        conn.send(("stop",))
                    except (BrokenPipeError, OSError):
                        pass
            for p in self._procs:
                p.join(2.0)
                if p.exitcode is None:
                    p.terminate()
                    p.join(2.0)
                if p.exitcode is None:
                    p.kill()
                    p.join()
            # Only now: a producer blocked reading a pipe has seen its worker's end close.
            for conn in self._conns:
                conn.close()
            with self._lock:
                self._results.clear()
                self._to_close.extend(self._mapped.values())
                self._mapped.clear()
                self._close_mappings()
                # Segments of workers that were terminated before they could unlink them.
                for name in self._names_seen:
                    try:
                        shm = shared_memory.SharedMemory(name=name)
                    except FileNotFoundError:
                        continue
                    shm.close()
                    shm.unlink()
                self._names_seen.clear()
        finally:
            with _live_lock:
                _live_pools.discard(self)
