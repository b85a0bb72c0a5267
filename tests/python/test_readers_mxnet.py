"""readers.mxnet on RecordIO files written here by an independent writer that follows dmlc-core's
documented framing (recordio.h: magic 0xced7230a, lrec = cflag << 29 | length, 4-byte padding,
records split where the magic occurs) and MXNet's image record layout (mx.recordio.pack's
IRHeader '<IfQQ', then `flag` float labels, then the image), with im2rec's .idx files."""
import io
import math
import struct

import numpy as np
import pytest
from PIL import Image

import stoker
from stoker import fn, pipeline_def, types

MAGIC = 0xCED7230A


def write_part(out, cflag, data):
    out.write(struct.pack("<II", MAGIC, (cflag << 29) | len(data)))
    out.write(data)
    out.write(b"\0" * (-len(data) % 4))


def write_record(out, data):
    """dmlc RecordIOWriter::WriteRecord: split the data at 4-byte aligned magic numbers."""
    magic = struct.pack("<I", MAGIC)
    parts, start = [], 0
    for i in range(0, len(data) - 3, 4):
        if data[i:i + 4] == magic:
            parts.append(data[start:i])
            start = i + 4
    parts.append(data[start:])
    if len(parts) == 1:
        write_part(out, 0, parts[0])
        return
    for k, p in enumerate(parts):
        write_part(out, 1 if k == 0 else 3 if k == len(parts) - 1 else 2, p)


def pack(label, image, rid=0):
    """mx.recordio.pack: IRHeader(flag, label, id, id2), labels, image bytes."""
    if np.ndim(label) == 0:
        return struct.pack("<IfQQ", 0, float(label), rid, 0) + image
    label = np.asarray(label, np.float32)
    return struct.pack("<IfQQ", label.size, 0.0, rid, 0) + label.tobytes() + image


def jpeg(seed, size=(13, 9)):
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)).save(buf, "JPEG")
    return buf.getvalue()


def write_rec(path, records, index=True):
    """records: [(label, image bytes)]; writes .rec and (im2rec's) .idx '<key>\\t<offset>'."""
    offsets = []
    with open(path, "wb") as f:
        for k, (label, img) in enumerate(records):
            offsets.append(f.tell())
            write_record(f, pack(label, img, k))
    idx = str(path) + ".idx"
    if index:
        with open(idx, "w") as f:
            for k, off in enumerate(offsets):
                f.write(f"{k}\t{off}\n")
    return str(path), idx, offsets


@pytest.fixture(scope="module")
def recfiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("rec")
    magic = struct.pack("<I", MAGIC)
    recs_a = [(float(k), jpeg(k)) for k in range(10)]
    # Records with the magic number inside (aligned, so the writer splits them), several times
    # and at the very end; multi-value labels.
    recs_b = [([1.0, 2.0, 3.0], b"abcd" + magic + b"efgh"),
              (7.0, b"\x01\x02\x03\x04" + magic + magic + b"xyz"),
              ([0.5], b"\x00" * 8 + magic),
              (-1.0, jpeg(99, (31, 17))),
              ([4.0, 5.0], magic)]
    a = write_rec(d / "a.rec", recs_a)
    b = write_rec(d / "b.rec", recs_b)
    return [(a, recs_a), (b, recs_b)]


def make_pipe(batch_size, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=6)
    def pipe():
        return fn.readers.mxnet(name="Reader", **kw)

    return pipe()


def label_of(label):
    return [float(label)] if np.ndim(label) == 0 else [float(x) for x in label]


@pytest.mark.parametrize("use_index", [True, False])
def test_records_labels_and_multipart(recfiles, use_index):
    paths = [r[0][0] for r in recfiles]
    expected = [rec for _, recs in recfiles for rec in recs]
    kw = {"index_path": [r[0][1] for r in recfiles]} if use_index else {}
    pipe = make_pipe(len(expected), path=paths, **kw)
    data, labels = pipe.run()
    assert data.dtype == types.UINT8 and labels.dtype == types.FLOAT
    for i, (label, img) in enumerate(expected):
        assert data[i].tobytes() == img
        assert labels[i].tolist() == pytest.approx(label_of(label))
    assert data.source_info(0) == paths[0] + "@0"
    assert pipe.epoch_size("Reader") == 15
    # The images decode.
    Image.open(io.BytesIO(data[3].tobytes())).load()


