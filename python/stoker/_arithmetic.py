"""The operator behind arithmetic on pipeline nodes (``a + b``, ``-x``, ``x == 3``) and behind
``stoker.math``: one ``arithmetic_generic`` operator per expression, whose messages name what the
user wrote (``operator //``, ``math.clamp``)."""
from . import types as _types
from ._schema import record_op
from .pipeline import DataNode


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
            "bitand": "&", "bitor": "|", "bitxor": "^", "neg": "-", "abs": "abs()"}


def arithmetic(op, *operands, reflected=False, display=None):
    """Builds the operator behind `left <op> right` (or `-x`, or a stoker.math function of up to
    three operands) where at least one operand is a DataNode; None operands are left out."""
    operands = [x for x in operands if x is not None]
    if reflected:
        operands.reverse()
    display = display or f"operator {_SYMBOLS.get(op, op)}"
    nodes, kwargs = [], {"op": op, "_display_name": display}
    constants, dtypes, positions = [], [], []
    for pos, x in enumerate(operands):
        if isinstance(x, DataNode):
            nodes.append(x)
            continue
        c = x if isinstance(x, _types.Constant) else _types.Constant(x)
        if isinstance(c, DataNode):  # a list or an array: a constant node, broadcast per sample
            nodes.append(c)
            continue
        if not isinstance(c.value, (bool, int, float)):
            raise TypeError(f"{display}: operand {pos} must be a DataNode or a number, got "
                            f"{type(c.value).__name__} {c.value!r}.")
        constants.append(float(c.value))
        dtypes.append(c.dtype)
        positions.append(pos)
    if not nodes:
        raise TypeError(f"{display} needs at least one operand that is a DataNode (the output of "
                        f"an operator), got only constants: {operands!r}.")
    if constants:
        kwargs.update(constants=constants, constant_dtypes=dtypes, constant_positions=positions)
    if any(n.device == "gpu" for n in nodes):  # as DALI: a GPU operand takes the rest along
        nodes = [n.gpu() if n.device == "cpu" else n for n in nodes]
    return record_op("arithmetic_generic", nodes, kwargs)
