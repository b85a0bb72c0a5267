"""bbox_rotate against a NumPy statement of DALI's rules (corners turned about the image's centre
onto the canvas' centre, the axis-aligned box of each mode, clipping and removal, float32 in
DALI's order) and against DALI 2.4 itself, exactly, on synthetic and COCO boxes; against the
pixels fn.rotate turns (a rectangle drawn in an image lands in its rotated box); per-sample
arguments, labels, and every error message."""
import math

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from _dali_ref import error_checker, real_dali

check_error = error_checker(__file__)
F = np.float32


def stoker_lib():
    return fn, types, pipeline_def


def constant(batch):
    return lambda: batch


def rotate_run(lib, boxes, labels=None, *, tensor_args=None, num_threads=2, **kw):
    """fn.bbox_rotate of `lib` on one batch: the outputs as lists of NumPy arrays."""
    fn_, _, pdef = lib
    tensor_args = tensor_args or {}

    @pdef(batch_size=len(boxes), num_threads=num_threads, device_id=None, seed=1)
    def pipe():
        ins = [fn_.external_source(source=lambda: boxes, batch=True)]
        if labels is not None:
            ins.append(fn_.external_source(source=lambda: labels, batch=True))
        targs = {k: fn_.external_source(source=constant(v), batch=True)
                 for k, v in tensor_args.items()}
        out = fn_.bbox_rotate(*ins, **kw, **targs)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    return [[np.array(o.at(i)) for i in range(len(boxes))] for o in p.run()]


def dali_or_none():
    try:
        return real_dali()
    except pytest.skip.Exception:
        return None


# ---- DALI's rules in NumPy

def canvas_size(h, w, angle):
    """fn.rotate's canvas (height, width) for an h x w image: the rotated image's bounding box,
    less 0.01, rounded up, then each side's parity matched to the input side it comes from."""
    rad = float(F(angle) * F(math.pi / 180))
    c, s = abs(math.cos(rad)), abs(math.sin(rad))
    ow = math.ceil(c * w + s * h - 1e-2)
    oh = math.ceil(c * h + s * w - 1e-2)
    pw, ph = (w % 2, h % 2) if s <= c else (h % 2, w % 2)
    return oh + (oh % 2 != ph), ow + (ow % 2 != pw)


def ref_rotate(boxes, angle, in_hw, out_hw=None, *, ltrb=True, normalized=True, mode="expand",
               remove_threshold=0.1):
    """The boxes kept and their indices, float32 throughout."""
    b = np.asarray(boxes, F).reshape(-1, 4)
    in_h, in_w = F(in_hw[0]), F(in_hw[1])
    out_h, out_w = (F(v) for v in (out_hw or canvas_size(int(in_hw[0]), int(in_hw[1]), angle)))
    x0, y0 = b[:, 0], b[:, 1]
    x1, y1 = (b[:, 2], b[:, 3]) if ltrb else (x0 + b[:, 2], y0 + b[:, 3])
    cx = np.stack([x0, x1, x0, x1], 1)
    cy = np.stack([y0, y0, y1, y1], 1)
    if normalized:
        cx, cy = (cx - F(0.5)) * in_w, (cy - F(0.5)) * in_h
    else:
        cx, cy = cx - in_w / F(2), cy - in_h / F(2)
    old_w, old_h = cx[:, 1] - cx[:, 0], cy[:, 2] - cy[:, 0]
    rad = F(angle) * F(math.pi / 180)
    cos_a, sin_a = F(math.cos(float(rad))), F(math.sin(float(rad)))
    rx = cx * cos_a + cy * sin_a + out_w / F(2)
    ry = -cx * sin_a + cy * cos_a + out_h / F(2)
    l, r, t, bt = rx.min(1), rx.max(1), ry.min(1), ry.max(1)
    if mode != "expand":
        nw, nh = r - l, bt - t
        swap = (old_w < old_h) ^ (nw < nh)
        dw = np.where(swap, (nw - old_h) * F(0.5), (nw - old_w) * F(0.5)).astype(F)
        dh = np.where(swap, (nh - old_w) * F(0.5), (nh - old_h) * F(0.5)).astype(F)
        if mode == "halfway":
            dw, dh = dw * F(0.5), dh * F(0.5)
        l, t, r, bt = l + dw, t + dh, r - dw, bt - dh
    old_area = (r - l) * (bt - t)
    cl, cr = np.clip(l, 0, out_w), np.clip(r, 0, out_w)
    ct, cb = np.clip(t, 0, out_h), np.clip(bt, 0, out_h)
    new_area = (cr - cl) * (cb - ct)
    unchanged = (cl == l) & (cr == r) & (ct == t) & (cb == bt)
    with np.errstate(divide="ignore", invalid="ignore"):
        remain = np.where(old_area > 0, new_area / old_area, unchanged.astype(F))
    keep = np.nonzero(remain >= F(remove_threshold))[0]
    out = np.stack([cl, ct, cr if ltrb else cr - cl, cb if ltrb else cb - ct], 1)[keep]
    if normalized:
        out = out * np.array([F(1) / out_w, F(1) / out_h] * 2, F)
    return out.astype(F), keep


