"""ssd_random_crop, roi_random_crop and random_crop_generator. Their numbers are stoker's own
streams, not DALI's, so every output is checked against the rules it must satisfy (NumPy
statements of DALI's rules), and the choices' distributions against a NumPy simulation of the
same law and against DALI 2.4's; where the arguments leave one answer, outputs equal DALI's
exactly. Images whose pixels hold their own coordinates (and the COCO photos) tie the boxes
out to the pixels cut. Then seeds, thread counts, per-sample arguments and every error."""
import math
import random

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from _dali_ref import error_checker, real_dali

check_error = error_checker(__file__)
F = np.float32


def stoker_lib():
    return fn, types, pipeline_def


def dali_or_none():
    try:
        return real_dali()
    except pytest.skip.Exception:
        return None


def constant(batch):
    return lambda: batch


def run_graph(lib, make, inputs=(), *, batch_size=None, iterations=1, num_threads=2, seed=5,
              tensor_args=None):
    """make(fn, *input nodes, **tensor-arg nodes) in a pipeline of `lib` fed `inputs` (per
    input, a list of samples): per iteration, per output, the samples."""
    fn_, _, pdef = lib
    tensor_args = tensor_args or {}
    bs = batch_size or len(inputs[0])

    @pdef(batch_size=bs, num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        xs = [fn_.external_source(source=constant(d), batch=True) for d in inputs]
        targs = {k: fn_.external_source(source=constant(v), batch=True)
                 for k, v in tensor_args.items()}
        out = make(fn_, *xs, **targs)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    runs = [[[np.array(o.at(i)) for i in range(bs)] for o in p.run()] for _ in range(iterations)]
    return runs if iterations > 1 else runs[0]


# =============================================================================================
# ssd_random_crop

SSD_MIN_IOU = [-1.0, 0.1, 0.3, 0.5, 0.7, 0.9]
IOU_EDGES = [0.1, 0.3, 0.5, 0.7, 0.9]


def coord_image(h, w, dtype=np.uint8):
    """An image whose pixel (y, x) holds (y, x): a crop says where it was cut."""
    yy, xx = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return np.stack([yy, xx], -1).astype(dtype)


def iou(window, boxes):
    """IoU of one ltrb window with [N, 4] ltrb boxes, float64."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    lo, hi = np.maximum(b[:, :2], window[:2]), np.minimum(b[:, 2:], window[2:])
    inter = np.prod(np.clip(hi - lo, 0, None), 1)
    area = np.prod(b[:, 2:] - b[:, :2], 1)
    wa = (window[2] - window[0]) * (window[3] - window[1])
    return inter / (area + wa - inter)


def check_ssd_sample(img, boxes, labels, out_img, out_boxes, out_labels, window, box_tol):
    """The rules one ssd_random_crop result must satisfy, given where it was cut: `window` =
    (x0, y0, x1, y1) in pixels. Returns (cropped, min IoU of the window with the boxes)."""
    h, w = img.shape[:2]
    x0, y0, x1, y1 = window
    np.testing.assert_array_equal(out_img, img[y0:y1, x0:x1])
    cropped = (x0, y0, x1, y1) != (0, 0, w, h)
    if not cropped:
        np.testing.assert_array_equal(out_boxes, boxes)
        np.testing.assert_array_equal(out_labels, labels)
        return False, None
    cw, ch = (x1 - x0) / w, (y1 - y0) / h
    assert 0.3 - 1.0 / w <= cw < 1 + 1e-9 and 0.3 - 1.0 / h <= ch < 1 + 1e-9
    assert 0.5 * (1 - 2.0 / min(x1 - x0, y1 - y0)) <= cw / ch <= 2 * (1 + 2.0 / min(x1 - x0, y1 - y0))
    rel = np.array([x0 / w, y0 / h, x1 / w, y1 / h])
    assert len(out_boxes) >= 1 and out_boxes.shape[1:] == (4,)
    assert out_boxes.min() >= 0 and out_boxes.max() <= 1
    # Which input box each output is (labels are unique per box here), in input order.
    idx = [int(np.nonzero(labels == lab)[0][0]) for lab in np.asarray(out_labels).reshape(-1)]
    assert idx == sorted(idx)
    for k, i in enumerate(idx):
        b = boxes[i].astype(np.float64)
        want = np.clip((b - rel[[0, 1, 0, 1]]) / (rel[[2, 3, 2, 3]] - rel[[0, 1, 0, 1]]), 0, 1)
        np.testing.assert_allclose(out_boxes[k], want, atol=box_tol)
    # Kept: the box's centre is in the window (a pixel of slack: the window was drawn in
    # fractions and cut in whole pixels).
    c = (boxes[:, :2] + boxes[:, 2:]).astype(np.float64) / 2 * [w, h]
    inside = np.all((c >= [x0 + 1, y0 + 1]) & (c <= [x1 - 1, y1 - 1]), 1)
    near = np.all((c >= [x0 - 1, y0 - 1]) & (c <= [x1 + 1, y1 + 1]), 1)
    kept = np.zeros(len(boxes), bool)
    kept[idx] = True
    assert np.all(kept[inside]) and not np.any(kept & ~near)
    return True, float(iou(rel, boxes).min())


def ssd_on_coords(lib, boxes, labels, *, h=200, w=200, dtype=np.uint8, iterations=1, **kw):
    """ssd_random_crop of `lib` on coordinate images with the same boxes in every sample: per
    sample (cropped, min IoU), after checking each result's rules."""
    img = coord_image(h, w, dtype)
    bs = len(boxes)
    runs = run_graph(lib, lambda f, i, b, l: f.ssd_random_crop(i, b, l, **kw),
                     [[img] * bs, boxes, labels], iterations=iterations)
    runs = runs if iterations > 1 else [runs]
    stoker_run = lib[0] is fn
    res = []
    for oi, ob, ol in runs:
        for k in range(bs):
            y0, x0 = (int(v) for v in oi[k][0, 0]) if oi[k].size else (0, 0)
            window = (x0, y0, x0 + oi[k].shape[1], y0 + oi[k].shape[0])
            # stoker's boxes are relative to the pixels cut; DALI's to the window it drew
            tol = 2e-6 if stoker_run else 1.0 / min(oi[k].shape[:2]) + 1e-6
            res.append(check_ssd_sample(img, boxes[k], labels[k], oi[k], ob[k], ol[k], window,
                                        tol))
    return res


def simulate_ssd(boxes, num_attempts, n, seed):
    """DALI's law in plain Python: per sample (cropped, min IoU of the window taken)."""
    rnd = random.Random(seed)
    b = np.asarray(boxes, np.float64)
    out = []
    for _ in range(n):
        while True:
            choice = rnd.randrange(7)
            if choice == 6:
                out.append((False, None))
                break
            min_iou, done = SSD_MIN_IOU[choice], False
            for _ in range(num_attempts):
                cw, ch = rnd.uniform(0.3, 1), rnd.uniform(0.3, 1)
                if not 0.5 <= cw / ch <= 2:
                    continue
                x, y = rnd.uniform(0, 1 - cw), rnd.uniform(0, 1 - ch)
                win = np.array([x, y, x + cw, y + ch])
                ious = iou(win, b)
                if ious.min() < min_iou:
                    continue
                c = (b[:, :2] + b[:, 2:]) / 2
                if not np.any(np.all((c >= win[:2]) & (c <= win[2:]), 1)):
                    continue
                out.append((True, float(ious.min())))
                done = True
                break
            if done:
                break
    return out


def histogram(results):
    """Fractions: no crop, then min IoU in [0, .1), [.1, .3), ... [.9, 1]."""
    cats = [0 if not c else 1 + int(np.searchsorted(IOU_EDGES, v, side="right"))
            for c, v in results]
    return np.bincount(cats, minlength=7) / len(cats)


SSD_BOXES = {
    "one": np.array([[0.2, 0.25, 0.7, 0.8]], F),
    "two": np.array([[0.1, 0.1, 0.5, 0.6], [0.4, 0.3, 0.9, 0.8]], F),
    "small": np.array([[0.45, 0.45, 0.5, 0.55], [0.0, 0.0, 1.0, 1.0]], F),
}


@pytest.mark.parametrize("which, num_attempts", [("one", 1), ("two", 1), ("two", 10),
                                                 ("small", 5)])
def test_ssd_rules_and_distribution(which, num_attempts):
    """Every result obeys the rules; the mix of choices (no crop, the window's smallest IoU by
    SSD's thresholds) matches a NumPy simulation of DALI's law and DALI's own results."""
    b = SSD_BOXES[which]
    bs, iters = 64, 24
    boxes = [b] * bs
    labels = [np.arange(len(b), dtype=np.int32) + 3] * bs
    mine = ssd_on_coords(stoker_lib(), boxes, labels, iterations=iters,
                         num_attempts=num_attempts)
    ref = simulate_ssd(b, num_attempts, 6000, seed=len(which) * 10 + num_attempts)
    hm, hr = histogram(mine), histogram(ref)
    assert np.abs(hm - hr).max() < 0.05, (hm, hr)
    dali = dali_or_none()
    if dali is not None:
        theirs = ssd_on_coords(dali, boxes, labels, iterations=iters, num_attempts=num_attempts)
        hd = histogram(theirs)
        assert np.abs(hm - hd).max() < 0.06, (hm, hd)


def test_ssd_iou_constraint_is_on_every_box():
    """A window is taken only when its IoU with every box reaches the drawn minimum: with a box
    covering the image and a tiny one, no window can give the tiny box IoU 0.1, so every crop
    drew "no constraint" and its smallest IoU is that of the tiny box."""
    b = SSD_BOXES["small"]
    res = ssd_on_coords(stoker_lib(), [b] * 64, [np.array([1, 2], np.int32)] * 64,
                        iterations=8, num_attempts=3)
    crops = [v for c, v in res if c]
    assert len(crops) > 100 and max(crops) < 0.1
    # no constraint taken on its first round about 1 time in 7, "no crop" 1 in 7, the rest
    # redraw: half and half in the end
    assert 0.35 < len(crops) / len(res) < 0.65


def test_ssd_any_dtype_and_large_images():
    """stoker crops images of any element type (DALI's crop copies bytes as if uint8)."""
    b = [SSD_BOXES["two"]] * 16
    labels = [np.array([10, 20], np.int32)] * 16
    res = ssd_on_coords(stoker_lib(), b, labels, h=300, w=517, dtype=np.uint16, iterations=4)
    assert sum(c for c, _ in res) > 20


def test_ssd_labels_keep_their_shape_and_type():
    """Labels [N, 1] stay [K, 1] and int64 stays int64 (DALI: int32 only, and [N, 1] comes out
    [K] after a crop but [N, 1] without one)."""
    img = coord_image(100, 100)
    b = SSD_BOXES["two"]
    for lab in (np.array([[4], [9]], np.int32), np.array([4, 9], np.int64),
                np.array([[4, 40], [9, 90]], np.int16)):
        runs = run_graph(stoker_lib(), lambda f, i, bb, l: f.ssd_random_crop(i, bb, l),
                         [[img] * 32, [b] * 32, [lab] * 32], iterations=2)
        for oi, ob, ol in runs:
            for k in range(32):
                assert ol[k].dtype == lab.dtype and ol[k].shape == (len(ob[k]),) + lab.shape[1:]
                rows = [int(np.nonzero(lab.reshape(2, -1)[:, 0] == r)[0][0])
                        for r in ol[k].reshape(len(ob[k]), -1)[:, 0]]
                np.testing.assert_array_equal(ol[k], lab[rows])


def test_ssd_without_boxes_keeps_the_image():
    img = coord_image(50, 60)
    runs = run_graph(stoker_lib(), lambda f, i, b, l: f.ssd_random_crop(i, b, l, num_attempts=4),
                     [[img] * 8, [np.zeros((0, 4), F)] * 8, [np.zeros((0,), np.int32)] * 8],
                     iterations=3)
    dali = dali_or_none()
    ref = None if dali is None else run_graph(
        dali, lambda f, i, b, l: f.ssd_random_crop(i, b, l, num_attempts=4),
        [[img] * 8, [np.zeros((0, 4), F)] * 8, [np.zeros((0,), np.int32)] * 8])
    for oi, ob, ol in runs + ([ref] if ref else []):
        for k in range(8):
            np.testing.assert_array_equal(oi[k], img)
            assert ob[k].shape == (0, 4) and ol[k].shape == (0,)


def find_crop(img, crop):
    """Where `crop` was cut from `img` (HWC uint8): (x0, y0, x1, y1), or None."""
    h, w, c = img.shape
    ch, cw = crop.shape[:2]
    needle = crop[0].tobytes()
    for y in range(h - ch + 1):
        row = img[y].tobytes()
        start = row.find(needle)
        while start >= 0:
            if start % c == 0:
                x = start // c
                if np.array_equal(img[y:y + ch, x:x + cw], crop):
                    return x, y, x + cw, y + ch
            start = row.find(needle, start + 1)
    return None


def test_ssd_on_coco_photos(testdata):
    """readers.coco (relative ltrb boxes) -> decoders.image -> ssd_random_crop: each crop is
    found in its photo, and its boxes and labels follow the rules there."""
    root = testdata / "coco"

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=11)
    def pipe():
        jpegs, b, l = fn.readers.coco(file_root=str(root / "images"),
                                      annotations_file=str(root / "instances.json"),
                                      ratio=True, ltrb=True)
        img = fn.decoders.image(jpegs)
        return (img, b, l) + tuple(fn.ssd_random_crop(img, b, l, num_attempts=10))

    p = pipe()
    p.build()
    crops = 0
    for _ in range(4):
        img, b, l, oi, ob, ol = ([np.array(o.at(i)) for i in range(8)] for o in p.run())
        for k in range(8):
            window = find_crop(img[k], oi[k])
            assert window is not None
            # COCO labels repeat within a photo: tell the boxes apart by their index instead
            lab = np.arange(len(b[k]), dtype=np.int32)
            if len(oi[k]) and window != (0, 0, img[k].shape[1], img[k].shape[0]):
                idx = [int(np.nonzero(np.all(np.isclose(
                    np.clip((b[k].astype(np.float64) - np.array(window)[[0, 1, 0, 1]] /
                             np.array(img[k].shape[:2])[[1, 0, 1, 0]]) /
                            ((np.array(window[2:]) - window[:2]) /
                             np.array(img[k].shape[:2])[[1, 0]])[[0, 1, 0, 1]], 0, 1),
                    box, atol=2e-6), 1))[0][0]) for box in ob[k]]
                np.testing.assert_array_equal(ol[k], l[k][idx])
                out_lab = lab[idx]
                crops += 1
            else:
                out_lab = lab
                np.testing.assert_array_equal(ol[k], l[k])
            check_ssd_sample(img[k], b[k], lab, oi[k], ob[k], out_lab, window, 2e-6)
    assert crops >= 10


