"""The Python API surface DALI code leans on: arguments as DALI code writes them (NumPy scalars,
arrays, dtypes, tuples, paths), every Pipeline keyword of DALI 2.4, external_source's positional
source, operators made outside a pipeline, layouts checked when data arrives, DALI's tensor
objects and enum printing, DALIRaggedIterator, and the iterators' epochs. Each case runs in
stoker and, where NVIDIA DALI 2.4 is installed, in DALI too, and the results must agree."""
import re
import importlib.util
import inspect
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import stoker
from stoker import Pipeline, fn, ops, pipeline_def, types


def _have_dali():
    try:
        return importlib.util.find_spec("nvidia.dali") is not None
    except (ImportError, ValueError):
        return False


needs_dali = pytest.mark.skipif(not _have_dali(), reason="NVIDIA DALI is not installed")


@pytest.fixture(scope="module")
def dali():
    """The real DALI (fn, ops, types, Pipeline, pipeline_def), or a skip."""
    if not _have_dali():
        pytest.skip("NVIDIA DALI is not installed; it is only the reference here")
    import nvidia.dali as d
    if d.__name__.startswith("stoker"):
        pytest.skip("nvidia.dali is aliased to stoker in this process")
    import nvidia.dali.fn as dfn
    import nvidia.dali.ops as dops
    import nvidia.dali.types as dtypes
    return type("Dali", (), dict(fn=dfn, ops=dops, types=dtypes, Pipeline=d.Pipeline,
                                 pipeline_def=d.pipeline_def, module=d))


def run_once(lib, graph, batch_size=2, **pipe_kwargs):
    """Builds a one-batch pipeline of `lib` (stoker, or the `dali` fixture) from graph(fn,
    types) and returns its outputs as lists of NumPy arrays."""
    pipe_kwargs.setdefault("device_id", None)

    @lib.pipeline_def(batch_size=batch_size, num_threads=1, seed=7, **pipe_kwargs)
    def pipe():
        return graph(lib.fn, lib.types)

    p = pipe()
    p.build()
    return [[np.array(o[i]) for i in range(len(o))] for o in p.run()]


def image_batch(fn_, types_):
    """Two small HWC uint8 images, the same in stoker and DALI."""
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 255, (6, 5, 3), dtype=np.uint8),
            rng.integers(0, 255, (4, 7, 3), dtype=np.uint8)]
    return fn_.external_source(source=lambda: imgs, batch=True, layout="HWC")


def assert_same(got, ref):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert len(g) == len(r)
        for a, b in zip(g, r):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------ item 9: arguments

CMN_ARGS = [
    dict(mean=np.float32([10, 20, 30]), std=np.float32([2, 4, 8])),
    dict(mean=list(np.float32([10, 20, 30])), std=tuple(np.float64([2, 4, 8]))),
    dict(mean=[np.float32(10), np.int64(20), 30.0], std=np.float32(4)),
    dict(mean=(10, 20, 30), std=[2, 4, 8], crop=np.float32([3, 3]), scale=np.float32(0.5)),
    dict(mean=np.array([[10, 20, 30]], np.float32).reshape(3), std=[2.0] * 3,
         mirror=np.int32(1), output_layout="CHW"),
]


@pytest.mark.parametrize("k", range(len(CMN_ARGS)))
def test_numpy_arguments_give_dalis_result(dali, k):
    def graph(fn_, types_):
        return fn_.crop_mirror_normalize(image_batch(fn_, types_), dtype=types_.FLOAT,
                                         **CMN_ARGS[k])
    assert_same(run_once(stoker, graph), run_once(dali, graph))


@pytest.mark.parametrize("dtype,want", [
    (np.float32, np.float32), (np.float16, np.float16), (np.dtype("float32"), np.float32),
    (np.uint8, np.uint8), (np.dtype(np.int16), np.int16)])
def test_numpy_dtypes_for_dtype(dali, dtype, want):
    # DALI itself refuses NumPy dtypes ("unbound method generic.item() needs an argument");
    # stoker takes them as the DALIDataType they name, which DALI's result is checked against.
    dali_dtype = dali.types.DALIDataType(int(stoker.types.from_numpy_dtype(want)))
    got = run_once(stoker, lambda fn_, t: fn_.cast(image_batch(fn_, t), dtype=dtype))
    ref = run_once(dali, lambda fn_, t: fn_.cast(image_batch(fn_, t), dtype=dali_dtype))
    assert got[0][0].dtype == want
    assert_same(got, ref)
    with pytest.raises(TypeError):
        run_once(dali, lambda fn_, t: fn_.cast(image_batch(fn_, t), dtype=dtype))


