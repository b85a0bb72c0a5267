"""Colour operators: brightness_contrast, brightness, contrast, color_space_conversion, hsv, hue,
saturation, color_twist, on real JPEGs, against NumPy implementations of DALI's documented
formulas (computed in float64) and against OpenCV where it has the same conversion."""
import cv2
import numpy as np
import pytest

from stoker import fn, pipeline_def, types

# DALI's YIQ matrices (3 decimals; their product is not exactly the identity, and DALI's results
# carry that, so the references use the same numbers).
RGB2YIQ = np.array([[.299, .587, .114], [.596, -.274, -.321], [.211, -.523, .311]])
YIQ2RGB = np.array([[1, .956, .621], [1, -.272, -.647], [1, -1.107, 1.705]])


@pytest.fixture(scope="module")
def files(jpeg_files):
    return [p for p, _ in jpeg_files[:5]]


def run(graph, files, batch_size, output_type=types.RGB):
    """Runs graph(images) -> tuple of nodes on decoded images; returns the images and the outputs
    as lists of NumPy arrays, one per sample."""

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=7)
    def pipe():
        jpegs, _ = fn.readers.file(files=files[:batch_size])
        images = fn.decoders.image(jpegs, output_type=output_type)
        return (images,) + tuple(graph(images))

    outs = pipe().run()
    return [[np.asarray(t[i]) for i in range(len(t))] for t in outs]


def round_half_away(x):
    """Nearest integer, halves away from zero (DALI's colour operators: 2.5 -> 3, -0.5 -> -1)."""
    t = np.trunc(x)
    return t + np.trunc(2 * (x - t))


