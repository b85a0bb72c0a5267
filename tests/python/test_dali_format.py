"""Pipelines that NVIDIA DALI serialized (protobuf: DALI's Pipeline.serialize(), Triton's
model.dali) loaded by stoker's Pipeline.deserialize (src/pipeline/dali_format.cc): made with
DALI 2.4 itself, run by stoker and compared with DALI running the same file, and with the same
pipeline written with stoker's API (bit for bit). Hand-made files (a small protobuf writer
below, independent of the reader) cover what a CPU-only DALI cannot serialize (GPU external
sources, CPU-to-GPU moves, GPU-to-CPU moves) and damaged files."""
import os
import pathlib
import struct

import numpy as np
import pytest

from stoker import Pipeline, _C, fn, pipeline_def, types

from _dali_ref import real_dali
from conftest import TESTDATA

pytestmark = pytest.mark.skipif(not getattr(_C, "reads_dali_pipelines", False),
                                reason="stoker built without libprotobuf")

HERE = pathlib.Path(__file__).name


@pytest.fixture(scope="module")
def dali():
    dfn, dtypes, pdef = real_dali()
    import nvidia.dali.math as dmath
    return dfn, dtypes, pdef, dmath


@pytest.fixture(scope="module")
def photos(testdata):
    files = sorted((testdata / "imagenet-sample").glob("n*/*.jpg"))
    if len(files) < 16:
        pytest.skip("imagenet-sample has too few photos")
    return [np.fromfile(f, dtype=np.uint8) for f in files[:16]]


def run_fed(pipe, feeds, iterations=1):
    """Per iteration, per output: a list of NumPy samples; feeds: name -> list of batches."""
    out = []
    for it in range(iterations):
        for name, batches in feeds.items():
            pipe.feed_input(name, batches[it])
        out.append([[np.array(o.as_cpu()[i] if hasattr(o, "as_cpu") else o[i])
                     for i in range(len(o))] for o in pipe.run()])
    return out


def dali_batches(serialized, feeds, iterations=1):
    """DALI 2.4 running what it serialized: a file (a Path) or the bytes."""
    import nvidia.dali as nd
    pipe = (nd.Pipeline.deserialize(filename=str(serialized))
            if isinstance(serialized, pathlib.Path) else nd.Pipeline.deserialize(serialized))
    pipe.build()
    return run_fed(pipe, feeds, iterations)


def assert_equal(got, want, exact=True, atol=0):
    assert len(got) == len(want)
    for it, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for o, (gb, wb) in enumerate(zip(g, w)):
            for i, (x, y) in enumerate(zip(gb, wb)):
                assert x.shape == y.shape and x.dtype == y.dtype, (it, o, i, x.shape, y.shape,
                                                                   x.dtype, y.dtype)
                if exact:
                    assert np.array_equal(x, y, equal_nan=True), (it, o, i)
                else:
                    np.testing.assert_allclose(x, y, rtol=1e-6, atol=atol, equal_nan=True,
                                               err_msg=f"iteration {it} output {o} sample {i}")


