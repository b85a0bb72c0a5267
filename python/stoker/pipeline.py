"""Pipelines: the graph recorded from ``fn.*`` calls, built into stoker's C++ executor."""
import atexit
import functools
import hashlib
import inspect
import json
import numbers
import os
import threading
import warnings
import weakref

import numpy as np

from . import _C
from . import _affinity
from . import types as _types
from ._conditionals import do_not_convert  # noqa: F401 (DALI's nvidia.dali.pipeline.do_not_convert)

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
    __slots__ = ("op", "output", "device", "_pipeline", "__weakref__")

    def __init__(self, op, output, device, pipeline):
        self.op = op
        self.output = output
        self.device = device
        # Weak: the pipeline holds its nodes (through its graph), and a strong link back would
        # keep a deleted pipeline, its threads and its memory, until the cyclic GC ran.
        self._pipeline = weakref.ref(pipeline)

    @property
    def pipeline(self):
        """The pipeline this node belongs to (None once that pipeline is gone)."""
        return self._pipeline()

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
        return record_op("_to_gpu", [self], {"_display_name": ".gpu()"}, default_device="mixed")

    def cpu(self):
        return self

    # DALI 2.4's metadata methods.
    def shape(self, *, dtype=None, device="cpu"):
        """The run-time shape of each sample as a DataNode (fn.shapes; int64 unless dtype)."""
        from ._schema import record_op
        self._metadata_device("shape", device)
        kwargs = {"device": device} if dtype is None else {"device": device, "dtype": dtype}
        return record_op("shapes", [self], kwargs)

    def property(self, key, *, device="cpu"):
        """A metadata property of each sample as a 1-D uint8 DataNode (fn.get_property):
        "source_info" (where the sample came from) or "layout"."""
        from ._schema import record_op
        self._metadata_device("property", device)
        return record_op("get_property", [self], {"key": key, "device": device})

    def source_info(self, *, device="cpu"):
        """The "source_info" property (self.property("source_info"))."""
        return self.property("source_info", device=device)

    def _metadata_device(self, what, device):
        if self.device == "gpu" and device == "cpu":
            raise ValueError(f"DataNode.{what}(): this node is on the GPU and stoker's CPU "
                             f"operators run before the GPU ones; give device='gpu', or take it "
                             "from the node before .gpu().")

    def __bool__(self):
        raise TypeError("a DataNode has no truth value while the pipeline is being defined: "
                        "`if x:`, `x and y`, `not x` on DataNodes need @pipeline_def("
                        "enable_conditionals=True) (which runs them per sample); otherwise use "
                        "arithmetic or comparisons on it (e.g. `x == 3`, `a & b`).")

    __hash__ = object.__hash__

    # Arithmetic: each builds an 'arithmetic_generic' operator.
    def _bin(self, other, op, reflected=False):
        from ._arithmetic import arithmetic as _arithmetic
        return _arithmetic(op, self, other, reflected=reflected)

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
        from ._arithmetic import arithmetic as _arithmetic
        return _arithmetic("neg", self, None)

    def __pos__(self):
        return self

    def __abs__(self):
        from ._arithmetic import arithmetic as _arithmetic
        return _arithmetic("abs", self, None)

    def __getitem__(self, key):
        """Indexes and slices each sample as NumPy does: ``labels[0]``, ``boxes[:, 0]``,
        ``images[..., ::-1]``, ``x[None]``; indices and slice bounds may be per-sample DataNodes."""
        from ._subscript import subscript
        return subscript(self, key)

    def __iter__(self):
        # Without this, __getitem__ would make Python iterate x[0], x[1], ... forever.
        raise TypeError("a DataNode is not iterable while the pipeline is being defined: it "
                        "stands for a whole batch whose sample shapes are not known yet. Index "
                        "it (x[0], x[:, 1]) to take parts of each sample.")


class _Detached:
    """The graph of operators called outside any pipeline, as DALI allows (``fn.*`` at module
    level): a pipeline that uses one of its nodes adopts a copy of what that node needs."""

    def _adopt(self, node):
        return node

    def _add_op(self, record):
        record.outputs = [DataNode(record, k, "cpu" if record.device == "cpu" else "gpu", self)
                          for k in range(record.num_outputs)]
        return record.outputs


DETACHED = _Detached()

