"""fn.experimental.remap (GPU-only in DALI 2.4, through NPP) on the CPU: against cv2.remap with a
constant zero border and against an exact NumPy bilinear reference, on ImageNet photos."""
import cv2
import numpy as np
import pytest

from _dali_ref import IMAGENET, error_checker, run, stoker_lib, stoker_error

check_error = error_checker(__file__)
DTYPES = [np.uint8, np.int16, np.uint16, np.float32]


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[3::60][:4]
    if len(files) < 4:
        pytest.skip("imagenet-sample not found")
    return [cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB) for f in files]


def as_type(img, dtype):
    img = img.astype(np.float64)
    if dtype == np.uint16:
        return (img * 257).astype(np.uint16)
    if dtype == np.int16:
        return (img * 100 - 12000).astype(np.int16)
    if dtype == np.float32:
        return (img / 255 - 0.3).astype(np.float32)
    return img.astype(np.uint8)


def random_maps(shape, seed, grid=None, margin=3):
    """Per-pixel source points over the image and `margin` pixels around it (some outside);
    with `grid`, on multiples of 1 / grid."""
    h, w = shape[:2]
    rng = np.random.default_rng(seed)
    mx = rng.uniform(-margin, w + margin, (h, w))
    my = rng.uniform(-margin, h + margin, (h, w))
    if grid:
        mx, my = np.round(mx * grid) / grid, np.round(my * grid) / grid
    return mx.astype(np.float32), my.astype(np.float32)


def remap(datas, layouts=None, **kw):
    (out, layout, dtype), = run(stoker_lib(), lambda fn, t, x, mx, my: fn.experimental.remap(
        x, mx, my, **{k: getattr(t, v) if k == "interp" else v for k, v in kw.items()}), datas, layouts)
    return out, layout, dtype


def bilinear(img, mx, my):
    """The exact bilinear value (float64) at OpenCV's coordinates (pixel centres at integers); taps
    outside the image read 0."""
    img = img.astype(np.float64)
    if img.ndim == 2:
        img = img[..., None]
    h, w = img.shape[:2]
    mx, my = mx.astype(np.float64), my.astype(np.float64)
    x0, y0 = np.floor(mx).astype(np.int64), np.floor(my).astype(np.int64)
    fx, fy = (mx - x0)[..., None], (my - y0)[..., None]
    out = np.zeros(mx.shape + img.shape[2:])
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            xi, yi = x0 + dx, y0 + dy
            ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            tap = np.where(ok[..., None], img[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)], 0)
            out += wx * wy * tap
    return out


