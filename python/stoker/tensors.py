"""Batches and samples under DALI's names (``nvidia.dali.tensors`` / ``nvidia.dali.backend``).

``batch[i]`` and ``batch.as_tensor()`` are TensorCPU: NumPy arrays (views of the batch's memory,
no copy) that also answer DALI's TensorCPU methods, so that code written for either keeps
working. Where the two disagree they are made to agree:

- ``t.shape`` is NumPy's tuple, and ``t.shape()`` DALI's list;
- ``t.ndim`` is NumPy's int, and ``t.ndim()`` DALI's;
- ``t.dtype`` is NumPy's dtype, which compares equal to DALI's (``t.dtype == types.UINT8``);
  ``t.dali_dtype`` is the DALIDataType itself;
- ``t.squeeze()`` is NumPy's (a squeezed view), not DALI's in-place one.
"""
import numpy as np

from . import _C
from . import types as _types
from .types import to_numpy_dtype

TensorListCPU = _C.TensorListCPU
TensorListGPU = _C.TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]


class _Shape(tuple):
    """NumPy's shape tuple that, called, gives DALI's list."""

    def __call__(self):
        return list(self)


class _Ndim(int):
    """NumPy's ndim that, called, gives DALI's."""

    def __call__(self):
        return int(self)


class TensorCPU(np.ndarray):
    """A sample (``batch[i]``) or a whole dense batch (``batch.as_tensor()``) in host memory: a
    NumPy array sharing the batch's memory, with DALI's TensorCPU methods."""

    def __array_finalize__(self, obj):
        self._layout = getattr(obj, "_layout", "")
        self._source = getattr(obj, "_source", "")

    @property
    def shape(self):
        return _Shape(np.ndarray.shape.__get__(self))

    @shape.setter
    def shape(self, value):
        np.ndarray.shape.__set__(self, value)

    @property
    def ndim(self):
        return _Ndim(np.ndarray.ndim.__get__(self))

    @property
    def dali_dtype(self):
        return _types.from_numpy_dtype(self.dtype)

    def layout(self):
        return self._layout

    def set_layout(self, layout):
        if layout and len(layout) != self.ndim:
            raise ValueError(f"TensorCPU.set_layout: layout {layout!r} has {len(layout)} "
                             f"dimensions, the tensor has {int(self.ndim)}.")
        self._layout = layout or ""

    def source_info(self):
        return self._source

    def as_cpu(self):
        return self

    def as_array(self):
        """This tensor as a plain NumPy array (the same memory)."""
        return self.view(np.ndarray)

    def data_ptr(self):
        return self.ctypes.data

    def __repr__(self):
        return (f"TensorCPU({np.ndarray.__repr__(self.view(np.ndarray))}, "
                f"dtype={self.dali_dtype}, layout={self._layout!r})")


def _sample(array, layout, source):
    """batch[i] (called by TensorListCPU.__getitem__)."""
    t = array.view(TensorCPU)
    t._layout, t._source = layout, source
    return t


def _dense(array, layout):
    """batch.as_tensor(): the batch as one tensor, its layout with DALI's leading 'N'."""
    t = array.view(TensorCPU)
    t._layout = "N" + layout if layout else ""
    return t


class TensorGPU:
    """GPU data as one tensor: a sample (``TensorListGPU[i]``) or a whole dense batch
    (``TensorListGPU.as_tensor()``). To frameworks through ``__dlpack__`` (no copy; the consumer's
    stream waits for the data), to CuPy and Numba through ``__cuda_array_interface__``, to the
    host with ``as_cpu()``."""

    def __init__(self, batch, index=None):
        if index is None and not batch.is_dense_tensor():
            raise ValueError("TensorListGPU.as_tensor: the samples have different shapes or are "
                             "not contiguous, so they do not form one tensor; resize or pad them "
                             "first (fn.resize, fn.pad).")
        self._batch = batch
        self._index = index

    def shape(self):
        if self._index is not None:
            return list(self._batch.shape()[self._index])
        return [len(self._batch)] + list(self._batch.shape()[0] if len(self._batch) else [])

    def ndim(self):
        return len(self.shape())

    @property
    def dtype(self):
        return self._batch.dtype

    def layout(self):
        layout = self._batch.layout()
        if self._index is not None:
            return layout
        return "N" + layout if layout else ""

    def source_info(self):
        return self._batch.source_info(self._index) if self._index is not None else ""

    @property
    def device_id(self):
        return self._batch.device_id

    def data_ptr(self):
        if self._index is not None:
            return self._batch._sample_ptr(self._index)
        return self._batch.data_ptr()

    def as_cpu(self):
        host = self._batch.as_cpu()
        return host[self._index] if self._index is not None else host.as_tensor()

    def __dlpack__(self, stream=None, **kwargs):
        if self._index is not None:
            return self._batch._sample_dlpack(self._index, stream=stream)
        return self._batch.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._batch.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        # That protocol cannot make the consumer's stream wait: the data is made ready first.
        self._batch._synchronize()
        return {"shape": tuple(self.shape()), "typestr": to_numpy_dtype(self.dtype).str,
                "data": (self.data_ptr(), False), "strides": None, "version": 3}

    def __repr__(self):
        return (f"TensorGPU(dtype={self.dtype}, layout={self.layout()!r}, "
                f"shape={tuple(self.shape())}, device={self.device_id})")
