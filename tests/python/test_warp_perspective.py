"""fn.experimental.warp_perspective against DALI 2.4 (which runs OpenCV's warpPerspective on the
CPU) and against cv2.warpPerspective itself, on ImageNet photos."""
import cv2
import numpy as np
import pytest

from _dali_ref import IMAGENET, error_checker, real_dali, run, stoker_lib, stoker_error

check_error = error_checker(__file__)

BORDERS = {"constant": cv2.BORDER_CONSTANT, "replicate": cv2.BORDER_REPLICATE,
           "reflect": cv2.BORDER_REFLECT, "reflect_101": cv2.BORDER_REFLECT_101, "wrap": cv2.BORDER_WRAP}
CV_INTERP = {"INTERP_NN": cv2.INTER_NEAREST, "INTERP_LINEAR": cv2.INTER_LINEAR,
             "INTERP_CUBIC": cv2.INTER_CUBIC}


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[::40][:5]
    return [cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB) for f in files]


def homographies(seed, n):
    rng = np.random.default_rng(seed)
    return [(np.eye(3) + rng.normal(0, [[0.1, 0.1, 10], [0.1, 0.1, 10], [3e-4, 3e-4, 0]]))
            .astype(np.float32) for _ in range(n)]


def to_center(m):
    """A matrix for pixel_origin="corner" in OpenCV's convention (pixel centres at integers)."""
    t1 = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]])
    t2 = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
    return t1 @ np.asarray(m, np.float64) @ t2


def both_libs(build, datas, layouts=None):
    """stoker's outputs and DALI's (None where DALI is absent): per output ([samples], layout, dtype)."""
    mine = run(stoker_lib(), build, datas, layouts)
    try:
        ref = run(real_dali(), build, datas, layouts)
    except pytest.skip.Exception:
        ref = None
    return mine, ref


def near_tie(m, shape, origin):
    """Pixels whose exact source point lies within 1e-3 of a rounding boundary of nearest
    neighbour: there float32 rounding decides, and OpenCV's SIMD and scalar paths differ."""
    h, w = shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    m = to_center(m) if origin == "corner" else np.asarray(m, np.float64)
    den = m[2, 0] * x + m[2, 1] * y + m[2, 2]
    sx = (m[0, 0] * x + m[0, 1] * y + m[0, 2]) / den
    sy = (m[1, 0] * x + m[1, 1] * y + m[1, 2]) / den
    return (np.abs(sx - np.floor(sx) - 0.5) < 1e-3) | (np.abs(sy - np.floor(sy) - 0.5) < 1e-3)


@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("border", list(BORDERS))
@pytest.mark.parametrize("interp", ["INTERP_NN", "INTERP_LINEAR"])
def test_matches_dali_and_opencv(photos, origin, border, interp):
    mats = homographies(1, len(photos))

    def build(fn, types, x, m):
        return fn.experimental.warp_perspective(x, m, pixel_origin=origin, border_mode=border,
                                                interp_type=getattr(types, interp), fill_value=[10, 200, 30])
    (mine, layout, dtype), = run(stoker_lib(), build, [photos, mats], ["HWC", None])
    assert (layout, dtype) == ("HWC", "uint8")
    for img, m, out in zip(photos, mats, mine):
        mm = to_center(m) if origin == "corner" else m.astype(np.float64)
        ref = cv2.warpPerspective(img, mm, (img.shape[1], img.shape[0]),
                                  flags=CV_INTERP[interp] | cv2.WARP_INVERSE_MAP,
                                  borderMode=BORDERS[border], borderValue=(10, 200, 30))
        d = np.abs(out.astype(int) - ref.astype(int))
        if interp == "INTERP_LINEAR":
            assert d.max() <= 1
        else:
            bad = d.max(-1) > 0
            assert not (bad & ~near_tie(m, img.shape, origin)).any()
            assert bad.mean() < 1e-4
    try:
        (ref, rl, rt), = run(real_dali(), build, [photos, mats], ["HWC", None])
    except pytest.skip.Exception:
        return
    assert (rl, rt) == (layout, dtype)
    for img, m, a, b in zip(photos, mats, mine, ref):
        assert a.shape == b.shape
        d = np.abs(a.astype(int) - b.astype(int))
        if interp == "INTERP_LINEAR":
            assert d.max() <= 1
        else:  # exact, but where float32 rounding at a tie decides
            bad = d.max(-1) > 0
            assert not (bad & ~near_tie(m, img.shape, origin)).any()
            assert bad.mean() < 1e-4


