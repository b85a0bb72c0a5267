"""decoders.image_crop / image_slice / image_random_crop against decoders.image followed by NumPy
slicing (and, for the fused resize, Pillow), on JPEGs, EXIF-oriented JPEGs and PNGs.

Random windows are recovered exactly with coordinate images: a 16-bit PNG of the same size
whose pixels hold their own (x, y). A decoder at the same place in a pipeline with the same seed
draws the same windows for images of the same size, so cropping the coordinate image tells
which window the photo got."""
import math

import cv2
import numpy as np
import pytest
from PIL import Image

from stoker import fn, pipeline_def, types

# max abs difference allowed to decode-then-crop (8-bit): libjpeg's cropped decode may round
# differently from the full decode at a few pixels.
TOL = 4


@pytest.fixture(scope="module")
def image_sets(testdata, jpeg_files):
    img = testdata / "images"
    return {
        "jpeg": [p for p, _ in jpeg_files[::3]],
        "orientation": sorted(str(p) for p in (img / "orientation").glob("*.jpg")),
        "png": sorted(str(p) for p in (img / "png" / "0").glob("*.png")),
    }


def round_half_up(v):
    """std::round for v >= 0."""
    return int(math.floor(v + 0.5))


def decode_all(files, dtype=types.UINT8, **kw):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=files)
        return fn.decoders.image(j, dtype=dtype, **kw)

    (out,) = pipe().run()
    return [out[i] for i in range(len(files))]


def check_crops(crops, fulls, windows, tol=TOL):
    worst, means = 0, []
    for c, f, (y, x, h, w) in zip(crops, fulls, windows):
        assert c.shape == (h, w, f.shape[2])
        assert 0 <= y and y + h <= f.shape[0] and 0 <= x and x + w <= f.shape[1]
        d = np.abs(c.astype(int) - f[y:y + h, x:x + w])
        worst = max(worst, int(d.max()))
        means.append(d.mean())
    assert worst <= tol, f"max abs diff to decode-then-crop: {worst}"
    return worst, float(np.mean(means))


# ---------------------------------------------------------------------------------------------
# decoders.image_crop

@pytest.mark.parametrize("kind", ["jpeg", "orientation", "png"])
def test_image_crop_equals_decode_then_crop(image_sets, kind):
    files = image_sets[kind]
    ch, cw = 97, 131

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=3)
    def pipe():
        j, _ = fn.readers.file(files=files)
        px = fn.random.uniform(range=[0, 1])
        py = fn.random.uniform(range=[0, 1])
        return fn.decoders.image_crop(j, crop=(ch, cw), crop_pos_x=px, crop_pos_y=py), px, py

    crops, px, py = pipe().run()
    assert crops.layout() == "HWC" and crops.dtype == types.UINT8
    fulls = decode_all(files)
    windows = []
    for i, f in enumerate(fulls):
        H, W = f.shape[:2]
        # DALI: anchor = round(pos * (extent - window)), in float32
        y = round_half_up(np.float32(py[i].item()) * np.float32(H - ch))
        x = round_half_up(np.float32(px[i].item()) * np.float32(W - cw))
        windows.append((y, x, ch, cw))
    check_crops([crops[i] for i in range(len(files))], fulls, windows)


def test_image_crop_corners_hw_args_and_batch_of_one(image_sets):
    files = image_sets["jpeg"][:1]
    fulls = decode_all(files)
    H, W = fulls[0].shape[:2]
    for pos in [(0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.5, 0.5)]:
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            j, _ = fn.readers.file(files=files)
            return fn.decoders.image_crop(j, crop_h=33, crop_w=17, crop_pos_x=pos[0], crop_pos_y=pos[1])

        (c,) = pipe().run()
        y = round_half_up(np.float32(pos[1]) * np.float32(H - 33))
        x = round_half_up(np.float32(pos[0]) * np.float32(W - 17))
        check_crops([c[0]], fulls, [(y, x, 33, 17)])
    # the whole image, and a 1x1 crop
    for crop in [(H, W), (1, 1)]:
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            j, _ = fn.readers.file(files=files)
            return fn.decoders.image_crop(j, crop=crop, crop_pos_x=0.3, crop_pos_y=0.7)

        (c,) = pipe().run()
        y = round_half_up(np.float32(0.7) * np.float32(H - crop[0]))
        x = round_half_up(np.float32(0.3) * np.float32(W - crop[1]))
        check_crops([c[0]], fulls, [(y, x) + crop])


@pytest.mark.parametrize("output_type,dtype,orient", [(types.GRAY, types.UINT8, True),
                                                      (types.BGR, types.UINT16, True),
                                                      (types.RGB, types.UINT8, False)])
