"""readers.webdataset against Python's tarfile (an independent tar reader and writer), on the
archives in ../shared/testdata/records/webdataset and on archives written here."""
import gzip
import io
import math
import os
import tarfile

import numpy as np
import pytest
from PIL import Image

import stoker
from stoker import fn, pipeline_def, types

if not hasattr(stoker._schema, "_adapter"):  # the Python call adapters (see the report)
    pytest.skip("this stoker has no operator adapters in _schema.py", allow_module_level=True)

WDS = "records/webdataset"


def tar_samples(path):
    """(key, {ext: bytes}) in archive order, grouped as webdataset does, with tarfile."""
    out = []
    with tarfile.open(path) as t:
        for m in t:
            if not m.isfile():
                continue
            slash = m.name.rfind("/")
            dot = m.name.find(".", slash + 1)
            key, ext = (m.name, "") if dot < 0 else (m.name[:dot], m.name[dot + 1:])
            if not key or key.endswith("/"):
                continue
            if not out or out[-1][0] != key:
                out.append((key, {}))
            out[-1][1].setdefault(ext, t.extractfile(m).read())
    return out


def write_index(tar_path, idx_path, version="v1.2"):
    """DALI's wds2idx format, written from tarfile's offsets."""
    rows, last = [], None
    with tarfile.open(tar_path) as t:
        for m in t:
            if not m.isfile():
                continue
            slash = m.name.rfind("/")
            dot = m.name.find(".", slash + 1)
            key, ext = m.name[:dot], m.name[dot + 1:]
            comp = [ext, str(m.offset_data), str(m.size)] + ([m.name] if version == "v1.2" else [])
            if key != last:
                rows.append([])
                last = key
            rows[-1] += comp
    with open(idx_path, "w") as f:
        f.write(f"{version} {len(rows)}\n")
        for r in rows:
            f.write(" ".join(r) + "\n")


def make_tar(path, files, fmt=tarfile.GNU_FORMAT):
    with tarfile.open(path, "w", format=fmt) as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return str(path)


@pytest.fixture(scope="module")
def sample_tar(testdata, tmp_path_factory):
    """sample.tgz, gunzipped: DALI reads plain tar only."""
    out = tmp_path_factory.mktemp("wds") / "sample.tar"
    out.write_bytes(gzip.decompress((testdata / WDS / "sample.tgz").read_bytes()))
    return str(out)


