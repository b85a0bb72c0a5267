# Files of src/kernels/cpu/geometry, listed one by one.
