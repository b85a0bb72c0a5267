"""constant, full, full_like, zeros, zeros_like, ones, ones_like, one_hot, lookup_table,
types.Constant and arrays in arithmetic, against NumPy and against DALI 2.4 on the same inputs:
values, dtypes, shapes, layouts and error messages."""
import numpy as np
import pytest

from _dali_ref import StokerModule, run_module
from stoker import fn, pipeline_def, types


def run(make, data=None, layout=None, batch_size=2):
    return run_module(StokerModule, make, data, layout, batch_size)


def run_dali(make, data=None, layout=None, batch_size=2):
    return run_module(pytest.importorskip("nvidia.dali"), make, data, layout, batch_size)


def same_as_dali(make, data=None, layout=None, batch_size=2):
    ours, theirs = run(make, data, layout, batch_size), run_dali(make, data, layout, batch_size)
    assert len(ours) == len(theirs)
    for (lo, a), (ld, b) in zip(ours, theirs):
        assert lo == ld
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape, (x, y)
            np.testing.assert_array_equal(x, y)
    return ours


def error_of(make, data=None, layout=None):
    with pytest.raises((ValueError, TypeError)) as e:
        run(make, data, layout)
    return str(e.value)


IMG = [np.arange(24, dtype=np.uint8).reshape(2, 4, 3) * 10 + i for i in range(2)]


# ---------------------------------------------------------------- constant

@pytest.mark.parametrize("kw", [
    dict(fdata=[1.5, 2, 3, 4, 5, 6], shape=[2, 3], layout="HW"),
    dict(idata=[1, 2, 3]),
    dict(idata=7, shape=[2, 2]),
    dict(idata=[300, -1, 2], dtype="UINT8"),
    dict(fdata=[1.4, 2.6, -1.6], dtype="INT32"),
    dict(fdata=[1.5, 2.5, -1.5], dtype="FLOAT16"),
    dict(fdata=5.0),
    dict(idata=[0, 1, 2], dtype="BOOL"),
    dict(idata=[2 ** 40], dtype="INT64"),
    dict(idata=[1, 2], dtype="FLOAT"),
])
def test_constant_same_as_dali(kw):
    def make(fn, types):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(types, k["dtype"])
        return fn.constant(**k)
    same_as_dali(make)


def test_constant_values():
    (lay, out), = run(lambda fn, types: fn.constant(fdata=[1.5, 2, 3, 4, 5, 6], shape=[2, 3], layout="HW"))
    assert lay == "HW"
    np.testing.assert_array_equal(out[1], np.float32([[1.5, 2, 3], [4, 5, 6]]))
    (_, out), = run(lambda fn, types: fn.constant(idata=[300, -1, 2], dtype=types.UINT8))
    np.testing.assert_array_equal(out[0], np.uint8([255, 0, 2]))
    # float64, which DALI's constant refuses; fdata is float32 as in DALI
    (_, out), = run(lambda fn, types: fn.constant(fdata=[0.1], dtype=types.FLOAT64))
    assert out[0].dtype == np.float64 and out[0][0] == np.float64(np.float32(0.1))


@pytest.mark.parametrize("kw,msg", [
    ({}, "argument 'fdata' or 'idata' is required: the values of the constant."),
    ({"fdata": [1.0], "idata": [1]}, "argument 'fdata' and 'idata' are mutually exclusive: give "
                                     "floating-point values in fdata or integers in idata, not both."),
    ({"fdata": [1.0, 2, 3], "shape": [2, 2]}, "argument 'shape' (2, 2) holds 4 values but fdata has "
                                              "3; give that many values, or one to fill the shape with."),
    ({"fdata": [1.0, 2, 3], "layout": "HW"}, "argument 'layout' 'HW' has 2 dimensions but the output "
                                             "has 1 dimension; give one letter per dimension or leave "
                                             "layout out."),
])
def test_constant_errors(kw, msg):
    err = error_of(lambda fn, types: fn.constant(**kw))
    assert err.startswith("fn.constant (test_constants.py:") and err.endswith(msg), err


