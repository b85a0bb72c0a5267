"""The contenders that are not stoker, each doing the same work on the same files.

Every contender is a function ``make(job) -> (batches, description)``: ``batches`` is an endless
iterable of ``(images, labels)``, ready to feed a model -- on the GPU where there is one, else in
host memory -- and ``description`` says in a line what it does. A contender that cannot run here
raises ``Unavailable(reason)``; one that can't be installed says so.

Workloads (the same for every contender; see README.md):
  train   decode the whole JPEG, random-resized-crop to 224x224 (scale 0.08-1, ratio 3/4-4/3),
          random horizontal flip, scale to [0, 1], normalize with ImageNet's mean/std,
          float16 NCHW batch.
  eval    decode, resize the shorter side to 256, center-crop 224x224, normalize, float16 NCHW.
  decode  decode only: a list of uint8 RGB images of their own sizes.
  randaugment, trivialaugment
          train's decode, random-resized-crop and flip, then RandAugment (n=2, m=9, 31 bins) or
          TrivialAugment Wide on the uint8 image, then normalize: float16 NCHW batch.
  ssd     SSD300's COCO training pipeline (examples/ssd300.py): a random crop that keeps boxes
          (SSD's IoU thresholds), decode, resize to 300x300, colour jitter, flip with the boxes,
          normalize to float32 CHW, boxes matched to the 8732 default boxes; images, encoded
          boxes and labels per batch.
  asr     the ASR preprocessing of DALI's speech examples (Jasper, QuartzNet): decode the audio
          at 16 kHz (float, downmixed), preemphasis 0.97, power spectrogram (n_fft 512, 20 ms
          Hann windows every 10 ms, centred, reflect padding), 64 mel bands (Slaney), natural
          log (floor 1e-20), normalize each band over time, zero-pad the batch's time axis to
          a multiple of 16 frames; features float32 [N, 64, T] and frame counts [N] per batch.
          The unit is utterances, not images.

``threads`` is the number of worker processes for a DataLoader (0: all in the main process),
the number of file-reading threads for torchvision's GPU decode, and ``num_threads`` for a
DALI-API pipeline.
"""
from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import importlib
import importlib.util

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
WORKLOADS = ("train", "eval", "decode", "ssd", "randaugment", "trivialaugment", "asr")
# The training workloads with an automatic augmentation after the crop and flip (issue 22).
AUTO_AUG = ("randaugment", "trivialaugment")
AUDIO = ("asr",)
TRAINING = ("train", "ssd") + AUTO_AUG + AUDIO
CROP, RESIZE_SHORTER = 224, 256
# asr: DALI's speech examples' preprocessing (Jasper / QuartzNet at 16 kHz).
ASR = dict(sample_rate=16000, preemph=0.97, nfft=512, window_length=320, window_step=160,
           nfilter=64, log_floor=1e-20, pad_align=16)
# Contenders that have a pipeline for only one kind of data: the others are left out of a run's
# rows unless named with --contenders (then their row says why they can't run).
AUDIO_ONLY = ("librosa", "torchaudio")
IMAGE_ONLY = ("torchvision", "opencv", "torchvision-gpu")


def applies(contender: str, workload: str) -> bool:
    return contender not in (IMAGE_ONLY if workload in AUDIO else AUDIO_ONLY)


def unit(workload: str) -> str:
    """What a workload's rate counts: "utt" (utterances) for audio, "img" otherwise."""
    return "utt" if workload in AUDIO else "img"


def asr_window(n: int):
    """The Hann window of DALI's (and stoker's) fn.spectrogram: 0.5 - 0.5 cos(2 pi (i + 1/2) / n),
    symmetric about the window's centre. The peers use it too, so that every contender computes
    the same numbers (scipy's and torch's "hann" are the periodic one, a half sample off)."""
    import numpy as np
    return (0.5 - 0.5 * np.cos(2 * np.pi * (np.arange(n) + 0.5) / n)).astype(np.float32)


class Unavailable(Exception):
    """This contender can't run here; the message says why (shown in the results table)."""


