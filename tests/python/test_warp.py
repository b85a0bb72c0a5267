"""Warp-family operators against independent references: warp_affine and rotate against OpenCV's
warpAffine, gaussian_blur against OpenCV / SciPy, jpeg_compression_distortion against Pillow,
water and sphere against NumPy versions of DALI's formulas."""
import io
import math

import cv2
import numpy as np
import pytest
import scipy.ndimage
from PIL import Image

from stoker import fn, pipeline_def, types


def run(files, make, batch_size=None, gray=False, **pipe_args):
    """Decodes `files` and returns (images, *outputs of make(images))."""
    args = dict(batch_size=batch_size or len(files), num_threads=2, device_id=None, seed=7)
    args.update(pipe_args)

    @pipeline_def(**args)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        images = fn.decoders.image(jpegs, output_type=types.GRAY if gray else types.RGB)
        outs = make(images)
        return (images,) + (tuple(outs) if isinstance(outs, (list, tuple)) else (outs,))

    return pipe().run()


@pytest.fixture(scope="module")
def photos(jpeg_files):
    return [p for p, _ in jpeg_files[::9]]  # 6 photos of several sizes


def to_cv(m):
    """DALI's output-to-input matrix (pixel centres at +0.5) in OpenCV's integer coordinates."""
    a = np.asarray(m, dtype=np.float64).reshape(2, 3).copy()
    a[:, 2] += a[:, :2].sum(1) * 0.5 - 0.5
    return a


def cv_warp(img, m, size_wh, interp=cv2.INTER_LINEAR, fill=None):
    border = dict(borderMode=cv2.BORDER_REPLICATE) if fill is None else \
        dict(borderMode=cv2.BORDER_CONSTANT, borderValue=(fill,) * 4)
    return cv2.warpAffine(img, to_cv(m), size_wh, flags=interp | cv2.WARP_INVERSE_MAP, **border)


def np_sample(img, sx, sy, interp, fill):
    """DALI's samplers: nearest = floor, linear = 4 taps around (x - 0.5, y - 0.5); taps outside
    read `fill`."""
    img = img.astype(np.float64)
    if img.ndim == 2:
        img = img[..., None]
    h, w, c = img.shape

    def tap(ix, iy):
        ok = (ix >= 0) & (iy >= 0) & (ix < w) & (iy < h)
        out = np.full(ix.shape + (c,), float(fill))
        out[ok] = img[iy[ok], ix[ok]]
        return out

    if interp == "nn":
        return tap(np.floor(sx).astype(int), np.floor(sy).astype(int))
    fx, fy = sx - 0.5, sy - 0.5
    x0, y0 = np.floor(fx).astype(int), np.floor(fy).astype(int)
    qx, qy = (fx - x0)[..., None], (fy - y0)[..., None]
    top = tap(x0, y0) * (1 - qx) + tap(x0 + 1, y0) * qx
    bot = tap(x0, y0 + 1) * (1 - qx) + tap(x0 + 1, y0 + 1) * qx
    return top * (1 - qy) + bot * qy


def dali_rotated_size(h, w, angle_deg):
    """DALI's RotatedCanvasSize rule, written out independently."""
    a = math.radians(angle_deg)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    ow = math.ceil(c * w + s * h - 0.01)
    oh = math.ceil(c * h + s * w - 0.01)
    pw, ph = (w % 2, h % 2) if s <= c else (h % 2, w % 2)
    ow += (ow % 2) != pw
    oh += (oh % 2) != ph
    return oh, ow


def cv_rotate(img, angle, out_hw, interp=cv2.INTER_LINEAR, fill=0):
    """OpenCV's own rotation matrix about the image centre, moved to the centre of the canvas."""
    h, w = img.shape[:2]
    oh, ow = out_hw
    f = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), angle, 1.0)
    f[0, 2] += (ow - w) / 2
    f[1, 2] += (oh - h) / 2
    return cv2.warpAffine(img, f, (ow, oh), flags=interp, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=(fill,) * 4)


# A shear + scale + rotation with "awkward" coefficients, so that no sample lands on a tie.
MATRIX = [0.913, 0.241, -13.37, -0.187, 1.071, 21.13]


# ---------------------------------------------------------------- warp_affine