def ssd_outputs(num_threads, seed, iterations=2):
    img = coord_image(120, 90)
    b = [SSD_BOXES["two"]] * 6
    return run_graph(stoker_lib(), lambda f, i, bb, l: f.ssd_random_crop(i, bb, l, num_attempts=3),
                     [[img] * 6, b, [np.array([1, 2], np.int32)] * 6], iterations=iterations,
                     num_threads=num_threads, seed=seed)


def test_ssd_seeds_and_threads():
    a, b, c = ssd_outputs(1, 5), ssd_outputs(4, 5), ssd_outputs(2, 6)
    flat = lambda r: [x for it in r for out in it for x in out]
    for x, y in zip(flat(a), flat(b)):
        np.testing.assert_array_equal(x, y)
    assert any(x.shape != y.shape or not np.array_equal(x, y) for x, y in zip(flat(a), flat(c)))


def ssd_fails(images, boxes, labels, exc=ValueError, **kw):
    with pytest.raises(exc) as e:
        run_graph(stoker_lib(), lambda f, i, b, l: f.ssd_random_crop(i, b, l, **kw),
                  [images, boxes, labels])
    return e


IMG = coord_image(20, 30)
B2 = np.array([[0.1, 0.1, 0.5, 0.5], [0.2, 0.3, 0.9, 0.6]], F)
L2 = np.array([1, 2], np.int32)