def random_boxes(rng, n, h, w, *, ltrb=True, normalized=True):
    a, b = rng.random((n, 2)), rng.random((n, 2))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    if not normalized:
        lo, hi = lo * [w, h], hi * [w, h]
    return np.concatenate([lo, hi if ltrb else hi - lo], 1).astype(F)


ANGLES = [0, 90, 180, 270, 360, 45, -45, 30.5, -123.4, 1e-3, 89.99, 217.0]


# ---- results

@pytest.mark.parametrize("mode", ["expand", "halfway", "fixed"])
def test_against_numpy_and_dali_random_boxes(mode):
    rng = np.random.default_rng({"expand": 1, "halfway": 2, "fixed": 3}[mode])
    dali = dali_or_none()
    for trial in range(40):
        h, w = int(rng.integers(1, 700)), int(rng.integers(1, 700))
        ltrb, norm = bool(trial % 2), bool(trial // 2 % 2)
        angle = float(ANGLES[trial % len(ANGLES)] if trial < 24 else rng.uniform(-400, 400))
        kw = dict(angle=angle, input_shape=[h, w, 3], mode=mode, bbox_normalized=norm,
                  bbox_layout="xyXY" if ltrb else "xyWH",
                  remove_threshold=float(rng.choice([0.0, 0.1, 0.5, 0.999])))
        out_hw = None
        if trial % 3 == 1:
            kw["keep_size"], out_hw = True, (h, w)
        elif trial % 3 == 2:
            size = [float(rng.uniform(1, 800)), float(rng.uniform(1, 800))]
            kw["size"], out_hw = size, (math.floor(size[0]), math.floor(size[1]))
        boxes = [random_boxes(rng, int(rng.integers(0, 7)), h, w, ltrb=ltrb, normalized=norm)
                 for _ in range(3)]
        labels = [np.arange(len(b), dtype=np.int32) * 10 for b in boxes]
        got_boxes, got_labels = rotate_run(stoker_lib(), boxes, labels, **kw)
        for b, gb, gl in zip(boxes, got_boxes, got_labels):
            want, keep = ref_rotate(b, angle, (h, w), out_hw, ltrb=ltrb, normalized=norm,
                                    mode=mode, remove_threshold=kw["remove_threshold"])
            assert gb.dtype == np.float32 and gb.shape == (len(keep), 4)
            np.testing.assert_array_equal(gl, keep * 10)
            scale = 1 if norm else max(h, w, *(out_hw or (1, 1)))
            np.testing.assert_allclose(gb, want, rtol=0, atol=4e-6 * scale)
        if dali is not None:
            ref = rotate_run(dali, boxes, labels, **kw)
            for mine, theirs in zip((got_boxes, got_labels), ref):
                for a, b in zip(mine, theirs):
                    assert a.dtype == b.dtype and a.shape == b.shape
                    np.testing.assert_array_equal(a, b)


def test_coco_boxes_exactly_as_dali(testdata):
    """COCO's boxes (readers.coco, relative ltrb) with the photos' own shapes (fn.shapes, int64)
    and per-sample angles."""
    root = testdata / "coco"
    angles = [np.array(a, np.float32) for a in (0, 15, 90, -37.5, 180, 123, 300, 45)]

    def run(lib, **kw):
        fn_, _, pdef = lib

        @pdef(batch_size=8, num_threads=2, device_id=None, seed=1)
        def pipe():
            jpegs, b, l = fn_.readers.coco(file_root=str(root / "images"),
                                           annotations_file=str(root / "instances.json"),
                                           ratio=True, ltrb=True)
            img = fn_.decoders.image(jpegs)
            angle = fn_.external_source(source=lambda: angles, batch=True)
            return (b, l, fn_.shapes(img)) + tuple(
                fn_.bbox_rotate(b, l, angle=angle, input_shape=fn_.shapes(img), **kw))

        p = pipe()
        p.build()
        return [[[np.array(o.at(i)) for i in range(8)] for o in p.run()] for _ in range(3)]

    for kw in [{}, dict(keep_size=True), dict(mode="halfway", keep_size=True),
               dict(mode="fixed")]:
        mine = run(stoker_lib(), **kw)
        for boxes, labels, shapes, out_b, out_l in mine:
            for k in range(8):
                h, w = shapes[k][:2]
                want, keep = ref_rotate(boxes[k], float(angles[k]), (h, w),
                                        (h, w) if kw.get("keep_size") else None,
                                        mode=kw.get("mode", "expand"))
                np.testing.assert_allclose(out_b[k], want, rtol=0, atol=4e-6)
                np.testing.assert_array_equal(out_l[k], labels[k][keep])
        dali = dali_or_none()
        if dali is not None:
            for m, d in zip(mine, run(dali, **kw)):
                for a, b in zip(m[3:], d[3:]):
                    for x, y in zip(a, b):
                        assert x.dtype == y.dtype
                        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("angle, hw", [(30, (90, 121)), (-70, (64, 64)), (135, (51, 100)),
                                       (90, (40, 70)), (200, (75, 33))])
def test_boxes_follow_the_pixels_fn_rotate_turns(angle, hw):
    """A filled rectangle drawn in an image and turned by fn.rotate lies in the box bbox_rotate
    gives for it (expand: its bounding box, to a pixel), on the canvas fn.rotate makes."""
    h, w = hw
    box = np.array([[0.2, 0.3, 0.55, 0.8]], F)
    img = np.zeros((h, w, 1), np.uint8)
    x0, y0, x1, y1 = (box[0] * [w, h, w, h]).round().astype(int)
    img[y0:y1, x0:x1] = 255
    box_px = np.array([[x0, y0, x1, y1]], F)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        im = fn.external_source(source=lambda: [img], batch=True, layout="HWC")
        b = fn.external_source(source=lambda: [box_px], batch=True)
        rot = fn.rotate(im, angle=angle, fill_value=0, interp_type=types.INTERP_NN)
        return rot, fn.bbox_rotate(b, angle=angle, input_shape=fn.shapes(im),
                                   bbox_normalized=False)

    p = pipe()
    p.build()
    rot, out = (np.array(o.at(0)) for o in p.run())
    assert rot.shape[:2] == canvas_size(h, w, angle)
    ys, xs = np.nonzero(rot[..., 0] > 127)
    lit = np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], F)
    np.testing.assert_allclose(out[0], lit, atol=1.5)