@pytest.mark.parametrize("fill", [0, 77])
def test_warp_affine_linear_matches_opencv(photos, fill):
    images, out = run(photos, lambda im: fn.warp_affine(im, matrix=MATRIX, fill_value=fill))
    assert out.layout() == "HWC" and out.dtype == types.UINT8
    for i in range(len(photos)):
        h, w = images[i].shape[:2]
        ref = cv_warp(images[i], MATRIX, (w, h), fill=fill)
        assert out[i].shape == images[i].shape
        diff = np.abs(out[i].astype(int) - ref)
        assert diff.max() <= 1, (photos[i], diff.max())


def test_warp_affine_nearest_matches_numpy_and_opencv(photos):
    images, out = run(photos[:3], lambda im: fn.warp_affine(im, matrix=MATRIX, fill_value=0,
                                                            interp_type=types.INTERP_NN))
    for i in range(3):
        h, w = images[i].shape[:2]
        ys, xs = np.mgrid[0:h, 0:w] + 0.5
        m = np.array(MATRIX).reshape(2, 3)
        ref = np_sample(images[i], m[0, 0] * xs + m[0, 1] * ys + m[0, 2],
                        m[1, 0] * xs + m[1, 1] * ys + m[1, 2], "nn", 0)
        assert np.mean(out[i] != ref) < 1e-3  # float vs double coordinates at pixel edges
        # OpenCV quantises coordinates to 1/1024 pixel, so a few samples near edges flip.
        cv = cv_warp(images[i], MATRIX, (w, h), cv2.INTER_NEAREST, fill=0)
        assert np.mean(np.any(out[i] != cv, axis=-1)) < 0.005


def test_warp_affine_cubic_matches_opencv(photos):
    images, out = run(photos[:2], lambda im: fn.warp_affine(im, matrix=MATRIX, fill_value=0,
                                                            interp_type=types.INTERP_CUBIC))
    for i in range(2):
        h, w = images[i].shape[:2]
        ref = cv_warp(images[i], MATRIX, (w, h), cv2.INTER_CUBIC, fill=0)
        diff = np.abs(out[i].astype(int) - ref)
        assert diff.max() <= 1, diff.max()


def test_warp_affine_without_fill_clamps_like_border_replicate(photos):
    images, out = run(photos[:2], lambda im: fn.warp_affine(im, matrix=MATRIX))
    for i in range(2):
        h, w = images[i].shape[:2]
        ref = cv_warp(images[i], MATRIX, (w, h))
        assert np.abs(out[i].astype(int) - ref).max() <= 1


