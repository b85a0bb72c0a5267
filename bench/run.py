"""stoker's benchmark suite: the same workloads on the same files for every contender.

    python bench/run.py --smoke                                    # CI: seconds
    python bench/run.py --n-images 1000 --threads 1,2              # dev machine, CPU only
    python bench/run.py --n-images 10000 --batch-size 256 --threads 1,2,4,8,16   # GPU machine

For each (workload, threads, contender) it builds the contender in a fresh process (so memory
figures are its own), warms it up, then times --passes passes of --batches-per-pass batches and
reports the median images/s, CPU seconds per image (process tree), peak host memory and peak
GPU memory. The table printed last compares stoker with each contender; Markdown, JSON and a
PNG (images/s vs threads) go to bench/results/. See bench/README.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))       # ssd300.py: the ssd workload's pipeline

import make_dataset  # noqa: E402
import measure  # noqa: E402
import peers  # noqa: E402
import stoker_contender  # noqa: E402

CONTENDERS = {**stoker_contender.CONTENDERS, **peers.CONTENDERS}
PLACEMENT = {**stoker_contender.PLACEMENT, **peers.PLACEMENT}
ORDER = ["stoker-cpu", "torchvision", "opencv", "librosa", "torchaudio", "dali-cpu",
         "stoker-gpu", "torchvision-gpu", "dali-gpu"]
STOKER_FOR = {"cpu": "stoker-cpu", "gpu": "stoker-gpu"}


# --------------------------------------------------------------------------- one measurement

class _Timeout(Exception):
    pass


def _batch_len(batch) -> int:
    images = batch[0] if isinstance(batch, (tuple, list)) else batch
    if isinstance(images, list) or hasattr(images, "as_cpu"):      # list or TensorList(GPU)
        return len(images)
    return int(images.shape[0])


def _check_batch(workload: str, batch, batch_size: int) -> str | None:
    """A wrong output must not pass for a fast one: shape and dtype of the first batch."""
    images = batch[0] if isinstance(batch, (tuple, list)) else batch
    n = _batch_len(batch)
    if n < 1 or n > batch_size:
        return f"batch of {n} {'utterances' if workload in peers.AUDIO else 'images'}, " \
               f"expected {batch_size}"
    if workload == "decode":
        return None
    if workload in peers.AUDIO:
        return _check_asr(batch, n)
    if workload == "ssd":
        shapes = [tuple(x.shape) for x in batch]
        want = [(n, 3, 300, 300), (n, 8732, 4), (n, 8732)]
        return None if shapes == want else f"outputs of shapes {shapes}, expected {want}"
    if hasattr(images, "as_tensor"):                             # a DALI-API TensorList
        shape = tuple(images.as_tensor().shape())
    else:
        shape = getattr(images, "shape", None)
    if shape is None or tuple(shape)[1:] != (3, peers.CROP, peers.CROP):
        return f"images of shape {shape}, expected (N, 3, {peers.CROP}, {peers.CROP})"
    dtype = str(getattr(images, "dtype", ""))
    if dtype and "float16" not in dtype and "FLOAT16" not in dtype:
        return f"images of dtype {dtype}, expected float16"
    return None


def _host_array(x):
    """A batch output as one NumPy array: torch tensor (any device) or DALI-API TensorList."""
    import numpy as np
    if hasattr(x, "as_cpu"):                                     # TensorListGPU
        x = x.as_cpu()
    if hasattr(x, "as_tensor"):                                  # TensorListCPU
        return np.array(x.as_tensor())
    if hasattr(x, "cpu"):                                        # torch
        return x.cpu().numpy()
    return np.asarray(x)


def _check_asr(batch, n: int) -> str | None:
    """features float32 [n, 64, T] with T the longest utterance's frames rounded up to a
    multiple of 16, finite; frame counts [n]."""
    import numpy as np
    feats, frames = _host_array(batch[0]), _host_array(batch[1]).reshape(-1)
    bands, align = peers.ASR["nfilter"], peers.ASR["pad_align"]
    if feats.ndim != 3 or feats.shape[:2] != (n, bands) or feats.dtype != np.float32:
        return f"features of shape {feats.shape} and dtype {feats.dtype}, expected float32 " \
               f"({n}, {bands}, T)"
    if frames.shape != (n,) or frames.min() < 1:
        return f"frame counts {frames.tolist()}, expected {n} positive counts"
    want = -(-int(frames.max()) // align) * align
    if feats.shape[2] != want:
        return f"features padded to {feats.shape[2]} frames, expected {want} (the longest " \
               f"utterance's {int(frames.max())} rounded up to a multiple of {align})"
    if not np.isfinite(feats).all():
        return "features with NaN or infinity"
    return None


def measure_one(spec: dict) -> dict:
    """Build one contender and time it. Never raises: failures become the row's status."""
    name, workload, threads = spec["contender"], spec["workload"], spec["threads"]
    row = {"contender": name, "workload": workload, "threads": threads,
           "placement": PLACEMENT[name], "status": "ok"}
    ssd, asr = workload == "ssd", workload in peers.AUDIO
    if asr:
        root = spec["asr_root"]
        files = make_dataset.list_audio(root)
    else:
        root = spec["ssd_root"] + "/images" if ssd else spec["root"]
        files = [] if ssd else make_dataset.list_images(spec["root"])
    job = peers.Job(root=root, files=files,
                    workload=workload, batch_size=spec["batch_size"], threads=threads,
                    seed=spec["seed"], train_recipe=spec.get("train_recipe", "decode_random_crop"),
                    annotations=spec["ssd_root"] + "/instances.json" if ssd else "",
                    file_list=root + "/" + make_dataset.AUDIO_FILE_LIST if asr else "")
    if peers.cuda_available():
        import torch
        torch.cuda.init()     # every contender pays for a CUDA context; and sync_gpu works
        torch.cuda.reset_peak_memory_stats(0)
    mon = measure.Monitor().start()
    batches = None
    old = None
    if spec.get("timeout") and threading_main():
        def on_alarm(*_):
            raise _Timeout(f"timed out after {spec['timeout']} s")
        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(int(spec["timeout"]))
    try:
        t0 = measure.wall()
        try:
            batches, row["description"] = CONTENDERS[name](job)
        except peers.Unavailable as e:
            row["status"] = f"unavailable: {e}"
            return row
        it = iter(batches)
        first = next(it)
        bad = _check_batch(workload, first, job.batch_size)
        if bad:
            row["status"] = f"wrong output: {bad}"
            return row
        measure.sync_gpu()
        row["startup_s"] = measure.wall() - t0
        del first
        for _ in range(spec["warmup_batches"]):
            next(it)
        measure.sync_gpu()
        bpp = spec.get("batches_per_pass")
        if not bpp:
            # A pass long enough that batches arriving in bursts (every DataLoader worker
            # finishes a whole batch at about the same time) don't decide its rate: as many
            # batches as arrive in min_pass_s seconds, and at least 4 per worker. Counted on
            # a calibration pass (one more warm-up pass); prefetched batches can only make it
            # longer, by at most the prefetch depth.
            bpp, t = 0, measure.wall()
            while bpp < max(10, 4 * threads) or measure.wall() - t < spec.get("min_pass_s", 2.0):
                next(it)
                bpp += 1
                if bpp % 8 == 0:
                    measure.sync_gpu()
                if bpp >= 5000:
                    break
        row["batches_per_pass"] = bpp
        cpu0, times, counts = measure.tree_cpu_seconds(), [], []
        for _ in range(spec["passes"]):
            t = measure.wall()
            n = 0
            for _ in range(bpp):
                n += _batch_len(next(it))
            measure.sync_gpu()
            times.append(measure.wall() - t)
            counts.append(n)
        cpu = measure.tree_cpu_seconds() - cpu0
        pss = measure.tree_pss_bytes(measure.tree_pids())
        rates = [c / t for c, t in zip(counts, times)]
        row.update(
            images_per_s=statistics.median(rates), pass_rates=rates,
            images_per_s_overall=sum(counts) / sum(times),
            spread=(max(rates) - min(rates)) / statistics.median(rates),
            cpu_s_per_image=cpu / sum(counts), cores_busy=cpu / sum(times),
            images_timed=sum(counts), seconds_timed=sum(times),
            pss_mb=pss / 2**20 if pss else None)
    except _Timeout as e:
        row["status"] = f"failed: {e}"
    except Exception as e:
        row["status"] = f"failed: {type(e).__name__}: {e}".splitlines()[0][:300]
        row["traceback"] = traceback.format_exc()
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        if batches is not None and hasattr(batches, "close"):
            try:
                batches.close()          # shuts DataLoader workers and reader threads down
            except Exception:
                pass
        mon.stop()
        row["peak_rss_mb"] = mon.peak_rss / 2**20
        g = measure.torch_gpu_peak_bytes()
        row["gpu_torch_peak_mb"] = g / 2**20 if g is not None else None
        row["gpu_nvml_peak_mb"] = mon.peak_gpu_nvml / 2**20 if mon.peak_gpu_nvml else None
        row["gpu_device_peak_mb"] = (mon.peak_gpu_device / 2**20
                                     if mon.peak_gpu_device else None)
    return row


