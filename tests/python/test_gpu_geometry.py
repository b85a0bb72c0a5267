"""GPU twins of the slice-kernel operators and of resize / random_resized_crop /
resize_crop_mirror against their CPU
twins: the same setup code, so the same shapes and random choices; the same arithmetic, so the
same values."""
import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")


def compare(jpeg_dir, make, batch_size=6, iterations=2, atol=0.0):
    def build(device):
        @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, seed=5)
        def pipe():
            jpegs, _ = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True, seed=3)
            images = fn.decoders.image(jpegs)
            return make(images.gpu() if device == "gpu" else images, device)
        p = pipe()
        p.build()
        return p
    g, c = build("gpu"), build("cpu")
    for _ in range(iterations):
        (go,), (co,) = g.run(), c.run()
        assert isinstance(go, stoker.TensorListGPU)
        assert go.layout() == co.layout()
        gh = go.as_cpu()
        for i in range(len(co)):
            a, b = np.asarray(gh[i]), np.asarray(co[i])
            assert a.shape == b.shape and a.dtype == b.dtype
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            assert d.max() <= atol, (i, d.max())


MEAN, STD = [0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pytest.mark.parametrize("dtype", [types.FLOAT, types.FLOAT16, types.UINT8, types.INT8])
def test_crop_mirror_normalize(jpeg_dir, dtype):
    compare(jpeg_dir, lambda x, d: fn.crop_mirror_normalize(
        x, device=d, dtype=dtype, crop=(200, 180), crop_pos_x=fn.random.uniform(range=(0, 1)),
        mean=MEAN, std=STD, mirror=fn.random.coin_flip(), output_layout="CHW"))


def test_crop_mirror_normalize_pads_outside_and_hwc(jpeg_dir):
    compare(jpeg_dir, lambda x, d: fn.crop_mirror_normalize(
        x, device=d, crop=(700, 900), out_of_bounds_policy="pad", fill_values=[1, 2, 3],
        pad_output=True, output_layout="HWC", mean=[128.0], std=[64.0]))


@pytest.mark.parametrize("op", ["crop", "flip", "transpose", "pad", "slice", "paste"])
def test_slice_family(jpeg_dir, op):
    make = {
        "crop": lambda x, d: fn.crop(x, device=d, crop=(123, 77), crop_pos_y=fn.random.uniform(range=(0, 1))),
        "flip": lambda x, d: fn.flip(x, device=d, horizontal=fn.random.coin_flip(), vertical=1),
        "transpose": lambda x, d: fn.transpose(x, device=d, perm=[2, 0, 1]),
        "pad": lambda x, d: fn.pad(x, device=d, fill_value=7, shape=(800, 900, 4)),
        "slice": lambda x, d: fn.slice(x, device=d, rel_start=(0.25, 0.1), rel_shape=(0.5, 0.7),
                                       axis_names="HW"),
        "paste": lambda x, d: fn.paste(x, device=d, ratio=1.5, fill_value=(10, 20, 30),
                                       paste_x=0.2),
    }[op]
    compare(jpeg_dir, make)


@pytest.mark.parametrize("interp", [types.INTERP_LINEAR, types.INTERP_CUBIC, types.INTERP_LANCZOS3,
                                    types.INTERP_NN, types.INTERP_TRIANGULAR, types.INTERP_GAUSSIAN])
def test_resize(jpeg_dir, interp):
    compare(jpeg_dir, lambda x, d: fn.resize(x, device=d, interp_type=interp, size=(224, 200)), atol=1)
    compare(jpeg_dir, lambda x, d: fn.resize(x, device=d, interp_type=interp, resize_shorter=700,
                                             dtype=types.FLOAT), atol=1e-3)


def test_resize_parities(jpeg_dir):
    for parity in ("pil", "opencv"):
        compare(jpeg_dir, lambda x, d: fn.resize(x, device=d, parity=parity, resize_x=300,
                                                 interp_type=types.INTERP_CUBIC), atol=1)


@pytest.mark.parametrize("op", ["resize_crop_mirror", "fast_resize_crop_mirror"])
def test_resize_crop_mirror(jpeg_dir, op):
    """The resize's GPU kernel on the cropped, mirrored source windows of the CPU's setup."""
    compare(jpeg_dir, lambda x, d: getattr(fn, op)(
        x, device=d, resize_shorter=256, crop=(224, 200), crop_pos_x=fn.random.uniform(range=(0, 1)),
        mirror=fn.cast(fn.random.uniform(range=(0, 4)), dtype=types.INT32)), iterations=3, atol=1)
    compare(jpeg_dir, lambda x, d: getattr(fn, op)(
        x, device=d, size=(300, 280), crop=(320, 100), mirror=3, dtype=types.FLOAT,
        interp_type=types.INTERP_CUBIC), atol=1e-3)


def test_random_resized_crop(jpeg_dir):
    compare(jpeg_dir, lambda x, d: fn.random_resized_crop(x, device=d, size=(224, 224)),
            iterations=3, atol=1)


def test_gpu_op_needs_gpu_input(jpeg_dir):
    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        return fn.flip(fn.decoders.image(jpegs), device="gpu")
    p = pipe()
    with pytest.raises(Exception, match="GPU input|gpu"):
        p.build()
        p.run()
