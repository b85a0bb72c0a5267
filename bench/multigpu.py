"""Multi-GPU scaling: stoker and NVIDIA DALI feeding 1, 2, 4... GPUs of one host.

    python bench/multigpu.py --data DIR --tile 16 --gpus 1,2,4 [--apis stoker,dali]
                             [--models none,resnet50] [--jax] [--check] [--out bench/results]

For every GPU count, API and model it launches examples/ddp_train.py under torchrun (one process
per GPU, each with its own pipeline over its shard: shard_id=rank, num_shards=world size,
device_id=local rank) and reads back rank 0's JSON line. `--models none` measures the loaders
alone, all ranks at once (what several GPUs share is the host: its cores, memory bandwidth and
PCIe); `resnet50` trains a ResNet-50 under DistributedDataParallel (bf16, channels-last) on
their batches. `--apis synthetic` adds the training runs on one random batch made on the GPU
(no loader): the ceiling that DDP itself leaves at each GPU count. `--check` adds one run per API at the largest GPU count that checks every sample
is seen exactly once per epoch over all ranks and that each rank restarted from its checkpoint
gives the same batches. `--jax` adds examples/jax_sharded.py: one process, a pipeline per GPU,
one jax.Array split over the GPUs.

Figures: images/s per GPU (the mean over ranks), CPU cores busy per GPU (each rank's process
CPU time over its timed wall time), and the scaling efficiency: images/s per GPU at N GPUs over
the same at 1 GPU (the bar is 95%). The dataset must be a whole number of global batches at
every GPU count (no work thrown away); --tile lists every file K times to make it so.
Writes multigpu-<stamp>.{json,md} to --out and prints the Markdown table.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples"


def run(cmd: list[str], timeout: float, log: Path) -> dict | None:
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or "", (e.stderr or "") + f"\n[timed out after {timeout} s]", -9
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    with log.open("a") as f:
        f.write(f"$ {' '.join(cmd)}\n[rc {rc}, {time.time() - t0:.1f} s]\n{out}\n{err}\n")
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    print(f"  failed (rc {rc}): {err.strip().splitlines()[-1] if err.strip() else out[-200:]}",
          flush=True)
    return None


def torchrun(n: int, args, api: str, model: str, extra: list[str], log: Path) -> dict | None:
    steps, warmup = (args.steps_loader, 30) if model == "none" else (args.steps_train, 15)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}",
           str(EXAMPLES / "ddp_train.py"), "--data", str(args.data), "--api", api,
           "--model", model, "--batch-size", str(args.batch_size), "--threads", str(args.threads),
           "--tile", str(args.tile), "--steps", str(steps), "--warmup", str(warmup),
           "--device", args.device] + extra
    return run(cmd, args.timeout, log)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--tile", type=int, default=16)
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--apis", default="stoker,dali")
    ap.add_argument("--models", default="none,resnet50")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--threads", type=int, default=8, help="pipeline threads per GPU")
    ap.add_argument("--steps-loader", type=int, default=300)
    ap.add_argument("--steps-train", type=int, default=60)
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--jax", action="store_true")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)

    counts = [int(c) for c in args.gpus.split(",")]
    apis = args.apis.split(",")
    models = args.models.split(",") if args.models else []
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    log = args.out / f"multigpu-{stamp}.log"
    rows, checks, jax_rows = [], [], []
    env_note = os.environ.get("NCCL_NVLS_ENABLE")
    for model in models:
        for n in counts:
            for api in apis:
                if api == "synthetic" and model == "none":
                    continue                    # no loader, nothing to measure
                print(f"== {model} {api} {n} GPU(s)", flush=True)
                r = torchrun(n, args, api, model, [], log)
                rows.append(dict(model=model, gpus=n, api=api, result=r))
                if r:
                    print(f"  {r['images_per_s_per_gpu']} img/s per GPU, "
                          f"{r['cores_per_gpu']} cores per GPU", flush=True)
    loaders = [a for a in apis if a != "synthetic"]
    if args.check:
        for api in loaders:
            print(f"== check {api} {max(counts)} GPU(s)", flush=True)
            r = torchrun(max(counts), args, api, "none", ["--check", "--epochs", "2"], log)
            checks.append(dict(api=api, gpus=max(counts), result=r))
            if r:
                print(f"  ok={r['ok']} {r['problems']}", flush=True)
    if args.jax:
        for n in counts:
            for api in loaders:
                print(f"== jax {api} {n} GPU(s)", flush=True)
                cmd = [sys.executable, str(EXAMPLES / "jax_sharded.py"), "--data", str(args.data),
                       "--api", api, "--devices", str(n), "--batch-size", str(args.batch_size),
                       "--threads", str(args.threads), "--tile", str(args.tile),
                       "--steps", str(args.steps_loader), "--warmup", "30",
                       "--device", args.device]
                r = run(cmd, args.timeout, log)
                jax_rows.append(dict(gpus=n, api=api, result=r))
                if r:
                    print(f"  {r['images_per_s_per_device']} img/s per GPU, ok={r['ok']}",
                          flush=True)

    md = table(rows, checks, jax_rows, counts, apis, loaders, args, env_note)
    (args.out / f"multigpu-{stamp}.json").write_text(json.dumps(
        dict(args={k: str(v) for k, v in vars(args).items()}, rows=rows, checks=checks,
             jax=jax_rows), indent=1))
    (args.out / f"multigpu-{stamp}.md").write_text(md)
    print(md)
    return 0


def table(rows, checks, jax_rows, counts, apis, loaders, args, env_note) -> str:
    lines = [f"batch {args.batch_size} per GPU, {args.threads} pipeline threads per GPU, "
             f"{args.data.name} x{args.tile}", ""]

    def get(model, n, api, key):
        for r in rows:
            if r["model"] == model and r["gpus"] == n and r["api"] == api and r["result"]:
                return r["result"][key]
        return None

    for model in dict.fromkeys(r["model"] for r in rows):
        shown = [a for a in apis if not (a == "synthetic" and model == "none")]
        what = "loaders alone" if model == "none" else f"{model} DDP training"
        lines += [f"**{what}** (img/s per GPU; CPU cores busy per GPU; efficiency vs 1 GPU)", ""]
        head = "| GPUs |" + "".join(f" {a} img/s/GPU | {a} cores/GPU | {a} eff. |" for a in shown)
        if "stoker" in shown and len(shown) > 1:
            head += "".join(f" stoker/{a} |" for a in shown if a != "stoker")
        lines += [head, "|" + "---|" * (head.count("|") - 1)]
        for n in counts:
            cells = [f"| {n} |"]
            for a in shown:
                v, c, one = (get(model, n, a, "images_per_s_per_gpu"),
                             get(model, n, a, "cores_per_gpu"),
                             get(model, min(counts), a, "images_per_s_per_gpu"))
                eff = f"{100 * v / one:.1f}%" if v and one else "-"
                cells.append(f" {v if v is not None else 'failed'} | {c if c is not None else '-'} | {eff} |")
            if "stoker" in shown and len(shown) > 1:
                s = get(model, n, "stoker", "images_per_s_per_gpu")
                for a in shown:
                    if a != "stoker":
                        d = get(model, n, a, "images_per_s_per_gpu")
                        cells.append(f" {s / d:.2f}x |" if s and d else " - |")
            lines.append("".join(cells))
        lines.append("")
    for c in checks:
        r = c["result"]
        lines.append(f"- check, {c['api']} on {c['gpus']} GPUs: " + (
            "failed to run" if not r else
            (f"every one of {r['samples']} samples exactly once in each of "
             f"{r['exactly_once_epochs']} epochs; {r['restart_batches_compared']} batches after "
             f"a restart from the checkpoint identical" if r["ok"] else
             "PROBLEMS: " + "; ".join(r["problems"]))))
    if jax_rows:
        lines += ["", "**JAX, one process, a pipeline per GPU, one sharded jax.Array** "
                  "(img/s per GPU; cores busy in all; exactly once per epoch)", "",
                  "| GPUs |" + "".join(f" {a} img/s/GPU | {a} cores | {a} once |" for a in loaders),
                  "|" + "---|" * (1 + 3 * len(loaders))]
        for n in counts:
            cells = [f"| {n} |"]
            for a in loaders:
                r = next((j["result"] for j in jax_rows if j["gpus"] == n and j["api"] == a), None)
                cells.append(f" {r['images_per_s_per_device']} | {r['cores_busy']} | {r['ok']} |"
                             if r else " failed | - | - |")
            lines.append("".join(cells))
    if env_note is not None:
        lines += ["", f"NCCL_NVLS_ENABLE={env_note}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