@pytest.mark.parametrize("images, boxes, labels, exc, rest", [
    ([IMG], [np.array([[0.1, 0.1, 0.5]], F)], [np.array([1], np.int32)], ValueError,
     "sample 0: the boxes (input 1) have shape (1, 3); give them as [N, 4], one box (left, top, "
     "right, bottom) per row."),
    ([IMG], [np.array([0.1, 0.1, 0.5, 0.5], F)], [np.array([1], np.int32)], ValueError,
     "sample 0: the boxes (input 1) have shape (4,); give them as [N, 4], one box (left, top, "
     "right, bottom) per row."),
    ([IMG], [B2.astype(np.float64)], [L2], TypeError,
     "the boxes (input 1) must be float32, got float64; convert them with fn.cast(boxes, "
     "dtype=types.FLOAT)."),
    ([IMG, IMG], [B2, B2], [L2, np.array([1], np.int32)], ValueError,
     "sample 1: the labels (input 2) have shape (1,) for 2 boxes; give one label (or one row of "
     "labels) per box, shape [2] or [2, ...]."),
    ([IMG[..., 0]], [B2], [L2], ValueError,
     "sample 0: the image (input 0) has shape (20, 30); ssd_random_crop takes HWC images, 3 "
     "dimensions (height, width, channels). Give a grayscale image a channel axis with "
     "fn.expand_dims(image, axes=[2], new_axis_names=\"C\")."),
    ([IMG], [np.array([[0.1, 0.1, 1.5, 0.5]], F)], [np.array([1], np.int32)], ValueError,
     "sample 0, box 0 (0.1, 0.1, 1.5, 0.5): on x it spans [0.1, 1.5], which is not inside "
     "[0, 1]. ssd_random_crop takes boxes (left, top, right, bottom) relative to the image's "
     "size (readers.coco(ratio=True, ltrb=True) gives them so)."),
    ([IMG], [np.array([[0.1, 0.5, 0.3, 0.2]], F)], [np.array([1], np.int32)], ValueError,
     "sample 0, box 0 (0.1, 0.5, 0.3, 0.2): on y it ends (0.2) before it starts (0.5). "
     "ssd_random_crop takes boxes as (left, top, right, bottom); boxes given as (x, y, width, "
     "height) can be read with readers.coco(ltrb=True)."),
])
def test_ssd_data_errors(images, boxes, labels, exc, rest):
    e = ssd_fails(images, boxes, labels, exc)
    check_error(e, "ssd_random_crop", rest)


