"""stoker.plugin.numba's numba_function: against NumPy, against DALI 2.4's own numba_function
(CPU) where its plugin imports, on real photos through readers.file and decoders.image, and its
errors whole."""
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from _dali_ref import assert_same_outputs, line_of, real_dali, run
from stoker import fn, pipeline_def, types
from stoker.plugin.numba.fn.experimental import numba_function

HERE = pathlib.Path(__file__).name


@pytest.fixture(autouse=True)
def _needs_numba(request):
    # The tests of errors that come before numba is imported run without it.
    if not request.node.name.startswith(_WITHOUT_NUMBA):
        pytest.importorskip("numba")


_WITHOUT_NUMBA = ("test_definition_errors", "test_without_numba_it_says_what_to_install",
                  "test_outside_a_pipeline")


def _stoker():
    return fn, types, pipeline_def, numba_function


def _dali():
    dfn, dtypes, pdef = real_dali()
    try:
        from nvidia.dali.plugin.numba.fn.experimental import numba_function as dnf
    except Exception as e:  # noqa: BLE001 (the plugin needs numba and numba.cuda)
        pytest.skip(f"DALI's numba plugin does not import here: {e}")
    return dfn, dtypes, pdef, dnf


def _run(lib, build, datas, iterations=1):
    """build(numba_function, types, *inputs) -> node(s), fed `datas` through external_source;
    per output: ([samples], layout, dtype name)."""
    fn_, types_, pdef, nf = lib
    return run((fn_, types_, pdef), lambda f, t, *xs: build(nf, t, *xs), datas,
               iterations=iterations)


def _both(build, datas, iterations=1):
    """stoker's outputs, checked equal to DALI's numba_function (values, shapes, dtypes,
    layouts) where DALI's plugin imports."""
    mine = _run(_stoker(), build, datas, iterations)
    try:
        lib = _dali()
    except pytest.skip.Exception:
        return mine
    ref = _run(lib, build, datas, iterations)
    for m, r in (zip(mine, ref) if iterations > 1 else [(mine, ref)]):
        assert_same_outputs(m, r)
    return mine


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, s).astype(dtype) for s in shapes]


# ---- functions numba compiles (module level, as DALI's docs advise)

def _transpose_setup(outs, ins):
    for i in range(len(outs[0])):
        outs[0][i][0] = ins[0][i][1]
        outs[0][i][1] = ins[0][i][0]
        outs[0][i][2] = ins[0][i][2]


def _transpose_sample(out0, in0):
    for y in range(in0.shape[0]):
        for x in range(in0.shape[1]):
            out0[x, y] = in0[y, x]


def _transpose_batch(outs0, ins0):
    for out0, in0 in zip(outs0, ins0):
        for y in range(in0.shape[0]):
            for x in range(in0.shape[1]):
                out0[x, y] = in0[y, x]


def _half_setup(outs, ins):
    for i in range(len(outs[0])):
        outs[0][i][0] = ins[0][i][0] // 2
        outs[0][i][1] = ins[0][i][1] // 2


def _crop_minus_batch_min(outs0, ins0):
    lo = ins0[0][0, 0]
    for out0, in0 in zip(outs0, ins0):   # (DALI's lists type only through zip)
        lo = min(lo, in0.min())
    for out0, in0 in zip(outs0, ins0):
        for y in range(out0.shape[0]):
            for x in range(out0.shape[1]):
                out0[y, x] = in0[y, x] - lo


def _three_outputs_setup(outs, ins):
    for i in range(len(outs[0])):
        for d in range(3):
            outs[0][i][d] = ins[0][i][d]
        outs[1][i][0] = 1
        outs[2][i][0] = ins[0][i][0]
        outs[2][i][1] = ins[0][i][1]


def _scale_sum_mask(scaled, total, mask, image, scale):
    s = 0
    for y in range(image.shape[0]):
        for x in range(image.shape[1]):
            for c in range(image.shape[2]):
                scaled[y, x, c] = image[y, x, c] * scale[c]
                s += image[y, x, c]
            mask[y, x] = image[y, x, 0] > 128
    total[0] = s


def _double_and_sqrt(out0, out1, in0, in1):
    for i in range(in0.shape[0]):
        out0[i] = in0[i] * 2
    for y in range(in1.shape[0]):
        for x in range(in1.shape[1]):
            out1[y, x] = np.sqrt(in1[y, x])


