"""equalize, clahe and debayer (and the experimental.* names) against DALI 2.4 on the CPU and
against OpenCV, on real photos."""
import glob

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def

cv2 = pytest.importorskip("cv2")

FILES = sorted(glob.glob("/work/shared/testdata/imagenet-sample/*/*.JPEG") +
               glob.glob("/work/shared/testdata/imagenet-sample/*/*.jpg"))[:5]


@pytest.fixture(scope="module")
def photos():
    if not FILES:
        pytest.skip("no test photos")
    return [np.ascontiguousarray(cv2.cvtColor(cv2.imread(f), cv2.COLOR_BGR2RGB)) for f in FILES]


def run(lib, op, data, layout, **kw):
    """Runs `op` (a dotted name of lib.fn) on one batch of `data`; returns NumPy samples and the
    output layout."""
    f = lib.fn
    for part in op.split("."):
        f = getattr(f, part)

    @lib.pipeline_def(batch_size=len(data), num_threads=2, device_id=None)
    def pipe():
        x = lib.fn.external_source(source=lambda: data, layout=layout, batch=True)
        return f(x, **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.array(out[i]) for i in range(len(data))], out.layout()


def dali():
    return pytest.importorskip("nvidia.dali")


def per_channel(func, img):
    return np.stack([func(np.ascontiguousarray(img[..., c])) for c in range(img.shape[-1])], -1)


def mosaic(rgb, blue):
    """A Bayer mosaic of an RGB image, OpenCV's convention (blue at 1 + blue modulo 2)."""
    h, w, _ = rgb.shape
    yy, xx = np.mgrid[:h, :w]
    by, bx = blue
    is_b = ((yy + 1) % 2 == by) & ((xx + 1) % 2 == bx)
    is_r = (yy % 2 == by) & (xx % 2 == bx)
    m = rgb[..., 1].copy()
    m[is_b] = rgb[..., 2][is_b]
    m[is_r] = rgb[..., 0][is_r]
    return m


