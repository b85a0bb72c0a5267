"""fn.transforms.translation, scale, rotation, shear, crop, combine and fn.coord_transform
against NumPy-built matrices and against DALI 2.4 on the same arguments: 2-D and 3-D, centers,
composition with an input matrix and reverse_order, per-sample arguments, combine of 3 matrices;
coord_transform on COCO boxes (as corner points) and random points, float and integer outputs;
every error message in full."""
import numpy as np
import pytest

from _dali_ref import error_checker, real_dali, run, stoker_lib

f32 = np.float32
check_error = error_checker(__file__)


# ---------------------------------------------------------------- NumPy references (double)

def hom(rows):
    """(n, n+1) rows -> (n+1, n+1) homogeneous matrix."""
    rows = np.asarray(rows, np.float64)
    n = rows.shape[0]
    return np.vstack([rows, np.eye(n + 1)[n:]])


def about(m, center):
    if center is None:
        return m
    n = m.shape[0] - 1
    t, ti = np.eye(n + 1), np.eye(n + 1)
    t[:n, n], ti[:n, n] = center, -np.asarray(center, np.float64)
    return t @ m @ ti


def translation_ref(offset):
    n = len(offset)
    m = np.eye(n + 1)
    m[:n, n] = offset
    return m


def scale_ref(scale, center=None):
    return about(np.diag(list(scale) + [1.0]), center)


def rotation_ref(angle, axis=None, center=None):
    t = np.deg2rad(angle)
    c, s = np.cos(t), np.sin(t)
    if axis is None:
        m = np.eye(3)
        m[:2, :2] = [[c, -s], [s, c]]
    else:
        k = np.asarray(axis, np.float64) / np.linalg.norm(axis)
        kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        m = np.eye(4)
        m[:3, :3] = c * np.eye(3) + s * kx + (1 - c) * np.outer(k, k)
    return about(m, center)


def shear_ref(shear, center=None):
    n = 2 if len(shear) == 2 else 3
    m = np.eye(n + 1)
    it = iter(shear)
    for i in range(n):
        for j in range(n):
            if i != j:
                m[i, j] = next(it)
    return about(m, center)


def crop_ref(fs, fe, ts, te, absolute=False):
    fs, fe, ts, te = (np.asarray(v, np.float64) for v in (fs, fe, ts, te))
    if absolute:
        fs, fe = np.minimum(fs, fe), np.maximum(fs, fe)
        ts, te = np.minimum(ts, te), np.maximum(ts, te)
    s = (te - ts) / (fe - fs)
    m = np.diag(list(s) + [1.0])
    m[:-1, -1] = ts - s * fs
    return m


def rows(m):
    return m[:-1].astype(f32)


# ---------------------------------------------------------------- helpers

def run_both(build, datas=(), batch_size=None):
    """stoker's outputs (per output, the samples) and DALI's (None where DALI is absent)."""
    datas = list(datas)
    kw = {"batch_size": batch_size} if batch_size else {}
    mine = [o[0] for o in run(stoker_lib(), build, datas, **kw)]
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return mine, None
    return mine, [o[0] for o in run(lib, build, datas, **kw)]


def check_mats(build, want, datas=(), batch_size=None):
    """The matrices (one output) equal the NumPy ones within a float32 rounding, and DALI's."""
    mine, ref = run_both(build, datas, batch_size)
    assert len(mine[0]) == len(want)
    for got, w in zip(mine[0], want):
        assert got.dtype == f32 and got.shape == w.shape
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-6)
    if ref is not None:
        for got, r in zip(mine[0], ref[0]):
            assert r.dtype == got.dtype and r.shape == got.shape
            np.testing.assert_allclose(got, r, rtol=1e-6, atol=1e-6)
    return mine[0]


def stoker_error(build, datas=(), batch_size=1, exc=ValueError):
    with pytest.raises(exc) as e:
        run(stoker_lib(), build, list(datas), batch_size=batch_size)
    return e


# ---------------------------------------------------------------- transforms.*

