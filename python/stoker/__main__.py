"""stoker's command line.

    python -m stoker demo --data DIR [--batch-size 64] [--threads N] [--batches 20] [--out out]
    python -m stoker ops                 # lists the operators
    python -m stoker ops --dali          # DALI's operators and which stoker has (Markdown)
    python -m stoker stubs [--check]     # writes (or checks) the typing stubs fn/ops/types.pyi
    python -m stoker docs --out DIR      # writes the API reference pages (Markdown) of the docs site

Other tools:
    python -m stoker.tfrecord index FILE [INDEX]   # the index readers.tfrecord's index_path takes
    python -m stoker.compat.dali SCRIPT.py [ARGS]  # runs a DALI script with nvidia.dali -> stoker

Without a command it prints this help. Environment variables: docs/ENVIRONMENT.md.
"""
import argparse
import os
import sys
import time


def _demo(args):
    import numpy as np

    from . import fn, pipeline_def, types

    threads = args.threads or os.cpu_count() or 1

    mean = [0.485 * 255, 0.456 * 255, 0.406 * 255]
    std = [0.229 * 255, 0.224 * 255, 0.225 * 255]

    @pipeline_def(batch_size=args.batch_size, num_threads=threads, device_id=None, seed=args.seed)
    def train_pipe(root):
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        # Decode only a random window of each image and resize it in the same pass.
        images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB,
                                               size=(args.size, args.size))
        # Random horizontal flip and ImageNet normalisation, to float16 CHW: what a model takes.
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=mean, std=std, mirror=fn.random.coin_flip())
        return images, labels

    pipe = train_pipe(args.data)
    pipe.build()
    epoch = pipe.epoch_size("Reader")
    print(f"stoker demo: {epoch} images in {args.data}, batch {args.batch_size}, "
          f"{threads} threads: random crop to {args.size}x{args.size}, flip, normalise")
    first, _ = pipe.run()  # warm-up; also the batch we draw
    from ._progress import Progress
    bar = Progress(f"{args.batches} batches", args.batches, bytes_=False)
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = 0
    for k in range(args.batches):
        images, labels = pipe.run()
        n += len(images)
        bar.update(k + 1, f", {n / (time.perf_counter() - t0):.0f} images/s")
    bar.close()
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print(f"{n / dt:.1f} images/s ({n} images in {dt:.2f} s, "
          f"{cpu / n * 1000:.2f} ms of CPU time per image)")
    batch = first.as_array().astype(np.float32).transpose(0, 2, 3, 1)  # back to NHWC
    grid = _grid((batch * np.float32(std) + np.float32(mean)) / 255.0)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "first_batch.png")
    _write_png(grid, path)
    print(f"wrote {path} ({grid.shape[1]}x{grid.shape[0]}, first batch)")
    return 0


def _grid(batch, cols=8):
    import numpy as np
    batch = np.clip(batch * 255.0 + 0.5, 0, 255).astype(np.uint8)
    n, h, w, c = batch.shape
    cols = min(cols, n)
    rows = (n + cols - 1) // cols
    out = np.full((rows * (h + 2), cols * (w + 2), c), 255, np.uint8)
    for i in range(n):
        r, k = divmod(i, cols)
        out[r * (h + 2) + 1:r * (h + 2) + 1 + h, k * (w + 2) + 1:k * (w + 2) + 1 + w] = batch[i]
    return out


def _write_png(image, path):
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - the demo script installs Pillow
        raise SystemExit("writing the PNG grid needs Pillow: pip install pillow")
    Image.fromarray(image).save(path)


def _ops(args):
    if args.dali:
        print(dali_table())
        return 0
    from ._schema import SCHEMAS, is_internal
    for name in sorted(SCHEMAS):
        if is_internal(name):
            continue
        s = SCHEMAS[name]
        print(f"{name:32s} {','.join(s['backends']):10s} {s['doc'].splitlines()[0][:80]}")
    return 0