def _double_and_sqrt_batch(outs0, outs1, ins0, ins1):
    for k in range(len(ins0)):
        for i in range(ins0[k].shape[0]):
            outs0[k][i] = ins0[k][i] * 2
        for y in range(ins1[k].shape[0]):
            for x in range(ins1[k].shape[1]):
                outs1[k][y, x] = np.sqrt(ins1[k][y, x])


def _reverse(out0, in0):
    n = in0.shape[0]
    for i in range(n):
        out0[i] = in0[n - 1 - i]


def _gray_setup(outs, ins):
    for i in range(len(outs[0])):
        outs[0][i][0] = ins[0][i][0]
        outs[0][i][1] = ins[0][i][1]


def _gray(out0, in0):
    for y in range(in0.shape[0]):
        for x in range(in0.shape[1]):
            out0[y, x] = (77 * in0[y, x, 0] + 150 * in0[y, x, 1] + 29 * in0[y, x, 2]) >> 8


def _negate(out0, in0):
    for i in range(in0.shape[0]):
        if in0[i] == 13:
            raise ValueError("13 is unlucky")
        out0[i] = -in0[i]


def _negate_batch(outs0, ins0):
    for out0, in0 in zip(outs0, ins0):
        for i in range(in0.shape[0]):
            if in0[i] == 13:
                raise ValueError("13 is unlucky")
            out0[i] = -in0[i]


def _setup_that_raises(outs, ins):
    raise ValueError("no shapes today")


def _negative_setup(outs, ins):
    for i in range(len(outs[0])):
        outs[0][i][0] = 2 - i * 3


def _fill_ones(out0, in0):
    out0[:] = 1


def _uncompilable(out0, in0):
    out0[:] = in0.no_such_attribute


def _numpy_gray(img):
    r, g, b = (img[..., c].astype(np.int64) for c in range(3))
    return ((77 * r + 150 * g + 29 * b) >> 8).astype(np.uint8)


# ---- results

@pytest.mark.parametrize("batch_processing", [False, True])
def test_setup_fn_transposes(batch_processing):
    data = _images([(10, 20, 3), (7, 5, 3), (1, 1, 3), (4, 9, 3)])
    run_fn = _transpose_batch if batch_processing else _transpose_sample

    def build(nf, t, x):
        return nf(x, run_fn=run_fn, setup_fn=_transpose_setup, out_types=[t.UINT8],
                  in_types=[t.UINT8], outs_ndim=[3], ins_ndim=[3],
                  batch_processing=batch_processing)

    [(samples, layout, dtype)] = _both(build, [data], iterations=2)[1]
    assert (layout, dtype) == ("", "uint8")
    for got, a in zip(samples, data):
        np.testing.assert_array_equal(got, a.transpose(1, 0, 2))


