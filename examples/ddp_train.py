"""Data-parallel ResNet-50 training fed by one stoker pipeline per GPU, launched by torchrun.

    torchrun --nproc_per_node=4 examples/ddp_train.py --data DIR [--api dali] [--model none]
    torchrun --nproc_per_node=2 examples/ddp_train.py --data DIR --device cpu --model none --check

Each process (one per GPU) builds its own pipeline over its shard of the dataset, as DALI's
multi-GPU examples do: readers.file(shard_id=rank, num_shards=world_size, random_shuffle=True,
pad_last_batch=True) -> decoders.image_random_crop (device="mixed": nvJPEG) -> resize 224x224 ->
crop_mirror_normalize (fp16, CHW, coin-flip mirror), with device_id=local rank. The batches reach
PyTorch through DALIGenericIterator (reader_name="Reader", so that epochs end where the shard
ends) and train a torchvision ResNet-50 under DistributedDataParallel (bf16 autocast,
channels-last). `--model none` measures the input pipelines alone, all ranks at once, which is
what several GPUs share: the host's cores, memory bandwidth and PCIe.

The reader's labels are the samples' indices in the file list (the class of each index is looked
up on the GPU), so that `--check` can verify what a data-parallel job needs from its loader:
  - every sample is seen exactly once per epoch across all ranks (no sample twice, none missed);
  - a rank restarted from its iterator's checkpoint gives the same next batches, pixel for pixel.

`--tile K` lists every file K times (each copy its own sample), which turns a small folder of
real photos into an epoch of many batches. With --api dali the same code builds NVIDIA DALI's
pipelines (where DALI is installed). Rank 0 prints one JSON line of figures: images/s per rank
and in all, CPU cores busy per rank, and the check's results; `--out FILE` writes it too.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib
import json
import os
import resource
import sys
import time
from pathlib import Path

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
CROP = 224
EXTENSIONS = (".jpg", ".jpeg", ".png")


def image_folder(root: Path) -> tuple[list[str], list[int], list[str]]:
    """ImageFolder's listing: (relative paths, class indices, class names), sorted."""
    classes = sorted(d.name for d in root.iterdir() if d.is_dir())
    paths, labels = [], []
    for c, name in enumerate(classes):
        for f in sorted((root / name).iterdir()):
            if f.suffix.lower() in EXTENSIONS:
                paths.append(f"{name}/{f.name}")
                labels.append(c)
    if not paths:
        raise SystemExit(f"ddp_train: no images ({', '.join(EXTENSIONS)}) in class folders under "
                         f"{root}; give --data an ImageFolder-style folder (one folder per class)")
    return paths, labels, classes


def write_file_list(paths: list[str], tile: int, where: Path) -> Path:
    """A readers.file list naming each file `tile` times; the label of a line is its index."""
    where.mkdir(parents=True, exist_ok=True)
    out = where / f"file_list_{len(paths)}x{tile}.txt"
    text = "".join(f"{p} {k * len(paths) + i}\n" for k in range(tile) for i, p in enumerate(paths))
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, out)                        # ranks may write it at the same time
    return out


def load_api(name: str) -> dict:
    if name == "stoker":
        mods = ("stoker", "stoker.plugin.pytorch")
    else:
        mods = ("nvidia.dali", "nvidia.dali.plugin.pytorch")
    base = importlib.import_module(mods[0])
    plugin = importlib.import_module(mods[1])
    return dict(name=name, pipeline_def=base.pipeline_def, fn=base.fn, types=base.types,
                iterator=plugin.DALIGenericIterator,
                policy=plugin.LastBatchPolicy if hasattr(plugin, "LastBatchPolicy")
                else importlib.import_module(mods[1] + ".base_iterator").LastBatchPolicy)