# ---------------------------------------------------------------- zeros, ones, full and *_like

def test_fills_same_as_dali():
    def make(fn, types, x):
        return (fn.zeros(shape=[2, 3]), fn.zeros(), fn.ones(shape=[2, 3], dtype=types.FLOAT, layout="HW"),
                fn.ones(shape=4), fn.zeros_like(x), fn.ones_like(x, dtype=types.FLOAT),
                fn.full(np.float32(2.5), shape=[2, 2]), fn.full(np.int16(3), shape=[2, 2], layout="HW"),
                fn.full(types.Constant(3, dtype=types.UINT8), shape=[2, 2]),
                fn.full(types.Constant(np.array([1, 2, 3], np.int32)), shape=[2, 3]),
                fn.full_like(x, np.float32(7)),
                fn.full_like(x, types.Constant(np.array([1.4, 2, 3], np.float32))))
    out = same_as_dali(make, [np.ascontiguousarray(a[:, :3, 0]) for a in IMG], "HW")
    assert out[4][0] == "HW" and out[4][1][0].dtype == np.uint8
    np.testing.assert_array_equal(out[9][1][0], [[1, 2, 3], [1, 2, 3]])
    np.testing.assert_array_equal(out[11][1][1], [[1, 2, 3]] * 2)


def test_full_with_a_per_sample_shape():
    shapes = [np.array([1, 2], np.int32), np.array([3, 1], np.int32)]
    make = lambda fn, types, s: (fn.full(np.float32(1), shape=s), fn.zeros(shape=s, dtype=types.INT8))
    out = same_as_dali(make, shapes)
    assert [o.shape for o in out[0][1]] == [(1, 2), (3, 1)]


def test_fill_errors():
    err = error_of(lambda fn, types: fn.full(types.Constant(np.array([1, 2, 3], np.int32)), shape=[2, 2]))
    assert err.endswith("fill_value of sample 0 has shape (3,), which does not broadcast to the "
                        "output shape (2, 2) (each of its trailing dimensions must be 1 or equal to "
                        "the output's)."), err
    # DALI gives a scalar holding the first value here; NumPy refuses, as stoker does.
    err = error_of(lambda fn, types: fn.full(types.Constant(np.array([1, 2, 3], np.int32))))
    assert err.endswith("fill_value of sample 0 has shape (3,), which does not broadcast to the "
                        "output shape () (each of its trailing dimensions must be 1 or equal to "
                        "the output's)."), err
    err = error_of(lambda fn, types: fn.ones(shape=[2, 3], layout="HWC"))
    assert err.startswith("fn.ones (test_constants.py:") and err.endswith(
        "argument 'layout' 'HWC' has 3 dimensions but the output has 2 dimensions; give one letter "
        "per dimension or leave layout out."), err


# ---------------------------------------------------------------- one_hot

def labels(*samples_, dtype=np.int32):
    return [np.array(s, dtype) for s in samples_]


@pytest.mark.parametrize("data,layout,kw", [
    (labels([1], [2]), None, dict(num_classes=4)),
    (labels(1, 3), None, dict(num_classes=4)),
    (labels(1, 3), None, dict(num_classes=4, axis=0)),
    (labels([0, 2, 5, -1], [3, 3, 0, 1], dtype=np.int64), "W", dict(num_classes=4)),
    (labels([0, 2, 3], [1, 1, 1], dtype=np.int64), "W", dict(num_classes=4, axis=0, axis_name="C")),
    (labels([[0, 1], [2, 3]], [[3, 2], [1, 0]], dtype=np.uint8), "HW", dict(num_classes=4, axis=1, axis_name="C")),
    (labels([[0, 1], [2, 3]], [[3, 2], [1, 0]], dtype=np.uint8), "HW", dict(num_classes=4, axis=1)),
    (labels([1], [0]), None, dict(num_classes=3, on_value=7.6, off_value=-2.5, dtype="INT8")),
    (labels([1.7, 2.2], [-0.5, 2.9], dtype=np.float32), None, dict(num_classes=3)),
    (labels([1], [2]), None, dict()),
    (labels([[1]], [[0]]), None, dict(num_classes=3)),
    (labels([[1]], [[0]]), None, dict(num_classes=3, axis=0)),
    (labels([[1]], [[0]]), None, dict(num_classes=3, axis=-1)),
    (labels([1], [1, 2]), None, dict(num_classes=3)),
    (labels(1, 2), None, dict(num_classes=3, axis_name="C")),
    (labels([1], [2]), "W", dict(num_classes=3, axis_name="C")),
    (labels([2.0], [1.0], dtype=np.float64), None, dict(num_classes=3, dtype="FLOAT64")),
    (labels([1], [2]), None, dict(num_classes=3, on_value=0.5, off_value=-0.25)),
])
def test_one_hot_same_as_dali(data, layout, kw):
    def make(fn, types, x):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(types, k["dtype"])
        return fn.one_hot(x, **k)
    same_as_dali(make, data, layout)


