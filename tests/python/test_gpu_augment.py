"""GPU twins of issue 22's image operators that had the CPU only: laplacian (every input type,
float output, window, smoothing and scale per sample, normalized kernels, 1-D to 3-D data,
frames and planar channels), experimental.erode / dilate (every border, masks, anchors,
iterations), experimental.median_blur (small and large windows, every type),
experimental.remap (every interpolation, both pixel origins, maps on the CPU or the GPU, output
sizes other than the input's, sequences with shared or per-frame maps), noise.gaussian,
noise.shot and noise.salt_and_pepper (every type, per-channel or per-pixel draws, planar and interleaved
channels), grid_mask and jitter (every type, masks, sequences, degrees whose draws get skipped).
Each runs on the CPU and on the GPU copy of the same batch (random operators: in two pipelines
of one seed, so that both twins hold the same place in the graph and draw from the same
streams), on decoded photos of testdata and on random data of odd sizes.

They agree bit for bit: the Laplacian's GPU passes add the taps in the CPU's order without
fused multiply-adds; the rank filters' minima, maxima and medians are exact (the data here has
no NaN, the one value whose fate depends on the order of comparisons); remap's sampler is the
warps' GPU sampler, which repeats the CPU's float operations; grid_mask repeats the CPU's float
operations; salt and pepper and jitter take the CPU's random numbers. Gaussian noise alone may
differ: its normal deviates go through CUDA's double log and cos, which can be an ulp off the
host's, so a value can round the other way at a tie (one step for integer types, an ulp for
float32, a few ulps for float64).

Runs on the GPU machine; skipped where there is no GPU. STOKER_GPU_DRY_RUN=1 runs the same test
logic with the GPU copies replaced by the CPU nodes (no GPU needed): it checks the tests
themselves, not the GPU code."""
import os
import pathlib

import numpy as np
import pytest

import stoker
import test_gpu_graph_ops
from stoker import fn, pipeline_def, types

DRY_RUN = os.environ.get("STOKER_GPU_DRY_RUN") == "1"
HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU and not DRY_RUN, reason="no GPU here")
if DRY_RUN:
    test_gpu_graph_ops.DRY_RUN = True
from test_gpu_graph_ops import assert_same, host  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("STOKER_TESTDATA", ROOT.parent / "shared" / "testdata"))
RNG = np.random.default_rng(2222)
f32 = np.float32


def gpu(node):
    return node if DRY_RUN else node.gpu()


def random_images(dtype=np.uint8, shapes=((37, 53, 3), (64, 48, 3), (9, 5, 3), (1, 7, 3))):
    if np.dtype(dtype).kind == "f":
        return [RNG.uniform(-300, 300, size=s).astype(dtype) for s in shapes]
    info = np.iinfo(dtype)
    lo, hi = max(int(info.min), -70000), min(int(info.max), 70000)
    return [RNG.integers(lo, hi, size=s, endpoint=True).astype(dtype) for s in shapes]


def constant(batch):
    return lambda: batch


def twins(op, datas, layout="HWC", gpu_inputs=(0,)):
    """op(*inputs) on the CPU nodes and again with the inputs numbered in `gpu_inputs` on the
    GPU; returns the (cpu, gpu) pairs of outputs."""
    @pipeline_def(batch_size=len(datas[0]), num_threads=2, device_id=None if DRY_RUN else 0, seed=22)
    def pipe():
        xs = [fn.external_source(source=constant(d), layout=layout if k == 0 else None)
              for k, d in enumerate(datas)]
        c = op(*xs)
        g = op(*[gpu(x) if k in gpu_inputs else x for k, x in enumerate(xs)])
        return c, g

    p = pipe()
    p.build()
    return [p.run()]


def check(op, datas, layout="HWC", gpu_inputs=(0,)):
    for c, g in twins(op, datas, layout, gpu_inputs):
        assert_same(c, g)
        return c


def photos(n=4):
    files = sorted((TESTDATA / "images" / "jpeg").glob("*/*.jpg"))[:n]
    if len(files) < n:
        pytest.skip(f"the photos of {TESTDATA / 'images' / 'jpeg'} are not here")

    @pipeline_def(batch_size=n, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(f) for f in files])
        return fn.resize(fn.decoders.image(jpegs), resize_x=181, resize_y=133)

    p = pipe()
    p.build()
    (imgs,) = p.run()
    return [np.array(imgs[i]) for i in range(n)]


