"""The stoker contenders ("stoker-cpu", "stoker-gpu"), written against DALI's Python API.

The same pipeline code runs NVIDIA DALI's contenders ("dali-cpu", "dali-gpu" in peers.py):
only the module it takes ``pipeline_def``, ``fn`` and ``types`` from differs, which is the point
of speaking DALI's API. stoker is imported lazily; when it is missing or a pipeline fails to
build, the contender raises ``Unavailable`` and the table says why.

Pipelines (outputs ready for a model: on cuda:0 where there is a GPU, else in host memory):
  train   fn.readers.file(random_shuffle=True) -> fn.decoders.image_random_crop (a decoder
          that decodes only the crop) -> fn.resize(size=224x224) -> fn.crop_mirror_normalize
          (float16, CHW, ImageNet mean/std, mirror=fn.random.coin_flip()).
          Job.train_recipe="random_resized_crop": fn.decoders.image -> fn.random_resized_crop.
  eval    fn.decoders.image -> fn.resize(resize_shorter=256) -> fn.crop_mirror_normalize
          (crop=224x224, float16, CHW).
  decode  fn.decoders.image only.
  randaugment / trivialaugment
          train's decoders.image_random_crop + resize, then auto_aug.rand_augment(n=2, m=9) /
          trivial_augment_wide (the pipeline has enable_conditionals=True), then
          crop_mirror_normalize as train.
  ssd     examples/ssd300.py's SSD300 graph (readers.coco, random_bbox_crop, decoders.image_slice,
          resize 300x300, hsv + brightness_contrast, crop_mirror_normalize with bb_flip,
          box_encoder), batches through the framework's GenericIterator.
  asr     DALI's speech examples' preprocessing (Jasper / QuartzNet): readers.file(file_list)
          -> decoders.audio(16 kHz, float, downmix) -> preemphasis_filter(0.97) -> spectrogram
          (nfft 512, window 320, step 160) -> mel_filter_bank(64, 16 kHz) -> to_decibels
          (multiplier ln 10, reference 1, cutoff ln 1e-20: the natural log) -> normalize(axes=[1])
          -> pad(axes=(1,), align=16); features and frame counts through the GenericIterator.
          decoders.audio is CPU-only in DALI: "gpu" decodes on the CPU, then .gpu() and the
          spectral operators on the GPU.
"cpu" decodes with device="cpu"; on a machine with a GPU its outputs are moved to the GPU by
``.gpu()`` at the end of the pipeline (the DataLoader contenders pay the same copy). "gpu"
decodes with device="mixed" (nvJPEG) and runs the rest on the GPU.
"""
from __future__ import annotations

import atexit
import importlib.util
import os
import sys
from pathlib import Path

from peers import (ASR, AUDIO, AUTO_AUG, CROP, MEAN, RESIZE_SHORTER, STD, TRAINING, Job,
                   Unavailable, cuda_available)


