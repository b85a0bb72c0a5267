"""Record files and index files that lie, as the fuzzers (fuzz/) found them: each is refused with
an error that names the file and says what is wrong, of the documented kind (DecodeError for the
data, ValueError for an index), without a large allocation, a crash or an internal error.
Each case is one fuzz finding, fixed in the parser's own file (see fuzz/README.md)."""
import re
import struct

import pytest

import stoker
import stoker.tfrecord as tfrec
from stoker import fn, pipeline_def

if not hasattr(stoker._schema, "_adapter"):  # the Python call adapters (as the reader tests)
    pytest.skip("this stoker has no operator adapters in _schema.py", allow_module_level=True)

from test_bad_data import peak_rss_growth  # noqa: E402


def _example_with_label(v):
    value = b"\x1a" + bytes([2]) + b"\x08" + bytes([v])         # Feature{int64_list{value: v}}
    entry = b"\x0a\x05label" + b"\x12" + bytes([len(value)]) + value
    features = b"\x0a" + bytes([len(entry)]) + entry
    return b"\x0a" + bytes([len(features)]) + features


def _pipe(reader, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        out = reader(**kw)
        if isinstance(out, dict):
            return tuple(out.values())
        return tuple(out) if isinstance(out, list) else out
    return pipe()


def test_tfrecord_header_near_the_end_claiming_2_to_the_63_bytes(tmp_path):
    """12..15 bytes left after a header: any claimed length passed (unsigned arithmetic), and
    2^63 became a negative record size (an internal error)."""
    head = struct.pack("<Q", 1 << 63)
    path = tmp_path / "lying.tfrecord"
    path.write_bytes(tfrec.record_frame(_example_with_label(3)) + head + struct.pack("<I", tfrec._masked_crc32c(head)))
    p = _pipe(fn.readers.tfrecord, path=[str(path)],
              features={"label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
    with pytest.raises(stoker.DecodeError, match=r"lying.tfrecord' record at offset \d+ is truncated: "
                                                 r"it claims 9223372036854775808 bytes"):
        p.build()
        p.run()


def test_tfrecord_index_whose_offset_plus_size_overflows(tmp_path):
    data = tmp_path / "one.tfrecord"
    data.write_bytes(tfrec.record_frame(_example_with_label(3)))
    idx = tmp_path / "one.idx"
    idx.write_text("9223372036854775807 16\n")
    p = _pipe(fn.readers.tfrecord, path=[str(data)], index_path=[str(idx)],
              features={"label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
    with pytest.raises(ValueError, match=r"one.idx' line 1: the record ends at byte "
                                         r"9223372036854775823, past the end of"):
        p.build()


@pytest.mark.parametrize("index, message", [
    ("0\t9223372036854775804\n",
     r"one.idx' line 1: offset 9223372036854775804 is not a 4-byte aligned position inside"),
    # Found by the recordio fuzzer: offsets 4 bytes apart made a 4-byte record.
    ("0\t0\n1\t4\n", r"one.idx' lists records at offsets 0 and 4, closer than a record header"),
])
def test_mxnet_index_that_does_not_fit_the_data(tmp_path, index, message):
    rec = tmp_path / "one.rec"
    body = struct.pack("<IfQQ", 0, 1.0, 0, 0) + b"img"
    rec.write_bytes(struct.pack("<II", 0xCED7230A, len(body)) + body + b"\0")
    idx = tmp_path / "one.idx"
    idx.write_text(index)
    p = _pipe(fn.readers.mxnet, path=[str(rec)], index_path=[str(idx)])
    with pytest.raises(ValueError, match=message):
        p.build()


def _tar(tmp_path):
    import io
    import tarfile
    path = tmp_path / "shard.tar"
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in (("000.cls", b"1"), ("000.txt", b"hello")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def test_webdataset_index_announcing_10_to_the_14_samples_allocates_nothing(tmp_path):
    """The first line's count sized a reservation: 10^14 samples asked for petabytes."""
    idx = tmp_path / "shard.idx"
    idx.write_text("v1.2 99999999999999\ncls 512 1 000.cls\n")
    p = _pipe(fn.readers.webdataset, paths=[str(_tar(tmp_path))], index_paths=[str(idx)],
              ext=["cls"])
    with peak_rss_growth() as grown, pytest.raises(
            ValueError, match=r"shard.idx' line 3: the index ends after 1 of the 99999999999999 samples"):
        p.build()
    assert grown[0] < 64 << 20, f"peak RSS rose by {grown[0] >> 20} MiB"


def test_webdataset_index_whose_offset_plus_size_overflows(tmp_path):
    idx = tmp_path / "shard.idx"
    idx.write_text("v1.2 1\ncls 512 9223372036854775807 000.cls\n")
    p = _pipe(fn.readers.webdataset, paths=[str(_tar(tmp_path))], index_paths=[str(idx)],
              ext=["cls"])
    with pytest.raises(ValueError, match=r"shard.idx' line 2: the component 'cls' ends at byte "
                                         r"9223372036854776319, past the end of"):
        p.build()


@pytest.mark.parametrize("shape", ["(4294967296, 4294967296, 4)",
                                   "(0, 9223372036854775807, 9223372036854775807)"])
def test_numpy_shape_whose_element_count_overflows(tmp_path, shape):
    """The count overflowed int64 (and could wrap to a size that passed the file-size check)."""
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    path = tmp_path / "huge.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(16))
    p = _pipe(fn.readers.numpy, files=[str(path)])
    with pytest.raises(stoker.DecodeError, match=r"huge.npy' is not a valid .npy file: the shape .* "
                                                 r"has more elements than a file can hold"):
        p.build()
        p.run()


def _npy_file(path, header, version=1, data=b"", header_len=None):
    """A .npy file with `header` (bytes) as its dict, padded as NumPy pads it."""
    pad = 64 - (len(header) + (10 if version == 1 else 12) + 1) % 64
    header = header + b" " * (pad % 64) + b"\n"
    size = len(header) if header_len is None else header_len
    preamble = b"\x93NUMPY" + bytes([version, 0])
    preamble += struct.pack("<H" if version == 1 else "<I", size)
    path.write_bytes(preamble + header + data)
    return path


@pytest.mark.parametrize("name, header, version, why", [
    # Non-UTF-8 bytes reached the message and Python as a bare UnicodeDecodeError.
    ("latin1", b"{'descr': '<f\xff4', 'fortran_order': False, 'shape': (2,), }", 1,
     "is not a valid .npy file: its header is not ASCII text: it holds the byte 0xff at offset 23 "
     "of the file"),
    ("utf8_v3", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'é': 1}".encode(), 3,
     "is not a valid .npy file: its header is not ASCII text: it holds the byte 0xc3 at offset 69 "
     "of the file"),
    ("nul", b"{'descr': '<f4', 'fortran_order': False,\0'shape': (2,), }", 1,
     "is not a valid .npy file: its header is not ASCII text: it holds the byte 0x00 at offset 50 "
     "of the file"),
    ("no_shape", b"{'descr': '<f4', 'fortran_order': False, }", 1,
     "is not a valid .npy file: the header has no 'shape' entry"),
    ("negative", b"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 1,
     "is not a valid .npy file: the shape '(-1,)' holds '-1', not a size"),
    ("order", b"{'descr': '<f4', 'fortran_order': 'yes', 'shape': (2,), }", 1,
     "is not a valid .npy file: fortran_order is 'yes', not True or False"),
    ("open_tuple", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, }", 1,
     "is not a valid .npy file: the header's 'shape' tuple is not closed"),
])
def test_numpy_hostile_headers_name_the_operator_and_file(tmp_path, name, header, version, why):
    path = _npy_file(tmp_path / f"{name}.npy", header, version, data=bytes(8))
    p = _pipe(fn.readers.numpy, files=[str(path)])
    with pytest.raises(stoker.DecodeError) as e:
        p.build()
        p.run()
    assert re.fullmatch(r"fn\.readers\.numpy \(test_hostile_records\.py:\d+\): sample 0: " +
                        re.escape(f"'{path}' {why}"), str(e.value)), str(e.value)


def test_numpy_header_longer_than_the_file(tmp_path):
    path = _npy_file(tmp_path / "long.npy", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                     version=2, header_len=2**32 - 1)
    p = _pipe(fn.readers.numpy, files=[str(path)])
    with pytest.raises(stoker.DecodeError) as e:
        p.build()
        p.run()
    assert re.fullmatch(r"fn\.readers\.numpy \(test_hostile_records\.py:\d+\): sample 0: " +
                        re.escape(f"'{path}' is truncated: its .npy header claims 4294967295 "
                                  "bytes, the file has 116 after the preamble"), str(e.value)), str(e.value)
