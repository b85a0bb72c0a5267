"""Video sequences (#20): on the CPU, stoker's readers.video beside torchcodec, decord, PyAV and
OpenCV (and NVIDIA DALI 2.4's CPU video reader, which decodes VP9 but not H.264); with
--device gpu, stoker's readers.video(device='gpu') (NVDEC through FFmpeg) beside DALI 2.4's
(NVDEC), at equal threads. Same 1080p clips, same shuffled sequences: frames/s and frames per
CPU-second; on the GPU also the device memory each pipeline took (cudaMemGetInfo before and
after its first batches) and the frames stoker decoded on NVDEC.

Seed 003's workload: clips of 1920x1080, 300 frames at 30 fps, sequences of `--length` frames
(8 and 16) with stride 2, shuffled, batch 4. The clips are made once under bench/data/ from the
test data's Big Buck Bunny clip (scaled to 1080p, looped, each clip from another frame) with
FFmpeg's encoders through PyAV: H.264 (libx264 veryfast, B-frames; a keyframe every 30 frames)
and VP9 (libvpx-vp9 realtime; keyframes about every 30 frames). Every contender decodes with
one thread per decoder; stoker spreads sequences over `--threads` worker threads, the peers run
on the calling thread.
Frames per CPU-second counts the whole process's CPU time (FFmpeg's threads included), over
whole passes through the same sequence list after a warm-up.

    python bench/video.py [--clips 6] [--length 8,16] [--threads 1,2] [--sequences 48]
                          [--codecs h264,vp9] [--device cpu|gpu] [--out bench/results]

torchcodec needs FFmpeg's shared libraries (libavdevice too: apt-get install libavdevice59);
a peer that cannot be imported leaves its rows out, saying why.
"""
import argparse
import json
import os
import pathlib
import platform
import random
import resource
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = "video/mp4/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"
STRIDE = 2
BATCH = 4


def testdata():
    env = os.environ.get("STOKER_TESTDATA")
    return pathlib.Path(env) if env else ROOT.parent / "shared" / "testdata"


def make_clips(n, codec, where, frames=300, size=(1920, 1080)):
    """n clips of `frames` 1080p frames (H.264 or VP9), each starting at another frame of the
    looped source clip. Made once; returns the paths."""
    ext = "mp4" if codec == "h264" else "webm"
    paths = [where / f"clip{k:02d}.{ext}" for k in range(n)]
    if all(p.exists() for p in paths):
        return paths
    import av
    where.mkdir(parents=True, exist_ok=True)
    with av.open(str(testdata() / SOURCE)) as src:
        base = [f.reformat(width=size[0], height=size[1], format="yuv420p")
                for f in src.decode(video=0)]
    for k, path in enumerate(paths):
        tmp = path.with_suffix(".tmp" + path.suffix)
        with av.open(str(tmp), "w", format="mp4" if codec == "h264" else "webm") as out:
            if codec == "h264":
                s = out.add_stream("libx264", rate=30)
                s.options = {"preset": "veryfast", "bf": "2", "crf": "23", "sc_threshold": "0"}
            else:
                s = out.add_stream("libvpx-vp9", rate=30)
                s.options = {"deadline": "realtime", "cpu-used": "8", "crf": "33", "b": "0",
                             "row-mt": "1", "auto-alt-ref": "0"}
            s.width, s.height, s.pix_fmt = size[0], size[1], "yuv420p"
            for i in range(frames):
                f = base[(17 * k + i) % len(base)]
                f.pts = None
                for p in s.encode(f):
                    out.mux(p)
            for p in s.encode():
                out.mux(p)
        tmp.rename(path)
        print(f"  made {path} ({path.stat().st_size / 1e6:.1f} MB)", flush=True)
    return paths


def sequences(paths, frames, length, seed=0):
    """(path, first frame) of every sequence readers.video lists (step = length), shuffled."""
    span = (length - 1) * STRIDE + 1
    seqs = [(str(p), s) for p in paths for s in range(0, frames - span + 1, length)]
    random.Random(seed).shuffle(seqs)
    return seqs


# ---- contenders: each gives a function that decodes the sequences it is given, as batches

def stoker_contender(paths, length, threads, api="stoker"):
    if api == "stoker":
        import stoker as base
    else:
        import nvidia.dali as base

    @base.pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, seed=0,
                       prefetch_queue_depth=2)
    def pipe():
        reader = (base.fn.readers.video if api == "stoker"
                  else base.fn.experimental.readers.video)
        return reader(device="cpu", filenames=[str(p) for p in paths], sequence_length=length,
                      stride=STRIDE, step=length, random_shuffle=True, initial_fill=64, name="R")
    p = pipe()
    p.build()
    per_epoch = p.epoch_size("R")

    def run(n_seq):
        got = 0
        while got < n_seq:
            (v,) = p.run()
            got += len(v)
            assert np.array(v[0]).shape[0] == length
        return got
    return run, per_epoch


