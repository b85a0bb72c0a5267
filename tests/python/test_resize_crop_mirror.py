"""resize_crop_mirror and fast_resize_crop_mirror: within 1 of DALI 2.4 on real photos, and
within 1 of stoker's own resize, then crop, then flip (what the fused operator stands for)."""
import numpy as np
import pytest
from PIL import Image

from _dali_ref import IMAGENET, real_dali, run, stoker_lib
from test_noise import LOC as _LOC, run_stoker

LOC = _LOC.replace("test_noise", "test_resize_crop_mirror")


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[::25][:8]
    if len(files) < 3:
        pytest.skip("no imagenet-sample photos")
    return [np.array(Image.open(f).convert("RGB")) for f in files]


CASES = [
    dict(resize_shorter=256, crop=(224, 224)),
    dict(resize_shorter=256, crop=(224, 224), crop_pos_x=0.1, crop_pos_y=0.8, mirror=1),
    dict(resize_x=300, resize_y=200, crop=(150, 120), mirror=3),
    dict(resize_x=100, resize_y=90, crop=(120, 130), mirror=2),  # window larger than the image
    dict(resize_longer=333, crop_h=100, crop_w=77, interp_type="INTERP_CUBIC"),
    dict(resize_shorter=600, max_size=700, crop=(300, 300), interp_type="INTERP_LANCZOS3"),
    dict(resize_x=-211, resize_y=150, crop=(99, 101), rounding="truncate", crop_pos_x=0.77),
    dict(resize_x=128, resize_y=128, roi_start=(0.1, 0.2), roi_end=(0.9, 0.7), roi_relative=True, crop=(64, 100)),
    dict(resize_shorter=101.6, subpixel_scale=False, crop=(64, 64)),
    dict(size=(120, 160), crop=(50, 60), interp_type="INTERP_NN"),
    dict(resize_x=97, resize_y=131, antialias=False, crop=(60, 50), mirror=1),
]


def _kw(t, kw):
    return {k: (getattr(t, v) if k == "interp_type" else v) for k, v in kw.items()}


@pytest.mark.parametrize("kw", CASES)
def test_within_one_of_dali(photos, kw):
    build = lambda fn, t, x: fn.resize_crop_mirror(x, **_kw(t, kw))
    s = run(stoker_lib(), build, [photos], ["HWC"])[0]
    d = run(real_dali(), build, [photos], ["HWC"])[0]
    assert s[1] == "HWC" and s[2] == "uint8"
    for a, b in zip(s[0], d[0]):
        assert a.shape == b.shape
        diff = np.abs(a.astype(int) - b)
        assert diff.max() <= 1 and np.mean(diff > 0) < 0.02


def test_fast_variant_and_float_output(photos):
    build = lambda fn, t, x: fn.fast_resize_crop_mirror(x, resize_shorter=100, crop=(64, 64), mirror=1)
    s = run(stoker_lib(), build, [photos], ["HWC"])[0]
    d = run(real_dali(), build, [photos], ["HWC"])[0]
    same = run(stoker_lib(), lambda fn, t, x: fn.resize_crop_mirror(
        x, resize_shorter=100, crop=(64, 64), mirror=1, antialias=False), [photos], ["HWC"])[0]
    for a, b, c in zip(s[0], d[0], same[0]):
        assert np.abs(a.astype(int) - b).max() <= 1
        np.testing.assert_array_equal(a, c)
    build = lambda fn, t, x: fn.resize_crop_mirror(x, resize_x=211, crop=(99, 101), dtype=t.FLOAT, mirror=1)
    s = run(stoker_lib(), build, [photos], ["HWC"])[0]
    d = run(real_dali(), build, [photos], ["HWC"])[0]
    assert s[2] == "float32"
    for a, b in zip(s[0], d[0]):
        np.testing.assert_allclose(a, b, atol=0.01)


@pytest.mark.parametrize("kw", [dict(resize_shorter=256, crop=(224, 224), mirror=1),
                                dict(resize_x=300, resize_y=200, crop=(150, 120), crop_pos_x=0.0, mirror=2),
                                dict(resize_x=120, resize_y=90, crop=(90, 120), crop_pos_y=1.0, mirror=3)])
def test_equals_resize_crop_flip(photos, kw):
    resize = {k: v for k, v in kw.items() if k.startswith("resize")}
    crop = {k: v for k, v in kw.items() if k.startswith("crop")}
    m = kw["mirror"]
    fused = run_stoker(lambda fn, t, x: fn.resize_crop_mirror(x, **kw), [photos], ["HWC"])[0]
    steps = run_stoker(lambda fn, t, x: fn.flip(fn.crop(fn.resize(x, **resize), **crop),
                                                 horizontal=m & 1, vertical=m >> 1), [photos], ["HWC"])[0]
    for a, b in zip(fused, steps):
        assert a.shape == b.shape
        assert np.abs(a.astype(int) - b).max() <= 1


