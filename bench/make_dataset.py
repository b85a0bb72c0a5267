"""Build an ImageNet-like JPEG folder for the benchmarks.

Each image is a random crop of a real photo (../shared/testdata/images/jpeg and
../shared/testdata/coco/images), resized to about 500x375 or 375x500 with some variety,
sharpened, given a little sensor grain, and re-encoded with Pillow (baseline, 4:2:0) at quality
90-95, so that files average 100-120 KB like ImageNet's. Grain and quality are calibrated on a
sample first (the mean is printed): the photos here are clean downscales, which at ImageNet's
pixel counts and quality make files of only ~60 KB. One sub-folder per class, so any ImageFolder-style reader (torchvision,
DALI's and stoker's ``fn.readers.file(file_root=...)``) takes it as it is.

Where the test data is missing (a user's fresh machine) the sources are synthetic photo-like
pictures (smooth gradients, blurred shapes, multi-scale texture and sensor noise), so that the
JPEGs still have realistic sizes and decode costs.

Everything is deterministic from ``seed``: the crop plan is drawn in one process and each file
depends only on its plan entry, whatever the number of worker processes.

    python bench/make_dataset.py OUT_DIR 2000 --seed 0
    >>> from make_dataset import make_dataset; stats = make_dataset("/tmp/ds", 200)
"""
from __future__ import annotations

import argparse
import functools
import io
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

TARGET_MEAN_KB = (100.0, 120.0)      # where the mean file size must land
QUALITY_RANGE = (90, 95)             # JPEG quality, inclusive
MANIFEST = "dataset.json"            # written at the root; readers take sub-folders only
IMAGE_EXTS = (".jpg", ".jpeg", ".JPG", ".JPEG")

_REPO = Path(__file__).resolve().parent.parent


def default_source_dirs() -> list[Path]:
    """The real-photo folders of the shared test data (``$STOKER_TESTDATA`` overrides)."""
    base = Path(os.environ.get("STOKER_TESTDATA", _REPO.parent / "shared" / "testdata"))
    return [base / "images" / "jpeg", base / "coco" / "images"]


def find_sources(source_dirs) -> list[str]:
    """JPEG photos under ``source_dirs``, sorted so the plan does not depend on listing order.
    (The PNGs in coco/ are RGBA clip art, not photos, so only JPEGs are taken.)"""
    files = []
    for d in source_dirs:
        d = Path(d)
        if d.is_dir():
            files += [str(p) for p in d.rglob("*") if p.suffix in IMAGE_EXTS and p.is_file()]
    return sorted(set(files))


# --------------------------------------------------------------------------- synthetic sources