def test_warp_affine_forward_matrix_and_size(photos):
    fwd = [1.2, 0.1, 5.0, -0.05, 0.9, 3.0]
    images, out = run(photos[:2], lambda im: fn.warp_affine(
        im, matrix=fwd, inverse_map=False, size=(300, 401.6), fill_value=0))
    for i in range(2):
        assert out[i].shape == (300, 402, 3)
        ref = cv2.warpAffine(images[i], to_cv(cv2.invertAffineTransform(np.reshape(fwd, (2, 3)))),
                             (402, 300), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        assert np.abs(out[i].astype(int) - ref).max() <= 1


def test_warp_affine_per_sample_matrix_as_input_or_argument(photos):
    def make(im):
        m = fn.random.uniform(range=(0.4, 0.6), shape=(2, 3))
        return m, fn.warp_affine(im, m, fill_value=0), fn.warp_affine(im, matrix=m, fill_value=0)

    images, mats, by_input, by_arg = run(photos[:4], make)
    assert not np.allclose(mats[0], mats[1])
    for i in range(4):
        h, w = images[i].shape[:2]
        ref = cv_warp(images[i], mats[i], (w, h), fill=0)
        assert np.array_equal(by_input[i], by_arg[i])
        assert np.abs(by_input[i].astype(int) - ref).max() <= 1


def test_warp_affine_float_output_and_gray(photos):
    images, out = run(photos[:2], lambda im: fn.warp_affine(im, matrix=MATRIX, fill_value=0,
                                                            dtype=types.FLOAT), gray=True)
    assert out.dtype == types.FLOAT
    for i in range(2):
        assert images[i].shape[-1] == 1 and out[i].shape == images[i].shape
        h, w = images[i].shape[:2]
        ref = cv2.warpAffine(images[i][..., 0].astype(np.float32), to_cv(MATRIX), (w, h),
                             flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                             borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        # OpenCV's float path quantises the fractions to 1/32 pixel.
        assert np.abs(out[i][..., 0] - ref).max() < 4.5
        m = np.array(MATRIX).reshape(2, 3)
        ys, xs = np.mgrid[0:h, 0:w] + 0.5
        exact = np_sample(images[i], m[0, 0] * xs + m[0, 1] * ys + m[0, 2],
                          m[1, 0] * xs + m[1, 1] * ys + m[1, 2], "linear", 0)[..., 0]
        assert np.abs(out[i][..., 0] - exact).max() < 0.02


# ---------------------------------------------------------------- rotate

@pytest.mark.parametrize("angle", [30.0, -45.0, 90.0, 17.5, 180.0])
def test_rotate_matches_opencv_and_dali_canvas(photos, angle):
    images, out = run(photos[:3], lambda im: fn.rotate(im, angle=angle, fill_value=0))
    for i in range(3):
        h, w = images[i].shape[:2]
        oh, ow = dali_rotated_size(h, w, angle)
        assert out[i].shape == (oh, ow, 3), (h, w, angle)
        ref = cv_rotate(images[i], angle, (oh, ow))
        diff = np.abs(out[i].astype(int) - ref)
        assert diff.max() <= 1, (photos[i], angle, diff.max())


@pytest.mark.parametrize("itype", [types.INTERP_NN, types.INTERP_LINEAR])
def test_rotate_quarter_turn_is_counter_clockwise(photos, itype):
    images, out = run(photos[:2], lambda im: fn.rotate(im, angle=90, interp_type=itype))
    for i in range(2):
        # np.rot90 turns counter-clockwise as displayed (the top row becomes the left column).
        ref = np.rot90(images[i])
        assert out[i].shape == ref.shape
        assert np.abs(out[i].astype(int) - ref).max() <= (0 if itype == types.INTERP_NN else 1)


def test_rotate_keep_size_size_and_nearest(photos):
    images, keep, sized, nn = run(photos[:2], lambda im: (
        fn.rotate(im, angle=12, keep_size=True, fill_value=0),
        fn.rotate(im, angle=12, size=(200, 300), fill_value=0),
        fn.rotate(im, angle=12, fill_value=0, interp_type=types.INTERP_NN)))
    for i in range(2):
        h, w = images[i].shape[:2]
        assert keep[i].shape == images[i].shape
        assert np.abs(keep[i].astype(int) - cv_rotate(images[i], 12, (h, w))).max() <= 1
        assert sized[i].shape == (200, 300, 3)
        assert np.abs(sized[i].astype(int) - cv_rotate(images[i], 12, (200, 300))).max() <= 1
        oh, ow = dali_rotated_size(h, w, 12)
        cv = cv_rotate(images[i], 12, (oh, ow), cv2.INTER_NEAREST)
        assert np.mean(np.any(nn[i] != cv, axis=-1)) < 0.005


@pytest.mark.parametrize("batch_size", [1, 5])
def test_rotate_per_sample_angle(photos, batch_size):
    files = photos[:batch_size]
    images, angles, out = run(files, lambda im: (
        lambda a: (a, fn.rotate(im, angle=a, fill_value=0)))(fn.random.uniform(range=(-10, 10))))
    for i in range(batch_size):
        a = float(np.asarray(angles[i]))
        h, w = images[i].shape[:2]
        oh, ow = dali_rotated_size(h, w, a)
        assert out[i].shape == (oh, ow, 3)
        assert np.abs(out[i].astype(int) - cv_rotate(images[i], a, (oh, ow))).max() <= 1


def test_rotate_grayscale_and_clamped_border(photos):
    images, out = run(photos[:2], lambda im: fn.rotate(im, angle=-20, keep_size=True), gray=True)
    for i in range(2):
        h, w = images[i].shape[:2]
        f = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), -20, 1.0)
        ref = cv2.warpAffine(images[i][..., 0], f, (w, h), flags=cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REPLICATE)
        assert out[i].shape == (h, w, 1)
        assert np.abs(out[i][..., 0].astype(int) - ref).max() <= 1


# ---------------------------------------------------------------- gaussian_blur

