import ctypes
import faulthandler
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("STOKER_TESTDATA", ROOT.parent / "shared" / "testdata"))
JPEG_DIR = TESTDATA / "images" / "jpeg"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running tests (soak), skipped unless -m slow")


# STOKER_HANG_DUMP_S=N: a test still running after N seconds is taken for hung: every thread's
# stack is printed and the run ends (status 3). With scripts/debug/stackdump.c preloaded
# (gpu_check.sh does it) the stacks are native ones, of every thread, taken by a thread of the
# preload's own (so a hang that holds the GIL is caught); otherwise Python's, by faulthandler.
# They go to the process's stderr, which pytest's default capture hides: run with
# --capture=sys (or -s).
_HANG_S = float(os.environ.get("STOKER_HANG_DUMP_S", "0"))


def _stackdump():
    try:
        lib = ctypes.CDLL(None)
        arm, disarm = lib.stackdump_arm, lib.stackdump_disarm
    except (AttributeError, OSError):
        return None
    arm.argtypes = [ctypes.c_double]
    return arm, disarm


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _HANG_S <= 0:
        yield
        return
    native = _stackdump()
    if native:
        native[0](_HANG_S)
    else:
        faulthandler.dump_traceback_later(_HANG_S, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        if native:
            native[1]()
        else:
            faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def capture_runs():
    """capture_runs(p) -> list: from now on every batch p.run() returns is also appended to
    the list, so a test can compare what an iterator hands out with the pipeline's buffers."""
    def spy_on(p):
        captured = []
        run = p.run

        def spy():
            outs = run()
            captured.append(outs)
            return outs

        p.run = spy
        return captured
    return spy_on


@pytest.fixture(scope="session")
def testdata():
    if not TESTDATA.is_dir():
        pytest.skip(f"shared test data not found at {TESTDATA}")
    return TESTDATA


@pytest.fixture(scope="session")
def jpeg_dir(testdata):
    return JPEG_DIR


@pytest.fixture(scope="session")
def seven(jpeg_files):
    """Seven small real files for the framework plugins' epoch tests; readers label them 1..7."""
    files = sorted((p for p, _ in jpeg_files), key=os.path.getsize)[:7]
    assert len(files) == 7
    return files


@pytest.fixture(scope="session")
def jpeg_files(jpeg_dir):
    """The labelled test set as (path, label) in readers.file order."""
    classes = sorted(d.name for d in jpeg_dir.iterdir() if d.is_dir())
    out = []
    for label, c in enumerate(classes):
        for f in sorted((jpeg_dir / c).iterdir()):
            if f.suffix.lower() in (".jpg", ".jpeg"):
                out.append((str(f), label))
    return out
