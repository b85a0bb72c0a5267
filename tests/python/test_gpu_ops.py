"""GPU twins of the CPU image operators: the same pipeline, the same seed and the same per-sample
arguments on both backends, on real images of different sizes. 8-bit outputs agree within 1
(most are equal: the kernels do the CPU's float operations in the CPU's order), float outputs
within rounding. Runs on the GPU machine; skipped where there is no GPU."""
import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")


def run_twins(jpeg_dir, make, batch_size=4, iters=2, prep=None, seed=11, shorter=(24, 72),
              source=None):
    """make() is called inside the pipeline definition (so the random arguments it creates are
    shared by both backends) and returns callables op(images, device). Each op runs on the CPU
    images with device='cpu' and on their GPU copy with device='gpu'. The images are the test
    JPEGs, decoded and resized to a random shorter side, or what source() gives. Returns, per
    iteration, the list of (cpu_batch, gpu_batch) pairs."""
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, seed=seed)
    def pipe():
        if source is not None:
            images = source()
        else:
            jpegs, _ = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=False)
            images = fn.decoders.image(jpegs, output_type=types.RGB)
            images = fn.resize(images, resize_shorter=fn.random.uniform(range=shorter))
        if prep is not None:
            images = prep(images)
        on_gpu = images.gpu()
        ops = make()
        return tuple(op(images, "cpu") for op in ops) + tuple(op(on_gpu, "gpu") for op in ops)

    p = pipe()
    p.build()
    out = []
    for _ in range(iters):
        res = p.run()
        k = len(res) // 2
        out.append(list(zip(res[:k], res[k:])))
    return out


def assert_twins(cpu, gpu, tol=1, rtol=1e-6, atol=1e-6):
    assert isinstance(gpu, stoker.TensorListGPU), type(gpu)
    host = gpu.as_cpu()
    assert host.layout() == cpu.layout()
    assert host.dtype == cpu.dtype
    assert len(host) == len(cpu)
    for i in range(len(cpu)):
        a, b = np.asarray(cpu[i]), np.asarray(host[i])
        assert a.shape == b.shape, (i, a.shape, b.shape)
        assert a.dtype == b.dtype
        if a.size == 0:
            continue
        if a.dtype.kind in "biu":
            diff = np.abs(a.astype(np.int64) - b.astype(np.int64)).max()
            assert diff <= tol, f"sample {i}: max |gpu - cpu| = {diff}"
        else:
            np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=f"sample {i}")


def check_all(results, **tol):
    for pairs in results:
        for cpu, gpu in pairs:
            assert_twins(cpu, gpu, **tol)


def as_float(images):
    return fn.cast(images, dtype=types.FLOAT) * (1.0 / 255)


# ---- colour