def even(img):
    return np.ascontiguousarray(img[:img.shape[0] // 2 * 2, :img.shape[1] // 2 * 2])


CV_CODES = {(0, 0): "BG", (0, 1): "GB", (1, 0): "GR", (1, 1): "RG"}


def error_of(op, data, layout, **kw):
    with pytest.raises(Exception) as e:
        run(stoker, op, data, layout, **kw)
    return e


# ---------------------------------------------------------------- equalize

@pytest.mark.parametrize("name", ["equalize", "experimental.equalize"])
def test_equalize_hwc_matches_opencv_and_dali(photos, name):
    out, layout = run(stoker, name, photos, "HWC")
    assert layout == "HWC"
    for img, o in zip(photos, out):
        assert o.dtype == np.uint8 and o.shape == img.shape
        np.testing.assert_array_equal(o, per_channel(cv2.equalizeHist, img))
    ref, _ = run(dali(), name, photos, "HWC")
    for o, r in zip(out, ref):
        np.testing.assert_array_equal(o, r)


def test_equalize_layouts_and_sequences(photos):
    d = dali()
    chw = [np.ascontiguousarray(p.transpose(2, 0, 1)) for p in photos[:3]]
    gray = [np.ascontiguousarray(p[..., 1]) for p in photos[:3]]
    seq = [np.stack([photos[0][:120, :150], photos[1][:120, :150], photos[2][:120, :150]])]
    fchw = [np.ascontiguousarray(seq[0].transpose(0, 3, 1, 2))]
    fhw = [np.ascontiguousarray(seq[0][..., 0])]
    cases = [(chw, "CHW"), (gray, "HW"), (seq, "FHWC"), (fchw, "FCHW"), (fhw, "FHW")]
    for data, layout in cases:
        out, l = run(stoker, "equalize", data, layout)
        ref, rl = run(d, "equalize", data, layout)
        assert l == rl == layout
        for o, r in zip(out, ref):
            np.testing.assert_array_equal(o, r)
    # OpenCV per plane / per frame.
    out, _ = run(stoker, "equalize", chw, "CHW")
    for x, o in zip(chw, out):
        np.testing.assert_array_equal(o, np.stack([cv2.equalizeHist(p) for p in x]))
    out, _ = run(stoker, "equalize", seq, "FHWC")
    for f in range(3):
        np.testing.assert_array_equal(out[0][f], per_channel(cv2.equalizeHist, seq[0][f]))


def test_equalize_odd_images():
    rng = np.random.RandomState(3)
    data = [np.full((5, 7, 3), 9, np.uint8),                    # one level: unchanged
            np.array([[[0], [255]]], np.uint8),                  # 1x2, two levels
            rng.randint(0, 3, (4, 5, 1)).astype(np.uint8),       # ties everywhere
            rng.randint(0, 256, (1, 1, 4)).astype(np.uint8),     # 1x1, 4 channels
            rng.randint(100, 110, (9, 3, 5)).astype(np.uint8)]   # 5 channels
    out, _ = run(stoker, "equalize", data, "HWC")
    for x, o in zip(data, out):
        np.testing.assert_array_equal(o, per_channel(cv2.equalizeHist, x))
    np.testing.assert_array_equal(out[0], data[0])
    ref, _ = run(dali(), "equalize", data, "HWC")
    for o, r in zip(out, ref):
        np.testing.assert_array_equal(o, r)


def test_equalize_empty_sample():
    # DALI fails in OpenCV's merge on an empty image; stoker returns it empty.
    out, _ = run(stoker, "equalize", [np.zeros((0, 4, 3), np.uint8), np.ones((2, 2, 3), np.uint8)], "HWC")
    assert out[0].shape == (0, 4, 3)


def test_equalize_errors(photos):
    e = error_of("equalize", [photos[0].astype(np.float32)], "HWC")
    assert e.type is TypeError and "fn.equalize" in str(e.value)
    assert ("input 0 must be of type UINT8, got float32. Convert it first, e.g. with "
            "fn.cast(..., dtype=types.UINT8).") in str(e.value)
    e = error_of("equalize", [photos[0].astype(np.uint16)], "HWC")
    assert "input 0 must be of type UINT8, got uint16." in str(e.value)
    e = error_of("equalize", [photos[0]], "HWD")
    assert "fn.equalize" in str(e.value) and "HWD" in str(e.value)


# ---------------------------------------------------------------- clahe

def cv_clahe(img, tx, ty, clip):
    return cv2.createCLAHE(clipLimit=clip, tileGridSize=(tx, ty)).apply(img)


@pytest.mark.parametrize("tx,ty,clip", [(8, 8, 2.0), (4, 6, 3.0), (3, 5, 1.0), (7, 3, 40.0),
                                        (1, 1, 2.0), (16, 2, 0.0), (400, 8, 2.0)])
def test_clahe_gray_matches_opencv(photos, tx, ty, clip):
    gray = [cv2.cvtColor(p, cv2.COLOR_RGB2GRAY)[..., None] for p in photos]
    out, layout = run(stoker, "clahe", gray, "HWC", tiles_x=tx, tiles_y=ty, clip_limit=clip)
    assert layout == "HWC"
    for g, o in zip(gray, out):
        assert o.dtype == np.uint8 and o.shape == g.shape
        np.testing.assert_array_equal(o[..., 0], cv_clahe(g[..., 0], tx, ty, clip))


def test_clahe_matches_dali(photos):
    d = dali()
    gray = [cv2.cvtColor(p, cv2.COLOR_RGB2GRAY)[..., None] for p in photos]
    for data, kw in [(gray, dict(tiles_x=5, tiles_y=7, clip_limit=2.5)),
                     (photos, dict(tiles_x=8, tiles_y=8, clip_limit=2.0, luma_only=False)),
                     (gray, dict(tiles_x=8, tiles_y=8, clip_limit=-1.0, luma_only=False))]:
        out, _ = run(stoker, "clahe", data, "HWC", **kw)
        ref, _ = run(d, "clahe", data, "HWC", **kw)
        for o, r in zip(out, ref):
            np.testing.assert_array_equal(o, r)


def test_clahe_per_channel_matches_opencv(photos):
    out, _ = run(stoker, "clahe", photos, "HWC", tiles_x=6, tiles_y=4, clip_limit=3.0, luma_only=False)
    for p, o in zip(photos, out):
        np.testing.assert_array_equal(o, per_channel(lambda c: cv_clahe(c, 6, 4, 3.0), p))


def test_clahe_luma_close_to_opencv_lab(photos):
    """luma_only on RGB: CLAHE of Lab's L. OpenCV (and so DALI) converts with fixed-point tables,
    stoker with the exact formulas: a few levels apart at most, equal on average."""
    out, _ = run(stoker, "clahe", photos, "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0)
    ref_dali, _ = run(dali(), "clahe", photos, "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0)
    for p, o, rd in zip(photos, out, ref_dali):
        lab = cv2.cvtColor(p, cv2.COLOR_RGB2Lab)
        lab[..., 0] = cv_clahe(lab[..., 0], 8, 8, 2.0)
        ref = cv2.cvtColor(lab, cv2.COLOR_Lab2RGB)
        np.testing.assert_array_equal(ref, rd)   # DALI is OpenCV's Lab path
        diff = np.abs(o.astype(int) - ref)
        assert diff.max() <= 12 and diff.mean() < 2.0, (diff.max(), diff.mean())
        assert (diff <= 4).mean() > 0.95
        # The contrast really changed, the same way.
        assert np.abs(o.astype(int) - p).mean() > 3 * diff.mean()
    # A gray RGB image stays gray (a = b = 0) and follows the L channel's CLAHE.
    g = np.repeat(cv2.cvtColor(photos[0], cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)
    o = run(stoker, "clahe", [g], "HWC", tiles_x=4, tiles_y=4, clip_limit=2.0)[0][0]
    assert np.abs(o[..., 0].astype(int) - o[..., 1]).max() <= 1
    assert np.abs(o[..., 2].astype(int) - o[..., 1]).max() <= 1


def test_clahe_small_images():
    rng = np.random.RandomState(0)
    data = [rng.randint(0, 256, (3, 5, 1)).astype(np.uint8), np.full((1, 1, 1), 5, np.uint8),
            rng.randint(0, 256, (2, 17, 1)).astype(np.uint8)]
    out, _ = run(stoker, "clahe", data, "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0)
    for x, o in zip(data, out):
        np.testing.assert_array_equal(o[..., 0], cv_clahe(x[..., 0], 8, 8, 2.0))
    ref, _ = run(dali(), "clahe", data, "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0)
    for o, r in zip(out, ref):
        np.testing.assert_array_equal(o, r)


def test_clahe_errors(photos):
    g = [photos[0][..., :1].copy()]
    e = error_of("clahe", g, "HWC", tiles_x=0, tiles_y=8, clip_limit=2.0)  # DALI: SIGFPE
    assert e.type is ValueError
    assert "fn.clahe" in str(e.value) and "argument 'tiles_x' must be >= 1, got 0." in str(e.value)
    e = error_of("clahe", g, "HWC", tiles_x=8, tiles_y=8)
    assert "fn.clahe" in str(e.value) and "clip_limit" in str(e.value)
    e = error_of("clahe", g, "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0, bins=100)
    assert "fn.clahe" in str(e.value)
    assert "argument 'bins' must be a power of 2 (e.g. 256), got 100." in str(e.value)
    e = error_of("clahe", [np.concatenate([g[0]] * 2, -1)], "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0)
    assert "input 0 must have 1 (grayscale) or 3 (RGB) channels, but sample 0 has shape" in str(e.value)
    e = error_of("clahe", [g[0].astype(np.uint16)], "HWC", tiles_x=8, tiles_y=8, clip_limit=2.0)
    assert ("input 0 must be of type UINT8, got uint16. Convert it first, e.g. with "
            "fn.cast(..., dtype=types.UINT8).") in str(e.value)
    e = error_of("clahe", [g[0][..., 0]], "HW", tiles_x=8, tiles_y=8, clip_limit=2.0)
    assert "fn.clahe" in str(e.value) and "HW" in str(e.value)


# ---------------------------------------------------------------- debayer

@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("blue", sorted(CV_CODES))
def test_debayer_bilinear_matches_opencv(photos, dtype, blue):
    scale = 257 if dtype == np.uint16 else 1
    rgb = [even(p).astype(dtype) * dtype(scale) for p in photos[:3]]
    mos = [mosaic(p, blue) for p in rgb]
    out, layout = run(stoker, "debayer", mos, "HW", blue_position=list(blue))
    assert layout == "HWC"
    code = getattr(cv2, "COLOR_Bayer%s2RGB" % CV_CODES[blue])
    for p, m, o in zip(rgb, mos, out):
        assert o.dtype == dtype and o.shape == p.shape
        np.testing.assert_array_equal(o, cv2.cvtColor(m, code))
        # and it is a demosaicing: close to the photo it came from
        assert np.abs(o.astype(float) - p).mean() < 6 * scale
    gray, _ = run(stoker, "debayer", mos, "HW", blue_position=list(blue), algorithm="gray_ocv")
    gcode = getattr(cv2, "COLOR_Bayer%s2GRAY" % CV_CODES[blue])
    for m, o in zip(mos, gray):
        assert o.shape == m.shape + (1,)
        np.testing.assert_array_equal(o[..., 0], cv2.cvtColor(m, gcode))


def test_debayer_matches_dali(photos):
    d = dali()
    mos = [mosaic(even(p), (1, 0))[..., None] for p in photos]
    for name in ["debayer", "experimental.debayer"]:
        for alg in ["bilinear_ocv", "gray_ocv"]:
            out, l = run(stoker, name, mos, "HWC", blue_position=[1, 0], algorithm=alg)
            ref, rl = run(d, name, mos, "HWC", blue_position=[1, 0], algorithm=alg)
            assert l == rl == "HWC"
            for o, r in zip(out, ref):
                np.testing.assert_array_equal(o, r)


def test_debayer_sequences_and_per_sample_positions(photos):
    d = dali()
    frames = [even(p)[:200, :240] for p in photos[:3]]
    seq = [np.stack([mosaic(f, (0, 1)) for f in frames]), np.stack([mosaic(f, (1, 1)) for f in frames[:2]])]
    positions = [np.array([0, 1], np.int32), np.array([1, 1], np.int32)]
    results = []
    for lib in (stoker, d):
        @lib.pipeline_def(batch_size=2, num_threads=2, device_id=None)
        def pipe():
            x = lib.fn.external_source(source=lambda: seq, layout="FHW", batch=True)
            bp = lib.fn.external_source(source=lambda: positions, batch=True)
            return lib.fn.debayer(x, blue_position=bp)
        p = pipe()
        p.build()
        o = p.run()[0]
        assert o.layout() == "FHWC"
        results.append([np.array(o[i]) for i in range(2)])
    for o, r, s, bp in zip(results[0], results[1], seq, [(0, 1), (1, 1)]):
        np.testing.assert_array_equal(o, r)
        code = getattr(cv2, "COLOR_Bayer%s2RGB" % CV_CODES[bp])
        for f in range(s.shape[0]):
            np.testing.assert_array_equal(o[f], cv2.cvtColor(s[f], code))


def test_debayer_tiny_images():
    rng = np.random.RandomState(1)
    data = [rng.randint(0, 256, s).astype(np.uint8) for s in [(2, 2), (2, 6), (6, 2), (4, 4)]]
    for alg, suffix in [("bilinear_ocv", "RGB"), ("gray_ocv", "GRAY")]:
        out, _ = run(stoker, "debayer", data, "HW", blue_position=[0, 0], algorithm=alg)
        for m, o in zip(data, out):
            np.testing.assert_array_equal(o.reshape(o.shape[0], o.shape[1], -1),
                                          cv2.cvtColor(m, getattr(cv2, "COLOR_BayerBG2" + suffix))
                                          .reshape(o.shape[0], o.shape[1], -1))


def test_debayer_errors(photos):
    m = [mosaic(even(photos[0]), (0, 0))]
    e = error_of("debayer", m, "HW")
    assert "fn.debayer" in str(e.value) and "the argument 'blue_position' is required" in str(e.value)
    e = error_of("debayer", m, "HW", blue_position=[0, 2])
    assert e.type is ValueError
    assert "fn.debayer" in str(e.value)
    assert "argument 'blue_position' must be in [0, 1], got [0, 2]." in str(e.value)
    e = error_of("debayer", [np.zeros((5, 6), np.uint8)], "HW", blue_position=[0, 0])
    assert ("sample 0 is 5 x 6, but the height and width of a Bayer mosaic must be even. "
            "Crop it first.") in str(e.value)
    e = error_of("debayer", [np.zeros((4, 4, 3), np.uint8)], "HWC", blue_position=[0, 0])
    assert ("sample 0 has shape (4, 4, 3), that is 3 channels, but a Bayer mosaic has 1. For "
            "sequences of mosaics set the layout to 'FHW'.") in str(e.value)
    e = error_of("debayer", [np.zeros((4, 4), np.float32)], "HW", blue_position=[0, 0])
    assert "input 0 must be of type UINT8 or UINT16, got float32." in str(e.value)
    e = error_of("debayer", m, "HW", blue_position=[0, 0], algorithm="default_npp")
    assert ("'default_npp' is the GPU operator's algorithm; on the CPU use 'bilinear_ocv' (the "
            "default) or 'gray_ocv'.") in str(e.value)
    e = error_of("debayer", m, "HW", blue_position=[0, 0], algorithm="vng_ocv")
    assert "'vng_ocv' is not implemented by stoker yet" in str(e.value)
    e = error_of("debayer", m, "HW", blue_position=[0, 0], algorithm="foo")
    assert ("argument 'algorithm' must be one of ['bilinear_ocv', 'edgeaware_ocv', 'vng_ocv', "
            "'gray_ocv', 'default_npp'], got 'foo'.") in str(e.value)
    bad = [np.array([1, 3], np.int32)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: m, layout="HW", batch=True)
        return fn.debayer(x, blue_position=fn.external_source(source=lambda: bad, batch=True))
    p = pipe()
    p.build()
    with pytest.raises(Exception) as e:
        p.run()
    assert ("sample 0: argument 'blue_position' must be (y, x) with y and x 0 or 1, the place of "
            "blue in the 2x2 tile ((0, 0): BGGR, (0, 1): GBRG, (1, 0): GRBG, (1, 1): RGGB), got "
            "(1, 3).") in str(e.value)
