"""What a Python user expects of the package: no internals in fn and ops, messages through
`logging`, a LICENSE that matches pyproject, `stoker.show_batch`, `python -m stoker` printing
its help, and every environment variable documented."""
import hashlib
import logging
import os
import pathlib
import re
import subprocess
import sys
import types as pytypes

import numpy as np
import pytest

import stoker
from stoker import fn, ops, pipeline_def, types
from stoker._schema import SCHEMAS, _camel, is_internal

from conftest import JPEG_DIR

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- fn and ops: public names only

def _walk(module, prefix=""):
    for name in dir(module):
        if name.startswith("__"):
            continue
        value = getattr(module, name)
        yield prefix + name, value
        if isinstance(value, pytypes.ModuleType):
            yield from _walk(value, f"{prefix}{name}.")


def _has(module, path):
    for part in path.split("."):
        if not hasattr(module, part):
            return False
        module = getattr(module, part)
    return True


LEAKED = ("DataNode", "SCHEMAS", "_SYMBOLS", "_arithmetic", "_k", "_m", "_to_module", "_tree",
          "_types", "_v", "arithmetic_generic", "build_namespace", "make_fn",
          "namespace_getattr", "record_op", "sys", "_install", "_dali_ops", "_make_class",
          "_resolve", "_camel", "dali_aliases", "make_docstring", "external_source_positional")


def test_fn_and_ops_show_operators_and_namespaces_only():
    for module in (fn, ops):
        names = [n for n in dir(module) if not n.startswith("__")]
        assert not [n for n in names if n.startswith("_")], module.__name__
        assert not [n for n in LEAKED if n in vars(module)], module.__name__
        assert sorted(names) == sorted(module.__all__)
        for path, value in _walk(module):
            assert not path.rpartition(".")[2].startswith("_"), path
            assert isinstance(value, pytypes.ModuleType) or callable(value), path
    # A leaked name now answers as any unknown name does.
    with pytest.raises(AttributeError) as e:
        fn.SCHEMAS
    assert str(e.value) == ("fn.SCHEMAS is neither a stoker nor a DALI operator. "
                            "`python -m stoker ops` lists stoker's operators.")
    with pytest.raises(AttributeError) as e:
        ops.record_op
    assert str(e.value) == ("ops.record_op is neither a stoker nor a DALI operator. "
                            "`python -m stoker ops` lists stoker's operators.")


def test_every_public_fn_name_is_one_dali_has():
    dali_fn = pytest.importorskip("nvidia.dali.fn")
    assert [p for p, _ in _walk(fn) if not _has(dali_fn, p)] == []


def test_every_public_ops_name_is_dalis_or_an_operator_in_camel_case():
    dali_ops = pytest.importorskip("nvidia.dali.ops")
    camel = {".".join(n.split(".")[:-1] + [_camel(n.rpartition(".")[2])])
             for n in SCHEMAS if not is_internal(n)}
    extra = [p for p, _ in _walk(ops) if not _has(dali_ops, p)]
    assert [p for p in extra if p not in camel and p != "nvJPEGDecoder"] == []


def test_arithmetic_and_math_still_work_without_fn_internals():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = types.Constant(np.float32([1, 4, 9]))
        return -x + 1, stoker.math.sqrt(x * 1), abs(x - 5)

    a, b, c = pipe().run()
    np.testing.assert_array_equal(a.as_array()[0], [0, -3, -8])
    np.testing.assert_array_equal(b.as_array()[1], [1, 2, 3])
    np.testing.assert_array_equal(c.as_array()[0], [4, 1, 4])


# ---------------------------------------------------------------- logging

def _skip_pipeline(tmp_path, name="tiny.jpg"):
    bad = tmp_path / name
    bad.write_bytes(b"not a jpeg at all")
    good = sorted(JPEG_DIR.rglob("*.jpg"))[0]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(bad), str(good)])
        return fn.decoders.image(jpegs, on_error="skip")

    return pipe(), bad


def test_a_skipped_file_is_a_warning_of_the_stoker_logger(tmp_path, caplog):
    p, bad = _skip_pipeline(tmp_path)
    with caplog.at_level(logging.WARNING, logger="stoker"):
        out, = p.run()
    assert len(out) == 1
    records = [r for r in caplog.records if r.name == "stoker"]
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING
    msg = records[0].getMessage()
    assert msg.startswith(f"stoker: skipped '{bad}' in fn.decoders.image (")
    assert p.error_stats()  # the statistics and the log agree
    ((op, st),) = p.error_stats().items()
    assert st["samples"] == [str(bad)] and f" in {op}: " in msg


_SCRIPT = """
import logging, sys
sys.path.insert(0, {tests!r})
{setup}
from test_python_conventions import _skip_pipeline
import pathlib, tempfile
p, bad = _skip_pipeline(pathlib.Path(tempfile.mkdtemp()))
p.run()
print("ran")
"""


