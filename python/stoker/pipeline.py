"""Pipelines: the graph recorded from ``fn.*`` calls, built into stoker's C++ executor."""
import atexit
import functools
import inspect
import json
import os
import threading
import weakref

from . import _C
from . import types as _types

__all__ = ["Pipeline", "pipeline_def", "DataNode"]

_current = threading.local()


def _current_pipeline():
    stack = getattr(_current, "stack", None)
    return stack[-1] if stack else None


def _user_location():
    """'file.py:12' of the innermost frame outside the stoker package."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame = inspect.currentframe()
    try:
        while frame is not None:
            path = os.path.abspath(frame.f_code.co_filename)
            if not path.startswith(here + os.sep):
                return f"{os.path.basename(path)}:{frame.f_lineno}"
            frame = frame.f_back
    finally:
        del frame
    return ""


class _OpRecord:
    """One operator instance in a pipeline's graph."""
    __slots__ = ("schema", "device", "args", "tensor_args", "inputs", "num_outputs", "name",
                 "location", "preserve", "index", "outputs", "__weakref__")

    def __init__(self, schema, device, args, tensor_args, inputs, num_outputs, name, preserve):
        self.schema = schema
        self.device = device
        self.args = args
        self.tensor_args = tensor_args
        self.inputs = inputs
        self.num_outputs = num_outputs
        self.name = name
        self.location = _user_location()
        self.preserve = preserve
        self.index = -1
        self.outputs = []


class DataNode:
    """A batch that flows between operators when the pipeline runs. Supports arithmetic and
    comparisons with other nodes and Python numbers (``images * 2 + 1``, ``labels == 3``)."""
    __slots__ = ("op", "output", "device", "pipeline", "__weakref__")

    def __init__(self, op, output, device, pipeline):
        self.op = op
        self.output = output
        self.device = device
        self.pipeline = pipeline

    @property
    def name(self):
        return f"{self.op.schema}[{self.op.index}].{self.output}"

    def __repr__(self):
        return f"DataNode({self.op.schema}, output {self.output}, device='{self.device}')"

    def gpu(self):
        """This batch on the pipeline's GPU (copied in the mixed stage, asynchronously)."""
        if self.device == "gpu":
            return self
        from ._schema import record_op
        return record_op("_to_gpu", [self], {}, default_device="mixed")

    def cpu(self):
        return self

    def __bool__(self):
        raise TypeError("a DataNode has no truth value while the pipeline is being defined; "
                        "use arithmetic or comparisons on it (e.g. `x == 3`) instead of `if x:`.")

    __hash__ = object.__hash__

    # Arithmetic: each builds an 'arithmetic_generic' operator.
    def _bin(self, other, op, reflected=False):
        from .fn import _arithmetic
        return _arithmetic(op, self, other, reflected)

    def __add__(self, o): return self._bin(o, "add")
    def __radd__(self, o): return self._bin(o, "add", True)
    def __sub__(self, o): return self._bin(o, "sub")
    def __rsub__(self, o): return self._bin(o, "sub", True)
    def __mul__(self, o): return self._bin(o, "mul")
    def __rmul__(self, o): return self._bin(o, "mul", True)
    def __truediv__(self, o): return self._bin(o, "div")
    def __rtruediv__(self, o): return self._bin(o, "div", True)
    def __floordiv__(self, o): return self._bin(o, "floordiv")
    def __rfloordiv__(self, o): return self._bin(o, "floordiv", True)
    def __mod__(self, o): return self._bin(o, "mod")
    def __rmod__(self, o): return self._bin(o, "mod", True)
    def __pow__(self, o): return self._bin(o, "pow")
    def __rpow__(self, o): return self._bin(o, "pow", True)
    def __and__(self, o): return self._bin(o, "bitand")
    def __rand__(self, o): return self._bin(o, "bitand", True)
    def __or__(self, o): return self._bin(o, "bitor")
    def __ror__(self, o): return self._bin(o, "bitor", True)
    def __xor__(self, o): return self._bin(o, "bitxor")
    def __rxor__(self, o): return self._bin(o, "bitxor", True)
    def __eq__(self, o): return self._bin(o, "eq")
    def __ne__(self, o): return self._bin(o, "ne")
    def __lt__(self, o): return self._bin(o, "lt")
    def __le__(self, o): return self._bin(o, "le")
    def __gt__(self, o): return self._bin(o, "gt")
    def __ge__(self, o): return self._bin(o, "ge")

    def __neg__(self):
        from .fn import _arithmetic
        return _arithmetic("neg", self, None)

    def __pos__(self):
        return self

    def __abs__(self):
        from .fn import _arithmetic
        return _arithmetic("abs", self, None)