def test_nearest_ties_round_half_to_even_as_dali():
    # Scale 2 with pixel_origin="corner" puts every source point on a tie (2x + 0.5).
    img = np.arange(64, dtype=np.uint8).reshape(8, 8, 1)

    def build(fn, types, x):
        return fn.experimental.warp_perspective(x, matrix=[2, 0, 0, 0, 2, 0, 0, 0, 1], size=[4, 4],
                                                interp_type=types.INTERP_NN)
    mine, ref = both_libs(build, [[img]])
    expected = img[::2, ::2]
    np.testing.assert_array_equal(mine[0][0][0], expected)
    if ref:
        np.testing.assert_array_equal(ref[0][0][0], expected)


def test_cubic_close_to_dali(photos):
    mats = homographies(2, len(photos))

    def build(fn, types, x, m):
        return fn.experimental.warp_perspective(x, m, interp_type=types.INTERP_CUBIC, border_mode="reflect")
    mine, ref = both_libs(build, [photos, mats], ["HWC", None])
    for img, m, out in zip(photos, mats, mine[0][0]):
        cvr = cv2.warpPerspective(img, to_center(m), (img.shape[1], img.shape[0]),
                                  flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REFLECT)
        assert np.abs(out.astype(int) - cvr.astype(int)).max() <= 1
    if ref:
        for a, b in zip(mine[0][0], ref[0][0]):
            assert np.abs(a.astype(int) - b.astype(int)).max() <= 1


def test_forward_matrix_size_and_argument(photos):
    m = homographies(3, 1)[0]

    def build(fn, types, x):
        return fn.experimental.warp_perspective(x, matrix=m.ravel().tolist(), inverse_map=False,
                                                size=[300.4, 250.6], pixel_origin="center")
    mine, ref = both_libs(build, [photos])
    for img, out in zip(photos, mine[0][0]):
        assert out.shape == (300, 251, 3)
        cvr = cv2.warpPerspective(img, m.astype(np.float64), (251, 300), flags=cv2.INTER_LINEAR)
        assert np.abs(out.astype(int) - cvr.astype(int)).max() <= 1
    if ref:
        for a, b in zip(mine[0][0], ref[0][0]):
            assert a.shape == b.shape and np.abs(a.astype(int) - b.astype(int)).max() <= 1


@pytest.mark.parametrize("dtype", [np.uint16, np.int16, np.float32])
def test_types_and_layouts(photos, dtype):
    imgs = [(p[:120, :160].astype(np.float32) * (3.7 if dtype != np.int16 else 0.9) - (90 if dtype == np.int16 else 0))
            .astype(dtype) for p in photos[:3]]
    m = homographies(4, 1)[0].ravel().tolist()

    def build(fn, types, x):
        return fn.experimental.warp_perspective(x, matrix=m, fill_value=[7])
    hwc, ref = both_libs(build, [imgs], ["HWC"])
    assert hwc[0][2] == np.dtype(dtype).name
    if ref:
        for a, b in zip(hwc[0][0], ref[0][0]):
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            # OpenCV (so DALI) samples int16 images at 1/32-pixel positions in fixed point.
            assert d.max() <= {np.uint16: 1, np.int16: 4, np.float32: 0.5}[dtype]
            assert d.mean() < (0.5 if dtype == np.int16 else 0.05)
    # CHW, HW and FHWC give the HWC result, plane by plane / frame by frame.
    chw, = run(stoker_lib(), build, [[np.ascontiguousarray(i.transpose(2, 0, 1)) for i in imgs]], ["CHW"])
    hw, = run(stoker_lib(), build, [[np.ascontiguousarray(i[..., 1]) for i in imgs]], ["HW"])
    seq, = run(stoker_lib(), build, [[np.stack([i, i[::-1].copy()]) for i in imgs]], ["FHWC"])
    assert (chw[1], hw[1], seq[1]) == ("CHW", "HW", "FHWC")
    flipped, = run(stoker_lib(), build, [[i[::-1].copy() for i in imgs]], ["HWC"])
    for k in range(3):
        np.testing.assert_array_equal(chw[0][k], hwc[0][0][k].transpose(2, 0, 1))
        np.testing.assert_array_equal(hw[0][k], hwc[0][0][k][..., 1])
        np.testing.assert_array_equal(seq[0][k], np.stack([hwc[0][0][k], flipped[0][k]]))


