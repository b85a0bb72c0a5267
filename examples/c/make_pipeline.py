"""Writes the serialized pipeline that examples/c/classify.c runs: JPEG bytes fed by name
("jpegs"), decoded, resized to 256 on the shorter side, center-cropped to 224x224 and normalized
with ImageNet's mean and standard deviation, as float32 CHW.

    python examples/c/make_pipeline.py classify.stoker [--batch-size 8] [--device cpu|gpu]
"""
import argparse


def build(batch_size, device, num_threads=2, dali=False, **pipeline_args):
    """The pipeline (stoker's, or with dali=True the same code on NVIDIA DALI: bench/latency.py
    measures both); pipeline_args go to pipeline_def (prefetch_queue_depth, exec_async...)."""
    if dali:
        from nvidia.dali import fn, pipeline_def, types
    else:
        from stoker import fn, pipeline_def, types

    @pipeline_def(batch_size=batch_size, num_threads=num_threads,
                  device_id=0 if device == "gpu" else None, seed=0, **pipeline_args)
    def classify():
        jpegs = fn.external_source(name="jpegs", dtype=types.UINT8, ndim=1)
        images = fn.decoders.image(jpegs, device="mixed" if device == "gpu" else "cpu",
                                   output_type=types.RGB)
        images = fn.resize(images, resize_shorter=256, interp_type=types.INTERP_TRIANGULAR)
        return fn.crop_mirror_normalize(images, crop=(224, 224), dtype=types.FLOAT,
                                        output_layout="CHW",
                                        mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                        std=[0.229 * 255, 0.224 * 255, 0.225 * 255])
    return classify()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    a = ap.parse_args()
    build(a.batch_size, a.device).serialize(filename=a.out)
    print(f"wrote {a.out}")
