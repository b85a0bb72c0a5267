"""grid_mask (exact against DALI 2.4 and a NumPy reference on real photos) and jitter (GPU-only in
DALI: checked by the constraints every output pixel satisfies and by its seeds)."""
import numpy as np
import pytest
from PIL import Image

from _dali_ref import IMAGENET, real_dali, run, stoker_lib
from test_noise import LOC as _LOC, run_stoker

LOC = _LOC.replace("test_noise", "test_grid_mask_jitter")


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[::30][:6]
    if len(files) < 3:
        pytest.skip("no imagenet-sample photos")
    return [np.array(Image.open(f).convert("RGB")) for f in files]


def grid_mask_ref(img, tile=100, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0):
    """The grid in NumPy, float32 throughout as DALI computes it."""
    f = np.float32
    t = f(tile)
    ca, sa = f(np.cos(np.float64(f(angle)))) / t, f(np.sin(np.float64(f(angle)))) / t
    sx, sy = f(shift_x) / t, f(shift_y) / t
    y = np.arange(img.shape[0], dtype=f)[:, None]
    x = np.arange(img.shape[1], dtype=f)[None, :]
    fx = (-sx + y * -sa) + x * ca
    fy = (-sy + y * ca) + x * sa
    keep = ((fx - np.floor(fx)) >= f(ratio)) | ((fy - np.floor(fy)) >= f(ratio))
    return np.where(keep[..., None] if img.ndim == 3 else keep, img, 0).astype(img.dtype)


GRIDS = [dict(), dict(tile=40, ratio=0.3, angle=0.7, shift_x=13.5, shift_y=-7.25),
         dict(tile=17, ratio=0.61, angle=2.5), dict(tile=33, angle=-1.1, shift_x=100.3),
         dict(tile=3, ratio=0.5, angle=0.123456), dict(tile=50, ratio=0.0), dict(tile=50, ratio=1.0)]


@pytest.mark.parametrize("kw", GRIDS)
def test_grid_mask_equals_dali_and_numpy(photos, kw):
    s = run(stoker_lib(), lambda fn, t, x: fn.grid_mask(x, **kw), [photos], ["HWC"])[0]
    d = run(real_dali(), lambda fn, t, x: fn.grid_mask(x, **kw), [photos], ["HWC"])[0]
    assert s[1] == "HWC" and s[2] == "uint8"
    for a, b, p in zip(s[0], d[0], photos):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, grid_mask_ref(p, **kw))


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.float32])
def test_grid_mask_types_equal_dali(photos, dtype):
    data = [p.astype(dtype) for p in photos[:3]]
    kw = dict(tile=25, ratio=0.4, angle=0.3)
    s = run(stoker_lib(), lambda fn, t, x: fn.grid_mask(x, **kw), [data], ["HWC"])[0]
    d = run(real_dali(), lambda fn, t, x: fn.grid_mask(x, **kw), [data], ["HWC"])[0]
    for a, b in zip(s[0], d[0]):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, b)


def test_grid_mask_per_sample_args_equal_dali(photos):
    n = len(photos)
    tiles = [np.array(10 + 7 * i, np.int32) for i in range(n)]
    angles = [np.array(0.2 * i, np.float32) for i in range(n)]
    ratios = [np.array(0.2 + 0.1 * i, np.float32) for i in range(n)]
    build = lambda fn, t, x, ti, an, ra: fn.grid_mask(x, tile=ti, angle=an, ratio=ra, shift_x=3.0)
    s = run(stoker_lib(), build, [photos, tiles, angles, ratios], ["HWC", None, None, None])[0]
    d = run(real_dali(), build, [photos, tiles, angles, ratios], ["HWC", None, None, None])[0]
    for i, (a, b) in enumerate(zip(s[0], d[0])):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, grid_mask_ref(photos[i], tile=10 + 7 * i, angle=np.float32(0.2 * i),
                                                       ratio=np.float32(0.2 + 0.1 * i), shift_x=3.0))