def test_ssd_layout_and_argument_errors():
    with pytest.raises(ValueError) as e:
        run_graph(stoker_lib(), lambda f, i, b, l: f.ssd_random_crop(
            f.reinterpret(i, layout="CHW"), b, l), [[IMG], [B2], [L2]])
    check_error(e, "ssd_random_crop", "the images (input 0) have layout \"CHW\"; ssd_random_crop "
                                      "takes HWC images (height, width, channels).")
    e = ssd_fails([IMG], [B2], [L2], num_attempts=0)
    check_error(e, "ssd_random_crop", "argument 'num_attempts' must be >= 1, got 0.")


# =============================================================================================
# roi_random_crop

def roi_range(roi_start, roi_extent, crop, extent=None):
    """DALI's range of window starts along one axis."""
    if roi_extent == crop:
        return roi_start, roi_start
    lo, hi = sorted((roi_start, roi_start + roi_extent - crop))
    if extent is not None:
        lo, hi = max(0, lo), min(extent - crop, hi)
    return lo, hi


def roi_run(lib, *, batch_size=4, iterations=1, inputs=(), tensor_args=None, **kw):
    out = run_graph(lib, lambda f, *xs, **t: f.roi_random_crop(*xs, **kw, **t), list(inputs),
                    batch_size=batch_size, iterations=iterations, tensor_args=tensor_args)
    return [r[0] for r in out] if iterations > 1 else out[0]