def dali_api_batches(api: dict, job: Job, device: str):
    """Build and run a DALI-API pipeline for ``job``; returns (endless batches, description).
    ``api``: name, pipeline_def, fn, types, and optionally iterator (the framework's
    ClassificationIterator) and last_batch_policy."""
    fn, types = api["fn"], api["types"]
    gpu = device == "gpu"
    to_cuda = cuda_available()
    decoder_device = "mixed" if gpu else "cpu"
    if job.workload == "ssd":
        return _ssd_batches(api, job, device)
    if job.workload in AUDIO:
        return _asr_batches(api, job, device)
    mean = [m * 255 for m in MEAN]
    std = [s * 255 for s in STD]

    auto_aug = None
    if job.workload in AUTO_AUG:
        import importlib
        name = "rand_augment" if job.workload == "randaugment" else "trivial_augment"
        auto_aug = importlib.import_module(f"{api['auto_aug']}.{name}")

    @api["pipeline_def"](batch_size=job.batch_size, num_threads=max(1, job.threads),
                         device_id=0 if to_cuda else None, seed=job.seed,
                         prefetch_queue_depth=2, enable_conditionals=auto_aug is not None)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=job.root,
                                        random_shuffle=job.workload in TRAINING, name="Reader")
        if job.workload in AUTO_AUG:
            images = fn.decoders.image_random_crop(jpegs, device=decoder_device,
                                                   output_type=types.RGB)
            images = fn.resize(images, size=[CROP, CROP])
            if job.workload == "randaugment":
                images = auto_aug.rand_augment(images, n=2, m=9)
            else:
                images = auto_aug.trivial_augment_wide(images)
            images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                              mean=mean, std=std,
                                              mirror=fn.random.coin_flip())
        elif job.workload == "train":
            if job.train_recipe == "random_resized_crop":
                images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
                images = fn.random_resized_crop(images, size=[CROP, CROP])
            else:
                images = fn.decoders.image_random_crop(jpegs, device=decoder_device,
                                                       output_type=types.RGB)
                images = fn.resize(images, size=[CROP, CROP])
            images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                              mean=mean, std=std,
                                              mirror=fn.random.coin_flip())
        elif job.workload == "eval":
            images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
            images = fn.resize(images, resize_shorter=RESIZE_SHORTER)
            images = fn.crop_mirror_normalize(images, crop=(CROP, CROP), dtype=types.FLOAT16,
                                              output_layout="CHW", mean=mean, std=std)
        else:
            images = fn.decoders.image(jpegs, device=decoder_device, output_type=types.RGB)
        if to_cuda and not gpu:
            images = images.gpu()
        return images, labels

    p = pipe()
    p.build()
    if os.environ.get("STOKER_BENCH_PROFILE") and hasattr(p, "profile_report"):
        # Where the time went, in the row's log (bench/results/*.log), when the row ends.
        atexit.register(lambda: print(p.profile_report(), file=sys.stderr, flush=True))

    iterator = api.get("iterator")
    if job.workload != "decode" and iterator is not None:
        # What a training script does: the framework iterator hands torch tensors over.
        it = iterator(p, reader_name="Reader", auto_reset=True,
                      last_batch_policy=api["last_batch_policy"].DROP)

        def gen():
            while True:                         # one epoch per loop; auto_reset starts the next
                for out in it:
                    yield out[0]["data"], out[0]["label"]
        how = "torch tensors from its ClassificationIterator"
    else:
        def gen():
            while True:
                yield p.run()
        how = "pipe.run() outputs (a TensorList per output)"

    steps = {"randaugment": "decoders.image_random_crop + resize(224x224), "
                            "auto_aug.rand_augment(n=2, m=9), crop_mirror_normalize(fp16, CHW, "
                            "coin-flip mirror)",
             "trivialaugment": "decoders.image_random_crop + resize(224x224), "
                               "auto_aug.trivial_augment_wide, crop_mirror_normalize(fp16, CHW, "
                               "coin-flip mirror)",
             "train": ("decoders.image + random_resized_crop"
                       if job.train_recipe == "random_resized_crop" else
                       "decoders.image_random_crop + resize(224x224)")
             + ", crop_mirror_normalize(fp16, CHW, coin-flip mirror)",
             "eval": "decoders.image + resize(resize_shorter=256) + crop_mirror_normalize("
                     "crop 224, fp16, CHW)",
             "decode": "decoders.image"}[job.workload]
    where = ("GPU" if gpu else "CPU, then .gpu()" if to_cuda else "CPU")
    return gen(), (f"{api['name']} pipeline, num_threads={max(1, job.threads)}, decoder device="
                   f"'{decoder_device}' ({where}): {steps}; {how}")


def _ssd_batches(api: dict, job: Job, device: str):
    import ssd300
    fn, types = api["fn"], api["types"]
    to_cuda = cuda_available()

    @api["pipeline_def"](batch_size=job.batch_size, num_threads=max(1, job.threads),
                         device_id=0 if to_cuda else None, seed=job.seed,
                         prefetch_queue_depth=2)
    def pipe():
        outs = ssd300.ssd300_graph(fn, types, job.root, job.annotations, device=device)
        return tuple(o.gpu() for o in outs) if to_cuda and device != "gpu" else outs

    p = pipe()
    p.build()
    if os.environ.get("STOKER_BENCH_PROFILE") and hasattr(p, "profile_report"):
        atexit.register(lambda: print(p.profile_report(), file=sys.stderr, flush=True))
    iterator = api.get("generic_iterator")
    if iterator is None:
        raise Unavailable("the PyTorch plugin does not import (torch missing)")
    it = iterator(p, ["images", "boxes", "labels"], reader_name="Reader", auto_reset=True,
                  last_batch_policy=api["last_batch_policy"].DROP)

    def gen():
        while True:
            for out in it:
                yield out[0]["images"], out[0]["boxes"], out[0]["labels"]
    where = "GPU: nvJPEG, GPU resize/colour, GPU bb_flip and box_encoder" if device == "gpu" else \
        ("CPU, then .gpu()" if to_cuda else "CPU")
    return gen(), (f"{api['name']} SSD300 pipeline (examples/ssd300.py), num_threads="
                   f"{max(1, job.threads)} ({where}); torch tensors from its GenericIterator")


