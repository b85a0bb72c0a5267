"""Writes the serialized pipeline that examples/c/classify.c runs: JPEG bytes fed by name
("jpegs"), decoded, resized to 256 on the shorter side, center-cropped to 224x224 and normalized
with ImageNet's mean and standard deviation, as float32 CHW.

    python examples/c/make_pipeline.py classify.stoker [--batch-size 8] [--device cpu|gpu]
"""
import argparse

from stoker import fn, pipeline_def, types


def build(batch_size, device):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=0 if device == "gpu" else None,
                  seed=0)
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
