"""examples/ddp_train.py (torchrun, one pipeline per rank) and examples/jax_sharded.py (one
process, a pipeline per device, one sharded jax.Array), run here with CPU ranks and CPU devices on
real ImageNet photos: every sample exactly once per epoch over all ranks, the same batches after
a restart from each rank's checkpoint, and the figures each script reports. The GPU runs (1, 2
and 4 GPUs beside DALI) are bench/multigpu.py's, on the GPU machine."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def folder(testdata, tmp_path_factory):
    """An ImageFolder of 12 classes of real ImageNet photos (36 files, mostly 4:4:4)."""
    src = testdata / "imagenet-sample"
    if not src.is_dir():
        pytest.skip(f"no {src}")
    out = tmp_path_factory.mktemp("inet")
    classes = [d for d in sorted(src.iterdir()) if d.is_dir() and len(list(d.glob("*.jpg"))) >= 3]
    for d in classes[:12]:
        (out / d.name).mkdir()
        for f in sorted(d.glob("*.jpg"))[:3]:
            (out / d.name / f.name).symlink_to(f)
    return out


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    e["OMP_NUM_THREADS"] = "1"
    return e


def torchrun(nproc, *args, timeout=240):
    pytest.importorskip("torch")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={nproc}", str(EXAMPLES / "ddp_train.py"), "--device", "cpu",
           "--threads", "1", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env())


def report(p):
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert p.returncode == 0 and len(lines) == 1, p.stdout[-2000:] + p.stderr[-3000:]
    return json.loads(lines[0])


@pytest.mark.parametrize("api", ["stoker", "dali"])
def test_ddp_exactly_once_and_restart(folder, tmp_path, api):
    if api == "dali":
        pytest.importorskip("nvidia.dali")
    # 36 photos listed twice = 72 samples, 2 ranks x batch 4 = 9 steps an epoch per rank.
    r = report(torchrun(2, "--data", folder, "--api", api, "--model", "none", "--check",
                        "--epochs", "2", "--batch-size", "4", "--tile", "2",
                        "--workdir", tmp_path))
    assert r["ok"] and r["problems"] == []
    assert r["samples"] == 72 and r["steps_per_epoch"] == 9
    assert r["samples_per_rank_per_epoch"] == [[36, 36], [36, 36]]
    assert r["exactly_once_epochs"] == 2
    # Each rank restarts 2 steps into the third epoch and compares the 7 batches that follow.
    assert r["restart_batches_compared"] == 14


def test_ddp_figures(folder, tmp_path):
    out = tmp_path / "r.json"
    r = report(torchrun(2, "--data", folder, "--model", "none", "--batch-size", "4",
                        "--tile", "2", "--steps", "12", "--warmup", "2", "--workdir", tmp_path,
                        "--out", out))
    assert json.loads(out.read_text()) == r
    assert r["world_size"] == 2 and len(r["per_rank"]) == 2
    for rank in r["per_rank"]:
        assert rank["images"] == 12 * 4 and rank["images_per_s"] > 0 and rank["cores_busy"] > 0
    assert r["images_per_s"] == pytest.approx(sum(x["images_per_s"] for x in r["per_rank"]), abs=0.2)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable cores")
def test_ddp_pin_main_keeps_the_loader_off_the_training_cores(folder, tmp_path):
    # One rank: the training's threads on the first core, the pipeline's on the rest.
    r = report(torchrun(1, "--data", folder, "--model", "none", "--batch-size", "4",
                        "--steps", "4", "--warmup", "1", "--workdir", tmp_path, "--pin-main", "1"))
    assert r["per_rank"][0]["images"] == 4 * 4
    p = torchrun(1, "--data", folder, "--model", "none", "--workdir", tmp_path, "--pin-main",
                 str(len(os.sched_getaffinity(0))))
    assert p.returncode != 0 and "leaves no cores of this rank's" in p.stderr


def test_ddp_trains_resnet50(folder, tmp_path):
    pytest.importorskip("torchvision")
    r = report(torchrun(2, "--data", folder, "--model", "resnet50", "--batch-size", "2",
                        "--tile", "2", "--steps", "2", "--warmup", "1", "--workdir", tmp_path))
    for rank in r["per_rank"]:
        assert rank["images"] == 4 and 0 < rank["loss"] < 20   # a finite cross-entropy


def test_ddp_refuses_uneven_steps(folder, tmp_path):
    p = torchrun(2, "--data", folder, "--model", "none", "--batch-size", "5",
                 "--workdir", tmp_path)
    assert p.returncode != 0
    assert ("ddp_train: 36 samples are not a whole number of steps of 2 ranks x 5; choose --tile "
            "or --batch-size so that they are (every rank must take the same number of steps)"
            ) in p.stderr


def test_jax_sharded_over_two_cpu_devices(folder, tmp_path):
    pytest.importorskip("jax")
    e = env()
    e["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    p = subprocess.run([sys.executable, str(EXAMPLES / "jax_sharded.py"), "--data", str(folder),
                        "--device", "cpu", "--devices", "2", "--batch-size", "4", "--tile", "2",
                        "--threads", "1", "--steps", "6", "--warmup", "1",
                        "--workdir", str(tmp_path)],
                       capture_output=True, text=True, timeout=240, env=e)
    r = report(p)
    assert r["ok"] and r["exactly_once"] and r["slices_on_their_devices"]
    assert r["devices"] == 2 and r["global_batch_shape"] == [8, 3, 224, 224]
    assert r["images_per_s"] > 0
