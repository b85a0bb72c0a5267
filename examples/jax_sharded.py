"""One process feeding every local JAX device: a stoker pipeline per GPU, one global batch.

    python examples/jax_sharded.py --data DIR [--api dali] [--devices 4] [--device cpu]

Pipeline k runs on GPU k (device_id=k) over shard k of the dataset (shard_id=k, num_shards=number
of devices): readers.file(random_shuffle=True, pad_last_batch=True) -> decoders.image_random_crop
(device="mixed") -> resize 224x224 -> crop_mirror_normalize (fp16, CHW, coin-flip mirror).
DALIGenericIterator(pipelines, sharding=NamedSharding(mesh, PartitionSpec("batch"))) joins their
batches into one jax.Array of shape (devices x batch_size, 3, 224, 224) split along the batch
axis, each slice already on its own GPU (no copy between devices). A jitted step consumes it
(per-image means, computed where each slice lives).

The reader's labels are the samples' indices in the file list, so the script also checks that
one epoch gives every sample exactly once over all devices. It prints one JSON line: images/s
in all and per device, CPU cores busy, and the check. With `--device cpu` the pipelines run on
the CPU and the batch is split over JAX's CPU devices (XLA_FLAGS=
--xla_force_host_platform_device_count=N gives N of them), which is how the tests run it.
With --api dali the same code builds NVIDIA DALI's pipelines and iterator.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ddp_train import CROP, MEAN, STD, cpu_seconds, image_folder, write_file_list  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="ImageFolder-style folder of JPEGs")
    ap.add_argument("--api", choices=["stoker", "dali"], default="stoker")
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--devices", type=int, default=0, help="how many (default: all local ones)")
    ap.add_argument("--batch-size", type=int, default=256, help="per device")
    ap.add_argument("--threads", type=int, default=8, help="pipeline threads per device")
    ap.add_argument("--tile", type=int, default=1, help="list every file this many times")
    ap.add_argument("--steps", type=int, default=60, help="timed steps (across epochs)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "jax_sharded")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    gpu = args.device == "gpu"
    devices = jax.local_devices(backend="gpu" if gpu else "cpu")
    if args.devices:
        if args.devices > len(devices):
            raise SystemExit(f"jax_sharded: --devices {args.devices}, but JAX has "
                             f"{len(devices)} {args.device} devices: {devices}")
        devices = devices[:args.devices]
    world = len(devices)
    paths, _, _ = image_folder(args.data)
    n = len(paths) * args.tile
    if n % (world * args.batch_size):
        raise SystemExit(f"jax_sharded: {n} samples are not a whole number of global batches of "
                         f"{world} devices x {args.batch_size}; change --tile or --batch-size")
    file_list = write_file_list(paths, args.tile, args.workdir)

    if args.api == "stoker":
        base, plugin = importlib.import_module("stoker"), importlib.import_module("stoker.plugin.jax")
    else:
        base, plugin = (importlib.import_module("nvidia.dali"),
                        importlib.import_module("nvidia.dali.plugin.jax"))
    fn, types = base.fn, base.types
    policy = importlib.import_module(plugin.__name__.rsplit(".", 1)[0] + ".base_iterator").LastBatchPolicy

    def build(k):
        @base.pipeline_def(batch_size=args.batch_size, num_threads=args.threads,
                           device_id=k if gpu else None, seed=args.seed + k, prefetch_queue_depth=2)
        def pipe():
            jpegs, ids = fn.readers.file(file_root=str(args.data), file_list=str(file_list),
                                         shard_id=k, num_shards=world, random_shuffle=True,
                                         pad_last_batch=True, name="Reader")
            images = fn.decoders.image_random_crop(jpegs, device="mixed" if gpu else "cpu",
                                                   output_type=types.RGB)
            images = fn.resize(images, size=[CROP, CROP])
            images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                              mean=MEAN, std=STD, mirror=fn.random.coin_flip())
            return images, (ids.gpu() if gpu else ids)
        p = pipe()
        p.build()
        return p

    pipes = [build(k) for k in range(world)]
    sharding = NamedSharding(Mesh(np.array(devices), ("batch",)), PartitionSpec("batch"))
    it = plugin.DALIGenericIterator(pipes, ["images", "ids"], reader_name="Reader",
                                    auto_reset=True, last_batch_policy=policy.DROP,
                                    sharding=sharding)
    consume = jax.jit(lambda x: x.astype(jnp.float32).mean(axis=(1, 2, 3)))

    # One epoch: every sample exactly once over all devices, each slice on its own device.
    seen, placed = [], True
    for batch in it:
        images, ids = batch["images"], batch["ids"]
        placed &= {s.device for s in images.addressable_shards} == set(devices)
        seen += np.asarray(ids).reshape(-1).tolist()
    once = sorted(seen) == list(range(n))

    def endless():
        while True:
            for b in it:
                yield b["images"]
    feed = endless()
    for _ in range(args.warmup):
        consume(next(feed)).block_until_ready()
    t0, c0 = time.perf_counter(), cpu_seconds()
    images_done = 0
    for _ in range(args.steps):
        x = next(feed)
        out = consume(x)
        images_done += x.shape[0]
    out.block_until_ready()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    report = dict(api=args.api, device=args.device, devices=world, batch_size=args.batch_size,
                  threads=args.threads, samples=n, global_batch_shape=list(x.shape),
                  images_per_s=round(images_done / wall, 1),
                  images_per_s_per_device=round(images_done / wall / world, 1),
                  cores_busy=round(cpu / wall, 2), exactly_once=once, slices_on_their_devices=placed,
                  ok=bool(once and placed))
    line = json.dumps(report)
    print(line, flush=True)
    if args.out:
        args.out.write_text(line + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
