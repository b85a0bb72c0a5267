"""GPU twins of the graph and tensor operators (issue 17): arithmetic and stoker.math,
subscripts, the shape and layout operators, joins, constants, one_hot, lookup_table, reductions,
random numbers and conditionals. Each runs on the CPU and on the GPU copy of the same data in one
pipeline and must agree: exactly where the CPU's arithmetic is exact, within a few float ulps
where the GPU's math library rounds otherwise (sin, exp, pow, ...). Runs on the GPU machine;
skipped where there is no GPU."""
import numpy as np
import pytest

from _dali_ref import decoded_as

import stoker
from stoker import fn, math, pipeline_def, types

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")

RNG = np.random.default_rng(17)
DRY_RUN = False  # set by a CPU-only run of these tests (the GPU replaced by the CPU)


def host(x):
    if isinstance(x, stoker.TensorListGPU):
        x = x.as_cpu()
    return [np.asarray(x[i]) for i in range(len(x))]


def assert_same(cpu, gpu, rtol=0.0, atol=0.0):
    assert isinstance(gpu, stoker.TensorListGPU) or DRY_RUN, type(gpu)
    assert gpu.layout() == cpu.layout()
    a, b = host(cpu), host(gpu)
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.dtype == y.dtype, (i, x.shape, y.shape, x.dtype, y.dtype)
        if rtol == 0 and atol == 0:
            np.testing.assert_array_equal(y, x, err_msg=f"sample {i}")
        else:
            np.testing.assert_allclose(y.astype(np.float64), x.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=f"sample {i}")


def constant_source(batch):
    return lambda: batch


def twins(batches, make, iters=1, keep=(), **tol):
    """batches: per input, a list of NumPy samples (one batch). make(*nodes) builds the graph on
    CPU nodes and, again, on their GPU copies (but for the inputs numbered in `keep`: per-sample
    arguments); every output pair must agree."""
    @pipeline_def(batch_size=len(batches[0]), num_threads=2, device_id=0, seed=5)
    def pipe():
        nodes = [fn.external_source(source=constant_source(b)) for b in batches]
        cpu = make(*nodes)
        gpu = make(*[n if k in keep else n.gpu() for k, n in enumerate(nodes)])
        cpu = cpu if isinstance(cpu, tuple) else (cpu,)
        gpu = gpu if isinstance(gpu, tuple) else (gpu,)
        return cpu + gpu

    p = pipe()
    p.build()
    for _ in range(iters):
        out = p.run()
        k = len(out) // 2
        for c, g in zip(out[:k], out[k:]):
            assert_same(c, g, **tol)


def ramp(shape, dtype, lo=-50, hi=50):
    x = RNG.uniform(lo, hi, size=shape)
    if np.dtype(dtype).kind in "iu":
        x = np.round(x)
        if np.dtype(dtype).kind == "u":
            x = np.abs(x)
    return x.astype(dtype)


def images(n=3):
    return [RNG.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in
            [(37, 53), (64, 48), (1, 9)][:n]]


# ---- arithmetic and stoker.math

TYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
         np.float16, np.float32, np.float64]


@pytest.mark.parametrize("ta", TYPES)
@pytest.mark.parametrize("tb", [np.uint8, np.int32, np.float32, np.int64, np.float16])
def test_binary_arithmetic_type_pairs(ta, tb):
    a = [ramp((4, 5), ta), ramp((6, 2), ta)]
    b = [ramp((4, 5), tb, 1, 9), ramp((1, 2), tb, 1, 9)]  # broadcast in sample 1
    twins([a, b], lambda x, y: (x + y, x - y, x * y, math.min(x, y), math.max(x, y), x == y,
                                x < y, x >= y))


@pytest.mark.parametrize("t", [np.int8, np.int32, np.uint16, np.int64])
def test_integer_division_modulo_and_bitwise(t):
    a = [ramp((6, 7), t, -100, 100)]
    d = ramp((6, 7), t, -9, 9)
    b = [np.where(d == 0, 3, d).astype(t)]
    twins([a, b], lambda x, y: (x // y, x % y, x & y, x | y, x ^ y, x // 4, x % -3, -x,
                                math.abs(x), x ** math.abs(y % 4)))