_PIPELINE_ARGS = ("batch_size", "num_threads", "device_id", "seed", "exec_pipelined",
                  "prefetch_queue_depth", "exec_async", "bytes_per_sample", "set_affinity",
                  "max_streams", "default_cuda_stream_priority", "enable_memory_stats",
                  "py_num_workers", "py_start_method", "output_dtype", "output_ndim",
                  "enable_checkpointing", "checkpoint", "max_batch_size", "exec_separated")


class Pipeline:
    """A data pipeline: operators recorded from ``fn.*`` calls (inside ``with pipe:`` or a
    ``@pipeline_def`` function) or from ``define_graph()`` (the legacy ``ops.*`` API), built into
    stoker's executor and run one batch at a time, ``prefetch_queue_depth`` batches ahead.

    ``device_id=None`` makes a CPU-only pipeline. The same ``seed`` gives the same batches
    whatever ``num_threads`` is.

    Checkpoints: with ``enable_checkpointing=True``, ``checkpoint()`` returns a string (JSON)
    that describes the pipeline after the last batch ``run()`` returned: the iteration (which
    keys every random operator's draws), the seed, each reader's position, shuffle buffer and
    skipped bad samples, and the position of external sources that take an argument. A pipeline
    built with ``checkpoint=that_string`` (and ``enable_checkpointing=True``, as in DALI) gives
    the batches that would have come next, across epochs and shards; the checkpoint's seed
    replaces the pipeline's. A checkpoint from another pipeline (other readers or arguments,
    batch size, data set size) raises ValueError naming what differs.

    ``exec_pipelined=True`` (the default) runs the stages on threads of their own: the CPU
    operators (readers) of the next batch run while the mixed and GPU operators work on this
    one (``profile()`` shows the stages); ``exec_pipelined=False`` runs them in turn.
    ``exec_separated`` is accepted for DALI's sake and changes nothing.

    ``py_num_workers`` and ``py_start_method`` ('fork' or 'spawn') configure the worker
    processes of ``fn.external_source(parallel=True)`` (0 workers: those sources run on the
    pipeline's thread, as in DALI).
    """

    def __init__(self, batch_size=-1, num_threads=-1, device_id=-1, seed=-1,
                 exec_pipelined=True, prefetch_queue_depth=2, exec_async=True,
                 bytes_per_sample=0, set_affinity=False, max_streams=-1,
                 default_cuda_stream_priority=0, enable_memory_stats=False, py_num_workers=1,
                 py_start_method="fork", output_dtype=None, output_ndim=None,
                 enable_checkpointing=False, checkpoint=None, max_batch_size=None,
                 exec_separated=False):
        if max_batch_size is not None and batch_size == -1:
            batch_size = max_batch_size
        self._batch_size = _check_int("batch_size", batch_size, 1, allow_unset=True)
        if num_threads is None or num_threads == -1:
            num_threads = max(1, min(os.cpu_count() or 1, 4))
        self._num_threads = _check_int("num_threads", num_threads, 1)
        if device_id is not None and device_id != -1:
            _check_int("device_id", device_id, 0)
        self._device_id = None if device_id in (None, -1) else device_id
        if seed is None or seed == -1:
            seed = int.from_bytes(os.urandom(4), "little")
        self._seed = _check_int("seed", seed, 0)
        if isinstance(prefetch_queue_depth, dict):
            prefetch_queue_depth = prefetch_queue_depth.get("cpu_size", 2)
        self._prefetch_queue_depth = _check_int("prefetch_queue_depth", prefetch_queue_depth, 1)
        self._exec_async = bool(exec_async)
        self._exec_pipelined = bool(exec_pipelined)
        self._py_num_workers = _check_int("py_num_workers", py_num_workers, 0)
        if py_start_method not in ("fork", "spawn"):
            raise ValueError(f"Pipeline: py_start_method must be 'fork' or 'spawn', got "
                             f"{py_start_method!r}.")
        self._py_start_method = py_start_method
        self._py_pool = None
        _live_pipelines.add(self)
        self._enable_checkpointing = bool(enable_checkpointing)
        self._checkpoint = None
        if checkpoint is not None:
            if not self._enable_checkpointing:
                raise ValueError("Pipeline: restoring a checkpoint needs enable_checkpointing=True "
                                 "(as in DALI); create the pipeline with both.")
            self._checkpoint = _parse_checkpoint(checkpoint)
            self._seed = self._checkpoint["seed"]  # the checkpoint's draws, whatever seed= says
        self._ops = []
        self._external_sources = []  # fn.external_source's Python sides, in definition order
        self._iteration = 0          # the next iteration run() returns
        self._outputs = None
        self._executor = None
        self._built = False

    # ---- properties, as DALI names them
    @property
    def batch_size(self):
        return self._batch_size

    @property
    def max_batch_size(self):
        return self._batch_size

    @property
    def num_threads(self):
        return self._num_threads

    @property
    def device_id(self):
        return self._device_id

    @property
    def seed(self):
        return self._seed

    @property
    def exec_async(self):
        return self._exec_async

    @property
    def exec_pipelined(self):
        return self._exec_pipelined

    @property
    def prefetch_queue_depth(self):
        return self._prefetch_queue_depth

    @property
    def py_num_workers(self):
        return self._py_num_workers

    @property
    def py_start_method(self):
        return self._py_start_method

    @property
    def enable_checkpointing(self):
        return self._enable_checkpointing

    # ---- graph definition
    def __enter__(self):
        if not hasattr(_current, "stack"):
            _current.stack = []
        _current.stack.append(self)
        return self

    def __exit__(self, *exc):
        _current.stack.pop()
        return False

    @staticmethod
    def current():
        """The pipeline whose graph is being defined, or None."""
        return _current_pipeline()

    def _add_op(self, record):
        if self._built:
            raise RuntimeError("Pipeline: operators cannot be added after build().")
        record.index = len(self._ops)
        self._ops.append(record)
        record.outputs = [DataNode(record, k, "cpu" if record.device == "cpu" else "gpu", self)
                          for k in range(record.num_outputs)]
        return record.outputs

    def set_outputs(self, *outputs):
        """Names the nodes whose batches run() returns."""
        flat = []
        for o in outputs:
            if isinstance(o, (list, tuple)):
                flat.extend(o)
            else:
                flat.append(o)
        for i, o in enumerate(flat):
            if not isinstance(o, DataNode):
                raise TypeError(f"Pipeline outputs must be DataNodes made by stoker operators; "
                                f"output {i} is {type(o).__name__} ({o!r}).")
            if o.pipeline is not self:
                raise ValueError(f"Pipeline output {i} ({o!r}) belongs to another pipeline.")
        if not flat:
            raise ValueError("Pipeline: set_outputs() needs at least one output.")
        self._outputs = flat

    def define_graph(self):
        """Legacy API: override in a subclass to build the graph and return its outputs."""
        raise RuntimeError("Pipeline: nothing to build. Define the graph with @pipeline_def, "
                           "with `with pipe: ... pipe.set_outputs(...)`, or by overriding "
                           "define_graph() in a subclass.")

    def _define(self):
        if self._batch_size is None:
            raise ValueError("Pipeline: batch_size is required (a positive int).")
        if self._outputs is None:
            with self:
                outs = self.define_graph()
            if not isinstance(outs, (list, tuple)):
                outs = (outs,)
            self.set_outputs(*outs)

    def start_py_workers(self):
        """Starts the worker processes of parallel external sources now (build() does it too).
        With py_start_method='fork', call it before anything in this process uses CUDA."""
        self._define()
        if self._py_pool is not None:
            return
        parallel = [es for es in self._external_sources if es.parallel]
        if not parallel:
            return
        if self._py_num_workers == 0:  # as DALI: no pool, the sources run on the pipeline's thread
            for es in parallel:
                es.parallel = False
            return
        from ._py_workers import SourceSpec, WorkerPool
        specs = [SourceSpec(es.where, es._source, not es._batch, es._batch_info,
                            es._n if es._tuple else None) for es in parallel]
        pool = WorkerPool(specs, self._py_num_workers, self._py_start_method)
        self._py_pool = pool
        for k, es in enumerate(parallel):
            es.pool, es.pool_index = pool, k

    def build(self):
        """Checks the graph and creates the executor. run() calls it when needed."""
        if self._built:
            return
        self._define()
        ops, outputs = self._serialize()
        for es in self._external_sources:
            es.resume()
        # Workers fork before the executor starts its threads.
        self.start_py_workers()
        self._iteration = 0
        executor = _C.Executor(
            ops, outputs, batch_size=self._batch_size, num_threads=self._num_threads,
            device_id=-1 if self._device_id is None else self._device_id, seed=self._seed,
            prefetch_queue_depth=self._prefetch_queue_depth, exec_async=self._exec_async,
            exec_pipelined=self._exec_pipelined,
            enable_checkpointing=self._enable_checkpointing)
        if self._checkpoint is not None:
            self._restore(executor, self._checkpoint)
        self._executor = executor
        self._built = True

    def _restore(self, executor, ckpt):
        sources = ckpt["external_sources"]
        if len(sources) != len(self._external_sources):
            raise ValueError(
                f"Pipeline(checkpoint=...): the checkpoint does not match this pipeline: it has "
                f"{len(sources)} external source(s), this pipeline has "
                f"{len(self._external_sources)}. Restore a checkpoint into the pipeline it was "
                "taken from.")
        executor.restore(ckpt)
        for es, saved in zip(self._external_sources, sources):
            if es.resumable and saved.get("resumable"):
                es.restore_position(saved["epoch_idx"], saved["iteration"])
        self._iteration = ckpt["iteration"]

    def checkpoint(self, filename=None):
        """The pipeline's state after the last batch run() returned, as a string (JSON); also
        written to `filename` when given. Pass it as ``Pipeline(..., checkpoint=...)`` (with
        enable_checkpointing=True) to continue with the batches that would have come next.
        Needs enable_checkpointing=True."""
        if not self._enable_checkpointing:
            raise ValueError("Pipeline.checkpoint(): this pipeline keeps no checkpoints; create it "
                             "with enable_checkpointing=True.")
        self.build()
        ckpt = {"format": _CHECKPOINT_FORMAT, "version": _CHECKPOINT_VERSION}
        ckpt.update(self._executor.checkpoint())
        ckpt["external_sources"] = []
        for es in self._external_sources:
            epoch, it = es.position()
            ckpt["external_sources"].append({"name": es.name, "resumable": es.resumable,
                                             "epoch_idx": epoch, "iteration": it})
        text = json.dumps(ckpt)
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text

    def _serialize(self):
        # Keep what the outputs need (and preserve=True operators), in definition order, which
        # is topological since a node exists only after its inputs.
        needed = set()
        stack = [o.op for o in self._outputs] + [r for r in self._ops if r.preserve]
        while stack:
            r = stack.pop()
            if r.index in needed:
                continue
            needed.add(r.index)
            stack.extend(n.op for n in r.inputs)
            stack.extend(n.op for n in r.tensor_args.values())
        kept = [r for r in self._ops if r.index in needed]
        new_index = {r.index: k for k, r in enumerate(kept)}
        ref = lambda n: (new_index[n.op.index], n.output)  # noqa: E731
        ops = []
        for r in kept:
            ops.append({
                "schema": r.schema, "device": r.device, "args": r.args,
                "tensor_args": {k: ref(n) for k, n in r.tensor_args.items()},
                "inputs": [ref(n) for n in r.inputs], "num_outputs": r.num_outputs,
                "name": r.name, "location": r.location,
            })
        return ops, [ref(o) for o in self._outputs]

    # ---- running
    def run(self):
        """The next batch of every output, as a tuple of TensorListCPU. With external sources:
        raises StopIteration at the end of their epoch (reset() starts the next one), and
        re-raises what a source raised."""
        self.build()
        if not self._external_sources:
            return self._executor.run()
        self.iter_setup()
        it = self._iteration
        self._iteration += 1
        for es in self._external_sources:
            es.requested(it)
        try:
            out = self._executor.run()
        except Exception:
            for es in self._external_sources:
                es.delivered(it)
            for es in self._external_sources:
                exc = es.error_of(it)
                if isinstance(exc, StopIteration):
                    raise StopIteration from None
                if exc is not None:  # (a parallel source's carries the worker's traceback)
                    raise exc.with_traceback(exc.__traceback__) from exc.__cause__
            raise
        for es in self._external_sources:
            es.delivered(it)
        return out

    def iter_setup(self):
        """Legacy API: called before each run() of a pipeline with external sources; override it
        to feed_input() the next batch."""

    def feed_input(self, data_node, data, layout=None, cuda_stream=None, use_copy_kernel=False):
        """Gives the next batch to an external_source without a source: `data_node` is its
        name or the DataNode it returned; `data` a list of arrays or one array whose first axis
        is the batch. Batches queue up; each run() takes one."""
        for es in self._external_sources:
            if (isinstance(data_node, str) and es.name == data_node) or (
                    isinstance(data_node, DataNode) and data_node.op is es.record()):
                es.feed(data, layout)
                return
        names = ", ".join(repr(es.name) for es in self._external_sources if es.name) or "none"
        raise ValueError(f"Pipeline.feed_input: there is no external_source {data_node!r} in this "
                         f"pipeline (named external sources: {names}); pass the name= given to "
                         "fn.external_source or the DataNode it returned.")

    def reset(self):
        """After StopIteration: starts the external sources' next epoch (readers keep their own
        epochs). Batches made ahead past the end of the old epoch are dropped."""
        if not self._external_sources:
            return
        last = max(es.reset() for es in self._external_sources)
        if self._executor is None:
            return
        while self._iteration <= last:
            self._iteration += 1
            try:
                self._executor.run()
            except Exception:
                pass

    def schedule_run(self):
        """Starts producing batches ahead (run() does this too)."""
        self.build()

    def outputs(self):
        """The next batch of every output (with schedule_run(), DALI's two-step API)."""
        return self.run()

    share_outputs = outputs

    def release_outputs(self):
        """Nothing to do: a batch's memory goes back to the pool when you drop the batch."""

    def reader_meta(self, name=None):
        """Reader metadata (epoch_size, epoch_size_padded, number_of_shards, shard_id,
        pad_last_batch, stick_to_shard) of the reader called `name`, or a dict of all readers."""
        self.build()
        if name is None:
            return {n: self._executor.reader_meta(n) for n in self._executor.reader_names()}
        meta = self._executor.reader_meta(name)
        if meta is None:
            names = ", ".join(repr(n) for n in self._executor.reader_names()) or "none"
            raise ValueError(f"Pipeline: there is no reader named {name!r} "
                             f"(readers named in this pipeline: {names}). Give the reader "
                             f"name={name!r}.")
        return meta

    def epoch_size(self, name=None):
        """Samples in one epoch of the reader `name` (all shards), or a dict for all readers."""
        if name is None:
            return {n: m["epoch_size"] for n, m in self.reader_meta().items()}
        return self.reader_meta(name)["epoch_size"]

    def error_stats(self):
        """Samples skipped or replaced under ``on_error``, per operator:
        ``{"fn.decoders.image (train.py:12)": {"skipped": 2, "replaced": 0, "samples": [paths]}}``."""
        if self._executor is None:
            return {}
        return self._executor.error_stats()

    def memory_stats(self):
        """Bytes allocated, reserved and their peaks, per memory kind (``host``; with a GPU,
        ``device`` and ``pinned``). The GPU kinds also give ``resource_held``: what stoker's
        memory resource of that kind holds for every pipeline of the process, memory the caches
        trimmed but kept for reuse included (stoker never frees GPU or pinned memory while
        pipelines run: that waits for the whole GPU). That is the GPU memory stoker occupies."""
        self.build()
        return self._executor.memory_stats()

    def profile(self):
        """Where the time went since the first run(), as a dict:

        - ``operators``: per operator, its ``device`` and ``stage``, ``iterations``,
          ``batch_ms`` (total time on its stage's thread: setup, or the whole batch for batch
          operators such as readers and GPU operators) and ``sample_ms`` (total time of its
          per-sample work on the worker threads, summed over samples); the mixed decoders add
          ``counters``: images decoded by ``jpeg_engines``, ``cuda_cores`` and ``cpu``, and
          ``window_only``, the GPU-decoded ones that decoded just the window kept; and when
          the mixed decoders' planning (headers, windows, the choice of decoder) runs a stage
          early, on the thread of the stage before theirs, its ``prepare_stage`` and
          ``prepare_ms`` (total time, not in ``batch_ms``);
        - ``stages``: per stage (``cpu``, ``mixed``, ``gpu``, those the pipeline has; one
          ``cpu+mixed+gpu`` stage when the pipeline is not pipelined), ``iterations`` and
          ``busy_ms``;
        - ``batches`` handed out by run(), ``wait_ms`` that run() spent waiting for them,
          ``elapsed_ms`` since the first run(), and whether the stages were ``pipelined``.

        ``profile_report()`` says the same in words, with the bottleneck."""
        self.build()
        p = self._executor.profile()
        p["num_threads"] = self._num_threads
        p["batch_size"] = self._batch_size
        return p

    def profile_report(self):
        """profile() in plain words: throughput, how busy each stage is, what each operator
        costs per batch, and what limits the pipeline."""
        return _profile_report(self.profile())

    def release_unused(self):
        """Gives cached, unused memory back to the system; returns the bytes released (those of
        this pipeline's caches). On a GPU pipeline it also returns what stoker's GPU and pinned
        memory resources keep for every pipeline of the process (``memory_stats()``'s
        ``resource_held``). Freeing pinned memory waits for the whole GPU, so call it between
        epochs or after a run, not while another pipeline of the process decodes."""
        if self._executor is None:
            return 0
        return self._executor.release_unused()

    def set_host_memory_cap(self, nbytes):
        """Caps the host memory pool; an allocation past it raises MemoryError."""
        self.build()
        self._executor.set_host_memory_cap(int(nbytes))

    def close(self):
        """Stops the executor's threads and the external sources' worker processes, and frees
        their memory (the destructor does this too)."""
        for es in self._external_sources:
            es.cancel()  # a producer waiting for feed_input gives up
        self._close_py_workers()
        self._executor = None
        self._built = False

    def _close_py_workers(self):
        pool, self._py_pool = getattr(self, "_py_pool", None), None
        if pool is None:
            return
        pool.close()  # a producer waiting for a worker gives up
        for es in self._external_sources:
            es.detach_pool()

    def __del__(self):
        # The garbage collector may run this on any thread, even on this pipeline's own
        # producer thread in the middle of an external source's fetch (holding its locks), where
        # stopping the producer or taking those locks would deadlock. Only the main thread
        # shuts down in place; elsewhere a helper thread does it once this thread moves on.
        for es in getattr(self, "_external_sources", ()):
            es.cancel()  # (a flag in C++: safe anywhere)
        pool = getattr(self, "_py_pool", None)
        box = [getattr(self, "_executor", None)]  # the only reference, for _shut_down to drop
        self._py_pool = self._executor = None
        if pool is None and box[0] is None:
            return
        if threading.current_thread() is threading.main_thread():
            _shut_down(pool, box)
            return
        try:
            threading.Thread(target=_shut_down, args=(pool, box), daemon=True,
                             name="stoker-pipeline-shutdown").start()
        except RuntimeError:  # the interpreter is shutting down: no new threads
            _shut_down(pool, box)


