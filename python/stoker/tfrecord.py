"""TFRecord feature declarations, as DALI's ``nvidia.dali.tfrecord``, and the index tool.

    import stoker.tfrecord as tfrec
    out = fn.readers.tfrecord(
        path="train.tfrecord", index_path="train.idx",
        features={"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                  "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
                  "image/object/bbox/xmin": tfrec.VarLenFeature(tfrec.float32, 0.0)})
    jpegs, labels = out["image/encoded"], out["image/class/label"]

``fn.readers.tfrecord`` returns a dict of outputs keyed by feature name, in the order of the
``features`` dict. Index files (DALI's ``tfrecord2idx`` format, one ``"<offset> <size>"`` line
per record) are made with::

    python -m stoker.tfrecord index FILE.tfrecord [FILE.idx]
"""
import struct
import sys

import numpy as np

__all__ = ["int64", "string", "float32", "Feature", "FixedLenFeature", "VarLenFeature",
           "make_index", "main"]

# DALI's numbering of the feature types.
int64 = 0
string = 1
float32 = 2

_TYPE_NAMES = {int64: "int64", string: "string", float32: "float32"}


def _feature_type(dtype, where):
    if isinstance(dtype, (bool, np.bool_)):
        raise TypeError(f"{where}: dtype must be tfrecord.int64, tfrecord.float32 or "
                        f"tfrecord.string, got {dtype!r}")
    if isinstance(dtype, (int, np.integer)) and int(dtype) in _TYPE_NAMES:
        return int(dtype)
    name = getattr(dtype, "name", dtype)  # also 'int64', 'float32', 'string' and tf.dtypes
    aliases = {"int64": int64, "float32": float32, "float": float32, "string": string,
               "bytes": string}
    if isinstance(name, str) and name in aliases:
        return aliases[name]
    raise TypeError(f"{where}: dtype must be tfrecord.int64, tfrecord.float32 or tfrecord.string, "
                    f"got {dtype!r}")


def _dims(shape, where, what):
    if isinstance(shape, (int, np.integer)):
        shape = [int(shape)]
    try:
        dims = [int(d) for d in shape]
    except TypeError:
        raise TypeError(f"{where}: {what} must be a list of non-negative ints, got {shape!r}") from None
    if any(d < 0 for d in dims) or any(isinstance(d, bool) for d in shape):
        raise ValueError(f"{where}: {what} must be a list of non-negative ints, got {shape!r}")
    return dims