# ------------------------------------------------------------------------------------ laplacian

@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
                                   np.int64, np.float16, np.float32])
def test_laplacian_types(dtype):
    imgs = random_images(dtype)
    out = check(lambda x: fn.laplacian(x), [imgs])
    assert out[0].dtype == np.dtype(dtype)
    out = check(lambda x: fn.laplacian(x, window_size=5, dtype=types.FLOAT), [imgs])
    assert np.array(out[0]).dtype == np.float32


@pytest.mark.parametrize("kw", [dict(window_size=3), dict(window_size=[5, 3]),
                                dict(window_size=7, smoothing_size=1),
                                dict(window_size=[3, 9], smoothing_size=[5, 1]),
                                dict(window_size=31),
                                dict(window_size=5, normalized_kernel=True),
                                dict(window_size=3, scale=[0.5, -2.25])])
def test_laplacian_photos(kw):
    imgs = photos()
    check(lambda x: fn.laplacian(x, dtype=types.FLOAT, **kw), [imgs])
    check(lambda x: fn.laplacian(x, **kw), [imgs])


def test_laplacian_per_sample_arguments():
    imgs = random_images(np.uint8)
    sizes = [np.array(v, np.int32) for v in ([3, 5], [7, 3], [5, 5], [3, 3])]
    smooth = [np.array(v, np.int32) for v in ([1, 3], [5, 1], [3, 3], [1, 1])]
    scales = [np.array(v, f32) for v in ([0.25], [1.5, -1.0], [3.0], [0.125, 8.0])]
    check(lambda x, w, s, k: fn.laplacian(x, window_size=w, smoothing_size=s, scale=k,
                                          dtype=types.FLOAT),
          [imgs, sizes, smooth, scales])
    check(lambda x, w, s, k: fn.laplacian(x, window_size=w, smoothing_size=s, scale=k),
          [imgs, sizes, smooth, scales])


@pytest.mark.parametrize("layout,shapes", [
    ("HW", ((30, 41), (1, 1), (2, 9))),
    ("CHW", ((3, 20, 31), (2, 7, 5))),
    ("FHWC", ((3, 20, 25, 3), (1, 6, 4, 1))),
    ("FCHW", ((2, 3, 11, 13),)),
    ("DHWC", ((6, 10, 12, 2), (3, 4, 5, 1))),
    ("W", ((100,), (7,))),
    ("WC", ((50, 3),)),
])
def test_laplacian_layouts(layout, shapes):
    data = [RNG.integers(0, 256, size=s).astype(np.uint8) for s in shapes]
    check(lambda x: fn.laplacian(x, window_size=5), [data], layout=layout)
    check(lambda x: fn.laplacian(x, window_size=3, smoothing_size=1, dtype=types.FLOAT), [data],
          layout=layout)


def test_laplacian_volume_float():
    vols = [RNG.standard_normal((7, 9, 11, 2)).astype(f32) for _ in range(2)]
    check(lambda x: fn.laplacian(x, window_size=[3, 5, 7], smoothing_size=[1, 3, 5],
                                 scale=[1.0, 0.5, 2.0]), [vols], layout="DHWC")


def test_laplacian_saturates():
    """Large responses clamp to the type's range, as on the CPU."""
    imgs = [np.tile(np.array([[0, 255], [255, 0]], np.uint8), (8, 8))[..., None].repeat(3, 2)]
    out = check(lambda x: fn.laplacian(x, window_size=3, smoothing_size=1, scale=3.0), [imgs])
    v = np.array(out[0])
    assert v.max() == 255 and v.min() == 0


# ---------------------------------------------------------------------- erode, dilate, median

MORPH = [fn.experimental.erode, fn.experimental.dilate]


@pytest.mark.parametrize("border", ["constant", "replicate", "reflect", "reflect_101", "wrap"])
@pytest.mark.parametrize("op", MORPH, ids=["erode", "dilate"])
def test_morphology_borders_photos(op, border):
    imgs = photos()
    for kw in (dict(), dict(mask_size=[5, 2], anchor=[0, 1]), dict(mask_size=[1, 9], iterations=3),
               dict(mask_size=17, anchor=[16, 3], iterations=2)):
        check(lambda x: op(x, border_mode=border, **kw), [imgs])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
