"""tensor_resize: output shapes and values against DALI 2.4's own operator (shapes exact; values
within resize's known distance from DALI's: 1 level on uint8, 1e-3 on float), against NumPy's
linear interpolation on 1-D signals, against stoker's resize on images (equal), on a real photo;
and the errors of bad arguments."""
import re

import numpy as np
import pytest

from stoker import fn, pipeline_def, types

RNG = np.random.RandomState(0)
IMAGE = RNG.randint(0, 256, (10, 20, 3)).astype(np.uint8)
TENSOR5 = RNG.rand(4, 5, 6, 7, 3).astype(np.float32)
SIGNAL = RNG.rand(50).astype(np.float32)


def run(data, fn_=fn, pdef=pipeline_def, layout=None, **kw):
    @pdef(batch_size=len(data), num_threads=2, device_id=None)
    def p():
        return fn_.tensor_resize(fn_.external_source(source=lambda: data, batch=True,
                                                     layout=layout), **kw)
    (out,) = p().run()
    return [np.array(out[i]) for i in range(len(data))]


CASES = [
    (IMAGE, dict(axes=[0, 1], sizes=[20, 40])),
    (IMAGE, dict(axes=[0, 1], scales=[1.55, 1.55])),           # 15.5 -> 16, the scale kept
    (IMAGE, dict(sizes=[20, 40, 3])),
    (IMAGE, dict(axes=[1], sizes=[7])),
    (IMAGE, dict(axes=[-2], sizes=[5])),
    (IMAGE, dict(axes=[0, 1], sizes=[5, 0])),                   # 0: from the others' mean scale
    (IMAGE, dict(axes=[0, 1], scales=[0.55, 0.55], size_rounding="truncate")),
    (IMAGE, dict(axes=[0, 1], scales=[0.55, 0.55], size_rounding="ceil")),
    (IMAGE, dict(sizes=[20, 40, 6])),                           # channels resampled too
    (IMAGE, dict(axes=[2], sizes=[6])),
    (IMAGE, dict(axes=[0, 1], sizes=[20, 20], mode="not_smaller")),  # channels doubled, as DALI
    (IMAGE, dict(axes=[0, 1], sizes=[20, 50], mode="not_larger")),
    (IMAGE, dict(axes=[0, 1], sizes=[20, 40], mode="stretch")),
    (IMAGE, dict(axes=[0, 1], sizes=[20, 40], max_size=30)),
    (IMAGE, dict(axes=[0, 1], sizes=[20, 40], roi_start=[2, 2], roi_end=[8, 18])),
    (IMAGE, dict(axes=[0, 1], sizes=[7, 9], roi_start=[0.9, 0.1], roi_end=[0.2, 0.8],
                 roi_relative=True)),                           # flipped along H
    (IMAGE, dict(axes=[0, 1], scales=[0.37, 0.61], alignment=[0, 1])),
    (IMAGE, dict(axes=[0, 1], scales=[0.37, 0.61], subpixel_scale=False)),
    (IMAGE, dict(axes=[0, 1], sizes=[4, 7], interp_type=types.INTERP_NN)),
    (IMAGE, dict(axes=[0, 1], sizes=[4, 7], antialias=False)),
    (IMAGE, dict(axes=[0, 1], sizes=[20, 40], dtype=types.FLOAT)),
    (IMAGE.astype(np.int16) * 100 - 9000, dict(axes=[0, 1], sizes=[6, 30])),
    (TENSOR5, dict(axes=[1, 3], sizes=[9, 3])),                 # axis 2 between: kept
    (TENSOR5, dict(axes=[1, 2, 3], sizes=[3, 13, 4])),          # a volume per frame
    (SIGNAL, dict(sizes=[20])),
    (SIGNAL, dict(sizes=[93], interp_type=types.INTERP_CUBIC)),
    (SIGNAL, dict(scales=[1.0])),                               # nothing changes
]


def dali_kwargs(kw):
    import nvidia.dali.types as dt
    conv = {types.INTERP_NN: dt.INTERP_NN, types.INTERP_CUBIC: dt.INTERP_CUBIC, types.FLOAT: dt.FLOAT}
    return {k: conv.get(v, v) if k in ("interp_type", "dtype") else v for k, v in kw.items()}


