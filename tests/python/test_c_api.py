"""The C API (include/stoker/c_api.h, libstoker.so): pipelines serialized in Python run without
Python and give the same batches, byte for byte; the runner (stoker_run) and the C example
(examples/c/classify.c) built by CMake beside the module; errors as text naming what is wrong.

The library, the runner and the example come from the build the tests run against (the folder
above PYTHONPATH's stoker: build/dev for scripts/test.sh); the tests skip where it has none.
"""
import ctypes
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(stoker.__file__).resolve().parents[2]
LIB = BUILD / "libstoker.so"
RUNNER = BUILD / "stoker_run"
EXAMPLE = BUILD / "stoker_classify"

pytestmark = pytest.mark.skipif(not LIB.exists(), reason=f"no C API built in {BUILD}")

sys.path.insert(0, str(ROOT / "examples" / "c"))


# ----------------------------------------------------------------------------- ctypes binding
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]


class Options(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int), ("device_id", ctypes.c_int),
                ("prefetch_queue_depth", ctypes.c_int)]


_DL = {np.dtype(np.uint8): (1, 8), np.dtype(np.int32): (0, 32), np.dtype(np.float32): (2, 32),
       np.dtype(np.int64): (0, 64), np.dtype(np.float64): (2, 64), np.dtype(np.int16): (0, 16)}
_NP = {(c, b): d for d, (c, b) in _DL.items()}


@pytest.fixture(scope="module")
def lib():
    L = ctypes.CDLL(str(LIB))
    vp, i, cp = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    L.stoker_last_error.restype = cp
    L.stoker_version.restype = cp
    L.stoker_pipeline_create.argtypes = [vp, ctypes.c_size_t, ctypes.POINTER(Options), ctypes.POINTER(vp)]
    L.stoker_pipeline_create_from_file.argtypes = [cp, ctypes.POINTER(Options), ctypes.POINTER(vp)]
    L.stoker_pipeline_destroy.argtypes = [vp]
    L.stoker_pipeline_destroy.restype = None
    for f in ("batch_size", "num_inputs", "num_outputs"):
        getattr(L, f"stoker_pipeline_{f}").argtypes = [vp]
    L.stoker_pipeline_input_name.argtypes = [vp, i]
    L.stoker_pipeline_input_name.restype = cp
    L.stoker_pipeline_feed.argtypes = [vp, cp, ctypes.POINTER(DLTensor), i]
    L.stoker_pipeline_feed_batch.argtypes = [vp, cp, ctypes.POINTER(DLTensor)]
    L.stoker_pipeline_run.argtypes = [vp, ctypes.POINTER(vp)]
    L.stoker_outputs_count.argtypes = [vp]
    L.stoker_outputs_num_samples.argtypes = [vp, i]
    L.stoker_outputs_layout.argtypes = [vp, i]
    L.stoker_outputs_layout.restype = cp
    L.stoker_outputs_on_gpu.argtypes = [vp, i]
    L.stoker_outputs_tensor.argtypes = [vp, i, vp, ctypes.POINTER(ctypes.POINTER(DLManagedTensor))]
    L.stoker_outputs_sample.argtypes = [vp, i, i, vp, ctypes.POINTER(ctypes.POINTER(DLManagedTensor))]
    L.stoker_outputs_release.argtypes = [vp]
    L.stoker_outputs_release.restype = None
    return L


def error(lib):
    return lib.stoker_last_error().decode()


class CPipeline:
    """A pipeline of the C API, driven from Python through ctypes."""

    def __init__(self, lib, data, **options):
        self.lib, self.p = lib, ctypes.c_void_p()
        opt = Options(options.get("num_threads", 0), options.get("device_id", -1),
                      options.get("prefetch_queue_depth", 0))
        status = lib.stoker_pipeline_create(data, len(data), ctypes.byref(opt), ctypes.byref(self.p))
        if status:
            raise ValueError(status, error(lib))

    def close(self):
        if self.p:
            self.lib.stoker_pipeline_destroy(self.p)
            self.p = ctypes.c_void_p()

    def feed(self, name, samples):
        keep, ts = [], (DLTensor * len(samples))()
        for t, a in zip(ts, samples):
            a = np.ascontiguousarray(a)
            shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            keep += [a, shape]
            t.data = a.ctypes.data
            t.device = DLDevice(1, 0)
            t.ndim = a.ndim
            t.dtype = DLDataType(*_DL[a.dtype], 1)
            t.shape = shape
        return self.lib.stoker_pipeline_feed(self.p, name.encode(), ts, len(samples))

    def run(self):
        out = ctypes.c_void_p()
        status = self.lib.stoker_pipeline_run(self.p, ctypes.byref(out))
        if status:
            raise RuntimeError(status, error(self.lib))
        try:
            result = []
            for o in range(self.lib.stoker_outputs_count(out)):
                samples = []
                for s in range(self.lib.stoker_outputs_num_samples(out, o)):
                    m = ctypes.POINTER(DLManagedTensor)()
                    assert self.lib.stoker_outputs_sample(out, o, s, None, ctypes.byref(m)) == 0
                    samples.append(to_numpy(m))
                result.append((self.lib.stoker_outputs_layout(out, o).decode(), samples))
            return result
        finally:
            self.lib.stoker_outputs_release(out)


