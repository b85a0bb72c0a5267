"""readers.tfrecord against TensorFlow (an independent writer and parser, run in a subprocess),
on the real files in ../shared/testdata/records/tfrecord and on records TensorFlow writes."""
import collections
import io
import json
import math
import os
import pathlib
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from PIL import Image

import stoker
import stoker.tfrecord as tfrec
from stoker import fn, ops, pipeline_def

if not hasattr(stoker._schema, "_adapter"):  # the Python call adapters (see the report)
    pytest.skip("this stoker has no operator adapters in _schema.py", allow_module_level=True)

DEEPLAB = "records/tfrecord/deeplab/testing/pascal_voc_seg/val-00000-of-00001.tfrecord"
PETS = "records/tfrecord/object_detection/test_data/pets_examples.record"

# Runs in a fresh interpreter: writes the fixture records with TensorFlow and dumps what
# TensorFlow parses from them (and from the real deeplab file) as JSON.
_TF_SCRIPT = textwrap.dedent(r"""
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    out_dir, deeplab = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(5)

    def example(i):
        n = int(rng.integers(0, 5))  # objects per record, 0 included
        boxes = rng.random((n, 4)).astype(np.float32)
        feats = {
            "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[os.urandom(int(rng.integers(1, 300)))])),
            "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i * 7 - 20])),
            "image/object/bbox": tf.train.Feature(float_list=tf.train.FloatList(value=boxes.ravel().tolist())),
            "image/object/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=rng.integers(-2**40, 2**40, n).tolist())),
            "image/size": tf.train.Feature(int64_list=tf.train.Int64List(value=[i, 2 * i, 3 * i])),
            "image/filename": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"img_{i:03d}.jpg".encode()])),
        }
        if i % 3 == 0:
            feats["image/optional"] = tf.train.Feature(float_list=tf.train.FloatList(value=[i + 0.5]))
        return tf.train.Example(features=tf.train.Features(feature=feats))

    expected = {"files": {}}
    for f in range(3):
        path = os.path.join(out_dir, f"part-{f}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            for i in range(f * 17, f * 17 + 17 - f):  # 17, 16, 15 records
                w.write(example(i).SerializeToString())
    for path in sorted(os.listdir(out_dir)) + [deeplab]:
        full = path if os.path.isabs(path) else os.path.join(out_dir, path)
        if not full.endswith(".tfrecord"):
            continue
        recs = []
        for raw in tf.data.TFRecordDataset(full):
            ex = tf.train.Example.FromString(raw.numpy())
            d = {}
            for k, v in ex.features.feature.items():
                kind = v.WhichOneof("kind")
                vals = list(getattr(v, kind).value)
                d[k] = [kind, [x.hex() for x in vals] if kind == "bytes_list" else vals]
            recs.append(d)
        expected["files"][full] = recs
    json.dump(expected, open(os.path.join(out_dir, "expected.json"), "w"))
""")


