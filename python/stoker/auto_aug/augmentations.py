"""The standard augmentations of AutoAugment, RandAugment and TrivialAugment, made of stoker's
operators, as DALI's ``nvidia.dali.auto_aug.augmentations``: same names, magnitude ranges and
parameter mappings. Each is an ``Augmentation``: call it with ``magnitude_bin`` and
``num_magnitude_bins`` instead of its parameter (see ``stoker.auto_aug.core``), or make a
variant with ``shear_x.augmentation(mag_range=(0, 0.5))``.

The samples are ``uint8`` images (``HWC``) or videos (``FHWC``). The enhance operations
(brightness, contrast, color, sharpness) take a factor around 1 (1: unchanged): their
magnitudes are in ``[0, 0.9]``, randomly negated and shifted by 1.
"""
import numpy as np

from .. import fn, types
from .core import augmentation

__all__ = ["shear_x", "shear_y", "translate_x", "translate_x_no_shape", "translate_y",
           "translate_y_no_shape", "rotate", "brightness", "contrast", "color", "sharpness",
           "posterize", "solarize", "solarize_add", "invert", "equalize", "auto_contrast",
           "identity", "warp_x_param", "warp_y_param", "shift_enhance_range", "sharpness_kernel",
           "sharpness_kernel_shifted", "poster_mask_uint8", "solarize_add_shift"]


def _u8(value):
    return types.Constant(np.uint8(value), dtype=types.UINT8)


# ---------------------------------------------------------------- magnitude -> parameter

def warp_x_param(magnitude):
    """The magnitude as the x component of a 2D vector (shear, offset)."""
    return np.array([magnitude, 0], dtype=np.float32)


def warp_y_param(magnitude):
    """The magnitude as the y component of a 2D vector (shear, offset)."""
    return np.array([0, magnitude], dtype=np.float32)


def shift_enhance_range(magnitude):
    """A signed magnitude from [-1, 1] as an enhance factor from [0, 2] (1: unchanged)."""
    return np.float32(1) + np.float32(magnitude)


def sharpness_kernel(magnitude):
    """The 3x3 kernel of PIL's ImageEnhance.Sharpness with factor ``1 + magnitude``: a blend
    of the identity and PIL's smoothing kernel (magnitude from [-1, 1])."""
    smooth = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], dtype=np.float32) / np.float32(13)
    ident = np.zeros((3, 3), dtype=np.float32)
    ident[1, 1] = 1
    m = np.float32(magnitude)
    return (m * -smooth + (np.float32(1) + m) * ident).astype(np.float32)


def sharpness_kernel_shifted(magnitude):
    """`sharpness_kernel` for a factor from [0, 2] (1: unchanged)."""
    return sharpness_kernel(np.float32(magnitude) - np.float32(1))


def poster_mask_uint8(magnitude):
    """The mask keeping the `magnitude` (rounded, 1 to 8) most significant bits of a byte.
    0 bits would blank the image, so 0 keeps 1 bit, as the RandAugment implementations do."""
    bits = int(np.clip(np.round(magnitude), 1, 8))
    return np.array((0xFF << (8 - bits)) & 0xFF, dtype=np.uint8)


def solarize_add_shift(shift):
    """The shift solarize_add adds to the pixels below 128, as uint8 (0 to 127)."""
    if not 0 <= shift < 128:
        raise ValueError(f"The solarize_add augmentation accepts shifts from 0 to 128 "
                         f"(exclusive), got {shift}.")
    return np.uint8(shift)


# ---------------------------------------------------------------- geometry

def _warp(data, matrix, fill_value, interp_type):
    extra = {k: v for k, v in (("fill_value", fill_value), ("interp_type", interp_type))
             if v is not None}
    return fn.warp_affine(data, matrix=matrix, inverse_map=False, **extra)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_x_param)
