"""stoker.math and the arithmetic operators' `/`, `//` and `%`, against NumPy and against NVIDIA
DALI 2.4 run on the same inputs (external_source feeding fixed arrays, or ImageNet photos decoded
by both). DALI's semantics, checked by running it: integer inputs of the float functions give
float32; abs, min, max, pow and clamp keep the promoted type; `//` divides integers truncating
toward zero and floats without rounding; `%` is C's fmod (the dividend's sign); integer division
by zero is an error; float division by zero gives inf or NaN."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import stoker
from _dali_ref import imagenet_files, real_dali, run_fed
from stoker import fn, math, pipeline_def, types

HERE = pathlib.Path(__file__).name


def _real_dali():
    dfn, dtypes, dpdef = real_dali()
    import nvidia.dali.math as dmath
    return dfn, dtypes, dmath, dpdef


def _source(batch):
    return lambda: batch


def run(lib, build, datas, layouts=None):
    """build(fn, types, math, *inputs) -> node(s), with `datas` (per input, a list of per-sample
    arrays) fed by external_source; returns per output (samples, layout)."""
    fn_, types_, math_, pdef = lib
    return run_fed(pdef, fn_, lambda *xs: build(fn_, types_, math_, *xs), datas, layouts)


STOKER = (fn, types, math, pipeline_def)


def dali_or_none(build, datas, layouts=None):
    try:
        lib = _real_dali()
    except pytest.skip.Exception:
        return None
    return run(lib, build, datas, layouts)


def ulp_diff(a, b):
    """Distance in units of the last place between float arrays of one type (NaN == NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    # Map the sign-magnitude bit patterns onto a monotonic integer line.
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + top), ia)
    ib = np.where(ib < 0, -(ib + top), ib)
    d = np.abs(ia - ib)
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, d)


def assert_close_ulp(got, want, max_ulp):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    d = ulp_diff(got, want)
    assert d.max(initial=0) <= max_ulp, (got, want, d)


# ---------------------------------------------------------------- float functions

# name -> (NumPy reference, a domain of inputs where it is defined)
_FLOAT_FNS = {
    "sqrt": (np.sqrt, (0, 50)), "rsqrt": (lambda v: 1 / np.sqrt(v), (1, 50)),
    "cbrt": (np.cbrt, (-50, 50)), "exp": (np.exp, (-5, 5)), "log": (np.log, (1, 50)),
    "log2": (np.log2, (1, 50)), "log10": (np.log10, (1, 50)), "fabs": (np.fabs, (-50, 50)),
    "floor": (np.floor, (-50, 50)), "ceil": (np.ceil, (-50, 50)), "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)), "tan": (np.tan, (-1, 1)), "asin": (np.arcsin, (-1, 1)),
    "acos": (np.arccos, (-1, 1)), "atan": (np.arctan, (-50, 50)), "sinh": (np.sinh, (-5, 5)),
    "cosh": (np.cosh, (-5, 5)), "tanh": (np.tanh, (-5, 5)), "asinh": (np.arcsinh, (-50, 50)),
    "acosh": (np.arccosh, (1, 50)), "atanh": (np.arctanh, (-0.9, 0.9)),
}
_INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _inputs(dtype, lo, hi, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a, b = max(int(np.ceil(lo)), info.min), min(int(np.floor(hi)), info.max)
        return [rng.integers(a, b, size=s, endpoint=True).astype(dtype) for s in [(5, 3), (7, 1), (1, 2)]]
    return [rng.uniform(lo, hi, size=s).astype(dtype) for s in [(5, 3), (7, 1), (1, 2)]]


@pytest.mark.parametrize("name", sorted(_FLOAT_FNS))
def test_float_functions_give_float32_for_integers_and_keep_float_types(name):
    ref_fn, (lo, hi) = _FLOAT_FNS[name]
    dtypes = _INT_TYPES + [np.float32, np.float64]
    datas = [_inputs(dt, lo, hi, k) for k, dt in enumerate(dtypes)]

    def build(fn_, types_, math_, *xs):
        return tuple(getattr(math_, name)(x) for x in xs)

    mine = run(STOKER, build, datas)
    ref = dali_or_none(build, datas)
    for k, dt in enumerate(dtypes):
        out_t = np.float64 if dt == np.float64 else np.float32
        for j, x in enumerate(datas[k]):
            got = mine[k][0][j]
            want = ref_fn(x.astype(np.float64)).astype(out_t)
            assert got.dtype == out_t and got.shape == x.shape
            assert_close_ulp(got, want, 4)
            if ref is not None:
                assert ref[k][0][j].dtype == got.dtype
                assert_close_ulp(got, ref[k][0][j], 4)


def test_float_functions_keep_float16():
    # DALI's CPU arithmetic has no float16 ("Unsupported type: float16"); stoker computes in
    # float32 and keeps the type.
    x = [np.array([0.5, 1.0, 2.0, 9.0], np.float16)]
    out = run(STOKER, lambda f, t, m, a: (m.sqrt(a), m.exp(a), m.floor(a + a * a), m.abs(-a)), [x])
    for (got,), want in zip([o[0] for o in out],
                            [np.sqrt(x[0]), np.exp(x[0]), np.floor(x[0] + x[0] * x[0]),
                             x[0]]):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want.astype(np.float16))


