"""resize, warp_affine and rotate on volumes (DHWC, FDHWC; resize also CDHW, FCDHW, CFDHW):
against DALI 2.4 on the CPU (volumes stacked from ImageNet photos, and random ones), against
SciPy (ndimage.zoom, ndimage.affine_transform) and against a NumPy separable resampler."""
import math

import numpy as np
import pytest
import scipy.ndimage
from PIL import Image

from _dali_ref import imagenet_images, real_dali, run, stoker_lib
from stoker import fn, pipeline_def, types


@pytest.fixture(scope="module")
def photo_volumes():
    """Two volumes of ImageNet photos, each slice a photo resized: 16 x 40 x 48 RGB and
    12 x 33 x 29 gray."""
    photos = imagenet_images(28)
    a = np.stack([np.asarray(Image.fromarray(p).resize((48, 40), Image.BILINEAR)) for p in photos[:16]])
    b = np.stack([np.asarray(Image.fromarray(p).convert("L").resize((29, 33), Image.BILINEAR))
                  for p in photos[16:28]])[..., None]
    return [a, b]


@pytest.fixture(scope="module")
def random_volumes():
    rng = np.random.default_rng(5)
    return [rng.integers(0, 256, (9, 13, 11, 3), dtype=np.uint8),
            rng.integers(0, 256, (5, 7, 16, 1), dtype=np.uint8)]


def run_op(lib, op, vols, layout="DHWC", **kw):
    return run(lib, lambda fn_, types_, x: getattr(fn_, op)(x, **kw), [vols], [layout])[0]


def dali_kw(kw, dtypes):
    """The same arguments for DALI: stoker's enum values become DALI's."""
    out = dict(kw)
    for k in ("interp_type", "min_filter", "mag_filter"):
        if k in out:
            out[k] = getattr(dtypes, types.DALIInterpType(out[k]).name)
    if "dtype" in out:
        out["dtype"] = getattr(dtypes, types.DALIDataType(out["dtype"]).name)
    return out


def assert_close(ours, ref, tol=1):
    """Within `tol`; tol=0 (nearest neighbour) allows a few voxels in 10^5 to differ: the maps
    are in double here and in float in DALI, so a point within rounding of a voxel boundary may
    fall on the other side."""
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        if tol == 0:
            assert np.count_nonzero(d) <= 1e-4 * d.size
        else:
            assert d.max() <= tol


def vs_dali(op, vols, layout="DHWC", tol=1, **kw):
    dfn, dtypes, _ = real_dali()
    ours, our_layout, our_dtype = run_op(stoker_lib(), op, vols, layout, **kw)
    ref, ref_layout, ref_dtype = run_op((dfn, dtypes, real_dali()[2]), op, vols, layout,
                                        **dali_kw(kw, dtypes))
    assert (our_layout, our_dtype) == (ref_layout, ref_dtype)
    assert_close(ours, ref, tol)
    return ours


# ---------------------------------------------------------------------------------------------
# resize

# Filters and sizes where stoker's 2-D resize equals DALI's (within 1): its depth pass is the
# same code, so the volumes must too.
RESIZE_VS_DALI = [
    dict(size=[8, 20, 24]),
    dict(size=[23, 50, 61]),
    dict(resize_x=17, resize_y=31, resize_z=6),
    dict(resize_z=7),
    dict(size=[6, 0, 0], mode="not_smaller"),
    dict(size=[20, 20, 20], mode="not_larger"),
    dict(size=[10, 10, 10], mode="stretch"),
    dict(size=[12, 30, 30], max_size=[9, 100, 100]),
    dict(size=[6, 9, 11], roi_start=[1.5, 2, 0.5], roi_end=[9.5, 31, 20]),
    dict(size=[6, 9, 11], roi_start=[0.9, 0.1, 0.2], roi_end=[0.1, 0.8, 1.0], roi_relative=True),
    dict(size=[7.3, 15.6, 19.5]),
    dict(size=[5, 14, 13], antialias=False),
]


@pytest.mark.parametrize("interp", ["INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
                                    "INTERP_TRIANGULAR"])
@pytest.mark.parametrize("kw", RESIZE_VS_DALI)
def test_resize_volumes_match_dali(photo_volumes, interp, kw):
    if interp == "INTERP_TRIANGULAR" and kw.get("antialias") is False:
        pytest.skip("2-D differs from DALI there too (see test_resize_filters_match_numpy)")
    vs_dali("resize", photo_volumes, interp_type=getattr(types, interp), **kw)