def test_per_sample_matrix_argument_equals_input(photos):
    mats = homographies(5, len(photos))

    def by_input(fn, types, x, m):
        return fn.experimental.warp_perspective(x, m)

    def by_arg(fn, types, x, m):
        return fn.experimental.warp_perspective(x, matrix=m)
    a, = run(stoker_lib(), by_input, [photos, mats], ["HWC", None])
    b, = run(stoker_lib(), by_arg, [photos, [m.ravel() for m in mats]], ["HWC", None])
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)


I3 = np.eye(3, dtype=np.float32).ravel().tolist()
IMG = np.zeros((8, 8, 3), np.uint8)
OP = "experimental.warp_perspective"


@pytest.mark.parametrize("build,datas,layouts,rest", [
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=[1, 1, 0, 1, 1, 0, 0, 0, 1], inverse_map=False),
     [[IMG]], None, "argument 'matrix' is singular; with inverse_map=False it maps input to output and must be invertible."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=[1, 0, 0, 0, 1, 0]), [[IMG]], None,
     "argument 'matrix' takes 9 values, a 3x3 matrix row by row, got 6."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=[float("nan")] + I3[1:]), [[IMG]], None,
     "argument 'matrix' must be finite, got nan at position 0."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x), [[IMG]], None,
     "argument 'matrix' is required: give the 3x3 perspective matrix (9 values, row by row) as this argument "
     "or as the second input (matrix_input)."),
    (lambda fn, t, x, m: fn.experimental.warp_perspective(x, m), [[IMG], [np.eye(3, dtype=np.float32)[:2]]], None,
     "input 1 (matrix_input) must hold a 3x3 matrix per sample, got shape (2, 3) for sample 0."),
    (lambda fn, t, x, m: fn.experimental.warp_perspective(x, m, matrix=I3), [[IMG], [np.eye(3, dtype=np.float32)]],
     None, "argument 'matrix' was given both as an argument and as the second input (matrix_input); give one of them."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=I3), [[IMG.astype(np.int32)]], None,
     "input 0 has type int32, but the operator takes uint8, int16, uint16 or float32 images; cast them first (fn.cast)."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=I3), [[IMG[None]]], ["DHWC"],
     "input 0 must be images with layout HW, HWC or CHW, or sequences with layout FHWC or FCHW, got layout 'DHWC' "
     "with 4 dimensions. Decode with fn.decoders.image (HWC), or give the layout to fn.external_source."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=I3, border_mode="clamp"), [[IMG]], None,
     "argument 'border_mode' must be one of ['constant', 'replicate', 'reflect', 'reflect_101', 'wrap'], got 'clamp'."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=I3, fill_value=[1, 2]), [[IMG]], None,
     "argument 'fill_value' takes one value or one per channel; sample 0 has 3 channels, got 2 values."),
    (lambda fn, t, x: fn.experimental.warp_perspective(x, matrix=I3, size=[3, 3, 3]), [[IMG]], None,
     "argument 'size' takes 0 to 2 values, got 3: [3, 3, 3]."),
])
def test_errors(build, datas, layouts, rest):
    e = stoker_error(build, datas, layouts)
    check_error(e, OP, rest)
