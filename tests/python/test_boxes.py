"""fn.bb_flip, fn.coord_flip, fn.bbox_paste and fn.box_encoder against NumPy references (float32
arithmetic written out) and against DALI 2.4 on the same inputs: COCO boxes from readers.coco on
../shared/testdata/coco, and synthetic ones (random, degenerate, touching the borders, empty
samples); per-sample arguments; batch sizes 1 and 4; SSD300's 8732 default boxes; every error
message in full."""
import math
import re

import numpy as np
import pytest

from _dali_ref import assert_same_outputs, real_dali, run, stoker_lib

f32 = np.float32
# Four quadrant anchors and a centre one (ltrb, flattened).
QUADRANTS = [0, 0, .5, .5, .5, 0, 1, .5, 0, .5, .5, 1, .5, .5, 1, 1, .25, .25, .75, .75]
B2 = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.6, 0.9]], f32)


# ---------------------------------------------------------------- NumPy references

def bb_flip_ref(boxes, ltrb=False, horizontal=1, vertical=0):
    b = boxes.reshape(-1, 4).astype(f32)
    lo_x, lo_y, hi_x, hi_y = (b[:, k].copy() for k in range(4))
    if not ltrb:
        hi_x, hi_y = lo_x + hi_x, lo_y + hi_y
    if horizontal:
        lo_x, hi_x = f32(1) - hi_x, f32(1) - lo_x
    if vertical:
        lo_y, hi_y = f32(1) - hi_y, f32(1) - lo_y
    if not ltrb:
        hi_x, hi_y = hi_x - lo_x, hi_y - lo_y
    return np.stack([lo_x, lo_y, hi_x, hi_y], 1).reshape(boxes.shape)


def coord_flip_ref(pts, layout="", flips=None, centers=None):
    """flips / centers: {'x': ..., 'y': ..., 'z': ...}; DALI's defaults otherwise."""
    flips = {"x": 1, "y": 0, "z": 0, **(flips or {})}
    centers = {"x": 0.5, "y": 0.5, "z": 0.5, **(centers or {})}
    nd = pts.shape[1]
    layout = layout or "xyz"[:nd]
    out = pts.copy()
    for d in range(nd):
        a = layout[d]
        if flips[a]:
            out[:, d] = f32(2) * f32(centers[a]) - pts[:, d]
    return out


def bbox_paste_ref(boxes, ratio, paste_x=0.5, paste_y=0.5, ltrb=False):
    ratio = f32(ratio)
    scale = f32(1) / ratio
    mul = (ratio - f32(1)) / ratio
    offs = []
    for p in (paste_x, paste_y):
        o = f32(p) * mul
        if scale + o > 1:
            o = f32(1) - scale
            while scale + o > 1:
                o = np.nextafter(o, f32(-1))
        offs.append(o)
    b = boxes.reshape(-1, 4).astype(f32)
    out = np.empty_like(b)
    out[:, 0] = b[:, 0] * scale + offs[0]
    out[:, 1] = b[:, 1] * scale + offs[1]
    out[:, 2] = b[:, 2] * scale + (offs[0] if ltrb else f32(0))
    out[:, 3] = b[:, 3] * scale + (offs[1] if ltrb else f32(0))
    return out.reshape(boxes.shape)


def iou_matrix(boxes, anchors):
    """[nboxes, nanchors] IoUs in float32, box area + anchor area - intersection."""
    B, A = boxes[:, None, :], anchors[None, :, :]
    l, t = np.maximum(B[..., 0], A[..., 0]), np.maximum(B[..., 1], A[..., 1])
    r, b = np.minimum(B[..., 2], A[..., 2]), np.minimum(B[..., 3], A[..., 3])
    inter = np.where((r > l) & (b > t), (r - l) * (b - t), f32(0))
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(inter == 0, f32(0), inter / ((area(B) + area(A)) - inter)).astype(f32)