def test_float_division_and_power():
    a = [ramp((5, 6), np.float32), ramp((3, 1), np.float32)]
    b = [ramp((5, 6), np.float32, 0.5, 3), ramp((3, 1), np.float32, 0.5, 3)]
    twins([a, b], lambda x, y: (x / y, x // y, x % y, math.fpow(math.abs(x), y),
                                math.atan2(x, y)), rtol=1e-6, atol=1e-6)


FUNCS = ["sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "fabs", "floor", "ceil", "sin",
         "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]


@pytest.mark.parametrize("t", [np.float32, np.float64, np.float16, np.uint8, np.int32])
def test_math_functions(t):
    lo, hi = (0.0, 1.0) if np.dtype(t).kind == "f" else (0, 200)
    a = [ramp((7, 9), t, lo, hi), ramp((1, 1), t, lo, hi)]
    # The GPU's math library is within 2 ulps (4 for pow) of the correctly rounded result.
    rtol = 2e-3 if t == np.float16 else (1e-12 if t == np.float64 else 4e-7)
    twins([a], lambda x: tuple(getattr(math, f)(x) for f in FUNCS), rtol=rtol, atol=1e-30)


def test_clamp_constants_array_constants_and_bool():
    a = [ramp((8, 8, 3), np.int16, -300, 300), ramp((2, 2, 3), np.int16, -300, 300)]
    m = [np.array(v) for v in ([True, False, True], [False, True, False])]
    twins([a, m], lambda x, b: (math.clamp(x, -10, 20), x + [1, 2, 3], x * 0.5, 2 - x, b & (x > 0),
                                b * b, b ^ b, x * b))


def test_per_sample_scalar_broadcast_on_images():
    imgs = images()
    gains = [np.float32(g) for g in (0.5, 1.5, 2.0)]
    twins([imgs, gains], lambda x, g: (x * g, fn.cast(x, dtype=types.FLOAT) / 255.0 - g))


def test_zero_divisor_names_the_sample_on_the_gpu():
    def message(device):
        @pipeline_def(batch_size=2, num_threads=1, device_id=0)
        def pipe():
            a = fn.external_source(source=lambda: [np.arange(4, dtype=np.int32)] * 2)
            b = fn.external_source(source=lambda: [np.ones(4, np.int32), np.array([1, 2, 0, 1], np.int32)])
            return (a.gpu() if device == "gpu" else a) // b  # a GPU operand takes b along

        p = pipe()
        p.build()
        with pytest.raises(ValueError) as e:
            p.run()
        return str(e.value)

    gpu = message("gpu")
    assert gpu == message("cpu")
    assert "[sample 1]: integer division by zero: the divisor is 0 at index (2,) of the result (int32" in gpu


# ---- subscripts, shapes and layouts

def test_subscripts():
    imgs = images()
    lo = [np.int64(v) for v in (0, 5, -1)]
    twins([imgs, lo], lambda x, k: (x[:, ::-2, 0], x[1:-1, 2::3], x[None], x[..., ::-1], x[k:],
                                    x[-1], x[::-1, ::-1, 1:2]), keep=(1,))


def test_reshape_family():
    a = [ramp((4, 6), np.float32), ramp((2, 12), np.float32)]
    twins([a], lambda x: (fn.reshape(x, shape=[3, 8]), fn.reshape(x, rel_shape=[0.5, 2]),
                          fn.reinterpret(x, dtype=types.UINT8), fn.expand_dims(x, axes=[0, 2]),
                          fn.squeeze(fn.expand_dims(x, axes=[1]), axes=[1]),
                          fn.reshape(x, layout="AB")))


def test_sequences_and_batches():
    seqs = [ramp((5, 4, 3), np.uint8, 0, 255), ramp((3, 2, 3), np.uint8, 0, 255)]
    twins([seqs], lambda x: (fn.per_frame(x, replace=True), *fn.element_extract(fn.reshape(x, layout="FHW"), element_map=[0, 2]),
                             fn.sequence_rearrange(fn.reshape(x, layout="FHW"), new_order=[2, 0, 0]),
                             fn.permute_batch(x, indices=[1, 0]), fn.shapes(x), fn.copy(x),
                             fn.get_property(fn.reshape(x, layout="FHW"), key="layout")))


def test_cast_like_cat_stack():
    a = [ramp((4, 5, 3), np.float32), ramp((2, 7, 3), np.float32)]
    b = [ramp((4, 2, 3), np.int32).astype(np.float32), ramp((2, 1, 3), np.float32)]
    i = [ramp((1,), np.int16)] * 2
    twins([a, b, i], lambda x, y, t: (fn.cast_like(x, t), fn.cat(x, y, axis=1), fn.cat(x, y, x, axis=-2),
                                      fn.stack(x, x, axis=0), fn.stack(x, x, axis=3),
                                      fn.stack(x, x, x, axis=1)))


def test_constants_and_one_hot_and_lookup():
    labels = [np.array(v, np.int32) for v in (3, 0, 7)]
    keys = [ramp((5, 4), np.uint8, 0, 10) for _ in range(3)]
    twins([labels, keys], lambda l, k: (
        fn.one_hot(l, num_classes=5), fn.one_hot(k, num_classes=4, axis=1, dtype=types.UINT8),
        fn.lookup_table(k, keys=[1, 3, 5], values=[10.5, -2.0, 300.0], default_value=7.0),
        fn.lookup_table(k, keys=[0, 2], values=[1, 2], dtype=types.UINT8),
        fn.zeros_like(k), fn.ones_like(k), fn.full(l, shape=[2, 3]),
        fn.full(fn.cast(k, dtype=types.FLOAT)[0:1], shape=[3, 5, 4])))

    @pipeline_def(batch_size=3, num_threads=1, device_id=0)
    def pipe():
        return tuple(op(device=d) for d in ("cpu", "gpu") for op in (
            lambda device: fn.constant(fdata=[1.5, 2.5, 3.5], shape=[3], device=device),
            lambda device: fn.zeros(shape=[2, 2], dtype=types.INT16, device=device),
            lambda device: fn.ones(shape=[4], device=device)))

    p = pipe()
    p.build()
    out = p.run()
    for c, g in zip(out[:3], out[3:]):
        assert_same(c, g)


@pytest.mark.parametrize("red", ["min", "max", "sum", "mean", "mean_square", "rms"])
@pytest.mark.parametrize("axes", [None, [0], [1], [0, 2], [2]])
def test_reductions(red, axes):
    imgs = images() + [RNG.integers(0, 256, size=(300, 41, 3), dtype=np.uint8)]  # a block per output
    flt = [i.astype(np.float32) / 7 for i in imgs]
    kw = {} if axes is None else {"axes": axes}
    op = getattr(fn.reductions, red)
    twins([imgs, flt], lambda x, f: (op(x, **kw), op(f, **kw), op(x, keep_dims=True, **kw)),
          rtol=1e-6, atol=1e-6)


def test_std_dev_and_variance():
    flt = [ramp((40, 30, 3), np.float32), ramp((1000, 2, 3), np.float32)]

    def make(f):
        mean = fn.reductions.mean(f, axes=[0, 1])
        return (fn.reductions.std_dev(f, mean, axes=[0, 1]),
                fn.reductions.variance(f, mean, axes=[0, 1], ddof=1),
                fn.reductions.sum(f, dtype=types.FLOAT), fn.reductions.mean(fn.cast(f, dtype=types.INT32), dtype=types.INT32))
    twins([flt], make, rtol=1e-6, atol=1e-5)


# ---- random numbers and conditionals

def test_random_operators_give_the_cpu_numbers():
    def numbers(device):
        @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=123)
        def pipe():
            return (fn.random.uniform(range=(-2, 3), shape=[5], device=device),
                    fn.random.normal(mean=1, stddev=2, shape=[2, 3], device=device),
                    fn.random.coin_flip(probability=0.3, device=device))

        p = pipe()
        p.build()
        return [p.run() for _ in range(2)]

    for cpu, gpu in zip(numbers("cpu"), numbers("gpu")):
        for c, g in zip(cpu, gpu):
            assert_same(c, g)