def test_special_values_match_dali():
    x = [[np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1e-30], np.float64)]]
    names = ["sqrt", "rsqrt", "log", "log2", "log10", "exp", "floor", "ceil", "fabs", "abs",
             "acosh", "atanh", "cbrt"]

    def build(f, t, m, a):
        return tuple(getattr(m, n)(a) for n in names)

    mine = run(STOKER, build, x)
    with np.errstate(all="ignore"):
        v = x[0][0]
        want = [np.sqrt(v), 1 / np.sqrt(v), np.log(v), np.log2(v), np.log10(v), np.exp(v),
                np.floor(v), np.ceil(v), np.fabs(v), np.where(v < 0, -v, v), np.arccosh(v),
                np.arctanh(v), np.cbrt(v)]
    for n, (got,), w in zip(names, [o[0] for o in mine], want):
        np.testing.assert_array_equal(got, w, err_msg=n)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]),
                                      err_msg=n)
    ref = dali_or_none(build, x)
    if ref is not None:
        for n, (got,), (r,) in zip(names, [o[0] for o in mine], [o[0] for o in ref]):
            np.testing.assert_array_equal(got, r, err_msg=n)
            real = ~np.isnan(r)  # a NaN's sign bit means nothing
            np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(r[real]), err_msg=n)


def test_rsqrt_float32_is_exact_where_dali_approximates():
    # DALI's float32 rsqrt is an approximation: 1-2 ulp off, and NaN for 0 and inf. stoker
    # computes 1 / sqrt(x): inf for 0, 0 for inf (src/ops/README.md).
    x = np.array([0.0, np.inf, 4.0, 10.0, 3.0], np.float32)
    (got,), _ = run(STOKER, lambda f, t, m, a: m.rsqrt(a), [[x]])[0]
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(got, (1 / np.sqrt(x.astype(np.float64))).astype(np.float32))
    ref = dali_or_none(lambda f, t, m, a: m.rsqrt(a), [[x]])
    if ref is not None:
        r = ref[0][0][0]
        assert np.isnan(r[:2]).all()  # what DALI gives for 0 and inf
        assert_close_ulp(got[2:], r[2:], 4)


# ---------------------------------------------------------------- abs, min, max, pow, clamp

def test_abs_keeps_the_type_and_wraps_the_most_negative_value():
    datas = [[np.array([-128, -3, 0, 4, 127], np.int8)], [np.array([0, 7, 255], np.uint8)],
             [np.array([-(2 ** 63), -5, 5], np.int64)], [np.array([-0.0, -2.5, 3.0], np.float32)]]

    def build(f, t, m, a, b, c, d):
        return m.abs(a), m.abs(b), m.abs(c), m.abs(d), abs(a), m.fabs(a)

    mine = run(STOKER, build, datas)
    with np.errstate(over="ignore"):
        want = [np.abs(datas[0][0]), datas[1][0], np.abs(datas[2][0]),
                np.where(datas[3][0] < 0, -datas[3][0], datas[3][0]), np.abs(datas[0][0]),
                np.fabs(datas[0][0].astype(np.float32))]
    for (got,), w in zip([o[0] for o in mine], want):
        assert got.dtype == w.dtype
        np.testing.assert_array_equal(got, w)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(w))
    assert mine[3][0][0].tolist() == [-0.0, 2.5, 3.0] and np.signbit(mine[3][0][0][0])
    ref = dali_or_none(build, datas)
    if ref is not None:
        for (got,), (r,) in zip([o[0] for o in mine], [o[0] for o in ref]):
            assert got.dtype == r.dtype
            np.testing.assert_array_equal(got, r)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(r))


