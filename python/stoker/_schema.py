"""Operator functions generated from the C++ schemas: the one place arguments are declared."""
import difflib
import os
import types as _pytypes

import numpy as np

from . import _C
from . import _dali_ops
from . import types as _types
from .pipeline import DETACHED, DataNode, Pipeline

SCHEMAS = {s["name"]: s for s in _C.schemas()}


def _python_schemas():
    """Operators that the Python layer builds from others (_COMPOSITES) and whose schema it
    makes from theirs."""
    from ._video import video_resize_schema
    return {"readers.video_resize": video_resize_schema(SCHEMAS)}


SCHEMAS.update(_python_schemas())
_INSTALLERS = []  # (module name, function that fills it from SCHEMAS): fn and ops


def register_installer(module_name, install):
    _INSTALLERS.append((module_name, install))


def refresh():
    """Re-reads the schemas after a plugin added operators, and adds those to fn and ops."""
    import sys
    SCHEMAS.update({s["name"]: s for s in _C.schemas()})
    SCHEMAS.update(_python_schemas())
    for module_name, install in _INSTALLERS:
        sys.modules[module_name].__all__ = install()

_COMMON = ("device", "name", "preserve", "bytes_per_sample_hint")

# Operators behind Python syntax (a + b: arithmetic_generic) rather than called by name; like
# the "_" ones (_tensor_subscript, _conditional.*) they are not put in fn or ops.
_INTERNAL_OPS = frozenset({"arithmetic_generic"})


def is_internal(op_name):
    """Whether an operator is stoker's own plumbing, absent from fn and ops."""
    return op_name.startswith("_") or op_name in _INTERNAL_OPS


# Operators whose Python call is more than keyword arguments mapped onto the schema: a dict
# argument (readers.tfrecord's features), a Python callable (external_source's source), outputs
# whose number depends on the arguments. An adapter is called as adapter(kwargs) ->
# (kwargs, num_outputs, wrap), where wrap(outputs) (or None) gives the call's result;
# "module:function" is imported on first use.
def _one_output_per(arg):
    def adapt(kwargs):
        v = kwargs.get(arg)
        n = 1 if v is None or isinstance(v, str) else len(v)
        return kwargs, max(n, 1), None
    return adapt


def _fits_outputs(kwargs):
    """experimental.readers.fits: an output per HDU of hdu_indices (an int or a list; [2] when
    left out)."""
    h = kwargs.get("hdu_indices", [2])
    if isinstance(h, int):
        kwargs["hdu_indices"] = h = [h]
    return kwargs, max(len(h), 1), None


def _caffe_outputs(kwargs):
    n = bool(kwargs.get("image_available", True)) + bool(kwargs.get("label_available", True))
    return kwargs, max(n, 1), None


def _caffe2_outputs(kwargs):
    n = (bool(kwargs.get("image_available", True)) + (kwargs.get("label_type", 0) != 4) +
         int(kwargs.get("additional_inputs", 0) or 0) + bool(kwargs.get("bbox", False)))
    return kwargs, max(n, 1), None


def _coco_outputs(kwargs):
    polygons = bool(kwargs.get("polygon_masks", False)) or bool(kwargs.get("masks", False))
    n = (3 + 2 * polygons + bool(kwargs.get("pixelwise_masks", False)) +
         (bool(kwargs.get("image_ids", False)) or bool(kwargs.get("save_img_ids", False))))
    return kwargs, n, None


def _nemo_asr_outputs(kwargs):
    # audio (, sample_rate) (, text) (, idx)
    n = (1 + bool(kwargs.get("read_sample_rate", True)) + bool(kwargs.get("read_text", True)) +
         bool(kwargs.get("read_idxs", False)))
    return kwargs, n, None


def _random_object_bbox_outputs(kwargs):
    # anchor and shape, start and end, or one box; then the class with output_class
    n = (1 if kwargs.get("format", "anchor_shape") == "box" else 2) + \
        bool(kwargs.get("output_class", False))
    return kwargs, n, None


_ADAPTERS = {
    "readers.tfrecord": "stoker.tfrecord:_adapt_reader",
    "readers.webdataset": _one_output_per("ext"),
    "readers.caffe": _caffe_outputs,
    "experimental.readers.fits": _fits_outputs,
    "readers.caffe2": _caffe2_outputs,
    "readers.coco": _coco_outputs,
    "readers.nemo_asr": _nemo_asr_outputs,
    "readers.video": "stoker._video:_adapt_video_reader",
    "experimental.readers.video": "stoker._video:_adapt_experimental_video_reader",
    "segmentation.random_object_bbox": _random_object_bbox_outputs,
    "element_extract": _one_output_per("element_map"),
    "external_source": "stoker.external_source:_adapt",
    "python_function": "stoker.python_function:_adapt_python_function",
    "dl_tensor_python_function": "stoker.python_function:_adapt_dl_tensor_python_function",
}


