"""DataNode subscripts (``labels[0]``, ``boxes[:, 0]``, ``images[..., ::-1]``, ``x[None]``) and
``newaxis``, as NumPy indexes each sample; the batch dimension is implicit and never indexed."""
import numpy as np

from .pipeline import DataNode, _user_location

__all__ = ["newaxis"]

_MAX_SUBSCRIPTS = 32  # as the _tensor_subscript schema declares


class _NewAxis:
    """A new axis of extent 1, as ``None`` in a subscript; ``newaxis("F")`` also names it in the
    layout (``image[newaxis("F")]`` is an "FHWC" sequence of one frame), as DALI's
    ``dali.newaxis``."""

    def __init__(self, name=None):
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"newaxis: the axis name must be one letter (a str), got "
                                f"{type(name).__name__} {name!r}.")
            if len(name) != 1:
                raise ValueError(f"newaxis: the axis name must be one letter, got {name!r}.")
        self.name = name

    def __call__(self, name=None):
        return _NewAxis(name)

    def __repr__(self):
        return "newaxis" if self.name is None else f"newaxis({self.name!r})"


newaxis = _NewAxis()


def _text(s):
    if s is Ellipsis:
        return "..."
    if s is None:
        return "None"
    if isinstance(s, DataNode):
        return "<DataNode>"
    if isinstance(s, slice):
        parts = ["" if v is None else _text(v) for v in (s.start, s.stop, s.step)]
        return ":".join(parts if s.step is not None else parts[:2])
    return repr(s)


def subscript(node, key):
    """The _tensor_subscript operator for ``node[key]``."""
    key = key if isinstance(key, tuple) else (key,)
    display = f"subscript [{', '.join(_text(s) for s in key)}]"
    where = f"{display} ({_user_location()})"

    def index(v, what, bound=False):
        if isinstance(v, DataNode):
            return v
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{where}: {what} is a bool ({v!r}); NumPy reads a bool subscript as a "
                            "mask and DALI as 0 or 1. Use an int.")
        if isinstance(v, (int, np.integer)):
            v = int(v)
            if abs(v) < 2**63:
                return v
            if bound:  # past every extent either way: the same slice as the largest int64
                return (2**63 - 1) if v > 0 else -(2**63 - 1)
            raise IndexError(f"{where}: {what} is {v}, out of range for any extent (indices are "
                             "64-bit).")
        raise TypeError(f"{where}: {what} must be an int or a DataNode of integers, got "
                        f"{type(v).__name__} {v!r}. Subscripts take ints, slices, None (a new axis), "
                        "... and newaxis; lists and arrays of indices are not supported.")

    if len(key) > _MAX_SUBSCRIPTS:
        raise ValueError(f"{where}: at most {_MAX_SUBSCRIPTS} subscripts, got {len(key)}.")
    if sum(s is Ellipsis for s in key) > 1:
        raise IndexError(f"{where}: a subscript can hold one ellipsis ('...') at most.")
    kinds, kwargs, names = [], {}, []
    for k, s in enumerate(key):
        if s is Ellipsis:
            kinds.append(3)
        elif s is None or isinstance(s, _NewAxis):
            kinds.append(2)
            names.append(None if s is None else s.name)
        elif isinstance(s, slice):
            kinds.append(1)
            for part, word, v in (("lo", "start", s.start), ("hi", "stop", s.stop),
                                  ("step", "step", s.step)):
                if v is not None:
                    kwargs[f"{part}_{k}"] = index(v, f"the {word} of slice {k}", bound=True)
            if isinstance(kwargs.get(f"step_{k}"), int) and kwargs[f"step_{k}"] == 0:
                raise ValueError(f"{where}: the step of slice {k} is 0; a step must be nonzero "
                                 "(negative steps go backwards).")
        else:
            kinds.append(0)
            kwargs[f"at_{k}"] = index(s, f"subscript {k}")
    if any(isinstance(v, DataNode) and v.device != "cpu" for v in kwargs.values()):
        raise ValueError(f"{where}: an index that is a DataNode must be on the CPU (one integer "
                         "per sample), as DALI's are; this one is on the GPU.")
    named = [n for n in names if n is not None]
    if named and len(named) != len(names):
        raise ValueError(f"{where}: name every new axis or none of them (None and newaxis are "
                         "unnamed; newaxis('F') is named).")
    from ._schema import record_op
    return record_op("_tensor_subscript", [node],
                     dict(kwargs, kinds=kinds, new_axis_names="".join(named),
                          _display_name=display))
