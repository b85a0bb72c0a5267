"""Custom operators from plugin libraries, as DALI's ``nvidia.dali.plugin_manager``.

A plugin is a shared library of operators written against stoker's operator interface and built
with CMake's ``find_package(stoker)`` and the ``stoker::plugin`` target (``examples/plugin`` is
one, with a CPU and a GPU operator)::

    import stoker.plugin_manager as plugin_manager
    plugin_manager.load_library("build/libcustom_invert.so")
    images = fn.custom.invert(images)          # also ops.custom.Invert

Its operators appear in ``fn`` and ``ops`` with the docs of their schemas, run in pipelines like
stoker's own, and serialized pipelines that use them load (in Python, and through the C API's
``stoker_load_plugin``) once the library is loaded. A library built for another version of
stoker is refused with a message saying so.
"""
import os

from . import _C, _schema

__all__ = ["load_library"]


def load_library(library_path, global_symbols=False):
    """Loads the plugin library at ``library_path`` and adds its operators to ``fn`` and ``ops``.
    Loading the same library again does nothing. ``global_symbols`` (DALI's: make the library's
    symbols visible to libraries loaded later) is accepted; stoker keeps each plugin's symbols
    to itself."""
    names = _C.load_plugin(os.fspath(library_path))
    if names:
        _schema.refresh()