def test_conditionals_on_gpu_data():
    imgs = images()
    sel = [np.int32(v) for v in (0, 1, 2)]

    def run(device):
        @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=3, enable_conditionals=True)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            k = fn.external_source(source=lambda: sel)
            if device == "gpu":
                x = x.gpu()
            if k == 0:
                y = fn.cast(fn.flip(x, horizontal=1), dtype=types.FLOAT)
            elif k == 1:
                y = x * fn.random.uniform(range=(1, 2))
            else:
                y = x / 3
            return y

        p = pipe()
        p.build()
        return p.run()[0]

    assert_same(run("cpu"), run("gpu"))


# ---- python_function on the GPU

def _gpu_function_pipeline(make, data, batch_size=3):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=constant_source(data), layout="HWC")
        return make(x)

    p = pipe()
    p.build()
    return p.run()


def test_python_function_on_gpu_data_gives_the_cpu_results():
    torch = pytest.importorskip("torch")
    imgs = images()

    def cpu(x):
        return (fn.python_function(x, function=lambda a: a * 2),
                *fn.python_function(x, function=lambda b: ([a.transpose(1, 0, 2) for a in b],
                                                           [a[..., ::-1].astype(np.float32) for a in b]),
                                    batch_processing=True, num_outputs=2, output_layouts=["WHC", "HWC"]))

    def strided(batch):  # CuPy arrays where CuPy is installed (as DALI gives), else torch tensors
        if type(batch[0]).__module__.startswith("cupy"):
            return ([a.transpose(1, 0, 2) for a in batch], [a[..., ::-1].astype("float32") for a in batch])
        return [a.permute(1, 0, 2) for a in batch], [a.flip(-1).float() for a in batch]

    def gpu(x):
        x = x.gpu()
        return (fn.python_function(x, function=lambda a: a * 2),
                # strided results (a transpose, a reversed axis) are copied as they are laid out
                *fn.python_function(x, function=strided, batch_processing=True, num_outputs=2,
                                    output_layouts=["WHC", "HWC"]))

    for c, g in zip(_gpu_function_pipeline(cpu, imgs), _gpu_function_pipeline(gpu, imgs)):
        assert_same(c, g)
    # the function got torch tensors on the pipeline's GPU (no CuPy here) or CuPy arrays
    seen = []
    _gpu_function_pipeline(lambda x: fn.python_function(
        x.gpu(), function=lambda a: seen.append(type(a).__module__) or a), imgs)
    assert seen and seen[0].split(".")[0] in ("torch", "cupy")
    del torch