def test_one_hot_values():
    data = labels([0, 2, 5, -1], [1, 1, 1, 1])
    (lay, out), = run(lambda fn, types, x: fn.one_hot(x, num_classes=3, axis=0, axis_name="C"), data, "W")
    want = np.zeros((3, 4), np.float32)
    want[0, 0] = want[2, 1] = 1
    np.testing.assert_array_equal(out[0], want)
    assert lay == "CW"
    # stoker takes float16 and bool where DALI refuses them
    (_, out), = run(lambda fn, types, x: fn.one_hot(x, num_classes=2, dtype=types.FLOAT16),
                    labels([1, 0], [0, 0], dtype=np.bool_))
    np.testing.assert_array_equal(out[0], np.float16([[0, 1], [1, 0]]))


def test_one_hot_saturates_out_of_range_values():
    # DALI wraps (300 -> 44 in uint8, C++ undefined behaviour); stoker saturates.
    (_, out), = run(lambda fn, types, x: fn.one_hot(x, num_classes=3, on_value=300, off_value=-5.7,
                                                     dtype=types.UINT8), labels([1], [2]))
    np.testing.assert_array_equal(out[0], np.uint8([0, 255, 0]))


@pytest.mark.parametrize("kw,layout,msg", [
    (dict(num_classes=3, axis=3), None, "argument 'axis' must be in [-1, 1] for 1 dimension of input, got 3."),
    (dict(num_classes=3, axis=-2), None, "argument 'axis' must be in [-1, 1] for 1 dimension of input, got -2."),
    (dict(num_classes=3, axis_name="CC"), None, "argument 'axis_name' must be a single character, got \"CC\"."),
    (dict(num_classes=3, axis_name="C"), None, "argument 'axis_name' names the new axis within the input's "
     "layout, but the input has no layout (its samples have 1 dimension); give the input a layout or leave "
     "axis_name out."),
])
def test_one_hot_errors(kw, layout, msg):
    err = error_of(lambda fn, types, x: fn.one_hot(x, **kw), labels([1, 2], [0, 0]), layout)
    assert err.startswith("fn.one_hot (test_constants.py:") and err.endswith(msg), err
    err = error_of(lambda fn, types, x: fn.one_hot(x, num_classes=-1), labels([1, 2], [0, 0]))
    assert err.startswith("fn.one_hot (test_constants.py:") and err.endswith(
        "): argument 'num_classes' must be >= 0, got -1."), err


# ---------------------------------------------------------------- lookup_table

@pytest.mark.parametrize("data,kw", [
    (labels([1, 4, 1, 0, 100, 2, 3, 4, -1], [5, 5, 5, 5, 5, 5, 5, 5, 5]),
     dict(keys=[0, 2, 3, 4, 5, 3], values=[0.2, 0.4, 0.5, 0.6, 0.7, 0.10], default_value=0.99)),
    (labels([[1, 4], [0, 2]], [[0, 0], [1, 1]], dtype=np.uint8), dict(keys=[0, 1], values=[10.6, 300], dtype="UINT8")),
    (labels([1], [2]), dict()),
    (labels([2 ** 40, 2], [2, 2], dtype=np.int64), dict(keys=[2], values=[5.0])),
    (labels([65535, 2], [1, 1], dtype=np.uint16), dict(keys=[65535], values=[5.0], dtype="INT16")),
])
def test_lookup_table_same_as_dali(data, kw):
    def make(fn, types, x):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(types, k["dtype"])
        return fn.lookup_table(x, **k)
    same_as_dali(make, data, "W" if data[0].ndim == 1 else "HW")


