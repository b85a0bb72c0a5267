"""Pipeline.serialize() / Pipeline.deserialize() in stoker's own format: round trips that give
the same batches bit for bit (training pipeline, arithmetic, subscripts and constants,
conditionals, external sources fed by name, checkpoints), the parameters that travel and those
the keywords of deserialize() override, every operator schema's arguments, and the errors."""
import hashlib
import json
import os
import pathlib
import re

import numpy as np
import pytest

import stoker
from stoker import Pipeline, _C, fn, pipeline_def, types
from stoker import _serialize
from stoker._schema import SCHEMAS

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("STOKER_TESTDATA", ROOT.parent / "shared" / "testdata"))
IMAGENET = TESTDATA / "imagenet-sample"
JPEG_DIR = TESTDATA / "images" / "jpeg"
HERE = pathlib.Path(__file__).name


def batches(pipe, n):
    """n batches: per batch a tuple of outputs, each a list of NumPy copies of the samples."""
    out = []
    for _ in range(n):
        b = pipe.run()
        out.append(tuple([np.array(o[i]) for i in range(len(o))] for o in b))
    return out


def assert_same(got, want):
    assert len(got) == len(want)
    for it, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for o, (gb, wb) in enumerate(zip(g, w)):
            assert len(gb) == len(wb)
            for i, (x, y) in enumerate(zip(gb, wb)):
                assert x.dtype == y.dtype and x.shape == y.shape, (it, o, i)
                assert np.array_equal(x, y, equal_nan=True), (it, o, i)


def reheader(body, version=_serialize.VERSION):
    """A serialized pipeline with this body (bytes) and a header that fits it."""
    return b"stoker.pipeline %d %d %s\n" % (version, len(body),
                                            hashlib.sha256(body).hexdigest().encode()) + body


def edited(data, change):
    """`data` with its JSON body changed by change(doc), with a matching header."""
    doc = json.loads(data.split(b"\n", 1)[1])
    change(doc)
    return reheader(json.dumps(doc).encode())


# ------------------------------------------------------------------------------ round trips
@pipeline_def(batch_size=6, num_threads=3, device_id=None, seed=1234, prefetch_queue_depth=3)
def training_pipe(root):
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB,
                                           random_area=[0.1, 1.0])
    images = fn.resize(images, resize_x=96, resize_y=96, interp_type=types.INTERP_TRIANGULAR)
    images = fn.crop_mirror_normalize(
        images, dtype=types.FLOAT, output_layout="CHW", crop=(80, 80),
        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
        mirror=fn.random.coin_flip(probability=0.5))
    return images, labels


@pytest.mark.parametrize("root", [IMAGENET, JPEG_DIR], ids=["imagenet-sample", "jpeg"])
def test_training_pipeline_round_trip(root, tmp_path):
    original = training_pipe(str(root))
    data = original.serialize()
    assert isinstance(data, bytes)  # as DALI's (protobuf bytes)
    assert data.startswith(b"stoker.pipeline 1 ")
    want = batches(original, 4)
    restored = Pipeline.deserialize(data)
    assert_same(batches(restored, 4), want)
    # serialize(filename=...) writes the same bytes; deserialize(filename=...) reads them
    path = tmp_path / "pipe.stoker"
    assert original.serialize(filename=str(path)) == data
    assert path.read_bytes() == data
    assert_same(batches(Pipeline.deserialize(filename=path), 4), want)
    assert restored.reader_meta("Reader")["epoch_size"] == original.epoch_size("Reader")
    # serializing a deserialized pipeline gives the same bytes
    assert restored.serialize() == data


def test_deserialized_pipeline_is_built_and_keeps_the_parameters():
    original = training_pipe(str(JPEG_DIR))
    p = Pipeline.deserialize(original.serialize())
    assert p._built  # as in DALI: the returned pipeline is built
    assert (p.batch_size, p.num_threads, p.device_id, p.seed, p.prefetch_queue_depth,
            p.exec_pipelined, p.exec_async, p.enable_checkpointing) == \
        (6, 3, None, 1234, 3, True, True, False)


def test_keywords_override_the_serialized_parameters():
    data = training_pipe(str(JPEG_DIR)).serialize()
    p = Pipeline.deserialize(data, batch_size=4, num_threads=1, seed=99, prefetch_queue_depth=1,
                             exec_pipelined=False, exec_async=False)
    assert (p.batch_size, p.num_threads, p.seed, p.prefetch_queue_depth, p.exec_pipelined,
            p.exec_async) == (4, 1, 99, 1, False, False)
    # the same batches as the pipeline defined in Python with those parameters
    direct = training_pipe(str(JPEG_DIR), batch_size=4, num_threads=1, seed=99,
                           prefetch_queue_depth=1, exec_pipelined=False, exec_async=False)
    assert_same(batches(p, 3), batches(direct, 3))


