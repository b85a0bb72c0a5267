"""SSD300's COCO training pipeline, as DALI's SSD example writes it, on stoker.

    python examples/ssd300.py --coco-root DIR --annotations FILE [--device gpu] [--steps 20]

readers.coco (relative ltrb boxes) -> random_bbox_crop (SSD's IoU thresholds) ->
decoders.image_slice (only the crop is decoded) -> resize to 300x300 -> hsv (hue, saturation)
and brightness_contrast jitter -> crop_mirror_normalize (CHW float, ImageNet mean/std, a coin-flip
mirror) with bb_flip on the same coin -> box_encoder against SSD300's 8732 default boxes.

The batches go to PyTorch through DALIGenericIterator; a few SGD steps of a small SSD-style head
(a localization and a classification output per default box) show the pipeline feeding a
training loop. The pipeline function takes the API module it is built with, so the same code
builds NVIDIA DALI's pipeline (`--api dali`, where DALI is installed) and bench/run.py's ssd
workload measures both.

Without a GPU (or with `--device cpu`) everything runs on the CPU; with `--device gpu` the JPEGs
are decoded by nvJPEG and the rest of the images' work, bb_flip and box_encoder run on the GPU.
"""
from __future__ import annotations

import argparse
import importlib
import itertools
import math
import time

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
SIZE = 300


