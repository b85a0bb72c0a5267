"""segmentation.select_masks, random_object_bbox and random_mask_pixel.

select_masks is deterministic: equal to DALI 2.4 exactly (values, dtypes, shapes), on DALI's
documented examples, synthetic polygons of several vertex types and the COCO test annotations,
and to a NumPy statement of the selection. random_object_bbox where one answer is possible (a
single blob, k_largest=1 with distinct box sizes, foreground_prob=0, thresholds only one blob
passes, no blob at all) equals DALI exactly and scipy.ndimage.label's components (face
connectivity); where it draws, every box is the box of one of scipy's components of the class it
reports, seeds reproduce, and the choices are spread as the rules say. random_mask_pixel with
foreground=1 gives foreground pixels, with one foreground pixel DALI's exact answer, and uniform
positions otherwise. Masks are 1-D to 4-D, synthetic and rasterized from the COCO annotations
(pycocotools). Then every error message."""
import json

import numpy as np
import pytest

from stoker import fn, pipeline_def, types
from _dali_ref import both, error_checker, real_dali, run, stoker_lib

pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
ndimage = pytest.importorskip("scipy.ndimage")
check_error = error_checker(__file__)

SEL = "segmentation.select_masks"
ROB = "segmentation.random_object_bbox"
RMP = "segmentation.random_mask_pixel"


def values(result):
    """run()/both() result -> per output, the list of samples."""
    return [samples for samples, _, _ in result]


def const(batch):
    return lambda: batch


def seeded(make, datas, seed, iterations=1, threads=2):
    """make(fn, *inputs) in a stoker pipeline of seed `seed`: per iteration, per output, the
    samples."""
    @pipeline_def(batch_size=len(datas[0]), num_threads=threads, device_id=None, seed=seed)
    def pipe():
        xs = [fn.external_source(source=const(d), batch=True) for d in datas]
        out = make(fn, *xs)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    res = []
    for _ in range(iterations):
        res.append([[np.array(o.at(i)) for i in range(len(o))] for o in p.run()])
    return res


# ---- references

def components(mask, value):
    """scipy's connected components (face connectivity) of mask == value: their boxes as
    (start, end) tuples, in C order of their first element."""
    lab, n = ndimage.label(mask == value)
    return [tuple([s.start for s in sl] + [s.stop for s in sl])
            for sl in ndimage.find_objects(lab)]


def all_components(mask, background=0):
    """{box: value} of every component of every value but the background."""
    out = {}
    for v in np.unique(mask):
        if v != background:
            for b in components(mask, v):
                out[b] = int(v)
    return out


def box_volume(b):
    nd = len(b) // 2
    return int(np.prod([b[nd + d] - b[d] for d in range(nd)]))


def select_ref(ids, polygons, vertices, reindex=False):
    """Every polygon of each selected mask, masks in the order of ids."""
    out_p, out_v = [], []
    at = 0
    for k, m in enumerate(ids):
        for mid, s, e in polygons:
            if mid == m:
                out_p.append([k if reindex else m, at, at + e - s])
                out_v.append(vertices[s:e])
                at += e - s
    nd = vertices.shape[1]
    return (np.array(out_p, np.int32).reshape(-1, 3),
            np.concatenate(out_v) if out_v else np.zeros((0, nd), vertices.dtype))


# ---- COCO annotations

def coco(testdata):
    return json.loads((testdata / "coco" / "instances.json").read_text())


