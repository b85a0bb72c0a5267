"""TensorFlow: a stoker pipeline as a ``tf.data.Dataset``, under stoker's and DALI's names.

    from stoker.plugin.tf import StokerDataset
    ds = StokerDataset(pipe, output_map=["images", "labels"], reader_name="Reader")
    model.fit(ds, epochs=10)          # one pass over the dataset is one epoch of the reader

The dataset is made with ``tf.data.Dataset.from_generator``, with static shapes and dtypes where
they are known: given by ``output_shapes``/``output_dtypes``, else the dtype and number of
dimensions of each output are taken from the pipeline's first batch (which is kept, not lost),
and the batch dimension is the batch size unless the last batch may be smaller (PARTIAL).

Without ``reader_name`` or ``size`` the dataset is endless (as DALI's DALIDataset); with one of
them each pass is one epoch, counted as the framework iterators count it (last_batch_policy),
and ``len(ds)`` is the number of batches per epoch (except for FILL without padding, whose
epochs differ in length). A pass stopped early leaves the rest of that epoch for the next one.

Copies: ``from_generator`` copies each batch once into TensorFlow's memory; the pipeline side
gives it a view of its buffer. ``to_tf`` hands one batch over through DLPack for eager code.
"""
import tensorflow as tf

from ..types import DALIDataType
from .base_iterator import LastBatchPolicy, StokerBaseIterator

__all__ = ["StokerDataset", "DALIDataset", "LastBatchPolicy", "to_tf"]


def to_tf(batch):
    """One dense batch as an eager tf.Tensor through DLPack (TensorFlow copies when the buffer
    does not meet its alignment)."""
    if not batch.is_dense_tensor():
        raise ValueError(_ragged_message(batch))
    t = tf.experimental.dlpack.from_dlpack(batch.__dlpack__())
    if batch.dtype == DALIDataType.BOOL:  # DLPack 0.6 carries bool as uint8
        t = tf.cast(t, tf.bool)
    return t


def _ragged_message(batch):
    return ("StokerDataset: the samples of a batch have different shapes "
            f"({batch.shape()[:4]}...), which a dense tf.Tensor cannot hold; make them equal in "
            "the pipeline (fn.resize, fn.crop, fn.pad), or use the PyTorch or JAX iterator, "
            "which give one tensor per sample.")


class _NumpyIterator(StokerBaseIterator):
    """The shared epoch logic, giving each output as a NumPy view of the pipeline's batch."""

    def _convert(self, batch, pipe_index, keep):
        shapes = batch.shape()
        if any(s != shapes[0] for s in shapes):
            raise ValueError(_ragged_message(batch))
        a = batch.as_array()
        return a if keep == len(a) else a[:keep]