_PAIRS = [(np.uint8, np.int8, np.int16), (np.int32, np.float32, np.float32),
          (np.bool_, np.uint8, np.uint8), (np.int64, np.uint64, np.int64),
          (np.uint32, np.int32, np.int64), (np.float32, np.float64, np.float64),
          (np.int16, np.uint16, np.int32), (np.uint64, np.int8, np.int64),
          (np.float64, np.int64, np.float64), (np.uint8, np.uint8, np.uint8)]


@pytest.mark.parametrize("name", ["min", "max", "pow", "fpow", "atan2"])
def test_binary_functions_promote_types_as_dali(name):
    a = [np.array([1, 0, 2, 3, 1], t) for t, _, _ in _PAIRS]
    b = [np.array([1, 1, 3, 2, 0], u) for _, u, _ in _PAIRS]
    datas = [[x] for x in a] + [[y] for y in b]
    n = len(_PAIRS)

    def build(f, t, m, *xs):
        return tuple(getattr(m, name)(xs[k], xs[n + k]) for k in range(n))

    mine = run(STOKER, build, datas)
    ref = dali_or_none(build, datas)
    for k, (t, u, promoted) in enumerate(_PAIRS):
        out_t = np.dtype(promoted)
        if name in ("fpow", "atan2") and out_t.kind != "f":
            out_t = np.dtype(np.float32)
        x, y = a[k].astype(out_t), b[k].astype(out_t)
        want = {"min": np.where(x < y, x, y), "max": np.where(x > y, x, y),
                "pow": x ** y, "fpow": np.power(x, y), "atan2": np.arctan2(x, y)}[name]
        got = mine[k][0][0]
        assert got.dtype == out_t, (t, u, got.dtype)
        assert_close_ulp(got, want.astype(out_t), 2) if out_t.kind == "f" else \
            np.testing.assert_array_equal(got, want)
        if ref is not None:
            assert ref[k][0][0].dtype == got.dtype
            if out_t.kind == "f":
                assert_close_ulp(got, ref[k][0][0], 2)
            else:
                np.testing.assert_array_equal(got, ref[k][0][0])


# (the constant made with a library's `types`, its value, the type it promotes uint8 to, whether
# DALI takes it: DALI refuses NumPy scalars in arithmetic, stoker takes them with their type)
_CONSTS = {
    "int": (lambda t: 2, 2, np.int32, True),
    "float": (lambda t: 2.0, 2.0, np.float32, True),
    "negative": (lambda t: -1, -1, np.int32, True),
    "bool": (lambda t: True, True, np.uint8, True),
    "Constant-uint8": (lambda t: t.Constant(3, t.UINT8), 3, np.uint8, True),
    "np.float64": (lambda t: np.float64(0.5), 0.5, np.float64, False),
    "np.int16": (lambda t: np.int16(-3), -3, np.int16, False),
}


