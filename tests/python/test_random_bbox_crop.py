"""random_bbox_crop against a NumPy statement of DALI's rules (which boxes a window keeps, how
they are clipped and renormalized, when a window meets its threshold), checked on stoker's
windows and on DALI 2.4's: on the COCO test photos (readers.coco with ratio and ltrb) and on
synthetic boxes. Where a setting leaves one possible result (the default arguments, a threshold
only one window reaches), stoker's outputs must equal DALI's exactly; elsewhere the random
numbers differ (stoker's own streams), so the distributions of the choices are compared. Then
thread counts, per-sample arguments, the crop fed to fn.slice / decoders.image_slice, and every
error message."""
import numpy as np
import pytest

from stoker import fn, ops, pipeline_def, types
from _dali_ref import error_checker, real_dali

check_error = error_checker(__file__)

COCO_ARGS = dict(ratio=True, ltrb=True)


def stoker_lib():
    return fn, types, pipeline_def


def lib_of(name):
    return stoker_lib() if name == "stoker" else real_dali()


def constant(batch):
    return lambda: batch


def crop_run(lib, boxes, labels=None, *, iterations=1, num_threads=2, seed=3, tensor_args=None,
             **kw):
    """fn.random_bbox_crop of `lib` on the same batch of boxes (and labels) each iteration:
    per iteration, the outputs as lists of NumPy arrays, then their dtype names."""
    fn_, types_, pdef = lib
    tensor_args = tensor_args or {}

    @pdef(batch_size=len(boxes), num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        b = fn_.external_source(source=lambda: boxes, batch=True)
        ins = [b]
        if labels is not None:
            ins.append(fn_.external_source(source=lambda: labels, batch=True))
        targs = {k: fn_.external_source(source=constant(v), batch=True)
                 for k, v in tensor_args.items()}
        out = fn_.random_bbox_crop(*ins, **kw, **targs)
        return tuple(out)

    p = pipe()
    p.build()
    runs = []
    for _ in range(iterations):
        outs = p.run()
        runs.append(([[np.array(o.at(i)) for i in range(len(boxes))] for o in outs],
                     [np.array(o.at(0)).dtype.name for o in outs], [o.layout() for o in outs]))
    return runs if iterations > 1 else runs[0]


def coco_run(lib, testdata, *, batch_size=8, iterations=1, num_threads=2, seed=3,
             skip_empty=True, **kw):
    """readers.coco(ratio=True, ltrb=True) -> random_bbox_crop(boxes, labels, **kw): per
    iteration (input boxes, input labels, outputs)."""
    fn_, types_, pdef = lib
    root = testdata / "coco"

    @pdef(batch_size=batch_size, num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        _, b, l = fn_.readers.coco(file_root=str(root / "images"),
                                   annotations_file=str(root / "instances.json"),
                                   skip_empty=skip_empty, **COCO_ARGS)
        return (b, l) + tuple(fn_.random_bbox_crop(b, l, **kw))

    p = pipe()
    p.build()
    runs = []
    for _ in range(iterations):
        outs = [[np.array(o.at(i)) for i in range(batch_size)] for o in p.run()]
        runs.append((outs[0], outs[1], outs[2:]))
    return runs


# ---- DALI's rules in NumPy, float32 in DALI's order of operations

def corners(boxes, layout="xyXY"):
    """[N, 2nd] boxes in `layout` -> (lo, hi), [N, nd] float32 each, in x, y(, z) order."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, len(layout))
    nd = len(layout) // 2
    lo = np.stack([boxes[:, layout.index(c)] for c in "xyz"[:nd]], axis=1)
    if any(c in layout for c in "WHD"):
        hi = np.stack([boxes[:, layout.index(c)] for c in "WHD"[:nd]], axis=1) + lo
    else:
        hi = np.stack([boxes[:, layout.index(c)] for c in "XYZ"[:nd]], axis=1)
    return lo, hi


def from_corners(lo, hi, layout="xyXY"):
    nd = len(layout) // 2
    out = np.zeros((len(lo), 2 * nd), np.float32)
    for k, c in enumerate(layout):
        if c in "xyz":
            out[:, k] = lo[:, "xyz".index(c)]
        elif c in "XYZ":
            out[:, k] = hi[:, "XYZ".index(c)]
        else:
            d = "WHD".index(c)
            out[:, k] = hi[:, d] - lo[:, d]
    return out


def volume(lo, hi):
    e = (hi - lo).astype(np.float32)
    v = e[..., 0]
    for d in range(1, e.shape[-1]):
        v = (v * e[..., d]).astype(np.float32)
    return v


def intersection(wlo, whi, lo, hi):
    ilo, ihi = np.maximum(lo, wlo), np.minimum(hi, whi)
    v = volume(ilo, ihi)
    return np.where(np.all(ihi > ilo, axis=-1), v, np.float32(0))


def metric(wlo, whi, lo, hi, kind="iou"):
    inter = intersection(wlo, whi, lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "iou":
            union = (volume(wlo, whi) + volume(lo, hi)).astype(np.float32) - inter
            return np.where(inter == 0, np.float32(0), inter / union).astype(np.float32)
        vol = volume(lo, hi)
        return np.where(vol > 0, inter / vol, np.float32(0)).astype(np.float32)


def keeps(wlo, whi, lo, hi, prune=None):
    """DALI's rule: the centroid in [lo, hi) on every axis, or (bbox_prune_threshold) some of the
    box inside and at least that fraction of its volume."""
    if prune is None:
        c = np.float32(0.5) * (hi + lo)
        return np.all((c >= wlo) & (c < whi), axis=-1)
    inter = intersection(wlo, whi, lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = inter / volume(lo, hi)
    return (inter > 0) & (frac >= np.float32(prune))


def remap(lo, hi, wlo, whi):
    ext = whi - wlo
    start = (np.maximum(wlo, lo) - wlo) / ext
    end = (np.minimum(whi, hi) - wlo) / ext
    return np.clip(start, 0, 1).astype(np.float32), np.clip(end, 0, 1).astype(np.float32)


def rel_window(anchor, shape, input_shape=None):
    """The window relative to the image, as the operator had it: hi = anchor + shape in
    relative mode; from pixels (crop_shape) hi = crop / in + anchor / in."""
    anchor, shape = np.float32(anchor), np.float32(shape)
    if input_shape is None:
        return anchor, (anchor + shape).astype(np.float32)
    ins = np.asarray(input_shape, np.float32)
    lo = (anchor / ins).astype(np.float32)
    return lo, (shape / ins + lo).astype(np.float32)


def is_no_crop(anchor, shape):
    return np.all(anchor == 0) and np.all(shape == 1)


def check_sample(in_boxes, anchor, shape, out_boxes, indices=None, *, layout="xyXY",
                 prune=None, input_shape=None, exact=False):
    """The boxes a window kept are exactly those the rule keeps, mapped into the window; the
    whole image ("no crop") keeps every box as it was. Returns the kept indices."""
    lo, hi = corners(in_boxes, layout)
    if input_shape is None and is_no_crop(anchor, shape):
        np.testing.assert_array_equal(out_boxes.reshape(-1, 2 * lo.shape[1]),
                                      from_corners(lo, hi, layout))
        return np.arange(len(lo))
    wlo, whi = rel_window(anchor, shape, input_shape)
    kept = np.nonzero(keeps(wlo, whi, lo, hi, prune))[0]
    if indices is not None:
        np.testing.assert_array_equal(indices, kept)
    assert out_boxes.shape == (len(kept), 2 * lo.shape[1])
    rlo, rhi = remap(lo[kept], hi[kept], wlo, whi)
    want = from_corners(rlo, rhi, layout)
    if exact:
        np.testing.assert_array_equal(out_boxes, want)
    else:
        np.testing.assert_allclose(out_boxes, want, atol=2e-6, rtol=0)
    return kept


# ---- deterministic settings: stoker equals DALI exactly

def test_default_arguments_equal_dali_on_coco(testdata):
    """scaling [1, 1] and aspect ratio 1: every window is the whole image, whether "no crop" is
    drawn or threshold 0: one possible answer, which DALI must give too."""
    dali = real_dali()
    kw = dict(output_bbox_indices=True)
    mine = coco_run(stoker_lib(), testdata, iterations=3, skip_empty=False, **kw)
    ref = coco_run(dali, testdata, iterations=3, skip_empty=False, **kw)
    samples = 0
    for (b, l, outs), (rb, rl, routs) in zip(mine, ref):
        for x, y in zip(b + l, rb + rl):
            np.testing.assert_array_equal(x, y)  # the readers agree
        assert len(outs) == len(routs) == 5
        for o, r in zip(outs, routs):
            for a, c in zip(o, r):
                assert a.dtype == c.dtype and a.shape == c.shape
                np.testing.assert_array_equal(a, c)
        for i in range(len(b)):
            np.testing.assert_array_equal(outs[0][i], [0, 0])
            np.testing.assert_array_equal(outs[1][i], [1, 1])
            np.testing.assert_array_equal(outs[2][i], b[i])
            np.testing.assert_array_equal(outs[3][i], l[i])
            samples += 1
    assert samples == 24


# Boxes for a window of crop_shape 4 x 4 (x 4) on an 8 x 8 (x 8) image: the first is exactly the
# window at anchor (2, 4) (, 0), which is then the only one of IoU 1 and the only one containing
# a box whole (the others are larger than a window on some axis), so thresholds=[1.0] leaves
# one answer. The others test the keep rule at that window: one has its centre on the window's
# high edge (out), some are partly inside.
UNIQUE_2D = np.array([[0.25, 0.5, 0.75, 1.0],
                      [0.1, 0.05, 0.7, 0.3],
                      [0.55, 0.2, 0.95, 0.8],
                      [0.05, 0.45, 0.6, 0.9],
                      [0.3, 0.3, 0.9, 0.95],
                      [0.0, 0.0, 1.0, 1.0]], np.float32)
UNIQUE_3D = np.array([[0.25, 0.5, 0.0, 0.75, 1.0, 0.5],
                      [0.1, 0.05, 0.1, 0.7, 0.3, 0.3],
                      [0.55, 0.2, 0.0, 0.95, 0.8, 0.9],
                      [0.05, 0.45, 0.2, 0.6, 0.9, 0.4],
                      [0.3, 0.3, 0.3, 0.9, 0.95, 0.4]], np.float32)


def relayout(boxes, layout):
    nd = boxes.shape[1] // 2
    return from_corners(boxes[:, :nd], boxes[:, nd:], layout)


@pytest.mark.parametrize("nd, layout", [(2, "xyXY"), (2, "xyWH"), (2, "YXyx"), (3, "xyzXYZ"),
                                        (3, "zyxDHW")])
@pytest.mark.parametrize("threshold_type", ["iou", "overlap"])
@pytest.mark.parametrize("prune", [None, 0.0, 0.3, 1.0])
def test_unique_window_equals_dali(nd, layout, threshold_type, prune):
    dali = real_dali()
    boxes = relayout(UNIQUE_2D if nd == 2 else UNIQUE_3D, layout)
    n = len(boxes)
    labels = [np.arange(n, dtype=np.int32) * 10, np.arange(2 * n, dtype=np.int32).reshape(n, 2)]
    kw = dict(thresholds=[1.0], threshold_type=threshold_type, all_boxes_above_threshold=False,
              input_shape=[8] * nd, crop_shape=[4] * nd, bbox_layout=layout,
              output_bbox_indices=True)
    if prune is not None:
        kw["bbox_prune_threshold"] = prune
    for lab in labels:
        batch = [boxes, boxes[:1], boxes]
        labs = [lab, lab[:1], lab]
        mine, kinds, layouts = crop_run(stoker_lib(), batch, labs, **kw)
        ref, rkinds, rlayouts = crop_run(dali, batch, labs, **kw)
        assert (kinds, layouts) == (rkinds, rlayouts) == (["float32"] * 3 + ["int32"] * 2,
                                                          [""] * 5)
        for o, r in zip(mine, ref):
            for a, c in zip(o, r):
                assert a.shape == c.shape
                np.testing.assert_array_equal(a, c)
        anchor = [2, 4, 0][:nd]
        for i in range(3):
            np.testing.assert_array_equal(mine[0][i], anchor)
            np.testing.assert_array_equal(mine[1][i], [4] * nd)
            kept = check_sample(batch[i], mine[0][i], mine[1][i], mine[2][i], mine[4][i],
                                layout=layout, prune=prune, input_shape=[8] * nd, exact=True)
            np.testing.assert_array_equal(mine[3][i], labs[i][kept])
        if prune is None and nd == 2:
            assert list(mine[4][0]) == [0, 3, 4, 5]  # box 2's centre is on the high edge: out


def test_unique_window_with_shape_layout_equals_dali():
    """shape_layout="HW": crop_shape and input_shape are read (height, width); the outputs stay
    (x, y)."""
    dali = real_dali()
    boxes = np.array([[0.25, 0.5, 0.5, 1.0], [0.1, 0.1, 0.9, 0.9]], np.float32)
    kw = dict(thresholds=[1.0], input_shape=[8, 16], crop_shape=[4, 4], shape_layout="HW",
              all_boxes_above_threshold=False,
              output_bbox_indices=True, allow_no_crop=False)
    mine, _, _ = crop_run(stoker_lib(), [boxes], **kw)
    ref, _, _ = crop_run(dali, [boxes], **kw)
    for o, r in zip(mine, ref):
        np.testing.assert_array_equal(o[0], r[0])
    np.testing.assert_array_equal(mine[0][0], [4, 4])
    np.testing.assert_array_equal(mine[1][0], [4, 4])


def test_no_crop_keeps_boxes_as_they_were():
    """"no crop": anchor 0, shape 1, every box unchanged (xyWH boxes go through their corners)."""
    dali = real_dali()
    boxes = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.6, 0.3, 0.1]], np.float32)
    kw = dict(bbox_layout="xyWH", scaling=[1.0, 1.0], thresholds=[0.0], output_bbox_indices=True)
    mine, _, _ = crop_run(stoker_lib(), [boxes], **kw)
    ref, _, _ = crop_run(dali, [boxes], **kw)
    for o, r in zip(mine, ref):
        np.testing.assert_array_equal(o[0], r[0])
    lo, hi = corners(boxes, "xyWH")
    np.testing.assert_array_equal(mine[2][0], from_corners(lo, hi, "xyWH"))


# ---- random settings: the rule holds for every window, stoker's and DALI's

SSD = dict(thresholds=[0.0, 0.1, 0.3, 0.5, 0.7, 0.9], scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0],
           allow_no_crop=True, num_attempts=50)


@pytest.mark.parametrize("libname", ["stoker", "dali"])
@pytest.mark.parametrize("prune", [None, 0.0, 0.5])
def test_ssd_crops_on_coco_keep_the_boxes_the_rule_keeps(testdata, libname, prune):
    lib = lib_of(libname)
    kw = dict(SSD, output_bbox_indices=True)
    if prune is not None:
        kw["bbox_prune_threshold"] = prune
    crops = no_crops = 0
    for b, l, (anchor, shape, boxes, labels, idx) in coco_run(lib, testdata, iterations=4, **kw):
        for i in range(len(b)):
            kept = check_sample(b[i], anchor[i], shape[i], boxes[i], idx[i], prune=prune)
            np.testing.assert_array_equal(labels[i], l[i][kept])
            assert labels[i].dtype == np.int32 and idx[i].dtype == np.int32
            if is_no_crop(anchor[i], shape[i]):
                no_crops += 1
                continue
            crops += 1
            assert len(kept) >= 1
            assert np.all(anchor[i] >= 0) and np.all(anchor[i] + shape[i] <= 1 + 1e-6)
            assert 0.3 - 1e-6 <= shape[i].max() <= 1.0
            assert 0.5 - 1e-6 <= shape[i][0] / shape[i][1] <= 2.0 + 1e-6
    assert crops > 10 and no_crops > 0


@pytest.mark.parametrize("libname", ["stoker", "dali"])
@pytest.mark.parametrize("kind, threshold, all_boxes, ranges", [
    ("iou", 0.5, False, ([0.05, 1.0], [0.05, 20.0])),
    ("overlap", 1.0, False, ([0.3, 1.0], [0.5, 2.0])),
    ("overlap", 0.5, True, ([0.3, 1.0], [0.5, 2.0])),
    ("overlap", 0.9, True, ([0.3, 1.0], [0.5, 2.0]))])
def test_every_window_meets_its_threshold(testdata, libname, kind, threshold, all_boxes, ranges):
    """One threshold and no "no crop": every window reaches it (with all boxes or one) and keeps
    a box. On the COCO photos and on synthetic boxes. (Some photos have one thin box, 0.06 x
    0.58: IoU 0.5 needs windows of such shapes.) total_num_attempts only keeps DALI from
    searching forever if a window were out of reach."""
    lib = lib_of(libname)
    kw = dict(thresholds=[threshold], threshold_type=kind, all_boxes_above_threshold=all_boxes,
              allow_no_crop=False, scaling=ranges[0], aspect_ratio=ranges[1], num_attempts=10,
              total_num_attempts=300000)
    rng = np.random.default_rng(5)
    synth = []
    for n in [1, 2, 3, 1, 2, 5, 1, 2]:
        c = rng.uniform(0.3, 0.7, (n, 2))
        s = rng.uniform(0.1, 0.3, (n, 2))
        synth.append(np.concatenate([c - s, c + s], axis=1).astype(np.float32))
    batches = [(b, out) for b, _, out in coco_run(lib, testdata, iterations=3, **kw)]
    batches += [(synth, out) for out in [r[0] for r in crop_run(lib, synth, iterations=3, **kw)]]
    for b, (anchor, shape, boxes, *_) in batches:
        for i in range(len(b)):
            lo, hi = corners(b[i])
            wlo, whi = rel_window(anchor[i], shape[i])
            m = metric(wlo, whi, lo, hi, kind)
            assert (m.min() if all_boxes else m.max()) >= np.float32(threshold) - 1e-6
            assert len(check_sample(b[i], anchor[i], shape[i], boxes[i])) >= 1


@pytest.mark.parametrize("kw", [
    dict(SSD, num_attempts=1),
    dict(SSD, num_attempts=3, all_boxes_above_threshold=False),
    dict(SSD, threshold_type="overlap", num_attempts=2, bbox_prune_threshold=0.3),
    # A fixed ratio that is not a power of two: DALI's exact test of the ratio turns away about
    # 4 windows in 10 by a last bit, which makes "no crop" more frequent; stoker does the same.
    dict(SSD, aspect_ratio=[0.75, 0.75], num_attempts=1),
], ids=["ssd", "any-box", "overlap-prune", "fixed-ratio"])
def test_choices_distributed_as_dali(kw):
    """DALI's numbers are not stoker's, but the choices follow the same law: the share of "no
    crop", the window sizes and places, the boxes kept, over 3000 samples each."""
    dali = real_dali()
    box = np.array([[0.2, 0.3, 0.5, 0.8], [0.6, 0.1, 0.9, 0.3]], np.float32)

    def stats(lib):
        runs = crop_run(lib, [box] * 100, iterations=30, **kw)
        anchors = np.concatenate([np.stack(r[0][0]) for r in runs])
        shapes = np.concatenate([np.stack(r[0][1]) for r in runs])
        kept = np.array([len(x) for r in runs for x in r[0][2]])
        nocrop = np.all(shapes == 1, axis=1) & np.all(anchors == 0, axis=1)
        crop = ~nocrop
        return dict(no_crop=nocrop.mean(), area=np.prod(shapes[crop], axis=1).mean(),
                    width=shapes[crop, 0].mean(), x=anchors[crop, 0].mean(),
                    y=anchors[crop, 1].mean(), kept=kept[crop].mean(), two=(kept[crop] == 2).mean())

    mine, ref = stats(stoker_lib()), stats(dali)
    # 3000 samples: a share's standard error is at most 0.009, a mean's about 0.004.
    for k in ("no_crop", "two"):
        assert abs(mine[k] - ref[k]) < 0.05, (k, mine, ref)
    for k in ("area", "width", "x", "y", "kept"):
        assert abs(mine[k] - ref[k]) < 0.03 * max(1, ref[k]), (k, mine, ref)


@pytest.mark.parametrize("libname", ["stoker", "dali"])
def test_3d_boxes_keep_the_boxes_the_rule_keeps(libname):
    """3-D boxes (xyzXYZ): aspect ratios of x/y, x/z and y/z, windows and kept boxes by the rule."""
    lib = lib_of(libname)
    rng = np.random.default_rng(4)
    boxes = []
    for n in (1, 3, 0, 2):
        c = rng.uniform(0.3, 0.7, (n, 3))
        h = rng.uniform(0.05, 0.3, (n, 3))
        boxes.append(np.concatenate([c - h, c + h], 1).astype(np.float32))
    ar = [0.5, 2.0, 0.75, 1.5, 1.0, 1.0]
    kw = dict(thresholds=[0.0, 0.2], threshold_type="overlap", scaling=[0.4, 1.0],
              aspect_ratio=ar, num_attempts=20, output_bbox_indices=True)
    for (anchor, shape, out, idx), kinds, _ in crop_run(lib, boxes, iterations=4, **kw):
        assert kinds == ["float32"] * 3 + ["int32"]
        for i, b in enumerate(boxes):
            assert anchor[i].shape == shape[i].shape == (3,)
            check_sample(b, anchor[i], shape[i], out[i], idx[i], layout="xyzXYZ")
            if is_no_crop(anchor[i], shape[i]):
                continue
            s = shape[i]
            for (p, q), k in zip([(0, 1), (0, 2), (1, 2)], range(3)):
                lo, hi = ar[2 * k], ar[2 * k + 1]
                assert lo - 1e-5 <= s[p] / s[q] <= hi + 1e-5


def test_fixed_crop_shape_anchor_distribution_as_dali():
    """crop_shape: the anchor is a whole pixel, uniform over the places the window fits (and
    the window may be larger than the image: negative anchors), as in DALI."""
    dali = real_dali()
    box = np.array([[0.0, 0.0, 1.0, 1.0]], np.float32)
    kw = dict(input_shape=[10, 8], crop_shape=[4, 11], bbox_prune_threshold=0.0)

    def anchors(lib):
        runs = crop_run(lib, [box] * 100, iterations=20, **kw)
        return np.concatenate([np.stack(r[0][0]) for r in runs])

    mine, ref = anchors(stoker_lib()), anchors(dali)
    for a in (mine, ref):
        assert set(np.unique(a[:, 0])) == set(range(0, 7))
        assert set(np.unique(a[:, 1])) == set(range(-3, 1))
    np.testing.assert_allclose(np.bincount(mine[:, 0].astype(int)) / 2000,
                               np.bincount(ref[:, 0].astype(int)) / 2000, atol=0.04)


def test_no_boxes_take_any_window_as_dali():
    """A sample without boxes: the first window of a valid aspect ratio is taken (DALI 2.4),
    whatever the threshold; the outputs are empty, typed as DALI's."""
    dali = real_dali()
    empty = np.zeros((0, 4), np.float32)
    labels = [np.zeros((0,), np.int32)] * 2
    kw = dict(thresholds=[0.9], allow_no_crop=False, scaling=[0.3, 0.6], aspect_ratio=[0.5, 2],
              output_bbox_indices=True)
    for lib in (stoker_lib(), dali):
        outs, kinds, _ = crop_run(lib, [empty, empty], labels, **kw)
        assert kinds == ["float32"] * 3 + ["int32"] * 2
        for i in range(2):
            assert outs[2][i].shape == (0, 4) and outs[3][i].shape == (0,)
            assert outs[4][i].shape == (0,)
            assert 0.3 <= outs[1][i].max() <= 0.6
            assert not is_no_crop(outs[0][i], outs[1][i])


@pytest.mark.parametrize("kw, labels", [
    (dict(), None),
    (dict(output_bbox_indices=True), None),
    (dict(ltrb=False), "1d"),
    (dict(bbox_layout="xyWH", output_bbox_indices=True), "2d"),
    (dict(SSD), "1d"),
    (dict(input_shape=[640, 480], crop_shape=[300, 300]), "1d"),
    (dict(input_shape=[640, 480], scaling=[0.3, 0.9], aspect_ratio=[0.5, 2]), None),
])
def test_outputs_as_dali(kw, labels):
    """The number of outputs, their dtypes, layouts and shapes (but for the number of boxes,
    which depends on the window) equal DALI's for the same arguments."""
    dali = real_dali()
    rng = np.random.default_rng(1)
    boxes = []
    for n in (3, 0, 5):
        lo = rng.uniform(0, 0.5, (n, 2))
        boxes.append(np.concatenate([lo, lo + rng.uniform(0.1, 0.5, (n, 2))], 1).astype(np.float32))
    if kw.get("bbox_layout") == "xyWH" or kw.get("ltrb") is False:
        boxes = [relayout(b, "xyWH") for b in boxes]
    labs = None
    if labels == "1d":
        labs = [np.arange(len(b), dtype=np.int32) for b in boxes]
    elif labels == "2d":
        labs = [np.arange(3 * len(b), dtype=np.int32).reshape(-1, 3) for b in boxes]
    mine, kinds, layouts = crop_run(stoker_lib(), boxes, labs, **kw)
    ref, rkinds, rlayouts = crop_run(dali, boxes, labs, **kw)
    assert (len(mine), kinds, layouts) == (len(ref), rkinds, rlayouts)
    for o, r in zip(mine, ref):
        for a, c in zip(o, r):
            assert a.ndim == c.ndim and a.shape[1:] == c.shape[1:]
    for i, b in enumerate(boxes):
        layout = "xyWH" if kw.get("bbox_layout") == "xyWH" or kw.get("ltrb") is False else "xyXY"
        ins = kw.get("input_shape") if "crop_shape" in kw else None
        idx = mine[-1][i] if kw.get("output_bbox_indices") else None
        kept = check_sample(b, mine[0][i], mine[1][i], mine[2][i], idx, layout=layout,
                            input_shape=ins)
        if labs is not None:
            np.testing.assert_array_equal(mine[3][i], labs[i][kept])


def test_total_num_attempts_takes_the_best_window():
    """IoU 0.99 with a small box is out of reach: after total_num_attempts the best window is
    taken (DALI warns; stoker does not), and the rule still decides its boxes."""
    box = np.array([[0.4, 0.4, 0.45, 0.5], [0.0, 0.0, 0.2, 0.2]], np.float32)
    kw = dict(thresholds=[0.99], allow_no_crop=False, scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0],
              total_num_attempts=30, num_attempts=4, quiet=True)
    for lib in (stoker_lib(), real_dali()):
        (anchor, shape, boxes), _, _ = crop_run(lib, [box] * 4, **kw)
        for i in range(4):
            lo, hi = corners(box)
            wlo, whi = rel_window(anchor[i], shape[i])
            assert metric(wlo, whi, lo, hi).min() < 0.99
            check_sample(box, anchor[i], shape[i], boxes[i])


def test_fixed_aspect_ratio_in_pixels_fits_the_image():
    """With input_shape, aspect_ratio is of pixels. DALI 2.4 keeps the largest extent in pixels
    when it fixes the ratio, and so makes windows larger than a non-square image (0.9 x 1.8);
    stoker scales them down to fit, still square in pixels."""
    box = np.array([[0.4, 0.4, 0.6, 0.6]], np.float32)
    kw = dict(input_shape=[200, 100], scaling=[0.9, 0.9], allow_no_crop=False)
    (anchor, shape, _), _, _ = crop_run(stoker_lib(), [box] * 8, **kw)
    for a, s in zip(anchor, shape):
        np.testing.assert_allclose(s[0] * 200 / (s[1] * 100), 1.0, rtol=1e-5)
        np.testing.assert_allclose(s, [0.5, 1.0], rtol=1e-6)
        assert a[1] == 0 and 0 <= a[0] <= 0.5
    try:
        dali = real_dali()
    except pytest.skip.Exception:
        return
    (anchor, shape, _), _, _ = crop_run(dali, [box] * 8, **kw)
    assert np.all(np.stack(shape)[:, 1] > 1.5)  # DALI's reach outside the image


# ---- determinism and per-sample behaviour

def test_same_seed_same_crops_whatever_num_threads(testdata):
    kw = dict(SSD, output_bbox_indices=True)
    runs = [coco_run(stoker_lib(), testdata, iterations=3, num_threads=t, **kw) for t in (1, 2, 4)]
    for other in runs[1:]:
        for (_, _, a), (_, _, b) in zip(runs[0], other):
            for x, y in zip(a, b):
                for u, v in zip(x, y):
                    np.testing.assert_array_equal(u, v)
    again = coco_run(stoker_lib(), testdata, iterations=3, num_threads=3, **kw)
    for (_, _, a), (_, _, b) in zip(runs[0], again):
        for u, v in zip(a[0] + a[1], b[0] + b[1]):
            np.testing.assert_array_equal(u, v)
    other_seed = coco_run(stoker_lib(), testdata, iterations=3, seed=4, **kw)
    differ = sum(not np.array_equal(u, v) for (_, _, a), (_, _, b) in zip(runs[0], other_seed)
                 for u, v in zip(a[0], b[0]))
    assert differ > 5
    # Iterations and samples draw from their own streams.
    firsts = [tuple(a[0][0]) for _, _, a in runs[0]]
    assert len(set(firsts)) > 1


def test_per_sample_crop_and_input_shapes():
    """crop_shape and input_shape as per-sample tensors: each sample gets its own window size,
    in pixels, inside its image, and its boxes by the rule."""
    boxes = [np.array([[0.1, 0.1, 0.9, 0.9]], np.float32),
             np.array([[0.2, 0.2, 0.4, 0.4], [0.5, 0.5, 0.9, 0.7]], np.float32),
             np.zeros((0, 4), np.float32)]
    crops = [np.array(c, np.int32) for c in ([50, 40], [10, 20], [3, 3])]
    images = [np.array(c, np.int32) for c in ([100, 80], [30, 40], [5, 4])]
    runs = crop_run(stoker_lib(), boxes, iterations=5, bbox_prune_threshold=0.0,
                    tensor_args=dict(crop_shape=crops, input_shape=images))
    for (anchor, shape, out), _, _ in runs:
        for i in range(3):
            np.testing.assert_array_equal(shape[i], crops[i])
            assert np.all(anchor[i] >= 0) and np.all(anchor[i] + shape[i] <= images[i])
            assert np.all(anchor[i] == np.floor(anchor[i]))
            check_sample(boxes[i], anchor[i], shape[i], out[i], prune=0.0, input_shape=images[i])
    try:
        dali = real_dali()
    except pytest.skip.Exception:
        return
    (anchor, shape, out), _, _ = crop_run(dali, boxes, bbox_prune_threshold=0.0,
                                          tensor_args=dict(crop_shape=crops, input_shape=images))
    for i in range(3):
        np.testing.assert_array_equal(shape[i], crops[i])
        check_sample(boxes[i], anchor[i], shape[i], out[i], prune=0.0, input_shape=images[i])


def test_samples_of_a_batch_are_independent():
    """Samples with different numbers of boxes (none included) in one batch: each keeps its own
    boxes, labels and indices; a sample's result does not depend on the others."""
    rng = np.random.default_rng(9)
    boxes, labels = [], []
    for n in (4, 0, 1, 7, 2):
        lo = rng.uniform(0, 0.6, (n, 2))
        hi = lo + rng.uniform(0.05, 0.4, (n, 2))
        boxes.append(np.concatenate([lo, hi], 1).astype(np.float32))
        labels.append(rng.integers(0, 80, n).astype(np.int32))
    kw = dict(SSD, output_bbox_indices=True)
    anchor, shape, out, lab, idx = crop_run(stoker_lib(), boxes, labels, **kw)[0]
    for i in range(5):
        kept = check_sample(boxes[i], anchor[i], shape[i], out[i], idx[i])
        np.testing.assert_array_equal(lab[i], labels[i][kept])
    # The same sample 0 in another batch (same position): the same window.
    alone = crop_run(stoker_lib(), boxes[:1] + [boxes[3]], labels[:1] + [labels[3]], **kw)[0]
    np.testing.assert_array_equal(alone[0][0], anchor[0])
    np.testing.assert_array_equal(alone[2][0], out[0])


# ---- the window used to crop pixels

def coordinate_image(h, w):
    """An h x w x 2 uint16 image whose pixels hold their own (x, y)."""
    y, x = np.mgrid[0:h, 0:w]
    return np.dstack([x, y]).astype(np.uint16)


@pytest.mark.parametrize("absolute", [False, True])
def test_slice_keeps_boxes_with_their_pixels(absolute):
    """fn.slice with the anchor and shape: the pixel at each output box's corners, in the cropped
    image, is the pixel of the input box's corner (clipped to the window) in the image."""
    h, w = 120, 160
    img = coordinate_image(h, w)
    rng = np.random.default_rng(3)
    lo = rng.uniform(0, 0.6, (6, 2))
    boxes = np.concatenate([lo, lo + rng.uniform(0.1, 0.4, (6, 2))], 1).astype(np.float32)
    kw = (dict(input_shape=[w, h], crop_shape=[100, 64]) if absolute else
          dict(SSD, allow_no_crop=False))

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=11)
    def pipe():
        im = fn.external_source(source=lambda: [img] * 8, batch=True, layout="HWC")
        b = fn.external_source(source=lambda: [boxes] * 8, batch=True)
        anchor, shape, out = fn.random_bbox_crop(b, **kw)
        crop = fn.slice(im, anchor, shape, normalized_anchor=not absolute,
                        normalized_shape=not absolute)
        return anchor, shape, out, crop

    p = pipe()
    for _ in range(3):
        anchor, shape, out, crop = (list(o) for o in p.run())
        for i in range(8):
            c = np.array(crop[i])
            ch, cw = c.shape[:2]
            a, s = np.array(anchor[i]), np.array(shape[i])
            px0, py0 = (a if absolute else a * [w, h])
            assert abs(cw - (s[0] if absolute else s[0] * w)) <= 1
            assert abs(ch - (s[1] if absolute else s[1] * h)) <= 1
            for bx in np.array(out[i]):
                for fx, fy in ((bx[0], bx[1]), (bx[2], bx[3])):
                    cx = min(int(fx * cw), cw - 1)
                    cy = min(int(fy * ch), ch - 1)
                    # The crop's pixel (cx, cy) is the image's (px0 + cx, py0 + cy).
                    assert abs(int(c[cy, cx, 0]) - (px0 + fx * cw)) <= 1.5
                    assert abs(int(c[cy, cx, 1]) - (py0 + fy * ch)) <= 1.5
            # And that is where the input box's corner was, clipped to the window.
            kept = check_sample(boxes, a, s, np.array(out[i]),
                                input_shape=[w, h] if absolute else None)
            for k, bx in zip(kept, np.array(out[i])):
                x0 = max(boxes[k, 0] * w, px0)
                assert abs((px0 + bx[0] * cw) - x0) <= 1.5


