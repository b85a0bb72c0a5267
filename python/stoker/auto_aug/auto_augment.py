"""AutoAugment (https://arxiv.org/abs/1805.09501), as DALI's
``nvidia.dali.auto_aug.auto_augment``: the paper's ImageNet, reduced ImageNet, SVHN and reduced
CIFAR-10 policies and ``apply_auto_augment`` for any ``Policy``.

Each sample draws a sub-policy uniformly and one number from [0, 1) per stage; stage k applies
the sub-policy's k-th augmentation where that number is below its probability. Needs
``@pipeline_def(enable_conditionals=True)``.
"""
import numpy as np

from .. import fn, types
from . import augmentations as a
from ._suites import translations as _translations
from .core import Policy, signed_bin, _branch, _forbid_unused_kwargs, _select_for

__all__ = ["auto_augment", "auto_augment_image_net", "apply_auto_augment",
           "get_image_net_policy", "get_reduced_cifar10_policy", "get_svhn_policy",
           "get_reduced_image_net_policy"]


def auto_augment(data, policy_name="image_net", shape=None, fill_value=128, interp_type=None,
                 max_translate_abs=None, max_translate_rel=None, seed=None):
    """Applies one of the AutoAugment paper's policies to the batch.

    Args:
        data: uint8 images (HWC) or videos (FHWC).
        policy_name: ``"image_net"`` (default), ``"reduced_image_net"``, ``"svhn"`` or
            ``"reduced_cifar10"``.
        shape: the (height, width) of the samples (a DataNode, e.g. from
            ``fn.peek_image_shape``, or a tuple): the translations then shift by up to
            ``max_translate_rel`` times it; without it, by up to ``max_translate_abs`` pixels.
        fill_value: the padding of shear, translate and rotate (``None``: the border repeated).
        interp_type: their interpolation (``types.INTERP_LINEAR`` by default, or
            ``types.INTERP_NN``).
        max_translate_abs: int or (height, width); 250 by default. Only without `shape`.
        max_translate_rel: float or (height, width); 1 by default. Only with `shape`.
        seed: seed of the random choices (sub-policy, stages, signs).
    """
    policies = {"image_net": get_image_net_policy,
                "reduced_image_net": get_reduced_image_net_policy,
                "svhn": get_svhn_policy,
                "reduced_cifar10": get_reduced_cifar10_policy}
    if not isinstance(policy_name, str) or policy_name not in policies:
        raise ValueError("The `policy_name` must be a string that takes one of the values: "
                         + ", ".join(f"`{name}`" for name in policies)
                         + f". Got {policy_name!r}.")
    kwargs = {"fill_value": fill_value, "interp_type": interp_type}
    if policy_name == "reduced_image_net":
        for value, arg in ((shape, "shape"), (max_translate_abs, "max_translate_abs"),
                           (max_translate_rel, "max_translate_rel")):
            if value is not None:
                raise ValueError(
                    f"The policy `{policy_name}` does not contain any augmentations that rely on "
                    f"the image shape. The `{arg}` argument must not be specified in that case.")
        policy = get_reduced_image_net_policy()
    else:
        policy = policies[policy_name](use_shape=shape is not None,
                                       max_translate_abs=max_translate_abs,
                                       max_translate_rel=max_translate_rel)
    if shape is not None:
        kwargs["shape"] = shape
    return apply_auto_augment(policy, data, seed, **kwargs)


def auto_augment_image_net(data, shape=None, fill_value=128, interp_type=None,
                           max_translate_abs=None, max_translate_rel=None, seed=None):
    """``auto_augment(data, "image_net", ...)``."""
    return auto_augment(data, "image_net", shape, fill_value, interp_type, max_translate_abs,
                        max_translate_rel, seed)


def _stage_tables(policy):
    """Per sub-policy and stage: the probability, the magnitude bin, and the index of the
    augmentation among that stage's distinct augmentations (shorter sub-policies end with the
    identity, probability 0)."""
    subs = policy.sub_policies
    stages = max(len(s) for s in subs)
    prob = np.zeros((len(subs), stages), dtype=np.float32)
    mag = np.zeros((len(subs), stages), dtype=np.int32)
    which = np.zeros((len(subs), stages), dtype=np.int32)
    stage_augs = [[] for _ in range(stages)]
    for k in range(stages):
        for s in subs:
            if k < len(s) and s[k][0] not in stage_augs[k]:
                stage_augs[k].append(s[k][0])
        stage_augs[k].append(a.identity)
    for i, s in enumerate(subs):
        which[i, :] = [len(augs) - 1 for augs in stage_augs]
        for k, (aug, p, m) in enumerate(s):
            prob[i, k] = p
            mag[i, k] = 0 if m is None else m
            which[i, k] = stage_augs[k].index(aug)
    return prob, mag, which, stage_augs


