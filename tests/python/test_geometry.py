"""Geometry operators (crop_mirror_normalize, crop, flip, transpose, slice, normalize, pad,
erase, paste) against NumPy references, on decoded JPEGs and on generated arrays."""
import numpy as np
import pytest

from stoker import fn, pipeline_def, types

IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


# ---------------------------------------------------------------- helpers

def run(make, batch_size=3, num_threads=2, seed=7):
    """Builds a one-off pipeline around `make` and returns its first batch as lists of arrays."""
    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        return make()
    outs = pipe().run()
    return [[np.array(t[i]) for i in range(len(t))] for t in outs]


def run_tl(make, batch_size=3):
    """Like run() but returns the TensorLists (for layout and dtype checks)."""
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=7)
    def pipe():
        return make()
    return pipe().run()


def decoded(files, output_type=types.RGB):
    jpegs, _ = fn.readers.file(files=files)
    return fn.decoders.image(jpegs, output_type=output_type)


def array(shape, layout, dtype=types.UINT8, lo=0, hi=256):
    """Random samples of a fixed shape with a layout (set through transpose's output_layout)."""
    x = fn.cast(fn.random.uniform(range=(lo, hi), shape=shape), dtype=dtype)
    return fn.transpose(x, perm=list(range(len(shape))), output_layout=layout)


@pytest.fixture(scope="module")
def files(jpeg_files):
    return [p for p, _ in jpeg_files[:4]]


def round_half_away(v):
    v = np.float32(v)
    return int(np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)))


def crop_anchor(extent, window, pos):
    return round_half_away(np.float32(pos) * np.float32(extent - window))


def window(img, anchor, shape, fill):
    """img[anchor:anchor+shape] over all axes, with `fill` outside the input (per channel when
    fill is a vector over the last axis)."""
    out = np.empty(tuple(shape) + img.shape[len(shape):], img.dtype)
    out[...] = fill
    src, dst = [], []
    for a, s, e in zip(anchor, shape, img.shape):
        lo, hi = max(a, 0), min(a + s, e)
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - a, hi - a))
    out[tuple(dst)] = img[tuple(src)]
    return out


def to_dtype(x, np_dtype):
    if np_dtype in (np.uint8, np.int8, np.int16, np.uint16, np.int32):
        info = np.iinfo(np_dtype)
        return np.clip(np.rint(x), info.min, info.max).astype(np_dtype)
    return x.astype(np_dtype)


def cmn_ref(img, crop=None, pos=(0.5, 0.5), mirror=False, mean=(0.0,), std=(1.0,), scale=1.0,
            shift=0.0, dtype=np.float32, layout="CHW", pad_output=False, fill=0.0, oob="error"):
    """crop_mirror_normalize of one HWC image in float32 math: x * mul + add with
    mul = scale / std and add = shift - mean * mul computed in double, then rounded to float32."""
    H, W, C = img.shape
    ch, cw = crop if crop else (H, W)
    y0, x0 = crop_anchor(H, ch, pos[1]), crop_anchor(W, cw, pos[0])
    if oob == "trim_to_shape":
        y1, x1 = min(y0 + ch, H), min(x0 + cw, W)
        y0, x0 = max(y0, 0), max(x0, 0)
        ch, cw = y1 - y0, x1 - x0
    n = max(len(mean), len(std))
    mean = np.broadcast_to(np.array(mean, np.float64), n)
    std = np.broadcast_to(np.array(std, np.float64), n)
    mul = (scale / std).astype(np.float32)
    add = (shift - mean * (scale / std)).astype(np.float32)
    norm = img.astype(np.float32) * mul + add
    cout = 1 << (C - 1).bit_length() if pad_output else C
    fills = np.zeros(cout, np.float64)
    fills[:] = fill if np.ndim(fill) == 0 else np.pad(np.array(fill, np.float64), (0, cout - len(fill)))
    normc = np.empty((H, W, cout), np.float32)
    normc[:, :, :C] = norm
    normc[:, :, C:] = fills[C:].astype(np.float32)
    out = window(normc, (y0, x0), (ch, cw), fills.astype(np.float32))
    # fill values are output values: they bypass normalisation
    inside = np.zeros((ch, cw), bool)
    inside[max(-y0, 0):min(H - y0, ch), max(-x0, 0):min(W - x0, cw)] = True
    out = to_dtype(out, dtype)
    outside_fill = to_dtype(np.broadcast_to(fills, out.shape), dtype)
    out = np.where(inside[:, :, None] & (np.arange(cout) < C), out, outside_fill)
    if mirror:
        out = out[:, ::-1]
    if layout == "CHW":
        out = out.transpose(2, 0, 1)
    return np.ascontiguousarray(out)


def assert_same(actual, expected):
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if actual.dtype.kind == "f":
        actual, expected = np.ascontiguousarray(actual), np.ascontiguousarray(expected)
        assert np.array_equal(actual.view(np.uint8), expected.view(np.uint8)) or np.array_equal(
            actual, expected, equal_nan=True), np.max(np.abs(actual.astype(np.float64) - expected))
    else:
        assert np.array_equal(actual, expected)


# ---------------------------------------------------------------- crop_mirror_normalize

@pytest.mark.parametrize("dtype,np_dtype", [(types.FLOAT16, np.float16), (types.FLOAT, np.float32)])
@pytest.mark.parametrize("layout", ["CHW", "HWC"])
@pytest.mark.parametrize("batch_size", [1, 4])
def test_cmn_matches_numpy_on_decoded_images(files, dtype, np_dtype, layout, batch_size):
    def make():
        imgs = decoded(files[:batch_size])
        mirror = fn.random.coin_flip()
        pos_x = fn.random.uniform(range=(0, 1))
        pos_y = fn.random.uniform(range=(0, 1))
        out = fn.crop_mirror_normalize(imgs, dtype=dtype, output_layout=layout, crop=(224, 224),
                                       crop_pos_x=pos_x, crop_pos_y=pos_y, mean=IMAGENET_MEAN,
                                       std=IMAGENET_STD, mirror=mirror)
        return imgs, out, mirror, pos_x, pos_y

    imgs, out, mirror, px, py = run(make, batch_size=batch_size)
    for i in range(batch_size):
        ref = cmn_ref(imgs[i], crop=(224, 224), pos=(px[i], py[i]), mirror=bool(mirror[i]),
                      mean=IMAGENET_MEAN, std=IMAGENET_STD, dtype=np_dtype, layout=layout)
        assert_same(out[i], ref)
        if np_dtype == np.float16:
            # the float16 result is the float32 result rounded once (within 1 ulp, here exact)
            f32 = cmn_ref(imgs[i], crop=(224, 224), pos=(px[i], py[i]), mirror=bool(mirror[i]),
                          mean=IMAGENET_MEAN, std=IMAGENET_STD, dtype=np.float32, layout=layout)
            ulp = np.abs(out[i].view(np.int16).astype(np.int32) - f32.astype(np.float16).view(np.int16))
            assert ulp.max() <= 1