@pytest.mark.parametrize("offset", [[1.5, -2], [1, 2, 3], [7]])
def test_translation(offset):
    check_mats(lambda fn, t: fn.transforms.translation(offset=offset),
               [rows(translation_ref(offset))] * 2, batch_size=2)


@pytest.mark.parametrize("kw,want", [
    ({"scale": [2, 3]}, scale_ref([2, 3])),
    ({"scale": [2, 3], "center": [1, 1]}, scale_ref([2, 3], [1, 1])),
    ({"scale": [0.5, 2, -1], "center": [10, 20, 30]}, scale_ref([0.5, 2, -1], [10, 20, 30])),
    ({"scale": [2], "ndim": 3}, scale_ref([2, 2, 2])),
    ({"scale": [2]}, scale_ref([2])),
])
def test_scale(kw, want):
    check_mats(lambda fn, t: fn.transforms.scale(**kw), [rows(want)], batch_size=1)


@pytest.mark.parametrize("kw,want", [
    ({"angle": 30}, rotation_ref(30)),
    ({"angle": 30, "center": [1, 2]}, rotation_ref(30, center=[1, 2])),
    ({"angle": -135.5, "center": [100, 50]}, rotation_ref(-135.5, center=[100, 50])),
    ({"angle": 30, "axis": [1, 1, 0], "center": [1, 2, 3]},
     rotation_ref(30, [1, 1, 0], [1, 2, 3])),
    ({"angle": 60, "axis": [0.2, -1, 3]}, rotation_ref(60, [0.2, -1, 3])),
    ({"angle": 30, "axis": [0, 0, 1]}, rotation_ref(30, [0, 0, 1])),
])
def test_rotation(kw, want):
    check_mats(lambda fn, t: fn.transforms.rotation(**kw), [rows(want)], batch_size=1)


@pytest.mark.parametrize("kw,want", [
    ({"shear": [0.5, 0.2], "center": [1, 2]}, shear_ref([0.5, 0.2], [1, 2])),
    ({"shear": [1, 2, 3, 4, 5, 6]}, shear_ref([1, 2, 3, 4, 5, 6])),
    ({"angles": [10, 20]}, shear_ref(np.tan(np.deg2rad([10, 20])))),
    ({"angles": [10, -20, 30, 5, 0, 45], "center": [1, 2, 3]},
     shear_ref(np.tan(np.deg2rad([10, -20, 30, 5, 0, 45])), [1, 2, 3])),
])
def test_shear(kw, want):
    check_mats(lambda fn, t: fn.transforms.shear(**kw), [rows(want)], batch_size=1)


@pytest.mark.parametrize("kw", [
    {"from_start": [0, 1], "from_end": [2, 3], "to_start": [1, 1], "to_end": [5, 2]},
    {"from_start": [3, 1], "from_end": [0, 3], "to_start": [1, 1], "to_end": [5, 2],
     "absolute": True},
    {"from_start": [3, 1], "from_end": [0, 3], "to_start": [1, 1], "to_end": [5, 2]},
    {"to_end": [2, 3, 4]},
    {"from_start": [0.1], "from_end": [0.9], "to_start": [10, 20, 30], "to_end": [100, 200, 300]},
    {},
])
def test_crop(kw):
    fs, fe = kw.get("from_start", [0]), kw.get("from_end", [1])
    ts, te = kw.get("to_start", [0]), kw.get("to_end", [1])
    n = max(len(fs), len(fe), len(ts), len(te))
    fs, fe, ts, te = (v * n if len(v) == 1 else v for v in (fs, fe, ts, te))
    want = crop_ref(fs, fe, ts, te, kw.get("absolute", False))
    check_mats(lambda fn, t: fn.transforms.crop(**kw), [rows(want)], batch_size=1)


def test_crop_default_is_1d_identity():
    out = check_mats(lambda fn, t: fn.transforms.crop(), [np.array([[1, 0]], f32)], batch_size=1)
    assert out[0].shape == (1, 2)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("ndim", [2, 3])
