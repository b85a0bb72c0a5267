"""Run code written for NVIDIA DALI on stoker, unchanged: ``install()`` makes ``nvidia.dali``
and its modules resolve to stoker's.

    import stoker.compat.dali
    stoker.compat.dali.install()

    from nvidia.dali import pipeline_def, fn, types             # stoker's
    import nvidia.dali.fn as fn                                  # stoker.fn
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

or, for a whole script: ``python -m stoker.compat.dali [--replace-dali] train.py --its --args``.

Nothing happens unless you ask: importing stoker never installs the aliases. If the real DALI
is installed, install() refuses (pass ``replace_dali=True`` to shadow it anyway). Modules are
resolved lazily, so ``nvidia.dali.plugin.tf`` imports TensorFlow only when something imports
it. DALI modules that stoker has no counterpart for raise ImportError naming what to use.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types as _pytypes

__all__ = ["install", "uninstall", "installed"]

_ROOT = "nvidia.dali"
# DALI's module -> stoker's. Submodules of fn and ops follow their parent (fn.readers, ...).
_ALIASES = {
    "nvidia.dali": "stoker",
    "nvidia.dali.fn": "stoker.fn",
    "nvidia.dali.ops": "stoker.ops",
    "nvidia.dali.types": "stoker.types",
    "nvidia.dali.math": "stoker.math",
    "nvidia.dali.pipeline": "stoker.pipeline",
    "nvidia.dali.data_node": "stoker.pipeline",
    "nvidia.dali.tensors": "stoker.tensors",
    "nvidia.dali.backend": "stoker.tensors",
    "nvidia.dali.plugin_manager": "stoker.plugin_manager",
    "nvidia.dali.plugin": "stoker.plugin",
    "nvidia.dali.plugin.base_iterator": "stoker.plugin.base_iterator",
    "nvidia.dali.plugin.pytorch": "stoker.plugin.pytorch",
    "nvidia.dali.plugin.jax": "stoker.plugin.jax",
    "nvidia.dali.plugin.tf": "stoker.plugin.tf",
    "nvidia.dali.plugin.paddle": "stoker.plugin.paddle",
    "nvidia.dali.plugin.mxnet": "stoker.plugin.mxnet",
    "nvidia.dali.plugin.numba": "stoker.plugin.numba",
    "nvidia.dali.plugin.numba.experimental": "stoker.plugin.numba.experimental",
    "nvidia.dali.plugin.numba.fn": "stoker.plugin.numba.fn",
    "nvidia.dali.plugin.numba.fn.experimental": "stoker.plugin.numba.fn.experimental",
    "nvidia.dali.auto_aug": "stoker.auto_aug",
    "nvidia.dali.auto_aug.core": "stoker.auto_aug.core",
    "nvidia.dali.auto_aug.augmentations": "stoker.auto_aug.augmentations",
    "nvidia.dali.auto_aug.auto_augment": "stoker.auto_aug.auto_augment",
    "nvidia.dali.auto_aug.rand_augment": "stoker.auto_aug.rand_augment",
    "nvidia.dali.auto_aug.trivial_augment": "stoker.auto_aug.trivial_augment",
}
_PREFIXES = {"nvidia.dali.fn.": "stoker.fn.", "nvidia.dali.ops.": "stoker.ops."}


def _target(fullname):
    if fullname in _ALIASES:
        return _ALIASES[fullname]
    for prefix, to in _PREFIXES.items():
        if fullname.startswith(prefix):
            return to + fullname[len(prefix):]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module):
        self._module = module
        self._spec = getattr(module, "__spec__", None)
        self._loader = getattr(module, "__loader__", None)

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        # The import system stamps the alias spec on the module; give it its own back, so that
        # the stoker module keeps its identity (reload, pickling, tracebacks).
        if self._spec is not None:
            module.__spec__ = self._spec
        if self._loader is not None:
            module.__loader__ = self._loader


class _DaliAliasFinder(importlib.abc.MetaPathFinder):
    """Answers imports of nvidia.dali.* with the stoker modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ROOT and not fullname.startswith(_ROOT + "."):
            return None
        to = _target(fullname)
        if to is None:
            raise ModuleNotFoundError(
                f"{fullname} has no stoker counterpart (stoker.compat.dali maps "
                f"{', '.join(sorted(_ALIASES))}, and fn.*/ops.* submodules). Use stoker's "
                "own API for it, or run this code with the real DALI.", name=fullname)
        module = importlib.import_module(to)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module),
                                               is_package=hasattr(module, "__path__"))