def test_cmn_defaults_are_chw_float_without_crop(files):
    (imgs, out) = run_tl(lambda: (lambda im: (im, fn.crop_mirror_normalize(im)))(decoded(files[:2])), 2)
    assert out.layout() == "CHW" and out.dtype == types.FLOAT
    for i in range(2):
        assert_same(np.array(out[i]), np.array(imgs[i]).astype(np.float32).transpose(2, 0, 1))


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 37, 3), (29, 1, 3), (17, 33, 1), (19, 23, 4), (40, 50, 2)])
def test_cmn_odd_shapes_and_channel_counts(shape):
    C = shape[2]
    mean, std = [10.0 + 3 * c for c in range(C)], [20.0 + c for c in range(C)]

    def make():
        x = array(shape, "HWC")
        return x, fn.crop_mirror_normalize(x, dtype=types.FLOAT16, mean=mean, std=std, mirror=1,
                                           crop=(min(shape[0], 7), min(shape[1], 5)),
                                           crop_pos_x=0.3, crop_pos_y=0.8)

    xs, out = run(make, batch_size=2)
    for i in range(2):
        assert_same(out[i], cmn_ref(xs[i], crop=(min(shape[0], 7), min(shape[1], 5)), pos=(0.3, 0.8),
                                    mirror=True, mean=mean, std=std, dtype=np.float16))


def test_cmn_per_sample_mean_std_and_scalars_broadcast():
    def make():
        x = array((12, 15, 3), "HWC")
        mean = fn.random.uniform(range=(0, 255), shape=(3,))
        std = fn.random.uniform(range=(10, 80), shape=(1,))
        return x, mean, std, fn.crop_mirror_normalize(x, mean=mean, std=std, scale=2.0, shift=5.0)

    xs, means, stds, out = run(make, batch_size=4)
    for i in range(4):
        assert_same(out[i], cmn_ref(xs[i], mean=means[i].astype(np.float64), std=stds[i].astype(np.float64),
                                    scale=2.0, shift=5.0))


@pytest.mark.parametrize("dtype,np_dtype", [(types.UINT8, np.uint8), (types.INT8, np.int8)])
def test_cmn_integer_outputs_round_half_even_and_saturate(dtype, np_dtype):
    def make():
        x = array((20, 30, 3), "HWC")
        return x, fn.crop_mirror_normalize(x, dtype=dtype, mean=[100, 100, 50], std=[0.5, 2, 4],
                                           scale=1.0, shift=0.5, output_layout="HWC")

    xs, out = run(make)
    for i in range(3):
        assert_same(out[i], cmn_ref(xs[i], mean=[100, 100, 50], std=[0.5, 2, 4], shift=0.5,
                                    dtype=np_dtype, layout="HWC"))
    # Both ends of the range are reached: saturation happened.
    allv = np.concatenate([o.ravel() for o in out])
    info = np.iinfo(np_dtype)
    assert allv.min() == info.min and allv.max() == info.max


@pytest.mark.parametrize("layout", ["CHW", "HWC"])
def test_cmn_pad_output_adds_a_fourth_channel_of_fill_values(layout):
    def make():
        x = array((9, 11, 3), "HWC")
        return x, fn.crop_mirror_normalize(x, pad_output=True, fill_values=[0, 0, 0, 7.5], mean=[1, 2, 3],
                                           output_layout=layout, dtype=types.FLOAT16)

    xs, out = run(make)
    for i in range(3):
        ref = cmn_ref(xs[i], pad_output=True, fill=[0, 0, 0, 7.5], mean=[1, 2, 3], layout=layout,
                      dtype=np.float16)
        assert_same(out[i], ref)
        assert (ref[3] if layout == "CHW" else ref[..., 3]).min() == 7.5


@pytest.mark.parametrize("oob", ["pad", "trim_to_shape"])
def test_cmn_out_of_bounds_policies(oob):
    def make():
        x = array((10, 12, 3), "HWC")
        return x, fn.crop_mirror_normalize(x, crop=(16, 9), crop_pos_y=0.25, out_of_bounds_policy=oob,
                                           fill_values=[1, 2, 3], mean=[5], std=[3], mirror=1)

    xs, out = run(make)
    for i in range(3):
        assert_same(out[i], cmn_ref(xs[i], crop=(16, 9), pos=(0.5, 0.25), oob=oob, fill=[1, 2, 3],
                                    mean=[5], std=[3], mirror=True))
    assert out[0].shape == ((3, 16, 9) if oob == "pad" else (3, 10, 9))


def test_cmn_sequences_get_the_same_transform_on_every_frame():
    def make():
        x = array((3, 10, 14, 3), "FHWC")
        return x, fn.crop_mirror_normalize(x, crop=(6, 8), crop_pos_x=0.2, mirror=1, mean=IMAGENET_MEAN,
                                           std=IMAGENET_STD, dtype=types.FLOAT16)

    tl = run_tl(make, batch_size=2)
    assert tl[1].layout() == "FCHW"
    xs, out = [np.array(t) for t in tl[0]], [np.array(t) for t in tl[1]]
    for i in range(2):
        ref = np.stack([cmn_ref(f, crop=(6, 8), pos=(0.2, 0.5), mirror=True, mean=IMAGENET_MEAN,
                                std=IMAGENET_STD, dtype=np.float16) for f in xs[i]])
        assert_same(out[i], ref)


