"""fn.multi_paste against DALI 2.4 (exact) and a NumPy reference, on ImageNet photos."""
import cv2
import numpy as np
import pytest

from _dali_ref import IMAGENET, both, dali_fails, error_checker, run, stoker_error, stoker_lib

check_error = error_checker(__file__)


@pytest.fixture(scope="module")
def photos():
    files = sorted(IMAGENET.glob("*/*.jpg"))[::50][:4]
    return [np.ascontiguousarray(cv2.cvtColor(cv2.imread(str(f)), cv2.COLOR_BGR2RGB)[:200, :240]) for f in files]


def regions(seed, n, k, src_hw, out_hw):
    """Per output sample: ids, in anchors, shapes, out anchors ([k, 2] int32 each)."""
    rng = np.random.default_rng(seed)
    ids, ia, sh, oa = [], [], [], []
    for _ in range(n):
        s = rng.integers(1, [min(src_hw[0], out_hw[0]), min(src_hw[1], out_hw[1])], size=(k, 2))
        ids.append(rng.integers(0, n, size=k).astype(np.int32))
        ia.append(rng.integers(0, np.array(src_hw) - s + 1).astype(np.int32))
        oa.append(rng.integers(0, np.array(out_hw) - s + 1).astype(np.int32))
        sh.append(s.astype(np.int32))
    return ids, ia, sh, oa


def np_paste(srcs, ids, ia, sh, oa, out_hw, dtype):
    out = np.zeros(tuple(out_hw) + srcs[0].shape[2:], dtype)
    for j, a, s, o in zip(ids, ia, sh, oa):
        out[o[0]:o[0] + s[0], o[1]:o[1] + s[1]] = srcs[j][a[0]:a[0] + s[0], a[1]:a[1] + s[1]]
    return out


@pytest.mark.parametrize("out_hw", [None, (230, 310)])
def test_in_ids_matches_dali_and_numpy(photos, out_hw):
    n = len(photos)
    ids, ia, sh, oa = regions(1, n, 5, (200, 240), out_hw or (200, 240))
    kw = {} if out_hw is None else {"output_size": list(out_hw)}

    def build(fn, types, x, i, a, s, o):
        return fn.multi_paste(x, in_ids=i, in_anchors=a, shapes=s, out_anchors=o, **kw)
    (out, layout, dtype), = both(build, [photos, ids, ia, sh, oa], ["HWC", None, None, None, None])
    assert (layout, dtype) == ("HWC", "uint8")
    for k in range(n):  # later regions cover earlier ones
        np.testing.assert_array_equal(out[k], np_paste(photos, ids[k], ia[k], sh[k], oa[k], out_hw or (200, 240), np.uint8))


def test_inputs_without_ids_and_defaults(photos):
    a, b, c = photos[:2], photos[2:], [p[::-1].copy() for p in photos[:2]]
    oa = [np.array([[0, 0], [10, 20], [50, 60]], np.int32)] * 2
    sh = [np.array([[100, 100], [30, 40], [150, 180]], np.int32)] * 2

    def build(fn, types, x, y, z, o, s):
        return fn.multi_paste(x, y, z, out_anchors=o, shapes=s)
    (out, _, _), = both(build, [a, b, c, oa, sh], ["HWC"] * 3 + [None, None])
    for k in range(2):
        ref = np_paste([a[k], b[k], c[k]], [0, 1, 2], [[0, 0]] * 3, sh[k], oa[k], (200, 240), np.uint8)
        np.testing.assert_array_equal(out[k], ref)
    # Without anchors and shapes: every region is the whole source at (0, 0), the last on top.
    (out, _, _), = both(lambda fn, types, x: fn.multi_paste(x, in_ids=[2, 1]), [photos], ["HWC"])
    for k in range(len(photos)):
        np.testing.assert_array_equal(out[k], photos[1])