def test_image_slice_crops_the_window(testdata):
    """decoders.image_slice with the window equals fn.slice of the decoded photo, and the boxes
    stay inside the cropped photo."""
    root = testdata / "coco"

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=5)
    def pipe():
        jpegs, b, l = fn.readers.coco(file_root=str(root / "images"),
                                      annotations_file=str(root / "instances.json"),
                                      skip_empty=True, **COCO_ARGS)
        anchor, shape, boxes, labels = fn.random_bbox_crop(b, l, **SSD)
        fused = fn.decoders.image_slice(jpegs, anchor, shape)
        whole = fn.decoders.image(jpegs)
        return fused, fn.slice(whole, anchor, shape), boxes

    p = pipe()
    for _ in range(2):
        fused, sliced, boxes = p.run()
        for i in range(4):
            np.testing.assert_array_equal(np.array(fused[i]), np.array(sliced[i]))
            bx = np.array(boxes[i])
            assert np.all((bx >= 0) & (bx <= 1))


def test_legacy_ops_api():
    boxes = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)]
    labels = [np.array([7], np.int32)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        b = fn.external_source(source=lambda: boxes, batch=True)
        l = fn.external_source(source=lambda: labels, batch=True)
        crop = ops.RandomBBoxCrop(output_bbox_indices=True, **SSD)
        return tuple(crop(b, l))

    outs = pipe().run()
    assert len(outs) == 5
    np.testing.assert_array_equal(np.array(outs[3][0]), [7])


# ---- errors

def stoker_fails(boxes, labels=None, exc=ValueError, tensor_args=None, **kw):
    with pytest.raises(exc) as e:
        crop_run(stoker_lib(), boxes, labels, tensor_args=tensor_args, **kw)
    return e


def dali_also_fails(boxes, labels=None, **kw):
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return
    with pytest.raises(Exception):
        crop_run(lib, boxes, labels, **kw)


B1 = [np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)]