def box_encoder_ref(boxes, labels, anchors, criteria=0.5, offset=False, scale=1.0,
                    means=(0, 0, 0, 0), stds=(1, 1, 1, 1)):
    """SSD matching written out: each box's best anchor (ties: the later anchor) is forced,
    each anchor takes its best box (ties: the later box) above the threshold."""
    A = np.asarray(anchors, f32).reshape(-1, 4)
    B = boxes.reshape(-1, 4).astype(f32)
    labels = labels.reshape(-1)
    na, nb = len(A), len(B)
    match = np.full(na, -1)
    if nb:
        iou = iou_matrix(B, A)
        best_anchor = na - 1 - np.argmax(iou[:, ::-1], axis=1)
        iou[np.arange(nb), best_anchor] = 2
        best_box = nb - 1 - np.argmax(iou[::-1, :], axis=0)
        keep = iou[best_box, np.arange(na)] > f32(criteria)
        match[keep] = best_box[keep]
    m = match >= 0
    center = lambda X: np.stack([f32(0.5) * (X[:, 2] + X[:, 0]), f32(0.5) * (X[:, 3] + X[:, 1])], 1)
    size = lambda X: np.stack([X[:, 2] - X[:, 0], X[:, 3] - X[:, 1]], 1)
    out_labels = np.zeros(na, labels.dtype)
    out_labels[m] = labels[match[m]]
    if not offset:
        out = np.concatenate([center(A), size(A)], 1)
        if m.any():
            Bm = B[match[m]]
            out[m] = np.concatenate([center(Bm), size(Bm)], 1)
        return out, out_labels
    out = np.zeros((na, 4), f32)
    if m.any():
        s, means, stds = f32(scale), np.asarray(means, f32), np.asarray(stds, f32)
        Bm, Am = B[match[m]], A[m]
        bc, bs, ac, as_ = center(Bm) * s, size(Bm) * s, center(Am) * s, size(Am) * s
        with np.errstate(divide="ignore", invalid="ignore"):
            out[m, :2] = ((bc - ac) / as_ - means[:2]) / stds[:2]
            out[m, 2:] = (np.log(bs / as_) - means[2:]) / stds[2:]
    return out, out_labels