def test_brightness_contrast(jpeg_dir):
    def make():
        b = fn.random.uniform(range=(0.5, 1.5))
        c = fn.random.uniform(range=(0.3, 1.7))
        s = fn.random.uniform(range=(-0.2, 0.2))
        return [
            lambda x, d: fn.brightness_contrast(x, brightness=b, contrast=c, brightness_shift=s, device=d),
            lambda x, d: fn.brightness_contrast(x, brightness=1.3, contrast=0.6, contrast_center=100.0,
                                                dtype=types.FLOAT, device=d),
            lambda x, d: fn.brightness(x, brightness=b, dtype=types.INT16, device=d),
            lambda x, d: fn.contrast(x, contrast=c, dtype=types.FLOAT16, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-3, atol=1e-6)


def test_brightness_contrast_on_float_images(jpeg_dir):
    def make():
        b = fn.random.uniform(range=(0.5, 1.5))
        return [lambda x, d: fn.brightness_contrast(x, brightness=b, contrast=1.4, device=d),
                lambda x, d: fn.brightness(x, brightness=b, dtype=types.UINT8, device=d)]
    check_all(run_twins(jpeg_dir, make, prep=as_float), tol=1, rtol=1e-6, atol=1e-6)


def test_color_twist_family(jpeg_dir):
    def make():
        h = fn.random.uniform(range=(-90, 90))
        s = fn.random.uniform(range=(0.0, 2.0))
        v = fn.random.uniform(range=(0.5, 1.5))
        c = fn.random.uniform(range=(0.5, 1.5))
        return [
            lambda x, d: fn.color_twist(x, hue=h, saturation=s, brightness=v, contrast=c, device=d),
            lambda x, d: fn.color_twist(x, hue=h, image_type=types.BGR, dtype=types.FLOAT, device=d),
            lambda x, d: fn.hsv(x, hue=h, saturation=s, value=v, device=d),
            lambda x, d: fn.hue(x, hue=30.0, device=d),
            lambda x, d: fn.saturation(x, saturation=s, dtype=types.UINT16, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-6, atol=1e-5)


CONVERSIONS = [
    (types.RGB, types.YCbCr), (types.RGB, types.GRAY), (types.RGB, types.BGR),
    (types.YCbCr, types.RGB), (types.RGB, types.HSV), (types.BGR, types.HSV),
    (types.HSV, types.RGB), (types.HSV, types.BGR), (types.YCbCr, types.HSV),
    (types.HSV, types.GRAY), (types.HSV, types.YCbCr),
]


@pytest.mark.parametrize("prep", [None, as_float], ids=["uint8", "float"])
def test_color_space_conversion(jpeg_dir, prep):
    def make():
        return [lambda x, d, a=a, b=b: fn.color_space_conversion(x, image_type=a, output_type=b, device=d)
                for a, b in CONVERSIONS]
    check_all(run_twins(jpeg_dir, make, prep=prep, iters=1), tol=1, rtol=1e-5, atol=1e-5)


def test_color_space_conversion_from_gray(jpeg_dir):
    def gray(images):
        return fn.color_space_conversion(images, image_type=types.RGB, output_type=types.GRAY)

    def make():
        return [lambda x, d, b=b: fn.color_space_conversion(x, image_type=types.GRAY, output_type=b, device=d)
                for b in (types.RGB, types.YCbCr, types.HSV)]
    check_all(run_twins(jpeg_dir, make, prep=gray, iters=1), tol=1)


# ---- cast and normalize

def test_cast(jpeg_dir):
    def wide(images):  # values well outside every integer range, with halves
        return fn.cast(images, dtype=types.FLOAT) * 3.5 - 300.5

    def make():
        return [lambda x, d, t=t: fn.cast(x, dtype=t, device=d)
                for t in (types.UINT8, types.INT8, types.UINT16, types.INT16, types.INT32, types.UINT32,
                          types.INT64, types.UINT64, types.FLOAT16, types.FLOAT64, types.BOOL)]
    check_all(run_twins(jpeg_dir, make, prep=wide, iters=1), tol=0, rtol=0, atol=0)
    # and from the integer side
    def make_int():
        return [lambda x, d, t=t: fn.cast(x, dtype=t, device=d)
                for t in (types.INT8, types.FLOAT, types.FLOAT16, types.BOOL, types.UINT8)]
    check_all(run_twins(jpeg_dir, make_int, iters=1), tol=0, rtol=0, atol=0)


def test_normalize_given(jpeg_dir):
    def make():
        m = fn.random.uniform(range=(50, 150))
        s = fn.random.uniform(range=(20, 80))
        return [
            lambda x, d: fn.normalize(x, mean=m, stddev=s, device=d),
            lambda x, d: fn.normalize(x, mean=110.0, stddev=55.0, scale=64.0, shift=128.0,
                                      dtype=types.UINT8, device=d),
            lambda x, d: fn.normalize(x, mean=m, stddev=s, dtype=types.FLOAT16, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-3, atol=1e-6)


def test_normalize_computed(jpeg_dir):
    def make():
        return [
            lambda x, d: fn.normalize(x, device=d),
            lambda x, d: fn.normalize(x, axis_names="HW", device=d),
            lambda x, d: fn.normalize(x, axes=[0, 1], ddof=1, epsilon=0.5, scale=40.0, shift=128.0,
                                      dtype=types.UINT8, device=d),
            lambda x, d: fn.normalize(x, mean=100.0, axis_names="HW", device=d),
            lambda x, d: fn.normalize(x, stddev=30.0, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-4, atol=1e-4)


def test_normalize_batch_statistics(jpeg_dir):
    def same_size(images):
        return fn.resize(images, size=(48, 64))

    def make():
        return [
            lambda x, d: fn.normalize(x, batch=True, device=d),
            lambda x, d: fn.normalize(x, batch=True, axis_names="HW", ddof=1, device=d),
            lambda x, d: fn.normalize(x, batch=True, mean=120.0, axis_names="HW", device=d),
        ]
    check_all(run_twins(jpeg_dir, make, prep=same_size), tol=1, rtol=1e-4, atol=1e-4)


# ---- erase

def test_erase(jpeg_dir):
    def make():
        anchor = fn.random.uniform(range=(0.0, 0.6), shape=(4,))
        shape = fn.random.uniform(range=(0.1, 0.5), shape=(4,))
        return [
            lambda x, d: fn.erase(x, anchor=anchor, shape=shape, normalized=True,
                                  fill_value=(255, 0, 128), device=d),
            lambda x, d: fn.erase(x, anchor=(5, 3), shape=(10, 200), axis_names="HW", device=d),
            lambda x, d: fn.erase(x, anchor=anchor, shape=shape, normalized=True, centered_anchor=True,
                                  fill_value=7, device=d),
            lambda x, d: fn.erase(x, anchor=(1,), shape=(1,), axis_names="C", fill_value=(1, 2, 3),
                                  device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=0)


# ---- warps

def test_warp_affine(jpeg_dir):
    def make():
        m = fn.random.uniform(range=(0.3, 0.7), shape=(6,))
        nn = fn.random.coin_flip(probability=0.5)  # per-sample interpolation: 0 NN, 1 LINEAR
        return [
            lambda x, d: fn.warp_affine(x, matrix=m, device=d),
            lambda x, d: fn.warp_affine(x, matrix=m, fill_value=42.0, interp_type=nn, device=d),
            lambda x, d: fn.warp_affine(x, matrix=(0.9, 0.2, -3.0, -0.1, 1.1, 4.5), size=(40, 50),
                                        interp_type=types.INTERP_CUBIC, device=d),
            lambda x, d: fn.warp_affine(x, matrix=(1.2, 0.1, 3.0, 0.0, 0.8, -2.0), inverse_map=False,
                                        fill_value=0.0, dtype=types.FLOAT, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-5, atol=1e-4)


def test_rotate(jpeg_dir):
    def make():
        a = fn.random.uniform(range=(-180, 180))
        return [
            lambda x, d: fn.rotate(x, angle=a, device=d),
            lambda x, d: fn.rotate(x, angle=a, fill_value=255.0, interp_type=types.INTERP_NN, device=d),
            lambda x, d: fn.rotate(x, angle=a, keep_size=True, interp_type=types.INTERP_CUBIC, device=d),
            lambda x, d: fn.rotate(x, angle=17.0, size=(30, 60), dtype=types.FLOAT, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-5, atol=1e-4)


def test_water_and_sphere(jpeg_dir):
    def make():
        mask = fn.random.coin_flip(probability=0.7)
        return [
            lambda x, d: fn.water(x, mask=mask, device=d),
            lambda x, d: fn.water(x, ampl_x=3.0, ampl_y=6.0, freq_x=0.2, phase_y=1.0,
                                  interp_type=types.INTERP_LINEAR, fill_value=9.0, device=d),
            lambda x, d: fn.sphere(x, mask=mask, device=d),
            lambda x, d: fn.sphere(x, interp_type=types.INTERP_LINEAR, device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1)
    check_all(run_twins(jpeg_dir, make, prep=as_float, iters=1), tol=1, rtol=1e-5, atol=1e-5)


# ---- gaussian blur

def test_gaussian_blur(jpeg_dir):
    def make():
        s = fn.random.uniform(range=(0.5, 3.0))
        s2 = fn.random.uniform(range=(0.3, 2.0), shape=(2,))
        return [
            lambda x, d: fn.gaussian_blur(x, sigma=s, device=d),
            lambda x, d: fn.gaussian_blur(x, sigma=s2, dtype=types.FLOAT, device=d),
            lambda x, d: fn.gaussian_blur(x, window_size=(3, 7), device=d),
        ]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-5, atol=1e-4)


def synthetic(shapes, layout, dtype=np.uint8):
    """An external_source of random arrays of these shapes (a batch), new values each run."""
    def source():
        rng = np.random.default_rng(len(shapes))

        def batch():
            return [rng.integers(0, 256, size=s).astype(dtype) for s in shapes]
        return fn.external_source(source=batch, layout=layout)
    return source


ODD_SHAPES = [(1, 1, 3), (1, 9, 3), (7, 1, 3), (2, 2, 3), (31, 17, 3)]


@pytest.mark.skipif(not hasattr(stoker._C, "ExternalSourceState"), reason="no external_source")
def test_odd_shapes(jpeg_dir):
    def make():
        a = fn.random.uniform(range=(-60, 60))
        return [
            lambda x, d: fn.color_twist(x, hue=a, saturation=1.5, device=d),
            lambda x, d: fn.color_space_conversion(x, image_type=types.RGB, output_type=types.HSV, device=d),
            lambda x, d: fn.rotate(x, angle=a, device=d),
            lambda x, d: fn.warp_affine(x, matrix=(0.5, 0.1, 0.3, -0.2, 0.7, 0.1), size=(5, 3),
                                        interp_type=types.INTERP_CUBIC, device=d),
            lambda x, d: fn.sphere(x, device=d),
            lambda x, d: fn.water(x, interp_type=types.INTERP_LINEAR, device=d),
            lambda x, d: fn.gaussian_blur(x, sigma=1.5, device=d),
            lambda x, d: fn.normalize(x, axis_names="HW", device=d),
            lambda x, d: fn.erase(x, anchor=(0, 0), shape=(1, 2), device=d),
            lambda x, d: fn.cast(x, dtype=types.FLOAT16, device=d),
        ]
    check_all(run_twins(jpeg_dir, make, batch_size=len(ODD_SHAPES),
                        source=synthetic(ODD_SHAPES, "HWC")), tol=1, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not hasattr(stoker._C, "ExternalSourceState"), reason="no external_source")
def test_sequences_and_volumes(jpeg_dir):
    shapes = [(3, 12, 16, 3), (2, 9, 5, 3), (1, 20, 11, 3)]

    def make():
        a = fn.random.uniform(range=(-45, 45))
        return [
            lambda x, d: fn.brightness_contrast(x, brightness=1.2, contrast=0.8, device=d),
            lambda x, d: fn.hsv(x, hue=a, device=d),
            lambda x, d: fn.rotate(x, angle=a, device=d),
            lambda x, d: fn.water(x, device=d),
            lambda x, d: fn.gaussian_blur(x, sigma=1.0, device=d),
        ]
    check_all(run_twins(jpeg_dir, make, batch_size=len(shapes), source=synthetic(shapes, "FHWC")),
              tol=1)

    def make_volume():
        return [lambda x, d: fn.gaussian_blur(x, sigma=(1.0, 0.7, 1.5), device=d),
                lambda x, d: fn.normalize(x, axis_names="DHW", device=d)]
    check_all(run_twins(jpeg_dir, make_volume, batch_size=len(shapes),
                        source=synthetic(shapes, "DHWC")), tol=1, rtol=1e-4, atol=1e-4)


# ---- batch of one, and the input check

def test_batch_of_one(jpeg_dir):
    def make():
        return [lambda x, d: fn.hsv(x, hue=20.0, device=d),
                lambda x, d: fn.rotate(x, angle=33.0, device=d),
                lambda x, d: fn.normalize(x, device=d)]
    check_all(run_twins(jpeg_dir, make, batch_size=1), tol=1, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", [
    lambda x: fn.brightness(x, brightness=1.2, device="gpu"),
    lambda x: fn.cast(x, dtype=types.FLOAT, device="gpu"),
    lambda x: fn.gaussian_blur(x, sigma=1.0, device="gpu"),
])
def test_gpu_backend_needs_gpu_input(jpeg_dir, op):
    @pipeline_def(batch_size=2, num_threads=1, device_id=0, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        return op(fn.decoders.image(jpegs))

    p = pipe()
    with pytest.raises(ValueError, match=r"device='gpu' needs GPU input.*\.gpu\(\)"):
        p.build()
        p.run()


def test_tensor_resize(jpeg_dir):
    """tensor_resize on the GPU: images along H and W (the CPU's resampling, bit for bit or
    within 1), 1-D signals, 5-D tensors with frames and channels around the resized axes, and
    an unchanged tensor copied; 3 resized axes are refused by name."""
    rng = np.random.RandomState(3)
    signals = [rng.rand(n).astype(np.float32) for n in (50, 7, 200, 1)]
    tensors = [rng.rand(3, 5 + k, 6, 4, 2).astype(np.float32) for k in range(4)]

    def make():
        return [lambda x, d: fn.tensor_resize(x, axes=[0, 1], sizes=[37, 53], device=d),
                lambda x, d: fn.tensor_resize(x, axis_names="HW", scales=[0.37, 0.61],
                                              dtype=types.FLOAT, device=d),
                lambda x, d: fn.tensor_resize(x, axes=[1], sizes=[9], interp_type=types.INTERP_CUBIC,
                                              device=d)]
    check_all(run_twins(jpeg_dir, make), tol=1, rtol=1e-5, atol=1e-4)
    for data, ops in ((signals, [dict(sizes=[93]), dict(scales=[0.3]), dict(scales=[1.0])]),
                      (tensors, [dict(axes=[2, 3], sizes=[9, 3]), dict(axes=[4], sizes=[5])])):
        for kw in ops:
            def make(kw=kw):
                return [lambda x, d: fn.tensor_resize(x, device=d, **kw)]
            check_all(run_twins(jpeg_dir, make, source=lambda: fn.external_source(
                source=lambda: data, batch=True)), tol=1, rtol=1e-5, atol=1e-5)

    # Three resized axes (a volume per frame), and axes 1 and 3 with axis 2 between them kept.
    for kw in (dict(axes=[1, 2, 3], sizes=[3, 13, 4]), dict(axes=[1, 3], sizes=[9, 3]),
               dict(axes=[1, 2, 3], scales=[2.0, 0.5, 1.5], interp_type=types.INTERP_CUBIC)):
        def make(kw=kw):
            return [lambda x, d: fn.tensor_resize(x, device=d, **kw)]
        check_all(run_twins(jpeg_dir, make, source=lambda: fn.external_source(
            source=lambda: tensors, batch=True)), tol=1, rtol=1e-5, atol=1e-5)


def test_volume_resize(jpeg_dir):
    """resize on DHWC / CDHW volumes and FDHWC sequences of them on the GPU: the CPU's
    resample_volume plan (depth first or last, float intermediates), within 1 of the CPU."""
    rng = np.random.RandomState(9)
    vols = [rng.randint(0, 256, (d, 20 + d, 17, 3)).astype(np.uint8) for d in (5, 9, 12, 1)]
    for layout, data in (("DHWC", vols), ("CDHW", [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in vols]),
                         ("FDHWC", [np.stack([v, v[::-1]]) for v in vols])):
        for kw in (dict(size=[7, 11, 9]), dict(size=[16, 10, 30], interp_type=types.INTERP_CUBIC),
                   dict(resize_z=3, resize_y=40), dict(size=[6, 6, 6], dtype=types.FLOAT),
                   dict(size=[4, 8, 8], roi_start=[1, 2, 2], roi_end=[4, 12, 15])):
            def make(kw=kw):
                return [lambda x, d: fn.resize(x, device=d, **kw)]
            check_all(run_twins(jpeg_dir, make, source=lambda data=data, layout=layout: fn.external_source(
                source=lambda: data, batch=True, layout=layout)), tol=1, rtol=1e-5, atol=1e-4)


def test_experimental_resize_is_resize(jpeg_dir):
    def make():
        return [lambda x, d: fn.resize(x, size=[61, 45], device=d),
                lambda x, d: fn.experimental.resize(x, size=[61, 45], device=d)]
    for cpu_and_gpu in run_twins(jpeg_dir, make, iters=1):
        (rc, rg), (ec, eg) = cpu_and_gpu
        assert_twins(rc, rg)
        assert_twins(ec, eg)
        for i in range(len(rg)):
            np.testing.assert_array_equal(np.asarray(rg.as_cpu()[i]), np.asarray(eg.as_cpu()[i]))


def test_inflate():
    """decoders.inflate on the GPU (stoker's LZ4 kernel, one warp per block): blocks made by the
    lz4 package inflate to the original arrays, whole and in chunks, with long and overlapping
    matches; damaged blocks and wrong sizes are errors naming the sample."""
    lz4_block = pytest.importorskip("lz4.block")
    rng = np.random.RandomState(5)

    def compress(a):
        return np.frombuffer(lz4_block.compress(a.tobytes(), store_size=False,
                                                mode="high_compression"), np.uint8)
    arrays = [np.tile(np.arange(d, dtype=np.uint8), 3000 // d + 1)[:3000] for d in (1, 2, 3, 31, 33, 40)]
    arrays += [np.repeat(rng.randint(0, 255, 500).astype(np.uint8), rng.randint(1, 80, 500)),
               rng.randint(0, 256, 7000).astype(np.uint8), np.zeros(1, np.uint8),
               np.zeros(0, np.uint8), np.full(300000, 3, np.uint8)]

    def run(data, sizes=None, **kw):
        @pipeline_def(batch_size=len(data), num_threads=2, device_id=0)
        def p():
            if sizes is not None:
                kw["chunk_sizes"] = fn.external_source(source=lambda: sizes, batch=True)
            return fn.decoders.inflate(fn.external_source(source=lambda: data, batch=True).gpu(),
                                       device="gpu", **kw)
        (out,) = p().run()
        assert isinstance(out, stoker.TensorListGPU)
        host = out.as_cpu()
        return [np.array(host[i]) for i in range(len(data))], host.layout()

    for a in arrays:
        out, _ = run([compress(a)], shape=list(a.shape))
        np.testing.assert_array_equal(out[0], a)
    frames = [rng.randint(0, 3, (9, 11, 3)).astype(np.uint8) * 100 for _ in range(6)]
    blocks = [compress(f) for f in frames]
    out, layout = run([np.concatenate(blocks), np.concatenate(blocks[:2])], shape=[9, 11, 3],
                      layout="HWC", sizes=[np.int32([len(b) for b in blocks]),
                                           np.int32([len(b) for b in blocks[:2]])])
    np.testing.assert_array_equal(out[0], np.stack(frames))
    np.testing.assert_array_equal(out[1], np.stack(frames[:2]))
    assert layout == "FHWC"
    floats = rng.rand(33, 17).astype(np.float32)
    out, _ = run([compress(floats)], shape=[33, 17], dtype=types.FLOAT)
    np.testing.assert_array_equal(out[0], floats)
    damaged = compress(arrays[6]).copy()
    damaged[len(damaged) // 3:] = 255
    with pytest.raises(stoker.DecodeError, match="sample 1: not an LZ4 block"):
        run([compress(arrays[0]), damaged], shape=[arrays[0].size])
    with pytest.raises(stoker.DecodeError, match="inflates to 3000 bytes, but shape and dtype ask for 3001"):
        run([compress(arrays[0])], shape=[3001])


def test_volume_warps(jpeg_dir):
    """warp_affine and rotate on DHWC volumes and FDHWC sequences of them on the GPU:
    warp_affine_3d's sampler voxel for voxel (equal to the CPU, nearest exactly)."""
    rng = np.random.RandomState(4)
    vols = [rng.randint(0, 256, (d, 14 + d, 19, 3)).astype(np.uint8) for d in (6, 9, 1)]
    m3 = [0.93, 0.13, 0.057, 1.57, -0.11, 1.17, 0.23, -2.03, 0.053, -0.157, 0.953, 1.07]
    for layout, data in (("DHWC", vols), ("FDHWC", [np.stack([v, 255 - v]) for v in vols])):
        for interp, tol in ((types.INTERP_NN, 0), (types.INTERP_LINEAR, 1)):
            def make(interp=interp):
                return [lambda x, d: fn.warp_affine(x, matrix=m3, interp_type=interp, device=d),
                        lambda x, d: fn.warp_affine(x, matrix=m3, interp_type=interp, size=[7, 9, 12],
                                                    fill_value=7, device=d),
                        lambda x, d: fn.warp_affine(x, matrix=m3, interp_type=interp, inverse_map=False,
                                                    dtype=types.FLOAT, device=d),
                        lambda x, d: fn.rotate(x, angle=37.0, axis=[1, 2, 3], interp_type=interp,
                                               fill_value=0, device=d),
                        lambda x, d: fn.rotate(x, angle=-71.0, axis=[0, 1, 0], interp_type=interp,
                                               keep_size=True, device=d)]
            check_all(run_twins(jpeg_dir, make, iters=1, source=lambda data=data, layout=layout:
                                fn.external_source(source=lambda: data, batch=True, layout=layout)),
                      tol=tol, rtol=1e-6, atol=1e-5)


def test_volume_crops_flips_pads_and_erase(jpeg_dir):
    """The layout operators on DHWC and CDHW volumes on the GPU: crop, slice, flip (depthwise
    too), pad, transpose, erase and crop_mirror_normalize, equal to the CPU."""
    rng = np.random.RandomState(6)
    vols = [rng.randint(0, 256, (d, 10 + d, 12, 3)).astype(np.uint8) for d in (4, 6, 8)]
    for layout, data in (("DHWC", vols), ("CDHW", [np.ascontiguousarray(v.transpose(3, 0, 1, 2)) for v in vols])):
        def make():
            return [lambda x, d: fn.crop(x, crop=(3, 5, 6), device=d),
                    lambda x, d: fn.crop(x, crop_d=2, crop_h=5, crop_w=6, crop_pos_z=0.3, device=d),
                    lambda x, d: fn.slice(x, rel_start=(0.1, 0.2, 0.1), rel_shape=(0.5, 0.5, 0.6),
                                          axis_names="DHW", device=d),
                    lambda x, d: fn.flip(x, horizontal=1, vertical=1, depthwise=1, device=d),
                    lambda x, d: fn.pad(x, axis_names="DHW", shape=(9, 20, 20), fill_value=3, device=d),
                    lambda x, d: fn.transpose(x, perm=[1, 2, 0, 3], device=d),
                    lambda x, d: fn.erase(x, anchor=(1, 2, 2), shape=(2, 3, 3), axis_names="DHW",
                                          fill_value=9, device=d),
                    lambda x, d: fn.crop_mirror_normalize(x, crop=(3, 5, 6), mirror=1,
                                                          dtype=types.FLOAT, device=d)]
        check_all(run_twins(jpeg_dir, make, batch_size=3, iters=1, source=lambda data=data, layout=layout:
                            fn.external_source(source=lambda: data, batch=True, layout=layout)),
                  tol=0, rtol=1e-6, atol=1e-6)


def test_readers_numpy_on_gpu(tmp_path):
    """readers.numpy(device='gpu') (DALI: GPUDirect Storage) reads on the CPU and copies each
    batch to the GPU: the values and reader meta of the CPU reader, as GPU batches."""
    rng = np.random.RandomState(2)
    for i in range(5):
        np.save(tmp_path / f"{i}.npy", rng.rand(3 + i, 4).astype(np.float32))

    def run(device):
        @pipeline_def(batch_size=2, num_threads=1, device_id=0)
        def p():
            return fn.readers.numpy(file_root=str(tmp_path), device=device, name="R",
                                    roi_start=[1], roi_end=[3], roi_axes=[0], pad_last_batch=True)
        pipe = p()
        out = []
        for _ in range(3):
            (o,) = pipe.run()
            assert isinstance(o, stoker.TensorListGPU if device == "gpu" else stoker.TensorListCPU)
            o = o.as_cpu() if device == "gpu" else o
            out.append([np.array(o[i]) for i in range(2)])
        return out, pipe.reader_meta()["R"]
    (g, gm), (c, cm) = run("gpu"), run("cpu")
    assert gm == cm
    for gb, cb in zip(g, c):
        for a, b in zip(gb, cb):
            np.testing.assert_array_equal(a, b)