@pytest.mark.parametrize("kw", [dict(size=[8, 20, 24]), dict(size=[4, 11, 8]),
                                dict(resize_x=24, resize_y=10, resize_z=8)])
def test_resize_nearest_shrinking_matches_dali(photo_volumes, kw):
    vs_dali("resize", photo_volumes, tol=0, interp_type=types.INTERP_NN, **kw)


@pytest.mark.parametrize("interp", ["INTERP_LINEAR", "INTERP_CUBIC", "INTERP_NN"])
def test_resize_random_volumes_and_dtypes_match_dali(random_volumes, interp):
    it = getattr(types, interp)
    vs_dali("resize", random_volumes, interp_type=it, size=[4, 20, 6])
    vs_dali("resize", [v.astype(np.float32) / 7 for v in random_volumes], tol=0.15,
            interp_type=it, size=[3, 6, 9])
    vs_dali("resize", [v.astype(np.int16) * 3 - 300 for v in random_volumes], tol=1,
            interp_type=it, size=[4, 6, 5])
    vs_dali("resize", random_volumes, tol=0.15, interp_type=it, size=[4, 6, 5], dtype=types.FLOAT)


@pytest.mark.parametrize("layout", ["CDHW", "FDHWC", "FCDHW", "CFDHW"])
def test_resize_volume_layouts(random_volumes, layout):
    """Channel-first volumes and sequences of volumes: the DHWC result, rearranged; and DALI's."""
    v = random_volumes[0]
    seq = np.stack([v, 255 - v])  # F D H W C
    data = {"CDHW": v.transpose(3, 0, 1, 2), "FDHWC": seq, "FCDHW": seq.transpose(0, 4, 1, 2, 3),
            "CFDHW": seq.transpose(4, 0, 1, 2, 3)}[layout]
    data = np.ascontiguousarray(data)
    out = vs_dali("resize", [data], layout, size=[5, 17, 8])[0]
    frames = run_op(stoker_lib(), "resize", [v, 255 - v], size=[5, 17, 8])[0]
    expect = {"CDHW": frames[0].transpose(3, 0, 1, 2), "FDHWC": np.stack(frames),
              "FCDHW": np.stack(frames).transpose(0, 4, 1, 2, 3),
              "CFDHW": np.stack(frames).transpose(4, 0, 1, 2, 3)}[layout]
    np.testing.assert_array_equal(out, expect)


def test_resize_with_depth_kept_is_the_2d_resize_of_each_slice(photo_volumes):
    for interp in (types.INTERP_LINEAR, types.INTERP_CUBIC, types.INTERP_LANCZOS3, types.INTERP_NN):
        vol = run_op(stoker_lib(), "resize", photo_volumes[:1], interp_type=interp,
                     size=[16, 23, 61])[0][0]
        slices = run_op(stoker_lib(), "resize", list(photo_volumes[0]), "HWC", interp_type=interp,
                        size=[23, 61])[0]
        np.testing.assert_array_equal(vol, np.stack(slices))


def np_weights(n_in, n_out, r0, r1, interp, antialias=True):
    """The (n_out, n_in) weight matrix of one axis: DALI's filters, pixel centres at +0.5, taps
    outside the input read the edge pixel."""
    scale = (r1 - r0) / n_out
    centres = r0 + (np.arange(n_out) + 0.5) * scale
    W = np.zeros((n_out, n_in))
    if interp == "nn":
        W[np.arange(n_out), np.clip(np.floor(centres).astype(int), 0, n_in - 1)] = 1
        return W
    radius, f = {
        "linear": (1, lambda x: np.maximum(0, 1 - np.abs(x))),
        "triangular": (1, lambda x: np.maximum(0, 1 - np.abs(x))),
        "cubic": (2, lambda x: np.where(np.abs(x) < 1, 1.5 * np.abs(x) ** 3 - 2.5 * x ** 2 + 1,
                                        np.where(np.abs(x) < 2, -0.5 * np.abs(x) ** 3 + 2.5 * x ** 2
                                                 - 4 * np.abs(x) + 2, 0))),
        "lanczos3": (3, lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)),
        "gaussian": (1, lambda x: np.where(np.abs(x) < 1, np.exp(-4 * x * x), 0)),
    }[interp]
    widen = interp in ("gaussian", "triangular") or antialias
    fs = max(abs(scale), 1) if widen else 1
    for o, c in enumerate(centres):
        js = np.arange(math.floor(c - radius * fs - 0.5), math.ceil(c + radius * fs - 0.5) + 1)
        w = f((js + 0.5 - c) / fs)
        np.add.at(W[o], np.clip(js, 0, n_in - 1), w / w.sum())
    return W


