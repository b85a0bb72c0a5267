"""readers.caffe and readers.caffe2 on LMDB databases written here with the `lmdb` package, their
records serialised by protobuf's own runtime from message types declared in the test (the
fields of caffe.proto's Datum and caffe2.proto's TensorProto(s))."""
import io
import math
import re
import struct

import numpy as np
import pytest
from PIL import Image

import stoker
from stoker import fn, pipeline_def, types

if not hasattr(stoker._schema, "_adapter"):  # the Python call adapters (see the report)
    pytest.skip("this stoker has no operator adapters in _schema.py", allow_module_level=True)

lmdb = pytest.importorskip("lmdb")
pytest.importorskip("google.protobuf")
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402

F = descriptor_pb2.FieldDescriptorProto


def _message_types():
    fd = descriptor_pb2.FileDescriptorProto(name="stoker_test_caffe.proto", package="t",
                                            syntax="proto2")

    def add(msg, fields):
        m = fd.message_type.add(name=msg)
        for num, name, typ, label, extra in fields:
            f = m.field.add(name=name, number=num, type=typ, label=label)
            if extra:
                f.type_name = extra
            if label == F.LABEL_REPEATED and typ not in (F.TYPE_BYTES, F.TYPE_MESSAGE):
                f.options.packed = True

    opt, rep = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    add("Datum", [(1, "channels", F.TYPE_INT32, opt, None), (2, "height", F.TYPE_INT32, opt, None),
                  (3, "width", F.TYPE_INT32, opt, None), (4, "data", F.TYPE_BYTES, opt, None),
                  (5, "label", F.TYPE_INT32, opt, None), (6, "float_data", F.TYPE_FLOAT, rep, None),
                  (7, "encoded", F.TYPE_BOOL, opt, None)])
    add("TensorProto", [(1, "dims", F.TYPE_INT64, rep, None), (2, "data_type", F.TYPE_INT32, opt, None),
                        (3, "float_data", F.TYPE_FLOAT, rep, None), (4, "int32_data", F.TYPE_INT32, rep, None),
                        (5, "byte_data", F.TYPE_BYTES, opt, None), (6, "string_data", F.TYPE_BYTES, rep, None),
                        (9, "double_data", F.TYPE_DOUBLE, rep, None), (10, "int64_data", F.TYPE_INT64, rep, None),
                        (7, "name", F.TYPE_STRING, opt, None)])
    add("TensorProtos", [(1, "protos", F.TYPE_MESSAGE, rep, ".t.TensorProto")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    get = message_factory.GetMessageClass
    return (get(pool.FindMessageTypeByName("t.Datum")),
            get(pool.FindMessageTypeByName("t.TensorProto")),
            get(pool.FindMessageTypeByName("t.TensorProtos")))


Datum, TensorProto, TensorProtos = _message_types()
FLOAT, INT32, BYTE, STRING, INT64 = 1, 2, 3, 4, 10


def jpeg(seed, size=(11, 7)):
    buf = io.BytesIO()
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)).save(buf, "JPEG")
    return buf.getvalue()


def write_db(path, values):
    env = lmdb.open(str(path), map_size=1 << 26)
    with env.begin(write=True) as txn:
        for k, v in enumerate(values):
            txn.put(f"{k:08d}".encode(), v)
    env.close()
    return str(path)


