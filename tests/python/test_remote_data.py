"""readers.file on URLs (src/readers/remote.h, python/stoker/_remote.py: fsspec): a folder of
class folders, a file list and a list of files served by fsspec's memory file system, by a local
HTTP server (http.server on loopback) and by an S3-compatible server (moto's, on loopback, read
through s3fs), each giving the batches that the same files give from the local disk; and the
errors (a missing root or file, a protocol fsspec has no package for)."""
import functools
import http.server
import os
import pathlib
import shutil
import threading

import numpy as np
import pytest

from stoker import fn, pipeline_def

fsspec = pytest.importorskip("fsspec")


@pytest.fixture(scope="module")
def local_tree(tmp_path_factory, testdata):
    """Three class folders of real photos (some files of other types beside them)."""
    if not (testdata / "imagenet-sample").is_dir():
        pytest.skip(f"no imagenet-sample under {testdata}")
    root = tmp_path_factory.mktemp("ds")
    src = sorted(p for p in (testdata / "imagenet-sample").iterdir() if p.is_dir())[:3]
    for k, d in enumerate(src):
        (root / f"class{k}").mkdir()
        for f in sorted(d.glob("*.jpg"))[:5]:
            shutil.copy(f, root / f"class{k}" / f.name)
    (root / "class0" / "notes.txt").write_text("not an image")
    return root


def read_all(**reader_args):
    """Every sample of one epoch (no shuffling): [(bytes, label, source)]."""
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        return fn.readers.file(name="R", pad_last_batch=False, **reader_args)

    p = pipe()
    p.build()
    n = p.epoch_size("R")
    out = []
    while len(out) < n:
        data, labels = p.run()
        for i in range(len(data)):
            if len(out) < n:
                out.append((np.array(data[i]).tobytes(), int(np.array(labels[i])[0]),
                            data[i].source_info()))
    return out


def assert_same_as_local(remote, local, prefix, local_root):
    assert len(remote) == len(local) > 0
    for (rb, rl, rs), (lb, ll, ls) in zip(remote, local):
        assert rb == lb and rl == ll
        assert rs == prefix + os.path.relpath(ls, local_root)


# ------------------------------------------------------------------------------- memory://
@pytest.fixture
def memory_tree(local_tree):
    fs = fsspec.filesystem("memory")
    fs.put(str(local_tree), "/stoker_ds", recursive=True)
    yield "memory://stoker_ds"
    fs.rm("/stoker_ds", recursive=True)


def test_memory_file_root_equals_local(memory_tree, local_tree):
    assert_same_as_local(read_all(file_root=memory_tree), read_all(file_root=str(local_tree)),
                         memory_tree + "/", str(local_tree))


def test_memory_file_list_and_files(memory_tree, local_tree):
    fs = fsspec.filesystem("memory")
    lines = "".join(f"class{k}/{sorted(os.listdir(local_tree / f'class{k}'))[0]} {k * 10}\n"
                    for k in range(3))
    fs.pipe("/stoker_ds/list.txt", lines.encode())
    got = read_all(file_list=memory_tree + "/list.txt")
    assert [(l, s) for _, l, s in got] == [
        (k * 10, f"{memory_tree}/class{k}/{sorted(os.listdir(local_tree / f'class{k}'))[0]}")
        for k in range(3)]
    urls = [s for _, _, s in got]
    got2 = read_all(files=urls, labels=[7, 8, 9])
    assert [b for b, _, _ in got2] == [b for b, _, _ in got] and [l for _, l, _ in got2] == [7, 8, 9]
    # Relative to a remote file_root, and a URL among local paths.
    rel = [u[len(memory_tree) + 1:] for u in urls]
    assert [b for b, _, _ in read_all(file_root=memory_tree, files=rel)] == [b for b, _, _ in got]


def test_remote_errors(memory_tree):
    with pytest.raises(FileNotFoundError, match=r"file_root 'memory://nowhere' does not exist"):
        read_all(file_root="memory://nowhere")
    with pytest.raises(ValueError, match=r"file_root 'memory://stoker_ds/class0/.*\.jpg' is not "
                                         r"a directory"):
        first = sorted(fsspec.filesystem("memory").ls("/stoker_ds/class0", detail=False))[0]
        read_all(file_root="memory://" + first.lstrip("/"))
    with pytest.raises(FileNotFoundError, match=r"sample 1.*file 'memory://stoker_ds/gone.jpg' "
                                                r"does not exist"):
        read_all(files=[memory_tree + "/class0/notes.txt", memory_tree + "/gone.jpg"])
    with pytest.raises(NotImplementedError, match=r"reading 'nosuchproto://x/y' needs fsspec's "
                                                  r"'nosuchproto' file system"):
        read_all(file_root="nosuchproto://x/y")


def test_a_missing_remote_file_is_skipped_with_on_error(memory_tree):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[memory_tree + "/gone.jpg", memory_tree + "/class0/notes.txt",
                                          memory_tree + "/class0/notes.txt"], on_error="skip")
        return jpegs

    p = pipe()
    p.build()
    (data,) = p.run()
    assert [d.source_info() for d in data] == [memory_tree + "/class0/notes.txt"] * 2


# ------------------------------------------------------------------------------------ http://
@pytest.fixture(scope="module")
def http_root(local_tree):
    pytest.importorskip("aiohttp")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        request_queue_size = 256  # (http.server's 5 drops a batch's concurrent connections)

    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(local_tree)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_file_root_equals_local(http_root, local_tree):
    assert_same_as_local(read_all(file_root=http_root), read_all(file_root=str(local_tree)),
                         http_root + "/", str(local_tree))


def test_http_decode(http_root):
    @pipeline_def(batch_size=5, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=http_root, random_shuffle=True)
        return fn.resize(fn.decoders.image(jpegs), size=(64, 64)), labels

    p = pipe()
    p.build()
    images, labels = p.run()
    assert all(np.array(images[i]).shape == (64, 64, 3) for i in range(5))


# -------------------------------------------------------------------------------------- s3://
@pytest.fixture(scope="module")
def s3_root(local_tree):
    pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    import s3fs
    saved = dict(fsspec.config.conf.get("s3", {}))
    fsspec.config.conf["s3"] = {"key": "testing", "secret": "testing",
                                "client_kwargs": {"endpoint_url": f"http://{host}:{port}",
                                                  "region_name": "us-east-1"}}
    s3fs.S3FileSystem.clear_instance_cache()
    import boto3
    boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1",
                 aws_access_key_id="testing",
                 aws_secret_access_key="testing").create_bucket(Bucket="stoker-test")
    fs = fsspec.filesystem("s3")
    fs.put(str(local_tree) + "/", "stoker-test/ds/", recursive=True)
    yield "s3://stoker-test/ds"
    fsspec.config.conf["s3"] = saved
    s3fs.S3FileSystem.clear_instance_cache()
    server.stop()


def test_s3_file_root_equals_local(s3_root, local_tree):
    assert_same_as_local(read_all(file_root=s3_root), read_all(file_root=str(local_tree)),
                         s3_root + "/", str(local_tree))


def test_s3_missing_key_is_named(s3_root):
    with pytest.raises(FileNotFoundError, match=r"file 's3://stoker-test/ds/nope.jpg' does not exist"):
        read_all(files=[s3_root + "/nope.jpg"])