@pytest.mark.parametrize("data,kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_equals_dali(data, kw):
    dali = pytest.importorskip("nvidia.dali")
    ours = run([data], **kw)[0]
    theirs = run([data], fn_=dali.fn, pdef=dali.pipeline_def, **dali_kwargs(kw))[0]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    d = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    assert d.max() <= (1 if ours.dtype != np.float32 else 1e-3), (kw, d.max())


def test_linear_upscale_of_a_signal_equals_numpy():
    (out,) = run([SIGNAL], sizes=[173], antialias=False)
    x = (np.arange(173) + 0.5) * 50 / 173 - 0.5  # output pixel centres in the input
    np.testing.assert_allclose(out, np.interp(x, np.arange(50), SIGNAL), rtol=0, atol=1e-6)


def test_a_batch_of_images_equals_resize(jpeg_files):
    from PIL import Image
    photo = np.asarray(Image.open(jpeg_files[0][0]).convert("RGB"))
    images = [photo, photo[::2, 3:], IMAGE]
    ours = run(images, layout="HWC", axis_names="HW", sizes=[96, 128],
               interp_type=types.INTERP_CUBIC)

    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def p():
        return fn.resize(fn.external_source(source=lambda: images, batch=True, layout="HWC"),
                         size=[96, 128], interp_type=types.INTERP_CUBIC)
    (ref,) = p().run()
    for i in range(3):
        np.testing.assert_array_equal(ours[i], np.array(ref[i]))


def test_per_sample_sizes():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        size = fn.external_source(source=lambda: [np.float32([3, 4]), np.float32([5, 2])], batch=True)
        return fn.tensor_resize(fn.external_source(source=lambda: [IMAGE, IMAGE], batch=True),
                                axes=[0, 1], sizes=size)
    (out,) = p().run()
    assert [np.array(out[i]).shape for i in range(2)] == [(3, 4, 3), (5, 2, 3)]


def error(exc, data=(IMAGE,), layout=None, **kw):
    with pytest.raises(exc) as e:
        run(list(data), layout=layout, **kw)
    return re.sub(r" \([^()]*\.py:\d+\)", "", str(e.value))


def test_errors():
    op = "fn.tensor_resize"
    assert error(ValueError, axes=[0]) == (
        f"{op}: argument 'sizes' or scales must be given (the output extents, or factors)")
    assert error(ValueError, sizes=[2], scales=[2.0]) == (
        f"{op}: argument 'scales' cannot be given with sizes; give one of them")
    assert error(ValueError, axes=[0, 3], sizes=[2, 2]) == (
        f"{op}: argument 'axes' axis 3 is outside [-3, 2] for 3-D input")
    assert error(ValueError, axes=[0, 1], sizes=[2, 2, 2]) == (
        f"{op}, sample 0: argument 'sizes' has 3 values for 2 axes; give one per axis, or one "
        "for all")
    assert error(ValueError, axis_names="HW", sizes=[2, 2]) == (
        f"{op}: argument 'axis_names' needs an input with a layout; the input has none (use axes)")
    assert error(ValueError, layout="HWC", axis_names="HD", sizes=[2, 2]) == (
        f"{op}: argument 'axis_names' 'D' is not an axis of the input's layout 'HWC'")
    assert error(ValueError, axes=[0, 1], scales=[2.0, 2.0], mode="not_smaller") == (
        f"{op}: argument 'mode' 'not_smaller' keeps the aspect ratio of given sizes; it cannot "
        "be used with scales")
    assert error(ValueError, axes=[0, 1], sizes=[2, 2], roi_start=[0, 0]) == (
        f"{op}: argument 'roi_end' must be given together with roi_start")
    assert error(ValueError, data=(TENSOR5,), scales=[2.0, 2.0, 2.0, 2.0], axes=[0, 1, 2, 3]) == (
        f"{op}, sample 0: the resized axes 0 to 3 are 4 consecutive axes; tensor_resize "
        "resamples at most 3 consecutive ones (resize the others in a second call)")
    assert error(ValueError, data=(IMAGE.astype(np.int32),), axes=[0], sizes=[3]) == (
        f"{op}: argument 'input' must be uint8, int16, uint16 or float32, got int32")
    assert error(ValueError, axes=[0], sizes=[3], dtype=types.INT16) == (
        f"{op}: argument 'dtype' must be the input's type (uint8) or FLOAT, got int16")