def build_pipeline(api: dict, args, rank: int, world: int, local_rank: int, file_list: Path,
                   checkpoint: str | None = None):
    fn, types = api["fn"], api["types"]
    gpu = args.device == "gpu"

    @api["pipeline_def"](batch_size=args.batch_size, num_threads=args.threads,
                         device_id=local_rank if gpu else None, seed=args.seed + rank,
                         prefetch_queue_depth=2, enable_checkpointing=args.check,
                         **({"checkpoint": checkpoint} if checkpoint is not None else {}),
                         **({"set_affinity": args.loader_cores} if args.loader_cores
                            else {} if args.set_affinity == "default"
                            else {"set_affinity": args.set_affinity == "true"}))
    def pipe():
        jpegs, ids = fn.readers.file(file_root=str(args.data), file_list=str(file_list),
                                     shard_id=rank, num_shards=world, random_shuffle=True,
                                     pad_last_batch=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed" if gpu else "cpu",
                                               output_type=types.RGB)
        images = fn.resize(images, size=[CROP, CROP])
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=MEAN, std=STD, mirror=fn.random.coin_flip())
        if gpu:
            ids = ids.gpu()
        return images, ids

    p = pipe()
    p.build()
    return p


def pin_main(n: int) -> list[int]:
    """This rank's contiguous share of the cores (LOCAL_RANK of LOCAL_WORLD_SIZE): this thread,
    and the threads started after it (PyTorch's, NCCL's), keep to its first n cores; the
    others are returned for the pipeline."""
    cores = sorted(os.sched_getaffinity(0))
    rank = int(os.environ.get("LOCAL_RANK", 0))
    size = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
    part = len(cores) // max(size, 1)
    mine = cores[rank * part:(rank + 1) * part]
    if not 0 < n < len(mine):
        raise SystemExit(f"ddp_train: --pin-main {n} leaves no cores of this rank's {len(mine)} "
                         "to the pipeline")
    os.sched_setaffinity(0, mine[:n])
    return mine[n:]


