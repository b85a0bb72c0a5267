"""PyTorch iterators over stoker pipelines, under stoker's and DALI's names.

    from stoker.plugin.pytorch import StokerClassificationIterator, LastBatchPolicy
    loader = StokerClassificationIterator(pipe, reader_name="Reader",
                                          last_batch_policy=LastBatchPolicy.PARTIAL,
                                          auto_reset=True)
    for batch in loader:
        images, labels = batch[0]["data"], batch[0]["label"]

Outputs are torch tensors that share memory with the pipeline's batch through DLPack: no copy.
stoker's batches are reference-counted, so a tensor stays valid for as long as you hold it
(DALI's tensors are valid only until the next batch; holding on to them here is safe).
A batch whose samples have different shapes (decoded images before a resize) comes out as a
list of tensors, one per sample, each also sharing the pipeline's memory.
"""
import torch
import torch.utils.dlpack

from .. import _C
from .. import types as _types
from ..types import DALIDataType
from .base_iterator import LastBatchPolicy, StokerBaseIterator, resolve_shard

__all__ = ["StokerGenericIterator", "StokerClassificationIterator", "StokerRaggedIterator",
           "DALIGenericIterator", "DALIClassificationIterator", "DALIRaggedIterator",
           "LastBatchPolicy", "resolve_shard", "to_torch", "feed_ndarray"]

_KDL_CUDA = 2


def _dlpack_to_torch(batch):
    """One batch as one torch tensor through DLPack, ordered on torch's current stream."""
    dev_type, dev_id = batch.__dlpack_device__()
    if dev_type == _KDL_CUDA:
        # GPU batches (a later version of stoker): hand the producer torch's current stream of
        # that device, so that stoker makes the stream wait for the batch's work before torch
        # uses it (no device synchronisation). Not exercised by CI, which has no GPU.
        with torch.cuda.device(dev_id):
            stream = torch.cuda.current_stream()
            # DLPack's convention: 1 stands for the legacy default stream, never 0.
            ptr = stream.cuda_stream or 1
            return torch.utils.dlpack.from_dlpack(batch.__dlpack__(stream=ptr))
    return torch.from_dlpack(batch)


def to_torch(batch, keep=None):
    """A TensorList as torch: one tensor (N, ...) when all samples have one shape, else a list
    of per-sample tensors (CPU batches only: a GPU batch must have equal shapes). Zero-copy,
    except for a batch of equal shapes that is not contiguous in memory (one copy).
    ``keep``: only the first ``keep`` samples."""
    n = len(batch)
    keep = n if keep is None else keep
    is_bool = batch.dtype == DALIDataType.BOOL
    if batch.is_dense_tensor():
        t = _dlpack_to_torch(batch)
        if is_bool:  # DLPack 0.6 has no bool code: stoker exports bool as uint8
            t = t.view(torch.bool)
        return t if keep == n else t[:keep]
    shapes = batch.shape()
    dev_type, dev_id = batch.__dlpack_device__()
    if dev_type == _KDL_CUDA:
        # A GPU batch has no per-sample views on the host, and DLPack needs one dense buffer.
        if any(s != shapes[0] for s in shapes):
            raise ValueError(
                f"to_torch: the samples of the GPU batch {batch!r} have different shapes, which "
                "one CUDA tensor cannot hold. Make them equal in the pipeline (fn.resize, "
                "fn.crop, fn.pad) before they go to the GPU, or take this output on the CPU.")
        # Equal shapes, scattered in GPU memory: one copy, through the host.
        t = torch.from_numpy(batch.as_cpu().as_array()[:keep])
        return t.to(torch.device("cuda", dev_id))
    if all(s == shapes[0] for s in shapes):
        return torch.from_numpy(batch.as_array()[:keep])  # equal shapes, scattered: one copy
    return [torch.from_numpy(batch.at(i)) for i in range(keep)]


def _torch_dtype(t):
    import numpy as np
    return torch.from_numpy(np.zeros(0, _types.to_numpy_dtype(t))).dtype


def feed_ndarray(tensor_list, arr, cuda_stream=None):
    """Copies a TensorList into the existing torch tensor ``arr`` (DALI's helper); returns arr.
    Rarely needed: the iterators already hand out tensors without a copy.
    ``cuda_stream`` (a torch.cuda.Stream or a raw handle; None: torch's current stream) orders
    a GPU copy; the copy is queued there without waiting for it, as in DALI."""
    if (isinstance(tensor_list, _C.TensorListGPU) and arr.is_cuda and arr.is_contiguous() and
            _torch_dtype(tensor_list.dtype) == arr.dtype and
            (len(tensor_list),) + tuple(tensor_list.shape()[0] if len(tensor_list) else ()) ==
            tuple(arr.shape)):
        # One device-to-device copy, ordered after the batch is ready: no tensor made on the way.
        stream = cuda_stream if cuda_stream is not None else torch.cuda.current_stream(arr.device)
        tensor_list.copy_to_external(arr.data_ptr(), stream, non_blocking=True)
        return arr
    src = to_torch(tensor_list)
    if isinstance(src, list):
        raise ValueError("feed_ndarray: the samples of this batch have different shapes "
                         f"({tensor_list.shape()[:4]}...), so they do not fit one tensor.")
    if tuple(src.shape) != tuple(arr.shape):
        raise ValueError(f"feed_ndarray: the batch has shape {tuple(src.shape)} but the "
                         f"destination tensor has shape {tuple(arr.shape)}.")
    arr.copy_(src.to(arr.dtype))
    return arr