def _fractal_noise(rng: np.random.Generator, h: int, w: int, octaves: int = 6) -> np.ndarray:
    """Value noise summed over octaves (1/f-like), in [0, 1]: the texture JPEG has to spend
    bits on, as it does on foliage, fur or gravel in a photo."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for o in range(octaves):
        gh, gw = max(2, h >> (octaves - o + 1)), max(2, w >> (octaves - o + 1))
        grid = Image.fromarray((rng.random((gh, gw)) * 255).astype(np.uint8))
        out += amp * np.asarray(grid.resize((w, h), Image.Resampling.BICUBIC), np.float32) / 255
        total += amp
        amp *= 0.62
    return out / total


def synthetic_photo(seed: int, index: int, size=(1024, 768)) -> Image.Image:
    """A photo-like RGB picture: a sky-to-ground gradient, blurred shapes with shading,
    textured regions and sensor noise. Deterministic from (seed, index)."""
    rng = np.random.default_rng([seed, 7919, index])
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c0, c1 = rng.uniform(20, 235, 3), rng.uniform(20, 235, 3)
    angle = rng.uniform(0, np.pi)
    t = (np.cos(angle) * xx / w + np.sin(angle) * yy / h)
    t = (t - t.min()) / max(1e-6, float(t.max() - t.min()))
    img = c0[None, None, :] * (1 - t[..., None]) + c1[None, None, :] * t[..., None]
    img += (_fractal_noise(rng, h, w)[..., None] - 0.5) * rng.uniform(30, 70)
    base = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))

    draw_layer = base.copy()
    draw = ImageDraw.Draw(draw_layer)
    for _ in range(int(rng.integers(6, 14))):
        color = tuple(int(v) for v in rng.uniform(0, 255, 3))
        x0, y0 = rng.uniform(-0.1, 0.9) * w, rng.uniform(-0.1, 0.9) * h
        sw, sh = rng.uniform(0.05, 0.45) * w, rng.uniform(0.05, 0.45) * h
        kind = rng.integers(3)
        if kind == 0:
            draw.ellipse([x0, y0, x0 + sw, y0 + sh], fill=color)
        elif kind == 1:
            draw.rectangle([x0, y0, x0 + sw, y0 + sh], fill=color)
        else:
            pts = [(x0 + rng.uniform(0, sw), y0 + rng.uniform(0, sh)) for _ in range(5)]
            draw.polygon(pts, fill=color)
    shapes = draw_layer.filter(ImageFilter.GaussianBlur(rng.uniform(0.8, 2.0)))
    arr = np.asarray(shapes, np.float32)
    # Shading and texture over the shapes, then sensor noise.
    shade = _fractal_noise(rng, h, w, octaves=4)[..., None]
    detail = _fractal_noise(rng, h, w, octaves=7)[..., None]
    arr = arr * (0.75 + 0.5 * shade) + (detail - 0.5) * rng.uniform(25, 55)
    arr += rng.normal(0, rng.uniform(2.0, 5.0), arr.shape)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))


# --------------------------------------------------------------------------- plan and render

@functools.lru_cache(maxsize=32)
def _load_source(key) -> Image.Image:
    kind, a, b = key
    if kind == "file":
        with Image.open(a) as im:
            return ImageOps.exif_transpose(im).convert("RGB")
    return synthetic_photo(a, b)


def _source_size(key) -> tuple[int, int]:
    kind, a, _ = key
    if kind == "file":
        with Image.open(a) as im:
            w, h = im.size
            orientation = im.getexif().get(0x0112, 1)
        return (h, w) if orientation in (5, 6, 7, 8) else (w, h)
    return (1024, 768)


def _plan_one(rng: np.random.Generator, src_sizes, scale: float) -> dict:
    """Draw one image's recipe: source, output size, crop box, flip, quality offset, and
    the seed of its grain."""
    j = int(rng.integers(len(src_sizes)))
    sw, sh = src_sizes[j]
    u = rng.random()
    ratio = 4 / 3 if u < 0.55 else 3 / 2 if u < 0.75 else float(rng.uniform(1.0, 1.8))
    long_side = 500 if rng.random() < 0.75 else int(rng.integers(400, 641))
    long_side = int(round(long_side * scale))
    short_side = int(round(long_side / ratio))
    portrait = rng.random() < 0.25
    ow, oh = (short_side, long_side) if portrait else (long_side, short_side)
    aspect = ow / oh
    # Largest box of the output's aspect that fits the source, then a random fraction of it
    # (not so small that the crop would have to be upscaled, where the source allows).
    bw, bh = (sh * aspect, sh) if sw / sh > aspect else (sw, sw / aspect)
    s_min = min(1.0, max(0.45, ow / bw))
    s = float(rng.uniform(s_min, 1.0))
    bw, bh = bw * s, bh * s
    x0 = float(rng.uniform(0, sw - bw))
    y0 = float(rng.uniform(0, sh - bh))
    return {"src": j, "size": (ow, oh), "box": (x0, y0, x0 + bw, y0 + bh),
            "flip": bool(rng.random() < 0.5), "dq": int(rng.integers(-1, 2)),
            "grain_seed": int(rng.integers(2**63))}


def _render(key, entry, grain: float) -> Image.Image:
    """Crop, resize, sharpen, flip, then add sensor grain: the photos are clean downscales of
    large pictures, smoother than ImageNet's camera JPEGs, and sharpening plus grain is what
    brings their files to ImageNet's sizes at ImageNet's pixel counts (enlarging them instead
    would change the decode cost per image)."""
    return _add_grain(_crop(key, entry), entry, grain)


def _crop(key, entry) -> Image.Image:
    img = _load_source(key).resize(entry["size"], Image.Resampling.LANCZOS, box=entry["box"],
                                   reducing_gap=3.0)
    # A camera's sharpening: with it, less grain is needed to reach ImageNet's file sizes.
    img = img.filter(ImageFilter.UnsharpMask(radius=1.5, percent=100, threshold=2))
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if entry["flip"] else img


@functools.lru_cache(maxsize=1)
def _grain_tile(size: int = 1024) -> np.ndarray:
    """A fixed field of Gaussian noise (luma plane + RGB planes) that images take windows of:
    drawing fresh noise per image costs more than the rest of its making."""
    rng = np.random.default_rng(20261122)
    return rng.standard_normal((size, size, 4), dtype=np.float32)


def _add_grain(img: Image.Image, entry, grain: float) -> Image.Image:
    if grain <= 0:
        return img
    tile = _grain_tile()
    w, h = img.size
    reps = (-(-h // tile.shape[0]), -(-w // tile.shape[1]), 1)
    if reps[0] > 1 or reps[1] > 1:
        tile = np.tile(tile, reps)
    rng = np.random.default_rng(entry["grain_seed"])
    y = int(rng.integers(0, tile.shape[0] - h + 1))
    x = int(rng.integers(0, tile.shape[1] - w + 1))
    win = tile[y:y + h, x:x + w]
    arr = np.asarray(img, np.float32)
    arr += win[..., :1] * grain + win[..., 1:] * (grain * 0.5)
    np.clip(arr + 0.5, 0, 255, out=arr)
    return Image.fromarray(arr.astype(np.uint8))


def _encode(img: Image.Image, quality: int) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=int(quality), subsampling=2, optimize=False,
             progressive=False)
    return buf.getvalue()


def _quality(base: int, dq: int) -> int:
    return int(min(QUALITY_RANGE[1], max(QUALITY_RANGE[0], base + dq)))


def _write_one(task) -> tuple[int, int, int, int]:
    index, path, key, entry, base_q, grain = task
    img = _render(key, entry, grain)
    data = _encode(img, _quality(base_q, entry["dq"]))
    with open(path, "wb") as f:
        f.write(data)
    return index, len(data), img.width, img.height


def _calibrate(keys, plan_fn, sample: int):
    """Pick the grain, the base quality and, only if those can't, a size scale that bring the
    mean file size into TARGET_MEAN_KB, measured on ``sample`` plan entries."""
    lo, hi = TARGET_MEAN_KB
    target = (lo + hi) / 2 * 1024
    q_top = QUALITY_RANGE[1] - 1       # highest base quality whose +1 jitter stays in range
    scale, tried = 1.0, {}
    for _ in range(3):
        entries = sorted(plan_fn(scale)[:sample], key=lambda e: e["src"])
        crops = [_crop(keys[e["src"]], e) for e in entries]

        def mean_size(grain, q):
            sizes = [len(_encode(_add_grain(c, e, grain), _quality(q, e["dq"])))
                     for c, e in zip(crops, entries)]
            tried[f"scale={scale:.2f} grain={grain} q={q}"] = round(float(np.mean(sizes)) / 1024, 1)
            return float(np.mean(sizes))

        # Bytes grow monotonically with grain: the least grain that reaches the target at a
        # high quality (bisected)...
        g_lo, g_hi = 0.0, 12.0
        if mean_size(g_lo, q_top) > target:
            grain = g_lo
        elif mean_size(g_hi, q_top) < target:
            grain = g_hi
        else:
            for _ in range(4):
                g = (g_lo + g_hi) / 2
                g_lo, g_hi = (g, g_hi) if mean_size(g, q_top) < target else (g_lo, g)
            grain = round((g_lo + g_hi) / 2, 2)
        # ... then let the quality take up what is left.
        means = {q: mean_size(grain, q) for q in range(QUALITY_RANGE[0], QUALITY_RANGE[1] + 1)}
        q = min(means, key=lambda k: abs(means[k] - target))
        if lo * 1024 <= means[q] <= hi * 1024:
            return q, grain, scale, tried
        # Bytes grow about linearly with the pixel count.
        scale = float(np.clip(scale * np.sqrt(target / means[q]), 0.7, 1.4))
    return q, grain, scale, tried


def list_images(root) -> list[tuple[str, int]]:
    """(path, label) for every JPEG under ``root``, ImageFolder's way: sorted class folders,
    label = the folder's index. Files at the root itself are not samples."""
    root = Path(root)
    classes = sorted(d.name for d in root.iterdir() if d.is_dir())
    out = []
    for label, c in enumerate(classes):
        out += [(str(p), label) for p in sorted((root / c).iterdir())
                if p.suffix in IMAGE_EXTS and p.is_file()]
    return out


