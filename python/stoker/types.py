"""Enumerations and constants, under DALI's names (``stoker.types`` is ``nvidia.dali.types``)."""
from enum import IntEnum

import numpy as np

__all__ = ["DALIDataType", "DALIImageType", "DALIInterpType", "Constant", "ScalarConstant",
           "to_numpy_dtype", "to_dali_type",
           "from_numpy_dtype", "SampleInfo", "BatchInfo"]


def __getattr__(name):
    # fn.external_source's SampleInfo and BatchInfo, under DALI's names (types.SampleInfo).
    if name in ("SampleInfo", "BatchInfo"):
        from . import external_source
        return getattr(external_source, name)
    raise AttributeError(f"module 'stoker.types' has no attribute {name!r}")


class _DaliEnum(IntEnum):
    # Printed as DALI prints its enums ("DALIDataType.FLOAT"), not as the number that IntEnum
    # prints since Python 3.11.
    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec):
        return format(str(self), spec)

    def __eq__(self, other):
        # A sample's dtype is NumPy's (batch[i] is an array), DALI's is a DALIDataType: code
        # written for DALI compares the two (`t.dtype == types.UINT8`).
        if isinstance(self, DALIDataType) and (isinstance(other, np.dtype) or (
                isinstance(other, type) and issubclass(other, np.generic))):
            return self != DALIDataType.NO_TYPE and np.dtype(_NUMPY[self]) == np.dtype(other)
        return int.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = IntEnum.__hash__


class DALIDataType(_DaliEnum):
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


class DALIImageType(_DaliEnum):
    """Color spaces of images."""
    RGB = 0
    BGR = 1
    YCbCr = 2
    GRAY = 3
    ANY_DATA = 4
    HSV = 5


class DALIInterpType(_DaliEnum):
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


# The type names to_dali_type knows, as DALI's (NumPy's and C's names, torch's without "torch.").
_TYPE_NAMES = {
    "bool": "BOOL", "bool_": "BOOL", "boolean": "BOOL",
    "int8": "INT8", "sbyte": "INT8", "uint8": "UINT8", "byte": "UINT8", "ubyte": "UINT8",
    "int16": "INT16", "short": "INT16", "uint16": "UINT16", "ushort": "UINT16",
    "int32": "INT32", "uint32": "UINT32", "int64": "INT64", "long": "INT64",
    "uint64": "UINT64", "ulong": "UINT64", "half": "FLOAT16", "float16": "FLOAT16",
    "float": "FLOAT", "float32": "FLOAT", "float64": "FLOAT64", "double": "FLOAT64",
}


def to_dali_type(framework_type):
    """The DALIDataType of a type name or a framework's type: 'uint8', np.float32, torch.int64,
    np.dtype('int16'), as DALI's to_dali_type."""
    t = framework_type.__qualname__ if isinstance(framework_type, type) else str(framework_type)
    if t.startswith("torch."):
        t = t[6:]
    name = _TYPE_NAMES.get(t)
    if name is None:
        raise TypeError(f"'{framework_type}' could not be converted into any known DALIDataType.")
    return DALIDataType[name]


def from_numpy_dtype(dt):
    """The DALIDataType of a NumPy dtype."""
    dt = np.dtype(dt)
    for k, v in _NUMPY.items():
        if np.dtype(v) == dt:
            return k
    raise TypeError(f"stoker has no element type for NumPy dtype {dt}")


class Constant:
    """A constant, as DALI's ``types.Constant(value, dtype, shape, layout, device)``: a scalar
    (without shape, layout or device) is a scalar constant for expressions on pipeline nodes
    (``images * types.Constant(2, types.UINT8)``); a list, a tuple, an array, a shape, a layout
    or a device make an ``fn.constant`` node, a DataNode (``images + types.Constant([1, 2, 3])``).
    float64 arrays become float32 and, without dtype, int64 arrays int32, as in DALI."""

    def __new__(cls, value=None, dtype=None, shape=None, layout=None, device=None, **kwargs):
        if cls is Constant and _makes_node(value, shape, layout, device, kwargs):
            return constant_node(value, dtype, shape, layout, device, **kwargs)
        return super().__new__(cls)

    def __init__(self, value, dtype=None, shape=None, layout=None, device=None):
        if np.ndim(value) != 0:
            raise ValueError("types.Constant: only scalar constants are supported in stoker; "
                             f"got an array of shape {np.shape(value)}")
        self.value = value.item() if hasattr(value, "item") else value
        if dtype is None:
            if isinstance(value, (np.generic, np.ndarray)):  # NumPy scalars and 0-d arrays
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

    # DALI's conversions: the same value with another type (``Constant(15).float32()``).
    def bool(self):
        return ScalarConstant(self.value, DALIDataType.BOOL)

    def int8(self):
        return ScalarConstant(self.value, DALIDataType.INT8)

    def int16(self):
        return ScalarConstant(self.value, DALIDataType.INT16)

    def int32(self):
        return ScalarConstant(self.value, DALIDataType.INT32)

    def int64(self):
        return ScalarConstant(self.value, DALIDataType.INT64)

    def uint8(self):
        return ScalarConstant(self.value, DALIDataType.UINT8)

    def uint16(self):
        return ScalarConstant(self.value, DALIDataType.UINT16)

    def uint32(self):
        return ScalarConstant(self.value, DALIDataType.UINT32)

    def uint64(self):
        return ScalarConstant(self.value, DALIDataType.UINT64)

    def float16(self):
        return ScalarConstant(self.value, DALIDataType.FLOAT16)

    def float32(self):
        return ScalarConstant(self.value, DALIDataType.FLOAT)

    def float64(self):
        return ScalarConstant(self.value, DALIDataType.FLOAT64)


