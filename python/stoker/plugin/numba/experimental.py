"""DALI's older path to the operator class: ``nvidia.dali.plugin.numba.experimental``."""
from ._function import NumbaFunction

__all__ = ["NumbaFunction"]