def test_max_batch_size_overrides_the_serialized_batch_size():
    p = Pipeline.deserialize(training_pipe(str(JPEG_DIR)).serialize(), max_batch_size=2)
    assert p.batch_size == 2 and len(p.run()[0]) == 2


def test_an_unseeded_pipeline_travels_with_its_seed():
    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        return fn.random.normal(shape=[5])

    p = pipe()
    q = Pipeline.deserialize(p.serialize())
    assert q.seed == p.seed
    assert_same(batches(q, 2), batches(p, 2))


def test_arithmetic_subscripts_and_constants_round_trip():
    @pipeline_def(batch_size=5, num_threads=2, device_id=None, seed=7)
    def pipe():
        x = fn.random.uniform(range=[-10, 10], shape=[4, 6])
        i = fn.cast(fn.random.uniform(range=[0, 3.4]), dtype=types.INT32)
        a = (x * 2 + types.Constant(np.float32([1, 2, 3, 4, 5, 6]))) / 3 - 1.5
        b = x[1:, ::-2]
        c = x[i, 2]  # a per-sample index
        d = (x > 0) & (x < 5)
        e = fn.constant(idata=[1, 2, 3], shape=[3], dtype=types.INT16) + [10, 20, 30]
        f = stoker.math.clamp(stoker.math.abs(x), 1, 4) ** 2
        g = -x[None, 0] % 3
        return a, b, c, d, e, f, g

    p = pipe()
    q = Pipeline.deserialize(p.serialize())
    want = batches(p, 3)
    assert_same(batches(q, 3), want)
    # the results are what NumPy gives for the same x (a check that the graph is the right one)
    a, b = want[0][0], want[0][1]
    assert [s.shape for s in a] == [(4, 6)] * 5 and [s.shape for s in b] == [(3, 3)] * 5
    assert [s.tolist() for s in want[0][4]] == [[11, 22, 33]] * 5


def test_conditionals_round_trip():
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=3, enable_conditionals=True)
    def pipe():
        x = fn.random.uniform(range=[0, 1], shape=[3])
        flip = fn.random.coin_flip(probability=0.5)
        if flip:
            out = x * 10 + fn.random.normal(shape=[3])
        elif x[0] > 0.5:
            out = x - 100
        else:
            out = -x
        return out, flip, x

    p = pipe()
    data = p.serialize()
    ops = [o["op"] for o in json.loads(data.split(b"\n", 1)[1])["operators"]]
    assert "_conditional.split" in ops and "_conditional.merge" in ops
    want = batches(p, 4)
    assert_same(batches(Pipeline.deserialize(data), 4), want)
    # both branches were taken, and each sample went the way its predicate says
    flips = np.concatenate([np.array(b[1]).ravel() for b in want])
    assert 0 < flips.sum() < len(flips)
    for out, flip, x in zip(*want[0]):
        if flip:
            assert not np.array_equal(out, x - 100) and not np.array_equal(out, -x)
        else:
            assert np.array_equal(out, x - np.float32(100) if x[0] > 0.5 else -x)


def test_external_source_fed_by_name_after_deserializing():
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=5)
    def pipe():
        img = fn.external_source(name="images", layout="HWC", dtype=types.UINT8)
        scale = fn.external_source(name="scale", dtype=types.FLOAT, ndim=0)
        out = fn.resize(img, resize_x=8, resize_y=6) * scale
        return out, fn.flip(img, horizontal=fn.random.coin_flip())

    rng = np.random.default_rng(0)
    feeds = [([rng.integers(0, 255, (10 + k, 12, 3), dtype=np.uint8) for k in range(3)],
              np.float32([1, 2, 0.5])) for _ in range(3)]
    p = pipe()
    q = Pipeline.deserialize(p.serialize())
    want, got = [], []
    for images, scale in feeds:
        for target, out in ((p, want), (q, got)):
            target.feed_input("images", images)
            target.feed_input("scale", list(scale))
            out.extend(batches(target, 1))
    assert_same(got, want)
    assert got[0][0][0].shape == (6, 8, 3) and got[0][0][0].dtype == np.float32
    # the layout and the dtype travelled: feeding other data is refused as before
    with pytest.raises(ValueError, match=r"declared layout='HWC'"):
        q.feed_input("images", feeds[0][0], layout="CHW")
    with pytest.raises(ValueError) as e:
        q.feed_input("nope", feeds[0][0])
    assert str(e.value) == (
        "Pipeline.feed_input: there is no external_source 'nope' in this pipeline (named "
        "external sources: 'images', 'scale'); pass the name= given to fn.external_source or "
        "the DataNode it returned.")


