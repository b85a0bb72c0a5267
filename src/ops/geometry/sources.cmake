# Files of src/ops/geometry, listed one by one.