def test_keep_size_removes_boxes_and_their_labels():
    """On a canvas of the image's size, a box turned out of it is dropped with its label; one
    half out stays, clipped, when remove_threshold allows. remove_threshold=1 (any part outside
    drops the box) is refused by DALI 2.4, whose check reads [0, 1) against its own docs."""
    boxes = [np.array([[0.0, 0.0, 0.1, 0.1], [0.4, 0.4, 0.6, 0.6], [0.0, 0.45, 0.3, 0.55]], F)]
    labels = [np.array([[7], [8], [9]], np.int32)]
    for thr, kept in [(0.1, [8, 9]), (0.0, [7, 8, 9]), (0.999, [8]), (1.0, [8])]:
        out_b, out_l = rotate_run(stoker_lib(), boxes, labels, angle=45, input_shape=[100, 300],
                                  keep_size=True, remove_threshold=thr)
        assert out_l[0].shape == (len(kept), 1) and out_l[0][:, 0].tolist() == kept
        assert out_b[0].min() >= 0 and out_b[0].max() <= 1
        want, keep = ref_rotate(boxes[0], 45, (100, 300), (100, 300), remove_threshold=thr)
        np.testing.assert_allclose(out_b[0], want, atol=4e-6)
        dali = dali_or_none()
        if dali is not None and thr < 1:
            d_b, d_l = rotate_run(dali, boxes, labels, angle=45, input_shape=[100, 300],
                                  keep_size=True, remove_threshold=thr)
            np.testing.assert_array_equal(out_b[0], d_b[0])
            np.testing.assert_array_equal(out_l[0], d_l[0])