def _run(setup="", env=None):
    code = _SCRIPT.format(tests=str(pathlib.Path(__file__).parent), setup=setup)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **(env or {})))


def test_without_logging_configured_the_warning_reaches_stderr():
    r = _run()
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and re.fullmatch(
        r"stoker: skipped '.*tiny\.jpg' in fn\.decoders\.image \(.*\): .+", lines[0]), lines


def test_configured_logging_formats_the_core_messages():
    r = _run("logging.basicConfig(format='[%(name)s %(levelname)s] %(message)s')")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[stoker WARNING] stoker: skipped '"), lines
    # Silenced by the program: nothing at all.
    r = _run("logging.getLogger('stoker').setLevel(logging.ERROR)")
    assert r.returncode == 0 and r.stderr == ""


def test_a_handler_that_raises_does_not_break_the_pipeline():
    r = _run("class Bad(logging.Handler):\n"
             "    def emit(self, record): raise RuntimeError('handler broke')\n"
             "logging.getLogger('stoker').addHandler(Bad())\n"
             "logging.raiseExceptions = False")
    assert r.returncode == 0 and r.stdout == "ran\n", r.stderr


def test_trace_variables_reach_stderr_through_logging():
    r = _run(env={"STOKER_TRACE_STAGES": "1"})
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert "stoker stage 0: iteration 0 starts" in lines
    assert "stoker stage 0: iteration 0 ends" in lines
    assert any(re.fullmatch(r"stoker: iteration 0: fn\.decoders\.image \(.*\)", x)
               for x in lines), lines
    # The program's own logging configuration decides where they go.
    r = _run("logging.basicConfig(level=logging.DEBUG, format='%(levelname)s|%(message)s')",
             env={"STOKER_TRACE_STAGES": "1"})
    assert "DEBUG|stoker stage 0: iteration 0 starts" in r.stderr.splitlines()


def test_show_traces_adds_a_handler_only_when_asked_and_unconfigured(monkeypatch):
    from stoker import _logging
    logger = logging.getLogger("stoker")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    _logging.show_traces({})
    assert logger.handlers == [] and logger.level == logging.NOTSET
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    _logging.show_traces({"STOKER_TRACE_MIXED": ""})
    assert logger.level == logging.DEBUG
    assert [type(h) for h in logger.handlers] == [logging.StreamHandler]


def test_no_fprintf_to_stderr_left_in_the_core():
    hits = []
    for path in (ROOT / "src").rglob("*"):
        if path.suffix in (".cc", ".h", ".cu") and path.name != "log.h":
            text = path.read_text(errors="replace")
            hits += [f"{path.relative_to(ROOT)}" for _ in re.finditer(r"fprintf\(stderr", text)]
    allowed = ["src/python/module.cc"]  # the sink's own fallback, where logging failed
    assert sorted(hits) == allowed


# ---------------------------------------------------------------- LICENSE

def test_license_is_the_apache_2_text_pyproject_names():
    text = (ROOT / "LICENSE").read_bytes()
    # The text apache.org publishes (LICENSE-2.0.txt), unchanged.
    assert hashlib.md5(text).hexdigest() == "3b83ef96387f14655fc854ddc3c6bd57"
    lines = text.decode().splitlines()
    assert lines[1].strip() == "Apache License" and lines[2].strip() == "Version 2.0, January 2004"
    assert 'license = { text = "Apache-2.0" }' in (ROOT / "pyproject.toml").read_text()


# ---------------------------------------------------------------- python -m stoker

def test_python_m_stoker_without_arguments_prints_its_help():
    r = subprocess.run([sys.executable, "-m", "stoker"], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, COLUMNS="200"))
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == "usage: stoker [-h] {demo,ops,stubs,docs} ..."
    for line in ("    python -m stoker stubs [--check]     # writes (or checks) the typing stubs "
                 "fn/ops/types.pyi",
                 "Without a command it prints this help. Environment variables: "
                 "docs/ENVIRONMENT.md.",
                 "    python -m stoker.tfrecord index FILE [INDEX]   # the index "
                 "readers.tfrecord's index_path takes",
                 "    python -m stoker.compat.dali SCRIPT.py [ARGS]  # runs a DALI script with "
                 "nvidia.dali -> stoker",
                 "    demo                run a training-style pipeline, print images/s, write a "
                 "PNG grid",
                 "    ops                 list the operators",
                 "    stubs               write the typing stubs (fn.pyi, ops.pyi, types.pyi, "
                 "py.typed) from the operator schemas",
                 "    python -m stoker docs --out DIR      # writes the API reference pages "
                 "(Markdown) of the docs site",
                 "    docs                write the API reference of the documentation site (one "
                 "Markdown page per operator namespace) from the operator schemas"):
        assert line in lines, r.stdout
    # --help says the same.
    h = subprocess.run([sys.executable, "-m", "stoker", "--help"], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, COLUMNS="200"))
    assert h.returncode == 0 and h.stdout == r.stdout