def coco_polygons(testdata, n_images=6):
    """Per image with annotations: (polygons [N, 3] int32, vertices [V, 2] float32) as
    readers.coco(polygon_masks=True) numbers them: the mask id is the annotation's index in the
    image."""
    d = coco(testdata)
    by_image = {}
    for a in d["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    out = []
    for img in d["images"]:
        anns = by_image.get(img["id"])
        if not anns:
            continue
        polys, verts = [], []
        for k, a in enumerate(anns):
            for seg in a["segmentation"]:
                v = np.array(seg, np.float32).reshape(-1, 2)
                start = sum(len(x) for x in verts)
                polys.append([k, start, start + len(v)])
                verts.append(v)
        out.append((np.array(polys, np.int32), np.concatenate(verts)))
        if len(out) == n_images:
            break
    return out


def coco_masks(testdata, n_images=4, scale=4):
    """Label masks of COCO images (category ids, uint8; later annotations paint over earlier
    ones), rasterized with pycocotools at 1/scale of the image size, and the matching instance
    masks (annotation index + 1, int32)."""
    mask_util = pytest.importorskip("pycocotools.mask")
    d = coco(testdata)
    by_image = {}
    for a in d["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    labels, instances = [], []
    for img in d["images"]:
        anns = by_image.get(img["id"])
        if not anns:
            continue
        h, w = img["height"] // scale, img["width"] // scale
        lab = np.zeros((h, w), np.uint8)
        inst = np.zeros((h, w), np.int32)
        for k, a in enumerate(anns):
            segs = [list(np.array(s, np.float64) / scale) for s in a["segmentation"]]
            m = mask_util.decode(mask_util.merge(mask_util.frPyObjects(segs, h, w))).astype(bool)
            lab[m] = a["category_id"]
            inst[m] = k + 1
        labels.append(lab)
        instances.append(inst)
        if len(labels) == n_images:
            break
    return labels, instances


# ---- select_masks

V10 = np.arange(20, dtype=np.float32).reshape(10, 2)
P3 = np.array([[0, 0, 3], [1, 3, 7], [2, 7, 10]], np.int32)


def select(ids, polys, verts, **kw):
    return lambda fn_, types_, a, b, c: fn_.segmentation.select_masks(a, b, c, **kw)


@pytest.mark.parametrize("ids, reindex", [([1], False), ([2, 0], True), ([2, 0], False),
                                           ([0, 1, 2], True), ([], False)])
def test_select_masks_dali_examples(ids, reindex):
    ids = np.array(ids, np.int32)
    (po, _, pt), (vo, _, vt) = both(select(None, None, None, reindex_masks=reindex),
                                   [[ids], [P3], [V10]])
    rp, rv = select_ref(ids, P3, V10, reindex)
    np.testing.assert_array_equal(po[0], rp)
    np.testing.assert_array_equal(vo[0], rv)
    assert (pt, vt) == ("int32", "float32")


@pytest.mark.parametrize("dtype, ncoords", [(np.uint8, 2), (np.int16, 3), (np.float64, 2),
                                             (np.int64, 1), (np.float16, 4)])
def test_select_masks_vertex_types_batch(dtype, ncoords):
    rng = np.random.default_rng(5)
    ids, polys, verts = [], [], []
    for n_masks in (1, 4, 7):
        sizes = rng.integers(0, 5, n_masks)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        polys.append(np.stack([np.arange(n_masks) * 3 + 1, starts, starts + sizes], 1)
                     .astype(np.int32))
        verts.append((rng.random((int(sizes.sum()) + 2, ncoords)) * 100).astype(dtype))
        ids.append(rng.permutation(np.arange(n_masks) * 3 + 1)[:max(1, n_masks // 2)]
                   .astype(np.int32))
    for reindex in (False, True):
        (po, _, _), (vo, _, vt) = both(select(None, None, None, reindex_masks=reindex),
                                       [ids, polys, verts])
        assert vt == np.dtype(dtype).name
        for i in range(3):
            rp, rv = select_ref(ids[i], polys[i], verts[i], reindex)
            np.testing.assert_array_equal(po[i], rp)
            np.testing.assert_array_equal(vo[i], rv)


def test_select_masks_coco(testdata):
    data = coco_polygons(testdata)
    polys = [p for p, _ in data]
    verts = [v for _, v in data]
    ids = [np.array(sorted(set(p[:, 0]))[::-1][:3], np.int32) for p in polys]
    for reindex in (False, True):
        (po, _, _), (vo, _, _) = both(select(None, None, None, reindex_masks=reindex),
                                      [ids, polys, verts])
        for i in range(len(data)):
            rp, rv = select_ref(ids[i], polys[i], verts[i], reindex)
            np.testing.assert_array_equal(po[i], rp)
            np.testing.assert_array_equal(vo[i], rv)


def test_select_masks_keeps_every_polygon_of_a_mask():
    """Mask 0 has two polygons: stoker keeps both (DALI's documentation: "only the polygons
    associated with the selected masks are present"); DALI 2.4 keeps only the last."""
    polys = np.array([[0, 0, 3], [1, 3, 5], [0, 5, 7], [2, 7, 10]], np.int32)
    ids = np.array([0, 2], np.int32)
    (po, _, _), (vo, _, _) = run(stoker_lib(), select(None, None, None, reindex_masks=True),
                                 [[ids], [polys], [V10]])
    np.testing.assert_array_equal(po[0], [[0, 0, 3], [0, 3, 5], [1, 5, 8]])
    np.testing.assert_array_equal(vo[0], np.concatenate([V10[0:3], V10[5:7], V10[7:10]]))
    try:
        dali = real_dali()
    except pytest.skip.Exception:
        return
    (dp, _, _), _ = run(dali, select(None, None, None, reindex_masks=True),
                        [[ids], [polys], [V10]])
    np.testing.assert_array_equal(dp[0], [[0, 0, 2], [1, 2, 5]])  # mask 0's first polygon lost


@pytest.mark.parametrize("ids, polys, verts, exc, rest", [
    (np.array([5], np.int32), P3, V10, ValueError,
     "sample 0: mask id 5 (mask_ids[0]) is the mask id of no polygon; select only masks that "
     "the polygons (input 1) have."),
    (np.array([1, 2, 1], np.int32), P3, V10, ValueError,
     "sample 0: mask_ids has 1 more than once (again at position 2); give each mask id once."),
    (np.array([1], np.int32), np.array([[1, 3, 12]], np.int32), V10, ValueError,
     "sample 0: polygon 0 (mask id 1) has vertices [3, 12), which is not inside the 10 "
     "vertices given [0, 10)."),
    (np.array([1], np.int32), np.array([[0, -1, 2], [1, -1, 3]], np.int32), V10, ValueError,
     "sample 0: polygon 1 (mask id 1) has vertices [-1, 3), which is not inside the 10 vertices "
     "given [0, 10)."),
    (np.array([1], np.int32), np.array([[1, 5, 3]], np.int32), V10, ValueError,
     "sample 0: polygon 0 (mask id 1) has vertices [5, 3), which end before they start."),
    (np.array([1], np.int64), P3, V10, TypeError,
     "mask_ids (input 0) must be int32, got int64; convert them with fn.cast(mask_ids, "
     "dtype=types.INT32)."),
    (np.array([[1]], np.int32), P3, V10, ValueError,
     "sample 0: mask_ids (input 0) have shape (1, 1); give them as a 1-D list of mask ids."),
    (np.array([1], np.int32), P3.astype(np.int64), V10, TypeError,
     "polygons (input 1) must be int32, got int64; convert them with fn.cast(polygons, "
     "dtype=types.INT32)."),
    (np.array([1], np.int32), P3[:, :2], V10, ValueError,
     "sample 0: polygons (input 1) have shape (3, 2); give them as [N, 3], one row (mask_id, "
     "start_vertex, end_vertex) per polygon, as readers.coco(polygon_masks=True) makes them."),
    (np.array([1], np.int32), P3, V10.ravel(), ValueError,
     "sample 0: vertices (input 2) have shape (20,); give them as [N, ndim], one vertex per "
     "row."),
])
def test_select_masks_errors(ids, polys, verts, exc, rest):
    build = select(None, None, None)
    with pytest.raises(exc) as e:
        run(stoker_lib(), build, [[ids], [polys], [verts]])
    check_error(e, SEL, rest)
    try:
        dali = real_dali()
    except pytest.skip.Exception:
        return
    with pytest.raises(Exception):
        run(dali, build, [[ids], [polys], [verts]])


def test_select_masks_unselected_bad_polygon_is_not_checked():
    """As in DALI, only the polygons of selected masks are checked."""
    polys = np.array([[1, -1, 3], [0, 0, 2]], np.int32)
    (po, _, _), (vo, _, _) = both(select(None, None, None),
                                  [[np.array([0], np.int32)], [polys], [V10]])
    np.testing.assert_array_equal(po[0], [[0, 0, 2]])
    np.testing.assert_array_equal(vo[0], V10[:2])


# ---- random_object_bbox: where one answer is possible

def rob(**kw):
    def build(fn_, types_, m, *targs):
        names = kw.get("_tensor_args", [])
        args = {k: v for k, v in kw.items() if k != "_tensor_args"}
        return fn_.segmentation.random_object_bbox(m, **args, **dict(zip(names, targs)))
    return build


def outputs_as_boxes(outs, fmt):
    """Per sample, the box as (start..., end...)."""
    if fmt == "box":
        return [tuple(b) for b in outs[0]]
    if fmt == "start_end":
        return [tuple(s) + tuple(e) for s, e in zip(outs[0], outs[1])]
    return [tuple(a) + tuple(a + s) for a, s in zip(outs[0], outs[1])]


def blob_mask_2d():
    m = np.zeros((9, 11), np.uint8)
    m[2:5, 3:9] = 3
    m[4, 2] = 3
    return m


def blob_mask_3d():
    m = np.zeros((6, 7, 8), np.int32)
    m[1:4, 2:6, 3:5] = 5
    m[3, 5, 5] = 5
    return m


@pytest.mark.parametrize("fmt", ["anchor_shape", "start_end", "box"])
@pytest.mark.parametrize("output_class", [False, True])
def test_single_blob_equals_dali_and_scipy(fmt, output_class):
    masks = [blob_mask_2d(), blob_mask_2d()[::-1].copy()]
    res = both(rob(format=fmt, output_class=output_class), [masks])
    outs = values(res)
    assert all(dt == "int32" for _, _, dt in res)
    assert len(res) == (1 if fmt == "box" else 2) + output_class
    got = outputs_as_boxes(outs, fmt)
    for m, b in zip(masks, got):
        assert [b] == components(m, 3)
    if output_class:
        assert [int(c) for c in outs[-1]] == [3, 3]
        assert all(c.shape == () for c in outs[-1])
    m3 = [blob_mask_3d()]
    outs3 = values(both(rob(format=fmt, output_class=output_class), [m3]))
    assert outputs_as_boxes(outs3, fmt) == components(m3[0], 5)


def test_k_largest_one_equals_dali_and_scipy():
    rng = np.random.default_rng(11)
    masks = []
    for shape in [(30, 40), (12, 14, 16)]:
        for _ in range(3):
            m = (rng.random(shape) < 0.35).astype(np.uint8)
            comps = components(m, 1)
            vols = sorted((box_volume(b) for b in comps), reverse=True)
            if len(vols) > 1 and vols[0] == vols[1]:
                continue  # a tie: DALI's order decides (test_k_largest_ties)
            masks.append(m)
    assert len(masks) >= 3
    for m in masks:
        outs = values(both(rob(format="box", k_largest=1), [[m]]))
        best = max(components(m, 1), key=box_volume)
        assert tuple(outs[0][0]) == best


def test_k_largest_ties_and_box_volume_not_pixels():
    """Ties go to the blob met first in C order; the size is the box's, not the pixel count
    (an L of 15 pixels in an 8x8 box beats a 4x4 square)."""
    t1 = np.zeros((5, 9), np.int32); t1[0:2, 6:8] = 1; t1[3:5, 0:2] = 1
    t2 = np.zeros((5, 9), np.int32); t2[0:2, 0:2] = 1; t2[3:5, 6:8] = 1
    el = np.zeros((10, 10), np.uint8); el[0, 0:8] = 1; el[0:8, 0] = 1; el[5:9, 5:9] = 1
    out = values(both(rob(format="box", k_largest=1), [[t1, t2]]))
    assert [tuple(b) for b in out[0]] == [(0, 6, 2, 8), (0, 0, 2, 2)]
    out = values(both(rob(format="box", k_largest=1), [[el]]))
    assert tuple(out[0][0]) == (0, 0, 8, 8)


def test_face_connectivity_equals_dali_and_scipy():
    """Diagonal neighbours are apart: the two pixels are two blobs."""
    d = np.zeros((4, 4), np.uint8); d[0, 0] = 1; d[1, 1] = 1; d[1, 2] = 1
    out = values(both(rob(format="box", k_largest=1), [[d]]))
    assert components(d, 1) == [(0, 0, 1, 1), (1, 1, 2, 3)]
    assert tuple(out[0][0]) == (1, 1, 2, 3)
    d3 = np.zeros((3, 3, 3), np.uint8); d3[0, 0, 0] = 1; d3[1, 1, 0] = 1; d3[1, 1, 1] = 1
    out = values(both(rob(format="box", k_largest=1), [[d3]]))
    assert tuple(out[0][0]) == (1, 1, 0, 2, 2, 2)


def test_whole_input_cases_equal_dali():
    m = blob_mask_2d()
    empty = np.zeros((0, 4), np.uint8)
    blank = np.zeros((3, 4), np.uint8)
    # foreground_prob=0, no object at all, an empty mask: the whole input, class = background.
    for kw, masks in [(dict(foreground_prob=0.0), [m]), ({}, [blank, empty]),
                      (dict(threshold=[4, 4]), [m]), (dict(background=3), [m * 0 + 3])]:
        out = values(both(rob(format="box", output_class=True, **kw), [masks]))
        for mask, b, c in zip(masks, out[0], out[1]):
            assert tuple(b) == (0,) * mask.ndim + mask.shape
            assert int(c) == kw.get("background", 0)


def test_threshold_class_weights_background_equal_dali():
    m = np.zeros((8, 8), np.uint8)
    m[0, 0:5] = 1          # class 1: 1x5
    m[2:6, 7] = 2          # class 2: 4x1
    m[6:8, 0:2] = 4        # class 4: 2x2
    cases = [
        (dict(threshold=[2, 2]), (6, 0, 8, 2), 4),
        (dict(threshold=[3, 1]), (2, 7, 6, 8), 2),
        (dict(classes=[1], output_class=True), (0, 0, 1, 5), 1),
        (dict(classes=[9, 2]), (2, 7, 6, 8), 2),            # 9 is absent
        (dict(class_weights=[0.0, 1.0, 0.0]), (2, 7, 6, 8), 2),  # classes 1, 2, 3
        (dict(class_weights=[0.0, 0.0, 1.0]), (0, 0, 8, 8), 0),  # 3 is absent
        (dict(classes=[1, 2, 4], class_weights=[0, 0, 2.5]), (6, 0, 8, 2), 4),
        (dict(background=1, classes=[4]), (6, 0, 8, 2), 4),
    ]
    for kw, box, cls in cases:
        kw = dict(kw, output_class=True)
        out = values(both(rob(format="box", **kw), [[m]]))
        assert tuple(out[0][0]) == box, kw
        assert int(out[1][0]) == cls, kw


def test_background_moves_below_the_classes_equal_dali():
    """classes=[0, 1] without background: the background is -1 (one below the smallest)."""
    m = blob_mask_2d() // 3
    out = values(both(rob(format="box", output_class=True, classes=[0, 1],
                          foreground_prob=0.0), [[m]]))
    assert int(out[1][0]) == -1
    out = values(both(rob(format="box", output_class=True, classes=[1]), [[m]]))
    assert int(out[1][0]) == 1


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.uint16, np.int16, np.uint32,
                                   np.int32])
def test_mask_types_equal_dali(dtype):
    m = (blob_mask_2d() > 0).astype(dtype)
    out = values(both(rob(format="box", output_class=True), [[m]]))
    assert tuple(out[0][0]) == components(m, 1)[0]
    assert int(out[1][0]) == 1


def test_one_and_four_dimensions_equal_dali():
    line = np.array([0, 1, 1, 0, 2, 2, 2, 0, 1], np.uint8)
    out = values(both(rob(format="box", output_class=True, classes=[2]), [[line]]))
    assert (tuple(out[0][0]), int(out[1][0])) == ((4, 7), 2)
    m4 = np.zeros((3, 4, 5, 6), np.int16)
    m4[1:3, 0:2, 2:5, 1] = 7
    m4[0, 3, 0, 0:6] = 7
    out = values(both(rob(format="start_end", k_largest=1), [[m4]]))
    assert tuple(out[0][0]) + tuple(out[1][0]) == max(components(m4, 7), key=box_volume)


def test_ignore_class_k_largest_equals_dali():
    m = np.zeros((6, 6), np.uint8)
    m[0:2, 0:2] = 1
    m[2:6, 2:5] = 2  # touches class 1's blob only diagonally; the largest box of any class
    out = values(both(rob(format="box", ignore_class=True, k_largest=1), [[m]]))
    assert tuple(out[0][0]) == (2, 2, 6, 5)


def test_per_sample_arguments_equal_dali():
    m = np.zeros((8, 8), np.uint8)
    m[0, 0:5] = 1
    m[2:6, 7] = 2
    masks = [m, m, m]
    thr = [np.array([1, 3], np.int32), np.array([3, 1], np.int32), np.array([9, 9], np.int32)]
    fg = [np.array(1.0, np.float32), np.array(1.0, np.float32), np.array(1.0, np.float32)]
    out = values(both(rob(format="box", output_class=True,
                          _tensor_args=["threshold", "foreground_prob"]), [masks, thr, fg]))
    assert [tuple(b) for b in out[0]] == [(0, 0, 1, 5), (2, 7, 6, 8), (0, 0, 8, 8)]
    assert [int(c) for c in out[1]] == [1, 2, 0]


def test_coco_instances_k_largest_equal_dali_and_scipy(testdata):
    _, instances = coco_masks(testdata)
    binary = [(i > 0).astype(np.uint8) for i in instances]
    out = values(both(rob(format="box", k_largest=1), [binary]))
    for m, b in zip(binary, out[0]):
        comps = components(m, 1)
        vols = sorted((box_volume(c) for c in comps), reverse=True)
        assert tuple(b) == max(comps, key=box_volume)
        assert len(vols) == 1 or vols[0] > vols[1]


# ---- random_object_bbox: random choices

def test_coco_random_boxes_are_components(testdata):
    labels, instances = coco_masks(testdata)
    for masks in (labels, instances):
        ref = [all_components(m) for m in masks]
        runs = seeded(lambda f, m: f.segmentation.random_object_bbox(
            m, format="box", output_class=True), [masks], seed=3, iterations=4)
        for outs in runs:
            for r, b, c in zip(ref, outs[0], outs[1]):
                assert tuple(b) in r
                assert r[tuple(b)] == int(c)


def test_random_boxes_3d_are_components_and_seeds_reproduce():
    rng = np.random.default_rng(2)
    masks = [(rng.integers(0, 3, (7, 8, 9)) * (rng.random((7, 8, 9)) < 0.3)).astype(np.int32)
             for _ in range(8)]
    ref = [all_components(m) for m in masks]
    make = lambda f, m: f.segmentation.random_object_bbox(m, output_class=True)  # noqa: E731
    a = seeded(make, [masks], seed=5, iterations=3)
    b = seeded(make, [masks], seed=5, iterations=3, threads=1)
    c = seeded(make, [masks], seed=6, iterations=3)
    for run_a, run_b in zip(a, b):
        for x, y in zip(run_a, run_b):
            for s, t in zip(x, y):
                np.testing.assert_array_equal(s, t)
    flat = lambda r: [tuple(s.ravel()) for it in r for o in it for s in o]  # noqa: E731
    assert flat(a) != flat(c)
    for outs in a:
        for r, anchor, shape, cls in zip(ref, *outs):
            box = tuple(anchor) + tuple(anchor + shape)
            assert r[box] == int(cls)


def test_choice_distribution():
    """Class 1 has three blobs, class 2 one: class 2 comes half the time, each blob of class 1
    a sixth; with ignore_class each of the four blobs a quarter; with foreground_prob=0.25 the
    whole mask three times in four."""
    m = np.array([1, 0, 1, 0, 1, 0, 2, 2], np.uint8)
    masks = [m] * 64

    def counts(**kw):
        runs = seeded(lambda f, x: f.segmentation.random_object_bbox(x, format="box", **kw),
                      [masks], seed=9, iterations=25)
        c = {}
        for outs in runs:
            for b in outs[0]:
                c[tuple(b)] = c.get(tuple(b), 0) + 1
        return {k: v / 1600 for k, v in c.items()}

    c = counts()
    assert abs(c[(6, 8)] - 0.5) < 0.05
    for b in [(0, 1), (2, 3), (4, 5)]:
        assert abs(c[b] - 1 / 6) < 0.04
    c = counts(ignore_class=True)
    for b in [(0, 1), (2, 3), (4, 5), (6, 8)]:
        assert abs(c[b] - 0.25) < 0.04
    c = counts(foreground_prob=0.25)
    assert abs(c[(0, 8)] - 0.75) < 0.05
    c = counts(k_largest=1, classes=[1])  # all three of class 1 are 1 wide: ties, first wins
    assert c == {(0, 1): 1.0}


# ---- random_object_bbox: errors

def rob_fails(masks, exc=ValueError, **kw):
    with pytest.raises(exc) as e:
        run(stoker_lib(), rob(**kw), [masks])
    return e


def dali_rob_fails(masks, **kw):
    try:
        dali = real_dali()
    except pytest.skip.Exception:
        return
    with pytest.raises(Exception):
        run(dali, rob(**kw), [masks])


M2 = [blob_mask_2d()]


@pytest.mark.parametrize("masks, kw, exc, rest", [
    ([M2[0].astype(np.int64)], {}, TypeError,
     "the mask (input 0) must be bool or an integer type of at most 32 bits (uint8, int8, "
     "uint16, int16, uint32, int32), got int64; convert it with fn.cast(mask, "
     "dtype=types.INT32)."),
    ([M2[0].astype(np.float32)], {}, TypeError,
     "the mask (input 0) must be bool or an integer type of at most 32 bits (uint8, int8, "
     "uint16, int16, uint32, int32), got float32; convert it with fn.cast(mask, "
     "dtype=types.INT32)."),
    ([np.array(3, np.uint8)], {}, ValueError,
     "sample 0: the mask is a scalar (shape ()); random_object_bbox takes masks of 1 or more "
     "dimensions."),
    (M2, dict(format="corners"), ValueError,
     "argument 'format' must be one of ['anchor_shape', 'start_end', 'box'], got 'corners'."),
    (M2, dict(k_largest=0), ValueError, "argument 'k_largest' must be >= 1, got 0."),
    (M2, dict(ignore_class=True, output_class=True), ValueError,
     "argument 'ignore_class' cannot be True with output_class=True: with ignore_class no class "
     "is chosen. Leave out either."),
    (M2, dict(ignore_class=True, classes=[1]), ValueError,
     "argument 'ignore_class' cannot be True with classes: with ignore_class every blob is "
     "drawn alike, whatever its class. Leave out either."),
    (M2, dict(classes=[0, 3], background=0), ValueError,
     "argument 'classes' contains 0, the background label: a class cannot be the background. "
     "Remove it from classes or pass another background."),
    (M2, dict(classes=[1, 3], class_weights=[1.0]), ValueError,
     "argument 'class_weights' takes one weight per class, 2 for classes [1, 3], got 1: [1]."),
    (M2, dict(threshold=[1, 2, 3]), ValueError,
     "argument 'threshold' takes one minimum extent per axis of the mask, 2 for masks of shape "
     "(9, 11), got 3: [1, 2, 3]."),
])
def test_random_object_bbox_errors(masks, kw, exc, rest):
    e = rob_fails(masks, exc, **kw)
    check_error(e, ROB, rest)
    dali_rob_fails(masks, **kw)


def test_random_object_bbox_errors_dali_takes():
    """DALI takes negative class weights and probabilities outside [0, 1] (and answers with
    something); stoker says what is wrong."""
    e = rob_fails(M2, class_weights=[-1.0, 2.0])
    check_error(e, ROB, "argument 'class_weights' must be finite and >= 0 (relative "
                        "probabilities), got [-1, 2].")
    e = rob_fails(M2, foreground_prob=1.5)
    check_error(e, ROB, "argument 'foreground_prob' must be in [0, 1], got 1.5.")
    fg = [np.array(-0.5, np.float32)]
    with pytest.raises(ValueError) as e:
        run(stoker_lib(), rob(_tensor_args=["foreground_prob"]), [M2, fg])
    check_error(e, ROB, "argument 'foreground_prob' must be a probability in [0, 1], got -0.5 "
                        "for sample 0.")


# ---- random_mask_pixel

def rmp(**kw):
    def build(fn_, types_, m, *targs):
        names = kw.get("_tensor_args", [])
        args = {k: v for k, v in kw.items() if k != "_tensor_args"}
        return fn_.segmentation.random_mask_pixel(m, **args, **dict(zip(names, targs)))
    return build


def test_mask_pixel_single_foreground_equals_dali():
    m2 = np.zeros((6, 8), np.uint8); m2[2, 5] = 3
    m3 = np.zeros((4, 5, 6), np.float32); m3[3, 0, 4] = 0.75
    m1 = np.array([0, 0, 0, 9, 0], np.int64)
    for masks, kw, want in [([m2], dict(value=3), [2, 5]), ([m2], dict(threshold=2.5), [2, 5]),
                            ([m2], {}, [2, 5]), ([m3], dict(threshold=0.5), [3, 0, 4]),
                            ([m1], dict(value=9), [3])]:
        res = both(rmp(foreground=1, **kw), [masks])
        (out, layout, dt), = res
        assert dt == "int64"
        np.testing.assert_array_equal(out[0], want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.uint16, np.int16, np.uint32,
                                   np.int32, np.uint64, np.int64, np.float32])
def test_mask_pixel_types_equal_dali(dtype):
    m = np.zeros((5, 7), dtype); m[4, 1] = 1
    (out, _, _), = both(rmp(foreground=1), [[m]])
    np.testing.assert_array_equal(out[0], [4, 1])


def test_mask_pixel_foreground_pixels(testdata):
    labels, _ = coco_masks(testdata, n_images=3)
    rng = np.random.default_rng(4)
    vol = (rng.random((9, 10, 11)) < 0.05).astype(np.int32) * 2
    for masks, kw, test in [
        (labels, dict(threshold=0.0), lambda m, p: m[tuple(p)] > 0),
        (labels, dict(value=int(labels[0].max())),
         lambda m, p: m[tuple(p)] == labels[0].max() or not (m == labels[0].max()).any()),
        ([vol, vol], dict(value=2), lambda m, p: m[tuple(p)] == 2),
    ]:
        runs = seeded(lambda f, x: f.segmentation.random_mask_pixel(x, foreground=1, **kw),
                      [masks], seed=1, iterations=5)
        for outs in runs:
            for m, p in zip(masks, outs[0]):
                assert p.dtype == np.int64 and p.shape == (m.ndim,)
                assert test(m, p)


def test_mask_pixel_distributions():
    """foreground=1: each of the 3 foreground pixels a third of the time; foreground=0 (or no
    foreground pixel): every pixel alike; per-sample foreground flags."""
    m = np.zeros((4, 5), np.uint8)
    m[0, 0] = m[1, 3] = m[3, 4] = 1
    masks = [m] * 50

    def hist(mask_list, **kw):
        runs = seeded(lambda f, *x: f.segmentation.random_mask_pixel(x[0], **kw),
                      [mask_list], seed=2, iterations=40)
        h = np.zeros(m.shape)
        for outs in runs:
            for p in outs[0]:
                h[tuple(p)] += 1
        return h / h.sum()

    h = hist(masks, foreground=1)
    assert set(zip(*np.nonzero(h))) == {(0, 0), (1, 3), (3, 4)}
    assert np.all(np.abs(h[m > 0] - 1 / 3) < 0.04)
    for h in (hist(masks, foreground=0), hist([np.zeros_like(m)] * 50, foreground=1)):
        assert np.all(np.abs(h - 1 / 20) < 0.02)
    flags = [np.array(k % 2, np.int32) for k in range(6)]
    runs = seeded(lambda f, x, fl: f.segmentation.random_mask_pixel(x, foreground=fl),
                  [[m] * 6, flags], seed=3, iterations=30)
    for outs in runs:
        for k, p in enumerate(outs[0]):
            if k % 2:
                assert m[tuple(p)] == 1


def test_mask_pixel_seeds_reproduce():
    rng = np.random.default_rng(8)
    masks = [(rng.random((20, 30)) < 0.2).astype(np.uint8) for _ in range(6)]
    make = lambda f, x: f.segmentation.random_mask_pixel(x, foreground=1)  # noqa: E731
    a = seeded(make, [masks], seed=4, iterations=2)
    b = seeded(make, [masks], seed=4, iterations=2, threads=1)
    c = seeded(make, [masks], seed=5, iterations=2)
    flat = lambda r: [tuple(p) for it in r for p in it[0]]  # noqa: E731
    assert flat(a) == flat(b)
    assert flat(a) != flat(c)


@pytest.mark.parametrize("masks, kw, exc, rest", [
    ([np.zeros((3, 3), np.float64)], {}, TypeError,
     "the mask (input 0) must be bool, an integer type or float32, got float64; convert it with "
     "fn.cast(mask, dtype=types.FLOAT)."),
    ([np.array(3, np.uint8)], {}, ValueError,
     "sample 0: the mask is a scalar (shape ()); random_mask_pixel picks a position in a mask "
     "of 1 or more dimensions."),
    ([np.zeros((0, 4), np.uint8)], dict(foreground=1), ValueError,
     "sample 0: the mask has shape (0, 4), no pixels to pick from; drop empty masks before "
     "random_mask_pixel."),
    ([np.zeros((3, 3), np.uint8)], dict(value=1, threshold=0.5), ValueError,
     "argument 'value' cannot be given with threshold: foreground pixels are either those "
     "equal to value or those above threshold. Pass one of them."),
])
def test_mask_pixel_errors(masks, kw, exc, rest):
    with pytest.raises(exc) as e:
        run(stoker_lib(), rmp(**kw), [masks])
    check_error(e, RMP, rest)
    if masks[0].ndim > 0 and masks[0].size > 0:  # DALI crashes on a scalar, reads garbage on empty
        try:
            dali = real_dali()
        except pytest.skip.Exception:
            return
        with pytest.raises(Exception):
            run(dali, rmp(**kw), [masks])
