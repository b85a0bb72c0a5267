"""``numba_function`` (DALI 2.4: ``nvidia.dali.plugin.numba.fn.numba_function``)."""
from .._function import numba_function
from . import experimental

__all__ = ["numba_function", "experimental"]