def gpu_contender(paths, length, threads, api):
    """readers.video(device='gpu') of stoker or DALI; run(n) returns after the GPU finished."""
    if api == "stoker":
        import stoker as base
    else:
        import nvidia.dali as base

    @base.pipeline_def(batch_size=BATCH, num_threads=threads, device_id=0, seed=0,
                       prefetch_queue_depth=2)
    def pipe():
        return base.fn.readers.video(device="gpu", filenames=[str(p) for p in paths],
                                     sequence_length=length, stride=STRIDE, step=length,
                                     random_shuffle=True, initial_fill=64, name="R")
    p = pipe()
    p.build()

    def run(n_seq):
        got, last = 0, None
        while got < n_seq:
            (last,) = p.run()
            got += len(last)
        assert np.array(last.as_cpu()[0]).shape[0] == length  # waits for the GPU's work
        return got
    return run, p


def device_free_mb():
    import ctypes
    for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try:
            rt = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return float("nan")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    rt.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
    return free.value / 2**20


def main_gpu(a, n_seq):
    import gc
    import stoker
    rows = []
    for codec in a.codecs.split(","):
        paths = make_clips(a.clips, codec, ROOT / "bench" / "data" / f"video-1080p-{codec}-{a.clips}")
        for p in paths:
            p.read_bytes()
        for length in (int(x) for x in a.length.split(",")):
            for threads in (int(x) for x in a.threads.split(",")):
                for api in ("stoker", "dali"):
                    try:
                        free0 = device_free_mb()
                        counts0 = stoker._C.video_gpu_decode_counts()
                        run, p = gpu_contender(paths, length, threads, api)
                        run(n_seq)
                        mem = free0 - device_free_mb()
                        fps, per_cpu, cores = measure(run, n_seq, length)
                        counts = stoker._C.video_gpu_decode_counts()
                        del run, p
                        gc.collect()
                    except Exception as e:
                        print(f"  {api} ({codec}, {length} frames): left out: {type(e).__name__}: "
                              f"{str(e).splitlines()[0][:200]}", flush=True)
                        continue
                    nvdec = counts["nvdec"] - counts0["nvdec"]
                    on_cpu = counts["cpu"] - counts0["cpu"]
                    rows.append(dict(codec=codec, length=length, threads=threads,
                                     contender=f"{api}-gpu", fps=fps, per_cpu=per_cpu, cores=cores,
                                     device_mb=mem, nvdec_frames=nvdec, cpu_frames=on_cpu))
                    print(json.dumps(rows[-1]), flush=True)
    lines = [f"video sequences on the GPU: {platform.node()}, {os.cpu_count()} CPUs, clips "
             f"{a.clips} x 300 frames 1920x1080, stride {STRIDE}, batch {BATCH}, {n_seq} "
             "sequences a pass (median of 3 after a warm-up)", "",
             "| codec | frames/seq | threads | contender | frames/s | cores busy | frames per CPU-s | device MB | stoker / DALI |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        dali = next((x for x in rows if x["contender"] == "dali-gpu" and x["threads"] == r["threads"]
                     and x["codec"] == r["codec"] and x["length"] == r["length"]), None)
        ratio = (f"{r['fps'] / dali['fps']:.2f}x" if r["contender"] == "stoker-gpu" and dali else "")
        lines.append(f"| {r['codec']} | {r['length']} | {r['threads']} | {r['contender']} | "
                     f"{r['fps']:.0f} | {r['cores']:.2f} | {r['per_cpu']:.0f} | "
                     f"{r['device_mb']:.0f} | {ratio} |")
    return rows, lines


