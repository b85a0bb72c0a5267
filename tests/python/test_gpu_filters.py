"""GPU twins of issue 22's filters: fn.filter (every border, both modes, per-sample kernels given
as CPU or GPU inputs, a fill value, frames and planar channels) and equalize. Each runs on the CPU
and on the GPU copy of the same data in one pipeline; they must agree bit for bit (the GPU adds
the taps in the CPU's order). Runs on the GPU machine; skipped where there is no GPU."""
import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types
from test_gpu_graph_ops import assert_same

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")

RNG = np.random.default_rng(22)
f32 = np.float32


def images(dtype=np.uint8, shapes=((37, 53, 3), (64, 48, 3), (9, 5, 3))):
    if np.dtype(dtype).kind == "f":
        return [RNG.uniform(-10, 300, size=s).astype(dtype) for s in shapes]
    info = np.iinfo(dtype)
    return [RNG.integers(max(info.min, -300), min(info.max, 300), size=s, endpoint=True).astype(dtype)
            for s in shapes]


def kernels(shapes=((3, 3), (5, 4), (1, 7))):
    ks = [RNG.uniform(-1, 1, size=s).astype(f32) for s in shapes]
    ks[0][1, :] = 0  # a row of zeros: skipped, as on the CPU
    return ks


def filter_twins(imgs, ks, layout="HWC", **kw):
    """fn.filter on the CPU and on the GPU copy of the images (the filters stay CPU inputs)."""
    @pipeline_def(batch_size=len(imgs), num_threads=2, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout=layout)
        k = fn.external_source(source=lambda: ks)
        return fn.filter(x, k, **kw), fn.filter(x.gpu(), k, **kw)

    p = pipe()
    p.build()
    c, g = p.run()
    assert_same(c, g)


@pytest.mark.parametrize("border", ["reflect_101", "reflect_1001", "wrap", "clamp", "constant"])
@pytest.mark.parametrize("mode", ["same", "valid"])
def test_filter_borders(border, mode):
    imgs = images(shapes=((37, 53, 3), (64, 48, 3), (12, 9, 3)))
    filter_twins(imgs, kernels(), border=border, mode=mode)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.float16, np.float32])
def test_filter_types(dtype):
    imgs = images(dtype)
    filter_twins(imgs, kernels())
    filter_twins(imgs, kernels(), dtype=types.FLOAT)


def test_filter_gpu_kernels_and_fill():
    """Filters and the fill value as GPU inputs, anchors, a sharpening kernel."""
    imgs = images()
    sharpen = [np.array([[-1, -1, -1], [-1, 9, -1], [-1, -1, -1]], f32) / 1.0] * 3
    fills = [np.array(v, np.uint8) for v in (7, 200, 0)]

    @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        k = fn.external_source(source=lambda: sharpen)
        f = fn.external_source(source=lambda: fills)
        kw = dict(border="constant", anchor=[0, 2])
        return (fn.filter(x, k, f, **kw), fn.filter(x.gpu(), k.gpu(), f.gpu(), **kw),
                fn.filter(x.gpu(), k, f, **kw))

    p = pipe()
    p.build()
    c, g1, g2 = p.run()
    assert_same(c, g1)
    assert_same(c, g2)


@pytest.mark.parametrize("layout,shape", [("CHW", (3, 20, 30)), ("FHWC", (2, 20, 30, 3)),
                                          ("HW", (20, 30))])
def test_filter_layouts(layout, shape):
    imgs = [RNG.integers(0, 256, size=shape, dtype=np.uint8) for _ in range(2)]
    filter_twins(imgs, kernels(((3, 5), (3, 3))), layout=layout)


def test_filter_volume():
    vols = [RNG.integers(0, 256, size=(6, 10, 12, 2), dtype=np.uint8) for _ in range(2)]
    ks = [RNG.uniform(-1, 1, size=(3, 3, 3)).astype(f32) for _ in range(2)]
    filter_twins(vols, ks, layout="DHWC", border="wrap")


@pytest.mark.parametrize("layout,shape", [("HWC", (40, 50, 3)), ("CHW", (3, 40, 50)),
                                          ("FHWC", (3, 20, 25, 3)), ("HW", (33, 17))])
def test_equalize(layout, shape):
    imgs = [RNG.integers(30, 200, size=shape, dtype=np.uint8) for _ in range(2)]
    imgs.append(np.full(shape, 77, np.uint8))     # one level: left as it is

    @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout=layout)
        return fn.equalize(x), fn.equalize(x.gpu())

    p = pipe()
    p.build()
    c, g = p.run()
    assert_same(c, g)


@pytest.mark.parametrize("scheme", ["rand_augment", "trivial_augment_wide"])
def test_auto_aug_on_gpu(scheme):
    """stoker.auto_aug on GPU images (every augmentation of the suite has a GPU twin now): the
    same choices and magnitudes as the CPU pipeline of the same seed, and the same pixels up to
    the twins' rounding."""
    from stoker.auto_aug import rand_augment, trivial_augment
    imgs = [RNG.integers(0, 256, size=(48 + 8 * k, 64, 3), dtype=np.uint8) for k in range(8)]

    def build(device):
        @pipeline_def(batch_size=len(imgs), num_threads=2, device_id=0, seed=9,
                      enable_conditionals=True)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            if device == "gpu":
                x = x.gpu()
            if scheme == "rand_augment":
                return rand_augment.rand_augment(x, n=2, m=9)
            return trivial_augment.trivial_augment_wide(x)
        p = pipe()
        p.build()
        return p

    cpu, gpu = build("cpu"), build("gpu")
    for _ in range(3):
        (c,), (g,) = cpu.run(), gpu.run()
        g = g.as_cpu() if isinstance(g, stoker.TensorListGPU) else g
        for i in range(len(imgs)):
            a, b = np.asarray(c[i]).astype(int), np.asarray(g[i]).astype(int)
            assert a.shape == b.shape
            assert np.abs(a - b).max() <= 1, (i, np.abs(a - b).max())