def test_relative_arguments_round_as_dali(photos):
    rng = np.random.default_rng(3)
    n = len(photos)
    iar = [rng.uniform(0, 0.5, (3, 2)).astype(np.float32) for _ in range(n)]
    shr = [rng.uniform(0, 0.5, (3, 2)).astype(np.float32) for _ in range(n)]
    oar = [rng.uniform(0, 0.5, (3, 2)).astype(np.float32) for _ in range(n)]
    ids = [np.array([k, (k + 1) % n, (k + 2) % n], np.int32) for k in range(n)]

    def build(fn, types, x, i, a, s, o):
        return fn.multi_paste(x, in_ids=i, in_anchors_rel=a, shapes_rel=s, out_anchors_rel=o)
    (out, _, _), = both(build, [photos, ids, iar, shr, oar], ["HWC"] + [None] * 4)
    ext = np.array([200, 240], np.float32)
    for k in range(n):  # anchors rounded down, shapes up, in float32
        ia = np.floor(iar[k] * ext).astype(int)
        sh = np.ceil(shr[k] * ext).astype(int)
        oa = np.floor(oar[k] * ext).astype(int)
        np.testing.assert_array_equal(out[k], np_paste(photos, ids[k], ia, sh, oa, (200, 240), np.uint8))


@pytest.mark.parametrize("src,dst", [(np.uint8, "FLOAT"), (np.float32, "UINT8"), (np.float32, "INT16"),
                                     (np.int32, "INT16"), (np.int16, "INT32")])
def test_dtype_conversion(photos, src, dst):
    vals = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 254.5, 255.5, 300, -3, 1e10, -1e10, 3.7, -3.7, 32767.5])
    imgs = [(p.astype(np.float32) * 1.7 - 60).astype(src) for p in photos[:2]]
    imgs[0][0, :len(vals), 0] = vals.astype(np.float32).astype(src) if src == np.float32 else imgs[0][0, :len(vals), 0]

    def build(fn, types, x):
        return fn.multi_paste(x, in_ids=[1, 0], dtype=getattr(types, dst))
    (out, _, dtype), = both(build, [imgs], ["HWC"])
    ref = {"FLOAT": np.float32, "UINT8": np.uint8, "INT16": np.int16, "INT32": np.int32}[dst]
    assert dtype == np.dtype(ref).name
    x = imgs[0].astype(np.float64)
    if np.issubdtype(ref, np.integer) and src == np.float32:
        x = np.clip(np.sign(x) * np.floor(np.abs(x) + 0.5), np.iinfo(ref).min, np.iinfo(ref).max)
    elif np.issubdtype(ref, np.integer):
        x = np.clip(x, np.iinfo(ref).min, np.iinfo(ref).max)
    np.testing.assert_array_equal(out[0], x.astype(ref))


def test_sequences_paste_frame_by_frame(photos):
    seqs = [np.stack([p, p[::-1]]) for p in photos[:2]]
    ia = [np.array([[5, 6]], np.int32)] * 2
    sh = [np.array([[40, 50]], np.int32)] * 2
    oa = [np.array([[7, 9]], np.int32)] * 2

    def build(fn, types, x, a, s, o):
        return fn.multi_paste(x, in_ids=[1], in_anchors=a, shapes=s, out_anchors=o, output_size=[60, 70])
    # DALI 2.4 lists FHWC but fails on it on the CPU ("The kernel instance is null").
    (out, layout, _), = run(stoker_lib(), build, [seqs, ia, sh, oa], ["FHWC", None, None, None])
    dali_fails(build, [seqs, ia, sh, oa], ["FHWC", None, None, None])
    assert layout == "FHWC" and out[0].shape == (2, 60, 70, 3)
    for f in range(2):
        np.testing.assert_array_equal(out[0][f], np_paste([seqs[1][f]], [0], ia[0], sh[0], oa[0], (60, 70), np.uint8))


IMG = np.zeros((8, 8, 3), np.uint8)
A = lambda v: [np.array(v, np.int32)] * 2  # noqa: E731


