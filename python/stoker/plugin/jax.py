"""JAX iterators over stoker pipelines, under stoker's and DALI's names.

    from stoker.plugin.jax import StokerJaxIterator
    it = StokerJaxIterator(pipe, ["images", "labels"], reader_name="Reader")
    for batch in it:
        batch["images"]   # a jax.Array

Each ``next()`` returns one dict, name -> ``jax.Array``. Batches go to JAX through DLPack:
on the CPU the array is the pipeline's buffer itself (no copy; stoker's pool aligns its buffers
as XLA wants, and the buffer lives for as long as the array). Copies happen only where JAX needs
them: bool outputs (DLPack 0.6 carries them as uint8; ``astype(bool)`` copies), a PARTIAL last
batch (slicing a jax.Array makes a new one), and moving a CPU batch to another device.

Sharding: with several pipelines (one per device, each reading its own shard) the iterator
returns one global array per output, split over the devices along the batch axis: pipeline k's
batch lives on device k (on the pipeline's own GPU when every pipeline has a distinct
``device_id`` that JAX sees, so GPU batches are not moved). With one pipeline and
``sharding=``, the pipeline's batch is split over the sharding's devices (``jax.device_put``).
PARTIAL needs arrays of equal shape on every device, so it is only allowed for one pipeline
without ``sharding``.

GPU batches (``.gpu()``, ``device='gpu'`` or ``'mixed'``) stay on their GPU without a copy; JAX
hands ``__dlpack__`` its stream and stoker makes that stream wait for the batch, so a
computation queued on the array sees the finished batch. Their samples must have one shape.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..types import DALIDataType
from .base_iterator import LastBatchPolicy, StokerBaseIterator

__all__ = ["StokerJaxIterator", "DALIGenericIterator", "LastBatchPolicy", "to_jax"]


def to_jax(batch, keep=None, device=None):
    """A TensorList as a jax.Array (N, ...), zero-copy through DLPack where JAX allows it; a
    list of per-sample arrays when the samples' shapes differ (CPU batches only; a GPU batch
    must have equal shapes). ``keep``: the first ``keep``
    samples. ``device``: put the result there (a copy when it is another device)."""
    n = len(batch)
    keep = n if keep is None else keep
    on_gpu = batch.__dlpack_device__()[0] == _KDL_CUDA
    if on_gpu:
        _check_jax_has_the_gpu(batch)
    if batch.is_dense_tensor():
        # JAX hands __dlpack__ its stream, which stoker makes wait for the batch's work.
        arr = jax.dlpack.from_dlpack(batch)
    else:
        shapes = batch.shape()
        if on_gpu:
            if any(s != shapes[0] for s in shapes):
                raise ValueError(
                    f"to_jax: the samples of the GPU batch {batch!r} have different shapes, "
                    "which one jax.Array cannot hold. Make them equal in the pipeline "
                    "(fn.resize, fn.crop, fn.pad) before they go to the GPU, or take this "
                    "output on the CPU.")
            # Equal shapes, scattered in GPU memory: one copy, through the host, back to the
            # batch's GPU.
            gpu = _jax_gpu(batch.__dlpack_device__()[1])
            arr = jax.device_put(batch.as_cpu().as_array(), gpu)
        elif all(s == shapes[0] for s in shapes):
            arr = jnp.asarray(batch.as_array())  # equal shapes, scattered samples: one copy
        else:
            return [_place(_fix_bool(jax.dlpack.from_dlpack(batch[i]), batch), device)
                    for i in range(keep)]
    if keep != n:
        arr = arr[:keep]
    return _place(_fix_bool(arr, batch), device)


_KDL_CUDA = 2


def _jax_gpu(device_id):
    """JAX's device for CUDA device `device_id`, or None when JAX has no such GPU."""
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:  # a JAX without a GPU backend
        return None
    for d in gpus:
        if getattr(d, "local_hardware_id", d.id) == device_id:
            return d
    return None


def _check_jax_has_the_gpu(batch):
    dev_id = batch.__dlpack_device__()[1]
    if _jax_gpu(dev_id) is None:
        raise ValueError(
            f"to_jax: the batch {batch!r} is on GPU {dev_id}, but this JAX has no such GPU "
            f"(its devices: {jax.devices()}). Install a JAX with CUDA (jax[cuda12]) and make "
            "that GPU visible to it, or take this output on the CPU (drop .gpu() / "
            "device='gpu' / 'mixed').")


def _fix_bool(arr, batch):
    return arr.astype(jnp.bool_) if batch.dtype == DALIDataType.BOOL else arr


def _place(arr, device):
    return arr if device is None else jax.device_put(arr, device)