@pytest.fixture(scope="module")
def tf_data(tmp_path_factory, testdata):
    pytest.importorskip("tensorflow")
    out = tmp_path_factory.mktemp("tfrecord")
    r = subprocess.run([sys.executable, "-c", _TF_SCRIPT, str(out), str(testdata / DEEPLAB)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    expected = json.load(open(out / "expected.json"))["files"]
    parts = sorted(str(p) for p in out.glob("part-*.tfrecord"))
    return out, parts, expected


def tf_value(rec, name):
    kind, vals = rec[name]
    if kind == "bytes_list":
        return [bytes.fromhex(v) for v in vals]
    return vals


FEATURES = {
    "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
    "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "image/object/bbox": tfrec.VarLenFeature([4], tfrec.float32, 0.0),
    "image/object/class/label": tfrec.VarLenFeature(tfrec.int64, 0),
    "image/size": tfrec.FixedLenFeature([3], tfrec.int64, 0),
    "image/optional": tfrec.FixedLenFeature([1], tfrec.float32, -1.5),
    "image/missing": tfrec.VarLenFeature(tfrec.int64, 42),
    "image/filename": tfrec.FixedLenFeature([], tfrec.string, ""),
}


def make_pipe(batch_size, features=FEATURES, **reader_args):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=3)
    def pipe():
        out = fn.readers.tfrecord(features=features, name="Reader", **reader_args)
        assert isinstance(out, dict) and list(out) == list(features)
        return tuple(out.values())

    return pipe()


def check_sample(outs, i, rec):
    """Compares sample i of the outputs (in FEATURES order) with TensorFlow's parse."""
    enc, label, bbox, cls, size, opt, missing, fname = (o[i] for o in outs)
    assert enc.dtype == np.uint8 and enc.tobytes() == tf_value(rec, "image/encoded")[0]
    assert label.dtype == np.int64 and label.tolist() == tf_value(rec, "image/class/label")
    boxes = np.array(tf_value(rec, "image/object/bbox"), np.float32).reshape(-1, 4)
    assert bbox.dtype == np.float32 and bbox.shape == boxes.shape
    np.testing.assert_array_equal(bbox, boxes)
    assert cls.dtype == np.int64 and cls.tolist() == tf_value(rec, "image/object/class/label")
    assert size.tolist() == tf_value(rec, "image/size")
    if "image/optional" in rec:
        assert opt.tolist() == pytest.approx(tf_value(rec, "image/optional"))
    else:
        assert opt.tolist() == [-1.5]  # FixedLenFeature default fills the shape
    assert missing.tolist() == [42]   # VarLenFeature default: one element
    assert fname.tobytes() == tf_value(rec, "image/filename")[0]


def all_records(parts, expected):
    return [(p, i, rec) for p in parts for i, rec in enumerate(expected[p])]


@pytest.mark.parametrize("use_index", [True, False])
def test_matches_tensorflow_in_file_order(tf_data, use_index):
    out_dir, parts, expected = tf_data
    args = {"path": parts}
    if use_index:
        args["index_path"] = []
        for p in parts:
            assert tfrec.main(["index", p, p + ".idx"]) == 0
            args["index_path"].append(p + ".idx")
    recs = all_records(parts, expected)
    pipe = make_pipe(len(recs), **args)
    outs = pipe.run()
    for i, (path, k, rec) in enumerate(recs):
        check_sample(outs, i, rec)
        assert outs[0].source_info(i).startswith(path + "@")
    assert pipe.epoch_size("Reader") == len(recs) == 48


def test_deeplab_real_file(testdata, tf_data, tmp_path):
    _, _, expected = tf_data
    path = str(testdata / DEEPLAB)
    idx = str(tmp_path / "deeplab.idx")
    subprocess.run([sys.executable, "-m", "stoker.tfrecord", "index", path, idx], check=True,
                   capture_output=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    # The index tool's format is DALI's: '<offset> <size>' per record, back to back.
    lines = [tuple(map(int, l.split())) for l in open(idx)]
    assert lines[0][0] == 0 and len(lines) == 3
    assert all(a[0] + a[1] == b[0] for a, b in zip(lines, lines[1:]))
    assert lines[-1][0] + lines[-1][1] == os.path.getsize(path)
    features = {
        "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
        "image/segmentation/class/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
        "image/height": tfrec.FixedLenFeature([1], tfrec.int64, 0),
        "image/width": tfrec.FixedLenFeature([1], tfrec.int64, 0),
        "image/filename": tfrec.FixedLenFeature((), tfrec.string, ""),
    }
    pipe = make_pipe(3, features=features, path=path, index_path=idx)
    jpeg, png, h, w, name = pipe.run()
    for i, rec in enumerate(expected[path]):
        assert jpeg[i].tobytes() == tf_value(rec, "image/encoded")[0]
        assert name[i].tobytes() == tf_value(rec, "image/filename")[0]
        img = Image.open(io.BytesIO(jpeg[i].tobytes()))
        mask = Image.open(io.BytesIO(png[i].tobytes()))
        assert img.format == "JPEG" and mask.format == "PNG"
        assert (img.height, img.width) == (h[i][0], w[i][0]) == (mask.height, mask.width)
        assert [h[i][0]] == tf_value(rec, "image/height")


def test_decodes_in_the_pipeline(testdata):
    if "decoders.image" not in stoker._schema.SCHEMAS:
        pytest.skip("no image decoder in this build")
    path = str(testdata / DEEPLAB)

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        out = fn.readers.tfrecord(path=path, features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/height": tfrec.FixedLenFeature([1], tfrec.int64, 0)})
        return fn.decoders.image(out["image/encoded"]), out["image/height"]

    images, heights = pipe().run()
    for i in range(2):
        assert images[i].shape[0] == heights[i][0] and images[i].shape[2] == 3


@pytest.mark.parametrize("num_shards", [1, 2, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_record_once_per_epoch_per_shard(tf_data, num_shards, shuffle):
    out_dir, parts, expected = tf_data
    recs = all_records(parts, expected)
    n = len(recs)
    by_name = {tf_value(rec, "image/filename")[0]: rec for _, _, rec in recs}
    seen_all = []
    for shard in range(num_shards):
        size = math.floor((shard + 1) * n / num_shards) - math.floor(shard * n / num_shards)
        pipe = make_pipe(size, path=parts, shard_id=shard, num_shards=num_shards,
                         random_shuffle=shuffle, initial_fill=8, stick_to_shard=True)
        for epoch in range(2):
            outs = pipe.run()
            names = [outs[7][i].tobytes() for i in range(size)]
            assert len(set(names)) == size, "a record repeated within an epoch"
            for i, nm in enumerate(names):
                check_sample(outs, i, by_name[nm])
            if epoch == 0:
                seen_all += names
                first = names
            else:
                assert sorted(names) == sorted(first)
    assert sorted(seen_all) == sorted(by_name)


def test_legacy_ops_api(tf_data):
    _, parts, expected = tf_data

    class Pipe(stoker.Pipeline):
        def __init__(self):
            super().__init__(batch_size=4, num_threads=1, device_id=None, seed=1)
            self.input = ops.TFRecordReader(path=parts[0], features={
                "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})

        def define_graph(self):
            return self.input(name="Reader")["image/class/label"]

    (labels,) = Pipe().run()
    assert [labels[i][0] for i in range(4)] == [tf_value(r, "image/class/label")[0]
                                               for r in expected[parts[0]][:4]]


def test_feature_declarations():
    f = tfrec.FixedLenFeature([2, 3], tfrec.float32, 1)
    assert f._encode() == "fixed;float32;2,3;1.0"
    assert tfrec.VarLenFeature(tfrec.int64, -3)._encode() == "var;int64;*;-3"
    assert tfrec.VarLenFeature([2], tfrec.float32, 0.0)._encode() == "var;float32;2;0.0"
    assert tfrec.FixedLenFeature((), tfrec.string, "ab")._encode() == "fixed;string;;6162"
    assert tfrec.VarLenFeature(tfrec.string, b"\x00")._encode() == "var;string;*;00"
    with pytest.raises(TypeError, match="dtype"):
        tfrec.FixedLenFeature([1], "complex64", 0)
    with pytest.raises(ValueError, match="tensors of strings"):
        tfrec.FixedLenFeature([2], tfrec.string, "")
    with pytest.raises(TypeError, match="default of an int64"):
        tfrec.FixedLenFeature([1], tfrec.int64, 0.5)


def test_argument_errors(tf_data, tmp_path):
    _, parts, _ = tf_data
    with pytest.raises(TypeError, match="features"):
        make_pipe(1, features=[("a", tfrec.FixedLenFeature([1], tfrec.int64, 0))], path=parts)
    with pytest.raises(TypeError, match=r"features\['a'\] must be made with"):
        make_pipe(1, features={"a": 3}, path=parts)
    with pytest.raises(ValueError, match="one index file per TFRecord file"):
        make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)}, path=parts,
                  index_path=[parts[0] + ".nope"]).build()
    with pytest.raises(FileNotFoundError, match=r"index file .*nope.idx' does not exist.*stoker.tfrecord index"):
        make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)}, path=parts[:1],
                  index_path=[str(tmp_path / "nope.idx")]).build()
    with pytest.raises(FileNotFoundError, match="missing.tfrecord"):
        make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)},
                  path=[str(tmp_path / "missing.tfrecord")]).build()


