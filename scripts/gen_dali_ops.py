"""Writes python/stoker/_dali_ops.py: every operator name NVIDIA DALI exposes under fn and ops,
with DALI's backends and, for a deprecated alias, the operator that replaces it. stoker uses it
to name the DALI operators it does not have yet (instead of an AttributeError), to provide
DALI's deprecated aliases, and to print the coverage table in the README.

Also writes src/pipeline/dali_op_names.inc: DALI's schema names (what a pipeline DALI
serialized names its operators by: "decoders__Image") -> stoker's operator, a deprecated alias
resolved to its successor. pipeline/dali_format.cc reads DALI's serialized pipelines with it.

Run it where DALI is installed (pip install nvidia-dali-cuda130==2.4.0):
    python3 scripts/gen_dali_ops.py
"""
import os
import pprint
import types

import nvidia.dali
import nvidia.dali.fn as dali_fn
import nvidia.dali.ops as dali_ops
from nvidia.dali import backend

# Operators whose schema DALI registers outside the backend lists (Python-side or plugins).
_BACKENDS = {"python_function": ("cpu", "gpu"), "dl_tensor_python_function": ("cpu", "gpu"),
             "readers.tfrecord": ("cpu",), "external_source": ("cpu", "gpu")}


def _walk(module, prefix, root, keep):
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith(root):
                yield from _walk(value, f"{prefix}{name}.", root, keep)
        elif keep(value):
            yield prefix + name, value


def main():
    by_backend = {"cpu": set(backend.RegisteredCPUOps()), "gpu": set(backend.RegisteredGPUOps()),
                  "mixed": set(backend.RegisteredMixedOps())}
    fn_ops, by_schema = {}, {}
    for name, f in _walk(dali_fn, "", "nvidia.dali.fn", callable):
        if name.startswith("hidden.") or ".hidden." in name:
            continue  # DALI's undocumented copies of other names
        schema_name = getattr(f, "_schema_name", None)
        schema = backend.TryGetSchema(schema_name) if schema_name else None
        backends = _BACKENDS.get(name) or tuple(
            b for b in ("cpu", "gpu", "mixed") if schema_name in by_backend[b])
        replaced_by = None
        if schema is not None and schema.IsDeprecated():
            replaced_by = schema.DeprecatedInFavorOf() or ""
        fn_ops[name] = [backends, replaced_by]
        if schema_name and not replaced_by:  # "": deprecated, but an operator of its own
            by_schema[schema_name] = name
    # Deprecated aliases name their successor by schema ("readers__File"): to fn names.
    for name, entry in fn_ops.items():
        if entry[1]:
            entry[1] = by_schema.get(entry[1], by_schema.get(entry[1].split("__")[-1], ""))
            if not entry[0] and entry[1]:
                entry[0] = fn_ops[entry[1]][0]
    # ops classes: the fn operator with the same schema.
    fn_by_schema = {getattr(f, "_schema_name", None): n
                    for n, f in _walk(dali_fn, "", "nvidia.dali.fn", callable)
                    if not (n.startswith("hidden.") or ".hidden." in n)}
    ops_classes = {}
    for name, cls in _walk(dali_ops, "", "nvidia.dali.ops", lambda v: isinstance(v, type)):
        if name.startswith("hidden.") or ".hidden." in name:
            continue
        schema_name = getattr(cls, "schema_name", None)
        target = "external_source" if name == "ExternalSource" else fn_by_schema.get(schema_name)
        if target:
            ops_classes[name] = target
    # Schema names -> the fn name of the operator stoker runs for them.
    schema_fns = {}
    for n, f in _walk(dali_fn, "", "nvidia.dali.fn", callable):
        schema_name = getattr(f, "_schema_name", None)
        if not schema_name or n.startswith("hidden.") or ".hidden." in n:
            continue
        target = fn_ops[n][1] or n
        if schema_fns.get(schema_name, target) != target and not fn_ops[n][1]:
            continue  # (two fn names for one schema: the first, not deprecated, wins)
        schema_fns.setdefault(schema_name, target)
    inc = os.path.join(os.path.dirname(__file__), "..", "src", "pipeline", "dali_op_names.inc")
    with open(inc, "w") as f:
        f.write(f"// NVIDIA DALI {nvidia.dali.__version__}'s operator schema names -> the fn name of "
                "the operator that\n// stands for each (written by scripts/gen_dali_ops.py; do "
                "not edit).\n")
        for k in sorted(schema_fns):
            f.write(f'{{"{k}", "{schema_fns[k]}"}},\n')
    out = os.path.join(os.path.dirname(__file__), "..", "python", "stoker", "_dali_ops.py")
    with open(out, "w") as f:
        f.write(f'"""NVIDIA DALI {nvidia.dali.__version__}\'s operator names (written by '
                'scripts/gen_dali_ops.py; do not edit).\n\n'
                'FN: fn name -> (DALI\'s backends, None or the fn name a deprecated alias stands '
                'for; "" when DALI\n'
                'names no successor). OPS: ops class path -> the fn name of the same operator.\n'
                '"""\n')
        f.write(f"DALI_VERSION = {nvidia.dali.__version__!r}\n\n")
        f.write("FN = " + pprint.pformat({k: tuple(v) for k, v in fn_ops.items()}, width=99) + "\n\n")
        f.write("OPS = " + pprint.pformat(ops_classes, width=99) + "\n")
    print(f"wrote {os.path.normpath(out)}: {len(fn_ops)} fn names, {len(ops_classes)} ops classes; "
          f"{os.path.normpath(inc)}: {len(schema_fns)} schema names")


if __name__ == "__main__":
    main()
