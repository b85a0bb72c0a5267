"""The building blocks of the automatic augmentations, as DALI's ``nvidia.dali.auto_aug.core``:
the ``@augmentation`` decorator (``Augmentation``), ``signed_bin``, ``select`` and ``Policy``.

An augmentation is a function ``op(data, parameter, **extra)`` made of pipeline operators. The
decorator turns it into one called with a magnitude bin instead of the parameter: the bin picks
``magnitudes[bin]`` from ``linspace(mag_range[0], mag_range[1], num_magnitude_bins)``, negated
for the samples whose random sign is 1 when ``randomly_negate`` is set, and ``mag_to_param``
maps it to the parameter. All parameters are computed up front with NumPy, stored in one
constant, and each sample indexes it, so the bins and the signs can differ per sample.

``select`` runs each sample through the augmentation its index names, with per-sample
conditionals: the batch is split in halves by the index (``idx <= mid``) until each part has
one augmentation, so each augmentation runs on its own samples only. That needs
``@pipeline_def(enable_conditionals=True)``, as in DALI.
"""
import inspect
import warnings

import numpy as np

from .. import _conditionals
from .. import fn, types
from ..pipeline import DataNode

__all__ = ["signed_bin", "augmentation", "select", "Policy", "Augmentation", "_Augmentation"]


# ---------------------------------------------------------------- errors

class MissingArgumentError(TypeError):
    """An augmentation needs a keyword argument (e.g. ``shape``) that its call did not pass."""

    def __init__(self, message, augmentation, missing_args):
        super().__init__(message)
        self.augmentation = augmentation
        self.missing_args = missing_args


class UnusedArgumentError(TypeError):
    """A keyword argument that none of the augmentations takes."""

    def __init__(self, message, unused_args):
        super().__init__(message)
        self.unused_args = unused_args


# ---------------------------------------------------------------- the op's extra arguments

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _extra_params(op):
    """The parameters of `op` past the samples and the parameter (its first two positional
    ones) that can be passed by name."""
    params = list(inspect.signature(op).parameters.values())
    extra, positional_seen = [], 0
    for p in params:
        if p.kind in _POSITIONAL and positional_seen < 2:
            positional_seen += 1
            continue
        if p.kind in _NAMED:
            extra.append(p)
    return extra


def _num_positional(op):
    return sum(p.kind in _POSITIONAL for p in inspect.signature(op).parameters.values())


def _accepted_kwargs(op, kwargs):
    names = {p.name for p in _extra_params(op)}
    return {k: v for k, v in kwargs.items() if k in names}


def _missing_kwargs(op, kwargs):
    return [p.name for p in _extra_params(op) if p.default is p.empty and p.name not in kwargs]


def _forbid_unused_kwargs(augmentations, kwargs, caller):
    used = set()
    for aug in augmentations:
        used.update(_accepted_kwargs(aug.op, kwargs))
    unused = [k for k in kwargs if k not in used]
    if unused:
        noun, verb = ("kwarg", "is") if len(unused) == 1 else ("kwargs", "are")
        raise UnusedArgumentError(
            f"The {caller} got unexpected {noun}. The {noun} `{', '.join(unused)}` {verb} not "
            "used by any of the augmentations.", unused_args=unused)


# ---------------------------------------------------------------- per-sample branching

def _conditionals_needed(caller):
    return TypeError(
        f"{caller}: the augmentation applied is chosen per sample, which needs conditional "
        "execution: a DataNode was used in conditional context. Define the pipeline with "
        "`@pipeline_def(enable_conditionals=True)` (as DALI's auto_aug requires).")


