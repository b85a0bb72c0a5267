"""experimental.readers.fits against astropy: image HDUs written by astropy.io.fits (every BITPIX,
BZERO/BSCALE conventions, 1- to 4-D, several HDUs a file) read back equal to astropy's own
reading, in its axis order; the files chosen as readers.numpy chooses them; sharding; and the
errors of bad files and arguments."""
import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

fits = pytest.importorskip("astropy.io.fits")


def write(path, *arrays, primary=None, scaled=None):
    hdus = [fits.PrimaryHDU(primary)]
    for a in arrays:
        hdus.append(fits.ImageHDU(a))
    if scaled:
        for h, (bscale, bzero) in zip(hdus[1:], scaled):
            h.scale("int16", bscale=bscale, bzero=bzero)
    fits.HDUList(hdus).writeto(path, overwrite=True)
    return str(path)


def read(batch_size=1, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
    def p():
        out = fn.experimental.readers.fits(name="R", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    outs = p().run()
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [[np.array(o[i]) for i in range(len(o))] for o in outs]


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64,
                                   np.uint16, np.uint32, np.uint64, np.int8])
def test_every_type_equals_astropy(tmp_path, dtype):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    if info is not None:
        a = rng.integers(info.min, info.max, size=(5, 7), dtype=dtype, endpoint=True)
    else:
        a = rng.standard_normal((5, 7)).astype(dtype) * 1000
    f = write(tmp_path / "a.fits", a)
    ref = fits.getdata(f, ext=1)
    ((got,),) = read(files=[f])
    assert got.dtype == ref.dtype.newbyteorder("=") == np.dtype(dtype)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("shape", [(9,), (3, 4), (2, 3, 4), (2, 1, 3, 5)])
def test_axis_order_and_several_hdus(tmp_path, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    b = (np.arange(6, dtype=np.int16) * 7 - 20).reshape(2, 3)
    f = write(tmp_path / "a.fits", a, b, primary=np.ones((2, 2), np.uint8))
    (pa,), (pb,), (pp,) = read(files=[f], hdu_indices=[2, 3, 1])
    np.testing.assert_array_equal(pa, a)
    np.testing.assert_array_equal(pb, b)
    np.testing.assert_array_equal(pp, np.ones((2, 2), np.uint8))
    assert pa.shape == fits.getdata(f, ext=1).shape


def test_scaled_integers(tmp_path):
    a = np.linspace(-50, 50, 24).reshape(4, 6)
    f = write(tmp_path / "s.fits", a.copy(), a.copy(), scaled=[(0.5, 3.0), (2.0, 10.0)])
    ref1, ref2 = fits.getdata(f, ext=1), fits.getdata(f, ext=2)
    (g1,), (g2,) = read(files=[f], hdu_indices=[2, 3])
    # BSCALE 0.5: non-integral scaling of 16-bit storage is float32 (cfitsio, astropy).
    assert g1.dtype == np.float32 and ref1.dtype == np.float32
    np.testing.assert_allclose(g1, ref1, rtol=0, atol=1e-5)
    # Integral BSCALE 2, BZERO 10 of 16-bit storage: values -65526..65544, int32.
    assert g2.dtype == np.int32
    np.testing.assert_array_equal(g2, np.round(ref2).astype(np.int64))


def test_file_root_filter_list_and_sharding(tmp_path):
    arrays = {f"f{k}.fits": np.full((2, 3), k, np.int16) for k in range(6)}
    for name, a in arrays.items():
        write(tmp_path / name, a)
    (tmp_path / "other.txt").write_text("not fits")
    (got,) = read(batch_size=6, file_root=str(tmp_path))
    assert [int(g[0, 0]) for g in got] == list(range(6))
    lst = tmp_path / "list.txt"
    lst.write_text("f3.fits\nf1.fits\n")
    (got,) = read(batch_size=2, file_list=str(lst))
    assert [int(g[0, 0]) for g in got] == [3, 1]

    seen = []
    for shard in range(3):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def p():
            return fn.experimental.readers.fits(file_root=str(tmp_path), shard_id=shard, num_shards=3)
        (o,) = p().run()
        seen += [int(np.array(o[i])[0, 0]) for i in range(2)]
    assert sorted(seen) == list(range(6))


def test_errors(tmp_path):
    good = write(tmp_path / "g.fits", np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"HDU 5 of '.*g.fits' does not exist: the file has 2 HDUs"):
        read(files=[good], hdu_indices=[5])
    with pytest.raises(ValueError, match=r"HDU 1 of '.*g.fits' holds no data \(NAXIS = 0\)"):
        read(files=[good], hdu_indices=[1])
    with pytest.raises(ValueError, match=r"hdu_indices.*counts HDUs from 1"):
        read(files=[good], hdu_indices=[0])
    with pytest.raises(ValueError, match=r"dtypes.*has 2 types for 1 hdu_indices"):
        read(files=[good], dtypes=[types.FLOAT, types.FLOAT])
    table = tmp_path / "t.fits"
    fits.HDUList([fits.PrimaryHDU(), fits.BinTableHDU.from_columns(
        [fits.Column(name="x", format="E", array=np.arange(3, dtype=np.float32))])]).writeto(table)
    with pytest.raises(NotImplementedError, match=r"is a BINTABLE, not an image"):
        read(files=[str(table)])
    comp = tmp_path / "c.fits"
    fits.HDUList([fits.PrimaryHDU(), fits.CompImageHDU(np.ones((8, 8), np.int16))]).writeto(comp)
    with pytest.raises(NotImplementedError, match=r"is a tile-compressed image"):
        read(files=[str(comp)])
    junk = tmp_path / "j.fits"
    junk.write_bytes(b"hello, not a FITS file" * 200)
    with pytest.raises(stoker.DecodeError, match=r"'.*j.fits' is not a FITS file"):
        read(files=[str(junk)])
    cut = tmp_path / "cut.fits"
    cut.write_bytes(open(good, "rb").read()[:-2880])
    with pytest.raises(stoker.DecodeError, match=r"'.*cut.fits' is truncated"):
        read(files=[str(cut)])
    (got,) = read(batch_size=2, files=[good, str(cut)], on_error="skip")
    assert all(g.shape == (2, 2) for g in got)
    mixed = write(tmp_path / "m.fits", np.zeros((2, 2), np.int16))
    with pytest.raises(ValueError, match=r"the images of HDU 2 in a batch must have one type"):
        read(batch_size=2, files=[good, mixed])