def to_numpy(m):
    """A copy of the DLPack tensor's data; frees the tensor."""
    t = m.contents.dl_tensor
    dtype = _NP[(t.dtype.code, t.dtype.bits)]
    shape = tuple(t.shape[k] for k in range(t.ndim))
    n = int(np.prod(shape)) * dtype.itemsize
    a = np.frombuffer(ctypes.string_at(t.data, n), dtype).reshape(shape).copy() if n else \
        np.zeros(shape, dtype)
    m.contents.deleter(m)
    return a


# ------------------------------------------------------------------------------------ helpers
@pytest.fixture(scope="module")
def jpegs(testdata):
    files = sorted((testdata / "imagenet-sample").glob("n*/*.jpg"))
    if len(files) < 12:
        pytest.skip("imagenet-sample has too few photos")
    return files[:12]


def fnv1a(a):
    h = 1469598103934665603
    for b in np.ascontiguousarray(a).tobytes():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def run_runner(args, check=True):
    r = subprocess.run([str(RUNNER)] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=120)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def augment_pipeline(batch_size=4):
    """Random operators, several outputs, shapes that differ per sample."""
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1234)
    def pipe():
        enc = fn.external_source(name="jpegs", dtype=types.UINT8, ndim=1)
        img = fn.decoders.image(enc, output_type=types.RGB)
        crop = fn.random_resized_crop(img, size=(64, 48))
        flip = fn.flip(crop, horizontal=fn.random.coin_flip(probability=0.5))
        small = fn.resize(img, resize_shorter=40, interp_type=types.INTERP_TRIANGULAR)
        gray = fn.color_space_conversion(small, image_type=types.RGB, output_type=types.GRAY)
        norm = fn.crop_mirror_normalize(flip, dtype=types.FLOAT, output_layout="CHW",
                                        mean=[120.0, 110.0, 100.0], std=[60.0, 61.0, 62.0])
        return norm, gray, fn.shapes(img), fn.peek_image_shape(enc)
    return pipe()


def python_batches(pipe, files, iterations):
    out = []
    bs = pipe.max_batch_size if hasattr(pipe, "max_batch_size") else pipe.batch_size
    for it in range(iterations):
        batch = [np.fromfile(files[(it * bs + s) % len(files)], np.uint8) for s in range(bs)]
        pipe.feed_input("jpegs", batch)
        out.append(pipe.run())
    return out


# -------------------------------------------------------------------------------------- tests
def test_version(lib):
    assert lib.stoker_c_api_version() == 1
    assert lib.stoker_version().decode() == stoker.__version__


def test_runner_gives_python_batches_byte_for_byte(tmp_path, jpegs):
    path = tmp_path / "aug.stoker"
    augment_pipeline().serialize(filename=str(path))
    r = run_runner([path, *sum((["-i", f"jpegs={f}"] for f in jpegs), []), "-n", 3])
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    summary = lines.pop()
    assert summary["iterations"] == 3 and summary["batch_size"] == 4 and summary["p50_ms"] > 0
    expect = python_batches(augment_pipeline(), jpegs, 3)
    assert len(lines) == 3 * 4
    for line in lines:
        batch = expect[line["iteration"]][line["output"]]
        assert line["layout"] == batch.layout() and line["gpu"] is False
        assert line["dtype"] == str(batch[0].dtype)
        assert line["shapes"] == [list(batch[i].shape) for i in range(len(batch))]
        assert line["fnv1a"] == [fnv1a(batch[i]) for i in range(len(batch))], line


