"""fn.experimental.median_blur, erode and dilate (GPU-only in DALI 2.4, through CV-CUDA) on the CPU:
against OpenCV (medianBlur, erode, dilate with a rectangular kernel) and SciPy's rank filters
(median_filter, minimum_filter, maximum_filter) on ImageNet photos, exactly."""
import cv2
import numpy as np
import pytest
import scipy.ndimage as ndi

from _dali_ref import IMAGENET, error_checker, run, stoker_lib, stoker_error

check_error = error_checker(__file__)

CV_BORDER = {"constant": None, "replicate": cv2.BORDER_REPLICATE, "reflect": cv2.BORDER_REFLECT,
             "reflect_101": cv2.BORDER_REFLECT_101}
SCIPY_MODE = {"replicate": "nearest", "reflect": "reflect", "reflect_101": "mirror", "wrap": "wrap"}


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[::50][:4]
    if len(files) < 4:
        pytest.skip("imagenet-sample not found")
    return [cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB) for f in files]


@pytest.fixture(scope="module")
def crops(photos):
    """Smaller pieces of the photos (odd sizes), for the slower SciPy references."""
    return [p[7:7 + 61, 11:11 + 83].copy() for p in photos]


def stoker_run(build, datas, layouts=None):
    (out, layout, dtype), = run(stoker_lib(), build, datas, layouts)
    return out, layout, dtype


def as_type(img, dtype):
    img = img.astype(np.float64)
    if dtype == np.uint16:
        return (img * 257).astype(np.uint16)
    if dtype == np.int16:
        return (img * 100 - 12000).astype(np.int16)
    if dtype == np.float32:
        return (img / 255 - 0.3).astype(np.float32)
    return img.astype(np.uint8)


# ---------------------------------------------------------------------------------- median_blur

@pytest.mark.parametrize("size", [1, 3, 5, 7, 11])
def test_median_matches_opencv(photos, size):
    out, layout, dtype = stoker_run(lambda fn, t, x: fn.experimental.median_blur(x, window_size=size),
                                    [photos], ["HWC"])
    assert (layout, dtype) == ("HWC", "uint8")
    for img, o in zip(photos, out):
        np.testing.assert_array_equal(o, cv2.medianBlur(img, size))


@pytest.mark.parametrize("dtype", [np.uint16, np.float32])
def test_median_other_types_match_opencv(photos, dtype):
    imgs = [as_type(p, dtype) for p in photos]
    for size in (3, 5):  # OpenCV's medianBlur takes 3 and 5 beyond uint8
        out, _, name = stoker_run(lambda fn, t, x: fn.experimental.median_blur(x, window_size=[size, size]),
                                  [imgs], ["HWC"])
        assert name == np.dtype(dtype).name
        for img, o in zip(imgs, out):
            np.testing.assert_array_equal(o, cv2.medianBlur(img, size))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32])
@pytest.mark.parametrize("window", [(3, 5), (7, 3), (1, 9), (9, 1), (13, 13)])
def test_median_rectangles_match_scipy(crops, dtype, window):
    imgs = [as_type(p, dtype) for p in crops]
    w, h = window  # DALI's window_size is (width, height)
    out, _, _ = stoker_run(lambda fn, t, x: fn.experimental.median_blur(x, window_size=list(window)), [imgs], ["HWC"])
    for img, o in zip(imgs, out):
        np.testing.assert_array_equal(o, ndi.median_filter(img, size=(h, w, 1), mode="nearest"))


def test_median_per_sample_window(photos):
    sizes = [np.array(s, np.int32) for s in ([3, 3], [5, 5], [1, 1], [7, 7])]
    out, _, _ = stoker_run(lambda fn, t, x, s: fn.experimental.median_blur(x, window_size=s), [photos, sizes],
                           ["HWC", None])
    for img, s, o in zip(photos, sizes, out):
        np.testing.assert_array_equal(o, cv2.medianBlur(img, int(s[0])))


def test_median_gray_tiny_and_window_larger_than_image():
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 256, s, dtype=np.uint8) for s in [(1, 1), (1, 7), (6, 1), (4, 5)]]
    out, _, _ = stoker_run(lambda fn, t, x: fn.experimental.median_blur(x, window_size=[9, 7]), [imgs], ["HW"])
    for img, o in zip(imgs, out):
        np.testing.assert_array_equal(o, ndi.median_filter(img, size=(7, 9), mode="nearest"))


# -------------------------------------------------------------------------------- erode, dilate