@pytest.mark.parametrize("op", MORPH, ids=["erode", "dilate"])
def test_morphology_types(op, dtype):
    imgs = random_images(dtype)
    check(lambda x: op(x, mask_size=[3, 5], iterations=2, border_mode="reflect"), [imgs])
    check(lambda x: op(x, mask_size=[4, 2]), [imgs])


@pytest.mark.parametrize("op", MORPH, ids=["erode", "dilate"])
def test_morphology_per_sample_masks_and_layouts(op):
    imgs = random_images(np.uint8)
    masks = [np.array(v, np.int32) for v in ([3, 3], [7, 1], [2, 6], [1, 1])]
    anchors = [np.array(v, np.int32) for v in ([-1, -1], [6, 0], [0, 5], [0, 0])]
    check(lambda x, m, a: op(x, mask_size=m, anchor=a, border_mode="wrap"),
          [imgs, masks, anchors])
    for layout, shape in (("CHW", (3, 21, 17)), ("FHWC", (2, 15, 19, 3)), ("HW", (40, 33)),
                          ("FCHW", (2, 2, 9, 14))):
        data = [RNG.integers(0, 256, size=shape).astype(np.uint8) for _ in range(2)]
        check(lambda x: op(x, mask_size=[5, 3], iterations=2, border_mode="replicate"), [data],
              layout=layout)


@pytest.mark.parametrize("window", [1, 3, [5, 3], 5, 7, [1, 9], 9, 15])
def test_median_blur_photos(window):
    imgs = photos()
    check(lambda x: fn.experimental.median_blur(x, window_size=window), [imgs])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.float32])
def test_median_blur_types(dtype):
    imgs = random_images(dtype)
    # Signed values and negative floats; windows that take every path of the CPU kernel.
    for window in (3, 5, [7, 3], 9, 11):
        check(lambda x: fn.experimental.median_blur(x, window_size=window), [imgs])


def test_median_blur_per_sample_windows_and_layouts():
    imgs = random_images(np.uint16)
    windows = [np.array(v, np.int32) for v in ([3, 3], [9, 1], [1, 1], [5, 7])]
    check(lambda x, w: fn.experimental.median_blur(x, window_size=w), [imgs, windows])
    for layout, shape in (("CHW", (3, 21, 17)), ("FHWC", (2, 15, 19, 3)), ("HW", (40, 33))):
        data = [RNG.integers(0, 256, size=shape).astype(np.uint8) for _ in range(2)]
        check(lambda x: fn.experimental.median_blur(x, window_size=[5, 3]), [data], layout=layout)


def test_median_blur_matches_opencv():
    """An independent reference on the CPU side of the twins: OpenCV's medianBlur."""
    cv2 = pytest.importorskip("cv2")
    imgs = photos()
    out = check(lambda x: fn.experimental.median_blur(x, window_size=5), [imgs])
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(np.array(out[i]), cv2.medianBlur(img, 5))


# -------------------------------------------------------------------------------------- remap

def remap_maps(shapes, out_hw=None, frames=None):
    """Per sample, maps that zoom, shear, jitter and reach beyond the image (the border reads 0);
    some values land exactly on pixel edges and centres, where rounding matters."""
    mxs, mys = [], []
    for k, s in enumerate(shapes):
        h, w = out_hw[k] if out_hw else s[-3:-1]
        ih, iw = s[-3:-1]
        yy, xx = np.mgrid[0:h, 0:w].astype(f32)
        mx = xx * f32(iw / w) * f32(1.1) + f32(0.3) * yy - f32(2) + RNG.uniform(-1, 1, (h, w)).astype(f32)
        my = yy * f32(ih / h) * f32(0.9) - f32(0.2) * xx + f32(1.5)
        mx[::3, ::4] = np.round(mx[::3, ::4]) + f32(0.5)   # pixel centres and edges
        my[1::4, ::3] = np.round(my[1::4, ::3])
        if frames:
            mx = np.stack([mx + f32(t) for t in range(frames)])
            my = np.stack([my - f32(t) for t in range(frames)])
        mxs.append(mx)
        mys.append(my)
    return mxs, mys