# Operators whose number of outputs also depends on how many inputs they are given:
# (kwargs, number of inputs) -> number of outputs.
_OUTPUTS_BY_INPUTS = {
    # anchor, shape, boxes (, labels with a labels input) (, bbox_indices)
    "random_bbox_crop": lambda kw, n: 3 + (n > 1) + bool(kw.get("output_bbox_indices", False)),
    # boxes (, labels with a labels input)
    "bbox_rotate": lambda kw, n: n,
}


# Operators that DALI runs on a device that stoker serves by running the CPU operator and
# copying each output to the GPU (in the mixed stage, as .gpu() does), so that DALI's pipelines
# still run: the device DALI names, and the operator whose backends decide.
#  - The video decoders (DALI: NVDEC). A CUDA build has that device (NVDEC through FFmpeg); a
#    build without CUDA decodes on the CPU. (experimental.inputs.video and readers.video_resize
#    are built from decoders.video and readers.video: _COMPOSITES.)
#  - readers.numpy and experimental.readers.fits on 'gpu' (DALI: GPUDirect Storage): stoker
#    reads the files on the CPU.
CPU_DECODED = {"readers.video": "gpu", "decoders.video": "mixed", "experimental.inputs.video": "mixed",
               "readers.video_resize": "gpu", "experimental.readers.video": "gpu",
               "readers.numpy": "gpu", "experimental.readers.fits": "gpu"}
_DECODED_BY = {"readers.video": "readers.video", "readers.video_resize": "readers.video",
               "decoders.video": "decoders.video", "experimental.inputs.video": "decoders.video",
               "experimental.readers.video": "experimental.readers.video",
               "readers.numpy": "readers.numpy",
               "experimental.readers.fits": "experimental.readers.fits"}
_READ_ON_CPU = ("readers.numpy", "experimental.readers.fits")
_cpu_decoded_said = set()


def decodes_on_gpu(op_name):
    """True when `op_name` decodes on NVDEC on the device CPU_DECODED names (a CUDA build)."""
    base = _DECODED_BY[op_name]
    return CPU_DECODED[op_name] in SCHEMAS.get(base, {}).get("backends", ())


def cpu_copy_note(op_name):
    """How `op_name` serves the device CPU_DECODED names without a backend there, in a few words
    (the README's DALI table, the API reference)."""
    if op_name in _READ_ON_CPU:
        return "read on the CPU, then copied"
    return "decoded on the CPU, then copied: no CUDA"


def _decoded_on_cpu(op_name, device):
    """True (and a log line, once per operator) when `device` is the one CPU_DECODED names and
    this build serves it on the CPU."""
    if CPU_DECODED.get(op_name) != device or decodes_on_gpu(op_name):
        return False
    if op_name not in _cpu_decoded_said:
        _cpu_decoded_said.add(op_name)
        import logging
        if op_name in _READ_ON_CPU:
            why = ("stoker reads the files on the CPU and copies each batch to the GPU (DALI's "
                   "GPU reader uses GPUDirect Storage).")
        else:
            why = ("this build of stoker has no CUDA: it decodes video on the CPU (FFmpeg) and "
                   "copies the frames to the GPU.")
        logging.getLogger("stoker").info("fn.%s(device=%r): %s", op_name, device, why)
    return True


# Operators that the Python layer builds from others: (inputs, kwargs) -> the outputs.
_COMPOSITES = {
    "experimental.inputs.video": "stoker._video:_inputs_video",
    "readers.video_resize": "stoker._video:_video_resize",
}


def _adapter(op_name):
    return _adapter_from(_ADAPTERS.get(op_name))


def _adapter_from(a):
    if a is None or callable(a):
        return a
    import importlib
    module, func = a.split(":")
    return getattr(importlib.import_module(module), func)