def test_lookup_table_values_and_old_name():
    data = labels([1, 4, 1, 0, 100, 2, 3, 4, -1], [0, 0, 0, 0, 0, 0, 0, 0, 0])
    (lay, out), = run(lambda fn, types, x: fn.lookup_table(
        x, keys=[0, 2, 3, 4, 5, 3], values=[0.2, 0.4, 0.5, 0.6, 0.7, 0.10], default_value=0.99), data, "W")
    np.testing.assert_allclose(out[0], np.float32([0.99, 0.6, 0.99, 0.2, 0.99, 0.4, 0.10, 0.6, 0.99]))
    assert lay == "W"
    (_, out), = run(lambda fn, types, x: fn.lookup_table(x, keys=[0], values=[5.0], output_dtype=types.INT16), data)
    assert out[1].dtype == np.int16 and (out[1] == 5).all()


@pytest.mark.parametrize("data,kw,msg", [
    (labels([1], [2]), dict(keys=[0, 1], values=[1.0]),
     "argument 'keys' and 'values' must have the same length, got 2 keys and 1 values."),
    (labels([1], [2]), dict(keys=[70000], values=[1.0]), "argument 'keys' must be in [0, 65535], got 70000."),
    (labels([1.0], [2.0], dtype=np.float32), dict(keys=[1], values=[1.0]),
     "the input must have an integer type (its values are the keys), got float32; cast it with fn.cast first."),
])
def test_lookup_table_errors(data, kw, msg):
    err = error_of(lambda fn, types, x: fn.lookup_table(x, **kw), data)
    assert "fn.lookup_table (test_constants.py:" in err and err.endswith(msg), err


# ---------------------------------------------------------------- arrays in arithmetic, types.Constant

ARITH = {
    "x+[1,2,3]": lambda fn, types, x: x + [1, 2, 3],
    "x+[1.5,2,3]": lambda fn, types, x: x + [1.5, 2, 3],
    "[1,2,3]-x": lambda fn, types, x: [1, 2, 3] - x,
    "x*np.int64": lambda fn, types, x: x * np.array([1, 2, 3]),
    "x*np.float32": lambda fn, types, x: x * np.array([1, 2, 3], np.float32),
    "x*np.float64": lambda fn, types, x: x * np.array([0.5, 2, 3]),
    "x*np.uint8": lambda fn, types, x: x * np.array([1, 2, 3], np.uint8),
    "x+Constant": lambda fn, types, x: x + types.Constant([1, 2, 3]),
    "x+Constant u8": lambda fn, types, x: x + types.Constant([1, 2, 3], dtype=types.UINT8),
    "x+Constant shape": lambda fn, types, x: x + types.Constant(5, shape=[1, 1, 3]),
    "x+Constant device": lambda fn, types, x: x + types.Constant(5, device="cpu"),
    "x+Constant layout": lambda fn, types, x: x + types.Constant([1, 2, 3], layout="C"),
    "x+np (4,3)": lambda fn, types, x: x + np.ones((4, 3), np.int32),
    "x+np (1,1,1,3)": lambda fn, types, x: x + np.ones((1, 1, 1, 3), np.int32),
    "x+(1,2,3)": lambda fn, types, x: x + (1, 2, 3),
    "x+np 0-d": lambda fn, types, x: x + np.array(5, np.int16),
    "x+np.int16": lambda fn, types, x: x + np.int16(5),
    "x+Constant(5)": lambda fn, types, x: x + types.Constant(5),
    "x>[10,20,30]": lambda fn, types, x: x > [10, 20, 30],
}


