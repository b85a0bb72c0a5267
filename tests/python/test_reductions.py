"""fn.reductions.* against NumPy and against DALI 2.4 on the same inputs (decoded JPEGs and
generated arrays): values, output dtypes, shapes, layouts and error messages."""
import numpy as np
import pytest

from _dali_ref import StokerModule, run_module
from stoker import fn, pipeline_def, types

RED = ["min", "max", "sum", "mean", "mean_square", "rms"]


def samples(shape, dtype, n=3, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        s = shape(i) if callable(shape) else shape
        if np.dtype(dtype).kind == "f":
            out.append((rng.standard_normal(s) * 50 + 10).astype(dtype))
        elif np.dtype(dtype) == np.bool_:
            out.append(rng.integers(0, 2, s).astype(bool))
        else:
            info = np.iinfo(dtype)
            out.append(rng.integers(max(info.min, -1000), min(info.max, 1000), s, endpoint=True).astype(dtype))
    return out


def dali():
    return pytest.importorskip("nvidia.dali")


def run(make, data, layout=None):
    return run_module(StokerModule, make, data, layout)


def run_dali(make, data, layout=None):
    return run_module(dali(), make, data, layout)


def np_reduce(name, x, axes, keep_dims=False, ddof=0):
    x64 = x.astype(np.float64)
    f = {"min": np.min, "max": np.max, "sum": np.sum, "mean": np.mean}
    if name in f:
        return f[name](x if name in ("min", "max") else x64, axis=axes, keepdims=keep_dims)
    if name == "mean_square":
        return np.mean(x64 * x64, axis=axes, keepdims=keep_dims)
    if name == "rms":
        return np.sqrt(np.mean(x64 * x64, axis=axes, keepdims=keep_dims))
    if name == "variance":
        return np.var(x64, axis=axes, keepdims=keep_dims, ddof=ddof)
    return np.std(x64, axis=axes, keepdims=keep_dims, ddof=ddof)


# ---------------------------------------------------------------- against NumPy

@pytest.mark.parametrize("name", RED)
@pytest.mark.parametrize("axes", [None, 0, 1, 2, [0, 1], [0, 2], [-1], [-3, -2]])
def test_reductions_match_numpy(name, axes):
    data = samples(lambda i: (4 + i, 5, 3), np.int16)
    out = run(lambda fn, types, x: getattr(fn.reductions, name)(x, axes=axes), data, "HWC")
    ax = None if axes is None else tuple(np.atleast_1d(axes))
    for got, x in zip(out[0][1], data):
        want = np_reduce(name, x, ax)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("name", ["std_dev", "variance"])
@pytest.mark.parametrize("axes,ddof", [(None, 0), ([0, 1], 0), ([0, 1], 1), (2, 2)])
def test_std_dev_and_variance_match_numpy(name, axes, ddof):
    data = samples(lambda i: (4 + i, 5, 3), np.float32)

    def make(fn, types, x):
        mean = fn.reductions.mean(x, axes=axes)
        return getattr(fn.reductions, name)(x, mean, axes=axes, ddof=ddof)
    out = run(make, data, "HWC")
    ax = None if axes is None else tuple(np.atleast_1d(axes))
    for got, x in zip(out[0][1], data):
        np.testing.assert_allclose(got, np_reduce(name, x, ax, ddof=ddof), rtol=1e-5)
        assert got.dtype == np.float32


def test_std_dev_takes_a_constant_or_a_kept_dims_mean():
    data = samples((6, 4, 3), np.float32, n=2)

    def make(fn, types, x):
        m_keep = fn.reductions.mean(x, axes=[0, 1], keep_dims=True)
        return (fn.reductions.std_dev(x, 10.0),
                fn.reductions.std_dev(x, m_keep, axes=[0, 1]),
                fn.reductions.variance(x, m_keep, axis_names="HW", keep_dims=True))
    const, keep, var = run(make, data, "HWC")
    for i, x in enumerate(data):
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(const[1][i], np.sqrt(np.mean((x64 - 10) ** 2)), rtol=1e-5)
        np.testing.assert_allclose(keep[1][i], np.std(x64, axis=(0, 1)), rtol=1e-5)
        np.testing.assert_allclose(var[1][i], np.var(x64, axis=(0, 1), keepdims=True), rtol=1e-5)
    assert (const[0], keep[0], var[0]) == ("", "C", "HWC")


def test_sums_of_integers_do_not_overflow():
    data = [np.full((300, 300, 3), 255, np.uint8)] * 2
    out = run(lambda fn, types, x: (fn.reductions.sum(x), fn.reductions.mean(x)), data, "HWC")
    assert out[0][1][0].dtype == np.uint64 and out[0][1][0] == 255 * 300 * 300 * 3
    assert out[1][1][0] == 255.0
    data = [np.full((300, 300, 3), -128, np.int8)] * 2
    out = run(lambda fn, types, x: fn.reductions.sum(x, axes=[0, 1]), data, "HWC")
    assert out[0][1][0].dtype == np.int64 and (out[0][1][0] == -128 * 300 * 300).all()


@pytest.mark.parametrize("keep_dims", [False, True])
def test_layouts_and_shapes(keep_dims):
    data = samples((2, 4, 5, 3), np.uint8, n=2)

    def make(fn, types, x):
        return (fn.reductions.sum(x, axis_names="HW", keep_dims=keep_dims),
                fn.reductions.max(x, axes=[0, 3], keep_dims=keep_dims),
                fn.reductions.mean(x, keep_dims=keep_dims),
                fn.reductions.min(x, axes=[], keep_dims=keep_dims))
    s, m, a, e = run(make, data, "FHWC")
    if keep_dims:
        assert [o[0] for o in (s, m, a, e)] == ["FHWC"] * 4
        assert s[1][0].shape == (2, 1, 1, 3) and m[1][0].shape == (1, 4, 5, 1)
        assert a[1][0].shape == (1, 1, 1, 1)
    else:
        assert [o[0] for o in (s, m, a, e)] == ["FC", "HW", "", "FHWC"]
        assert s[1][0].shape == (2, 3) and m[1][0].shape == (4, 5) and a[1][0].shape == ()
    np.testing.assert_array_equal(e[1][1], data[1])
    np.testing.assert_array_equal(s[1][1].reshape(2, 3), data[1].astype(np.uint64).sum(axis=(1, 2)))


DEFAULT_DTYPES = {
    # input: (min/max, sum, mean / mean_square / rms / std_dev / variance), as DALI 2.4 gives them
    np.uint8: (np.uint8, np.uint64, np.float32), np.int8: (np.int8, np.int64, np.float32),
    np.uint16: (np.uint16, np.uint64, np.float32), np.int16: (np.int16, np.int64, np.float32),
    np.uint32: (np.uint32, np.uint64, np.float32), np.int32: (np.int32, np.int64, np.float32),
    np.uint64: (np.uint64, np.uint64, np.float32), np.int64: (np.int64, np.int64, np.float32),
    np.float32: (np.float32, np.float32, np.float32),
    # types DALI 2.4 refuses; stoker follows NumPy
    np.float64: (np.float64, np.float64, np.float64), np.float16: (np.float16, np.float32, np.float32),
    np.bool_: (np.bool_, np.uint64, np.float32),
}


@pytest.mark.parametrize("dtype", list(DEFAULT_DTYPES))
def test_default_output_dtypes(dtype):
    data = samples((3, 4), dtype, n=2)

    def make(fn, types, x):
        m = fn.reductions.mean(x)
        return (fn.reductions.min(x), fn.reductions.max(x), fn.reductions.sum(x),
                fn.reductions.mean(x), fn.reductions.mean_square(x), fn.reductions.rms(x),
                fn.reductions.std_dev(x, m), fn.reductions.variance(x, m))
    outs = run(make, data, "HW")
    want = DEFAULT_DTYPES[dtype]
    got = [o[1][0].dtype for o in outs]
    assert got == [np.dtype(want[0])] * 2 + [np.dtype(want[1])] + [np.dtype(want[2])] * 5
    x = data[0]
    want_sum = x.astype(np.float64).sum() if np.dtype(dtype).kind == "f" else x.astype(np.int64).sum()
    np.testing.assert_allclose(outs[2][1][0], want_sum, rtol=1e-3 if dtype == np.float16 else 1e-6)
    np.testing.assert_allclose(outs[3][1][0], x.astype(np.float64).mean(), rtol=1e-3)


def test_explicit_dtypes_wrap_sums_and_truncate_means():
    data = [np.array([1, 2, 2, 2], np.int32), np.array([-1, -2, 250, 255], np.int32)]

    def make(fn, types, x):
        return (fn.reductions.mean(x, dtype=types.INT32), fn.reductions.sum(x, dtype=types.FLOAT),
                fn.reductions.mean_square(x, dtype=types.INT64), fn.reductions.rms(x, dtype=types.INT32),
                fn.reductions.sum(fn.cast(x, dtype=types.UINT8), dtype=types.UINT8))
    mean, fsum, ms, rms, u8 = run(make, data)
    assert [int(v) for v in mean[1]] == [1, 125]       # 1.75 and 125.5, truncated as DALI does
    assert fsum[1][0].dtype == np.float32 and fsum[1][1] == 502.0
    assert ms[1][0].dtype == np.int64 and int(ms[1][0]) == 3   # 13 / 4
    assert int(rms[1][0]) == 1                         # sqrt(3.25)
    assert u8[1][1].dtype == np.uint8 and int(u8[1][1]) == (0 + 0 + 250 + 255) % 256
    data = [np.array([[200, 100, 50, 10], [255, 255, 255, 255]], np.uint8)] * 2
    mean, rms = run(lambda fn, types, x: (fn.reductions.mean(x, axes=1, dtype=types.UINT8),
                                          fn.reductions.rms(x, axes=1, dtype=types.UINT8)), data)
    # exact, then truncated; DALI sums in uint8 and gives [26, 63] and [5, 1]
    np.testing.assert_array_equal(mean[1][0], [90, 255])
    np.testing.assert_array_equal(rms[1][0], [114, 255])


def test_empty_reductions_and_nan():
    data = [np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)]
    mn, mx, s, m = run(lambda fn, types, x: (fn.reductions.min(x, axes=0), fn.reductions.max(x, axes=0),
                                             fn.reductions.sum(x, axes=0), fn.reductions.mean(x, axes=0)), data)
    np.testing.assert_array_equal(mn[1][0], np.full(3, np.finfo(np.float32).max))
    np.testing.assert_array_equal(mx[1][0], np.full(3, np.finfo(np.float32).min))
    np.testing.assert_array_equal(s[1][0], np.zeros(3))
    assert np.isnan(m[1][0]).all()
    data = [np.array([1, np.nan, 3], np.float32), np.array([np.nan, 1, 3], np.float32)]
    mn, mx = run(lambda fn, types, x: (fn.reductions.min(x), fn.reductions.max(x)), data)
    assert [float(v) for v in mn[1]] == [1.0, 1.0] and [float(v) for v in mx[1]] == [3.0, 3.0]


