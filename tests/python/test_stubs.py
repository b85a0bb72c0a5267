"""The typing stubs (python/stoker/fn.pyi, ops.pyi, types.pyi, py.typed): in step with the
operator schemas, shipped in the wheel, and good enough for a type checker to check a DALI-style
script and to catch a misspelt argument."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import stoker
from stoker import _stubs
from stoker._schema import SCHEMAS, is_internal

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "python" / "stoker"
STUBS = ("fn.pyi", "ops.pyi", "types.pyi")


def test_committed_stubs_match_the_schemas():
    fresh = _stubs.generate()
    stale = [name for name in STUBS
             if (SRC / name).read_text(encoding="utf-8") != fresh[name]]
    assert not stale, (f"{', '.join(stale)} out of step with the operator schemas; rewrite them "
                       "with `python -m stoker stubs --out python/stoker` (after building).")
    assert (SRC / "py.typed").exists()


def test_check_mode_names_the_stale_file(tmp_path, capsys):
    from stoker.__main__ import main
    assert main(["stubs", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fn.pyi", "ops.pyi", "py.typed",
                                                           "types.pyi"]
    capsys.readouterr()
    assert main(["stubs", "--check", "--out", str(tmp_path)]) == 0
    (tmp_path / "ops.pyi").write_text("# edited by hand\n")
    assert main(["stubs", "--check", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().out == (
        f"out of date: {tmp_path / 'ops.pyi'} (run `python -m stoker stubs --out DIR` to "
        "rewrite it)\n")
    assert (tmp_path / "ops.pyi").read_text() == "# edited by hand\n"  # --check writes nothing


def test_every_operator_and_argument_is_in_the_stubs():
    fn_stub = (SRC / "fn.pyi").read_text(encoding="utf-8")
    for name in SCHEMAS:
        if not is_internal(name):
            assert f"def {name.rpartition('.')[2]}(" in fn_stub, name
    assert "arithmetic_generic" not in fn_stub and "_tensor_subscript" not in fn_stub
    # A sample of exact signatures: types, defaults, tensor arguments, the return type.
    assert "        random_shuffle: _Bool = False,\n" in fn_stub
    assert "    resize_x: Union[_Float, DataNode, None] = None,\n" in fn_stub
    assert "    dtype: _DType = types.DALIDataType.FLOAT,\n" in fn_stub
    assert "    def file(\n" in fn_stub
    file_block = fn_stub[fn_stub.index("    def file(\n"):]
    file_block = file_block[:file_block.index('"""')]
    assert file_block.endswith(") -> Tuple[DataNode, DataNode]:\n        ")
    # Arguments of the internal plumbing never show up.
    assert "_display_name" not in fn_stub and "_source_id" not in fn_stub


def _mypy():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (pip install mypy)")
    return [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
            "--show-error-codes", "--no-error-summary", "--hide-error-context"]


def _package_root():
    return pathlib.Path(stoker.__file__).resolve().parents[1]


def _run_mypy(args, tmp_path):
    env = dict(os.environ, MYPYPATH=str(_package_root()))
    return subprocess.run(_mypy() + ["--cache-dir", str(tmp_path / ".mypy_cache")] + args,
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_stubs_pass_mypy(tmp_path):
    pkg = _package_root() / "stoker"
    for name in STUBS:  # the package under test carries the same stubs as the sources
        assert (pkg / name).read_text(encoding="utf-8") == (SRC / name).read_text(encoding="utf-8")
    r = _run_mypy([str(pkg / n) for n in STUBS], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_checks_a_dali_style_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import numpy as np
        from stoker import fn, ops, pipeline_def, types
        from stoker.fn import readers


        @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=1)
        def train_pipe(root: str):
            jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
            images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
            images = fn.resize(images, resize_x=224, resize_y=224,
                               interp_type=types.INTERP_LINEAR)
            images = fn.crop_mirror_normalize(
                images, dtype=types.FLOAT, output_layout="CHW",
                mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                std=np.array([58.4, 57.1, 57.4], dtype=np.float32),
                mirror=fn.random.coin_flip(probability=0.5))
            more, _ = readers.file(files=["a.jpg"], labels=[0])
            extra = fn.external_source(lambda: [np.zeros(3)], batch=False)
            both = fn.cat(images, images, axis=0)
            reveal_type(labels)
            reveal_type(fn.random.uniform(range=[0.0, 1.0]))
            return images, labels


        decode = ops.decoders.Image(output_type=types.RGB)
        reader = ops.FileReader(file_root="/data")
        jpegs, labels = reader()
        reveal_type(decode(jpegs))
        """))
    r = _run_mypy([str(script)], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        'train.py:20: note: Revealed type is "stoker.pipeline.DataNode"',
        'train.py:21: note: Revealed type is "stoker.pipeline.DataNode"',
        'train.py:28: note: Revealed type is "stoker.pipeline.DataNode"',
    ]


def test_mypy_catches_a_misspelt_or_mistyped_argument(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(textwrap.dedent("""\
        from stoker import fn, types

        images = fn.resize(1, resize_xx=3)
        jpegs, labels = fn.readers.file(file_root=3)
        out = fn.cast(jpegs, dtype="float")
        """))
    r = _run_mypy([str(script)], tmp_path)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == ('bad.py:3: error: Unexpected keyword argument "resize_xx" for "resize"; '
                        'did you mean "resize_x", "resize_y", or "resize_z"?  [call-arg]')
    assert any(line.startswith('bad.py:4: error: Argument "file_root" to "file" of "readers" '
                               'has incompatible type "int"') for line in lines), lines
    assert any(line.startswith('bad.py:5: error: Argument "dtype" to "cast" has incompatible '
                               'type "str"') for line in lines), lines


def test_the_wheel_ships_the_stubs_and_the_license(tmp_path):
    """The wheel's Python part (scikit-build-core with CMake left out: seconds, not minutes)
    holds the stubs, py.typed and the LICENSE."""
    pytest.importorskip("scikit_build_core")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                        "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"),
                        "-C", "wheel.cmake=false", "-C", f"build-dir={tmp_path / 'build'}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    import zipfile
    (wheel,) = (tmp_path / "wheel").glob("stoker-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"stoker/fn.pyi", "stoker/ops.pyi", "stoker/types.pyi", "stoker/py.typed",
                "stoker/fn.py"} <= names
        for name in STUBS:
            assert z.read(f"stoker/{name}") == (SRC / name).read_bytes()
        (license_file,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert z.read(license_file) == (ROOT / "LICENSE").read_bytes()
