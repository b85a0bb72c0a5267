"""Operators as functions: ``fn.readers.file``, ``fn.decoders.image``, ``fn.resize``, ...

Generated at import from stoker's operator schemas; each function's docstring lists its
arguments. Call them while a pipeline is being defined; they return DataNodes.

Only operators and their namespaces (``fn.readers``, ``fn.decoders``, ...) are public here, as
in DALI's ``nvidia.dali.fn``; the module is built by a function that leaves nothing else behind.
The typing stubs beside this file (``fn.pyi``) come from the same schemas
(``python -m stoker stubs``).
"""


def _install():
    import sys

    from ._schema import build_namespace, make_fn, namespace_getattr

    this = sys.modules[__name__]
    tree, to_module = build_namespace(__name__, make_fn)
    for name, value in tree.items():
        if isinstance(value, dict):
            value = to_module(f"{__name__}.{name}", value)
            sys.modules[f"{__name__}.{name}"] = value
        setattr(this, name, value)
    this.__getattr__ = namespace_getattr("fn", "")
    return sorted(tree)


__all__ = _install()
# (Run again when a plugin adds operators: stoker.plugin_manager.load_library.)
__import__("stoker._schema", fromlist=["_"]).register_installer(__name__, _install)
del _install
