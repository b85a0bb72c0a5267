"""Inference latency: encoded JPEGs in, a normalized tensor out, one batch at a time.

The pipeline of an image classifier's server (examples/c/make_pipeline.py builds it, for
stoker and for DALI): JPEG bytes fed by name, decoded (on the GPU with device=gpu: the 'mixed'
decoder), resized to 256 on the shorter side, center-cropped to 224x224, normalized to float32
CHW. Each timed iteration feeds one batch
of real photos, runs the pipeline and waits until the output is ready (GPU outputs: copied into
a torch tensor on the current stream and that stream synchronized, the same for every
contender; the C API: stoker_outputs_wait). Contenders, each in a process of its own:

  stoker-c    stoker through its C API (build/.../stoker_run on the serialized pipeline)
  stoker-c-dali  the same runner on the pipeline as DALI serialized it (a Triton model.dali)
  stoker-py   stoker from Python (feed_input, run)
  dali        NVIDIA DALI 2.4 from Python, the same code with nvidia.dali

    python bench/latency.py --data IMAGE_FOLDER [--device gpu] [--batch-sizes 1,8,32,64]
                            [--threads 4] [--contenders stoker-c,stoker-py,dali] [--smoke]

Prints a Markdown table (p50 and p99 latency in ms, samples/s = batch / mean latency) and writes
it with the raw figures as JSON to --out.
"""
import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
ITERATIONS = {1: 300, 8: 200, 32: 100, 64: 60}


def build(api, batch_size, device, threads, executor="async"):
    """examples/c/make_pipeline.py's pipeline with one batch in flight: each run() takes the
    batch fed just before (DALI needs prefetch_queue_depth batches fed ahead of its first run
    otherwise). executor="sync": every stage on the caller's thread (exec_async=False,
    exec_pipelined=False), no hand-offs."""
    sys.path.insert(0, str(ROOT / "examples" / "c"))
    from make_pipeline import build as classify
    sync = executor == "sync"
    return classify(batch_size, device, num_threads=threads, dali=api == "dali",
                    prefetch_queue_depth=1, exec_async=not sync, exec_pipelined=not sync)


def photos(root, n):
    files = sorted(p for p in pathlib.Path(root).rglob("*")
                   if p.suffix.lower() in (".jpg", ".jpeg"))
    if not files:
        sys.exit(f"latency.py: no JPEG files under {root}")
    return [files[i % len(files)] for i in range(n)]


