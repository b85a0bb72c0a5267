"""experimental.readers.video (CPU): which sequences each video gives, their frame numbers,
timestamps and labels against DALI 2.4's own operator (which decodes VP8 and VP9 on the CPU), for
every pad_mode, uniform_sample and file_list's formats and roundings; the frames against PyAV's
decode (bit for bit) and fill_value; the errors of bad arguments. The GPU backend is checked
against this one in test_video_gpu.py."""
import os

import numpy as np
import pytest

from stoker import fn, pipeline_def

from _video_data import AVC, HEVC, VIDEO, VP8_WEBM, VP9_MP4, VP9_WEBM, ffmpeg_built, plain, pyav_frames

if not os.path.exists(AVC):
    pytest.skip(f"no test videos in {VIDEO}", allow_module_level=True)
pytestmark = pytest.mark.skipif(not ffmpeg_built(), reason="stoker was built without FFmpeg")


def outputs_of(mod_fn, pdef, device_id, **kw):
    """Every sample of one epoch (batch 1): (frames, label, frame_num, timestamps) as lists,
    and the pipeline's epoch size."""
    kw.setdefault("enable_frame_num", "sequence")
    kw.setdefault("enable_timestamps", True)
    labelled = bool(kw.get("file_list") or kw.get("file_root")) or "labels" in kw

    @pdef(batch_size=1, num_threads=2, device_id=device_id)
    def p():
        return tuple(mod_fn.experimental.readers.video(name="R", device="cpu", **kw))
    pipe = p()
    pipe.build()
    size = pipe.reader_meta()["R"]["epoch_size"]
    res = []
    for _ in range(size):
        outs = [np.array(o[0]) for o in pipe.run()]
        frames, rest = outs[0], outs[1:]
        label = int(rest.pop(0)[0]) if labelled else None
        res.append((frames, label, rest[0].tolist(), np.round(rest[1], 9).tolist()))
    return size, res


def ours(**kw):
    return outputs_of(fn, pipeline_def, None, **kw)


def dalis(**kw):
    dali = pytest.importorskip("nvidia.dali")
    return outputs_of(dali.fn, dali.pipeline_def, None, **kw)


def same_as_dali(**kw):
    """stoker's epoch equals DALI's in size, frame numbers, timestamps, labels and shapes;
    returns stoker's samples."""
    size, mine = ours(**kw)
    dsize, theirs = dalis(**kw)
    assert size == dsize
    for (f, lab, num, ts), (df, dlab, dnum, dts) in zip(mine, theirs):
        assert (lab, num, f.shape, f.dtype) == (dlab, dnum, df.shape, df.dtype)
        np.testing.assert_allclose(ts, dts, rtol=0, atol=1e-9)
    return mine


def frames_equal_pyav(path, samples, fill=(0, 0, 0)):
    ref = pyav_frames(path)
    for frames, _, nums, _ in samples:
        for k, n in enumerate(nums):
            if n >= 0:
                np.testing.assert_array_equal(frames[k], ref[n])
            else:
                assert (frames[k] == np.array(fill, np.uint8)).all()


def test_sequences_equal_dali_and_frames_equal_pyav():
    for path in (VP8_WEBM, VP9_MP4):
        samples = same_as_dali(filenames=[path], labels=[3], sequence_length=4, stride=3)
        frames_equal_pyav(path, samples[:3])
    samples = same_as_dali(filenames=[VP9_WEBM, VP8_WEBM], sequence_length=3, step=20)
    assert [s[2][0] for s in samples][:3] == [0, 20, 40]


@pytest.mark.parametrize("mode", ["none", "constant", "edge", "repeat", "reflect_1001",
                                  "symmetric", "reflect_101", "reflect"])
def test_every_pad_mode_equals_dali(mode):
    # 60 frames; sequences of 4 frames 4 apart (16 frames each): starts 0, 16, 32 whole, the
    # tail at 48 (48, 52, 56, then 60 past the end) padded unless pad_mode is 'none'.
    kw = dict(filenames=[VP8_WEBM], sequence_length=4, stride=4, pad_mode=mode,
              fill_value=[10, 200, 30])
    samples = same_as_dali(**kw)
    assert len(samples) == (3 if mode == "none" else 4)
    frames_equal_pyav(VP8_WEBM, samples[-1:], fill=(10, 200, 30))
    if mode != "none":
        last = {"constant": -1, "edge": 59, "repeat": 59, "reflect_1001": 59, "symmetric": 59,
                "reflect_101": 58, "reflect": 58}[mode]
        assert samples[-1][2] == [48, 52, 56, last]


def test_uniform_sample_equals_dali():
    samples = same_as_dali(filenames=[VP8_WEBM, VP9_WEBM], labels=[0, 1], sequence_length=5,
                           uniform_sample=True)
    assert samples[0][2] == [0, 15, 30, 44, 59]  # linspace(0, 59, 5) rounded half away from 0
    frames_equal_pyav(VP8_WEBM, samples[:1])


