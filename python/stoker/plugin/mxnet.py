"""MXNet iterators over stoker pipelines, under stoker's and DALI 1.x's names.

    from stoker.plugin.mxnet import StokerClassificationIterator, LastBatchPolicy
    train = StokerClassificationIterator(pipe, reader_name="Reader", auto_reset=True,
                                         last_batch_policy=LastBatchPolicy.PARTIAL)
    module.fit(train, num_epoch=10)         # provide_data / provide_label as DataIter has them

``StokerGenericIterator`` / ``StokerClassificationIterator`` (DALI's DALIGenericIterator /
DALIClassificationIterator) are ``mx.io.DataIter``s: each ``next()`` returns a list with one
``mx.io.DataBatch`` per pipeline, outputs tagged DATA_TAG in ``.data`` and LABEL_TAG in
``.label``. As in DALI, PARTIAL does not shorten the last batch: it stays full and ``.pad``
says how many of its samples, at the end, are not part of the epoch.
``StokerGluonIterator`` (DALIGluonIterator) returns, per pipeline, a list of the outputs:
an NDArray for a DENSE_TAG output, a list of per-sample NDArrays for a SPARSE_TAG one; PARTIAL
shortens the last batch.

NDArrays share memory with the pipeline's batch through DLPack (``mx.nd.from_dlpack``): no
copy, and valid for as long as they are held (DALI copies into NDArrays valid until the next
batch). Copies: bool outputs (DLPack 0.6 carries them as uint8) and equal-shaped samples
scattered in memory. MXNet 1.9 has no int16, uint16, uint32 or uint64 NDArrays: such outputs
raise TypeError (cast them in the pipeline).

MXNet 1.9 needs NumPy < 1.24; ``scripts/test_mxnet.sh`` runs the tests in a virtual
environment of their own.
"""
import mxnet as mx
import numpy as np

from ..types import DALIDataType
from .base_iterator import LastBatchPolicy, StokerBaseIterator, resolve_shard

__all__ = ["StokerGenericIterator", "StokerClassificationIterator", "StokerGluonIterator",
           "DALIGenericIterator", "DALIClassificationIterator", "DALIGluonIterator",
           "LastBatchPolicy", "resolve_shard", "to_mxnet"]

_KDL_CUDA = 2
# What MXNet 1.9's NDArray takes through DLPack; bool goes as uint8 and is converted.
_MX_TYPES = {DALIDataType.FLOAT, DALIDataType.FLOAT16, DALIDataType.FLOAT64, DALIDataType.UINT8,
             DALIDataType.INT8, DALIDataType.INT32, DALIDataType.INT64, DALIDataType.BOOL}


def _check_dtype(batch, what):
    if batch.dtype not in _MX_TYPES:
        raise TypeError(f"{what}: the batch is {str(batch.dtype).split('.')[-1].lower()}, which "
                        "MXNet 1.9's NDArray does not support (it takes float16/32/64, uint8, "
                        "int8, int32, int64 and bool). Cast it in the pipeline, e.g. "
                        "fn.cast(x, dtype=types.INT32).")


def _context_of(obj):
    dev_type, dev_id = obj.__dlpack_device__()
    return mx.gpu(dev_id) if dev_type == _KDL_CUDA else mx.cpu(0)


def _dlpack_to_mx(obj):
    if isinstance(obj, np.ndarray):
        # A CPU sample is a NumPy view. Not through NumPy's own DLPack export: before NumPy 1.25
        # its deleter drops a reference without taking the GIL, and MXNet frees NDArrays with
        # the GIL released (the process aborts). from_numpy's deleter takes the GIL.
        return mx.nd.from_numpy(np.ascontiguousarray(obj).view(np.ndarray), zero_copy=True)
    # MXNet does not say which stream it reads on; with stream=None stoker makes the legacy
    # default stream wait for the batch, and MXNet's own GPU streams synchronise with it.
    return mx.nd.from_dlpack(obj.__dlpack__())


def _fix_bool(arr, batch):
    return arr.astype(np.bool_) if batch.dtype == DALIDataType.BOOL else arr


