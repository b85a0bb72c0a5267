"""readers.video (CPU) and decoders.video through FFmpeg: frames against PyAV's decode
(`frame.to_ndarray(format="rgb24")`, bit for bit), sequences, frame numbers and timestamps
against DALI 2.4's CPU video reader (fn.experimental.readers.video, which decodes VP8/VP9 on the
CPU), sharding, checkpoints, and the errors of bad files and arguments."""
import os

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

from _video_data import (ALL, AVC, COCKATOO, HEVC, HEVC_META, SAMPLE, VIDEO, VP8_WEBM, VP9_MP4,
                         VP9_WEBM, WITHOUT_FFMPEG, ffmpeg_built, plain, pyav_frames)

av = pytest.importorskip("av")

if not os.path.exists(AVC):
    pytest.skip(f"no test videos in {VIDEO}", allow_module_level=True)


FFMPEG = ffmpeg_built()
needs_ffmpeg = pytest.mark.skipif(not FFMPEG, reason="stoker was built without FFmpeg")


def test_without_ffmpeg_the_operators_say_so():
    if FFMPEG:
        pytest.skip("this build has FFmpeg")
    for call in (lambda: fn.readers.video(filenames=[HEVC], sequence_length=2),
                 lambda: fn.decoders.video(fn.external_source(
                     source=lambda: [np.zeros(1, np.uint8)], batch=True))):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            return call()
        with pytest.raises(NotImplementedError) as e:
            p().run()
        assert plain(e.value).split(": ", 1)[1] == WITHOUT_FFMPEG


def pyav_pts_seconds(path):
    with av.open(path) as c:
        s = c.streams.video[0]
        return [float(fr.pts * s.time_base) for fr in c.decode(s)]


def blob(path):
    return np.fromfile(path, np.uint8)


