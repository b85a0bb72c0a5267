"""decoders.numpy against NumPy itself: .npy bytes written by np.save (and np.lib.format's other
format versions) decoded back in every dtype, shape, C and Fortran order and both byte orders,
from external_source and from readers.file; the dtype cast against fn.cast's rule computed in
NumPy; and the errors of bad bytes and mismatched batches."""
import io

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types


def npy_bytes(arr, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, arr)
    else:
        np.lib.format.write_array(b, arr, version=version)
    return np.frombuffer(b.getvalue(), np.uint8)


def decode(samples, threads=2, **kw):
    @pipeline_def(batch_size=len(samples), num_threads=threads, device_id=None)
    def p():
        return fn.decoders.numpy(fn.external_source(source=lambda: samples, batch=True), **kw)
    (out,) = p().run()
    return [np.array(out[i]) for i in range(len(out))], out


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", ">u2", "int32", ">i4",
                                   "uint32", "int64", ">i8", "uint64", "float16", ">f2",
                                   "float32", ">f4", "float64", ">f8"])
def test_every_dtype_and_byte_order(dtype):
    rng = np.random.default_rng(0)
    arrs = [(rng.standard_normal((3, 5, 2)) * 50).astype(dtype),
            (rng.standard_normal((4, 1, 7)) * 50).astype(dtype)]
    got, out = decode([npy_bytes(a) for a in arrs])
    assert out.layout() == ""
    for g, a in zip(got, arrs):
        assert g.dtype == a.dtype.newbyteorder("=") and g.shape == a.shape
        np.testing.assert_array_equal(g, a)


@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 0, 3), (3, 4), (2, 3, 4, 5)])
def test_shapes_and_fortran_order(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 3 - 5
    f = np.asfortranarray(a) if a.ndim else a  # (asfortranarray makes a 0-d array 1-D)
    samples = [npy_bytes(a), npy_bytes(f), npy_bytes(f.astype(">i4"))]
    for g in decode(samples)[0]:
        assert g.shape == a.shape
        np.testing.assert_array_equal(g, a)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_format_versions(version):
    a = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    (g,), _ = decode([npy_bytes(a, version)])
    np.testing.assert_array_equal(g, a)


def test_files_from_readers_file(tmp_path):
    rng = np.random.default_rng(1)
    arrs = {f"a{k}.npy": rng.integers(-1000, 1000, size=(k + 1, 3)).astype(np.int16) for k in range(5)}
    for name, a in arrs.items():
        np.save(tmp_path / name, a)

    @pipeline_def(batch_size=5, num_threads=2, device_id=None)
    def p():
        data, _ = fn.readers.file(files=[str(tmp_path / n) for n in arrs])
        return fn.decoders.numpy(data)
    (out,) = p().run()
    for i, a in enumerate(arrs.values()):
        np.testing.assert_array_equal(np.array(out[i]), np.load(tmp_path / list(arrs)[i]))


def cast_rule(a, dtype):
    """fn.cast's rule in NumPy: floats rounded half away from zero, NaN 0, then saturated."""
    info = np.iinfo(dtype)
    a = a.astype(np.float64)
    r = np.where(np.isnan(a), 0, np.trunc(a + np.copysign(0.5, a)))
    return np.clip(r, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("dtype,np_type", [(types.UINT8, np.uint8), (types.INT16, np.int16),
                                           (types.INT32, np.int32)])
def test_dtype_casts_every_sample(dtype, np_type):
    a = np.array([[1.7, -2.5, 2.5], [300.2, -1e10, np.nan]], np.float32)
    b = np.array([-3, 70000, 255], np.int64).reshape(1, 3)
    got, _ = decode([npy_bytes(a), npy_bytes(b)], dtype=dtype)
    for g, x in zip(got, (a, b)):
        assert g.dtype == np_type
        np.testing.assert_array_equal(g, cast_rule(x, np_type))
    got, _ = decode([npy_bytes(b), npy_bytes(b.astype(np.uint8))], dtype=types.FLOAT)
    np.testing.assert_array_equal(got[0], b.astype(np.float32))
    np.testing.assert_array_equal(got[1], b.astype(np.uint8).astype(np.float32))


def test_same_values_whatever_the_threads():
    rng = np.random.default_rng(2)
    samples = [npy_bytes(rng.standard_normal((k + 2, 9)).astype(np.float64)) for k in range(8)]
    one, _ = decode(samples, threads=1, dtype=types.FLOAT16)
    four, _ = decode(samples, threads=4, dtype=types.FLOAT16)
    for x, y in zip(one, four):
        np.testing.assert_array_equal(x, y)


def test_errors_name_the_sample():
    good = npy_bytes(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"fn.decoders.numpy .*sample 1 holds int16 elements, "
                                        r"sample 0 float32; .*give dtype= to cast them all"):
        decode([good, npy_bytes(np.zeros(3, np.int16))])
    with pytest.raises(ValueError, match=r"sample 1 is a 2-D array, sample 0 a 1-D one"):
        decode([good, npy_bytes(np.zeros((3, 1), np.float32))])
    with pytest.raises(ValueError, match=r"sample 1 is a 2-D array"):
        decode([good, npy_bytes(np.zeros((3, 1), np.int8))], dtype=types.FLOAT)
    with pytest.raises(stoker.DecodeError,
                       match=r"sample 0: 'sample 0' is not a valid .npy file: it does not start "
                             r"with the .npy magic"):
        decode([np.frombuffer(b"garbage, not numpy", np.uint8), good])
    cut = good[:-5]
    with pytest.raises(stoker.DecodeError, match=r"'sample 0' is truncated: an array of shape "
                                                r"\(3,\) and dtype '<f4' needs 12 bytes"):
        decode([cut])
    with pytest.raises(NotImplementedError, match=r"holds elements of NumPy dtype '<c16'"):
        decode([npy_bytes(np.array([1 + 2j]))])
    with pytest.raises(TypeError, match=r"the input must be the bytes of .npy files \(uint8\), got float32"):
        decode([np.zeros(4, np.float32)])
    with pytest.raises(ValueError, match=r"sample 0 must be 1-D bytes of a .npy file, got shape \(2, 2\)"):
        decode([np.zeros((2, 2), np.uint8)])