def test_external_source_messages_name_the_original_line():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(name="x", layout="HW")

    q = Pipeline.deserialize(pipe().serialize())
    line = [n for n, t in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
            if 'return fn.external_source(name="x", layout="HW")' in t][0]
    with pytest.raises(ValueError) as e:
        q.feed_input("x", [np.zeros((2, 2))] * 2, layout="WH")
    assert str(e.value).startswith(f"fn.external_source ({HERE}:{line}): feed_input got data "
                                   "with layout 'WH', but the external_source declared "
                                   "layout='HW'")


def test_checkpointed_pipeline_deserialized_and_resumed():
    @pipeline_def(batch_size=5, num_threads=2, device_id=None, seed=21, enable_checkpointing=True)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(JPEG_DIR), random_shuffle=True,
                                        initial_fill=16, name="Reader")
        shapes = fn.peek_image_shape(jpegs)
        return labels, shapes, fn.random.uniform(range=[0, 1])

    reference = batches(pipe(), 14)  # past the 47-file epoch
    p = pipe()
    batches(p, 6)
    ckpt = p.checkpoint()
    data = p.serialize()
    q = Pipeline.deserialize(data, checkpoint=ckpt)
    assert q.enable_checkpointing  # travelled with the pipeline
    assert_same(batches(q, 8), reference[6:])
    # a checkpoint of the deserialized pipeline restores into the Python-defined one
    ckpt2 = q.checkpoint()
    r = pipe(checkpoint=ckpt2)
    assert_same(batches(r, 2), batches(q, 2))


def test_gpu_nodes_and_preserve_travel():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        fn.random.uniform(range=[0, 1], preserve=True, name="kept")
        return fn.random.uniform(range=[0, 1])

    doc = json.loads(pipe().serialize().split(b"\n", 1)[1])
    assert [(o["op"], o["name"], o["preserve"]) for o in doc["operators"]] == [
        ("random.uniform", "kept", True), ("random.uniform", None, False)]


def test_enums_are_written_by_name_and_come_back():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1,
                  output_dtype=[types.FLOAT, None], output_ndim=[3, 0])
    def pipe():
        img = fn.external_source(name="img", layout="HWC")
        img = fn.color_space_conversion(img, image_type=types.RGB, output_type=types.BGR)
        img = fn.resize(img, resize_x=4, resize_y=4, interp_type=types.INTERP_CUBIC,
                        dtype=types.FLOAT)
        return img, fn.cast(fn.random.uniform(range=[0, 9]), dtype=types.INT64)

    p = pipe()
    data = p.serialize()
    doc = json.loads(data.split(b"\n", 1)[1])
    args = {o["op"]: o["args"] for o in doc["operators"]}
    assert args["color_space_conversion"]["image_type"] == {"DALIImageType": "RGB"}
    assert args["color_space_conversion"]["output_type"] == {"DALIImageType": "BGR"}
    assert args["resize"]["interp_type"] == {"DALIInterpType": "INTERP_CUBIC"}
    assert args["resize"]["dtype"] == {"DALIDataType": "FLOAT"}
    assert args["cast"]["dtype"] == {"DALIDataType": "INT64"}
    assert doc["pipeline"]["output_dtype"] == ["FLOAT", None]
    q = Pipeline.deserialize(data)
    assert q._output_descs == ([types.FLOAT, None], [3, 0], None)
    img = [np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)] * 2
    for x in (p, q):
        x.feed_input("img", img)
    assert_same(batches(q, 1), batches(p, 1))


def test_legacy_define_graph_and_ops_api():
    class Legacy(Pipeline):
        def __init__(self):
            super().__init__(batch_size=3, num_threads=1, device_id=None, seed=8)
            self.uniform = stoker.ops.random.Uniform(range=[0, 5], shape=[2])
            self.cast = stoker.ops.Cast(dtype=types.INT32)

        def define_graph(self):
            return self.cast(self.uniform())

    p = Legacy()
    data = p.serialize()
    assert_same(batches(Pipeline.deserialize(data), 3), batches(Legacy(), 3))


