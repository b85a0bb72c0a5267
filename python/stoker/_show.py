"""``stoker.show_batch``: a batch of images as one labelled grid PNG, to see what a pipeline
makes. Pillow writes the PNG and draws the labels; it is an optional dependency
(``pip install pillow``, or the ``demo`` extra)."""
import os

import numpy as np

_WHAT = "stoker.show_batch"
_PAD = 2           # pixels between tiles
_LABEL_H = 14      # the strip above each tile that holds its label


def _pillow():
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise ImportError(f"{_WHAT} needs Pillow to write the PNG; install it with "
                          "`pip install pillow` (or `pip install stoker[demo]`).") from None
    return Image, ImageDraw


def _samples(batch, what):
    """A batch (TensorListCPU/GPU, a NumPy array with the batch first, a list of arrays, a
    torch tensor) -> (list of NumPy arrays, layout or None)."""
    layout = None
    if hasattr(batch, "as_cpu") and hasattr(batch, "layout"):  # TensorListCPU / TensorListGPU
        layout = batch.layout() or None
        if type(batch).__name__ == "TensorListGPU":
            batch = batch.as_cpu()
        return [np.asarray(batch.at(i)) for i in range(len(batch))], layout
    if hasattr(batch, "detach") and hasattr(batch, "cpu"):  # a torch tensor, CPU or GPU
        batch = batch.detach().cpu().numpy()
    if isinstance(batch, np.ndarray):
        if batch.ndim < 3:
            raise ValueError(f"{_WHAT}: {what} must hold a batch of images (N, H, W), "
                             f"(N, H, W, C) or (N, C, H, W), got an array of shape "
                             f"{batch.shape}; for one image, pass image[None].")
        return list(batch), None
    if isinstance(batch, (list, tuple)):
        return [np.asarray(x) for x in batch], None
    raise TypeError(f"{_WHAT}: {what} must be a Pipeline, a batch of images (TensorListCPU, "
                    f"TensorListGPU, a NumPy array or a list of arrays), got "
                    f"{type(batch).__name__}.")


def _label_texts(labels, n):
    if labels is None:
        return [str(i) for i in range(n)]
    if isinstance(labels, str):
        raise TypeError(f"{_WHAT}: labels must have one entry per image, got the string "
                        f"{labels!r}.")
    if hasattr(labels, "as_cpu") and hasattr(labels, "layout"):
        if type(labels).__name__ == "TensorListGPU":
            labels = labels.as_cpu()
        labels = [np.asarray(labels.at(i)) for i in range(len(labels))]
    elif hasattr(labels, "detach") and hasattr(labels, "cpu"):
        labels = labels.detach().cpu().numpy()
    labels = list(labels)
    if len(labels) != n:
        raise ValueError(f"{_WHAT}: labels has {len(labels)} entries for {n} images; give one "
                         "label per image.")
    out = []
    for i, lab in enumerate(labels):
        if isinstance(lab, np.ndarray):
            lab = lab.reshape(-1).tolist()
            lab = lab[0] if len(lab) == 1 else lab
        if isinstance(lab, (float, np.floating)):
            lab = f"{lab:g}"
        out.append(f"{i}: {lab}")
    return out


def _to_hwc(x, layout, i):
    if x.ndim == 2:
        return x[:, :, None]
    if x.ndim != 3:
        raise ValueError(f"{_WHAT}: image {i} has shape {x.shape}; expected an image of 2 (HW) "
                         "or 3 dimensions (HWC or CHW).")
    if layout is None:  # as a human would guess: channels are few
        layout = "CHW" if x.shape[0] in (1, 3, 4) and x.shape[2] not in (1, 3, 4) else "HWC"
    if layout == "CHW":
        x = x.transpose(1, 2, 0)
    if x.shape[2] not in (1, 3, 4):
        raise ValueError(f"{_WHAT}: image {i} has {x.shape[2]} channels (shape {x.shape}, "
                         f"layout {layout}); images with 1, 3 or 4 channels can be shown. Pass "
                         "layout='CHW' or 'HWC' if the guess is wrong.")
    return x