def StokerDataset(pipeline, output_shapes=None, output_dtypes=None, *, output_map=None,
                  reader_name=None, size=-1, last_batch_policy=LastBatchPolicy.FILL,
                  last_batch_padded=False, batch_size=None, shapes=None, dtypes=None,
                  **dali_options):
    """A ``tf.data.Dataset`` of the pipeline's batches.

    Args:
        pipeline: a stoker Pipeline (one; for several devices use tf.distribute with one
            dataset per replica, each pipeline reading its own shard).
        output_shapes: one shape per output (tuples or tf.TensorShape; None for an unknown
            dimension). Default: the batch size, then unknown sample dimensions.
        output_dtypes: one tf.DType per output. Default: the pipeline's output types.
        output_map (list of str): name the outputs; elements are then dicts, not tuples.
        reader_name, size, last_batch_policy, last_batch_padded: epochs, as in
            ``stoker.plugin.pytorch.StokerGenericIterator``.
        batch_size: DALI's argument; stoker's pipeline has its own, which must agree.
        shapes, dtypes: DALI's older names of output_shapes and output_dtypes.
        dali_options: DALI's other DALIDataset options (num_threads, device_id,
            prefetch_queue_depth, ...) are accepted and ignored: the stoker pipeline already
            carries them.
    """
    if shapes is not None:
        output_shapes = output_shapes if output_shapes is not None else shapes
    if dtypes is not None:
        output_dtypes = output_dtypes if output_dtypes is not None else dtypes
    unknown = set(dali_options) - {"num_threads", "device_id", "exec_separated",
                                   "prefetch_queue_depth", "cpu_prefetch_queue_depth",
                                   "gpu_prefetch_queue_depth", "fail_on_device_mismatch",
                                   "input_datasets"}
    if unknown:
        raise TypeError(f"StokerDataset got unexpected argument(s): {', '.join(sorted(unknown))}.")
    if dali_options.get("input_datasets") is not None:
        raise NotImplementedError("StokerDataset: input_datasets (feeding a tf.data pipeline "
                                  "into stoker) is not supported.")
    if isinstance(pipeline, (list, tuple)):
        raise TypeError("StokerDataset takes one pipeline; for several devices make one dataset "
                        "per replica (tf.distribute), each pipeline with its own shard_id.")
    if batch_size is not None and batch_size != pipeline.max_batch_size:
        raise ValueError(f"StokerDataset: batch_size={batch_size} differs from the pipeline's "
                         f"batch size ({pipeline.max_batch_size}); give it to the pipeline only.")

    pipeline.build()
    n_out = len(pipeline._outputs)
    names = list(output_map) if output_map is not None else [f"out{k}" for k in range(n_out)]
    if len(names) != n_out:
        raise ValueError(f"StokerDataset: the pipeline has {n_out} outputs but output_map names "
                         f"{len(names)} ({names}).")
    epochs = reader_name is not None or size > 0
    it = _NumpyIterator(pipeline, names, size=size, reader_name=reader_name,
                        auto_reset=epochs, last_batch_policy=last_batch_policy,
                        last_batch_padded=last_batch_padded, prepare_first_batch=True)
    if it._first_batch is None:
        raise ValueError("StokerDataset: the pipeline was built from an iterator checkpoint "
                         "taken at the end of an epoch, so it has no first batch to start the "
                         "dataset with. Take the checkpoint during an epoch, or build the "
                         "pipeline without checkpoint=.")
    first = it._first_batch[0]  # kept by the iterator: it is the first element of the dataset

    if output_dtypes is None:
        output_dtypes = [tf.as_dtype(first[n].dtype) for n in names]
    output_dtypes = _per_output(output_dtypes, n_out, "output_dtypes")
    output_dtypes = [tf.as_dtype(d) for d in output_dtypes]
    for n, d in zip(names, output_dtypes):
        have = tf.as_dtype(first[n].dtype)
        if have != d:
            raise TypeError(f"StokerDataset: output {n!r} is {have.name} but output_dtypes says "
                            f"{d.name}; cast it in the pipeline (fn.cast) or fix output_dtypes.")
    if output_shapes is None:
        lead = None if it._last_batch_policy == LastBatchPolicy.PARTIAL else it.batch_size
        output_shapes = [(lead,) + (None,) * (first[n].ndim - 1) for n in names]
    output_shapes = [tf.TensorShape(s) for s in _per_output(output_shapes, n_out,
                                                            "output_shapes")]
    for n, s in zip(names, output_shapes):
        if not s.is_compatible_with(first[n].shape):
            raise ValueError(f"StokerDataset: output {n!r} has shape {first[n].shape}, which "
                             f"does not fit output_shapes {s}.")

    specs = [tf.TensorSpec(s, d) for s, d in zip(output_shapes, output_dtypes)]
    signature = dict(zip(names, specs)) if output_map is not None else tuple(specs)

    def generator():
        for step in it:
            d = step[0]
            yield {n: d[n] for n in names} if output_map is not None else \
                tuple(d[n] for n in names)

    ds = tf.data.Dataset.from_generator(generator, output_signature=signature)
    if epochs and not (it._last_batch_policy == LastBatchPolicy.FILL and
                       not it._last_batch_padded):
        # Every epoch has the same number of batches (FILL without padding reads into the
        # next epoch, so its epochs vary): tell tf.data, so that len(ds) and Keras know it.
        ds = ds.apply(tf.data.experimental.assert_cardinality(len(it)))
    ds._stoker_iterator = it  # keeps the pipeline alive with the dataset
    return ds


def _per_output(values, n, what):
    if isinstance(values, (tf.DType, tf.TensorShape)) or (
            isinstance(values, tuple) and n == 1 and all(v is None or isinstance(v, int)
                                                         for v in values)):
        values = [values]
    values = list(values)
    if len(values) != n:
        raise ValueError(f"StokerDataset: {what} has {len(values)} entries but the pipeline has "
                         f"{n} outputs; give one per output.")
    return values


DALIDataset = StokerDataset