@pytest.mark.parametrize("kw, want", [
    (dict(crop_shape=[10, 20], roi_start=[5, 7], roi_shape=[10, 20]), [5, 7]),
    (dict(crop_shape=[10, 20], roi_start=[5, 7], roi_end=[15, 27], in_shape=[100, 100]), [5, 7]),
    (dict(crop_shape=[30, 40], roi_start=[3, 9], roi_end=[8, 12], in_shape=[30, 40]), [0, 0]),
    (dict(crop_shape=[4, 6, 3], roi_start=[-2, 90, 0], roi_shape=[4, 6, 3]), [-2, 90, 0]),
    (dict(crop_shape=[5, 5], roi_start=[0, 95], roi_end=[5, 100], in_shape=[5, 100]), [0, 95]),
])
def test_roi_fixed_answers_equal_dali(kw, want):
    mine = roi_run(stoker_lib(), **kw)
    assert all(m.dtype == np.int64 and m.tolist() == want for m in mine)
    dali = dali_or_none()
    if dali is not None:
        for m, d in zip(mine, roi_run(dali, **kw)):
            assert d.dtype == m.dtype
            np.testing.assert_array_equal(m, d)


@pytest.mark.parametrize("kw", [
    dict(crop_shape=[10, 20], roi_start=[5, 5], roi_end=[8, 50], in_shape=[100, 100]),
    dict(crop_shape=[10, 20], roi_start=[30, 40], roi_shape=[40, 5]),
    dict(crop_shape=[50, 8, 2], roi_start=[0, 0, 0], roi_end=[10, 60, 2], in_shape=[60, 70, 2]),
    dict(crop_shape=[7], roi_start=[96], roi_shape=[3], in_shape=[100]),
])
def test_roi_starts_in_range_and_uniform(kw):
    nd = len(kw["crop_shape"])
    ext = kw.get("roi_shape") or [e - s for s, e in zip(kw["roi_start"], kw["roi_end"])]
    shape = kw.get("in_shape")
    ranges = [roi_range(kw["roi_start"][d], ext[d], kw["crop_shape"][d],
                        shape[d] if shape else None) for d in range(nd)]
    libs = [stoker_lib()] + ([dali_or_none()] if dali_or_none() else [])
    for lib in libs:
        runs = run_graph(lib, lambda f: f.roi_random_crop(**kw), (), batch_size=64,
                         iterations=16)
        starts = np.array([s for it in runs for s in it[0]])
        assert starts.shape == (1024, nd) and starts.dtype == np.int64
        for d, (lo, hi) in enumerate(ranges):
            col = starts[:, d]
            assert col.min() >= lo and col.max() <= hi
            if hi - lo <= 50:  # every start is drawn, about equally often
                counts = np.bincount(col - lo, minlength=hi - lo + 1)
                assert counts.min() > 0 and counts.max() < 3.5 * len(col) / (hi - lo + 1)
            assert abs(col.mean() - (lo + hi) / 2) < 0.1 * (hi - lo) + 0.5
            # with in_shape the window stays inside; it holds the ROI or sits inside it
            if shape:
                assert np.all(col >= 0) and np.all(col + kw["crop_shape"][d] <= shape[d])
            s0, e0 = kw["roi_start"][d], kw["roi_start"][d] + ext[d]
            c = kw["crop_shape"][d]
            if c >= ext[d] and (not shape or c <= shape[d]):
                assert np.all((col <= s0) & (col + c >= e0))
            else:
                assert np.all((col >= s0) & (col + c <= e0))


