# Files of src/ops/io, listed one by one.
