"""fn.python_function, fn.dl_tensor_python_function and their ops.* classes: against NumPy on
real photos, against DALI 2.4 on the same inputs, and their errors whole."""
import pathlib
import traceback

import numpy as np
import pytest

from _dali_ref import assert_same_outputs, line_of as _line_of, real_dali as _dali, run_outputs
from stoker import fn, ops, pipeline_def, types

IMAGENET = pathlib.Path(__file__).resolve().parents[3] / "shared" / "testdata" / "imagenet-sample"
HERE = pathlib.Path(__file__).name


def _photos(n):
    from PIL import Image
    files = sorted(IMAGENET.rglob("*.jpg"))[:n]
    if len(files) < n:
        pytest.skip("imagenet-sample not found")
    return [np.asarray(Image.open(f).convert("RGB")) for f in files]


def _run(lib, build, datas, layouts=None, threads=2, iterations=1):
    """build(fn, *external_sources) -> node(s), fed `datas` (one list of arrays per input);
    per iteration, per output: ([samples], layout, dtype)."""
    fn_, _, pdef = lib
    layouts = layouts or [None] * len(datas)

    @pdef(batch_size=len(datas[0]), num_threads=threads, device_id=None, seed=3)
    def pipe():
        xs = [fn_.external_source(source=(lambda d: lambda: d)(d), layout=l) for d, l in zip(datas, layouts)]
        out = build(fn_, *xs)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    p = pipe()
    return run_outputs(p, iterations)


def _same_as_dali(build, datas, layouts=None):
    mine = _run((fn, types, pipeline_def), build, datas, layouts)
    ref = _run(_dali(), build, datas, layouts)
    assert_same_outputs(mine, ref)
    return mine


# ---------------------------------------------------------------- values, against NumPy

def test_per_sample_on_photos_matches_numpy():
    photos = _photos(5)

    def gray_and_mean(img):
        g = (img.astype(np.float32) @ np.float32([0.299, 0.587, 0.114])).astype(np.uint8)
        return g, np.float64(img.mean())  # a 0-d float64 output

    (grays, gl, gt), (means, ml, mt) = _run(
        (fn, types, pipeline_def),
        lambda fn_, x: fn_.python_function(x, function=gray_and_mean, num_outputs=2,
                                           output_layouts=["HW"]),
        [photos], ["HWC"])
    assert (gl, gt, ml, mt) == ("HW", np.uint8, "", np.float64)
    for img, g, m in zip(photos, grays, means):
        want_g, want_m = gray_and_mean(img)
        np.testing.assert_array_equal(g, want_g)
        assert m.shape == () and m == want_m


def test_batch_processing_gets_lists_and_returns_lists():
    photos = _photos(4)
    seen = []

    def flip_all(images, extra):
        seen.append((type(images), len(images), type(extra)))
        return [img[:, ::-1] for img in images], [np.int32(len(images))] * len(images)

    (flipped, fl, ft), (count, _, ct) = _run(
        (fn, types, pipeline_def),
        lambda fn_, x: fn_.python_function(x, x, function=flip_all, num_outputs=2,
                                           batch_processing=True, output_layouts=["HWC"]),
        [photos], ["HWC"])
    assert seen[0] == (list, 4, list)
    assert (fl, ft, ct) == ("HWC", np.uint8, np.int32)
    for img, f in zip(photos, flipped):
        np.testing.assert_array_equal(f, img[:, ::-1])
    assert [int(c) for c in count] == [4] * 4


def test_outputs_of_any_kind_np_asarray_takes():
    data = [np.arange(6, dtype=np.uint8).reshape(2, 3) + i for i in range(3)]
    cases = [
        (lambda a: a > 3, np.bool_, (2, 3)),
        (lambda a: a.astype(np.float16), np.float16, (2, 3)),
        (lambda a: a.astype(np.uint64) * 2**40, np.uint64, (2, 3)),
        (lambda a: int(a.sum()), np.int64, ()),         # a Python int: 0-d int64
        (lambda a: [1.5, 2.5], np.float64, (2,)),       # a list
        (lambda a: a.T, np.uint8, (3, 2)),              # not contiguous
        (lambda a: a.astype(">i4"), np.int32, (2, 3)),  # big-endian
    ]
    for func, dtype, shape in cases:
        [(samples, layout, dt)] = _run((fn, types, pipeline_def),
                                       lambda fn_, x: fn_.python_function(x, function=func),
                                       [data])
        assert dt == dtype and layout == ""
        for a, d in zip(samples, data):
            assert a.shape == shape
            np.testing.assert_array_equal(a, np.asarray(func(d)).astype(dtype))


