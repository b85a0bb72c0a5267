"""random_resized_crop: its windows (recovered exactly from coordinate images), its pixels against
Pillow's resize of the same window, the whole-image case against fn.resize, the statistics of
the windows, and determinism across thread counts."""
import math

import cv2
import numpy as np
import pytest
from PIL import Image

from stoker import fn, pipeline_def, types


@pytest.fixture(scope="module")
def photos(jpeg_files):
    return [p for p, _ in jpeg_files[::4]]


def write_coordinate_png(path, h, w, bits=16):
    """An h x w PNG whose pixels hold their own position: R = x, G = y."""
    y, x = np.mgrid[0:h, 0:w]
    dt = np.uint16 if bits == 16 else np.uint8
    bgr = np.dstack([np.zeros_like(x), y, x]).astype(dt)  # OpenCV writes BGR
    assert cv2.imwrite(str(path), bgr, [cv2.IMWRITE_PNG_COMPRESSION, 0])
    return str(path)


def rrc_run(files, seed=21, num_threads=2, dtype=types.UINT8, iterations=1, **kw):
    """decoders.image and random_resized_crop at graph positions 1 and 2."""
    @pipeline_def(batch_size=len(files), num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        j, _ = fn.readers.file(files=files)
        images = fn.decoders.image(j, dtype=dtype)
        return images, fn.random_resized_crop(images, **kw)

    p = pipe()
    runs = []
    for _ in range(iterations):
        full, out = p.run()
        runs.append(([full[i] for i in range(len(files))], [out[i] for i in range(len(files))]))
    return runs if iterations > 1 else runs[0]


def windows_nearest(outs):
    """(y, x, h, w) from random_resized_crop outputs of coordinate images, taken with INTERP_NN
    to a size at least the window's: the first and last output pixels are then the window's
    first and last source pixels."""
    r = []
    for o in outs:
        o = o.astype(int)
        y, x = o[0, 0, 1], o[0, 0, 0]
        r.append((y, x, o[-1, -1, 1] - y + 1, o[-1, -1, 0] - x + 1))
    return r


@pytest.fixture(scope="module")
def photo_windows(photos, tmp_path_factory):
    """The windows random_resized_crop (seed 21, default area and ratio) takes on `photos`."""
    d = tmp_path_factory.mktemp("coords")
    fulls = rrc_run(photos, size=8)[0]
    coords = [write_coordinate_png(d / f"c{i}.png", f.shape[0], f.shape[1]) for i, f in enumerate(fulls)]
    big = max(max(f.shape[:2]) for f in fulls)
    _, outs = rrc_run(coords, dtype=types.UINT16, size=big, interp_type=types.INTERP_NN)
    return windows_nearest(outs)


def test_pixels_equal_pillow_resize_of_the_window(photos, photo_windows):
    size = (224, 160)
    fulls, outs = rrc_run(photos, size=size)
    worst, means = 0, []
    for f, o, (y, x, h, w) in zip(fulls, outs, photo_windows):
        assert o.shape == size + (3,) and o.dtype == np.uint8
        area = h * w / (f.shape[0] * f.shape[1])
        assert 0.07 <= area <= 1.0 and 0.74 <= w / h <= 1.34
        ref = np.asarray(Image.fromarray(f).resize(size[::-1], Image.BILINEAR, box=(x, y, x + w, y + h)))
        d = np.abs(o.astype(int) - ref)
        worst = max(worst, int(d.max()))
        means.append(d.mean())
    # Pillow rounds to 8 bits between its two passes; stoker does not.
    assert worst <= 2 and np.mean(means) < 0.3, (worst, np.mean(means))


def test_same_windows_as_decoders_image_random_crop(photos):
    # Both draw DALI's window from the same stream (same seed, same place in the graph), so
    # the fused decoder with size and no DCT scaling reproduces decode + random_resized_crop.
    size = (128, 128)
    _, rrc = rrc_run(photos, size=size)

    @pipeline_def(batch_size=len(photos), num_threads=2, device_id=None, seed=21)
    def pipe():
        j, _ = fn.readers.file(files=photos)
        images = fn.decoders.image(j)
        return images, fn.decoders.image_random_crop(j, size=size, dct_downscale=False)

    _, fused = pipe().run()
    for i in range(len(photos)):
        assert np.abs(fused[i].astype(int) - rrc[i]).max() <= 1


def test_whole_image_window_equals_resize(photos):
    for f in photos[:4]:
        fulls, _ = rrc_run([f], size=8)
        H, W = fulls[0].shape[:2]

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=2)
        def pipe():
            j, _ = fn.readers.file(files=[f])
            images = fn.decoders.image(j)
            return (fn.random_resized_crop(images, size=(123, 177), random_area=1.0,
                                           random_aspect_ratio=W / H),
                    fn.resize(images, size=(123, 177)))

        a, b = pipe().run()
        assert a[0].shape == (123, 177, 3)
        assert np.abs(a[0].astype(int) - b[0]).max() <= 1