def _branch(predicate, if_true, if_false, caller):
    """`if_true()` for the samples where `predicate` holds, `if_false()` for the others,
    merged back in the batch's order (`predicate` may also be a Python bool)."""
    if not isinstance(predicate, DataNode):
        return if_true() if predicate else if_false()
    if _conditionals._stack() is None:
        raise _conditionals_needed(caller)
    result = [None]

    def get_state():
        return (result[0],)

    def set_state(state):
        result[0] = state[0]

    def run_true():
        result[0] = if_true()

    def run_false():
        result[0] = if_false()

    _conditionals.if_stmt(predicate, run_true, run_false, get_state, set_state,
                          ("augmented samples",), 1)
    return result[0]


def _select(ops, index, args, kwargs, caller):
    if len(ops) == 0:
        raise ValueError(f"{caller}: the list of augmentations to select from is empty.")
    if not isinstance(index, DataNode):
        return ops[index](*args, **kwargs)

    def pick(lo, hi):
        if lo == hi:
            return ops[lo](*args, **kwargs)
        mid = (lo + hi) // 2
        return _branch(index <= mid, lambda: pick(lo, mid), lambda: pick(mid + 1, hi), caller)

    return pick(0, len(ops) - 1)


def select(ops, selected_op_idx, *op_args, **op_kwargs):
    """Applies ``ops[selected_op_idx]`` to each sample, as if by calling
    ``ops[selected_op_idx](*op_args, **op_kwargs)``: `selected_op_idx` is a batch of indices
    from ``[0, len(ops) - 1]``. DataNodes in the arguments are split among the operations with
    the samples. Needs ``@pipeline_def(enable_conditionals=True)``."""
    return _select(ops, selected_op_idx, op_args, op_kwargs, "select")


def _select_for(caller, suite_name, augmentations, index, op_kwargs):
    """`select`, with a message that says how to give the translations the shape they need."""
    from . import augmentations as a
    try:
        return _select(augmentations, index, (), op_kwargs, caller)
    except MissingArgumentError as e:
        if e.missing_args != ["shape"] or e.augmentation.op not in (a.translate_x.op,
                                                                     a.translate_y.op):
            raise
        raise ValueError(
            f"The augmentation `{e.augmentation.name}` requires `shape` argument that describes "
            f"image shape (in HWC layout). Please provide it as `shape` argument to `{caller}` "
            "call. You can get the image shape from encoded images with `fn.peek_image_shape`. "
            "Alternatively, you can use `translate_x_no_shape`/`translate_y_no_shape` that does "
            "not rely on image shape, but uses offset from fixed range: for reference see "
            f"`{suite_name}` and its `use_shape` argument.") from None


# ---------------------------------------------------------------- signed magnitude bins

class _SignedMagnitudeBin:
    """A magnitude bin with the random sign of each sample (and `2 * bin + sign`, the index of
    the signed parameter), computed once before the batch is split among augmentations."""

    def __init__(self, magnitude_bin, random_sign, signed_magnitude_idx):
        self._bin = magnitude_bin
        self._sign = random_sign
        self._signed_idx = signed_magnitude_idx

    def __getitem__(self, idx):
        b = self._bin if isinstance(self._bin, int) else self._bin[idx]
        return _SignedMagnitudeBin(b, self._sign[idx], self._signed_idx[idx])

    @property
    def bin(self):
        return self._bin

    @property
    def random_sign(self):
        return self._sign

    @property
    def signed_magnitude_idx(self):
        return self._signed_idx