# Pipelines still alive when Python exits are closed before the interpreter goes away: their
# threads may be calling Python (external sources), which a finalizing interpreter answers by
# ending the calling thread in the middle of stoker's code.
_live_pipelines = weakref.WeakSet()


@atexit.register
def _close_live_pipelines():
    for p in list(_live_pipelines):
        try:
            p.close()
        except Exception:  # exiting anyway: one pipeline's trouble must not keep the others open
            pass


def _shut_down(pool, box):
    """Stops a deleted pipeline's workers, then its executor (box: a list holding the last
    reference to it, so that it is destroyed here)."""
    if pool is not None:
        pool.close()  # a producer waiting for a worker gives up
    box.clear()


_CHECKPOINT_FORMAT = "stoker.checkpoint"
_CHECKPOINT_VERSION = 1


def _parse_checkpoint(checkpoint):
    """The dict of a checkpoint string; ValueError when it is not one this stoker can read."""
    if isinstance(checkpoint, (bytes, bytearray)):
        checkpoint = checkpoint.decode("utf-8", "replace")
    if not isinstance(checkpoint, str):
        raise TypeError(f"Pipeline: checkpoint must be the string Pipeline.checkpoint() returned, "
                        f"got {type(checkpoint).__name__}.")
    try:
        ckpt = json.loads(checkpoint)
    except ValueError:
        ckpt = None
    if not isinstance(ckpt, dict) or ckpt.get("format") != _CHECKPOINT_FORMAT:
        raise ValueError(f"Pipeline: checkpoint is not a stoker checkpoint (it starts with "
                         f"{checkpoint[:40]!r}); pass the string Pipeline.checkpoint() returned "
                         "(or the contents of the file it wrote).")
    if ckpt.get("version") != _CHECKPOINT_VERSION:
        raise ValueError(f"Pipeline: the checkpoint has version {ckpt.get('version')!r}; this "
                         f"stoker reads version {_CHECKPOINT_VERSION}. Take the checkpoint again "
                         "with this version of stoker.")
    ok = (isinstance(ckpt.get("seed"), int) and isinstance(ckpt.get("iteration"), int) and
          isinstance(ckpt.get("operators"), list) and
          isinstance(ckpt.get("external_sources"), list) and
          all(isinstance(e, dict) and isinstance(e.get("epoch_idx"), int) and
              isinstance(e.get("iteration"), int) for e in ckpt["external_sources"]))
    if not ok:
        raise ValueError("Pipeline: the checkpoint is damaged (fields are missing or of the wrong "
                         "type); pass the string Pipeline.checkpoint() returned, unchanged.")
    return ckpt