@pytest.mark.parametrize("args,ksize,sigmas", [
    (dict(sigma=1.5), (11, 11), (1.5, 1.5)),
    (dict(sigma=(1.0, 2.5)), (17, 7), (2.5, 1.0)),        # (H, W) -> OpenCV's (x, y) order
    (dict(window_size=7), (7, 7), (1.4, 1.4)),
    (dict(window_size=(5, 9), sigma=(2.0, 0.7)), (9, 5), (0.7, 2.0)),
])
def test_gaussian_blur_matches_opencv(photos, args, ksize, sigmas):
    images, out = run(photos[:3], lambda im: fn.gaussian_blur(im, **args))
    assert out.dtype == types.UINT8 and out.layout() == "HWC"
    for i in range(3):
        ref = cv2.GaussianBlur(images[i], ksize, sigmaX=sigmas[0], sigmaY=sigmas[1],
                               borderType=cv2.BORDER_REFLECT_101)
        diff = np.abs(out[i].astype(int) - ref)
        assert diff.max() <= 1, (args, diff.max())


def test_gaussian_blur_float_matches_scipy_and_gray(photos):
    images, out = run(photos[:2], lambda im: fn.gaussian_blur(im, sigma=2.0, dtype=types.FLOAT),
                      gray=True)
    assert out.dtype == types.FLOAT
    for i in range(2):
        # scipy's "mirror" is reflect-101; truncate = radius / sigma = ceil(6) / 2.
        ref = scipy.ndimage.gaussian_filter(images[i][..., 0].astype(np.float64), 2.0,
                                            mode="mirror", truncate=3.0)
        assert np.abs(out[i][..., 0] - ref).max() < 1e-3


@pytest.mark.parametrize("batch_size", [1, 4])
def test_gaussian_blur_per_sample_sigma(photos, batch_size):
    images, sig, out = run(photos[:batch_size], lambda im: (
        lambda s: (s, fn.gaussian_blur(im, sigma=s)))(fn.random.uniform(range=(0.5, 3.0))))
    for i in range(batch_size):
        s = float(np.asarray(sig[i]))
        # SciPy in double ("mirror" is reflect-101): exact up to our final rounding.
        ref = scipy.ndimage.gaussian_filter(images[i].astype(np.float64), (s, s, 0), mode="mirror",
                                            radius=(math.ceil(3 * s),) * 2 + (0,))
        assert np.abs(out[i].astype(int) - ref).max() <= 0.5 + 1e-3


def test_gaussian_blur_without_layout_blurs_every_axis_and_reflects_repeatedly():
    # No layout: all 3 dimensions are data axes (as DALI); the 13-tap window is larger than
    # every side, so the mirror bounces several times.
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        x = fn.random.uniform(range=(0, 255), shape=(3, 4, 2))
        return x, fn.gaussian_blur(x, sigma=(2.0, 2.0, 0.6))

    x, out = pipe().run()
    for i in range(2):
        ref = scipy.ndimage.gaussian_filter(x[i].astype(np.float64), (2.0, 2.0, 0.6), mode="mirror",
                                            radius=(6, 6, 2))
        assert np.abs(out[i] - ref).max() < 1e-3


# ---------------------------------------------------------------- jpeg_compression_distortion

def pil_jpeg(img, quality):
    buf = io.BytesIO()
    Image.fromarray(img.squeeze() if img.shape[-1] == 1 else img).save(buf, format="JPEG",
                                                                         quality=quality)
    out = np.asarray(Image.open(io.BytesIO(buf.getvalue())))
    return out.reshape(img.shape)


@pytest.mark.parametrize("quality", [5, 30, 75, 95])
def test_jpeg_distortion_matches_pillow(photos, quality):
    images, out = run(photos[:3], lambda im: fn.jpeg_compression_distortion(im, quality=quality))
    for i in range(3):
        ref = pil_jpeg(images[i], quality)
        assert out[i].shape == images[i].shape and out[i].dtype == np.uint8
        assert np.abs(out[i].astype(int) - ref).mean() < 2.0


def test_jpeg_distortion_error_shrinks_with_quality(photos):
    qualities = [2, 10, 40, 80, 100]
    images, *outs = run(photos[:2], lambda im: [fn.jpeg_compression_distortion(im, quality=q)
                                                for q in qualities])
    for i in range(2):
        errs = [np.abs(o[i].astype(int) - images[i]).mean() for o in outs]
        assert all(a > b for a, b in zip(errs, errs[1:])), errs


