"""Operators as functions: ``fn.readers.file``, ``fn.decoders.image``, ``fn.resize``, ...

Generated at import from stoker's operator schemas; each function's docstring lists its
arguments. Call them while a pipeline is being defined; they return DataNodes.
"""
import sys

from . import types as _types
from ._schema import SCHEMAS, build_namespace, make_fn, record_op
from .pipeline import DataNode

_tree, _to_module = build_namespace(__name__, make_fn)
__all__ = sorted(_tree)
for _k, _v in _tree.items():
    if isinstance(_v, dict):
        _m = _to_module(f"{__name__}.{_k}", _v)
        sys.modules[f"{__name__}.{_k}"] = _m
        globals()[_k] = _m
    else:
        globals()[_k] = _v


def _arithmetic(op, left, right, reflected=False):
    """Builds the operator behind `left <op> right` where at least one side is a DataNode."""
    if reflected:
        left, right = right, left
    nodes, kwargs = [], {"op": op}
    for side, x in (("left", left), ("right", right)):
        if x is None:
            continue
        if isinstance(x, DataNode):
            nodes.append(x)
            continue
        c = x if isinstance(x, _types.Constant) else _types.Constant(x)
        if "constant" in kwargs:
            raise TypeError(f"'{op}' needs at least one operand that is a DataNode.")
        kwargs["constant"] = float(c.value)
        kwargs["constant_dtype"] = c.dtype
        kwargs["constant_left"] = side == "left"
    return record_op("arithmetic_generic", nodes, kwargs)