def apply_auto_augment(policy, data, seed=None, **kwargs):
    """Applies `policy` (a ``Policy``) to the batch in AutoAugment fashion. `kwargs` go to the
    augmentations whose signatures name them (``shape``, ``fill_value``, ``interp_type`` for
    the standard ones); one that none takes is an error. Needs
    ``@pipeline_def(enable_conditionals=True)``."""
    if not isinstance(policy, Policy):
        raise TypeError(f"apply_auto_augment: the `policy` must be a Policy, got "
                        f"{type(policy).__name__}.")
    if len(policy.sub_policies) == 0:
        raise ValueError(f"Cannot run empty policy. Got {policy} in `apply_auto_augment` call.")
    _forbid_unused_kwargs(policy.augmentations.values(), kwargs, "apply_auto_augment")
    prob, mag, which, stage_augs = _stage_tables(policy)
    stages = prob.shape[1]
    extra = {} if seed is None else {"seed": seed}
    draw = fn.random.uniform(range=[0, 1], shape=(stages,), dtype=types.FLOAT, **extra)
    sub_policy = fn.random.uniform(values=list(range(len(policy.sub_policies))),
                                   dtype=types.INT32, **extra)
    probabilities = types.Constant(prob)[sub_policy]
    bins = types.Constant(mag)[sub_policy]
    aug_index = types.Constant(which)[sub_policy]
    if any(aug.randomly_negate for aug in policy.augmentations.values()):
        bins = signed_bin(bins, shape=(stages,), **extra)
    for k in range(stages):
        op_kwargs = dict(kwargs, data=data, magnitude_bin=bins[k],
                         num_magnitude_bins=policy.num_magnitude_bins)
        data = _stage(draw[k] < probabilities[k], stage_augs[k], aug_index[k], op_kwargs, data)
    return data


def _stage(run, augs, index, op_kwargs, data):
    return _branch(run,
                   lambda: _select_for("apply_auto_augment", "get_image_net_policy", augs, index,
                                       op_kwargs),
                   lambda: data, "apply_auto_augment")


# ---------------------------------------------------------------- the paper's policies

def _policy(name, table, augs):
    return Policy(name=name, num_magnitude_bins=11,
                  sub_policies=[[(augs[op], p, m) for op, p, m in sub] for sub in table])


def _standard(translate_y=None, translate_x=None):
    """The augmentations of the paper's policies, by name, with the AutoAugment ranges."""
    augs = {
        "shear_x": a.shear_x.augmentation((0, 0.3), True),
        "shear_y": a.shear_y.augmentation((0, 0.3), True),
        "rotate": a.rotate.augmentation((0, 30), True),
        "brightness": a.brightness.augmentation((0.1, 1.9), False, None),
        "color": a.color.augmentation((0.1, 1.9), False, None),
        "contrast": a.contrast.augmentation((0.1, 1.9), False, None),
        "sharpness": a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        "posterize": a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        "solarize": a.solarize.augmentation((0, 256), False),
        "solarize_add": a.solarize_add.augmentation((0, 110), False),
        "invert": a.invert,
        "equalize": a.equalize,
        "auto_contrast": a.auto_contrast,
    }
    augs["translate_x"], augs["translate_y"] = translate_x, translate_y
    return augs