def ssd300_anchors():
    """The SSD300 default boxes of DALI's SSD example (8732, ltrb, flattened): feature maps
    38, 19, 10, 5, 3, 1; sizes 21..315 on a 300-pixel image; aspect ratios 2 (and 3 on the
    middle maps); centres and sizes clipped to [0, 1] before they become corners."""
    fig, feat, steps = 300, [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300]
    sizes, ratios = [21, 45, 99, 153, 207, 261, 315], [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    xywh = []
    for k, n in enumerate(feat):
        fk = fig / steps[k]
        s1 = sizes[k] / fig
        s2 = math.sqrt(s1 * sizes[k + 1] / fig)
        shapes = [(s1, s1), (s2, s2)]
        for r in ratios[k]:
            w, h = s1 * math.sqrt(r), s1 / math.sqrt(r)
            shapes += [(w, h), (h, w)]
        for w, h in shapes:
            for i in range(n):
                for j in range(n):
                    xywh.append(((j + 0.5) / fk, (i + 0.5) / fk, w, h))
    b = np.clip(np.array(xywh), 0, 1)
    ltrb = np.stack([b[:, 0] - 0.5 * b[:, 2], b[:, 1] - 0.5 * b[:, 3],
                     b[:, 0] + 0.5 * b[:, 2], b[:, 1] + 0.5 * b[:, 3]], 1)
    return ltrb.ravel().tolist()


# ---------------------------------------------------------------- running both libraries

def both(build, datas, batch_size=None):
    """stoker's outputs (per output: [samples], layout, dtype), checked equal to DALI's."""
    mine = run(stoker_lib(), build, datas, batch_size=batch_size)
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return mine
    assert_same_outputs(mine, run(lib, build, datas, batch_size=batch_size))
    return mine


def coco_runs(lib, testdata, make, batch_size, ltrb, iterations):
    """readers.coco (relative boxes) -> make(fn, boxes, labels); per iteration the boxes,
    labels and make's outputs."""
    fn_, _, pdef = lib
    root = testdata / "coco"

    @pdef(batch_size=batch_size, num_threads=2, device_id=None, seed=5)
    def pipe():
        _, boxes, labels = fn_.readers.coco(file_root=str(root / "images"),
                                           annotations_file=str(root / "instances.json"),
                                           ltrb=ltrb, ratio=True)
        out = make(fn_, boxes, labels)
        return (boxes, labels) + (tuple(out) if isinstance(out, (list, tuple)) else (out,))

    p = pipe()
    p.build()
    runs = []
    for _ in range(iterations):
        outs = p.run()
        runs.append([[np.array(o.at(i)) for i in range(len(o))] for o in outs])
    return runs


def coco_both(testdata, make, batch_size=8, ltrb=False, iterations=8):
    """COCO through `make` in stoker, checked equal to DALI; per iteration, per output, the
    samples (boxes and labels first)."""
    mine = coco_runs(stoker_lib(), testdata, make, batch_size, ltrb, iterations)
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return mine
    ref = coco_runs(lib, testdata, make, batch_size, ltrb, iterations)
    for it_m, it_r in zip(mine, ref):
        for out_m, out_r in zip(it_m, it_r):
            assert [a.dtype for a in out_m] == [b.dtype for b in out_r]
            for a, b in zip(out_m, out_r):
                np.testing.assert_array_equal(a, b)
    return mine


def error_of(build, datas, exc=ValueError):
    with pytest.raises(exc) as e:
        run(stoker_lib(), build, datas)
    return str(e.value)


def check_message(msg, op, rest, sample=None):
    where = "" if sample is None else rf" \[sample {sample}\]"
    assert re.fullmatch(rf"fn\.{op} \(test_boxes\.py:\d+\){where}: " + re.escape(rest), msg), msg


def random_boxes(rng, n, ltrb=True):
    a, b = rng.random((n, 2), dtype=f32), rng.random((n, 2), dtype=f32)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return np.concatenate([lo, hi if ltrb else hi - lo], 1).astype(f32)


def synthetic_boxes(batch_size, ltrb, seed=0):
    """Random boxes, plus degenerate ones, the whole image and boxes on its borders; an empty
    sample where the batch has room for one."""
    rng = np.random.default_rng(seed)
    special = np.array([[0, 0, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], [0.25, 0.5, 0.25, 0.75],
                        [0, 0.3, 0.1, 1], [0.9, 0, 1, 0.2]], f32)
    if not ltrb:
        special[:, 2:] = np.maximum(special[:, 2:] - special[:, :2], 0)
    out = [np.concatenate([random_boxes(rng, 5 + 3 * i, ltrb), special]) for i in range(batch_size)]
    if batch_size > 1:
        out[1] = np.zeros((0, 4), f32)
    return out


# ---------------------------------------------------------------- bb_flip

@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("ltrb", [False, True])
@pytest.mark.parametrize("kw", [{}, dict(horizontal=0), dict(vertical=1),
                                dict(horizontal=0, vertical=1), dict(horizontal=0, vertical=0)])
def test_bb_flip_synthetic(batch_size, ltrb, kw):
    boxes = synthetic_boxes(batch_size, ltrb)
    (out, layout, dtype), = both(lambda fn, types, b: fn.bb_flip(b, ltrb=ltrb, **kw), [boxes])
    assert dtype == "float32"
    for o, b in zip(out, boxes):
        assert o.shape == b.shape
        np.testing.assert_array_equal(o, bb_flip_ref(b, ltrb, **kw))


def test_bb_flip_xywh_goes_through_the_corners():
    # Even unflipped, xywh sizes are (x + w) - x in float32, as DALI computes them.
    b = np.array([[0.1, 0.2, 0.3, 0.4]], f32)
    (out, _, _), = both(lambda fn, types, x: fn.bb_flip(x, horizontal=0), [[b]])
    assert out[0][0, 3] == (f32(0.2) + f32(0.4)) - f32(0.2) != f32(0.4)
    (out, _, _), = both(lambda fn, types, x: fn.bb_flip(x), [[b]])
    assert out[0][0, 0] == f32(1) - (f32(0.1) + f32(0.3))


def test_bb_flip_per_sample_arguments():
    rng = np.random.default_rng(1)
    boxes = [random_boxes(rng, 4 + i) for i in range(4)]
    hs = [np.array(v, np.int32) for v in (0, 1, 1, 0)]
    vs = [np.array(v, np.int32) for v in (0, 0, 1, 1)]
    (out, _, _), = both(lambda fn, types, b, h, v: fn.bb_flip(b, ltrb=True, horizontal=h, vertical=v),
                        [boxes, hs, vs])
    for o, b, h, v in zip(out, boxes, hs, vs):
        np.testing.assert_array_equal(o, bb_flip_ref(b, True, int(h), int(v)))


def test_bb_flip_nonzero_means_flip_and_flat_lists():
    b = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.6, 0.9]], f32)
    (out, _, _), = both(lambda fn, types, x: fn.bb_flip(x, ltrb=True, horizontal=-3, vertical=2), [[b]])
    np.testing.assert_array_equal(out[0], bb_flip_ref(b, True, 1, 1))
    # A flat list of 4N coordinates and boxes in more dimensions, as DALI takes them.
    for shape in [(8,), (1, 2, 4)]:
        (out, _, _), = both(lambda fn, types, x: fn.bb_flip(x, ltrb=True), [[b.reshape(shape)]])
        assert out[0].shape == shape
        np.testing.assert_array_equal(out[0], bb_flip_ref(b, True).reshape(shape))


