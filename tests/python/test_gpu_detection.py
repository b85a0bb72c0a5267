"""GPU twins of the detection operators (issue 19): bb_flip, coord_flip, coord_transform and
box_encoder run on the CPU and on the GPU copy of the same data in one pipeline and must agree
bit for bit (box_encoder's offsets within 1 ulp), on synthetic boxes and on COCO's; and the
SSD300 pipeline of examples/ssd300.py gives the same boxes and labels with device='gpu' as on the
CPU. Runs on the GPU machine; skipped where there is no GPU."""
import sys
from pathlib import Path

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types
from test_gpu_graph_ops import DRY_RUN, assert_same, host, twins

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import ssd300  # noqa: E402

RNG = np.random.default_rng(19)
f32 = np.float32


def ltrb_boxes(n):
    lt = RNG.uniform(0, 0.8, size=(n, 2))
    wh = RNG.uniform(0, 0.5, size=(n, 2))
    return np.concatenate([lt, np.minimum(lt + wh, 1)], 1).astype(f32)


BOXES = [ltrb_boxes(n) for n in (5, 1, 0, 17)]
BOXES[2] = BOXES[2].reshape(0, 4)


@pytest.mark.parametrize("ltrb", [True, False])
def test_bb_flip(ltrb):
    h = [np.array(v, np.int32) for v in (1, 0, 1, 1)]
    v = [np.array(v, np.int32) for v in (0, 1, 1, 0)]
    twins([BOXES, h, v], lambda b, hh, vv: fn.bb_flip(b, ltrb=ltrb, horizontal=hh, vertical=vv),
          keep=(1, 2))


@pytest.mark.parametrize("layout,nd", [("", 2), ("yx", 2), ("xyz", 3), ("zyx", 3), ("x", 1)])
def test_coord_flip(layout, nd):
    pts = [RNG.uniform(-1, 2, size=(n, nd)).astype(f32) for n in (7, 0, 300)]
    fy = [np.array(v, np.int32) for v in (1, 0, 1)]
    cx = [np.array(v, f32) for v in (0.5, 0.25, 0.9)]
    twins([pts, fy, cx], lambda p, y, c: fn.coord_flip(p, layout=layout, flip_y=y, flip_z=1,
                                                       center_x=c), keep=(1, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.float64])
def test_coord_transform_mt(dtype):
    pts = [(RNG.uniform(0, 200, size=(n, 2))).astype(dtype) for n in (9, 0, 1000)]
    mts = [RNG.uniform(-2, 2, size=(3, 3)).astype(f32) for _ in pts]
    twins([pts, mts], lambda p, m: fn.coord_transform(p, MT=m), keep=(1,))
    if dtype != np.float32:
        twins([pts, mts], lambda p, m: fn.coord_transform(p, MT=m, dtype=types.to_dali_type(dtype)),
              keep=(1,))


def test_coord_transform_from_transforms():
    pts = [RNG.uniform(0, 1, size=(n, 2)).astype(f32) for n in (4, 50)]

    def make(p):
        mt = fn.transforms.rotation(angle=30.0, center=[0.5, 0.5])
        mt = fn.transforms.scale(mt, scale=[2.0, 0.5])
        return fn.coord_transform(p, MT=mt), fn.coord_transform(p, M=[0, 1, 1, 0], T=[0.5, -1])
    twins([pts], make)


@pytest.mark.parametrize("kw", [{}, {"criteria": 0.3}, {"offset": True},
                                {"offset": True, "scale": 300.0, "means": [0.1, 0.2, 0.0, 0.0],
                                 "stds": [0.1, 0.1, 0.2, 0.2]}])
@pytest.mark.parametrize("label_type", [np.int32, np.int64])
def test_box_encoder_ssd300(kw, label_type):
    anchors = ssd300.ssd300_anchors()
    labels = [RNG.integers(1, 81, size=len(b)).astype(label_type) for b in BOXES]

    @pipeline_def(batch_size=len(BOXES), num_threads=2, device_id=0, seed=3)
    def pipe():
        b = fn.external_source(source=lambda: BOXES)
        lab = fn.external_source(source=lambda: labels)
        cpu = fn.box_encoder(b, lab, anchors=anchors, **kw)
        gpu = fn.box_encoder(b.gpu(), lab.gpu(), anchors=anchors, **kw)
        return cpu + gpu

    p = pipe()
    p.build()
    cb, cl, gb, gl = p.run()
    assert_same(cl, gl)
    if kw.get("offset"):
        # The logarithm may round the other way (1 ulp of the log), which subtracting a mean
        # and dividing by a std turn into a few ulps of the result: within float rounding.
        for x, y in zip(host(cb), host(gb)):
            assert x.shape == y.shape == (8732, 4) and y.dtype == np.float32
            np.testing.assert_array_equal(y[:, :2], x[:, :2])
            np.testing.assert_allclose(y[:, 2:], x[:, 2:], rtol=1e-6, atol=1e-6)
    else:
        assert_same(cb, gb)


def coco_paths():
    from conftest import TESTDATA
    root = TESTDATA / "coco"
    if not (root / "instances.json").is_file():
        pytest.skip(f"no COCO test data at {root}")
    return str(root / "images"), str(root / "instances.json")