def test_runner_runs_a_pipeline_dali_serialized(tmp_path, jpegs):
    """A Triton model repository's model.dali, written by DALI 2.4 itself: the runner gives the
    batches of the same pipeline written with stoker's Python API, byte for byte."""
    from _dali_ref import real_dali
    real_dali()
    if not getattr(stoker._C, "reads_dali_pipelines", False):
        pytest.skip("stoker built without libprotobuf")
    import make_pipeline
    path = tmp_path / "model.dali"
    make_pipeline.build(4, "cpu", dali=True).serialize(filename=str(path))
    r = run_runner([path, *sum((["-i", f"jpegs={f}"] for f in jpegs[:8]), []), "-n", 2])
    lines = [json.loads(l) for l in r.stdout.splitlines()][:-1]
    assert len(lines) == 2
    pipe = make_pipeline.build(4, "cpu")
    for line in lines:
        pipe.feed_input("jpegs", [np.fromfile(f, np.uint8)
                                  for f in jpegs[line["iteration"] * 4:][:4]])
        (batch,) = pipe.run()
        assert line["layout"] == "CHW" and line["dtype"] == "float32"
        assert line["shapes"] == [[3, 224, 224]] * 4
        assert line["fnv1a"] == [fnv1a(batch[i]) for i in range(4)], line


def test_ctypes_feed_and_outputs_equal_python(lib, tmp_path, jpegs):
    data = augment_pipeline().serialize()
    p = CPipeline(lib, data, num_threads=1)  # other thread count: the same batches
    try:
        assert lib.stoker_pipeline_batch_size(p.p) == 4
        assert lib.stoker_pipeline_num_inputs(p.p) == 1
        assert lib.stoker_pipeline_input_name(p.p, 0) == b"jpegs"
        assert lib.stoker_pipeline_input_name(p.p, 1) is None
        assert lib.stoker_pipeline_num_outputs(p.p) == 4
        expect = python_batches(augment_pipeline(), jpegs, 2)
        for it in range(2):
            assert p.feed("jpegs", [np.fromfile(jpegs[(it * 4 + s) % 12], np.uint8)
                                    for s in range(4)]) == 0, error(lib)
            got = p.run()
            for (layout, samples), want in zip(got, expect[it]):
                assert layout == want.layout()
                for s, a in enumerate(samples):
                    np.testing.assert_array_equal(a, want[s])
    finally:
        p.close()


def test_dense_output_tensor_and_ragged_refusal(lib, jpegs):
    p = CPipeline(lib, augment_pipeline().serialize())
    try:
        assert p.feed("jpegs", [np.fromfile(f, np.uint8) for f in jpegs[:4]]) == 0
        out = ctypes.c_void_p()
        assert lib.stoker_pipeline_run(p.p, ctypes.byref(out)) == 0, error(lib)
        m = ctypes.POINTER(DLManagedTensor)()
        assert lib.stoker_outputs_tensor(out, 0, None, ctypes.byref(m)) == 0, error(lib)
        lib.stoker_outputs_release(out)  # the tensor outlives the outputs
        a = to_numpy(m)
        assert a.shape == (4, 3, 64, 48) and a.dtype == np.float32
        # Output 1 (resized to a shorter side of 40) has a shape per sample.
        assert p.feed("jpegs", [np.fromfile(f, np.uint8) for f in jpegs[4:8]]) == 0
        assert lib.stoker_pipeline_run(p.p, ctypes.byref(out)) == 0, error(lib)
        assert lib.stoker_outputs_tensor(out, 1, None, ctypes.byref(m)) == 1
        assert error(lib).startswith("stoker_outputs_tensor: output 1: the samples of this batch "
                                     "have different shapes ((")
        assert error(lib).endswith("so they do not form one tensor. Take them one by one "
                                   "(batch[i]; stoker_outputs_sample in C), or make them equal "
                                   "(fn.resize, fn.crop, fn.pad).")
        assert lib.stoker_outputs_tensor(out, 4, None, ctypes.byref(m)) == 1
        assert error(lib) == ("stoker_outputs_tensor: there is no output 4; the pipeline has 4 "
                              "(0 to 3)")
        assert lib.stoker_outputs_sample(out, 0, 9, None, ctypes.byref(m)) == 1
        assert error(lib) == ("stoker_outputs_sample: output 0 has 4 samples; there is no "
                              "sample 9")
        lib.stoker_outputs_release(out)
    finally:
        p.close()


