"""Operator functions generated from the C++ schemas: the one place arguments are declared."""
import difflib
import types as _pytypes

import numpy as np

from . import _C
from . import types as _types
from .pipeline import DataNode, Pipeline

SCHEMAS = {s["name"]: s for s in _C.schemas()}

_COMMON = ("device", "name", "preserve", "bytes_per_sample_hint")


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


_ADAPTERS = {
    "readers.tfrecord": "stoker.tfrecord:_adapt_reader",
    "readers.webdataset": _one_output_per("ext"),
    "readers.caffe": _caffe_outputs,
    "readers.caffe2": _caffe2_outputs,
    "readers.coco": _coco_outputs,
    "external_source": "stoker.external_source:_adapt",
}


def _adapter(op_name):
    a = _ADAPTERS.get(op_name)
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


def record_op(op_name, inputs, kwargs, default_device=None):
    """Checks a call against the schema and adds the operator to the current pipeline."""
    schema = SCHEMAS[op_name]
    pipe = Pipeline.current()
    if pipe is None:
        raise RuntimeError(f"fn.{op_name} must be called while a pipeline is being defined: inside "
                           "a @pipeline_def function, inside `with pipe:`, or in define_graph().")
    num_outputs, wrap = schema["num_outputs"], None
    adapter = _adapter(op_name)
    if adapter is not None:
        kwargs, num_outputs, wrap = adapter(dict(kwargs))
    device = kwargs.pop("device", None)
    name = kwargs.pop("name", None)
    preserve = bool(kwargs.pop("preserve", False))
    kwargs.pop("bytes_per_sample_hint", None)
    for i, x in enumerate(inputs):
        if not isinstance(x, DataNode):
            raise TypeError(f"fn.{op_name}: input {i} must be a DataNode (the output of another "
                            f"operator), got {type(x).__name__}.")
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
    if device not in schema["backends"]:
        raise ValueError(f"fn.{op_name} has no '{device}' backend in this build of stoker; it runs "
                         f"on: {', '.join(schema['backends'])}.")
    if device == "cpu" and any(x.device == "gpu" for x in inputs):
        raise ValueError(f"fn.{op_name}: a 'cpu' operator cannot take GPU inputs.")
    argdefs = {a["name"]: a for a in schema["args"]}
    args, tensor_args = {}, {}
    for k, v in kwargs.items():
        if k not in argdefs:
            close = difflib.get_close_matches(k, list(argdefs) + list(_COMMON), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise TypeError(f"fn.{op_name} got an unexpected argument '{k}'.{hint} "
                            f"Its arguments are: {', '.join(sorted(argdefs))}.")
        if v is None:
            continue
        if isinstance(v, DataNode):
            if not argdefs[k]["tensor"]:
                raise TypeError(f"fn.{op_name}: argument '{k}' must be a constant; it does not "
                                "accept a per-sample tensor from another operator.")
            if v.pipeline is not pipe:
                raise ValueError(f"fn.{op_name}: argument '{k}' comes from another pipeline.")
            tensor_args[k] = v
            continue
        if isinstance(v, _types.Constant):
            v = v.value
        args[k] = _C.check_arg(op_name, k, v)
    from .pipeline import _OpRecord
    rec = _OpRecord(op_name, device, args, tensor_args, list(inputs), num_outputs, name, preserve)
    outs = pipe._add_op(rec)
    if wrap is not None:
        return wrap(outs)
    return outs[0] if len(outs) == 1 else outs


def make_fn(op_name):
    schema = SCHEMAS[op_name]

    def op(*inputs, **kwargs):
        return record_op(op_name, inputs, kwargs)

    short = op_name.rsplit(".", 1)[-1]
    op.__name__ = short
    op.__qualname__ = short
    op.__doc__ = make_docstring(schema)
    return op


# DALI's `experimental` names of operators that have since moved to the main namespace: DALI
# keeps them as deprecated aliases, and pipelines written for DALI 1.2x use them.
EXPERIMENTAL_ALIASES = {
    "experimental.decoders.image": "decoders.image",
    "experimental.decoders.image_crop": "decoders.image_crop",
    "experimental.decoders.image_slice": "decoders.image_slice",
    "experimental.decoders.image_random_crop": "decoders.image_random_crop",
    "experimental.peek_image_shape": "peek_image_shape",
}


def build_namespace(module_name, factory):
    """A module tree ('fn', 'fn.readers', ...) with one entry per schema, and DALI's
    experimental aliases."""
    root = {}
    names = [(n, n) for n in SCHEMAS if not n.startswith("_")]  # "_": internal operators
    names += [(a, t) for a, t in EXPERIMENTAL_ALIASES.items() if t in SCHEMAS]
    for path, op_name in names:
        parts = path.split(".")
        node = root
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = factory(op_name)

    def to_module(name, tree):
        m = _pytypes.ModuleType(name)
        for k, v in tree.items():
            setattr(m, k, to_module(f"{name}.{k}", v) if isinstance(v, dict) else v)
        return m

    return root, to_module
