"""Runs the same graph in stoker and in NVIDIA DALI on the same fixed inputs, and the helpers
around that which several test files share."""
import inspect
import pathlib
import re

import numpy as np
import pytest

from stoker import fn, pipeline_def, types

IMAGENET = pathlib.Path(__file__).resolve().parents[3] / "shared" / "testdata" / "imagenet-sample"


def real_dali():
    """(fn, types, pipeline_def) of the real DALI, or skip (stoker.compat.dali may alias it)."""
    dali = pytest.importorskip("nvidia.dali")
    if "stoker" in (getattr(dali, "__file__", "") or ""):
        pytest.skip("nvidia.dali is stoker's alias here")
    import nvidia.dali.fn as dfn
    import nvidia.dali.types as dtypes
    return dfn, dtypes, dali.pipeline_def


def stoker_lib():
    return fn, types, pipeline_def


def _const(batch):
    return lambda: batch


def run(lib, build, datas, layouts=None, batch_size=None, threads=2, iterations=1):
    """build(fn, types, *inputs) -> node or tuple of nodes, fed `datas` (one list of arrays per
    input) through external_source. Returns, per iteration, per output: (samples, layout,
    dtype name)."""
    fn_, types_, pdef = lib
    layouts = layouts or [None] * len(datas)
    bs = batch_size or len(datas[0])

    @pdef(batch_size=bs, num_threads=threads, device_id=None, seed=7)
    def pipe():
        xs = [fn_.external_source(source=_const(d), batch=True, layout=l)
              for d, l in zip(datas, layouts)]
        out = build(fn_, types_, *xs)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    result = []
    for _ in range(iterations):
        outs = p.run()
        result.append([([np.array(o.at(i)) for i in range(len(o))], o.layout(),
                        np.dtype(np.array(o.at(0)).dtype).name if len(o) else None) for o in outs])
    return result if iterations > 1 else result[0]


def run_outputs(p, iterations=1):
    """Builds and runs the pipeline `p`: per iteration, per output, ([samples], layout, dtype);
    the outputs of the one iteration where iterations == 1."""
    p.build()
    result = []
    for _ in range(iterations):
        outs = p.run()
        result.append([([np.array(o.at(i)) for i in range(len(o))], o.layout(),
                        np.array(o.at(0)).dtype) for o in outs])
    return result[0] if iterations == 1 else result


def run_fed(pdef, fn_, make, datas, layouts=None):
    """make(*inputs) -> node(s) in a pipeline of `pdef` whose inputs are `fn_`.external_sources
    fed `datas` (per input, a list of per-sample arrays); per output: (samples, layout)."""
    layouts = layouts or [None] * len(datas)

    @pdef(batch_size=len(datas[0]), num_threads=2, device_id=None, seed=1)
    def pipe():
        xs = [fn_.external_source(source=_const(d), layout=l) if l else
              fn_.external_source(source=_const(d)) for d, l in zip(datas, layouts)]
        out = make(*xs)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    return [([np.array(o[i]) for i in range(len(o))], o.layout()) for o in p.run()]


def both(build, datas, layouts=None, **kw):
    """stoker's outputs, checked equal to DALI's (values, shapes, dtypes, layouts) where DALI
    is installed."""
    mine = run(stoker_lib(), build, datas, layouts, **kw)
    try:
        ref = run(real_dali(), build, datas, layouts, **kw)
    except pytest.skip.Exception:
        return mine
    assert_same_outputs(mine, ref)
    return mine


def assert_same_outputs(mine, ref):
    """Two runs' outputs, each ([samples], layout, dtype), are equal: layouts, dtypes, shapes
    and values."""
    assert len(mine) == len(ref)
    for (ms, ml, mt), (rs, rl, rt) in zip(mine, ref):
        assert (ml, mt) == (rl, rt)
        assert [a.shape for a in ms] == [b.shape for b in rs]
        for a, b in zip(ms, rs):
            np.testing.assert_array_equal(a, b)


def stoker_error(build, datas, layouts=None, exc=ValueError, **kw):
    with pytest.raises(exc) as e:
        run(stoker_lib(), build, datas, layouts, **kw)
    return e


def dali_fails(build, datas, layouts=None, **kw):
    """Where DALI is here: it refuses the same graph too."""
    try:
        lib = real_dali()
    except pytest.skip.Exception:
        return
    with pytest.raises(Exception):
        run(lib, build, datas, layouts, **kw)


def error_checker(test_file):
    """check_error(excinfo, op, rest) for the test file `test_file` (its __file__): the whole
    message is the operator, the user's line in that file, then `rest`."""
    name = re.escape(pathlib.Path(test_file).name)

    def check_error(excinfo, op, rest):
        msg = str(excinfo.value)
        assert re.fullmatch(rf"fn\.{re.escape(op)} \({name}:\d+\): " + re.escape(rest), msg), msg
    return check_error


def line_of(text, func):
    """The line of its file where `text` first occurs inside `func`'s source."""
    lines, start = inspect.getsourcelines(func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


class StokerModule:
    """stoker for helpers that take `lib.fn`, `lib.types` and `lib.pipeline_def` of stoker or of
    the nvidia.dali module."""
    fn, types, pipeline_def = fn, types, staticmethod(pipeline_def)


def run_module(lib, make, data=None, layout=None, batch_size=2):
    """make(fn, types[, x]) in a one-off pipeline of `lib` (StokerModule or nvidia.dali); x is
    fed `data` (a list of samples) where given. Per output: (layout, [samples])."""
    @lib.pipeline_def(batch_size=batch_size if data is None else len(data), num_threads=2,
                      device_id=None, seed=3)
    def pipe():
        if data is None:
            return make(lib.fn, lib.types)
        x = lib.fn.external_source(source=lambda: data, layout=layout)
        return make(lib.fn, lib.types, x)
    p = pipe()
    if lib is not StokerModule:
        p.build()
    outs = p.run()
    return [(t.layout(), [np.array(t[i]) for i in range(len(t))]) for t in outs]


def imagenet_images(n):
    """n decoded ImageNet sample photos (HWC uint8), of different sizes."""
    from PIL import Image
    files = sorted(IMAGENET.rglob("*.jpg"))
    if len(files) < n:
        pytest.skip("imagenet-sample not found")
    return [np.asarray(Image.open(f).convert("RGB")) for f in files[:n]]


def imagenet_files(n):
    """n ImageNet sample JPEG files spread over the whole set."""
    files = sorted(IMAGENET.rglob("*.JPEG")) + sorted(IMAGENET.rglob("*.jpg"))
    if len(files) < n:
        pytest.skip("imagenet-sample not found")
    return files[:: max(1, len(files) // n)][:n]


def error_text(excinfo):
    return str(excinfo.value)


def decoded_as(u8, dtype):
    """A decoded uint8 image in another decoder dtype, as DALI 2.4 converts it: v * (1/255) in
    float32 (FLOAT stops there), times the type's largest value, rounded and saturated."""
    dt = np.dtype(dtype)
    f = u8.astype(np.float32) * np.float32(1 / 255)
    if dt.kind == "f":
        return f.astype(dt)
    top = np.iinfo(dt).max
    return np.clip(np.rint((f * np.float32(top)).astype(np.float64)), 0, top).astype(dt)
