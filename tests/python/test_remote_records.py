"""The record readers on URLs (readers/random_access_file.h: ranged reads through fsspec, small
reads served from cached blocks): readers.tfrecord (data and index), readers.webdataset (tar
headers scanned) and readers.numpy (file_root listed, regions of interest) read the shared test
files and NumPy arrays from fsspec's memory file system and give what the same files give from
the local disk; a tar scan asks for blocks, not one range per header; a missing URL is an error
that names it."""
import gzip
import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

import stoker
import stoker.tfrecord as tfrec
from stoker import _C, _remote, fn, pipeline_def

fsspec = pytest.importorskip("fsspec")

DEEPLAB = "records/tfrecord/deeplab/testing/pascal_voc_seg/val-00000-of-00001.tfrecord"
WDS = "records/webdataset"


@pytest.fixture
def mem():
    """A folder of fsspec's memory file system: put(bytes, name) -> its URL."""
    fs = fsspec.filesystem("memory")
    root = f"/stoker-records-{os.getpid()}"

    def put(data, name):
        fs.pipe(f"{root}/{name}", bytes(data))
        return f"memory://{root}/{name}"

    yield put
    if fs.exists(root):
        fs.rm(root, recursive=True)


class Counting(_remote.FsspecFiles):
    """fsspec's file system, counting what the readers ask of it."""

    def __init__(self):
        self.ranges = []
        self.batches = []  # the ranges of each read_ranges call
        self.reads = 0

    def read_range(self, url, offset, n):
        self.ranges.append((url, offset, n))
        return super().read_range(url, offset, n)

    def read_ranges(self, urls, offsets, sizes):
        self.batches.append(list(zip(urls, offsets, sizes)))
        return super().read_ranges(urls, offsets, sizes)

    def read(self, urls):
        self.reads += len(urls)
        return super().read(urls)


@pytest.fixture
def counting():
    files = Counting()
    _C.set_remote_files(files)
    yield files
    _remote.install()


def run_all(batch_size, reader, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=3)
    def pipe():
        out = reader(name="Reader", **kw)
        if isinstance(out, dict):  # readers.tfrecord: a node per feature
            return tuple(out[k] for k in sorted(out))
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    p = pipe()
    p.build()
    return [[np.array(t[i]).copy() for i in range(len(t))] for t in p.run()]


def assert_same(a, b):
    assert len(a) == len(b)
    for xa, xb in zip(a, b):
        assert len(xa) == len(xb) > 0
        for u, v in zip(xa, xb):
            np.testing.assert_array_equal(u, v)


def test_tfrecord_data_and_index_on_urls(testdata, tmp_path, mem, counting):
    path = testdata / DEEPLAB
    if not path.is_file():
        pytest.skip(f"no {DEEPLAB} under {testdata}")
    idx = tmp_path / "deeplab.idx"
    tfrec.make_index(str(path), str(idx))
    features = {"image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/filename": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/height": tfrec.FixedLenFeature([1], tfrec.int64, 0)}
    local = run_all(3, fn.readers.tfrecord, path=str(path), index_path=str(idx), features=features)
    url = mem(path.read_bytes(), "val.tfrecord")
    url_idx = mem(idx.read_bytes(), "val.idx")
    remote = run_all(3, fn.readers.tfrecord, path=url, index_path=url_idx, features=features)
    assert_same(remote, local)
    # each batch's 3 records in one call (the pipeline reads a batch ahead), nothing read range
    # by range
    assert counting.batches and all(len(b) == 3 for b in counting.batches)
    assert not counting.ranges
    assert all(u == url for u, _, _ in counting.batches[0])


def test_webdataset_tar_scanned_in_blocks(testdata, tmp_path, mem, counting):
    src = testdata / WDS / "sample.tgz"
    if not src.is_file():
        pytest.skip(f"no {WDS}/sample.tgz under {testdata}")
    tar = tmp_path / "sample.tar"
    tar.write_bytes(gzip.decompress(src.read_bytes()))
    with tarfile.open(tar) as t:
        members = [m for m in t.getmembers() if m.isfile()]
    samples = len({m.name.rsplit(".", 1)[0] for m in members})
    local = run_all(samples, fn.readers.webdataset, paths=str(tar), ext=["png", "cls"])
    url = mem(tar.read_bytes(), "sample.tar")
    remote = run_all(samples, fn.readers.webdataset, paths=url, ext=["png", "cls"])
    assert_same(remote, local)
    # the tar's headers (and its small members) came from one block: one request in all,
    # not one per member
    assert counting.ranges == [(url, 0, tar.stat().st_size)], counting.ranges[:5]
    assert len(members) > 100


def test_tar_scan_of_a_large_tar_asks_for_blocks_and_members(tmp_path, mem, counting):
    # 40 members of 100 KB (past the small reads), in a tar of 4 MB: the scan reads the headers
    # from 1 MiB blocks, each member is its own request
    rng = np.random.default_rng(2)
    tar = tmp_path / "big.tar"
    blobs = {f"s{k:03d}.bin": rng.integers(0, 255, 100_000, dtype=np.uint8).tobytes()
             for k in range(40)}
    with tarfile.open(tar, "w", format=tarfile.GNU_FORMAT) as t:
        for name, data in blobs.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, __import__("io").BytesIO(data))
    local = run_all(40, fn.readers.webdataset, paths=str(tar), ext="bin")
    url = mem(tar.read_bytes(), "big.tar")
    counting.ranges.clear()
    remote = run_all(40, fn.readers.webdataset, paths=url, ext="bin")
    assert_same(remote, local)
    assert [bytes(remote[0][k]) for k in range(40)] == list(blobs.values())
    # the scan: 1 MiB blocks for the headers; each batch (the pipeline reads one ahead): its 40
    # members in one call
    assert all(r[1] % (1 << 20) == 0 and (r[2] == 1 << 20 or r[1] + r[2] == tar.stat().st_size)
               for r in counting.ranges), counting.ranges
    assert 1 <= len(counting.ranges) <= 5
    assert counting.batches and all(sorted(n for _, _, n in b) == [100_000] * 40
                                    for b in counting.batches)


