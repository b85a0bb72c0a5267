"""Bad data, hostile files and faults: nothing crashes, nothing hangs, nothing is lost.

Every file of the shared edge-case and fuzzing sets goes through the pipeline in this one
process, on purpose: a crash (segfault, abort) would kill pytest, and that is the failure
signal. A hang is caught by a SIGALRM deadline, which interrupts run() the way Ctrl-C does.
"""
import gc
import os
import signal
import threading
import time
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

import stoker
from stoker import fn, pipeline_def, types

TESTDATA = Path(os.environ.get("STOKER_TESTDATA", Path(__file__).resolve().parents[3] / "shared" / "testdata"))
EDGE = TESTDATA / "images" / "jpeg_edge"
REFTEST = EDGE / "reftest" / "images"
DEADLINE_S = 30  # per file; each takes milliseconds, so only a hang reaches it


def _files(*dirs):
    out = []
    for d in dirs:
        if d.is_dir():
            out += sorted(str(p.relative_to(TESTDATA)) for p in d.rglob("*") if p.is_file())
    return out


# Every file, whatever its name says (README, LICENSE, the reference PNGs, the BMPs and the list
# in fuzzing/), in every folder there is (crashtest, reftest, libjpeg-turbo, subsampling, and any
# added later): each must decode or raise DecodeError.
EDGE_FILES = _files(EDGE)
FUZZ_FILES = _files(TESTDATA / "fuzzing")
# Valid files: these must also equal Pillow's decode (same libjpeg-turbo arithmetic: ISLOW DCT,
# fancy upsampling). The crashtest and fuzzing files are corrupt, and how a decoder repairs
# corrupt data differs between libjpeg-turbo versions, so there only the size is compared.
VALID_DIRS = ("images/jpeg_edge/libjpeg-turbo/", "images/jpeg_edge/subsampling/")
# The reftest folder's PNGs are valid, lossless references: 8-bit ones must equal Pillow exactly.
EXACT_PNG_DIR = "images/jpeg_edge/reftest/"
# The reftest JPEGs with a reference PNG of the same name (made by ImageMagick's convert).
REFTESTS = sorted(str(p.relative_to(TESTDATA)) for p in REFTEST.rglob("*.jpg")
                  if p.with_suffix(".png").exists()) if REFTEST.is_dir() else []
# Off by 3 in a few pixels: ImageMagick rounds differently from libjpeg-turbo here (4:2:2
# MJPEG upsampling; YCCK -> CMYK -> RGB conversion). Pillow's decode is off from these two
# references by 3 too, while it agrees with stoker, so the references, not the decoder, differ.
REFTEST_TOLERANCE = {"mjpeg.jpg": 3, "ycck.jpg": 3}

_hung = []  # pipelines whose run() hit the deadline: never deleted, since joining would hang


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds, pipe):
    def on_alarm(signum, frame):
        _hung.append(pipe)
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def decode_pipe(files, batch_size=1, **decoder_args):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(f) for f in files], name="Reader")
        return fn.decoders.image(jpegs, **decoder_args)
    return pipe()


def decode_file(path, **decoder_args):
    """(image as HWC uint8, None) or (None, the DecodeError)."""
    p = decode_pipe([path], **decoder_args)
    try:
        with deadline(DEADLINE_S, p):
            (img,) = p.run()
    except stoker.DecodeError as e:
        return None, e
    return np.array(img[0]), None


def pillow_rgb(path):
    """Pillow's decode with the EXIF orientation applied, or None where Pillow cannot."""
    try:
        with Image.open(path) as im:
            im.load()
            return np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
    except Exception:
        return None


def reference_png(path):
    with Image.open(path) as im:
        if im.mode == "I;16":  # 8-bit gray stored as 16 bit: v * 257
            a = np.round(np.asarray(im, dtype=np.float64) / 257).astype(np.uint8)
            return np.stack([a] * 3, axis=-1)
        return np.asarray(im.convert("RGB"))


def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