def _camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def make_docstring(schema):
    lines = [schema["doc"], ""]
    if schema["max_inputs"]:
        names = schema["input_names"] or [f"input{i}" for i in range(schema["max_inputs"])]
        lines.append("Inputs: " + ", ".join(names[: schema["max_inputs"]]) +
                     ("" if schema["min_inputs"] == schema["max_inputs"]
                      else f" ({schema['min_inputs']} to {schema['max_inputs']})"))
    lines.append("Backends: " + ", ".join(schema["backends"]))
    lines.append("")
    lines.append("Keyword arguments:")
    for a in schema["args"]:
        default = (f", default {a['default']!r}" if a["has_default"]
                   else ", optional" if a["optional"] else ", required")
        tensor = " or a per-sample tensor" if a["tensor"] else ""
        lines.append(f"  {a['name']} ({a['type']}{tensor}{default}): {a['doc']}")
    lines.append("  device (str): 'cpu', 'gpu' or 'mixed'.")
    lines.append("  name (str): a name for the operator (readers: the name for reader_meta).")
    return "\n".join(lines)


def plain_arg(v, what):
    """An argument as DALI code writes it -> the Python values the schema checks take: NumPy
    scalars and arrays (also inside lists and tuples) become numbers and lists, NumPy dtypes and
    scalar types (np.float32) DALIDataType, paths (pathlib) strings, types.Constant its value.
    Anything else is returned as it is, for the schema to accept or refuse."""
    if isinstance(v, _types.Constant):
        v = v.value
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        try:
            return _types.from_numpy_dtype(v)
        except TypeError:
            raise TypeError(f"{what}: NumPy type {np.dtype(v)} has no stoker element type; use one "
                            "of stoker.types.DALIDataType (e.g. types.FLOAT) or bool, an "
                            "integer or a float NumPy type.") from None
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, (list, tuple)):
        return [plain_arg(x, what) for x in v]
    return v


def _constant_input(op_name, i, x):
    """An input that is not a DataNode becomes a constant node, as in DALI (fn.full(2.5),
    fn.random.choice([1, 2, 3])); a scalar makes a 0-d sample."""
    try:
        if isinstance(x, _types.Constant):
            return _types.constant_node(x.value, x.dtype, shape=[])
        if isinstance(x, (bool, int, float, list, tuple, np.ndarray, np.generic)):
            return _types.constant_node(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"fn.{op_name}: input {i} is not a DataNode and not a constant: {e}") from None
    raise TypeError(f"fn.{op_name}: input {i} must be a DataNode (the output of another operator) "
                    f"or a constant (a number, a list or a NumPy array), got {type(x).__name__}.")


# Arguments an adapter takes as Python objects, not as schema values.
_OPAQUE_ARGS = ("source", "_caller", "_python_side")


def external_source_positional(args, kwargs, where):
    """DALI's ``external_source(source=None, num_outputs=None, *, ...)``: the positional
    arguments of fn.external_source and ops.ExternalSource as keywords."""
    if len(args) > 2:
        raise TypeError(f"{where} takes at most 2 positional arguments (source, num_outputs), "
                        f"got {len(args)}.")
    kwargs = dict(kwargs)
    for name, value in zip(("source", "num_outputs"), args):
        if name in kwargs:
            raise TypeError(f"{where} got multiple values for argument '{name}'.")
        kwargs[name] = value
    return kwargs


