"""PaddlePaddle iterators over stoker pipelines, under stoker's and DALI's names.

    from stoker.plugin.paddle import StokerClassificationIterator, LastBatchPolicy
    loader = StokerClassificationIterator(pipe, reader_name="Reader",
                                          last_batch_policy=LastBatchPolicy.PARTIAL,
                                          auto_reset=True)
    for batch in loader:
        images, labels = batch[0]["data"], batch[0]["label"]   # paddle.Tensor

Dense outputs are ``paddle.Tensor``s that share memory with the pipeline's batch through
DLPack (``paddle.utils.dlpack.from_dlpack``): no copy, and, since stoker's batches are
reference-counted, valid for as long as you hold them (DALI's are valid until the next batch).

Ragged outputs follow DALI: an output whose samples differ in shape needs a LoD level in
``output_map`` (``("name", 1)``) and then comes out as a LoD tensor (Paddle's
``DenseTensor`` with ``lod()``), the samples joined along their first axis (one copy). Without
a LoD level such an output raises ValueError, as DALI refuses it too.
"""
import math

import numpy as np
import paddle
import paddle.utils.dlpack

from ..types import DALIDataType
from .base_iterator import LastBatchPolicy, StokerBaseIterator, resolve_shard

__all__ = ["StokerGenericIterator", "StokerClassificationIterator", "DALIGenericIterator",
           "DALIClassificationIterator", "LastBatchPolicy", "resolve_shard", "to_paddle"]

_KDL_CUDA = 2


def _check_dtype(batch, what):
    if batch.dtype == DALIDataType.UINT16:
        # Paddle reads DLPack's uint16 as bfloat16 (its own uint16 *is* bfloat16), so the values
        # would be silently wrong.
        raise TypeError(f"{what}: the batch is uint16, which Paddle has no type for (it would read "
                        "the bits as bfloat16). Cast it in the pipeline, e.g. "
                        "fn.cast(x, dtype=types.INT32).")


def _dlpack_to_paddle(obj):
    """One batch or sample as one paddle.Tensor through DLPack, ordered on Paddle's stream."""
    dev_type, dev_id = obj.__dlpack_device__()
    if dev_type == _KDL_CUDA:
        # GPU batches: hand the producer Paddle's current stream of that device, so that stoker
        # makes it wait for the batch (no device synchronisation). Needs Paddle's GPU build;
        # CI has none.
        stream = paddle.device.cuda.current_stream(dev_id).cuda_stream
        # DLPack's convention: 1 stands for the legacy default stream, never 0.
        return paddle.utils.dlpack.from_dlpack(obj.__dlpack__(stream=stream or 1))
    return paddle.utils.dlpack.from_dlpack(obj.__dlpack__())


def _fix_bool(t, batch):
    # DLPack 0.6 has no bool code: stoker exports bool as uint8, which Paddle views as bool.
    return t.view(paddle.bool) if batch.dtype == DALIDataType.BOOL else t


def to_paddle(batch, keep=None, lod_level=0, name=None):
    """A TensorList as Paddle data.

    ``lod_level=0``: one ``paddle.Tensor`` (N, ...), zero-copy through DLPack (one copy when the
    samples have one shape but are scattered in memory). Samples of different shapes raise
    ValueError. ``lod_level=k > 0`` (DALI's ``(name, k)`` in output_map): a LoD tensor
    (``paddle.base.core.DenseTensor``) holding the samples joined along their first ``k``
    axes, with the sequence lengths of each level (one copy). ``keep``: only the first ``keep``
    samples. ``name``: the output's name, for error messages."""
    what = "to_paddle" if name is None else f"stoker.plugin.paddle: output {name!r}"
    _check_dtype(batch, what)
    n = len(batch)
    keep = n if keep is None else keep
    if isinstance(lod_level, bool) or not isinstance(lod_level, int) or lod_level < 0:
        raise ValueError(f"{what}: lod_level must be an int >= 0, got {lod_level!r}.")
    if lod_level > 0:
        return _to_lod_tensor(batch, keep, lod_level, what)
    if batch.is_dense_tensor():
        if batch.__dlpack_device__()[0] != _KDL_CUDA:
            # Through the NumPy view of the buffer (no copy): it carries bool as bool, and a
            # PARTIAL batch is cut there, since Paddle cannot slice every dtype (uint32).
            return paddle.utils.dlpack.from_dlpack(batch.as_array()[:keep])
        t = _fix_bool(_dlpack_to_paddle(batch), batch)
        return t if keep == n else t[:keep]
    shapes = [tuple(s) for s in batch.shape()]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(
            f"{what}: the samples have different shapes ({shapes[:4]}{'...' if n > 4 else ''}), "
            "which one dense Paddle tensor cannot hold. Give the output a LoD level in "
            "output_map, e.g. (\"name\", 1), to get a LoD tensor as DALI does, or make the "
            "shapes equal in the pipeline (fn.resize, fn.crop, fn.pad).")
    # Equal shapes scattered in memory: one copy (through the host for a GPU batch).
    arr = (batch.as_cpu() if batch.__dlpack_device__()[0] == _KDL_CUDA else batch).as_array()
    t = paddle.to_tensor(arr[:keep], place=_place_of(batch))
    return t