def test_batch_processing_crops_and_uses_the_whole_batch():
    data = _images([(9, 12), (6, 6), (3, 5)], dtype=np.int32, seed=1)
    data = [a - 300 * i for i, a in enumerate(data)]   # the minimum is in the last sample

    def build(nf, t, x):
        return nf(x, run_fn=_crop_minus_batch_min, setup_fn=_half_setup, out_types=[t.FLOAT],
                  in_types=[t.INT32], outs_ndim=[2], ins_ndim=[2], batch_processing=True)

    [(samples, _, dtype)] = _both(build, [data])
    lo = min(a.min() for a in data)
    assert dtype == "float32" and lo < -300
    for got, a in zip(samples, data):
        h, w = a.shape
        want = (a[:h // 2, :w // 2] - lo).astype(np.float32)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_two_inputs_three_outputs_of_other_types():
    images = _images([(5, 7, 3), (8, 2, 3), (1, 3, 3)], seed=2)
    scales = [np.array([0.5, 2.0, -1.25], np.float32) * (i + 1) for i in range(3)]

    def build(nf, t, img, scale):
        return nf(img, scale, run_fn=_scale_sum_mask, setup_fn=_three_outputs_setup,
                  out_types=[t.FLOAT, t.INT64, t.BOOL], in_types=[t.UINT8, t.FLOAT],
                  outs_ndim=[3, 1, 2], ins_ndim=[3, 1])

    (scaled, _, t0), (total, _, t1), (mask, _, t2) = _both(build, [images, scales])
    assert (t0, t1, t2) == ("float32", "int64", "bool")
    for k, (img, scale) in enumerate(zip(images, scales)):
        np.testing.assert_array_equal(scaled[k], img.astype(np.float32) * scale)
        np.testing.assert_array_equal(total[k], [img.astype(np.int64).sum()])
        np.testing.assert_array_equal(mask[k], img[..., 0] > 128)


@pytest.mark.parametrize("batch_processing", [False, True])
def test_without_setup_fn_outputs_have_the_inputs_shapes(batch_processing):
    ints = [np.arange(n, dtype=np.int16) - 3 for n in (4, 1, 9)]
    floats = [np.arange(4, dtype=np.float64).reshape(2, 2) * 1.5,
              np.full((3, 1), 2.0), np.zeros((0, 4))]
    run_fn = _double_and_sqrt_batch if batch_processing else _double_and_sqrt

    def build(nf, t, a, b):
        return nf(a, b, run_fn=run_fn, out_types=[t.INT16, t.FLOAT64],
                  in_types=[t.INT16, t.FLOAT64], outs_ndim=[1, 2], ins_ndim=[1, 2],
                  batch_processing=batch_processing)

    (doubled, _, t0), (roots, _, t1) = _both(build, [ints, floats])
    assert (t0, t1) == ("int16", "float64")
    for k in range(3):
        np.testing.assert_array_equal(doubled[k], ints[k] * 2)
        assert roots[k].shape == floats[k].shape
        np.testing.assert_array_equal(roots[k], np.sqrt(floats[k]))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.uint32, np.int64, np.uint64,
                                   np.float32, np.float64])
def test_every_type(dtype):
    rng = np.random.default_rng(3)
    kind = np.dtype(dtype).kind
    high = {"b": 2, "f": 1000}.get(kind, 120)
    data = [rng.integers(0, high, n).astype(dtype) for n in (5, 1, 3)]
    if kind == "f":
        data = [a * dtype(0.37) - 100 for a in data]
    t_name = types.from_numpy_dtype(dtype).name

    def build(nf, t, x):
        return nf(x, run_fn=_reverse, out_types=[getattr(t, t_name)],
                  in_types=[getattr(t, t_name)], outs_ndim=[1], ins_ndim=[1])

    [(samples, _, name)] = _both(build, [data])
    assert name == np.dtype(dtype).name
    for got, a in zip(samples, data):
        np.testing.assert_array_equal(got, a[::-1])


def test_real_photos_from_the_file_reader(jpeg_dir):
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(jpeg_dir))
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        gray = numba_function(images, run_fn=_gray, setup_fn=_gray_setup,
                              out_types=[types.UINT8], in_types=[types.UINT8], outs_ndim=[2],
                              ins_ndim=[3])
        return images, gray

    p = pipe()
    p.build()
    for _ in range(2):
        images, gray = p.run()
        for i in range(len(images)):
            img = np.array(images[i])
            assert img.ndim == 3 and img.shape[2] == 3 and min(img.shape[:2]) > 100
            np.testing.assert_array_equal(np.array(gray[i]), _numpy_gray(img))


def test_ops_class_and_a_function_numba_decorated_already():
    import numba

    from stoker.plugin.numba import NumbaFunction
    data = [np.arange(n, dtype=np.int32) for n in (3, 6)]
    op = NumbaFunction(run_fn=numba.njit(_reverse), out_types=types.INT32,
                       in_types=types.INT32, outs_ndim=1, ins_ndim=1)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: data, batch=True)
        return op(x), op(op(x))

    once, twice = pipe().run()
    for i, a in enumerate(data):
        np.testing.assert_array_equal(np.array(once[i]), a[::-1])
        np.testing.assert_array_equal(np.array(twice[i]), a)


def test_blocks_and_threads_per_block_are_accepted_on_the_cpu():
    data = [np.arange(4, dtype=np.int32)]

    def build(nf, t, x):
        return nf(x, run_fn=_reverse, out_types=[t.INT32], in_types=[t.INT32], outs_ndim=[1],
                  ins_ndim=[1], blocks=[1, 1, 1], threads_per_block=[32, 1, 1])

    [(samples, _, _)] = _both(build, [data])
    np.testing.assert_array_equal(samples[0], [3, 2, 1, 0])