def test_legacy_ops_classes():
    from stoker import ops
    b, l = B2, np.array([3, 5], np.int32)

    def make(fn, types, x, y):
        return (ops.BbFlip(ltrb=True, vertical=1)(x),
                ops.CoordFlip(flip_y=1)(fn.reshape(x, shape=[-1, 2])),
                ops.BBoxPaste(ratio=2.0, ltrb=True)(x),
                *ops.BoxEncoder(anchors=QUADRANTS)(x, y))
    out = run(stoker_lib(), make, [[b], [l]])
    np.testing.assert_array_equal(out[0][0][0], bb_flip_ref(b, True, 1, 1))
    np.testing.assert_array_equal(out[1][0][0], coord_flip_ref(b.reshape(-1, 2), "", dict(y=1)))
    np.testing.assert_array_equal(out[2][0][0], bbox_paste_ref(b, 2.0, ltrb=True))
    check_encoder(out[3:], [b], [l], anchors=QUADRANTS)


@pytest.mark.parametrize("ltrb", [False, True])
def test_bb_flip_coco(testdata, ltrb):
    runs = coco_both(testdata, lambda fn, b, l: (fn.bb_flip(b, ltrb=ltrb),
                                                 fn.bb_flip(b, ltrb=ltrb, horizontal=0, vertical=1)),
                     ltrb=ltrb)
    n = 0
    for boxes, _, flipped_h, flipped_v in runs:
        for b, h, v in zip(boxes, flipped_h, flipped_v):
            np.testing.assert_array_equal(h, bb_flip_ref(b, ltrb))
            np.testing.assert_array_equal(v, bb_flip_ref(b, ltrb, 0, 1))
            n += len(b)
    assert n > 60


# ---------------------------------------------------------------- coord_flip

@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("layout,nd,kw", [
    ("", 1, {}), ("", 2, {}), ("", 3, {}), ("", 2, dict(flip_y=1)), ("", 3, dict(flip_y=1, flip_z=1)),
    ("", 1, dict(flip_x=0, flip_y=1, center_y=0.2)), ("", 2, dict(flip_x=0, flip_y=1, center_y=0.2)),
    ("x", 1, dict(center_x=0.25)), ("xy", 2, dict(flip_y=1, center_x=0.0)),
    ("yx", 2, dict(flip_y=1, center_y=0.75)), ("xyz", 3, dict(flip_z=1, center_z=0.1)),
    ("zyx", 3, dict(flip_x=0, flip_z=1, center_z=0.3)),
    ("yxz", 3, dict(flip_y=1, flip_z=1, center_x=2.0)),
])
def test_coord_flip(batch_size, layout, nd, kw):
    rng = np.random.default_rng(2)
    pts = [rng.random((3 + 2 * i, nd), dtype=f32) for i in range(batch_size)]
    if batch_size > 1:
        pts[1] = np.zeros((0, nd), f32)
    (out, _, dtype), = both(lambda fn, types, p: fn.coord_flip(p, layout=layout, **kw), [pts])
    assert dtype == "float32"
    flips = {k[-1]: v for k, v in kw.items() if k.startswith("flip")}
    centers = {k[-1]: v for k, v in kw.items() if k.startswith("center")}
    for o, p in zip(out, pts):
        np.testing.assert_array_equal(o, coord_flip_ref(p, layout, flips, centers))


def test_coord_flip_per_sample_arguments_and_odd_inputs():
    rng = np.random.default_rng(3)
    pts = [rng.random((5, 3), dtype=f32) * 3 - 1 for _ in range(3)]  # also outside [0, 1]
    fx = [np.array(v, np.int32) for v in (1, 0, 1)]
    cx = [np.array(v, f32) for v in (0.1, 0.5, 0.9)]
    cz = [np.array(v, f32) for v in (0.0, 1.0, 0.5)]
    (out, _, _), = both(lambda fn, types, p, a, b, c: fn.coord_flip(p, flip_x=a, center_x=b, flip_z=1,
                                                                     center_z=c), [pts, fx, cx, cz])
    for o, p, a, b, c in zip(out, pts, fx, cx, cz):
        np.testing.assert_array_equal(o, coord_flip_ref(p, "", dict(x=int(a), z=1), dict(x=b, z=c)))
    # Points without coordinates pass through; a longer layout names the leading coordinates,
    # as in DALI.
    (out, _, _), = both(lambda fn, types, p: fn.coord_flip(p), [[np.zeros((4, 0), f32)]])
    assert out[0].shape == (4, 0)
    p2 = rng.random((6, 2), dtype=f32)
    (out, _, _), = both(lambda fn, types, p: fn.coord_flip(p, layout="yxz", flip_y=1), [[p2]])
    np.testing.assert_array_equal(out[0], coord_flip_ref(p2, "yx", dict(y=1)))