def cv_morph(op, img, mask, anchor, iterations, border):
    w, h = mask
    kernel = np.ones((h, w), np.uint8)
    f = cv2.erode if op == "erode" else cv2.dilate
    # One call per iteration, as CV-CUDA repeats the pass: OpenCV's own `iterations` widens a
    # rectangular kernel instead, which differs near the border for the reflecting borders.
    for _ in range(iterations):
        if border == "constant":  # OpenCV's default border value: the pixels outside do not count
            img = f(img, kernel, anchor=tuple(anchor))
        else:
            img = f(img, kernel, anchor=tuple(anchor), borderType=CV_BORDER[border])
    return img


def scipy_morph(op, img, mask, anchor, iterations, border):
    w, h = mask
    ax, ay = [m // 2 if a < 0 else a for a, m in zip(anchor, mask)]
    f = ndi.minimum_filter if op == "erode" else ndi.maximum_filter
    origin = (ay - h // 2, ax - w // 2) + (0,) * (img.ndim - 2)
    size = (h, w) + (1,) * (img.ndim - 2)
    for _ in range(iterations):
        img = f(img, size=size, origin=origin, mode=SCIPY_MODE[border])
    return img


@pytest.mark.parametrize("op", ["erode", "dilate"])
@pytest.mark.parametrize("border", ["constant", "replicate", "reflect", "reflect_101"])
@pytest.mark.parametrize("mask,anchor,iterations", [
    ([3, 3], [-1, -1], 1), ([5, 3], [0, 2], 1), ([1, 7], [-1, 6], 2), ([15, 11], [3, -1], 1),
    ([2, 4], [1, 0], 3), ([25, 25], [-1, -1], 1)])
def test_morphology_matches_opencv(photos, op, border, mask, anchor, iterations):
    def build(fn, t, x):
        return getattr(fn.experimental, op)(x, mask_size=mask, anchor=anchor, iterations=iterations,
                                            border_mode=border)
    out, layout, dtype = stoker_run(build, [photos], ["HWC"])
    assert (layout, dtype) == ("HWC", "uint8")
    cv_anchor = [m // 2 if a < 0 else a for a, m in zip(anchor, mask)]
    for img, o in zip(photos, out):
        np.testing.assert_array_equal(o, cv_morph(op, img, mask, cv_anchor, iterations, border))


@pytest.mark.parametrize("op", ["erode", "dilate"])
@pytest.mark.parametrize("border", ["replicate", "reflect", "reflect_101", "wrap"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32])
def test_morphology_matches_scipy(crops, op, border, dtype):
    # OpenCV's filters refuse BORDER_WRAP; SciPy's modes are the same folds for every border.
    imgs = [as_type(p, dtype) for p in crops]
    for mask, anchor, iterations in [([3, 3], [-1, -1], 1), ([9, 4], [7, 1], 2), ([101, 3], [-1, -1], 1)]:
        def build(fn, t, x):
            return getattr(fn.experimental, op)(x, mask_size=mask, anchor=anchor, iterations=iterations,
                                                border_mode=border)
        out, _, name = stoker_run(build, [imgs], ["HWC"])
        assert name == np.dtype(dtype).name
        for img, o in zip(imgs, out):
            np.testing.assert_array_equal(o, scipy_morph(op, img, mask, anchor, iterations, border))


@pytest.mark.parametrize("op", ["erode", "dilate"])
def test_morphology_float_constant_border_ignores_outside(crops, op):
    imgs = [as_type(p, np.float32) for p in crops]  # negative and positive values
    out, _, _ = stoker_run(lambda fn, t, x: getattr(fn.experimental, op)(x, mask_size=[7, 5]), [imgs], ["HWC"])
    for img, o in zip(imgs, out):
        np.testing.assert_array_equal(o, cv_morph(op, img, [7, 5], [3, 2], 1, "constant"))


def test_morphology_per_sample_mask_and_anchor(photos):
    masks = [np.array(m, np.int32) for m in ([3, 3], [5, 1], [1, 1], [4, 6])]
    anchors = [np.array(a, np.int32) for a in ([-1, -1], [0, 0], [0, 0], [3, 5])]
    out, _, _ = stoker_run(lambda fn, t, x, m, a: fn.experimental.dilate(x, mask_size=m, anchor=a),
                           [photos, masks, anchors], ["HWC", None, None])
    for img, m, a, o in zip(photos, masks, anchors, out):
        np.testing.assert_array_equal(o, cv_morph("dilate", img, m.tolist(), a.tolist(), 1, "constant"))


def test_one_value_is_a_square(photos):
    a, _, _ = stoker_run(lambda fn, t, x: fn.experimental.erode(x, mask_size=5, anchor=1), [photos], ["HWC"])
    b, _, _ = stoker_run(lambda fn, t, x: fn.experimental.erode(x, mask_size=[5, 5], anchor=[1, 1]), [photos],
                         ["HWC"])
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_many_iterations_reach_the_extreme():
    img = np.random.default_rng(5).integers(0, 256, (9, 13, 3), dtype=np.uint8)
    out, _, _ = stoker_run(lambda fn, t, x: fn.experimental.erode(x, iterations=1 << 30, border_mode="wrap"),
                           [[img]], ["HWC"])
    np.testing.assert_array_equal(out[0], np.broadcast_to(img.min(axis=(0, 1)), img.shape))


# ------------------------------------------------------------------------------ layouts, shapes

@pytest.mark.parametrize("build", [
    lambda fn, t, x: fn.experimental.median_blur(x, window_size=[5, 3]),
    lambda fn, t, x: fn.experimental.erode(x, mask_size=[4, 3], border_mode="reflect"),
    lambda fn, t, x: fn.experimental.dilate(x, mask_size=[3, 5], anchor=[0, 1], iterations=2),
], ids=["median_blur", "erode", "dilate"])
def test_layouts_filter_each_plane_and_frame(crops, build):
    hwc, layout, _ = stoker_run(build, [crops], ["HWC"])
    assert layout == "HWC"
    chw, l1, _ = stoker_run(build, [[np.ascontiguousarray(c.transpose(2, 0, 1)) for c in crops]], ["CHW"])
    hw, l2, _ = stoker_run(build, [[np.ascontiguousarray(c[..., 1]) for c in crops]], ["HW"])
    seq, l3, _ = stoker_run(build, [[np.stack([c, c[::-1].copy()]) for c in crops]], ["FHWC"])
    fchw, l4, _ = stoker_run(build, [[np.stack([c.transpose(2, 0, 1)] * 2) for c in crops]], ["FCHW"])
    flipped, _, _ = stoker_run(build, [[c[::-1].copy() for c in crops]], ["HWC"])
    assert (l1, l2, l3, l4) == ("CHW", "HW", "FHWC", "FCHW")
    for k in range(len(crops)):
        np.testing.assert_array_equal(chw[k], hwc[k].transpose(2, 0, 1))
        np.testing.assert_array_equal(hw[k], hwc[k][..., 1])
        np.testing.assert_array_equal(seq[k], np.stack([hwc[k], flipped[k]]))
        np.testing.assert_array_equal(fchw[k], np.stack([hwc[k].transpose(2, 0, 1)] * 2))


@pytest.mark.parametrize("op", ["median_blur", "erode", "dilate"])
def test_empty_and_odd_shapes(op):
    rng = np.random.default_rng(9)
    imgs = [np.zeros((0, 5, 3), np.uint8), np.zeros((4, 0, 3), np.uint8), rng.integers(0, 256, (1, 1, 3), np.uint8),
            rng.integers(0, 256, (3, 7, 4), np.uint8), rng.integers(0, 256, (5, 2, 1), np.uint8)]
    out, _, _ = stoker_run(lambda fn, t, x: getattr(fn.experimental, op)(x), [imgs], ["HWC"])
    for img, o in zip(imgs, out):
        assert o.shape == img.shape
        if img.size:
            ref = (ndi.median_filter(img, size=(3, 3, 1), mode="nearest") if op == "median_blur" else
                   cv_morph(op, img, [3, 3], [1, 1], 1, "constant").reshape(img.shape))
            np.testing.assert_array_equal(o, ref)


def test_arguments_and_defaults_are_dalis():
    backend = pytest.importorskip("nvidia.dali.backend")
    from stoker._schema import SCHEMAS
    for ours, theirs in [("experimental.median_blur", "experimental__MedianBlur"),
                         ("experimental.erode", "experimental__Erode"),
                         ("experimental.dilate", "experimental__Dilate")]:
        s = backend.GetSchema(theirs)
        dali = {a: s.GetArgumentDefaultValueString(a) for a in s.GetArgumentNames()
                if a not in ("bytes_per_sample_hint", "preserve")}
        mine = {a["name"]: a["default"] for a in SCHEMAS[ours]["args"]}
        assert set(mine) == set(dali)
        for name, value in mine.items():
            text = repr(value) if isinstance(value, str) else str(value)
            if isinstance(value, list):
                text = "[" + "".join(f"{v}, " for v in value) + "]"
            assert text == dali[name], name


# ----------------------------------------------------------------------------------------- errors

IMG = np.zeros((8, 8, 3), np.uint8)


@pytest.mark.parametrize("op,build,datas,layouts,rest", [
    ("experimental.median_blur", lambda fn, t, x: fn.experimental.median_blur(x, window_size=4), [[IMG]], None,
     "argument 'window_size' must be odd numbers from 1 to 4095 (width, height), got (4, 4) for sample 0."),
    ("experimental.median_blur", lambda fn, t, x: fn.experimental.median_blur(x, window_size=[3, -1]), [[IMG]], None,
     "argument 'window_size' must be odd numbers from 1 to 4095 (width, height), got (3, -1) for sample 0."),
    ("experimental.median_blur", lambda fn, t, x, s: fn.experimental.median_blur(x, window_size=s),
     [[IMG, IMG], [np.array([3, 3], np.int32), np.array([3, 3, 3], np.int32)]], None,
     "argument 'window_size' takes 1 value or 2 (width, height), got 3 for sample 1."),
    ("experimental.median_blur", lambda fn, t, x: fn.experimental.median_blur(x, window_size=[5, 5, 5]), [[IMG]],
     None, "argument 'window_size' takes 1 to 2 values, got 3: [5, 5, 5]."),
    ("experimental.median_blur", lambda fn, t, x: fn.experimental.median_blur(x, window_size=5001), [[IMG]], None,
     "argument 'window_size' must be odd numbers from 1 to 4095 (width, height), got (5001, 5001) for sample 0."),
    ("experimental.erode", lambda fn, t, x: fn.experimental.erode(x, mask_size=[0, 3]), [[IMG]], None,
     "argument 'mask_size' must be from 1 to 4095 (width, height), got (0, 3) for sample 0."),
    ("experimental.erode", lambda fn, t, x: fn.experimental.erode(x, mask_size=[3, 2], anchor=[1, 2]), [[IMG]], None,
     "argument 'anchor' must lie inside the mask, 0 <= anchor < mask_size, or be -1 (the centre); got (1, 2) "
     "with mask_size (3, 2) for sample 0."),
    ("experimental.dilate", lambda fn, t, x: fn.experimental.dilate(x, iterations=0), [[IMG]], None,
     "argument 'iterations' must be >= 1, got 0."),
    ("experimental.dilate", lambda fn, t, x: fn.experimental.dilate(x, border_mode="clamp"), [[IMG]], None,
     "argument 'border_mode' must be one of ['constant', 'replicate', 'reflect', 'reflect_101', 'wrap'], "
     "got 'clamp'."),
    ("experimental.erode", lambda fn, t, x: fn.experimental.erode(x), [[IMG.astype(np.int32)]], None,
     "input 0 has type int32, but the operator takes uint8, uint16, int16 or float32 images; cast them first "
     "(fn.cast)."),
    ("experimental.median_blur", lambda fn, t, x: fn.experimental.median_blur(x), [[IMG.astype(np.float64)]], None,
     "input 0 has type float64, but the operator takes uint8, uint16, int16 or float32 images; cast them first "
     "(fn.cast)."),
    ("experimental.median_blur", lambda fn, t, x: fn.experimental.median_blur(x), [[IMG[None]]], ["DHWC"],
     "input 0 must be images with layout HW, HWC or CHW, or sequences with layout FHWC or FCHW, got layout 'DHWC' "
     "with 4 dimensions. Decode with fn.decoders.image (HWC), or give the layout to fn.external_source."),
    ("experimental.dilate", lambda fn, t, x: fn.experimental.dilate(x), [[np.zeros(5, np.uint8)]], None,
     "input 0 must be images with layout HW, HWC or CHW, or sequences with layout FHWC or FCHW, got layout '' "
     "with 1 dimensions. Decode with fn.decoders.image (HWC), or give the layout to fn.external_source."),
])
def test_errors(op, build, datas, layouts, rest):
    e = stoker_error(build, datas, layouts)
    check_error(e, op, rest)


def test_float_window_is_a_type_error():
    e = stoker_error(lambda fn, t, x: fn.experimental.median_blur(x, window_size=[3.5, 3]), [[IMG]], exc=TypeError)
    check_error(e, "experimental.median_blur",
                "argument 'window_size' expects list of int, got list of float [3.5, 3].")