@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
@pytest.mark.parametrize("origin", ["corner", "center"])
def test_remap_photos(interp, origin):
    imgs = photos()
    mx, my = remap_maps([i.shape for i in imgs])
    for gpu_inputs in ((0,), (0, 1, 2)):   # maps on the CPU and on the GPU
        check(lambda x, a, b: fn.experimental.remap(x, a, b, interp=interp, pixel_origin=origin),
              [imgs, mx, my], gpu_inputs=gpu_inputs)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.float32])
def test_remap_types_and_sizes(dtype):
    imgs = random_images(dtype, shapes=((37, 53, 3), (20, 16, 1), (9, 5, 4)))
    out_hw = [(40, 30), (20, 16), (3, 11)]   # the output takes the maps' size
    mx, my = remap_maps([i.shape for i in imgs], out_hw)
    for interp in (types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC):
        out = check(lambda x, a, b: fn.experimental.remap(x, a, b, interp=interp),
                    [imgs, mx, my], gpu_inputs=(0, 1, 2))
        assert [np.array(out[i]).shape[:2] for i in range(3)] == out_hw


def test_remap_sequences():
    seqs = [RNG.integers(0, 256, size=(3, 24, 31, 3)).astype(np.uint8) for _ in range(2)]
    shared = remap_maps([s.shape for s in seqs])                  # one map for every frame
    per_frame = remap_maps([s.shape for s in seqs], frames=3)     # one map per frame
    for mx, my, ml in ((*shared, "HW"), (*per_frame, "FHW")):
        @pipeline_def(batch_size=2, num_threads=2, device_id=None if DRY_RUN else 0, seed=22)
        def pipe():
            x = fn.external_source(source=constant(seqs), layout="FHWC")
            a = fn.external_source(source=constant(mx), layout=ml)
            b = fn.external_source(source=constant(my), layout=ml)
            kw = dict(interp=types.INTERP_LINEAR, pixel_origin="center")
            return (fn.experimental.remap(x, a, b, **kw), fn.experimental.remap(gpu(x), a, b, **kw),
                    fn.experimental.remap(gpu(x), gpu(a), gpu(b), **kw))

        p = pipe()
        p.build()
        c, g1, g2 = p.run()
        assert_same(c, g1)
        assert_same(c, g2)


def test_remap_matches_opencv():
    """An independent reference on the CPU side of the twins: OpenCV's remap (center origin,
    constant 0 border), within OpenCV's fixed-point interpolation weights."""
    cv2 = pytest.importorskip("cv2")
    imgs = photos()
    mx, my = remap_maps([i.shape for i in imgs])
    out = check(lambda x, a, b: fn.experimental.remap(x, a, b, pixel_origin="center",
                                                      interp=types.INTERP_NN), [imgs, mx, my])
    for i, img in enumerate(imgs):
        ref = cv2.remap(img, mx[i], my[i], cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT)
        np.testing.assert_array_equal(np.array(out[i]), ref)


# --------------------------------------------------------------------------------------- clahe

@pytest.mark.parametrize("kw", [dict(tiles_x=8, tiles_y=8, clip_limit=2.0),
                                dict(tiles_x=5, tiles_y=3, clip_limit=0.0),
                                dict(tiles_x=1, tiles_y=7, clip_limit=40.0)])
def test_clahe_channels(kw):
    """Gray images and RGB with luma_only=False (each channel on its own): bit for bit, tiles
    that divide the image and tiles that make the histograms read a mirrored border."""
    imgs = photos(3) + [RNG.integers(0, 256, size=(5, 9, 3)).astype(np.uint8)]
    grays = [np.ascontiguousarray(i[..., 1:2]) for i in imgs]
    check(lambda x: fn.clahe(x, luma_only=False, **kw), [imgs])
    check(lambda x: fn.clahe(x, **kw), [grays])