def make_iterator(api: dict, pipe):
    # PARTIAL with a padded reader: each rank's epoch is exactly its shard. Shards differ by at
    # most one sample, so a dataset that is a multiple of world_size x batch_size gives every
    # rank the same number of steps (what DDP needs; main() checks it).
    return api["iterator"]([pipe], ["images", "ids"], reader_name="Reader", auto_reset=True,
                           last_batch_policy=api["policy"].PARTIAL)


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def batch_digest(images, ids) -> str:
    h = hashlib.sha256()
    h.update(ids.detach().cpu().numpy().tobytes())
    h.update(images.detach().float().sum(dim=(1, 2, 3)).cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="ImageFolder-style folder of JPEGs")
    ap.add_argument("--api", choices=["stoker", "dali", "synthetic"], default="stoker",
                    help="synthetic: one random batch on the device, every step (no loader: "
                         "the model's own ceiling)")
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--model", choices=["resnet50", "none"], default="resnet50")
    ap.add_argument("--batch-size", type=int, default=256, help="per GPU")
    ap.add_argument("--threads", type=int, default=8, help="pipeline threads per GPU")
    ap.add_argument("--tile", type=int, default=1, help="list every file this many times")
    ap.add_argument("--steps", type=int, default=60, help="timed steps (across epochs)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--check", action="store_true",
                    help="check exactly-once epochs and restart from a checkpoint (no timing)")
    ap.add_argument("--epochs", type=int, default=2, help="epochs --check goes through")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "ddp_train")
    ap.add_argument("--profile", action="store_true",
                    help="every rank prints its pipeline's profile_report() at the end (stoker)")
    ap.add_argument("--set-affinity", choices=["default", "true", "false"], default="default",
                    help="the pipeline's set_affinity (stoker's default pins each rank's "
                         "threads to its own share of the cores; DALI's does not pin)")
    ap.add_argument("--pin-main", type=int, default=0, metavar="N",
                    help="keep the training's threads (this one and those it starts) to the "
                         "first N cores of this rank's share and the pipeline's to the rest "
                         "(stoker's set_affinity=[cores]); 0: as --set-affinity says")
    ap.add_argument("--trace", type=Path,
                    help="each rank writes a torch.profiler Chrome trace of 10 steps after the "
                         "warm-up: TRACE with .rankN before its suffix")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.api == "synthetic" and args.check:
        raise SystemExit("ddp_train: --check needs a loader (--api stoker or dali)")
    args.loader_cores = pin_main(args.pin_main) if args.pin_main else None
    if args.loader_cores is not None and args.api == "dali":
        raise SystemExit("ddp_train: --pin-main needs stoker (DALI's set_affinity is a bool)")

    import torch
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    gpu = args.device == "gpu"
    if gpu and not torch.cuda.is_available():
        raise SystemExit("ddp_train: --device gpu needs a CUDA GPU; use --device cpu")
    if gpu:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if gpu else "gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=5))
    dev = torch.device("cuda", local_rank) if gpu else torch.device("cpu")

    paths, labels, classes = image_folder(args.data)
    n = len(paths) * args.tile
    if n % (world * args.batch_size):
        raise SystemExit(f"ddp_train: {n} samples are not a whole number of steps of "
                         f"{world} ranks x {args.batch_size}; choose --tile or --batch-size so "
                         f"that they are (every rank must take the same number of steps)")
    file_list = write_file_list(paths, args.tile, args.workdir)
    class_of = torch.tensor(labels, device=dev)  # file index -> class, on the training device
    steps_per_epoch = n // world // args.batch_size
    if args.api == "synthetic":
        api, pipe = None, None
        it = SyntheticBatches(torch, dev, args.batch_size, steps_per_epoch, n)
    else:
        api = load_api(args.api)
        pipe = build_pipeline(api, args, rank, world, local_rank, file_list)
        it = make_iterator(api, pipe)

    report = dict(api=args.api, device=args.device, model=args.model, world_size=world,
                  batch_size=args.batch_size, threads=args.threads, samples=n,
                  steps_per_epoch=steps_per_epoch)
    if args.check:
        mine = check(args, api, it, rank, world, local_rank, file_list, steps_per_epoch)
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        report.update(check_report(everyone, n, args.epochs))
    else:
        step = make_train_step(args, torch, dev, local_rank, len(classes))
        mine = measure(args, torch, it, step, class_of, gpu)
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        report["per_rank"] = everyone
        report["images_per_s_per_gpu"] = round(sum(r["images_per_s"] for r in everyone) / world, 1)
        report["images_per_s"] = round(sum(r["images_per_s"] for r in everyone), 1)
        report["cores_per_gpu"] = round(sum(r["cores_busy"] for r in everyone) / world, 2)
    if args.profile and hasattr(pipe, "profile_report"):
        text = "".join(f"[rank {rank}] {line}\n" for line in pipe.profile_report().splitlines())
        sys.stderr.write(text)
        sys.stderr.flush()
    if rank == 0:
        line = json.dumps(report)
        print(line, flush=True)
        if args.out:
            args.out.write_text(line + "\n")
    dist.barrier()
    dist.destroy_process_group()
    return 0 if report.get("ok", True) else 1


class SyntheticBatches:
    """What the iterator gives, without a loader: one random batch made once on the device."""

    def __init__(self, torch, dev, batch_size, steps_per_epoch, n):
        g = torch.Generator(device="cpu").manual_seed(0)
        self.images = torch.randn(batch_size, 3, CROP, CROP, generator=g).half().to(dev)
        self.ids = torch.randint(0, n, (batch_size, 1), generator=g).to(dev)
        self.steps = steps_per_epoch

    def __iter__(self):
        for _ in range(self.steps):
            yield [{"images": self.images, "ids": self.ids}]