def test_index_errors_name_file_and_line(tf_data, tmp_path):
    _, parts, _ = tf_data
    idx = tmp_path / "bad.idx"
    idx.write_text("0 100\nfoo bar\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 2: it is not two integers"):
        make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)}, path=parts[:1],
                  index_path=[str(idx)]).build()
    idx.write_text(f"0 {os.path.getsize(parts[0]) + 1}\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 1: .*past the end"):
        make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)}, path=parts[:1],
                  index_path=[str(idx)]).build()
    # An index that points into the middle of a record: caught by the length CRC.
    idx.write_text("8 100\n")
    pipe = make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)}, path=parts[:1],
                     index_path=[str(idx)])
    with pytest.raises(stoker.DecodeError, match=r"part-0.tfrecord' record at offset 8: the CRC of the length"):
        pipe.run()


def record_offsets(path):
    offs, data, off = [], open(path, "rb").read(), 0
    while off < len(data):
        (n,) = struct.unpack("<Q", data[off:off + 8])
        offs.append((off, n))
        off += n + 16
    return offs


def test_record_frame_writes_what_tensorflow_writes(tf_data):
    _, parts, _ = tf_data
    data = open(parts[0], "rb").read()
    rebuilt = b"".join(tfrec.record_frame(data[off + 12:off + 12 + n])
                       for off, n in record_offsets(parts[0]))
    assert rebuilt == data