def test_dl_tensor_python_function_on_the_gpu():
    torch = pytest.importorskip("torch")
    imgs = images()

    def gpu(x):
        def f(batch):
            ts = [torch.utils.dlpack.from_dlpack(c) for c in batch]
            assert all(t.is_cuda for t in ts)
            return [t.sum(dim=2, dtype=torch.int32) for t in ts]
        return fn.dl_tensor_python_function(x.gpu(), function=f)

    out = _gpu_function_pipeline(gpu, imgs)[0]
    for a, b in zip(imgs, host(out)):
        np.testing.assert_array_equal(b, a.astype(np.int32).sum(axis=2))


def test_gpu_python_function_errors():
    pytest.importorskip("torch")
    imgs = images()
    with pytest.raises(TypeError, match=r"output 0 of sample 0 is in host memory; the 'gpu' "
                                        r"python_function returns GPU data"):
        _gpu_function_pipeline(lambda x: fn.python_function(x.gpu(), function=lambda a: np.zeros(3)), imgs)

    def boom(a):
        raise KeyError("no such key")
    with pytest.raises(KeyError, match="the function raised KeyError for sample 0") as e:
        _gpu_function_pipeline(lambda x: fn.python_function(x.gpu(), function=boom), imgs)
    assert isinstance(e.value.__cause__, KeyError)