class Feature:
    """A feature declaration: what readers.tfrecord reads from each record's feature of this
    name. Made by FixedLenFeature and VarLenFeature."""
    __slots__ = ("fixed", "dtype", "shape", "partial_shape", "default_value")

    def __init__(self, fixed, dtype, shape, partial_shape, default_value):
        where = "tfrecord.FixedLenFeature" if fixed else "tfrecord.VarLenFeature"
        self.fixed = fixed
        self.dtype = _feature_type(dtype, where)
        self.shape = _dims(shape, where, "shape") if fixed else None
        self.partial_shape = None if partial_shape is None else _dims(partial_shape, where, "partial_shape")
        if self.partial_shape is not None and 0 in self.partial_shape:
            raise ValueError(f"{where}: partial_shape cannot contain 0, got {partial_shape!r}")
        if self.dtype == string:
            if fixed and int(np.prod(self.shape or [1])) > 1:
                raise ValueError(f"{where}: a string feature holds one bytes value per record "
                                 f"(shape () or [1]), got shape {shape!r}; tensors of strings are "
                                 "not supported (as in DALI)")
            if default_value is None:
                default_value = b""
            if isinstance(default_value, str):
                default_value = default_value.encode()
            if not isinstance(default_value, (bytes, bytearray)):
                raise TypeError(f"{where}: the default of a string feature must be str or bytes, "
                                f"got {default_value!r}")
            default_value = bytes(default_value)
        elif self.dtype == int64:
            default_value = 0 if default_value is None else default_value
            if isinstance(default_value, (bool, np.bool_)) or not isinstance(default_value, (int, np.integer)):
                raise TypeError(f"{where}: the default of an int64 feature must be an int, got "
                                f"{default_value!r}")
            default_value = int(default_value)
        else:
            default_value = 0.0 if default_value is None else default_value
            if isinstance(default_value, (bool, np.bool_)) or not isinstance(
                    default_value, (int, float, np.integer, np.floating)):
                raise TypeError(f"{where}: the default of a float32 feature must be a number, got "
                                f"{default_value!r}")
            default_value = float(default_value)
        self.default_value = default_value

    def _encode(self):
        """The text form readers.tfrecord's schema takes (see src/readers/tfrecord.h)."""
        if self.fixed:
            dims = ",".join(str(d) for d in self.shape)
        else:
            dims = "*" if self.partial_shape is None else ",".join(str(d) for d in self.partial_shape)
        if self.dtype == string:
            default = self.default_value.hex()
        elif self.dtype == float32:
            default = repr(self.default_value)
        else:
            default = str(self.default_value)
        return f"{'fixed' if self.fixed else 'var'};{_TYPE_NAMES[self.dtype]};{dims};{default}"

    def __repr__(self):
        t = "tfrecord." + _TYPE_NAMES[self.dtype]
        if self.fixed:
            return f"FixedLenFeature({self.shape}, {t}, {self.default_value!r})"
        if self.partial_shape is not None:
            return f"VarLenFeature({self.partial_shape}, {t}, {self.default_value!r})"
        return f"VarLenFeature({t}, {self.default_value!r})"

    def __eq__(self, other):
        return isinstance(other, Feature) and self._encode() == other._encode()

    def __hash__(self):
        return hash(self._encode())


def FixedLenFeature(shape, dtype, default_value=None):  # noqa: N802 (DALI's name)
    """A feature with a fixed number of values per record, read as a tensor of `shape`
    (``()`` or ``[1]`` for one value; string features give the bytes of their one value).
    `default_value` fills the output of a record that lacks the feature."""
    return Feature(True, dtype, shape, None, default_value)


def VarLenFeature(*args, **kwargs):  # noqa: N802 (DALI's name)
    """A feature with any number of values per record: ``VarLenFeature(dtype, default_value)``
    gives a 1-D tensor; ``VarLenFeature(partial_shape, dtype, default_value)`` reshapes it to
    ``(n / prod(partial_shape), *partial_shape)``. A record that lacks the feature gives one
    element, `default_value`."""
    names = ["dtype", "default_value"]
    if args and isinstance(args[0], (list, tuple)) or "partial_shape" in kwargs:
        names = ["partial_shape"] + names
    if len(args) > len(names):
        raise TypeError(f"tfrecord.VarLenFeature takes at most {len(names)} arguments "
                        f"({', '.join(names)}), got {len(args)}")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in values:
            raise TypeError(f"tfrecord.VarLenFeature got an unexpected or repeated argument '{k}'")
        values[k] = v
    if "dtype" not in values:
        raise TypeError("tfrecord.VarLenFeature needs a dtype (tfrecord.int64, tfrecord.float32 "
                        "or tfrecord.string)")
    return Feature(False, values["dtype"], None, values.get("partial_shape"),
                   values.get("default_value"))