def test_window_statistics(tmp_path):
    # 60 x 80 (ratio 4/3): every draw with area <= 9/16 fits, so those areas stay uniform;
    # log(ratio) is symmetric about 0 for the default range.
    H, W = 60, 80
    f = write_coordinate_png(tmp_path / "c.png", H, W, bits=8)
    runs = rrc_run([f] * 64, seed=5, iterations=12, size=(128, 128), interp_type=types.INTERP_NN)
    wins = [w for _, outs in runs for w in windows_nearest(outs)]
    assert len(wins) == 768
    areas = np.array([h * w / (H * W) for _, _, h, w in wins])
    ratios = np.array([w / h for _, _, h, w in wins])
    ys = np.array([y for y, _, h, _ in wins])
    assert all(0 <= y and y + h <= H and 0 <= x and x + w <= W for y, x, h, w in wins)
    assert areas.min() >= 0.07 and areas.max() <= 1.0
    assert ratios.min() >= 0.75 - 1e-9 and ratios.max() <= 4 / 3 + 1e-9
    low = ((areas >= 0.08) & (areas < 0.32)).sum()
    high = ((areas >= 0.32) & (areas < 0.56)).sum()
    assert 0.75 < low / high < 1.33, (low, high)
    assert abs(np.log(ratios).mean()) < 0.04
    assert len(set(wins)) > 600, "windows repeat"
    # positions spread over the whole range
    assert ys.min() == 0 and max(y + h for y, _, h, _ in wins) == H


def test_fixed_area_and_ratio(tmp_path):
    f = write_coordinate_png(tmp_path / "c.png", 100, 100, bits=8)
    _, outs = rrc_run([f] * 16, size=(64, 64), interp_type=types.INTERP_NN,
                      random_area=0.25, random_aspect_ratio=1.0)
    for y, x, h, w in windows_nearest(outs):
        assert (h, w) == (50, 50) and 0 <= y <= 50 and 0 <= x <= 50


def test_deterministic_across_threads_and_iterations(photos):
    a = rrc_run(photos, num_threads=1, iterations=2, size=96)
    b = rrc_run(photos, num_threads=3, iterations=2, size=96)
    for (_, oa), (_, ob) in zip(a, b):
        for x, y in zip(oa, ob):
            assert np.array_equal(x, y)
    assert any(not np.array_equal(x, y) for x, y in zip(a[0][1], a[1][1])), "iterations repeat"


def test_dtype_float(photos):
    # a float output rounds to the uint8 one (same windows: same seed and place in the graph)
    _, outs = rrc_run(photos[:3], size=(50, 70), interp_type=types.INTERP_CUBIC)

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=21)
    def pipe():
        j, _ = fn.readers.file(files=photos[:3])
        images = fn.decoders.image(j)
        return images, fn.random_resized_crop(images, size=(50, 70), dtype=types.FLOAT,
                                              interp_type=types.INTERP_CUBIC)

    _, fl = pipe().run()
    assert fl.dtype == types.FLOAT
    for i in range(3):
        assert np.abs(np.clip(np.round(fl[i]), 0, 255) - outs[i]).max() <= 1


def test_errors(photos):
    def run(**kw):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            j, _ = fn.readers.file(files=photos[:1])
            return fn.random_resized_crop(fn.decoders.image(j), **kw)

        return pipe().run()

    with pytest.raises(ValueError, match=r"'size' is required"):
        run()
    with pytest.raises(ValueError, match=r"size"):
        run(size=[0, 4])
    with pytest.raises(ValueError, match=r"dtype.*input's type.*or FLOAT"):
        run(size=4, dtype=types.INT16)
    with pytest.raises(ValueError, match=r"random_aspect_ratio.*min <= max"):
        run(size=4, random_aspect_ratio=[2.0, 1.0])