def test_composition_with_input(reverse, ndim):
    off = [1, 2, 3][:ndim]
    sc, ctr = [2, 3, 4][:ndim], [0.5, -1, 2][:ndim]
    base = translation_ref(off)
    ops = [
        (lambda fn, x: fn.transforms.scale(x, scale=sc, center=ctr, reverse_order=reverse),
         scale_ref(sc, ctr)),
        (lambda fn, x: fn.transforms.translation(x, offset=sc, reverse_order=reverse),
         translation_ref(sc)),
        (lambda fn, x: fn.transforms.crop(x, to_start=ctr, to_end=sc, reverse_order=reverse),
         crop_ref([0] * ndim, [1] * ndim, ctr, sc)),
        (lambda fn, x: fn.transforms.shear(x, shear=[0.5, 0.25, 1, 2, 3, 4][:ndim * (ndim - 1)],
                                           reverse_order=reverse),
         shear_ref([0.5, 0.25, 1, 2, 3, 4][:ndim * (ndim - 1)])),
        (lambda fn, x: (fn.transforms.rotation(x, angle=40, center=ctr, reverse_order=reverse)
                        if ndim == 2 else
                        fn.transforms.rotation(x, angle=40, axis=[1, 2, 3], center=ctr,
                                               reverse_order=reverse)),
         rotation_ref(40, None if ndim == 2 else [1, 2, 3], ctr)),
    ]
    for make, new in ops:
        want = base @ new if reverse else new @ base
        check_mats(lambda fn, t: make(fn, fn.transforms.translation(offset=off)), [rows(want)],
                   batch_size=1)


def test_input_matrix_fed_and_float64():
    m = np.array([[1, 2, 3], [4, 5, 6]], f32)
    want = translation_ref([1, 2]) @ hom(m)
    check_mats(lambda fn, t, x: fn.transforms.translation(x, offset=[1, 2]), [rows(want)] * 2,
               datas=[[m, m]])
    # float64 matrices are read as they are (DALI refuses them: NumPy only).
    out = run(stoker_lib(), lambda fn, t, x: fn.transforms.translation(x, offset=[1, 2]),
              [[m.astype(np.float64)]])[0][0]
    np.testing.assert_array_equal(out[0], rows(want))


def test_per_sample_arguments():
    offs = [np.array([1, 2], f32), np.array([-3, 0.5], f32), np.array([0, 10], f32)]
    angles = [np.array(a, f32) for a in (0, 45, -90)]
    centers = [np.array(c, f32) for c in ([0, 0], [1, 1], [5, -5])]
    want = [rows(rotation_ref(float(a), center=c) @ translation_ref(o))
            for o, a, c in zip(offs, angles, centers)]
    check_mats(lambda fn, t, o, a, c: fn.transforms.rotation(fn.transforms.translation(offset=o),
                                                             angle=a, center=c),
               want, datas=[offs, angles, centers])
    scales = [np.array(s, f32) for s in ([1, 2, 3], [0.5, 0.5, 0.5], [-1, 1, 2])]
    check_mats(lambda fn, t, s: fn.transforms.scale(scale=s, center=[1, 2, 3]),
               [rows(scale_ref(s, [1, 2, 3])) for s in scales], datas=[scales])
    shears = [np.array(s, f32) for s in ([0.1, 0.2], [1, -1], [0, 3])]
    check_mats(lambda fn, t, s: fn.transforms.shear(shear=s),
               [rows(shear_ref(s)) for s in shears], datas=[shears])
    ends = [np.array(e, f32) for e in ([2, 3], [10, 10], [0.5, 4])]
    check_mats(lambda fn, t, e: fn.transforms.crop(to_end=e, from_start=[0.5, 0.25]),
               [rows(crop_ref([0.5, 0.25], [1, 1], [0, 0], e)) for e in ends], datas=[ends])
    axes = [np.array(a, f32) for a in ([0, 0, 1], [1, 0, 0], [1, 2, 2])]
    check_mats(lambda fn, t, a: fn.transforms.rotation(angle=33, axis=a),
               [rows(rotation_ref(33, a)) for a in axes], datas=[axes])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("ndim", [2, 3])