def test_classify_example(tmp_path, jpegs):
    import make_pipeline
    path = tmp_path / "classify.stoker"
    make_pipeline.build(8, "cpu").serialize(filename=str(path))
    r = subprocess.run([str(EXAMPLE), str(path)] + [str(f) for f in jpegs[:5]],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "batch (5, 3, 224, 224) float32, sample layout CHW"
    pipe = make_pipeline.build(8, "cpu")
    pipe.feed_input("jpegs", [np.fromfile(f, np.uint8) for f in jpegs[:5]])
    (out,) = pipe.run()
    for f, line, img in zip(jpegs, lines[1:], out.as_array()):
        name, means = line.split(": ")
        assert name == str(f)
        np.testing.assert_allclose([float(m) for m in means.split()],
                                   img.reshape(3, -1).mean(1, dtype=np.float64), atol=2e-6)


def test_feed_as_one_batch_tensor_and_repeat_last(lib):
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=0)
    def pipe():
        x = fn.external_source(name="x", dtype=types.INT32, ndim=2, layout="HW")
        y = fn.external_source(name="y", repeat_last=True)
        return x * 2, y + 1

    p = CPipeline(lib, pipe().serialize())
    try:
        batch = np.arange(3 * 2 * 5, dtype=np.int32).reshape(3, 2, 5)
        shape = (ctypes.c_int64 * 3)(*batch.shape)
        t = DLTensor(batch.ctypes.data, DLDevice(1, 0), 3, DLDataType(0, 32, 1), shape, None, 0)
        assert lib.stoker_pipeline_feed_batch(p.p, b"x", ctypes.byref(t)) == 0, error(lib)
        assert p.feed("y", [np.float32([1.5]), np.float32([2.5, 3.5])]) == 0, error(lib)
        (lx, xs), (ly, ys) = p.run()
        assert lx == "HW"
        for k in range(3):
            np.testing.assert_array_equal(xs[k], batch[k] * 2)
        np.testing.assert_array_equal(ys[1], [3.5, 4.5])
        # y repeats its last batch; x must be fed again.
        assert p.feed("x", [np.ones((1, 1), np.int32)]) == 0
        (_, xs), (_, ys) = p.run()
        assert len(xs) == 1 and len(ys) == 2
        with pytest.raises(RuntimeError) as e:
            p.run()
        assert e.value.args[1] == (
            "stoker_pipeline_run: the external source 'x' has no data for this iteration: feed "
            "it with stoker_pipeline_feed before each run (it was fed 2 time(s) for 3 run(s))")
    finally:
        p.close()


def test_feed_errors(lib):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=0)
    def pipe():
        return fn.external_source(name="img", dtype=types.UINT8, ndim=3, layout="HWC") + 0

    p = CPipeline(lib, pipe().serialize())
    try:
        assert p.feed("nope", [np.zeros((2, 2, 3), np.uint8)]) == 1
        assert error(lib) == ("stoker_pipeline_feed: the pipeline has no external source named "
                              "'nope'; its inputs are 'img'")
        assert p.feed("img", [np.zeros((2, 2, 3), np.float32)]) == 2  # STOKER_ERROR_TYPE
        assert error(lib) == ("stoker_pipeline_feed: external source 'img': sample 0 has dtype "
                              "float32, but the external_source declared uint8")
        assert p.feed("img", [np.zeros((2, 3), np.uint8)]) == 1
        assert error(lib) == ("stoker_pipeline_feed: external source 'img': sample 0: its samples "
                              "have 2 dimensions, but the external_source declared ndim=3")
        assert p.feed("img", [np.zeros((2, 2, 3), np.uint8)] * 3) == 1
        assert error(lib) == ("stoker_pipeline_feed: external source 'img': the batch has 3 "
                              "samples; it must have 1 to 2 (the pipeline's batch_size)")
        assert p.feed("img", []) == 1
        assert "the batch has 0 samples" in error(lib)
        assert p.feed("img", [np.zeros((2, 2, 3), np.uint8)]) == 0 and error(lib) == ""
    finally:
        p.close()


def _retag(data, edit):
    """The serialized bytes with their JSON body edited and the header made to match."""
    header, body = data.split(b"\n", 1)
    doc = json.loads(body)
    edit(doc)
    body = json.dumps(doc).encode()
    return b"stoker.pipeline 1 %d %s\n" % (len(body), hashlib.sha256(body).hexdigest().encode()) + body