def to_mxnet(batch, keep=None, name=None):
    """A TensorList as an ``mx.nd.NDArray`` (N, ...), zero-copy through DLPack (one copy for
    bool, and for equal-shaped samples scattered in memory); a list of per-sample NDArrays
    (each zero-copy) when the samples' shapes differ. ``keep``: the first ``keep`` samples.
    ``name``: the output's name, for error messages."""
    what = "to_mxnet" if name is None else f"stoker.plugin.mxnet: output {name!r}"
    _check_dtype(batch, what)
    n = len(batch)
    keep = n if keep is None else keep
    if batch.is_dense_tensor():
        arr = _fix_bool(_dlpack_to_mx(batch), batch)
        return arr if keep == n else arr[:keep]
    shapes = [tuple(s) for s in batch.shape()]
    if any(s != shapes[0] for s in shapes):
        return [_fix_bool(_dlpack_to_mx(batch[i]), batch) for i in range(keep)]
    on_gpu = batch.__dlpack_device__()[0] == _KDL_CUDA
    host = (batch.as_cpu() if on_gpu else batch).as_array()[:keep]
    return mx.nd.array(host, ctx=_context_of(batch), dtype=host.dtype)


def _ragged_error(what, batch, fix):
    shapes = [tuple(s) for s in batch.shape()]
    return ValueError(f"{what}: the samples have different shapes ({shapes[:4]}"
                      f"{'...' if len(shapes) > 4 else ''}), which one NDArray cannot hold. "
                      f"{fix}")


class _MXNetIteratorBase(StokerBaseIterator, mx.io.DataIter):
    """StokerBaseIterator's epochs behind MXNet's DataIter interface (next(), reset(),
    iteration); StokerBaseIterator's methods come first."""

    def __init__(self, pipelines, output_map, **kwargs):
        mx.io.DataIter.__init__(self)
        StokerBaseIterator.__init__(self, pipelines, output_map, **kwargs)