def test_corrupt_data_crc_names_file_and_offset(tf_data, tmp_path):
    _, parts, _ = tf_data
    data = bytearray(open(parts[1], "rb").read())
    off, n = record_offsets(parts[1])[5]
    data[off + 12 + n // 2] ^= 0x40
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    pipe = make_pipe(16, path=[str(bad)])
    with pytest.raises(stoker.DecodeError,
                       match=rf"bad.tfrecord' record at offset {off}: the CRC of the data does not match"):
        pipe.run()


def test_real_corrupt_file_pets(testdata):
    # pets_examples.record in the shared test data has lost bytes (every CR-LF pair in the binary
    # was turned into LF): TensorFlow's own reader fails on it too ("corrupted record at 12").
    path = str(testdata / PETS)
    pipe = make_pipe(1, features={"image/encoded": tfrec.FixedLenFeature((), tfrec.string, "")},
                     path=path)
    with pytest.raises(stoker.DecodeError, match=r"pets_examples.record' record at offset 18446: "
                                                 r"the CRC of the length field does not match"):
        pipe.build()


def test_truncated_file(tf_data, tmp_path):
    _, parts, _ = tf_data
    data = open(parts[0], "rb").read()
    off, n = record_offsets(parts[0])[-1]
    bad = tmp_path / "trunc.tfrecord"
    bad.write_bytes(data[:off + 12 + n // 2])
    with pytest.raises(stoker.DecodeError, match=rf"trunc.tfrecord' record at offset {off} is truncated"):
        make_pipe(1, path=[str(bad)]).build()
    bad.write_bytes(data[:off + 5])
    with pytest.raises(stoker.DecodeError, match=rf"trunc.tfrecord' is truncated: the record header at offset {off}"):
        make_pipe(1, path=[str(bad)]).build()
    # The index tool reports the same.
    with pytest.raises(ValueError, match=rf"record header at offset {off}"):
        tfrec.make_index(str(bad), str(tmp_path / "t.idx"))


def test_malformed_example_names_file_offset_and_byte(tmp_path):
    payload = b"\x0a\x05\x0a\x03\x0a\x01"  # Example.features claims 5 bytes, 4 follow
    payload = payload[:-1] + b"\x0a"
    head = struct.pack("<Q", len(payload))
    rec = head + struct.pack("<I", tfrec._masked_crc32c(head)) + payload + \
        struct.pack("<I", tfrec._masked_crc32c(payload))
    path = tmp_path / "malformed.tfrecord"
    path.write_bytes(rec)
    pipe = make_pipe(1, features={"a": tfrec.VarLenFeature(tfrec.int64, 0)}, path=[str(path)])
    with pytest.raises(stoker.DecodeError, match=r"malformed.tfrecord' record at offset 0: "
                                                 r"tf.train.Example is malformed at byte \d+"):
        pipe.run()


def test_declaration_mismatch_errors(tf_data):
    _, parts, _ = tf_data
    pipe = make_pipe(2, features={"image/size": tfrec.FixedLenFeature([2], tfrec.int64, 0)},
                     path=parts[:1])
    with pytest.raises(stoker.DecodeError, match=r"part-0.tfrecord' record at offset 0: feature "
                                                 r"'image/size': the record holds 3 values, but the "
                                                 r"FixedLenFeature has shape \(2,\)"):
        pipe.run()
    pipe = make_pipe(2, features={"image/size": tfrec.VarLenFeature(tfrec.float32, 0.0)},
                     path=parts[:1])
    with pytest.raises(stoker.DecodeError, match="holds a int64_list, but the feature is declared float32"):
        pipe.run()
    pipe = make_pipe(2, features={"image/size": tfrec.VarLenFeature([2], tfrec.int64, 0)},
                     path=parts[:1])
    with pytest.raises(stoker.DecodeError, match=r"not a multiple of the partial shape \(2,\)"):
        pipe.run()


def test_on_error_skip(tf_data, tmp_path):
    _, parts, expected = tf_data
    data = bytearray(open(parts[0], "rb").read())
    off, n = record_offsets(parts[0])[3]
    data[off + 12 + 1] ^= 0xFF
    bad = tmp_path / "skip.tfrecord"
    bad.write_bytes(bytes(data))
    pipe = make_pipe(16, path=[str(bad)], on_error="skip")
    outs = pipe.run()
    names = [outs[7][i].tobytes() for i in range(16)]
    good = [tf_value(r, "image/filename")[0] for k, r in enumerate(expected[parts[0]]) if k != 3]
    assert set(names) == set(good)  # 16 good records, the bad one never delivered
    stats = pipe.error_stats()
    (st,) = stats.values()
    assert st["skipped"] == 1 and st["samples"] == [f"{bad}@{off}"]


def test_index_tool_progress_line(tmp_path, capsys):
    """`python -m stoker.tfrecord index` shows a progress line on a terminal (--progress forces
    it, --no-progress silences it), cleared before the result is printed."""
    path = tmp_path / "p.tfrecord"
    path.write_bytes(b"".join(tfrec.record_frame(bytes([k]) * (100 + k)) for k in range(50)))
    assert tfrec.main(["index", str(path), "--progress"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{path}.idx: 50 records\n"
    assert f"indexing {path}: 100% (" in err and ", 50 records, " in err
    assert err.endswith("\r")  # the line is wiped, so what follows starts clean
    assert tfrec.main(["index", str(path), str(tmp_path / "q.idx"), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{tmp_path / 'q.idx'}: 50 records\n" and err == ""
    assert (tmp_path / "q.idx").read_text() == (tmp_path / "p.tfrecord.idx").read_text()
