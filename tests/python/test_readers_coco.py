"""readers.coco on ../shared/testdata/coco (61 images, instances.json), against the JSON read
with Python's json module (boxes, labels, polygons: DALI's semantics written out in NumPy,
float32 as DALI computes them), pycocotools (pixel-wise masks, RLE) and Pillow (the images).
Variants of the annotations (RLE masks, empty images, shuffled categories, broken entries) are
written to a temporary folder and point at the real images."""
import collections
import copy
import json
import math
import os

import numpy as np
import pytest
from PIL import Image

import stoker
from stoker import fn, ops, pipeline_def, types

# pycocotools' decode trips NumPy 2's __array__ copy deprecation; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

if not hasattr(stoker._schema, "_adapter") or "readers.coco" not in stoker._schema.SCHEMAS:
    pytest.skip("this stoker has no readers.coco", allow_module_level=True)


@pytest.fixture(scope="module")
def coco(testdata):
    root = testdata / "coco"
    return str(root / "images"), str(root / "instances.json")


@pytest.fixture(scope="module")
def instances(coco):
    with open(coco[1]) as f:
        return json.load(f)


def write_json(tmp_path, data, name="instances.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


# ---- the reference: DALI's CocoLoader semantics, on the JSON as Python parses it

def reference(data, *, ltrb=False, ratio=False, skip_empty=False, include_iscrowd=True,
              avoid_class_remapping=False, size_threshold=0.1, images=None):
    cat_label = {c["id"]: i + 1 for i, c in enumerate(data["categories"])}
    by_name = {im["file_name"]: im for im in data["images"]}
    if images is None:
        order = sorted(data["images"], key=lambda im: im["id"])
    else:
        order = [by_name[f] for f in images]
    anns = collections.defaultdict(list)
    thr = np.float32(size_threshold)
    for a in data.get("annotations", []):
        w, h = np.float32(a["bbox"][2]), np.float32(a["bbox"][3])
        if w < thr or h < thr:
            continue
        if a.get("iscrowd", 0) and not include_iscrowd:
            continue
        anns[a["image_id"]].append(a)
    out = []
    for im in order:
        kept = anns[im["id"]]
        if skip_empty and not kept:
            continue
        size = np.array([im["width"], im["height"]], np.float32)
        boxes = np.array([a["bbox"] for a in kept], np.float32).reshape(-1, 4)
        if ltrb:
            boxes[:, 2] += boxes[:, 0]
            boxes[:, 3] += boxes[:, 1]
        if ratio:
            boxes /= np.tile(size, 2)
        labels = np.array([a["category_id"] if avoid_class_remapping else cat_label[a["category_id"]]
                           for a in kept], np.int32)
        polygons, vertices = [], []
        for k, a in enumerate(kept):
            seg = a.get("segmentation")
            if not isinstance(seg, list):
                continue  # an RLE mask has no polygons
            for poly in seg:
                v = np.array(poly, np.float32).reshape(-1, 2)
                if ratio:
                    v = v / size
                polygons.append([k, len(vertices), len(vertices) + len(v)])
                vertices.extend(v)
        out.append(dict(file=im["file_name"], id=im["id"], width=im["width"], height=im["height"],
                        boxes=boxes, labels=labels, anns=kept,
                        polygons=np.array(polygons, np.int32).reshape(-1, 3),
                        vertices=np.array(vertices, np.float32).reshape(-1, 2)))
    return out


def read_epoch(file_root, batch_size=16, count=None, **kw):
    """The outputs of readers.coco for `count` samples (default: one epoch), one list per output."""
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=3)
    def pipe():
        return tuple(fn.readers.coco(file_root=file_root, name="Reader", **kw))

    p = pipe()
    p.build()
    n = p.epoch_size("Reader") if count is None else count
    cols = None
    for _ in range(math.ceil(n / batch_size)):
        outs = p.run()
        if cols is None:
            cols = [[] for _ in outs]
            layouts = [o.layout() for o in outs]
            dtypes = [o.dtype for o in outs]
        for c, o in zip(cols, outs):
            c.extend(np.array(o[i]) for i in range(len(o)))
        sources = [outs[0].source_info(i) for i in range(len(outs[0]))]
        assert all(o.source_info(i) == sources[i] for o in outs for i in range(len(o)))
    return [c[:n] for c in cols], layouts, dtypes