def signed_bin(magnitude_bin, random_sign=None, seed=None, shape=None):
    """Combines `magnitude_bin` (an int or a batch of ints from ``[0, num_magnitude_bins -
    1]``) with a random sign per sample (a batch of 0/1; 1 negates the magnitude of
    augmentations declared with ``randomly_negate=True``). Without `random_sign`, it is drawn
    with ``fn.random.uniform(values=[0, 1], seed=seed, shape=shape)``. Make it before splitting
    the batch among augmentations, so the sign is drawn once for all of them."""
    if isinstance(magnitude_bin, bool) or not isinstance(magnitude_bin, (int, DataNode)):
        raise TypeError(
            "signed_bin: the `magnitude_bin` must be an int or a DataNode (an operator's output "
            "or `types.Constant`) holding ints from `[0..num_magnitude_bins-1]`. Got "
            f"{magnitude_bin!r} instead.")
    if random_sign is not None and (seed is not None or shape is not None):
        raise ValueError("signed_bin: the `random_sign` cannot be specified together with "
                         "`seed` or `shape` (they describe how to draw it).")
    if random_sign is None:
        extra = {k: v for k, v in (("seed", seed), ("shape", shape)) if v is not None}
        random_sign = fn.random.uniform(values=[0, 1], dtype=types.INT32, **extra)
    return _SignedMagnitudeBin(magnitude_bin, random_sign, 2 * magnitude_bin + random_sign)


# ---------------------------------------------------------------- the augmentation

class _Unset:
    """The default of `Augmentation.augmentation`'s arguments: keep the current setting."""


def _holds_data_node(x):
    if isinstance(x, (list, tuple)):
        return any(_holds_data_node(v) for v in x)
    return isinstance(x, DataNode)