# ----------------------------------------------------------------- every operator's arguments
_SAMPLES = {
    "int": [3, 1, 0, 2, 7, 42, -1, 255],
    "float": [0.5, 1.0, 0.25, 2.0, 3.0, 0.0, -1.0, 100.0],
    "bool": [True, False],
    "str": ["HWC", "", "constant", "anchor_shape", "a"],
    "list of int": [[1, 2], [3], [0], [2, 2, 2], [1, 1, 1, 1]],
    "list of float": [[0.5, 1.5], [1.0], [0.25, 0.5, 0.75], [1.0, 1.0, 1.0, 1.0]],
    "list of str": [["a", "b"], ["a"]],
}


def accepted_value(op, arg):
    """A value the schema check of fn.<op>'s argument accepts: its default where it has one
    and that is accepted, else the first sample of its type that is."""
    t = arg["type"]
    tried = []
    if t in _serialize._ENUMS:
        tried = list(_serialize._ENUMS[t])
    tried += _SAMPLES.get(t, [])
    if arg["has_default"] and arg["default"] is not None:
        tried.insert(0, arg["default"])
    for v in tried:
        try:
            return _C_check(op, arg["name"], v)
        except (TypeError, ValueError):
            continue
    return None


def _C_check(op, name, v):
    return stoker._C.check_arg(op, name, v)


def all_arg_types():
    return sorted({a["type"] for s in SCHEMAS.values() for a in s["args"]})


def test_every_argument_type_of_the_schemas_is_covered():
    known = set(_SAMPLES) | set(_serialize._ENUMS)
    assert [t for t in all_arg_types() if t not in known] == []


# (Schemas the Python layer makes from others, readers.video_resize, have no C++ check of
# their own: the operators they are built of check their arguments.)
@pytest.mark.parametrize("op", sorted(s["name"] for s in stoker._C.schemas()))
def test_every_argument_of_every_operator_round_trips(op):
    """Each argument's value, as the schema check returned it, encoded to JSON and back and
    checked again: the same value of the same type."""
    seen = 0
    for arg in SCHEMAS[op]["args"]:
        if arg["name"] in _serialize._PROCESS_IDS:
            continue
        value = accepted_value(op, arg)
        if value is None:
            continue
        encoded = json.loads(json.dumps(_serialize.encode_arg(arg["type"], value)))
        back = _C_check(op, arg["name"], _serialize.decode_arg(arg["type"], encoded))
        assert back == value and type(back) is type(value), (arg["name"], value, back)
        if arg["type"] in _serialize._ENUMS:
            assert isinstance(encoded, dict), arg["name"]  # by name, not number
        seen += 1
    assert seen >= sum(1 for a in SCHEMAS[op]["args"]
                       if a["name"] not in _serialize._PROCESS_IDS and a["type"] != "str") // 2


@pytest.mark.parametrize("op", sorted(n for n in SCHEMAS if n not in _serialize._PY_FUNCTIONS))
def test_every_operator_record_round_trips(op):
    """An operator of every schema, recorded with a value for every argument it accepts,
    inputs, and a node for an argument that takes one, serialized and restored into a new
    pipeline (not built): the same record."""
    from stoker.pipeline import _OpRecord
    schema = SCHEMAS[op]
    device = "cpu" if "cpu" in schema["backends"] else schema["backends"][0]
    p = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with p:
        src = fn.random.uniform(range=[0, 1], shape=[2])
    args = {}
    for a in schema["args"]:
        if a["name"] in _serialize._PROCESS_IDS:
            continue
        v = accepted_value(op, a)
        if v is not None:
            args[a["name"]] = v
    tensor_args = {}
    node_arg = next((a["name"] for a in schema["args"] if a["tensor"]), None)
    if node_arg is not None:
        args.pop(node_arg, None)
        tensor_args[node_arg] = src
    n_in = schema["min_inputs"] or min(1, schema["max_inputs"])
    rec = _OpRecord(op, device, args, tensor_args, [src] * n_in, 2, "the_op", False)
    if op == "external_source":
        rec.inputs = []
        rec.args.pop("source", None)
        rec.num_outputs = 1
    outs = p._add_op(rec)
    if op == "external_source":
        from stoker.external_source import _ExternalSource
        es = _ExternalSource("fn.external_source", None, None, True, False, "no", None, None,
                             False, "the_op")
        es.record = lambda: rec
        p._external_sources.append(es)
    p.set_outputs(*outs)
    data = p.serialize()
    doc = _serialize.loads(data)
    q = Pipeline(**_serialize.pipeline_params(doc))
    _serialize.restore_graph(q, doc)
    got = q._ops[-1]
    assert (got.schema, got.device, got.name, got.num_outputs, got.location) == \
        (op, device, "the_op", rec.num_outputs, rec.location)
    drop = lambda d: {k: v for k, v in d.items() if k not in _serialize._PROCESS_IDS}  # noqa
    assert drop(got.args) == drop(rec.args)
    assert {k: type(v) for k, v in drop(got.args).items()} == \
        {k: type(v) for k, v in drop(rec.args).items()}
    assert {k: (n.op.index, n.output) for k, n in got.tensor_args.items()} == \
        {k: (0, 0) for k in tensor_args}
    assert [(n.op.index, n.output) for n in got.inputs] == [(0, 0)] * len(rec.inputs)
    at = 1 if rec.inputs or tensor_args else 0  # (src is kept only where it is used)
    assert [(o.op.index, o.output) for o in q._outputs] == [(at, k) for k in range(len(outs))]
    assert q.serialize() == data