def test_image_crop_decoder_arguments(image_sets, output_type, dtype, orient):
    files = image_sets["orientation"][:4] + image_sets["png"][:2]

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=files)
        return fn.decoders.image_crop(j, crop=(64, 48), crop_pos_x=0.25, crop_pos_y=0.8,
                                      output_type=output_type, dtype=dtype,
                                      adjust_orientation=orient)

    (c,) = pipe().run()
    assert c.dtype == dtype
    fulls = decode_all(files, dtype=dtype, output_type=output_type, adjust_orientation=orient)
    windows = [(round_half_up(np.float32(0.8) * np.float32(f.shape[0] - 64)),
                round_half_up(np.float32(0.25) * np.float32(f.shape[1] - 48)), 64, 48) for f in fulls]
    check_crops([c[i] for i in range(len(files))], fulls, windows,
                tol=TOL * 257 if dtype == types.UINT16 else TOL)


# ---------------------------------------------------------------------------------------------
# decoders.image_slice

@pytest.mark.parametrize("kind", ["jpeg", "orientation", "png"])
def test_image_slice_normalized_inputs(image_sets, kind):
    files = image_sets[kind]

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=5)
    def pipe():
        j, _ = fn.readers.file(files=files)
        anchor = fn.random.uniform(range=[0.0, 0.5], shape=[2])
        shape = fn.random.uniform(range=[0.1, 0.5], shape=[2])
        return fn.decoders.image_slice(j, anchor, shape), anchor, shape

    out, anchor, shape = pipe().run()
    fulls = decode_all(files)
    windows = []
    for i, f in enumerate(fulls):
        H, W = f.shape[:2]
        (ax, ay), (sx, sy) = anchor[i].astype(float), shape[i].astype(float)  # axis_names "WH"
        y0, y1 = round_half_up(ay * H), round_half_up((ay + sy) * H)
        x0, x1 = round_half_up(ax * W), round_half_up((ax + sx) * W)
        windows.append((y0, x0, y1 - y0, x1 - x0))
    check_crops([out[i] for i in range(len(files))], fulls, windows)


def test_image_slice_absolute_inputs_and_axis_order(image_sets):
    files = image_sets["orientation"]

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=5)
    def pipe():
        j, _ = fn.readers.file(files=files)
        anchor = fn.random.uniform(range=[0, 100], shape=[2], dtype=types.INT32)
        shape = fn.random.uniform(range=[20, 200], shape=[2], dtype=types.INT32)
        return (fn.decoders.image_slice(j, anchor, shape, normalized_anchor=False,
                                        normalized_shape=False, axis_names="HW"),
                fn.decoders.image_slice(j, anchor, shape, normalized_anchor=False,
                                        normalized_shape=False, axes=[1, 0]),
                anchor, shape)

    hw, wh, anchor, shape = pipe().run()
    fulls = decode_all(files)
    a = [anchor[i].astype(int) for i in range(len(files))]
    s = [shape[i].astype(int) for i in range(len(files))]
    check_crops([hw[i] for i in range(len(files))], fulls,
                [(a[i][0], a[i][1], s[i][0], s[i][1]) for i in range(len(files))])
    check_crops([wh[i] for i in range(len(files))], fulls,
                [(a[i][1], a[i][0], s[i][1], s[i][0]) for i in range(len(files))])


def test_image_slice_named_arguments(image_sets):
    files = image_sets["png"][:3] + image_sets["jpeg"][:3]
    fulls = decode_all(files)

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=5)
    def pipe():
        j, _ = fn.readers.file(files=files)
        return (fn.decoders.image_slice(j, rel_start=[0.1, 0.2], rel_shape=[0.5, 0.3]),
                fn.decoders.image_slice(j, start=[10, 20], end=[90, 61], axes=[0, 1]),
                fn.decoders.image_slice(j, rel_start=[0.25], shape=[50], axis_names="H"))

    rel, absolute, one_axis = pipe().run()
    w_rel, w_abs, w_one = [], [], []
    for f in fulls:
        H, W = f.shape[:2]
        x0, y0 = round_half_up(0.1 * W), round_half_up(0.2 * H)
        w_rel.append((y0, x0, round_half_up(0.2 * H + 0.3 * H) - y0, round_half_up(0.1 * W + 0.5 * W) - x0))
        w_abs.append((10, 20, 80, 41))
        y0 = round_half_up(0.25 * H)
        w_one.append((y0, 0, round_half_up(0.25 * H + 50) - y0, W))
    n = len(files)
    check_crops([rel[i] for i in range(n)], fulls, w_rel)
    check_crops([absolute[i] for i in range(n)], fulls, w_abs)
    check_crops([one_axis[i] for i in range(n)], fulls, w_one)


