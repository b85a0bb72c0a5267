# Files of src/kernels/cpu/warp, listed one by one.
