"""readers.sequence (folders of frame images) against NVIDIA DALI 2.4's readers.sequence on the
same folders, bit for bit, and against an independent reference: the folders listed and cut into
sequences in Python and the frames decoded with PIL. Frames are real photos from
../shared/testdata/imagenet-sample resized to one size and saved as JPEG and PNG."""
import hashlib
import os
import re
import shutil

import numpy as np
import pytest
from PIL import Image

import stoker
from stoker import fn, pipeline_def, types

H, W = 32, 48
EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".pnm", ".ppm", ".pgm", ".pbm", ".jp2",
        ".webp")
# Folder -> (frames, format). "10" sorts before "clip_a"; "clip_b" is too short for 3 frames.
LAYOUT = {"clip_a": (5, "JPEG"), "clip_b": (2, "JPEG"), "clip_c": (7, "PNG"), "10": (3, "JPEG")}


def photos(testdata, n):
    files = sorted((testdata / "imagenet-sample").glob("*/*.jpg"))[:n]
    assert len(files) == n
    return [Image.open(f).convert("RGB").resize((W, H), Image.BILINEAR) for f in files]


@pytest.fixture(scope="module")
def frames_root(tmp_path_factory, testdata):
    """file_root with the folders of LAYOUT (frames named so that name order != creation order),
    plus what the reader must ignore: a hidden folder, a hidden frame, a text file, a frame
    directly in file_root and an empty folder."""
    root = tmp_path_factory.mktemp("frames")
    ims = iter(photos(testdata, sum(n for n, _ in LAYOUT.values()) + 2))
    for folder, (n, fmt) in LAYOUT.items():
        (root / folder).mkdir()
        for i in reversed(range(n)):
            ext = ".png" if fmt == "PNG" else ".jpg"
            next(ims).save(root / folder / f"frame_{i:03d}{ext}", fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    (root / "clip_a" / "notes.txt").write_text("not a frame")
    (root / ".hidden").mkdir()
    next(ims).save(root / ".hidden" / "frame_000.jpg")
    next(ims).save(root / "clip_a" / ".frame_999.jpg")
    shutil.copy(root / "clip_a" / "frame_000.jpg", root / "top.jpg")
    (root / "empty").mkdir()
    return root


def reference_sequences(root, length, step=1, stride=1):
    """The sequences as DALI defines them, listed independently: file paths per sequence."""
    out = []
    folders = [d for d in os.listdir(root) if not d.startswith(".") and (root / d).is_dir()]
    for folder in sorted(folders, key=lambda d: d + "/"):  # as whole paths are sorted
        frames = sorted(f for f in os.listdir(root / folder)
                        if not f.startswith(".") and f.lower().endswith(EXTS)
                        and (root / folder / f).is_file())
        start = 0
        while start + (length - 1) * stride < len(frames):
            out.append([str(root / folder / frames[start + k * stride]) for k in range(length)])
            start += step
    return out


def pil_frames(paths, mode="RGB"):
    return np.stack([np.asarray(Image.open(p).convert(mode)) for p in paths]).reshape(len(paths), H, W, -1)


def make(lib_pd, lib_fn, root, batch_size, threads=2, seed=7, **kw):
    @lib_pd(batch_size=batch_size, num_threads=threads, device_id=None, seed=seed)
    def pipe():
        return lib_fn.readers.sequence(file_root=str(root), name="Reader", **kw)
    p = pipe()
    p.build()
    return p


def run(p, iterations):
    out = []
    for _ in range(iterations):
        (seq,) = p.run()
        assert seq.layout() == "FHWC"
        out.append([np.array(seq[i]) for i in range(len(seq))])
    return out


def dali():
    pytest.importorskip("nvidia.dali")
    import warnings
    warnings.filterwarnings("ignore", message=".*deprecated.*")
    from nvidia.dali import fn as dfn, pipeline_def as dpd, types as dtypes
    return dpd, dfn, dtypes


def message(text):
    """A regex for a whole error message of this file's readers.sequence."""
    return r"fn\.readers\.sequence \(test_sequence_reader\.py:\d+\): " + re.escape(text)


@pytest.mark.parametrize("kw", [
    dict(sequence_length=2),
    dict(sequence_length=3, step=2, stride=2),
    dict(sequence_length=1, step=3),
    dict(sequence_length=3, stride=2),
    dict(sequence_length=2, image_type="BGR"),
    dict(sequence_length=2, image_type="ANY_DATA"),
    dict(sequence_length=2, num_shards=3, shard_id=1),
    dict(sequence_length=2, num_shards=3, shard_id=2, pad_last_batch=True),
    dict(sequence_length=2, num_shards=2, shard_id=0, stick_to_shard=True),
])
def test_matches_dali_bit_for_bit(frames_root, kw):
    dpd, dfn, dtypes = dali()
    skw, dkw = dict(kw), dict(kw)
    if "image_type" in kw:
        skw["image_type"] = getattr(types, kw["image_type"])
        dkw["image_type"] = getattr(dtypes, kw["image_type"])
    s = make(pipeline_def, fn, frames_root, 3, **skw)
    d = make(dpd, dfn, frames_root, 3, **dkw)
    meta = s.reader_meta()["Reader"]
    dmeta = d.reader_meta()["Reader"]
    for key in ("epoch_size", "epoch_size_padded", "number_of_shards", "shard_id"):
        assert meta[key] == dmeta[key], key
    # Two epochs and more: shard moves, padding and wrap-around as DALI does them.
    iterations = 2 * -(-meta["epoch_size_padded"] // 3) + 1
    for got, want in zip(run(s, iterations), run(d, iterations)):
        for g, w in zip(got, want):
            assert g.dtype == w.dtype == np.uint8
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("length,step,stride", [(2, 1, 1), (3, 2, 2), (1, 1, 1), (3, 1, 3), (7, 1, 1)])
def test_against_pil_reference(frames_root, length, step, stride):
    want = reference_sequences(frames_root, length, step, stride)
    bs = min(2, len(want))
    p = make(pipeline_def, fn, frames_root, bs, sequence_length=length, step=step, stride=stride)
    assert p.reader_meta()["Reader"]["epoch_size"] == len(want)
    got = [s for batch in run(p, -(-len(want) // bs)) for s in batch][:len(want)]
    for g, paths in zip(got, want):
        assert g.shape == (length, H, W, 3)
        np.testing.assert_array_equal(g, pil_frames(paths))


def test_folder_with_too_few_frames_gives_no_sequence(frames_root):
    # clip_b has 2 frames: none of its sequences of 3 frames exist; clip_a (5) gives 3.
    want = reference_sequences(frames_root, 3)
    assert not any("clip_b" in s[0] for s in want)
    p = make(pipeline_def, fn, frames_root, 1, sequence_length=3)
    assert p.reader_meta()["Reader"]["epoch_size"] == len(want) == 1 + 3 + 5


def odd_root(root, testdata, with_gray_jpeg=True):
    """Gray JPEG frames named *.JPG in folder 'x', RGBA PNG frames in 'x.y', grayscale PNG
    frames in 'x-1'. DALI sorts whole paths, so the order is 'x-1', 'x.y', 'x' ('-' < '.' < '/')."""
    ims = photos(testdata, 9)
    for i in range(3):
        if with_gray_jpeg:
            (root / "x").mkdir(exist_ok=True)
            ims[i].convert("L").save(root / "x" / f"F{i}.JPG", quality=90)
        (root / "x.y").mkdir(exist_ok=True)
        rgba = ims[3 + i].copy()
        rgba.putalpha(Image.fromarray(np.full((H, W), 40 * i + 100, np.uint8)))
        rgba.save(root / "x.y" / f"f{i}.png")
        (root / "x-1").mkdir(exist_ok=True)
        ims[6 + i].convert("L").save(root / "x-1" / f"f{i}.png")
    return root


@pytest.mark.parametrize("image_type", ["RGB", "BGR"])
def test_names_and_folder_order_as_dali(tmp_path, testdata, image_type):
    root = odd_root(tmp_path, testdata)
    dpd, dfn, dtypes = dali()
    s = make(pipeline_def, fn, root, 3, sequence_length=2, image_type=getattr(types, image_type))
    d = make(dpd, dfn, root, 3, sequence_length=2, image_type=getattr(dtypes, image_type))
    assert s.reader_meta()["Reader"]["epoch_size"] == 6
    got, want = run(s, 2), run(d, 2)
    for x, y in zip(got, want):
        for g, w in zip(x, y):
            assert g.shape == w.shape == (2, H, W, 3)
            np.testing.assert_array_equal(g, w)
    order = [paths[0] for paths in reference_sequences(root, 2)]
    assert [os.path.basename(os.path.dirname(p)) for p in order] == ["x-1"] * 2 + ["x.y"] * 2 + ["x"] * 2
    for g, paths in zip([q for b in got for q in b], reference_sequences(root, 2)):
        ref = pil_frames(paths)
        np.testing.assert_array_equal(g, ref if image_type == "RGB" else ref[..., ::-1])


def test_any_data_keeps_the_files_channels(tmp_path, testdata):
    """ANY_DATA: gray frames give 1 channel, RGBA PNG frames 4. (DALI 2.4 corrupts its heap on
    gray JPEG frames with ANY_DATA, so it is compared on the PNG folders only.)"""
    (tmp_path / "all").mkdir()
    root = odd_root(tmp_path / "all", testdata)
    s = make(pipeline_def, fn, root, 3, sequence_length=2, image_type=types.ANY_DATA)
    got = [q for b in run(s, 2) for q in b]
    for g, paths in zip(got, reference_sequences(root, 2)):
        mode = "RGBA" if "x.y" in paths[0] else "L"
        np.testing.assert_array_equal(g, pil_frames(paths, mode))
    assert [g.shape[-1] for g in got] == [1, 1, 4, 4, 1, 1]
    dpd, dfn, dtypes = dali()
    (tmp_path / "png").mkdir()
    png = odd_root(tmp_path / "png", testdata, with_gray_jpeg=False)
    s = make(pipeline_def, fn, png, 2, sequence_length=2, image_type=types.ANY_DATA)
    d = make(dpd, dfn, png, 2, sequence_length=2, image_type=dtypes.ANY_DATA)
    for x, y in zip(run(s, 3), run(d, 3)):
        for g, w in zip(x, y):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_folder_named_like_a_frame_is_not_a_frame(small_root):
    """DALI takes 's0/sub.jpg' (a folder) for a frame and fails to read it; stoker skips it."""
    (small_root / "s0" / "sub.jpg").mkdir()
    want = reference_sequences(small_root, 3)
    p = make(pipeline_def, fn, small_root, 1, sequence_length=3)
    assert p.reader_meta()["Reader"]["epoch_size"] == len(want) == 2
    for g, paths in zip([b[0] for b in run(p, 2)], want):
        np.testing.assert_array_equal(g, pil_frames(paths))


def test_gray(frames_root):
    """GRAY is ITU-R 601 luma of the RGB pixels with Pillow's rounding (convert('L')), as
    decoders.image gives it. DALI's readers.sequence takes libjpeg's Y channel of JPEG frames
    instead (it differs where the RGB pixels were clamped: up to 11 levels on these photos,
    0.1 on average) and rounds the luma of PNG frames otherwise (off by at most 1)."""
    want = reference_sequences(frames_root, 2)
    p = make(pipeline_def, fn, frames_root, 4, sequence_length=2, image_type=types.GRAY)
    got = [s for batch in run(p, 4) for s in batch][:len(want)]
    for g, paths in zip(got, want):
        assert g.shape == (2, H, W, 1)
        np.testing.assert_array_equal(g, pil_frames(paths, "L"))
    dpd, dfn, dtypes = dali()
    d = make(dpd, dfn, frames_root, 4, sequence_length=2, image_type=dtypes.GRAY)
    theirs = [s for batch in run(d, 4) for s in batch][:len(want)]
    for g, w, paths in zip(got, theirs, want):
        assert g.shape == w.shape
        diff = np.abs(g.astype(int) - w)
        if paths[0].endswith(".png"):
            assert diff.max() <= 1
        else:
            assert diff.mean() < 0.5 and diff.max() <= 16


def digest(a):
    return hashlib.sha1(a.tobytes()).hexdigest()


def test_shuffle_reproducible_and_each_sequence_once_per_epoch(frames_root):
    want = {digest(pil_frames(s)) for s in reference_sequences(frames_root, 2)}
    n = len(want)  # 13
    epochs = {}
    for seed in (11, 11, 12):
        p = make(pipeline_def, fn, frames_root, 1, seed=seed, sequence_length=2, random_shuffle=True,
                 initial_fill=4)
        seqs = [digest(b[0]) for b in run(p, 2 * n)]
        assert set(seqs[:n]) == want and set(seqs[n:]) == want  # exactly once per epoch
        epochs.setdefault(seed, []).append(seqs)
    assert epochs[11][0] == epochs[11][1]
    assert epochs[11][0] != epochs[12][0]
    assert epochs[11][0][:n] != [digest(pil_frames(s)) for s in reference_sequences(frames_root, 2)]


@pytest.mark.parametrize("shuffle", [False, True])
def test_shards_read_every_sequence_exactly_once(frames_root, shuffle):
    want = [digest(pil_frames(s)) for s in reference_sequences(frames_root, 2)]
    seen = []
    for shard in range(3):
        p = make(pipeline_def, fn, frames_root, 1, sequence_length=2, num_shards=3, shard_id=shard,
                 random_shuffle=shuffle, seed=5)
        size = len(want) * (shard + 1) // 3 - len(want) * shard // 3
        seen += [digest(b[0]) for b in run(p, size)]
    assert sorted(seen) == sorted(want)


def test_same_batches_whatever_num_threads(frames_root):
    a = run(make(pipeline_def, fn, frames_root, 3, threads=1, sequence_length=3, random_shuffle=True), 4)
    b = run(make(pipeline_def, fn, frames_root, 3, threads=3, sequence_length=3, random_shuffle=True), 4)
    for x, y in zip(a, b):
        for g, w in zip(x, y):
            np.testing.assert_array_equal(g, w)


@pytest.fixture
def small_root(tmp_path, testdata):
    ims = photos(testdata, 6)
    for folder in ("s0", "s1"):
        (tmp_path / folder).mkdir()
        for i in range(3):
            ims[3 * (folder == "s1") + i].save(tmp_path / folder / f"{i}.jpg", quality=90)
    return tmp_path


def test_corrupt_frame(small_root):
    bad = small_root / "s0" / "1.jpg"
    bad.write_bytes(bad.read_bytes()[:200])
    p = make(pipeline_def, fn, small_root, 4, sequence_length=2)
    with pytest.raises(stoker.DecodeError) as e:
        p.run()
    assert re.fullmatch(message(f"sample 0, frame 1 of 2 ('{bad}'): corrupt JPEG: premature end of "
                                "data: the file is truncated"), str(e.value)), str(e.value)
    # on_error='skip': the two sequences with that frame never come; the others do, in order.
    p = make(pipeline_def, fn, small_root, 2, sequence_length=2, on_error="skip")
    good = [s for s in reference_sequences(small_root, 2) if str(bad) not in s]
    got = [s for batch in run(p, 2) for s in batch]
    assert len(good) == 2
    for g, paths in zip(got, good):
        np.testing.assert_array_equal(g, pil_frames(paths))
    stats = next(iter(p.error_stats().values()))
    assert stats["skipped"] == 2 and stats["samples"] == [str(bad)]


def test_unreadable_frame_is_named(small_root):
    bad = small_root / "s1" / "2.jpg"
    bad.write_bytes(b"not an image at all")
    p = make(pipeline_def, fn, small_root, 2, sequence_length=3)
    with pytest.raises(stoker.DecodeError) as e:
        p.run()
    assert re.fullmatch(message(
        f"sample 1, frame 2 of 3 ('{bad}'): unknown image format (first bytes: 6e 6f 74 20 61 6e 20 "
        "69 ); supported: jpeg, png, tiff, webp, jpeg2000 (.jp2, .j2k), bmp, pnm (.pbm, .pgm, .ppm)"),
        str(e.value)), str(e.value)
    # on_error='skip' on a frame whose header is bad: only the other folder's sequence comes.
    p = make(pipeline_def, fn, small_root, 2, sequence_length=3, on_error="skip")
    only = reference_sequences(small_root, 3)[0]  # s0; s1 holds the bad frame
    assert str(bad) not in only
    for batch in run(p, 2):
        for g in batch:
            np.testing.assert_array_equal(g, pil_frames(only))
    assert next(iter(p.error_stats().values()))["samples"] == [str(bad)]


def test_mixed_frame_sizes(small_root):
    odd = small_root / "s1" / "1.jpg"
    Image.open(odd).resize((W // 2, H // 2)).save(odd, quality=90)
    p = make(pipeline_def, fn, small_root, 2, sequence_length=3)
    with pytest.raises(stoker.DecodeError) as e:
        p.run()
    first = small_root / "s1" / "0.jpg"
    assert re.fullmatch(message(
        f"sample 1, frame 1 of 3 ('{odd}'): the frame is {H // 2}x{W // 2} with 3 channels (jpeg) "
        f"but frame 0 of the sequence, '{first}', is {H}x{W} with 3 channels (jpeg); all frames of "
        f"a sequence must have one size and number of channels (resize the frames of "
        f"'{small_root / 's1'}' to one size)"), str(e.value)), str(e.value)
    # DALI refuses such a sequence too.
    dpd, dfn, _ = dali()
    d = make(dpd, dfn, small_root, 2, sequence_length=3)
    with pytest.raises(RuntimeError, match="Expected all frames to have same shape"):
        d.run()


def test_file_root_errors(tmp_path, small_root):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "sub").mkdir()
    with pytest.raises(FileNotFoundError) as e:
        make(pipeline_def, fn, tmp_path / "empty", 1, sequence_length=1)
    assert re.fullmatch(message(
        f"file_root '{tmp_path / 'empty'}' has no sub-folder with frames; put each sequence's frames "
        "(.jpg, .jpeg, .png, .bmp, .tif, .tiff, .pnm, .ppm, .pgm, .pbm, .jp2 or .webp files) in a "
        "folder of its own inside file_root"), str(e.value)), str(e.value)
    with pytest.raises(FileNotFoundError) as e:
        make(pipeline_def, fn, tmp_path / "missing", 1, sequence_length=1)
    assert re.fullmatch(message(f"file_root '{tmp_path / 'missing'}' does not exist"), str(e.value))
    frame = small_root / "s0" / "0.jpg"
    with pytest.raises(FileNotFoundError) as e:
        make(pipeline_def, fn, frame, 1, sequence_length=1)
    assert re.fullmatch(message(f"file_root '{frame}' is not a folder"), str(e.value))
    with pytest.raises(ValueError) as e:
        make(pipeline_def, fn, small_root, 1, sequence_length=3, stride=2)
    assert re.fullmatch(message(
        f"no folder of file_root '{small_root}' has the 5 frames that one sequence of "
        f"sequence_length=3 with stride=2 spans; the longest, '{small_root / 's0'}', has 3. Give a "
        "smaller sequence_length or stride."), str(e.value)), str(e.value)


@pytest.mark.parametrize("kw,text", [
    (dict(sequence_length=0), "argument 'sequence_length' must be >= 1, got 0."),
    (dict(sequence_length=2, step=0), "argument 'step' must be >= 1, got 0."),
    (dict(sequence_length=2, stride=-1), "argument 'stride' must be >= 1, got -1."),
    (dict(sequence_length=2, image_type=types.YCbCr),
     "argument 'image_type' must be RGB, BGR, GRAY or ANY_DATA, got YCbCr; decode as RGB and "
     "convert the frames with fn.color_space_conversion."),
])
def test_argument_errors(small_root, kw, text):
    with pytest.raises(ValueError) as e:
        make(pipeline_def, fn, small_root, 1, **kw)
    assert re.fullmatch(message(text), str(e.value)), str(e.value)


def test_checkpoint_resumes_mid_epoch(frames_root):
    if not hasattr(stoker._C.Executor, "checkpoint"):
        pytest.skip("this build has no checkpoints")

    def pipe(**kw):
        @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=3, **kw)
        def p():
            return fn.readers.sequence(file_root=str(frames_root), sequence_length=2,
                                       random_shuffle=True, initial_fill=5, name="Reader")
        q = p()
        q.build()
        return q

    ref = run(pipe(), 10)
    p = pipe(enable_checkpointing=True)
    run(p, 4)
    ckpt = p.checkpoint()
    q = pipe(enable_checkpointing=True, checkpoint=ckpt)
    for got, want in zip(run(q, 6), ref[4:]):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("policy", ["PARTIAL", "DROP", "FILL"])
def test_pytorch_iterator_epoch_as_dali(frames_root, policy):
    """The iterators size an epoch from reader_meta: the same batches as DALI's iterator."""
    pytest.importorskip("torch")
    dpd, dfn, _ = dali()
    from nvidia.dali.plugin import pytorch as dali_torch
    from stoker.plugin import pytorch as stoker_torch

    def batches(pd, fn_, mod):
        it = mod.DALIGenericIterator(make(pd, fn_, frames_root, 4, sequence_length=2), ["frames"],
                                     reader_name="Reader",
                                     last_batch_policy=getattr(mod.LastBatchPolicy, policy))
        return [b[0]["frames"].numpy() for b in it]

    got = batches(pipeline_def, fn, stoker_torch)
    want = batches(dpd, dfn, dali_torch)
    assert [g.shape for g in got] == [w.shape for w in want]
    assert len(got) == {"PARTIAL": 4, "DROP": 3, "FILL": 4}[policy]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_exif_orientation_applied(tmp_path, testdata):
    """Frames are turned as their EXIF orientation says, as DALI does (compared on a 180-degree
    turn; on a 90-degree one DALI 2.4 corrupts its heap, so that one is checked against PIL)."""
    from PIL import ImageOps
    src = testdata / "images" / "orientation"
    for name in ("rotate_180", "mirror_horizontal_rotate_90"):
        (tmp_path / name).mkdir()
        for i in range(2):
            shutil.copy(src / f"padlock-406986_640_{name}.jpg", tmp_path / name / f"{i}.jpg")
    p = make(pipeline_def, fn, tmp_path, 1, sequence_length=2)
    got = [b[0] for b in run(p, 2)]  # mirror_horizontal_rotate_90 sorts first
    for g, name in zip(got, ("mirror_horizontal_rotate_90", "rotate_180")):
        im = Image.open(src / f"padlock-406986_640_{name}.jpg")
        want = np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
        assert g.shape == (2,) + want.shape
        np.testing.assert_array_equal(g[0], want)
        np.testing.assert_array_equal(g[1], want)
    shutil.rmtree(tmp_path / "mirror_horizontal_rotate_90")
    dpd, dfn, _ = dali()
    (theirs,) = run(make(dpd, dfn, tmp_path, 1, sequence_length=2), 1)[0]
    (ours,) = run(make(pipeline_def, fn, tmp_path, 1, sequence_length=2), 1)[0]
    np.testing.assert_array_equal(ours, theirs)