def test_clahe_luma_only():
    """RGB through CIE Lab in double: CUDA's cbrt and pow may differ from the host's by an ulp,
    so a rare level rounds the other way (at most by one)."""
    imgs = photos(4)
    for c, g in twins(lambda x: fn.clahe(x, tiles_x=4, tiles_y=6, clip_limit=3.0), [imgs]):
        diffs = 0
        for a, b in zip(host(c), host(g)):
            d = np.abs(a.astype(int) - b)
            assert d.max() <= 1
            diffs += int(np.count_nonzero(d))
        assert diffs <= sum(i.size for i in imgs) // 10000, diffs


# ------------------------------------------------------------------------------------- debayer

@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("algorithm", ["bilinear_ocv", "gray_ocv"])
def test_debayer(dtype, algorithm):
    """Every Bayer pattern (per-sample blue_position), sizes down to the black 2x2 case, and a
    mosaic made from a real photo, which OpenCV demosaics the same way as the CPU twin."""
    hi = np.iinfo(dtype).max
    mosaics = [RNG.integers(0, hi, size=s, endpoint=True).astype(dtype)
               for s in ((32, 48), (6, 4), (2, 2), (18, 10))]
    photo = photos(1)[0].astype(np.uint32) * (hi // 255)
    mosaic = photo[:132, :180, 1].astype(dtype)
    mosaic[0::2, 0::2] = photo[:132:2, :180:2, 2]  # BGGR: blue at (0, 0) of the tile at (1, 1)
    mosaic[1::2, 1::2] = photo[1:132:2, 1:180:2, 0]
    mosaics.append(mosaic)
    blue = [np.array(p, np.int32) for p in ([0, 0], [0, 1], [1, 0], [1, 1], [1, 1])]
    out = check(lambda x, b: fn.debayer(x, blue_position=b, algorithm=algorithm), [mosaics, blue],
                layout="HW")
    assert np.array(out[2]).max() == 0  # (a 2x2 mosaic comes out black, as in OpenCV)
    seq = [np.stack([m, m[::-1]]) for m in mosaics[:2]]
    check(lambda x: fn.debayer(x, blue_position=[1, 0], algorithm=algorithm), [seq], layout="FHW")


@pytest.mark.skipif(DRY_RUN, reason="'default_npp' is refused on the CPU")
def test_debayer_default_npp_is_bilinear_on_the_gpu():
    mosaics = [RNG.integers(0, 256, size=(20, 30)).astype(np.uint8) for _ in range(2)]

    @pipeline_def(batch_size=2, num_threads=2, device_id=0, seed=22)
    def pipe():
        x = fn.external_source(source=constant(mosaics), layout="HW").gpu()
        return (fn.debayer(x, blue_position=[0, 1], algorithm="default_npp"),
                fn.debayer(x, blue_position=[0, 1]))

    p = pipe()
    p.build()
    npp, bilinear = p.run()
    assert_same(npp, bilinear)


# ------------------------------------------------------------------ noise (random) and grid_mask

def twin_pipelines(op, datas, layout="HWC", iterations=3):
    """The same graph in two pipelines of one seed, one on the CPU data and one on its GPU copy
    (a random operator's stream is keyed by its place in the graph, so the twins must hold the
    same place); per iteration, the (cpu, gpu) outputs."""
    def build(on_gpu):
        @pipeline_def(batch_size=len(datas[0]), num_threads=2,
                      device_id=None if DRY_RUN else 0, seed=2024)
        def pipe():
            xs = [fn.external_source(source=constant(d), layout=layout if k == 0 else None)
                  for k, d in enumerate(datas)]
            return op(gpu(xs[0]) if on_gpu else xs[0], *xs[1:])
        p = pipe()
        p.build()
        return p

    cpu, g = build(False), build(True)
    return [(cpu.run()[0], g.run()[0]) for _ in range(iterations)]


NOISE_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
               np.float32, np.float64]


