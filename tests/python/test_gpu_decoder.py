"""The mixed (nvJPEG) decoders against the CPU decoders, on the GPU machine."""
import pathlib

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")


def run_pair(files, make, batch_size=8, iterations=1, pipes=None, **pipe_args):
    """Runs make(jpegs, device) for 'mixed' and 'cpu' over `files`; returns lists of sample pairs
    (and appends the mixed pipeline to `pipes`, when given)."""
    def build(device):
        @pipeline_def(batch_size=batch_size, num_threads=3, device_id=0, seed=11, **pipe_args)
        def pipe():
            jpegs, _ = fn.readers.file(files=[str(f) for f in files], name="Reader")
            return make(jpegs, device)
        p = pipe()
        p.build()
        return p
    g, c = build("mixed"), build("cpu")
    if pipes is not None:
        pipes.append(g)
    pairs = []
    for _ in range(iterations):
        (go,), (co,) = g.run(), c.run()
        assert isinstance(go, stoker.TensorListGPU)
        gh = go.as_cpu()
        for i in range(len(co)):
            pairs.append((np.asarray(gh[i]), np.asarray(co[i])))
    return pairs


def close(a, b, mean=1.0, share=0.03):
    assert a.shape == b.shape
    d = np.abs(a.astype(np.int32) - b.astype(np.int32))
    assert d.mean() <= mean, d.mean()
    assert (d > 2).mean() <= share, (d > 2).mean()


def photos(jpeg_files, n=16):
    return [pathlib.Path(f) for f, _ in jpeg_files[:n]]


@pytest.mark.parametrize("output_type", [types.RGB, types.BGR, types.GRAY])
def test_mixed_decode_matches_cpu(jpeg_files, output_type):
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image(
        j, device=d, output_type=output_type, jpeg_fancy_upsampling=True), iterations=2)
    for g, c in pairs:
        close(g, c, mean=1.0 if output_type != types.GRAY else 1.5)


def test_mixed_random_crop_takes_the_cpu_windows(jpeg_files):
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image_random_crop(
        j, device=d, jpeg_fancy_upsampling=True), iterations=3)
    for g, c in pairs:
        assert g.shape == c.shape  # the same random window
        close(g, c)


def test_mixed_crop_and_slice(jpeg_files):
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image_crop(
        j, device=d, crop=(100, 120), crop_pos_x=0.3, crop_pos_y=0.7, jpeg_fancy_upsampling=True))
    for g, c in pairs:
        assert g.shape == (100, 120, 3)
        close(g, c)
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image_slice(
        j, device=d, rel_start=(0.1, 0.2), rel_shape=(0.5, 0.6), jpeg_fancy_upsampling=True))
    for g, c in pairs:
        close(g, c)


def test_mixed_fused_resize(jpeg_files):
    # The CPU decoder may decode at 1/2..1/8 first (DCT scaling), the GPU at full size: close,
    # not equal.
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image_random_crop(
        j, device=d, size=(96, 96), jpeg_fancy_upsampling=True), iterations=2)
    for g, c in pairs:
        assert g.shape == c.shape == (96, 96, 3)
        close(g, c, mean=4.0, share=0.4)


def decoded_by(pipe):
    """The mixed decoder's counters from profile()."""
    (c,) = [o["counters"] for o in pipe.profile()["operators"] if "counters" in o]
    return c


def test_profile_says_which_decoder_took_each_image(jpeg_files):
    pipes = []
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image_crop(
        j, device=d, crop=(100, 120), jpeg_fancy_upsampling=True), iterations=2, pipes=pipes)
    c = decoded_by(pipes[0])
    total = c["jpeg_engines"] + c["cuda_cores"] + c["cpu"]
    # every image run() returned, and those the pipeline prefetched: whole batches of 8
    assert total >= len(pairs) == 16 and total % 8 == 0, c
    assert c["jpeg_engines"] + c["cuda_cores"] > c["cpu"], c  # real photos: the GPU takes most
    assert c["window_only"] <= c["jpeg_engines"] + c["cuda_cores"], c
    report = pipes[0].profile_report()
    print(report)
    assert "decoded by: JPEG engines" in report


# The CUDA-core path is what GPUs without JPEG engines (and the engines' rejects) take for every
# image: STOKER_NVJPEG_HARDWARE=0 keeps the engines out. hybrid_huffman_threshold=0 moves the
# Huffman decoding of every image to the GPU.
CUDA_CORE_DECODERS = {
    "whole": lambda j, d, **k: fn.decoders.image(j, device=d, jpeg_fancy_upsampling=True, **k),
    "crop": lambda j, d, **k: fn.decoders.image_crop(
        j, device=d, crop=(100, 120), crop_pos_x=0.3, crop_pos_y=0.7, jpeg_fancy_upsampling=True, **k),
    "random_crop": lambda j, d, **k: fn.decoders.image_random_crop(
        j, device=d, jpeg_fancy_upsampling=True, **k),
}


