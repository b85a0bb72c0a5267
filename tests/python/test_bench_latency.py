"""bench/latency.py keeps working: a smoke pass (a few iterations per row) of every contender on
the CPU, through the C API's runner and from Python, with DALI where it is installed (and the
runner on DALI's own serialized file)."""
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

import stoker

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(stoker.__file__).resolve().parents[2]


def test_latency_smoke(testdata, tmp_path):
    runner = BUILD / "stoker_run"
    if not runner.exists():
        pytest.skip(f"no C API built in {BUILD}")
    has_dali = importlib.util.find_spec("nvidia.dali") is not None
    contenders = ["stoker-c", "stoker-py"] + (["dali"] if has_dali else []) + (
        ["stoker-c-dali"] if has_dali and getattr(stoker._C, "reads_dali_pipelines", False)
        else [])
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "latency.py"), "--data",
         str(testdata / "imagenet-sample"), "--device", "cpu", "--batch-sizes", "1,4",
         "--threads", "2", "--smoke", "--contenders", ",".join(contenders), "--runner",
         str(runner), "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (report,) = tmp_path.glob("*.json")
    rows = json.loads(report.read_text())["rows"]
    assert [(x["batch"], x["contender"]) for x in rows] == [
        (b, c) for b in (1, 4) for c in contenders]
    for x in rows:
        assert x["status"] == "ok" and x["iterations"] == 3, x
        assert 0 < x["p50_ms"] <= x["p99_ms"] and x["samples_per_s"] > 0, x