def test_bad_pipelines(lib, tmp_path):
    good = augment_pipeline().serialize()

    def create_error(data):
        with pytest.raises(ValueError) as e:
            CPipeline(lib, data)
        return e.value.args[0], e.value.args[1]

    assert create_error(b"") == (1, "stoker_pipeline_create: the serialized pipeline is empty; "
                                    "pass the bytes Pipeline.serialize() returned (or the file "
                                    "serialize(filename=...) wrote), unchanged.")
    status, msg = create_error(b"\x89PNG\r\n\x1a\n....")
    assert status == 1 and "'\\x89PNG\\x0d\\x0a\\x1a\\x0a....'" in msg
    assert msg.startswith("stoker_pipeline_create: this ")
    status, msg = create_error(good[:-10])
    assert msg.startswith("stoker_pipeline_create: the serialized pipeline is truncated: its "
                          "header announces ")
    damaged = bytearray(good)
    damaged[-5] ^= 1
    assert create_error(bytes(damaged))[1] == (
        "stoker_pipeline_create: the serialized pipeline is damaged or was edited: its body does "
        "not match the checksum in its header. Pass the bytes Pipeline.serialize() returned, "
        "unchanged.")
    newer = good.replace(b"stoker.pipeline 1 ", b"stoker.pipeline 7 ", 1)
    assert "format version 7, and this stoker reads versions 1 to 1" in create_error(newer)[1]

    def unknown_op(doc):
        doc["operators"][1]["op"] = "my_plugin_op"
    msg = create_error(_retag(good, unknown_op))[1]
    assert re.fullmatch(r"stoker_pipeline_create: the pipeline uses the operator fn\.my_plugin_op "
                        r"\(defined at test_c_api\.py:\d+\), which this stoker does not have\. It "
                        r"may come from a plugin library that is not loaded in this process or "
                        r"from a newer stoker\.", msg), msg

    def unknown_arg(doc):
        doc["operators"][2]["args"]["sizee"] = [1, 2]
    msg = create_error(_retag(good, unknown_arg))[1]
    assert "fn.random_resized_crop (defined at test_c_api.py:" in msg
    assert "has the argument 'sizee', which this stoker's fn.random_resized_crop does not take" in msg

    def bad_value(doc):
        doc["operators"][2]["args"]["size"] = "big"
    status, msg = create_error(_retag(good, bad_value))
    assert "fn.random_resized_crop" in msg and "size" in msg, msg

    def unnamed(doc):
        doc["operators"][0]["name"] = None
    assert "has no name: the C API feeds external sources by name." in create_error(_retag(good, unnamed))[1]

    # From a file: a missing one, and the file named in the message.
    p = ctypes.c_void_p()
    missing = tmp_path / "missing.stoker"
    assert lib.stoker_pipeline_create_from_file(str(missing).encode(), None, ctypes.byref(p)) == 3
    assert error(lib) == (f"stoker_pipeline_create_from_file: cannot open '{missing}': No such "
                          "file or directory")
    cut = tmp_path / "cut.stoker"
    cut.write_bytes(good[:100])
    assert lib.stoker_pipeline_create_from_file(str(cut).encode(), None, ctypes.byref(p)) == 1
    assert error(lib).endswith(f" (file '{cut}')") and "truncated" in error(lib)
    assert not p.value


def test_decode_error_names_the_sample_and_the_pipeline_goes_on(lib, jpegs, testdata):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=0)
    def pipe():
        return fn.decoders.image(fn.external_source(name="jpegs", dtype=types.UINT8, ndim=1))

    p = CPipeline(lib, pipe().serialize())
    try:
        good = np.fromfile(jpegs[0], np.uint8)
        assert p.feed("jpegs", [good, good[:200]]) == 0
        with pytest.raises(RuntimeError) as e:
            p.run()
        assert e.value.args[0] == 4  # STOKER_ERROR_DECODE
        assert e.value.args[1].startswith("fn.decoders.image (test_c_api.py:"), e.value.args[1]
        assert p.feed("jpegs", [good, good]) == 0
        (_, imgs), = p.run()
        assert imgs[0].shape == imgs[1].shape and imgs[0].ndim == 3
    finally:
        p.close()