def test_integer_array_for_a_float_list(dali):
    # DALI fails inside run() on an int32 array for a float list ("Calling type does not match
    # buffer data type"); stoker takes the numbers.
    def graph(crop):
        return lambda fn_, t: fn_.crop_mirror_normalize(image_batch(fn_, t), crop=crop,
                                                        dtype=t.FLOAT)
    assert_same(run_once(stoker, graph(np.int32([3, 2]))), run_once(dali, graph([3.0, 2.0])))
    with pytest.raises(RuntimeError, match="Calling type does not match buffer data type"):
        run_once(dali, graph(np.int32([3, 2])))


def test_numpy_dtype_for_external_source_and_random():
    out = run_once(stoker, lambda fn_, t: (
        fn_.external_source(source=lambda: [np.zeros(2, np.int16)] * 2, batch=True,
                            dtype=np.int16),
        fn_.random.uniform(range=np.float32([0, 1]), shape=np.int64([3]), dtype=np.float64)))
    assert out[0][0].dtype == np.int16
    assert out[1][0].dtype == np.float64 and out[1][0].shape == (3,)


def test_per_sample_argument_from_a_data_node(dali):
    def graph(fn_, types_):
        mirror = fn_.external_source(source=lambda: [np.int32(1), np.int32(0)], batch=True)
        angle = fn_.external_source(source=lambda: [np.float32(90), np.float32(-90)],
                                    batch=True)
        imgs = image_batch(fn_, types_)
        return (fn_.crop_mirror_normalize(imgs, mirror=mirror, dtype=types_.UINT8),
                fn_.rotate(imgs, angle=angle, interp_type=types_.INTERP_NN))
    assert_same(run_once(stoker, graph), run_once(dali, graph))