class Augmentation:
    """An operation made of pipeline operators, called with a magnitude bin instead of its
    parameter. Made by the ``@augmentation`` decorator; ``aug.augmentation(...)`` gives a copy
    with other settings."""

    def __init__(self, op, mag_range=None, randomly_negate=None, mag_to_param=None,
                 param_device=None, name=None):
        self._op = op
        self._mag_range = mag_range
        self._randomly_negate = randomly_negate
        self._mag_to_param = mag_to_param
        self._param_device = param_device
        self._name = name
        if _num_positional(op) < 2:
            raise TypeError(
                f"The {op} accepts {_num_positional(op)} positional argument(s), but the "
                "functions decorated with `@augmentation` must accept at least two positional "
                f"arguments: the samples and parameters.\nError in: {self}.")

    def _config(self):
        return {"mag_range": self._mag_range, "mag_to_param": self._mag_to_param,
                "randomly_negate": self._randomly_negate, "param_device": self._param_device,
                "name": self._name}

    def __repr__(self):
        settings = [f"{k}={v!r}" for k, v in self._config().items() if v is not None]
        return f"Augmentation({', '.join([repr(self._op)] + settings)})"

    @property
    def op(self):
        return self._op

    @property
    def mag_range(self):
        return self._mag_range

    @property
    def mag_to_param(self):
        return self._mag_to_param or np.array

    @property
    def randomly_negate(self):
        return bool(self._randomly_negate)

    @property
    def param_device(self):
        return self._param_device or "cpu"

    @property
    def name(self):
        return self._name or self._op.__name__

    def augmentation(self, mag_range=_Unset, randomly_negate=_Unset, mag_to_param=_Unset,
                     param_device=_Unset, name=_Unset, augmentation_cls=None):
        """A new augmentation of the same op with the settings given here changed and the
        others kept."""
        config = self._config()
        for key, value in (("mag_range", mag_range), ("randomly_negate", randomly_negate),
                           ("mag_to_param", mag_to_param), ("param_device", param_device),
                           ("name", name)):
            if value is not _Unset:
                config[key] = value
        return (augmentation_cls or type(self))(self._op, **config)

    def __call__(self, data, *, magnitude_bin=None, num_magnitude_bins=None, **kwargs):
        """Applies the op to `data` as ``op(data, param, **kwargs)`` where ``param =
        mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)`` and ``magnitudes =
        linspace(*mag_range, num_magnitude_bins)`` (or `mag_range` itself, an array). Of
        `kwargs`, those the op's signature names are passed to it."""
        device = self.param_device
        if device == "auto":
            device = getattr(data, "device", None) or "cpu"
        param = self._param(magnitude_bin, num_magnitude_bins, device)
        missing = _missing_kwargs(self._op, kwargs)
        if missing:
            raise MissingArgumentError(
                f"The augmentation `{self.name}` requires following named argument(s) which "
                f"were not provided to the call: {', '.join(missing)}. Please make sure to pass "
                "the required arguments when calling the augmentation.",
                augmentation=self, missing_args=missing)
        return self._op(data, param, **_accepted_kwargs(self._op, kwargs))

    # ---- parameters
    def _magnitudes(self, num_magnitude_bins):
        mag_range = self._mag_range
        if mag_range is None:
            return None
        if isinstance(mag_range, np.ndarray):
            if num_magnitude_bins is not None and len(mag_range) != num_magnitude_bins:
                raise ValueError(
                    f"The augmentation `{self.name}` has nd.array of length {len(mag_range)} "
                    "specified as the `mag_range`. However, the `num_magnitude_bins` passed to "
                    f"the call is {num_magnitude_bins}.")
            return mag_range
        if num_magnitude_bins is None:
            raise ValueError(
                f"The `num_magnitude_bins` argument is missing in the call of the `{self.name}` "
                "augmentation. Please specify the `num_magnitude_bins` along with the samples "
                f"and magnitude_bin.\nError in augmentation: {self}.")
        if not hasattr(mag_range, "__len__") or len(mag_range) != 2:
            raise ValueError(
                "The `mag_range` must be a tuple of (low, high) ends of magnitude range or "
                f"nd.array of explicitly defined magnitudes. Got `{mag_range}` for augmentation "
                f"`{self.name}`.")
        return np.linspace(mag_range[0], mag_range[1], num_magnitude_bins, dtype=np.float32)

    def _to_param(self, magnitude):
        param = self.mag_to_param(magnitude)
        if _holds_data_node(param):
            raise TypeError(
                f"The `mag_to_param` callback of `{self.name}` augmentation returned `DataNode`, "
                "i.e. an output of a pipeline operator, which is not supported there: the "
                "parameters of all magnitudes are computed once, when the pipeline is defined. "
                "Return a `np.ndarray` (or something convertible to it), and move the operators "
                f"into the decorated augmentation.\n\nError in augmentation: {self}.")
        return np.array(param)

    def _param_table(self, magnitudes):
        params = [self._to_param(m) for m in magnitudes]
        first = params[0]
        for p, m in zip(params, magnitudes):
            if p.shape != first.shape or p.dtype != first.dtype:
                raise ValueError(
                    f"The `mag_to_param` callback of `{self.name}` augmentation must return the "
                    "arrays of the same type and shape for different magnitudes. Got param of "
                    f"shape {first.shape} and {first.dtype} type for magnitude {magnitudes[0]}, "
                    f"but for magnitude {m} the returned array has shape {p.shape} and type "
                    f"{p.dtype}.\n\nError in augmentation: {self}.")
        return np.stack(params)

    def _param(self, magnitude_bin, num_magnitude_bins, device):
        magnitudes = self._magnitudes(num_magnitude_bins)
        if magnitudes is None:
            return None
        if magnitude_bin is None:
            raise ValueError(
                f"The augmentation `{self.name}` has `mag_range` specified, so when called, it "
                "requires `magnitude_bin` parameter to select the magnitude from the "
                f"`mag_range`.\nError in augmentation: {self}.")
        plain = magnitude_bin.bin if isinstance(magnitude_bin, _SignedMagnitudeBin) \
            else magnitude_bin
        if isinstance(plain, (int, np.integer)) and not 0 <= plain < len(magnitudes):
            raise ValueError(
                f"The augmentation `{self.name}`: the `magnitude_bin` must be from "
                f"`[0, {len(magnitudes) - 1}]` range (there are {len(magnitudes)} magnitude "
                f"bins). Got {plain}.")
        if not self.randomly_negate:
            if isinstance(plain, (int, np.integer)):
                return types.Constant(self._to_param(magnitudes[plain]), device=device)
            return types.Constant(self._param_table(magnitudes), device=device)[plain]
        if not isinstance(magnitude_bin, _SignedMagnitudeBin):
            warnings.warn(
                f"The augmentation `{self.name}` was declared with `random_negate=True`, but "
                "unsigned `magnitude_bin` was passed to the augmentation call. The augmentation "
                "will randomly negate the magnitudes manually. However, for better performance, "
                "if you conditionally split batch between multiple augmentations, it is better "
                "to call `signed_magnitude_bin = signed_bin(magnitude_bin)` before the split and "
                "pass the signed bins instead.", Warning)
            magnitude_bin = signed_bin(magnitude_bin)
        if isinstance(plain, (int, np.integer)):
            magnitudes, index = magnitudes[plain:plain + 1], magnitude_bin.random_sign
        else:
            index = magnitude_bin.signed_magnitude_idx
        # entry 2 * k is magnitude k, entry 2 * k + 1 its negation
        signed = [s * m for m in magnitudes for s in (1, -1)]
        return types.Constant(self._param_table(signed), device=device)[index]


