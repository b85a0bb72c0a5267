"""TrivialAugment Wide (https://arxiv.org/abs/2103.10158), as DALI's
``nvidia.dali.auto_aug.trivial_augment``: each sample goes through one augmentation drawn
uniformly from a suite, at a magnitude bin drawn uniformly. Needs
``@pipeline_def(enable_conditionals=True)``.
"""
from .. import fn, types
from . import augmentations as a
from ._suites import check_excluded as _check_excluded, translations as _translations
from .core import signed_bin, _forbid_unused_kwargs, _select_for

__all__ = ["trivial_augment_wide", "apply_trivial_augment", "get_trivial_augment_wide_suite"]


def trivial_augment_wide(data, num_magnitude_bins=31, shape=None, fill_value=128,
                         interp_type=None, max_translate_abs=None, max_translate_rel=None,
                         seed=None, excluded=None):
    """Applies TrivialAugment Wide to the batch with the wide suite of augmentations.

    Args:
        data: uint8 images (HWC) or videos (FHWC).
        num_magnitude_bins: the number of bins the magnitude ranges are divided into.
        shape: the (height, width) of the samples (a DataNode, e.g. from
            ``fn.peek_image_shape``, or a tuple): the translations then shift by up to
            ``max_translate_rel`` times it; without it, by up to ``max_translate_abs`` pixels.
        fill_value: the padding of shear, translate and rotate (``None``: the border repeated).
        interp_type: their interpolation (``types.INTERP_LINEAR`` by default, or
            ``types.INTERP_NN``).
        max_translate_abs: int or (height, width); 32 by default. Only without `shape`.
        max_translate_rel: float or (height, width); 1 by default. Only with `shape`.
        seed: seed of the random choices (augmentation, bin, sign).
        excluded: names of augmentations of the suite to leave out.
    """
    augmentations = _check_excluded(
        excluded, get_trivial_augment_wide_suite(shape is not None, max_translate_abs,
                                                 max_translate_rel), "TrivialAugmentWide")
    kwargs = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    return apply_trivial_augment(augmentations, data, num_magnitude_bins=num_magnitude_bins,
                                 seed=seed, **kwargs)


def apply_trivial_augment(augmentations, data, num_magnitude_bins=31, seed=None, **kwargs):
    """Applies one augmentation drawn from `augmentations` per sample, at a random magnitude
    bin from ``[0, num_magnitude_bins - 1]``. `kwargs` go to the augmentations whose
    signatures name them; one that none takes is an error."""
    if isinstance(num_magnitude_bins, bool) or not isinstance(num_magnitude_bins, int) \
            or num_magnitude_bins < 1:
        raise ValueError(f"The `num_magnitude_bins` must be a positive integer, got "
                         f"{num_magnitude_bins}.")
    if len(augmentations) == 0:
        raise ValueError("The `augmentations` list cannot be empty. Got empty list in "
                         "`apply_trivial_augment` call.")
    _forbid_unused_kwargs(augmentations, kwargs, "apply_trivial_augment")
    extra = {} if seed is None else {"seed": seed}
    magnitude_bin = fn.random.uniform(values=list(range(num_magnitude_bins)), dtype=types.INT32,
                                      **extra)
    if any(aug.randomly_negate for aug in augmentations):
        magnitude_bin = signed_bin(magnitude_bin, **extra)
    op_index = fn.random.uniform(values=list(range(len(augmentations))), dtype=types.INT32,
                                 **extra)
    return _select_for("apply_trivial_augment", "get_trivial_augment_wide_suite", augmentations,
                       op_index, dict(kwargs, data=data, magnitude_bin=magnitude_bin,
                                      num_magnitude_bins=num_magnitude_bins))


def get_trivial_augment_wide_suite(use_shape=False, max_translate_abs=None,
                                   max_translate_rel=None):
    """The 14 augmentations of TrivialAugment's wide space: translate_x, translate_y, shear_x,
    shear_y, rotate, brightness, contrast, color, sharpness, posterize, solarize, equalize,
    auto_contrast, identity.

    Args:
        use_shape: translations by fractions of the sample's shape (given to the call as
            ``shape``) rather than by pixels.
        max_translate_abs: int or (height, width): the largest shift in pixels (32 by
            default). Only with ``use_shape=False``.
        max_translate_rel: float or (height, width): the largest shift as a fraction of the
            shape (1 by default). Only with ``use_shape=True``.
    """
    return _translations(use_shape, 32, 1.0, max_translate_abs, max_translate_rel) + [
        a.shear_x.augmentation((0, 0.99), True),
        a.shear_y.augmentation((0, 0.99), True),
        a.rotate.augmentation((0, 135), True),
        a.brightness.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.contrast.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.color.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.sharpness.augmentation((0.01, 0.99), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 2), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),  # a lower threshold inverts more
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