def test_per_sample_arguments_equal_dali(photos):
    n = len(photos)
    mirror = [np.array(i % 4, np.int32) for i in range(n)]
    pos = [np.array(i / (n - 1), np.float32) for i in range(n)]
    short = [np.array(150 + 20 * i, np.float32) for i in range(n)]
    build = lambda fn, t, x, m, p, r: fn.resize_crop_mirror(x, resize_shorter=r, crop=(128, 96), mirror=m,
                                                            crop_pos_x=p, crop_pos_y=p)
    s = run(stoker_lib(), build, [photos, mirror, pos, short], ["HWC", None, None, None])[0]
    d = run(real_dali(), build, [photos, mirror, pos, short], ["HWC", None, None, None])[0]
    for a, b in zip(s[0], d[0]):
        assert a.shape == (128, 96, 3)
        assert np.abs(a.astype(int) - b).max() <= 1


def test_planar_and_sequences_mirror_width(photos):
    # mirror=1 flips the width whatever the layout, as DALI documents it (DALI 2.4 flips the
    # height of CHW and FHWC data instead).
    kw = dict(resize_x=150, resize_y=100, crop=(64, 80), mirror=1)
    hwc = run_stoker(lambda fn, t, x: fn.resize_crop_mirror(x, **kw), [photos[:2]], ["HWC"])[0]
    chw = run_stoker(lambda fn, t, x: fn.resize_crop_mirror(x, **kw),
                     [[p.transpose(2, 0, 1).copy() for p in photos[:2]]], ["CHW"])[0]
    seq = run_stoker(lambda fn, t, x: fn.resize_crop_mirror(x, **kw),
                     [[np.stack([p[:300, :300], p[:300, :300][::-1]]) for p in photos[:2]]], ["FHWC"])[0]
    seq_ref = run_stoker(lambda fn, t, x: fn.resize_crop_mirror(x, **kw),
                         [[p[:300, :300] for p in photos[:2]] + [p[:300, :300][::-1].copy() for p in photos[:2]]],
                         ["HWC"])[0]
    for i in range(2):
        np.testing.assert_array_equal(chw[i], hwc[i].transpose(2, 0, 1))
        np.testing.assert_array_equal(seq[i][0], seq_ref[i])
        np.testing.assert_array_equal(seq[i][1], seq_ref[i + 2])
    # Without mirroring, planar data equals DALI's.
    build = lambda fn, t, x: fn.resize_crop_mirror(x, resize_x=150, resize_y=100, crop=(64, 80))
    data = [p.transpose(2, 0, 1).copy() for p in photos[:3]]
    s = run(stoker_lib(), build, [data], ["CHW"])[0]
    d = run(real_dali(), build, [data], ["CHW"])[0]
    for a, b in zip(s[0], d[0]):
        assert np.abs(a.astype(int) - b).max() <= 1


def test_without_crop_is_resize(photos):
    a = run_stoker(lambda fn, t, x: fn.resize_crop_mirror(x, resize_x=40, resize_y=30), [photos[:2]], ["HWC"])[0]
    b = run_stoker(lambda fn, t, x: fn.resize(x, resize_x=40, resize_y=30), [photos[:2]], ["HWC"])[0]
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p, q)


X = [np.zeros((4, 5, 3), np.uint8)]


@pytest.mark.parametrize("build,data,layout,msg", [
    (lambda fn, t, a: fn.resize_crop_mirror(a, crop=(2, 2)), X, "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": resize: give the output size in exactly one way: "
     r"resize_x/resize_y, size, resize_shorter or resize_longer; got none of them$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, resize_shorter=3, crop=(2, 2)), X, "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": resize: give the output size in exactly one way: "
     r"resize_x/resize_y, size, resize_shorter or resize_longer; got resize_x, resize_shorter$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop=(2, 2), dtype=t.INT16), X, "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'dtype' must be the input's type \(uint8\) or FLOAT, "
     r"got int16\.$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop=(2, 2)), [X[0].astype(np.int32)], "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'input' must be uint8, int16, uint16 or float32, "
     r"got int32\.$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop=(2, 2, 2)), X, "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'crop' has 3 values \(D, H, W\), but the input "
     r"layout 'HWC' has no D \(or F\) axis\.$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop=(1, 2, 2)), [np.stack([X[0]] * 2)], "FHWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'crop' crops only the height and width of images "
     r"and sequences; a third extent \(depth or frames\) is not supported, got layout 'FHWC' for sample 0\.$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop=(2, 2)), [X[0][None]], "DHWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'input' has layout 'DHWC': 3-D \(volumetric\) "
     r"resizing is not supported yet\. Give HWC, CHW, FHWC, FCHW or CFHW data\.$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop=(2, 2), mirror=-1), X, "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'mirror' must be >= 0, got -1\.$"),
    (lambda fn, t, a: fn.resize_crop_mirror(a, resize_x=4, crop_h=2), X, "HWC",
     r"^fn\.resize_crop_mirror" + LOC + r": argument 'crop_w' must be given together with 'crop_h'\.$"),
])
def test_errors(build, data, layout, msg):
    with pytest.raises(ValueError, match=msg):
        run_stoker(build, [data], [layout])