@pytest.mark.parametrize("name", sorted(_CONSTS))
def test_constants_take_dalis_types(name):
    make, value, promoted, dali_takes = _CONSTS[name]
    x = [[np.array([1, 0, 3, 200], np.uint8)]]

    def build(f, t, m, a):
        c = make(t)
        return (m.min(a, c), m.max(c, a), m.pow(a, c), m.fpow(c, a), m.atan2(a, c),
                m.clamp(a, c, 100))

    mine = run(STOKER, build, x)
    promoted = np.dtype(promoted)
    fl = promoted if promoted.kind == "f" else np.dtype(np.float32)
    clamp_t = promoted if promoted.kind == "f" else np.result_type(promoted, np.int32)
    want_types = [promoted, promoted, promoted, fl, fl, clamp_t]
    for (got,), wt in zip([o[0] for o in mine], want_types):
        assert got.dtype == wt, (name, got.dtype, wt)
    c = np.array(value).astype(promoted)
    v = x[0][0].astype(promoted)
    np.testing.assert_array_equal(mine[0][0][0], np.where(v < c, v, c))
    np.testing.assert_array_equal(mine[1][0][0], np.where(c > v, c, v))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(mine[3][0][0], np.power(c.astype(fl), v.astype(fl)))
    if name == "negative":
        # 1 ** -1 is 1 in stoker; DALI gives 0 for any negative integer exponent.
        assert mine[2][0][0].tolist() == [1, 0, 0, 0]
    ref = dali_or_none(build, x) if dali_takes else None
    if ref is not None:
        for k, ((got,), (r,)) in enumerate(zip([o[0] for o in mine], [o[0] for o in ref])):
            assert got.dtype == r.dtype
            if name == "negative" and k == 2:
                assert r.tolist() == [0, 0, 0, 0]
                continue
            if got.dtype.kind == "f":
                assert_close_ulp(got, r, 2)
            else:
                np.testing.assert_array_equal(got, r)


def test_min_max_nan_give_the_right_operand_as_dali():
    x = [[np.array([np.nan, 2.0, -1.0], np.float32)]]

    def build(f, t, m, a):
        return m.min(a, 0.0), m.min(0.0, a), m.max(a, 0.0), m.max(0.0, a)

    mine = run(STOKER, build, x)
    want = [[0, 0, -1], [np.nan, 0, -1], [0, 2, 0], [np.nan, 2, 0]]
    for (got,), w in zip([o[0] for o in mine], want):
        np.testing.assert_array_equal(got, np.array(w, np.float32))
    ref = dali_or_none(build, x)
    if ref is not None:
        for (got,), (r,) in zip([o[0] for o in mine], [o[0] for o in ref]):
            np.testing.assert_array_equal(got, r)


def test_integer_pow_wraps_and_negative_exponents_truncate():
    base = [np.array([2, 2, 0, -2, 3, 0, 1, -1, -1, 7], np.int32)]
    exp_ = [np.array([3, -1, -1, -3, 0, 0, -5, -5, -4, 31], np.int32)]
    u8 = [np.array([2, 3, 255], np.uint8)]
    u8e = [np.array([9, 6, 2], np.uint8)]

    def build(f, t, m, a, b, c, d):
        return m.pow(a, b), a ** b, m.pow(c, d), c ** 2

    mine = run(STOKER, build, [base, exp_, u8, u8e])
    with np.errstate(over="ignore"):
        big = np.array(7, np.int32) ** np.int32(31)
    # 1 ** -5 == 1 and (-1) ** -5 == -1 in stoker; DALI gives 0 for every negative exponent.
    want = [8, 0, 0, 0, 1, 1, 1, -1, 1, big]
    np.testing.assert_array_equal(mine[0][0][0], np.array(want, np.int32))
    np.testing.assert_array_equal(mine[1][0][0], np.array(want, np.int32))
    np.testing.assert_array_equal(mine[2][0][0], np.array([0, 217, 1], np.uint8))
    assert mine[2][0][0].dtype == np.uint8 and mine[3][0][0].dtype == np.int32
    np.testing.assert_array_equal(mine[3][0][0], u8[0].astype(np.int32) ** 2)
    ref = dali_or_none(build, [base, exp_, u8, u8e])
    if ref is not None:
        r = ref[0][0][0]
        differ = [6, 7, 8]  # 1 ** -5, (-1) ** -5, (-1) ** -4: DALI says 0
        keep = [k for k in range(len(want)) if k not in differ]
        np.testing.assert_array_equal(mine[0][0][0][keep], r[keep])
        assert r[differ].tolist() == [0, 0, 0]
        for k in (2, 3):
            np.testing.assert_array_equal(mine[k][0][0], ref[k][0][0])