# ---------------------------------------------------------------------------------------------
# decoders.image_random_crop

def coordinate_pngs(tmp_path, fulls):
    """For each image, a 16-bit PNG of its (oriented) size with R = x, G = y."""
    paths = []
    for i, f in enumerate(fulls):
        H, W = f.shape[:2]
        y, x = np.mgrid[0:H, 0:W].astype(np.uint16)
        bgr = np.dstack([np.zeros_like(x), y, x])  # OpenCV writes BGR
        p = tmp_path / f"coords_{i:03d}.png"
        assert cv2.imwrite(str(p), bgr, [cv2.IMWRITE_PNG_COMPRESSION, 0])
        paths.append(str(p))
    return paths


def windows_from_coords(crops):
    """(y, x, h, w) of each crop of a coordinate image."""
    out = []
    for c in crops:
        c = c.astype(int)
        y, x = c[0, 0, 1], c[0, 0, 0]
        h, w = c.shape[:2]
        assert c[-1, -1, 1] == y + h - 1 and c[-1, -1, 0] == x + w - 1, "not a plain crop"
        out.append((y, x, h, w))
    return out


def random_crop_run(files, seed=11, num_threads=2, dtype=types.UINT8, **kw):
    """decoders.image and decoders.image_random_crop at graph positions 1 and 2."""
    @pipeline_def(batch_size=len(files), num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        j, _ = fn.readers.file(files=files)
        return fn.decoders.image(j, dtype=dtype), fn.decoders.image_random_crop(j, dtype=dtype, **kw)

    full, crop = pipe().run()
    return [full[i] for i in range(len(files))], [crop[i] for i in range(len(files))]


def exact_windows(files, tmp_path, **kw):
    """The windows decoders.image_random_crop(**kw) with seed 11 takes on `files`, read from
    coordinate images of the same sizes cropped with the same arguments."""
    coords = coordinate_pngs(tmp_path, decode_all(files))

    @pipeline_def(batch_size=len(coords), num_threads=2, device_id=None, seed=11)
    def pipe():
        j, _ = fn.readers.file(files=coords)
        dummy = fn.random.uniform()  # in place of decoders.image: the crop must be op #2
        return fn.decoders.image_random_crop(j, dtype=types.UINT16, **kw), dummy

    crops, _ = pipe().run()
    return windows_from_coords([crops[i] for i in range(len(coords))])


@pytest.fixture(scope="module")
def random_windows(image_sets, tmp_path_factory):
    """The windows decoders.image_random_crop (seed 11, default arguments) takes per set."""
    return {kind: exact_windows(files, tmp_path_factory.mktemp(kind))
            for kind, files in image_sets.items()}


@pytest.mark.parametrize("kind", ["jpeg", "orientation", "png"])
def test_image_random_crop_equals_decode_then_crop(image_sets, random_windows, kind):
    files = image_sets[kind]
    fulls, crops = random_crop_run(files)
    check_crops(crops, fulls, random_windows[kind])
    for (y, x, h, w), f in zip(random_windows[kind], fulls):
        area = h * w / (f.shape[0] * f.shape[1])
        assert 0.07 <= area <= 1.0
        assert 0.74 <= w / h <= 1.34


def test_image_random_crop_is_deterministic(image_sets):
    files = image_sets["jpeg"][:8]
    _, a = random_crop_run(files, num_threads=1)
    _, b = random_crop_run(files, num_threads=3)
    for x, y in zip(a, b):
        assert x.shape == y.shape and np.array_equal(x, y)
    _, c = random_crop_run(files, seed=12)
    assert any(x.shape != y.shape for x, y in zip(a, c)), "another seed gave the same windows"


def test_image_random_crop_fixed_area_and_ratio(image_sets):
    files = image_sets["png"]
    fulls, crops = random_crop_run(files, random_area=[0.25, 0.25], random_aspect_ratio=1.0)
    for f, c in zip(fulls, crops):
        side = round(math.sqrt(0.25 * f.shape[0] * f.shape[1]))
        assert abs(c.shape[0] - side) <= 1 and c.shape[0] == c.shape[1]


# ---------------------------------------------------------------------------------------------
# stoker extension: decoders.image_random_crop(size=...) with DCT downscaling

def pil_resize_window(full, window, size):
    y, x, h, w = window
    return np.asarray(Image.fromarray(full).resize((size[1], size[0]), Image.BILINEAR,
                                                   box=(x, y, x + w, y + h)))


@pytest.mark.parametrize("kind", ["jpeg", "orientation", "png"])
def test_fused_resize_matches_decode_crop_resize(image_sets, random_windows, kind):
    files = image_sets[kind]
    size = (224, 224)
    fulls, exact = random_crop_run(files, size=size, dct_downscale=False)
    _, scaled = random_crop_run(files, size=size)
    means_exact, means_scaled = [], []
    for f, w, e, s in zip(fulls, random_windows[kind], exact, scaled):
        ref = pil_resize_window(f, w, size).astype(int)
        assert e.shape == s.shape == size + (3,)
        de, ds = np.abs(e.astype(int) - ref), np.abs(s.astype(int) - ref)
        assert de.max() <= 3, de.max()
        means_exact.append(de.mean())
        means_scaled.append(ds.mean())
    # full-size decode: Pillow's antialiased bilinear to within its 8-bit rounding between passes
    assert np.mean(means_exact) < 0.5
    # DCT-domain downscaling filters a little differently from the antialiased resize
    # (on the test photos: 0.6 on average, up to 2.7 for a detailed one)
    assert max(means_scaled) < 4.0 and np.mean(means_scaled) < 1.5, (max(means_scaled), np.mean(means_scaled))


def test_fused_resize_dct_scaling_is_aligned_on_oriented_images(image_sets, tmp_path):
    # Windows of 50-100% of a 426 x 640 image resized to 48 x 48 decode at 1/4 or 1/8, where
    # an axis that the orientation reverses has its partial pixel first (426 / 8 = 53.25). The
    # result must match the exact window better than the window moved by 4 pixels any way.
    files = image_sets["orientation"]
    kw = dict(random_area=[0.5, 1.0])
    windows = exact_windows(files, tmp_path, **kw)
    fulls, scaled = random_crop_run(files, size=(48, 48), **kw)
    for f, (y, x, h, w), s in zip(fulls, windows, scaled):
        errors = {}
        for dy in (-4, 0, 4):
            for dx in (-4, 0, 4):
                if 0 <= y + dy and y + dy + h <= f.shape[0] and 0 <= x + dx and x + dx + w <= f.shape[1]:
                    ref = pil_resize_window(f, (y + dy, x + dx, h, w), (48, 48))
                    errors[dy, dx] = np.abs(s.astype(int) - ref).mean()
        assert min(errors, key=errors.get) == (0, 0), errors
        assert errors[0, 0] < 3.0


def test_fused_resize_decodes_at_full_size_when_scaling_would_lose_pixels(image_sets):
    # No window of these images is 2 x 1000 pixels tall, so DCT scaling never applies and the
    # default gives exactly what dct_downscale=False gives.
    files = image_sets["jpeg"][:6]
    _, exact = random_crop_run(files, size=(1000, 900), dct_downscale=False)
    _, default = random_crop_run(files, size=(1000, 900))
    for e, d in zip(exact, default):
        assert np.array_equal(e, d)


# ---------------------------------------------------------------------------------------------
# errors

def build_and_run(fn_body, files):
    @pipeline_def(batch_size=len(files), num_threads=1, device_id=None, seed=1)
    def pipe():
        j, _ = fn.readers.file(files=files)
        return fn_body(j)

    return pipe().run()


def test_errors(image_sets):
    files = image_sets["png"][:1]
    with pytest.raises(ValueError, match=r"decoders.image_crop.*'crop'.*larger than the"):
        build_and_run(lambda j: fn.decoders.image_crop(j, crop=(5000, 10)), files)
    with pytest.raises(ValueError, match=r"decoders.image_crop.*'crop' is required"):
        build_and_run(lambda j: fn.decoders.image_crop(j), files)
    with pytest.raises(ValueError, match=r"decoders.image_slice.*reaches outside"):
        build_and_run(lambda j: fn.decoders.image_slice(j, start=[0, 0], shape=[10000, 10]), files)
    with pytest.raises(ValueError, match=r"axis_names.*H and W only"):
        build_and_run(lambda j: fn.decoders.image_slice(j, rel_start=[0.1], rel_shape=[0.5],
                                                        axis_names="C"), files)
    with pytest.raises(ValueError, match=r"no slice given"):
        build_and_run(lambda j: fn.decoders.image_slice(j), files)
    with pytest.raises(ValueError, match=r"random_area.*min <= max"):
        build_and_run(lambda j: fn.decoders.image_random_crop(j, random_area=[0.5, 0.1]), files)
    with pytest.raises(ValueError, match=r"random_aspect_ratio.*> 0"):
        build_and_run(lambda j: fn.decoders.image_random_crop(j, random_aspect_ratio=[0, 1]), files)
    with pytest.raises(ValueError, match=r"size"):
        build_and_run(lambda j: fn.decoders.image_random_crop(j, size=[0, 10]), files)