def reader(batch_size=2, threads=2, iterations=1, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=3)
    def p():
        out = fn.readers.video(name="R", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    res = []
    for _ in range(iterations):
        outs = pipe.run()
        outs = outs if isinstance(outs, (list, tuple)) else (outs,)
        res.append([[np.array(o[i]) for i in range(batch_size)] for o in outs])
    return pipe, res


def decode(datas, threads=2, **kw):
    @pipeline_def(batch_size=len(datas), num_threads=threads, device_id=None, seed=3)
    def p():
        return fn.decoders.video(fn.external_source(source=lambda: datas, batch=True), **kw)
    (out,) = p().run()
    return [np.array(out[i]) for i in range(len(datas))], out.layout()


def decode_files(paths, **kw):
    @pipeline_def(batch_size=len(paths), num_threads=2, device_id=None, seed=3)
    def p():
        enc, _ = fn.readers.file(files=list(paths))
        return fn.decoders.video(enc, **kw)
    (out,) = p().run()
    return [np.array(out[i]) for i in range(len(paths))]


# ---- frames equal PyAV's, bit for bit ---------------------------------------------------------

@needs_ffmpeg
@pytest.mark.parametrize("path", ALL, ids=os.path.basename)
def test_decoder_equals_pyav(path):
    # The first 12 frames of every codec: H.264 (B-pyramid, 4:4:4), HEVC (B-frames, full
    # range), AV1, VP9 (MP4 and WebM), VP8.
    ref = pyav_frames(path, 12)
    (v,), layout = decode([blob(path)], sequence_length=len(ref))
    assert layout == "FHWC" and v.dtype == np.uint8
    assert v.shape == (len(ref),) + ref[0].shape
    for k, r in enumerate(ref):
        np.testing.assert_array_equal(v[k], r, err_msg=f"{path} frame {k}")


@needs_ffmpeg
@pytest.mark.parametrize("path", [AVC, HEVC, VP9_WEBM], ids=os.path.basename)
def test_decoder_whole_video(path):
    ref = pyav_frames(path)
    (v,) = decode_files([path])
    assert v.shape == (len(ref),) + ref[0].shape
    assert all(np.array_equal(v[k], r) for k, r in enumerate(ref))


@needs_ffmpeg
def test_reader_sequences_across_keyframes_equal_pyav():
    # Sequences that start before, at and after keyframes (seek to the keyframe before, then
    # decode forward), on the H.264 B-pyramid file and on the 4:4:4 file.
    for path, step in [(AVC, 29), (COCKATOO, 38)]:
        ref = pyav_frames(path, 4 * step + 5)
        _, res = reader(filenames=[path], labels=[], sequence_length=3, step=step, stride=2,
                        enable_frame_num="sequence", iterations=2)
        starts = []
        for it in res:
            for v, nums in zip(it[0], it[2]):
                starts.append(int(nums[0]))
                assert list(nums) == [nums[0], nums[0] + 2, nums[0] + 4]
                for k, n in enumerate(nums):
                    np.testing.assert_array_equal(v[k], ref[n])
        assert starts == [0, step, 2 * step, 3 * step]


@needs_ffmpeg
@pytest.mark.parametrize("path", [AVC, HEVC, COCKATOO, SAMPLE], ids=os.path.basename)
def test_shuffled_strided_sequences_and_frame_lists_equal_pyav(path):
    # Every frame returned is PyAV's: shuffled sequences with strides 2 and 3 (a decoder goes
    # on from where it stopped, or seeks back to a keyframe, open GOPs included), and
    # decoders.video's frames in any order, repeats and neighbours included.
    ref = pyav_frames(path)
    n = len(ref)
    for stride in (2, 3):
        _, res = reader(batch_size=4, filenames=[path], labels=[], sequence_length=4,
                        stride=stride, step=5, random_shuffle=True, initial_fill=8,
                        enable_frame_num="sequence", iterations=3)
        for it in res:
            for v, nums in zip(it[0], it[2]):
                for k, f in enumerate(nums):
                    np.testing.assert_array_equal(v[k], ref[f])
    frames = [7, 3, 9, 10, 2, 2, n - 1, 5, 6, n // 2, n // 2 + 2]
    (got,), _ = decode([blob(path)], frames=frames)
    for k, f in enumerate(frames):
        np.testing.assert_array_equal(got[k], ref[f])


@needs_ffmpeg
def test_reader_ycbcr_and_float():
    ref = pyav_frames(VP9_WEBM, 2)
    _, res = reader(batch_size=1, filenames=[VP9_WEBM], sequence_length=2, dtype=types.FLOAT,
                    normalized=True)
    np.testing.assert_allclose(res[0][0][0], np.stack(ref).astype(np.float32) / 255, rtol=0,
                               atol=1e-7)
    assert res[0][0][0].dtype == np.float32
    _, res = reader(batch_size=1, filenames=[VP9_WEBM], sequence_length=2, dtype=types.FLOAT)
    np.testing.assert_array_equal(res[0][0][0], np.stack(ref).astype(np.float32))
    # YCbCr: the stream's own planes, chroma upsampled (PyAV's yuv444p conversion).
    _, res = reader(batch_size=1, filenames=[VP9_WEBM], sequence_length=2, image_type=types.YCbCr)
    with av.open(VP9_WEBM) as c:
        for k, fr in zip(range(2), c.decode(video=0)):
            yuv = fr.reformat(format="yuv444p").to_ndarray()  # (3, H, W)
            np.testing.assert_array_equal(res[0][0][0][k], np.moveaxis(yuv, 0, -1))


@needs_ffmpeg
def test_full_range_ycbcr_keeps_its_range_on_every_frame():
    # A yuvj420p (full range) stream: every frame's luma is the stream's own, not only the
    # first's (libswscale's cached context once came back new at the same address and lost the
    # range, squeezing frames 1, 2, ... into 16-235).
    _, res = reader(batch_size=1, filenames=[HEVC_META], sequence_length=3, image_type=types.YCbCr)
    with av.open(HEVC_META) as c:
        for k, fr in zip(range(3), c.decode(video=0)):
            assert fr.format.name == "yuvj420p"
            y = np.frombuffer(fr.planes[0], np.uint8).reshape(fr.height, -1)[:, :fr.width]
            np.testing.assert_array_equal(res[0][0][0][k][..., 0], y)


# ---- sequences, frame numbers, timestamps: DALI's rules -----------------------------------------

def expected_starts(n, seq, step, stride, pad=False):
    """DALI VideoLoader: s < end and s + 1 + (seq - 1) * stride <= end; pad_sequences adds the
    shorter tails."""
    total = 1 + (seq - 1) * stride
    out, s = [], 0
    while s < n and s + total <= n:
        out.append((s, seq))
        s += step
    if pad:
        while s < n:
            out.append((s, 1 + (n - 1 - s) // stride))
            s += step
    return out


@needs_ffmpeg
@pytest.mark.parametrize("seq,step,stride", [(3, 5, 1), (3, 3, 1), (4, -1, 1), (2, 7, 3), (3, 40, 10)])
def test_reader_epoch_frame_num_timestamps(seq, step, stride):
    pipe, _ = reader(batch_size=1, filenames=[HEVC], labels=[5], sequence_length=seq, step=step,
                     stride=stride, enable_frame_num="sequence", enable_timestamps=True)
    want = expected_starts(30, seq, step if step > 0 else seq, stride)
    assert pipe.reader_meta()["R"]["epoch_size"] == len(want)
    ts = pyav_pts_seconds(HEVC)
    pipe, res = reader(batch_size=len(want), filenames=[HEVC], labels=[5], sequence_length=seq,
                       step=step, stride=stride, enable_frame_num="sequence",
                       enable_timestamps=True)
    video, labels, nums, stamps = res[0]
    for i, (s, _) in enumerate(want):
        assert video[i].shape == (seq, 480, 854, 3)
        assert labels[i].dtype == np.int32 and list(labels[i]) == [5]
        assert nums[i].dtype == np.int32 and list(nums[i]) == [s + k * stride for k in range(seq)]
        assert stamps[i].dtype == np.float64
        np.testing.assert_allclose(stamps[i], [ts[s + k * stride] for k in range(seq)], rtol=1e-12)


@needs_ffmpeg
def test_reader_scalar_frame_num_and_pad_sequences():
    want = expected_starts(30, 4, 7, 3, pad=True)
    assert want[-1][1] < 4  # there are padded tails
    _, res = reader(batch_size=len(want), filenames=[HEVC], labels=[], sequence_length=4, step=7,
                    stride=3, pad_sequences=True, enable_frame_num="sequence",
                    enable_timestamps=True)
    ref = pyav_frames(HEVC)
    ts = pyav_pts_seconds(HEVC)
    video, labels, nums, stamps = res[0]
    for i, (s, n) in enumerate(want):
        assert list(labels[i]) == [0]
        assert list(nums[i]) == [s + 3 * k for k in range(n)] + [-1] * (4 - n)
        assert list(stamps[i][n:]) == [-1.0] * (4 - n)
        np.testing.assert_allclose(stamps[i][:n], [ts[s + 3 * k] for k in range(n)], rtol=1e-12)
        for k in range(n):
            np.testing.assert_array_equal(video[i][k], ref[s + 3 * k])
        assert not video[i][n:].any()
    for flag in ("scalar", True):  # DALI also takes a bool
        _, res = reader(batch_size=2, filenames=[HEVC], labels=[], sequence_length=4, step=7,
                        enable_frame_num=flag)
        assert [list(x) for x in res[0][2]] == [[0], [7]]
        assert res[0][2][0].dtype == np.int32


@needs_ffmpeg
def test_reader_matches_dali_cpu_reader():
    # DALI 2.4's CPU video reader is fn.experimental.readers.video (VP8/VP9 on the CPU). With
    # stride 1 its sequences are readers.video's; compare starts, frame numbers and timestamps
    # (its pixels come from its own colour conversion, so frames are compared with PyAV above).
    dali = pytest.importorskip("nvidia.dali")
    dfn = dali.fn
    seq, step = 3, 7

    @dali.pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def dp():
        return tuple(dfn.experimental.readers.video(
            device="cpu", filenames=[VP9_WEBM], labels=[4], sequence_length=seq, step=step,
            enable_frame_num="sequence", enable_timestamps=True, name="R"))
    d = dp()
    d.build()
    pipe, res = reader(batch_size=4, filenames=[VP9_WEBM], labels=[4], sequence_length=seq,
                       step=step, enable_frame_num="sequence", enable_timestamps=True,
                       iterations=2)
    assert pipe.reader_meta()["R"]["epoch_size"] == d.reader_meta()["R"]["epoch_size"] == 13
    for it in range(2):
        dv, dl, dn, dt = d.run()
        for i in range(4):
            assert res[it][0][i].shape == np.array(dv[i]).shape
            assert list(res[it][1][i]) == list(np.array(dl[i]))
            assert list(res[it][2][i]) == list(np.array(dn[i]))
            np.testing.assert_allclose(res[it][3][i], np.array(dt[i]), rtol=1e-12)


@needs_ffmpeg
def test_file_list_frames_and_times(tmp_path):
    lst = tmp_path / "list.txt"
    # Frame numbers: [3, 20) of HEVC.
    lst.write_text(f"{HEVC} 1 3 20\n")
    pipe, res = reader(batch_size=3, file_list=str(lst), file_list_frame_num=True,
                       sequence_length=5, step=5, enable_frame_num="scalar")
    assert pipe.reader_meta()["R"]["epoch_size"] == 3
    assert [list(x) for x in res[0][1]] == [[1], [1], [1]]
    assert [int(x[0]) for x in res[0][2]] == [3, 8, 13]
    # Seconds at 30 fps: [0.25, 0.75) -> ceil(7.5) = 8 to floor(22.5) = 22, or with
    # file_list_include_preceding_frame floor(7.5) = 7 to ceil(22.5) = 23.
    lst.write_text(f"{HEVC} 2 0.25 0.75\n")
    pipe, res = reader(batch_size=2, file_list=str(lst), sequence_length=5, step=5,
                       enable_frame_num="scalar", enable_timestamps=True)
    assert pipe.reader_meta()["R"]["epoch_size"] == 2
    assert [int(x[0]) for x in res[0][2]] == [8, 13]
    np.testing.assert_allclose(res[0][3][0], [8 / 30, 9 / 30, 10 / 30, 11 / 30, 12 / 30])
    pipe, res = reader(batch_size=3, file_list=str(lst), sequence_length=5, step=5,
                       file_list_include_preceding_frame=True, enable_frame_num="scalar")
    assert pipe.reader_meta()["R"]["epoch_size"] == 3
    assert [int(x[0]) for x in res[0][2]] == [7, 12, 17]
    # A negative start counts from the end; end 0 means the end.
    lst.write_text(f"{VP9_WEBM} 0 -10 0\n")
    _, res = reader(batch_size=2, file_list=str(lst), file_list_frame_num=True, sequence_length=5,
                    enable_frame_num="scalar")
    assert [int(x[0]) for x in res[0][2]] == [80, 85]
    np.testing.assert_array_equal(res[0][0][1][4], pyav_frames(VP9_WEBM)[89])


@needs_ffmpeg
def test_file_root_labels(tmp_path):
    for cls, src in [("a", HEVC), ("b", HEVC_META)]:
        (tmp_path / cls).mkdir()
        os.symlink(src, tmp_path / cls / os.path.basename(src))
    pipe, res = reader(batch_size=3, file_root=str(tmp_path), sequence_length=3, step=10)
    assert pipe.reader_meta()["R"]["epoch_size"] == 3 + 1
    assert [int(x[0]) for x in res[0][1]] == [0, 0, 0]
    _, res = reader(batch_size=4, file_root=str(tmp_path), sequence_length=3, step=10)
    assert [int(x[0]) for x in res[0][1]] == [0, 0, 0, 1]
    assert res[0][0][3].shape == (3, 1080, 1920, 3)
    np.testing.assert_array_equal(res[0][0][3], np.stack(pyav_frames(HEVC_META)))


# ---- sharding, shuffling, checkpoints -----------------------------------------------------------

def firsts(count, **kw):
    """(file label, first frame) of the next `count` samples."""
    pipe, res = reader(batch_size=count, **kw)
    return pipe, [(int(l[0]), int(f[0])) for l, f in zip(res[0][1], res[0][2])]


@needs_ffmpeg
def test_sharding_exactly_once():
    kw = dict(filenames=[HEVC, HEVC, HEVC], labels=[0, 1, 2], sequence_length=2, step=6,
              enable_frame_num="scalar")
    pipe, everything = firsts(15, **kw)
    assert pipe.reader_meta()["R"]["epoch_size"] == 15
    assert everything == [(f, s) for f in range(3) for s in range(0, 30, 6)]
    parts = []
    for shard in range(4):
        pipe, part = firsts(len(range(15 * shard // 4, 15 * (shard + 1) // 4)), shard_id=shard,
                            num_shards=4, **kw)
        assert pipe.reader_meta()["R"]["shard_id"] == shard
        parts.append(part)
    assert sum(parts, []) == everything  # disjoint, in order, each sample once
    _, shuffled = firsts(15, random_shuffle=True, initial_fill=8, **kw)
    assert sorted(shuffled) == everything and shuffled != everything


@needs_ffmpeg
def test_checkpoint_resumes_with_the_same_batches():
    kw = dict(filenames=[HEVC, VP9_WEBM], labels=[0, 1], sequence_length=2, step=9,
              random_shuffle=True, initial_fill=4, enable_frame_num="scalar")

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=9, enable_checkpointing=True)
    def p():
        return tuple(fn.readers.video(name="R", **kw))
    a = p()
    a.run()
    ckpt = a.checkpoint()
    want = [[(int(np.array(o[1][i])[0]), int(np.array(o[2][i])[0])) for i in range(2)]
            for o in (a.run(), a.run())]
    b = p(checkpoint=ckpt)
    got = [[(int(np.array(o[1][i])[0]), int(np.array(o[2][i])[0])) for i in range(2)]
           for o in (b.run(), b.run())]
    assert got == want


# ---- decoders.video arguments -------------------------------------------------------------------

@needs_ffmpeg
def test_decoder_frame_selection_and_padding():
    ref = pyav_frames(HEVC)
    data = blob(HEVC)
    (v,), _ = decode([data], frames=[5, 0, 29, 5])
    assert [np.array_equal(v[k], ref[n]) for k, n in enumerate([5, 0, 29, 5])] == [True] * 4
    (v,), _ = decode([data], start_frame=3, end_frame=12, stride=4)
    assert v.shape[0] == 3 and all(np.array_equal(v[k], ref[n]) for k, n in enumerate([3, 7, 11]))
    cases = {
        "constant": [26, 28, None, None, None],
        "edge": [26, 28, 29, 29, 29],
        "reflect_1001": [26, 28, 29, 27, 25],  # 30 -> 29, 32 -> 27, 34 -> 25
        "reflect_101": [26, 28, 28, 26, 24],   # 30 -> 28, 32 -> 26, 34 -> 24
    }
    for mode, frames in cases.items():
        (v,), _ = decode([data], start_frame=26, sequence_length=5, stride=2, pad_mode=mode,
                         fill_value=[1, 2, 3])
        for k, n in enumerate(frames):
            if n is None:
                assert (v[k] == np.array([1, 2, 3], np.uint8)).all(), mode
            else:
                np.testing.assert_array_equal(v[k], ref[n], err_msg=f"{mode} {k}")
    (v,), _ = decode([data], start_frame=26, sequence_length=5, stride=2, pad_mode="none")
    assert v.shape[0] == 2


@needs_ffmpeg
def test_decoder_per_sample_and_dali():
    datas = [blob(VP9_WEBM), blob(VP8_WEBM)]
    (a, b), _ = decode(datas, sequence_length=3, start_frame=4)
    np.testing.assert_array_equal(a, np.stack(pyav_frames(VP9_WEBM, 7)[4:7]))
    np.testing.assert_array_equal(b, np.stack(pyav_frames(VP8_WEBM, 7)[4:7]))
    # Shapes and frame choice as DALI's CPU decoder (its colour conversion differs from
    # FFmpeg's: compare shapes, and that both pick the same frames by matching nearest).
    dali = pytest.importorskip("nvidia.dali")

    @dali.pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def dp():
        return dali.fn.decoders.video(dali.fn.external_source(source=lambda: datas[:1],
                                                              batch=True),
                                      device="cpu", start_frame=86, sequence_length=6,
                                      stride=1, pad_mode="reflect_101")
    d = dp()
    d.build()
    dv = np.array(d.run()[0][0])
    (sv,), _ = decode(datas[:1], start_frame=86, sequence_length=6, pad_mode="reflect_101")
    assert dv.shape == sv.shape
    ref = pyav_frames(VP9_WEBM)
    for k in range(6):  # DALI's frame k is closest to the frame stoker chose
        dists = [np.abs(dv[k].astype(int) - r).mean() for r in ref[80:]]
        assert np.array_equal(sv[k], ref[80 + int(np.argmin(dists))])


# ---- errors -------------------------------------------------------------------------------------

def cut(tmp_path, src, name, frac=0.5):
    data = open(src, "rb").read()
    p = tmp_path / name
    p.write_bytes(data[: int(len(data) * frac)])
    return str(p)


@needs_ffmpeg
def test_truncated_and_corrupt_files(tmp_path):
    webm = cut(tmp_path, VP9_WEBM, "cut.webm")
    with pytest.raises(stoker.DecodeError) as e:
        reader(filenames=[webm], sequence_length=2)
    assert plain(e.value) == (
        f"fn.readers.video: {webm}: the video is truncated or damaged: its container says it "
        "lasts 2.966 s (about 89 frames) but only 30 frames could be read")
    with pytest.raises(stoker.DecodeError) as e:
        decode_files([webm])
    assert plain(e.value) == (
        f"fn.decoders.video: sample 0 ('{webm}'): the video is truncated or damaged: its "
        "container says it lasts 2.966 s (about 89 frames) but only 30 frames could be read")
    mp4 = cut(tmp_path, SAMPLE, "cut.mp4")  # index first: the packets run past the end
    with pytest.raises(stoker.DecodeError) as e:
        reader(filenames=[mp4], sequence_length=2)
    assert plain(e.value) == f"fn.readers.video: {mp4}: packet 3 of the video stream is corrupt"
    mp4 = cut(tmp_path, AVC, "cut_index_at_end.mp4")  # the index (moov) is lost
    with pytest.raises(stoker.DecodeError) as e:
        reader(filenames=[mp4], sequence_length=2)
    assert plain(e.value) == (f"fn.readers.video: {mp4}: not a video container FFmpeg can read "
                              "(Invalid data found when processing input)")
    # Damaged coded data inside an intact container: the frame is named.
    data = bytearray(open(AVC, "rb").read())
    for i in range(200000, 200600):
        data[i] ^= 0xFF
    bad = tmp_path / "damaged.mp4"
    bad.write_bytes(bytes(data))
    with pytest.raises(stoker.DecodeError) as e:
        reader(batch_size=2, threads=1, filenames=[str(bad)], sequence_length=4, step=40)
    assert plain(e.value) == (
        f"fn.readers.video: sample 1: {bad}: frames 40 to 43: damaged data on the way to frame "
        "41 (Invalid data found when processing input)")
    # The pipeline stays usable: the next batch comes.
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return tuple(fn.readers.video(filenames=[str(bad)], labels=[], sequence_length=4,
                                      step=40, enable_frame_num="scalar"))
    pipe = p()
    with pytest.raises(stoker.DecodeError):
        pipe.run()
    _, _, nums = pipe.run()
    assert [int(np.array(nums[i])[0]) for i in range(2)] == [80, 0]
    text = tmp_path / "text.mp4"
    text.write_bytes(b"not a video at all" * 20)
    with pytest.raises(stoker.DecodeError) as e:
        decode_files([str(text)])
    assert plain(e.value) == (f"fn.decoders.video: sample 0 ('{text}'): not a video container "
                              "FFmpeg can read (Invalid data found when processing input)")
    with pytest.raises(stoker.DecodeError) as e:
        decode([np.zeros(0, np.uint8)])
    assert plain(e.value) == "fn.decoders.video: sample 0: the encoded video is empty (0 bytes)"


@needs_ffmpeg
def test_skip_bad_sequences(tmp_path):
    data = bytearray(open(AVC, "rb").read())
    for i in range(200000, 200600):
        data[i] ^= 0xFF
    bad = tmp_path / "damaged.mp4"
    bad.write_bytes(bytes(data))

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def p():
        return tuple(fn.readers.video(filenames=[str(bad)], labels=[], sequence_length=4,
                                      step=40, enable_frame_num="scalar", on_error="skip"))
    pipe = p()
    _, _, nums = pipe.run()
    got = sorted(int(np.array(nums[i])[0]) for i in range(3))
    assert 40 not in got and got[0] == 0
    (st,) = pipe.error_stats().values()
    assert st["skipped"] >= 1


@needs_ffmpeg
def test_unsupported_codec(tmp_path):
    data = open(HEVC, "rb").read()
    assert data.count(b"hev1") == 1
    p = tmp_path / "unknown_codec.mp4"
    p.write_bytes(data.replace(b"hev1", b"zzzz"))
    with pytest.raises(NotImplementedError) as e:
        reader(filenames=[str(p)], sequence_length=2)
    assert plain(e.value) == (f"fn.readers.video: {p}: the video codec 'none' has no software "
                              "decoder in the FFmpeg stoker was built with")
    with pytest.raises(NotImplementedError) as e:
        decode_files([str(p)])
    assert plain(e.value) == (f"fn.decoders.video: sample 0 ('{p}'): the video codec 'none' has no "
                              "software decoder in the FFmpeg stoker was built with")


@needs_ffmpeg
def test_zero_frames_and_too_long_sequences(tmp_path):
    # An MP4 whose video track got no frames (FFmpeg drops the empty track).
    p = tmp_path / "zero.mp4"
    c = av.open(str(p), mode="w")
    s = c.add_stream("mpeg4", rate=30)
    s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
    c.start_encoding()
    c.close()
    with pytest.raises(stoker.DecodeError) as e:
        reader(filenames=[str(p)], sequence_length=2)
    assert plain(e.value) == f"fn.readers.video: {p}: the file holds no video stream with frames"
    with pytest.raises(stoker.DecodeError) as e:
        decode_files([str(p)])
    assert plain(e.value) == (f"fn.decoders.video: sample 0 ('{p}'): the file holds no video "
                              "stream with frames")
    with pytest.raises(ValueError) as e:
        reader(filenames=[HEVC, HEVC_META], sequence_length=31)
    assert plain(e.value) == (
        "fn.readers.video: no file has a whole sequence of sequence_length=31 frames with "
        f"stride=1 (31 frames); the videos have (frames) {HEVC}: 30, {HEVC_META}: 3. Use a "
        "shorter sequence_length or stride, or pad_sequences=True")
    with pytest.raises(ValueError) as e:
        decode([blob(HEVC)], frames=[3, 30])
    assert plain(e.value) == ("fn.decoders.video: sample 0: argument 'frames': frame 30 is outside "
                              "the video's 30 frames (0 to 29)")
    with pytest.raises(ValueError) as e:
        decode([blob(HEVC)], start_frame=31, sequence_length=2, pad_mode="none")
    assert plain(e.value) == ("fn.decoders.video: sample 0: start_frame 31 is past the video's 30 "
                              "frames")


@needs_ffmpeg
def test_argument_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        reader(filenames=[str(tmp_path / "missing.mp4")], sequence_length=2)
    assert plain(e.value) == (f"fn.readers.video: video file '{tmp_path / 'missing.mp4'}' does not "
                              "exist")
    with pytest.raises(ValueError) as e:
        reader(filenames=[HEVC], file_root=str(tmp_path), sequence_length=2)
    assert plain(e.value) == ("fn.readers.video: give exactly one of file_root, file_list and "
                              "filenames (got 2)")
    with pytest.raises(ValueError) as e:
        reader(filenames=[HEVC], sequence_length=2, enable_timestamps=True)
    assert plain(e.value) == (
        "fn.readers.video: argument 'enable_timestamps' needs labels: frame numbers and "
        "timestamps come after the labels output, which exists with file_root, file_list or "
        "labels; pass labels=[] (labels 0, 1, 2, ...) with filenames")
    with pytest.raises(ValueError) as e:
        reader(filenames=[HEVC], sequence_length=2, image_type=types.BGR)
    assert plain(e.value) == "fn.readers.video: argument 'image_type' must be RGB or YCbCr, got BGR"
    with pytest.raises(ValueError) as e:
        reader(filenames=[HEVC], sequence_length=2, dtype=types.INT16)
    assert plain(e.value) == "fn.readers.video: argument 'dtype' must be UINT8 or FLOAT, got int16"
    with pytest.raises(ValueError) as e:
        reader(filenames=[HEVC, AVC], labels=[1], sequence_length=2)
    assert plain(e.value) == (
        "fn.readers.video: argument 'labels' has 1 entries for 2 filenames; give one label per "
        "file, or an empty list for 0, 1, 2, ...")
    lst = tmp_path / "l.txt"
    lst.write_text(f"{HEVC} 0 25 40\n")
    with pytest.raises(ValueError) as e:
        reader(file_list=str(lst), file_list_frame_num=True, sequence_length=2)
    assert plain(e.value) == (
        f"fn.readers.video: argument 'file_list': {HEVC}: the start frame and end frame give "
        "frames [25, 40), outside the video's 30 frames or reversed")
    with pytest.raises(ValueError) as e:
        decode([blob(HEVC)], frames=[1], stride=2)
    assert plain(e.value) == (
        "fn.decoders.video: argument 'frames' cannot be combined with start_frame, end_frame, "
        "sequence_length or stride; give the frames to decode or a range, not both")
    with pytest.raises(ValueError) as e:
        decode([blob(HEVC)], pad_mode="wrap")
    assert plain(e.value) == (
        "fn.decoders.video: argument 'pad_mode' must be one of 'none', 'constant', 'edge' "
        "('repeat'), 'reflect_1001' ('symmetric'), 'reflect_101' ('reflect'), got 'wrap'")
    with pytest.raises(TypeError) as e:
        decode([np.zeros(4, np.float32)])
    assert plain(e.value) == (
        "fn.decoders.video: the input must be encoded video bytes (uint8), got float32; read "
        "the files with fn.readers.file")


@needs_ffmpeg
def test_bad_files_do_not_leak(tmp_path):
    text = tmp_path / "text.mp4"
    text.write_bytes(b"not a video at all" * 20)
    datas = [blob(cut(tmp_path, VP9_WEBM, "cut.webm")), blob(cut(tmp_path, SAMPLE, "cut.mp4")),
             np.fromfile(text, np.uint8), blob(HEVC)]
    counter = iter(range(10 ** 6))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def p():
        return fn.decoders.video(fn.external_source(
            source=lambda: [datas[next(counter) % 4]], batch=True), frames=[0])
    pipe = p()

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def rounds(n):
        good = 0
        for _ in range(4 * n):
            try:
                (out,) = pipe.run()
                np.testing.assert_array_equal(np.array(out[0])[0], pyav_frames(HEVC, 1)[0])
                good += 1
            except stoker.DecodeError:
                pass
        return good
    assert rounds(3) == 3
    before = rss()
    assert rounds(30) == 30
    assert rss() - before < 16 << 20


@needs_ffmpeg
def test_variable_frame_rate(tmp_path):
    import fractions
    p = str(tmp_path / "vfr.mp4")
    c = av.open(p, mode="w")
    s = c.add_stream("mpeg4", rate=30)
    s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
    s.codec_context.time_base = fractions.Fraction(1, 30)
    for i, t in enumerate([0, 1, 3, 4, 6, 7, 9, 10]):  # 1/30 s, then 2/30 s, ...
        fr = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 30 * i, np.uint8), format="rgb24")
        fr.pts, fr.time_base = t, fractions.Fraction(1, 30)
        for pk in s.encode(fr):
            c.mux(pk)
    for pk in s.encode(None):
        c.mux(pk)
    c.close()
    with pytest.raises(stoker.DecodeError) as e:
        reader(batch_size=1, filenames=[p], sequence_length=3)
    assert plain(e.value) == (
        f"fn.readers.video: {p}: variable frame rate videos are not supported (the first "
        "frame's duration disagrees with the average frame rate); pass skip_vfr_check=True to "
        "read it anyway")
    _, res = reader(batch_size=2, filenames=[p], labels=[], sequence_length=3, step=4,
                    skip_vfr_check=True, enable_timestamps=True)
    np.testing.assert_allclose(res[0][2][1], [6 / 30, 7 / 30, 9 / 30])  # frames 4, 5, 6
    ref = pyav_frames(p)
    np.testing.assert_array_equal(res[0][0][1], np.stack(ref[4:7]))


@needs_ffmpeg
def test_constant_rate_in_whole_milliseconds_is_not_variable(tmp_path):
    # WebM keeps time in milliseconds: 30 fps is 33 ms a frame (33.33 rounded), which is a
    # constant rate, not a variable one.
    import fractions
    p = str(tmp_path / "ms.webm")
    with av.open(p, mode="w", format="webm") as c:
        s = c.add_stream("libvpx-vp9", rate=30)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for i in range(12):
            for pk in s.encode(av.VideoFrame.from_ndarray(
                    np.full((48, 64, 3), 20 * i, np.uint8), format="rgb24")):
                c.mux(pk)
        for pk in s.encode(None):
            c.mux(pk)
    with av.open(p) as c:
        assert c.streams.video[0].time_base == fractions.Fraction(1, 1000)
    _, res = reader(batch_size=2, filenames=[p], labels=[], sequence_length=3,
                    enable_timestamps=True)
    np.testing.assert_array_equal(res[0][0][1], np.stack(pyav_frames(p)[3:6]))
    np.testing.assert_allclose(res[0][2][1], [0.1, 0.133, 0.167], atol=1e-9)


@needs_ffmpeg
def test_huge_frames_are_refused_before_reading(tmp_path):
    for side, reason in [
            (12000, "the frames are 12000x12000 pixels, more than stoker's limit of 134217728 "
                    "pixels per frame"),
            (16384, "not a video container FFmpeg can read (Device or resource busy)")]:
        p = tmp_path / f"huge{side}.y4m"
        p.write_bytes(f"YUV4MPEG2 W{side} H{side} F30:1 Ip A1:1 C420jpeg\nFRAME\n".encode() +
                      bytes(100000))
        with pytest.raises(stoker.DecodeError) as e:
            reader(filenames=[str(p)], sequence_length=1)
        assert plain(e.value) == f"fn.readers.video: {p}: {reason}"
        with pytest.raises(stoker.DecodeError) as e:
            decode([np.fromfile(p, np.uint8)])
        assert plain(e.value) == f"fn.decoders.video: sample 0: {reason}"


# ---- experimental.inputs.video: long videos fed with feed_input, streamed as sequences --------

def video_input(batch_size=3, threads=2, device="cpu", **kw):
    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None if device == "cpu" else 0)
    def p():
        return fn.experimental.inputs.video(name="in", device=device, **kw)
    pipe = p()
    pipe.build()
    return pipe


def run_all(pipe, iterations):
    out = []
    for _ in range(iterations):
        (b,) = pipe.run()
        assert b.layout() == "FHWC"
        b = b.as_cpu() if type(b).__name__ == "TensorListGPU" else b
        out.append([np.array(b[i]) for i in range(len(b))])
    return out


@needs_ffmpeg
@pytest.mark.parametrize("policy", ["partial", "pad"])
def test_inputs_video_streams_each_fed_video_as_sequences(policy):
    # 90 and then 120 frames in sequences of 7: 12 whole sequences and one of 6 (batches of
    # 3, 3, 3, 3, 1), then 17 and one of 1 (six batches of 3); a video's batches end with it.
    # The short sequence is padded with zeros under 'pad'. Each frame is PyAV's, bit for bit.
    pipe = video_input(sequence_length=7, last_sequence_policy=policy)
    pipe.feed_input("in", [blob(VP9_WEBM)])
    pipe.feed_input("in", [blob(VP9_MP4)])
    ref = {VP9_WEBM: pyav_frames(VP9_WEBM), VP9_MP4: pyav_frames(VP9_MP4)}
    assert (len(ref[VP9_WEBM]), len(ref[VP9_MP4])) == (90, 120)
    for path, sizes in ((VP9_WEBM, [3, 3, 3, 3, 1]), (VP9_MP4, [3] * 6)):
        batches = run_all(pipe, len(sizes))
        assert [len(b) for b in batches] == sizes
        seqs = [s for b in batches for s in b]
        for k, s in enumerate(seqs):
            want = np.stack(ref[path][7 * k:7 * k + 7])
            if len(want) == 7 or policy == "partial":
                np.testing.assert_array_equal(s, want)
            else:
                assert s.shape == (7,) + want.shape[1:]
                np.testing.assert_array_equal(s[:len(want)], want)
                assert not s[len(want):].any()
    with pytest.raises(RuntimeError) as e:
        pipe.run()
    assert plain(e.value) == (
        "fn.experimental.inputs.video: no video left to decode for this batch: feed one with "
        "pipe.feed_input('in', [encoded]) (encoded: a 1-D uint8 array of the file's bytes) before "
        "pipe.run(), or make it with blocking=True to wait for one")


@needs_ffmpeg
def test_inputs_video_batches_as_dali():
    # DALI 2.4's CPU variant decodes VP8/VP9 (not H.264). 90 frames in sequences of 8: 11
    # whole and one of 2, padded: three batches of 4.
    dali = pytest.importorskip("nvidia.dali")
    data = blob(VP9_WEBM)

    @dali.pipeline_def(batch_size=4, num_threads=2, device_id=None, prefetch_queue_depth=1)
    def dp():
        return dali.fn.experimental.inputs.video(name="in", sequence_length=8, device="cpu",
                                                 last_sequence_policy="pad")
    d = dp()
    d.build()
    pipe = video_input(batch_size=4, sequence_length=8, last_sequence_policy="pad")
    frames = pyav_frames(VP9_WEBM)
    for p in (d, pipe):
        p.feed_input("in", [data])
    for it in range(3):
        (dv,) = d.run()
        (sv,) = pipe.run()
        assert len(dv) == len(sv) == 4
        for i in range(4):
            a, b = np.array(dv[i]), np.array(sv[i])
            assert a.shape == b.shape == (8, 642, 642, 3)
            k = 8 * (4 * it + i)
            for j in range(8):
                if k + j >= len(frames):  # both pad with zeros
                    assert not a[j].any() and not b[j].any()
                    continue
                assert np.array_equal(b[j], frames[k + j])
                # DALI converts colours its own way: its frame is the nearest to stoker's.
                lo = max(0, k + j - 2)
                near = [np.abs(a[j].astype(int) - f).mean() for f in frames[lo:k + j + 3]]
                assert lo + int(np.argmin(near)) == k + j


@needs_ffmpeg
def test_inputs_video_blocking_waits_for_feed_input():
    import threading
    pipe = video_input(batch_size=2, sequence_length=45, blocking=True)
    t = threading.Timer(0.3, lambda: pipe.feed_input("in", [blob(VP9_WEBM)]))
    t.start()
    (b,) = pipe.run()
    t.join()
    assert [np.array(b[i]).shape[0] for i in range(len(b))] == [45, 45]


@needs_ffmpeg
def test_inputs_video_fed_by_node_without_a_copy():
    data = blob(VP9_WEBM)

    pipe = stoker.Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        node = fn.experimental.inputs.video(name="in", sequence_length=30, no_copy=True)
        pipe.set_outputs(node)
    pipe.build()
    pipe.feed_input(node, [data])
    batches = run_all(pipe, 2)
    assert [len(b) for b in batches] == [2, 1]
    np.testing.assert_array_equal(batches[1][0], np.stack(pyav_frames(VP9_WEBM)[60:90]))


@needs_ffmpeg
def test_inputs_video_errors(tmp_path):
    def make(**kw):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def p():
            return fn.experimental.inputs.video(**kw)
        pipe = p()
        pipe.build()
        return pipe
    with pytest.raises(ValueError) as e:
        make(sequence_length=3)
    assert plain(e.value) == ("fn.experimental.inputs.video: give it a name (name=\"...\"): "
                              "pipe.feed_input(name, data) feeds it its videos.")
    with pytest.raises(TypeError) as e:
        make(name="in")
    assert plain(e.value) == ("fn.experimental.inputs.video: the argument 'sequence_length' is "
                              "required (frames in each sequence).")
    with pytest.raises(TypeError) as e:
        make(name="in", sequence_length=3, frames_per_sequence=3)
    assert plain(e.value).startswith("fn.experimental.inputs.video got an unexpected argument "
                                     "'frames_per_sequence'. Its arguments are: affine, blocking")
    with pytest.raises(ValueError) as e:
        make(name="in", sequence_length=3, last_sequence_policy="drop")
    assert "last_sequence_policy" in str(e.value) and "'partial'" in str(e.value)
    with pytest.raises(ValueError) as e:
        make(name="in", sequence_length=0)
    assert "sequence_length" in str(e.value)
    with pytest.raises(ValueError) as e:
        make(name="in", sequence_length=3, device="mixed")
    assert plain(e.value) == (
        "fn.experimental.inputs.video(device='mixed') runs on 'mixed', but the pipeline has "
        "device_id=None (CPU only). Give the pipeline a GPU (device_id=0) or run the operator "
        "with device='cpu'.")
    with pytest.raises(ValueError) as e:
        make(name="in", sequence_length=3, device="gpu")
    assert plain(e.value) == ("fn.experimental.inputs.video: device must be 'cpu' or 'mixed', "
                              "got 'gpu'.")
    pipe = make(name="in", sequence_length=3)
    with pytest.raises(ValueError) as e:
        pipe.feed_input("in", [blob(VP9_WEBM), blob(VP9_WEBM)])
    assert plain(e.value) == ("fn.experimental.inputs.video: feed_input takes a batch of one "
                              "encoded video (a list holding one 1-D uint8 array of the file's "
                              "bytes), got 2 samples")
    with pytest.raises(TypeError) as e:
        pipe.feed_input("in", [np.zeros((4, 4), np.float32)])
    assert "got a float32 array of shape (4, 4)" in str(e.value)
    if FFMPEG:
        with pytest.raises(stoker.DecodeError) as e:
            pipe.feed_input("in", [np.frombuffer(b"not a video at all" * 50, np.uint8)])
        assert plain(e.value).startswith("fn.experimental.inputs.video: the video fed with "
                                         "feed_input cannot be read: ")
    with pytest.raises(ValueError) as e:
        pipe.serialize()
    assert "fn.experimental.inputs.video" in str(e.value) and "cannot be serialized" in str(e.value)


@needs_ffmpeg
@pytest.mark.skipif(stoker._C.cuda_device_count() == 0, reason="no GPU here")
def test_inputs_video_mixed_equals_cpu():
    data = blob(AVC)
    gpu, cpu = video_input(device="mixed", sequence_length=16), video_input(sequence_length=16)
    for p in (gpu, cpu):
        p.feed_input("in", [data])
    for g, c in zip(run_all(gpu, 2), run_all(cpu, 2)):
        for a, b in zip(g, c):
            np.testing.assert_array_equal(a, b)


# ---- readers.video_resize: readers.video, then resize (DALI: GPU only, NVDEC) ------------------

def video_resize(device="cpu", **kw):
    @pipeline_def(batch_size=2, num_threads=2, device_id=None if device == "cpu" else 0, seed=5)
    def p():
        return tuple(fn.readers.video_resize(device=device, name="R", **kw))
    return p()


@needs_ffmpeg
def test_video_resize_is_the_reader_then_resize():
    kw = dict(filenames=[VP9_WEBM, AVC], labels=[1, 2], sequence_length=5, stride=3,
              random_shuffle=True, enable_frame_num=True)

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=5)
    def ref():
        video, label, num = fn.readers.video(name="R", **kw)
        return fn.resize(video, resize_shorter=96, interp_type=types.INTERP_CUBIC,
                         antialias=False), label, num
    a, b = video_resize(resize_shorter=96, interp_type=types.INTERP_CUBIC, antialias=False, **kw), ref()
    assert a.reader_meta("R") == b.reader_meta("R")
    for _ in range(3):
        for x, y in zip(a.run(), b.run()):
            assert x.layout() == y.layout()
            for i in range(2):
                np.testing.assert_array_equal(np.array(x[i]), np.array(y[i]))
    (v, _, _) = a.run()
    shapes = {np.array(v[i]).shape for i in range(2)}
    assert shapes <= {(5, 96, 96, 3), (5, 96, 120, 3)}  # 642x642 and 800x640 frames


def test_video_resize_errors():
    with pytest.raises(TypeError) as e:
        video_resize(filenames=[VP9_WEBM], sequence_length=2, rezise_shorter=3).build()
    assert plain(e.value).startswith("fn.readers.video_resize got an unexpected argument "
                                     "'rezise_shorter'. Did you mean 'resize_shorter'?")
    with pytest.raises(ValueError) as e:
        video_resize(device="mixed", filenames=[VP9_WEBM], sequence_length=2).build()
    assert plain(e.value).startswith("fn.readers.video_resize has no 'mixed' backend in this "
                                     "build of stoker; it runs on: cpu")


@needs_ffmpeg
@pytest.mark.skipif(stoker._C.cuda_device_count() == 0, reason="no GPU here")
def test_video_resize_gpu_equals_cpu():
    kw = dict(filenames=[VP9_WEBM, AVC], labels=[1, 2], sequence_length=4, resize_x=128,
              resize_y=96)
    g, c = video_resize("gpu", **kw), video_resize(**kw)
    for _ in range(2):
        for x, y in zip(g.run(), c.run()):
            assert type(x).__name__ == "TensorListGPU"
            x = x.as_cpu()
            for i in range(2):
                np.testing.assert_array_equal(np.array(x[i]), np.array(y[i]))