def test_combine_three(reverse, ndim):
    a, b = translation_ref([1, 2, 3][:ndim]), scale_ref([2, 3, 4][:ndim])
    c = rotation_ref(90) if ndim == 2 else rotation_ref(90, [0, 1, 1])
    want = a @ b @ c if reverse else c @ b @ a

    def build(fn, t):
        x = fn.transforms.translation(offset=[1, 2, 3][:ndim])
        y = fn.transforms.scale(scale=[2, 3, 4][:ndim])
        z = (fn.transforms.rotation(angle=90) if ndim == 2 else
             fn.transforms.rotation(angle=90, axis=[0, 1, 1]))
        return fn.transforms.combine(x, y, z, reverse_order=reverse)
    check_mats(build, [rows(want)] * 2, batch_size=2)


def test_combine_fed_per_sample():
    rng = np.random.default_rng(3)
    ms = [[rng.normal(size=(2, 3)).astype(f32) for _ in range(3)] for _ in range(3)]
    want = [rows(hom(m[1]) @ hom(m[0])) for m in zip(*ms)]
    check_mats(lambda fn, t, x, y, z: fn.transforms.combine(x, y), want, datas=ms)
    want = [rows(hom(m[2]) @ hom(m[1]) @ hom(m[0])) for m in zip(*ms)]
    check_mats(lambda fn, t, x, y, z: fn.transforms.combine(x, y, z), want, datas=ms)


# ---------------------------------------------------------------- coord_transform

def ct_ref(pts, mt):
    """M @ p + T in float32, coordinate by coordinate (DALI's order)."""
    pts = np.asarray(pts)
    mt = np.asarray(mt, f32)
    din = pts.shape[-1]
    p = pts.reshape(-1, din).astype(f32)
    out = np.zeros((p.shape[0], mt.shape[0]), f32)
    for r in range(mt.shape[0]):
        acc = np.zeros(p.shape[0], f32)
        for c in range(din):
            acc = acc + mt[r, c] * p[:, c]
        out[:, r] = acc + mt[r, din]
    return out.reshape(pts.shape[:-1] + (mt.shape[0],))


def round_sat(x, dtype):
    info = np.iinfo(dtype)
    r = np.where(x >= 0, np.floor(x + f32(0.5)), np.ceil(x - f32(0.5)))
    return np.clip(r, info.min, info.max).astype(dtype)


def check_points(build, datas, want, exact=False):
    mine, ref = run_both(build, datas)
    for got, w in zip(mine[0], want):
        assert got.dtype == w.dtype and got.shape == w.shape
        if exact:
            np.testing.assert_array_equal(got, w)
        else:
            np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-5)
    if ref is not None:
        for got, r in zip(mine[0], ref[0]):
            assert got.dtype == r.dtype and got.shape == r.shape
            np.testing.assert_allclose(got, r, rtol=1e-6, atol=1e-5)


def test_coord_transform_m_t():
    pts = [np.array([[1, 2], [3, 4]], f32), np.zeros((0, 2), f32),
           np.array([[-1.5, 7.25]], f32)]
    mt = np.array([[1, 2, 10], [3, 4, 20]], f32)
    check_points(lambda fn, t, x: fn.coord_transform(x, M=[1, 2, 3, 4], T=[10, 20]), [pts],
                 [ct_ref(p, mt) for p in pts])
    check_points(lambda fn, t, x: fn.coord_transform(x, MT=[1, 2, 10, 3, 4, 20]), [pts],
                 [ct_ref(p, mt) for p in pts])
    # Scalars: M times the identity, T for every coordinate; no M: the identity.
    check_points(lambda fn, t, x: fn.coord_transform(x, M=2, T=1), [pts],
                 [ct_ref(p, [[2, 0, 1], [0, 2, 1]]) for p in pts])
    check_points(lambda fn, t, x: fn.coord_transform(x, T=[1, 2]), [pts],
                 [ct_ref(p, [[1, 0, 1], [0, 1, 2]]) for p in pts])
    # A non-square M changes the number of coordinates.
    check_points(lambda fn, t, x: fn.coord_transform(x, M=[1, 2, 3, 4, 5, 6]), [pts],
                 [ct_ref(p, [[1, 2, 0], [3, 4, 0], [5, 6, 0]]) for p in pts])
    check_points(lambda fn, t, x: fn.coord_transform(x, M=[0.5, 0.5], T=-1), [pts],
                 [ct_ref(p, [[0.5, 0.5, -1]]) for p in pts])