_Augmentation = Augmentation


def augmentation(function=None, *, mag_range=None, randomly_negate=None, mag_to_param=None,
                 param_device=None, name=None, augmentation_cls=None):
    """Decorator: turns `function(data, parameter, **extra)`, made of pipeline operators, into
    an augmentation for the automatic augmentation schemes (AutoAugment, RandAugment,
    TrivialAugment). The augmentation is called as ``aug(data, magnitude_bin=...,
    num_magnitude_bins=..., **extra)`` and computes the parameter as
    ``mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)``.

    Args:
        mag_range: ``(low, high)``: the magnitudes are ``linspace(low, high,
            num_magnitude_bins)``; or an ``np.ndarray`` of the magnitudes. Without it the
            function gets ``None`` as its parameter.
        randomly_negate: negate the magnitude for a random half of the samples.
        mag_to_param: magnitude -> parameter (NumPy values of one shape and type, no
            operators); the identity by default.
        param_device: ``"cpu"`` (default), ``"gpu"`` or ``"auto"`` (the samples' device): where
            the precomputed parameters live.
        name: the augmentation's name (default: the function's).
    """
    def decorate(f):
        return (augmentation_cls or Augmentation)(
            f, mag_range=mag_range, randomly_negate=randomly_negate, mag_to_param=mag_to_param,
            param_device=param_device, name=name)

    if function is None:
        return decorate
    if isinstance(function, Augmentation):
        raise TypeError(
            "The `@augmentation` was applied to already decorated Augmentation. Please call "
            f"`{function.name}.augmentation` method to modify the augmentation setup or apply "
            f"the decorator to the underlying `{function.name}.op` directly.\n"
            f"Error in augmentation: {function}.")
    if not callable(function):
        raise TypeError("The `@augmentation` decorator was used to decorate the object that is "
                        f"not callable: {function}.")
    return decorate(function)


# ---------------------------------------------------------------- policies