class StokerGenericIterator(StokerBaseIterator):
    """Iterator over one or more stoker pipelines giving PyTorch tensors.

    Each ``next()`` returns a list with one dict per pipeline, mapping the names of
    ``output_map`` to that pipeline's outputs.

    Args:
        pipelines: a Pipeline, or a list with one per GPU (or per shard on the CPU).
        output_map (list of str): a distinct name for each pipeline output, in order.
        size (int): samples per epoch over all pipelines, given by hand; -1 (the default) with
            no reader_name: no epochs, batches come until the pipeline stops. Exclusive with
            reader_name.
        reader_name (str): the ``name=`` of a reader in the pipelines; its ``reader_meta`` gives
            the epoch size, the shards and whether the reader pads (``pad_last_batch``).
        auto_reset (bool or 'yes'/'no'): reset at the end of each epoch (StopIteration is
            still raised, so that a ``for`` loop ends), instead of waiting for ``reset()``.
        fill_last_batch (bool): deprecated: True is FILL, False is PARTIAL.
        dynamic_shape: ignored; kept so that DALI code runs unchanged (shapes may always
            change from batch to batch here).
        last_batch_padded (bool): with ``size``: whether the reader pads its last batch
            (``pad_last_batch=True``), so that the next epoch starts on a fresh batch. With
            reader_name it comes from the reader.
        last_batch_policy (LastBatchPolicy): FILL (default), DROP or PARTIAL.
        prepare_first_batch (bool): run the pipelines for the first batch at construction.

    For data 1..7 and batch size 2, the last batches of an epoch are: PARTIAL [7] (the next
    epoch starts [1, 2] when the reader pads, [2, 3] when not); FILL [7, 7] padded, [7, 1] not;
    DROP [5, 6].

    Checkpoints (pipelines built with ``enable_checkpointing=True``): ``it.checkpoints()``
    returns one string per pipeline, the state after the last batch ``it`` returned (the batch
    it prepared ahead does not count) with the iterator's epoch counters. Build the pipelines
    again with ``checkpoint=ckpts[k]`` and an iterator with the same arguments: it continues
    with the batches, epoch ends and StopIterations this one would have given next.
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, dynamic_shape=False, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        if isinstance(output_map, str):
            raise TypeError("StokerGenericIterator: output_map must be a list of names, e.g. "
                            f"['data', 'label'], got the string {output_map!r}.")
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _convert(self, batch, pipe_index, keep):
        return to_torch(batch, keep)


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


class StokerRaggedIterator(StokerBaseIterator):
    """DALI's DALIRaggedIterator: like StokerGenericIterator, with ``output_types`` saying per
    output what a batch becomes: ``DENSE_TAG`` one tensor (N, ...) (the samples must have one
    shape), ``SPARSE_LIST_TAG`` a list of per-sample tensors (views, no copy, on the CPU),
    ``SPARSE_COO_TAG`` a sparse COO tensor (``torch.sparse_coo_tensor``) whose row i holds
    sample i (values: the samples joined with ``torch.hstack``, as DALI does; 1-D samples).
    ``output_types=None``: every output dense. The other arguments are StokerGenericIterator's.
    """
    DENSE_TAG = "dense"
    SPARSE_LIST_TAG = "sparse_list"
    SPARSE_COO_TAG = "sparse_coo"

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, output_types=None,
                 auto_reset=False, fill_last_batch=None, dynamic_shape=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True):
        name = type(self).__name__
        if isinstance(output_map, str):
            raise TypeError(f"{name}: output_map must be a list of names, e.g. ['data', "
                            f"'label'], got the string {output_map!r}.")
        tags = (self.DENSE_TAG, self.SPARSE_LIST_TAG, self.SPARSE_COO_TAG)
        if output_types is not None:
            output_types = list(output_types)
            bad = [t for t in output_types if t not in tags]
            if bad:
                raise ValueError(f"{name}: output_types may hold only DENSE_TAG ('dense'), "
                                 f"SPARSE_LIST_TAG ('sparse_list') and SPARSE_COO_TAG "
                                 f"('sparse_coo'), got {bad[0]!r}.")
            if len(output_types) != len(output_map):
                raise ValueError(f"{name}: output_types has {len(output_types)} entries for "
                                 f"{len(output_map)} outputs in output_map; give one per output.")
        self._output_types = output_types
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, fill_last_batch=fill_last_batch,
                         last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _convert_output(self, output_index, batch, pipe_index, keep):
        tag = self.DENSE_TAG if self._output_types is None else self._output_types[output_index]
        if tag == self.DENSE_TAG:
            if not batch.is_dense_tensor() and len(set(map(tuple, batch.shape()))) > 1:
                raise ValueError(
                    f"{type(self).__name__}: output {self.output_map[output_index]!r} is marked "
                    f"dense, but its samples have different shapes ({batch.shape()[:4]}...); "
                    "mark it SPARSE_LIST_TAG or SPARSE_COO_TAG in output_types, or make the "
                    "shapes equal in the pipeline (fn.resize, fn.pad).")
            return to_torch(batch, keep)
        t = to_torch(batch, keep)
        samples = list(t.unbind(0)) if isinstance(t, torch.Tensor) else t
        if tag == self.SPARSE_LIST_TAG:
            return samples
        values = torch.hstack(samples)
        indices = torch.tensor([(i, j) for i, x in enumerate(samples) for j in range(x.shape[0])],
                               dtype=torch.long, device=values.device).reshape(-1, 2)
        return torch.sparse_coo_tensor(indices.T, values)


# DALI's names, so that `from nvidia.dali.plugin.pytorch import ...` code moves by one import.
DALIGenericIterator = StokerGenericIterator
DALIClassificationIterator = StokerClassificationIterator
DALIRaggedIterator = StokerRaggedIterator