def check_boxes_labels(got, ref):
    assert len(got[0]) == len(ref)
    for i, r in enumerate(ref):
        assert got[1][i].shape == (len(r["anns"]), 4), r["file"]
        np.testing.assert_array_equal(got[1][i], r["boxes"], err_msg=r["file"])
        np.testing.assert_array_equal(got[2][i], r["labels"], err_msg=r["file"])


# ---- boxes, labels, images, ids

def test_default_outputs(coco, instances):
    root, ann = coco
    (images, boxes, labels), layouts, dtypes = read_epoch(root, annotations_file=ann)
    ref = reference(instances)
    assert len(ref) == 61
    check_boxes_labels([images, boxes, labels], ref)
    assert dtypes == [types.UINT8, types.FLOAT, types.INT32]
    for i, r in enumerate(ref):  # the encoded files, byte for byte, in the order of the ids
        with open(os.path.join(root, r["file"]), "rb") as f:
            assert images[i].tobytes() == f.read(), r["file"]
    # DALI remaps to 1..N; this file's categories are 0..16, so labels move up by one.
    assert min(int(l.min()) for l in labels if l.size) == 1


@pytest.mark.parametrize("ltrb,ratio", [(True, False), (False, True), (True, True)])
def test_ltrb_and_ratio(coco, instances, ltrb, ratio):
    root, ann = coco
    (images, boxes, labels), _, _ = read_epoch(root, annotations_file=ann, ltrb=ltrb, ratio=ratio)
    check_boxes_labels([images, boxes, labels], reference(instances, ltrb=ltrb, ratio=ratio))


def test_image_ids_and_sources(coco, instances):
    root, ann = coco
    (images, boxes, labels, ids), _, dtypes = read_epoch(root, annotations_file=ann, image_ids=True)
    ref = reference(instances)
    assert dtypes[3] == types.INT32
    assert [int(x[0]) for x in ids] == [r["id"] for r in ref] == sorted(r["id"] for r in ref)
    assert all(x.shape == (1,) for x in ids)
    # save_img_ids: DALI's old name
    (_, _, _, ids_old), _, _ = read_epoch(root, annotations_file=ann, save_img_ids=True)
    assert [int(x[0]) for x in ids_old] == [r["id"] for r in ref]


def test_avoid_class_remapping(coco, instances):
    root, ann = coco
    out, _, _ = read_epoch(root, annotations_file=ann, avoid_class_remapping=True)
    check_boxes_labels(out, reference(instances, avoid_class_remapping=True))