def record_op(op_name, inputs, kwargs, default_device=None):
    """Checks a call against the schema and adds the operator to the current pipeline (or, called
    outside any pipeline, as DALI allows, to the detached graph: a pipeline that uses the
    result adopts a copy of the operators it needs)."""
    schema = SCHEMAS[op_name]
    if op_name in _COMPOSITES:
        return _adapter_from(_COMPOSITES[op_name])(inputs, dict(kwargs))
    if op_name != "external_source" and any(_is_input_set(x) for x in inputs):
        return _input_sets(op_name, inputs, kwargs, default_device)
    pipe = Pipeline.current()
    num_outputs, wrap = schema["num_outputs"], None
    adapter = _adapter(op_name)
    if op_name == "external_source" and inputs:
        inputs, kwargs = (), external_source_positional(inputs, kwargs, "fn.external_source")
    if pipe is None:
        if adapter is not None and op_name == "external_source":
            raise RuntimeError(f"fn.{op_name} must be called while a pipeline is being defined: "
                               "inside a @pipeline_def function, inside `with pipe:`, or in "
                               "define_graph().")
        pipe = DETACHED
    from .pipeline import _user_location
    where = f"fn.{op_name} ({_user_location()})"  # argument errors name the user's line
    kwargs = {k: v if k in _OPAQUE_ARGS or isinstance(v, DataNode)
              else plain_arg(v, f"{where}: argument '{k}'") for k, v in kwargs.items()}
    if adapter is not None:
        kwargs, num_outputs, wrap = adapter(dict(kwargs))
    if op_name in _OUTPUTS_BY_INPUTS:
        num_outputs = _OUTPUTS_BY_INPUTS[op_name](kwargs, len(inputs))
    device = kwargs.pop("device", None)
    name = kwargs.pop("name", None)
    preserve = bool(kwargs.pop("preserve", False))
    kwargs.pop("bytes_per_sample_hint", None)
    inputs = [x if isinstance(x, DataNode) else _constant_input(op_name, i, x)
              for i, x in enumerate(inputs)]
    inputs = [pipe._adopt(x) for x in inputs]
    for i, x in enumerate(inputs):
        if x.pipeline is not pipe:
            raise ValueError(f"fn.{op_name}: input {i} comes from another pipeline.")
    n = len(inputs)
    if not (schema["min_inputs"] <= n <= schema["max_inputs"]):
        want = (str(schema["min_inputs"]) if schema["min_inputs"] == schema["max_inputs"]
                else f"{schema['min_inputs']} to {schema['max_inputs']}")
        raise TypeError(f"fn.{op_name} takes {want} input(s), got {n}.")
    if device is None:
        device = default_device or ("gpu" if any(x.device == "gpu" for x in inputs) else "cpu")
    if device not in ("cpu", "gpu", "mixed"):
        raise ValueError(f"fn.{op_name}: device must be 'cpu', 'gpu' or 'mixed', got {device!r}.")
    to_gpu = device not in schema["backends"] and _decoded_on_cpu(op_name, device)
    if to_gpu:
        device = "cpu"
    if device not in schema["backends"]:
        raise ValueError(f"fn.{op_name} has no '{device}' backend in this build of stoker; it runs "
                         f"on: {', '.join(schema['backends'])}.")
    if device == "cpu" and any(x.device == "gpu" for x in inputs):
        raise ValueError(f"fn.{op_name}: a 'cpu' operator cannot take GPU inputs.")
    argdefs = {a["name"]: a for a in schema["args"]}
    args, tensor_args = {}, {}
    for k, v in kwargs.items():
        if k not in argdefs:
            raise unexpected_arg(op_name, k, argdefs)
        if v is None:
            continue
        if isinstance(v, DataNode):
            if not argdefs[k]["tensor"]:
                raise TypeError(f"fn.{op_name}: argument '{k}' must be a constant; it does not "
                                "accept a per-sample tensor from another operator.")
            v = pipe._adopt(v)
            if v.pipeline is not pipe:
                raise ValueError(f"fn.{op_name}: argument '{k}' comes from another pipeline.")
            if v.device == "gpu" and not (k.startswith("_") or op_name.startswith("_")):
                # As in DALI: the operator reads its arguments on the host.
                raise ValueError(f"fn.{op_name}: argument '{k}' is given a GPU node; named "
                                 "arguments take CPU data. Pass the node from before .gpu().")
            tensor_args[k] = v
            continue
        if isinstance(v, _types.Constant):
            v = v.value
        args[k] = checked_arg(op_name, k, v, where)
    # @pipeline_def(enable_conditionals=True): in a branch of an `if` on a DataNode, inputs
    # made outside the branch are split down to it (stoker._conditionals).
    conditions = getattr(pipe, "_condition_stack", None)
    if conditions is not None:
        inputs, tensor_args = conditions.enter_op(op_name, inputs, tensor_args)
    from .pipeline import _OpRecord
    rec = _OpRecord(op_name, device, args, tensor_args, list(inputs), num_outputs, name, preserve)
    outs = pipe._add_op(rec)
    if conditions is not None:
        conditions.made(outs, has_inputs=bool(inputs or tensor_args))
    if to_gpu:
        shown = f"fn.{op_name}(device='{CPU_DECODED[op_name]}')"
        outs = [record_op("_to_gpu", [o], {"_display_name": shown}, default_device="mixed")
                for o in outs]
    if wrap is not None:
        return wrap(outs)
    # A tuple (DALI: a list), so that `return fn.readers.file(...)` gives the pipeline both
    # outputs; a list the user builds is one (wrong) output, as in DALI.
    return outs[0] if len(outs) == 1 else tuple(outs)


def unexpected_arg(op_name, k, argdefs):
    """The TypeError for an argument `k` the schema does not have (with the closest name)."""
    close = difflib.get_close_matches(k, list(argdefs) + list(_COMMON), n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return TypeError(f"fn.{op_name} got an unexpected argument '{k}'.{hint} "
                     f"Its arguments are: {', '.join(sorted(argdefs))}.")


def checked_arg(op_name, k, v, where):
    """A constant argument checked (and normalised) by the schema; the message names `where`
    (the operator and the user's line)."""
    try:
        return _C.check_arg(op_name, k, v)
    except (TypeError, ValueError) as e:
        text = str(e)
        if not text.startswith(f"fn.{op_name}: "):
            raise
        raise type(e)(f"{where}: {text[len(op_name) + 5:]}") from None


def _is_input_set(x):
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(e, DataNode) for e in x)