_IMAGE_NET = [
    [("equalize", 0.8, None), ("shear_y", 0.8, 4)],
    [("color", 0.4, 9), ("equalize", 0.6, None)],
    [("color", 0.4, 1), ("rotate", 0.6, 8)],
    [("solarize", 0.8, 3), ("equalize", 0.4, None)],
    [("solarize", 0.4, 2), ("solarize", 0.6, 2)],
    [("color", 0.2, 0), ("equalize", 0.8, None)],
    [("equalize", 0.4, None), ("solarize_add", 0.8, 3)],
    [("shear_x", 0.2, 9), ("rotate", 0.6, 8)],
    [("color", 0.6, 1), ("equalize", 1.0, None)],
    [("invert", 0.4, None), ("rotate", 0.6, 0)],
    [("equalize", 1.0, None), ("shear_y", 0.6, 3)],
    [("color", 0.4, 7), ("equalize", 0.6, None)],
    [("posterize", 0.4, 6), ("auto_contrast", 0.4, None)],
    [("solarize", 0.6, 8), ("color", 0.6, 9)],
    [("solarize", 0.2, 4), ("rotate", 0.8, 9)],
    [("rotate", 1.0, 7), ("translate_y", 0.8, 9)],
    [("solarize", 0.8, 4)],
    [("shear_y", 0.8, 0), ("color", 0.6, 4)],
    [("color", 1.0, 0), ("rotate", 0.6, 2)],
    [("equalize", 0.8, None)],
    [("equalize", 1.0, None), ("auto_contrast", 0.6, None)],
    [("shear_y", 0.4, 7), ("solarize_add", 0.6, 7)],
    [("posterize", 0.8, 2), ("solarize", 0.6, 10)],
    [("solarize", 0.6, 8), ("equalize", 0.6, None)],
    [("color", 0.8, 6), ("rotate", 0.4, 5)],
]

_REDUCED_CIFAR10 = [
    [("invert", 0.1, None), ("contrast", 0.2, 6)],
    [("rotate", 0.7, 2), ("translate_x", 0.3, 9)],
    [("sharpness", 0.8, 1), ("sharpness", 0.9, 3)],
    [("shear_y", 0.5, 8), ("translate_y", 0.7, 9)],
    [("auto_contrast", 0.5, None), ("equalize", 0.9, None)],
    [("shear_y", 0.2, 7), ("posterize", 0.3, 7)],
    [("color", 0.4, 3), ("brightness", 0.6, 7)],
    [("sharpness", 0.3, 9), ("brightness", 0.7, 9)],
    [("equalize", 0.6, None), ("equalize", 0.5, None)],
    [("contrast", 0.6, 7), ("sharpness", 0.6, 5)],
    [("color", 0.7, 7), ("translate_x", 0.5, 8)],
    [("equalize", 0.3, None), ("auto_contrast", 0.4, None)],
    [("translate_y", 0.4, 3), ("sharpness", 0.2, 6)],
    [("brightness", 0.9, 6), ("color", 0.2, 8)],
    [("solarize", 0.5, 2)],
    [("equalize", 0.2, None), ("auto_contrast", 0.6, None)],
    [("equalize", 0.2, None), ("equalize", 0.6, None)],
    [("color", 0.9, 9), ("equalize", 0.6, None)],
    [("auto_contrast", 0.8, None), ("solarize", 0.2, 8)],
    [("brightness", 0.1, 3), ("color", 0.7, 0)],
    [("solarize", 0.4, 5), ("auto_contrast", 0.9, None)],
    [("translate_y", 0.9, 9), ("translate_y", 0.7, 9)],
    [("auto_contrast", 0.9, None), ("solarize", 0.8, 3)],
    [("equalize", 0.8, None), ("invert", 0.1, None)],
    [("translate_y", 0.7, 9), ("auto_contrast", 0.9, None)],
]

_SVHN = [
    [("shear_x", 0.9, 4), ("invert", 0.2, None)],
    [("shear_y", 0.9, 8), ("invert", 0.7, None)],
    [("equalize", 0.6, None), ("solarize", 0.6, 6)],
    [("invert", 0.9, None), ("equalize", 0.6, None)],
    [("equalize", 0.6, None), ("rotate", 0.9, 3)],
    [("shear_x", 0.9, 4), ("auto_contrast", 0.8, None)],
    [("shear_y", 0.9, 8), ("invert", 0.4, None)],
    [("shear_y", 0.9, 5), ("solarize", 0.2, 6)],
    [("invert", 0.9, None), ("auto_contrast", 0.8, None)],
    [("equalize", 0.6, None), ("rotate", 0.9, 3)],
    [("shear_x", 0.9, 4), ("solarize", 0.3, 3)],
    [("shear_y", 0.8, 8), ("invert", 0.7, None)],
    [("equalize", 0.9, None), ("translate_y", 0.6, 6)],
    [("invert", 0.9, None), ("equalize", 0.6, None)],
    [("contrast", 0.3, 3), ("rotate", 0.8, 4)],
    [("invert", 0.8, None)],
    [("shear_y", 0.7, 6), ("solarize", 0.4, 8)],
    [("invert", 0.6, None), ("rotate", 0.8, 4)],
    [("shear_y", 0.3, 7), ("translate_x", 0.9, 3)],
    [("shear_x", 0.1, 6), ("invert", 0.6, None)],
    [("solarize", 0.7, 2), ("translate_y", 0.6, 7)],
    [("shear_y", 0.8, 4), ("invert", 0.8, None)],
    [("shear_x", 0.7, 9), ("translate_y", 0.8, 3)],
    [("shear_y", 0.8, 5), ("auto_contrast", 0.7, None)],
    [("shear_x", 0.7, 2), ("invert", 0.1, None)],
]