def make_pipe(op, batch_size, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=2)
    def pipe():
        out = getattr(fn.readers, op)(name="Reader", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    return pipe()


def test_caffe_encoded_and_raw(tmp_path):
    rng = np.random.default_rng(0)
    images, values = [], []
    for k in range(7):
        if k % 2 == 0:
            img = jpeg(k)
            values.append(Datum(data=img, label=k * 3, encoded=True).SerializeToString())
        else:
            hwc = rng.integers(0, 255, (4, 5, 3), dtype=np.uint8)
            img = hwc
            chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
            values.append(Datum(channels=3, height=4, width=5, data=chw.tobytes(), label=-k,
                                encoded=False).SerializeToString())
        images.append(img)
    path = write_db(tmp_path / "caffe_db", values)
    # Encoded and raw mixed would give outputs of different dimensions; read them apart.
    with pytest.raises(stoker.DecodeError, match="the records of a database must agree"):
        make_pipe("caffe", 4, path=path).run()  # 1-D encoded and 3-D raw images in one batch
    only_encoded = write_db(tmp_path / "enc_db", values[0::2])
    imgs, labels = make_pipe("caffe", 4, path=only_encoded).run()
    assert labels.dtype == types.INT32
    for i in range(4):
        assert imgs[i].tobytes() == images[2 * i]
        assert labels[i].tolist() == [6 * i]
        assert imgs.source_info(i) == f"{only_encoded}@{i:08d}"
    only_raw = write_db(tmp_path / "raw_db", values[1::2])
    imgs, labels = make_pipe("caffe", 3, path=only_raw).run()
    for i in range(3):
        np.testing.assert_array_equal(imgs[i], images[2 * i + 1])  # CHW in the Datum, HWC out
        assert labels[i].tolist() == [-(2 * i + 1)]
    (lbl,) = make_pipe("caffe", 3, path=only_raw, image_available=False).run()
    assert [lbl[i][0] for i in range(3)] == [-1, -3, -5]


@pytest.mark.parametrize("num_shards", [1, 3])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_record_once_per_epoch_per_shard(tmp_path, num_shards, shuffle):
    n = 10
    path = write_db(tmp_path / "db", [Datum(data=b"x%d" % k, label=k).SerializeToString()
                                      for k in range(n)])
    seen = []
    for shard in range(num_shards):
        size = math.floor((shard + 1) * n / num_shards) - math.floor(shard * n / num_shards)
        p = make_pipe("caffe", size, path=path, shard_id=shard, num_shards=num_shards,
                      random_shuffle=shuffle, initial_fill=3, stick_to_shard=True)
        first = sorted(int(x) for x in p.run()[1].as_array().ravel())
        assert len(set(first)) == size
        assert sorted(int(x) for x in p.run()[1].as_array().ravel()) == first
        seen += first
    assert sorted(seen) == list(range(n))


def test_caffe2_labels_additional_and_bbox(tmp_path):
    values, expect = [], []
    for k in range(5):
        protos = TensorProtos()
        img = jpeg(10 + k)
        protos.protos.add(data_type=STRING, string_data=[img])
        protos.protos.add(data_type=INT32, int32_data=[k % 4, (k + 2) % 4])  # sparse indices
        protos.protos.add(data_type=FLOAT, float_data=[k * 0.5, 1.5])
        protos.protos.add(data_type=INT64, int64_data=[2 ** 40 + k])
        protos.protos.add(data_type=INT32, int32_data=[1, 2, 3, 4 + k, 5, 6, 7, 8])
        values.append(protos.SerializeToString())
        multi_hot = np.zeros(4, np.int32)
        multi_hot[[k % 4, (k + 2) % 4]] = 1
        expect.append((img, multi_hot, [k * 0.5, 1.5], [2 ** 40 + k],
                       [[1, 2, 3, 4 + k], [5, 6, 7, 8]]))
    path = write_db(tmp_path / "c2", values)
    outs = make_pipe("caffe2", 5, path=path, label_type=1, num_labels=4, additional_inputs=2,
                     bbox=True).run()
    assert len(outs) == 5
    img, lbl, f, i64, box = outs
    for k, (e_img, e_lbl, e_f, e_i64, e_box) in enumerate(expect):
        assert img[k].tobytes() == e_img
        np.testing.assert_array_equal(lbl[k], e_lbl)
        np.testing.assert_allclose(f[k], e_f)
        assert i64[k].tolist() == e_i64 and i64.dtype == types.INT64
        assert box[k].tolist() == e_box


def test_caffe2_raw_image_single_and_weighted_labels(tmp_path):
    rng = np.random.default_rng(4)
    values, expect = [], []
    for k in range(3):
        hwc = rng.integers(0, 255, (3, 4, 3), dtype=np.uint8)
        protos = TensorProtos()
        protos.protos.add(data_type=BYTE, dims=[3, 4, 3], byte_data=hwc.tobytes())
        protos.protos.add(data_type=INT32, int32_data=[k])
        values.append(protos.SerializeToString())
        expect.append((hwc, k))
    path = write_db(tmp_path / "raw", values)
    img, lbl = make_pipe("caffe2", 3, path=path).run()
    for k, (hwc, label) in enumerate(expect):
        np.testing.assert_array_equal(img[k], hwc)
        assert lbl[k].tolist() == [label]
    protos = TensorProtos()
    protos.protos.add(data_type=INT32, int32_data=[2, 0])
    protos.protos.add(data_type=FLOAT, float_data=[0.25, 0.75])
    path = write_db(tmp_path / "weighted", [protos.SerializeToString()])
    (lbl,) = make_pipe("caffe2", 1, path=path, image_available=False, label_type=3, num_labels=3).run()
    np.testing.assert_allclose(lbl[0], [0.75, 0.0, 0.25])


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        make_pipe("caffe", 1, path=str(tmp_path / "nope")).build()
    (tmp_path / "notdb").mkdir()
    (tmp_path / "notdb" / "data.mdb").write_bytes(b"\0" * 10000)
    with pytest.raises(ValueError, match="notdb' is not an LMDB database"):
        make_pipe("caffe", 1, path=str(tmp_path / "notdb")).build()
    path = write_db(tmp_path / "bad", [Datum(data=b"ok", label=1).SerializeToString(),
                                       b"\x22\x05ab"])  # data claims 5 bytes, 2 follow
    with pytest.raises(stoker.DecodeError, match=r"bad' key '00000001': caffe.Datum is malformed at "
                                                 r"byte \d+ of the record"):
        make_pipe("caffe", 2, path=path).run()
    p = make_pipe("caffe", 2, path=path, on_error="skip")
    imgs, _ = p.run()
    assert [imgs[i].tobytes() for i in range(2)] == [b"ok", b"ok"]
    path = write_db(tmp_path / "short", [TensorProtos().SerializeToString()])
    with pytest.raises(stoker.DecodeError, match="the record has 0 TensorProtos; the image would be number 1"):
        make_pipe("caffe2", 1, path=path).run()


# ---- damaged databases: liblmdb maps the file and trusts it, so stoker checks the file first
# (src/readers/lmdb.cc). Each copy is opened in a child process, so that a crash is a failed
# test rather than a dead pytest.

_CHILD = r"""
import json, sys
from stoker import fn, pipeline_def
paths, start = json.load(open(sys.argv[1])), int(sys.argv[2])
for i in range(start, len(paths)):
    print("BEGIN", i, flush=True)

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        return tuple(fn.readers.caffe(path=paths[i], name="Reader"))

    try:
        p = pipe()
        p.build()
        for _ in range((p.reader_meta("Reader")["epoch_size"] + 3) // 4):
            p.run()
        out = ["ok", ""]
    except Exception as e:
        out = [type(e).__name__, str(e)]
    print("RESULT", json.dumps([i] + out), flush=True)
"""


def _open_each(paths, tmp_path):
    """{index: (outcome, message)}: the exception's type name (or "ok", or "signal N" where the
    process died) and its message, opening and reading every record of each database."""
    import json as _json
    import os
    import subprocess
    import sys
    listing = tmp_path / "paths.json"
    listing.write_text(_json.dumps([str(p) for p in paths]))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    results, start = {}, 0
    while start < len(paths):
        r = subprocess.run([sys.executable, "-c", _CHILD, str(listing), str(start)],
                           capture_output=True, text=True, timeout=900, env=env)
        last = None
        for line in r.stdout.splitlines():
            if line.startswith("BEGIN "):
                last = int(line.split()[1])
            elif line.startswith("RESULT "):
                i, kind, message = _json.loads(line[len("RESULT "):])
                results[i] = (kind, message)
        if r.returncode == 0:
            break
        assert last is not None and last not in results, r.stderr[-3000:]
        results[last] = (f"signal {-r.returncode}", r.stderr[-1000:])
        start = last + 1
    return results


def _small_db(tmp_path):
    """A valid database of 60 records, 10 of them on overflow pages, in one data file."""
    rng = np.random.default_rng(5)
    env = lmdb.open(str(tmp_path / "valid.mdb"), subdir=False, lock=False, map_size=1 << 24)
    with env.begin(write=True) as txn:
        for k in range(60):
            payload = rng.integers(0, 255, 6000 if k % 6 == 0 else 40 + 3 * k, dtype=np.uint8)
            txn.put(f"{k:08d}".encode(), Datum(data=payload.tobytes(), label=k).SerializeToString())
    env.close()
    return (tmp_path / "valid.mdb").read_bytes()


_PREFIX = r"fn\.readers\.caffe \(<string>:\d+\): "


def test_truncated_databases_give_a_clear_error(tmp_path):
    data = _small_db(tmp_path)
    psize = struct.unpack_from("<I", data, 16 + 24)[0]  # MDB_meta.mm_dbs[0].md_pad
    pages = len(data) // psize
    assert len(data) == pages * psize  # liblmdb writes whole pages, the last one the meta names
    lengths = sorted({0, 10, 100, 151, 152, 2000, psize, 2 * psize - 1, 2 * psize, len(data) - 1} |
                     set(np.random.default_rng(1).integers(0, len(data), 50).tolist()))
    paths = []
    for n in lengths:
        paths.append(tmp_path / f"cut_{n}.mdb")
        paths[-1].write_bytes(data[:n])
    results = _open_each(paths, tmp_path)
    for n, path in zip(lengths, paths):
        if n < 152:
            why = f"it has {n} bytes, fewer than the 152 bytes of LMDB's first meta page"
        elif n < 2 * psize:
            why = f"it has {n} bytes, fewer than the {2 * psize} bytes of LMDB's two meta pages"
        else:
            why = (f"its meta page says the database has {pages} pages of {psize} bytes "
                   f"({pages * psize} bytes), but the file has {n} bytes")
        kind, message = results[lengths.index(n)]
        assert kind == "ValueError", (n, kind, message)
        assert re.fullmatch(_PREFIX + re.escape(f"LMDB database '{path}' is truncated: {why}. "
                                                "Copy or write it again"), message), (n, message)
    # A database folder: the message names the folder.
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "data.mdb").write_bytes(data[:-100])
    ((kind, message),) = _open_each([folder], tmp_path).values()
    assert kind == "ValueError" and message.endswith(
        f"LMDB database '{folder}' is truncated: its meta page says the database has {pages} pages "
        f"of {psize} bytes ({pages * psize} bytes), but the file has {len(data) - 100} bytes. "
        "Copy or write it again")