def ssd300_anchors() -> list[float]:
    """SSD300's default boxes (8732) as DALI's SSD example builds them for box_encoder: feature
    maps 38, 19, 10, 5, 3, 1 with steps 8..300 on a 300-pixel image, sizes 21..315, aspect
    ratios 2 (and 3 on the middle four maps); centres and sizes clipped to [0, 1], then given as
    (left, top, right, bottom), flattened."""
    feat, steps = [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300]
    sizes, ratios = [21, 45, 99, 153, 207, 261, 315], [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    out = []
    for k, n in enumerate(feat):
        fk = SIZE / steps[k]
        s1 = sizes[k] / SIZE
        s2 = math.sqrt(s1 * sizes[k + 1] / SIZE)
        shapes = [(s1, s1), (s2, s2)]
        for r in ratios[k]:
            w, h = s1 * math.sqrt(r), s1 / math.sqrt(r)
            shapes += [(w, h), (h, w)]
        for w, h in shapes:
            for i, j in itertools.product(range(n), repeat=2):
                cx, cy, w_, h_ = (min(max(v, 0.0), 1.0) for v in ((j + 0.5) / fk, (i + 0.5) / fk, w, h))
                out += [cx - 0.5 * w_, cy - 0.5 * h_, cx + 0.5 * w_, cy + 0.5 * h_]
    return out


def ssd300_graph(fn, types, file_root, annotations_file, device="gpu", shard_id=0, num_shards=1,
                 skip_empty=True, anchors=None):
    """The pipeline's graph (call it inside a pipeline_def function). `fn` and `types` come from
    stoker or from nvidia.dali. Returns images [3, 300, 300] float, encoded boxes [8732, 4]
    (center x, center y, width, height of the matched box, relative) and labels [8732]."""
    gpu = device == "gpu"
    jpegs, boxes, labels = fn.readers.coco(
        file_root=file_root, annotations_file=annotations_file, skip_empty=skip_empty,
        shard_id=shard_id, num_shards=num_shards, ratio=True, ltrb=True,
        shuffle_after_epoch=True, name="Reader")
    crop_begin, crop_size, boxes, labels = fn.random_bbox_crop(
        boxes, labels, device="cpu", aspect_ratio=[0.5, 2.0],
        thresholds=[0, 0.1, 0.3, 0.5, 0.7, 0.9], scaling=[0.3, 1.0], bbox_layout="xyXY",
        allow_no_crop=True, num_attempts=50)
    images = fn.decoders.image_slice(jpegs, crop_begin, crop_size, device="mixed" if gpu else "cpu",
                                     output_type=types.RGB)
    flip = fn.random.coin_flip(probability=0.5)
    images = fn.resize(images, resize_x=SIZE, resize_y=SIZE,
                       min_filter=types.DALIInterpType.INTERP_TRIANGULAR)
    saturation = fn.random.uniform(range=[0.5, 1.5])
    contrast = fn.random.uniform(range=[0.5, 1.5])
    brightness = fn.random.uniform(range=[0.875, 1.125])
    hue = fn.random.uniform(range=[-0.5, 0.5])
    images = fn.hsv(images, dtype=types.FLOAT, hue=hue, saturation=saturation)
    images = fn.brightness_contrast(images, brightness=brightness, contrast_center=128,
                                    contrast=contrast, dtype=types.UINT8)
    images = fn.crop_mirror_normalize(images, crop=(SIZE, SIZE), mean=MEAN, std=STD, mirror=flip,
                                      dtype=types.FLOAT, output_layout="CHW", pad_output=False)
    if gpu:
        boxes, labels = boxes.gpu(), labels.gpu()
    boxes = fn.bb_flip(boxes, ltrb=True, horizontal=flip)
    boxes, labels = fn.box_encoder(boxes, labels, criteria=0.5,
                                   anchors=anchors if anchors is not None else ssd300_anchors())
    return images, boxes, labels


def make_pipeline(api: str, file_root, annotations_file, batch_size=32, num_threads=4,
                  device="gpu", seed=0, skip_empty=True, prefetch_queue_depth=2):
    """A built SSD300 pipeline of `api` ("stoker" or "dali")."""
    mod = importlib.import_module("stoker" if api == "stoker" else "nvidia.dali")
    fn, types = mod.fn, mod.types
    anchors = ssd300_anchors()

    @mod.pipeline_def(batch_size=batch_size, num_threads=num_threads,
                      device_id=0 if device == "gpu" else None, seed=seed,
                      prefetch_queue_depth=prefetch_queue_depth)
    def pipe():
        return ssd300_graph(fn, types, file_root, annotations_file, device=device,
                            skip_empty=skip_empty, anchors=anchors)

    p = pipe()
    p.build()
    return p


def tiny_ssd(classes):
    """A small SSD-style model: a strided backbone's image feature, mixed with a learned
    embedding per default box, gives each box 4 offsets and `classes` scores."""
    import torch

    class TinySSD(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = torch.nn.Sequential(
                torch.nn.Conv2d(3, 16, 3, stride=4, padding=1), torch.nn.ReLU(),
                torch.nn.Conv2d(16, 32, 3, stride=4, padding=1), torch.nn.ReLU(),
                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 16))
            self.anchor = torch.nn.Parameter(torch.randn(8732, 16) * 0.1)
            self.out = torch.nn.Linear(16, 4 + classes)

        def forward(self, images):
            f = self.backbone(images)                       # (B, 16)
            return self.out(f[:, None, :] * self.anchor)    # (B, 8732, 4 + classes)

    return TinySSD()


def train(args):
    import torch

    if args.api == "stoker":
        from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    else:
        from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
    device = args.device
    if device == "gpu" and not torch.cuda.is_available():
        print("no CUDA device: running the pipeline on the CPU")
        device = "cpu"
    pipe = make_pipeline(args.api, args.coco_root, args.annotations, args.batch_size,
                         args.threads, device, args.seed)
    it = DALIGenericIterator(pipe, ["images", "boxes", "labels"], reader_name="Reader",
                             auto_reset=True, last_batch_policy=LastBatchPolicy.DROP)
    dev = torch.device("cuda" if device == "gpu" else "cpu")
    classes = 81
    model = tiny_ssd(classes).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    t0, seen = time.perf_counter(), 0
    for step, batch in enumerate(itertools.islice(itertools.chain.from_iterable(
            itertools.repeat(it)), args.steps)):
        images, boxes, labels = batch[0]["images"], batch[0]["boxes"], batch[0]["labels"].long()
        out = model(images)
        positive = labels > 0
        loc = torch.nn.functional.smooth_l1_loss(out[..., :4][positive], boxes[positive]) \
            if positive.any() else out.sum() * 0
        cls = torch.nn.functional.cross_entropy(out[..., 4:].reshape(-1, classes), labels.reshape(-1))
        loss = loc + cls
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen += images.shape[0]
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step:3d}: loss {loss.item():.3f} (boxes matched per image: "
                  f"{positive.sum().item() / images.shape[0]:.1f}); images {tuple(images.shape)} "
                  f"{images.dtype} on {images.device}, boxes {tuple(boxes.shape)}, labels "
                  f"{tuple(labels.shape)}")
    dt = time.perf_counter() - t0
    print(f"{seen} images in {dt:.1f} s ({seen / dt:.0f} img/s, pipeline and model together)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coco-root", required=True, help="the folder of the images")
    ap.add_argument("--annotations", required=True, help="COCO instances JSON")
    ap.add_argument("--api", choices=["stoker", "dali"], default="stoker")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="gpu")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    train(ap.parse_args(argv))


if __name__ == "__main__":
    main()
