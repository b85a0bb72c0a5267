"""Operators as classes, DALI's legacy object API: create them (with constant arguments) in a
Pipeline subclass's ``__init__``, call them on DataNodes in ``define_graph``.

    class Pipe(Pipeline):
        def __init__(self, ...):
            super().__init__(batch_size, num_threads, device_id)
            self.input = ops.FileReader(file_root=root)
            self.decode = ops.ImageDecoder(output_type=types.RGB)
            self.resize = ops.Resize(resize_x=224, resize_y=224)
        def define_graph(self):
            jpegs, labels = self.input(name="Reader")
            return self.resize(self.decode(jpegs)), labels
"""
import sys

from ._schema import EXPERIMENTAL_ALIASES, SCHEMAS, _camel, make_docstring, record_op


def _make_class(op_name, cls_name, default_device=None):
    schema = SCHEMAS[op_name]

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self.device = kwargs.get("device", default_device)

    def __call__(self, *inputs, **kwargs):
        merged = dict(self._kwargs)
        merged.update(kwargs)
        if default_device is not None:
            merged.setdefault("device", default_device)
        return record_op(op_name, inputs, merged)

    return type(cls_name, (), {"__init__": __init__, "__call__": __call__,
                               "__doc__": make_docstring(schema), "schema_name": op_name})


def _install():
    import types as pytypes
    this = sys.modules[__name__]
    names = []
    entries = [(n, n) for n in SCHEMAS if not n.startswith("_")]  # "_": internal operators
    entries += [(a, t) for a, t in EXPERIMENTAL_ALIASES.items() if t in SCHEMAS]
    for path, op_name in entries:
        schema = SCHEMAS[op_name]
        parts = path.split(".")
        target = this
        prefix = __name__
        for p in parts[:-1]:
            prefix = f"{prefix}.{p}"
            sub = getattr(target, p, None)
            if sub is None:
                sub = pytypes.ModuleType(prefix)
                sys.modules[prefix] = sub
                setattr(target, p, sub)
                if target is this:
                    names.append(p)
            target = sub
        setattr(target, _camel(parts[-1]), _make_class(op_name, _camel(parts[-1])))
        if len(parts) == 1:
            names.append(_camel(parts[-1]))
        for legacy in schema["legacy_names"]:
            lparts = legacy.split(".")
            t = this
            for p in lparts[:-1]:
                t = getattr(t, p)
            if not hasattr(t, lparts[-1]):
                setattr(t, lparts[-1], _make_class(op_name, lparts[-1]))
                if t is this:
                    names.append(lparts[-1])
    # DALI's GPU JPEG decoder name: decoders.image on the 'mixed' backend.
    if "decoders.image" in SCHEMAS:
        this.nvJPEGDecoder = _make_class("decoders.image", "nvJPEGDecoder", default_device="mixed")
        names.append("nvJPEGDecoder")
    return sorted(set(names))


__all__ = _install()
