"""Where one batch's time goes when stoker is fed from Python: the phases of latency.py's
stoker-py contender timed apart (examples/c/make_pipeline.py's pipeline, batch 1, one batch in
flight): feed_input, run(), feed_ndarray into a torch tensor, the stream synchronize, and their
total; then feed_input + run() + torch.cuda.synchronize() without the copy. p50 in µs over 350
iterations after 50, for the async executor and for exec_async=False, exec_pipelined=False.

    python bench/feed_phases.py IMAGE_FOLDER      (a GPU, torch; the JPEGs directly in it)
"""
import glob
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def p50(values):
    return sorted(values)[len(values) // 2]


def main():
    import torch
    sys.path.insert(0, str(ROOT / "examples" / "c"))
    from make_pipeline import build
    from stoker.plugin.pytorch import feed_ndarray
    files = sorted(glob.glob(str(pathlib.Path(sys.argv[1]) / "*.jpg")))[:64]
    data = [np.fromfile(f, np.uint8) for f in files]
    for mode in ("async", "sync"):
        sync = mode == "sync"
        pipe = build(1, "gpu", num_threads=4, prefetch_queue_depth=1, exec_async=not sync,
                     exec_pipelined=not sync)
        pipe.build()
        target = torch.empty((1, 3, 224, 224), device="cuda")
        stream = torch.cuda.current_stream(0)
        phases = {k: [] for k in ("feed", "run", "copy", "sync", "total")}
        for it in range(400):
            t0 = time.perf_counter()
            pipe.feed_input("jpegs", [data[it % len(data)]])
            t1 = time.perf_counter()
            (out,) = pipe.run()
            t2 = time.perf_counter()
            feed_ndarray(out, target, cuda_stream=stream)
            t3 = time.perf_counter()
            stream.synchronize()
            t4 = time.perf_counter()
            if it >= 50:
                for k, v in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
                    phases[k].append(v * 1e6)
        print(mode, " ".join(f"{k} p50 {p50(v):.0f}us" for k, v in phases.items()), flush=True)
        lat = []
        for it in range(400):
            t0 = time.perf_counter()
            pipe.feed_input("jpegs", [data[it % len(data)]])
            pipe.run()
            torch.cuda.synchronize()
            if it >= 50:
                lat.append((time.perf_counter() - t0) * 1e6)
        print(mode, f"feed+run+device sync p50 {p50(lat):.0f}us", flush=True)
        del pipe


if __name__ == "__main__":
    main()