@dataclasses.dataclass
class Job:
    root: str                      # ImageFolder-style folder (one sub-folder per class)
    files: list                    # [(path, label)], ImageFolder order
    workload: str                  # one of WORKLOADS
    batch_size: int
    threads: int
    seed: int = 0
    train_recipe: str = "decode_random_crop"   # DALI-API pipelines only (stoker, DALI)
    annotations: str = ""          # ssd: the COCO instances JSON of the images in `root`
    file_list: str = ""            # asr: readers.file's file_list (paths relative to `root`)


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def _need_torch():
    for mod in ("torch", "torchvision"):
        try:
            importlib.import_module(mod)
        except ImportError as e:
            raise Unavailable(f"{mod} does not import ({e}): pip install -r "
                              "bench/requirements.txt") from None


# --------------------------------------------------------------------------- shared pieces

class ForeverSampler:
    """Indices forever, epoch after epoch (a new permutation each when shuffling), so that a
    DataLoader never stops at an epoch end and its workers stay busy across epochs, as a
    DALI-style reader does."""

    def __init__(self, n: int, shuffle: bool, seed: int):
        self.n, self.shuffle, self.seed = n, shuffle, seed

    def __iter__(self):
        import torch
        g = torch.Generator()
        g.manual_seed(self.seed)
        while True:
            if self.shuffle:
                yield from torch.randperm(self.n, generator=g).tolist()
            else:
                yield from range(self.n)

    def __len__(self):               # for DataLoader's bookkeeping only; iteration is endless
        return 2**62


def _collate_list(samples):
    """For decode: images of different sizes stay a list; labels become a tensor."""
    import torch
    return [s[0] for s in samples], torch.tensor([s[1] for s in samples])


def _worker_init(_worker_id):
    # One thread per worker: the workers are the parallelism. (PyTorch already does this for
    # its own intra-op pool in workers; OpenCV has its own.)
    try:
        import cv2
        cv2.setNumThreads(1)
    except ImportError:
        pass


def _dataloader_batches(dataset, job: Job, collate=None, worker_init=_worker_init):
    """An endless DataLoader over ``dataset``: persistent workers, pinned memory and a
    non-blocking copy to the GPU where there is one, as a training script would do."""
    import torch
    cuda = torch.cuda.is_available()
    g = torch.Generator()
    g.manual_seed(job.seed)
    kw = dict(num_workers=job.threads, pin_memory=cuda, drop_last=True, generator=g,
              sampler=ForeverSampler(len(dataset), job.workload in TRAINING, job.seed))
    if job.threads > 0:
        kw.update(persistent_workers=True, prefetch_factor=2, worker_init_fn=worker_init)
    else:
        worker_init(0)
    if collate is not None:
        kw["collate_fn"] = collate
    loader = torch.utils.data.DataLoader(dataset, batch_size=job.batch_size, **kw)

    def cuda_copy(x):
        return [t.cuda(non_blocking=True) for t in x] if isinstance(x, list) else \
            x.cuda(non_blocking=True)

    def gen():
        it = iter(loader)
        try:
            for batch in it:            # (images, labels), or ssd's (images, boxes, labels)
                yield tuple(cuda_copy(x) for x in batch) if cuda else tuple(batch)
        finally:
            shutdown = getattr(it, "_shutdown_workers", None)
            if shutdown is not None:
                shutdown()
            del it
    return gen()


def _where() -> str:
    return "copied to cuda:0 from pinned memory" if cuda_available() else "left in host memory"


# --------------------------------------------------------------------------- torchvision (PIL)

class _PILFolder:
    """torchvision's ImageFolder path: PIL decode + transforms.v2."""

    def __init__(self, files, workload):
        import torch
        from torchvision.transforms import v2
        self.files = files
        norm = [v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
                v2.ToDtype(torch.float16)]
        if workload in ("train",) + AUTO_AUG:
            aug = {"randaugment": [v2.RandAugment(num_ops=2, magnitude=9)],
                   "trivialaugment": [v2.TrivialAugmentWide()]}.get(workload, [])
            self.tf = v2.Compose([v2.RandomResizedCrop(CROP, antialias=True),
                                  v2.RandomHorizontalFlip()] + aug + norm)
        elif workload == "eval":
            self.tf = v2.Compose([v2.Resize(RESIZE_SHORTER, antialias=True),
                                  v2.CenterCrop(CROP)] + norm)
        else:
            self.tf = v2.ToImage()

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        from PIL import Image
        path, label = self.files[i]
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")
        return self.tf(img), label