def test_cmn_crop_h_w_and_truncate_rounding():
    def make():
        x = array((11, 13, 3), "HWC")
        return x, fn.crop_mirror_normalize(x, crop_h=4.6, crop_w=5.2, rounding="truncate",
                                           crop_pos_x=0.5, crop_pos_y=0.5, output_layout="HWC")

    xs, out = run(make)
    # truncate: a 4 x 5 window at floor(0.5 * 7) = 3, floor(0.5 * 8) = 4
    assert_same(out[0], xs[0][3:7, 4:9].astype(np.float32))


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(mean=[1, 2]), ValueError, r"argument 'mean' has 2 values, but the input has 3 channel"),
    (dict(std=[1, 0, 1]), ValueError, r"argument 'std' must be nonzero and finite, got 0"),
    (dict(mean=[1, 2], std=[1, 2, 3]), ValueError, r"argument 'std' has 3 values but 'mean' has 2"),
    (dict(dtype=types.INT32), ValueError, r"argument 'dtype' must be FLOAT, FLOAT16, UINT8 or INT8, got int32"),
    (dict(output_layout="HWCX"), ValueError, r"argument 'output_layout' must be a permutation of the input layout 'HWC'"),
    (dict(crop_w=10), ValueError, r"argument 'crop_h' must be given together with 'crop_w'"),
    (dict(crop=(4, 4), crop_h=2, crop_w=2), ValueError, r"argument 'crop' cannot be combined with 'crop_h'"),
    (dict(crop=(40, 4)), ValueError, r"the crop window from \(-15, 4, 0\) to \(25, 8, 3\) \(exclusive\) reaches outside the input of shape \(10, 12, 3\).*out_of_bounds_policy='pad'"),
    (dict(crop_pos_x=1.5), ValueError, r"argument 'crop_pos_x' must be in \[0, 1\], got 1.5"),
    (dict(fill_values=[1, 2]), ValueError, r"argument 'fill_values' must have one value or one per channel \(3\), got 2"),
    (dict(out_of_bounds_policy="wrap"), ValueError, r"argument 'out_of_bounds_policy' must be one of"),
])
def test_cmn_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        run(lambda: fn.crop_mirror_normalize(array((10, 12, 3), "HWC"), **kwargs))


def test_cmn_errors_on_inputs_without_an_image_layout_and_bad_per_sample_values():
    with pytest.raises(ValueError, match=r"fn.crop_mirror_normalize.*expects images with a layout that has H, W and C axes.*got no layout"):
        run(lambda: fn.crop_mirror_normalize(fn.random.uniform(shape=(4, 4, 3))))
    with pytest.raises(ValueError, match=r"argument 'crop_pos_y' must be in \[0, 1\], got 2.* for sample 0"):
        run(lambda: fn.crop_mirror_normalize(array((10, 12, 3), "HWC"), crop=(4, 4),
                                             crop_pos_y=fn.random.uniform(range=(2, 3))))
    with pytest.raises(ValueError, match=r"argument 'std' must be nonzero and finite, got 0.* for sample 0"):
        run(lambda: fn.crop_mirror_normalize(array((10, 12, 3), "HWC"),
                                             std=fn.random.uniform(range=(0, 0), shape=(3,))))


# ---------------------------------------------------------------- crop

def crop_ref(img, layout, crop, pos=(0.5, 0.5, 0.5), fill=0, oob="pad"):
    """crop of one sample: crop = (h, w) or (d, h, w); pos = (x, y, z)."""
    anchor, shape = [0] * img.ndim, list(img.shape)
    axes = dict(zip("DHW"[-len(crop):], crop))
    for name, p in (("W", pos[0]), ("H", pos[1]), ("D", pos[2])):
        if name in axes and name in layout:
            k = layout.index(name)
            anchor[k], shape[k] = crop_anchor(img.shape[k], axes[name], p), axes[name]
    if oob == "trim_to_shape":
        for k in range(img.ndim):
            lo, hi = max(anchor[k], 0), min(anchor[k] + shape[k], img.shape[k])
            anchor[k], shape[k] = lo, hi - lo
    return window(img, anchor, shape, fill)


@pytest.mark.parametrize("batch_size", [1, 4])
def test_crop_decoded_images_with_per_sample_positions(files, batch_size):
    def make():
        imgs = decoded(files[:batch_size])
        px, py = fn.random.uniform(range=(0, 1)), fn.random.uniform(range=(0, 1))
        return imgs, px, py, fn.crop(imgs, crop=(200, 300), crop_pos_x=px, crop_pos_y=py)

    imgs, px, py, out = run(make, batch_size=batch_size)
    for i in range(batch_size):
        assert_same(out[i], crop_ref(imgs[i], "HWC", (200, 300), (px[i], py[i], 0.5)))


def test_crop_per_sample_window_sizes_and_dtype():
    def make():
        x = array((30, 40, 3), "HWC")
        h = fn.cast(fn.random.uniform(range=(1, 30)), dtype=types.INT32)
        w = fn.random.uniform(range=(1, 40))
        return x, h, w, fn.crop(x, crop_h=h, crop_w=w, crop_pos_x=0.0, crop_pos_y=1.0, dtype=types.FLOAT16)

    xs, hs, ws, out = run(make, batch_size=5)
    for i in range(5):
        h, w = int(hs[i]), int(ws[i])  # window sizes truncate, as DALI's
        assert_same(out[i], crop_ref(xs[i], "HWC", (h, w), (0.0, 1.0, 0.5)).astype(np.float16))


@pytest.mark.parametrize("shape,layout,crop", [
    ((1, 1, 3), "HWC", (1, 1)), ((1, 9, 1), "HWC", (1, 4)), ((13, 11, 4), "HWC", (5, 6)),
    ((3, 13, 11), "CHW", (5, 6)), ((4, 9, 10, 3), "FHWC", (5, 6)), ((6, 9, 10, 2), "DHWC", (3, 5, 6)),
    ((3, 6, 9, 10, 2), "FDHWC", (3, 5, 6))])