def test_ops_listing_leaves_out_internal_operators(capsys):
    from stoker.__main__ import main
    assert main(["ops"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == sorted(n for n in SCHEMAS if not is_internal(n))
    assert "arithmetic_generic" not in listed


# ---------------------------------------------------------------- environment variables

def _variables_read():
    found = set()
    for path in (ROOT / "src").rglob("*"):
        if path.suffix in (".cc", ".h", ".cu"):
            found |= set(re.findall(r'getenv\("([A-Z0-9_]+)"\)', path.read_text(errors="replace")))
    for path in (ROOT / "python").rglob("*.py"):
        text = path.read_text()
        found |= set(re.findall(r'environ(?:\.get)?[\[(]\s*["\']([A-Z0-9_]+)["\']', text))
        found |= set(re.findall(r'getenv\(\s*["\']([A-Z0-9_]+)["\']', text))
    from stoker import _logging
    return found | set(_logging.TRACE_VARIABLES)


def test_every_environment_variable_is_documented():
    doc = (ROOT / "docs" / "ENVIRONMENT.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", doc, re.M))
    read = _variables_read()
    assert {"STOKER_HOST_MEMORY_CAP", "STOKER_TRACE_STAGES", "STOKER_NVJPEG_LIBRARY"} <= read
    assert sorted(read - documented) == []


# ---------------------------------------------------------------- show_batch

def _png(path):
    from PIL import Image
    return np.asarray(Image.open(path))


def _tile(grid, i, h, w, cols):
    from stoker._show import _LABEL_H, _PAD
    r, c = divmod(i, cols)
    y, x = _PAD + r * (_LABEL_H + h + _PAD) + _LABEL_H, _PAD + c * (w + _PAD)
    return grid[y:y + h, x:x + w]


def test_show_batch_hwc_uint8_tiles_are_the_images(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(1)
    batch = rng.integers(0, 256, (5, 20, 30, 3), dtype=np.uint8)
    out = stoker.show_batch(batch, tmp_path / "grid.png", columns=3, labels=list("abcde"))
    assert out == str(tmp_path / "grid.png")
    grid = _png(out)
    assert grid.shape == (2 + 2 * (14 + 20 + 2), 2 + 3 * (30 + 2), 3)
    for i in range(5):
        np.testing.assert_array_equal(_tile(grid, i, 20, 30, 3), batch[i])
    # Each label strip has text drawn in it; the unused sixth cell stays white.
    strip = grid[2:2 + 14, 2:2 + 30]
    assert (strip < 128).any()
    assert (_tile(grid, 5, 20, 30, 3) == 255).all()


def test_show_batch_undoes_normalisation_of_chw_floats(tmp_path):
    pytest.importorskip("PIL")
    rng = np.random.default_rng(2)
    images = rng.integers(0, 256, (3, 16, 12, 3), dtype=np.uint8)
    mean = np.float32([0.485, 0.456, 0.406]) * 255
    std = np.float32([0.229, 0.224, 0.225]) * 255
    chw = ((images.astype(np.float32) - mean) / std).transpose(0, 3, 1, 2).astype(np.float16)
    grid = _png(stoker.show_batch(chw, tmp_path / "n.png", mean=mean, std=std))
    for i in range(3):
        assert np.abs(_tile(grid, i, 16, 12, 3).astype(int) - images[i]).max() <= 1
    # Floats in [0, 1] are scaled to 255; gray HW images work too.
    gray = rng.random((2, 8, 8)).astype(np.float32)
    grid = _png(stoker.show_batch(gray, tmp_path / "g.png"))
    np.testing.assert_array_equal(_tile(grid, 1, 8, 8, 2),
                                  np.clip(gray[1] * 255 + 0.5, 0, 255).astype(np.uint8))


def test_show_batch_runs_a_pipeline_once_and_labels_its_images(tmp_path):
    pytest.importorskip("PIL")

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(JPEG_DIR), random_shuffle=True, seed=5)
        images = fn.resize(fn.decoders.image(jpegs, output_type=types.RGB), size=[24, 32])
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=[100.0, 110.0, 120.0], std=[50.0, 60.0, 70.0])
        return images, labels

    ref_images, _ = pipe().run()
    ref = np.clip(ref_images.as_array().transpose(0, 2, 3, 1) * [50.0, 60.0, 70.0]
                  + [100.0, 110.0, 120.0] + 0.5, 0, 255).astype(np.uint8)
    grid = _png(stoker.show_batch(pipe(), tmp_path / "p.png", mean=[100, 110, 120],
                                  std=[50, 60, 70]))
    assert grid.shape == (2 + 14 + 24 + 2, 2 + 4 * (32 + 2), 3)
    for i in range(4):
        np.testing.assert_array_equal(_tile(grid, i, 24, 32, 4), ref[i])