def _no_audio(job: Job, what: str):
    if job.workload in AUDIO:
        raise Unavailable(f"{what} has no {job.workload} pipeline (an image library; librosa's "
                          "and torchaudio's rows are the peers)")


def make_torchvision(job: Job):
    _no_audio(job, "torchvision")
    _need_torch()
    if job.workload == "ssd":
        return make_torchvision_ssd(job)
    ds = _PILFolder(job.files, job.workload)
    collate = _collate_list if job.workload == "decode" else None
    what = {"train": "PIL decode, v2.RandomResizedCrop(224) on PIL, flip, normalize, fp16",
            "randaugment": "PIL decode, v2.RandomResizedCrop(224) on PIL, flip, "
                           "v2.RandAugment(num_ops=2, magnitude=9), normalize, fp16",
            "trivialaugment": "PIL decode, v2.RandomResizedCrop(224) on PIL, flip, "
                              "v2.TrivialAugmentWide(), normalize, fp16",
            "eval": "PIL decode, v2.Resize(256) on PIL, CenterCrop(224), normalize, fp16",
            "decode": "PIL decode to uint8 CHW tensors"}[job.workload]
    return (_dataloader_batches(ds, job, collate),
            f"torchvision DataLoader, {job.threads} worker processes: {what}; {_where()}")


class _COCODetection:
    """torchvision's detection path for the ssd workload: PIL decode, tv_tensors.BoundingBoxes
    through transforms.v2 (RandomIoUCrop, SSD's crop; Resize 300x300; ColorJitter; flip;
    normalize; SanitizeBoundingBoxes), then the boxes matched to SSD300's default boxes with
    torchvision.ops.box_iou and the Matcher of torchvision's detection models (threshold 0.5,
    each box's best anchor kept), encoded as (center, size) like DALI's box_encoder."""

    def __init__(self, root, annotations):
        import json
        import os
        import torch
        from torchvision.transforms import v2
        from ssd300 import ssd300_anchors
        d = json.loads(open(annotations).read())
        boxes = collections.defaultdict(list)
        for a in d["annotations"]:
            x, y, w, h = a["bbox"]
            boxes[a["image_id"]].append(([x, y, x + w, y + h], a["category_id"]))
        self.items = [(os.path.join(root, im["file_name"]), boxes[im["id"]]) for im in d["images"]
                      if boxes[im["id"]]]
        self.tf = v2.Compose([
            v2.ToImage(), v2.RandomIoUCrop(), v2.Resize((300, 300), antialias=True),
            v2.ColorJitter(brightness=0.125, contrast=0.5, saturation=0.5, hue=0.5),
            v2.RandomHorizontalFlip(), v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(MEAN, STD), v2.SanitizeBoundingBoxes()])
        self.anchors = torch.tensor(ssd300_anchors(), dtype=torch.float32).view(-1, 4)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        import torch
        from PIL import Image
        from torchvision import ops, tv_tensors
        from torchvision.models.detection._utils import Matcher
        path, anns = self.items[i]
        with open(path, "rb") as f:
            img = Image.open(f).convert("RGB")
        target = {"boxes": tv_tensors.BoundingBoxes([b for b, _ in anns], format="XYXY",
                                                    canvas_size=(img.height, img.width)),
                  "labels": torch.tensor([c for _, c in anns], dtype=torch.int64)}
        img, target = self.tf(img, target)
        rel = target["boxes"].as_subclass(torch.Tensor) / 300.0
        out = ops.box_convert(self.anchors, "xyxy", "cxcywh")
        labels = torch.zeros(len(self.anchors), dtype=torch.int64)
        if len(rel):
            match = Matcher(0.5, 0.5, allow_low_quality_matches=True)(ops.box_iou(rel, self.anchors))
            m = match >= 0
            out[m] = ops.box_convert(rel[match[m]], "xyxy", "cxcywh")
            labels[m] = target["labels"][match[m]]
        return img, out, labels