def test_roi_from_the_data_and_per_sample_arguments():
    """The data as input: its first dimensions bound the window. Per-sample crop_shape and ROI
    tensors of any integer type."""
    data = [np.zeros((30, 40, 3), np.uint8), np.zeros((12, 50, 1), np.uint8)]
    crop = [np.array([10, 20], np.int16), np.array([12, 5], np.int16)]
    start = [np.array([5, 5], np.int32), np.array([0, 44], np.int32)]
    end = [np.array([8, 30], np.int32), np.array([12, 46], np.int32)]
    for _ in range(3):
        runs = run_graph(stoker_lib(), lambda f, x, **t: f.roi_random_crop(x, **t), [data],
                         iterations=8, tensor_args=dict(crop_shape=crop, roi_start=start,
                                                        roi_end=end))
        for (out,) in runs:
            for k in range(2):
                for d in range(2):
                    lo, hi = roi_range(int(start[k][d]), int(end[k][d] - start[k][d]),
                                       int(crop[k][d]), data[k].shape[d])
                    assert lo <= out[k][d] <= hi
    # sample 1: the ROI as tall as the window fixes dimension 0; dimension 1 holds the ROI
    assert all(r[0][1][0] == 0 and 41 <= r[0][1][1] <= 44 for r in runs)


def test_roi_seeds_and_threads():
    kw = dict(crop_shape=[10, 20], roi_start=[5, 5], roi_end=[80, 90], in_shape=[100, 100])
    go = lambda threads, seed: run_graph(stoker_lib(), lambda f: f.roi_random_crop(**kw), (),
                                         batch_size=8, iterations=3, num_threads=threads,
                                         seed=seed)
    a, b, c = go(1, 5), go(3, 5), go(2, 6)
    flat = lambda r: np.array([s for it in r for s in it[0]])
    np.testing.assert_array_equal(flat(a), flat(b))
    assert not np.array_equal(flat(a), flat(c))


def roi_fails(exc=ValueError, inputs=(), tensor_args=None, **kw):
    with pytest.raises(exc) as e:
        roi_run(stoker_lib(), inputs=inputs, tensor_args=tensor_args, **kw)
    return e


@pytest.mark.parametrize("kw, rest", [
    (dict(crop_shape=[10, 20], roi_start=[5, 5], roi_end=[8, 50], roi_shape=[3, 45]),
     "argument 'roi_shape' cannot be given with roi_end: the ROI is roi_start with either its "
     "end (roi_end) or its extent (roi_shape). Leave out one of them."),
    (dict(crop_shape=[10, 20], roi_start=[5, 5]),
     "argument 'roi_end' or roi_shape is needed: the ROI is roi_start with either its end "
     "(roi_end) or its extent (roi_shape)."),
    (dict(crop_shape=[10, 200], roi_start=[5, 5], roi_end=[8, 50], in_shape=[100, 100]),
     "sample 0: crop_shape [10, 200] is larger than in_shape [100, 100] in dimension 1; the "
     "window must fit in the input. Make crop_shape at most the input's shape."),
    (dict(crop_shape=[10, 20], roi_start=[5, 5], roi_end=[8, 150], in_shape=[100, 100]),
     "sample 0: the ROI [5, 150) in dimension 1 is not inside in_shape [100, 100]; give "
     "roi_start and roi_end inside the input."),
    (dict(crop_shape=[10, 20], roi_start=[-1, 5], roi_shape=[8, 15], in_shape=[100, 100]),
     "sample 0: the ROI [-1, 7) in dimension 0 is not inside in_shape [100, 100]; give "
     "roi_start and roi_shape inside the input."),
    (dict(crop_shape=[10, 20, 3], roi_start=[5, 5], roi_end=[8, 50]),
     "argument 'roi_start' has 2 values [5, 5], but crop_shape has 3; give one value per "
     "dimension of the window."),
    (dict(crop_shape=[10, 20], roi_start=[5, 5], roi_end=[2, 50]),
     "argument 'roi_end' must not be before roi_start, got roi_start [5, 5] and roi_end "
     "[2, 50]."),
    (dict(crop_shape=[10, 20], roi_start=[5, 5], roi_shape=[2, -50]),
     "argument 'roi_shape' must not be negative, got [2, -50]."),
    (dict(crop_shape=[-10, 20], roi_start=[5, 5], roi_end=[20, 20]),
     "argument 'crop_shape' must not be negative, got [-10, 20]."),
    (dict(crop_shape=[10, 20], roi_start=[5, 5], roi_end=[20, 20], in_shape=[-1, 30]),
     "argument 'in_shape' must not be negative, got [-1, 30]."),
])
def test_roi_errors(kw, rest):
    e = roi_fails(**kw)
    check_error(e, "roi_random_crop", rest)