def test_internal_ids_are_not_written_and_are_made_anew():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(name="x")

    p = pipe()
    data = p.serialize()
    assert b"_source_id" not in data
    q = Pipeline.deserialize(data)
    assert q._ops[0].args["_source_id"] == q._external_sources[0].state.id
    assert q._ops[0].args["_source_id"] != p._ops[0].args["_source_id"]


# ------------------------------------------------------------------------------------ errors
def test_external_source_with_a_source_is_refused():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(source=lambda: [np.zeros(2)] * 2, batch=True)

    line = [n for n, t in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
            if "return fn.external_source(source=lambda: [np.zeros(2)] * 2" in t][0]
    with pytest.raises(ValueError) as e:
        pipe().serialize()
    assert str(e.value) == (
        f"Pipeline.serialize(): fn.external_source ({HERE}:{line}) has a source= (a Python "
        "callable), which cannot be serialized. Leave the source out and give the "
        "external_source a name (fn.external_source(name=\"...\")); feed the deserialized "
        "pipeline with pipe.feed_input(name, data) before each run().")


def test_external_source_without_a_name_is_refused():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source()

    with pytest.raises(ValueError) as e:
        pipe().serialize()
    assert re.fullmatch(re.escape("Pipeline.serialize(): fn.external_source (") + HERE +
                        r":\d+" + re.escape(
                            ") has no name, and a deserialized pipeline's external sources are "
                            "fed by name. Give it one (fn.external_source(name=\"...\")) and "
                            "feed it with pipe.feed_input(name, data)."), str(e.value))


def test_python_function_is_refused():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.python_function(fn.random.uniform(range=[0, 1]), function=lambda x: x * 2)

    with pytest.raises(ValueError) as e:
        pipe().serialize()
    assert re.fullmatch(re.escape("Pipeline.serialize(): fn.python_function (") + HERE +
                        r":\d+" + re.escape(
                            ") runs a Python function, which cannot be serialized (as in DALI). "
                            "Keep such a pipeline in Python (build it from its code), or compute "
                            "that step outside the pipeline and feed its result through a named "
                            "fn.external_source."), str(e.value))


def test_numba_function_is_refused():
    pytest.importorskip("numba")
    from stoker.plugin.numba.fn.experimental import numba_function

    def double(out, inp):
        out[:] = inp * 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.random.uniform(range=[0, 1], shape=[2])
        return numba_function(x, run_fn=double, out_types=[types.FLOAT], in_types=[types.FLOAT],
                              outs_ndim=[1], ins_ndim=[1])

    with pytest.raises(ValueError) as e:
        pipe().serialize()
    assert re.fullmatch(r"Pipeline\.serialize\(\): \S*numba_function \(" + HERE + r":\d+\) " +
                        re.escape("runs a Python function, which cannot be serialized (as in "
                                  "DALI). Keep such a pipeline in Python (build it from its "
                                  "code), or compute that step outside the pipeline and feed "
                                  "its result through a named fn.external_source."),
                        str(e.value)), str(e.value)


FOREIGN = ("; pass the bytes Pipeline.serialize() returned (or the file serialize(filename=...) "
           "wrote), unchanged.")


@pytest.fixture(scope="module")
def serialized():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=4)
    def pipe():
        return fn.cast(fn.random.uniform(range=[0, 9], shape=[3]), dtype=types.INT32)

    return pipe().serialize()


def test_an_empty_file_is_named():
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(b"")
    assert str(e.value) == "Pipeline.deserialize: the serialized pipeline is empty" + FOREIGN