# ---------------------------------------------------------------------- made by DALI 2.4
def image_pipeline(fn_, types_, pdef):
    """Decode, resize, crop-mirror-normalize with a per-sample argument input, arithmetic,
    shapes: deterministic, so DALI's batches are the reference."""
    @pdef(batch_size=8, num_threads=2, device_id=None, seed=12)
    def pipe():
        jpegs = fn_.external_source(name="jpegs", dtype=types_.UINT8, ndim=1)
        img = fn_.decoders.image(jpegs, output_type=types_.RGB)
        img = fn_.resize(img, resize_x=224, resize_y=224, interp_type=types_.INTERP_LINEAR)
        mirror = fn_.external_source(name="mirror", dtype=types_.INT32, ndim=0)
        out = fn_.crop_mirror_normalize(img, dtype=types_.FLOAT, output_layout="CHW",
                                        crop=(200, 200), mirror=mirror,
                                        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                        std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
        return out, out * 2 + 1, fn_.shapes(img)
    return pipe()


def test_an_image_pipeline_runs_as_in_dali(dali, photos, tmp_path):
    dfn, dtypes, pdef, _ = dali
    path = tmp_path / "model.dali"
    image_pipeline(dfn, dtypes, pdef).serialize(filename=str(path))
    mirror = [np.array(i % 2, dtype=np.int32) for i in range(8)]
    feeds = {"jpegs": [photos[:8], photos[8:]], "mirror": [mirror, mirror[::-1]]}

    loaded = Pipeline.deserialize(filename=str(path))
    assert (loaded.max_batch_size, loaded.num_threads, loaded.device_id) == (8, 2, None)
    got = run_fed(loaded, feeds, 2)
    # The same pipeline written with stoker's API: the same batches, bit for bit.
    ours = image_pipeline(fn, types, pipeline_def)
    ours.build()
    assert_equal(got, run_fed(ours, feeds, 2))
    # DALI running its own file: decoding and resampling differ by rounding only.
    want = dali_batches(path, feeds, 2)
    for g, w in zip(got, want):
        assert [s.tolist() for s in g[2]] == [s.tolist() for s in w[2]]  # shapes: exact
        for o in (0, 1):
            for x, y in zip(g[o], w[o]):
                assert x.shape == y.shape and x.dtype == y.dtype == np.float32
                diff = np.abs(x - y) * (0.229 * 255) / (1 if o == 0 else 2)  # in pixel levels
                assert diff.mean() < 0.5 and diff.max() <= 8, (diff.mean(), diff.max())


@pytest.mark.skipif(_C.cuda_device_count() == 0, reason="needs a GPU")
@pytest.mark.parametrize("batch_size", [1, 8])
def test_a_gpu_model_dali_runs_as_in_dali(dali, photos, tmp_path, batch_size):
    """The inference server's case: examples/c/make_pipeline.py's pipeline (the 'mixed' decoder,
    GPU resize and normalize) serialized by DALI as model.dali."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "c"))
    import make_pipeline
    path = tmp_path / "model.dali"
    make_pipeline.build(batch_size, "gpu", dali=True).serialize(filename=str(path))
    feeds = {"jpegs": [photos[:batch_size], photos[batch_size:2 * batch_size]]}
    loaded = Pipeline.deserialize(filename=str(path))
    assert [r.device for r in loaded._ops] == ["cpu", "mixed", "gpu", "gpu"]
    got = run_fed(loaded, feeds, 2)
    ours = make_pipeline.build(batch_size, "gpu")
    ours.build()
    assert_equal(got, run_fed(ours, feeds, 2))
    want = dali_batches(path, feeds, 2)
    for g, w in zip(got, want):
        for x, y in zip(g[0], w[0]):
            assert x.shape == y.shape == (3, 224, 224) and x.dtype == y.dtype
            diff = np.abs(x - y) * (0.229 * 255)  # in pixel levels
            assert diff.mean() < 1.0 and diff.max() <= 24, (diff.mean(), diff.max())


def test_arithmetic_of_every_kind_matches_dali(dali):
    dfn, dtypes, pdef, dmath = dali
    unary = ["sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "abs", "fabs", "floor",
             "ceil", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
             "asinh", "acosh", "atanh"]

    @pdef(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        x = dfn.external_source(name="x", dtype=dtypes.FLOAT, ndim=1)
        i = dfn.external_source(name="i", dtype=dtypes.INT32, ndim=1)
        outs = [x + 1, x - i, x * 2.5, x / 2, i // 2, i % 3, x ** 2, -x, +x, x == i, x != i,
                x < i, x <= i, x > i, x >= i, i & 1, i | 2, i ^ 3, 2 - x, 7 // i,
                dtypes.Constant(3, dtype=dtypes.UINT8) * i]
        outs += [getattr(dmath, f)(x) for f in unary]
        outs += [dmath.min(x, i), dmath.max(x, 1), dmath.pow(x, i), dmath.fpow(x, 2),
                 dmath.atan2(x, i), dmath.clamp(x, 0.25, 3), dmath.clamp(i, -1, 2)]
        return tuple(outs)

    data = pipe().serialize()
    rng = np.random.default_rng(5)
    xs = [rng.uniform(0.1, 0.9, n).astype(np.float32) for n in (4, 1, 7)]
    ints = [rng.integers(1, 9, n).astype(np.int32) for n in (4, 1, 7)]
    feeds = {"x": [xs], "i": [ints]}
    got = run_fed(Pipeline.deserialize(data), feeds)
    assert_equal(got, dali_batches(data, feeds), exact=False, atol=1e-6)


def test_a_reader_conditionals_and_subscripts_match_dali(dali, testdata):
    dfn, dtypes, pdef, _ = dali
    root = testdata / "imagenet-sample"

    @pdef(batch_size=5, num_threads=2, device_id=None, seed=3, enable_conditionals=True,
          prefetch_queue_depth=3)
    def pipe():
        jpegs, labels = dfn.readers.file(file_root=str(root), name="Reader")
        img = dfn.decoders.image(jpegs)
        width = img.shape()[1]
        x = dfn.cast(labels, dtype=dtypes.FLOAT)
        if labels[0] > 2:
            z = x * 3
        else:
            z = -x
        return labels, width, z, img[10:20, :, 1], dfn.peek_image_shape(jpegs)

    data = pipe().serialize()
    loaded = Pipeline.deserialize(data)
    assert loaded.prefetch_queue_depth == 3
    got = run_fed(loaded, {}, 3)
    want = dali_batches(data, {}, 3)
    for g, w in zip(got, want):
        for o in (0, 1, 2, 4):
            assert [s.tolist() for s in g[o]] == [s.tolist() for s in w[o]], o
        for x, y in zip(g[3], w[3]):
            assert x.shape == y.shape and np.abs(x.astype(int) - y).mean() < 1.5


def test_a_named_reader_and_preserved_operator_keep_their_names(dali, testdata):
    dfn, dtypes, pdef, _ = dali

    @pdef(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        jpegs, labels = dfn.readers.file(file_root=str(testdata / "imagenet-sample"),
                                         name="Reader", pad_last_batch=True)
        dfn.cast(labels, dtype=dtypes.FLOAT, preserve=True)
        return labels

    loaded = Pipeline.deserialize(pipe().serialize())
    assert loaded.reader_meta("Reader")["epoch_size"] == len(
        list((testdata / "imagenet-sample").glob("n*/*.jpg")))


def test_an_operator_stoker_does_not_have_is_named(dali, tmp_path):
    dfn, dtypes, pdef, _ = dali

    # The operators stoker lacks run on the GPU only, which DALI cannot serialize without one:
    # a CPU operator of the same name length is renamed in the bytes.
    @pdef(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return dfn.reinterpret(dfn.external_source(name="x"), dtype=dtypes.UINT8)

    data = pipe().serialize()
    assert b"Reinterpret" in data
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(data.replace(b"Reinterpret", b"OpticalFlow"))
    assert str(e.value).startswith(
        "Pipeline.deserialize: the pipeline uses DALI's operator OpticalFlow '__OpticalFlow_")
    assert str(e.value).endswith(
        "(fn.optical_flow), which stoker does not have yet. The operators stoker has are listed "
        "in its README's DALI table.")
    assert f"(defined at {__file__}:" in str(e.value)


def test_a_truncated_dali_file_is_named(dali):
    dfn, dtypes, pdef, _ = dali
    data = image_pipeline(dfn, dtypes, pdef).serialize()
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(data[:len(data) // 2])
    assert str(e.value).startswith(
        "Pipeline.deserialize: this is neither a pipeline serialized by stoker (those start with "
        "'stoker.pipeline ') nor one serialized by DALI (protobuf), or it was cut short or "
        "damaged: it starts with '\\x08\\x02\\x10\\x08*")
    assert str(e.value).endswith("Pass the bytes (or the file) that Pipeline.serialize() wrote, "
                                 "unchanged.")


# ------------------------------------------------------------------------------- hand-made
def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, value):
    """One protobuf field: an int (varint), a float (fixed32), bytes/str (length-delimited)."""
    if isinstance(value, bool) or isinstance(value, int):
        return varint(number << 3) + varint(int(value))
    if isinstance(value, float):
        return varint(number << 3 | 5) + struct.pack("<f", value)
    value = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(value)) + value


def arg(name, value):
    """One operator argument: a scalar, or a list (DALI's is_vector, one Argument per element)."""
    if isinstance(value, list):
        elements = b"".join(field(7, _scalar(f"element {k}", v)) for k, v in enumerate(value))
        return field(4, field(1, name) + elements + field(8, True))
    return field(4, _scalar(name, value))


def _scalar(name, value):
    body = field(1, name)
    if isinstance(value, bool):
        body += field(2, "bool") + field(6, value)
    elif isinstance(value, int):
        body += field(2, "int64") + field(4, value)
    elif isinstance(value, float):
        body += field(2, "float") + field(3, value)
    else:
        body += field(2, "string") + field(5, value)
    return body + field(8, False)


def io(name, device, arg_name=None):
    body = field(1, name) + field(2, device) + field(3, arg_name is not None)
    return body + (field(4, arg_name) if arg_name else b"")


def op(schema, inputs=(), outputs=(), args=(), inst=None):
    body = field(1, schema)
    body += b"".join(field(2, i) for i in inputs) + b"".join(field(3, o) for o in outputs)
    body += b"".join(args)
    if inst:
        body += field(5, inst)
    return field(5, body)


def pipeline(ops, outputs, batch_size=2, device_id=-99999):
    return (field(1, 1) + field(2, batch_size) + b"".join(ops) +
            b"".join(field(7, o) for o in outputs) + field(8, device_id))


def doc_of(data):
    import json
    return json.loads(_C.dali_pipeline_document(data))


def test_a_gpu_external_source_and_implicit_moves_become_stokers():
    data = pipeline(
        [op("ExternalSource", outputs=[io("x", "gpu")], inst="x",
            args=[arg("device", "gpu"), arg("dtype", 9), arg("ndim", 1), arg("layout", "W")]),
         op("ExternalSource", outputs=[io("y", "cpu")], inst="y", args=[arg("device", "cpu")]),
         op("_ArithmeticGenericOp", inputs=[io("x", "gpu"), io("y", "gpu")],
            outputs=[io("s", "gpu")],
            args=[arg("device", "gpu"), arg("expression_desc", "mul(add(&0 &1) $0:float32)"),
                  arg("real_constants", [0.5])]),
         op("MakeContiguous", inputs=[io("y", "cpu")], outputs=[io("yc", "gpu")],
            args=[arg("device", "mixed")])],
        [io("s", "gpu"), io("yc", "gpu")], device_id=0)
    doc = doc_of(data)
    ops = [(o["op"], o["device"], o["inputs"]) for o in doc["operators"]]
    assert ops == [("external_source", "cpu", []), ("_to_gpu", "mixed", [[0, 0]]),
                   ("external_source", "cpu", []), ("_to_gpu", "mixed", [[2, 0]]),
                   ("arithmetic_generic", "gpu", [[1, 0], [3, 0]]),
                   ("arithmetic_generic", "gpu", [[4, 0]])]
    x = doc["operators"][0]
    assert (x["name"], x["external_source"]["gpu"]) == ("x", True)
    assert x["args"] == {"dtype": [9], "ndim": [1], "layout": ["W"]}
    assert doc["operators"][5]["args"] == {
        "op": "mul", "_display_name": "operator *", "constants": [0.5], "constant_dtypes": [9],
        "constant_positions": [1]}
    assert doc["outputs"] == [[5, 0], [3, 0]]
    assert doc["pipeline"]["device_id"] == 0


def test_a_move_back_to_the_cpu_is_refused():
    data = pipeline(
        [op("ExternalSource", outputs=[io("x", "gpu")], inst="x", args=[arg("device", "gpu")]),
         op("Cast", inputs=[io("x", "gpu")], outputs=[io("g", "gpu")],
            args=[arg("device", "gpu"), arg("dtype", 9)]),
         op("Cast", inputs=[io("g", "cpu")], outputs=[io("c", "cpu")],
            args=[arg("device", "cpu"), arg("dtype", 6)])],
        [io("c", "cpu")], device_id=0)
    with pytest.raises(ValueError) as e:
        doc_of(data)
    assert str(e.value) == (
        "Pipeline.deserialize: DALI's operator Cast reads 'g' on the CPU, but it is made on the "
        "GPU (a .cpu() in the DALI pipeline). stoker's pipelines move data to the GPU only: "
        "compute that step on the CPU, or take the output from the GPU.")


@pytest.mark.parametrize("ops, outputs, message", [
    ([op("Cast", inputs=[io("nowhere", "cpu")], outputs=[io("c", "cpu")])], [io("c", "cpu")],
     "DALI's operator Cast read the tensor 'nowhere', which no operator of the pipeline "
     "produces: the file is damaged or was not written by DALI's Pipeline.serialize()."),
    ([op("Cast", inputs=[io("b", "cpu")], outputs=[io("a", "cpu")]),
      op("Cast", inputs=[io("a", "cpu")], outputs=[io("b", "cpu")])], [io("a", "cpu")],
     "the operators of the DALI pipeline read each other in a cycle (at 'Cast'): the file is "
     "damaged."),
    ([op("ExternalSource", outputs=[io("x", "cpu")], inst="x"),
      op("Resize", inputs=[io("x", "cpu")], outputs=[io("r", "cpu")],
         args=[arg("resize_x", 3.0), arg("warp_speed", 9)], inst="__Resize_1")],
     [io("r", "cpu")],
     "DALI's operator Resize '__Resize_1' has the argument 'warp_speed', which stoker's "
     "fn.resize does not take. Its arguments are: resize_x, resize_y, resize_z, size, "
     "resize_shorter, resize_longer, max_size, mode, subpixel_scale, roi_start, roi_end, "
     "roi_relative, dtype, parity, minibatch_size, temp_buffer_hint, interp_type, min_filter, "
     "mag_filter, antialias."),
    ([op("FancyPluginOp", outputs=[io("f", "cpu")], inst="f1")], [io("f", "cpu")],
     "the pipeline uses DALI's operator FancyPluginOp 'f1', which is not an operator of DALI "
     "2.4 that stoker knows: it may come from a DALI plugin or a newer DALI."),
    ([op("ExternalSource", outputs=[io("x", "cpu")], inst="x"),
      op("_ArithmeticGenericOp", inputs=[io("x", "cpu")], outputs=[io("s", "cpu")],
         args=[arg("expression_desc", "add(&0 &3)")])], [io("s", "cpu")],
     "DALI's operator _ArithmeticGenericOp: cannot read the arithmetic expression 'add(&0 &3)'"),
    ([], [io("x", "cpu")],
     "the pipeline's outputs read the tensor 'x', which no operator of the pipeline produces: "
     "the file is damaged or was not written by DALI's Pipeline.serialize()."),
])
def test_a_damaged_or_foreign_graph_is_named(ops, outputs, message):
    with pytest.raises(ValueError) as e:
        doc_of(pipeline(ops, outputs))
    assert str(e.value) == "Pipeline.deserialize: " + message


def test_a_float_argument_reads_as_written():
    data = pipeline(
        [op("ExternalSource", outputs=[io("x", "cpu")], inst="x"),
         op("random__CoinFlip", outputs=[io("c", "cpu")], args=[arg("probability", 0.3)]),
         op("CropMirrorNormalize", inputs=[io("x", "cpu")], outputs=[io("n", "cpu")],
            args=[arg("mean", [123.675, 116.28, 103.53]), arg("std", [58.395])])],
        [io("n", "cpu"), io("c", "cpu")])
    doc = doc_of(data)
    assert doc["operators"][1]["args"] == {"probability": 0.3}
    assert doc["operators"][2]["args"] == {"mean": [123.675, 116.28, 103.53], "std": [58.395]}