def test_box_encoder_and_bb_flip_coco():
    images, annotations = coco_paths()
    anchors = ssd300.ssd300_anchors()

    @pipeline_def(batch_size=16, num_threads=2, device_id=0, seed=3)
    def pipe():
        _, boxes, labels = fn.readers.coco(file_root=images, annotations_file=annotations,
                                           ratio=True, ltrb=True)
        coin = fn.random.coin_flip()
        fc = fn.bb_flip(boxes, ltrb=True, horizontal=coin)
        fg = fn.bb_flip(boxes.gpu(), ltrb=True, horizontal=coin)
        ec = fn.box_encoder(fc, labels, anchors=anchors)
        eg = fn.box_encoder(fg, labels.gpu(), anchors=anchors)
        return (fc, fg) + ec + eg

    p = pipe()
    p.build()
    for _ in range(4):          # 61 images: every one, and a wrap-around
        fc, fg, cb, cl, gb, gl = p.run()
        assert_same(fc, fg)
        assert_same(cb, gb)
        assert_same(cl, gl)


def test_ssd300_pipeline_gpu_equals_cpu():
    """The whole SSD300 pipeline with device='gpu' (nvJPEG, GPU resize and colour, GPU bb_flip
    and box_encoder): the same random draws, so the same encoded boxes and labels as on the CPU;
    images within what nvJPEG's decoding and the GPU resize change."""
    images, annotations = coco_paths()
    cpu = ssd300.make_pipeline("stoker", images, annotations, batch_size=8, num_threads=2,
                               device="cpu", seed=7)
    gpu = ssd300.make_pipeline("stoker", images, annotations, batch_size=8, num_threads=2,
                               device="gpu", seed=7)
    for _ in range(3):
        ci, cb, cl = cpu.run()
        gi, gb, gl = gpu.run()
        assert isinstance(gb, stoker.TensorListGPU) or DRY_RUN
        assert_same(cl, gl)
        for x, y in zip(host(cb), host(gb)):
            np.testing.assert_array_equal(y, x)
        for x, y in zip(host(ci), host(gi)):
            assert x.shape == y.shape == (3, 300, 300) and y.dtype == np.float32
            # Normalized units (std ~58 levels): a few levels apart at most, on average far less.
            assert np.abs(y - x).mean() < 0.05, np.abs(y - x).mean()


@pytest.mark.parametrize("dtype", [None, types.FLOAT, types.INT16])
def test_multi_paste(dtype):
    """Overlapping regions pasted in order from other samples of the batch, with and without a
    type change: the GPU's canvases equal the CPU's."""
    imgs = [RNG.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in
            [(40, 60), (32, 32), (50, 20)]]
    ids = [np.array(v, np.int32) for v in ([1, 2, 0], [0], [2, 2])]
    in_anchors = [np.array(v, np.int32) for v in ([[0, 0], [10, 5], [3, 7]], [[5, 5]], [[0, 0], [20, 10]])]
    shapes = [np.array(v, np.int32) for v in ([[30, 30], [20, 10], [25, 40]], [[20, 30]], [[30, 20], [10, 5]])]
    out_anchors = [np.array(v, np.int32) for v in ([[0, 0], [10, 10], [5, 8]], [[1, 2]], [[2, 3], [7, 9]])]
    kw = {} if dtype is None else {"dtype": dtype}
    twins([imgs, ids, in_anchors, shapes, out_anchors],
          lambda x, i, a, s, o: fn.multi_paste(x, in_ids=i, in_anchors=a, shapes=s, out_anchors=o,
                                               output_size=[48, 64], **kw),
          keep=(1, 2, 3, 4))


@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
@pytest.mark.parametrize("border", ["constant", "replicate", "reflect", "reflect_101", "wrap"])
def test_warp_perspective(interp, border):
    """Per-sample homographies over every border mode, a per-channel fill, a new size: the GPU
    equals the CPU bit for bit (the same float32 map and sampler)."""
    imgs = [RNG.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in [(48, 64), (30, 20)]]
    mats = [np.array([[1.1, 0.2, -5], [-0.1, 0.9, 3], [0.001, -0.002, 1]], f32),
            np.array([[0.7, -0.3, 12], [0.25, 1.3, -4], [-0.003, 0.001, 1.1]], f32)]
    twins([imgs, mats],
          lambda x, m: fn.experimental.warp_perspective(x, matrix=m, size=[40, 50], interp_type=interp,
                                                        border_mode=border, fill_value=[10, 200, 77]),
          keep=(1,))


@pytest.mark.parametrize("layout", ["CHW", "FHWC"])
def test_warp_perspective_layouts(layout):
    shape = (3, 32, 40) if layout == "CHW" else (2, 32, 40, 3)
    imgs = [RNG.uniform(0, 1, size=shape).astype(f32) for _ in range(2)]
    mats = [np.array([[1, 0.1, 2], [0, 1.2, -3], [0.002, 0, 1]], f32)] * 2

    @pipeline_def(batch_size=2, num_threads=2, device_id=0, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout=layout)
        m = fn.external_source(source=lambda: mats)
        kw = dict(matrix=m, inverse_map=False, pixel_origin="center", fill_value=[0.5])
        return (fn.experimental.warp_perspective(x, **kw),
                fn.experimental.warp_perspective(x.gpu(), **kw))

    p = pipe()
    p.build()
    c, g = p.run()
    assert_same(c, g)