def _input_sets(op_name, inputs, kwargs, default_device):
    """DALI's multiple input sets: an input given as a list of DataNodes runs the operator once
    per element (the other inputs and the arguments shared) and gives a list of the results."""
    lengths = sorted({len(x) for x in inputs if _is_input_set(x)})
    if len(lengths) != 1:
        raise ValueError(f"fn.{op_name}: the inputs given as lists of DataNodes (input sets) must "
                         f"have the same length, got lengths {lengths}.")
    return [record_op(op_name, [x[k] if _is_input_set(x) else x for x in inputs], dict(kwargs),
                      default_device) for k in range(lengths[0])]


def make_fn(op_name):
    schema = SCHEMAS[op_name]

    def op(*inputs, **kwargs):
        return record_op(op_name, inputs, kwargs)

    short = op_name.rsplit(".", 1)[-1]
    op.__name__ = short
    op.__qualname__ = short
    op.__doc__ = make_docstring(schema)
    return op


class MissingOperatorError(NotImplementedError, AttributeError):
    """A DALI operator stoker does not have yet. Also an AttributeError, so that ``hasattr(fn,
    name)`` and ``getattr(fn, name, default)`` keep working."""


def dali_aliases():
    """DALI's deprecated names (``fn.image_decoder``, ``fn.experimental.decoders.image``, ...)
    whose operator stoker has: alias -> stoker's operator."""
    return {alias: target for alias, (_, target) in _dali_ops.FN.items()
            if target and target in SCHEMAS and alias not in SCHEMAS}


def unknown_name(api, path):
    """The error for ``fn.<path>`` / ``ops.<path>`` when stoker has no such name: a
    MissingOperatorError for an operator DALI has, else an AttributeError with a suggestion."""
    if api == "ops":
        target = _dali_ops.OPS.get(path)
    else:
        target = path if path in _dali_ops.FN else None
    if target is not None:
        backends, replaced_by = _dali_ops.FN[target]
        if replaced_by and replaced_by not in SCHEMAS:
            target = replaced_by
            backends = _dali_ops.FN[target][0]
        where = f" (DALI runs it on: {', '.join(backends)})" if backends else ""
        return MissingOperatorError(
            f"{api}.{path} is a DALI operator stoker does not have yet{where}. The table of "
            f"DALI's operators in stoker's README (or `python -m stoker ops --dali`) says which "
            f"it has; until fn.{target} comes, fn.python_function can run your own code in the "
            "pipeline.")
    parent, _, leaf = path.rpartition(".")
    known = ([n.rpartition(".")[2] for n in SCHEMAS if n.rpartition(".")[0] == parent]
             if api == "fn" else [])
    close = difflib.get_close_matches(leaf, known, n=1)
    hint = f" Did you mean {api}.{parent + '.' if parent else ''}{close[0]}?" if close else ""
    return AttributeError(f"{api}.{path} is neither a stoker nor a DALI operator.{hint} "
                          f"`python -m stoker ops` lists stoker's operators.")


def namespace_getattr(api, prefix):
    """A module-level __getattr__ for the namespace ``api.prefix`` (prefix "" or "readers.")."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise unknown_name(api, prefix + name)
    return __getattr__


def build_namespace(module_name, factory):
    """A module tree ('fn', 'fn.readers', ...) with one entry per schema, DALI's deprecated
    aliases of those, and (empty) every namespace DALI has, so that fn.segmentation.X names the
    missing operator instead of failing on fn.segmentation."""
    root = {}
    names = [(n, n) for n in SCHEMAS if not is_internal(n)]
    names += sorted(dali_aliases().items())
    for path, op_name in names:
        parts = path.split(".")
        node = root
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = factory(op_name)
    for path in _dali_ops.FN:
        node = root
        for p in path.split(".")[:-1]:
            node = node.setdefault(p, {})

    def to_module(name, tree):
        m = _pytypes.ModuleType(name)
        for k, v in tree.items():
            setattr(m, k, to_module(f"{name}.{k}", v) if isinstance(v, dict) else v)
        prefix = name.partition(".")[2].partition(".")[2]  # "stoker.fn.readers" -> "readers"
        m.__getattr__ = namespace_getattr(module_name.rpartition(".")[2],
                                          prefix + "." if prefix else "")
        return m

    return root, to_module