def test_clamp_constants_nodes_broadcasting_and_types():
    v = [np.arange(-3, 9, dtype=np.int16).reshape(3, 4), np.array([[300, -5, 7, 2]], np.int16)]
    lo = [np.array([0, 1, 2, 3], np.uint8), np.array([5], np.uint8)]
    hi = [np.array(6, np.int32).reshape(1), np.array([20], np.int32)]
    f32 = [np.array([-1, 0.5, 3, np.nan], np.float32), np.array([0.25], np.float32)]
    f64 = [np.array([5.5, 5, 5, 5], np.float64), np.array([1.0], np.float64)]

    def build(f, t, m, a, b, c, d, e):
        return (m.clamp(a, 0, 5), m.clamp(a, b, c), m.clamp(d, 0.0, 1.0), m.clamp(a, 20, 10),
                m.clamp(b, e, 4), m.clamp(5, b, 4), m.clamp(d, 0, 1))

    datas = [v, lo, hi, f32, f64]
    mine = run(STOKER, build, datas)
    ref = dali_or_none(build, datas)
    types_ = [np.int32, np.int32, np.float32, np.int32, np.float64, np.int32, np.float32]
    for k, t in enumerate(types_):
        for got in mine[k][0]:
            assert got.dtype == t
    for j in range(2):
        a, b, c, d, e = (x[j] for x in datas)
        with np.errstate(invalid="ignore"):
            want = [np.minimum(np.maximum(a, 0), 5), np.minimum(np.maximum(a, b.astype(np.int32)), c),
                    np.clip(d, 0, 1), np.full(a.shape, 10), np.minimum(np.maximum(b, e), 4),
                    np.minimum(np.maximum(5, b.astype(np.int32)), 4), np.clip(d, 0, 1)]
        for k, w in enumerate(want):
            np.testing.assert_array_equal(mine[k][0][j], np.asarray(w).astype(types_[k]))
    assert np.isnan(mine[2][0][0][3])
    if ref is not None:
        for (gs, gl), (rs, rl) in zip(mine, ref):
            for g, r in zip(gs, rs):
                assert g.dtype == r.dtype and g.shape == r.shape
                np.testing.assert_array_equal(g, r)


def test_layout_comes_from_the_operand_of_most_dimensions():
    img = [np.zeros((2, 3, 3), np.uint8)]
    vec = [np.array([1, 2, 3], np.uint8)]
    build = lambda f, t, m, a, b: (m.clamp(a, b, 200), m.sqrt(a), m.max(b, a))
    mine = run(STOKER, build, [img, vec], layouts=["HWC", None])
    assert [o[1] for o in mine] == ["HWC", "HWC", "HWC"]
    ref = dali_or_none(build, [img, vec], layouts=["HWC", None])
    if ref is not None:
        assert [o[1] for o in ref] == ["HWC", "HWC", "HWC"]


# ---------------------------------------------------------------- //, %, / and zero divisors

