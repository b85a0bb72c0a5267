"""stoker.compat.dali: DALI code runs unchanged once install() is called, and only then."""
import os
import subprocess
import sys
import textwrap

import pytest

import stoker
import stoker.compat.dali as compat


def real_dali_installed():
    import importlib.util
    try:
        return importlib.util.find_spec("nvidia.dali") is not None
    except (ImportError, ValueError):
        return False


@pytest.fixture
def aliases():
    # Where the real DALI is installed too (a developer's machine), shadow it for the test.
    compat.install(replace_dali=real_dali_installed())
    yield
    compat.uninstall()


def test_install_refuses_to_hide_a_real_dali():
    if not real_dali_installed():
        pytest.skip("the real DALI is not installed here")
    with pytest.raises(RuntimeError, match="replace_dali=True"):
        compat.install()
    assert not compat.installed()


def test_dali_imports_resolve_to_stoker(aliases):
    from nvidia.dali import fn, pipeline_def, types
    import nvidia.dali.fn as fn2
    import nvidia.dali.types as types2
    from nvidia.dali.pipeline import Pipeline
    import nvidia.dali.fn.readers
    from nvidia.dali.plugin.base_iterator import LastBatchPolicy as BaseLBP

    assert fn is fn2 is stoker.fn and types is types2 is stoker.types
    assert pipeline_def is stoker.pipeline_def and Pipeline is stoker.Pipeline
    assert nvidia.dali.fn.readers.file is stoker.fn.readers.file
    assert BaseLBP is stoker.plugin.LastBatchPolicy
    # The stoker modules keep their own identity.
    assert stoker.fn.__spec__.name == "stoker.fn" and stoker.__spec__.name == "stoker"
    from nvidia.dali.tensors import TensorListCPU
    assert TensorListCPU is stoker.TensorListCPU
    import nvidia.dali.plugin_manager
    assert nvidia.dali.plugin_manager.load_library is stoker.plugin_manager.load_library
    with pytest.raises(ModuleNotFoundError, match="no stoker counterpart"):
        import nvidia.dali.sysconfig  # noqa: F401


def test_a_dali_pytorch_script_runs_unchanged(aliases, jpeg_files):
    pytest.importorskip("torch")
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def
    from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy

    files = [p for p, _ in jpeg_files[:5]]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, labels=[10, 11, 12, 13, 14], name="Reader")
        images = fn.resize(fn.decoders.image(jpegs, output_type=types.RGB), resize_x=8,
                           resize_y=8)
        return images, labels

    it = DALIClassificationIterator(pipe(), reader_name="Reader",
                                    last_batch_policy=LastBatchPolicy.PARTIAL)
    labels = [b[0]["label"].reshape(-1).tolist() for b in it]
    assert labels == [[10, 11], [12, 13], [14]]


def test_nothing_is_installed_by_default_and_uninstall_undoes_it():
    code = textwrap.dedent("""
        import sys
        import stoker, stoker.plugin, stoker.compat.dali as c
        try:
            import nvidia.dali
        except ImportError:
            pass
        else:  # the real DALI may be installed; it must not be stoker
            assert nvidia.dali is not stoker, "nvidia.dali is stoker without install()"
            for name in [n for n in sys.modules if n.startswith("nvidia.dali")]:
                del sys.modules[name]
        c.install(replace_dali=True); c.install()
        import nvidia.dali
        assert nvidia.dali is stoker and c.installed()
        c.uninstall()
        assert not c.installed() and "nvidia.dali" not in sys.modules
        try:
            import nvidia.dali.fn as fn
        except ImportError:
            pass
        else:
            assert fn is not stoker.fn
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=os.environ.copy(), timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_run_a_dali_script_from_the_command_line(tmp_path):
    script = tmp_path / "dali_script.py"
    script.write_text(textwrap.dedent("""
        import sys
        from nvidia.dali import pipeline_def, fn, types

        @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=4)
        def pipe():
            return fn.random.uniform(range=(0, 1), shape=(2,), dtype=types.FLOAT)

        import stoker
        assert fn is stoker.fn
        (out,) = pipe().run()
        print("shape", out.as_array().shape, sys.argv[1:])
    """))
    flag = ["--replace-dali"] if real_dali_installed() else []
    r = subprocess.run([sys.executable, "-m", "stoker.compat.dali", *flag, str(script), "--flag"],
                       capture_output=True, text=True, env=os.environ.copy(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "shape (3, 2) ['--flag']"


def test_uninstall_gives_back_a_real_dali_imported_before():
    # Its native modules cannot be imported twice in one process: they must come back as they were.
    if not real_dali_installed():
        pytest.skip("the real DALI is not installed here")
    import nvidia.dali as real
    import nvidia.dali.fn as real_fn
    compat.install(replace_dali=True)
    try:
        import nvidia.dali
        assert nvidia.dali is stoker
    finally:
        compat.uninstall()
    import nvidia
    import nvidia.dali
    assert nvidia.dali is real and sys.modules["nvidia.dali.fn"] is real_fn
    assert nvidia.dali.fn.readers.file is real_fn.readers.file