@pytest.mark.parametrize("data, starts", [
    (b"garbage data", "'garbage data'"),
    (b"\x08\x02\x10\x03*\xae\x04\n\x0eExternalSource",
     "'\\x08\\x02\\x10\\x03*\\xae\\x04\\x0a\\x0eExternalSource'"),
    (b'{"format": "stoker.checkpoint"}', "'{\"format\": \"stoker.check...'"),
])
def test_a_foreign_file_is_named(data, starts):
    """Neither stoker's format nor DALI's (the second is a DALI pipeline cut short)."""
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(data)
    if _C.reads_dali_pipelines:
        assert str(e.value) == (
            "Pipeline.deserialize: this is neither a pipeline serialized by stoker (those start "
            "with 'stoker.pipeline ') nor one serialized by DALI (protobuf), or it was cut short "
            f"or damaged: it starts with {starts}. Pass the bytes (or the file) that "
            "Pipeline.serialize() wrote, unchanged.")
    else:
        assert str(e.value).startswith(
            f"Pipeline.deserialize: this is not a pipeline serialized by stoker (it starts with "
            f"{starts}, where stoker's start with 'stoker.pipeline '), and this build of stoker "
            "cannot read pipelines that DALI serialized (protobuf)")


def test_a_dali_serialized_pipeline_is_read():
    """(tests/python/test_dali_format.py has the rest.)"""
    dali = pytest.importorskip("nvidia.dali")
    if not _C.reads_dali_pipelines:
        pytest.skip("stoker built without libprotobuf")

    @dali.pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return dali.fn.random.uniform(range=[0, 1], shape=[5])

    (out,) = Pipeline.deserialize(pipe().serialize()).run()
    assert len(out) == 2 and all(out[i].shape == (5,) and out[i].dtype == np.float32
                                 for i in range(2))
    assert all(0 <= v < 1 for i in range(2) for v in np.array(out[i]))


def test_a_truncated_file_is_named(serialized, tmp_path):
    cut = serialized[:len(serialized) - 10]
    path = tmp_path / "cut.stoker"
    path.write_bytes(cut)
    n = len(serialized.split(b"\n", 1)[1])
    for kw in ({"serialized_pipeline": cut}, {"filename": str(path)}):
        with pytest.raises(ValueError) as e:
            Pipeline.deserialize(**kw)
        assert str(e.value) == (
            f"Pipeline.deserialize: the serialized pipeline is truncated: its header announces "
            f"{n} bytes after it, there are {n - 10}. Pass the whole of what "
            "Pipeline.serialize() returned (a file may have been cut short while copying).")
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(serialized + b"\n")
    assert str(e.value).startswith(
        f"Pipeline.deserialize: the serialized pipeline is longer than its header says: its "
        f"header announces {n} bytes after it, there are {n + 1}. ")
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(serialized[:30])
    assert str(e.value) == (
        f"Pipeline.deserialize: the header of the serialized pipeline is damaged or cut short "
        f"({serialized[:30]!r}); expected 'stoker.pipeline <version> <size> <sha256>' and a "
        "newline" + FOREIGN)


def test_a_damaged_file_is_named(serialized):
    body_at = serialized.index(b"\n") + 1
    damaged = serialized[:body_at + 5] + b"X" + serialized[body_at + 6:]
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(damaged)
    assert str(e.value) == (
        "Pipeline.deserialize: the serialized pipeline is damaged or was edited: its body does "
        "not match the checksum in its header. Pass the bytes Pipeline.serialize() returned, "
        "unchanged.")


def test_a_newer_version_is_named(serialized):
    newer = reheader(serialized.split(b"\n", 1)[1], version=2)
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(newer)
    assert str(e.value) == (
        "Pipeline.deserialize: the pipeline was serialized in format version 2, and this stoker "
        "reads versions 1 to 1. Load it with the stoker that wrote it (a newer one), or "
        "serialize the pipeline again with this one.")


def test_an_unknown_operator_is_named(serialized):
    def rename(doc):
        doc["operators"][0]["op"] = "my_plugin.warp"
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(edited(serialized, rename))
    assert re.fullmatch(re.escape("Pipeline.deserialize: the pipeline uses the operator "
                                  "fn.my_plugin.warp (defined at ") + HERE + r":\d+" + re.escape(
        "), which this stoker does not have. It may come from a plugin library that is not "
        "loaded in this process (load it before deserializing) or from a newer stoker."),
        str(e.value)), str(e.value)


def test_an_unknown_argument_is_named(serialized):
    def add(doc):
        doc["operators"][1]["args"]["rounding"] = "up"
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(edited(serialized, add))
    assert re.fullmatch(re.escape("Pipeline.deserialize: fn.cast (defined at ") + HERE +
                        r":\d+" + re.escape(
                            ") has the argument 'rounding', which this stoker's fn.cast does "
                            "not take (a pipeline from another version of stoker?). Its "
                            "arguments are: dtype."), str(e.value)), str(e.value)


