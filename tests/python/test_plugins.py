"""Custom operator plugins, built as a user builds them: stoker installed with `cmake --install`
(the operator SDK and the CMake package), examples/plugin configured with find_package(stoker)
and built, then loaded with stoker.plugin_manager.load_library (DALI's name) in Python and with
stoker_load_plugin through the C API. Bad libraries (not a plugin, another stoker's, one that
takes a name stoker has) are refused with messages, never loaded half-way.

Each plugin is loaded in a subprocess of its own: a process keeps the libraries it loaded.
"""
import json
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import stoker

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(stoker.__file__).resolve().parents[2]
PYPATH = str(pathlib.Path(stoker.__file__).resolve().parents[1])

pytestmark = pytest.mark.skipif(not (BUILD / "cmake_install.cmake").exists() or
                                not shutil.which("cmake"),
                                reason=f"no CMake build of stoker in {BUILD} to install")


@pytest.fixture(scope="module")
def sdk(tmp_path_factory):
    """stoker installed into a prefix, as a user installs it."""
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   capture_output=True, timeout=300)
    return prefix


@pytest.fixture(scope="module")
def plugin(sdk, tmp_path_factory):
    """examples/plugin built against the installed stoker."""
    build = tmp_path_factory.mktemp("plugin")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    r = subprocess.run(["cmake", "-S", str(ROOT / "examples" / "plugin"), "-B", str(build), *gen,
                        f"-DCMAKE_PREFIX_PATH={sdk}", "-DCMAKE_BUILD_TYPE=Release"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return build / "libcustom_invert.so"


def python(code, **kw):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300, env={**__import__("os").environ,
                                                    "PYTHONPATH": PYPATH}, **kw)
    return r


def test_plugin_operator_in_fn_and_ops(plugin, testdata, tmp_path):
    photo = sorted((testdata / "imagenet-sample").glob("n*/*.jpg"))[0]
    out = tmp_path / "out.npy"
    r = python(f"""
        import numpy as np
        from stoker import fn, ops, pipeline_def, types
        import stoker.plugin_manager as plugin_manager
        assert not hasattr(fn, "custom")
        plugin_manager.load_library({str(plugin)!r})
        plugin_manager.load_library({str(plugin)!r})   # again: nothing happens
        assert "Inverts uint8 images: 255 - x" in fn.custom.invert.__doc__
        assert "custom" in dir(fn) and "custom" in fn.__all__

        @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=0)
        def pipe():
            jpegs, _ = fn.readers.file(files=[{str(photo)!r}] * 2)
            img = fn.decoders.image(jpegs, output_type=types.RGB)
            return img, fn.custom.invert(img), ops.custom.Invert()(img)
        img, inv, inv2 = pipe().run()
        np.save({str(out)!r}, np.stack([img[0], inv[0], inv2[0]]))
        """)
    assert r.returncode == 0, r.stderr
    img, inv, inv2 = np.load(out)
    np.testing.assert_array_equal(inv, 255 - img)
    np.testing.assert_array_equal(inv2, 255 - img)


def test_plugin_operator_errors_name_it(plugin):
    r = python(f"""
        import numpy as np
        from stoker import fn, pipeline_def
        import stoker.plugin_manager as plugin_manager
        plugin_manager.load_library({str(plugin)!r})

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return fn.custom.invert(fn.external_source(source=lambda: [np.zeros((2, 2), np.float32)]))
        try:
            pipe().run()
        except TypeError as e:
            print(e)
        """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("fn.custom.invert (<string>:")
    assert r.stdout.rstrip().endswith("input 0 has type float32; custom.invert takes uint8"), r.stdout


def test_serialized_pipeline_with_plugin_runs_in_c_and_python(plugin, tmp_path, testdata):
    runner = BUILD / "stoker_run"
    if not runner.exists():
        pytest.skip("no C API built")
    photo = sorted((testdata / "imagenet-sample").glob("n*/*.jpg"))[1]
    path = tmp_path / "inv.stoker"
    r = python(f"""
        import numpy as np, json
        from stoker import fn, pipeline_def, types, Pipeline
        import stoker.plugin_manager as plugin_manager
        plugin_manager.load_library({str(plugin)!r})

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=0)
        def pipe():
            enc = fn.external_source(name="jpegs", dtype=types.UINT8, ndim=1)
            return fn.custom.invert(fn.decoders.image(enc, output_type=types.RGB))
        pipe().serialize(filename={str(path)!r})
        p = Pipeline.deserialize(filename={str(path)!r})
        p.feed_input("jpegs", [np.fromfile({str(photo)!r}, np.uint8)])
        (out,) = p.run()
        h = 1469598103934665603
        for b in np.ascontiguousarray(out[0]).tobytes():
            h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        print(f"{{h:016x}}")
        """)
    assert r.returncode == 0, r.stderr
    want = r.stdout.strip()
    # The C API: without the plugin the operator is unknown; with -p it runs, byte for byte.
    r = subprocess.run([str(runner), str(path), "-i", f"jpegs={photo}"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and "uses the operator fn.custom.invert" in r.stderr, r.stderr
    assert "It may come from a plugin library that is not loaded" in r.stderr
    r = subprocess.run([str(runner), str(path), "-p", str(plugin), "-i", f"jpegs={photo}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[0])["fnv1a"] == [want]


def _fake_plugin(sdk, tmp_path, name, body):
    """A small library compiled with the installed SDK, the way a plugin is."""
    src = tmp_path / f"{name}.cc"
    src.write_text(body)
    lib = tmp_path / f"lib{name}.so"
    r = subprocess.run(["g++", "-std=c++20", "-shared", "-fPIC", "-O1", "-DSTOKER_PLUGIN=1",
                        f"-I{sdk}/include/stoker/sdk", str(src), "-o", str(lib)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return lib


def test_bad_libraries_are_refused(sdk, tmp_path):
    other = _fake_plugin(sdk, tmp_path, "other_version", """
        extern "C" const char* stoker_plugin_abi() { return "stoker 0.0.9, plugin interface 0"; }
        extern "C" void stoker_plugin_register() { __builtin_trap(); }
        """)
    clash = _fake_plugin(sdk, tmp_path, "clash", """
        #include "pipeline/operator.h"
        STOKER_REGISTER_OP_NAMED(my_resize, "resize") { schema.doc("takes stoker's name"); }
        """)
    not_plugin = _fake_plugin(sdk, tmp_path, "plain", "int answer() { return 42; }\n")
    r = python(f"""
        import stoker.plugin_manager as plugin_manager
        from stoker import fn
        for lib in ({str(other)!r}, {str(clash)!r}, {str(not_plugin)!r}, "/no/such/libx.so"):
            try:
                plugin_manager.load_library(lib)
                print("loaded", lib)
            except Exception as e:
                print(type(e).__name__ + ":", e)
        print("resize still works:", fn.resize.__name__)
        """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (f"ValueError: plugin_manager.load_library('{other}'): the plugin was built "
                        f"for 'stoker 0.0.9, plugin interface 0', and this is "
                        f"'stoker {stoker.__version__}, plugin interface 1'. Rebuild the plugin "
                        "against this stoker's headers (find_package(stoker)).")
    assert lines[1] == (f"ValueError: plugin_manager.load_library('{clash}'): the plugin defines "
                        "the operator fn.resize, which this stoker (or a plugin loaded before) "
                        "already has; give the plugin's operator another name.")
    assert lines[2].startswith(f"ValueError: plugin_manager.load_library('{not_plugin}'): this is "
                               "not a stoker plugin")
    assert lines[3].startswith("FileNotFoundError: plugin_manager.load_library('/no/such/libx.so'): "
                               "no such file.")
    assert lines[4] == "resize still works: resize"


@pytest.mark.skipif(stoker._C.cuda_device_count() == 0, reason="needs a GPU")
def test_plugin_gpu_backend_equals_cpu(plugin):
    r = python(f"""
        import numpy as np
        from stoker import fn, pipeline_def
        import stoker.plugin_manager as plugin_manager
        plugin_manager.load_library({str(plugin)!r})
        data = [np.random.default_rng(k).integers(0, 256, (37, 53, 3), dtype=np.uint8) for k in range(3)]

        @pipeline_def(batch_size=3, num_threads=1, device_id=0)
        def pipe():
            x = fn.external_source(source=lambda: data, layout="HWC")
            return fn.custom.invert(x), fn.custom.invert(x.gpu())
        c, g = pipe().run()
        g = g.as_cpu()
        for k in range(3):
            np.testing.assert_array_equal(g[k], 255 - data[k])
            np.testing.assert_array_equal(c[k], g[k])
        print("ok")
        """)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
