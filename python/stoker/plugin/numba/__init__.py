"""DALI's numba plugin: ``numba_function`` runs a function compiled by numba as an operator.

    from stoker.plugin.numba.fn.experimental import numba_function   # DALI's import path
    from stoker.plugin.numba.fn import numba_function                # the same function

    def flip_rows(out0, in0):          # per sample: outputs first, then inputs
        for y in range(in0.shape[0]):
            out0[y] = in0[in0.shape[0] - 1 - y]

    flipped = numba_function(images, run_fn=flip_rows, out_types=[types.UINT8],
                             in_types=[types.UINT8], outs_ndim=[3], ins_ndim=[3])

CPU only for now. Importing this module never imports numba; defining a numba_function does,
and without numba it raises ImportError saying ``pip install numba``.
"""
from ._function import NumbaFunction
from . import experimental, fn

__all__ = ["NumbaFunction", "experimental", "fn"]