def test_crop_layouts_and_odd_shapes(shape, layout, crop):
    def make():
        x = array(shape, layout)
        return x, fn.crop(x, crop=crop, crop_pos_x=0.25, crop_pos_y=0.75, crop_pos_z=0.6)

    tl = run_tl(make, batch_size=2)
    assert tl[1].layout() == layout
    for i in range(2):
        assert_same(np.array(tl[1][i]), crop_ref(np.array(tl[0][i]), layout, crop, (0.25, 0.75, 0.6)))


def test_crop_d_crops_frames_of_a_sequence():
    def make():
        x = array((8, 5, 6, 3), "FHWC")
        return x, fn.crop(x, crop_d=3, crop_h=2, crop_w=4, crop_pos_z=1.0)

    xs, out = run(make, batch_size=1)
    assert_same(out[0], xs[0][5:8, 2:4, 1:5])


@pytest.mark.parametrize("oob", ["pad", "trim_to_shape"])
def test_crop_out_of_bounds(oob):
    def make():
        x = array((7, 9, 3), "HWC")
        return x, fn.crop(x, crop=(12, 5), crop_pos_x=1.0, crop_pos_y=0.3, out_of_bounds_policy=oob,
                          fill_values=[10, 20, 30])

    xs, out = run(make)
    for i in range(3):
        assert_same(out[i], crop_ref(xs[i], "HWC", (12, 5), (1.0, 0.3, 0.5), fill=np.array([10, 20, 30], np.uint8), oob=oob))


def test_crop_errors():
    x = lambda: array((10, 12, 3), "HWC")
    with pytest.raises(ValueError, match=r"fn.crop.*the crop window .* reaches outside the input of shape \(10, 12, 3\)"):
        run(lambda: fn.crop(x(), crop=(20, 5)))
    with pytest.raises(ValueError, match=r"argument 'dtype' must be FLOAT, FLOAT16, UINT8, INT8 or the input's type \(uint8\), got int32"):
        run(lambda: fn.crop(x(), crop=(2, 2), dtype=types.INT32))
    with pytest.raises(ValueError, match=r"cropping needs an input layout with H and W axes, got no layout"):
        run(lambda: fn.crop(fn.random.uniform(shape=(5, 5)), crop=(2, 2)))
    with pytest.raises(ValueError, match=r"argument 'crop' takes 2 to 3 values, got 1"):
        run(lambda: fn.crop(x(), crop=[3]))
    with pytest.raises(ValueError, match=r"argument 'crop' has 3 values \(D, H, W\), but the input layout 'HWC' has no D"):
        run(lambda: fn.crop(x(), crop=(1, 2, 2)))
    with pytest.raises(ValueError, match=r"argument 'crop_d' must be given together with 'crop_h' and 'crop_w'"):
        run(lambda: fn.crop(x(), crop_d=2))
    with pytest.raises(ValueError, match=r"argument 'fill_values' has 2 values, but the input's layout has no channel axis"):
        run(lambda: fn.crop(array((10, 12), "HW"), crop=(2, 2), fill_values=[1, 2]))


# ---------------------------------------------------------------- flip

def flip_ref(x, layout, h, v, d):
    for name, on in (("W", h), ("H", v), ("D", d)):
        if on and name in layout:
            x = np.flip(x, layout.index(name))
    return x


@pytest.mark.parametrize("batch_size", [1, 5])
def test_flip_per_sample_flags_on_decoded_images(files, batch_size):
    def make():
        imgs = decoded((files * 2)[:batch_size])
        h, v = fn.random.coin_flip(), fn.random.coin_flip()
        return imgs, h, v, fn.flip(imgs, horizontal=h, vertical=v)

    imgs, hs, vs, out = run(make, batch_size=batch_size)
    for i in range(batch_size):
        assert_same(out[i], flip_ref(imgs[i], "HWC", hs[i], vs[i], 0))


@pytest.mark.parametrize("shape,layout", [
    ((1, 1, 3), "HWC"), ((1, 7, 1), "HWC"), ((6, 1, 4), "HWC"), ((3, 5, 7), "CHW"),
    ((4, 5, 6, 3), "FHWC"), ((4, 5, 6, 3), "DHWC"), ((2, 3, 5, 6, 2), "FDHWC"), ((5, 6), "HW")])
@pytest.mark.parametrize("flags", [(1, 0, 0), (0, 1, 0), (1, 1, 1), (0, 0, 1), (0, 0, 0)])
def test_flip_layouts(shape, layout, flags):
    def make():
        x = array(shape, layout, dtype=types.INT16, lo=-500, hi=500)
        return x, fn.flip(x, horizontal=flags[0], vertical=flags[1], depthwise=flags[2])

    tl = run_tl(make, batch_size=2)
    assert tl[1].layout() == layout and tl[1].dtype == types.INT16
    for i in range(2):
        assert_same(np.array(tl[1][i]), flip_ref(np.array(tl[0][i]), layout, *flags))


def test_flip_errors():
    with pytest.raises(ValueError, match=r"fn.flip.*argument 'horizontal' asks for a flip along W, but the input has no layout"):
        run(lambda: fn.flip(fn.random.uniform(shape=(3, 4))))
    with pytest.raises(TypeError, match=r"argument 'vertical' expects int"):
        run(lambda: fn.flip(array((3, 4, 3), "HWC"), vertical="yes"))


# ---------------------------------------------------------------- transpose

@pytest.mark.parametrize("perm", [[2, 0, 1], [1, 0, 2], [0, 1, 2], [2, 1, 0]])
def test_transpose_decoded_images(files, perm):
    tl = run_tl(lambda: (lambda im: (im, fn.transpose(im, perm=perm)))(decoded(files[:2])), batch_size=2)
    assert tl[1].layout() == "".join("HWC"[p] for p in perm)
    for i in range(2):
        assert_same(np.array(tl[1][i]), np.ascontiguousarray(np.array(tl[0][i]).transpose(perm)))


@pytest.mark.parametrize("shape,perm", [((1, 1, 1), [2, 1, 0]), ((1, 5), [1, 0]), ((7,), [0]),
                                        ((2, 3, 4, 5), [3, 1, 0, 2]), ((2, 3, 4, 5), None)])