def test_pathlib_paths(jpeg_dir, jpeg_files, tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{p} {lab}\n" for p, lab in jpeg_files[:3]))
    got_root = run_once(stoker,
                        lambda fn_, t: fn_.readers.file(file_root=pathlib.Path(jpeg_dir))[1])
    ref_root = run_once(stoker, lambda fn_, t: fn_.readers.file(file_root=str(jpeg_dir))[1])
    assert_same(got_root, ref_root)
    got_list = run_once(stoker, lambda fn_, t: fn_.readers.file(file_list=listing)[0], 3)
    got_files = run_once(stoker, lambda fn_, t: fn_.readers.file(
        files=[pathlib.Path(p) for p, _ in jpeg_files[:3]])[0], 3)
    want = [np.fromfile(p, np.uint8) for p, _ in jpeg_files[:3]]
    for got in (got_list, got_files):
        for a, b in zip(got[0], want):
            np.testing.assert_array_equal(a, b)


def test_wrong_arguments_keep_clear_errors():
    with pytest.raises(TypeError) as e:
        run_once(stoker, lambda fn_, t: fn_.cast(image_batch(fn_, t), dtype=np.complex64))
    assert re.fullmatch(r"fn\.cast \(test_dali_api\.py:\d+\): " + re.escape(
        "argument 'dtype': NumPy type complex64 has no stoker element type; use one of "
        "stoker.types.DALIDataType (e.g. types.FLOAT) or bool, an integer or a float NumPy type."),
        str(e.value)), str(e.value)
    with pytest.raises(TypeError) as e:
        run_once(stoker, lambda fn_, t: fn_.crop_mirror_normalize(
            image_batch(fn_, t), mean=[np.float32(1), "a", 3]))
    assert re.fullmatch(r"fn\.crop_mirror_normalize \(test_dali_api\.py:\d+\): " + re.escape(
        "argument 'mean': cannot use a value of type 'list' ([1.0, 'a', 3]); expected a number, "
        "a string, or a list of them."), str(e.value)), str(e.value)


# --------------------------------------------------------------- item 11: Pipeline keywords

def test_every_dali_pipeline_keyword_is_accepted(dali):
    theirs = [n for n in inspect.signature(dali.Pipeline.__init__).parameters if n != "self"]
    ours = inspect.signature(stoker.Pipeline.__init__).parameters
    assert [n for n in theirs if n not in ours] == []
    kwargs = dict(exec_dynamic=True, experimental_exec_dynamic=None, stream_policy=None,
                  concurrency=None, py_callback_pickler=None, output_layout=None,
                  bytes_per_sample=1024, set_affinity=True, max_streams=2,
                  default_cuda_stream_priority=0, enable_memory_stats=True, exec_async=False,
                  exec_pipelined=False, prefetch_queue_depth=3)
    for lib in (stoker, dali):
        got = run_once(lib, lambda fn_, t: fn_.external_source(
            source=lambda: [np.int32([1, 2])] * 2, batch=True), **kwargs)
        assert [a.tolist() for a in got[0]] == [[1, 2], [1, 2]]


def test_numpy_integers_for_pipeline_arguments():
    p = Pipeline(batch_size=np.int64(3), num_threads=np.int32(2), device_id=None,
                 seed=np.uint32(5), prefetch_queue_depth=np.int16(1))
    assert (p.batch_size, p.num_threads, p.seed, p.prefetch_queue_depth) == (3, 2, 5, 1)
    assert all(type(v) is int for v in (p.batch_size, p.num_threads, p.seed))
    with pytest.raises(TypeError) as e:
        Pipeline(batch_size=2.0, num_threads=1, device_id=None)
    assert str(e.value) == "Pipeline: batch_size must be an int, got float 2.0."
    with pytest.raises(TypeError) as e:
        Pipeline(batch_size=np.bool_(True), num_threads=1, device_id=None)
    assert str(e.value) == "Pipeline: batch_size must be an int, got bool np.True_."


def _two_outputs(fn_, t):
    return fn_.random.uniform(range=[0, 1], shape=[3]), fn_.random.coin_flip()


@pytest.mark.parametrize("kwargs,ok", [
    (dict(output_dtype=[types.FLOAT, None]), True),
    (dict(output_ndim=[1, 0]), True),
    (dict(output_ndim=1, output_dtype=None), False),
    (dict(output_dtype=[types.INT32, None]), False),
    (dict(output_layout=["X", None]), False),
])
def test_output_descriptions_are_checked_as_dali_does(dali, kwargs, ok):
    dkw = {k: [dali.types.DALIDataType(int(x)) if isinstance(x, types.DALIDataType) else x
               for x in v] if isinstance(v, list) else v for k, v in kwargs.items()}
    if ok:
        run_once(stoker, _two_outputs, **kwargs)
        run_once(dali, _two_outputs, **dkw)
        return
    with pytest.raises((TypeError, ValueError)):
        run_once(stoker, _two_outputs, **kwargs)
    with pytest.raises(RuntimeError):
        run_once(dali, _two_outputs, **dkw)


def test_output_description_messages():
    with pytest.raises(TypeError) as e:
        run_once(stoker, _two_outputs, output_dtype=[types.INT32, None])
    assert str(e.value) == "Pipeline: output 0 has dtype FLOAT, but output_dtype says INT32."
    with pytest.raises(ValueError) as e:
        run_once(stoker, _two_outputs, output_ndim=1)
    assert str(e.value) == "Pipeline: output 1 has 0 dimensions, but output_ndim says 1."
    with pytest.raises(ValueError) as e:
        run_once(stoker, _two_outputs, output_layout=["X", None])
    assert str(e.value) == "Pipeline: output 0 has layout '', but output_layout says 'X'."
    with pytest.raises(ValueError) as e:
        run_once(stoker, _two_outputs, output_ndim=[1])
    assert str(e.value) == ("Pipeline: output_ndim has 1 entries, but the pipeline has 2 "
                            "outputs; give one per output (None: any), or one value for all.")


def _square(sample_info):
    return np.int32([sample_info.idx_in_epoch ** 2])


def test_py_callback_pickler_sends_sources_to_spawned_workers():
    import pickle
    # A module, and DALI's tuple form (pickler, dumps_kwargs, loads_kwargs).
    for pickler in (pickle, (pickle, {"protocol": 2}), (pickle, {}, {"encoding": "ASCII"})):
        @pipeline_def(batch_size=3, num_threads=1, device_id=None, py_num_workers=1,
                      py_start_method="spawn", py_callback_pickler=pickler)
        def pipe():
            return fn.external_source(_square, batch=False, parallel=True)
        p = pipe()
        try:
            assert [a.tolist() for a in p.run()[0]] == [[0], [1], [4]]
        finally:
            p.close()
    with pytest.raises(TypeError) as e:
        pipe = pipeline_def(lambda: fn.external_source(_square, batch=False, parallel=True),
                            batch_size=1, device_id=None, py_start_method="spawn",
                            py_callback_pickler=object())()
        pipe.build()
    assert str(e.value).startswith("Pipeline: py_callback_pickler must have dumps and loads")


# ------------------------------------------------------------- external_source's positionals

def test_external_source_takes_its_source_positionally(dali):
    src = lambda: [np.float32([1, 2]), np.float32([3, 4])]  # noqa: E731
    for lib in (stoker, dali):
        es = lib.ops.ExternalSource(src)

        class P(lib.Pipeline):
            def define_graph(self):
                return es()

        p = P(batch_size=2, num_threads=1, device_id=None)
        p.build()
        assert [np.array(x).tolist() for x in p.run()[0]] == [[1, 2], [3, 4]]
        got = run_once(lib, lambda fn_, t: fn_.external_source(src, batch=True))
        assert [x.tolist() for x in got[0]] == [[1, 2], [3, 4]]
        two = run_once(lib, lambda fn_, t: tuple(fn_.external_source(
            lambda: ([np.int8([1])] * 2, [np.int8([2])] * 2), 2)))
        assert [[x.tolist() for x in o] for o in two] == [[[1], [1]], [[2], [2]]]
    with pytest.raises(TypeError) as e:
        run_once(stoker, lambda fn_, t: fn_.external_source(src, source=src))
    assert str(e.value) == "fn.external_source got multiple values for argument 'source'."
    with pytest.raises(TypeError) as e:
        ops.Resize(1)
    assert str(e.value) == ("ops.Resize takes keyword arguments only, got 1 positional; pass the "
                            "inputs when calling it.")


# ------------------------------------------------------- operators outside a pipeline's scope

MODULE_LEVEL_UNIFORM = ops.random.Uniform(range=[0.0, 1.0])
MODULE_LEVEL_CAST = ops.Cast(dtype=types.INT32)


def test_ops_made_at_module_level_attach_when_called():
    class P(Pipeline):
        def define_graph(self):
            return MODULE_LEVEL_CAST(MODULE_LEVEL_UNIFORM() * 10)

    outs = []
    for _ in range(2):  # the same instances serve two pipelines
        p = P(batch_size=3, num_threads=1, device_id=None, seed=11)
        p.build()
        outs.append([int(x) for x in p.run()[0].as_array()])
    assert outs[0] == outs[1] and all(0 <= x <= 10 for x in outs[0])


def test_fn_outside_a_pipeline_gives_a_node_pipelines_adopt(dali):
    # As in DALI 2.4: fn.* outside any pipeline makes a detached node; each pipeline that uses
    # it (as an input, an argument or an output) takes a copy of what it needs.
    for lib in (stoker, dali):
        data = lib.fn.external_source  # (defined inside: external_source needs its pipeline)
        one = lib.fn.random.coin_flip(probability=1.0)
        two = one + 1

        def graph(fn_, t):
            x = data(source=lambda: [np.float32([1, 2])] * 2, batch=True)
            return x * two, one, fn_.cast(x, dtype=t.INT32) * one

        for _ in range(2):
            got = run_once(lib, graph)
            assert [[a.tolist() for a in o] for o in got] == [
                [[2, 4], [2, 4]], [1, 1], [[1, 2], [1, 2]]]


def test_external_source_outside_a_pipeline_is_refused():
    with pytest.raises(RuntimeError) as e:
        fn.external_source(source=lambda: [np.zeros(1)])
    assert str(e.value) == ("fn.external_source must be called while a pipeline is being "
                            "defined: inside a @pipeline_def function, inside `with pipe:`, or "
                            "in define_graph().")


def test_a_pipeline_returning_a_list_is_an_error(dali):
    def graph(fn_, t):
        return [fn_.random.uniform(range=[0, 1]), fn_.random.uniform(range=[0, 1])]
    with pytest.raises(TypeError) as e:
        run_once(stoker, graph)
    assert str(e.value) == ("Pipeline output 0 is a list of 2 values, not a DataNode: return the "
                            "outputs as a tuple (`return a, b`) or unpack the list (`return "
                            "tuple(outs)`, `set_outputs(*outs)`); as in DALI, a list is not "
                            "expanded into outputs.")
    with pytest.raises(TypeError, match="Missing list/tuple expansion"):
        run_once(dali, graph)
    # define_graph may return a list, in DALI as here.
    for lib in (stoker, dali):
        class P(lib.Pipeline):
            def define_graph(self):
                return [lib.fn.random.uniform(range=[0, 1]), lib.fn.random.coin_flip()]
        p = P(batch_size=2, num_threads=1, device_id=None)
        p.build()
        assert len(p.run()) == 2


# --------------------------------------------------------------------- feed_input's layout

def _fed(lib, declared, fed_layout, data):
    p = lib.Pipeline(batch_size=2, num_threads=1, device_id=None)
    with p:
        kw = {} if declared is None else {"layout": declared}
        p.set_outputs(lib.fn.external_source(name="in", **kw))
    p.build()
    if fed_layout is None:
        p.feed_input("in", data)
    else:
        p.feed_input("in", data, layout=fed_layout)
    return p.run()[0].layout()


@pytest.mark.parametrize("declared,fed,want", [
    ("HWC", "HWC", "HWC"), (None, "CHW", "CHW"), ("HWC", None, "HWC"), ("HWC", "", "HWC"),
    (None, None, "")])
def test_feed_input_layout_as_dali(dali, declared, fed, want):
    data = [np.zeros((2, 3, 1), np.uint8)] * 2
    assert _fed(stoker, declared, fed, data) == want
    assert _fed(dali, declared, fed, data) == want


def test_feed_input_layout_is_checked_when_the_data_arrives(dali):
    data = [np.zeros((2, 3, 1), np.uint8)] * 2
    p = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with p:
        p.set_outputs(fn.external_source(name="in", layout="HWC"))
    p.build()
    with pytest.raises(ValueError) as e:
        p.feed_input("in", data, layout="CHW")
    line = e.value.args[0].split(":")[0] + ":" + e.value.args[0].split(":")[1]
    assert line.startswith("fn.external_source (test_dali_api.py")
    assert str(e.value) == (f"{line}: feed_input got data with layout 'CHW', but the "
                            "external_source declared layout='HWC'; feed 'HWC' data (or leave "
                            "feed_input's layout out)")
    p.feed_input("in", data, layout="HWC")  # the pipeline is still usable
    assert p.run()[0].layout() == "HWC"
    q = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with q:
        q.set_outputs(fn.external_source(name="in"))
    q.build()
    with pytest.raises(ValueError) as e:
        q.feed_input("in", data, layout="HW")
    assert str(e.value).endswith(": feed_input's layout 'HW' has 2 dimensions, but the samples "
                                 "fed have 3")
    # DALI takes the wrong layout and fails inside run(), leaving the pipeline unusable.
    with pytest.raises(RuntimeError, match="Expected data with layout"):
        _fed(dali, "HWC", "CHW", data)


# ------------------------------------------------------------------- ops names and aliases

@needs_dali
def test_ops_classes_exist_where_dali_has_them_for_stokers_operators(dali):
    pairs = [("readers.File", "readers.file"), ("decoders.Image", "decoders.image"),
             ("random.Uniform", "random.uniform"), ("FileReader", "readers.file"),
             ("ImageDecoder", "decoders.image"), ("Uniform", "random.uniform"),
             ("CoinFlip", "random.coin_flip"), ("ExternalSource", "external_source"),
             ("ImageDecoderRandomCrop", "decoders.image_random_crop"),
             ("experimental.decoders.Image", "decoders.image"),
             ("CropMirrorNormalize", "crop_mirror_normalize"), ("PythonFunction", None)]
    for path, op_name in pairs:
        obj = dali.ops
        for p in path.split("."):
            obj = getattr(obj, p)  # DALI has it
        if op_name is None:
            op_name = "python_function"
            if op_name not in stoker._schema.SCHEMAS:
                continue  # stoker has no python_function in this build
        ours = ops
        for p in path.split("."):
            ours = getattr(ours, p)
        assert ours.schema_name == op_name, path


def test_ops_python_function(dali):
    if "python_function" not in stoker._schema.SCHEMAS:
        pytest.skip("this build of stoker has no python_function")
    results = []
    for lib in (stoker, dali):
        double = lib.ops.PythonFunction(function=lambda x: x * 2, num_outputs=1)

        class P(lib.Pipeline):
            def define_graph(self):
                x = lib.fn.external_source(source=lambda: [np.int32([1, 2]), np.int32([3])],
                                           batch=True)
                return double(x)

        p = P(batch_size=2, num_threads=1, device_id=None, exec_async=False,
              exec_pipelined=False)
        p.build()
        results.append([np.array(t).tolist() for t in p.run()[0]])
    assert results[0] == results[1] == [[2, 4], [6]]


def test_legacy_image_decoder_aliases(jpeg_files):
    files = [p for p, _ in jpeg_files[:2]]
    for alias, target, kw in [
            ("image_decoder", "decoders.image", {}),
            ("image_decoder_crop", "decoders.image_crop", dict(crop=(8, 8))),
            ("image_decoder_slice", "decoders.image_slice", None),
            ("image_decoder_random_crop", "decoders.image_random_crop", {})]:
        def graph(fn_, t, name):
            jpegs, _ = fn_.readers.file(files=files)
            f = fn_
            for p in name.split("."):
                f = getattr(f, p)
            if kw is None:
                return f(jpegs, np.float32([0.1, 0.1]), np.float32([0.5, 0.5]))
            return f(jpegs, **kw)
        got = run_once(stoker, lambda fn_, t: graph(fn_, t, alias))
        ref = run_once(stoker, lambda fn_, t: graph(fn_, t, target))
        assert_same(got, ref)
        if _have_dali() and alias != "image_decoder_random_crop":
            import nvidia.dali as d
            import nvidia.dali.fn  # noqa: F401
            import nvidia.dali.types  # noqa: F401
            theirs = run_once(type("D", (), dict(fn=d.fn, types=d.types,
                                                 pipeline_def=d.pipeline_def)),
                              lambda fn_, t: graph(fn_, t, alias))
            assert [a.shape for a in got[0]] == [a.shape for a in theirs[0]]


# ------------------------------------------------------------------------ constants, tensors

def test_scalar_constant(dali):
    def graph(fn_, t):
        x = fn_.external_source(source=lambda: [np.uint8([200, 3])] * 2, batch=True)
        return (x * t.ScalarConstant(2, t.UINT8), x + t.ScalarConstant(1.5),
                x * t.ScalarConstant(np.int16(3)))
    assert_same(run_once(stoker, graph), run_once(dali, graph))
    with pytest.raises(TypeError) as e:
        types.ScalarConstant([1, 2])
    assert str(e.value) == ("types.ScalarConstant: expected a bool, int or float, got list [1, 2]; "
                            "for arrays use types.Constant.")


def test_enums_print_as_dalis(dali):
    for ours, theirs in [(types.FLOAT, dali.types.FLOAT), (types.UINT8, dali.types.UINT8),
                         (types.RGB, dali.types.RGB), (types.INTERP_CUBIC,
                                                       dali.types.INTERP_CUBIC)]:
        assert str(ours) == str(theirs) and f"{ours}" == f"{theirs}"
        assert int(ours) == int(theirs) and ours.name == theirs.name


def _tensors(lib):
    def graph(fn_, t):
        return fn_.external_source(
            source=lambda: [np.arange(6, dtype=np.float32).reshape(2, 3)] * 2, batch=True,
            layout="HW")

    @lib.pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return graph(lib.fn, lib.types)
    p = pipe()
    p.build()
    return p.run()[0]


def test_tensor_objects_answer_dalis_methods(dali):
    ours, theirs = _tensors(stoker), _tensors(dali)
    for get in (lambda tl: tl[0], lambda tl: tl[-1], lambda tl: tl.as_tensor()):
        a, b = get(ours), get(theirs)
        assert a.shape() == b.shape() and a.layout() == b.layout()
        assert a.ndim() == b.ndim()
        assert str(a.dtype if False else a.dali_dtype) == str(b.dtype)
        assert a.dtype == types.FLOAT and a.dtype == np.float32
        np.testing.assert_array_equal(np.array(a), np.array(b))
        np.testing.assert_array_equal(np.from_dlpack(a), np.array(b))
        assert a.as_cpu() is a and a.source_info() == ""
        assert type(a).__name__ == type(b).__name__ == "TensorCPU"
    assert ours.as_tensor().layout() == "NHW"
    assert str(ours.dtype) == str(theirs.dtype) == "DALIDataType.FLOAT"
    assert type(ours.at(0)) is type(theirs.at(0)) is np.ndarray
    # A TensorCPU is also the NumPy array stoker code has always used.
    s = ours[1]
    assert s.shape == (2, 3) and s.ndim == 2 and s.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert (s + 1).sum() == 21 and np.array_equal(s, np.arange(6).reshape(2, 3))
    assert ours.as_cpu() is ours
    np.testing.assert_array_equal(ours.as_cpu().as_array(), theirs.as_cpu().as_array())


def test_source_info_of_a_sample(jpeg_files):
    files = [p for p, _ in jpeg_files[:2]]
    out = run_once(stoker, lambda fn_, t: fn_.readers.file(files=files)[0])
    assert out  # (run_once turns samples into plain arrays; take the tensors themselves)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.readers.file(files=files)[0]
    p = pipe()
    p.build()
    jpegs = p.run()[0]
    assert [jpegs[i].source_info() for i in range(2)] == files


def test_dali_names_under_the_alias():
    # In a child process: aliasing nvidia.dali must not disturb the real DALI of this one.
    code = textwrap.dedent("""
        import stoker, stoker.compat.dali as compat
        compat.install(replace_dali=True)
        from nvidia.dali.backend import TensorCPU, TensorListCPU, TensorGPU, TensorListGPU
        from nvidia.dali.tensors import TensorCPU as T2, TensorListCPU as TL2
        from nvidia.dali.data_node import DataNode
        from nvidia.dali import types
        assert TensorCPU is T2 is stoker.TensorCPU and TensorListCPU is TL2 is stoker.TensorListCPU
        assert TensorGPU is stoker.TensorGPU and TensorListGPU is stoker.TensorListGPU
        assert DataNode is stoker.DataNode
        print(types.ScalarConstant(1).value, "ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "ok"]


# ----------------------------------------------------------------------- iterators' epochs

torch_required = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                    reason="torch is not installed")


def _file_pipe(lib, files, pad, with_jpegs=True):
    @lib.pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, labels = lib.fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                            pad_last_batch=pad, name="Reader")
        return (jpegs, labels) if with_jpegs else labels
    return pipe()


def _drive(it, mode, auto_reset, epochs=3):
    """What a training loop sees: per epoch len(it) and the batches' labels (and, without
    auto_reset, whether next() after the end raises StopIteration again before reset())."""
    log = []
    for _ in range(epochs):
        length = len(it) if it.size > 0 else None
        if mode == "for":
            steps = [[d["label"].reshape(-1).tolist() for d in step] for step in it]
        else:
            steps = []
            while True:
                try:
                    step = next(it)
                except StopIteration:
                    break
                steps.append([d["label"].reshape(-1).tolist() for d in step])
            if not auto_reset:
                try:
                    next(it)
                    steps.append("no StopIteration after the end")
                except StopIteration:
                    pass
                it.reset()
        log.append((length, steps))
    return log


@torch_required
@pytest.mark.filterwarnings("ignore:Please set `reader_name`")
@pytest.mark.parametrize("policy", ["FILL", "DROP", "PARTIAL"])
@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("by", ["reader_name", "size", "size5", "size9"])
@pytest.mark.parametrize("auto_reset", [True, False, "yes", "no"])
@pytest.mark.parametrize("mode", ["for", "next"])
def test_iterator_epochs_as_dalis(jpeg_files, dali, policy, pad, by, auto_reset, mode):
    import nvidia.dali.plugin.pytorch as dali_torch
    from stoker.plugin import pytorch as stoker_torch
    files = [p for p, _ in jpeg_files[:7]]
    kwargs = {"reader_name": dict(reader_name="Reader"), "size": dict(size=7),
              "size5": dict(size=5), "size9": dict(size=9)}[by]
    if by != "reader_name":
        kwargs["last_batch_padded"] = pad
    results = []
    for lib, plug in ((dali, dali_torch), (stoker, stoker_torch)):
        it = plug.DALIGenericIterator(_file_pipe(lib, files, pad, False), ["label"],
                                      last_batch_policy=plug.LastBatchPolicy[policy],
                                      auto_reset=auto_reset, **kwargs)
        results.append(_drive(it, mode, auto_reset in (True, "yes")))
    assert results[1] == results[0]


def _ragged_steps(plug, pipe, tags, policy):
    import torch
    R = plug.DALIRaggedIterator
    it = R(pipe, ["jpegs", "label"], reader_name="Reader", output_types=tags,
           last_batch_policy=plug.LastBatchPolicy[policy])
    out = []
    for step in it:
        j = step[0]["jpegs"]
        if isinstance(j, torch.Tensor):
            assert j.is_sparse
            out.append(("coo", [r.tolist() for r in j.to_dense()]))
        else:
            out.append(("list", [t.tolist() for t in j]))
        out.append(("label", step[0]["label"].tolist()))
    return out


@torch_required
@pytest.mark.parametrize("policy", ["FILL", "PARTIAL"])
def test_ragged_iterator_as_dalis(jpeg_files, dali, policy):
    import nvidia.dali.plugin.pytorch as dali_torch
    from stoker.plugin import pytorch as stoker_torch
    files = [p for p, _ in jpeg_files[:5]]
    R = stoker_torch.DALIRaggedIterator
    for tags in ([R.SPARSE_LIST_TAG, R.DENSE_TAG], [R.SPARSE_COO_TAG, R.DENSE_TAG]):
        got = _ragged_steps(stoker_torch, _file_pipe(stoker, files, False), tags, policy)
        if tags[0] == R.SPARSE_COO_TAG and policy == "PARTIAL":
            # DALI slices the sparse tensor of the whole batch, which torch cannot do
            # (NotImplementedError: aten::as_strided on SparseCPU); stoker builds it from the
            # samples kept. Its rows are the bytes of the files, zero-padded.
            with pytest.raises(NotImplementedError):
                _ragged_steps(dali_torch, _file_pipe(dali, files, False), tags, policy)
            data = [np.fromfile(f, np.uint8).tolist() for f in files]
            want = []
            for k in range(0, 5, 2):
                rows = data[k:k + 2]
                width = max(map(len, rows))
                want += [("coo", [r + [0] * (width - len(r)) for r in rows]),
                         ("label", [[k + 1 + i] for i in range(len(rows))])]
            assert got == want
            continue
        assert got == _ragged_steps(dali_torch, _file_pipe(dali, files, False), tags, policy)


@torch_required
def test_ragged_iterator_errors(jpeg_files):
    from stoker.plugin import pytorch as stoker_torch
    files = [p for p, _ in jpeg_files[:5]]
    with pytest.raises(ValueError) as e:
        stoker_torch.DALIRaggedIterator(_file_pipe(stoker, files, False), ["jpegs", "label"],
                                        reader_name="Reader")
    assert str(e.value).startswith("StokerRaggedIterator: output 'jpegs' is marked dense, but its "
                                   "samples have different shapes")
    with pytest.raises(ValueError) as e:
        stoker_torch.DALIRaggedIterator(_file_pipe(stoker, files, False), ["jpegs", "label"],
                                        reader_name="Reader", output_types=["dense", "coo"])
    assert str(e.value) == ("StokerRaggedIterator: output_types may hold only DENSE_TAG ('dense'), "
                            "SPARSE_LIST_TAG ('sparse_list') and SPARSE_COO_TAG ('sparse_coo'), "
                            "got 'coo'.")


def test_scalar_constant_conversions_and_to_dali_type():
    c = types.Constant(15)
    assert c.dtype == types.INT32
    for name, t in [("float32", types.FLOAT), ("uint8", types.UINT8), ("int64", types.INT64),
                    ("float16", types.FLOAT16), ("bool", types.BOOL), ("uint64", types.UINT64)]:
        d = getattr(c, name)()
        assert isinstance(d, types.ScalarConstant) and d.dtype == t and d.value == 15
    assert types.to_dali_type("uint8") == types.UINT8
    assert types.to_dali_type(np.float32) == types.FLOAT
    assert types.to_dali_type(np.dtype("int16")) == types.INT16
    assert types.to_dali_type("double") == types.FLOAT64
    with pytest.raises(TypeError, match=r"^'complex64' could not be converted into any known "
                                        r"DALIDataType\.$"):
        types.to_dali_type("complex64")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [np.array([1, 2], np.uint8)] * 2)
        return x + types.Constant(300).uint16(), x - types.Constant(2.7).int32()

    p = pipe()
    p.build()
    a, b = p.run()
    assert a.dtype == types.UINT16 and np.asarray(a[0]).tolist() == [301, 302]
    assert b.dtype == types.INT32 and np.asarray(b[0]).tolist() == [-1, 0]  # 2.7 as int32 is 2


def test_input_sets_run_the_operator_once_per_node():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        a = fn.external_source(source=lambda: [np.full((2, 3), 1, np.int32)] * 2, layout="HW")
        b = fn.external_source(source=lambda: [np.full((4, 3), 2, np.int32)] * 2, layout="HW")
        flipped = fn.flip([a, b], horizontal=0, vertical=1)
        assert isinstance(flipped, list) and len(flipped) == 2
        shapes = [n.shape() for n in flipped]
        return tuple(flipped) + tuple(shapes) + (a.source_info(), a.property("layout"))

    p = pipe()
    p.build()
    fa, fb, sa, sb, src, layout = p.run()
    assert np.asarray(fa[0]).tolist() == [[1] * 3] * 2 and np.asarray(fb[0]).shape == (4, 3)
    assert np.asarray(sa[0]).tolist() == [2, 3] and np.asarray(sb[1]).tolist() == [4, 3]
    assert np.asarray(sa[0]).dtype == np.int64
    assert bytes(np.asarray(layout[0])) == b"HW" and np.asarray(src[0]).size == 0

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def uneven():
        a = fn.external_source(source=lambda: [np.zeros(1)] * 2)
        return fn.cat([a, a], [a], axis=0)

    with pytest.raises(ValueError, match=r"^fn\.cat: the inputs given as lists of DataNodes \(input "
                                         r"sets\) must have the same length, got lengths \[1, 2\]\.$"):
        uneven()