@pytest.mark.parametrize("boxes, labels, exc, rest", [
    ([np.array([0.1, 0.1, 0.5, 0.5], np.float32)], None, ValueError,
     "sample 0: the boxes have shape (4,); give them as [N, 4] (2-D boxes, one per row) or [N, 6] "
     "(3-D boxes)."),
    ([np.array([[0.1, 0.1, 0.5]], np.float32)], None, ValueError,
     "sample 0: the boxes have shape (1, 3); give them as [N, 4] (2-D boxes, one per row) or "
     "[N, 6] (3-D boxes)."),
    ([np.array([[0.1, 0.1, 0.5, 0.5]], np.float32), np.zeros((2, 6), np.float32)], None,
     ValueError, "sample 1: its boxes have 6 coordinates, but sample 0's have 4; the boxes of a "
                 "batch must all be 2-D (4 coordinates) or all 3-D (6)."),
    ([np.array([[0.1, 0.1, 0.5, 0.5]], np.float64)], None, TypeError,
     "the boxes (input 0) must be float32, got float64; convert them with fn.cast(boxes, "
     "dtype=types.FLOAT)."),
    ([B1[0], np.array([[0.1, 0.1, 0.2, 0.2], [0.1, 0.1, 1.01, 0.5]], np.float32)], None,
     ValueError, "sample 1, box 1 (0.1, 0.1, 1.01, 0.5 in bbox_layout \"xyXY\"): on x it spans "
                 "[0.1, 1.01], which is not inside [0, 1]. random_bbox_crop takes boxes relative "
                 "to the image's size (readers.coco(ratio=True) gives them so); if they only "
                 "overshoot by rounding, clamp them with stoker.math.clamp(boxes, 0, 1)."),
    ([np.array([[0.5, 0.1, 0.2, 0.5]], np.float32)], None, ValueError,
     "sample 0, box 0 (0.5, 0.1, 0.2, 0.5 in bbox_layout \"xyXY\"): on x it ends (0.2) before it "
     "starts (0.5). Check bbox_layout: \"xyXY\" is the start and end corners, \"xyWH\" the start "
     "corner and the size."),
    (B1, [np.array([1, 2], np.int32)], ValueError,
     "sample 0: the labels (input 1) have shape (2,) for 1 boxes; give one label (or one row of "
     "labels) per box, shape [1] or [1, ...]."),
])
def test_data_errors(boxes, labels, exc, rest):
    e = stoker_fails(boxes, labels, exc)
    check_error(e, "random_bbox_crop", rest)


