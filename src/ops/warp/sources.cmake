# Files of src/ops/warp, listed one by one.