@pytest.mark.parametrize("build,datas,layouts,rest", [
    (lambda fn, t, x: fn.multi_paste(x, in_ids=[2]), [[IMG, IMG]], None,
     "argument 'in_ids' must be sample indices in [0, 1] (the batch has 2 samples), got 2 for output sample 0."),
    (lambda fn, t, x: fn.multi_paste(x, in_ids=[-1]), [[IMG, IMG]], None,
     "argument 'in_ids' must be sample indices in [0, 1] (the batch has 2 samples), got -1 for output sample 0."),
    (lambda fn, t, x, a, s: fn.multi_paste(x, in_ids=[1], in_anchors=a, shapes=s), [[IMG, IMG], A([[2, 2]]), A([[7, 3]])],
     None, "the pasted region must lie within its source sample for region 0 of output sample 0: input anchor 2 x 2 "
     "and shape 7 x 3 reach outside the source's 8 x 8. Check in_anchors / shapes (or their _rel forms)."),
    (lambda fn, t, x, a: fn.multi_paste(x, in_ids=[1], in_anchors=a), [[IMG, IMG], A([[-1, 0]])], None,
     "the pasted region must lie within its source sample for region 0 of output sample 0: input anchor -1 x 0 "
     "and shape 9 x 8 reach outside the source's 8 x 8. Check in_anchors / shapes (or their _rel forms)."),
    (lambda fn, t, x, a: fn.multi_paste(x, in_ids=[1], out_anchors=a), [[IMG, IMG], A([[1, 0]])], None,
     "the pasted region must lie within the output for region 0 of output sample 0: output anchor 1 x 0 and shape "
     "8 x 8 reach outside the output's 8 x 8. Check out_anchors / shapes, or make output_size larger."),
    (lambda fn, t, x, a: fn.multi_paste(x, in_ids=[1], out_anchors=a), [[IMG, IMG], A([[1, 0, 0]])], None,
     "argument 'out_anchors' must be a 2-D tensor of shape (number of pasted regions, 2), here (1, 2), got shape "
     "(1, 3) for output sample 0."),
    (lambda fn, t, x, a: fn.multi_paste(x, in_ids=[1], in_anchors_rel=a),
     [[IMG, IMG], [np.array([[1.5, 0]], np.float32)] * 2], None,
     "argument 'in_anchors_rel' must be in [0, 1], got 1.5 for region 0 of output sample 0."),
    (lambda fn, t, x: fn.multi_paste(x, in_ids=[1]), [[IMG.astype(np.int8)] * 2], None,
     "input 0 has type int8, but the operator takes uint8, int16, int32 or float32 images; cast them first (fn.cast)."),
    (lambda fn, t, x: fn.multi_paste(x, in_ids=[1]), [[IMG] * 2], ["CHW"],
     "input 0 must be images with layout HWC or sequences with layout FHWC (the same for every input), got layout "
     "'CHW' with 3 dimensions. Decode with fn.decoders.image (HWC), or transpose channel-first data first."),
    (lambda fn, t, x: fn.multi_paste(x, in_ids=[1]), [[IMG, IMG[:4].copy()]], None,
     "argument 'output_size' is needed when the input samples differ in shape: sample 0 of input 0 is (8, 8, 3) "
     "but sample 1 of input 0 is (4, 8, 3). Give output_size=(height, width)."),
    (lambda fn, t, x, y: fn.multi_paste(x, y, in_ids=[1]), [[IMG, IMG], [IMG, IMG]], None,
     "argument 'in_ids' is given, so the operator takes exactly one input batch (the samples in_ids picks from), "
     "got 2 inputs. Leave in_ids out to paste sample i of each input into output i."),
    (lambda fn, t, x: fn.multi_paste(x, in_ids=[1], dtype=t.INT8), [[IMG, IMG]], None,
     "argument 'dtype' must be UINT8, INT16, INT32 or FLOAT, got int8."),
])
def test_errors(build, datas, layouts, rest):
    check_error(stoker_error(build, datas, layouts), "multi_paste", rest)