def test_transpose_shapes_and_default_perm(shape, perm):
    def make():
        x = fn.random.uniform(range=(0, 100), shape=shape)
        return x, fn.transpose(x, perm=perm)

    xs, out = run(make, batch_size=2)
    for i in range(2):
        assert_same(out[i], np.ascontiguousarray(xs[i].transpose(perm)))


def test_transpose_layout_options():
    def make():
        x = array((4, 5, 3), "HWC")
        return (fn.transpose(x, perm=[2, 0, 1]), fn.transpose(x, perm=[2, 0, 1], transpose_layout=False),
                fn.transpose(x, perm=[2, 0, 1], output_layout="XYZ"))

    a, b, c = run_tl(make, batch_size=1)
    assert (a.layout(), b.layout(), c.layout()) == ("CHW", "HWC", "XYZ")


def test_transpose_errors():
    with pytest.raises(ValueError, match=r"argument 'perm' must be a permutation of 0..2 \(each axis once\), got \(0, 0, 1\)"):
        run(lambda: fn.transpose(array((3, 4, 3), "HWC"), perm=[0, 0, 1]))
    with pytest.raises(ValueError, match=r"argument 'perm' has 2 entries, but the input has 3 dimensions"):
        run(lambda: fn.transpose(array((3, 4, 3), "HWC"), perm=[1, 0]))
    with pytest.raises(ValueError, match=r"argument 'output_layout' has 2 axes, but the input has 3 dimensions"):
        run(lambda: fn.transpose(array((3, 4, 3), "HWC"), perm=[1, 0, 2], output_layout="HW"))


# ---------------------------------------------------------------- slice

def llround(v):
    return int(np.sign(v) * np.floor(abs(v) + 0.5))


@pytest.mark.parametrize("batch_size", [1, 3])
def test_slice_relative_start_end_on_decoded_images(files, batch_size):
    def make():
        imgs = decoded(files[:batch_size])
        return imgs, fn.slice(imgs, rel_start=(0.1, 0.25), rel_end=(0.8, 0.9))  # axis_names "WH"

    imgs, out = run(make, batch_size=batch_size)
    for i in range(batch_size):
        H, W = imgs[i].shape[:2]
        x0, x1 = llround(0.1 * W), llround(0.8 * W)
        y0, y1 = llround(0.25 * H), llround(0.9 * H)
        assert_same(out[i], imgs[i][y0:y1, x0:x1])


@pytest.mark.parametrize("normalized", [True, False])
def test_slice_anchor_and_shape_inputs_per_sample(normalized):
    def make():
        x = array((20, 30, 3), "HWC")
        if normalized:
            anchor = fn.random.uniform(range=(0, 0.5), shape=(2,))
            shape = fn.random.uniform(range=(0.1, 0.5), shape=(2,))
        else:
            anchor = fn.cast(fn.random.uniform(range=(0, 10), shape=(2,)), dtype=types.INT32)
            shape = fn.cast(fn.random.uniform(range=(1, 10), shape=(2,)), dtype=types.INT32)
        return x, anchor, shape, fn.slice(x, anchor, shape, normalized_anchor=normalized,
                                          normalized_shape=normalized)

    xs, anchors, shapes, out = run(make, batch_size=4)
    for i in range(4):
        (ax, ay), (sx, sy) = anchors[i].astype(np.float64), shapes[i].astype(np.float64)
        if normalized:  # axis_names "WH": the values are (x, y)
            x0, x1 = llround(np.float64(np.float32(ax)) * 30), llround((ax + sx) * 30)
            y0, y1 = llround(ay * 20), llround((ay + sy) * 20)
        else:
            x0, x1, y0, y1 = int(ax), int(ax + sx), int(ay), int(ay + sy)
        assert_same(out[i], xs[i][y0:y1, x0:x1])


def test_slice_absolute_arguments_axes_and_dtype():
    def make():
        x = fn.random.uniform(range=(0, 100), shape=(10, 12, 2))
        return (x, fn.slice(x, start=[2, 3], shape=[5, 4], axes=[0, 1]),
                fn.slice(x, start=[1], end=[2], axes=[2]),
                fn.slice(x, rel_start=[0.5], rel_shape=[0.25], axes=[-2], dtype=types.FLOAT16),
                fn.slice(x, end=[4, 3], axes=[1, 0]))

    xs, a, b, c, d = run(make, batch_size=2)
    for i in range(2):
        assert_same(a[i], xs[i][2:7, 3:7])
        assert_same(b[i], xs[i][:, :, 1:2])
        assert_same(c[i], xs[i][:, 6:9].astype(np.float16))
        assert_same(d[i], xs[i][:3, :4])


@pytest.mark.parametrize("oob", ["pad", "trim_to_shape"])
def test_slice_out_of_bounds(oob):
    def make():
        x = array((6, 8, 3), "HWC")
        return x, fn.slice(x, start=[-2, 3], end=[5, 9], axis_names="WH", out_of_bounds_policy=oob,
                           fill_values=[7, 8, 9])

    xs, out = run(make)
    for i in range(3):
        if oob == "pad":
            ref = window(xs[i], (3, -2, 0), (6, 7, 3), np.array([7, 8, 9], np.uint8))
        else:
            ref = xs[i][3:6, 0:5]
        assert_same(out[i], ref)


def test_slice_sequences_and_odd_shapes():
    def make():
        seq = array((5, 4, 6, 3), "FHWC")
        tiny = array((1, 1, 1), "HWC")
        return (seq, fn.slice(seq, start=[1, 2], end=[4, 5], axis_names="FW"), tiny,
                fn.slice(tiny, rel_start=(0, 0), rel_end=(1, 1)))

    seq, a, tiny, b = run(make, batch_size=2)
    for i in range(2):
        assert_same(a[i], seq[i][1:4, :, 2:5])
        assert_same(b[i], tiny[i])