def test_grid_mask_gray_and_odd_shapes(photos):
    gray = [np.ascontiguousarray(photos[0][..., 0]), np.zeros((1, 7), np.uint8) + 9]
    out = run_stoker(lambda fn, t, x: fn.grid_mask(x, tile=6, angle=0.4), [gray], ["HW"])[0]
    for o, g in zip(out, gray):
        np.testing.assert_array_equal(o, grid_mask_ref(g, tile=6, angle=0.4))
    out = run_stoker(lambda fn, t, x: fn.grid_mask(x), [[np.zeros((0, 4, 3), np.uint8)]], ["HWC"])[0]
    assert out[0].shape == (0, 4, 3)


# ---- jitter

def jitter_offsets(out, img, n, fill=0):
    """Per output pixel, the (dy, dx) it was read from, checking that one exists in the window:
    -(n // 2) .. n - 1 - n // 2 on each axis, or `fill` where the source lies outside."""
    h, w = img.shape[:2]
    lo, hi = -(n // 2), n - 1 - n // 2
    found = np.zeros((h, w), bool)
    pad = max(-lo, hi)
    big = np.pad(img.astype(np.float64), ((pad, pad), (pad, pad), (0, 0)))
    out_of_image = np.pad(np.zeros((h, w), bool), pad, constant_values=True)
    for dy in range(lo, hi + 1):
        for dx in range(lo, hi + 1):
            src = big[pad + dy:pad + dy + h, pad + dx:pad + dx + w]
            outside = out_of_image[pad + dy:pad + dy + h, pad + dx:pad + dx + w]
            match = np.where(outside, (out == fill).all(-1), (src == out).all(-1))
            found |= match
    return found


@pytest.mark.parametrize("n", [2, 3, 5])
def test_jitter_pixels_come_from_the_window(photos, n):
    out = run_stoker(lambda fn, t, x: fn.jitter(x, nDegree=n, fill_value=0), [photos[:3]], ["HWC"])[0]
    for o, p in zip(out, photos):
        assert o.shape == p.shape and o.dtype == p.dtype
        assert jitter_offsets(o, p, n).all()
        # Most pixels move: an unmoved copy would match everywhere.
        assert np.mean((o == p).all(-1)) < 0.6


def test_jitter_offsets_are_uniform():
    # A ramp image whose pixels name their position: out tells the offsets exactly.
    h, w, n = 300, 300, 4
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([yy, xx, np.zeros_like(yy)], -1).astype(np.int32)
    o = run_stoker(lambda fn, t, x: fn.jitter(x, nDegree=n, fill_value=-7), [[img]], ["HWC"])[0][0]
    inside = (o[..., 0] != -7)
    dy = (o[..., 0] - yy)[inside]
    dx = (o[..., 1] - xx)[inside]
    for d in (dy, dx):
        vals, counts = np.unique(d, return_counts=True)
        assert list(vals) == [-2, -1, 0, 1]
        assert np.all(np.abs(counts / d.size - 0.25) < 0.01)
    assert abs(np.corrcoef(dy, dx)[0, 1]) < 0.02
    # Sources outside the image give the fill value in every channel, only at the borders.
    outside = ~inside
    assert (o[outside] == -7).all()
    assert not outside[2:-1, 2:-1].any() and outside[0].any() and outside[-1].any()


def test_jitter_seeds_mask_and_identity(photos):
    build = lambda fn, t, x: fn.jitter(x, nDegree=3)
    a = run_stoker(build, [photos], ["HWC"], threads=1, seed=5, iterations=2)
    b = run_stoker(build, [photos], ["HWC"], threads=3, seed=5, iterations=2)
    for it in range(2):
        for p, q in zip(a[it], b[it]):
            np.testing.assert_array_equal(p, q)
    assert not np.array_equal(a[0][0], a[1][0])
    c = run_stoker(build, [photos], ["HWC"], threads=1, seed=6)[0]
    assert not np.array_equal(a[0][0], c[0])
    masks = [np.array(i % 2, np.int32) for i in range(len(photos))]
    out = run_stoker(lambda fn, t, x, m: fn.jitter(x, mask=m), [photos, masks], ["HWC", None])[0]
    for i, (o, p) in enumerate(zip(out, photos)):
        assert np.array_equal(o, p) == (i % 2 == 0)
    for n in (0, 1):
        out = run_stoker(lambda fn, t, x: fn.jitter(x, nDegree=n), [photos[:2]], ["HWC"])[0]
        for o, p in zip(out, photos):
            np.testing.assert_array_equal(o, p)


def test_jitter_sequences_and_float(photos):
    seq = [np.stack([photos[0][:200, :200], photos[1][:200, :200]])]
    o = run_stoker(lambda fn, t, x: fn.jitter(x, nDegree=2), [seq], ["FHWC"])[0][0]
    for f in range(2):
        assert jitter_offsets(o[f], seq[0][f], 2).all()
    fl = [photos[0].astype(np.float32) / 7]
    o = run_stoker(lambda fn, t, x: fn.jitter(x, nDegree=2, fill_value=-1.5,
                                              interp_type=t.INTERP_LINEAR), [fl], ["HWC"])[0][0]
    assert jitter_offsets(o, fl[0], 2, fill=-1.5).all()


def test_jitter_schema_matches_dali():
    dali = pytest.importorskip("nvidia.dali")
    from stoker import fn
    for name in ("nDegree", "fill_value", "interp_type", "mask", "seed"):
        assert name in dali.fn.jitter.__doc__ and name in fn.jitter.__doc__


# ---- errors

X = [np.zeros((4, 5, 3), np.uint8)]


@pytest.mark.parametrize("build,data,layout,exc,msg", [
    (lambda fn, t, a: fn.grid_mask(a, tile=0), X, "HWC", ValueError,
     r"^fn\.grid_mask" + LOC + r": argument 'tile' must be >= 1, got 0\.$"),
    (lambda fn, t, a: fn.grid_mask(a, tile=fn.cast(fn.random.uniform(range=(-5, -4), seed=1), dtype=t.INT32)),
     X, "HWC", ValueError, r"^fn\.grid_mask" + LOC + r" \[sample 0\]: argument 'tile' must be a positive "
     r"integer, got -4 for sample 0\.$"),
    (lambda fn, t, a: fn.grid_mask(a), [X[0].transpose(2, 0, 1).copy()], "CHW", ValueError,
     r"^fn\.grid_mask" + LOC + r": input 0 must be images with layout HWC \(or HW\), got layout 'CHW' with "
     r"3 dimensions\. Transpose channel-first data first \(fn\.transpose\(\.\.\., perm=\[1, 2, 0\]\)\)\.$"),
    (lambda fn, t, a: fn.grid_mask(a), [X[0].astype(bool)], "HWC", TypeError,
     r"^fn\.grid_mask" + LOC + r": input 0 has type bool, which grid_mask does not take\. Supported types: "
     r"uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64; cast the input first "
     r"\(fn\.cast\)\.$"),
    (lambda fn, t, a: fn.jitter(a, nDegree=-1), X, "HWC", ValueError,
     r"^fn\.jitter" + LOC + r": argument 'nDegree' must be in \[0, 65535\], got -1\.$"),
    (lambda fn, t, a: fn.jitter(a, interp_type=t.INTERP_LANCZOS3), X, "HWC", ValueError,
     r"^fn\.jitter" + LOC + r": argument 'interp_type' must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC "
     r"for this operator, got 3\.$"),
    (lambda fn, t, a: fn.jitter(a), [X[0][..., 0].copy()], "HW", ValueError,
     r"^fn\.jitter" + LOC + r": input 0 must be images with layout HWC or sequences with layout FHWC "
     r"\(channels last\), got layout 'HW' with 2 dimensions\. Decode with fn\.decoders\.image \(HWC\), or "
     r"transpose channel-first data first\.$"),
    (lambda fn, t, a: fn.jitter(a), [X[0].astype(bool)], "HWC", TypeError,
     r"^fn\.jitter" + LOC + r": input 0 has type bool, which jitter does not take\. Supported types: "
     r"uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64; cast the input first "
     r"\(fn\.cast\)\.$"),
])
def test_errors(build, data, layout, exc, msg):
    with pytest.raises(exc, match=msg):
        run_stoker(build, [data], [layout])