def _place_of(batch):
    dev_type, dev_id = batch.__dlpack_device__()
    return paddle.CUDAPlace(dev_id) if dev_type == _KDL_CUDA else paddle.CPUPlace()


def _to_lod_tensor(batch, keep, lod_level, what):
    on_gpu = batch.__dlpack_device__()[0] == _KDL_CUDA
    host = batch.as_cpu() if on_gpu else batch
    samples = [np.asarray(host.at(i)) for i in range(keep)]
    for i, s in enumerate(samples):
        if s.ndim < lod_level:
            raise ValueError(f"{what}: LoD level {lod_level} needs samples with at least "
                             f"{lod_level} dimensions, but sample {i} has shape {s.shape}. Give "
                             "a lower LoD level in output_map.")
    inner = {s.shape[lod_level:] for s in samples}
    if len(inner) > 1:
        raise ValueError(f"{what}: with LoD level {lod_level} the samples may differ only in "
                         f"their first {lod_level} dimension(s), but their remaining shapes "
                         f"differ: {sorted(inner)[:4]}. Give a higher LoD level in output_map, "
                         "or make those dimensions equal in the pipeline.")
    # Level 1 holds each sample's length; level j + 1 the length along axis j of every row of
    # the level above (DALI's recursive lengths).
    lengths = [[s.shape[0] for s in samples]]
    for j in range(1, lod_level):
        lengths.append([s.shape[j] for s in samples for _ in range(math.prod(s.shape[:j]))])
    if samples:
        data = np.concatenate([s.reshape((-1,) + s.shape[lod_level:]) for s in samples])
    else:  # a PARTIAL step that keeps none of this pipeline's samples
        first = np.asarray(host.at(0))
        data = np.empty((0,) + first.shape[lod_level:], dtype=first.dtype)
    data = np.ascontiguousarray(data)
    if on_gpu:
        t = paddle.framework.core.DenseTensor()
        t.set(data, _place_of(batch))
    else:
        t = paddle.framework.core.from_dlpack(data.__dlpack__())
    t.set_recursive_sequence_lengths(lengths)
    return t


def _parse_output_map(output_map, name):
    if isinstance(output_map, str):
        raise TypeError(f"{name}: output_map must be a list of names (or of (name, lod_level) "
                        f"pairs), e.g. ['data', 'label'], got the string {output_map!r}.")
    names, lods = [], []
    for item in output_map:
        if isinstance(item, str):
            names.append(item)
            lods.append(0)
            continue
        if (not isinstance(item, (tuple, list)) or len(item) != 2 or
                not isinstance(item[0], str)):
            raise TypeError(f"{name}: each entry of output_map must be a name or a (name, "
                            f"lod_level) pair, e.g. ('data', 1); got {item!r}.")
        lod = item[1]
        if isinstance(lod, bool) or not isinstance(lod, int) or lod < 0:
            raise ValueError(f"{name}: the LoD level of output {item[0]!r} must be an int >= 0 "
                             f"(0: a dense tensor), got {lod!r}.")
        names.append(item[0])
        lods.append(lod)
    return names, lods


class StokerGenericIterator(StokerBaseIterator):
    """Iterator over one or more stoker pipelines giving Paddle tensors (DALI's
    ``nvidia.dali.plugin.paddle.DALIGenericIterator``).

    Each ``next()`` returns a list with one dict per pipeline, mapping the names of
    ``output_map`` to that pipeline's outputs: a ``paddle.Tensor`` (zero-copy through DLPack)
    for a name, a LoD tensor for a ``(name, lod_level)`` pair with ``lod_level > 0``.

    Args: as ``stoker.plugin.pytorch.StokerGenericIterator`` (pipelines, output_map, size,
    reader_name, auto_reset, fill_last_batch, dynamic_shape (ignored), last_batch_padded,
    last_batch_policy, prepare_first_batch), except that an entry of ``output_map`` may be a
    ``(name, lod_level)`` pair. PARTIAL trims the last batch (a view of the pipeline's buffer).
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        names, self._lod_levels = _parse_output_map(output_map, type(self).__name__)
        super().__init__(pipelines, names, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _convert_output(self, output_index, batch, pipe_index, keep):
        return to_paddle(batch, keep, self._lod_levels[output_index],
                         name=self.output_map[output_index])


class StokerClassificationIterator(StokerGenericIterator):
    """A StokerGenericIterator whose pipelines return (data, label): each ``next()`` returns
    ``[{"data": images, "label": labels}, ...]``, one dict per pipeline."""

    def __init__(self, pipelines, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        super().__init__(pipelines, ["data", "label"], size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         dynamic_shape=dynamic_shape, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)


# DALI's names, so that `from nvidia.dali.plugin.paddle import ...` code moves by one import.
DALIGenericIterator = StokerGenericIterator
DALIClassificationIterator = StokerClassificationIterator
