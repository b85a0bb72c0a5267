# Files of src/ops/color, listed one by one.
