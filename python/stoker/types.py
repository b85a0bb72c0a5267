"""Enumerations and constants, under DALI's names (``stoker.types`` is ``nvidia.dali.types``)."""
from enum import IntEnum

import numpy as np

__all__ = ["DALIDataType", "DALIImageType", "DALIInterpType", "Constant", "to_numpy_dtype",
           "from_numpy_dtype", "SampleInfo", "BatchInfo"]


def __getattr__(name):
    # fn.external_source's SampleInfo and BatchInfo, under DALI's names (types.SampleInfo).
    if name in ("SampleInfo", "BatchInfo"):
        from . import external_source
        return getattr(external_source, name)
    raise AttributeError(f"module 'stoker.types' has no attribute {name!r}")


class DALIDataType(IntEnum):
    """Element types; the numbers are DALI's."""
    NO_TYPE = -1
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11


class DALIImageType(IntEnum):
    """Color spaces of images."""
    RGB = 0
    BGR = 1
    YCbCr = 2
    GRAY = 3
    ANY_DATA = 4
    HSV = 5


class DALIInterpType(IntEnum):
    """Interpolation methods."""
    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5


# Module-level names, as DALI code writes them: types.UINT8, types.RGB, types.INTERP_LINEAR...
for _enum in (DALIDataType, DALIImageType, DALIInterpType):
    for _m in _enum:
        globals()[_m.name] = _m
FLOAT32 = DALIDataType.FLOAT
# Layout names used by older DALI code (output_layout=types.NCHW).
NCHW = "CHW"
NHWC = "HWC"
NFHWC = "FHWC"
NFCHW = "FCHW"

_NUMPY = {
    DALIDataType.UINT8: np.uint8, DALIDataType.UINT16: np.uint16, DALIDataType.UINT32: np.uint32,
    DALIDataType.UINT64: np.uint64, DALIDataType.INT8: np.int8, DALIDataType.INT16: np.int16,
    DALIDataType.INT32: np.int32, DALIDataType.INT64: np.int64, DALIDataType.FLOAT16: np.float16,
    DALIDataType.FLOAT: np.float32, DALIDataType.FLOAT64: np.float64, DALIDataType.BOOL: np.bool_,
}


def to_numpy_dtype(t):
    """The NumPy dtype of a DALIDataType."""
    return np.dtype(_NUMPY[DALIDataType(t)])


def from_numpy_dtype(dt):
    """The DALIDataType of a NumPy dtype."""
    dt = np.dtype(dt)
    for k, v in _NUMPY.items():
        if np.dtype(v) == dt:
            return k
    raise TypeError(f"stoker has no element type for NumPy dtype {dt}")


class Constant:
    """A scalar constant for expressions on pipeline nodes, with an explicit type:
    ``images * types.Constant(2, types.UINT8)``."""

    def __init__(self, value, dtype=None):
        if np.ndim(value) != 0:
            raise ValueError("types.Constant: only scalar constants are supported in stoker; "
                             f"got an array of shape {np.shape(value)}")
        self.value = value.item() if hasattr(value, "item") else value
        if dtype is None:
            if isinstance(value, np.generic):
                dtype = from_numpy_dtype(value.dtype)
            elif isinstance(self.value, bool):
                dtype = DALIDataType.BOOL
            elif isinstance(self.value, int):
                dtype = DALIDataType.INT32
            else:
                dtype = DALIDataType.FLOAT
        self.dtype = DALIDataType(dtype)

    def __repr__(self):
        return f"Constant({self.value!r}, {self.dtype.name})"
