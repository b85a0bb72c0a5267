"""RandAugment (https://arxiv.org/abs/1909.13719), as DALI's
``nvidia.dali.auto_aug.rand_augment``: each sample goes through `n` augmentations drawn
uniformly (with repetition) from a suite, all at magnitude bin `m`. Needs
``@pipeline_def(enable_conditionals=True)``.
"""
import warnings

from .. import fn, types
from . import augmentations as a
from ._suites import check_excluded as _check_excluded, translations as _translations
from .core import signed_bin, _forbid_unused_kwargs, _select_for

__all__ = ["rand_augment", "apply_rand_augment", "get_rand_augment_suite",
           "get_rand_augment_non_monotonic_suite"]


def rand_augment(data, n, m, num_magnitude_bins=31, shape=None, fill_value=128,
                 interp_type=None, max_translate_abs=None, max_translate_rel=None, seed=None,
                 monotonic_mag=True, excluded=None):
    """Applies RandAugment to the batch with the standard suite of augmentations.

    Args:
        data: uint8 images (HWC) or videos (FHWC).
        n: the number of augmentations applied to each sample.
        m: the magnitude bin of every augmentation, from ``[0, num_magnitude_bins - 1]``.
        num_magnitude_bins: the number of bins the magnitude ranges are divided into.
        shape: the (height, width) of the samples (a DataNode, e.g. from
            ``fn.peek_image_shape``, or a tuple): the translations then shift by up to
            ``max_translate_rel`` times it; without it, by up to ``max_translate_abs`` pixels.
        fill_value: the padding of shear, translate and rotate (``None``: the border repeated).
        interp_type: their interpolation (``types.INTERP_LINEAR`` by default, or
            ``types.INTERP_NN``).
        max_translate_abs: int or (height, width); 100 by default. Only without `shape`.
        max_translate_rel: float or (height, width); 100/224 by default. Only with `shape`.
        seed: seed of the random choices (augmentations and signs).
        monotonic_mag: True: every augmentation gets stronger with the bin. False: the ranges
            of the other flavour of RandAugment, where posterize and solarize get weaker with
            the bin and the enhance operations use factors in (0.1, 1.9)
            (`get_rand_augment_non_monotonic_suite`).
        excluded: names of augmentations of the suite to leave out.
    """
    suite = get_rand_augment_suite if monotonic_mag else get_rand_augment_non_monotonic_suite
    augmentations = _check_excluded(
        excluded, suite(shape is not None, max_translate_abs, max_translate_rel), "RandAugment")
    kwargs = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    return apply_rand_augment(augmentations, data, n, m, num_magnitude_bins=num_magnitude_bins,
                              seed=seed, **kwargs)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def apply_rand_augment(augmentations, data, n, m, num_magnitude_bins=31, seed=None, **kwargs):
    """Applies `n` augmentations drawn from `augmentations` per sample, each at magnitude bin
    `m`. `kwargs` go to the augmentations whose signatures name them (``shape``,
    ``fill_value``, ``interp_type`` for the standard ones); one that none takes is an error."""
    if not _is_int(n) or n < 0:
        raise ValueError(f"The number of operations to apply `n` must be a non-negative integer, "
                         f"got {n}.")
    if not _is_int(num_magnitude_bins) or num_magnitude_bins < 1:
        raise ValueError(f"The `num_magnitude_bins` must be a positive integer, got "
                         f"{num_magnitude_bins}.")
    if not _is_int(m) or not 0 <= m < num_magnitude_bins:
        raise ValueError(f"The magnitude bin `m` must be an integer from "
                         f"`[0, {num_magnitude_bins - 1}]` range. Got {m}.")
    if n == 0:
        warnings.warn("The `apply_rand_augment` was called with `n=0`, no augmentation will be "
                      "applied.", Warning)
        return data
    if len(augmentations) == 0:
        raise ValueError("The `augmentations` list cannot be empty, unless n=0. Got empty list "
                         "in `apply_rand_augment` call.")
    _forbid_unused_kwargs(augmentations, kwargs, "apply_rand_augment")
    extra = {} if seed is None else {"seed": seed}
    shape = () if n == 1 else (n,)
    op_index = fn.random.uniform(values=list(range(len(augmentations))), shape=shape,
                                 dtype=types.INT32, **extra)
    signed = any(aug.randomly_negate for aug in augmentations)
    magnitude_bin = signed_bin(m, shape=shape, **extra) if signed else m
    for k in range(n):
        level_bin = magnitude_bin[k] if signed and n > 1 else magnitude_bin
        level_op = op_index[k] if n > 1 else op_index
        data = _select_for("apply_rand_augment", "get_rand_augment_suite", augmentations,
                           level_op, dict(kwargs, data=data, magnitude_bin=level_bin,
                                          num_magnitude_bins=num_magnitude_bins))
    return data


def get_rand_augment_suite(use_shape=False, max_translate_abs=None, max_translate_rel=None):
    """The RandAugment augmentations: translate_x, translate_y, shear_x, shear_y, rotate,
    brightness, contrast, color, sharpness, posterize, solarize, equalize, auto_contrast,
    identity; each stronger with a higher bin.

    Args:
        use_shape: translations by fractions of the sample's shape (given to the call as
            ``shape``) rather than by pixels.
        max_translate_abs: int or (height, width): the largest shift in pixels (100 by
            default). Only with ``use_shape=False``.
        max_translate_rel: float or (height, width): the largest shift as a fraction of the
            shape (100/224 by default). Only with ``use_shape=True``.
    """
    return _translations(use_shape, 100, 100 / 224, max_translate_abs, max_translate_rel) + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.contrast.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.color.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.sharpness.augmentation((0, 0.9), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),  # a lower threshold inverts more
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]


def get_rand_augment_non_monotonic_suite(use_shape=False, max_translate_abs=None,
                                         max_translate_rel=None):
    """The RandAugment augmentations with AutoAugment's ranges for brightness, contrast,
    color, sharpness (factors 0.1 to 1.9), posterize (0 to 4 bits) and solarize (threshold 0
    to 256), which do not get stronger with the bin. Arguments as `get_rand_augment_suite`."""
    return _translations(use_shape, 100, 100 / 224, max_translate_abs, max_translate_rel) + [
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0.1, 1.9), False, None),
        a.contrast.augmentation((0.1, 1.9), False, None),
        a.color.augmentation((0.1, 1.9), False, None),
        a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((0, 256), False, None),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