def _used_bytes(data, psize):
    """The offsets of the bytes liblmdb reads to find records: the meta pages' fields, and the
    headers, node pointers and nodes of the branch and leaf pages."""
    used = []
    for pg in range(len(data) // psize):
        base = pg * psize
        pgno, _, flags, lower, upper = struct.unpack_from("<QHHHH", data, base)
        if pgno != pg:
            continue  # an overflow page's continuation
        if flags == 0x08:
            used += range(base, base + 16 + 136)
        elif flags in (0x01, 0x02):
            used += list(range(base, base + lower)) + list(range(base + upper, base + psize))
    return used


def test_damaged_databases_never_crash(tmp_path):
    """Byte-mutated copies: each opens, or is refused with a message naming the database, or
    reads records that fail to parse (DecodeError); no process dies. Half the mutations hit the
    bytes liblmdb reads to find records, half fall anywhere."""
    data = _small_db(tmp_path)
    psize = struct.unpack_from("<I", data, 16 + 24)[0]
    used = _used_bytes(data, psize)
    rng = np.random.default_rng(11)
    paths = []
    for i in range(200):
        b = bytearray(data)
        for _ in range(int(rng.choice([1, 1, 2, 4]))):
            pos = int(rng.choice(used)) if i % 2 == 0 else int(rng.integers(len(b)))
            b[pos] = int(rng.integers(256))
        paths.append(tmp_path / f"mut_{i}.mdb")
        paths[-1].write_bytes(bytes(b))
    results = _open_each(paths, tmp_path)
    crashed = {i: r for i, r in results.items() if r[0].startswith("signal")}
    assert not crashed, crashed
    outcomes = {kind for kind, _ in results.values()}
    assert outcomes <= {"ok", "ValueError", "DecodeError", "OSError"}, outcomes
    refused = [(i, m) for i, (kind, m) in results.items() if kind == "ValueError"]
    assert len(refused) > 20  # structural damage is refused before liblmdb maps the file
    for i, message in refused:
        assert re.match(_PREFIX + re.escape(f"LMDB database '{paths[i]}' is damaged: ") + "|" +
                        _PREFIX + re.escape(f"'{paths[i]}' is "), message), message


def test_every_record_of_a_deep_database_with_deletions(tmp_path):
    """The check walks the B-tree itself and lists its keys: the same records in the same order
    as liblmdb's cursor, on a tree of several levels with overflow values and deleted records."""
    rng = np.random.default_rng(2)
    env = lmdb.open(str(tmp_path / "deep"), map_size=1 << 28)
    with env.begin(write=True) as txn:
        for k in range(3000):
            size = int(rng.choice([0, 20, 300, 3000, 9000]))
            txn.put(b"%09d" % rng.integers(10 ** 9) + b"k" * 190,  # long keys: more levels
                    Datum(data=rng.integers(0, 255, size, dtype=np.uint8).tobytes(),
                          label=k).SerializeToString())
    with env.begin(write=True) as txn:
        keys = [k for k, _ in txn.cursor()]
        for k in rng.choice(keys, len(keys) // 3, replace=False):
            txn.delete(bytes(k))
    with env.begin() as txn:
        assert txn.stat()["depth"] >= 3
        want = [(k, Datum.FromString(v)) for k, v in txn.cursor()]
    env.close()
    imgs, labels = make_pipe("caffe", len(want), path=str(tmp_path / "deep")).run()
    for i, (key, datum) in enumerate(want):
        assert imgs.source_info(i) == f"{tmp_path / 'deep'}@{key.decode()}"
        assert imgs[i].tobytes() == datum.data and labels[i].tolist() == [datum.label]


def test_message_quoting_a_key_that_is_not_utf8(tmp_path):
    """Messages quote keys as they are; bytes that are not UTF-8 are escaped (they made a bare
    UnicodeDecodeError that hid the message)."""
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 22)
    with env.begin(write=True) as txn:
        txn.put(b"\xffkey", b"\x22\x05ab")  # data claims 5 bytes, 2 follow
    env.close()
    with pytest.raises(stoker.DecodeError) as e:
        make_pipe("caffe", 1, path=str(tmp_path / "db")).run()
    assert re.fullmatch(r"fn\.readers\.caffe \(test_readers_caffe\.py:\d+\).*" +
                        re.escape(f"'{tmp_path / 'db'}' key '\\xffkey': caffe.Datum is malformed at ") +
                        r"byte \d+ of the record.*", str(e.value), re.S), str(e.value)