def make_torchvision_ssd(job: Job):
    ds = _COCODetection(job.root, job.annotations)
    return (_dataloader_batches(ds, job),
            f"torchvision DataLoader, {job.threads} worker processes: PIL decode, transforms.v2 "
            "with tv_tensors.BoundingBoxes (RandomIoUCrop, Resize 300x300, ColorJitter, flip, "
            "normalize, SanitizeBoundingBoxes), box_iou + Matcher against 8732 default boxes; "
            f"{_where()}")


# --------------------------------------------------------------------------- OpenCV

def _rrc_params(h: int, w: int, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
    """torchvision's RandomResizedCrop.get_params, on the worker's seeded torch RNG."""
    import math
    import torch
    area = h * w
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
        aspect = math.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1]).item())
        cw = int(round(math.sqrt(target_area * aspect)))
        ch = int(round(math.sqrt(target_area / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            y = int(torch.randint(0, h - ch + 1, size=(1,)).item())
            x = int(torch.randint(0, w - cw + 1, size=(1,)).item())
            return y, x, ch, cw
    in_ratio = w / h
    if in_ratio < min(ratio):
        cw, ch = w, int(round(w / min(ratio)))
    elif in_ratio > max(ratio):
        ch, cw = h, int(round(h * max(ratio)))
    else:
        cw, ch = w, h
    return (h - ch) // 2, (w - cw) // 2, ch, cw


class _CVFolder:
    """The usual OpenCV pipeline: cv2.imdecode, cv2.resize (INTER_LINEAR, albumentations'
    default), NumPy normalize."""

    def __init__(self, files, workload):
        import numpy as np
        self.files, self.workload = files, workload
        self.mean = np.array(MEAN, np.float32) * 255
        self.inv_std = 1.0 / (np.array(STD, np.float32) * 255)

    def __len__(self):
        return len(self.files)

    def _normalize(self, img):
        import numpy as np
        import torch
        out = (img.astype(np.float32) - self.mean) * self.inv_std
        return torch.from_numpy(np.ascontiguousarray(out.astype(np.float16).transpose(2, 0, 1)))

    def __getitem__(self, i):
        import cv2
        import numpy as np
        import torch
        path, label = self.files[i]
        img = cv2.imdecode(np.fromfile(path, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            raise ValueError(f"opencv: cv2.imdecode could not decode {path}")
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        h, w = img.shape[:2]
        if self.workload == "train":
            y, x, ch, cw = _rrc_params(h, w)
            img = cv2.resize(img[y:y + ch, x:x + cw], (CROP, CROP),
                             interpolation=cv2.INTER_LINEAR)
            if torch.rand(1).item() < 0.5:
                img = cv2.flip(img, 1)
            return self._normalize(img), label
        if self.workload == "eval":
            nw, nh = (RESIZE_SHORTER, int(RESIZE_SHORTER * h / w)) if w <= h else \
                (int(RESIZE_SHORTER * w / h), RESIZE_SHORTER)
            img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
            y, x = (nh - CROP) // 2, (nw - CROP) // 2
            return self._normalize(img[y:y + CROP, x:x + CROP]), label
        return torch.from_numpy(img), label            # HWC uint8


def make_opencv(job: Job):
    _no_audio(job, "OpenCV")
    _need_torch()
    if job.workload == "ssd" or job.workload in AUTO_AUG:
        raise Unavailable(f"no {job.workload} pipeline written with OpenCV (torchvision's row is "
                          "the peer)")
    if importlib.util.find_spec("cv2") is None:
        raise Unavailable("opencv-python-headless is not installed")
    ds = _CVFolder(job.files, job.workload)
    collate = _collate_list if job.workload == "decode" else None
    what = {"train": "cv2.imdecode, random-resized-crop + cv2.resize(INTER_LINEAR), flip, "
                     "NumPy normalize, fp16",
            "eval": "cv2.imdecode, cv2.resize(shorter=256, INTER_LINEAR), center crop, "
                    "NumPy normalize, fp16",
            "decode": "cv2.imdecode to uint8 HWC RGB"}[job.workload]
    return (_dataloader_batches(ds, job, collate),
            f"OpenCV {_cv_version()} in a DataLoader, {job.threads} worker processes: {what}; "
            f"{_where()}")


def _cv_version() -> str:
    import cv2
    return cv2.__version__


# --------------------------------------------------------------------------- torchvision on GPU

def _read_bytes(path):
    import torch
    with open(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)


def make_torchvision_gpu(job: Job):
    _no_audio(job, "torchvision")
    _need_torch()
    if job.workload == "ssd":
        raise Unavailable("no SSD pipeline on the GPU in torchvision (RandomIoUCrop and the "
                          "box matching are per-image CPU code)")
    import torch
    if not torch.cuda.is_available():
        raise Unavailable("no CUDA device")
    from torchvision.io import ImageReadMode, decode_jpeg
    from torchvision.transforms import v2
    from torchvision.transforms.v2 import functional as F

    dev = torch.device("cuda", 0)
    mean = torch.tensor(MEAN, device=dev).view(1, 3, 1, 1)
    std = torch.tensor(STD, device=dev).view(1, 3, 1, 1)
    rrc = v2.RandomResizedCrop(CROP, antialias=True)
    flip = v2.RandomHorizontalFlip()
    aug = {"randaugment": v2.RandAugment(num_ops=2, magnitude=9),
           "trivialaugment": v2.TrivialAugmentWide()}.get(job.workload, lambda im: im)
    files, bs = job.files, job.batch_size

    def normalize(batch):                      # uint8 NCHW -> float16 normalized
        return ((batch.float() / 255 - mean) / std).half()

    def gen():
        order = iter(ForeverSampler(len(files), job.workload in TRAINING, job.seed))
        pool = concurrent.futures.ThreadPoolExecutor(max(1, job.threads))
        pending = collections.deque()

        def submit():
            idx = [next(order) for _ in range(bs)]
            pending.append(([pool.submit(_read_bytes, files[i][0]) for i in idx],
                            torch.tensor([files[i][1] for i in idx])))
        try:
            for _ in range(2):                 # read two batches ahead of the decoder
                submit()
            while True:
                futs, labels = pending.popleft()
                submit()
                data = [f.result() for f in futs]
                images = decode_jpeg(data, mode=ImageReadMode.RGB, device=dev)
                if job.workload in ("train",) + AUTO_AUG:
                    images = normalize(torch.stack([aug(flip(rrc(im))) for im in images]))
                elif job.workload == "eval":
                    images = normalize(torch.stack(
                        [F.center_crop(F.resize(im, [RESIZE_SHORTER], antialias=True), [CROP, CROP])
                         for im in images]))
                yield images, labels.to(dev, non_blocking=True)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    what = {"train": "per-image v2.RandomResizedCrop(224) + flip on the GPU, batched normalize",
            "randaugment": "per-image v2.RandomResizedCrop(224) + flip + v2.RandAugment(2, 9) on "
                           "the GPU, batched normalize",
            "trivialaugment": "per-image v2.RandomResizedCrop(224) + flip + "
                              "v2.TrivialAugmentWide() on the GPU, batched normalize",
            "eval": "per-image Resize(256) + CenterCrop(224) on the GPU, batched normalize",
            "decode": "decode only"}[job.workload]
    return gen(), (f"torchvision.io.decode_jpeg(device='cuda') on lists of {bs} files read by "
                   f"{max(1, job.threads)} threads; {what}")


# --------------------------------------------------------------------------- audio (asr)

def _audio_worker_init(_worker_id):
    # One thread per worker, NumPy's BLAS and FFT pools included: the workers are the
    # parallelism (torch already runs one intra-op thread in a DataLoader worker).
    _worker_init(_worker_id)
    try:
        import threadpoolctl
        threadpoolctl.threadpool_limits(1)
    except ImportError:
        pass


def _collate_asr(samples):
    """Features [64, t_i] of each utterance -> one zero-padded float32 [N, 64, T] batch, T the
    longest t_i rounded up to a multiple of 16 (fn.pad(axes=(1,), align=16) over a batch), and
    the frame counts [N] (int64)."""
    import torch
    lengths = torch.tensor([s[1] for s in samples], dtype=torch.int64)
    align = ASR["pad_align"]
    t = -(-int(lengths.max()) // align) * align
    out = torch.zeros((len(samples), samples[0][0].shape[0], t), dtype=torch.float32)
    for k, (feat, n) in enumerate(samples):
        out[k, :, :n] = feat
    return out, lengths


class _LibrosaASR:
    """soundfile decode, NumPy preemphasis, librosa.feature.melspectrogram, log, per-band
    normalize; the batch is padded by _collate_asr."""

    def __init__(self, files):
        self.files = files
        self.window = asr_window(ASR["window_length"])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        import librosa
        import numpy as np
        import soundfile
        import torch
        path = self.files[i][0]
        y, sr = soundfile.read(path, dtype="float32", always_2d=True)
        y = y.mean(axis=1) if y.shape[1] > 1 else y[:, 0]
        if sr != ASR["sample_rate"]:
            y = librosa.resample(y, orig_sr=sr, target_sr=ASR["sample_rate"])
        k = ASR["preemph"]
        e = np.empty_like(y)
        if len(y):
            e[0] = y[0] - k * y[0]                  # DALI's border="clamp"
            e[1:] = y[1:] - k * y[:-1]
        m = librosa.feature.melspectrogram(
            y=e, sr=ASR["sample_rate"], n_fft=ASR["nfft"], hop_length=ASR["window_step"],
            win_length=ASR["window_length"], window=self.window, center=True, pad_mode="reflect",
            power=2.0, n_mels=ASR["nfilter"])
        x = np.log(np.maximum(m, ASR["log_floor"]))
        std = x.std(axis=1, keepdims=True)
        x = (x - x.mean(axis=1, keepdims=True)) / np.where(std > 0, std, 1)
        return torch.from_numpy(x.astype(np.float32, copy=False)), x.shape[1]


def make_librosa(job: Job):
    if job.workload not in AUDIO:
        raise Unavailable(f"librosa has no {job.workload} pipeline (an audio library)")
    try:
        import torch  # noqa: F401  (the DataLoader)
    except ImportError as e:
        raise Unavailable(f"torch does not import ({e}): pip install -r bench/requirements.txt")
    for mod in ("librosa", "soundfile"):
        if importlib.util.find_spec(mod) is None:
            raise Unavailable(f"{mod} is not installed (pip install librosa soundfile)")
    import librosa
    import soundfile
    return (_dataloader_batches(_LibrosaASR(job.files), job, _collate_asr, _audio_worker_init),
            f"librosa {librosa.__version__} in a DataLoader, {job.threads} worker processes: "
            f"soundfile {soundfile.__version__} decode, NumPy preemphasis, "
            "librosa.feature.melspectrogram(n_fft=512, win_length=320, hop_length=160, n_mels=64, "
            "DALI's Hann window, reflect padding, power 2), log, per-band normalize, pad to x16; "
            f"{_where()}")


def _asr_window_tensor(n: int):
    import torch
    return torch.from_numpy(asr_window(n))


class _TorchaudioASR:
    """torchaudio.load (or soundfile where torchaudio.load can't run: torchaudio >= 2.9 decodes
    through TorchCodec), torchaudio.functional.preemphasis, torchaudio.transforms.MelSpectrogram,
    log, per-band normalize; the batch is padded by _collate_asr."""

    def __init__(self, files, use_soundfile: bool):
        import torchaudio
        self.files, self.use_soundfile = files, use_soundfile
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=ASR["sample_rate"], n_fft=ASR["nfft"], win_length=ASR["window_length"],
            hop_length=ASR["window_step"], n_mels=ASR["nfilter"],
            window_fn=_asr_window_tensor, power=2.0, center=True,
            pad_mode="reflect", norm="slaney", mel_scale="slaney")

    def __len__(self):
        return len(self.files)

    def load(self, path):
        import torch
        import torchaudio
        if self.use_soundfile:
            import soundfile
            y, sr = soundfile.read(path, dtype="float32", always_2d=True)
            return torch.from_numpy(y.T.copy()), sr
        return torchaudio.load(path)

    def __getitem__(self, i):
        import torch
        import torchaudio.functional as AF
        wave, sr = self.load(self.files[i][0])
        wave = wave.mean(dim=0)                             # downmix
        if sr != ASR["sample_rate"]:
            wave = AF.resample(wave, sr, ASR["sample_rate"])
        wave = AF.preemphasis(wave, coeff=ASR["preemph"])
        x = torch.log(torch.clamp(self.mel(wave), min=ASR["log_floor"]))
        std, mean = torch.std_mean(x, dim=1, keepdim=True, correction=0)
        x = (x - mean) / torch.where(std > 0, std, torch.ones_like(std))
        return x, x.shape[1]


def make_torchaudio(job: Job):
    if job.workload not in AUDIO:
        raise Unavailable(f"torchaudio has no {job.workload} pipeline (an audio library)")
    try:
        import torch  # noqa: F401
        import torchaudio
    except Exception as e:
        raise Unavailable(f"not installable here: torchaudio does not import "
                          f"({type(e).__name__}: {e}); pip install torchaudio") from None
    use_soundfile, why = False, ""
    try:
        torchaudio.load(job.files[0][0])
    except Exception as e:              # torchaudio >= 2.9 without TorchCodec, say
        why = f"{type(e).__name__}: {e}".splitlines()[0][:120]
        if importlib.util.find_spec("soundfile") is None:
            raise Unavailable(f"torchaudio.load fails here ({why}) and soundfile is not "
                              "installed (pip install soundfile)") from None
        use_soundfile = True
    decode = (f"soundfile decode (torchaudio.load fails here: {why})" if use_soundfile
              else "torchaudio.load")
    return (_dataloader_batches(_TorchaudioASR(job.files, use_soundfile), job, _collate_asr,
                                _audio_worker_init),
            f"torchaudio {torchaudio.__version__} in a DataLoader, {job.threads} worker processes: "
            f"{decode}, functional.preemphasis(0.97), transforms.MelSpectrogram(n_fft=512, "
            "win_length=320, hop_length=160, n_mels=64, DALI's Hann window, slaney mel), log, "
            f"per-band normalize, pad to x16; {_where()}")


# --------------------------------------------------------------------------- NVIDIA DALI

def _dali_api():
    try:
        import nvidia.dali as dali
    except ImportError as e:
        raise Unavailable(f"not installable here: nvidia.dali does not import ({e}); where a "
                          "package index is reachable: pip install nvidia-dali-cuda130") from None
    from nvidia.dali import fn, pipeline_def, types
    try:
        from nvidia.dali.plugin.pytorch import (DALIClassificationIterator, DALIGenericIterator,
                                                LastBatchPolicy)
    except ImportError:
        DALIClassificationIterator = DALIGenericIterator = LastBatchPolicy = None
    return dict(name=f"NVIDIA DALI {dali.__version__}", pipeline_def=pipeline_def, fn=fn,
                types=types, iterator=DALIClassificationIterator,
                generic_iterator=DALIGenericIterator, last_batch_policy=LastBatchPolicy,
                auto_aug="nvidia.dali.auto_aug")


def make_dali(job: Job, device: str):
    api = _dali_api()                  # torch is optional: without it, pipe.run() outputs
    if device == "gpu" and not cuda_available():
        raise Unavailable("no CUDA device")
    from stoker_contender import dali_api_batches
    return dali_api_batches(api, job, device)


def make_dali_cpu(job: Job):
    return make_dali(job, "cpu")


def make_dali_gpu(job: Job):
    return make_dali(job, "gpu")


CONTENDERS = {
    "torchvision": make_torchvision,
    "opencv": make_opencv,
    "torchvision-gpu": make_torchvision_gpu,
    "librosa": make_librosa,
    "torchaudio": make_torchaudio,
    "dali-cpu": make_dali_cpu,
    "dali-gpu": make_dali_gpu,
}
# Which stoker contender each is compared with in the table's ratio column.
PLACEMENT = {"torchvision": "cpu", "opencv": "cpu", "dali-cpu": "cpu", "librosa": "cpu",
             "torchaudio": "cpu",
             "torchvision-gpu": "gpu", "dali-gpu": "gpu"}