def dali_table():
    """DALI's operators (deprecated aliases aside) and the backends stoker has for each, as the
    Markdown the README holds between its dali-operators markers."""
    from . import _dali_ops
    from ._schema import CPU_DECODED, SCHEMAS, cpu_copy_note, dali_aliases, decodes_on_gpu
    rows, have, full = [], 0, 0
    for name, (backends, replaced_by) in sorted(_dali_ops.FN.items()):
        if replaced_by:
            continue
        # external_source's device='gpu' is its Python side's (the data is copied to the GPU).
        # The devices served by the CPU operator and a copy (CPU_DECODED).
        extra = ("gpu",) if name == "external_source" else ()
        cpu_decoded = name in CPU_DECODED and not decodes_on_gpu(name)
        if name in CPU_DECODED and "cpu" in SCHEMAS[name]["backends"]:
            extra = (CPU_DECODED[name],)
        ours = [b for b in backends if name in SCHEMAS and (b in SCHEMAS[name]["backends"] or b in extra)]
        have += bool(ours)
        full += len(ours) == len(backends)
        status = ("yes" if len(ours) == len(backends) else
                  f"{', '.join(ours)} only" if ours else "not yet")
        if cpu_decoded and ours:
            status += f" ({CPU_DECODED[name]}: {cpu_copy_note(name)})"
        rows.append(f"| `{name}` | {', '.join(backends) or '-'} | {status} |")
    aliases = sorted(dali_aliases())
    return "\n".join(
        [f"stoker has {have} of the {len(rows)} operators of DALI {_dali_ops.DALI_VERSION} "
         f"({full} on every backend DALI has), and {len(aliases)} of DALI's deprecated names for "
         "them. A DALI operator stoker lacks raises \"fn.X is a DALI operator stoker does not "
         "have yet\".", "",
         "| DALI operator | DALI runs it on | stoker |", "|---|---|---|"] + rows +
        ["", "Deprecated DALI names stoker accepts: " + ", ".join(f"`{a}`" for a in aliases) + "."])


def _stubs(args):
    from . import _stubs
    changed = _stubs.write(args.out, check=args.check)
    if args.check:
        for path in changed:
            print(f"out of date: {path} (run `python -m stoker stubs --out DIR` to rewrite it)")
        return 1 if changed else 0
    for path in changed:
        print(f"wrote {path}")
    if not changed:
        print("stubs up to date")
    return 0


def _docs(args):
    from . import _docs
    for path in _docs.write(args.out):
        print(f"wrote {path}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="stoker", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    d = sub.add_parser("demo", help="run a training-style pipeline, print images/s, write a PNG grid")
    d.add_argument("--data", required=True, help="folder with one sub-folder of images per class")
    d.add_argument("--batch-size", type=int, default=64)
    d.add_argument("--threads", type=int, default=0, help="worker threads (default: all cores)")
    d.add_argument("--batches", type=int, default=20, help="timed batches")
    d.add_argument("--size", type=int, default=224)
    d.add_argument("--seed", type=int, default=42)
    d.add_argument("--out", default="out")
    d.set_defaults(func=_demo)
    o = sub.add_parser("ops", help="list the operators")
    o.add_argument("--dali", action="store_true",
                   help="DALI's operators and which of them stoker has, as a Markdown table")
    o.set_defaults(func=_ops)
    t = sub.add_parser("stubs", help="write the typing stubs (fn.pyi, ops.pyi, types.pyi, "
                       "py.typed) from the operator schemas")
    t.add_argument("--out", default=None,
                   help="folder to write them into (default: the installed stoker package)")
    t.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 and name the files that differ")
    t.set_defaults(func=_stubs)
    r = sub.add_parser("docs", help="write the API reference of the documentation site (one "
                       "Markdown page per operator namespace) from the operator schemas")
    r.add_argument("--out", required=True, help="folder to write the pages into")
    r.set_defaults(func=_docs)
    args = ap.parse_args(argv)
    if args.cmd is None:
        ap.print_help()
        return 0
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