def _check_int(name, value, minimum, allow_unset=False):
    if allow_unset and value in (None, -1):
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Pipeline: {name} must be an int, got {type(value).__name__} {value!r}.")
    if value < minimum:
        raise ValueError(f"Pipeline: {name} must be >= {minimum}, got {value}.")
    return value


def pipeline_def(fn=None, **pipeline_kwargs):
    """Decorator: turns a function that defines a graph with ``fn.*`` into one that returns a
    Pipeline. Pipeline arguments (batch_size, num_threads, device_id, seed, ...) can be given to
    the decorator and overridden when calling the function; the function's own arguments pass
    through (a parameter named like a pipeline argument receives it too)."""
    enable_conditionals = pipeline_kwargs.pop("enable_conditionals", False)
    if enable_conditionals:
        raise NotImplementedError("pipeline_def: enable_conditionals is not supported by stoker yet.")
    unknown = set(pipeline_kwargs) - set(_PIPELINE_ARGS)
    if unknown:
        raise TypeError(f"pipeline_def: unknown pipeline argument(s): {', '.join(sorted(unknown))}.")

    def decorator(func):
        params = inspect.signature(func).parameters
        takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params.values())

        @functools.wraps(func)
        def create(*args, **kwargs):
            ctor = dict(pipeline_kwargs)
            for k in list(kwargs):
                if k in _PIPELINE_ARGS:
                    ctor[k] = kwargs[k]
                    if k not in params and not takes_kwargs:
                        del kwargs[k]
            for k in _PIPELINE_ARGS:
                if k in params and k not in kwargs and k in ctor:
                    kwargs[k] = ctor[k]
            pipe = Pipeline(**ctor)
            with pipe:
                outs = func(*args, **kwargs)
                if outs is None:
                    raise ValueError(f"@pipeline_def function {func.__name__} returned nothing; "
                                     "return the pipeline's outputs.")
                if not isinstance(outs, (list, tuple)):
                    outs = (outs,)
                pipe.set_outputs(*outs)
            return pipe

        create._is_pipeline_def = True
        return create

    return decorator(fn) if fn is not None else decorator