def test_slice_errors():
    x = lambda: array((6, 8, 3), "HWC")
    with pytest.raises(ValueError, match=r"argument 'rel_start' cannot be given together with 'start'"):
        run(lambda: fn.slice(x(), start=[1, 1], rel_start=[0, 0]))
    with pytest.raises(ValueError, match=r"argument 'shape' cannot be given together with 'end'"):
        run(lambda: fn.slice(x(), end=[1, 1], shape=[1, 1]))
    with pytest.raises(TypeError, match=r"fn.slice.*the anchor and shape inputs go together"):
        run(lambda: fn.slice(x(), fn.random.uniform(shape=(2,))))
    with pytest.raises(ValueError, match=r"argument 'start' cannot be combined with the anchor and shape inputs"):
        run(lambda: fn.slice(x(), fn.random.uniform(shape=(2,)), fn.random.uniform(shape=(2,)), start=[0, 0]))
    with pytest.raises(ValueError, match=r"fn.slice.*no slice given"):
        run(lambda: fn.slice(x()))
    with pytest.raises(ValueError, match=r"argument 'axis_names' names axis 'D', which the input layout 'HWC' does not have"):
        run(lambda: fn.slice(x(), start=[0], axis_names="D"))
    with pytest.raises(ValueError, match=r"argument 'axes' has axis 3, out of range for 3-dimensional input"):
        run(lambda: fn.slice(x(), start=[0], axes=[3]))
    with pytest.raises(ValueError, match=r"argument 'start' has 1 values for sample 0, expected 2"):
        run(lambda: fn.slice(x(), start=[0]))
    with pytest.raises(ValueError, match=r"anchor input has 3 values for sample 0, expected 2"):
        run(lambda: fn.slice(x(), fn.random.uniform(shape=(3,)), fn.random.uniform(shape=(2,))))
    with pytest.raises(ValueError, match=r"the slice from \(0, 2, 0\) to \(6, 12, 3\) \(exclusive\) reaches outside the input of shape \(6, 8, 3\)"):
        run(lambda: fn.slice(x(), start=[2], end=[12], axes=[1]))
    with pytest.raises(ValueError, match=r"the slice of axis 1 ends before it starts \(start 5, end 2\)"):
        run(lambda: fn.slice(x(), start=[5], end=[2], axes=[1]))


# ---------------------------------------------------------------- normalize

def normalize_ref(x, axes, mean=None, stddev=None, scale=1.0, shift=0.0, epsilon=0.0, ddof=0,
                  dtype=np.float32):
    x64 = x.astype(np.float64)
    m = x64.mean(axis=axes, keepdims=True) if mean is None else np.asarray(mean, np.float64)
    if stddev is None:
        var = ((x64 - m) ** 2).sum(axis=axes, keepdims=True) / (np.prod([x.shape[a] for a in axes]) - ddof)
    else:
        var = np.asarray(stddev, np.float64) ** 2
    v = var + epsilon
    factor = np.where(v > 0, scale / np.sqrt(np.where(v > 0, v, 1)), 0).astype(np.float32)
    out = (x.astype(np.float32) - m.astype(np.float32)) * factor + np.float32(shift)
    return to_dtype(out, dtype)


@pytest.mark.parametrize("batch_size", [1, 3])
@pytest.mark.parametrize("kwargs,axes", [({}, (0, 1, 2)), (dict(axes=[0, 1]), (0, 1)),
                                         (dict(axis_names="HW"), (0, 1)), (dict(axes=[-1]), (2,)),
                                         (dict(axis_names="C", ddof=1, epsilon=2.0), (2,))])
def test_normalize_per_sample_statistics_on_decoded_images(files, batch_size, kwargs, axes):
    def make():
        imgs = decoded(files[:batch_size])
        imgs = fn.crop(imgs, crop=(64, 80))  # keep it quick
        return imgs, fn.normalize(imgs, **kwargs)

    imgs, out = run(make, batch_size=batch_size)
    for i in range(batch_size):
        ref = normalize_ref(imgs[i], axes, ddof=kwargs.get("ddof", 0), epsilon=kwargs.get("epsilon", 0.0))
        assert out[i].dtype == np.float32
        np.testing.assert_allclose(out[i], ref, rtol=1e-5, atol=1e-5)


def test_normalize_batch_statistics_scale_shift_and_dtype():
    def make():
        x = array((5, 6, 3), "HWC", dtype=types.INT16, lo=-1000, hi=1000)
        return x, fn.normalize(x, batch=True, axis_names="HW", scale=64, shift=128, dtype=types.UINT8)

    xs, out = run(make, batch_size=4)
    allx = np.stack(xs).astype(np.float64)  # (N, H, W, C)
    mean = allx.mean(axis=(0, 1, 2))
    std = np.sqrt(((allx - mean) ** 2).mean(axis=(0, 1, 2)))
    for i in range(4):
        ref = normalize_ref(xs[i], (0, 1), mean=mean.reshape(1, 1, 3), stddev=std.reshape(1, 1, 3),
                            scale=64, shift=128, dtype=np.uint8)
        assert out[i].dtype == np.uint8
        assert np.abs(out[i].astype(int) - ref.astype(int)).max() <= 1


