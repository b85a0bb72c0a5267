"""The video operators on the GPU (issue 20): readers.video(device='gpu') and
decoders.video(device='mixed') decode on NVDEC through FFmpeg where the GPU takes the stream,
and convert to RGB in our kernel; their frames against the CPU operators' (libswscale's
conversion: mean abs diff under 1), frame numbers, timestamps, labels and padding exact.
Without PyAV, so that the GPU machine runs them with FFmpeg's libraries alone."""
import os

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

from _video_data import ALL, AVC, COCKATOO, HEVC, HEVC_META, SAMPLE, VIDEO, VP9_WEBM, ffmpeg_built, plain

if not os.path.exists(AVC):
    pytest.skip(f"no test videos in {VIDEO}", allow_module_level=True)


needs_ffmpeg = pytest.mark.skipif(not ffmpeg_built(), reason="stoker was built without FFmpeg")


# DALI's readers.video runs on device='gpu' only, and its decoders.video on 'mixed'. A CUDA build
# of stoker decodes there on NVDEC (through FFmpeg) where the GPU takes the stream; a build
# without CUDA decodes on the CPU and copies the frames.
CUDA_BUILD = "gpu" in stoker._schema.SCHEMAS["readers.video"]["backends"]
HAS_GPU = stoker._C.cuda_device_count() > 0


def test_gpu_device_names_the_operator_without_a_gpu():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return fn.readers.video(device="gpu", filenames=[VP9_WEBM], sequence_length=3)
    with pytest.raises(ValueError) as e:
        p().build()
    who = "fn.readers.video runs on 'gpu'" if CUDA_BUILD else (
        "fn.readers.video(device='gpu') runs on 'mixed'")
    assert plain(e.value) == (
        f"{who}, but the pipeline has device_id=None "
        "(CPU only). Give the pipeline a GPU (device_id=0) or run the operator with device='cpu'.")


def test_the_dali_table_says_how_the_gpu_backend_decodes():
    from stoker.__main__ import dali_table
    rows = {r.split(" | ")[0].strip("| `"): r for r in dali_table().splitlines() if r.startswith("| `")}
    note = "" if CUDA_BUILD else " ({}: decoded on the CPU, then copied: no CUDA)"
    assert rows["readers.video"].endswith(f"| gpu | yes{note.format('gpu')} |")
    assert rows["decoders.video"].endswith(f"| cpu, mixed | yes{note.format('mixed')} |")


def frames_close(gpu, cpu, where):
    """NVDEC's frames against the CPU decoder's: the same pictures, converted to RGB by our
    kernel rather than libswscale (mean abs diff under 1, as issue 20 asks)."""
    assert gpu.shape == cpu.shape and gpu.dtype == cpu.dtype, where
    d = np.abs(gpu.astype(np.float64) - cpu.astype(np.float64))
    scale = 255.0 if gpu.dtype == np.uint8 or gpu.max() > 1.5 else 1.0
    worst = np.unravel_index(np.argmax(d), d.shape)
    assert d.mean() < 1.0 * scale / 255.0, (
        f"{where}: mean abs diff {d.mean():.3f} (per channel "
        f"{[round(float(d[..., k].mean()), 3) for k in range(3)]}), max {d.max()} at {worst}: "
        f"gpu {gpu[worst[:-1]]} cpu {cpu[worst[:-1]]}")
    return d


def run_batches(pipe, iterations):
    out = []
    for _ in range(iterations):
        batch = []
        for o in pipe.run():
            o = o.as_cpu() if type(o).__name__ == "TensorListGPU" else o
            batch.append([np.array(o[i]) for i in range(len(o))])
        out.append(batch)
    return out


@needs_ffmpeg
@pytest.mark.skipif(not HAS_GPU, reason="no GPU here")
def test_gpu_device_equals_the_cpu_operators():
    def run(device, decoder_device):
        @pipeline_def(batch_size=2, num_threads=2, device_id=0, seed=3)
        def p():
            video, label = fn.readers.video(device=device, filenames=[VP9_WEBM, AVC], labels=[4, 7],
                                            sequence_length=5, stride=2, random_shuffle=True)
            encoded, _ = fn.readers.file(files=[AVC, HEVC])
            frames = fn.decoders.video(encoded, device=decoder_device, start_frame=28,
                                       sequence_length=4)
            return video, label, frames
        pipe = p()
        for o in pipe.run():
            assert type(o).__name__ == ("TensorListGPU" if device == "gpu" else "TensorListCPU")
        pipe = p()
        return run_batches(pipe, 3)
    gpu, cpu = run("gpu", "mixed"), run("cpu", "cpu")
    assert len(gpu) == len(cpu) == 3
    for it, (g_batch, c_batch) in enumerate(zip(gpu, cpu)):
        for k, (g, c) in enumerate(zip(g_batch, c_batch)):
            for i in range(len(g)):
                if k == 1:  # labels
                    np.testing.assert_array_equal(g[i], c[i])
                else:
                    frames_close(g[i], c[i], f"iteration {it}, output {k}, sample {i}")