class ScalarConstant(Constant):
    """DALI's scalar constant (``types.ScalarConstant(2, types.UINT8)``): a bool, int or float
    (or a NumPy scalar) with the type it takes in expressions."""

    def __init__(self, value, dtype=None):
        if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
            raise TypeError(f"types.ScalarConstant: expected a bool, int or float, got "
                            f"{type(value).__name__} {value!r}; for arrays use types.Constant.")
        super().__init__(value, dtype)


def _makes_node(value, shape, layout, device, kwargs):
    scalar_shape = shape is None or shape == 1 or list(np.atleast_1d(shape)) in ([], [1])
    return (device is not None or layout is not None or bool(kwargs) or not scalar_shape or
            isinstance(value, (list, tuple)) or np.ndim(value) != 0)


def _list_dtype(values):
    """DALI's type for a list of Python numbers: float if any is a float, else int32, else bool
    (an empty list is float)."""
    kinds = set()
    for x in values:
        if isinstance(x, (bool, np.bool_)):
            kinds.add("bool")
        elif isinstance(x, (int, np.integer)):
            kinds.add("int")
        elif isinstance(x, (float, np.floating)):
            kinds.add("float")
        else:
            raise TypeError(f"types.Constant: the values must be numbers, got {type(x).__name__} "
                            f"{x!r}.")
    if "float" in kinds or not kinds:
        return DALIDataType.FLOAT
    return DALIDataType.INT32 if "int" in kinds else DALIDataType.BOOL


def constant_node(value, dtype=None, shape=None, layout=None, device=None, **kwargs):
    """An fn.constant node holding `value` (what types.Constant makes of arrays and lists, and
    what arithmetic with a list or an array builds)."""
    from ._schema import record_op
    if dtype is not None and not isinstance(dtype, DALIDataType):
        dtype = from_numpy_dtype(dtype) if not isinstance(dtype, int) else DALIDataType(dtype)
    if isinstance(value, (list, tuple)) and any(np.ndim(x) != 0 for x in value):
        value = np.asarray(value)  # nested lists: an array (DALI takes only flat ones)
    if isinstance(value, (list, tuple, bool, int, float)):
        seq = isinstance(value, (list, tuple))
        actual = _list_dtype(value if seq else [value])
        data = list(value) if seq else value
        if shape is None:
            shape = [len(data)] if seq else []
    else:
        arr = np.asarray(value)
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif dtype is None and arr.dtype in (np.int64, np.uint64):
            lim = np.iinfo(np.int32 if arr.dtype == np.int64 else np.uint32)
            if arr.size and (arr.min() < lim.min or arr.max() > lim.max):
                bad = arr.min() if arr.min() < lim.min else arr.max()
                raise OverflowError(f"types.Constant: {bad} does not fit in {lim.dtype}, the type "
                                    f"{arr.dtype} constants take without dtype; give "
                                    f"dtype=types.{'INT64' if arr.dtype == np.int64 else 'UINT64'}.")
            arr = arr.astype(lim.dtype)
        try:
            actual = from_numpy_dtype(arr.dtype)
        except TypeError:
            raise TypeError(f"types.Constant: the values must be numbers, got an array of "
                            f"{arr.dtype}.") from None
        data = arr.ravel().tolist()
        if shape is None:
            shape = list(arr.shape)
    if isinstance(shape, (int, np.integer)):
        shape = [int(shape)]
    integral = actual not in (DALIDataType.FLOAT16, DALIDataType.FLOAT, DALIDataType.FLOAT64)
    if integral:
        kwargs["idata"] = [int(x) for x in data] if isinstance(data, list) else int(data)
    else:
        kwargs["fdata"] = [float(x) for x in data] if isinstance(data, list) else float(data)
    node = record_op("constant", [], dict(kwargs, shape=list(shape),
                                          dtype=actual if dtype is None else dtype,
                                          layout=layout))
    return node.gpu() if device == "gpu" else node