def saturate(v, dtype):
    if np.dtype(dtype).kind == "f":
        return v.astype(dtype)
    i = np.iinfo(dtype)
    return np.clip(v, i.min, i.max).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nearest_center_matches_opencv(photos, dtype):
    imgs = [as_type(p, dtype) for p in photos]
    maps = [random_maps(p.shape, k) for k, p in enumerate(photos)]
    out, layout, name = remap([imgs, [m[0] for m in maps], [m[1] for m in maps]], ["HWC", "HW", "HW"],
                              interp="INTERP_NN", pixel_origin="center")
    assert (layout, name) == ("HWC", np.dtype(dtype).name)
    for img, (mx, my), o in zip(imgs, maps, out):
        ref = cv2.remap(img, mx, my, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        np.testing.assert_array_equal(o, ref)


def test_nearest_center_rounds_half_to_even_as_opencv():
    img = np.arange(1, 11, dtype=np.uint8).reshape(1, 10, 1).repeat(3, 0)
    mx = np.array([[0.5, 1.5, 2.5, 3.5, -0.5, 8.5, 9.5, 2.4999, 2.5001, 4.0]], np.float32).repeat(3, 0)
    my = np.ones_like(mx)
    out, _, _ = remap([[img], [mx], [my]], ["HWC", "HW", "HW"], interp="INTERP_NN", pixel_origin="center")
    np.testing.assert_array_equal(out[0][1, :, 0], [1, 3, 3, 5, 1, 9, 0, 3, 4, 5])
    ref = cv2.remap(img, mx, my, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    np.testing.assert_array_equal(out[0][..., 0], ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_center_is_the_exact_bilinear_value(photos, dtype):
    # On a 1/32 grid the weights are exact binary fractions: stoker's float arithmetic gives the
    # exact value for uint8 and int16 (rounded half to even, as all its warps do) and within float
    # rounding of it for uint16 and float32. OpenCV's own arithmetic stays within 1 of it.
    imgs = [as_type(p, dtype) for p in photos]
    maps = [random_maps(p.shape, 10 + k, grid=32) for k, p in enumerate(photos)]
    out, _, _ = remap([imgs, [m[0] for m in maps], [m[1] for m in maps]], ["HWC", "HW", "HW"],
                      interp="INTERP_LINEAR", pixel_origin="center")
    for img, (mx, my), o in zip(imgs, maps, out):
        exact = bilinear(img, mx, my)
        cv = cv2.remap(img, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        if dtype == np.float32:
            np.testing.assert_allclose(o, exact, rtol=0, atol=2e-6)
            np.testing.assert_allclose(cv, exact, rtol=0, atol=2e-6)
            continue
        if dtype == np.uint16:  # 16 bits times 10 bits of weight: beyond float32's 24
            assert np.abs(o.astype(np.float64) - exact).max() <= 0.5 + 0.02
        else:
            np.testing.assert_array_equal(o, saturate(np.rint(exact), dtype))
        assert np.abs(cv.astype(np.float64) - exact).max() <= 1


def test_linear_off_the_grid_is_the_bilinear_value(photos):
    imgs = [as_type(p, np.float32) for p in photos]
    maps = [random_maps(p.shape, 20 + k) for k, p in enumerate(photos)]
    out, _, _ = remap([imgs, [m[0] for m in maps], [m[1] for m in maps]], pixel_origin="center")
    for img, (mx, my), o in zip(imgs, maps, out):
        np.testing.assert_allclose(o, bilinear(img, mx, my), rtol=0, atol=1e-5)


def test_cubic_center_matches_opencv(photos):
    maps = [random_maps(p.shape, 30 + k, grid=32) for k, p in enumerate(photos)]
    out, _, _ = remap([photos, [m[0] for m in maps], [m[1] for m in maps]], interp="INTERP_CUBIC",
                      pixel_origin="center")
    for img, (mx, my), o in zip(photos, maps, out):
        ref = cv2.remap(img, mx, my, cv2.INTER_CUBIC, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        assert np.abs(o.astype(int) - ref.astype(int)).max() <= 1  # OpenCV's weights are fixed point


@pytest.mark.parametrize("interp", ["INTERP_LINEAR", "INTERP_CUBIC"])
def test_corner_is_center_shifted_by_half_a_pixel(photos, interp):
    maps = [random_maps(p.shape, 40 + k) for k, p in enumerate(photos)]
    mxs, mys = [m[0] for m in maps], [m[1] for m in maps]
    corner, _, _ = remap([photos, mxs, mys], interp=interp)  # pixel_origin="corner" is the default
    center, _, _ = remap([photos, [m - np.float32(0.5) for m in mxs], [m - np.float32(0.5) for m in mys]],
                         interp=interp, pixel_origin="center")
    for a, b in zip(corner, center):
        np.testing.assert_array_equal(a, b)


def test_nearest_corner_reads_the_pixel_containing_the_point(photos):
    maps = [random_maps(p.shape, 50 + k) for k, p in enumerate(photos)]
    out, _, _ = remap([photos, [m[0] for m in maps], [m[1] for m in maps]], interp="INTERP_NN")
    for img, (mx, my), o in zip(photos, maps, out):
        h, w = img.shape[:2]
        xi, yi = np.floor(mx).astype(int), np.floor(my).astype(int)
        ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        ref = np.where(ok[..., None], img[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)], 0)
        np.testing.assert_array_equal(o, ref)


@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("interp", ["INTERP_NN", "INTERP_LINEAR"])
def test_identity_and_flip(photos, origin, interp):
    shift = 0.5 if origin == "corner" else 0.0  # the centre of pixel (i, j) in each convention
    ident = [np.mgrid[0:p.shape[0], 0:p.shape[1]].astype(np.float32) + np.float32(shift) for p in photos]
    out, _, _ = remap([photos, [g[1] for g in ident], [g[0] for g in ident]], interp=interp, pixel_origin=origin)
    flip, _, _ = remap([photos, [g[1][:, ::-1].copy() for g in ident], [g[0] for g in ident]], interp=interp,
                       pixel_origin=origin)
    for img, a, b in zip(photos, out, flip):
        np.testing.assert_array_equal(a, img)
        np.testing.assert_array_equal(b, img[:, ::-1])


def test_integer_identity_map_in_corner_mode_is_the_identity(photos):
    # A map value k reads pixel k: [k, k+1) is pixel k for "corner".
    ident = [np.mgrid[0:p.shape[0], 0:p.shape[1]].astype(np.float32) for p in photos]
    out, _, _ = remap([photos, [g[1] for g in ident], [g[0] for g in ident]], interp="INTERP_NN")
    for img, a in zip(photos, out):
        np.testing.assert_array_equal(a, img)


def test_map_size_sets_the_output_size_and_gray_images(photos):
    gray = [np.ascontiguousarray(p[..., :1]) for p in photos]
    rng = np.random.default_rng(7)
    maps = [(rng.uniform(-2, p.shape[1] + 2, (37 + k, 53)).astype(np.float32),
             rng.uniform(-2, p.shape[0] + 2, (37 + k, 53)).astype(np.float32)) for k, p in enumerate(photos)]
    # Maps with a channel axis of 1 (HWC) are taken as well.
    out, layout, _ = remap([gray, [m[0][..., None] for m in maps], [m[1][..., None] for m in maps]],
                           ["HWC", "HWC", "HWC"], interp="INTERP_NN", pixel_origin="center")
    assert layout == "HWC"
    for img, (mx, my), o in zip(gray, maps, out):
        assert o.shape == mx.shape + (1,)
        ref = cv2.remap(img, mx, my, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        np.testing.assert_array_equal(o[..., 0], ref)


def test_sequences_one_map_for_all_frames_or_one_per_frame(photos):
    crops = [p[:120, :150] for p in photos]
    seqs = [np.stack([c, c[::-1], 255 - c]) for c in crops]
    maps = [random_maps(c.shape, 60 + k) for k, c in enumerate(crops)]
    shared, layout, _ = remap([seqs, [m[0] for m in maps], [m[1] for m in maps]], ["FHWC", "HW", "HW"])
    assert layout == "FHWC"
    frame_maps = [[random_maps(c.shape, 70 + 3 * k + f) for f in range(3)] for k, c in enumerate(crops)]
    per_frame, _, _ = remap([seqs, [np.stack([m[0] for m in fm]) for fm in frame_maps],
                             [np.stack([m[1] for m in fm]) for fm in frame_maps]], ["FHWC", "FHW", "FHW"])
    for k, seq in enumerate(seqs):
        for f in range(3):
            one, _, _ = remap([[np.ascontiguousarray(seq[f])], [maps[k][0]], [maps[k][1]]])
            np.testing.assert_array_equal(shared[k][f], one[0])
            one, _, _ = remap([[np.ascontiguousarray(seq[f])], [frame_maps[k][f][0]], [frame_maps[k][f][1]]])
            np.testing.assert_array_equal(per_frame[k][f], one[0])


def test_empty_images_and_maps():
    img = np.full((4, 5, 3), 9, np.uint8)
    out, _, _ = remap([[img, np.zeros((0, 5, 3), np.uint8)], [np.zeros((0, 6), np.float32), np.ones((2, 3), np.float32)],
                       [np.zeros((0, 6), np.float32), np.ones((2, 3), np.float32)]], ["HWC", "HW", "HW"])
    assert out[0].shape == (0, 6, 3)
    np.testing.assert_array_equal(out[1], np.zeros((2, 3, 3), np.uint8))


def test_points_far_away_and_nan_read_zero():
    img = np.full((4, 5, 3), 9, np.float32)
    mx = np.array([[1e30, -1e30, np.nan, np.inf, 2.0]], np.float32)
    my = np.array([[1.0, 1.0, 1.0, 1.0, np.nan]], np.float32)
    for interp in ("INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC"):
        out, _, _ = remap([[img], [mx], [my]], interp=interp)
        np.testing.assert_array_equal(out[0], np.zeros((1, 5, 3), np.float32))


def test_arguments_and_defaults_are_dalis():
    backend = pytest.importorskip("nvidia.dali.backend")
    from stoker._schema import SCHEMAS
    s = backend.GetSchema("experimental__Remap")
    dali = {a: s.GetArgumentDefaultValueString(a) for a in s.GetArgumentNames()
            if a not in ("bytes_per_sample_hint", "preserve")}
    mine = {a["name"]: a["default"] for a in SCHEMAS["experimental.remap"]["args"]}
    assert {k: repr(v) if isinstance(v, str) else str(v) for k, v in mine.items()} == dali
    assert SCHEMAS["experimental.remap"]["input_names"] == ["input", "mapx", "mapy"]


IMG = np.zeros((4, 5, 3), np.uint8)
MAP = np.zeros((4, 5), np.float32)
OP = "experimental.remap"


def build(fn, t, x, mx, my):
    return fn.experimental.remap(x, mx, my)


@pytest.mark.parametrize("datas,layouts,rest", [
    ([[IMG], [MAP.astype(np.float64)], [MAP]], None,
     "input 1 (mapx) has type float64, but the maps must be float32; cast them first (fn.cast(..., dtype=types.FLOAT))."),
    ([[IMG], [MAP], [MAP.astype(np.int32)]], None,
     "input 2 (mapy) has type int32, but the maps must be float32; cast them first (fn.cast(..., dtype=types.FLOAT))."),
    ([[IMG], [MAP], [MAP[:3]]], None, "mapx and mapy must have the same shape, got (4, 5) and (3, 5) for sample 0."),
    ([[IMG], [np.zeros((4, 5, 2), np.float32)], [np.zeros((4, 5, 2), np.float32)]], ["HWC", "HWC", "HWC"],
     "the maps must have one channel, got shape (4, 5, 2) for sample 0; give one (x or y) coordinate per output pixel."),
    ([[IMG[None].repeat(2, 0)], [MAP[None].repeat(3, 0)], [MAP[None].repeat(3, 0)]], ["FHWC", "FHW", "FHW"],
     "the maps of sample 0 have 3 frames but the sequence has 2; give one map per frame, or one map (without "
     "frames) for all of them."),
    ([[IMG], [MAP[None]], [MAP[None]]], ["HWC", "FHW", "FHW"],
     "input 1 (mapx) has frames (layout 'FHW') but input 0 is not a sequence (layout HWC); give maps with layout "
     "HW or HWC."),
    ([[IMG], [MAP.ravel()], [MAP.ravel()]], None,
     "input 1 (mapx) must be maps with layout HW or HWC (one channel), or FHW or FHWC for one map per frame of a "
     "sequence, got layout '' with 1 dimensions."),
    ([[IMG.transpose(2, 0, 1).copy()], [MAP], [MAP]], ["CHW", None, None],
     "input 0 must be images with layout HWC or sequences with layout FHWC (channels last), got layout 'CHW' with "
     "3 dimensions. Decode with fn.decoders.image (HWC), or transpose channel-first data first."),
    ([[IMG[..., 0].copy()], [MAP], [MAP]], None,
     "input 0 must be images with layout HWC or sequences with layout FHWC (channels last), got layout '' with "
     "2 dimensions. Decode with fn.decoders.image (HWC), or transpose channel-first data first."),
    ([[IMG.astype(np.int32)], [MAP], [MAP]], None,
     "input 0 has type int32, but the operator takes uint8, int16, uint16 or float32 images; cast them first "
     "(fn.cast)."),
])
def test_errors(datas, layouts, rest):
    check_error(stoker_error(build, datas, layouts), OP, rest)


@pytest.mark.parametrize("kw,rest", [
    (dict(interp="INTERP_LANCZOS3"), "argument 'interp' must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC, got "
                                     "INTERP_LANCZOS3."),
    (dict(pixel_origin="middle"), "argument 'pixel_origin' must be one of ['corner', 'center'], got 'middle'."),
])
def test_argument_errors(kw, rest):
    def b(fn, t, x, mx, my):
        return fn.experimental.remap(x, mx, my, **{k: getattr(t, v) if k == "interp" else v for k, v in kw.items()})
    check_error(stoker_error(b, [[IMG], [MAP], [MAP]]), OP, rest)


def test_wrong_number_of_inputs():
    e = stoker_error(lambda fn, t, x, mx: fn.experimental.remap(x, mx), [[IMG], [MAP]], exc=TypeError)
    assert str(e.value) == "fn.experimental.remap takes 3 input(s), got 2."