def test_inputs_are_copies_the_function_may_write():
    data = [np.full((2, 2), i, np.int32) for i in range(3)]

    def scribble(a):
        a += 100
        return a

    (out, _, _), (orig, _, _) = _run(
        (fn, types, pipeline_def),
        lambda fn_, x: (fn_.python_function(x, function=scribble), x), [data])
    for o, g, d in zip(out, orig, data):
        np.testing.assert_array_equal(o, d + 100)
        np.testing.assert_array_equal(g, d)  # the input itself did not change


def test_no_inputs_and_unused_outputs_still_run():
    calls = []

    def source():
        calls.append(1)
        return np.zeros(2, np.float32)

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, exec_async=False)
    def pipe():
        fn.python_function(function=lambda: calls.append("side") or np.int8(1))  # output unused
        return fn.python_function(function=source)

    p = pipe()
    (out,) = p.run()
    assert len(out) == 3 and out.as_array().shape == (3, 2)
    assert calls.count(1) == 3 and calls.count("side") == 3  # never pruned, as in DALI


def test_dl_tensor_python_function_passes_capsules():
    data = [np.arange(4, dtype=np.float32) + i for i in range(3)]
    kinds = []

    class Wrap:  # np.from_dlpack takes objects with __dlpack__, not bare capsules
        def __init__(self, c):
            self.c = c

        def __dlpack__(self, stream=None, **kw):
            return self.c

        def __dlpack_device__(self):
            return (1, 0)

    def double(caps):
        kinds.append((type(caps).__name__, type(caps[0]).__name__))
        return [(np.from_dlpack(Wrap(c)) * 2).__dlpack__() for c in caps]

    def plus_one(c):
        kinds.append(type(c).__name__)
        return np.from_dlpack(Wrap(c)) + 1  # an array back is taken too

    (d, _, _), (p1, _, _) = _run(
        (fn, types, pipeline_def),
        lambda fn_, x: (fn_.dl_tensor_python_function(x, function=double),
                        fn_.dl_tensor_python_function(x, function=plus_one,
                                                      batch_processing=False)),
        [data])
    assert kinds[0] == ("list", "PyCapsule") and kinds[1] == "PyCapsule"
    for a, b, x in zip(d, p1, data):
        np.testing.assert_array_equal(a, x * 2)
        np.testing.assert_array_equal(b, x + 1)


def test_ops_python_function_classes():
    data = [np.arange(4, dtype=np.int16) + i for i in range(2)]
    add = ops.PythonFunction(lambda a, b: (a + b, a - b), 2)  # positional, as DALI takes them
    dl = ops.DLTensorPythonFunction(function=lambda caps: caps)
    [(s, _, _), (d, _, _), (same, _, _)] = _run(
        (fn, types, pipeline_def), lambda fn_, x: (*add(x, x), dl(x)), [data])
    for a, b, c, x in zip(s, d, same, data):
        np.testing.assert_array_equal(a, 2 * x)
        np.testing.assert_array_equal(b, 0 * x)
        np.testing.assert_array_equal(c, x)


# ---------------------------------------------------------------- against DALI

def test_same_as_dali_per_sample_and_batch():
    photos = _photos(4)

    def per_sample(img):
        return (img[::2, ::2, ::-1].copy(), np.int32([img.shape[0]]))  # DALI takes no 0-d

    def per_batch(images):
        return [np.clip(img.astype(np.int16) * 2 - 100, 0, 255).astype(np.uint8)
                for img in images]

    _same_as_dali(lambda fn_, x: (
        *fn_.python_function(x, function=per_sample, num_outputs=2, output_layouts=["HWC"]),
        fn_.python_function(x, function=per_batch, batch_processing=True)),
        [photos], ["HWC"])


def test_same_as_dali_dl_tensor():
    torch = pytest.importorskip("torch")
    import torch.utils.dlpack as tud
    data = [np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1) for i in range(3)]

    def f(caps):
        return [tud.to_dlpack(tud.from_dlpack(c).flip(0) + 1) for c in caps]

    _same_as_dali(lambda fn_, x: fn_.dl_tensor_python_function(x, function=f), [data])


# ---------------------------------------------------------------- errors

def _pipe_with(func, data=None, **kw):
    data = data or [np.arange(3, dtype=np.int32) + i for i in range(3)]

    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: data)
        out = fn.python_function(x, function=func, **kw)
        return tuple(out) if isinstance(out, list) else out
    return pipe()