def _decoded_by(c):
    """'decoded by: JPEG engines 97%, CUDA cores 0%, CPU 3% (...)' for a mixed decoder."""
    total = c["jpeg_engines"] + c["cuda_cores"] + c["cpu"]
    if total == 0:
        return "decoded nothing yet"
    pct = lambda k: f"{100 * c[k] / total:.0f}%"
    text = (f"decoded by: JPEG engines {pct('jpeg_engines')}, CUDA cores {pct('cuda_cores')}, "
            f"CPU {pct('cpu')} of {total:,} images")
    gpu = c["jpeg_engines"] + c["cuda_cores"]
    if gpu and c["window_only"]:
        text += f"; {100 * c['window_only'] / gpu:.0f}% of the GPU's decoded only their window"
    return text


def _profile_report(p):
    n, elapsed = p["batches"], p["elapsed_ms"]
    if n == 0 or elapsed <= 0:
        return "stoker profile: no batch has been run yet."
    per = lambda ms, iters: ms / max(iters, 1)
    rate = n * p["batch_size"] / (elapsed / 1000)
    if p["pipelined"]:
        how = ", stages on threads of their own"
    elif "+" in p["stages"][0]["stage"]:
        how = ", stages in turn on one thread"
    else:
        how = ""
    lines = [f"stoker profile: {n} batches in {elapsed / 1000:.2f} s, {rate:,.0f} samples/s "
             f"(batch {p['batch_size']}, {p['num_threads']} threads{how})."]
    lines.append("  stage         busy   ms/batch")
    for st in p["stages"]:
        lines.append(f"  {st['stage']:<12} {100 * st['busy_ms'] / elapsed:4.0f}%   "
                     f"{per(st['busy_ms'], st['iterations']):8.2f}")
    lines.append("  operator (ms per batch: on the stage's thread / on the workers)")
    for o in p["operators"]:
        lines.append(f"  {o['operator']:<48} {o['device']:<5} "
                     f"{per(o['batch_ms'], o['iterations']):8.2f} / "
                     f"{per(o['sample_ms'], o['iterations']):8.2f}")
        if "prepare_stage" in o:
            lines.append(f"    planned a batch ahead in the "
                         f"{p['stages'][o['prepare_stage']]['stage']} stage: "
                         f"{per(o['prepare_ms'], o['iterations']):.2f} ms per batch there")
        if "jpeg_engines" in o.get("counters", {}):
            lines.append("    " + _decoded_by(o["counters"]))
    waited = p["wait_ms"] / elapsed
    if waited < 0.05:
        lines.append(f"Verdict: run() waited for batches {100 * waited:.0f}% of the time: the "
                     f"pipeline keeps ahead of its consumer, which is the bottleneck.")
        return "\n".join(lines)
    stage = max(p["stages"], key=lambda st: st["busy_ms"])
    ops = [o for o in p["operators"]
           if not p["pipelined"] or p["stages"][o["stage"]] is stage]
    worker_ms = sum(o["sample_ms"] for o in p["operators"])
    workers_busy = worker_ms / (elapsed * p["num_threads"])
    top = max(ops, key=lambda o: o["batch_ms"] + o["sample_ms"] / p["num_threads"], default=None)
    verdict = (f"Verdict: run() waited for batches {100 * waited:.0f}% of the time; the "
               f"{stage['stage']} stage is the busiest ({100 * stage['busy_ms'] / elapsed:.0f}% "
               f"busy)")
    if top is not None:
        verdict += f", most of it in {top['operator']}"
    verdict += "."
    if workers_busy > 0.8:
        verdict += (f" The worker threads are {100 * workers_busy:.0f}% busy: more num_threads "
                    f"(or a GPU for the heavy operators) would help.")
    elif top is not None and top["batch_ms"] > top["sample_ms"] / p["num_threads"]:
        verdict += (" Its time is on the stage's own thread, not the workers, so more threads "
                    "will not help much.")
    lines.append(verdict)
    return "\n".join(lines)