def test_a_bad_enum_value_is_named(serialized):
    def bad(doc):
        doc["operators"][1]["args"]["dtype"] = {"DALIDataType": "FLOAT128"}
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(edited(serialized, bad))
    assert re.fullmatch(re.escape("Pipeline.deserialize: fn.cast (defined at ") + HERE +
                        r":\d+" + re.escape(
                            "): argument 'dtype' = {'DALIDataType': 'FLOAT128'} is not accepted "
                            "by this stoker: {'DALIDataType': 'FLOAT128'} is not a value of "
                            "stoker.types.DALIDataType"), str(e.value)), str(e.value)


def test_a_malformed_body_is_named(serialized):
    def bad(doc):
        doc["outputs"] = [[5, 0]]
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(edited(serialized, bad))
    assert str(e.value) == ("Pipeline.deserialize: the serialized pipeline's contents are not "
                            "what stoker writes (bad node reference [5, 0])" + FOREIGN)


def test_deserialize_arguments(serialized, tmp_path):
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize()
    assert str(e.value) == (
        "Pipeline.deserialize: give exactly one of serialized_pipeline (the bytes "
        "Pipeline.serialize() returned) and filename (a file serialize(filename=...) wrote); "
        "got neither.")
    with pytest.raises(ValueError) as e:
        Pipeline.deserialize(serialized, filename="x")
    assert str(e.value).endswith("got both.")
    with pytest.raises(TypeError) as e:
        Pipeline.deserialize(serialized, batchsize=3)
    assert str(e.value) == ("Pipeline.deserialize: unknown pipeline argument(s): batchsize; it "
                            "takes Pipeline()'s keywords.")
    with pytest.raises(TypeError) as e:
        Pipeline.deserialize(12)
    assert str(e.value) == ("Pipeline.deserialize: serialized_pipeline must be the bytes "
                            "Pipeline.serialize() returned, got int.")
    with pytest.raises(FileNotFoundError):
        Pipeline.deserialize(filename=str(tmp_path / "missing"))
    # str, bytearray and memoryview are taken too (the format is ASCII)
    want = batches(Pipeline.deserialize(serialized), 1)
    for form in (serialized.decode(), bytearray(serialized), memoryview(serialized)):
        assert_same(batches(Pipeline.deserialize(form), 1), want)


def test_serialize_define_graph_argument():
    p = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=3)
    with pytest.raises(TypeError) as e:
        p.serialize("file.stoker")
    assert str(e.value) == ("Pipeline.serialize: define_graph must be a callable (it is "
                            "deprecated, as in DALI); to write a file, use "
                            "serialize(filename=...).")
    data = p.serialize(lambda: fn.random.uniform(range=[0, 1]))
    q = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=3)
    with q:
        q.set_outputs(fn.random.uniform(range=[0, 1]))
    assert_same(batches(Pipeline.deserialize(data), 2), batches(q, 2))
    with pytest.raises(RuntimeError) as e:
        q.serialize(lambda: fn.random.uniform(range=[0, 1]))
    assert str(e.value) == ("Pipeline.serialize: define_graph was given, but this pipeline's "
                            "outputs are already defined; leave it out.")


def test_signatures_match_dali():
    dali = pytest.importorskip("nvidia.dali")
    import inspect
    for name in ("serialize", "deserialize"):
        theirs = list(inspect.signature(getattr(dali.Pipeline, name)).parameters)
        ours = list(inspect.signature(getattr(Pipeline, name)).parameters)
        assert ours == theirs, name


# ----------------------------------------------------------------------------------- the GPU
@pytest.mark.skipif(stoker._C.cuda_device_count() == 0, reason="no GPU here")
def test_gpu_training_pipeline_round_trip():
    @pipeline_def(batch_size=8, num_threads=3, device_id=0, seed=77)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(IMAGENET), random_shuffle=True)
        images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB)
        images = fn.resize(images, resize_x=64, resize_y=64)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          crop=(56, 56), mean=[128.0] * 3, std=[64.0] * 3,
                                          mirror=fn.random.coin_flip())
        extra = fn.external_source(name="extra", device="gpu", dtype=types.FLOAT, ndim=1)
        return images, labels.gpu(), extra * 2

    p = pipe()
    data = p.serialize()
    q = Pipeline.deserialize(data)
    assert q.device_id == 0
    feed = [np.float32([k, k + 1]) for k in range(8)]
    want, got = [], []
    for _ in range(3):
        for target, out in ((p, want), (q, got)):
            target.feed_input("extra", feed)
            b = target.run()
            out.append(tuple([np.array(o.as_cpu()[i]) for i in range(len(o))] for o in b))
    assert_same(got, want)
    assert got[0][0][0].shape == (3, 56, 56)
    assert [x.tolist() for x in got[0][2]] == [[2 * k, 2 * k + 2] for k in range(8)]


