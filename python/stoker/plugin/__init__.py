"""Framework iterators: stoker's batches as PyTorch tensors, JAX arrays, a tf.data.Dataset,
Paddle tensors or MXNet NDArrays.

Each framework's module is imported on its own (``stoker.plugin.pytorch``, ``stoker.plugin.jax``,
``stoker.plugin.tf``, ``stoker.plugin.paddle``, ``stoker.plugin.mxnet``), so that using one
never imports the others.
The framework-independent part (epochs, last batch policy, shards) is in ``base_iterator``.
"""
from .base_iterator import LastBatchPolicy, StokerBaseIterator, resolve_shard

__all__ = ["LastBatchPolicy", "StokerBaseIterator", "resolve_shard"]