def _adapt_reader(kwargs):
    """fn.readers.tfrecord's call -> schema arguments: `features` (a dict) becomes the
    feature_names and features string lists, and the outputs a dict keyed by feature name."""
    if "feature_names" in kwargs:
        raise TypeError("fn.readers.tfrecord: feature_names is filled in from the keys of "
                        "`features`; do not pass it")
    features = kwargs.pop("features", None)
    if features is None:
        raise TypeError("fn.readers.tfrecord: `features` is required: a dict of feature name -> "
                        "tfrecord.FixedLenFeature(...) / tfrecord.VarLenFeature(...)")
    if not isinstance(features, dict):
        raise TypeError(f"fn.readers.tfrecord: `features` must be a dict of feature name -> "
                        f"tfrecord.Feature, got {type(features).__name__}")
    if not features:
        raise ValueError("fn.readers.tfrecord: `features` is empty; declare at least one feature")
    names = []
    for k, v in features.items():
        if not isinstance(k, str):
            raise TypeError(f"fn.readers.tfrecord: feature names must be strings, got {k!r}")
        if not isinstance(v, Feature):
            raise TypeError(f"fn.readers.tfrecord: features[{k!r}] must be made with "
                            f"tfrecord.FixedLenFeature or tfrecord.VarLenFeature, got {v!r}")
        names.append(k)
    kwargs["feature_names"] = names
    kwargs["features"] = [features[k]._encode() for k in names]

    def wrap(outputs):
        return dict(zip(names, outputs))

    return kwargs, len(names), wrap


# ---- index files

_MASK_DELTA = 0xA282EAD8


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def _masked_crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = (c >> 8) ^ _CRC_TABLE[(c ^ b) & 0xFF]
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def record_frame(payload):
    """One TFRecord record as tf.io.TFRecordWriter writes it: the length (8 bytes, little
    endian), its masked CRC-32C, the payload, the payload's masked CRC-32C. Concatenated frames
    make a TFRecord file (for tests and small tools; TensorFlow is not needed)."""
    head = struct.pack("<Q", len(payload))
    return (head + struct.pack("<I", _masked_crc32c(head)) + bytes(payload) +
            struct.pack("<I", _masked_crc32c(payload)))


def make_index(tfrecord_path, index_path, progress=None):
    """Writes DALI's index of a TFRecord file: one '<offset> <size>' line per record (size with
    the 16 bytes of framing). Checks each record's length CRC; returns the number of records.
    progress: None, or True/False to show (or not) a progress line on stderr; None shows it
    where stderr is a terminal."""
    import os

    from ._progress import Progress
    size = os.path.getsize(tfrecord_path)
    bar = Progress(f"indexing {tfrecord_path}", size, show=progress)
    lines = []
    with open(tfrecord_path, "rb") as f:
        offset = 0
        while offset < size:
            head = f.read(12)
            if len(head) < 12:
                raise ValueError(f"{tfrecord_path!r} is truncated: the record header at offset "
                                 f"{offset} needs 12 bytes, the file has {len(head)} left")
            (length,) = struct.unpack("<Q", head[:8])
            (crc,) = struct.unpack("<I", head[8:])
            if _masked_crc32c(head[:8]) != crc:
                raise ValueError(f"{tfrecord_path!r} record at offset {offset}: the CRC of the "
                                 "length field does not match (corrupt, or not a TFRecord file)")
            if offset + 16 + length > size:
                raise ValueError(f"{tfrecord_path!r} record at offset {offset} is truncated: it "
                                 f"claims {length} bytes of data, the file has "
                                 f"{size - offset - 12} left after its header")
            lines.append(f"{offset} {length + 16}\n")
            offset += length + 16
            f.seek(offset)
            bar.update(offset, f", {len(lines)} records")
    bar.close()
    with open(index_path, "w") as out:
        out.writelines(lines)
    return len(lines)


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python -m stoker.tfrecord",
                                description="TFRecord tools for stoker (and DALI).")
    sub = p.add_subparsers(dest="cmd", required=True)
    ix = sub.add_parser("index", help="write the index file readers.tfrecord's index_path takes "
                                      "(DALI's tfrecord2idx format)")
    ix.add_argument("tfrecord", help="the TFRecord file")
    ix.add_argument("index", nargs="?", help="the index file to write (default: TFRECORD.idx)")
    ix.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="show a progress line on stderr (default: when it is a terminal)")
    args = p.parse_args(argv)
    if args.cmd == "index":
        out = args.index or args.tfrecord + ".idx"
        try:
            n = make_index(args.tfrecord, out, progress=args.progress)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"{out}: {n} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