def make_pipe(batch_size, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=11)
    def pipe():
        out = fn.readers.webdataset(name="Reader", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    return pipe()


def test_compressed_archive_is_refused_with_the_fix(testdata):
    with pytest.raises(ValueError, match=r"sample.tgz' is a gzip-compressed archive.*decompress"):
        make_pipe(1, paths=str(testdata / WDS / "sample.tgz"), ext=["png", "cls"]).build()


@pytest.mark.parametrize("index", [None, "v1.2", "v1.1"])
def test_png_cls_samples_match_tarfile(sample_tar, tmp_path, index):
    expected = tar_samples(sample_tar)
    assert len(expected) == 90
    kw = {}
    if index:
        idx = tmp_path / "sample.idx"
        write_index(sample_tar, idx, index)
        kw["index_paths"] = [str(idx)]
    pipe = make_pipe(90, paths=[sample_tar], ext=["png", "cls"], **kw)
    png, cls = pipe.run()
    assert png.dtype == types.UINT8 and cls.dtype == types.UINT8
    for i, (key, comps) in enumerate(expected):
        assert png[i].tobytes() == comps["png"]
        assert cls[i].tobytes() == comps["cls"]
        assert png.source_info(i).startswith(sample_tar + "@")
        if index != "v1.1":
            assert png.source_info(i).endswith(":" + key + ".png")
        img = Image.open(io.BytesIO(png[i].tobytes()))
        img.load()
    assert pipe.epoch_size("Reader") == 90


def test_mpdata(testdata):
    path = str(testdata / WDS / "mpdata.tar")
    expected = tar_samples(path)
    pipe = make_pipe(len(expected), paths=path, ext="mp")
    (mp,) = pipe.run()
    assert [mp[i].tobytes() for i in range(len(expected))] == [c["mp"] for _, c in expected]


@pytest.mark.parametrize("num_shards", [1, 2, 4])
@pytest.mark.parametrize("shuffle", [False, True])
def test_every_sample_once_per_epoch_per_shard(sample_tar, testdata, num_shards, shuffle):
    paths = [sample_tar, str(testdata / WDS / "mpdata.tar")]
    expected = [c.get("png", c.get("mp")) for p in paths for _, c in tar_samples(p)]
    n = len(expected)
    seen = []
    for shard in range(num_shards):
        size = math.floor((shard + 1) * n / num_shards) - math.floor(shard * n / num_shards)
        pipe = make_pipe(size, paths=paths, ext=["png;mp", "cls"], shard_id=shard,
                         num_shards=num_shards, random_shuffle=shuffle, initial_fill=32,
                         stick_to_shard=True)
        first = None
        for epoch in range(2):
            data, cls = pipe.run()
            got = [data[i].tobytes() for i in range(size)]
            srcs = [data.source_info(i) for i in range(size)]
            assert len(set(srcs)) == size
            if first is None:
                first = srcs
                seen += got
            else:
                assert sorted(srcs) == sorted(first)
    assert sorted(seen) == sorted(expected)


def test_missing_component_behavior(tmp_path):
    files = []
    for i in range(6):
        files.append((f"s{i}.jpg", bytes([i]) * (i + 1)))
        if i % 2 == 0:
            files.append((f"s{i}.cls", str(i).encode()))
    path = make_tar(tmp_path / "m.tar", files)
    data, cls = make_pipe(6, paths=path, ext=["jpg", "cls"]).run()  # default: empty
    for i in range(6):
        assert data[i].tobytes() == bytes([i]) * (i + 1)
        assert cls[i].tobytes() == (str(i).encode() if i % 2 == 0 else b"")
        assert cls[i].shape == ((1,) if i % 2 == 0 else (0,))
    pipe = make_pipe(3, paths=path, ext=["jpg", "cls"], missing_component_behavior="skip")
    data, cls = pipe.run()
    assert pipe.epoch_size("Reader") == 3
    assert [cls[i].tobytes() for i in range(3)] == [b"0", b"2", b"4"]
    with pytest.raises(ValueError, match=r"m.tar' sample component 's1.jpg' at offset \d+: the sample "
                                         r"has no component for output 1 \(ext 'cls'\)"):
        make_pipe(3, paths=path, ext=["jpg", "cls"], missing_component_behavior="error").build()
    with pytest.raises(ValueError, match="missing_component_behavior"):
        make_pipe(3, paths=path, ext=["jpg"], missing_component_behavior="fill").build()


def test_extension_sets_case_and_first_match(tmp_path):
    path = make_tar(tmp_path / "c.tar", [
        ("a.JPG", b"A1"), ("a.txt", b"t"),
        ("b.png", b"B1"), ("b.jpg", b"B2"),
        ("dir/c.seg.png", b"C1"), ("dir/c.png", b"C2"),
        (".hidden.jpg", b"H"),
    ])
    img, seg = make_pipe(3, paths=path, ext=["jpg;png", "seg.png"],
                         case_sensitive_extensions=False).run()
    assert [img[i].tobytes() for i in range(3)] == [b"A1", b"B1", b"C2"]
    assert [seg[i].tobytes() for i in range(3)] == [b"", b"", b"C1"]
    # Case-sensitive (the default): 'JPG' does not match 'jpg'.
    (img,) = make_pipe(3, paths=path, ext="jpg", missing_component_behavior="skip").run()[:1]
    assert img[0].tobytes() == b"B2"


def test_dtypes(tmp_path):
    arrs = [np.arange(k * 3, dtype=np.float32) * 0.5 for k in range(1, 5)]
    files = []
    for i, a in enumerate(arrs):
        files += [(f"{i}.f32", a.tobytes()), (f"{i}.i16", np.arange(i + 2, dtype=np.int16).tobytes())]
    path = make_tar(tmp_path / "d.tar", files)
    f32, i16 = make_pipe(4, paths=path, ext=["f32", "i16"], dtypes=[types.FLOAT, types.INT16]).run()
    assert f32.dtype == types.FLOAT and i16.dtype == types.INT16
    for i, a in enumerate(arrs):
        np.testing.assert_array_equal(f32[i], a)
        np.testing.assert_array_equal(i16[i], np.arange(i + 2, dtype=np.int16))
    with pytest.raises(ValueError, match=r"'0.i16' at offset \d+: its 4 bytes are not a whole number "
                                         r"of float64 elements"):
        make_pipe(4, paths=path, ext=["f32", "i16"], dtypes=[types.FLOAT, types.FLOAT64]).build()
    with pytest.raises(ValueError, match="dtypes"):
        make_pipe(4, paths=path, ext=["f32", "i16"], dtypes=[types.FLOAT]).build()


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
def test_long_names(tmp_path, fmt):
    long_dir = "d" * 90 + "/" + "e" * 50
    names = [f"{long_dir}/sample{i}.bin" for i in range(3)]
    if fmt != tarfile.USTAR_FORMAT:
        names.append("x" * 150 + ".bin")  # needs a GNU long name or a pax path
    path = make_tar(tmp_path / "l.tar", [(n, n.encode()) for n in names], fmt)
    (data,) = make_pipe(len(names), paths=path, ext="bin").run()
    assert [data[i].tobytes() for i in range(len(names))] == [n.encode() for n in names]
    assert data.source_info(0).endswith(":" + names[0])


def test_truncated_archive_names_file_and_offset(sample_tar, tmp_path):
    raw = open(sample_tar, "rb").read()
    with tarfile.open(sample_tar) as t:
        members = t.getmembers()
    m = members[40]
    cut = tmp_path / "cut.tar"
    cut.write_bytes(raw[:m.offset_data + m.size // 2])
    with pytest.raises(stoker.DecodeError, match=rf"cut.tar' is truncated: the tar entry '{m.name}' "
                                                 rf"at offset {m.offset} has {m.size} bytes"):
        make_pipe(1, paths=str(cut), ext="png").build()
    cut.write_bytes(raw[:m.offset + 100])
    with pytest.raises(stoker.DecodeError, match=rf"cut.tar' is truncated: the tar header at offset {m.offset}"):
        make_pipe(1, paths=str(cut), ext="png").build()
    bad = bytearray(raw)
    bad[m.offset + 10] ^= 0x21
    cut.write_bytes(bytes(bad))
    with pytest.raises(stoker.DecodeError, match=rf"cut.tar' tar header at offset {m.offset}: the header checksum"):
        make_pipe(1, paths=str(cut), ext="png").build()


def test_archive_truncated_after_build(sample_tar, tmp_path):
    # The archive shrinks between listing and reading: the read error names file and offset,
    # and on_error='skip' delivers the samples still there.
    copy = tmp_path / "shrink.tar"
    copy.write_bytes(open(sample_tar, "rb").read())
    expected = tar_samples(str(copy))
    with tarfile.open(copy) as t:
        last_png = [m for m in t.getmembers() if m.name.endswith(".png")][-1]
    strict = make_pipe(90, paths=str(copy), ext="png")
    lenient = make_pipe(89, paths=str(copy), ext="png", on_error="skip")
    strict.build()
    lenient.build()
    os.truncate(copy, last_png.offset_data + 1)
    with pytest.raises(stoker.DecodeError, match=rf"shrink.tar' is truncated: the sample component at "
                                                 rf"offset {last_png.offset_data}"):
        strict.run()
    (png,) = lenient.run()
    assert [png[i].tobytes() for i in range(89)] == [c["png"] for _, c in expected[:89]]


def test_index_errors(sample_tar, tmp_path):
    idx = tmp_path / "bad.idx"
    idx.write_text("v1.2 2\npng 512 306 10.png\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 3: the index ends after 1 of the 2 samples"):
        make_pipe(1, paths=sample_tar, ext="png", index_paths=str(idx)).build()
    idx.write_text("v1.2 1\npng 100 306 10.png\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 2: offset 100 is not a multiple"):
        make_pipe(1, paths=sample_tar, ext="png", index_paths=str(idx)).build()
    idx.write_text(f"v1.2 1\npng 512 {os.path.getsize(sample_tar)} 10.png\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 2: .*past the end of"):
        make_pipe(1, paths=sample_tar, ext="png", index_paths=str(idx)).build()
    idx.write_text("v2.0 1\n")
    with pytest.raises(ValueError, match=r"bad.idx' line 1: unsupported index version 'v2.0'"):
        make_pipe(1, paths=sample_tar, ext="png", index_paths=str(idx)).build()
    with pytest.raises(ValueError, match="one index file per archive"):
        make_pipe(1, paths=[sample_tar, sample_tar], ext="png", index_paths=str(idx)).build()