def test_floordiv_and_mod_follow_c_for_integers_and_dali_for_floats():
    ia = [np.array([7, -7, 7, -7, 0, 5, -128], np.int8)]
    ib = [np.array([2, 2, -2, -2, 3, 5, -1], np.int8)]
    fa = [np.array([7.5, -7.5, 7.5, -7.5, 0, 1, -1, 0, 2, -2, 0.3], np.float32)]
    fb = [np.array([2, 2, -2, -2, 3, 0, 0, 0, 0.75, 0.75, 0.75], np.float32)]
    u8 = [np.array([200, 7], np.uint8)]
    i8 = [np.array([-3, -3], np.int8)]

    def build(f, t, m, a, b, c, d, e, g):
        return (a // b, a % b, c // d, c % d, c / d, e // g, e % g, a // 2.0, a % 2.5, -7 // b,
                7 % b, a / 2, e % 3)

    datas = [ia, ib, fa, fb, u8, i8]
    mine = run(STOKER, build, datas)
    A, B, FA, FB, U, I = (d[0] for d in datas)
    with np.errstate(all="ignore"):
        want = [
            (np.int8, np.trunc(A / B).astype(np.int64).astype(np.int8)),  # -128 // -1 wraps
            (np.int8, np.fmod(A, B)),
            (np.float32, FA / FB),
            (np.float32, np.fmod(FA, FB)),
            (np.float32, FA / FB),
            (np.int16, np.trunc(U.astype(np.int16) / I).astype(np.int16)),
            (np.int16, np.fmod(U.astype(np.int16), I.astype(np.int16))),
            (np.float32, A.astype(np.float32) / np.float32(2)),
            (np.float32, np.fmod(A.astype(np.float32), np.float32(2.5))),
            (np.int32, np.trunc(-7 / B).astype(np.int32)),
            (np.int32, np.fmod(np.int32(7), B.astype(np.int32))),
            (np.float32, A.astype(np.float32) / np.float32(2)),
            (np.int32, np.fmod(U.astype(np.int32), 3)),
        ]
    for k, (t, w) in enumerate(want):
        got = mine[k][0][0]
        assert got.dtype == t, k
        np.testing.assert_array_equal(got, np.asarray(w).astype(t), err_msg=str(k))
    assert mine[0][0][0].tolist() == [3, -3, -3, 3, 0, 1, -128]
    assert mine[1][0][0].tolist() == [1, -1, 1, -1, 0, 0, 0]
    assert mine[3][0][0][:4].tolist() == [1.5, -1.5, 1.5, -1.5]
    ref = dali_or_none(build, datas)
    if ref is not None:
        for (g,), (r,) in zip([o[0] for o in mine], [o[0] for o in ref]):
            assert g.dtype == r.dtype
            np.testing.assert_array_equal(g, r)


def test_float_division_by_zero_gives_inf_and_nan():
    ints = [np.array([1, -1, 0], np.int32)]
    zeros = [np.array([0, 0, 0], np.int32)]
    f = [np.array([1, -1, 0], np.float64)]

    def build(f_, t, m, a, z, x):
        return a / z, a / 0, x // 0, x % 0, a // 0.0, x / 0.0

    mine = run(STOKER, build, [ints, zeros, f])
    want = [(np.float32, [np.inf, -np.inf, np.nan])] * 2 + [
        (np.float64, [np.inf, -np.inf, np.nan]), (np.float64, [np.nan] * 3),
        (np.float32, [np.inf, -np.inf, np.nan]), (np.float64, [np.inf, -np.inf, np.nan])]
    for (got,), (t, w) in zip([o[0] for o in mine], want):
        assert got.dtype == t
        np.testing.assert_array_equal(got, np.array(w, t))
    ref = dali_or_none(build, [ints, zeros, f])
    if ref is not None:
        for (g,), (r,) in zip([o[0] for o in mine], [o[0] for o in ref]):
            assert g.dtype == r.dtype
            np.testing.assert_array_equal(g, r)


def _line(marker):
    """The line of this file that ends with `# <marker>`: where an expression was written."""
    src = pathlib.Path(__file__).read_text().splitlines()
    return next(k for k, line in enumerate(src, 1) if line.rstrip().endswith(f"# {marker}"))