def shear_x(data, shear, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_y_param)
def shear_y(data, shear, fill_value=128, interp_type=None):
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_x_param)
def translate_x(data, rel_offset, shape, fill_value=128, interp_type=None):
    """Shifts by a fraction of the width; `shape` is the (H, W, ...) of the samples."""
    offset = rel_offset * shape[1]
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_x_param,
              name="translate_x")
def translate_x_no_shape(data, offset, fill_value=128, interp_type=None):
    """Shifts by a number of pixels."""
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_y_param)
def translate_y(data, rel_offset, shape, fill_value=128, interp_type=None):
    """Shifts by a fraction of the height; `shape` is the (H, W, ...) of the samples."""
    offset = rel_offset * shape[0]
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_y_param,
              name="translate_y")
def translate_y_no_shape(data, offset, fill_value=128, interp_type=None):
    """Shifts by a number of pixels."""
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 30), randomly_negate=True)
def rotate(data, angle, fill_value=128, interp_type=None, rotate_keep_size=True):
    extra = {k: v for k, v in (("fill_value", fill_value), ("interp_type", interp_type))
             if v is not None}
    return fn.rotate(data, angle=angle, keep_size=rotate_keep_size, **extra)


# ---------------------------------------------------------------- enhance (PIL's ImageEnhance)

@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def brightness(data, parameter):
    return fn.brightness(data, brightness=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def contrast(data, parameter):
    """As PIL's ImageEnhance.Contrast, around the mean luma of the sample (HWC or FHWC), not
    around the middle of the range as fn.contrast."""
    channel_means = fn.reductions.mean(data, axis_names="HW", keep_dims=True)
    luma = types.Constant(np.array([0.299, 0.587, 0.114], dtype=np.float32))
    center = fn.reductions.sum(channel_means * luma, axis_names="C", keep_dims=True)
    return fn.cast_like(center + (data - center) * parameter, data)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def color(data, parameter):
    return fn.saturation(data, saturation=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=sharpness_kernel,
              param_device="auto")
def sharpness(data, kernel):
    """As PIL's ImageEnhance.Sharpness, except on the 1-pixel border, which PIL copies from
    the input."""
    return fn.experimental.filter(data, kernel)


# ---------------------------------------------------------------- pixel values

@augmentation(mag_range=(0, 4), mag_to_param=poster_mask_uint8, param_device="auto")
def posterize(data, mask):
    return data & mask


@augmentation(mag_range=(256, 0), param_device="auto")
def solarize(data, threshold):
    """Inverts the pixels at or above `threshold`."""
    # 255 - x == x ^ 255 for bytes: xor with 255 where inverted, with 0 elsewhere
    return data ^ ((data >= threshold) * _u8(255))


@augmentation(mag_range=(0, 110), param_device="auto", mag_to_param=solarize_add_shift)
def solarize_add(data, shift):
    """Adds `shift` to the pixels below 128 (which stay below 256)."""
    return data + (data < _u8(128)) * shift


@augmentation
def invert(data, _):
    return _u8(255) - data


@augmentation
def equalize(data, _):
    """Histogram equalization per channel, as OpenCV's equalizeHist (PIL's ImageOps.equalize
    maps the cumulative histogram to the lookup table slightly differently)."""
    return fn.experimental.equalize(data)


@augmentation
def auto_contrast(data, _):
    """Stretches each channel of the sample (HWC or FHWC) to [0, 255]; a constant channel is
    kept."""
    lo = fn.reductions.min(data, axis_names="HW", keep_dims=True)
    hi = fn.reductions.max(data, axis_names="HW", keep_dims=True)
    spread = hi - lo
    stretch = spread > 0
    flat = stretch ^ True
    # 255 / spread where the channel spans a range, 255 / 255 where it is constant
    scale = 255 / (spread * stretch + _u8(255) * flat)
    return fn.cast_like((data - lo * stretch) * scale, data)


@augmentation
def identity(data, _):
    return data