def peer(name, paths, length):
    """A peer's decode of one sequence (path, first) -> frames (L, H, W, 3) uint8 RGB."""
    idx = lambda first: [first + k * STRIDE for k in range(length)]  # noqa: E731
    if name == "torchcodec":
        from torchcodec.decoders import VideoDecoder
        decs = {}

        def one(path, first):
            d = decs.get(path)
            if d is None:
                d = decs[path] = VideoDecoder(path, num_ffmpeg_threads=1, seek_mode="exact")
            return d.get_frames_at(idx(first)).data.permute(0, 2, 3, 1).numpy()
        return one
    if name == "decord":
        import decord
        readers = {}

        def one(path, first):
            r = readers.get(path)
            if r is None:
                r = readers[path] = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
            return r.get_batch(idx(first)).asnumpy()
        return one
    if name == "pyav":
        import av

        def one(path, first):
            want = set(idx(first))
            out = []
            with av.open(path) as c:
                st = c.streams.video[0]
                st.thread_count = 1
                st.thread_type = "NONE"
                rate = st.average_rate
                pts = int(first / rate / st.time_base)
                c.seek(pts, stream=st, backward=True, any_frame=False)
                for f in c.decode(st):
                    k = int(round(f.pts * st.time_base * rate))
                    if k in want:
                        out.append(f.to_ndarray(format="rgb24"))
                        if len(out) == length:
                            break
            return np.stack(out)
        return one
    if name == "opencv":
        import cv2
        cv2.setNumThreads(1)

        def one(path, first):
            cap = cv2.VideoCapture(path, cv2.CAP_FFMPEG, [cv2.CAP_PROP_N_THREADS, 1])
            cap.set(cv2.CAP_PROP_POS_FRAMES, first)
            out = []
            for k in range((length - 1) * STRIDE + 1):
                ok, f = cap.read()
                if not ok:
                    break
                if k % STRIDE == 0:
                    out.append(cv2.cvtColor(f, cv2.COLOR_BGR2RGB))
            cap.release()
            return np.stack(out)
        return one
    raise ValueError(name)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(run, n_seq, length, passes=3):
    """Median over passes of (frames/s, frames per CPU-second), after one warm-up pass."""
    run(n_seq)
    rates = []
    for _ in range(passes):
        t0, c0 = time.perf_counter(), cpu_seconds()
        got = run(n_seq)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        rates.append((got * length / wall, got * length / cpu, cpu / wall))
    rates.sort()
    return rates[len(rates) // 2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=6)
    ap.add_argument("--length", default="8,16")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--sequences", type=int, default=48, help="per pass (a multiple of 4)")
    ap.add_argument("--codecs", default="h264,vp9")
    ap.add_argument("--peers", default="torchcodec,decord,pyav,opencv,dali")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)
    n_seq = a.sequences // BATCH * BATCH
    if a.device == "gpu":
        rows, lines = main_gpu(a, n_seq)
        return write(a, rows, lines)
    rows = []
    for codec in a.codecs.split(","):
        paths = make_clips(a.clips, codec, ROOT / "bench" / "data" / f"video-1080p-{codec}-{a.clips}")
        for p in paths:
            p.read_bytes()  # into the page cache
        for length in (int(x) for x in a.length.split(",")):
            seqs = sequences(paths, 300, length)[:n_seq]
            for threads in (int(x) for x in a.threads.split(",")):
                run, _ = stoker_contender(paths, length, threads)
                fps, per_cpu, cores = measure(run, n_seq, length)
                rows.append(dict(codec=codec, length=length, threads=threads, contender="stoker",
                                 fps=fps, per_cpu=per_cpu, cores=cores))
                print(json.dumps(rows[-1]), flush=True)
            for name in a.peers.split(","):
                try:
                    if name == "dali":
                        if codec != "vp9":
                            continue  # DALI 2.4's CPU reader decodes VP8/VP9/MJPEG only
                        run, _ = stoker_contender(paths, length, 1, api="dali")
                    else:
                        one = peer(name, paths, length)

                        def run(n, one=one):
                            for path, first in seqs[:n]:
                                assert one(path, first).shape[0] == length
                            return n
                    fps, per_cpu, cores = measure(run, n_seq, length)
                except Exception as e:  # a peer that is not installed or fails: said, left out
                    print(f"  {name} ({codec}, {length} frames): left out: {type(e).__name__}: "
                          f"{str(e).splitlines()[0][:200]}", flush=True)
                    continue
                rows.append(dict(codec=codec, length=length, threads=1, contender=name,
                                 fps=fps, per_cpu=per_cpu, cores=cores))
                print(json.dumps(rows[-1]), flush=True)
    lines = [f"video sequences on the CPU: {platform.node()}, {os.cpu_count()} CPUs, clips "
             f"{a.clips} x 300 frames 1920x1080, stride {STRIDE}, batch {BATCH}, {n_seq} "
             "sequences a pass (median of 3 after a warm-up)", "",
             "| codec | frames/seq | contender | threads | frames/s | frames per CPU-s | cores busy | stoker (1 thread) / it, per CPU-s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        base = next((x for x in rows if x["contender"] == "stoker" and x["threads"] == 1
                     and x["codec"] == r["codec"] and x["length"] == r["length"]), None)
        ratio = "" if r["contender"] == "stoker" or base is None else f"{base['per_cpu'] / r['per_cpu']:.2f}x"
        lines.append(f"| {r['codec']} | {r['length']} | {r['contender']} | {r['threads']} | "
                     f"{r['fps']:.0f} | {r['per_cpu']:.0f} | {r['cores']:.2f} | {ratio} |")
    return write(a, rows, lines)


def write(a, rows, lines):
    text = "\n".join(lines)
    print(text)
    a.out.mkdir(parents=True, exist_ok=True)
    stem = a.out / time.strftime("video-%Y%m%d-%H%M%S")
    stem.with_suffix(".md").write_text(text + "\n")
    stem.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
