"""dump_image: the PPM files it writes, read back with an independent parser (NumPy on the
text) and compared byte for byte with DALI 2.4's own files where DALI is installed; the output is
the input untouched; CHW (which DALI refuses) writes the same file as the HWC image; the GPU
backend writes what the CPU one writes."""
import glob
import os

import numpy as np
import pytest
from PIL import Image

import stoker
from stoker import fn, pipeline_def, types

from conftest import TESTDATA


def photos():
    paths = sorted(glob.glob(str(TESTDATA / "imagenet-sample" / "*" / "*.jpg")))[:2]
    if not paths:
        pytest.skip("no imagenet-sample photos")
    # Real photos, cropped so that the files stay small.
    return [np.asarray(Image.open(p).convert("RGB"))[40:73, 50:91].copy() for p in paths]


def read_ppm(path):
    """P2/P3 ASCII PPM to an HWC uint8 array."""
    words = open(path, "rb").read().split()
    magic, w, h, maxval = words[0], int(words[1]), int(words[2]), int(words[3])
    assert magic in (b"P2", b"P3") and maxval == 255
    c = 3 if magic == b"P3" else 1
    return np.array([int(x) for x in words[4:]], np.uint8).reshape(h, w, c)


def run(api, images, layout="HWC", device="cpu", batches=1, **kw):
    @api.pipeline_def(batch_size=len(images), num_threads=2, device_id=0 if device == "gpu" else None)
    def p():
        x = api.fn.external_source(source=lambda: images, batch=True, layout=layout)
        if device == "gpu":
            x = x.gpu()
        return x, api.fn.dump_image(x, **kw)
    pipe = p()
    pipe.build()
    for _ in range(batches):
        outs = pipe.run()
    return [[np.array((o.as_cpu() if device == "gpu" else o)[i]) for i in range(len(images))]
            for o in outs]


def files(where):
    return {os.path.basename(f): open(f, "rb").read() for f in sorted(glob.glob(str(where / "*.ppm")))}


def test_files_hold_the_images_and_the_output_is_the_input(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    imgs = photos() + [np.arange(2 * 5, dtype=np.uint8).reshape(2, 5, 1) * 25]
    (inp, out) = run(stoker, imgs, suffix="dbg")
    for a, b in zip(inp, out):
        np.testing.assert_array_equal(a, b)
    written = files(tmp_path)
    assert sorted(written) == ["0-dbg-0.ppm", "1-dbg-0.ppm", "2-dbg-0.ppm"]
    for i, img in enumerate(imgs):
        np.testing.assert_array_equal(read_ppm(tmp_path / f"{i}-dbg-0.ppm"), img)
    assert written["2-dbg-0.ppm"].startswith(b"P2\n5 2\n255\n0 25 50 75 100 \n")


def test_every_batch_rewrites_the_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    state = {"k": 0}

    def source():
        state["k"] += 1
        return [np.full((2, 3, 3), state["k"], np.uint8)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def p():
        return fn.dump_image(fn.external_source(source=source, batch=True, layout="HWC"))
    pipe = p()
    pipe.build()
    pipe.run()
    pipe.run()
    assert sorted(files(tmp_path)) == ["0--0.ppm"]
    last = read_ppm(tmp_path / "0--0.ppm")
    assert (last == last.flat[0]).all() and last.flat[0] >= 2


def test_same_files_as_dali(tmp_path, monkeypatch):
    dali = pytest.importorskip("nvidia.dali")
    imgs = photos() + [np.arange(12, dtype=np.uint8).reshape(2, 6, 1)]
    for api, where in ((stoker, tmp_path / "stoker"), (dali, tmp_path / "dali")):
        where.mkdir()
        monkeypatch.chdir(where)
        run(api, imgs, suffix="x")
    ours, theirs = files(tmp_path / "stoker"), files(tmp_path / "dali")
    assert list(ours) == list(theirs) and len(ours) == 3
    for name in ours:
        assert ours[name] == theirs[name], name


def test_chw_writes_the_same_file_as_hwc(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    img = photos()[0]
    run(stoker, [img], suffix="hwc")
    run(stoker, [np.ascontiguousarray(img.transpose(2, 0, 1))], layout="CHW", input_layout="CHW",
        suffix="chw")
    written = files(tmp_path)
    assert written["0-hwc-0.ppm"] == written["0-chw-0.ppm"]


def test_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"fn.dump_image .*writes uint8 images, got float32"):
        run(stoker, [np.zeros((2, 2, 3), np.float32)])
    with pytest.raises(ValueError, match=r"sample 0 has shape \(2, 2, 4\); it writes HWC images of "
                                         r"1 or 3 channels"):
        run(stoker, [np.zeros((2, 2, 4), np.uint8)])
    with pytest.raises(ValueError, match=r"sample 0 has shape \(4,\)"):
        run(stoker, [np.zeros(4, np.uint8)], layout="")
    with pytest.raises(ValueError, match=r"input_layout.*must be \"HWC\" or \"CHW\", got \"HW\""):
        run(stoker, [np.zeros((2, 2, 3), np.uint8)], input_layout="HW")
    (tmp_path / "0--0.ppm").mkdir()  # a folder where the file goes: not even root writes it
    with pytest.raises(OSError, match=r"cannot write '0--0.ppm' in the working folder: Is a directory"):
        run(stoker, [np.zeros((2, 2, 3), np.uint8)])
    assert not glob.glob(str(tmp_path / "*.part"))


@pytest.mark.skipif(stoker._C.cuda_device_count() == 0, reason="no GPU here")
def test_gpu_writes_what_the_cpu_writes(tmp_path, monkeypatch):
    imgs = photos()
    for device in ("cpu", "gpu"):
        where = tmp_path / device
        where.mkdir()
        monkeypatch.chdir(where)
        inp, out = run(stoker, imgs, device=device, suffix="d")
        for a, b in zip(inp, out):
            np.testing.assert_array_equal(a, b)
    assert files(tmp_path / "cpu") == files(tmp_path / "gpu")
