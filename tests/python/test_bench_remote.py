"""bench/remote.py keeps working: one epoch of a few photos per row, readers.file and
readers.webdataset, from the local disk, fsspec's memory file system, an HTTP server and an S3
server (moto) on loopback, where they are installed."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_remote_smoke(testdata, tmp_path):
    pytest.importorskip("fsspec")
    photos = sorted((testdata / "imagenet-sample").glob("*/*.jpg"))[:24]
    if len(photos) < 24:
        pytest.skip(f"imagenet-sample under {testdata} has too few photos")
    data = tmp_path / "data"
    for k, f in enumerate(photos):
        (data / f"c{k % 3}").mkdir(parents=True, exist_ok=True)
        shutil.copy(f, data / f"c{k % 3}" / f.name)
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "remote.py"), "--data", str(data),
                        "--batch-size", "8", "--threads", "2", "--epochs", "1",
                        "--readers", "file,webdataset", "--out",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    (report,) = (tmp_path / "out").glob("remote-*.json")
    rows = json.loads(report.read_text())["rows"]
    stoker_sources = {x["source"] for x in rows if x["library"] == "stoker"}
    assert {"local", "memory"} <= stoker_sources
    assert all(x["images_per_s"] > 0 for x in rows)
    # Read only, and read + decode + resize, for each reader and source; DALI's rows where it
    # reads it.
    for reader in ("file", "webdataset"):
        for source in stoker_sources:
            assert sorted(x["decode"] for x in rows if x["source"] == source and
                          x["library"] == "stoker" and x["reader"] == reader) == [False, True]
    assert {x["source"] for x in rows if x["library"] == "dali"} <= {"local", "s3"}
    assert {x["source"] for x in rows
            if x["library"] == "dali" and x["reader"] == "webdataset"} <= {"local"}