def test_roi_errors_with_data():
    img = [np.zeros((30, 40, 3), np.uint8)]
    e = roi_fails(inputs=[img], crop_shape=[10, 20], roi_start=[5, 5], roi_end=[8, 30],
                  in_shape=[30, 40])
    check_error(e, "roi_random_crop", "argument 'in_shape' cannot be given with an input: the "
                                      "input's shape is the shape the window must fit in. Pass "
                                      "either the data or in_shape.")
    e = roi_fails(inputs=[[np.zeros((30,), np.uint8)]], crop_shape=[10, 20], roi_start=[5, 5],
                  roi_end=[8, 30])
    check_error(e, "roi_random_crop", "sample 0: the input has shape (30,), 1 dimensions, but "
                                      "crop_shape has 2 values [10, 20]; give crop_shape, "
                                      "roi_start and roi_end one value for each of the input's "
                                      "first dimensions, at most 1.")
    e = roi_fails(inputs=[img], crop_shape=[10, 20], roi_start=[5, 5], roi_end=[8, 50])
    check_error(e, "roi_random_crop", "sample 0: the ROI [5, 50) in dimension 1 is not inside "
                                      "the input's shape (30, 40, 3); give roi_start and roi_end "
                                      "inside the input.")
    e = roi_fails(tensor_args=dict(crop_shape=[np.array([10.5, 20], np.float32)] * 4),
                  roi_start=[5, 5], roi_end=[8, 50])
    check_error(e, "roi_random_crop", "argument 'crop_shape' must be whole numbers (of at most "
                                      "2^53 in magnitude), got [10.5, 20] for sample 0.")


# =============================================================================================
# random_crop_generator

def rcg_run(lib, shapes, iterations=1, **kw):
    runs = run_graph(lib, lambda f, s: f.random_crop_generator(s, **kw), [shapes],
                     iterations=iterations)
    return runs if iterations > 1 else [runs]


def test_rcg_fixed_answer_equals_dali():
    """Area 1 and the image's own aspect ratio leave one window: the whole image."""
    shapes = [np.array([100, 200], np.int64), np.array([100, 200, 3], np.int64)]
    kw = dict(random_area=[1.0, 1.0], random_aspect_ratio=[2.0, 2.0])
    (anchor, shape), = rcg_run(stoker_lib(), shapes, **kw)
    for a, s in zip(anchor, shape):
        assert a.dtype == np.int32 and s.dtype == np.int32
        assert a.tolist() == [0, 0] and s.tolist() == [100, 200]
    dali = dali_or_none()
    if dali is not None:
        (da, ds), = rcg_run(dali, shapes, **kw)
        for x, y in zip(anchor + shape, da + ds):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)


def window_stats(shapes, runs, area, ratio):
    """Checks each window against its shape; returns (area fractions, log aspect ratios)."""
    fracs, logs = [], []
    for anchor, shape in runs:
        for sh, a, s in zip(shapes, anchor, shape):
            H, W = int(sh[0]), int(sh[1])
            (y, x), (h, w) = a.tolist(), s.tolist()
            assert 0 <= y and y + h <= H and 0 <= x and x + w <= W and h >= 1 and w >= 1
            r = w / h
            # w and h are rounded to whole pixels: ratios are within a pixel's rounding
            tol = 1 / h + 1 / w
            assert ratio[0] * (1 - tol) - 1e-6 <= r <= ratio[1] * (1 + tol) + 1e-6, (r, h, w)
            frac = h * w / (H * W)
            assert frac <= area[1] * (1 + tol) ** 2 + 1e-6
            fracs.append(frac)
            logs.append(math.log(r))
    return np.array(fracs), np.array(logs)


@pytest.mark.parametrize("area, ratio", [([0.08, 1.0], [3 / 4, 4 / 3]), ([0.3, 0.5], [0.5, 2.0]),
                                         ([0.9, 1.0], [1.0, 1.0])])