def test_jpeg_distortion_per_sample_quality_gray_and_clamping(photos):
    images, q, out, clamped = run(photos[:4], lambda im: (
        lambda q: (q, fn.jpeg_compression_distortion(im, quality=q),
                   fn.jpeg_compression_distortion(im, quality=500)))(
            fn.random.uniform(range=(5, 95), dtype=types.INT32)), gray=True)
    for i in range(4):
        assert np.abs(out[i].astype(int) - pil_jpeg(images[i], int(np.asarray(q[i])))).mean() < 2.0
        assert np.abs(clamped[i].astype(int) - pil_jpeg(images[i], 100)).mean() < 2.0


# ---------------------------------------------------------------- water and sphere

def np_water(img, ax, ay, fx, fy, px, py, interp, fill):
    h, w = img.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    sx = x + np.float32(ax) * np.sin(np.float32(fx) * y + np.float32(px))
    sy = y + np.float32(ay) * np.cos(np.float32(fy) * x + np.float32(py))
    return np_sample(img, sx, sy, interp, fill)


def np_sphere(img, interp, fill):
    h, w = img.shape[:2]
    mx, my = np.float32(w * 0.5), np.float32(h * 0.5)
    d = int(max(mx, my))
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    tx, ty = x + np.float32(0.5) - mx, y + np.float32(0.5) - my
    rad = np.sqrt(tx * tx + ty * ty) / np.float32(d)
    return np_sample(img, mx + rad * tx, my + rad * ty, interp, fill)


def close(out, ref, interp):
    out = out.astype(np.float64)
    if interp == "nn":  # float rounding may move a sample across a pixel edge now and then
        return np.mean(np.any(out != np.rint(ref), axis=-1)) < 1e-3
    return np.abs(out - ref).max() <= 1.0 + 1e-6


@pytest.mark.parametrize("interp,itype", [("nn", types.INTERP_NN), ("linear", types.INTERP_LINEAR)])
def test_water_matches_numpy(photos, interp, itype):
    args = dict(ampl_x=7.5, ampl_y=12.0, freq_x=0.05, freq_y=0.08, phase_x=0.3, phase_y=1.1)
    images, out, default = run(photos[:3], lambda im: (
        fn.water(im, interp_type=itype, fill_value=40, **args), fn.water(im)))
    for i in range(3):
        assert close(out[i], np_water(images[i], interp=interp, fill=40, **dict(
            ax=7.5, ay=12.0, fx=0.05, fy=0.08, px=0.3, py=1.1)), interp)
        ref = np_water(images[i], 10, 10, 2 * math.pi / 128, 2 * math.pi / 128, 0, 0, "nn", 0)
        assert close(default[i], ref, "nn")


@pytest.mark.parametrize("interp,itype", [("nn", types.INTERP_NN), ("linear", types.INTERP_LINEAR)])
def test_sphere_matches_numpy(photos, interp, itype):
    images, out = run(photos[:3], lambda im: fn.sphere(im, interp_type=itype, fill_value=9))
    for i in range(3):
        assert out[i].shape == images[i].shape
        assert close(out[i], np_sphere(images[i], interp, 9), interp)


def test_displacement_mask_and_gray(photos):
    images, water, sphere = run(photos[:4], lambda im: (
        lambda m: (fn.water(im, mask=m), fn.sphere(im, mask=m)))(
            fn.random.coin_flip(probability=0.5)), gray=True, seed=11)
    flags = [np.array_equal(water[i], images[i]) for i in range(4)]
    assert any(flags) and not all(flags)
    for i in range(4):
        assert np.array_equal(sphere[i], images[i]) == flags[i]
        if not flags[i]:
            assert close(sphere[i], np_sphere(images[i], "nn", 0), "nn")


# ---------------------------------------------------------------- errors

def build(make, gray=False):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        return make()
    return pipe()


def images_of(files, gray=False):
    jpegs, _ = fn.readers.file(files=files)
    return fn.decoders.image(jpegs, output_type=types.GRAY if gray else types.RGB)