_finder = None
_created_nvidia = False
_shadowed = {}  # the real DALI's modules install(replace_dali=True) hid; uninstall() puts them back


def installed():
    """Whether install() is in effect."""
    return _finder is not None


def install(replace_dali=False):
    """Makes ``nvidia.dali`` and its modules resolve to stoker's (idempotent)."""
    global _finder, _created_nvidia
    if _finder is not None:
        return
    if not replace_dali:
        loaded = sys.modules.get(_ROOT)
        real = loaded is not None and not getattr(loaded, "__name__", "").startswith("stoker")
        if not real:
            try:
                real = importlib.util.find_spec(_ROOT) is not None
            except (ImportError, ValueError):
                real = False
        if real:
            raise RuntimeError(
                "stoker.compat.dali.install(): the real NVIDIA DALI is installed (nvidia.dali), "
                "and aliasing would hide it. Uninstall it, or pass replace_dali=True to make "
                "nvidia.dali mean stoker in this process anyway.")
    import stoker
    try:
        nvidia = importlib.import_module("nvidia")  # other NVIDIA wheels share this package
    except ImportError:
        nvidia = _pytypes.ModuleType("nvidia")
        nvidia.__path__ = []
        sys.modules["nvidia"] = nvidia
        _created_nvidia = True
    _finder = _DaliAliasFinder()
    sys.meta_path.insert(0, _finder)
    for name in [n for n in sys.modules if n == _ROOT or n.startswith(_ROOT + ".")]:
        _shadowed[name] = sys.modules.pop(name)  # a real DALI imported before (replace_dali=True)
    _shadowed_attr = getattr(nvidia, "dali", None)
    if _shadowed_attr is not None:
        _shadowed["nvidia.dali (attribute)"] = _shadowed_attr
    sys.modules[_ROOT] = stoker
    nvidia.dali = stoker
    # fn and ops are plain modules whose submodules (fn.readers, ...) live only in sys.modules,
    # so the import system would not look for nvidia.dali.fn.readers: alias them up front.
    for prefix, to in _PREFIXES.items():
        for name in [n for n in sys.modules if n.startswith(to)]:
            sys.modules[prefix + name[len(to):]] = sys.modules[name]


def uninstall():
    """Undoes install(): nvidia.dali no longer resolves to stoker."""
    global _finder, _created_nvidia
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    for name in [n for n in sys.modules if n == _ROOT or n.startswith(_ROOT + ".")]:
        del sys.modules[name]
    nvidia = sys.modules.get("nvidia")
    if nvidia is not None and getattr(nvidia, "dali", None) is not None:
        import stoker
        if nvidia.dali is stoker:
            del nvidia.dali
    if _created_nvidia:
        sys.modules.pop("nvidia", None)
        _created_nvidia = False
    # A real DALI this process had imported before comes back as it was (its native modules
    # cannot be imported a second time).
    real = _shadowed.pop("nvidia.dali (attribute)", None)
    sys.modules.update(_shadowed)
    _shadowed.clear()
    if real is not None and nvidia is not None:
        nvidia.dali = real


def _main(argv):
    import runpy
    replace = "--replace-dali" in argv[:1]
    argv = argv[1:] if replace else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m stoker.compat.dali [--replace-dali] SCRIPT.py [ARGS...]\n"
              "Runs a script written for NVIDIA DALI with nvidia.dali resolving to stoker\n"
              "(--replace-dali: even where the real DALI is installed).")
        return 0 if argv else 2
    install(replace_dali=replace)
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