def test_external_source_on_the_gpu():
    torch = pytest.importorskip("torch")
    imgs = images()

    @pipeline_def(batch_size=3, num_threads=1, device_id=0)
    def pipe():
        host = fn.external_source(source=constant_source(imgs), device="gpu", layout="HWC")
        dev = fn.external_source(source=lambda: [torch.from_numpy(a).cuda() for a in imgs], device="gpu")
        return host, dev

    p = pipe()
    p.build()
    for out in p.run():
        assert isinstance(out, stoker.TensorListGPU)
        for a, b in zip(imgs, host(out)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [types.INT16, types.UINT32, types.FLOAT, types.INT8])
def test_mixed_decoder_dtypes_convert_as_the_cpu_does(jpeg_dir, dtype):
    # nvJPEG's pixels are not libjpeg's, so the typed output is compared with the mixed
    # decoder's own uint8 pixels converted as the CPU decoder converts them (DALI's rule).
    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        return (fn.decoders.image(jpegs, device="mixed"),
                fn.decoders.image(jpegs, device="mixed", dtype=dtype),
                fn.decoders.image_crop(jpegs, device="mixed", crop=(20, 30)),
                fn.decoders.image_crop(jpegs, device="mixed", dtype=dtype, crop=(20, 30)))

    p = pipe()
    p.build()
    dt = types.to_numpy_dtype(dtype)
    for _ in range(2):
        for u8, typed in zip(*[iter(p.run())] * 2):
            for a, b in zip(host(u8), host(typed)):
                assert b.dtype == dt
                np.testing.assert_array_equal(b, decoded_as(a, dt))


def _ycbcr_like_the_cpu(rgb, to_float):
    """decoders.image's YCbCr (ImageDecoderBase::convert_decoded), float32 operation for
    operation: BT.601 studio range, rounded halves away from zero for uint8."""
    f32 = np.float32
    ky, kc = f32(219) / f32(255), f32(224) / f32(255)
    r, g, b = (rgb[..., c].astype(f32) for c in range(3))
    if to_float:
        r, g, b = (v * f32(1 / 255) for v in (r, g, b))
    y0, c0 = (f32(0.0625), f32(0.5)) if to_float else (f32(16), f32(128))
    y = r * (f32(0.299) * ky) + g * (f32(0.587) * ky) + b * (f32(0.114) * ky) + y0
    cb = -r * (f32(0.168736) * kc) - g * (f32(0.331264) * kc) + b * (f32(0.5) * kc) + c0
    cr = r * (f32(0.5) * kc) - g * (f32(0.418688) * kc) - b * (f32(0.081312) * kc) + c0
    out = np.stack([y, cb, cr], -1)
    if to_float:
        return out
    t = np.trunc(out)
    return np.clip(t + np.trunc(f32(2) * (out - t)), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("dtype", [types.UINT8, types.FLOAT])
def test_mixed_decoder_ycbcr_converts_as_the_cpu_does(jpeg_dir, dtype):
    @pipeline_def(batch_size=4, num_threads=2, device_id=0)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        return (fn.decoders.image(jpegs, device="mixed"),
                fn.decoders.image(jpegs, device="mixed", output_type=types.YCbCr, dtype=dtype))

    p = pipe()
    p.build()
    for _ in range(2):
        rgb, ycc = p.run()
        for a, b in zip(host(rgb), host(ycc)):
            np.testing.assert_array_equal(b, _ycbcr_like_the_cpu(a, dtype == types.FLOAT))
