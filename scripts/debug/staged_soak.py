"""Runs one GPU training pipeline for a while, for catching hangs (scripts/debug/hang_hunt.sh
starts several at once). With stackdump.c preloaded, an iteration that takes longer than
--hang-s prints every thread's native stack and ends the process with status 3.

  python3 scripts/debug/staged_soak.py DIR --batch 8 --staged --decoder random_crop --seconds 120
"""
import argparse
import ctypes
import pathlib
import sys
import time

import numpy as np

import stoker
from stoker import fn, pipeline_def, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=3)
    ap.add_argument("--files", type=int, default=24, help="first N JPEGs of DIR (0: all)")
    ap.add_argument("--staged", action="store_true")
    ap.add_argument("--decoder", choices=["random_crop", "image"], default="random_crop")
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--hang-s", type=float, default=60)
    a = ap.parse_args()
    files = sorted(str(p) for p in pathlib.Path(a.dir).rglob("*")
                   if p.suffix.lower() in (".jpg", ".jpeg"))
    if a.files:
        files = files[:a.files]
    try:
        lib = ctypes.CDLL(None)
        arm, disarm = lib.stackdump_arm, lib.stackdump_disarm
        arm.argtypes = [ctypes.c_double]
    except (AttributeError, OSError):
        arm = disarm = None

    @pipeline_def(batch_size=a.batch, num_threads=a.threads, device_id=0, seed=5,
                  exec_pipelined=a.staged)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, random_shuffle=True, name="Reader")
        if a.decoder == "random_crop":
            images = fn.decoders.image_random_crop(jpegs, device="mixed")
            images = fn.resize(images, size=[64, 64])
        else:
            images = fn.decoders.image(jpegs, device="mixed")
            images = fn.resize(images, size=[64, 64])
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mirror=fn.random.coin_flip())
        return images, labels

    p = pipe()
    p.build()
    name = f"batch={a.batch} staged={a.staged} decoder={a.decoder} files={len(files)}"
    t0 = time.monotonic()
    it = 0
    while time.monotonic() - t0 < a.seconds:
        if arm:
            arm(a.hang_s)
        images, _ = p.run()
        x = np.asarray(images.as_cpu().as_tensor())
        if disarm:
            disarm()
        assert np.isfinite(x.astype(np.float32)).all()
        it += 1
        if it % 200 == 0:
            m = p.memory_stats()
            print(f"{name}: {it} iterations, device reserved {m['device']['reserved'] >> 20} "
                  f"MiB, held {m['device'].get('resource_held', 0) >> 20} MiB, pinned held "
                  f"{m['pinned'].get('resource_held', 0) >> 10} KiB", flush=True)
    print(f"{name}: done, {it} iterations in {time.monotonic() - t0:.0f} s", flush=True)
    print(p.profile_report(), flush=True)


if __name__ == "__main__":
    sys.exit(main())