def _to_uint8(x, mean, std, i):
    if x.dtype == np.uint8 and mean is None and std is None:
        return x
    if x.dtype == np.bool_ or not (np.issubdtype(x.dtype, np.integer) or
                                   np.issubdtype(x.dtype, np.floating)):
        raise TypeError(f"{_WHAT}: image {i} has elements of type {x.dtype}; expected uint8, "
                        "another integer type or a float type.")
    is_float = np.issubdtype(x.dtype, np.floating)
    x = x.astype(np.float32)
    c = x.shape[2]
    for name, v in (("std", std), ("mean", mean)):
        if v is None:
            continue
        v = np.asarray(v, np.float32).reshape(-1)
        if v.size not in (1, c):
            raise ValueError(f"{_WHAT}: {name} has {v.size} values for images of {c} channels; "
                             "give one value, or one per channel.")
        x = x * v if name == "std" else x + v
    # Floats in [0, 1] (ToTensor-style) are scaled to [0, 255]; larger ones are taken as 0..255.
    if is_float and x.size and float(np.nanmax(x)) <= 1.0 + 1e-3:
        x = x * 255.0
    return np.clip(np.nan_to_num(x) + 0.5, 0, 255).astype(np.uint8)


def show_batch(pipe_or_batch, path, *, labels=None, mean=None, std=None, layout=None,
               columns=8, max_images=64):
    """Writes a batch of images as one grid PNG at ``path``, each image under a label, and
    returns the path.

    ``pipe_or_batch``: a Pipeline (run once: its first output is taken as the images and, if it
    has one, its second as the labels), the outputs of ``pipe.run()``, or a batch of images
    (TensorListCPU or TensorListGPU, a NumPy array with the batch first, a list of arrays, a
    torch tensor). Images are HWC, CHW or HW, uint8 or any integer or float type (floats in
    [0, 1] are scaled to 255); ``layout`` ('HWC' or 'CHW') overrides the batch's own layout or
    the guess. ``mean`` and ``std`` undo a normalisation, ``x * std + mean`` per channel (give
    what you gave crop_mirror_normalize). ``labels``: one per image (numbers, strings, or a
    TensorList); the image's index otherwise. At most ``max_images``, ``columns`` to a row.
    Needs Pillow (``pip install pillow``).
    """
    Image, ImageDraw = _pillow()
    from .pipeline import Pipeline
    what = "pipe_or_batch"
    if isinstance(pipe_or_batch, Pipeline):
        pipe_or_batch.build()
        pipe_or_batch = pipe_or_batch.run()
        what = "the pipeline's first output"
    if isinstance(pipe_or_batch, tuple) and pipe_or_batch and hasattr(pipe_or_batch[0], "layout"):
        outputs = pipe_or_batch
        pipe_or_batch = outputs[0]
        if labels is None and len(outputs) > 1:
            labels = outputs[1]
    if layout not in (None, "HWC", "CHW"):
        raise ValueError(f"{_WHAT}: layout must be 'HWC', 'CHW' or None (the batch's own, or a "
                         f"guess), got {layout!r}.")
    if not isinstance(columns, int) or columns < 1:
        raise ValueError(f"{_WHAT}: columns must be a positive integer, got {columns!r}.")
    samples, own_layout = _samples(pipe_or_batch, what)
    if not samples:
        raise ValueError(f"{_WHAT}: the batch is empty; there is nothing to show.")
    texts = _label_texts(labels, len(samples))[:max_images]
    samples = samples[:max_images]
    if layout is None and own_layout is not None:
        layout = own_layout[-3:] if own_layout[-3:] in ("HWC", "CHW") else None
    tiles = [_to_uint8(_to_hwc(x, layout, i), mean, std, i) for i, x in enumerate(samples)]
    modes = {1: "L", 3: "RGB", 4: "RGBA"}
    mode = modes[max(t.shape[2] for t in tiles)]  # gray tiles among colour ones are converted
    th = max(t.shape[0] for t in tiles)
    tw = max(t.shape[1] for t in tiles)
    cols = min(columns, len(tiles))
    rows = (len(tiles) + cols - 1) // cols
    cell_h, cell_w = _LABEL_H + th + _PAD, tw + _PAD
    grid = Image.new(mode, (cols * cell_w + _PAD, rows * cell_h + _PAD), color="white")
    draw = ImageDraw.Draw(grid)
    for i, (tile, text) in enumerate(zip(tiles, texts)):
        r, c = divmod(i, cols)
        x0, y0 = _PAD + c * cell_w, _PAD + r * cell_h
        img = Image.fromarray(tile[:, :, 0] if tile.shape[2] == 1 else tile,
                              modes[tile.shape[2]])
        grid.paste(img.convert(mode), (x0, y0 + _LABEL_H))
        draw.text((x0 + 1, y0 + 1), text, fill="black")
    path = os.fspath(path)
    grid.save(path, format="PNG")
    return path