@contextmanager
def peak_rss_growth():
    """Yields a list that gets, after the block, how far the process's peak RSS (VmHWM) rose
    above its current RSS from before the block: transient allocations count too. The peak is
    reset first through /proc/self/clear_refs where the kernel allows it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        field = "VmHWM:"
    except OSError:
        field = "VmRSS:"  # no reset: only what is still held afterwards can be seen
    before, out = rss(), []
    yield out
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))
    out.append(peak - before)


def os_threads():
    """Threads of this process, C++ ones included (after collecting dead pipelines)."""
    gc.collect()
    return len(os.listdir("/proc/self/task"))


# ---- every edge-case and fuzzed file: decodes correctly, or DecodeError naming the file

@pytest.mark.parametrize("rel", EDGE_FILES + FUZZ_FILES)
def test_decodes_or_raises_decode_error_naming_the_file(rel):
    path = TESTDATA / rel
    img, err = decode_file(path)
    if err is not None:
        msg = str(err)
        assert "fn.decoders.image" in msg and str(path) in msg, msg
        assert len(msg.split(str(path), 1)[1]) > 5, f"no reason after the file name: {msg}"
        return
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3 and img.size > 0
    ref = pillow_rgb(path)
    if ref is None:
        return  # Pillow refuses it; libjpeg-turbo repaired it (e.g. a bad Huffman code)
    assert img.shape == ref.shape, "the size differs from what the file's header says"
    if rel.startswith(VALID_DIRS):
        diff = np.abs(img.astype(np.int16) - ref)
        assert diff.max() <= 2, f"differs from Pillow by up to {diff.max()}"
    if rel.startswith(EXACT_PNG_DIR) and rel.endswith(".png"):
        with Image.open(path) as im:
            eight_bit = im.mode in ("1", "L", "LA", "P", "RGB", "RGBA")
        if eight_bit:
            assert np.array_equal(img, ref), "a valid 8-bit PNG differs from Pillow's decode"


@pytest.mark.parametrize("rel", REFTESTS)
def test_reftest_jpegs_match_their_reference_pngs(rel):
    path = TESTDATA / rel
    img, err = decode_file(path)
    if err is not None:  # lossless JPEG: libjpeg-turbo 2.x has no lossless decoder
        assert "unsupported JPEG" in str(err) and str(path) in str(err)
        return
    ref = reference_png(path.with_suffix(".png"))
    assert img.shape == ref.shape
    diff = np.abs(img.astype(np.int16) - ref)
    tol = REFTEST_TOLERANCE.get(path.name, 2)
    assert diff.max() <= tol, f"{path.name}: off by up to {diff.max()} (allowed {tol})"
    if path.name in REFTEST_TOLERANCE:  # then within 2 of the other independent decode
        pil = pillow_rgb(path)
        assert np.abs(img.astype(np.int16) - pil).max() <= 2, f"{path.name}: differs from Pillow"


def test_a_pipeline_over_all_bad_files_skips_exactly_the_ones_that_fail_alone():
    files = [TESTDATA / r for r in EDGE_FILES + FUZZ_FILES]
    refused = {str(f) for f in files if decode_file(f)[1] is not None}
    assert refused and len(refused) < len(files)
    p = decode_pipe(files, batch_size=16, on_error="skip")
    seen = set()
    with deadline(10 * DEADLINE_S, p):
        while len(seen) < len(files) - len(refused):
            (imgs,) = p.run()
            assert len(imgs) == 16  # always full: skipped files are replaced by the next ones
            seen |= {imgs.source_info(i) for i in range(len(imgs))}
    assert not seen & refused
    (stats,) = p.error_stats().values()
    assert set(stats["samples"]) == refused and stats["skipped"] == len(refused)


# ---- limits against hostile headers

def _with_sof_size(data, h, w):
    """The JPEG with its SOF0 frame header saying h x w."""
    data = bytearray(data)
    i = 2
    while i + 9 <= len(data):
        assert data[i] == 0xFF, "not at a marker"
        marker, seglen = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if marker == 0xC0:
            data[i + 5:i + 7] = h.to_bytes(2, "big")
            data[i + 7:i + 9] = w.to_bytes(2, "big")
            return bytes(data)
        i += 2 + seglen
    return None


def _with_ihdr_size(data, h, w):
    data = bytearray(data)
    assert data[12:16] == b"IHDR"
    data[16:20] = w.to_bytes(4, "big")
    data[20:24] = h.to_bytes(4, "big")
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)


def _huge(tmp_path, jpeg_files, kind):
    if kind == "jpeg":
        for src, _ in jpeg_files:  # the first baseline (SOF0) photo
            patched = _with_sof_size(Path(src).read_bytes(), 60000, 60000)
            if patched:
                break
        assert patched, "no baseline JPEG in the test set"
    else:
        patched = _with_ihdr_size(next((TESTDATA / "images" / "png").rglob("*.png")).read_bytes(),
                                  60000, 60000)
    path = tmp_path / f"huge.{'jpg' if kind == 'jpeg' else 'png'}"
    path.write_bytes(patched)
    return path


@pytest.mark.parametrize("kind", ["jpeg", "png"])
def test_a_header_claiming_60000x60000_is_refused_before_any_allocation(tmp_path, jpeg_files, kind):
    path = _huge(tmp_path, jpeg_files, kind)
    p = decode_pipe([path])
    with peak_rss_growth() as grown, pytest.raises(stoker.DecodeError) as e:
        with deadline(DEADLINE_S, p):
            p.run()
    msg = str(e.value)
    assert str(path) in msg and "60000x60000" in msg and "max_pixels" in msg, msg
    # 60000 x 60000 x 3 bytes would be 10.8 GB; nothing near that was allocated or touched.
    assert p.memory_stats()["host"]["peak_allocated"] < 64 << 20
    assert grown[0] < 64 << 20, f"peak RSS rose by {grown[0] >> 20} MiB"


@pytest.mark.parametrize("chunk", [b"zTXt", b"iCCP", b"tEXt", b"eXIf", b"abCD"])
def test_a_png_chunk_claiming_more_than_the_file_holds_is_refused_without_allocating(tmp_path, chunk):
    """Found by fuzz/png_fuzzer: libpng allocates (and touches) an ancillary chunk's declared
    length before reading it, so 114 bytes claiming a 1.9 GB zTXt took the process to 1.9 GB."""
    def put(kind, body):
        return (len(body).to_bytes(4, "big") + kind + body +
                zlib.crc32(kind + body).to_bytes(4, "big"))
    ihdr = put(b"IHDR", (5).to_bytes(4, "big") + (5).to_bytes(4, "big") + bytes([8, 6, 0, 0, 0]))
    lie = (1_933_723_914).to_bytes(4, "big") + chunk + b"x" * 81
    path = tmp_path / "lying_chunk.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + ihdr + lie)
    p = decode_pipe([path])
    with peak_rss_growth() as grown, pytest.raises(stoker.DecodeError) as e:
        with deadline(DEADLINE_S, p):
            p.run()
    msg = str(e.value)
    assert str(path) in msg and chunk.decode() in msg and "1933723914" in msg, msg
    assert grown[0] < 64 << 20, f"peak RSS rose by {grown[0] >> 20} MiB"


def test_max_pixels_is_settable(tmp_path, jpeg_files):
    src = jpeg_files[0][0]
    with Image.open(src) as im:
        w, h = im.size
    img, err = decode_file(src, max_pixels=h * w)
    assert err is None and img.shape[:2] in ((h, w), (w, h))
    img, err = decode_file(src, max_pixels=h * w - 1)
    assert img is None and "max_pixels" in str(err) and src in str(err)


# ---- on_error: skip and replace, with the pipeline running on

def _truncated(tmp_path, jpeg_files):
    data = Path(jpeg_files[0][0]).read_bytes()
    bad = tmp_path / "truncated.jpg"
    bad.write_bytes(data[: len(data) // 3])
    return str(bad)


def test_reader_skip_with_a_corrupt_jpeg_among_good_ones(tmp_path, jpeg_files):
    """readers.file skips what it cannot read (a missing file); a file it can read but that
    does not decode is the decoder's: without its own on_error, it raises DecodeError for that
    batch, naming the file, and the next batch comes."""
    good = [p for p, _ in jpeg_files[:6]]
    corrupt = _truncated(tmp_path, jpeg_files)
    files = good[:2] + [str(tmp_path / "gone.jpg")] + good[2:4] + [corrupt] + good[4:]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files, on_error="skip", name="Reader")
        return fn.decoders.image(jpegs)

    p = pipe()
    (imgs,) = p.run()  # gone.jpg is skipped; its place goes to the next file
    assert [imgs.source_info(i) for i in range(4)] == [good[0], good[1], good[3], good[2]]
    with pytest.raises(stoker.DecodeError, match=r"fn.decoders.image.*truncated.jpg"):
        p.run()  # the batch with the corrupt file
    good_batches = 0
    for _ in range(4):  # the pipeline runs on; the corrupt file fails again when it comes round
        try:
            (imgs,) = p.run()
        except stoker.DecodeError as e:
            assert corrupt in str(e)
            continue
        assert len(imgs) == 4 and corrupt not in [imgs.source_info(i) for i in range(4)]
        good_batches += 1
    assert good_batches >= 2
    ((op, st),) = p.error_stats().items()
    assert op.startswith("fn.readers.file") and st["samples"] == [files[2]]


needs_decoder_on_error = pytest.mark.skipif("on_error" not in (fn.decoders.image.__doc__ or ""),
                                            reason="fn.decoders.image has no on_error yet")


@needs_decoder_on_error
def test_decoder_skip_fills_the_batch_and_counts(tmp_path, jpeg_files, caplog):
    good = [p for p, _ in jpeg_files[:7]]
    corrupt = _truncated(tmp_path, jpeg_files)
    notimage = tmp_path / "notes.jpg"
    notimage.write_text("not an image")
    files = good[:2] + [corrupt] + good[2:5] + [str(notimage)] + good[5:]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, on_error="skip", name="Reader")
        return fn.decoders.image(jpegs, on_error="skip"), labels

    p = pipe()
    seen = []
    for _ in range(6):  # 9 files, 7 good: several epochs
        imgs, labels = p.run()
        assert len(imgs) == 4
        srcs = [imgs.source_info(i) for i in range(4)]
        for i, s in enumerate(srcs):  # labels still travel with their images
            assert int(labels[i][0]) == files.index(s)
            assert np.array(imgs[i]).shape[2] == 3
        seen += srcs
    assert set(seen) == set(good)
    ((op, st),) = p.error_stats().items()
    assert op.startswith("fn.decoders.image") and st["skipped"] == 2
    assert sorted(st["samples"]) == sorted([corrupt, str(notimage)])
    err = "\n".join(r.getMessage() for r in caplog.records if r.name == "stoker")
    assert err.count("stoker: skipped") == 2  # logged once per file, not once per epoch


@needs_decoder_on_error
def test_decoder_replace_gives_the_fallback_and_counts(tmp_path, jpeg_files):
    good = [p for p, _ in jpeg_files[:2]]
    corrupt = _truncated(tmp_path, jpeg_files)
    notimage = tmp_path / "notes.jpg"
    notimage.write_text("not an image")
    files = [good[0], corrupt, str(notimage), good[1]]
    p = decode_pipe(files, batch_size=4, on_error="replace", fallback_shape=[5, 7], fallback_value=9)
    (imgs,) = p.run()
    assert [imgs.source_info(i) for i in range(4)] == files
    # Refused from its header: the fallback image.
    assert np.array(imgs[2]).shape == (5, 7, 3) and (np.array(imgs[2]) == 9).all()
    # Failed in the middle of the scan, after its header had given a size: the same fallback,
    # not the header's size with the fallback value in it, and none of its decoded pixels.
    assert np.array(imgs[1]).shape == (5, 7, 3) and (np.array(imgs[1]) == 9).all()
    # The good ones are what a decode without on_error gives.
    for i in (0, 3):
        plain, err = decode_file(files[i])
        assert err is None and np.array_equal(np.array(imgs[i]), plain)
    ((op, st),) = p.error_stats().items()
    # Two per iteration: the iterations prefetched behind this one (the same 4 files, epoch
    # after epoch) may have counted theirs already.
    assert st["replaced"] >= 2 and st["replaced"] % 2 == 0 and st["skipped"] == 0
    assert sorted(st["samples"]) == sorted([corrupt, str(notimage)])


# From Google's imagetestsuite: a valid 100x100 header (Pillow reads its size), then a scan cut
# short, which libjpeg-turbo meets only while decoding (rows below ~40 are missing).
TRUNCATED_SCAN = EDGE / "crashtest" / "images" / "imagetestsuite" / "5482a54657765056f1a94116a8dbffe7.jpg"


def _cut_after_sos(src, dst):
    """A copy of the JPEG `src` that ends 16 bytes into its first scan: every header is whole
    (the decoder sizes the output), and no window of the image can be decoded."""
    data = Path(src).read_bytes()
    i = 2
    while data[i + 1] != 0xDA:  # walk the marker segments up to SOS
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    dst.write_bytes(data[: i + 2 + int.from_bytes(data[i + 2:i + 4], "big") + 16])
    return str(dst)


@needs_decoder_on_error
@pytest.mark.parametrize("decoder,args,dtype", [
    ("image", {}, types.UINT8),
    ("image", {"output_type": types.GRAY}, types.UINT16),
    ("image_crop", {"crop": (20, 30)}, types.UINT8),
    ("image_slice", {"rel_start": (0.5, 0.2), "rel_shape": (0.5, 0.5)}, types.UINT8),
    ("image_random_crop", {}, types.UINT8),
], ids=["image", "image-gray16", "image_crop", "image_slice", "image_random_crop"])
def test_replace_of_a_scan_that_fails_mid_way_is_the_fallback_image(tmp_path, jpeg_files, decoder,
                                                                    args, dtype):
    # The cropping decoders read only their window's rows, and a window clear of the damage
    # decodes (rightly): they get a file with none of its scan.
    if decoder == "image":
        bad = str(TRUNCATED_SCAN)
    else:
        bad = _cut_after_sos(jpeg_files[0][0], tmp_path / "cut_after_sos.jpg")
    with Image.open(bad) as im:
        assert im.size[0] > 0  # the header is fine: it fails while decoding
    plain_err = decode_file(bad)[1]
    assert plain_err is not None and "truncated" in str(plain_err) and bad in str(plain_err)
    good = jpeg_files[0][0]

    def run(files, **extra):
        @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=3)
        def pipe():
            jpegs, _ = fn.readers.file(files=files)
            return getattr(fn.decoders, decoder)(jpegs, dtype=dtype, **args, **extra)
        p = pipe()
        (imgs,) = p.run()
        return [np.array(imgs[i]) for i in range(len(files))], p

    out, p = run([good, bad, good], on_error="replace", fallback_shape=[4, 6], fallback_value=200)
    channels = 1 if args.get("output_type") == types.GRAY else 3
    assert out[1].shape == (4, 6, channels), f"the fallback is (4, 6, {channels}), got {out[1].shape}"
    assert out[1].dtype == (np.uint16 if dtype == types.UINT16 else np.uint8)
    assert (out[1] == 200).all()
    # The good samples around it are what a pipeline without the bad file gives (random crops:
    # the same seed and sample positions, so the same windows).
    ref, _ = run([good, good, good])
    assert np.array_equal(out[0], ref[0]) and np.array_equal(out[2], ref[2])
    ((op, st),) = p.error_stats().items()
    assert op.startswith(f"fn.decoders.{decoder}") and st["replaced"] >= 1 and st["samples"] == [bad]


# ---- faults: Ctrl-C, deleting a running pipeline

@contextmanager
def ctrl_c_after(seconds):
    """Sends SIGINT to the main thread after `seconds`, as Ctrl-C would; yields the list that
    gets the time it was sent. The handler raises KeyboardInterrupt (as Python's default one
    does) only inside the block, so that a late signal cannot abort the whole test session."""
    armed, sent = [True], []

    def handler(signum, frame):
        if armed[0]:
            raise KeyboardInterrupt

    def fire():
        sent.append(time.monotonic())
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(seconds, fire)
    timer.start()
    try:
        yield sent
    finally:
        armed[0] = False
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, old)


def _raised_inside_run(excinfo):
    """Whether the KeyboardInterrupt came out of Pipeline.run() (it was waiting), rather than
    from the test's own code after run() had returned."""
    return any(e.name == "run" and e.path.name == "pipeline.py" for e in excinfo.traceback)