def test_in_a_conditional_branch_errors_name_the_sample_in_the_whole_batch():
    data = [np.array([i, 20 + i], np.int32) for i in range(4)]

    def make(values):
        @pipeline_def(batch_size=4, num_threads=1, device_id=None, enable_conditionals=True)
        def pipe():
            x = fn.external_source(source=lambda: values, batch=True)
            if x[0] >= 2:
                y = numba_function(x, run_fn=_negate, out_types=[types.INT32],
                                   in_types=[types.INT32], outs_ndim=[1], ins_ndim=[1])
            else:
                y = x + 0
            return y
        return pipe()

    (out,) = make(data).run()
    for i, a in enumerate(data):
        np.testing.assert_array_equal(np.array(out[i]), -a if i >= 2 else a)
    # Sample 3 holds 13 and is the second sample its branch sees.
    bad = [a.copy() for a in data]
    bad[3][1] = 13
    line = line_of("y = numba_function(x, run_fn=_negate", make)
    with pytest.raises(ValueError) as e:
        make(bad).run()
    assert str(e.value) == (f"numba_function ({HERE}:{line}): run_fn raised ValueError for "
                            "sample 3: 13 is unlucky")


# ---- compat: DALI code, unchanged

def test_dali_import_paths_resolve_to_stoker_under_compat():
    # In a child process: aliasing nvidia.dali here would drop the real DALI this file compares
    # against.
    script = textwrap.dedent("""
        import numpy as np
        import stoker, stoker.compat.dali as compat
        compat.install(replace_dali=True)
        from nvidia.dali import pipeline_def, fn, types
        from nvidia.dali.plugin.numba.fn.experimental import numba_function
        import nvidia.dali.plugin.numba as plugin
        import nvidia.dali.plugin.numba.fn
        import nvidia.dali.plugin.numba.experimental
        import stoker.plugin.numba as mine
        assert numba_function is mine.fn.numba_function
        assert nvidia.dali.plugin.numba.fn.numba_function is mine.fn.numba_function
        assert plugin is mine
        assert nvidia.dali.plugin.numba.experimental.NumbaFunction is mine.NumbaFunction

        def run_fn(out0, in0):
            out0[:] = in0 * 3

        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def pipe():
            x = fn.external_source(source=lambda: [np.arange(3, dtype=np.int32)] * 2, batch=True)
            return numba_function(x, run_fn=run_fn, out_types=[types.INT32],
                                  in_types=[types.INT32], outs_ndim=[1], ins_ndim=[1])

        (out,) = pipe().run()
        print(type(out).__module__, [np.array(out[i]).tolist() for i in range(len(out))])
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(
        __import__("stoker").__file__)), env.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0].startswith("stoker")
    assert r.stdout.strip().endswith("[[0, 3, 6], [0, 3, 6]]")


# ---- errors

def _define(**kw):
    data = [np.arange(4, dtype=np.uint8)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: data, batch=True)
        return numba_function(x, **kw)
    return pipe()


_OK = dict(run_fn=_reverse, out_types=[types.UINT8], in_types=[types.UINT8], outs_ndim=[1],
           ins_ndim=[1])

_DEFINITION_ERRORS = [
    (dict(device="gpu"), ValueError,
     "stoker's numba_function runs on the CPU only for now; device='gpu' (and "
     "blocks/threads_per_block, which only the GPU backend uses) is not supported. Use "
     "device='cpu' with CPU inputs."),
    (dict(device="gpu", blocks=[4, 1, 1], threads_per_block=[32, 1, 1]), ValueError,
     "stoker's numba_function runs on the CPU only for now; device='gpu' (and "
     "blocks/threads_per_block, which only the GPU backend uses) is not supported. Use "
     "device='cpu' with CPU inputs."),
    (dict(run_fn=None), TypeError, "the argument 'run_fn' is required"),
    (dict(run_fn=3), TypeError, "run_fn must be a function, got int"),
    (dict(setup_fn="shape"), TypeError, "setup_fn must be a function or None, got str"),
    (dict(out_types=None), TypeError, "the argument 'out_types' is required"),
    (dict(in_types=[types.UINT8, types.UINT8]), ValueError,
     "in_types has 2 types but ins_ndim has 1 entries; give one of each per input"),
    (dict(outs_ndim=[1, 1]), ValueError,
     "out_types has 1 types but outs_ndim has 2 entries; give one of each per output"),
    (dict(out_types=[], outs_ndim=[]), ValueError,
     "out_types has 0 types; numba_function has 1 to 6 outputs"),
    (dict(out_types=[types.UINT8] * 7, outs_ndim=[1] * 7, setup_fn=_half_setup), ValueError,
     "out_types has 7 types; numba_function has 1 to 6 outputs"),
    (dict(in_types=[types.FLOAT16], out_types=[types.FLOAT16]), TypeError,
     "out_types[0] is DALIDataType.FLOAT16, which numba_function does not take (numba compiles "
     "no float16 arithmetic for the CPU; DALI refuses it too): cast to types.FLOAT with "
     "fn.cast"),
    (dict(in_types=[types.NO_TYPE]), TypeError,
     "in_types[0] is DALIDataType.NO_TYPE; numba_function takes bool, integer and float types"),
    (dict(in_types=["uint8"]), TypeError,
     "in_types[0] must be a types.DALIDataType (e.g. types.UINT8), got 'uint8'"),
    (dict(ins_ndim=[-1]), ValueError, "ins_ndim[0] is -1; a number of dimensions is >= 0"),
    (dict(ins_ndim=[1.5]), TypeError,
     "ins_ndim[0] must be an int (a number of dimensions), got 1.5"),
    (dict(out_types=[types.INT32]), ValueError,
     "without setup_fn output 0 has input 0's shape and type, but out_types[0]/outs_ndim[0] "
     "are DALIDataType.INT32/1 and in_types[0]/ins_ndim[0] are DALIDataType.UINT8/1; make them "
     "equal, or give a setup_fn that sets the output shapes"),
    (dict(out_types=[types.UINT8] * 2, outs_ndim=[1, 1]), ValueError,
     "without setup_fn output k has input k's shape and type, so out_types needs as many types "
     "as in_types (2 != 1); give a setup_fn that sets the output shapes"),
    (dict(in_types=[types.UINT8] * 2, ins_ndim=[1, 1], out_types=[types.UINT8] * 2,
          outs_ndim=[1, 1]), ValueError,
     "in_types and ins_ndim describe 2 input(s), but numba_function got 1"),
]


@pytest.mark.parametrize("kw,exc,text", _DEFINITION_ERRORS)
def test_definition_errors(kw, exc, text):
    line = line_of("return numba_function(x, **kw)", _define)
    with pytest.raises(exc) as e:
        _define(**{**_OK, **kw})
    assert str(e.value) == f"numba_function ({HERE}:{line}): {text}"


def test_a_run_fn_numba_cannot_compile_fails_at_definition():
    from numba.core.errors import TypingError
    line = line_of("return numba_function(x, **kw)", _define)
    with pytest.raises(TypeError) as e:
        _define(**{**_OK, "run_fn": _uncompilable})
    assert str(e.value) == (
        f"numba_function ({HERE}:{line}): numba cannot compile run_fn (_uncompilable) in "
        "nopython mode for the arguments (array(uint8, 1d, C), array(uint8, 1d, C)); numba's "
        "error is the cause above")
    assert isinstance(e.value.__cause__, TypingError)


def test_without_numba_it_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now fails
    line = line_of("return numba_function(x, **kw)", _define)
    with pytest.raises(ImportError) as e:
        _define(**_OK)
    assert str(e.value) == (f"numba_function ({HERE}:{line}): numba_function compiles run_fn and "
                            "setup_fn with numba, which is not installed here: pip install numba")
    assert e.value.name == "numba"
    from stoker.plugin.numba import NumbaFunction
    with pytest.raises(ImportError, match="pip install numba$"):
        NumbaFunction(**_OK)


def test_outside_a_pipeline():
    with pytest.raises(RuntimeError) as e:
        numba_function(np.arange(3), **_OK)
    line = line_of("numba_function(np.arange(3), **_OK)", test_outside_a_pipeline)
    assert str(e.value) == (
        f"numba_function ({HERE}:{line}): numba_function must be called while a pipeline is "
        "being defined: inside a @pipeline_def function, inside `with pipe:`, or in "
        "define_graph().")


def _pipe(lib, build, datas):
    fn_, t, pdef, nf = lib

    @pdef(batch_size=len(datas[0]), num_threads=1, device_id=None)
    def pipe():
        xs = [fn_.external_source(source=(lambda d: lambda: d)(d), batch=True) for d in datas]
        return build(nf, t, *xs)
    return pipe()


def _run_error(build, datas, exc, dali_fails_too=True):
    """stoker's error message for the graph `build` makes, checking that DALI's numba_function
    fails on it too; and the `numba_function (file:line)` the message should start with."""
    with pytest.raises(exc) as e:
        _pipe(_stoker(), build, datas).run()
    try:
        lib = _dali() if dali_fails_too else None
    except pytest.skip.Exception:
        lib = None
    if lib is not None:
        with pytest.raises(Exception):
            p = _pipe(lib, build, datas)
            p.build()
            p.run()
    return str(e.value), f"numba_function ({HERE}:{line_of('return nf(x', build)})"


def test_input_of_another_type_than_in_types():
    def build(nf, t, x):
        return nf(x, run_fn=_fill_ones, out_types=[t.UINT8], in_types=[t.UINT8], outs_ndim=[1],
                  ins_ndim=[1])

    msg, where = _run_error(build, [[np.arange(4, dtype=np.int32)]], TypeError)
    assert msg == (f"{where}: input 0 is DALIDataType.INT32, but in_types[0] is "
                   "DALIDataType.UINT8; give in_types[0]=types.INT32, or cast the input with "
                   "fn.cast")


def test_input_of_another_ndim_than_ins_ndim():
    def build(nf, t, x):
        return nf(x, run_fn=_fill_ones, out_types=[t.UINT8], in_types=[t.UINT8], outs_ndim=[1],
                  ins_ndim=[1])

    data = [np.zeros((2, 3), np.uint8), np.zeros((4, 1), np.uint8)]
    msg, where = _run_error(build, [data], ValueError)
    assert msg == (f"{where}: input 0 has 2-d samples (sample 0 has shape (2, 3)), but "
                   "ins_ndim[0] is 1; give ins_ndim[0]=2, or reshape the input")


def test_setup_fn_giving_a_negative_extent():
    def build(nf, t, x):
        return nf(x, run_fn=_fill_ones, setup_fn=_negative_setup, out_types=[t.INT32],
                  in_types=[t.INT32], outs_ndim=[1], ins_ndim=[1])

    # (DALI checks this too, but after setup_fn has run: not worth its process.)
    msg, where = _run_error(build, [[np.zeros(3, np.int32)] * 2], ValueError,
                            dali_fails_too=False)
    assert msg == (f"{where}: setup_fn gave output 0 of sample 1 the shape (-1,); every extent "
                   "must be >= 0")


@pytest.mark.parametrize("batch_processing,at", [
    (False, "for sample 2"), (True, "with the whole batch (batch_processing=True)")])
def test_run_fn_raising(batch_processing, at):
    def build(nf, t, x):
        return nf(x, run_fn=_negate_batch if batch_processing else _negate, out_types=[t.INT32],
                  in_types=[t.INT32], outs_ndim=[1], ins_ndim=[1],
                  batch_processing=batch_processing)

    data = [np.array([1, 2], np.int32), np.array([3], np.int32), np.array([7, 13], np.int32)]
    p = _pipe(_stoker(), build, [data])
    where = f"numba_function ({HERE}:{line_of('return nf(x', build)})"
    for _ in range(2):  # the pipeline goes on failing the same way
        with pytest.raises(ValueError) as e:
            p.run()
        assert str(e.value) == f"{where}: run_fn raised ValueError {at}: 13 is unlucky"
        assert isinstance(e.value.__cause__, ValueError)
        assert str(e.value.__cause__) == "13 is unlucky"


def test_setup_fn_raising():
    def build(nf, t, x):
        return nf(x, run_fn=_fill_ones, setup_fn=_setup_that_raises, out_types=[t.INT32],
                  in_types=[t.INT32], outs_ndim=[1], ins_ndim=[1])

    msg, where = _run_error(build, [[np.zeros(3, np.int32)]], ValueError, dali_fails_too=False)
    assert msg == f"{where}: setup_fn raised ValueError with the whole batch: no shapes today"