def threading_main() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


def _child_main(spec_json: str) -> int:
    row = measure_one(json.loads(spec_json))
    sys.stdout.flush()
    print("\n@@ROW@@" + json.dumps(row), flush=True)
    return 0


def run_child(spec: dict, hard_timeout: float, log) -> dict:
    """measure_one in a fresh interpreter: its memory figures are its own, and a crash or a hang
    costs one row, not the run."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_child", json.dumps(spec)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=hard_timeout,
                           start_new_session=True)
    except subprocess.TimeoutExpired as e:
        log.write(f"--- {spec['contender']} {spec['workload']} t={spec['threads']}: hard "
                  f"timeout\n{e.stdout or ''}{e.stderr or ''}\n")
        return {**_row_stub(spec), "status": f"failed: killed after {hard_timeout:.0f} s"}
    log.write(f"--- {spec['contender']} {spec['workload']} t={spec['threads']} rc="
              f"{p.returncode}\n{p.stdout}{p.stderr}\n")
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("@@ROW@@"):
            return json.loads(line[len("@@ROW@@"):])
    tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:200]
    return {**_row_stub(spec), "status": f"failed: exit {p.returncode}: {tail}"}


def _row_stub(spec):
    return {"contender": spec["contender"], "workload": spec["workload"],
            "threads": spec["threads"], "placement": PLACEMENT[spec["contender"]]}


# --------------------------------------------------------------------------- report

def _fmt(x, f="{:.0f}"):
    return "" if x is None else f.format(x)


def add_ratios(rows):
    """stoker/contender, at the same workload and threads, against the stoker contender of the
    same placement: images/s, and images per CPU-second (work done per core)."""
    by = {(r["contender"], r["workload"], r["threads"]): r for r in rows}
    for r in rows:
        ref = by.get((STOKER_FOR[r["placement"]], r["workload"], r["threads"]))
        r["ratio_speed"] = r["ratio_cpu"] = None
        if r["contender"].startswith("stoker") or r.get("status") != "ok":
            continue
        if ref and ref.get("status") == "ok":
            r["ratio_speed"] = ref["images_per_s"] / r["images_per_s"]
            r["ratio_cpu"] = r["cpu_s_per_image"] / ref["cpu_s_per_image"]


def _gpu_mb(r):
    for k in ("gpu_nvml_peak_mb", "gpu_torch_peak_mb"):
        if r.get(k):
            return r[k]
    return None


def table_unit(rows) -> str:
    """The rate's unit in a table's header: "img" or "utt" (asr's utterances) where all its
    rows count the same thing, else "item" (an image, or an utterance for asr)."""
    units = {peers.unit(r["workload"]) for r in rows}
    return units.pop() if len(units) == 1 else "item"


def table(rows, markdown: bool) -> str:
    u = table_unit(rows)
    head = ["workload", "threads", "contender", f"{u}/s", f"CPU ms/{u}", "cores busy",
            "peak RSS MB", "PSS MB", "GPU MB", f"stoker/it {u}/s", "stoker/it per CPU-s",
            "status"]
    body = []
    for r in rows:
        ok = r.get("status") == "ok"
        body.append([
            r["workload"], str(r["threads"]), r["contender"],
            _fmt(r.get("images_per_s")) if ok else "",
            _fmt(r.get("cpu_s_per_image") and r["cpu_s_per_image"] * 1e3, "{:.2f}") if ok else "",
            _fmt(r.get("cores_busy"), "{:.2f}") if ok else "",
            _fmt(r.get("peak_rss_mb")) if ok else "",
            _fmt(r.get("pss_mb")) if ok else "",
            _fmt(_gpu_mb(r)) if ok else "",
            _fmt(r.get("ratio_speed"), "{:.2f}x") or ("n/a" if ok and not
                                                      r["contender"].startswith("stoker") else ""),
            _fmt(r.get("ratio_cpu"), "{:.2f}x") or ("n/a" if ok and not
                                                    r["contender"].startswith("stoker") else ""),
            r.get("status", "")])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "/") for c in b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
              for i, h in enumerate(head)]
    widths[-1] = len(head[-1])
    fmt = lambda cells: "  ".join(c.ljust(w) if i in (0, 2, len(cells) - 1) else c.rjust(w)  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(b) for b in body])


def machine_info() -> dict:
    info = {"host": socket.gethostname(), "platform": platform.platform(),
            "python": platform.python_version(), "cpu_count": os.cpu_count()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["ram_gb"] = round(int(line.split()[1]) / 2**20, 1)
                break
    except OSError:
        pass
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    try:
        info["load_avg_at_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


def _versions_and_gpu() -> dict:
    """Versions from the installed distributions' metadata (nothing imported); the GPU's name
    from a child process, only where an NVIDIA device exists, so the parent never imports
    torch or initialises CUDA."""
    from importlib import metadata
    dists = {"torch": ["torch"], "torchvision": ["torchvision"],
             "opencv": ["opencv-python-headless", "opencv-python", "opencv-contrib-python"],
             "pillow": ["pillow", "Pillow"], "numpy": ["numpy"],
             "nvidia-dali": ["nvidia-dali-cuda130", "nvidia-dali-cuda120", "nvidia-dali-cuda110"],
             "stoker": ["stoker"], "matplotlib": ["matplotlib"], "nvidia-ml-py": ["nvidia-ml-py"],
             "torchaudio": ["torchaudio"], "librosa": ["librosa"], "soundfile": ["soundfile"]}
    versions = {}
    for key, names in dists.items():
        versions[key] = None
        for n in names:
            try:
                versions[key] = metadata.version(n)
                break
            except metadata.PackageNotFoundError:
                pass
    out = {"versions": versions}
    if not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")
            or shutil.which("nvidia-smi")):
        return out
    code = ("import json, torch; ok = torch.cuda.is_available(); print(json.dumps("
            "{'gpu': torch.cuda.get_device_name(0), 'cuda': torch.version.cuda} if ok else {}))")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        out.update(json.loads(p.stdout.strip().splitlines()[-1]))
    except Exception as e:
        out["gpu_probe_error"] = str(e)
    return out


def git_info() -> dict:
    def git(*a):
        try:
            return subprocess.run(["git", "-C", str(HERE.parent), *a], capture_output=True,
                                  text=True, timeout=10).stdout.strip()
        except Exception:
            return ""
    commit = git("rev-parse", "HEAD")
    if len(commit) == 40:
        return {"commit": commit,
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
    # A copy of the tree without .git (the GPU machine's): the caller may say which commit.
    return {"commit": os.environ.get("STOKER_COMMIT", "(no commit)"), "dirty": None}


def plot(rows, path: Path) -> str:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install matplotlib)"
    workloads = [w for w in peers.WORKLOADS if any(r["workload"] == w for r in rows)]
    fig, axes = plt.subplots(1, len(workloads), figsize=(5.5 * len(workloads), 4.2),
                             squeeze=False)
    for ax, w in zip(axes[0], workloads):
        for name in ORDER:
            pts = sorted((r["threads"], r["images_per_s"]) for r in rows
                         if r["workload"] == w and r["contender"] == name
                         and r.get("status") == "ok")
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name,
                        linestyle="-" if PLACEMENT[name] == "cpu" else "--")
        ax.set_title(w)
        ax.set_xlabel("CPU threads (workers)")
        ax.set_ylabel("utterances/s" if w in peers.AUDIO else "images/s")
        ax.set_xscale("log", base=2)
        ticks = sorted({r["threads"] for r in rows})
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot: {path}"


def asr_dataset_line(a: dict) -> str:
    fmts = ", ".join(f"{v} {k.upper()}" for k, v in a.get("formats", {}).items())
    return (f"{a.get('n')} utterances ({a.get('utterances')} LibriSpeech utterances tiled: "
            f"{fmts}), "
            f"{a.get('sample_rate', 16000) / 1000:g} kHz mono, {a.get('min_s', 0):.2f}-"
            f"{a.get('max_s', 0):.2f} s, mean {a.get('mean_s', 0):.2f} s "
            f"({a.get('total_s', 0) / 60:.1f} min in all), mean {a.get('mean_kb', 0):.1f} KB "
            f"({a.get('root')})")


def write_reports(result: dict, out_dir: Path, stem: str) -> list[str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = result["rows"]
    notes = []
    js = out_dir / f"{stem}.json"
    js.write_text(json.dumps(result, indent=1, default=str) + "\n")
    png = out_dir / f"{stem}.png"
    notes.append(plot(rows, png))
    s, m, d = result["settings"], result["machine"], result["dataset"]
    gpu = m.get("gpu") or "none"
    md = [f"# stoker benchmark, {result['date']}", "",
          f"- machine: {m.get('host')}, {m.get('cpu', '?')}, {m.get('cpus_usable', m.get('cpu_count'))} "
          f"CPUs usable, {m.get('ram_gb', '?')} GB RAM, GPU: {gpu}; load at start "
          f"{m.get('load_avg_at_start')}",
          f"- commit: {result['git']['commit']}"
          f"{' (dirty tree)' if result['git']['dirty'] else ''}",
          *([f"- dataset: {d.get('n')} JPEGs, {d.get('classes')} classes, mean "
             f"{d.get('mean_kb', 0):.1f} KB, mean {d.get('mean_width', 0):.0f}x"
             f"{d.get('mean_height', 0):.0f}, {d.get('sources')}, seed {d.get('seed')} "
             f"({d.get('root')})"] if "n" in d else []),
          *([f"- ssd dataset: {d['ssd']['n']} COCO photos ({d['ssd'].get('photos')} real ones "
             f"tiled), {d['ssd'].get('boxes')} boxes, mean {d['ssd'].get('mean_kb', 0):.1f} KB "
             f"({d['ssd'].get('root')})"] if "ssd" in d else []),
          *([f"- asr dataset: {asr_dataset_line(d['asr'])}"] if "asr" in d else []),
          f"- settings: batch {s['batch_size']}, {s['passes']} timed passes of "
          f"{s['batches_per_pass']} batches after {s['warmup_batches']} warm-up batches; "
          f"median {table_unit(rows)}/s; "
          f"{'in-process' if s['in_process'] else 'one process per row'}",
          "- versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v),
          *([f"- merged from {len(result['merged_from'])} runs: " + "; ".join(
              f"{m['date']} (load {m['load_avg_at_start']})" for m in result["merged_from"])]
            if result.get("merged_from") else []),
          "", table(rows, markdown=True), "",
          *([f"{table_unit(rows)}: an image, or an utterance for asr.", ""]
            if table_unit(rows) == "item" else []),
          "stoker/it: stoker's figure over the contender's, at the same workload and threads, "
          "against stoker-cpu for CPU contenders and stoker-gpu for GPU ones "
          f"({table_unit(rows)}/s: >1 means "
          "stoker is faster; per CPU-s: >1 means stoker does more work per core-second).", "",
          "## Contenders", ""]
    seen = set()
    for r in rows:
        key = (r["contender"], r["workload"])
        if r.get("description") and key not in seen:
            seen.add(key)
            md.append(f"- {r['contender']} / {r['workload']}: {r['description']}")
    md.append("")
    (out_dir / f"{stem}.md").write_text("\n".join(md))
    for ext in ("md", "json", "png"):
        src = out_dir / f"{stem}.{ext}"
        if src.exists():
            (out_dir / f"latest.{ext}").write_bytes(src.read_bytes())
    return [f"results: {out_dir / (stem + '.md')}, {js.name}" +
            (f", {png.name}" if png.exists() else "")] + notes


# --------------------------------------------------------------------------- main

def merge(paths, out_dir: Path) -> int:
    """One report from several runs' JSON: rows of later files replace earlier ones at the same
    (contender, workload, threads); machine, dataset and settings come from the first file, and
    each file's date and settings are kept under "merged_from"."""
    results = [json.loads(Path(p).read_text()) for p in paths]
    base = dict(results[0])
    by = {}
    for r in results:
        for row in r["rows"]:
            by[(row["contender"], row["workload"], row["threads"])] = row
        if r["dataset"].get("root") != base["dataset"].get("root") or \
                r["machine"].get("host") != base["machine"].get("host"):
            print(f"note: {r['date']} ran on {r['machine'].get('host')} with "
                  f"{r['dataset'].get('root')}: not the first file's machine or dataset",
                  file=sys.stderr)
    rows = sorted(by.values(), key=lambda r: (peers.WORKLOADS.index(r["workload"]),
                                              r["threads"], ORDER.index(r["contender"])))
    add_ratios(rows)
    base["rows"] = rows
    base["merged_from"] = [{"file": str(p), "date": r["date"], "settings": r["settings"],
                            "load_avg_at_start": r["machine"].get("load_avg_at_start")}
                           for p, r in zip(paths, results)]
    stem = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-merged"
    for n in write_reports(base, out_dir, stem):
        print(n)
    print()
    print(table(rows, markdown=False))
    return 0


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--data", help="ImageFolder-style JPEG folder (default: build one under "
                                   "bench/data/)")
    ap.add_argument("--n-images", type=int, default=None,
                    help="images (asr: utterances) in the built dataset (default 1000; smoke 64)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--testdata", default=os.environ.get("STOKER_TESTDATA",
                                                         str(HERE.parent.parent / "shared" / "testdata")),
                    help="the test data folder; the ssd workload tiles its coco/ photos, the asr "
                         "workload its audio/{wav,flac,ogg} utterances")
    ap.add_argument("--batch-size", type=int, default=None, help="default 64; smoke 8")
    ap.add_argument("--workloads", default="train,eval,decode")
    ap.add_argument("--contenders", default=",".join(ORDER),
                    help=f"comma-separated, from {', '.join(ORDER)}")
    ap.add_argument("--threads", default=None,
                    help="comma-separated CPU thread/worker counts (default: 1,2,4,... up to "
                         "the usable cores; smoke: 1)")
    ap.add_argument("--passes", type=int, default=5, help="timed passes (median taken; >= 5)")
    ap.add_argument("--batches-per-pass", type=int, default=None,
                    help="batches in a timed pass (default: the most of 10, 4 x threads and "
                         "--min-pass-seconds at the warm-up's rate; smoke 2)")
    ap.add_argument("--min-pass-seconds", type=float, default=2.0,
                    help="least duration of a timed pass when --batches-per-pass is not given")
    ap.add_argument("--warmup-batches", type=int, default=None,
                    help="default 2 x threads + 2; smoke 1")
    ap.add_argument("--train-recipe", default="decode_random_crop",
                    choices=["decode_random_crop", "random_resized_crop"],
                    help="train pipeline for DALI-API contenders (stoker, DALI)")
    ap.add_argument("--smoke", action="store_true",
                    help="a few batches of everything, in one process: for CI")
    ap.add_argument("--in-process", action="store_true",
                    help="measure in this process (faster; memory figures less clean)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per row before it is marked failed (default 300; smoke 60)")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="no measuring: combine the rows of earlier runs' JSON files (e.g. "
                         "runs split to fit a time limit) into one report")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.smoke:
        a.n_images = a.n_images or 64
        a.batch_size = a.batch_size or 8
        a.threads = a.threads or "1"
        a.batches_per_pass = a.batches_per_pass or 2
        a.warmup_batches = 1 if a.warmup_batches is None else a.warmup_batches
        a.timeout = a.timeout or 60
        a.in_process = True
    a.n_images = a.n_images or 1000
    a.batch_size = a.batch_size or 64
    a.timeout = a.timeout or 300
    if a.threads is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        ts, t = [], 1
        while t <= cores:
            ts.append(t)
            t *= 2
        if ts[-1] != cores:
            ts.append(cores)
        a.threads = ",".join(map(str, ts))
    a.threads = [int(t) for t in str(a.threads).split(",") if t.strip()]
    a.workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    a.contenders_named = a.contenders != ap.get_default("contenders")
    a.contenders = [c.strip() for c in a.contenders.split(",") if c.strip()]
    for w in a.workloads:
        if w not in peers.WORKLOADS:
            ap.error(f"--workloads: unknown workload {w!r}; expected some of {peers.WORKLOADS}")
    for c in a.contenders:
        if c not in CONTENDERS:
            ap.error(f"--contenders: unknown contender {c!r}; expected some of {ORDER}")
    if a.passes < 5 and not a.smoke:
        ap.error(f"--passes: {a.passes} is too few for a median; use 5 or more")
    return a


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_child"]:
        return _child_main(argv[1])
    a = parse_args(argv)
    if a.merge:
        return merge(a.merge, Path(a.out))
    t_start = time.time()
    if a.data:
        root = Path(a.data)
        if not root.is_dir():
            print(f"--data: {root} is not a folder; give an ImageFolder-style folder of JPEGs "
                  "or leave --data out to build one", file=sys.stderr)
            return 2
        man = root / make_dataset.MANIFEST
        dataset = json.loads(man.read_text()) if man.is_file() else {"root": str(root)}
        files = make_dataset.list_images(root)
        if not files:
            print(f"--data: no JPEGs in class sub-folders of {root}", file=sys.stderr)
            return 2
        if "mean_kb" not in dataset:
            sizes = [os.path.getsize(f) for f, _ in files]
            dataset.update(n=len(files), mean_kb=statistics.fmean(sizes) / 1024,
                           classes=len({lab for _, lab in files}), sources="user folder")
    elif [w for w in a.workloads if w != "ssd" and w not in peers.AUDIO]:
        root = HERE / "data" / f"imagenet-like-{a.n_images}-s{a.seed}"
        dataset = make_dataset.load_or_make(root, a.n_images, seed=a.seed)
    else:
        root, dataset = None, {}
    ssd_root = None
    if "ssd" in a.workloads:
        ssd_root = HERE / "data" / f"coco-tiled-{a.n_images}"
        try:
            dataset["ssd"] = make_dataset.make_coco_dataset(ssd_root, a.n_images,
                                                            Path(a.testdata) / "coco")
        except (OSError, ValueError) as e:
            if a.workloads == ["ssd"]:
                print(f"ssd workload: {e}", file=sys.stderr)
                return 2
            print(f"note: the ssd workload is left out: {e}", file=sys.stderr)
            a.workloads.remove("ssd")
    asr_root = None
    if "asr" in a.workloads:
        asr_root = HERE / "data" / f"librispeech-tiled-{a.n_images}"
        try:
            dataset["asr"] = make_dataset.make_audio_dataset(asr_root, a.n_images,
                                                             Path(a.testdata) / "audio")
        except (OSError, ValueError) as e:
            if a.workloads == ["asr"]:
                print(f"asr workload: {e}", file=sys.stderr)
                return 2
            print(f"note: the asr workload is left out: {e}", file=sys.stderr)
            a.workloads.remove("asr")
    n_files = dataset.get("n") or dataset.get("ssd", {}).get("n") or \
        dataset.get("asr", {}).get("n") or len(make_dataset.list_images(root))

    info = _versions_and_gpu()
    result = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
              "machine": {**machine_info(), **{k: info[k] for k in ("gpu", "cuda") if k in info}},
              "git": git_info(), "versions": info.get("versions", {}), "dataset": dataset,
              "settings": {"batch_size": a.batch_size, "passes": a.passes,
                           "threads": a.threads, "workloads": a.workloads,
                           "contenders": a.contenders, "in_process": a.in_process,
                           "smoke": a.smoke, "train_recipe": a.train_recipe,
                           "batches_per_pass": a.batches_per_pass or
                           f"max(10, 4 x threads, {a.min_pass_seconds} s at warm-up rate)",
                           "warmup_batches": a.warmup_batches if a.warmup_batches is not None
                           else "2 x threads + 2"},
              "rows": []}
    if a.batch_size > n_files:
        print(f"note: batch size {a.batch_size} > {n_files} images: batches repeat files",
              file=sys.stderr)

    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    stem = f"{stamp}-{socket.gethostname()}" + ("-smoke" if a.smoke else "")
    log_path = out_dir / f"{stem}.log"
    rows = result["rows"]
    unavailable = {}          # (contender, workload) -> reason: not retried at other settings
    named = a.contenders_named    # else contenders with no pipeline for a workload are skipped
    with open(log_path, "w") as log:
        for threads in a.threads:
            for workload in a.workloads:
                for name in [c for c in ORDER if c in a.contenders
                             and (named or peers.applies(c, workload))]:
                    if (name, workload) in unavailable:
                        rows.append({**_row_stub({"contender": name, "workload": workload,
                                                  "threads": threads}),
                                     "status": unavailable[name, workload]})
                        continue
                    spec = {"root": str(root), "ssd_root": str(ssd_root),
                            "asr_root": str(asr_root),
                            "contender": name, "workload": workload,
                            "threads": threads, "batch_size": a.batch_size, "seed": a.seed,
                            "passes": a.passes, "train_recipe": a.train_recipe,
                            "batches_per_pass": a.batches_per_pass,
                            "min_pass_s": a.min_pass_seconds,
                            "warmup_batches": (a.warmup_batches if a.warmup_batches is not None
                                               else 2 * threads + 2),
                            "timeout": a.timeout}
                    t0 = time.time()
                    row = (measure_one(spec) if a.in_process
                           else run_child(spec, a.timeout + 60, log))
                    if a.in_process and row.get("traceback"):
                        log.write(f"--- {name} {workload} t={threads}\n{row['traceback']}\n")
                    if row.get("status", "").startswith("unavailable"):
                        unavailable[name, workload] = row["status"]
                    rows.append(row)
                    status = row.get("status")
                    u = peers.unit(workload)
                    figs = (f"{row['images_per_s']:.0f} {u}/s, "
                            f"{row['cpu_s_per_image'] * 1e3:.2f} CPU ms/{u}"
                            if status == "ok" else status)
                    print(f"  {workload:6s} t={threads:<3d} {name:16s} {figs} "
                          f"({time.time() - t0:.1f} s)", flush=True)
    rows.sort(key=lambda r: (peers.WORKLOADS.index(r["workload"]), r["threads"],
                             ORDER.index(r["contender"])))
    add_ratios(rows)
    result["seconds"] = time.time() - t_start
    notes = write_reports(result, out_dir, stem)
    print()
    for d in [dataset] * ("n" in dataset) + [dataset.get("ssd", {})] * ("ssd" in dataset):
        print(f"dataset: {d['n']} JPEGs, mean {d['mean_kb']:.1f} KB ({d.get('root', root)})")
    if "asr" in dataset:
        print(f"asr dataset: {asr_dataset_line(dataset['asr'])}")
    print(f"batch {a.batch_size}; machine: "
          f"{result['machine'].get('cpus_usable')} CPUs, GPU: "
          f"{result['machine'].get('gpu') or 'none'}; commit {result['git']['commit'][:12]}")
    for n in notes + [f"log: {log_path}", f"total {result['seconds']:.0f} s"]:
        print(n)
    print()
    print(table(rows, markdown=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