_ZERO_DIVISORS = {  # marker: (expression, symbol, sample, index)
    "div-nodes": (lambda a, b: a // b, "//", 1, "(1,)"),  # div-nodes
    "mod-nodes": (lambda a, b: a % b, "%", 1, "(1,)"),  # mod-nodes
    "div-const": (lambda a, b: a // 0, "//", 0, "(0,)"),  # div-const
    "mod-const-left": (lambda a, b: 7 % b, "%", 1, "(1,)"),  # mod-const-left
}


@pytest.mark.parametrize("marker", sorted(_ZERO_DIVISORS))
def test_integer_division_by_zero_is_an_error_naming_the_operator(marker):
    expr, symbol, sample, index = _ZERO_DIVISORS[marker]
    a = [np.array([5, 1, 3], np.int32), np.array([4, 4, 4], np.int32)]
    b = [np.array([1, 1, 1], np.int32), np.array([2, 0, 1], np.int32)]

    def pipeline(lib_fn, pdef):
        @pdef(batch_size=2, num_threads=1, device_id=None)
        def pipe():
            return expr(lib_fn.external_source(source=_source(a)),
                        lib_fn.external_source(source=_source(b)))
        p = pipe()
        p.build()
        return p

    with pytest.raises(ValueError) as e:
        pipeline(fn, pipeline_def).run()
    assert str(e.value) == (
        f"operator {symbol} ({HERE}:{_line(marker)}) [sample {sample}]: integer division by zero: "
        f"the divisor is 0 at index {index} of the result (int32 operands). Integer // and % have "
        "no value there: keep the divisor nonzero (e.g. math.max(d, 1)), or divide floats (x / d "
        "gives inf).")
    try:
        dfn, _, _, dpdef = _real_dali()
    except pytest.skip.Exception:
        return
    with pytest.raises(ValueError, match="Integer division by zero"):  # DALI's type too
        pipeline(dfn, dpdef).run()


def test_most_negative_integer_divided_by_minus_one_wraps():
    # DALI dies of SIGFPE on int32 / int64 (it wraps int8 and int16): stoker wraps all of them.
    a = [np.array([np.iinfo(t).min, 5], t) for t in (np.int8, np.int16, np.int32, np.int64)]
    m1 = [np.array([-1, -1], t) for t in (np.int8, np.int16, np.int32, np.int64)]
    datas = [[x] for x in a] + [[y] for y in m1]

    def build(f, t, m, *xs):
        return tuple(op(xs[k], xs[4 + k]) for k in range(4)
                     for op in (lambda x, y: x // y, lambda x, y: x % y, lambda x, y: -x))

    mine = run(STOKER, build, datas)
    for k, t in enumerate((np.int8, np.int16, np.int32, np.int64)):
        lo = np.iinfo(t).min
        assert mine[3 * k][0][0].tolist() == [lo, -5]
        assert mine[3 * k + 1][0][0].tolist() == [0, 0]
        assert mine[3 * k + 2][0][0].tolist() == [lo, -5]
        assert all(mine[3 * k + j][0][0].dtype == t for j in range(3))


# ---------------------------------------------------------------- errors

_BOOL_ALONE = {  # marker: (expression, how the message names it, one operand)
    "bool-sqrt": (lambda a: math.sqrt(a), "math.sqrt", True),  # bool-sqrt
    "bool-neg": (lambda a: -a, "operator -", True),  # bool-neg
    "bool-add": (lambda a: a + a, "operator +", False),  # bool-add
    "bool-clamp": (lambda a: math.clamp(a, False, True), "math.clamp", False),  # bool-clamp
    "bool-min": (lambda a: math.min(a, a), "math.min", False),  # bool-min
    "bool-abs": (lambda a: abs(a), "operator abs()", True),  # bool-abs
}


@pytest.mark.parametrize("marker", sorted(_BOOL_ALONE))
def test_booleans_alone_are_refused_as_in_dali(marker):
    expr, what, one = _BOOL_ALONE[marker]
    b = [np.array([True, False])]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return expr(fn.external_source(source=_source(b)))
    p = pipe()
    p.build()
    with pytest.raises(TypeError) as e:
        p.run()
    assert str(e.value) == (
        f"{what} ({HERE}:{_line(marker)}): "
        f"{'the operand is boolean' if one else 'all operands are boolean'}, and this operation "
        "takes numbers (only *, &, |, ^ and comparisons take booleans alone). Cast first, e.g. "
        "fn.cast(x, dtype=types.INT32).")


def test_booleans_mixed_with_numbers_and_bool_products_work_as_in_dali():
    b = [np.array([True, False, True])]
    b2 = [np.array([True, True, False])]

    def build(f, t, m, a, c):
        return a * c, a & c, a + 1, m.clamp(a, 0, 1), a == c, a / 1, m.sqrt(a * 4)

    mine = run(STOKER, build, [b, b2])
    A, C = b[0], b2[0]
    want = [A & C, A & C, A.astype(np.int32) + 1, A.astype(np.int32), A == C,
            A.astype(np.float32), np.sqrt((A.astype(np.int32) * 4).astype(np.float32))]
    for (got,), w in zip([o[0] for o in mine], want):
        assert got.dtype == w.dtype
        np.testing.assert_array_equal(got, w)
    ref = dali_or_none(build, [b, b2])
    if ref is not None:
        for (g,), (r,) in zip([o[0] for o in mine], [o[0] for o in ref]):
            assert g.dtype == r.dtype
            np.testing.assert_array_equal(g, r)


def test_math_needs_a_datanode_and_numbers():
    with pytest.raises(TypeError) as e:
        math.sqrt(4)
    assert str(e.value) == ("math.sqrt needs at least one operand that is a DataNode (the output "
                            "of an operator), got only constants: [4].")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        a = fn.external_source(source=_source([np.zeros(2, np.float32)]))
        return math.clamp(a, "0", 1)
    with pytest.raises(TypeError) as e:
        pipe()
    assert str(e.value) == "math.clamp: operand 1 must be a DataNode or a number, got str '0'."


# ---------------------------------------------------------------- real images

def test_math_on_decoded_imagenet_photos_matches_numpy_and_dali():
    files = imagenet_files(4)
    datas = [[np.fromfile(f, np.uint8) for f in files]]

    def build(f, t, m, jpegs):
        img = f.decoders.image(jpegs, output_type=t.RGB)
        return (img, m.sqrt(img), m.clamp(img * 1.5, 0, 255), img // 3, img % 7, img / 255,
                m.atan2(img, 128), m.fpow(img, 0.5), m.max(img, 100), m.abs(img - 128))

    mine = run(STOKER, build, datas)
    imgs = mine[0][0]
    for j, im in enumerate(imgs):
        x = im.astype(np.int32)
        want = [np.sqrt(im.astype(np.float32)), np.clip(x * 1.5, 0, 255).astype(np.float32),
                x // 3, x % 7, (im / np.float32(255)).astype(np.float32),
                np.arctan2(im.astype(np.float32), np.float32(128)),
                np.power(im.astype(np.float32), np.float32(0.5)), np.maximum(x, 100),
                np.abs(x - 128)]
        for k, w in enumerate(want, 1):
            got = mine[k][0][j]
            assert got.dtype == w.dtype and got.shape == im.shape
            if got.dtype.kind == "f":
                assert_close_ulp(got, w, 2)
            else:
                np.testing.assert_array_equal(got, w)
    assert all(o[1] == "HWC" for o in mine)
    ref = dali_or_none(build, datas)
    if ref is not None:
        # The same decoder (libjpeg-turbo) gives the same pixels; compare on DALI's own pixels
        # anyway, so that a one-level decoder difference cannot hide in the math.
        for k in range(1, len(mine)):
            for j in range(len(files)):
                same = np.array_equal(mine[0][0][j], ref[0][0][j])
                g, r = mine[k][0][j], ref[k][0][j]
                assert g.dtype == r.dtype and g.shape == r.shape and ref[k][1] == "HWC"
                if same:
                    if g.dtype.kind == "f":
                        assert_close_ulp(g, r, 2)
                    else:
                        np.testing.assert_array_equal(g, r)


# ---------------------------------------------------------------- the DALI alias

def test_nvidia_dali_math_is_stoker_math_under_the_alias():
    code = ("import stoker, stoker.compat.dali as c; c.install(replace_dali=True); "
            "import nvidia.dali.math as m; from nvidia.dali import math as m2, newaxis; "
            "assert m is stoker.math and m2 is stoker.math and newaxis is stoker.newaxis; "
            "print(sorted(n for n in m.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(sorted(stoker.math.__all__))
    assert len(stoker.math.__all__) == 29


def test_operands_that_do_not_broadcast_name_the_function_and_the_sample():
    x = [np.zeros(2, np.float32), np.zeros(3, np.float32)]
    y = [np.zeros(2, np.float32), np.zeros(2, np.float32)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        a = fn.external_source(source=_source(x))
        b = fn.external_source(source=_source(y))
        return math.clamp(a, b, 1)  # no-broadcast
    p = pipe()
    p.build()
    with pytest.raises(ValueError) as e:
        p.run()
    assert str(e.value) == (f"math.clamp ({HERE}:{_line('no-broadcast')}): cannot broadcast the "
                            "operands of sample 1: shapes (3,) and (2,).")