def test_coord_flip_coco_box_corners(testdata):
    # Box corners as points: flipping them as [2N, 2] coordinates gives bb_flip's ltrb boxes
    # with the corners swapped.
    runs = coco_both(testdata, lambda fn, b, l: fn.coord_flip(fn.reshape(b, shape=[-1, 2]), flip_y=1),
                     ltrb=True, iterations=4)
    for boxes, _, pts in runs:
        for b, p in zip(boxes, pts):
            flipped = bb_flip_ref(b, True, 1, 1)
            np.testing.assert_array_equal(p.reshape(-1, 4)[:, [2, 3, 0, 1]], flipped)


# ---------------------------------------------------------------- bbox_paste

@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("ltrb", [False, True])
@pytest.mark.parametrize("kw", [dict(ratio=2.0), dict(ratio=1.0), dict(ratio=3.7, paste_x=0.0, paste_y=1.0),
                                dict(ratio=1.3, paste_x=1.0, paste_y=1.0), dict(ratio=5.0, paste_x=0.2)])
def test_bbox_paste(batch_size, ltrb, kw):
    boxes = synthetic_boxes(batch_size, ltrb, seed=4)
    (out, _, dtype), = both(lambda fn, types, b: fn.bbox_paste(b, ltrb=ltrb, **kw), [boxes])
    assert dtype == "float32"
    for o, b in zip(out, boxes):
        np.testing.assert_array_equal(o, bbox_paste_ref(b, ltrb=ltrb, **kw))


def test_bbox_paste_stays_inside_the_canvas_per_sample():
    # At the bottom-right corner, the offsets are nudged down until the image's far edge is at
    # most 1; per-sample ratios and positions.
    rng = np.random.default_rng(5)
    ratios = np.concatenate([rng.uniform(1, 20, 28), [1.1, 1.3, 1.7, 2.9, 3.3, 5.5, 7.1, 13.7]]).astype(f32)
    boxes = [np.array([[0, 0, 1, 1], [0.5, 0.5, 1, 1]], f32)] * len(ratios)
    px = [np.array(v, f32) for v in np.linspace(0, 1, len(ratios))]
    py = [np.array(1, f32)] * len(ratios)
    (out, _, _), = both(lambda fn, types, b, r, x, y: fn.bbox_paste(b, ratio=r, paste_x=x, paste_y=y,
                                                                    ltrb=True),
                        [boxes, [np.array(r) for r in ratios], px, py])
    for o, b, r, x in zip(out, boxes, ratios, px):
        np.testing.assert_array_equal(o, bbox_paste_ref(b, r, x, 1, ltrb=True))
        assert o.max() <= 1 and o.min() >= 0


def test_bbox_paste_coco(testdata):
    runs = coco_both(testdata, lambda fn, b, l: fn.bbox_paste(b, ratio=2.5, paste_x=0.3, paste_y=0.9))
    for boxes, _, pasted in runs:
        for b, p in zip(boxes, pasted):
            np.testing.assert_array_equal(p, bbox_paste_ref(b, 2.5, 0.3, 0.9))


# ---------------------------------------------------------------- box_encoder