def test_ctrl_c_stops_a_run_blocked_on_io_within_a_second(tmp_path, jpeg_files):
    """The reader is stuck opening a FIFO that nobody writes to (think of a hung network file
    system): run() still returns to Python within a second of Ctrl-C."""
    path = tmp_path / "stuck.jpg"
    os.mkfifo(path)
    base = os_threads()
    p = decode_pipe([path])
    try:
        with ctrl_c_after(0.5) as sent, pytest.raises(KeyboardInterrupt) as excinfo:
            p.run()
        stopped = time.monotonic()
    finally:
        # Unblock the reader for good: a real file takes the FIFO's name (for the next
        # iterations), then the FIFO gets a writer, so the open() waiting on it returns.
        fifo = tmp_path / "stuck.fifo"
        os.rename(path, fifo)
        path.write_bytes(Path(jpeg_files[0][0]).read_bytes())
        for _ in range(100):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError:  # ENXIO: the reader is not (yet) waiting
                time.sleep(0.05)
    assert _raised_inside_run(excinfo)
    del excinfo  # its traceback holds run()'s frame, and so the pipeline
    assert sent and stopped - sent[0] < 1.0, f"KeyboardInterrupt took {stopped - sent[0]:.2f} s"
    # The pipeline is still usable: the stuck iteration reports its error, the next one works.
    with pytest.raises(ValueError, match="stuck.jpg.*not a regular file"):
        p.run()
    (img,) = p.run()
    assert img.source_info(0) == str(path)
    del p
    assert os_threads() == base


