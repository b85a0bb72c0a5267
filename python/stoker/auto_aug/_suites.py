"""What the AutoAugment, RandAugment and TrivialAugment suites share: the translations, whose
magnitudes are pixels or fractions of the image shape."""
from . import augmentations as a


def _height_width(limit):
    if isinstance(limit, (tuple, list)):
        height, width = limit
        return height, width
    return limit, limit


def translations(use_shape, default_abs, default_rel, max_translate_abs=None,
                 max_translate_rel=None):
    """[translate_x, translate_y] with the magnitude ranges the arguments give: fractions of
    the shape (`use_shape`) or pixels."""
    if not isinstance(use_shape, bool):
        raise TypeError(f"The `use_shape` is a flag that should be set to either True or False, "
                        f"got {use_shape}.")
    if use_shape:
        if max_translate_abs is not None:
            raise ValueError("The argument `max_translate_abs` cannot be used with image "
                             "shapes. You may use `max_translate_rel` instead.")
        height, width = _height_width(default_rel if max_translate_rel is None
                                      else max_translate_rel)
        x, y = a.translate_x, a.translate_y
    else:
        if max_translate_rel is not None:
            raise ValueError("The argument `max_translate_rel` cannot be used without image "
                             "shapes. You may use `max_translate_abs` instead.")
        height, width = _height_width(default_abs if max_translate_abs is None
                                      else max_translate_abs)
        x, y = a.translate_x_no_shape, a.translate_y_no_shape
    return [x.augmentation((0, width), True), y.augmentation((0, height), True)]


def check_excluded(excluded, augmentations, suite):
    """The augmentations whose names are not in `excluded` (all of which must be in the
    suite)."""
    names = [aug.name for aug in augmentations]
    for name in excluded or []:
        if name not in names:
            raise ValueError(
                f"The `{name}` was specified in `excluded`, but the {suite} suite does not "
                f"contain augmentation with this name. The augmentations in the suite are: "
                f"{', '.join(names)}.")
    return [aug for aug in augmentations if aug.name not in (excluded or [])]