_PIPELINE_ARGS = ("batch_size", "num_threads", "device_id", "seed", "exec_pipelined",
                  "prefetch_queue_depth", "exec_async", "bytes_per_sample", "set_affinity",
                  "max_streams", "default_cuda_stream_priority", "enable_memory_stats",
                  "py_num_workers", "py_start_method", "output_dtype", "output_ndim",
                  "enable_checkpointing", "checkpoint", "max_batch_size", "exec_separated",
                  "py_callback_pickler", "output_layout", "exec_dynamic",
                  "experimental_exec_dynamic", "stream_policy", "concurrency")


def _warn_batch_past_epoch(executor, batch_size):
    # A batch larger than a reader's shard repeats the data within every batch: legal (DALI
    # allows it), but batch_size=10,000,000 over 47 files grew to 16.8 GB without a word.
    for name, meta in executor.readers():
        n, shards, shard = meta["epoch_size"], meta["number_of_shards"], meta["shard_id"]
        in_shard = (shard + 1) * n // shards - shard * n // shards
        if batch_size > in_shard:
            warnings.warn(
                f"{name}: batch_size={batch_size} is larger than the reader's epoch of "
                f"{in_shard} samples (shard {shard} of {shards}), so every batch holds samples "
                f"more than once, and memory grows with batch_size, not with the data. If "
                f"that is not intended, use a batch_size of at most {in_shard}.", stacklevel=3)


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

    Serialized pipelines: ``serialize()`` returns the pipeline's definition as bytes (its
    parameters and every operator with its arguments; stoker's own versioned format) and
    ``Pipeline.deserialize(bytes)`` (or ``filename=``) makes the pipeline again, built, giving
    the same batches; keyword arguments override the serialized parameters. External sources
    travel by name and are fed with ``feed_input(name, data)``; Python code (a source callable,
    python_function) cannot be serialized.

    ``exec_pipelined=True`` (the default) runs the stages on threads of their own: the CPU
    operators (readers) of the next batch run while the mixed and GPU operators work on this
    one (``profile()`` shows the stages); ``exec_pipelined=False`` runs them in turn.
    ``exec_separated`` is accepted for DALI's sake and changes nothing.

    ``py_num_workers`` and ``py_start_method`` ('fork' or 'spawn') configure the worker
    processes of ``fn.external_source(parallel=True)`` (0 workers: those sources run on the
    pipeline's thread, as in DALI); with 'spawn', ``py_callback_pickler`` (a module or object
    with ``dumps``/``loads``, or DALI's ``(pickler, dumps_kwargs, loads_kwargs)``) sends the
    sources to them.

    ``output_dtype``, ``output_ndim`` and ``output_layout`` (one value for every output or a
    list with one per output, None for any) are checked on every batch run() returns, as in
    DALI: a mismatch raises TypeError (dtype) or ValueError.

    Accepted for DALI's sake and ignored, since stoker has one executor whose behaviour they
    would not change: ``exec_dynamic``, ``experimental_exec_dynamic``, ``stream_policy``,
    ``concurrency``, ``bytes_per_sample``, ``max_streams``,
    ``default_cuda_stream_priority`` and ``enable_memory_stats`` (``memory_stats()`` always
    works). NumPy integers are taken wherever an int is.

    ``set_affinity``: where this process is one of several on the host (torchrun's
    ``LOCAL_WORLD_SIZE``, or Open MPI's), the pipeline's threads keep to this process's share
    of the cores: the cores it may use, split into equal contiguous parts by local rank (a
    process its launcher already bound to some of the machine's cores is left as it is). None
    (the default) does so for pipelines with a GPU; True for CPU-only pipelines too; False
    never; a list of core numbers (stoker's own) keeps them to those cores, whatever the
    launcher. (DALI's True keeps the threads to the cores near the GPU, and its default is False;
    stoker pins by default because ranks whose threads share cores feed their GPUs unevenly.)
    """

    def __init__(self, batch_size=-1, num_threads=-1, device_id=-1, seed=-1,
                 exec_pipelined=True, prefetch_queue_depth=2, exec_async=True,
                 bytes_per_sample=0, set_affinity=None, max_streams=-1,
                 default_cuda_stream_priority=0, enable_memory_stats=False, py_num_workers=1,
                 py_start_method="fork", output_dtype=None, output_ndim=None,
                 enable_checkpointing=False, checkpoint=None, max_batch_size=None,
                 exec_separated=False, py_callback_pickler=None, output_layout=None,
                 exec_dynamic=None, experimental_exec_dynamic=None, stream_policy=None,
                 concurrency=None):
        if max_batch_size is not None and batch_size == -1:
            batch_size = max_batch_size
        self._batch_size = _check_int("batch_size", batch_size, 1, _INT32_MAX, allow_unset=True)
        if num_threads is None or num_threads == -1:
            num_threads = max(1, min(os.cpu_count() or 1, 4))
        self._num_threads = _check_int("num_threads", num_threads, 1, _INT32_MAX)
        if device_id is not None and device_id != -1:
            device_id = _check_int("device_id", device_id, 0, _INT32_MAX)
        self._device_id = None if device_id in (None, -1) else device_id
        if seed is None or seed == -1:
            seed = int.from_bytes(os.urandom(4), "little")
        self._seed = _check_int("seed", seed, 0, _INT64_MAX)
        if isinstance(prefetch_queue_depth, dict):
            prefetch_queue_depth = prefetch_queue_depth.get("cpu_size", 2)
        self._prefetch_queue_depth = _check_int("prefetch_queue_depth", prefetch_queue_depth, 1,
                                                _INT32_MAX)
        self._exec_async = bool(exec_async)
        self._exec_pipelined = bool(exec_pipelined)
        self._set_affinity = _affinity.check(set_affinity)
        self._py_num_workers = _check_int("py_num_workers", py_num_workers, 0, _INT32_MAX)
        if py_start_method not in ("fork", "spawn"):
            raise ValueError(f"Pipeline: py_start_method must be 'fork' or 'spawn', got "
                             f"{py_start_method!r}.")
        self._py_start_method = py_start_method
        self._py_callback_pickler = py_callback_pickler
        self._output_descs = (output_dtype, output_ndim, output_layout)
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

    def _adopt(self, node):
        """`node` as a node of this pipeline: one made outside any pipeline (DETACHED) is
        copied in, with the operators it depends on, once per pipeline."""
        if not isinstance(node.pipeline, _Detached):
            return node
        adopted = self.__dict__.setdefault("_adopted", {})
        rec = node.op
        if id(rec) not in adopted:
            copy = _OpRecord(rec.schema, rec.device, rec.args,
                             {k: self._adopt(n) for k, n in rec.tensor_args.items()},
                             [self._adopt(n) for n in rec.inputs], rec.num_outputs, rec.name,
                             rec.preserve)
            copy.location = rec.location
            self._add_op(copy)
            adopted[id(rec)] = (rec, copy)  # (rec kept alive: its id stays unique)
        return adopted[id(rec)][1].outputs[node.output]

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
        flat = list(outputs)
        for i, o in enumerate(flat):
            if isinstance(o, (list, tuple)):
                raise TypeError(
                    f"Pipeline output {i} is a {type(o).__name__} of {len(o)} values, not a "
                    "DataNode: return the outputs as a tuple (`return a, b`) or unpack the list "
                    "(`return tuple(outs)`, `set_outputs(*outs)`); as in DALI, a list is not "
                    "expanded into outputs.")
            if isinstance(o, DataNode):
                o = flat[i] = self._adopt(o)
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
        pool = WorkerPool(specs, self._py_num_workers, self._py_start_method,
                          self._py_callback_pickler)
        self._py_pool = pool
        for k, es in enumerate(parallel):
            es.pool, es.pool_index = pool, k

    def build(self):
        """Checks the graph and creates the executor. run() calls it when needed."""
        if self._built:
            return
        self._define()
        self._descs_per_output()  # wrong lengths fail here, not at the first run()
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
            enable_checkpointing=self._enable_checkpointing,
            cpu_affinity=_affinity.pipeline_cores(self._set_affinity, self._device_id))
        if self._checkpoint is not None:
            self._restore(executor, self._checkpoint)
        for es in self._external_sources:
            es.state.use_pool(executor)  # fed batches are copied into the pipeline's pool
        self._executor = executor
        self._built = True
        _warn_batch_past_epoch(executor, self._batch_size)

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
        ckpt["checksums"] = _checksums(ckpt)
        text = json.dumps(ckpt)
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text

    def _kept_ops(self):
        """The operators the outputs need (and preserve=True ones), in definition order (which
        is topological: a node exists only after its inputs), and the outputs."""
        needed = set()
        stack = [o.op for o in self._outputs] + [r for r in self._ops if r.preserve]
        while stack:
            r = stack.pop()
            if r.index in needed:
                continue
            needed.add(r.index)
            stack.extend(n.op for n in r.inputs)
            stack.extend(n.op for n in r.tensor_args.values())
        return [r for r in self._ops if r.index in needed], self._outputs

    def _serialize(self):
        """The graph as the executor takes it."""
        kept, _ = self._kept_ops()
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

    # ---- serialized pipelines
    def serialize(self, define_graph=None, filename=None):
        """The pipeline's definition as bytes (stoker's own versioned format): its parameters
        (batch_size, num_threads, device_id, seed, prefetch_queue_depth, exec_pipelined,
        exec_async, enable_checkpointing, output_dtype/ndim/layout) and every operator the
        outputs need, with its arguments. Also written to `filename` when given. Not the
        pipeline's state: take a checkpoint() for that.

        Python code cannot be serialized: an fn.external_source must have no source and a
        name (the deserialized pipeline is fed with ``feed_input(name, data)``), and
        python_function / numba_function raise ValueError. ``define_graph`` (deprecated, as in
        DALI) is used instead of the define_graph() method when given."""
        if define_graph is not None:
            if not callable(define_graph):
                raise TypeError("Pipeline.serialize: define_graph must be a callable (it is "
                                "deprecated, as in DALI)" + (
                                    "; to write a file, use serialize(filename=...)."
                                    if isinstance(define_graph, str) else "."))
            if self._outputs is not None:
                raise RuntimeError("Pipeline.serialize: define_graph was given, but this "
                                   "pipeline's outputs are already defined; leave it out.")
            if self._batch_size is None:
                raise ValueError("Pipeline: batch_size is required (a positive int).")
            with self:
                outs = define_graph()
            self.set_outputs(*(outs if isinstance(outs, (list, tuple)) else (outs,)))
        self._define()
        self._descs_per_output()
        from . import _serialize
        data = _serialize.dumps(self)
        if filename is not None:
            with open(filename, "wb") as f:
                f.write(data)
        return data

    @classmethod
    def deserialize(cls, serialized_pipeline=None, filename=None, **kwargs):
        """The pipeline that serialize() wrote, built; or one that DALI serialized (a Triton
        model.dali: its operators and arguments mapped to stoker's). Give exactly one of
        `serialized_pipeline` (the bytes) and `filename`. The serialized parameters are used
        unless keyword arguments (any of Pipeline()'s) override them: e.g. ``batch_size=``,
        ``num_threads=``, ``device_id=``, ``seed=``, ``prefetch_queue_depth=``, and
        ``enable_checkpointing=True, checkpoint=...`` to resume from a checkpoint (DALI ignores
        ``checkpoint`` here). External sources are fed with ``feed_input(name, data)``."""
        from . import _serialize
        if (serialized_pipeline is None) == (filename is None):
            raise ValueError(
                "Pipeline.deserialize: give exactly one of serialized_pipeline (the bytes "
                "Pipeline.serialize() returned) and filename (a file serialize(filename=...) "
                f"wrote); got {'both' if filename is not None else 'neither'}.")
        unknown = sorted(set(kwargs) - set(_PIPELINE_ARGS))
        if unknown:
            raise TypeError(f"Pipeline.deserialize: unknown pipeline argument(s): "
                            f"{', '.join(unknown)}; it takes Pipeline()'s keywords.")
        if filename is not None:
            with open(filename, "rb") as f:
                serialized_pipeline = f.read()
        doc = _serialize.loads(serialized_pipeline)
        params = _serialize.pipeline_params(doc)
        if kwargs.get("max_batch_size") is not None and kwargs.get("batch_size") in (None, -1):
            params.pop("batch_size")  # DALI's newer name for it overrides the serialized one
        params.update(kwargs)
        pipe = cls.__new__(cls)
        Pipeline.__init__(pipe, **params)
        _serialize.restore_graph(pipe, doc)
        pipe.build()
        return pipe

    # ---- running
    def run(self):
        """The next batch of every output, as a tuple of TensorListCPU. With external sources:
        raises StopIteration at the end of their epoch (reset() starts the next one), and
        re-raises what a source raised."""
        self.build()
        if not self._external_sources:
            return self._check_outputs(self._executor.run())
        self.iter_setup()
        it = self._iteration
        self._iteration += 1
        for es in self._external_sources:
            es.requested(it)
        try:
            out = self._executor_run(it)
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
        if isinstance(out, TimeoutError):
            self._iteration = it  # its batch is still to come: the next run() waits for it again
            raise out
        for es in self._external_sources:
            es.delivered(it)
        return self._check_outputs(out)

    def _executor_run(self, it):
        """The executor's next batch (iteration `it`), or the TimeoutError of an external
        source whose call for it has outlasted its timeout."""
        timed = [es for es in self._external_sources if es.timeout is not None]
        if not timed:
            return self._executor.run()
        while True:
            out = self._executor.run(0.1)
            if out is not None:
                return out
            for es in timed:
                err = es.timeout_error(it)
                if err is not None:
                    return err

    def _descs_per_output(self):
        """output_dtype, output_ndim, output_layout: one list per kind, one entry per output."""
        n, descs = len(self._outputs), []
        for what, v in zip(("output_dtype", "output_ndim", "output_layout"),
                           self._output_descs):
            v = list(v) if isinstance(v, (list, tuple)) else [v] * n
            if len(v) != n:
                raise ValueError(f"Pipeline: {what} has {len(v)} entries, but the pipeline has "
                                 f"{n} outputs; give one per output (None: any), or one value "
                                 "for all.")
            descs.append(v)
        descs[0] = [None if t is None else _types.DALIDataType(t) for t in descs[0]]
        return descs

    def _check_outputs(self, out):
        if self._output_descs == (None, None, None):
            return out
        for i, (o, t, nd, lay) in enumerate(zip(out, *self._descs_per_output())):
            got_nd = len(o.shape()[0]) if len(o) else None
            if t is not None and o.dtype != t:
                raise TypeError(f"Pipeline: output {i} has dtype {o.dtype.name}, but "
                                f"output_dtype says {t.name}.")
            if nd is not None and got_nd is not None and got_nd != nd:
                raise ValueError(f"Pipeline: output {i} has {got_nd} dimensions, but "
                                 f"output_ndim says {nd}.")
            if lay is not None and lay != "" and o.layout() != lay:
                raise ValueError(f"Pipeline: output {i} has layout {o.layout()!r}, but "
                                 f"output_layout says {lay!r}.")
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
                    isinstance(data_node, DataNode) and es.named_by(data_node)):
                es.feed(data, layout, self._batch_size)
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
        """Bytes allocated, reserved and their peaks, and the ``cap`` (0: none; the host pool's
        is 80% of RAM by default, see ``set_host_memory_cap``), per memory kind (``host``; with
        a GPU, ``device`` and ``pinned``). The GPU kinds also give ``resource_held``: what stoker's
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
        """Caps the host memory pool; an allocation past it raises MemoryError naming the
        operator. The default cap is 80% of the RAM this process may use (the machine's, or
        its container's limit where lower), so that an oversized batch fails with a message
        instead of swapping; the environment variable ``STOKER_HOST_MEMORY_CAP=<bytes>`` sets
        another default; 0 means no cap. ``memory_stats()["host"]["cap"]`` reports it."""
        self.build()
        self._executor.set_host_memory_cap(_check_int("nbytes", nbytes, 0, 2**64 - 1))

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
        for r in getattr(self, "_ops", ()):
            r.outputs = []  # an operator and its nodes refer to each other: free them now
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
_CHECKPOINT_VERSION = 2  # 2: with "checksums"; version 1 (without) is still read
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


def _checksums(ckpt):
    """A checksum of each field of a checkpoint and of each entry of its lists, so that a field
    edited or damaged after checkpoint() is named when the checkpoint is restored: the reader
    states check themselves, but the iteration, the seeds and the external sources' positions
    would otherwise be taken as they are and give other batches. Fields added later by others
    (the framework iterators' "iterator" section) are theirs to check."""
    def digest(value):
        canonical = json.dumps(value, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    sums = {}
    for key, value in ckpt.items():
        if key in ("checksums", "iterator"):
            continue
        if isinstance(value, list):
            for i, entry in enumerate(value):
                sums[f"{key}[{i}]"] = digest(entry)
            sums[key] = digest(len(value))
        else:
            sums[key] = digest(value)
    return sums


def _check_checksums(ckpt):
    sums = ckpt.get("checksums")
    if not isinstance(sums, dict):
        raise ValueError("Pipeline: the checkpoint is damaged (its 'checksums' field is missing or "
                         "not a dict); pass the string Pipeline.checkpoint() returned, unchanged.")
    want = _checksums(ckpt)
    changed = [k for k in list(want) + [k for k in sums if k not in want]
               if want.get(k) != sums.get(k)]
    if not changed:
        return

    def describe(key):
        name, _, index = key.partition("[")
        entries = ckpt.get(name)
        if not index[:-1].isdigit():
            return f"'{key}'"
        i = int(index[:-1])
        if not isinstance(entries, list) or i >= len(entries):
            return f"'{key}' (which is missing)"
        entry = entries[i] if isinstance(entries[i], dict) else {}
        what = " ".join(str(x) for x in (entry.get("op"), repr(entry.get("name")) if entry.get(
            "name") else None) if x)
        return f"'{key}'" + (f" ({what})" if what else "")

    raise ValueError(f"Pipeline: the checkpoint is damaged or was edited: "
                     f"{', '.join(describe(k) for k in changed)} "
                     f"{'does' if len(changed) == 1 else 'do'} not match the checksum written "
                     "with it. Pass the string Pipeline.checkpoint() returned, unchanged (take a "
                     "new checkpoint to resume from another point).")


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
    if type(ckpt.get("version")) is not int or ckpt["version"] not in (1, _CHECKPOINT_VERSION):
        raise ValueError(f"Pipeline: the checkpoint has version {ckpt.get('version')!r}; this "
                         f"stoker reads versions 1 to {_CHECKPOINT_VERSION}. Take the checkpoint "
                         "again with this version of stoker.")
    if ckpt["version"] >= 2:
        _check_checksums(ckpt)
    ok = (isinstance(ckpt.get("seed"), int) and 0 <= ckpt["seed"] <= _INT64_MAX and
          isinstance(ckpt.get("iteration"), int) and
          isinstance(ckpt.get("operators"), list) and
          isinstance(ckpt.get("external_sources"), list) and
          all(isinstance(e, dict) and isinstance(e.get("epoch_idx"), int) and
              isinstance(e.get("iteration"), int) for e in ckpt["external_sources"]))
    if not ok:
        raise ValueError("Pipeline: the checkpoint is damaged (fields are missing or of the wrong "
                         "type); pass the string Pipeline.checkpoint() returned, unchanged.")
    return ckpt


def _check_int(name, value, minimum, maximum, allow_unset=False):
    if allow_unset and value in (None, -1):
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Pipeline: {name} must be an int, got {type(value).__name__} {value!r}.")
    value = int(value)  # NumPy integers too, as DALI takes them
    if value < minimum:
        raise ValueError(f"Pipeline: {name} must be >= {minimum}, got {value}.")
    if value > maximum:  # the engine's integer types (as DALI's: int32, and int64 for the seed)
        raise ValueError(f"Pipeline: {name} must be <= {maximum}, got {value}.")
    return value


def pipeline_def(fn=None, **pipeline_kwargs):
    """Decorator: turns a function that defines a graph with ``fn.*`` into one that returns a
    Pipeline. Pipeline arguments (batch_size, num_threads, device_id, seed, ...) can be given to
    the decorator and overridden when calling the function; the function's own arguments pass
    through (a parameter named like a pipeline argument receives it too).

    ``enable_conditionals=True`` (here or when calling) lets ``if``, ``and``, ``or`` and ``not``
    take DataNodes, per sample, as in DALI (see ``stoker._conditionals``)."""
    enable_conditionals = pipeline_kwargs.pop("enable_conditionals", False)
    unknown = set(pipeline_kwargs) - set(_PIPELINE_ARGS)
    if unknown:
        raise TypeError(f"pipeline_def: unknown pipeline argument(s): {', '.join(sorted(unknown))}.")

    def decorator(func):
        params = inspect.signature(func).parameters
        takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params.values())

        if getattr(func, "__stoker_do_not_convert__", False):
            raise ValueError("Pipeline definition cannot be marked with @do_not_convert.")

        @functools.wraps(func)
        def create(*args, **kwargs):
            conditionals = kwargs.get("enable_conditionals", enable_conditionals)
            if "enable_conditionals" not in params and not takes_kwargs:
                kwargs.pop("enable_conditionals", None)
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
            body = func
            if conditionals:
                from . import _conditionals
                body = _conditionals.convert(func)
                pipe._condition_stack = _conditionals.ConditionStack()
            with pipe:
                outs = body(*args, **kwargs)
                if outs is None:
                    raise ValueError(f"@pipeline_def function {func.__name__} returned nothing; "
                                     "return the pipeline's outputs.")
                if not isinstance(outs, tuple):  # a list is one (wrong) output, as in DALI
                    outs = (outs,)
                if conditionals:  # (an output made inside a branch would be part of a batch)
                    pipe._condition_stack.check_outputs(outs)
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