def np_resize(vol, out_dhw, roi=None, interp="linear", antialias=True):
    v = vol.astype(np.float64)
    for axis, n_out in enumerate(out_dhw):
        n_in = vol.shape[axis]
        r0, r1 = roi[axis] if roi else (0, n_in)
        W = np_weights(n_in, n_out, r0, r1, interp, antialias)
        v = np.moveaxis(np.tensordot(W, np.moveaxis(v, axis, 0), axes=1), 0, axis)
    return np.clip(np.floor(v + 0.5), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("interp", ["linear", "cubic", "lanczos3", "triangular", "gaussian", "nn"])
@pytest.mark.parametrize("out_dhw, antialias", [((7, 19, 22), True), ((27, 61, 50), True),
                                                ((5, 14, 13), False), ((16, 11, 96), True)])
def test_resize_filters_match_numpy(photo_volumes, interp, out_dhw, antialias):
    """Every filter, shrinking and enlarging, against a separable float64 resampler."""
    it = getattr(types, "INTERP_" + interp.upper())
    ours = run_op(stoker_lib(), "resize", photo_volumes[:1], interp_type=it, size=list(out_dhw),
                  antialias=antialias)[0][0]
    ref = np_resize(photo_volumes[0], out_dhw, interp=interp, antialias=antialias)
    assert np.abs(ours.astype(int) - ref).max() <= 1


def test_resize_window_and_flip_match_numpy(photo_volumes):
    roi = [(12.5, 2.0), (3, 37.5), (40.25, 4)]  # depth and width flipped
    ours = run_op(stoker_lib(), "resize", photo_volumes[:1], size=[9, 17, 20], subpixel_scale=False,
                  roi_start=[r[0] for r in roi], roi_end=[r[1] for r in roi])[0][0]
    ref = np_resize(photo_volumes[0], (9, 17, 20), roi=roi)
    assert np.abs(ours.astype(int) - ref).max() <= 1


def test_resize_enlarging_linear_matches_scipy_zoom(photo_volumes):
    """Enlarging needs no antialiasing: linear is SciPy's order-1 zoom on the pixel-centre grid."""
    vol = photo_volumes[1][..., 0]
    out_dhw = (29, 47, 61)
    ours = run_op(stoker_lib(), "resize", photo_volumes[1:], size=list(out_dhw))[0][0][..., 0]
    ref = scipy.ndimage.zoom(vol.astype(np.float64), np.array(out_dhw) / vol.shape, order=1,
                             mode="nearest", grid_mode=True)
    assert np.abs(ours - np.floor(ref + 0.5)).max() <= 1


# ---------------------------------------------------------------------------------------------
# warp_affine

M3 = [0.93, 0.13, 0.057, 1.57, -0.11, 1.17, 0.23, -2.03, 0.053, -0.157, 0.953, 1.07]


def scipy_warp(vol, m, out_dhw, order, fill=None):
    """DALI's output-to-input map over (x, y, z) voxel centres, through scipy's index map."""
    A = np.asarray(m, np.float64).reshape(3, 4)
    P = np.eye(3)[::-1]  # (x, y, z) <-> (z, y, x)
    L = P @ A[:, :3] @ P
    t = P @ A[:, 3]
    offset = L @ np.full(3, 0.5) + t - 0.5  # centres at +0.5 on both sides
    kw = dict(mode="nearest") if fill is None else dict(mode="grid-constant", cval=fill)
    out = np.stack([scipy.ndimage.affine_transform(vol[..., c].astype(np.float64), L, offset,
                                                   output_shape=out_dhw, order=order, **kw)
                    for c in range(vol.shape[-1])], -1)
    return np.clip(np.rint(out), 0, 255)


@pytest.mark.parametrize("interp", ["INTERP_NN", "INTERP_LINEAR"])
@pytest.mark.parametrize("extra", [{}, dict(fill_value=7), dict(size=[7, 9, 12]),
                                   dict(size=[20, 41, 50], fill_value=0)])
def test_warp_affine_volumes(photo_volumes, random_volumes, interp, extra):
    it = getattr(types, interp)
    vols = photo_volumes + random_volumes
    ours = vs_dali("warp_affine", vols, tol=0 if interp == "INTERP_NN" else 1, matrix=M3,
                   interp_type=it, **extra)
    for v, o in zip(vols, ours):
        ref = scipy_warp(v, M3, o.shape[:3], 0 if interp == "INTERP_NN" else 1,
                         extra.get("fill_value"))
        assert np.abs(o - ref).max() <= 1


def test_warp_affine_volume_forward_map_and_matrix_input(random_volumes):
    """inverse_map=False inverts the 3x4 matrix; a per-sample matrix input does the same."""
    fwd = np.array(M3).reshape(3, 4)
    inv = np.linalg.inv(np.vstack([fwd, [0, 0, 0, 1]]))[:3].ravel().tolist()
    vs_dali("warp_affine", random_volumes, matrix=M3, inverse_map=False, fill_value=0)
    a = run_op(stoker_lib(), "warp_affine", random_volumes, matrix=M3, inverse_map=False)[0]
    b = run_op(stoker_lib(), "warp_affine", random_volumes, matrix=inv)[0]
    assert_close(a, b, 1)
    mats = [np.array(M3, np.float32).reshape(3, 4)] * 2
    c = run(stoker_lib(), lambda fn_, t_, x, m: fn_.warp_affine(x, m), [random_volumes, mats],
            ["DHWC", None])[0][0]
    d = run_op(stoker_lib(), "warp_affine", random_volumes, matrix=M3)[0]
    assert_close(c, d, 0)


def test_warp_affine_sequences_of_volumes(random_volumes):
    v = random_volumes[0]
    seq = np.stack([v, v[::-1], 255 - v])
    out = vs_dali("warp_affine", [seq], "FDHWC", tol=1, matrix=M3, size=[6, 10, 8])[0]
    frames = run_op(stoker_lib(), "warp_affine", list(seq), matrix=M3, size=[6, 10, 8])[0]
    np.testing.assert_array_equal(out, np.stack(frames))


def test_warp_affine_volume_float_and_empty_fill(random_volumes):
    vols = [v.astype(np.float32) * 0.37 for v in random_volumes]
    vs_dali("warp_affine", vols, tol=1e-3, matrix=M3, fill_value=-1.5)
    # Nothing of the source reaches the output: all fill.
    out = run_op(stoker_lib(), "warp_affine", random_volumes,
                 matrix=[1, 0, 0, 1000, 0, 1, 0, 0, 0, 0, 1, 0], fill_value=42)[0]
    assert all((o == 42).all() for o in out)


# ---------------------------------------------------------------------------------------------
# rotate

def rodrigues(axis, rad):
    u = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + math.sin(rad) * K + (1 - math.cos(rad)) * (K @ K)


def dali_rotated_size_3d(dhw, axis, angle):
    """DALI's canvas rule for volumes, written out: |R| times the (w, h, d) extents, less 0.01,
    rounded up, each side given the parity of the input side that contributes most to it."""
    R = np.abs(rodrigues(axis, math.radians(angle)))
    size = np.array(dhw[::-1], np.float64)
    out = np.ceil(R @ size - 0.01).astype(int)
    for i in range(3):
        j = i
        for k in range(3):
            if R[i, k] > R[i, j]:
                j = k
        out[i] += out[i] % 2 != size[j] % 2
    return tuple(out[::-1])


AXES = [[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 1], [1, 2, 3], [0, 0, -1]]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("angle", [17, 37, 100, -71, 200])
def test_rotate_volumes_match_dali(photo_volumes, random_volumes, axis, angle):
    vols = photo_volumes + random_volumes
    for interp in ("INTERP_NN", "INTERP_LINEAR"):
        out = vs_dali("rotate", vols, tol=0 if interp == "INTERP_NN" else 1, angle=angle,
                      axis=axis, interp_type=getattr(types, interp), fill_value=0)
        for v, o in zip(vols, out):
            assert o.shape[:3] == dali_rotated_size_3d(v.shape[:3], axis, angle)


@pytest.mark.parametrize("axis, angle", [([1, 2, 3], 37), ([0, 1, 0], -71), ([0, 0, 1], 100)])
def test_rotate_volume_matches_scipy(photo_volumes, axis, angle):
    """The rotation as a map: src = in/2 + R(axis, -angle) (dst - out/2), through SciPy."""
    v = photo_volumes[1]
    out = run_op(stoker_lib(), "rotate", [v], angle=angle, axis=axis, fill_value=0)[0][0]
    R = rodrigues(axis, -math.radians(angle))
    ci, co = np.array(v.shape[:3][::-1]) / 2, np.array(out.shape[:3][::-1]) / 2
    m = np.hstack([R, (ci - R @ co)[:, None]]).ravel()
    ref = scipy_warp(v, m, out.shape[:3], 1, fill=0)
    assert np.abs(out - ref).max() <= 1


def test_rotate_volume_size_keep_size_and_sequences(random_volumes):
    v = random_volumes[0]
    vs_dali("rotate", random_volumes, angle=33, axis=[1, 2, 3], keep_size=True)
    vs_dali("rotate", random_volumes, angle=33, axis=[1, 2, 3], size=[10, 11, 12], fill_value=3)
    seq = np.stack([v, 255 - v])
    out = vs_dali("rotate", [seq], "FDHWC", angle=41, axis=[0, 1, 1])[0]
    frames = run_op(stoker_lib(), "rotate", list(seq), angle=41, axis=[0, 1, 1])[0]
    np.testing.assert_array_equal(out, np.stack(frames))


def test_rotate_per_sample_axis_and_angle(random_volumes):
    axes = [np.array([0, 0, 1], np.float32), np.array([1, 1, 0], np.float32)]
    angles = [np.array(30, np.float32), np.array(-50, np.float32)]

    def build(fn_, t_, x, ax, an):
        return fn_.rotate(x, angle=an, axis=ax)
    ours = run(stoker_lib(), build, [random_volumes, axes, angles], ["DHWC", None, None])[0][0]
    for v, o, ax, an in zip(random_volumes, ours, axes, angles):
        one = run_op(stoker_lib(), "rotate", [v], angle=float(an), axis=ax.tolist())[0][0]
        np.testing.assert_array_equal(o, one)


# ---------------------------------------------------------------------------------------------
# errors

def error_of(make, data, layout="DHWC"):
    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():
        return make(fn.external_source(source=lambda: data, layout=layout, batch=True))

    with pytest.raises(ValueError) as e:
        pipe().run()
    return str(e.value)


VOL = [np.zeros((4, 5, 6, 3), np.uint8)]
IMG = [np.zeros((5, 6, 3), np.uint8)]
ID12 = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]


