# Files of src/kernels/cpu/color, listed one by one.