def check_encoder(out, boxes, labels, exact=True, **kw):
    (eb, _, bdt), (el, _, ldt) = out
    assert bdt == "float32"
    for b, l, ob, ol in zip(boxes, labels, eb, el):
        rb, rl = box_encoder_ref(b, l, **kw)
        na = len(kw["anchors"]) // 4
        assert ob.shape == (na, 4) and ol.shape == (na,) and ol.dtype == l.dtype
        np.testing.assert_array_equal(ol, rl)
        if exact:
            np.testing.assert_array_equal(ob, rb)
        else:
            np.testing.assert_allclose(ob, rb, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("kw", [
    dict(), dict(criteria=0.0), dict(criteria=1.0), dict(criteria=0.3),
    dict(offset=True),
    dict(offset=True, scale=300.0, means=[0.1, -0.2, 0.3, 0.05], stds=[0.1, 0.1, 0.2, 0.2]),
])
def test_box_encoder_synthetic(batch_size, kw):
    rng = np.random.default_rng(6)
    anchors = QUADRANTS + np.concatenate([random_boxes(rng, 40)]).ravel().tolist()
    boxes = [random_boxes(rng, 1 + 2 * i) for i in range(batch_size)]
    if batch_size > 1:
        boxes[1] = np.zeros((0, 4), f32)
    labels = [rng.integers(1, 80, len(b)).astype(np.int32) for b in boxes]
    out = both(lambda fn, types, b, l: fn.box_encoder(b, l, anchors=anchors, **kw), [boxes, labels])
    check_encoder(out, boxes, labels, exact=not kw.get("offset"), anchors=anchors, **kw)


def test_box_encoder_ties_degenerate_and_border_boxes():
    anchors = QUADRANTS + [0, 0, .5, .5]  # the first anchor twice: ties go to the later one
    boxes = [
        np.array([[0, 0, .5, .5]], f32),                       # equal to two anchors
        np.array([[0, 0, .5, .5], [0, 0, .5, .5]], f32),       # two equal boxes: the later wins
        np.array([[.1, .1, .1, .1]], f32),                     # zero area: the last anchor
        np.array([[0, 0, 1, 1], [.5, 0, 1, .5]], f32),         # whole image, on the borders
        np.array([[.5, .5, 1, 1], [.6, .6, .9, .9], [.0, .5, .5, 1.]], f32),
    ]
    labels = [np.arange(1, len(b) + 1, dtype=np.int32) * 10 for b in boxes]
    for kw in (dict(), dict(offset=True), dict(criteria=0.0), dict(criteria=1.0)):
        out = both(lambda fn, types, b, l: fn.box_encoder(b, l, anchors=anchors, **kw), [boxes, labels])
        check_encoder(out, boxes, labels, exact=True, anchors=anchors, **kw)
        (eb, _, _), (el, _, _) = out
        # IoU 1 with both twin anchors: above any threshold below 1 both take the box; at
        # criteria 1 only the forced one, the later twin.
        assert el[0][5] == 10 and el[0][0] == (0 if kw.get("criteria") == 1.0 else 10)
        assert el[1][5] == 20 and el[1][0] == (0 if kw.get("criteria") == 1.0 else 20)  # the later box
        assert el[2][5] == 10 and (el[2][:5] == 0).all()  # zero area: forced onto the last anchor
    # The zero-area box's offsets: log(0) = -inf, as in DALI.
    (eb, _, _), _ = out = both(lambda fn, types, b, l: fn.box_encoder(b, l, anchors=anchors, offset=True),
                               [boxes, labels])
    assert np.isneginf(eb[2][5, 2:]).all()


def test_box_encoder_labels_shapes_and_types():
    anchors = QUADRANTS
    boxes = [np.array([[0, 0, .4, .5], [.6, .6, 1, 1]], f32)]
    labels = [np.array([[4], [9]], np.int32)]   # [N, 1] as well as [N]
    out = both(lambda fn, types, b, l: fn.box_encoder(b, l, anchors=anchors), [boxes, labels])
    check_encoder(out, boxes, labels, anchors=anchors)
    # Other integer types give labels of the same type (DALI takes int32 only).
    for dt in (np.int64, np.uint8, np.int16):
        l = [np.array([4, 9], dt)]
        out = run(stoker_lib(), lambda fn, types, b, l: fn.box_encoder(b, l, anchors=anchors), [boxes, l])
        assert out[1][2] == np.dtype(dt).name
        check_encoder(out, boxes, l, anchors=anchors)
    # A flat empty list of boxes is no boxes.
    out = both(lambda fn, types, b, l: fn.box_encoder(b, l, anchors=anchors),
               [[np.zeros((0,), f32)], [np.zeros((0,), np.int32)]])
    check_encoder(out, [np.zeros((0, 4), f32)], [np.zeros((0,), np.int32)], anchors=anchors)


@pytest.mark.parametrize("kw,exact", [
    (dict(), True),
    (dict(criteria=0.4), True),
    (dict(offset=True, scale=300.0, stds=[0.1, 0.1, 0.2, 0.2]), False),
    (dict(offset=True, means=[0.0, 0.0, 0.0, 0.0], stds=[0.1, 0.1, 0.2, 0.2]), False),
])
def test_box_encoder_ssd300_coco(testdata, kw, exact):
    anchors = ssd300_anchors()
    assert len(anchors) == 8732 * 4
    runs = coco_both(testdata, lambda fn, b, l: fn.box_encoder(b, l, anchors=anchors, **kw),
                     ltrb=True, batch_size=8, iterations=8)
    matched = 0
    for boxes, labels, eb, el in runs:
        out = [(eb, "", "float32"), (el, "", "int32")]
        check_encoder(out, boxes, labels, exact=exact, anchors=anchors, **kw)
        matched += sum(int((x > 0).sum()) for x in el)
    assert matched > 500


def test_box_encoder_ssd300_batch_of_one(testdata):
    anchors = ssd300_anchors()
    runs = coco_both(testdata, lambda fn, b, l: fn.box_encoder(b, l, anchors=anchors, offset=True),
                     ltrb=True, batch_size=1, iterations=3)
    for boxes, labels, eb, el in runs:
        check_encoder([(eb, "", "float32"), (el, "", "int32")], boxes, labels, exact=False,
                      anchors=anchors, offset=True)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("op", ["bb_flip", "bbox_paste"])
def test_box_input_errors(op):
    kw = dict(ratio=2.0) if op == "bbox_paste" else {}
    make = lambda fn, types, b: getattr(fn, op)(b, **kw)
    msg = error_of(make, [[B2.astype(np.int32)]], TypeError)
    check_message(msg, op, "the boxes (input 0) must be float32 relative coordinates, got int32; "
                           "convert them with fn.cast(boxes, dtype=types.FLOAT).")
    # A good sample first where one of the same rank exists (a flat list of 4N is one).
    for good, shape in [(B2, (2, 5)), (B2, (4, 3)), (B2.ravel(), (6,)), (None, ())]:
        batch = [np.zeros(shape, f32)] if good is None else [good, np.zeros(shape, f32)]
        msg = error_of(make, [batch])
        check_message(msg, op, f"sample {len(batch) - 1} of the boxes has shape {shape}, which is "
                               "not a list of boxes; give them as [N, 4] (one box of 4 coordinates per row).")


def test_bbox_paste_argument_errors():
    make = lambda **kw: (lambda fn, types, b, *a: fn.bbox_paste(b, **kw))
    check_message(error_of(make(ratio=0.5), [[B2]]), "bbox_paste", "argument 'ratio' must be >= 1, got 0.5.")
    check_message(error_of(make(ratio=2.0, paste_x=1.5), [[B2]]), "bbox_paste",
                  "argument 'paste_x' must be in [0, 1], got 1.5.")
    check_message(error_of(make(), [[B2]]), "bbox_paste", "the argument 'ratio' is required (How "
                  "many times larger the canvas is than the image, at least 1).")
    per_sample = lambda arg: (lambda fn, types, b, v: fn.bbox_paste(b, **{"ratio": 2.0, arg: v}))
    larger = "must be >= 1 (the canvas is that many times larger than the image), got"
    for arg, bad, rest in [
        ("ratio", 0.75, f"{larger} 0.75 for sample 1."),
        ("ratio", np.inf, f"{larger} inf for sample 1."),
        ("paste_x", -0.25, "must be in [0, 1], got -0.25 for sample 1."),
        ("paste_y", 1.5, "must be in [0, 1], got 1.5 for sample 1."),
    ]:
        vals = [np.array(2.0 if arg == "ratio" else 0.5, f32), np.array(bad, f32)]
        msg = error_of(per_sample(arg), [[B2, B2], vals])
        check_message(msg, "bbox_paste", f"argument '{arg}' {rest}")


def test_coord_flip_errors():
    p2 = np.zeros((3, 2), f32)
    make = lambda **kw: (lambda fn, types, p: fn.coord_flip(p, **kw))
    for layout in ["ab", "xx", "XY", "x y"]:
        check_message(error_of(make(layout=layout), [[p2]]), "coord_flip",
                      "argument 'layout' must name the coordinates with the letters x, y and z, each at "
                      f"most once (\"xy\", \"yx\", \"xyz\", ...), got \"{layout}\".")
    # Sample 0 is one the layout fits (points without coordinates fit any).
    for layout, good, pts, want in [("xy", p2, np.zeros((3, 3), f32), "xyz"),
                                    ("yz", np.zeros((2, 0), f32), p2, "xy"),
                                    ("yx", p2, np.zeros((2, 1), f32), "x"),
                                    ("z", np.zeros((2, 0), f32), p2, "xy")]:
        nd = pts.shape[1]
        check_message(error_of(make(layout=layout), [[good, pts]]), "coord_flip",
                      f"argument 'layout' is \"{layout}\", but sample 1 has points of {nd} coordinates "
                      f"(shape {pts.shape}): the layout must name them with its first {nd} letters, a "
                      f"permutation of \"{want}\".")
    for shape in [(4,), (2, 4), (2, 2, 2)]:
        check_message(error_of(make(), [[np.zeros(shape, f32)]]), "coord_flip",
                      f"sample 0 of the coordinates has shape {shape}; give points as [N, ndim] (one "
                      "point per row, ndim 1 to 3 coordinates in the order of 'layout').")
    check_message(error_of(make(), [[p2.astype(np.float64)]], TypeError), "coord_flip",
                  "the coordinates (input 0) must be float32, got float64; convert them with "
                  "fn.cast(coords, dtype=types.FLOAT).")


def test_bb_flip_argument_type_errors():
    with pytest.raises(TypeError, match=r"fn\.bb_flip.*argument 'horizontal' expects int, got float 0\.5"):
        run(stoker_lib(), lambda fn, types, b: fn.bb_flip(b, horizontal=0.5), [[B2]])


def test_box_encoder_argument_errors():
    make = lambda **kw: (lambda fn, types, b, l: fn.box_encoder(b, l, **kw))
    data = [[B2], [np.array([1, 2], np.int32)]]
    cases = [
        (dict(anchors=[0, 0, 1, 1, 0.5]), "argument 'anchors' has 5 values; it takes 4 per anchor (left, "
                                          "top, right, bottom), so the count must be a multiple of 4."),
        (dict(anchors=[]), "argument 'anchors' takes at least 4 values, got 0: []."),
        (dict(anchors=[0, 0, 1, 1, 0.6, 0.5, 0.4, 0.7]),
         "argument 'anchors' has anchor 1 = (0.6, 0.5, 0.4, 0.7), which is not an ltrb box: right must "
         "be >= left and bottom >= top, all finite."),
        (dict(anchors=[0, 0, 1, float("nan")]),
         "argument 'anchors' has anchor 0 = (0, 0, 1, nan), which is not an ltrb box: right must be >= "
         "left and bottom >= top, all finite."),
        (dict(anchors=QUADRANTS, criteria=1.5), "argument 'criteria' must be in [0, 1], got 1.5."),
        (dict(anchors=QUADRANTS, criteria=-0.1), "argument 'criteria' must be in [0, 1], got -0.1."),
        (dict(anchors=QUADRANTS, means=[0, 0, 0]), "argument 'means' takes 4 values, got 3: [0, 0, 0]."),
        (dict(anchors=QUADRANTS, stds=[1, 0, 1, 1]),
         "argument 'stds' must be nonzero and finite (the offsets are divided by them), got (1, 0, 1, 1)."),
        (dict(anchors=QUADRANTS, offset=True, scale=0.0),
         "argument 'scale' must be nonzero and finite with offset=True (the offsets are divided by the "
         "anchors' scaled sizes), got 0."),
    ]
    for kw, rest in cases:
        check_message(error_of(make(**kw), data), "box_encoder", rest)
    # scale 0 without offset is unused, as in DALI.
    run(stoker_lib(), make(anchors=QUADRANTS, scale=0.0), data)


def test_box_encoder_input_errors():
    make = lambda fn, types, b, l: fn.box_encoder(b, l, anchors=QUADRANTS)
    l2 = np.array([1, 2], np.int32)
    check_message(error_of(make, [[B2.astype(np.float64)], [l2]], TypeError), "box_encoder",
                  "the boxes (input 0) must be float32 relative coordinates, got float64; convert them "
                  "with fn.cast(boxes, dtype=types.FLOAT).")
    check_message(error_of(make, [[B2], [l2.astype(f32)]], TypeError), "box_encoder",
                  "the labels (input 1) must be integers, got float32; convert them with "
                  "fn.cast(labels, dtype=types.INT32).")
    none = np.zeros((0,), f32)  # a flat empty list: no boxes
    for good, shape in [(B2, (2, 5)), (none, (8,)), (None, (1, 2, 4))]:
        boxes = [np.zeros(shape, f32)] if good is None else [good, np.zeros(shape, f32)]
        labels = [np.zeros(len(b), np.int32) for b in boxes]
        check_message(error_of(make, [boxes, labels]), "box_encoder",
                      f"sample {len(boxes) - 1} of the boxes has shape {shape}, which is not a list "
                      "of boxes; give them as [N, 4] (one ltrb box per row).")
    for labels in [np.array([1], np.int32), np.array([[1, 2]], np.int32), np.array([[1, 2], [3, 4]], np.int32)]:
        good = l2 if labels.ndim == 1 else l2.reshape(2, 1)
        check_message(error_of(make, [[B2, B2], [good, labels]]), "box_encoder",
                      f"sample 1 has 2 boxes but labels of shape {labels.shape}; give one label per box, "
                      "shape [2] or [2, 1].")
    bad = [np.array([[0.1, 0.1, 0.2, 0.2], [0.6, 0.6, 0.2, 0.9]], f32),
           np.array([[0.1, np.nan, 0.2, 0.2], [0, 0, 1, 1]], f32)]
    for k, b in enumerate(bad):
        msg = error_of(make, [[B2, b], [l2, l2]])
        box = "(0.6, 0.6, 0.2, 0.9)" if k == 0 else "(0.1, nan, 0.2, 0.2)"
        check_message(msg, "box_encoder", f"box {1 - k} is {box}, which is not an ltrb box: right must be "
                      ">= left and bottom >= top, all finite. box_encoder takes (left, top, right, bottom); "
                      "readers.coco gives them with ltrb=True.", sample=1)