def sat_round(x, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return x.astype(dt)
    info = np.iinfo(dt)
    return np.clip(round_half_away(np.nan_to_num(x)), info.min, info.max).astype(dt)


def assert_close_int(actual, expected, max_err=1, max_mismatch=1e-3):
    """Integer results: float32 (stoker) vs float64 (reference) may round a value that lies
    within rounding error of .5 the other way: at most `max_err` off, and rarely."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    d = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
    assert d.max() <= max_err, f"max error {d.max()}"
    assert np.mean(d != 0) <= max_mismatch, f"{np.mean(d != 0):.2%} of the values differ"


def half_range(dtype):
    return 0.5 if np.dtype(dtype).kind == "f" else 128.0


def twist_matrix(hue=0.0, saturation=1.0, value=1.0):
    h = np.deg2rad(hue)
    c, s = np.cos(h), np.sin(h)
    hue_m = np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    sat_m = np.diag([1, saturation, saturation])
    return YIQ2RGB @ hue_m @ sat_m @ (value * np.eye(3)) @ RGB2YIQ


def twist_ref(img, out_dtype, hue=0.0, saturation=1.0, value=1.0, brightness=1.0, contrast=1.0):
    m = brightness * contrast * twist_matrix(hue, saturation, value)
    hr = half_range(img.dtype)
    y = img.astype(np.float64) @ m.T + (hr - hr * contrast) * brightness
    return sat_round(y, out_dtype)


def bc_ref(img, out_dtype, brightness=1.0, brightness_shift=0.0, contrast=1.0, contrast_center=None):
    dt = np.dtype(img.dtype)
    if contrast_center is None:
        contrast_center = 0.5 if dt.kind == "f" else 2.0 ** (8 * dt.itemsize - 1 - (dt.kind == "i"))
    odt = np.dtype(out_dtype)
    out_range = 1.0 if odt.kind == "f" else float(np.iinfo(odt).max)
    x = img.astype(np.float64)
    y = brightness_shift * out_range + brightness * (contrast_center + contrast * (x - contrast_center))
    return sat_round(y, out_dtype)


# ---------------------------------------------------------------- brightness / contrast


@pytest.mark.parametrize("batch_size", [1, 5])
def test_brightness_contrast_per_sample_arguments_match_the_formula(files, batch_size):
    def graph(images):
        b = fn.random.uniform(range=(0.5, 1.5))
        c = fn.random.uniform(range=(0.3, 1.7))
        return b, c, fn.brightness_contrast(images, brightness=b, contrast=c, brightness_shift=0.05)

    images, bs, cs, outs = run(graph, files, batch_size)
    assert len(set(float(b) for b in bs)) == batch_size  # the argument really is per sample
    for img, b, c, out in zip(images, bs, cs, outs):
        assert out.dtype == np.uint8 and out.shape == img.shape
        assert_close_int(out, bc_ref(img, np.uint8, float(b), 0.05, float(c)))


def test_brightness_contrast_output_types(files):
    def graph(images):
        return [fn.brightness_contrast(images, brightness=1.3, contrast=0.8, dtype=t)
                for t in (types.FLOAT, types.FLOAT16, types.INT16, types.UINT16, types.INT32)]

    images, f32, f16, i16, u16, i32 = run(graph, files, 2)
    for k, img in enumerate(images):
        ref = bc_ref(img, np.float64, 1.3, 0.0, 0.8)
        assert f32[k].dtype == np.float32
        np.testing.assert_allclose(f32[k], ref, rtol=1e-5, atol=1e-4)
        # float16 is IEEE half: the float32 result rounded to nearest.
        assert f16[k].dtype == np.float16
        np.testing.assert_array_equal(f16[k], f32[k].astype(np.float16))
        for out, dt in ((i16[k], np.int16), (u16[k], np.uint16), (i32[k], np.int32)):
            assert out.dtype == dt
            assert_close_int(out, sat_round(ref, dt))


def test_brightness_shift_is_in_units_of_the_output_range(files):
    def graph(images):
        f = fn.cast(images, dtype=types.FLOAT) / 255.0
        return (f, fn.brightness(images, brightness_shift=0.1),
                fn.brightness(f, brightness_shift=0.1),
                fn.brightness(images, brightness=0.5, brightness_shift=-0.25, dtype=types.FLOAT))

    images, fimg, u8, f, u8_to_f = run(graph, files, 2)
    for k, img in enumerate(images):
        assert_close_int(u8[k], sat_round(img + 25.5, np.uint8))
        np.testing.assert_allclose(f[k], fimg[k] + 0.1, atol=1e-6)
        np.testing.assert_allclose(u8_to_f[k], img * 0.5 - 0.25, atol=1e-4)


def test_contrast_center_defaults_to_half_the_input_range(files):
    def graph(images):
        f = fn.cast(images, dtype=types.FLOAT) / 255.0
        return (fn.contrast(images, contrast=0.0), fn.contrast(f, contrast=0.0),
                fn.contrast(images, contrast=0.0, contrast_center=100),
                fn.contrast(fn.cast(images, dtype=types.INT16), contrast=0.0))

    _, u8, f, centred, i16 = run(graph, files, 2)
    for k in range(2):
        assert np.all(u8[k] == 128) and np.all(f[k] == 0.5) and np.all(centred[k] == 100)
        assert np.all(i16[k] == 16384)  # DALI: 2^(bits - 1 - signed)


def test_brightness_and_contrast_are_the_parts_of_brightness_contrast(files):
    def graph(images):
        b = fn.random.uniform(range=(0.5, 1.5))
        return (fn.brightness(images, brightness=b, brightness_shift=-0.1),
                fn.brightness_contrast(images, brightness=b, brightness_shift=-0.1),
                fn.contrast(images, contrast=1.4, contrast_center=60),
                fn.brightness_contrast(images, contrast=1.4, contrast_center=60))

    _, b1, b2, c1, c2 = run(graph, files, 3)
    for k in range(3):
        np.testing.assert_array_equal(b1[k], b2[k])
        np.testing.assert_array_equal(c1[k], c2[k])


def test_brightness_contrast_on_grayscale(files):
    images, out = run(lambda im: [fn.brightness_contrast(im, brightness=1.5, contrast=1.2)],
                      files, 3, output_type=types.GRAY)
    for img, o in zip(images, out):
        assert img.shape[-1] == 1 and o.shape == img.shape
        assert_close_int(o, bc_ref(img, np.uint8, 1.5, 0.0, 1.2))


# ---------------------------------------------------------------- color_space_conversion


def ycbcr_ref(rgb, y0=16.0, c0=128.0):
    """DALI's ITU-R BT.601 (studio range) RGB -> YCbCr, in the data's own units."""
    x = rgb.astype(np.float64)
    m = np.array([[0.257, 0.504, 0.098], [-0.148, -0.291, 0.439], [0.439, -0.368, -0.071]])
    return x @ m.T + np.array([y0, c0, c0])


def rgb_from_ycbcr_ref(ycc, y0=16.0, c0=128.0):
    y, cb, cr = [ycc[..., k].astype(np.float64) for k in range(3)]
    ty = 1.164 * (y - y0)
    return np.stack([ty + 1.596 * (cr - c0), ty - 0.813 * (cr - c0) - 0.392 * (cb - c0),
                     ty + 2.017 * (cb - c0)], -1)


def csc(src, dst):
    return lambda images: [fn.color_space_conversion(images, image_type=src, output_type=dst)]


@pytest.mark.parametrize("batch_size", [1, 4])
def test_rgb_to_ycbcr_matches_dali_formula_and_opencv(files, batch_size):
    images, out = run(csc(types.RGB, types.YCbCr), files, batch_size)
    for img, o in zip(images, out):
        assert o.dtype == np.uint8 and o.shape == img.shape
        assert_close_int(o, sat_round(ycbcr_ref(img), np.uint8))
        # OpenCV's YCrCb is full range (JPEG) with the chroma in the other order: map it to
        # studio range (Y: 16 + 219 Y, C: 128 + 224 (C - 0.5)) and reorder.
        cv = cv2.cvtColor(img.astype(np.float32) / 255, cv2.COLOR_RGB2YCrCb).astype(np.float64)
        studio = np.stack([16 + 219 * cv[..., 0], 128 + 224 * (cv[..., 2] - 0.5),
                           128 + 224 * (cv[..., 1] - 0.5)], -1)
        assert np.abs(o - studio).max() <= 1.0  # DALI's 3-decimal coefficients vs exact ones


def test_ycbcr_to_rgb_and_back(files):
    def graph(images):
        ycc = fn.color_space_conversion(images, image_type=types.RGB, output_type=types.YCbCr)
        return (ycc, fn.color_space_conversion(ycc, image_type=types.YCbCr, output_type=types.RGB),
                fn.color_space_conversion(ycc, image_type=types.YCbCr, output_type=types.BGR),
                fn.color_space_conversion(ycc, image_type=types.YCbCr, output_type=types.GRAY))

    images, ycc, rgb, bgr, gray = run(graph, files, 3)
    for k, img in enumerate(images):
        assert_close_int(rgb[k], sat_round(rgb_from_ycbcr_ref(ycc[k]), np.uint8))
        np.testing.assert_array_equal(bgr[k], rgb[k][..., ::-1])
        # Studio range quantises: the round trip is within 3 levels.
        assert np.abs(rgb[k].astype(int) - img).max() <= 3
        y = ycc[k][..., :1].astype(np.float64)
        assert_close_int(gray[k], sat_round((y - 16) / (0.257 + 0.504 + 0.098), np.uint8))


def test_rgb_to_gray_matches_opencv(files):
    images, gray = run(csc(types.RGB, types.GRAY), files, 4)
    for img, g in zip(images, gray):
        assert g.shape == img.shape[:2] + (1,)
        ref = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        assert np.abs(g[..., 0].astype(int) - ref).max() <= 1
        assert_close_int(g, sat_round(img @ np.array([[0.299], [0.587], [0.114]]), np.uint8))


def test_bgr_input_and_output(files):
    def graph(images):
        return (fn.color_space_conversion(images, image_type=types.RGB, output_type=types.BGR),
                fn.color_space_conversion(images, image_type=types.BGR, output_type=types.RGB),
                fn.color_space_conversion(images, image_type=types.BGR, output_type=types.BGR),
                fn.color_space_conversion(images, image_type=types.BGR, output_type=types.GRAY))

    images, to_bgr, bgr_to_rgb, same, gray = run(graph, files, 3)
    rgb_images, rgb_ycc, rgb_gray = run(
        lambda im: [fn.color_space_conversion(im, image_type=types.RGB, output_type=types.YCbCr),
                    fn.color_space_conversion(im, image_type=types.RGB, output_type=types.GRAY)],
        files, 3)
    bgr_images, bgr_ycc, bgr_gray = run(
        lambda im: [fn.color_space_conversion(im, image_type=types.BGR, output_type=types.YCbCr),
                    fn.color_space_conversion(im, image_type=types.BGR, output_type=types.GRAY)],
        files, 3, output_type=types.BGR)
    for k, img in enumerate(images):
        np.testing.assert_array_equal(to_bgr[k], img[..., ::-1])
        np.testing.assert_array_equal(bgr_to_rgb[k], img[..., ::-1])
        np.testing.assert_array_equal(same[k], img)
        np.testing.assert_array_equal(bgr_images[k], rgb_images[k][..., ::-1])
        # The same sums in the other order: values that lie exactly on .5 (the 3-decimal
        # coefficients make that common) may round the other way.
        assert_close_int(bgr_ycc[k], rgb_ycc[k])
        assert_close_int(bgr_gray[k], rgb_gray[k])


def test_grayscale_input(files):
    def graph(gray):
        return [fn.color_space_conversion(gray, image_type=types.GRAY, output_type=t)
                for t in (types.RGB, types.BGR, types.YCbCr, types.GRAY)]

    images, rgb, bgr, ycc, same = run(graph, files, 3, output_type=types.GRAY)
    for k, g in enumerate(images):
        assert g.shape[-1] == 1
        np.testing.assert_array_equal(rgb[k], np.repeat(g, 3, axis=-1))
        np.testing.assert_array_equal(bgr[k], rgb[k])
        np.testing.assert_array_equal(same[k], g)
        y = g.astype(np.float64) * (0.257 + 0.504 + 0.098) + 16
        ref = np.concatenate([y, np.full_like(y, 128), np.full_like(y, 128)], -1)
        assert_close_int(ycc[k], sat_round(ref, np.uint8))


def test_float_and_uint16_inputs_use_normalised_formulas(files):
    def graph(images):
        f = fn.cast(images, dtype=types.FLOAT) / 255.0
        u16 = fn.cast(fn.cast(images, dtype=types.INT32) * 257, dtype=types.UINT16)
        return (f, fn.color_space_conversion(f, image_type=types.RGB, output_type=types.YCbCr),
                fn.color_space_conversion(f, image_type=types.RGB, output_type=types.GRAY),
                u16, fn.color_space_conversion(u16, image_type=types.RGB, output_type=types.YCbCr))

    images, f, fycc, fgray, u16, u16ycc = run(graph, files, 2)
    for k in range(2):
        assert fycc[k].dtype == np.float32 and u16ycc[k].dtype == np.uint16
        # DALI's normalised offsets: 0.0625 (luma) and 0.5 (chroma) of the range.
        np.testing.assert_allclose(fycc[k], ycbcr_ref(f[k], 0.0625, 0.5), atol=1e-5)
        np.testing.assert_allclose(fgray[k][..., 0], f[k] @ np.array([0.299, 0.587, 0.114]), atol=1e-5)
        ref16 = ycbcr_ref(u16[k], 0.0625 * 65535, 0.5 * 65535)
        # float32 arithmetic has about 0.004 of a level of error at 16 bits.
        assert_close_int(u16ycc[k], sat_round(ref16, np.uint16), max_mismatch=1e-2)


# ---------------------------------------------------------------- hsv, hue, saturation, color_twist


@pytest.mark.parametrize("batch_size", [1, 5])
def test_hsv_per_sample_arguments_match_the_yiq_formula(files, batch_size):
    def graph(images):
        h = fn.random.uniform(range=(-180, 180))
        s = fn.random.uniform(range=(0.0, 2.0))
        v = fn.random.uniform(range=(0.5, 1.5))
        return h, s, v, fn.hsv(images, hue=h, saturation=s, value=v)

    images, hs, ss, vs, outs = run(graph, files, batch_size)
    for img, h, s, v, out in zip(images, hs, ss, vs, outs):
        assert out.dtype == np.uint8 and out.shape == img.shape
        assert_close_int(out, twist_ref(img, np.uint8, hue=float(h), saturation=float(s), value=float(v)))


def test_hsv_against_independent_references(files):
    def graph(images):
        return (fn.hsv(images, saturation=0.0), fn.hsv(images, value=0.7),
                fn.hsv(images, hue=360.0), fn.hsv(images, hue=45.0),
                fn.hsv(images, hue=45.0 - 360.0))

    images, grey, darker, full_turn, h45, h45_wrapped = run(graph, files, 3)
    for k, img in enumerate(images):
        # Saturation 0 leaves the luma: OpenCV's RGB2GRAY in every channel.
        ref = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)[..., None].repeat(3, -1)
        assert np.abs(grey[k].astype(int) - ref).max() <= 1
        # Value scales everything; hue wraps around at 360 degrees.
        assert np.abs(darker[k].astype(int) - np.rint(img * 0.7)).max() <= 1
        assert np.abs(full_turn[k].astype(int) - img).max() <= 1
        assert np.abs(h45[k].astype(int) - h45_wrapped[k]).max() <= 1
        # A hue shift moves OpenCV's hue by about the same angle on strongly coloured pixels
        # (the YIQ rotation is an approximation of HSV, so only on average).
        hsv0 = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL).astype(np.float64)
        hsv1 = cv2.cvtColor(h45[k], cv2.COLOR_RGB2HSV_FULL).astype(np.float64)
        vivid = (hsv0[..., 1] > 150) & (hsv0[..., 2] > 100) & (hsv1[..., 1] > 150)
        if vivid.sum() > 1000:
            dh = ((hsv1[..., 0] - hsv0[..., 0]) * 360 / 256 + 180) % 360 - 180
            assert abs(np.median(dh[vivid]) - 45) < 15


def test_hsv_output_type_defaults_to_uint8_like_dali(files):
    def graph(images):
        f = fn.cast(images, dtype=types.FLOAT) / 255.0
        return f, fn.hsv(f, hue=20.0), fn.hsv(f, hue=20.0, dtype=types.FLOAT), \
            fn.hsv(images, hue=20.0, dtype=types.FLOAT16)

    _, f, default, as_float, as_half = run(graph, files, 2)
    for k in range(2):
        assert default[k].dtype == np.uint8 and as_float[k].dtype == np.float32
        ref = twist_ref(f[k], np.float64, hue=20.0)
        np.testing.assert_allclose(as_float[k], ref, atol=1e-5)
        np.testing.assert_array_equal(default[k], sat_round(as_float[k], np.uint8))
        assert as_half[k].dtype == np.float16
        np.testing.assert_allclose(as_half[k].astype(np.float64), twist_ref(
            (f[k] * 255).round(), np.float64, hue=20.0), rtol=1e-3, atol=0.07)


def test_hue_and_saturation_are_hsv_with_one_argument(files):
    def graph(images):
        h = fn.random.uniform(range=(-90, 90))
        s = fn.random.uniform(range=(0.0, 3.0))
        return (fn.hue(images, hue=h), fn.hsv(images, hue=h),
                fn.saturation(images, saturation=s), fn.hsv(images, saturation=s), h)

    images, hue, hsv_h, sat, hsv_s, hs = run(graph, files, 4)
    for k, img in enumerate(images):
        np.testing.assert_array_equal(hue[k], hsv_h[k])
        np.testing.assert_array_equal(sat[k], hsv_s[k])
        assert_close_int(hue[k], twist_ref(img, np.uint8, hue=float(hs[k])))


@pytest.mark.parametrize("batch_size", [1, 4])
def test_color_twist_matches_the_formula(files, batch_size):
    def graph(images):
        b = fn.random.uniform(range=(0.5, 1.5))
        c = fn.random.uniform(range=(0.5, 1.5))
        h = fn.random.uniform(range=(-60, 60))
        s = fn.random.uniform(range=(0.0, 2.0))
        f = fn.cast(images, dtype=types.FLOAT) / 255.0
        return (b, c, h, s, f, fn.color_twist(images, brightness=b, contrast=c, hue=h, saturation=s),
                fn.color_twist(f, brightness=b, contrast=c, hue=h, saturation=s))

    images, bs, cs, hs, ss, f, outs, fouts = run(graph, files, batch_size)
    for k, img in enumerate(images):
        args = dict(brightness=float(bs[k]), contrast=float(cs[k]), hue=float(hs[k]),
                    saturation=float(ss[k]))
        assert outs[k].dtype == np.uint8
        assert_close_int(outs[k], twist_ref(img, np.uint8, **args))  # contrast around 128
        assert fouts[k].dtype == np.float32
        np.testing.assert_allclose(fouts[k], twist_ref(f[k], np.float64, **args), atol=2e-5)


def test_color_twist_on_bgr_images(files):
    args = dict(brightness=1.2, contrast=0.9, hue=70.0, saturation=1.5)
    rgb_images, rgb = run(lambda im: [fn.color_twist(im, **args)], files, 3)
    bgr_images, bgr = run(lambda im: [fn.color_twist(im, image_type=types.BGR, **args)], files, 3,
                          output_type=types.BGR)
    for k in range(3):
        assert_close_int(bgr[k][..., ::-1].copy(), rgb[k])


# ---------------------------------------------------------------- errors


def build_and_run(graph, files, output_type=types.RGB):
    return run(graph, files, 2, output_type=output_type)


@pytest.mark.parametrize("graph, error, match", [
    (lambda im: [fn.color_space_conversion(im, image_type=types.RGB, output_type=types.ANY_DATA)],
     ValueError, r"output_type.*must be RGB, BGR, YCbCr, GRAY or HSV, got ANY_DATA"),
    (lambda im: [fn.color_space_conversion(im, image_type=types.GRAY, output_type=types.RGB)],
     ValueError, r"has 3 channels .* image_type GRAY needs 1"),
    (lambda im: [fn.color_space_conversion(fn.cast(im, dtype=types.INT32), image_type=types.RGB,
                                           output_type=types.GRAY)],
     TypeError, r"must be of type UINT8, UINT16, FLOAT16 or FLOAT, got int32"),
    (lambda im: [fn.hue(im, image_type=types.YCbCr)], ValueError, r"image_type.*must be RGB or BGR"),
    (lambda im: [fn.saturation(im, saturation=-0.5)], ValueError, r"saturation"),
    (lambda im: [fn.color_twist(im, brightness=fn.random.uniform(range=(-2, -1)))],
     ValueError, r"sample 0 .*argument 'brightness' must be a finite, non-negative number, got -1\.\d+\.$"),
    (lambda im: [fn.brightness_contrast(im, dtype=types.FLOAT64)],
     ValueError, r"dtype.*must be one of UINT8, UINT16, INT16, INT32, FLOAT16 or FLOAT, got float64"),
    (lambda im: [fn.hsv(fn.cast(im, dtype=types.FLOAT64))],
     TypeError, r"input 0 must be of type .* got float64\. Convert it first with fn\.cast"),
    (lambda im: [fn.contrast(fn.random.uniform(range=(0, 1), shape=(4,)))],
     ValueError, r"input 0 must have layout HWC, FHWC or DHWC, got no layout with 1 dimensions"),
    (lambda im: [fn.brightness(im, brightness=fn.random.uniform(range=(0, 1), shape=(2,)))],
     ValueError, r"brightness.*one value per sample"),
])
def test_errors(files, graph, error, match):
    with pytest.raises(error, match=match):
        build_and_run(graph, files)


def test_hsv_needs_three_channels(files):
    with pytest.raises(ValueError, match=r"fn\.hsv.*must have 3 channels \(RGB or BGR\), but sample 0 "
                                         r"has shape \(\d+, \d+, 1\)"):
        build_and_run(lambda im: [fn.hsv(im, hue=10.0)], files, output_type=types.GRAY)


def test_color_space_conversion_needs_both_types(files):
    with pytest.raises((TypeError, ValueError), match="output_type"):
        build_and_run(lambda im: [fn.color_space_conversion(im, image_type=types.RGB)], files)


def test_pipeline_stays_usable_after_a_bad_sample_argument(files):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        jpegs, _ = fn.readers.file(files=files[:2])
        images = fn.decoders.image(jpegs)
        return fn.saturation(images, saturation=fn.random.uniform(range=(-1, 1)))

    p = pipe()
    failures = 0
    for _ in range(6):
        try:
            p.run()
        except ValueError as e:
            assert "saturation" in str(e)
            failures += 1
    assert 0 < failures < 6