def test_quarter_turns_are_exact_permutations():
    """90 degrees on a W x H image: (l, t, r, b) -> (t, 1 - r, b, 1 - l), relative to the H x W
    canvas; 180: both axes mirrored; fixed mode keeps the swapped size."""
    b = np.array([[0.1, 0.2, 0.4, 0.9]], F)
    for mode in ("expand", "fixed", "halfway"):
        (out,), = rotate_run(stoker_lib(), [b], angle=90, input_shape=[200, 300], mode=mode)
        np.testing.assert_allclose(out, [[0.2, 0.6, 0.9, 0.9]], atol=1e-6)
        (out,), = rotate_run(stoker_lib(), [b], angle=180, input_shape=[200, 300], mode=mode)
        np.testing.assert_allclose(out, [[0.6, 0.1, 0.9, 0.8]], atol=1e-6)


def test_expand_encloses_and_fixed_keeps_the_area():
    """Independent geometry in float64: the expand box is the rotated corners' bounding box;
    fixed keeps width x height (swapped past 45 degrees) about the same centre; halfway lies
    between."""
    rng = np.random.default_rng(5)
    h, w = 300, 500
    b = random_boxes(rng, 20, h, w, normalized=False) * F(0.5) + F(100)
    for angle in (10, 40, 60, 100, -150):
        out = {m: rotate_run(stoker_lib(), [b], angle=angle, input_shape=[h, w], mode=m,
                             bbox_normalized=False, remove_threshold=0)[0][0]
               for m in ("expand", "halfway", "fixed")}
        oh, ow = canvas_size(h, w, angle)
        t = math.radians(angle)
        rot = np.array([[math.cos(t), math.sin(t)], [-math.sin(t), math.cos(t)]])
        for k, (x0, y0, x1, y1) in enumerate(b.astype(np.float64)):
            pts = np.array([[x0, y0], [x1, y0], [x0, y1], [x1, y1]]) - [w / 2, h / 2]
            p = pts @ rot.T + [ow / 2, oh / 2]
            enc = np.r_[p.min(0), p.max(0)]
            want = np.r_[np.clip(enc[:2], 0, None), np.minimum(enc[2:], [ow, oh])]
            np.testing.assert_allclose(out["expand"][k], want, atol=1e-3)
            fx = out["fixed"][k]
            sides = sorted([x1 - x0, y1 - y0])
            assert sorted([fx[2] - fx[0], fx[3] - fx[1]]) == pytest.approx(sides, abs=1e-3)
            np.testing.assert_allclose((fx[:2] + fx[2:]) / 2, (enc[:2] + enc[2:]) / 2,
                                       atol=1e-3)
            hw_ = out["halfway"][k]
            for a, f, e in zip(hw_[2:] - hw_[:2], fx[2:] - fx[:2], enc[2:] - enc[:2]):
                assert a == pytest.approx((f + e) / 2, abs=1e-3)


def test_per_sample_arguments_and_shape_layouts():
    boxes = [np.array([[0.1, 0.2, 0.3, 0.5]], F)] * 3
    angles = [np.array(a, np.float32) for a in (10, 200, -90)]
    shapes = [np.array(s, np.int32) for s in ([3, 40, 50], [3, 64, 32], [3, 9, 100])]
    sizes = [np.array(s, np.float32) for s in ([50, 60], [70.9, 20.2], [9, 100])]
    out = rotate_run(stoker_lib(), boxes, tensor_args=dict(angle=angles, input_shape=shapes,
                                                           size=sizes), shape_layout="CHW")[0]
    for k in range(3):
        want, _ = ref_rotate(boxes[k], float(angles[k]), shapes[k][1:],
                             tuple(math.floor(v) for v in sizes[k]))
        np.testing.assert_allclose(out[k], want, atol=4e-6)
    dali = dali_or_none()
    if dali is not None:
        ref = rotate_run(dali, boxes, tensor_args=dict(angle=angles, input_shape=shapes,
                                                       size=sizes), shape_layout="CHW")[0]
        for a, b in zip(out, ref):
            np.testing.assert_array_equal(a, b)