def test_per_channel_statistics_of_jpegs(jpeg_files):
    files = [p for p, _ in jpeg_files[:3]]

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        img = fn.decoders.image(jpegs)
        mean = fn.reductions.mean(img, axis_names="HW")
        return img, mean, fn.reductions.std_dev(img, mean, axis_names="HW"), fn.reductions.max(img, axes=[0, 1])
    img, mean, std, mx = pipe().run()
    for i in range(3):
        x = np.array(img[i]).astype(np.float64)
        np.testing.assert_allclose(np.array(mean[i]), x.mean(axis=(0, 1)), rtol=1e-5)
        np.testing.assert_allclose(np.array(std[i]), x.std(axis=(0, 1)), rtol=1e-4)
        np.testing.assert_array_equal(np.array(mx[i]), np.array(img[i]).max(axis=(0, 1)))
    assert mean.layout() == "C" and std.layout() == "C"


# ---------------------------------------------------------------- against DALI

@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint32, np.float32])
@pytest.mark.parametrize("kw", [{}, {"axes": 0}, {"axes": [0, 2], "keep_dims": True}, {"axis_names": "WC"}])
def test_same_as_dali(dtype, kw):
    data = samples(lambda i: (3 + i, 4, 3), dtype)

    def make(fn, types, x):
        m = fn.reductions.mean(x, **kw)
        return tuple(getattr(fn.reductions, r)(x, **kw) for r in RED) + (
            fn.reductions.std_dev(x, m, **kw), fn.reductions.variance(x, m, ddof=1, **kw))
    ours, theirs = run(make, data, "HWC"), run_dali(make, data, "HWC")
    for (lo, a), (ld, b) in zip(ours, theirs):
        assert lo == ld
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_allclose(x, y, rtol=2e-6 if np.dtype(dtype).kind != "f" else 1e-5)