class StokerGenericIterator(_MXNetIteratorBase):
    """Iterator over one or more stoker pipelines giving ``mx.io.DataBatch``es (DALI's
    ``nvidia.dali.plugin.mxnet.DALIGenericIterator``).

    Args:
        pipelines: a Pipeline, or a list with one per GPU (or per shard on the CPU).
        output_map (list of (str, tag)): per pipeline output, its name and
            ``DATA_TAG`` ("data") or ``LABEL_TAG`` ("label"): where it goes in the DataBatch.
        size, reader_name, auto_reset, fill_last_batch, last_batch_padded, last_batch_policy,
        prepare_first_batch: as ``stoker.plugin.pytorch.StokerGenericIterator``; except that
            PARTIAL keeps the last batch whole and sets its ``pad`` (DALI's MXNet behaviour).
        data_layout (str): the layout ``provide_data`` reports ("NCHW" by default, as DALI).
        squeeze_labels (bool): drop a last axis of size 1 from labels ((N, 1) -> (N,)).
        dynamic_shape: ignored (shapes may change from batch to batch here).

    ``provide_data`` / ``provide_label``: ``mx.io.DataDesc``s (name, shape with the batch axis
    over all pipelines, dtype, layout) from the first batch, as ``Module.fit`` wants them.
    """
    DATA_TAG = "data"
    LABEL_TAG = "label"

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, data_layout="NCHW",
                 fill_last_batch=None, auto_reset=False, squeeze_labels=True,
                 dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        name = type(self).__name__
        if isinstance(output_map, str):
            raise TypeError(f"{name}: output_map must be a list of (name, tag) pairs, e.g. "
                            f"[('data', {name}.DATA_TAG), ('label', {name}.LABEL_TAG)], got the "
                            f"string {output_map!r}.")
        output_map = list(output_map)
        for item in output_map:
            if (not isinstance(item, (tuple, list)) or len(item) != 2 or
                    not isinstance(item[0], str)):
                raise TypeError(f"{name}: each entry of output_map must be a (name, tag) pair, "
                                f"e.g. ('data', {name}.DATA_TAG); got {item!r}.")
            if item[1] not in (self.DATA_TAG, self.LABEL_TAG):
                raise ValueError(f"{name}: output {item[0]!r} has the tag {item[1]!r}; the tag "
                                 f"must be DATA_TAG ({self.DATA_TAG!r}) or LABEL_TAG "
                                 f"({self.LABEL_TAG!r}).")
        if not isinstance(data_layout, str):
            raise TypeError(f"{name}: data_layout must be a string such as 'NCHW' or 'NHWC', "
                            f"got {data_layout!r}.")
        self._pairs = [tuple(item) for item in output_map]
        self._data_layout = data_layout
        self._squeeze_labels = bool(squeeze_labels)
        self._descriptors = None
        super().__init__(pipelines, [n for n, _ in output_map], size=size,
                         reader_name=reader_name, auto_reset=auto_reset,
                         fill_last_batch=fill_last_batch, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)
        # DALI's (name, tag) pairs, as DALI keeps them.
        self.output_map = self._pairs

    def _next_batch(self):
        # Every pipeline's batch stays whole; `pad` counts the samples past the epoch.
        outputs = self._run_pipelines()
        self._advance()
        keep = self._samples_to_keep()
        batches = []
        for outs, n in zip(outputs, keep):
            data, label = [], []
            for (name, tag), b in zip(self._pairs, outs):
                what = f"{type(self).__name__}: output {name!r}"
                if not b.is_dense_tensor() and len({tuple(s) for s in b.shape()}) > 1:
                    raise _ragged_error(what, b, "A DataBatch needs one NDArray per output: make "
                                        "the shapes equal in the pipeline (fn.resize, fn.crop, "
                                        "fn.pad), or use StokerGluonIterator with "
                                        "output_types=[..., SPARSE_TAG, ...].")
                arr = to_mxnet(b, name=name)
                if tag == self.LABEL_TAG:
                    if self._squeeze_labels and arr.ndim > 1 and arr.shape[-1] == 1:
                        arr = arr.reshape(arr.shape[:-1])
                    label.append(arr)
                else:
                    data.append(arr)
            batches.append(mx.io.DataBatch(data=data, label=label, pad=self.batch_size - n))
        if self._descriptors is None:
            self._descriptors = self._describe(batches[0])
        return batches

    def _describe(self, batch):
        npipes = self._num_gpus
        data_names = [n for n, t in self._pairs if t == self.DATA_TAG]
        label_names = [n for n, t in self._pairs if t == self.LABEL_TAG]
        data = [mx.io.DataDesc(n, (a.shape[0] * npipes,) + a.shape[1:], a.dtype,
                               layout=self._data_layout) for n, a in zip(data_names, batch.data)]
        label = [mx.io.DataDesc(n, (a.shape[0] * npipes,) + a.shape[1:], a.dtype)
                 for n, a in zip(label_names, batch.label)]
        return data, label

    def _ensure_descriptors(self):
        if self._descriptors is None:
            # prepare_first_batch=False: read the first batch now (as DALI does), keep it for
            # the first next(), and take the checkpoint from before it.
            before = self._checkpoint_now() if self._checkpointing_enabled() else None
            try:
                self._first_batch = self._next_batch()
            except StopIteration:
                raise ValueError(f"{type(self).__name__}: provide_data needs a first batch, but "
                                 "the pipeline gave no data.") from None
            self._first_batch_checkpoint = before
        return self._descriptors

    @property
    def provide_data(self):
        """The data outputs' ``mx.io.DataDesc``s (for ``Module.bind`` / ``Module.fit``)."""
        return self._ensure_descriptors()[0]

    @property
    def provide_label(self):
        """The label outputs' ``mx.io.DataDesc``s."""
        return self._ensure_descriptors()[1]


class StokerClassificationIterator(StokerGenericIterator):
    """A StokerGenericIterator for pipelines returning (data, label): the DataBatch holds the
    data as ``data_name`` and the labels as ``label_name`` ("softmax_label", the name
    ``mx.sym.SoftmaxOutput`` expects, as in DALI)."""

    def __init__(self, pipelines, size=-1, reader_name=None, data_name="data",
                 label_name="softmax_label", data_layout="NCHW", fill_last_batch=None,
                 auto_reset=False, squeeze_labels=True, dynamic_shape=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True):
        super().__init__(pipelines, [(data_name, self.DATA_TAG), (label_name, self.LABEL_TAG)],
                         size=size, reader_name=reader_name, data_layout=data_layout,
                         fill_last_batch=fill_last_batch, auto_reset=auto_reset,
                         squeeze_labels=squeeze_labels, dynamic_shape=dynamic_shape,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)