def make_dataset(root, n: int, seed: int = 0, classes: int = 10, source_dirs=None,
                 workers: int | None = None, synthetic: bool | None = None,
                 verbose: bool = False) -> dict:
    """Write ``n`` JPEGs under ``root/class_XXX/`` and return statistics (also saved as
    ``root/dataset.json``). ``synthetic=None`` uses real photos when any are found."""
    t0 = time.time()
    if n < 1 or classes < 1:
        raise ValueError(f"make_dataset: n and classes must be >= 1, got n={n}, "
                         f"classes={classes}")
    root = Path(root)
    srcs = [] if synthetic else find_sources(source_dirs or default_source_dirs())
    if synthetic is False and not srcs:
        raise FileNotFoundError(
            f"make_dataset: no JPEG sources in {[str(d) for d in (source_dirs or default_source_dirs())]}; "
            "pass source_dirs=... or synthetic=True")
    if srcs:
        keys = [("file", s, 0) for s in srcs]
        source_desc = f"random crops of {len(srcs)} real photos (shared testdata)"
    else:
        n_src = int(min(64, max(16, n // 10)))
        keys = [("synthetic", seed, j) for j in range(n_src)]
        source_desc = f"random crops of {n_src} synthetic photo-like pictures"
    sizes = [_source_size(k) for k in keys]

    def plan(scale: float) -> list[dict]:
        rng = np.random.default_rng([seed, 104729])
        return [_plan_one(rng, sizes, scale) for _ in range(n)]

    base_q, grain, scale, tried = _calibrate(keys, plan, sample=min(n, 32))
    entries = plan(scale)

    root.mkdir(parents=True, exist_ok=True)
    class_dirs = [root / f"class_{c:03d}" for c in range(classes)]
    for d in class_dirs:
        d.mkdir(exist_ok=True)
    tasks = [(i, str(class_dirs[i % classes] / f"img_{i:07d}.jpg"), keys[e["src"]], e, base_q,
              grain) for i, e in enumerate(entries)]
    tasks.sort(key=lambda t: t[3]["src"])      # runs of one source: each is decoded once
    workers = workers or min(8, os.cpu_count() or 1)
    if workers > 1 and n >= 64:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = list(pool.imap_unordered(_write_one, tasks, chunksize=16))
    else:
        results = [_write_one(t) for t in tasks]
    results.sort()
    nbytes = [r[1] for r in results]
    stats = {
        "root": str(root), "n": n, "classes": classes, "seed": seed,
        "sources": source_desc, "synthetic": not srcs,
        "quality_base": base_q, "quality_range": list(QUALITY_RANGE), "grain_sigma": grain,
        "size_scale": scale,
        "mean_kb": statistics.fmean(nbytes) / 1024,
        "median_kb": statistics.median(nbytes) / 1024,
        "min_kb": min(nbytes) / 1024, "max_kb": max(nbytes) / 1024,
        "total_mb": sum(nbytes) / 2**20,
        "mean_width": statistics.fmean(r[2] for r in results),
        "mean_height": statistics.fmean(r[3] for r in results),
        "portrait_fraction": sum(r[3] > r[2] for r in results) / n,
        "calibration_mean_kb": tried,
        "seconds": time.time() - t0,
        "pillow": Image.__version__,
    }
    (root / MANIFEST).write_text(json.dumps(stats, indent=1) + "\n")
    if verbose:
        print(f"{n} images in {classes} classes under {root} ({source_desc}); "
              f"mean {stats['mean_kb']:.1f} KB (median {stats['median_kb']:.1f}, "
              f"{stats['min_kb']:.0f}-{stats['max_kb']:.0f}), quality {base_q}+-1, grain {grain}, "
              f"mean {stats['mean_width']:.0f}x{stats['mean_height']:.0f}, "
              f"{stats['seconds']:.1f} s", flush=True)
    return stats


def load_or_make(root, n: int, seed: int = 0, classes: int = 10, verbose: bool = True) -> dict:
    """Reuse ``root`` if it was built with the same (n, seed, classes) and is intact;
    otherwise (re)build it."""
    root = Path(root)
    man = root / MANIFEST
    if man.is_file():
        try:
            stats = json.loads(man.read_text())
            if (stats.get("n"), stats.get("seed"), stats.get("classes")) == (n, seed, classes) \
                    and len(list_images(root)) == n:
                if verbose:
                    print(f"reusing {root}: {n} images, mean {stats['mean_kb']:.1f} KB",
                          flush=True)
                return stats
        except (ValueError, OSError):
            pass
    if root.exists():
        for p in root.glob("class_*/img_*.jpg"):
            p.unlink()
    return make_dataset(root, n, seed=seed, classes=classes, verbose=verbose)


def make_coco_dataset(root, n: int, coco_dir, verbose: bool = True) -> dict:
    """The ssd workload's dataset: the real photos of ``coco_dir`` (images/ and instances.json,
    e.g. ../shared/testdata/coco) with their real annotations, tiled to ``n`` images (copies
    are hard links where the file system allows, under new names and ids) so that n can be a
    whole number of batches. Writes ``root``/images and ``root``/instances.json; reused when
    built from the same source with the same n."""
    root, coco_dir = Path(root), Path(coco_dir)
    man = root / MANIFEST
    src_json = coco_dir / "instances.json"
    if not src_json.is_file():
        raise FileNotFoundError(f"no COCO annotations at {src_json}: give --testdata, the folder "
                                "that holds coco/images and coco/instances.json")
    if man.is_file():
        stats = json.loads(man.read_text())
        if stats.get("n") == n and stats.get("source") == str(coco_dir.resolve()) and \
                len(list((root / "images").glob("*.jpg"))) == n:
            if verbose:
                print(f"reusing {root}: {n} COCO images, mean {stats['mean_kb']:.1f} KB", flush=True)
            return stats
    src = json.loads(src_json.read_text())
    by_image = {}
    for a in src["annotations"]:
        by_image.setdefault(a["image_id"], []).append(a)
    photos = [im for im in src["images"] if by_image.get(im["id"])]
    if not photos:
        raise ValueError(f"{src_json} has no annotated image")
    shutil.rmtree(root, ignore_errors=True)
    (root / "images").mkdir(parents=True)
    images, annotations = [], []
    for k in range(n):
        im = photos[k % len(photos)]
        name = f"{k:06d}_{im['file_name']}"
        dst, from_ = root / "images" / name, coco_dir / "images" / im["file_name"]
        try:
            os.link(from_, dst)
        except OSError:
            shutil.copyfile(from_, dst)
        images.append({**im, "id": k, "file_name": name})
        for a in by_image[im["id"]]:
            annotations.append({**a, "id": len(annotations) + 1, "image_id": k})
    (root / "instances.json").write_text(json.dumps(
        {"images": images, "annotations": annotations, "categories": src["categories"]}))
    sizes = [os.path.getsize(root / "images" / im["file_name"]) for im in images]
    stats = {"n": n, "source": str(coco_dir.resolve()), "photos": len(photos),
             "boxes": len(annotations), "mean_kb": float(np.mean(sizes)) / 1024,
             "root": str(root)}
    man.write_text(json.dumps(stats, indent=1))
    if verbose:
        print(f"built {root}: {n} images ({len(photos)} COCO photos tiled), {len(annotations)} "
              f"boxes, mean {stats['mean_kb']:.1f} KB", flush=True)
    return stats


AUDIO_FORMATS = ("wav", "flac", "ogg")
AUDIO_RATE = 16000
AUDIO_FILE_LIST = "file_list.txt"


def make_audio_dataset(root, n: int, audio_dir, verbose: bool = True) -> dict:
    """The asr workload's dataset: the LibriSpeech utterances of ``audio_dir`` (wav/, flac/ and
    ogg/, the same utterances in each, 16 kHz mono; e.g. ../shared/testdata/audio) tiled to
    ``n`` files under new names (hard links where the file system allows), taken utterance by
    utterance and format by format so that any n mixes the formats and lengths evenly. Writes
    ``root``/audio/ and ``root``/file_list.txt (``audio/NAME 0`` per line, for
    ``fn.readers.file(file_root=root, file_list=...)``); reused when built from the same
    source with the same n. Durations come from the decoded ``.npy`` beside each file."""
    root, audio_dir = Path(root), Path(audio_dir)
    man = root / MANIFEST
    stems = sorted(p.stem for p in (audio_dir / AUDIO_FORMATS[0]).glob("*." + AUDIO_FORMATS[0]))
    sources = [audio_dir / fmt / f"{s}.{fmt}" for s in stems for fmt in AUDIO_FORMATS
               if (audio_dir / fmt / f"{s}.{fmt}").is_file()]
    if not sources:
        raise FileNotFoundError(f"no audio at {audio_dir}/{{{','.join(AUDIO_FORMATS)}}}: give "
                                "--testdata, the folder that holds audio/wav, audio/flac and "
                                "audio/ogg")
    if man.is_file():
        stats = json.loads(man.read_text())
        if stats.get("n") == n and stats.get("source") == str(audio_dir.resolve()) and \
                (root / AUDIO_FILE_LIST).is_file() and \
                len(list((root / "audio").iterdir())) == n:
            if verbose:
                print(f"reusing {root}: {n} utterances, mean {stats['mean_s']:.2f} s", flush=True)
            return stats
    shutil.rmtree(root, ignore_errors=True)
    (root / "audio").mkdir(parents=True)
    names, seconds, sizes, formats = [], [], [], {}
    for k in range(n):
        src = sources[k % len(sources)]
        name = f"{k:06d}_{src.name}"
        try:
            os.link(src, root / "audio" / name)
        except OSError:
            shutil.copyfile(src, root / "audio" / name)
        names.append(f"audio/{name}")
        ref = src.with_suffix(".npy")
        seconds.append(np.load(ref, mmap_mode="r").shape[0] / AUDIO_RATE if ref.is_file()
                       else float("nan"))
        sizes.append(os.path.getsize(src))
        fmt = src.suffix[1:]
        formats[fmt] = formats.get(fmt, 0) + 1
    (root / AUDIO_FILE_LIST).write_text("".join(f"{x} 0\n" for x in names))
    stats = {"n": n, "source": str(audio_dir.resolve()), "utterances": len(stems),
             "formats": formats, "sample_rate": AUDIO_RATE,
             "mean_s": float(np.mean(seconds)), "min_s": float(np.min(seconds)),
             "max_s": float(np.max(seconds)), "total_s": float(np.sum(seconds)),
             "mean_kb": float(np.mean(sizes)) / 1024, "root": str(root),
             "file_list": str(root / AUDIO_FILE_LIST)}
    man.write_text(json.dumps(stats, indent=1))
    if verbose:
        print(f"built {root}: {n} utterances ({len(stems)} LibriSpeech utterances x "
              f"{'/'.join(formats)} tiled), {stats['min_s']:.2f}-{stats['max_s']:.2f} s, mean "
              f"{stats['mean_s']:.2f} s, mean {stats['mean_kb']:.1f} KB", flush=True)
    return stats


def list_audio(root) -> list[tuple[str, int]]:
    """(path, label) for each line of the asr dataset's file list, in its order."""
    root = Path(root)
    out = []
    for line in (root / AUDIO_FILE_LIST).read_text().splitlines():
        if line.strip():
            name, label = line.rsplit(None, 1)
            out.append((str(root / name), int(label)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output folder (created)")
    ap.add_argument("n", type=int, help="number of images")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--workers", type=int, default=None, help="processes (default: cores, max 8)")
    ap.add_argument("--source-dir", action="append", default=None,
                    help="folder of source photos (repeatable; default: shared testdata)")
    ap.add_argument("--synthetic", action="store_true",
                    help="use synthetic photo-like sources even where real photos exist")
    a = ap.parse_args(argv)
    make_dataset(a.out, a.n, seed=a.seed, classes=a.classes, source_dirs=a.source_dir,
                 workers=a.workers, synthetic=True if a.synthetic else None, verbose=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