class Policy:
    """An AutoAugment policy (https://arxiv.org/abs/1805.09501).

    Args:
        name: the policy's name, for presentation.
        num_magnitude_bins: the number of bins the augmentations' magnitude ranges are
            divided into.
        sub_policies: sequences of ``(augmentation, probability, magnitude_bin)``. Each sample
            gets one sub-policy, uniformly at random; its augmentations are applied in order,
            each with its probability, at its magnitude bin (``None`` for augmentations without
            a magnitude range).
    """

    def __init__(self, name, num_magnitude_bins, sub_policies):
        self.name = name
        self.num_magnitude_bins = num_magnitude_bins
        if isinstance(num_magnitude_bins, bool) or not isinstance(num_magnitude_bins, int) \
                or num_magnitude_bins < 1:
            raise ValueError(f"The `num_magnitude_bins` must be a positive integer, got "
                             f"{num_magnitude_bins}.")
        if not isinstance(sub_policies, (list, tuple)):
            raise TypeError(f"The `sub_policies` must be a list or tuple of sub policies, got "
                            f"{type(sub_policies)}.")
        for sub_policy in sub_policies:
            if not isinstance(sub_policy, (list, tuple)):
                raise TypeError(f"Each sub policy must be a list or tuple, got {sub_policy}.")
            for entry in sub_policy:
                self._check_entry(entry)
        self.sub_policies = _unique_names(sub_policies)

    def _check_entry(self, entry):
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError("Each operation in sub policy must be specified as a triple: "
                             f"(augmentation, probability, magnitude). Got {entry}.")
        aug, p, mag = entry
        if not isinstance(aug, Augmentation):
            raise TypeError(f"Each augmentation in sub policies must be an instance of "
                            f"Augmentation. Got `{aug}`. Did you forget to use `@augmentation` "
                            "decorator?")
        if isinstance(p, bool) or not isinstance(p, (float, int)) or not 0 <= p <= 1:
            raise ValueError("Probability of applying the augmentation must be a number from "
                             f"`[0, 1]` range. Got `{p}` for augmentation `{aug.name}`.")
        if p == 0:
            warnings.warn(f"The augmentation `{aug.name}` in policy `{self.name}` is used with "
                          "probability 0 in one of the sub-policies.")
        if mag is None:
            if aug.mag_range is not None:
                raise ValueError(
                    f"The augmentation `{aug.name}` has `mag_range` specified, so the magnitude "
                    f"bin is required. However, got `None` in the policy `{self.name}`.")
            return
        if aug.mag_range is None:
            warnings.warn(
                f"The magnitude bin `{mag}` for augmentation `{aug.name}` in policy "
                f"`{self.name}` will be ignored. The augmentation does not accept magnitudes "
                "(as it has no `mag_range` specified). You can specify `None` instead of "
                f"`{mag}` to silence this warning.")
        if isinstance(mag, bool) or not isinstance(mag, int) \
                or not 0 <= mag < self.num_magnitude_bins:
            raise ValueError(
                "Magnitude of the augmentation must be an integer from "
                f"`[0, {self.num_magnitude_bins - 1}]` range. Got `{mag}` for augmentation "
                f"`{aug.name}`.")

    @property
    def augmentations(self):
        """The distinct augmentations of the policy, by name (sorted)."""
        augs = {aug for sub_policy in self.sub_policies for aug, _, _ in sub_policy}
        return {aug.name: aug for aug in sorted(augs, key=lambda aug: aug.name)}

    def __repr__(self):
        subs = ",\n\t".join(repr([(aug.name, p, mag) for aug, p, mag in sub_policy])
                            for sub_policy in self.sub_policies)
        augs = ",\n\t".join(f"'{n}': {aug!r}" for n, aug in self.augmentations.items())
        return (f"Policy(name={self.name!r}, num_magnitude_bins={self.num_magnitude_bins!r}, "
                f"sub_policies=[{chr(10) + chr(9) if subs else ''}{subs}], "
                f"augmentations={{{chr(10) + chr(9) if augs else ''}{augs}}})")


def _unique_names(sub_policies):
    """The sub-policies as tuples; where two different augmentations share a name, every
    augmentation is renamed `<k>__<name>` (k: its order of first use), so that the policy
    prints unambiguously."""
    order = []
    for sub_policy in sub_policies:
        for aug, _, _ in sub_policy:
            if aug not in order:
                order.append(aug)
    if len({aug.name for aug in order}) == len(order):
        return tuple(tuple(tuple(e) for e in sub_policy) for sub_policy in sub_policies)
    width = len(str(len(order) - 1))
    renamed = {aug: aug.augmentation(name=f"{str(k).zfill(width)}__{aug.name}")
               for k, aug in enumerate(order)}
    return tuple(tuple((renamed[aug], p, mag) for aug, p, mag in sub_policy)
                 for sub_policy in sub_policies)