def test_coord_transform_coco_boxes(testdata):
    """COCO boxes (ltrb, relative) as corner points, through a flip, rotation and scale built
    by transforms.* in the pipeline, against NumPy and DALI."""
    root = testdata / "coco"

    def make(lib):
        fn_, types_, pdef = lib

        @pdef(batch_size=8, num_threads=2, device_id=None, seed=5)
        def pipe():
            _, boxes, _ = fn_.readers.coco(file_root=str(root / "images"),
                                           annotations_file=str(root / "instances.json"),
                                           ltrb=True, ratio=True)
            pts = fn_.reshape(boxes, shape=[-1, 2])
            mt = fn_.transforms.rotation(fn_.transforms.scale(scale=[640, 480]), angle=30,
                                         center=[320, 240])
            mt = fn_.transforms.translation(mt, offset=[3, -4.5], reverse_order=True)
            return pts, mt, fn_.coord_transform(pts, MT=mt), \
                fn_.coord_transform(pts, MT=mt, dtype=types_.FLOAT)
        p = pipe()
        p.build()
        return [[[np.array(o.at(i)) for i in range(len(o))] for o in p.run()] for _ in range(3)]

    mine = make(stoker_lib())
    for pts, mts, outs, outs2 in mine:
        for p, m, o, o2 in zip(pts, mts, outs, outs2):
            assert o.shape == p.shape and o.dtype == f32
            np.testing.assert_allclose(o, ct_ref(p, m), rtol=1e-6, atol=1e-4)
            np.testing.assert_array_equal(o, o2)
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return
    ref = make(lib)
    for it_m, it_r in zip(mine, ref):
        for out_m, out_r in zip(it_m, it_r):
            for a, b in zip(out_m, out_r):
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-4)


def test_coord_transform_random_points_3d_and_per_sample_matrix():
    rng = np.random.default_rng(7)
    pts = [rng.uniform(-100, 100, (n, 3)).astype(f32) for n in (1, 17, 300)]
    ms = [rng.normal(size=(3, 3)).astype(f32) for _ in pts]
    ts = [rng.normal(size=3).astype(f32) for _ in pts]
    check_points(lambda fn, t, x, m, tt: fn.coord_transform(x, M=m, T=tt), [pts, ms, ts],
                 [ct_ref(p, np.hstack([m, tt[:, None]])) for p, m, tt in zip(pts, ms, ts)])
    mts = [rng.normal(size=(2, 4)).astype(f32) for _ in pts]  # 3-D points -> 2-D
    check_points(lambda fn, t, x, m: fn.coord_transform(x, MT=m), [pts, mts],
                 [ct_ref(p, m) for p, m in zip(pts, mts)])
    # Leading axes are kept: [2, N, 3] points.
    pts3 = [p.reshape(1, -1, 3).repeat(2, 0) for p in pts]
    check_points(lambda fn, t, x, m: fn.coord_transform(x, MT=m), [pts3, mts],
                 [ct_ref(p, m) for p, m in zip(pts3, mts)])


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float64])
def test_coord_transform_other_input_types(dtype):
    """Any numeric input; float32 out by default (DALI refuses float64: NumPy only there)."""
    rng = np.random.default_rng(1)
    hi = 250 if dtype == np.uint8 else 1000
    pts = [rng.integers(0, hi, (n, 2)).astype(dtype) for n in (5, 9)]
    mt = np.array([[0.5, 0.25, 3], [-1, 2, 0.5]], f32)
    build = lambda fn, t, x: fn.coord_transform(x, MT=mt.ravel().tolist())
    want = [ct_ref(p, mt) for p in pts]
    if dtype == np.float64:
        out = run(stoker_lib(), build, [pts])[0][0]
        for got, w in zip(out, want):
            assert got.dtype == f32
            np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-5)
    else:
        check_points(build, [pts], want)