def test_show_batch_takes_run_outputs_and_tensor_lists(tmp_path):
    pytest.importorskip("PIL")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(JPEG_DIR))
        return fn.resize(fn.decoders.image(jpegs), size=[10, 10]), labels

    images, labels = pipe().run()
    a = _png(stoker.show_batch((images, labels), tmp_path / "a.png"))
    b = _png(stoker.show_batch(images, tmp_path / "b.png", labels=[f"x" for _ in range(2)]))
    for i in range(2):
        np.testing.assert_array_equal(_tile(a, i, 10, 10, 2), images.as_array()[i])
        np.testing.assert_array_equal(_tile(b, i, 10, 10, 2), images.as_array()[i])
    assert not np.array_equal(a[2:16], b[2:16])  # different labels drawn


def test_show_batch_errors_name_the_fix(tmp_path):
    pytest.importorskip("PIL")
    batch = np.zeros((2, 4, 4, 3), np.uint8)
    cases = [
        (dict(pipe_or_batch=np.zeros((4, 4), np.uint8)), ValueError,
         "stoker.show_batch: pipe_or_batch must hold a batch of images (N, H, W), (N, H, W, C) "
         "or (N, C, H, W), got an array of shape (4, 4); for one image, pass image[None]."),
        (dict(pipe_or_batch="images"), TypeError,
         "stoker.show_batch: pipe_or_batch must be a Pipeline, a batch of images (TensorListCPU, "
         "TensorListGPU, a NumPy array or a list of arrays), got str."),
        (dict(pipe_or_batch=[]), ValueError,
         "stoker.show_batch: the batch is empty; there is nothing to show."),
        (dict(labels=[1]), ValueError,
         "stoker.show_batch: labels has 1 entries for 2 images; give one label per image."),
        (dict(labels="ab"), TypeError,
         "stoker.show_batch: labels must have one entry per image, got the string 'ab'."),
        (dict(mean=[1, 2]), ValueError,
         "stoker.show_batch: mean has 2 values for images of 3 channels; give one value, or one "
         "per channel."),
        (dict(layout="NHWC"), ValueError,
         "stoker.show_batch: layout must be 'HWC', 'CHW' or None (the batch's own, or a guess), "
         "got 'NHWC'."),
        (dict(columns=0), ValueError,
         "stoker.show_batch: columns must be a positive integer, got 0."),
        (dict(pipe_or_batch=np.zeros((1, 8, 8, 5), np.uint8)), ValueError,
         "stoker.show_batch: image 0 has 5 channels (shape (8, 8, 5), layout HWC); images with "
         "1, 3 or 4 channels can be shown. Pass layout='CHW' or 'HWC' if the guess is wrong."),
        (dict(pipe_or_batch=[np.zeros((2, 2, 2, 3))]), ValueError,
         "stoker.show_batch: image 0 has shape (2, 2, 2, 3); expected an image of 2 (HW) or 3 "
         "dimensions (HWC or CHW)."),
        (dict(pipe_or_batch=np.zeros((1, 4, 4, 3), bool)), TypeError,
         "stoker.show_batch: image 0 has elements of type bool; expected uint8, another integer "
         "type or a float type."),
    ]
    for kwargs, exc, message in cases:
        kwargs = dict(kwargs)
        source = kwargs.pop("pipe_or_batch", batch)
        with pytest.raises(exc) as e:
            stoker.show_batch(source, tmp_path / "x.png", **kwargs)
        assert str(e.value) == message
    assert not (tmp_path / "x.png").exists()


def test_show_batch_without_pillow_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL now raises ImportError
    with pytest.raises(ImportError) as e:
        stoker.show_batch(np.zeros((1, 4, 4, 3), np.uint8), tmp_path / "x.png")
    assert str(e.value) == ("stoker.show_batch needs Pillow to write the PNG; install it with "
                            "`pip install pillow` (or `pip install stoker[demo]`).")


def test_show_batch_of_a_gpu_batch(tmp_path):
    pytest.importorskip("PIL")
    if "gpu" not in SCHEMAS["resize"]["backends"]:
        pytest.skip("a CPU-only build")

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(JPEG_DIR))
        images = fn.resize(fn.decoders.image(jpegs), size=[12, 16])
        return images, images.gpu()

    try:
        cpu, gpu = pipe().run()
    except Exception as e:  # no GPU on this machine
        pytest.skip(f"no GPU: {e}")
    grid = _png(stoker.show_batch(gpu, tmp_path / "gpu.png"))
    for i in range(2):
        np.testing.assert_array_equal(_tile(grid, i, 12, 16, 2), cpu.as_array()[i])