def test_rcg_windows_obey_their_ranges(area, ratio):
    rng = np.random.default_rng(2)
    shapes = [np.array([rng.integers(50, 900), rng.integers(50, 900), 3], np.int64)
              for _ in range(32)]
    kw = dict(random_area=area, random_aspect_ratio=ratio, num_attempts=10)
    mine = rcg_run(stoker_lib(), shapes, iterations=16, **kw)
    fm, lm = window_stats(shapes, mine, area, ratio)
    if ratio[0] == ratio[1]:
        # a square of 0.9 of the area fits few of these images: most fall back to the largest
        # square, which keeps the ratio exactly
        assert np.all(lm == 0)
    else:
        assert np.mean(fm >= area[0] * 0.97) > 0.9
    dali = dali_or_none()
    if dali is not None:
        theirs = rcg_run(dali, shapes, iterations=16, **kw)
        fd, ld = window_stats(shapes, theirs, area, ratio)
        assert abs(fm.mean() - fd.mean()) < 0.03
        assert abs(lm.mean() - ld.mean()) < 0.04 and abs(lm.std() - ld.std()) < 0.04
        assert abs(np.median(fm) - np.median(fd)) < 0.04


def test_rcg_feeds_slice_on_coco_photos(testdata):
    """random_crop_generator(fn.shapes(image)) -> fn.slice(axes=[0, 1]) cuts the window out of
    each photo, and the windows obey the default ranges."""
    root = testdata / "coco"

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=2)
    def pipe():
        jpegs, _, _ = fn.readers.coco(file_root=str(root / "images"),
                                      annotations_file=str(root / "instances.json"))
        img = fn.decoders.image(jpegs)
        anchor, shape = fn.random_crop_generator(fn.shapes(img))
        return img, anchor, shape, fn.slice(img, anchor, shape, axes=[0, 1])

    p = pipe()
    p.build()
    for _ in range(3):
        img, anchor, shape, crop = ([np.array(o.at(i)) for i in range(8)] for o in p.run())
        window_stats([i.shape for i in img], [(anchor, shape)], [0.08, 1.0], [3 / 4, 4 / 3])
        for i, a, s, c in zip(img, anchor, shape, crop):
            np.testing.assert_array_equal(c, i[a[0]:a[0] + s[0], a[1]:a[1] + s[1]])


def test_rcg_seeds_threads_and_degenerate_shapes():
    shapes = [np.array(s, np.int32) for s in ([0, 10], [1, 1], [1, 1000], [1000, 1], [480, 640])]
    go = lambda seed: run_graph(stoker_lib(), lambda f, s: f.random_crop_generator(s),
                                [shapes], iterations=2, seed=seed)
    a, b = go(3), go(3)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            for p, q in zip(u, v):
                np.testing.assert_array_equal(p, q)
    (anchor, shape) = a[0]
    assert anchor[0].tolist() == [0, 0] and shape[0].tolist() == [0, 0]  # as DALI: empty
    assert shape[1].tolist() == [1, 1]
    window_stats(shapes[1:], [(anchor[1:], shape[1:])], [0.08, 1.0], [3 / 4, 4 / 3])


def rcg_fails(shapes, exc=ValueError, **kw):
    with pytest.raises(exc) as e:
        rcg_run(stoker_lib(), shapes, **kw)
    return e


@pytest.mark.parametrize("shapes, exc, rest", [
    ([np.array([5.0, 200.0], np.float32)], TypeError,
     "the input must hold integers (a shape, as fn.shapes gives it), got float32; convert it "
     "with fn.cast(shape, dtype=types.INT64)."),
    ([np.array([5, 200, 3, 3], np.int32)], ValueError,
     "sample 0: the input has shape (4,); give the shape of the image to crop, 2 or 3 values "
     "(HW or HWC), as fn.shapes(image) gives it."),
    ([np.array([[5, 200]], np.int32)], ValueError,
     "sample 0: the input has shape (1, 2); give the shape of the image to crop, 2 or 3 values "
     "(HW or HWC), as fn.shapes(image) gives it."),
    ([np.array([10, 20], np.int32), np.array([-5, 200, 3], np.int64).astype(np.int32)],
     ValueError,
     "sample 1: the input shape [-5, 200, 3] has a height or width outside [0, 2147483647]; "
     "give the shape of the image to crop (HW or HWC)."),
])
def test_rcg_input_errors(shapes, exc, rest):
    e = rcg_fails(shapes, exc)
    check_error(e, "random_crop_generator", rest)


def test_rcg_argument_errors():
    e = rcg_fails([np.array([10, 20], np.int32)], random_area=[0.5, 0.1])
    check_error(e, "random_crop_generator", "argument 'random_area' must be a range [min, max] "
                                            "with min <= max, got [0.500000, 0.100000].")
    e = rcg_fails([np.array([10, 20], np.int32)], random_aspect_ratio=[0.0, 1.0])
    check_error(e, "random_crop_generator", "argument 'random_aspect_ratio' must be > 0 (width / "
                                            "height), got min 0.000000.")
