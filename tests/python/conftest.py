import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = pathlib.Path(os.environ.get("STOKER_TESTDATA", ROOT.parent / "shared" / "testdata"))
JPEG_DIR = TESTDATA / "images" / "jpeg"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running tests (soak), skipped unless -m slow")


@pytest.fixture(scope="session")
def testdata():
    if not TESTDATA.is_dir():
        pytest.skip(f"shared test data not found at {TESTDATA}")
    return TESTDATA


@pytest.fixture(scope="session")
def jpeg_dir(testdata):
    return JPEG_DIR


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