def _runnable_on_an_image():
    """Operators that take one input and need no argument: each is tried on a batch of HWC
    uint8 images."""
    names = []
    for name, s in sorted(SCHEMAS.items()):
        if (name.startswith("_") or name in _serialize._PY_FUNCTIONS or s["reader"] or
                name == "external_source" or "cpu" not in s["backends"] or
                not s["min_inputs"] <= 1 <= s["max_inputs"]):
            continue
        if any(not a["has_default"] and not a["optional"] for a in s["args"]):
            continue
        names.append(name)
    return names


def test_operators_that_run_on_an_image_give_the_same_batches_after_a_round_trip():
    """As far as building each operator is practical: every operator that runs on a batch of
    images with its default arguments gives the same batches, bit for bit, deserialized."""
    rng = np.random.default_rng(1)
    images = [rng.integers(0, 255, (20 + 3 * k, 24, 3), dtype=np.uint8) for k in range(3)]
    ran, refused = [], []
    for name in _runnable_on_an_image():
        op = fn
        for part in name.split("."):
            op = getattr(op, part)

        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=9)
        def pipe():
            outs = op(fn.external_source(name="img", layout="HWC", dtype=types.UINT8))
            return tuple(outs) if isinstance(outs, (list, tuple)) else outs

        try:
            p = pipe()
            p.feed_input("img", images)
            p.feed_input("img", images)
            want = batches(p, 2)
        except Exception:  # noqa: BLE001 (the operator does not take this input: not tried)
            refused.append(name)
            continue
        q = Pipeline.deserialize(p.serialize())
        q.feed_input("img", images)
        q.feed_input("img", images)
        assert_same(batches(q, 2), want)
        ran.append(name)
    print("ran:", " ".join(ran), "\nnot runnable on an image:", " ".join(refused))
    assert len(ran) >= 40, (ran, refused)
    for must in ("flip", "hsv", "color_twist", "jitter", "water", "noise.gaussian",
                 "erase", "transpose", "crop_mirror_normalize", "grid_mask", "sphere"):
        assert must in ran, (must, refused)


WITH_ARGUMENTS = [
    ("resize", dict(resize_x=10, resize_y=fn.random.uniform(range=[5, 15]),
                    interp_type=types.INTERP_LANCZOS3, antialias=False)),
    ("gaussian_blur", dict(sigma=fn.random.uniform(range=[0.5, 2.0]), window_size=5)),
    ("warp_affine", dict(matrix=[1.1, 0.1, -2.0, 0.0, 0.9, 1.0], fill_value=7,
                         interp_type=types.INTERP_NN)),
    ("rotate", dict(angle=fn.random.uniform(range=[-30, 30]), fill_value=0)),
    ("slice", dict(rel_start=[0.1, 0.2], rel_shape=[0.5, 0.5], axis_names="HW")),
    ("reshape", dict(shape=[-1, 3], layout="XC")),
    ("color_space_conversion", dict(image_type=types.RGB, output_type=types.YCbCr)),
    ("random_resized_crop", dict(size=[12, 10], random_area=[0.3, 1.0])),
    ("cast", dict(dtype=types.FLOAT16)),
    ("pad", dict(axes=[0, 1], shape=[40, 30], fill_value=3)),
    ("hue", dict(hue=fn.random.uniform(range=[-20, 20]))),
    ("crop_mirror_normalize", dict(crop_pos_x=fn.random.uniform(range=[0, 1]), crop=[8, 8],
                                   mirror=1, output_layout="CHW", pad_output=True,
                                   dtype=types.FLOAT16)),
]


@pytest.mark.parametrize("name, kwargs", WITH_ARGUMENTS, ids=[w[0] for w in WITH_ARGUMENTS])
def test_operators_with_arguments_give_the_same_batches_after_a_round_trip(name, kwargs):
    rng = np.random.default_rng(2)
    images = [rng.integers(0, 255, (20 + 3 * k, 24, 3), dtype=np.uint8) for k in range(3)]
    op = fn
    for part in name.split("."):
        op = getattr(op, part)

    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=10)
    def pipe():
        # (argument nodes made at module level are adopted, as DALI allows)
        return op(fn.external_source(name="img", layout="HWC", dtype=types.UINT8), **kwargs)

    p = pipe()
    q = Pipeline.deserialize(p.serialize())
    for x in (p, q):
        x.feed_input("img", images)
        x.feed_input("img", images)
    assert_same(batches(q, 2), batches(p, 2))
