"""stoker keeps accelerators fed: data loading, decoding and augmentation on the CPU (and, in
later versions, the GPU), with NVIDIA DALI's Python API.

    from stoker import pipeline_def, fn, types
"""
from . import _C  # its import sends the core's messages to logging's "stoker" (_logging.py)
from . import _logging
from . import _remote
from ._C import DecodeError, InternalError, TensorListCPU, TensorListGPU
from . import types
from .pipeline import DataNode, Pipeline, pipeline_def
from . import tensors
from .tensors import TensorCPU, TensorGPU
from . import fn
from . import ops
from . import math
from ._subscript import newaxis
from ._show import show_batch

_logging.show_traces()
_remote.install()  # URLs for the readers, through fsspec

__version__ = "0.1.0"
__all__ = ["Pipeline", "pipeline_def", "fn", "ops", "types", "DataNode", "DecodeError",
           "InternalError", "math", "newaxis", "TensorCPU", "TensorGPU", "TensorListCPU",
           "TensorListGPU", "tensors", "show_batch", "__version__"]