def test_normalize_given_mean_and_stddev_scalars_and_tensors():
    def make():
        x = fn.random.uniform(range=(0, 10), shape=(4, 7))
        m = fn.random.uniform(range=(0, 10), shape=(1, 7))
        s = fn.random.uniform(range=(1, 2))
        return (x, m, s, fn.normalize(x, mean=3.0, stddev=2.0), fn.normalize(x, mean=m, stddev=s),
                fn.normalize(x, mean=m), fn.normalize(x, stddev=s, axes=[1]))

    xs, ms, ss, a, b, c, d = run(make, batch_size=3)
    for i in range(3):
        np.testing.assert_allclose(a[i], normalize_ref(xs[i], (0, 1), mean=3.0, stddev=2.0), rtol=1e-6)
        np.testing.assert_allclose(b[i], normalize_ref(xs[i], (0,), mean=ms[i], stddev=ss[i]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c[i], normalize_ref(xs[i], (0,), mean=ms[i]), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(d[i], normalize_ref(xs[i], (1,), stddev=ss[i]), rtol=1e-5, atol=1e-5)


def test_normalize_constant_input_gives_shift_and_odd_shapes():
    def make():
        zeros = fn.random.uniform(range=(5, 5), shape=(3, 4))
        one = fn.random.uniform(range=(0, 1), shape=(1, 1, 1))
        return fn.normalize(zeros, shift=7), fn.normalize(one, epsilon=1.0)

    a, b = run(make, batch_size=2)
    assert np.all(a[0] == 7) and np.all(b[0] == 0)


def test_normalize_sequences_per_frame():
    def make():
        x = array((3, 4, 5, 2), "FHWC")
        return x, fn.normalize(x, axis_names="HWC")

    xs, out = run(make, batch_size=2)
    for i in range(2):
        np.testing.assert_allclose(out[i], normalize_ref(xs[i], (1, 2, 3)), rtol=1e-5, atol=1e-5)


def test_normalize_errors():
    x = lambda: array((4, 5, 3), "HWC")
    with pytest.raises(ValueError, match=r"argument 'axis_names' names axis 'D', which the input layout 'HWC' does not have"):
        run(lambda: fn.normalize(x(), axis_names="D"))
    with pytest.raises(ValueError, match=r"argument 'axes' has axis 5, out of range for 3-dimensional input"):
        run(lambda: fn.normalize(x(), axes=[5]))
    with pytest.raises(ValueError, match=r"argument 'axis_names' cannot be given together with 'axes'"):
        run(lambda: fn.normalize(x(), axes=[0], axis_names="H"))
    with pytest.raises(ValueError, match=r"argument 'ddof' must be less than the number of elements each statistic is taken over \(4\), got 4"):
        run(lambda: fn.normalize(x(), axes=[0], ddof=4))
    with pytest.raises(ValueError, match=r"argument 'mean' for sample 0 has shape \(1, 4\); expected \(1, 1, 3\)"):
        run(lambda: fn.normalize(x(), axis_names="HW", mean=fn.random.uniform(shape=(1, 4))))
    with pytest.raises(ValueError, match=r"batch=True needs all samples to have the same extents in the axes that are not reduced"):
        run(lambda: fn.normalize(fn.crop(x(), crop_w=fn.random.uniform(range=(1, 5)), crop_h=4), batch=True, axes=[0]))


# ---------------------------------------------------------------- pad

def pad_to(x, shape, fill):
    out = np.full(shape, fill, dtype=x.dtype)
    out[tuple(slice(0, e) for e in x.shape)] = x
    return out


def test_pad_to_the_largest_sample_by_default(files):
    def make():
        imgs = fn.crop(decoded(files[:3]), crop_h=fn.random.uniform(range=(5, 40)),
                       crop_w=fn.random.uniform(range=(5, 40)))
        return imgs, fn.pad(imgs, fill_value=17)

    imgs, out = run(make)
    H = max(i.shape[0] for i in imgs)
    W = max(i.shape[1] for i in imgs)
    for i in range(3):
        assert_same(out[i], pad_to(imgs[i], (H, W, 3), 17))


def test_pad_axes_shape_align_and_per_sample_fill():
    def make():
        x = fn.random.uniform(range=(0, 1), shape=(5, 7, 2))
        f = fn.random.uniform(range=(-9, -1))
        return (x, f, fn.pad(x, axes=[0], shape=[8]), fn.pad(x, axes=[1, 0], shape=[3, 9], fill_value=f),
                fn.pad(x, axes=[0, 1], align=4), fn.pad(x, axes=[0, 1], align=[2, 3], shape=[-1, 8]))

    xs, fs, a, b, c, d = run(make, batch_size=2)
    for i in range(2):
        assert_same(a[i], pad_to(xs[i], (8, 7, 2), 0))
        assert_same(b[i], pad_to(xs[i], (9, 7, 2), fs[i]))  # 3 < 7: keeps 7
        assert_same(c[i], pad_to(xs[i], (8, 8, 2), 0))
        assert_same(d[i], pad_to(xs[i], (6, 9, 2), 0))


def test_pad_axis_names_sequences_and_tiny():
    def make():
        x = array((2, 3, 4, 1), "FHWC")
        t = array((1, 1, 1), "HWC")
        return x, fn.pad(x, axis_names="WF", shape=[6, 3], fill_value=255), t, fn.pad(t, shape=[2, 3, 1])

    xs, a, ts, b = run(make, batch_size=2)
    for i in range(2):
        assert_same(a[i], pad_to(xs[i], (3, 3, 6, 1), 255))
        assert_same(b[i], pad_to(ts[i], (2, 3, 1), 0))


def test_pad_errors():
    x = lambda: array((3, 4, 3), "HWC")
    with pytest.raises(ValueError, match=r"argument 'align' must be positive"):
        run(lambda: fn.pad(x(), align=[0]))
    with pytest.raises(ValueError, match=r"argument 'align' has 3 values for 2 padded axes"):
        run(lambda: fn.pad(x(), axes=[0, 1], align=[1, 2, 3]))
    with pytest.raises(ValueError, match=r"argument 'shape' has 1 values for sample 0, but 3 axes are padded"):
        run(lambda: fn.pad(x(), shape=[4]))
    with pytest.raises(ValueError, match=r"argument 'axis_names' names axis 'D'"):
        run(lambda: fn.pad(x(), axis_names="D"))


# ---------------------------------------------------------------- erase

def erase_ref(x, boxes, fill):
    out = x.copy()
    for box in boxes:
        out[tuple(slice(max(lo, 0), max(hi, 0)) for lo, hi in box)] = fill
    return out


def test_erase_regions_on_decoded_images(files):
    def make():
        imgs = decoded(files[:2])
        return imgs, fn.erase(imgs, anchor=(10, 20, 100, 5), shape=(30, 40, 1000, 8), axis_names="HW",
                              fill_value=(255, 0, 128))

    imgs, out = run(make, batch_size=2)
    for i in range(2):
        ref = erase_ref(imgs[i], [((10, 40), (20, 60)), ((100, 1100), (5, 13))], np.array([255, 0, 128], np.uint8))
        assert_same(out[i], ref)


def test_erase_normalized_centered_and_per_sample_anchor():
    def make():
        x = array((20, 30, 3), "HWC")
        anchor = fn.random.uniform(range=(0, 1), shape=(2,))
        return (x, anchor, fn.erase(x, anchor=anchor, shape=(0.2, 0.5), normalized=True, centered_anchor=True,
                                    axis_names="WH", fill_value=3),
                fn.erase(x, anchor=(2,), shape=(4,), axes=[1]),
                fn.erase(x, anchor=(1, 2), shape=(3, 4)),  # default axes: all but C
                fn.erase(x, anchor=(1, 2, 1), shape=(3, 4, 1), axis_names="HWC", fill_value=(5, 6, 7)))

    xs, anchors, a, b, c, d = run(make, batch_size=3)
    for i in range(3):
        ax, ay = anchors[i]
        cx, cy = float(ax * np.float32(30)), float(ay * np.float32(20))
        w, h = 0.2 * 30, 0.5 * 20
        # float32 bounds truncated, as DALI (the anchor is the centre)
        ends = lambda c, e, n: tuple(min(n, max(0, int(np.trunc(np.float32(v)))))
                                     for v in (c - e / 2, np.float32(c - e / 2) + np.float32(e)))
        box = (ends(cy, h, 20), ends(cx, w, 30))
        assert_same(a[i], erase_ref(xs[i], [box], 3))
        assert_same(b[i], erase_ref(xs[i], [((0, 20), (2, 6))], 0))
        assert_same(c[i], erase_ref(xs[i], [((1, 4), (2, 6))], 0))
        ref = xs[i].copy()
        ref[1:4, 2:6, 1:2] = 6  # the erased channel takes its own fill value
        assert_same(d[i], ref)


def test_erase_sequences_and_float_data():
    def make():
        x = array((3, 6, 7, 2), "FHWC", dtype=types.FLOAT)
        return x, fn.erase(x, anchor=(1, 2, 3), shape=(1, 3, 2), fill_value=-1)

    xs, out = run(make, batch_size=2)
    for i in range(2):
        ref = xs[i].copy()
        ref[1:2, 2:5, 3:5] = -1
        assert_same(out[i], ref)


def test_erase_errors():
    x = lambda: array((6, 8, 3), "HWC")
    with pytest.raises(ValueError, match=r"argument 'anchor' has 1 values but 'shape' has 2"):
        run(lambda: fn.erase(x(), anchor=(1,), shape=(2, 2), axis_names="HW"))
    with pytest.raises(ValueError, match=r"argument 'shape' has 3 values for sample 0, not a multiple of the 2 erased axes \(HW\)"):
        run(lambda: fn.erase(x(), shape=(2, 2, 2), axis_names="HW"))
    with pytest.raises(ValueError, match=r"argument 'fill_value' must have one value or one per channel \(3\), got 2"):
        run(lambda: fn.erase(x(), shape=(2, 2), fill_value=(1, 2)))
    with pytest.raises(ValueError, match=r"argument 'normalized' cannot be combined with 'normalized_anchor'"):
        run(lambda: fn.erase(x(), shape=(2, 2), normalized=True, normalized_anchor=True))
    with pytest.raises(ValueError, match=r"argument 'shape' must not be negative"):
        run(lambda: fn.erase(x(), shape=(2, -2)))


# ---------------------------------------------------------------- paste

def paste_ref(x, ratio, px, py, fill, min_canvas=0):
    H, W, C = x.shape
    nh = max(int(np.float32(ratio) * np.float32(H)), int(min_canvas))
    nw = max(int(np.float32(ratio) * np.float32(W)), int(min_canvas))
    y0 = int(np.float32(py) * np.float32(nh - H))
    x0 = int(np.float32(px) * np.float32(nw - W))
    out = np.empty((nh, nw, C), x.dtype)
    out[...] = np.array(fill).astype(x.dtype)
    out[y0:y0 + H, x0:x0 + W] = x
    return out


def test_paste_decoded_images_with_per_sample_ratio_and_position(files):
    def make():
        imgs = fn.crop(decoded(files[:3]), crop=(120, 150))
        ratio = fn.random.uniform(range=(1, 3))
        px, py = fn.random.uniform(range=(0, 1)), fn.random.uniform(range=(0, 1))
        return imgs, ratio, px, py, fn.paste(imgs, ratio=ratio, paste_x=px, paste_y=py, fill_value=(10, 20, 30))

    imgs, ratios, pxs, pys, out = run(make)
    for i in range(3):
        assert_same(out[i], paste_ref(imgs[i], ratios[i], pxs[i], pys[i], (10, 20, 30)))


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 9, 1), (5, 4, 4)])
def test_paste_odd_shapes_and_min_canvas(shape):
    C = shape[2]

    def make():
        x = array(shape, "HWC")
        return x, fn.paste(x, ratio=1.5, n_channels=C, fill_value=[7] * C, min_canvas_size=6, paste_x=1, paste_y=0)

    xs, out = run(make, batch_size=2)
    for i in range(2):
        assert_same(out[i], paste_ref(xs[i], 1.5, 1.0, 0.0, [7] * C, 6))