def test_dtype_choices_same_as_dali():
    data = samples((3, 4), np.uint8, n=2)
    # (mean and rms into uint8 differ: DALI accumulates in uint8 and wraps; see
    # test_explicit_dtypes_wrap_sums_and_truncate_means)
    for name, dt in [("sum", "UINT8"), ("sum", "FLOAT"), ("mean", "FLOAT"), ("mean_square", "UINT64")]:
        make = lambda fn, types, x: getattr(fn.reductions, name)(x, axes=1, dtype=getattr(types, dt))
        (_, a), = run(make, data)
        (_, b), = run_dali(make, data)
        for x, y in zip(a, b):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, rtol=1e-6)


# ---------------------------------------------------------------- errors

def error_of(make, data, layout="HWC"):
    with pytest.raises((ValueError, TypeError)) as e:
        run(make, data, layout)
    return str(e.value)


DATA = [np.zeros((2, 4, 3), np.uint8)] * 2


@pytest.mark.parametrize("kw,msg", [
    ({"axes": 3}, "argument 'axes' has 3, out of range for 3-D input; axes must be in [-3, 2]."),
    ({"axes": -4}, "argument 'axes' has -4, out of range for 3-D input; axes must be in [-3, 2]."),
    ({"axes": [0, -3]}, "argument 'axes' names axis 0 twice."),
    ({"axis_names": "X"}, "argument 'axis_names' has 'X', which is not in the input's layout 'HWC'; use axes to give axes by number."),
    ({"axes": 0, "axis_names": "H"}, "argument 'axes' and 'axis_names' are mutually exclusive; give one of them."),
    ({"dtype": types.INT32}, "argument 'dtype' cannot be int32 for uint8 input; use one of: uint64, uint8, float32."),
])
def test_errors(kw, msg):
    err = error_of(lambda fn, types, x: fn.reductions.sum(x, **kw), DATA)
    assert f"fn.reductions.sum (test_reductions.py:" in err
    assert err.endswith(msg), err


def test_mean_of_the_wrong_shape_is_an_error():
    def make(fn, types, x):
        return fn.reductions.std_dev(x, fn.reductions.mean(x, axes=0), axes=[0, 1])
    err = error_of(make, DATA)
    assert err.endswith("the mean of sample 0 has shape (4, 3); it must be one value or have the "
                        "reduced shape (3,) (or (1, 1, 3) with the reduced axes kept), as "
                        "fn.reductions.mean with the same axes gives."), err
    err = error_of(lambda fn, types, x: fn.reductions.variance(x, x, ddof=-1), DATA)
    assert err.endswith("argument 'ddof' must be >= 0, got -1."), err


def test_min_takes_no_dtype():
    with pytest.raises(TypeError, match=r"^fn.reductions.min got an unexpected argument 'dtype'\."):
        run(lambda fn, types, x: fn.reductions.min(x, dtype=types.FLOAT), DATA, "HWC")
