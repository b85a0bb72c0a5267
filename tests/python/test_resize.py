"""fn.resize against Pillow (antialiased) and OpenCV (plain interpolation) on real photos."""
import cv2
import numpy as np
import pytest
from PIL import Image

from stoker import fn, pipeline_def, types


def decode_and_resize(files, **resize_args):
    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        images = fn.decoders.image(jpegs)
        return images, fn.resize(images, **resize_args)

    return pipe().run()


@pytest.fixture(scope="module")
def photos(jpeg_files):
    return [p for p, _ in jpeg_files[::6]]


def test_linear_antialias_matches_pillow(photos):
    # Pillow renormalises the filter taps at the borders, DALI (and stoker's default) repeats
    # the edge pixel: the outer frame (as wide as the widened filter) differs, the rest agrees.
    images, out = decode_and_resize(photos, resize_x=224, resize_y=160)
    assert out.layout() == "HWC" and out.dtype == types.UINT8
    for i in range(len(photos)):
        ref = np.asarray(Image.fromarray(images[i]).resize((224, 160), Image.BILINEAR))
        diff = np.abs(out[i].astype(int) - ref)[2:-2, 2:-2]
        assert out[i].shape == (160, 224, 3)
        assert diff.mean() <= 0.5 and diff.max() <= 10, (photos[i], diff.mean(), diff.max())


@pytest.mark.parametrize("size", [(300, 200), (700, 900)])
@pytest.mark.parametrize("interp,cv_interp,parity", [
    (types.INTERP_LINEAR, cv2.INTER_LINEAR, "default"),
    (types.INTERP_LINEAR, cv2.INTER_LINEAR, "opencv"),
    (types.INTERP_CUBIC, cv2.INTER_CUBIC, "opencv"),
    (types.INTERP_NN, cv2.INTER_NEAREST, "opencv")])
def test_without_antialias_matches_opencv(photos, size, interp, cv_interp, parity):
    images, out = decode_and_resize(photos, size=size, interp_type=interp, antialias=False,
                                    parity=parity)
    for i in range(len(photos)):
        ref = cv2.resize(images[i], size[::-1], interpolation=cv_interp)
        assert out[i].shape == size + (3,)
        assert np.abs(out[i].astype(int) - ref).max() <= 1


@pytest.mark.parametrize("interp,pil_filter", [(types.INTERP_LINEAR, Image.BILINEAR),
                                               (types.INTERP_CUBIC, Image.BICUBIC),
                                               (types.INTERP_LANCZOS3, Image.LANCZOS),
                                               (types.INTERP_NN, Image.NEAREST)])
@pytest.mark.parametrize("size", [(160, 224), (900, 1000)])
def test_pil_parity_reproduces_pillow(photos, interp, pil_filter, size):
    images, out = decode_and_resize(photos[:3], size=size, interp_type=interp, parity="pil")
    for i in range(3):
        ref = np.asarray(Image.fromarray(images[i]).resize(size[::-1], pil_filter))
        diff = np.abs(out[i].astype(int) - ref)
        # Pillow's own int16 SIMD path departs from its published algorithm on rare pixels
        # (rounding ties, and a few cubic/lanczos outliers), which stoker follows.
        assert diff.mean() < 0.2 and np.percentile(diff, 99.5) <= 1, (diff.mean(), diff.max())
        if interp in (types.INTERP_NN, types.INTERP_LINEAR):
            assert diff.max() <= 2


@pytest.mark.parametrize("args,in_hw,out_hw", [
    (dict(mode="not_smaller", size=(600, 600), max_size=720), (480, 640), (540, 720)),
    (dict(mode="not_larger", size=(500, 600)), (480, 640), (450, 600)),
    (dict(size=(600, 0)), (480, 640), (600, 800)),
    (dict(resize_shorter=256), (375, 500), (256, 341)),
    (dict(resize_longer=100), (375, 500), (75, 100)),
    (dict(resize_x=100), (375, 500), (75, 100)),
    (dict(resize_x=100, resize_y=50), (375, 500), (50, 100)),
])
def test_dali_sizing_rules(args, in_hw, out_hw):
    h, w = in_hw

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        img = fn.cast(fn.random.uniform(range=(0, 255), shape=(h, w, 3)), dtype=types.UINT8)
        return fn.resize(img, **args)

    (out,) = pipe().run()
    assert out[0].shape[:2] == out_hw


def test_float_output_and_per_sample_sizes():
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=5)
    def pipe():
        img = fn.random.uniform(range=(0, 1), shape=(40, 60, 3))
        sz = fn.random.uniform(range=(10, 30), dtype=types.INT32)
        return fn.resize(img, resize_x=sz, resize_y=sz, dtype=types.FLOAT), sz

    out, sz = pipe().run()
    for i in range(4):
        s = int(sz[i])
        assert out[i].shape == (s, s, 3) and out[i].dtype == np.float32


def test_resize_error_messages():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        img = fn.random.uniform(range=(0, 1), shape=(4, 4, 3))
        return fn.resize(img, mode="bigger", size=(2, 2))

    with pytest.raises(ValueError, match=r"^fn\.resize \(test_resize\.py:\d+\): argument 'mode' must be one of"):
        pipe()


def test_experimental_resize_is_resize(photos):
    # DALI's experimental.resize (CV-CUDA, GPU only there) takes resize's arguments; stoker
    # runs its resize for it, on either device.
    @pipeline_def(batch_size=len(photos), num_threads=2, device_id=None, seed=1)
    def pipe():
        images = fn.decoders.image(fn.readers.file(files=photos)[0])
        kw = dict(resize_shorter=97, interp_type=types.INTERP_CUBIC, max_size=150)
        return fn.resize(images, **kw), fn.experimental.resize(images, **kw)
    a, b = pipe().run()
    for i in range(len(photos)):
        np.testing.assert_array_equal(np.asarray(a[i]), np.asarray(b[i]))