@pytest.mark.parametrize("name", list(ARITH))
def test_array_constants_in_arithmetic_same_as_dali(name):
    same_as_dali(ARITH[name], IMG, "HWC")


def test_array_constants_in_arithmetic_values():
    (lay, out), = run(ARITH["x+[1,2,3]"], IMG, "HWC")
    assert lay == "HWC" and out[1].dtype == np.int32
    np.testing.assert_array_equal(out[1], IMG[1].astype(np.int32) + np.int32([1, 2, 3]))
    (lay, out), = run(ARITH["x+np (1,1,1,3)"], IMG, "HWC")
    assert lay == "" and out[0].shape == (1, 2, 4, 3)
    # nested lists (DALI takes only flat ones) are arrays
    (_, out), = run(lambda fn, types, x: x + [[1, 2, 3]] * 4, IMG, "HWC")
    np.testing.assert_array_equal(out[0], IMG[0].astype(np.int32) + np.int32([1, 2, 3]))


def test_array_constants_that_do_not_broadcast():
    err = error_of(lambda fn, types, x: x + [1, 2], IMG, "HWC")
    assert "cannot broadcast the operands of sample 0: shapes (2, 4, 3) and (2,)." in err, err


def test_types_constant_kinds():
    c = types.Constant(5)
    assert isinstance(c, types.ScalarConstant) or type(c) is types.Constant
    assert c.value == 5 and c.dtype == types.INT32
    assert types.Constant(np.float64(2.5)).dtype == types.FLOAT64
    assert types.Constant(True).dtype == types.BOOL
    assert types.Constant(np.uint8(3)).dtype == types.UINT8
    with pytest.raises(OverflowError, match=r"^types.Constant: 8589934592 does not fit in int32, the "
                                            r"type int64 constants take without dtype; give "
                                            r"dtype=types.INT64\.$"):
        run(lambda fn, types: types.Constant(np.array([2 ** 33])))
    (_, out), = run(lambda fn, types: types.Constant(np.array([2 ** 33]), dtype=types.INT64))
    assert out[0].dtype == np.int64 and out[0][0] == 2 ** 33
    (lay, out), = run(lambda fn, types: types.Constant(np.arange(6, dtype=np.float64).reshape(2, 3), layout="HW"))
    assert lay == "HW" and out[0].dtype == np.float32 and out[0].shape == (2, 3)


def test_constant_inputs_of_operators():
    # a constant where an operator takes an input becomes a constant node, as in DALI
    make = lambda fn, types: (fn.full(2.5, shape=[2]), fn.full(7, shape=[1]), fn.full(True, shape=[1]),
                              fn.full([1, 2], shape=[2, 2]))
    out = same_as_dali(make)
    assert [o[1][0].dtype for o in out] == [np.float32, np.int32, np.bool_, np.int32]
    with pytest.raises(TypeError, match=r"^fn.full: input 0 must be a DataNode \(the output of another "
                                        r"operator\) or a constant \(a number, a list or a NumPy "
                                        r"array\), got dict\.$"):
        run(lambda fn, types: fn.full({}, shape=[1]))


def test_array_constants_on_decoded_jpegs(jpeg_files):
    files = [p for p, _ in jpeg_files[:3]]
    mean = np.array([0.485 * 255, 0.456 * 255, 0.406 * 255])

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        img = fn.decoders.image(jpegs)
        return img, (img - mean) * types.Constant([2.0, 1.0, 0.5]), img // [2, 3, 4]
    img, norm, div = pipe().run()
    for i in range(3):
        x = np.array(img[i])
        want = (x.astype(np.float32) - mean.astype(np.float32)) * np.float32([2.0, 1.0, 0.5])
        np.testing.assert_allclose(np.array(norm[i]), want, rtol=1e-6)
        np.testing.assert_array_equal(np.array(div[i]), x.astype(np.int32) // np.int32([2, 3, 4]))
    assert norm.layout() == "HWC" and np.array(norm[0]).dtype == np.float32
    assert np.array(div[0]).dtype == np.int32