@pytest.mark.parametrize("make, data, layout, msg", [
    (lambda x: fn.warp_affine(x, matrix=[1, 0, 0, 0, 1, 0]), VOL, "DHWC",
     "argument 'matrix' takes 12 values for volumes (DHWC, FDHWC), a 3x4 matrix [M11, M12, M13, "
     "M14, M21, ..., M34] in (x, y, z) = (width, height, depth) order, got 6."),
    (lambda x: fn.warp_affine(x, matrix=ID12), IMG, "HWC",
     "argument 'matrix' takes 6 values, a 2x3 matrix [M11, M12, M13, M21, M22, M23], for images "
     "(HWC, FHWC); 12 values are a 3x4 matrix for volumes (DHWC), got 12."),
    (lambda x: fn.warp_affine(x, matrix=[1, 0, 0, 0, 1, 0, 0, 0, 1]), VOL, "DHWC",
     "argument 'matrix' takes 6 values, a 2x3 matrix [M11, M12, M13, M21, M22, M23], got 9."),
    (lambda x: fn.warp_affine(x, matrix=ID12, size=[4, 5]), VOL, "DHWC",
     "argument 'size' takes 3 values (depth, height, width) for volumes (DHWC, FDHWC) for sample "
     "0, got 2."),
    (lambda x: fn.warp_affine(x, matrix=[1, 0, 0, 0, 1, 0], size=[3, 4, 5]), IMG, "HWC",
     "argument 'size' takes 0 to 2 values, got 3 for sample 0: images (HWC, FHWC) take (height, "
     "width); (depth, height, width) is for volumes (DHWC, FDHWC)."),
    (lambda x: fn.warp_affine(x, matrix=ID12, interp_type=types.INTERP_CUBIC), VOL, "DHWC",
     "argument 'interp_type' must be INTERP_NN or INTERP_LINEAR for volumes (DHWC, FDHWC), as "
     "DALI's 3-D warps, got 2."),
    (lambda x: fn.warp_affine(x, matrix=[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0], inverse_map=False),
     VOL, "DHWC", "argument 'matrix' is singular; with inverse_map=False it maps input to output "
                  "and must be invertible."),
    (lambda x: fn.warp_affine(x, matrix=ID12), [np.zeros((3, 4, 5, 6), np.uint8)], "CDHW",
     "input 0 must be volumes with layout DHWC or sequences of volumes with layout FDHWC (channels "
     "last), got layout 'CDHW' with 4 dimensions. Transpose channel-first volumes (CDHW) to DHWC "
     "first."),
    (lambda x: fn.rotate(x, angle=10), VOL, "DHWC",
     "argument 'axis' is required for volumes (DHWC, FDHWC): give the rotation axis as 3 values "
     "(x, y, z), e.g. axis=[0, 0, 1] to turn each slice in its plane."),
    (lambda x: fn.rotate(x, angle=10, axis=[0, 1]), VOL, "DHWC",
     "argument 'axis' takes 3 values (x, y, z), got 2; e.g. axis=[0, 0, 1] turns each slice of a "
     "volume in its plane."),
    (lambda x: fn.rotate(x, angle=10, axis=[0, 0, 0]), VOL, "DHWC",
     "argument 'axis' must be a finite, non-zero vector, got (0, 0, 0)."),
    (lambda x: fn.rotate(x, angle=10, axis=[0, 0, 1], size=[4, 5]), VOL, "DHWC",
     "argument 'size' takes 3 values (depth, height, width) for volumes (DHWC, FDHWC) for sample "
     "0, got 2."),
    (lambda x: fn.rotate(x, angle=10, axis=[0, 0, 1], interp_type=types.INTERP_GAUSSIAN), VOL,
     "DHWC", "argument 'interp_type' must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC for this "
             "operator, got 5."),
    (lambda x: fn.resize(x, size=[4, 5]), VOL, "DHWC",
     "sample 0: size: expected one value for all 3 spatial axes or one per axis (3 values, D, H, "
     "W order); got 2 values [4, 5]"),
    (lambda x: fn.resize(x, size=[3, 4, 5], roi_start=[0, 0], roi_end=[3, 3]), VOL, "DHWC",
     "roi_start: expected one value for all 3 spatial axes or one per axis (3 values, D, H, W "
     "order); got 2 values [0, 0]"),
    (lambda x: fn.resize(x, resize_z=3, resize_x=4), IMG, "HWC",
     "sample 0: resize_z: only applies to volumes (3 spatial axes, e.g. DHWC); this input has 2; "
     "use resize_x and resize_y"),
    (lambda x: fn.resize(x, size=[3, 4, 5]), IMG, "HWC",
     "sample 0: size: expected one value for all 2 spatial axes or one per axis (2 values, H, W "
     "order); got 3 values [3, 4, 5]"),
    (lambda x: fn.resize(x, size=[3, 4, 5]), [np.zeros((4, 5, 6), np.uint8)], "DHW",
     "argument 'input' must be images (HWC or CHW), sequences of images (FHWC, FCHW or CFHW), "
     "volumes (DHWC or CDHW) or sequences of volumes (FDHWC, FCDHW or CFDHW), got layout 'DHW' "
     "with 3 dimensions."),
    (lambda x: fn.resize(x, resize_x=3, size=[2, 3, 4]), VOL, "DHWC",
     "resize: give the output size in exactly one way: resize_x/resize_y/resize_z, size, "
     "resize_shorter or resize_longer; got resize_x, size"),
])
def test_volume_errors(make, data, layout, msg):
    text = error_of(make, data, layout)
    assert text.endswith(msg), text


def test_matrix_input_of_the_wrong_size_for_volumes():
    text = error_of(lambda x: fn.warp_affine(x, fn.random.uniform(shape=(2, 3))), VOL)
    assert text.endswith("input 1 (mtx) must hold a 3x4 matrix per sample for volumes (DHWC, "
                         "FDHWC), got shape (2, 3) for sample 0."), text