def test_ctrl_c_stops_a_busy_run_within_a_second(tmp_path):
    """The worker is busy decoding large progressive JPEGs (seconds a batch): run() returns to
    Python within a second of Ctrl-C, and the batch it was waiting for comes with the next run()."""
    big = tmp_path / "big.jpg"
    y, x = np.mgrid[0:3000, 0:4000]
    rgb = np.stack([(x // 7) % 256, (y // 5) % 256, (x * y) % 251], -1).astype(np.uint8)
    Image.fromarray(rgb).save(big, quality=95, progressive=True)

    @pipeline_def(batch_size=8, num_threads=1, device_id=None, seed=1, prefetch_queue_depth=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(big)] * 8)
        return fn.decoders.image(jpegs, output_type=types.GRAY)  # 12 MB an image

    p = pipe()
    p.run()
    start = time.monotonic()
    with ctrl_c_after(0.2) as sent, pytest.raises(KeyboardInterrupt) as excinfo:
        p.run()
    stopped = time.monotonic()
    assert sent and stopped - sent[0] < 1.0, f"KeyboardInterrupt took {stopped - sent[0]:.2f} s"
    if not _raised_inside_run(excinfo):
        pytest.skip(f"this machine decoded the batch in {stopped - start:.2f} s, before Ctrl-C")
    (imgs,) = p.run()
    assert len(imgs) == 8 and np.array(imgs[0]).shape == (3000, 4000, 1)


def test_deleting_a_pipeline_mid_epoch_joins_its_threads_and_frees_its_memory(jpeg_dir):
    def make():
        @pipeline_def(batch_size=32, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=3)
        def pipe():
            jpegs, _ = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True)
            return fn.decoders.image(jpegs)  # full-size photos: a few hundred MB in flight
        return pipe()

    before = os_threads()
    p = make()  # a first one, so that the allocator's own caches are warm in the baseline
    p.run()
    del p
    gc.collect()
    # The first pipeline's threads (and earlier tests') may still be ending: wait until the count
    # is back to what it was and holds still, so that the baseline holds none of them.
    deadline, base_threads = time.monotonic() + 10, os_threads()
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = os_threads()
        if now == base_threads and now <= before:
            break
        base_threads = now
    base_rss = rss()
    for _ in range(3):
        p = make()
        p.run()  # mid-epoch (47 files, 32 a batch), with the next batches being prefetched
        time.sleep(0.2)
        assert os_threads() >= base_threads + 3  # the producer and 2 workers
        held = p.memory_stats()["host"]["reserved"]
        assert held > 100 << 20
        start = time.monotonic()
        del p
        gc.collect()
        assert time.monotonic() - start < 5
        assert os_threads() == base_threads
        grown = rss() - base_rss
        assert grown < 64 << 20, f"RSS is {grown >> 20} MiB above the baseline after delete " \
                                 f"(the pipeline held {held >> 20} MiB)"
