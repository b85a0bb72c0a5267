"""The SSD300 training pipeline of examples/ssd300.py (issue 19) on ../shared/testdata/coco: its
default boxes against the independent copy in test_boxes.py; its outputs' shapes, types and
layouts against NVIDIA DALI 2.4 running the same code; the encoded boxes consistent with the
anchors and the crop; the batches through the PyTorch iterator into a few training steps."""
import sys
from pathlib import Path

import numpy as np
import pytest

from _dali_ref import real_dali
from test_boxes import ssd300_anchors as anchors_reference

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import ssd300  # noqa: E402


@pytest.fixture
def coco(testdata):
    root = testdata / "coco"
    if not (root / "instances.json").is_file():
        pytest.skip(f"no COCO test data at {root}")
    return str(root / "images"), str(root / "instances.json")


def test_default_boxes():
    a = np.array(ssd300.ssd300_anchors(), np.float64).reshape(-1, 4)
    assert a.shape == (8732, 4)
    np.testing.assert_allclose(a.ravel(), anchors_reference(), rtol=0, atol=1e-12)
    assert (a[:, 2] >= a[:, 0]).all() and (a[:, 3] >= a[:, 1]).all()


def outputs(api, coco, iterations=3, batch_size=8):
    p = ssd300.make_pipeline(api, *coco, batch_size=batch_size, num_threads=2, device="cpu",
                             seed=11)
    runs = []
    for _ in range(iterations):
        outs = p.run()
        runs.append([(o.layout(), [np.array(o.at(i)) for i in range(len(o))]) for o in outs])
    return runs


def check_encoded(boxes, labels, anchors):
    """Unmatched anchors keep their own (center, size) and label 0; matched ones carry a box
    inside the unit square and a COCO category."""
    a = np.asarray(anchors, np.float32).reshape(-1, 4)
    center = np.stack([0.5 * (a[:, 2] + a[:, 0]), 0.5 * (a[:, 3] + a[:, 1])], 1).astype(np.float32)
    size = np.stack([a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]], 1).astype(np.float32)
    free = labels == 0
    np.testing.assert_array_equal(boxes[free, :2], center[free])
    np.testing.assert_array_equal(boxes[free, 2:], size[free])
    m = ~free
    assert (labels[m] >= 1).all() and (labels[m] <= 90).all()
    cx, cy, w, h = boxes[m].T
    eps = 1e-5
    assert (w >= 0).all() and (h >= 0).all()
    assert (cx - w / 2 >= -eps).all() and (cx + w / 2 <= 1 + eps).all()
    assert (cy - h / 2 >= -eps).all() and (cy + h / 2 <= 1 + eps).all()
    return int(m.sum())


def test_ssd300_pipeline_cpu(coco):
    mine = outputs("stoker", coco)
    anchors = ssd300.ssd300_anchors()
    matched = 0
    for (il, images), (bl, boxes), (ll, labels) in mine:
        assert il == "CHW"
        for img, b, lab in zip(images, boxes, labels):
            assert img.shape == (3, 300, 300) and img.dtype == np.float32
            # ImageNet-normalized uint8 pixels: between (0 - mean) / std and (255 - mean) / std.
            assert img.min() >= -2.2 and img.max() <= 2.7 and img.std() > 0.1
            assert b.shape == (8732, 4) and b.dtype == np.float32
            assert lab.shape == (8732,) and lab.dtype == np.int32
            matched += check_encoded(b, lab, anchors)
    assert matched > 24          # skip_empty: every image has boxes, most keep some after the crop
    try:
        real_dali()
    except pytest.skip.Exception:
        return
    ref = outputs("dali", coco)
    for it_m, it_r in zip(mine, ref):
        for (lm, om), (lr, orf) in zip(it_m, it_r):
            assert lm == lr
            assert [(a.shape, a.dtype) for a in om] == [(b.shape, b.dtype) for b in orf]


def test_ssd300_example_trains(coco, capsys):
    pytest.importorskip("torch")
    ssd300.main(["--coco-root", coco[0], "--annotations", coco[1], "--device", "cpu",
                 "--steps", "3", "--batch-size", "4"])
    out = capsys.readouterr().out
    assert "step   0: loss" in out and "step   2: loss" in out
    assert "images (4, 3, 300, 300) torch.float32 on cpu, boxes (4, 8732, 4), labels (4, 8732)" in out
    assert "12 images in" in out