@pytest.mark.parametrize("dtype", NOISE_TYPES)
def test_noise_gaussian(dtype):
    """The same normal deviates: the GPU's double log and cos may differ from the host's by an
    ulp, so a value may round the other way at a tie (one step for integers, an ulp for float32;
    float64 keeps those ulps, which a result near zero after the sum makes relatively large:
    hence atol); but for float64, nearly all values are equal."""
    imgs = random_images(dtype, shapes=((64, 80, 3), (31, 17, 3), (1, 1, 1)))
    stddevs = [np.array(v, f32) for v in (5.0, 40.0, 0.0)]
    results = twin_pipelines(lambda x, s: fn.noise.gaussian(x, mean=1.5, stddev=s), [imgs, stddevs])
    float_type = np.dtype(dtype).kind == "f"
    tol = (dict(rtol=1e-6, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-12)
           if float_type else dict(rtol=0, atol=1))
    changed = 0
    for c, g in results:
        assert_same(c, g, **tol)
        for a, b in zip(host(c), host(g)):
            changed += int(np.count_nonzero(a != b))
    if dtype != np.float64:
        assert changed <= 3, changed
    # Each iteration draws new noise.
    assert not np.array_equal(np.array(results[0][0][0]), np.array(results[1][0][0]))


@pytest.mark.parametrize("dtype", NOISE_TYPES)
@pytest.mark.parametrize("per_channel", [False, True])
def test_noise_salt_and_pepper(dtype, per_channel):
    imgs = random_images(dtype, shapes=((64, 80, 3), (31, 17, 3), (5, 1, 1)))
    probs = [np.array(v, f32) for v in (0.3, 0.05, 1.0)]
    for c, g in twin_pipelines(lambda x, p: fn.noise.salt_and_pepper(
            x, prob=p, salt_vs_pepper=0.25, per_channel=per_channel), [imgs, probs]):
        assert_same(c, g)
    for c, g in twin_pipelines(lambda x, p: fn.noise.salt_and_pepper(
            x, prob=p, salt_val=7, pepper_val=3, per_channel=per_channel), [imgs, probs],
            iterations=1):
        assert_same(c, g)


@pytest.mark.parametrize("dtype", NOISE_TYPES)
def test_noise_shot(dtype):
    """Each element's Poisson draw from its own stream, on both sides: the same draws, but where
    the device's exp, log or lgamma differs from the host's by an ulp right at a boundary (none
    expected in this many values). Factors below and above the inversion/PTRS switch (mean 10),
    and 0 (the input as it is)."""
    imgs = random_images(dtype, shapes=((64, 80, 3), (31, 17, 3), (7, 5, 1), (9, 9, 3)))
    if np.dtype(dtype).kind in "iu":
        imgs = [np.clip(np.abs(i.astype(np.float64)), 0, 250).astype(dtype) for i in imgs]
    factors = [np.array(v, f32) for v in (20.0, 2.0, 0.0, 0.25)]
    changed = 0
    for c, g in twin_pipelines(lambda x, f: fn.noise.shot(x, factor=f), [imgs, factors]):
        for a, b in zip(host(c), host(g)):
            assert a.shape == b.shape and a.dtype == b.dtype
            changed += int(np.count_nonzero(a != b))
        np.testing.assert_array_equal(host(c)[2], imgs[2])  # factor 0
    assert changed <= 2, changed


@pytest.mark.parametrize("layout,shape", [("CHW", (3, 20, 30)), ("HW", (33, 17)), ("", (10, 12, 4))])
def test_noise_salt_and_pepper_layouts(layout, shape):
    data = [RNG.integers(0, 256, size=shape).astype(np.uint8) for _ in range(3)]
    for c, g in twin_pipelines(lambda x: fn.noise.salt_and_pepper(x, prob=0.4), [data],
                               layout=layout):
        assert_same(c, g)


def test_noise_photos():
    imgs = photos()
    for c, g in twin_pipelines(lambda x: fn.noise.salt_and_pepper(x, prob=0.1), [imgs]):
        assert_same(c, g)
    for c, g in twin_pipelines(lambda x: fn.noise.gaussian(x, stddev=20.0), [imgs]):
        assert_same(c, g, atol=1)


@pytest.mark.parametrize("dtype", NOISE_TYPES)
def test_grid_mask_types(dtype):
    imgs = random_images(dtype, shapes=((64, 80, 3), (31, 17, 1), (7, 9, 4)))
    for kw in (dict(), dict(tile=8, ratio=0.3, angle=0.7, shift_x=3.5, shift_y=-11.25),
               dict(tile=5, ratio=0.5, angle=-2.1)):
        check(lambda x: fn.grid_mask(x, **kw), [imgs])