def test_empty_samples_and_thread_counts():
    rng = np.random.default_rng(9)
    boxes = [np.zeros((0, 4), F)] + [random_boxes(rng, 30, 10, 10) for _ in range(5)]
    labels = [np.arange(len(b), dtype=np.int64) for b in boxes]
    one = rotate_run(stoker_lib(), boxes, labels, angle=33, input_shape=[480, 640],
                     keep_size=True, num_threads=1)
    four = rotate_run(stoker_lib(), boxes, labels, angle=33, input_shape=[480, 640],
                      keep_size=True, num_threads=4)
    assert one[0][0].shape == (0, 4) and one[1][0].shape == (0,)
    assert one[1][1].dtype == np.int64  # stoker takes labels of any type
    for a, b in zip(one, four):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_boxes_of_no_area_are_kept_where_they_stay_inside():
    """DALI 2.4 divides 0 by 0 for such a box and drops it whatever remove_threshold; stoker keeps
    it when the canvas holds it (all of it is left) and drops it when clipping moved it."""
    boxes = [np.array([[0.2, 0.2, 0.2, 0.5], [0.3, 0.3, 0.6, 0.3], [0.1, 0.1, 0.4, 0.4]], F)]
    labels = [np.array([1, 2, 3], np.int32)]
    out_b, out_l = rotate_run(stoker_lib(), boxes, labels, angle=90, input_shape=[100, 200])
    assert out_l[0].tolist() == [1, 2, 3]
    np.testing.assert_allclose(out_b[0][0], [0.2, 0.8, 0.5, 0.8], atol=1e-6)
    out_b, out_l = rotate_run(stoker_lib(), [np.array([[0.0, 0.5, 0.0, 0.9]], F)],
                              [np.array([1], np.int32)], angle=0, input_shape=[100, 200],
                              size=[100, 150])
    assert out_l[0].tolist() == []  # the canvas is narrower: the line at x=0 moved to x=0


# ---- errors

def stoker_fails(boxes, labels=None, exc=ValueError, tensor_args=None, **kw):
    with pytest.raises(exc) as e:
        rotate_run(stoker_lib(), boxes, labels, tensor_args=tensor_args, **kw)
    return e


B1 = [np.array([[0.1, 0.1, 0.5, 0.5]], F)]
L1 = [np.array([1], np.int32)]


@pytest.mark.parametrize("boxes, labels, exc, rest", [
    ([np.array([0.1, 0.1, 0.5, 0.5], F)], None, ValueError,
     "sample 0: the boxes (input 0) have shape (4,); give them as [N, 4], one box per row in "
     "bbox_layout \"xyXY\"."),
    ([np.zeros((2, 5), F)], None, ValueError,
     "sample 0: the boxes (input 0) have shape (2, 5); give them as [N, 4], one box per row in "
     "bbox_layout \"xyXY\"."),
    ([np.array([[0.1, 0.1, 0.5, 0.5]], np.float64)], None, TypeError,
     "the boxes (input 0) must be float32, got float64; convert them with fn.cast(boxes, "
     "dtype=types.FLOAT)."),
    ([np.array([[0.5, 0.1, 0.1, 0.5]], F)], None, ValueError,
     "sample 0, box 0 (0.5, 0.1, 0.1, 0.5 in bbox_layout \"xyXY\"): it ends before it starts. "
     "Check bbox_layout: \"xyXY\" is (left, top, right, bottom), \"xyWH\" (left, top, width, "
     "height)."),
    ([np.array([[0.1, np.nan, 0.5, 0.5]], F)], None, ValueError,
     "sample 0, box 0 (0.1, nan, 0.5, 0.5 in bbox_layout \"xyXY\"): its coordinates must be "
     "finite numbers."),
    (B1 * 2, [np.array([1], np.int32), np.array([1, 2], np.int32)], ValueError,
     "sample 1: the labels (input 1) have shape (2,) for 1 boxes; give one label (or one row of "
     "labels) per box, shape [1] or [1, ...]."),
])
def test_data_errors(boxes, labels, exc, rest):
    e = stoker_fails(boxes, labels, exc, angle=10, input_shape=[10, 20])
    check_error(e, "bbox_rotate", rest)