def test_data_errors_dali_refuses_too():
    dali_also_fails([np.array([0.1, 0.1, 0.5, 0.5], np.float32)])
    dali_also_fails([np.array([[0.1, 0.1, 1.01, 0.5]], np.float32)])
    dali_also_fails([np.array([[0.1, 0.1, 0.5, 0.5]], np.float64)])


def test_inverted_boxes_dali_accepts():
    """DALI 2.4 takes a box whose end is before its start and returns nonsense for it
    (x from 1.0 to 0.29); stoker says what is wrong (test_data_errors)."""
    try:
        dali = real_dali()
    except pytest.skip.Exception:
        return
    (anchor, shape, out), _, _ = crop_run(dali, [np.array([[0.5, 0.1, 0.2, 0.5]], np.float32)],
                                          allow_no_crop=False, scaling=[0.3, 1.0])
    assert np.all(out[0][:, 2] <= out[0][:, 0])  # a box that ends before it starts


@pytest.mark.parametrize("kw, exc, rest", [
    (dict(bbox_layout="xyXZ"), ValueError,
     "argument 'bbox_layout' must be a permutation of \"xyXY\" or \"xyWH\" (2-D boxes) or of "
     "\"xyzXYZ\" or \"xyzWHD\" (3-D boxes), got \"xyXZ\"."),
    (dict(bbox_layout="xyzXYZ"), ValueError,
     "argument 'bbox_layout' is \"xyzXYZ\", but the boxes have 4 coordinates: it must be a "
     "permutation of \"xyXY\" or \"xyWH\"."),
    (dict(bbox_layout="xyXY", ltrb=True), ValueError,
     "argument 'ltrb' cannot be given with bbox_layout; ltrb is DALI's deprecated form of it: "
     "ltrb=True is bbox_layout=\"xyXY\", ltrb=False is bbox_layout=\"xyWH\"."),
    (dict(shape_layout="WX", input_shape=[4, 4]), ValueError,
     "argument 'shape_layout' must be a permutation of \"WH\" (2-D) or \"WHD\" (3-D), the order "
     "of crop_shape and input_shape, got \"WX\"."),
    (dict(shape_layout="WHD", input_shape=[4, 4, 4]), ValueError,
     "argument 'shape_layout' is \"WHD\", but the boxes are 2-D: it must be a permutation of "
     "\"WH\"."),
    (dict(crop_shape=[4, 4]), ValueError,
     "argument 'crop_shape' needs input_shape: the window's size is in pixels, and the boxes are "
     "relative to the image, whose size input_shape gives."),
    (dict(crop_shape=[4, 4], input_shape=[8, 8], aspect_ratio=[0.5, 2]), ValueError,
     "argument 'aspect_ratio' cannot be given with crop_shape: the window's size is then fixed. "
     "Leave out either aspect_ratio or crop_shape."),
    (dict(crop_shape=[4, 4], input_shape=[8, 8], scaling=[0.5, 1]), ValueError,
     "argument 'scaling' cannot be given with crop_shape: the window's size is then fixed. Leave "
     "out either scaling or crop_shape."),
    (dict(crop_shape=[4, 4], input_shape=[8, 8], allow_no_crop=True), ValueError,
     "argument 'allow_no_crop' cannot be True with crop_shape: every window then has the size "
     "crop_shape gives. Leave it out (with crop_shape it is False) or pass allow_no_crop=False."),
    (dict(crop_shape=[4, 4, 4], input_shape=[8, 8, 8]), ValueError,
     "argument 'input_shape' takes 2 values for 2-D boxes (in the order of shape_layout, \"WH\"), "
     "got 3: [8, 8, 8]."),
    (dict(crop_shape=[4, 0], input_shape=[8, 8]), ValueError,
     "argument 'crop_shape' must be whole numbers of pixels in [1, 2147483647], got [4, 0]."),
    (dict(scaling=[0.8, 0.5]), ValueError,
     "argument 'scaling' must be a range [min, max] with 0 <= min <= max, got [0.8, 0.5]."),
    (dict(scaling=[0.5]), ValueError, "argument 'scaling' takes 2 values, got 1: [0.5]."),
    (dict(aspect_ratio=[0.5, 1, 2, 3]), ValueError,
     "argument 'aspect_ratio' takes 2 values (a range [min, max] of width / height) or, for 3-D "
     "boxes, 6 (ranges of x/y, x/z and y/z), got 4: [0.5, 1, 2, 3]."),
    (dict(aspect_ratio=[2, 0.5]), ValueError,
     "argument 'aspect_ratio' must be ranges [min, max] with 0 <= min <= max and max > 0, got "
     "[2, 0.5]."),
    (dict(thresholds=[0.5, 1.5]), ValueError,
     "argument 'thresholds' must be in [0, 1], got [0.5, 1.5]."),
    (dict(thresholds=[]), ValueError,
     "argument 'thresholds' takes at least 1 values, got 0: []."),
    (dict(threshold_type="area"), ValueError,
     "argument 'threshold_type' must be one of ['iou', 'overlap'], got 'area'."),
    (dict(num_attempts=0), ValueError, "argument 'num_attempts' must be >= 1, got 0."),
    (dict(total_num_attempts=0), ValueError,
     "argument 'total_num_attempts' must be at least 1 (or -1: search until a window meets a "
     "threshold), got 0."),
    (dict(bbox_prune_threshold=1.5), ValueError,
     "argument 'bbox_prune_threshold' must be in [0, 1], got 1.5."),
])
def test_argument_errors(kw, exc, rest):
    e = stoker_fails(B1, exc=exc, **kw)
    check_error(e, "random_bbox_crop", rest)
    if 0 not in kw.get("crop_shape", []):  # DALI takes a crop_shape of 0 pixels
        dali_also_fails(B1, **kw)