def test_numpy_file_root_listing_and_regions_on_urls(tmp_path, mem):
    rng = np.random.default_rng(5)
    arrays = {"a/x0.npy": rng.random((6, 7, 3)).astype(np.float32),
              "a/x1.npy": rng.integers(0, 99, (5, 9, 3)).astype(np.float32),
              "b/y.npy": np.asfortranarray(rng.random((8, 4, 3)).astype(np.float32))}
    urls = {}
    for name, a in arrays.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        np.save(tmp_path / name, a)
        urls[name] = mem((tmp_path / name).read_bytes(), f"np/{name}")
    mem(b"not an array", "np/notes.txt")
    root = urls["a/x0.npy"].rsplit("/a/", 1)[0]
    whole = run_all(3, fn.readers.numpy, file_root=root, file_filter="*.npy")
    local = run_all(3, fn.readers.numpy, file_root=str(tmp_path), file_filter="*.npy")
    assert_same(whole, local)
    for got, name in zip(whole[0], sorted(arrays)):
        np.testing.assert_array_equal(got, arrays[name])
    # a region of each: only that part is asked for
    part = run_all(3, fn.readers.numpy, files=[urls[n] for n in sorted(arrays)],
                   roi_start=[1, 2], roi_shape=[3, 2], roi_axes=[0, 1])
    for got, name in zip(part[0], sorted(arrays)):
        np.testing.assert_array_equal(got, arrays[name][1:4, 2:4])
    # a file list on a URL, its entries relative to it
    listing = mem("\n".join(sorted(arrays)).encode(), "np/list.txt")
    listed = run_all(3, fn.readers.numpy, file_list=listing)
    assert_same(listed, local)


def test_missing_urls_are_named(mem):
    url = mem(b"x", "here.bin").replace("here.bin", "missing.tfrecord")
    with pytest.raises(Exception, match="missing.tfrecord") as e:
        run_all(1, fn.readers.tfrecord, path=url, index_path=url + ".idx",
                features={"x": tfrec.FixedLenFeature((), tfrec.string, "")})
    assert "does not exist" in str(e.value)
    with pytest.raises(Exception, match="nothing-here") as e:
        run_all(1, fn.readers.numpy, file_root=url.rsplit("/", 1)[0] + "/nothing-here")
    assert "does not exist" in str(e.value)


def test_mxnet_recordio_and_index_on_urls(tmp_path, mem):
    pytest.importorskip("PIL")
    from test_readers_mxnet import jpeg, write_rec  # the RecordIO writer of im2rec's format
    records = [(float(k), jpeg(k, (40 + k, 30))) for k in range(6)]
    rec, idx, _ = write_rec(tmp_path / "a.rec", records)
    local = run_all(6, fn.readers.mxnet, path=rec, index_path=idx)
    url = mem(open(rec, "rb").read(), "a.rec")
    url_idx = mem(open(idx, "rb").read(), "a.rec.idx")
    remote = run_all(6, fn.readers.mxnet, path=url, index_path=url_idx)
    assert_same(remote, local)
    assert [bytes(remote[0][k]) for k in range(6)] == [img for _, img in records]


def test_a_web_server_without_ranges_still_gives_the_right_bytes(tmp_path, caplog):
    # Python's http.server answers every GET with the whole file, Range or not: the reader must
    # still get each member's own bytes (and the user a warning naming the server)
    pytest.importorskip("aiohttp")
    import functools
    import http.server
    import io
    import threading
    rng = np.random.default_rng(4)
    blobs = {f"m{k:02d}.bin": rng.integers(0, 255, 300_000, dtype=np.uint8).tobytes()
             for k in range(8)}
    tar = tmp_path / "w.tar"
    with tarfile.open(tar, "w", format=tarfile.GNU_FORMAT) as t:
        for name, data in blobs.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/w.tar"
        with caplog.at_level("WARNING", logger="stoker"):
            remote = run_all(8, fn.readers.webdataset, paths=url, ext="bin")
    finally:
        server.shutdown()
        server.server_close()
    assert [bytes(remote[0][k]) for k in range(8)] == list(blobs.values())
    assert any("ignores Range requests" in r.getMessage() for r in caplog.records)