def test_exception_keeps_type_traceback_and_names_line_and_sample():
    def helper(a):
        if a[0] == 1:
            raise KeyError("no such key")
        return a

    def user_function(a):
        return helper(a)

    p = _pipe_with(user_function)
    line = _line_of("fn.python_function(x, function=func", _pipe_with)
    with pytest.raises(KeyError) as e:
        p.run()
    assert e.value.args[0] == (f"fn.python_function ({HERE}:{line}): the function raised "
                               "KeyError for sample 1: 'no such key'")
    cause = e.value.__cause__
    assert isinstance(cause, KeyError) and cause.args == ("no such key",)
    frames = [f.name for f in traceback.extract_tb(cause.__traceback__)]
    assert frames[-2:] == ["user_function", "helper"]
    # The pipeline goes on: the next batch fails the same way, no hang, no crash.
    with pytest.raises(KeyError):
        p.run()


def test_exception_in_batch_mode_and_of_odd_types():
    class Odd(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    def boom(batch):
        raise Odd(1, 2)

    p = _pipe_with(boom, batch_processing=True)
    line = _line_of("fn.python_function(x, function=func", _pipe_with)
    with pytest.raises(RuntimeError) as e:
        p.run()
    assert str(e.value) == (f"fn.python_function ({HERE}:{line}): the function raised Odd with "
                            "the whole batch (batch_processing=True): (1, 2)")
    assert isinstance(e.value.__cause__, Odd)


@pytest.mark.parametrize("func,kw,exc,text", [
    (lambda a: None, {}, TypeError,
     "the function returned None (the result for sample 0); it must return an array "
     "(num_outputs=1)"),
    (lambda a: (a, a, a), {"num_outputs": 2}, ValueError,
     "the function returned a tuple of 3 outputs (the result for sample 0), but num_outputs=2"),
    (lambda a: [a, a], {"num_outputs": 2}, TypeError,
     "with num_outputs=2 the function must return a tuple of 2 outputs, got list (the result "
     "for sample 0)"),
    (lambda a: a if a[0] == 0 else a.astype(np.float32), {}, TypeError,
     "the samples of output 0 must share dtype and number of dimensions; sample 0 is int32 (3,), "
     "sample 1 is float32 (3,)"),
    (lambda a: a.astype(np.complex64), {}, TypeError,
     "output 0 of sample 0 has dtype complex64, which stoker has no type for; return bool, "
     "integer or float data"),
    (lambda a: object(), {}, TypeError,
     "output 0 of sample 0 has dtype object, which stoker has no type for; return bool, "
     "integer or float data"),
    (lambda b: b[:2], {"batch_processing": True}, ValueError,
     "output 0 has 2 samples, but the batch has 3; return one sample per sample of the inputs"),
    (lambda b: 7, {"batch_processing": True}, TypeError,
     "with batch_processing=True the function returns a list of samples per output, got int "
     "for output 0"),
    (lambda a: a, {"output_layouts": "HW"}, ValueError,
     "argument 'output_layouts' gives output 0 the layout 'HW' (2 dimensions), but the "
     "function returned 1-d samples (sample 0 has shape (3,))"),
])
def test_wrong_results_name_the_operator(func, kw, exc, text):
    p = _pipe_with(func, **kw)
    line = _line_of("fn.python_function(x, function=func", _pipe_with)
    with pytest.raises(exc) as e:
        p.run()
    assert str(e.value) == f"fn.python_function ({HERE}:{line}): {text}"


def test_definition_errors():
    with pytest.raises(TypeError) as e:
        _pipe_with(3)
    line = _line_of("fn.python_function(x, function=func", _pipe_with)
    assert str(e.value) == (f"fn.python_function ({HERE}:{line}): 'function' must be a "
                            "callable, got int")
    with pytest.raises(ValueError) as e:
        _pipe_with(lambda a: a, num_outputs=0)
    assert str(e.value) == (f"fn.python_function ({HERE}:{line}): num_outputs must be a positive "
                            "int, got 0")
    with pytest.raises(ValueError) as e:
        _pipe_with(lambda a: a, output_layouts=["A", "B"])
    assert str(e.value) == (f"fn.python_function ({HERE}:{line}): output_layouts has 2 layouts "
                            "for num_outputs=1")
    with pytest.raises(RuntimeError) as e:
        fn.python_function(function=lambda: 1)
    line = _line_of("fn.python_function(function=lambda: 1)", test_definition_errors)
    assert str(e.value) == (
        f"fn.python_function ({HERE}:{line}): python_function must be called while a pipeline "
        "is being defined: inside a @pipeline_def function, inside `with pipe:`, or in "
        "define_graph() (its function belongs to one pipeline).")


def test_pipeline_goes_away_with_its_function():
    import gc
    import weakref

    class Big:
        def __call__(self, a):
            return a

    f = Big()
    ref = weakref.ref(f)
    p = _pipe_with(f)
    p.run()
    del p, f
    gc.collect()
    assert ref() is None