@pytest.mark.parametrize("huffman", ["cpu", "gpu"])
@pytest.mark.parametrize("kind", sorted(CUDA_CORE_DECODERS))
def test_cuda_cores_without_engines_match_cpu(jpeg_files, monkeypatch, kind, huffman):
    monkeypatch.setenv("STOKER_NVJPEG_HARDWARE", "0")
    make = CUDA_CORE_DECODERS[kind]
    extra = {"hybrid_huffman_threshold": 0} if huffman == "gpu" else {}
    pipes = []
    pairs = run_pair(photos(jpeg_files), lambda j, d: make(j, d, **extra), iterations=2, pipes=pipes)
    for g, c in pairs:
        assert g.shape == c.shape
        close(g, c)
    c = decoded_by(pipes[0])
    assert c["jpeg_engines"] == 0
    assert c["cuda_cores"] > c["cpu"], c
    if kind != "whole":  # nvJPEG on CUDA cores decodes just the window
        assert c["window_only"] == c["cuda_cores"], c


def test_cuda_cores_fused_resize(jpeg_files, monkeypatch):
    monkeypatch.setenv("STOKER_NVJPEG_HARDWARE", "0")
    pairs = run_pair(photos(jpeg_files), lambda j, d: fn.decoders.image_random_crop(
        j, device=d, size=(96, 96), jpeg_fancy_upsampling=True), iterations=2)
    for g, c in pairs:
        assert g.shape == c.shape == (96, 96, 3)
        close(g, c, mean=4.0, share=0.4)


def test_mixed_png_and_orientation_go_through_the_cpu_decoder(testdata):
    files = sorted((testdata / "images" / "png").rglob("*.png"))[:6]
    files += sorted((testdata / "images" / "orientation").rglob("*.jpg"))[:4]
    assert files
    pairs = run_pair(files, lambda j, d: fn.decoders.image(j, device=d, jpeg_fancy_upsampling=True),
                     batch_size=len(files))
    for f, (g, c) in zip(files, pairs):
        if f.suffix == ".png":
            assert np.array_equal(g, c), f  # the CPU decoder's own pixels, uploaded
        else:
            close(g, c)  # rotated ones take the CPU decoder, upright ones nvJPEG


# Reference-test JPEGs whose nvJPEG decode is known to stray from libjpeg-turbo's (measured on
# an H100 with CUDA 13.0's nvJPEG): blank_800x280.jpg comes out with a mean |diff| of 3.8.
KNOWN_NVJPEG_DIFFERENCES = {"blank_800x280.jpg"}


@pytest.mark.parametrize("engines", ["on", "off"])
def test_every_edge_case_decodes_close_to_the_cpu_or_fails_the_same_way(testdata, monkeypatch,
                                                                          engines):
    if engines == "off":
        monkeypatch.setenv("STOKER_NVJPEG_HARDWARE", "0")
    files = sorted(p for p in (testdata / "images" / "jpeg_edge").rglob("*")
                   if p.is_file() and p.suffix.lower() in (".jpg", ".jpeg"))
    # The fuzzers' seeds (corrupt JPEGs and BMPs), broken on purpose like crashtest's.
    files += sorted(p for p in (testdata / "fuzzing").rglob("*")
                    if p.suffix.lower() in (".jpg", ".jpeg", ".bmp"))
    assert files
    broken = lambda f: "crashtest" in str(f) or "fuzzing" in str(f)
    checked, wrong = 0, []
    for f in files:
        def build(device):
            @pipeline_def(batch_size=1, num_threads=2, device_id=0, seed=1)
            def pipe():
                jpegs, _ = fn.readers.file(files=[str(f)])
                return fn.decoders.image(jpegs, device=device, jpeg_fancy_upsampling=True)
            p = pipe()
            p.build()
            return p
        try:
            (c,) = build("cpu").run()
        except stoker.DecodeError:
            if broken(f):
                # Broken on purpose: nvJPEG may get an image out of what libjpeg-turbo refuses;
                # what matters is no crash, and an error that names the file when it fails.
                try:
                    build("mixed").run()
                except stoker.DecodeError as e:
                    assert f.name in str(e)
            else:
                with pytest.raises(stoker.DecodeError, match=f.name):
                    build("mixed").run()
            continue
        try:
            (g,) = build("mixed").run()
        except stoker.DecodeError as e:
            # Data that libjpeg-turbo gets something out of with a warning may be refused.
            assert broken(f) and f.name in str(e), (f, e)
            continue
        g, c = np.asarray(g.as_cpu()[0]), np.asarray(c[0])
        assert g.shape == c.shape, f
        if not broken(f) and f.name not in KNOWN_NVJPEG_DIFFERENCES:
            # (crashtest files are broken on purpose: no right answer, only no crash)
            d = np.abs(g.astype(np.int32) - c.astype(np.int32))
            if d.mean() > 3.0:
                wrong.append((f.name, round(float(d.mean()), 2)))
        checked += 1
    assert checked > 0
    assert not wrong, wrong


def test_mixed_on_error_skip_drops_a_truncated_file(jpeg_files, tmp_path):
    good = [pathlib.Path(f) for f, _ in jpeg_files[:5]]
    bad = tmp_path / "truncated.jpg"
    data = good[0].read_bytes()
    bad.write_bytes(data[: len(data) // 2])
    files = good[:2] + [bad] + good[2:]

    @pipeline_def(batch_size=4, num_threads=2, device_id=0, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(f) for f in files])
        return fn.decoders.image(jpegs, device="mixed", on_error="skip")
    p = pipe()
    p.build()
    (out,) = p.run()
    assert len(out) == 4
    (stats,) = p.error_stats().values()
    assert stats["skipped"] == 1 and str(bad) in stats["samples"]