class StokerJaxIterator(StokerBaseIterator):
    """Iterator over one or more stoker pipelines giving a dict of ``jax.Array`` per step.

    Arguments as ``stoker.plugin.pytorch.StokerGenericIterator`` (pipelines, output_map, size,
    reader_name, auto_reset, last_batch_padded, last_batch_policy, prepare_first_batch), plus:

        sharding (jax.sharding.Sharding): how to lay out the global batch over devices. With
            several pipelines it defaults to splitting the batch axis over the pipelines' own
            GPUs (their ``device_id``s) where JAX has them, else over the first
            ``len(pipelines)`` local devices; pipeline k's batch is slice k.

    ``checkpoints()`` (from StokerBaseIterator) gives one checkpoint per pipeline; see
    ``stoker.plugin.pytorch.StokerGenericIterator``.
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 last_batch_padded=False, last_batch_policy=LastBatchPolicy.FILL,
                 prepare_first_batch=True, sharding=None):
        if isinstance(output_map, str):
            raise TypeError("StokerJaxIterator: output_map must be a list of names, e.g. "
                            f"['images', 'labels'], got the string {output_map!r}.")
        npipes = len(pipelines) if isinstance(pipelines, (list, tuple)) else 1
        self._sharding = sharding
        self._devices = None
        if npipes > 1 or sharding is not None:
            policy = getattr(last_batch_policy, "name", last_batch_policy)
            if policy == "PARTIAL":
                raise ValueError("StokerJaxIterator: last_batch_policy=PARTIAL gives a smaller "
                                 "last batch, which cannot be split evenly over devices; use "
                                 "FILL or DROP with several pipelines or with sharding=.")
        if npipes > 1:
            if sharding is None:
                devices = _own_gpus(pipelines)
                if devices is None:
                    devices = jax.local_devices()
                    if len(devices) < npipes:
                        raise ValueError(f"StokerJaxIterator: {npipes} pipelines need {npipes} "
                                         f"JAX devices, but there are {len(devices)} "
                                         f"({devices}). Give one pipeline per device.")
                    devices = devices[:npipes]
                self._devices = [[d] for d in devices]
                self._sharding = NamedSharding(Mesh(np.array(devices), ("batch",)),
                                               PartitionSpec("batch"))
            else:
                self._devices = _devices_along_batch(sharding, npipes)
        super().__init__(pipelines, output_map, size=size, reader_name=reader_name,
                         auto_reset=auto_reset, last_batch_padded=last_batch_padded,
                         last_batch_policy=last_batch_policy,
                         prepare_first_batch=prepare_first_batch)

    def _convert(self, batch, pipe_index, keep):
        if self._devices is not None:
            out = to_jax(batch, keep)
            if isinstance(out, list):
                raise ValueError("StokerJaxIterator: the samples of a batch have different "
                                 f"shapes ({batch.shape()[:4]}...), so they cannot form one "
                                 "sharded array; make them equal (fn.resize, fn.crop, fn.pad).")
            # Pipeline k's batch on every device that holds slice k (more than one when the
            # sharding replicates over another mesh axis).
            return [jax.device_put(out, d) for d in self._devices[pipe_index]]
        out = to_jax(batch, keep)
        if self._sharding is not None:
            if isinstance(out, list):
                raise ValueError("StokerJaxIterator: the samples of a batch have different "
                                 "shapes, so they cannot be sharded; make them equal.")
            out = jax.device_put(out, self._sharding)
        return out

    def _assemble(self, per_pipe):
        if self._devices is None:
            return per_pipe[0]
        out = {}
        for name in self.output_map:
            first = per_pipe[0][name][0]
            shape = (sum(d[name][0].shape[0] for d in per_pipe),) + tuple(first.shape[1:])
            parts = [a for d in per_pipe for a in d[name]]
            out[name] = jax.make_array_from_single_device_arrays(shape, self._sharding, parts)
        return out


def _own_gpus(pipelines):
    """Each pipeline's own GPU as a JAX device, so that its batches stay where they are made;
    None unless every pipeline has a distinct device_id that JAX has as a GPU."""
    ids = [getattr(p, "device_id", None) for p in pipelines]
    if any(i is None for i in ids) or len(set(ids)) != len(ids):
        return None
    devices = [_jax_gpu(i) for i in ids]
    return None if any(d is None for d in devices) else devices


def _devices_along_batch(sharding, npipes):
    """For each successive slice of the batch axis under `sharding`, the devices holding it."""
    n = npipes * 1024  # any batch size divisible by the number of pipelines
    for rank in range(1, 9):  # the sharding may be written for outputs of more dimensions
        try:
            index_map = sharding.devices_indices_map((n,) + (1,) * (rank - 1))
            break
        except ValueError:
            continue
    else:
        raise ValueError(f"StokerJaxIterator: cannot use the sharding {sharding}: only the "
                         "batch axis (the first) may be split over devices.")
    slices = {}
    for dev, idx in index_map.items():
        slices.setdefault(idx[0].start or 0, []).append(dev)
    if len(slices) != npipes:
        raise ValueError(f"StokerJaxIterator: the sharding splits the batch axis into "
                         f"{len(slices)} parts but there are {npipes} pipelines; give one "
                         "pipeline per part.")
    return [slices[s] for s in sorted(slices)]


DALIGenericIterator = StokerJaxIterator