@pytest.mark.parametrize("line,kw", [
    ("10 20", dict(file_list_format="frames")),
    ("10 21", dict(file_list_format="frames")),
    ("10 21", dict(file_list_format="frames", file_list_include_end=False)),
    ("-20 -5", dict(file_list_format="frames")),
    ("10.5 20.5", dict(file_list_format="frames")),
    ("10.5 20.5", dict(file_list_format="frames", file_list_rounding="start_up_end_down")),
    ("10 21", dict(file_list_format="frames", sequence_length=5, stride=3, pad_mode="reflect_1001")),
    ("10 21", dict(file_list_format="frames", sequence_length=5, stride=3, pad_mode="edge")),
    ("10 13", dict(file_list_format="frames", sequence_length=5, uniform_sample=True)),
    ("0.1 0.3", dict()),
    ("0.1 0.35", dict()),
    ("0.105 0.3051", dict()),
    ("0.105 0.3051", dict(file_list_rounding="start_up_end_down")),
    ("0.105 0.3051", dict(file_list_rounding="all_up")),
    ("0.105 0.3051", dict(file_list_rounding="all_down")),
])
def test_file_list_ranges_equal_dali(tmp_path, line, kw):
    lst = tmp_path / "list.txt"
    lst.write_text(f"{VP8_WEBM} 7 {line}\n")
    kw.setdefault("sequence_length", 3)
    samples = same_as_dali(file_list=str(lst), **kw)
    assert {s[1] for s in samples} == {7}


def test_file_list_ends_dali_gets_wrong(tmp_path):
    # DALI 2.4 finds no frames for a line with a start and no end, or an end past the video;
    # stoker reads to the video's end.
    lst = tmp_path / "list.txt"
    for line in ("50", "50 70", "0.8333 50"):
        lst.write_text(f"{VP8_WEBM} 0 {line}\n")
        fmt = "timestamps" if "." in line else "frames"
        _, samples = ours(file_list=str(lst), file_list_format=fmt, sequence_length=3)
        assert [s[2] for s in samples] == [[50, 51, 52], [53, 54, 55], [56, 57, 58]]


def test_frame_num_and_timestamps_need_no_labels():
    # Unlike readers.video: outputs video, frame_num, timestamps.
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return tuple(fn.experimental.readers.video(filenames=[VP9_WEBM], sequence_length=2,
                                                   enable_frame_num=True, enable_timestamps=True))
    video, nums, stamps = p().run()
    assert [np.array(nums[i]).tolist() for i in range(2)] == [[0], [2]]
    assert np.array(stamps[1]).shape == (2,) and np.array(video[1]).shape == (2, 642, 642, 3)


def test_default_step_is_stride_times_length():
    _, samples = ours(filenames=[VP9_WEBM], sequence_length=3, stride=2)
    assert [s[2][0] for s in samples][:3] == [0, 6, 12]


def run_error(exc, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        out = fn.experimental.readers.video(**kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    with pytest.raises(exc) as e:
        p().build()
    return plain(e.value)


def test_argument_errors(tmp_path):
    op = "fn.experimental.readers.video"
    assert run_error(ValueError, filenames=[VP9_WEBM], sequence_length=2, pad_mode="wrap") == (
        f"{op}: argument 'pad_mode' must be one of 'none', 'constant', 'edge' ('repeat'), "
        "'reflect_1001' ('symmetric'), 'reflect_101' ('reflect'), got 'wrap'")
    assert run_error(ValueError, filenames=[VP9_WEBM], sequence_length=2,
                     fill_value=[1, 300, 2]) == (
        f"{op}: argument 'fill_value' values must be in [0, 255], got 300")
    lst = tmp_path / "list.txt"
    lst.write_text(f"{VP9_WEBM} 0 1 2\n")
    assert run_error(ValueError, file_list=str(lst), sequence_length=2,
                     file_list_format="seconds") == (
        f"{op}: argument 'file_list_format' must be 'frames' or 'timestamps', got 'seconds'")
    assert run_error(ValueError, file_list=str(lst), sequence_length=2,
                     file_list_rounding="nearest") == (
        f"{op}: argument 'file_list_rounding' must be 'start_down_end_up', 'start_up_end_down', "
        "'all_up' or 'all_down', got 'nearest'")
    assert run_error(FileNotFoundError, filenames=[str(tmp_path / "no.mp4")], sequence_length=2) == (
        f"{op}: video file '{tmp_path / 'no.mp4'}' does not exist")
    assert run_error(ValueError, filenames=[HEVC], sequence_length=11, stride=3) == (
        f"{op}: no file has a whole sequence of sequence_length=11 frames with stride=3 "
        f"(stride * sequence_length = 33 frames); the videos have (frames) {HEVC}: 30. Use a "
        "shorter sequence_length or stride, or a pad_mode other than 'none'")


def test_a_range_without_frames_is_left_out_with_a_warning(tmp_path, caplog):
    lst = tmp_path / "list.txt"
    lst.write_text(f"{VP9_WEBM} 0 5 5.2\n{VP8_WEBM} 1 0 10\n")  # VP9_WEBM lasts 3 s
    size, samples = ours(file_list=str(lst), sequence_length=30)
    assert size == 2 and [s[1] for s in samples] == [1, 1]
    assert (f"argument 'file_list': {VP9_WEBM}: the start and end give no frames ([90, 90) of "
            "the video's 90); the line is left out") in caplog.text