@pytest.mark.parametrize("dtype,stoker_type", [(np.uint8, "UINT8"), (np.int16, "INT16")])
def test_coord_transform_integer_output_rounds_and_saturates(dtype, stoker_type):
    # Halves everywhere (exact in float32): rounded away from zero; out-of-range saturates.
    if dtype == np.uint8:
        pts = [np.array([[1, 3], [5, 7], [9, 11], [0, 255], [200, 100]], np.uint8)]
        mt = [[0.5, 0, 0.5], [0, 1.5, -3.5]]
    else:
        pts = [np.array([[1, -3], [5, -7], [30000, 11], [-32768, 32767], [0, 0]], np.int16)]
        mt = [[-0.5, 0, 0.5], [0, 2, -0.5]]
    mt = np.array(mt, f32)
    want = [round_sat(ct_ref(p, mt), dtype) for p in pts]

    def build(fn, t, x):
        return fn.coord_transform(x, M=mt[:, :2].ravel().tolist(), T=mt[:, 2].tolist(),
                                  dtype=getattr(t, stoker_type))
    check_points(build, [pts], want, exact=True)
    mine, ref = run_both(build, [pts])
    if ref is not None:
        np.testing.assert_array_equal(mine[0][0], ref[0][0])


# ---------------------------------------------------------------- errors

M23 = np.array([[1, 0, 0], [0, 1, 0]], f32)


def test_error_input_matrix_shape():
    e = stoker_error(lambda fn, t, x: fn.transforms.translation(x, offset=[1, 2]),
                     [[np.eye(3, dtype=f32)]])
    check_error(e, "transforms.translation",
                "the input of sample 0 has shape (3, 3); an affine transform is a matrix of "
                "shape (ndim, ndim + 1): (2, 3) for 2-D, (3, 4) for 3-D.")


def test_error_input_dimensions_mismatch():
    e = stoker_error(lambda fn, t, x: fn.transforms.translation(x, offset=[1, 2, 3]), [[M23]])
    check_error(e, "transforms.translation",
                "the input of sample 0 is a 2-D transform (shape (2, 3)), but the arguments "
                "make a 3-D one; the two must have the same dimensions.")


def test_error_combine_mismatch():
    e = stoker_error(lambda fn, t: fn.transforms.combine(
        fn.transforms.translation(offset=[1, 2]), fn.transforms.translation(offset=[1, 2, 3])))
    check_error(e, "transforms.combine",
                "input 1 of sample 0 is a 3-D transform (shape (3, 4)) but input 0 a 2-D one "
                "(shape (2, 3)); all the transforms combined must have the same dimensions.")
    e = stoker_error(lambda fn, t, x: fn.transforms.combine(x, x), [[np.zeros((2, 2), f32)]])
    check_error(e, "transforms.combine",
                "input 0 of sample 0 has shape (2, 2); an affine transform is a matrix of shape "
                "(ndim, ndim + 1): (2, 3) for 2-D, (3, 4) for 3-D.")


def test_error_combine_one_input():
    with pytest.raises(Exception) as e:
        run(stoker_lib(), lambda fn, t: fn.transforms.combine(
            fn.transforms.translation(offset=[1, 2])), [], batch_size=1)
    assert "transforms.combine" in str(e.value) and "2" in str(e.value), str(e.value)


def test_error_center_size():
    e = stoker_error(lambda fn, t: fn.transforms.scale(scale=[1, 2], center=[1, 2, 3]))
    check_error(e, "transforms.scale",
                "argument 'center' has 3 values for sample 0, but the transform is 2-D: give 2 "
                "values.")
    e = stoker_error(lambda fn, t: fn.transforms.rotation(angle=30, center=[1, 2, 3]))
    check_error(e, "transforms.rotation",
                "argument 'center' has 3 values for sample 0, but the transform is 2-D: give 2 "
                "values.")


def test_error_rotation_axis():
    e = stoker_error(lambda fn, t: fn.transforms.rotation(angle=30, axis=[0, 1]))
    check_error(e, "transforms.rotation",
                "argument 'axis' must have 3 values (a 3-D rotation's axis; leave it out for "
                "2-D), got 2 for sample 0.")


