"""Element-wise math on pipeline nodes, as DALI's ``nvidia.dali.math``.

    from stoker import math
    angle = math.atan2(dy, dx)
    pixels = math.clamp(images * 1.2, 0, 255)

Each argument is a DataNode or a scalar constant (a Python int is int32, a float float32, a
``types.Constant`` has its own type); at least one must be a DataNode. Operands broadcast as in
NumPy. Types follow DALI: the functions of floating-point results (sqrt, exp, sin, fpow, atan2,
fabs, floor, ceil, ...) give float32 for integer inputs and keep float64 and float16; abs, min,
max, pow and clamp keep the promoted type of their operands (uint8 with int32 gives int32).
Boolean operands alone are refused, as in DALI.
"""
from ._arithmetic import arithmetic as _arithmetic

__all__ = ["abs", "fabs", "floor", "ceil", "clamp", "min", "max", "pow", "fpow", "sqrt", "rsqrt",
           "cbrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
           "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]


def _op(name, *operands):
    return _arithmetic(name, *operands, display=f"math.{name}")


def _unary(name, what):
    def f(input):
        return _op(name, input)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"{what} of each element of `input`.\n\nIntegers give float32; float32, "
                 "float64 and float16 keep their type.")
    return f


sqrt = _unary("sqrt", "The square root")
rsqrt = _unary("rsqrt", "The reciprocal of the square root (1 / sqrt(x))")
cbrt = _unary("cbrt", "The cube root")
exp = _unary("exp", "e raised to the power")
log = _unary("log", "The natural (base e) logarithm")
log2 = _unary("log2", "The base 2 logarithm")
log10 = _unary("log10", "The base 10 logarithm")
fabs = _unary("fabs", "The absolute value, as a floating-point number,")
floor = _unary("floor", "The largest integer not greater than each element, as a floating-point "
                        "number: the floor")
ceil = _unary("ceil", "The smallest integer not less than each element, as a floating-point "
                      "number: the ceiling")
sin = _unary("sin", "The sine (radians)")
cos = _unary("cos", "The cosine (radians)")
tan = _unary("tan", "The tangent (radians)")
asin = _unary("asin", "The arc sine")
acos = _unary("acos", "The arc cosine")
atan = _unary("atan", "The arc tangent")
sinh = _unary("sinh", "The hyperbolic sine")
cosh = _unary("cosh", "The hyperbolic cosine")
tanh = _unary("tanh", "The hyperbolic tangent")
asinh = _unary("asinh", "The inverse hyperbolic sine")
acosh = _unary("acosh", "The inverse hyperbolic cosine")
atanh = _unary("atanh", "The inverse hyperbolic tangent")


def abs(input):
    """The absolute value of each element of `input`, in its own type (integers stay integers;
    the most negative value of a signed type stays itself, as in two's complement)."""
    return _op("abs", input)


def min(left, right):
    """The smaller of `left` and `right`, element by element, in their promoted type. Where one
    is NaN the result is `right`, as in DALI."""
    return _op("min", left, right)


def max(left, right):
    """The larger of `left` and `right`, element by element, in their promoted type. Where one
    is NaN the result is `right`, as in DALI."""
    return _op("max", left, right)


def pow(base, exponent):
    """`base` raised to `exponent` (``base ** exponent``), in the promoted type: integers stay
    integers (wrapping around on overflow; a negative exponent gives 1 / base**-exponent
    truncated toward zero)."""
    return _op("pow", base, exponent)


def fpow(base, exponent):
    """`base` raised to `exponent` in floating point: integer operands give float32; a float64
    or float16 operand sets the type as in the promotion of the two."""
    return _op("fpow", base, exponent)


def atan2(x, y):
    """The arc tangent of ``x / y`` in the quadrant of the point (y, x), as C's atan2(x, y), with
    DALI's argument names. Integer operands give float32."""
    return _op("atan2", x, y)


def clamp(value, lo, hi):
    """`value` limited to the range [lo, hi], element by element, in the promoted type of the
    three: ``min(max(value, lo), hi)`` (lo > hi gives hi; a NaN value stays NaN)."""
    return _op("clamp", value, lo, hi)