@pytest.mark.parametrize("make,exc,msg", [
    (lambda im: fn.warp_affine(im), ValueError,
     r"fn.warp_affine.*argument 'matrix' is required: give the 2x3"),
    (lambda im: fn.warp_affine(im, matrix=[1, 0, 0, 0, 1]), ValueError,
     r"argument 'matrix' takes 6 values.*got 5"),
    (lambda im: fn.warp_affine(im, fn.random.uniform(shape=(2, 3)), matrix=MATRIX), ValueError,
     r"argument 'matrix' was given both as an argument and as the second input"),
    (lambda im: fn.warp_affine(im, matrix=[1, 2, 0, 2, 4, 0], inverse_map=False), ValueError,
     r"argument 'matrix' is singular; with inverse_map=False"),
    (lambda im: fn.warp_affine(im, matrix=MATRIX, size=(10, 20, 3)), ValueError,
     r"argument 'size' takes 0 to 2 values, got 3"),
    (lambda im: fn.warp_affine(im, matrix=MATRIX, size=(10, -2)), ValueError,
     r"argument 'size' must be positive, got \(10, -2\)"),
    (lambda im: fn.rotate(im, angle=5, interp_type=types.INTERP_LANCZOS3), ValueError,
     r"fn.rotate.*argument 'interp_type' must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC"),
    (lambda im: fn.rotate(im), ValueError,
     r"fn.rotate \(test_warp\.py:\d+\): the argument 'angle' is required"),
    (lambda im: fn.rotate(im, angle=5, dtype=types.INT16), ValueError,
     r"argument 'dtype' must be the input type \(uint8\) or float32"),
    (lambda im: fn.gaussian_blur(im), ValueError,
     r"argument 'sigma' and window_size are both 0 for sample 0, axis 0"),
    (lambda im: fn.gaussian_blur(im, window_size=4), ValueError,
     r"argument 'window_size' must be odd, got 4"),
    (lambda im: fn.gaussian_blur(im, sigma=(1, 2, 3)), ValueError,
     r"argument 'sigma' takes 1 or 2 values \(one per data axis\), got 3"),
    (lambda im: fn.gaussian_blur(im, sigma=-1.0), ValueError,
     r"argument 'sigma' must be >= 0, got -1"),
    (lambda im: fn.gaussian_blur(im, sigma=1.0, dtype=types.INT32), ValueError,
     r"argument 'dtype' must be the input type \(uint8\) or float32, got int32"),
    (lambda im: fn.jpeg_compression_distortion(fn.cast(im, dtype=types.FLOAT)), ValueError,
     r"fn.jpeg_compression_distortion.*input 0 must be uint8 images, got float32"),
    (lambda im: fn.water(im, interp_type=types.INTERP_LANCZOS3), ValueError,
     r"fn.water.*argument 'interp_type' must be"),
])
def test_errors_name_the_argument(photos, make, exc, msg):
    with pytest.raises(exc, match=msg):
        p = build(lambda: make(images_of(photos[:2])))
        p.run()


@pytest.mark.parametrize("make", [
    lambda x: fn.rotate(x, angle=3),
    lambda x: fn.warp_affine(x, matrix=MATRIX),
    lambda x: fn.water(x),
    lambda x: fn.jpeg_compression_distortion(fn.cast(x, dtype=types.UINT8)),
])
def test_layout_errors(make):
    with pytest.raises(ValueError, match=r"input 0 must be images with layout HWC or sequences "
                                         r"with layout FHWC.*got layout '' with 2 dimensions"):
        build(lambda: make(fn.random.uniform(shape=(4, 5)))).run()


def test_jpeg_distortion_rejects_two_channels():
    with pytest.raises(ValueError, match=r"expected RGB \(3 channels\) or grayscale \(1 channel\) "
                                         r"images, got shape \(4, 5, 2\)"):
        build(lambda: fn.jpeg_compression_distortion(
            fn.random.uniform(shape=(4, 5, 2), dtype=types.UINT8))).run()


def test_bad_per_sample_matrix_input(photos):
    with pytest.raises(ValueError, match=r"input 1 \(mtx\) must hold a 2x3 matrix per sample, got "
                                         r"shape \(5,\) for sample 0"):
        build(lambda: fn.warp_affine(images_of(photos[:2]), fn.random.uniform(shape=(5,)))).run()