def test_decodes_in_the_pipeline(recfiles):
    if "decoders.image" not in stoker._schema.SCHEMAS:
        pytest.skip("no image decoder in this build")
    (path, idx, _), recs = recfiles[0]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.mxnet(path=path, index_path=idx)
        return fn.decoders.image(jpegs), labels

    images, labels = pipe().run()
    for i in range(4):
        assert images[i].shape == (9, 13, 3)
        assert labels[i][0] == recs[i][0]


@pytest.mark.parametrize("num_shards", [1, 2, 4])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_record_once_per_epoch_per_shard(recfiles, num_shards, shuffle):
    paths = [r[0][0] for r in recfiles]
    idx = [r[0][1] for r in recfiles]
    n = 15
    seen = []
    for shard in range(num_shards):
        size = math.floor((shard + 1) * n / num_shards) - math.floor(shard * n / num_shards)
        pipe = make_pipe(size, path=paths, index_path=idx, shard_id=shard, num_shards=num_shards,
                         random_shuffle=shuffle, initial_fill=5, stick_to_shard=True)
        first = None
        for _ in range(2):
            data, _ = pipe.run()
            srcs = sorted(data.source_info(i) for i in range(size))
            assert len(set(srcs)) == size
            if first is None:
                first = srcs
                seen += srcs
            assert srcs == first
    assert len(set(seen)) == n


def test_corrupt_records_name_file_and_offset(recfiles, tmp_path):
    (path, idx, offsets), recs = recfiles[0]
    raw = bytearray(open(path, "rb").read())
    bad = bytearray(raw)
    bad[offsets[4]] ^= 0xFF  # the magic of record 4
    p = tmp_path / "bad.rec"
    p.write_bytes(bytes(bad))
    pipe = make_pipe(10, path=str(p), index_path=idx)
    with pytest.raises(stoker.DecodeError, match=rf"bad.rec' record at offset {offsets[4]}: magic number "
                                                 r"0x\w+ instead of 0xced7230a"):
        pipe.run()
    with pytest.raises(stoker.DecodeError, match=rf"bad.rec' record at offset {offsets[4]}: magic number"):
        make_pipe(1, path=str(p)).build()  # scanning without an index finds it too
    # A length that runs past the record.
    bad = bytearray(raw)
    struct.pack_into("<I", bad, offsets[2] + 4, 100000)
    p.write_bytes(bytes(bad))
    with pytest.raises(stoker.DecodeError, match=rf"bad.rec' record at offset {offsets[2]}: a part of 100000 "
                                                 r"bytes .* runs past the record"):
        make_pipe(10, path=str(p), index_path=idx).run()
    # Truncated file.
    p.write_bytes(bytes(raw[:offsets[-1] + 20]))
    with pytest.raises(stoker.DecodeError, match=rf"bad.rec' is truncated: the RecordIO record at offset "
                                                 rf"{offsets[-1]} has a part of"):
        make_pipe(1, path=str(p)).build()
    # A header that claims more labels than the record holds.
    q = tmp_path / "labels.rec"
    with open(q, "wb") as f:
        write_record(f, struct.pack("<IfQQ", 1000, 0.0, 0, 0) + b"abcd")
    with pytest.raises(stoker.DecodeError, match=r"labels.rec' record at offset 0: the image record header "
                                                 r"says 1000 labels follow it"):
        make_pipe(1, path=str(q)).run()


def test_index_errors(recfiles, tmp_path):
    (path, _, _), _ = recfiles[0]
    idx = tmp_path / "bad.idx"
    idx.write_text("0\t0\n1\tabc\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 2: it is not two integers"):
        make_pipe(1, path=path, index_path=str(idx)).build()
    idx.write_text("0\t6\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 1: offset 6 is not a 4-byte aligned"):
        make_pipe(1, path=path, index_path=str(idx)).build()
    with pytest.raises(FileNotFoundError, match="nope.idx"):
        make_pipe(1, path=path, index_path=str(tmp_path / "nope.idx")).build()


def test_on_error_skip(recfiles, tmp_path):
    (path, idx, offsets), recs = recfiles[0]
    bad = bytearray(open(path, "rb").read())
    bad[offsets[7]] ^= 0x01
    p = tmp_path / "skip.rec"
    p.write_bytes(bytes(bad))
    pipe = make_pipe(9, path=str(p), index_path=idx, on_error="skip")
    data, labels = pipe.run()
    assert sorted(labels[i][0] for i in range(9)) == [k for k in range(10) if k != 7]
    (st,) = pipe.error_stats().values()
    assert st["skipped"] == 1 and st["samples"] == [f"{p}@{offsets[7]}"]