def test_per_sample_shape_errors():
    e = stoker_fails(B1 * 2, tensor_args=dict(crop_shape=[np.array([4, 4], np.int32),
                                                          np.array([4], np.int32)]),
                     input_shape=[8, 8])
    check_error(e, "random_bbox_crop", "argument 'crop_shape' takes 2 values for 2-D boxes (in "
                                       "the order of shape_layout, \"WH\"), got 1: [4] for "
                                       "sample 1.")
    e = stoker_fails(B1 * 2, tensor_args=dict(input_shape=[np.array([4, 4], np.int32),
                                                           np.array([-4, 4], np.int32)]))
    check_error(e, "random_bbox_crop", "argument 'input_shape' must be whole numbers of pixels "
                                       "in [1, 2147483647], got [-4, 4] for sample 1.")


def test_unreachable_threshold_is_an_error_not_a_hang():
    """IoU 0.99 with a 0.05 x 0.1 box and windows of at least 0.3: no window can reach it. DALI
    searches forever; stoker stops after a million windows."""
    box = [np.array([[0.4, 0.4, 0.45, 0.5]], np.float32)]
    e = stoker_fails(box, thresholds=[0.99], allow_no_crop=False, scaling=[0.3, 1.0],
                     aspect_ratio=[0.5, 2.0])
    msg = str(e.value)
    check_error(e, "random_bbox_crop", msg[msg.index("sample 0"):])
    prefix = ("sample 0: 1000000 windows were drawn and none met a threshold (thresholds "
              "[0.99]; the best window's smallest IoU with a box was ")
    rest = msg[msg.index("sample 0"):]
    assert rest.startswith(prefix), rest
    best = float(rest[len(prefix):].split(")")[0])
    assert 0.05 < best < 0.99 * 0.5
    assert rest.endswith("). Pass total_num_attempts to take the best window after that many "
                         "attempts, allow_no_crop=True, or lower thresholds.")


def test_no_window_of_valid_aspect_ratio_is_an_error():
    """Extents drawn in [0.5, 0.5] are square; a ratio in [2, 3] never comes."""
    e = stoker_fails(B1, allow_no_crop=False, scaling=[0.5, 0.5], aspect_ratio=[2, 3])
    check_error(e, "random_bbox_crop",
                "sample 0: 1000000 windows were drawn and none had its aspect ratios in "
                "aspect_ratio [2, 3] (extents drawn in scaling [0.5, 0.5]). Widen aspect_ratio or "
                "scaling, or pass total_num_attempts to take the whole image after that many "
                "attempts.")
    (anchor, shape, out), _, _ = crop_run(stoker_lib(), B1, allow_no_crop=False,
                                          scaling=[0.5, 0.5], aspect_ratio=[2, 3],
                                          total_num_attempts=10)
    np.testing.assert_array_equal(anchor[0], [0, 0])
    np.testing.assert_array_equal(shape[0], [1, 1])
    np.testing.assert_array_equal(out[0], B1[0])