def test_labels_follow_the_order_categories_are_listed(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    data["categories"] = data["categories"][::-1]
    for c in data["categories"]:  # non-contiguous ids, listed out of order
        c["id"] = c["id"] * 10 + 5
    for a in data["annotations"]:
        a["category_id"] = a["category_id"] * 10 + 5
    out, _, _ = read_epoch(coco[0], annotations_file=write_json(tmp_path, data))
    ref = reference(data)
    check_boxes_labels(out, ref)
    assert max(int(l.max()) for l in out[2] if l.size) == 17


@pytest.mark.parametrize("threshold", [60.0, 200.0])
def test_size_threshold_and_skip_empty(coco, instances, threshold):
    root, ann = coco
    for skip in (False, True):
        out, _, _ = read_epoch(root, annotations_file=ann, size_threshold=threshold,
                               skip_empty=skip, image_ids=True)
        ref = reference(instances, size_threshold=threshold, skip_empty=skip)
        check_boxes_labels(out, ref)
        assert [int(x[0]) for x in out[3]] == [r["id"] for r in ref]
        assert any(not len(r["anns"]) for r in ref) != skip  # some images lost every box


def test_skip_empty_on_images_without_annotations(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    drop = {im["id"] for im in data["images"][::5]}
    data["annotations"] = [a for a in data["annotations"] if a["image_id"] not in drop]
    ann = write_json(tmp_path, data)
    full, _, _ = read_epoch(coco[0], annotations_file=ann, image_ids=True)
    check_boxes_labels(full, reference(data))
    assert sum(b.shape == (0, 4) for b in full[1]) == len(drop)
    kept, _, _ = read_epoch(coco[0], annotations_file=ann, image_ids=True, skip_empty=True)
    ref = reference(data, skip_empty=True)
    check_boxes_labels(kept, ref)
    assert {int(x[0]) for x in kept[3]} == {im["id"] for im in data["images"]} - drop


def test_include_iscrowd(coco, instances):
    root, ann = coco
    out, _, _ = read_epoch(root, annotations_file=ann, include_iscrowd=False)
    ref = reference(instances, include_iscrowd=False)
    check_boxes_labels(out, ref)
    crowd = sum(a.get("iscrowd", 0) for a in instances["annotations"])
    assert crowd > 0
    assert sum(len(b) for b in out[1]) == len(instances["annotations"]) - crowd


def test_images_argument_order_and_repeats(coco, instances):
    root, ann = coco
    names = [im["file_name"] for im in instances["images"]]
    pick = [names[7], names[3], names[7], names[40]]
    out, _, _ = read_epoch(root, batch_size=4, annotations_file=ann, images=pick, image_ids=True)
    ref = reference(instances, images=pick)
    check_boxes_labels(out, ref)
    assert [int(x[0]) for x in out[3]] == [r["id"] for r in ref]


# ---- polygons, vertices, pixel-wise masks

def check_polygons(got_p, got_v, ref, legacy=False):
    for i, r in enumerate(ref):
        want = r["polygons"].copy()
        if legacy:
            want[:, 1:] *= 2
        np.testing.assert_array_equal(got_p[i], want, err_msg=r["file"])
        np.testing.assert_array_equal(got_v[i], r["vertices"], err_msg=r["file"])


@pytest.mark.parametrize("ratio", [False, True])
def test_polygon_masks(coco, instances, ratio):
    root, ann = coco
    out, layouts, dtypes = read_epoch(root, annotations_file=ann, polygon_masks=True, ratio=ratio)
    assert len(out) == 5 and dtypes[3:] == [types.INT32, types.FLOAT]
    ref = reference(instances, ratio=ratio)
    check_boxes_labels(out, ref)
    check_polygons(out[3], out[4], ref)
    assert sum(len(p) for p in out[3]) == sum(len(a["segmentation"]) for a in instances["annotations"])


def test_legacy_masks_format(coco, instances):
    root, ann = coco
    out, _, _ = read_epoch(root, annotations_file=ann, masks=True, image_ids=True)
    assert len(out) == 6
    check_polygons(out[3], out[4], reference(instances), legacy=True)


def test_multi_polygon_annotations(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    for a in data["annotations"][::3]:  # split polygons in two (a COCO annotation may hold many)
        p = a["segmentation"][0]
        half = (len(p) // 4) * 2
        if half >= 6 and len(p) - half >= 6:
            a["segmentation"] = [p[:half], p[half:]]
    out, _, _ = read_epoch(coco[0], annotations_file=write_json(tmp_path, data), polygon_masks=True)
    ref = reference(data)
    check_polygons(out[3], out[4], ref)
    assert sum(len(p) for p in out[3]) > len(data["annotations"])


def rle_uncompressed(mask):
    """COCO's uncompressed RLE of a 0/1 mask, in NumPy: runs over the column-major pixels."""
    flat = np.asarray(mask, np.uint8).flatten(order="F")
    edges = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.concatenate([[0], edges, [flat.size]])
    runs = np.diff(bounds).tolist()
    if flat[0] == 1:
        runs = [0] + runs
    return {"size": list(mask.shape), "counts": runs}


def pycoco_mask(seg, h, w):
    mask_util = pytest.importorskip("pycocotools.mask")
    if isinstance(seg, list):
        # pycocotools' rleFrPoly for every polygon; frPyObjects would take a polygon of 4
        # numbers (instances.json has three) for a box, where DALI rasterises a polygon.
        from pycocotools import _mask
        rle = mask_util.merge(_mask.frPoly(seg, h, w))
    elif isinstance(seg["counts"], list):
        rle = mask_util.frPyObjects(seg, h, w)
    else:
        rle = seg
    return mask_util.decode(rle)


def reference_pixelwise(r):
    """Each annotation's mask painted with its label, lowest label first (higher labels win)."""
    mask = np.zeros((r["height"], r["width"]), np.int32)
    order = sorted(range(len(r["anns"])), key=lambda k: r["labels"][k])
    for k in order:
        m = pycoco_mask(r["anns"][k]["segmentation"], r["height"], r["width"])
        mask[m > 0] = r["labels"][k]
    return mask[..., None]


@pytest.fixture(scope="module")
def rle_instances(instances):
    """instances.json with the crowd annotations (and a few more) as RLE masks, the way COCO
    stores crowds: compressed strings made by pycocotools and uncompressed run lists."""
    mask_util = pytest.importorskip("pycocotools.mask")
    data = copy.deepcopy(instances)
    size = {im["id"]: (im["height"], im["width"]) for im in data["images"]}
    n = 0
    for k, a in enumerate(data["annotations"]):
        if not (a.get("iscrowd") or k % 7 == 0):
            continue
        h, w = size[a["image_id"]]
        m = pycoco_mask(a["segmentation"], h, w)
        if n % 2 == 0:
            enc = mask_util.encode(np.asfortranarray(m))
            a["segmentation"] = {"size": [h, w], "counts": enc["counts"].decode()}
        else:
            a["segmentation"] = rle_uncompressed(m)
        n += 1
    assert n >= 10
    return data


def test_pixelwise_masks_polygons(coco, instances):
    pytest.importorskip("pycocotools")
    root, ann = coco
    out, layouts, dtypes = read_epoch(root, annotations_file=ann, pixelwise_masks=True)
    assert len(out) == 4 and layouts[3] == "HWC" and dtypes[3] == types.INT32
    ref = reference(instances)
    for i, r in enumerate(ref):
        want = reference_pixelwise(r)
        assert out[3][i].shape == want.shape, r["file"]
        assert (out[3][i] != want).sum() == 0, r["file"]
    assert any(len(np.unique(m)) > 2 for m in out[3])  # several classes in one mask


def test_pixelwise_masks_rle(coco, rle_instances, tmp_path):
    ann = write_json(tmp_path, rle_instances)
    out, _, _ = read_epoch(coco[0], annotations_file=ann, pixelwise_masks=True, image_ids=True)
    ref = reference(rle_instances)
    check_boxes_labels(out, ref)
    for i, r in enumerate(ref):
        np.testing.assert_array_equal(out[3][i], reference_pixelwise(r), err_msg=r["file"])


def test_pixelwise_masks_odd_polygons(coco, instances, tmp_path):
    """Random polygons on a few images: vertices outside the image, repeated vertices, two- and
    one-vertex polygons, fractional coordinates, classes overlapping."""
    pytest.importorskip("pycocotools")
    rng = np.random.default_rng(5)
    data = copy.deepcopy(instances)
    chosen = data["images"][:4]
    next_id = 10_000
    for im in chosen:
        w, h = im["width"], im["height"]
        for k in range(12):
            n = int(rng.integers(1, 9))
            xs = rng.uniform(-0.2 * w, 1.2 * w, n)
            ys = rng.uniform(-0.2 * h, 1.2 * h, n)
            poly = np.stack([xs, ys], 1).round(int(rng.integers(0, 3)))
            if k % 4 == 0 and n > 1:
                poly[1] = poly[0]
            data["annotations"].append({
                "id": next_id, "image_id": im["id"], "category_id": int(rng.integers(0, 17)),
                "iscrowd": 0, "bbox": [1.0, 1.0, 10.0, 10.0],
                "segmentation": [poly.ravel().tolist()]})
            next_id += 1
    ann = write_json(tmp_path, data)
    pick = [im["file_name"] for im in chosen]
    out, _, _ = read_epoch(coco[0], batch_size=4, annotations_file=ann, images=pick,
                           pixelwise_masks=True)
    for i, r in enumerate(reference(data, images=pick)):
        np.testing.assert_array_equal(out[3][i], reference_pixelwise(r), err_msg=r["file"])


def test_pixelwise_masks_with_ratio_rasterise_pixels(coco, instances):
    """ratio=True changes the boxes, not the masks (DALI would rasterise the ratios)."""
    root, ann = coco
    pick = [im["file_name"] for im in instances["images"][:4]]
    plain, _, _ = read_epoch(root, batch_size=4, annotations_file=ann, images=pick,
                             pixelwise_masks=True)
    ratio, _, _ = read_epoch(root, batch_size=4, annotations_file=ann, images=pick,
                             pixelwise_masks=True, ratio=True)
    check_boxes_labels(ratio, reference(instances, images=pick, ratio=True))
    for a, b in zip(plain[3], ratio[3]):
        np.testing.assert_array_equal(a, b)
        assert a.any()


def test_pixelwise_mask_size_limit(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    data["images"][0].update(width=60000, height=60000)
    ann = write_json(tmp_path, data)
    with pytest.raises(ValueError, match=r"images\[0\] \(id 0\): is 60000x60000, more pixels than"):
        build_error(coco[0], annotations_file=ann, pixelwise_masks=True)
    build_error(coco[0], annotations_file=ann)  # only the masks need the size


def test_polygon_masks_skip_rle_annotations(coco, rle_instances, tmp_path):
    ann = write_json(tmp_path, rle_instances)
    out, _, _ = read_epoch(coco[0], annotations_file=ann, polygon_masks=True)
    ref = reference(rle_instances)
    check_polygons(out[3], out[4], ref)  # mask indices still count the RLE annotations
    assert sum(len(p) for p in out[3]) < len(rle_instances["annotations"])


# ---- sharding, shuffling, decoding

@pytest.mark.parametrize("num_shards", [2, 3, 7])
def test_shards_cover_every_image_once(coco, instances, num_shards):
    root, ann = coco
    n = len(instances["images"])
    seen = []
    for shard in range(num_shards):
        size = (shard + 1) * n // num_shards - shard * n // num_shards
        out, _, _ = read_epoch(root, batch_size=4, count=size, annotations_file=ann, image_ids=True,
                               shard_id=shard, num_shards=num_shards)
        seen += [int(x[0]) for x in out[3]]
    assert sorted(seen) == sorted(im["id"] for im in instances["images"])


def test_random_shuffle_epoch(coco, instances):
    root, ann = coco
    out, _, _ = read_epoch(root, batch_size=8, annotations_file=ann, image_ids=True,
                           random_shuffle=True, initial_fill=16)
    ids = [int(x[0]) for x in out[3]]
    assert sorted(ids) == sorted(im["id"] for im in instances["images"])
    assert ids != sorted(ids)
    by_id = {r["id"]: r for r in reference(instances)}
    for i, x in enumerate(ids):  # boxes travel with their image
        np.testing.assert_array_equal(out[1][i], by_id[x]["boxes"])


def test_reader_meta(coco):
    root, ann = coco

    @pipeline_def(batch_size=8, num_threads=1, device_id=None, seed=1)
    def pipe():
        imgs, boxes, labels = fn.readers.coco(file_root=root, annotations_file=ann, name="Reader",
                                              num_shards=2, shard_id=1, pad_last_batch=True)
        return imgs, boxes, labels

    p = pipe()
    p.build()
    meta = p.reader_meta("Reader")
    assert meta["epoch_size"] == 61 and meta["epoch_size_padded"] == 62
    assert meta["number_of_shards"] == 2 and meta["shard_id"] == 1


def test_decoded_images_equal_pillow(coco, instances):
    root, ann = coco
    names = sorted(im["file_name"] for im in instances["images"])
    pick = [f for f in names if f.endswith(".png")] + names[:5]  # RGBA PNGs and JPEGs

    @pipeline_def(batch_size=len(pick), num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, boxes, labels = fn.readers.coco(file_root=root, annotations_file=ann, images=pick)
        return fn.decoders.image(jpegs, output_type=types.RGB), boxes

    images, boxes = pipe().run()
    for i, f in enumerate(pick):
        with Image.open(os.path.join(root, f)) as im:
            want = np.asarray(im.convert("RGB"))
        assert images[i].shape == want.shape, f
        assert np.abs(images[i].astype(int) - want).max() == 0, f


def test_legacy_ops_api(coco, instances):
    root, ann = coco

    class Pipe(stoker.Pipeline):
        def __init__(self):
            super().__init__(batch_size=4, num_threads=1, device_id=None, seed=1)
            self.input = ops.COCOReader(file_root=root, annotations_file=ann, ltrb=True,
                                        polygon_masks=True)

        def define_graph(self):
            return self.input()

    outs = Pipe().run()
    assert len(outs) == 5
    ref = reference(instances, ltrb=True)
    for i in range(4):
        np.testing.assert_array_equal(np.array(outs[1][i]), ref[i]["boxes"])
        np.testing.assert_array_equal(np.array(outs[4][i]), ref[i]["vertices"])


# ---- preprocessed annotations (DALI's binary format)

def dat(path, dtype, per=1):
    """One of DALI's preprocessed arrays: a uint32 count, then the elements."""
    raw = open(path, "rb").read()
    n = int(np.frombuffer(raw[:4], np.uint32)[0])
    arr = np.frombuffer(raw[4:], dtype)
    assert arr.size == n * per, path
    return arr


def test_preprocessed_annotations_round_trip(coco, instances, tmp_path):
    root, ann = coco
    meta = tmp_path / "meta"
    kw = dict(polygon_masks=True, image_ids=True)
    first, _, _ = read_epoch(root, annotations_file=ann, ltrb=True, size_threshold=60.0,
                             save_preprocessed_annotations=True,
                             save_preprocessed_annotations_dir=str(meta), **kw)
    ref = reference(instances, ltrb=True, size_threshold=60.0)
    # The files, read independently as DALI's CocoLoader lays them out.
    names = (meta / "filenames.dat").read_text().split("\n")[:-1]
    assert names == [r["file"] for r in ref]
    np.testing.assert_array_equal(dat(meta / "counts.dat", np.int32), [len(r["anns"]) for r in ref])
    np.testing.assert_array_equal(dat(meta / "original_ids.dat", np.int32), [r["id"] for r in ref])
    np.testing.assert_array_equal(dat(meta / "boxes.dat", np.float32).reshape(-1, 4),
                                  np.concatenate([r["boxes"] for r in ref]))
    np.testing.assert_array_equal(dat(meta / "polygon_data.dat", np.int32, 3).reshape(-1, 3),
                                  np.concatenate([r["polygons"] for r in ref]))
    np.testing.assert_array_equal(dat(meta / "vertices_offset.dat", np.int64),
                                  np.cumsum([0] + [len(r["vertices"]) for r in ref])[:-1])
    second, _, _ = read_epoch(root, preprocessed_annotations=str(meta), **kw)
    for a, b in zip(first, second):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    # The old argument names.
    third, _, _ = read_epoch(root, meta_files_path=str(meta), **kw)
    np.testing.assert_array_equal(np.concatenate(third[1]), np.concatenate(first[1]))


def test_preprocessed_pixelwise_round_trip(coco, rle_instances, tmp_path):
    ann = write_json(tmp_path, rle_instances)
    meta = tmp_path / "meta"
    first, _, _ = read_epoch(coco[0], annotations_file=ann, pixelwise_masks=True,
                             dump_meta_files=True, dump_meta_files_path=str(meta))
    second, _, _ = read_epoch(coco[0], preprocessed_annotations=str(meta), pixelwise_masks=True)
    for x, y in zip(first[3], second[3]):
        np.testing.assert_array_equal(x, y)
    assert (meta / "masks_rles.dat").exists()


def test_preprocessed_errors(coco, tmp_path):
    root, ann = coco
    meta = tmp_path / "meta"
    read_epoch(root, count=1, annotations_file=ann, save_preprocessed_annotations=True,
               save_preprocessed_annotations_dir=str(meta))
    with pytest.raises(ValueError, match="ratio.*cannot be used with preprocessed_annotations"):
        read_epoch(root, count=1, preprocessed_annotations=str(meta), ratio=True)
    with pytest.raises(ValueError, match="original_ids.dat.*saved without image_ids"):
        read_epoch(root, count=1, preprocessed_annotations=str(meta), image_ids=True)
    with pytest.raises(ValueError, match="polygon_offset.dat"):
        read_epoch(root, count=1, preprocessed_annotations=str(meta), polygon_masks=True)
    raw = (meta / "boxes.dat").read_bytes()
    (meta / "boxes.dat").write_bytes(raw[:-6])
    with pytest.raises(ValueError, match="boxes.dat has .* bytes"):
        read_epoch(root, count=1, preprocessed_annotations=str(meta))
    with pytest.raises(FileNotFoundError, match="preprocessed_annotations"):
        read_epoch(root, count=1, preprocessed_annotations=str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="save_preprocessed_annotations_dir"):
        read_epoch(root, count=1, annotations_file=ann, save_preprocessed_annotations=True)


# ---- errors

def build_error(root, **kw):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        return tuple(fn.readers.coco(file_root=root, **kw))

    pipe().build()


def test_argument_errors(coco, tmp_path):
    root, ann = coco
    with pytest.raises(FileNotFoundError, match="readers.coco.*annotations_file '.*nope.json' does not"):
        build_error(root, annotations_file=str(tmp_path / "nope.json"))
    with pytest.raises(ValueError, match="annotations_file.*is required") as e:
        build_error(root)
    assert str(e.value).count("fn.readers.coco") == 1
    with pytest.raises(ValueError, match="'file_root' is required"):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
        def pipe():
            return tuple(fn.readers.coco(annotations_file=ann))
        pipe().build()
    with pytest.raises(ValueError, match="'pixelwise_masks' cannot be combined with polygon_masks"):
        build_error(root, annotations_file=ann, polygon_masks=True, pixelwise_masks=True)
    with pytest.raises(ValueError, match="'images' entry 1 'nope.jpg' is not a file_name"):
        build_error(root, annotations_file=ann, images=["dog-2467149_1280.jpg", "nope.jpg"])
    with pytest.raises(ValueError, match="skip_cached_images"):
        build_error(root, annotations_file=ann, skip_cached_images=True)


@pytest.mark.parametrize("mutate,match", [
    (lambda d: "{\"images\": [", "is not valid JSON"),
    (lambda d: [1, 2], "must hold a JSON object"),
    (lambda d: {**d, "images": {"a": 1}}, "'images' must be a list"),
    (lambda d: {k: v for k, v in d.items() if k != "images"}, "has no 'images' list"),
    (lambda d: {**d, "images": d["images"] + [7]}, "'images' holds 7, which is not an object"),
    (lambda d: {**d, "images": d["images"] + [{"id": 999}]},
     r"images\[61\] \(id 999\): 'file_name' must be a non-empty string"),
    (lambda d: {**d, "images": d["images"] + [dict(d["images"][0], file_name="x.jpg")]},
     r"images\[61\]: repeats the id 0 of images\[0\]"),
    (lambda d: {**d, "annotations": [dict(d["annotations"][0], bbox=[1, 2, 3])]},
     r"annotations\[0\] \(id 1\): 'bbox' must be a list of 4 numbers"),
    (lambda d: {**d, "annotations": [dict(d["annotations"][0], image_id="a")]},
     r"annotations\[0\] \(id 1\): 'image_id' must be an integer"),
    (lambda d: {**d, "annotations": [dict(d["annotations"][0], category_id=999)]},
     r"annotations\[0\] \(id 1\): has the category_id 999, which 'categories' does not list.*"
     "avoid_class_remapping"),
    (lambda d: {**d, "categories": d["categories"] + [{"id": 3}]},
     r"categories\[17\]: repeats the category id 3"),
])
def test_malformed_annotations(coco, instances, tmp_path, mutate, match):
    data = mutate(copy.deepcopy(instances))
    path = tmp_path / "bad.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(ValueError, match=match) as e:
        build_error(coco[0], annotations_file=str(path))
    assert "bad.json" in str(e.value) and "fn.readers.coco" in str(e.value)


@pytest.mark.parametrize("seg,match", [
    ({"size": [10, 10], "counts": [5, 5]}, "the RLE runs cover 10 pixels"),
    ({"size": [10], "counts": "a"}, r"'size': \[height, width\]"),
    ({"size": [853, 1280], "counts": "\u00ff"}, "the RLE string has the character byte 0xC3"),
    ({"size": [853, 1280], "counts": "0~"}, "the RLE string has the character '~' at position 1"),
    ({"size": [853, 1280], "counts": "0["}, "the RLE string ends inside a count"),
    ([[1, 2, 3]], "polygon 0 has 3 numbers"),
    ("abc", "'segmentation' must be a list of polygons or an RLE object"),
])
def test_malformed_segmentation(coco, instances, tmp_path, seg, match):
    data = copy.deepcopy(instances)
    data["annotations"][0]["segmentation"] = seg
    ann = write_json(tmp_path, data, "bad.json")
    with pytest.raises(ValueError, match=match):
        build_error(coco[0], annotations_file=ann, pixelwise_masks=True)


def test_nothing_to_read(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    data["annotations"] = []
    ann = write_json(tmp_path, data)
    with pytest.raises(ValueError, match="gives no image to read .skip_empty=True dropped") as e:
        build_error(coco[0], annotations_file=ann, skip_empty=True)
    assert str(e.value).count("fn.readers.coco") == 1
    out, _, _ = read_epoch(coco[0], annotations_file=ann)  # without skip_empty: empty boxes
    assert len(out[1]) == 61 and all(b.shape == (0, 4) for b in out[1])
    assert all(l.shape == (0,) for l in out[2])


def test_rle_of_wrong_size(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    data["annotations"][0]["segmentation"] = {"size": [10, 10], "counts": [100]}
    with pytest.raises(ValueError, match=r"annotations\[0\].*RLE mask of size 10x10 for image"):
        build_error(coco[0], annotations_file=write_json(tmp_path, data), pixelwise_masks=True)


def test_missing_image_file(coco, instances, tmp_path):
    data = copy.deepcopy(instances)
    data["images"][0]["file_name"] = "missing.jpg"  # id 0: the first image read
    ann = write_json(tmp_path, data)
    with pytest.raises(FileNotFoundError, match="missing.jpg"):
        read_epoch(coco[0], batch_size=4, count=4, annotations_file=ann)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def pipe():
        return tuple(fn.readers.coco(file_root=coco[0], annotations_file=ann, image_ids=True,
                                     on_error="skip"))

    p = pipe()
    images, boxes, labels, ids = p.run()
    # The next good image takes the bad one's place.
    assert sorted(int(np.array(ids[i])[0]) for i in range(4)) == [1, 2, 3, 4]
    assert all(np.array(images[i]).size > 0 for i in range(4))
    assert "missing.jpg" in str(p.error_stats())