def make_train_step(args, torch, dev, local_rank, num_classes):
    if args.model == "none":
        return None
    import torchvision
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(num_classes=num_classes).to(dev)
    model = model.to(memory_format=torch.channels_last)
    model = DDP(model, device_ids=[local_rank] if dev.type == "cuda" else None)
    world = int(os.environ.get("WORLD_SIZE", 1))
    lr = 0.1 * args.batch_size * world / 256      # the linear scaling rule of ResNet-50 recipes
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-5)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(images, target):
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = loss_fn(model(images.contiguous(memory_format=torch.channels_last)), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def batches(it):
    """Endless batches over epochs (the iterator resets itself at each epoch's end)."""
    while True:
        for out in it:
            yield out[0]["images"], out[0]["ids"].reshape(-1).long()


def measure(args, torch, it, step, class_of, gpu) -> dict:
    feed = batches(it)
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    loss = None
    for _ in range(args.warmup):
        images, ids = next(feed)
        if step is not None:
            loss = step(images, class_of[ids % class_of.numel()])
    sync()
    if args.trace:
        trace_steps(args, torch, feed, step, class_of, sync)
    t0, c0 = time.perf_counter(), cpu_seconds()
    seen = 0
    for _ in range(args.steps):
        images, ids = next(feed)
        seen += images.shape[0]
        if step is not None:
            loss = step(images, class_of[ids % class_of.numel()])
    if loss is not None:
        loss = float(loss)                      # waits for the last step
    sync()
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return dict(images_per_s=round(seen / wall, 1), cores_busy=round(cpu / wall, 2),
                seconds=round(wall, 3), images=seen, loss=loss)


def trace_steps(args, torch, feed, step, class_of, sync, steps=10):
    """Every rank records `steps` steps with torch.profiler (each CUDA stream of its process: the
    training's, NCCL's and the loader's) into a Chrome trace, args.trace with the rank before
    its suffix (trace.rank1.json). Before the timed steps, so that the figures leave it out."""
    from torch.profiler import ProfilerActivity, profile
    rank = int(os.environ.get("RANK", 0))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            images, ids = next(feed)
            if step is not None:
                step(images, class_of[ids % class_of.numel()])
        sync()
    prof.export_chrome_trace(str(args.trace.with_name(
        f"{args.trace.stem}.rank{rank}{args.trace.suffix}")))


def check(args, api, it, rank, world, local_rank, file_list, steps_per_epoch) -> dict:
    """This rank's samples per epoch, and whether a restart from a checkpoint repeats the next
    batches exactly."""
    epochs = []
    for _ in range(args.epochs):
        ids = []
        for out in it:
            ids += out[0]["ids"].reshape(-1).tolist()
        epochs.append(ids)
    # Restart: a few steps into the next epoch, checkpoint, note the batches that follow, then a
    # fresh pipeline from that checkpoint must give the same ones.
    k = min(2, steps_per_epoch - 1)
    feed = iter(it)
    for _ in range(k):
        next(feed)
    ckpt = it.checkpoints()[0]
    rest = steps_per_epoch - k
    after = [batch_digest(out[0]["images"], out[0]["ids"]) for out, _ in zip(feed, range(rest))]
    pipe2 = build_pipeline(api, args, rank, world, local_rank, file_list, checkpoint=ckpt)
    it2 = make_iterator(api, pipe2)
    again = [batch_digest(out[0]["images"], out[0]["ids"]) for out, _ in zip(it2, range(rest))]
    return dict(rank=rank, epochs=epochs, restart_batches=len(after),
                restart_same=after == again)


def check_report(everyone: list[dict], n: int, epochs: int) -> dict:
    problems = []
    for e in range(epochs):
        seen = [i for r in everyone for i in r["epochs"][e]]
        counts = {}
        for i in seen:
            counts[i] = counts.get(i, 0) + 1
        twice = sorted(i for i, c in counts.items() if c > 1)
        missed = sorted(set(range(n)) - set(counts))
        if twice or missed or len(seen) != n:
            problems.append(f"epoch {e}: {len(seen)} samples seen of {n}; twice: {twice[:10]}; "
                            f"missed: {missed[:10]}")
    for r in everyone:
        if not r["restart_same"]:
            problems.append(f"rank {r['rank']}: the batches after a restart from the checkpoint "
                            f"differ from those the first run gave")
    per_rank = [[len(ep) for ep in r["epochs"]] for r in everyone]
    return dict(ok=not problems, problems=problems, samples_per_rank_per_epoch=per_rank,
                exactly_once_epochs=epochs if not problems else None,
                restart_batches_compared=sum(r["restart_batches"] for r in everyone))


if __name__ == "__main__":
    sys.exit(main())