def asr_graph(fn, types, root: str, file_list: str, device: str = "cpu", shuffle: bool = True):
    """DALI's speech examples' preprocessing as a graph of DALI's API: (features, frame counts).
    features: float32 [64, T] per utterance ("ft"), T padded over the batch to a multiple of 16;
    frame counts: the utterance's frames before padding (int64)."""
    import numpy as np
    encoded, _ = fn.readers.file(file_root=root, file_list=file_list, random_shuffle=shuffle,
                                 name="Reader")
    audio, _ = fn.decoders.audio(encoded, dtype=types.FLOAT, downmix=True,
                                 sample_rate=ASR["sample_rate"])
    # The frames the spectrogram makes of each utterance (center_windows: n // step + 1),
    # counted on the CPU: shapes are metadata, read before the data moves to the GPU.
    frames = audio.shape()[0] // ASR["window_step"] + 1
    if device == "gpu":
        audio = audio.gpu()
    audio = fn.preemphasis_filter(audio, preemph_coeff=ASR["preemph"])
    spec = fn.spectrogram(audio, nfft=ASR["nfft"], window_length=ASR["window_length"],
                          window_step=ASR["window_step"])
    mel = fn.mel_filter_bank(spec, sample_rate=ASR["sample_rate"], nfilter=ASR["nfilter"])
    logmel = fn.to_decibels(mel, multiplier=np.log(10), reference=1.0,
                            cutoff_db=np.log(ASR["log_floor"]))
    features = fn.normalize(logmel, axes=[1])
    features = fn.pad(features, axes=(1,), align=ASR["pad_align"])
    return features, frames


def _asr_batches(api: dict, job: Job, device: str):
    fn, types = api["fn"], api["types"]
    to_cuda = cuda_available()

    @api["pipeline_def"](batch_size=job.batch_size, num_threads=max(1, job.threads),
                         device_id=0 if to_cuda else None, seed=job.seed,
                         prefetch_queue_depth=2)
    def pipe():
        features, frames = asr_graph(fn, types, job.root, job.file_list, device=device,
                                     shuffle=job.workload in TRAINING)
        return (features.gpu() if to_cuda and device != "gpu" else features), frames

    p = pipe()
    p.build()
    if os.environ.get("STOKER_BENCH_PROFILE") and hasattr(p, "profile_report"):
        atexit.register(lambda: print(p.profile_report(), file=sys.stderr, flush=True))
    iterator = api.get("generic_iterator")
    if iterator is not None:
        it = iterator(p, ["features", "frames"], reader_name="Reader", auto_reset=True,
                      last_batch_policy=api["last_batch_policy"].DROP)

        def gen():
            while True:
                for out in it:
                    yield out[0]["features"], out[0]["frames"]
        how = "torch tensors from its GenericIterator"
    else:
        def gen():
            while True:
                yield p.run()
        how = "pipe.run() outputs (a TensorList per output)"
    where = ("decoders.audio on the CPU, then .gpu(): preemphasis, spectrogram, mel, log, "
             "normalize and pad on the GPU" if device == "gpu" else
             "CPU, then .gpu()" if to_cuda else "CPU")
    return gen(), (f"{api['name']} ASR pipeline (DALI's Jasper/QuartzNet preprocessing), "
                   f"num_threads={max(1, job.threads)} ({where}): decoders.audio(16 kHz, float, "
                   "downmix), preemphasis_filter(0.97), spectrogram(512, 320, 160), "
                   "mel_filter_bank(64), to_decibels(natural log), normalize(axes=[1]), "
                   f"pad(align=16); {how}")


_REPO_PYTHON = Path(__file__).resolve().parent.parent / "python"


def _stoker_api() -> dict:
    if importlib.util.find_spec("stoker") is None:
        # Not installed: try the source tree's package (its _C module built in place).
        if (_REPO_PYTHON / "stoker" / "__init__.py").is_file():
            sys.path.append(str(_REPO_PYTHON))
        if importlib.util.find_spec("stoker") is None:
            raise Unavailable("stoker is not installed (pip install . from the repo root)")
    try:
        import stoker
        from stoker import fn, pipeline_def, types
    except Exception as e:                      # an unbuilt or half-built package
        raise Unavailable(f"import stoker failed: {type(e).__name__}: {e}") from None
    try:
        from stoker.plugin.pytorch import (LastBatchPolicy, StokerClassificationIterator,
                                           StokerGenericIterator)
    except Exception:
        StokerClassificationIterator = StokerGenericIterator = LastBatchPolicy = None
    return dict(name=f"stoker {getattr(stoker, '__version__', '?')}", pipeline_def=pipeline_def,
                fn=fn, types=types, iterator=StokerClassificationIterator,
                generic_iterator=StokerGenericIterator, last_batch_policy=LastBatchPolicy,
                auto_aug="stoker.auto_aug")


def make_stoker(job: Job, device: str):
    api = _stoker_api()
    if device == "gpu" and not cuda_available():
        raise Unavailable("no CUDA device")
    try:
        return dali_api_batches(api, job, device)
    except Unavailable:
        raise
    except Exception as e:
        raise Unavailable(f"pipeline build failed: {type(e).__name__}: {e}") from None


def make_stoker_cpu(job: Job):
    return make_stoker(job, "cpu")


def make_stoker_gpu(job: Job):
    return make_stoker(job, "gpu")


CONTENDERS = {"stoker-cpu": make_stoker_cpu, "stoker-gpu": make_stoker_gpu}
PLACEMENT = {"stoker-cpu": "cpu", "stoker-gpu": "gpu"}