_REDUCED_IMAGE_NET = [
    [("posterize", 0.4, 8), ("rotate", 0.6, 9)],
    [("solarize", 0.6, 5), ("auto_contrast", 0.6, None)],
    [("equalize", 0.8, None), ("equalize", 0.6, None)],
    [("posterize", 0.6, 7), ("posterize", 0.6, 6)],
    [("equalize", 0.4, None), ("solarize", 0.2, 4)],
    [("equalize", 0.4, None), ("rotate", 0.8, 8)],
    [("solarize", 0.6, 3), ("equalize", 0.6, None)],
    [("posterize", 0.8, 5), ("equalize", 1.0, None)],
    [("rotate", 0.2, 3), ("solarize", 0.6, 8)],
    [("equalize", 0.6, None), ("posterize", 0.4, 6)],
    [("rotate", 0.8, 8), ("color", 0.4, 0)],
    [("rotate", 0.4, 9), ("equalize", 0.6, None)],
    [("equalize", 0.8, None)],
    [("invert", 0.6, None), ("equalize", 1.0, None)],
    [("color", 0.6, 4), ("contrast", 1.0, 8)],
    [("rotate", 0.8, 8), ("color", 1.0, 2)],
    [("color", 0.8, 8), ("solarize", 0.8, 7)],
    [("sharpness", 0.4, 7), ("invert", 0.6, None)],
    [("shear_x", 0.6, 5), ("equalize", 1.0, None)],
    [("color", 0.4, 0), ("equalize", 0.6, None)],
    [("equalize", 0.4, None), ("solarize", 0.2, 4)],
    [("solarize", 0.6, 5), ("auto_contrast", 0.6, None)],
    [("invert", 0.6, None), ("equalize", 1.0, None)],
    [("color", 0.6, 4), ("contrast", 1.0, 8)],
    [("equalize", 0.8, None), ("equalize", 0.6, None)],
]

_SHAPE_ARGS_DOC = """
    Args:
        use_shape: translations by fractions of the sample's shape (given to the call as
            ``shape``) rather than by pixels.
        max_translate_abs: int or (height, width): the largest shift in pixels (250 by
            default). Only with ``use_shape=False``.
        max_translate_rel: float or (height, width): the largest shift as a fraction of the
            shape (1 by default). Only with ``use_shape=True``.
"""


def get_image_net_policy(use_shape=False, max_translate_abs=None, max_translate_rel=None):
    """The AutoAugment policy for ImageNet, to run with `apply_auto_augment`."""
    _, translate_y = _translations(use_shape, 250, 1.0, max_translate_abs, max_translate_rel)
    return _policy("ImageNetPolicy", _IMAGE_NET, _standard(translate_y=translate_y))


def get_reduced_cifar10_policy(use_shape=False, max_translate_abs=None, max_translate_rel=None):
    """The AutoAugment policy for reduced CIFAR-10, to run with `apply_auto_augment`."""
    translate_x, translate_y = _translations(use_shape, 250, 1.0, max_translate_abs,
                                             max_translate_rel)
    return _policy("ReducedCifar10Policy", _REDUCED_CIFAR10, _standard(translate_y, translate_x))


def get_svhn_policy(use_shape=False, max_translate_abs=None, max_translate_rel=None):
    """The AutoAugment policy for SVHN, to run with `apply_auto_augment`."""
    translate_x, translate_y = _translations(use_shape, 250, 1.0, max_translate_abs,
                                             max_translate_rel)
    return _policy("SvhnPolicy", _SVHN, _standard(translate_y, translate_x))


for _f in (get_image_net_policy, get_reduced_cifar10_policy, get_svhn_policy):
    _f.__doc__ += _SHAPE_ARGS_DOC
del _f


def get_reduced_image_net_policy():
    """The AutoAugment policy for reduced ImageNet (no translations), to run with
    `apply_auto_augment`."""
    return _policy("ReducedImageNetPolicy", _REDUCED_IMAGE_NET, _standard())