class StokerGluonIterator(_MXNetIteratorBase):
    """Iterator for Gluon (DALI's ``DALIGluonIterator``): each ``next()`` returns one list per
    pipeline holding its outputs in order: an NDArray (N, ...) for a DENSE_TAG output, a list
    of per-sample NDArrays for a SPARSE_TAG one. PARTIAL shortens the last batch.

    Args: pipelines, size, reader_name, auto_reset, fill_last_batch, last_batch_padded,
    last_batch_policy, prepare_first_batch as ``StokerGenericIterator``, and
        output_types (list of DENSE_TAG / SPARSE_TAG): one per pipeline output; None: all dense.
    """
    DENSE_TAG = "dense"
    SPARSE_TAG = "sparse"

    def __init__(self, pipelines, size=-1, reader_name=None, output_types=None,
                 auto_reset=False, fill_last_batch=None, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        name = type(self).__name__
        if output_types is not None:
            if isinstance(output_types, str):
                raise TypeError(f"{name}: output_types must be a list with one tag per output, "
                                f"e.g. [{name}.DENSE_TAG, {name}.SPARSE_TAG], got the string "
                                f"{output_types!r}.")
            output_types = list(output_types)
            bad = [t for t in output_types if t not in (self.DENSE_TAG, self.SPARSE_TAG)]
            if bad:
                raise ValueError(f"{name}: output_types may hold only DENSE_TAG "
                                 f"({self.DENSE_TAG!r}) and SPARSE_TAG ({self.SPARSE_TAG!r}), "
                                 f"got {bad[0]!r}.")
        first = pipelines[0] if isinstance(pipelines, (list, tuple)) and pipelines else pipelines
        n_outputs = _num_outputs(first, name)
        if output_types is not None and len(output_types) != n_outputs:
            raise ValueError(f"{name}: output_types has {len(output_types)} entries, but the "
                             f"pipeline has {n_outputs} outputs; give one tag per output.")
        self._output_types = output_types or [self.DENSE_TAG] * n_outputs
        super().__init__(pipelines, [f"output{j}" for j in range(n_outputs)], size=size,
                         reader_name=reader_name, auto_reset=auto_reset,
                         fill_last_batch=fill_last_batch, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _convert_output(self, output_index, batch, pipe_index, keep):
        what = f"{type(self).__name__}: output {output_index}"
        if self._output_types[output_index] == self.DENSE_TAG:
            if not batch.is_dense_tensor() and len({tuple(s) for s in batch.shape()}) > 1:
                raise _ragged_error(what, batch, "Mark the output SPARSE_TAG in output_types to "
                                    "get a list of per-sample NDArrays, or make the shapes equal "
                                    "in the pipeline (fn.resize, fn.crop, fn.pad).")
            return to_mxnet(batch, keep, name=output_index)
        _check_dtype(batch, what)
        return [_fix_bool(_dlpack_to_mx(batch[i]), batch) for i in range(keep)]

    def _assemble(self, per_pipe):
        return [list(d.values()) for d in per_pipe]


def _num_outputs(pipe, name):
    if pipe is None:
        raise ValueError(f"{name}: pipelines is required: a Pipeline or a list of them.")
    pipe.build()
    outputs = getattr(pipe, "_outputs", None)
    if outputs is None:
        raise TypeError(f"{name}: expected a stoker Pipeline, got {type(pipe).__name__}.")
    return len(outputs)


# DALI 1.x's names, so that `from nvidia.dali.plugin.mxnet import ...` code moves by one import.
DALIGenericIterator = StokerGenericIterator
DALIClassificationIterator = StokerClassificationIterator
DALIGluonIterator = StokerGluonIterator