def test_paste_errors():
    x = lambda: array((6, 8, 3), "HWC")
    with pytest.raises(ValueError, match=r"argument 'ratio' must be >= 1, got 0.5"):
        run(lambda: fn.paste(x(), ratio=0.5, fill_value=(0, 0, 0)))
    with pytest.raises(ValueError, match=r"argument 'ratio' must be >= 1 \(the canvas is never smaller than the image\), got 0.5.* for sample 0"):
        run(lambda: fn.paste(x(), ratio=fn.random.uniform(range=(0.5, 0.5)), fill_value=(0, 0, 0)))
    with pytest.raises(ValueError, match=r"argument 'n_channels' is 3, but sample 0 has 4 channels"):
        run(lambda: fn.paste(array((6, 8, 4), "HWC"), ratio=2, fill_value=(0, 0, 0)))
    with pytest.raises(ValueError, match=r"argument 'fill_value' must have n_channels \(3\) values, got 2"):
        run(lambda: fn.paste(x(), ratio=2, fill_value=(0, 0)))
    with pytest.raises(ValueError, match=r"argument 'paste_x' must be in \[0, 1\], got 2.* for sample 0"):
        run(lambda: fn.paste(x(), ratio=2, fill_value=(0, 0, 0), paste_x=fn.random.uniform(range=(2, 2))))
    with pytest.raises(ValueError, match=r"expects images with H, W and C axes"):
        run(lambda: fn.paste(fn.random.uniform(shape=(3, 3, 3)), ratio=2, fill_value=(0, 0, 0)))