def test_negative_width_in_xywh():
    e = stoker_fails([np.array([[0.5, 0.1, -0.1, 0.5]], F)], angle=10, input_shape=[10, 20],
                     bbox_layout="xyWH")
    check_error(e, "bbox_rotate",
                "sample 0, box 0 (0.5, 0.1, -0.1, 0.5 in bbox_layout \"xyWH\"): its width or "
                "height is negative. Check bbox_layout: \"xyXY\" is (left, top, right, bottom), "
                "\"xyWH\" (left, top, width, height).")


@pytest.mark.parametrize("kw, rest", [
    (dict(bbox_layout="XYxy"),
     "argument 'bbox_layout' must be \"xyXY\" (left, top, right, bottom) or \"xyWH\" (left, top, "
     "width, height), got \"XYxy\"."),
    (dict(shape_layout="HC"),
     "argument 'shape_layout' must name where the height and the width are in input_shape with "
     "one \"H\" and one \"W\" (\"HW\", \"HWC\", \"CHW\", ...), got \"HC\"."),
    (dict(keep_size=True, size=[10, 10]),
     "argument 'size' cannot be given with keep_size=True: the canvas then keeps the image's "
     "size. Leave out one of them."),
    (dict(size=[10, 10, 3]),
     "argument 'size' takes 2 values, the canvas' height and width, got 3: [10, 10, 3]."),
    (dict(size=[0.5, 10]),
     "argument 'size' must be at least 1 pixel (and at most 2147483647), got [0.5, 10]."),
    (dict(input_shape=[10, 20], shape_layout="CHW"),
     "argument 'input_shape' has 2 values [10, 20], too few for shape_layout \"CHW\" (the height "
     "and width at positions 1 and 2); give the image's shape, e.g. fn.shapes(image)."),
    (dict(input_shape=[0, 20]),
     "argument 'input_shape' must give the image's height and width as whole numbers of pixels "
     "in [1, 2147483647], got [0, 20] (shape_layout \"HW\")."),
    (dict(angle=float("inf")),
     "argument 'angle' must be a finite number of degrees, got inf."),
])
def test_argument_errors(kw, rest):
    args = dict(angle=10, input_shape=[10, 20])
    args.update(kw)
    e = stoker_fails(B1, **args)
    check_error(e, "bbox_rotate", rest)


def test_per_sample_argument_errors():
    e = stoker_fails(B1 * 2, tensor_args=dict(input_shape=[np.array([10, 20], np.int64),
                                                           np.array([-3, 20], np.int64)]),
                     angle=5)
    check_error(e, "bbox_rotate",
                "argument 'input_shape' must give the image's height and width as whole numbers "
                "of pixels in [1, 2147483647], got [-3, 20] for sample 1 (shape_layout \"HW\").")
    e = stoker_fails(B1, tensor_args=dict(angle=[np.array([10, 20], np.float32)]),
                     input_shape=[10, 20])
    check_error(e, "bbox_rotate",
                "argument 'angle' expects one value per sample, but sample 0 of the tensor given "
                "has shape (2,).")


@pytest.mark.parametrize("kw, rest", [
    (dict(mode="spin"), "argument 'mode' must be one of ['expand', 'halfway', 'fixed'], got 'spin'."),
    (dict(remove_threshold=1.5), "argument 'remove_threshold' must be in [0, 1], got 1.5."),
])
def test_schema_errors(kw, rest):
    e = stoker_fails(B1, angle=10, input_shape=[10, 20], **kw)
    check_error(e, "bbox_rotate", rest)


@pytest.mark.parametrize("kw", [dict(bbox_layout="XYxy"), dict(shape_layout="HC"),
                                dict(keep_size=True, size=[10, 10]), dict(size=[10, 10, 3]),
                                dict(input_shape=[10, 20], shape_layout="CHW"),
                                dict(mode="spin")])
def test_dali_refuses_the_same_arguments(kw):
    dali = dali_or_none()
    if dali is None:
        pytest.skip("DALI not installed")
    args = dict(angle=10, input_shape=[10, 20])
    args.update(kw)
    with pytest.raises(Exception):
        rotate_run(dali, B1, **args)
