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

def _install():
    """Fills this module (and its namespaces, ops.readers, ...) with one class per operator and
    returns the top-level names. Everything it needs stays inside it, so that ``dir(ops)`` shows
    operators and namespaces only."""
    import sys
    import types as pytypes

    from . import _dali_ops
    from ._schema import (SCHEMAS, _camel, dali_aliases, external_source_positional,
                          is_internal, make_docstring, namespace_getattr, record_op)

    def make_class(op_name, cls_name, default_device=None):
        schema = SCHEMAS[op_name]

        def __init__(self, *args, **kwargs):
            if args and op_name in ("python_function", "dl_tensor_python_function"):
                # DALI's PythonFunction(function, num_outputs=1, ...)
                if len(args) > 2:
                    raise TypeError(f"ops.{cls_name} takes at most 2 positional arguments "
                                    f"(function, num_outputs), got {len(args)}.")
                for name, value in zip(("function", "num_outputs"), args):
                    if name in kwargs:
                        raise TypeError(f"ops.{cls_name} got multiple values for argument "
                                        f"'{name}'.")
                    kwargs[name] = value
                args = ()
            if args:
                if op_name != "external_source":
                    raise TypeError(f"ops.{cls_name} takes keyword arguments only, got "
                                    f"{len(args)} positional; pass the inputs when calling it.")
                kwargs = external_source_positional(args, kwargs, f"ops.{cls_name}")
            self._kwargs = kwargs
            self.device = kwargs.get("device", default_device)

        def __call__(self, *inputs, **kwargs):
            merged = dict(self._kwargs)
            merged.update(kwargs)
            if default_device is not None:
                merged.setdefault("device", default_device)
            return record_op(op_name, inputs, merged)

        return type(cls_name, (), {"__init__": __init__, "__call__": __call__,
                                   "__doc__": make_docstring(schema), "schema_name": op_name,
                                   "__module__": __name__})

    def resolve(fn_name):
        """stoker's operator for a DALI fn name (a deprecated alias stands for its successor)."""
        if fn_name in SCHEMAS:
            return fn_name
        return dali_aliases().get(fn_name)

    this = sys.modules[__name__]
    this.__getattr__ = namespace_getattr("ops", "")
    names = []

    def namespace(parts):
        target, prefix = this, __name__
        for p in parts:
            prefix = f"{prefix}.{p}"
            sub = getattr(target, p, None) if p in vars(target) else None
            if sub is None:
                sub = pytypes.ModuleType(prefix)
                sub.__getattr__ = namespace_getattr(
                    "ops", prefix.partition(".")[2].partition(".")[2] + ".")
                sys.modules[prefix] = sub
                setattr(target, p, sub)
                if target is this:
                    names.append(p)
            target = sub
        return target

    # Each operator under its fn path in CamelCase (fn.readers.file -> ops.readers.File), then
    # every class name DALI has for an operator stoker has (ops.FileReader, ops.ImageDecoder,
    # ops.experimental.decoders.Image...), then DALI's empty namespaces (ops.segmentation).
    entries = [(n.split("."), n) for n in SCHEMAS if not is_internal(n)]
    entries = [(parts[:-1] + [_camel(parts[-1])], n) for parts, n in entries]
    entries += [(path.split("."), resolve(fn_name)) for path, fn_name in _dali_ops.OPS.items()
                if resolve(fn_name)]
    for parts, op_name in entries:
        target = namespace(parts[:-1])
        if parts[-1] not in vars(target):
            setattr(target, parts[-1], make_class(op_name, parts[-1]))
            if target is this:
                names.append(parts[-1])
    for path in _dali_ops.OPS:
        namespace(path.split(".")[:-1])
    # DALI's GPU JPEG decoder name: decoders.image on the 'mixed' backend.
    if "decoders.image" in SCHEMAS:
        this.nvJPEGDecoder = make_class("decoders.image", "nvJPEGDecoder", default_device="mixed")
        names.append("nvJPEGDecoder")
    return sorted(set(names))


__all__ = _install()
# (Run again when a plugin adds operators: stoker.plugin_manager.load_library.)
__import__("stoker._schema", fromlist=["_"]).register_installer(__name__, _install)
del _install