def test_grid_mask_photos_per_sample():
    imgs = photos()
    tiles = [np.array(v, np.int32) for v in (10, 33, 7, 64)]
    angles = [np.array(v, f32) for v in (0.0, 0.785398, 1.3, -0.2)]
    ratios = [np.array(v, f32) for v in (0.5, 0.2, 0.8, 0.35)]
    check(lambda x, t, a, r: fn.grid_mask(x, tile=t, angle=a, ratio=r, shift_x=2.0),
          [imgs, tiles, angles, ratios])
    gray = [np.ascontiguousarray(i[..., 0]) for i in imgs]
    check(lambda x: fn.grid_mask(x, tile=16, angle=0.4), [gray], layout="HW")


@pytest.mark.parametrize("degree", [0, 1, 2, 3, 5, 16])
def test_jitter_photos(degree):
    imgs = photos()
    for c, g in twin_pipelines(lambda x: fn.jitter(x, nDegree=degree, fill_value=33.0), [imgs]):
        assert_same(c, g)


@pytest.mark.parametrize("dtype", NOISE_TYPES)
def test_jitter_types_masks_and_sequences(dtype):
    imgs = random_images(dtype, shapes=((40, 50, 3), (9, 5, 1), (1, 1, 4)))
    masks = [np.array(v, np.int32) for v in (1, 0, 1)]
    for c, g in twin_pipelines(lambda x, m: fn.jitter(x, nDegree=7, mask=m, fill_value=-3.5),
                               [imgs, masks]):
        assert_same(c, g)
    seqs = [s.astype(dtype) for s in (RNG.integers(0, 100, (3, 12, 17, 2)), RNG.integers(0, 100, (1, 5, 4, 3)))]
    for c, g in twin_pipelines(lambda x: fn.jitter(x, nDegree=4), [seqs], layout="FHWC"):
        assert_same(c, g)


def test_jitter_skipped_draws():
    """A degree whose draws are skipped now and then (about 1.5e-5 of them: 2^32 mod 65175 is
    65146), on images large enough to hold skips: each later pixel must still take the CPU's
    numbers. Wide images with a small height keep some moves inside the image."""
    imgs = [RNG.integers(0, 256, size=(3, 70000, 1)).astype(np.uint8) for _ in range(4)]
    results = twin_pipelines(lambda x: fn.jitter(x, nDegree=65175, fill_value=7), [imgs],
                             iterations=4)
    kept = 0
    for c, g in results:
        assert_same(c, g)
        kept += sum(int(np.count_nonzero(a != 7)) for a in host(c))
    assert kept > 0


# ------------------------------------------------------------------------------------- errors

def test_gpu_named_argument_refused():
    """Named arguments stay on the CPU: a GPU node as one is refused, naming it."""
    if DRY_RUN:
        pytest.skip("needs real GPU nodes")
    imgs = random_images(np.uint8)
    sizes = [np.array([3, 3], np.int32)] * len(imgs)
    with pytest.raises(ValueError) as e:
        check(lambda x, w: fn.laplacian(x, window_size=w), [imgs, sizes], gpu_inputs=(0, 1))
    assert str(e.value) == ("fn.laplacian: argument 'window_size' is given a GPU node; named "
                            "arguments take CPU data. Pass the node from before .gpu().")


@pytest.mark.parametrize("name", ["laplacian", "experimental.median_blur", "experimental.erode",
                                  "experimental.remap", "noise.gaussian", "grid_mask", "jitter"])
def test_cpu_input_refused(name):
    if DRY_RUN:
        pytest.skip("needs real GPU nodes")
    op = fn
    for part in name.split("."):
        op = getattr(op, part)

    @pipeline_def(batch_size=1, num_threads=1, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: [np.zeros((4, 4, 3), np.uint8)], layout="HWC")
        if name == "experimental.remap":
            m = fn.external_source(source=lambda: [np.zeros((4, 4), f32)], layout="HW")
            return op(x, m, m, device="gpu")
        return op(x, device="gpu")

    with pytest.raises(Exception) as e:
        p = pipe()
        p.build()
        p.run()
    msg = str(e.value)
    assert msg.startswith(f"fn.{name} (test_gpu_augment.py:"), msg
    assert msg.endswith(": device='gpu' needs GPU input; move the input to the GPU with .gpu() or "
                        "run the operator with device='cpu'."), msg