def test_runner_errors(tmp_path, jpegs):
    path = tmp_path / "aug.stoker"
    augment_pipeline().serialize(filename=str(path))
    r = run_runner([path, "-n", "1"], check=False)
    assert r.returncode == 1 and r.stderr == (
        "stoker_run: stoker_pipeline_run: the external source 'jpegs' has no data for this "
        "iteration: feed it with stoker_pipeline_feed before each run (it was fed 0 time(s) for "
        "1 run(s))\n")
    r = run_runner([path, "-i", f"other={jpegs[0]}"], check=False)
    assert r.returncode == 1 and "no external source named 'other'; its inputs are 'jpegs'" in r.stderr
    r = run_runner(["-x"], check=False)
    assert r.returncode == 2 and r.stderr.startswith("usage: stoker_run PIPELINE")


def test_threads_pipelines_side_by_side(lib, jpegs):
    """Pipelines in threads of their own, and one pipeline fed from one thread while another
    waits in run(): the same batches as one at a time."""
    data = augment_pipeline().serialize()
    expect = python_batches(augment_pipeline(), jpegs, 3)
    errors = []

    def worker():
        try:
            p = CPipeline(lib, data)
            try:
                for it in range(3):
                    assert p.feed("jpegs", [np.fromfile(jpegs[(it * 4 + s) % 12], np.uint8)
                                            for s in range(4)]) == 0
                    for (_, samples), want in zip(p.run(), expect[it]):
                        for s, a in enumerate(samples):
                            np.testing.assert_array_equal(a, want[s])
            finally:
                p.close()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


def test_destroy_while_the_producer_waits_for_data(lib):
    """The executor runs ahead and waits for feeds; destroying the pipeline then returns."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=0, prefetch_queue_depth=3)
    def pipe():
        return fn.external_source(name="x") * 2

    for _ in range(5):
        p = CPipeline(lib, pipe().serialize())
        assert p.feed("x", [np.ones(3, np.float32)]) == 0
        (_, xs), = p.run()
        np.testing.assert_array_equal(xs[0], [2, 2, 2])
        p.close()


def test_enum_names_match_types():
    """The C reader's table of enum names (src/capi/serialized.cc) is stoker.types'."""
    src = (ROOT / "src" / "capi" / "serialized.cc").read_text()
    for enum in (types.DALIDataType, types.DALIImageType, types.DALIInterpType):
        block = re.search(r'\{"%s", \{(.*?\})\}\}' % enum.__name__, src, re.S).group(1)
        table = {k: int(v) for k, v in re.findall(r'\{"(\w+)", (-?\d+)\}', block)}
        assert table == {m.name: int(m) for m in enum}, enum.__name__


@pytest.mark.skipif(stoker._C.cuda_device_count() == 0, reason="needs a GPU")
def test_gpu_pipeline_through_the_runner(tmp_path, jpegs):
    import make_pipeline
    path = tmp_path / "classify_gpu.stoker"
    make_pipeline.build(4, "gpu").serialize(filename=str(path))
    r = run_runner([path, *sum((["-i", f"jpegs={f}"] for f in jpegs[:4]), []), "-n", "2"])
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    assert lines[0]["gpu"] is True and lines[0]["shapes"] == [[3, 224, 224]] * 4


def test_mutated_pipelines_fail_cleanly(lib):
    """Hostile files: a serialized body with bytes flipped, cut or duplicated (and a checksum made
    to match, as a hand-edited file would have) either loads or fails with a message; nothing
    crashes or hangs."""
    good = augment_pipeline().serialize()
    header, body = good.split(b"\n", 1)
    rng = np.random.default_rng(7)
    outcomes = {0: 0, 1: 0, 2: 0}
    for trial in range(300):
        b = bytearray(body)
        kind = trial % 3
        if kind == 0:
            for _ in range(int(rng.integers(1, 4))):
                b[int(rng.integers(len(b)))] = int(rng.integers(32, 127))
        elif kind == 1:
            b = b[:int(rng.integers(len(b)))]
        else:
            at = int(rng.integers(len(b)))
            b = b[:at] + b[at:at + int(rng.integers(1, 40))] + b[at:]
        b = bytes(b)
        data = b"stoker.pipeline 1 %d %s\n" % (len(b), hashlib.sha256(b).hexdigest().encode()) + b
        p = ctypes.c_void_p()
        status = lib.stoker_pipeline_create(data, len(data), None, ctypes.byref(p))
        if status == 0:
            lib.stoker_pipeline_destroy(p)
        else:
            assert status in (1, 2, 7) and error(lib) and not p.value, (status, error(lib))
        outcomes[min(status, 2)] += 1
    assert outcomes[1] > 100  # most mutations are refused as malformed