def test_error_shear():
    e = stoker_error(lambda fn, t: fn.transforms.shear(shear=[1, 2, 3]))
    check_error(e, "transforms.shear",
                "argument 'shear' must have 2 values (2-D) or 6 values (3-D: xy, xz, yx, yz, "
                "zx, zy), got 3 for sample 0.")
    for kw in ({}, {"shear": [1, 2], "angles": [1, 2]}):
        e = stoker_error(lambda fn, t: fn.transforms.shear(**kw))
        check_error(e, "transforms.shear",
                    "give exactly one of the arguments 'shear' and 'angles'.")


def test_error_crop_sizes():
    e = stoker_error(lambda fn, t: fn.transforms.crop(from_start=[0, 0], to_end=[1, 2, 3]))
    check_error(e, "transforms.crop",
                "argument 'from_start' has 2 values for sample 0, but another of from_start, "
                "from_end, to_start and to_end has 3; give each one value per dimension, or one "
                "value for all.")


def test_error_per_sample_dimensions_differ():
    offs = [np.array([1, 2], f32), np.array([1, 2, 3], f32)]
    e = stoker_error(lambda fn, t, o: fn.transforms.translation(offset=o), [offs], batch_size=2)
    check_error(e, "transforms.translation",
                "sample 1 is a 3-D transform but sample 0 a 2-D one; all samples of a batch "
                "must have the same dimensions.")


PTS = [np.array([[1, 2], [3, 4]], f32)]


def test_error_coord_transform_matrix_shape():
    e = stoker_error(lambda fn, t, x: fn.coord_transform(x, M=[1, 2, 3]), [PTS])
    check_error(e, "coord_transform",
                "argument 'M' must be a matrix of 2 columns (the 2 coordinates of the points) "
                "for sample 0, got 3 values.")
    e = stoker_error(lambda fn, t, x: fn.coord_transform(x, MT=[1, 2, 3, 4]), [PTS])
    check_error(e, "coord_transform",
                "argument 'MT' must be a matrix of 3 columns (the 2 coordinates of the points, "
                "then the translation) for sample 0, got 4 values.")
    e = stoker_error(lambda fn, t, x, m: fn.coord_transform(x, MT=m),
                     [PTS, [np.eye(2, dtype=f32)]])
    check_error(e, "coord_transform",
                "argument 'MT' must be a matrix of 3 columns (the 2 coordinates of the points, "
                "then the translation) for sample 0, got shape (2, 2).")
    # A 3-D transform on 2-D points.
    e = stoker_error(lambda fn, t, x: fn.coord_transform(
        x, MT=fn.transforms.translation(offset=[1, 2, 3])), [PTS])
    check_error(e, "coord_transform",
                "argument 'MT' must be a matrix of 3 columns (the 2 coordinates of the points, "
                "then the translation) for sample 0, got shape (3, 4).")


def test_error_coord_transform_t_and_mt():
    e = stoker_error(lambda fn, t, x: fn.coord_transform(x, M=[1, 2, 3, 4], T=[1, 2, 3]), [PTS])
    check_error(e, "coord_transform",
                "argument 'T' must have 1 or 2 values (one per output coordinate) for sample 0, "
                "got 3.")
    e = stoker_error(lambda fn, t, x: fn.coord_transform(x, M=[1, 2, 3, 4], MT=[1, 2, 3, 4, 5, 6]),
                     [PTS])
    check_error(e, "coord_transform",
                "the combined argument 'MT' cannot be given together with 'M' or 'T'; give "
                "either MT, or M and/or T.")


def test_error_coord_transform_input_and_dtype():
    e = stoker_error(lambda fn, t, x: fn.coord_transform(x, M=[1, 0, 0, 1]),
                     [[np.array([1, 2, 3, 4], f32)]])
    check_error(e, "coord_transform",
                "sample 0 of the input has shape (4,); give points as [N, D] (one point of D "
                "coordinates per row).")
    e = stoker_error(lambda fn, t, x: fn.coord_transform(x, M=[1, 0, 0, 1], dtype=t.UINT8),
                     [PTS])
    check_error(e, "coord_transform",
                "argument 'dtype' must be float32 or the input's type (float32), got uint8.")