@needs_ffmpeg
@pytest.mark.skipif(not HAS_GPU, reason="no GPU here")
@pytest.mark.parametrize("path", ALL, ids=[os.path.basename(p) for p in ALL])
def test_nvdec_frames_near_the_cpu_decoders(path):
    """Every test video through readers.video(device='gpu'): the frames near the CPU's, the
    frame numbers, timestamps and padding exact; NVDEC decodes H.264 and HEVC 4:2:0."""
    def run(device):
        @pipeline_def(batch_size=2, num_threads=2, device_id=0, seed=5)
        def p():
            return fn.readers.video(device=device, filenames=[path], labels=[], sequence_length=6,
                                    stride=3, step=25, pad_sequences=True,
                                    enable_frame_num="sequence", enable_timestamps=True)
        return run_batches(p(), 3)
    before = stoker._C.video_gpu_decode_counts()
    gpu = run("gpu")
    after = stoker._C.video_gpu_decode_counts()
    cpu = run("cpu")
    worst = 0.0
    for g_batch, c_batch in zip(gpu, cpu):
        for i in range(len(g_batch[0])):
            d = frames_close(g_batch[0][i], c_batch[0][i], f"{path}: sample {i}")
            worst = max(worst, d.mean())
            for k in (1, 2, 3):
                np.testing.assert_array_equal(g_batch[k][i], c_batch[k][i])
    nvdec = after["nvdec"] - before["nvdec"]
    cpu_frames = after["cpu"] - before["cpu"]
    assert nvdec + cpu_frames > 0
    if path in (AVC, HEVC, SAMPLE):  # 8-bit 4:2:0 H.264 / HEVC: every NVDEC takes them
        assert cpu_frames == 0 and nvdec > 0, (path, before, after)
    if path == COCKATOO:  # H.264 High 4:4:4: NVDEC does not take it, the CPU decodes
        assert nvdec == 0 and cpu_frames > 0, (path, before, after)
        assert worst == 0.0


@needs_ffmpeg
@pytest.mark.skipif(not HAS_GPU, reason="no GPU here")
@pytest.mark.parametrize("mode", ["constant", "reflect_101", "none"])
def test_experimental_reader_gpu_equals_cpu(mode):
    """experimental.readers.video(device='gpu'): frames near the CPU's, fill frames, frame
    numbers, timestamps and labels exact, for padded tails and uniform samples."""
    def run(device):
        @pipeline_def(batch_size=3, num_threads=2, device_id=0, seed=5)
        def p():
            a = fn.experimental.readers.video(
                device=device, filenames=[AVC, VP9_WEBM], labels=[2, 9], sequence_length=7,
                stride=4, pad_mode=mode, fill_value=[10, 200, 30], enable_frame_num="sequence",
                enable_timestamps=True, name="R")
            b = fn.experimental.readers.video(device=device, filenames=[HEVC, AVC],
                                              sequence_length=5, uniform_sample=True)
            return (*a, b)
        return run_batches(p(), 4)
    gpu, cpu = run("gpu"), run("cpu")
    for g_batch, c_batch in zip(gpu, cpu):
        for i in range(3):
            for k in (0, 4):
                frames_close(g_batch[k][i], c_batch[k][i], f"{mode}: output {k}, sample {i}")
            for k in (1, 2, 3):
                np.testing.assert_array_equal(g_batch[k][i], c_batch[k][i])
            for f, n in zip(g_batch[0][i], g_batch[2][i]):
                if n < 0:
                    assert (f == np.array([10, 200, 30], np.uint8)).all()


@needs_ffmpeg
@pytest.mark.skipif(not HAS_GPU, reason="no GPU here")
@pytest.mark.parametrize("path", [AVC, HEVC_META], ids=["avc", "hevc-full-range"])
def test_nvdec_ycbcr_and_normalized_float(path):
    def run(device, **kw):
        @pipeline_def(batch_size=2, num_threads=1, device_id=0)
        def p():
            return fn.readers.video(device=device, filenames=[path], sequence_length=3, **kw)
        return run_batches(p(), 2)
    for kw in ({"image_type": types.YCbCr}, {"dtype": types.FLOAT, "normalized": True},
               {"dtype": types.FLOAT}):
        for g_batch, c_batch in zip(run("gpu", **kw), run("cpu", **kw)):
            for g, c in zip(g_batch[0], c_batch[0]):
                assert g.dtype == c.dtype
                frames_close(g, c, f"{path} {kw}")


@needs_ffmpeg
@pytest.mark.skipif(not HAS_GPU, reason="no GPU here")
def test_mixed_decoder_padding_repeats_and_errors(tmp_path):
    bad = tmp_path / "cut.mp4"
    bad.write_bytes(open(AVC, "rb").read()[:20000])

    def run(device, files, **kw):
        @pipeline_def(batch_size=len(files), num_threads=2, device_id=0)
        def p():
            encoded, _ = fn.readers.file(files=files)
            return fn.decoders.video(encoded, device=device, **kw)
        return run_batches(p(), 1)[0][0]
    for kw in ({"frames": [5, 1, 5, 0]}, {"start_frame": 140, "sequence_length": 8,
                                          "pad_mode": "constant", "fill_value": [10, 20, 30]},
               {"start_frame": 140, "sequence_length": 8, "pad_mode": "reflect_101"},
               {"start_frame": 140, "sequence_length": 8, "fill_value": [7]}):
        for g, c in zip(run("mixed", [AVC, HEVC], **kw), run("cpu", [AVC, HEVC], **kw)):
            frames_close(g, c, str(kw))
            pads = [k for k in range(len(c)) if (c[k] == c[k].flat[0:3].reshape(1, 1, 3)).all()
                    and c[k].std() == 0]
            for k in pads:
                np.testing.assert_array_equal(g[k], c[k])
    with pytest.raises(stoker.DecodeError) as e:
        run("mixed", [AVC, str(bad)], start_frame=0, sequence_length=2)
    assert "cut.mp4" in str(e.value)
    kw = dict(start_frame=0, sequence_length=2, on_error="skip")
    skipped, cpu = run("mixed", [AVC, str(bad)], **kw), run("cpu", [AVC, str(bad)], **kw)
    assert len(skipped) == len(cpu)
    for g, c in zip(skipped, cpu):
        frames_close(g, c, "on_error='skip'")