def summary(lat_ms, batch_size):
    lat = sorted(lat_ms)
    mean = sum(lat) / len(lat)
    return {"p50_ms": lat[len(lat) // 2], "p99_ms": lat[int((len(lat) - 1) * 0.99)],
            "mean_ms": mean, "samples_per_s": batch_size / (mean / 1e3), "iterations": len(lat)}


def run_python(api, files, batch_size, iterations, warmup, device, threads, executor):
    import numpy as np
    pipe = build(api, batch_size, device, threads, executor)
    pipe.build()
    data = [np.fromfile(f, np.uint8) for f in files]
    sync = None
    if device == "gpu":
        import torch
        if api == "dali":
            from nvidia.dali.plugin.pytorch import feed_ndarray
        else:
            from stoker.plugin.pytorch import feed_ndarray
        target = torch.empty((batch_size, 3, 224, 224), dtype=torch.float32, device="cuda:0")
        stream = torch.cuda.current_stream(0)

        def sync(out):
            # (DALI's feed_ndarray takes one dense tensor, not a TensorList.)
            feed_ndarray(out.as_tensor() if api == "dali" else out, target, cuda_stream=stream)
            stream.synchronize()
    lat = []
    for it in range(warmup + iterations):
        batch = [data[(it * batch_size + s) % len(data)] for s in range(batch_size)]
        t0 = time.perf_counter()
        pipe.feed_input("jpegs", batch)
        (out,) = pipe.run()
        if sync is not None:
            sync(out)
        else:
            out.as_array()
        if it >= warmup:
            lat.append((time.perf_counter() - t0) * 1e3)
    return summary(lat, batch_size)


def run_c(files, batch_size, iterations, warmup, device, threads, runner, executor, api="stoker"):
    """api="dali": the file stoker_run loads is the one DALI's serialize() wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.dali" if api == "dali" else "classify.stoker")
        build(api, batch_size, device, threads, executor).serialize(filename=path)
        # The runner feeds each batch from its files in turn: give it as many as the Python
        # contenders cycle through.
        args = [str(runner), path, "-q", "-n", str(iterations), "-w", str(warmup)]
        for f in files:
            args += ["-i", f"jpegs={f}"]
        r = subprocess.run(args, capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise RuntimeError(r.stderr.strip())
        res = json.loads(r.stdout.strip().splitlines()[-1])
    mean_from_throughput = batch_size / res["samples_per_s"] * 1e3
    return {"p50_ms": res["p50_ms"], "p99_ms": res["p99_ms"], "mean_ms": mean_from_throughput,
            "samples_per_s": res["samples_per_s"], "iterations": res["iterations"]}


def one(args):
    """Runs one row in this process and prints its JSON."""
    files = [str(f) for f in photos(args.data, args.n_files)]
    if args.one in ("stoker-c", "stoker-c-dali"):
        res = run_c(files, args.batch, args.iterations, args.warmup, args.device, args.threads,
                    args.runner, args.executor, "dali" if args.one == "stoker-c-dali" else "stoker")
    else:
        res = run_python("dali" if args.one == "dali" else "stoker", files, args.batch,
                         args.iterations, args.warmup, args.device, args.threads, args.executor)
    print(json.dumps(res))


def find_runner():
    for d in (os.environ.get("STOKER_BUILD_DIR"), "build/gpu", "build/dev"):
        if d and (ROOT / d / "stoker_run").exists():
            return ROOT / d / "stoker_run"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a folder of JPEG files (searched recursively)")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="gpu")
    ap.add_argument("--batch-sizes", default="1,8,32,64")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--contenders", default="stoker-c,stoker-py,dali")
    ap.add_argument("--executor", choices=("async", "sync"), default="async",
                    help="async: the pipelines' default executor (stages on threads of their "
                         "own); sync: exec_async=False, exec_pipelined=False for every contender")
    ap.add_argument("--runner", default=None, help="stoker_run (default: build/gpu or build/dev)")
    ap.add_argument("--smoke", action="store_true", help="a few iterations of each row")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "latency"))
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--iterations", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--n-files", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return one(args)
    runner = pathlib.Path(args.runner) if args.runner else find_runner()
    rows = []
    for bs in (int(b) for b in args.batch_sizes.split(",")):
        iters = 3 if args.smoke else ITERATIONS.get(bs, max(20, 3000 // bs))
        warmup = 1 if args.smoke else 10
        for who in args.contenders.split(","):
            if who.startswith("stoker-c") and runner is None:
                rows.append({"contender": who, "batch": bs, "status": "no stoker_run built"})
                continue
            cmd = [sys.executable, __file__, "--one", who, "--data", args.data, "--device",
                   args.device, "--batch", str(bs), "--iterations", str(iters), "--warmup",
                   str(warmup), "--threads", str(args.threads), "--n-files", str(max(64, bs * 2)),
                   "--runner", str(runner), "--executor", args.executor]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if r.returncode:
                err = (r.stderr.strip().splitlines() or ["failed"])[-1]
                rows.append({"contender": who, "batch": bs, "status": err[:200]})
            else:
                rows.append(dict(json.loads(r.stdout.strip().splitlines()[-1]), contender=who,
                                 batch=bs, status="ok"))
            print(f"  batch {bs} {who}: {rows[-1]}", file=sys.stderr, flush=True)
    lines = ["| batch | contender | p50 ms | p99 ms | samples/s | status |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] == "ok":
            lines.append(f"| {r['batch']} | {r['contender']} | {r['p50_ms']:.2f} | "
                         f"{r['p99_ms']:.2f} | {r['samples_per_s']:.0f} | ok |")
        else:
            lines.append(f"| {r['batch']} | {r['contender']} | | | | {r['status']} |")
    table = "\n".join(lines)
    print(f"latency: {args.device}, {args.threads} threads, {args.executor} executor, "
          f"{platform.node()}")
    print(table)
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(args.out, f"{stamp}.json"), "w") as f:
        json.dump({"device": args.device, "threads": args.threads, "executor": args.executor,
                   "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, f"{stamp}.md"), "w") as f:
        f.write(table + "\n")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
