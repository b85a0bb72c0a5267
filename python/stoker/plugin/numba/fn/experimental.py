"""DALI's first (and most used) path: ``nvidia.dali.plugin.numba.fn.experimental``."""
from .._function import numba_function

__all__ = ["numba_function"]
