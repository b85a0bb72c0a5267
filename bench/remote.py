"""Reading from object stores and web servers (#23): readers.file on the same photos from the
local disk, from fsspec's in-memory file system, from a local HTTP server and from an S3 server
(moto's), both on loopback, with and without decoding; NVIDIA DALI 2.4's readers.file beside
stoker's where DALI reads the source too (the local disk, and S3 through its AWS SDK client).
`--readers file,webdataset` adds readers.webdataset on the same photos in 4 tar shards (no
index files: each shard's headers are scanned, through 1 MiB blocks on a URL, and each JPEG is
a ranged read of its own), shuffled. Loopback takes the network's bandwidth
and latency out: what is left is what the remote path itself costs (fsspec, the protocol
client, one call per batch), which is what stoker controls. Images/s after one untimed epoch,
over whole epochs (the photo count is a whole number of batches).

    python bench/remote.py [--data ../shared/testdata/imagenet-sample] [--batch-size 32]
                           [--threads N] [--epochs 2] [--readers file,webdataset]
                           [--out bench/results]

Needs fsspec, aiohttp (http), s3fs and moto[server] (s3); a missing one leaves its rows out.
"""
import argparse
import io
import json
import os
import pathlib
import platform
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]


def photos(src, batch_size):
    files = sorted(p for p in pathlib.Path(src).rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
    n = len(files) // batch_size * batch_size
    if n == 0:
        sys.exit(f"remote.py: fewer than {batch_size} JPEGs under {src}")
    return files[:n]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SHARDS = 4


def write_shards(files, where):
    """The photos in SHARDS tar files, webdataset's layout: <key>.jpg and <key>.cls."""
    where.mkdir(parents=True, exist_ok=True)
    classes = sorted({f.parent.name for f in files})
    for s in range(SHARDS):
        with tarfile.open(where / f"shard-{s}.tar", "w", format=tarfile.GNU_FORMAT) as t:
            for k in range(s, len(files), SHARDS):
                for name, data in ((f"{k:06d}.jpg", files[k].read_bytes()),
                                   (f"{k:06d}.cls", str(classes.index(files[k].parent.name)).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))


def run(root, batch_size, threads, epochs, decode, lib="stoker", reader="file"):
    if lib == "dali":
        from nvidia.dali import fn, pipeline_def
    else:
        from stoker import fn, pipeline_def

    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=None, seed=0)
    def pipe():
        if reader == "webdataset":
            jpegs, labels = fn.readers.webdataset(
                paths=[f"{root}/shard-{s}.tar" for s in range(SHARDS)], ext=["jpg", "cls"],
                random_shuffle=True, name="Reader")
        else:
            jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        if decode:
            return fn.resize(fn.decoders.image(jpegs), size=(224, 224)), labels
        return jpegs, labels

    p = pipe()
    p.build()
    steps = p.epoch_size("Reader") // batch_size
    for _ in range(steps):  # one untimed epoch
        p.run()
    t0 = time.perf_counter()
    for _ in range(steps * epochs):
        p.run()
    return steps * epochs * batch_size / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "testdata" / "imagenet-sample"))
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--readers", default="file", help="file, webdataset, or both (comma-separated)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    a = ap.parse_args()
    import fsspec

    files = photos(a.data, a.batch_size)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="stoker-remote-"))
    local = tmp / "ds"
    for f in files:  # class folders as in the source
        (local / f.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(f, local / f.parent.name / f.name)
    readers = a.readers.split(",")
    if "webdataset" in readers:  # beside the class folders: every source serves both
        write_shards(files, local / "wds")
    roots = {"local": str(local)}
    fsspec.filesystem("memory").put(str(local), "/stoker-bench", recursive=True)
    roots["memory"] = "memory://stoker-bench"
    # The servers run in processes of their own: in this one they would compete with the
    # pipeline for the GIL, which a real server does not.
    servers = []

    def serve(args, url):
        servers.append(subprocess.Popen([sys.executable] + args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        for _ in range(100):
            try:
                urllib.request.urlopen(url, timeout=1).read()
                return True
            except Exception:  # noqa: BLE001 (not up yet)
                time.sleep(0.1)
        return False

    try:
        import aiohttp  # noqa: F401
        port = free_port()
        # http.server's own listen backlog (5) drops the connections of a batch's concurrent
        # requests past the fifth, which then wait a second for TCP to retry: a server's is
        # larger. It also ignores Range requests, which every web server of data answers (the
        # record readers read parts of files): the handler below answers them.
        code = ("import functools, http.server, os, re, sys\n"
                "class S(http.server.ThreadingHTTPServer):\n    request_queue_size = 1024\n"
                "class H(http.server.SimpleHTTPRequestHandler):\n"
                "    def log_message(self, *a): pass\n"
                "    def do_GET(self):\n"
                "        m = re.fullmatch(r'bytes=(\\d+)-(\\d*)', self.headers.get('Range', ''))\n"
                "        path = self.translate_path(self.path)\n"
                "        if not m or not os.path.isfile(path): return super().do_GET()\n"
                "        size = os.path.getsize(path)\n"
                "        a = int(m[1]); b = min(int(m[2]) if m[2] else size - 1, size - 1)\n"
                "        with open(path, 'rb') as f: f.seek(a); data = f.read(max(0, b - a + 1))\n"
                "        self.send_response(206)\n"
                "        self.send_header('Content-Range', f'bytes {a}-{b}/{size}')\n"
                "        self.send_header('Content-Length', str(len(data)))\n"
                "        self.end_headers(); self.wfile.write(data)\n"
                "S(('127.0.0.1', int(sys.argv[2])), functools.partial(H, directory=sys.argv[1])).serve_forever()\n")
        if serve(["-c", code, str(tmp), str(port)], f"http://127.0.0.1:{port}/"):
            roots["http"] = f"http://127.0.0.1:{port}/ds"
    except ImportError:
        print("no aiohttp: the http rows are left out")
    try:
        import boto3
        import s3fs
        port = free_port()
        if serve(["-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                 f"http://127.0.0.1:{port}/"):
            endpoint = f"http://127.0.0.1:{port}"
            fsspec.config.conf["s3"] = {"key": "bench", "secret": "bench", "client_kwargs": {
                "endpoint_url": endpoint, "region_name": "us-east-1"}}
            s3fs.S3FileSystem.clear_instance_cache()
            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                         aws_access_key_id="bench",
                         aws_secret_access_key="bench").create_bucket(Bucket="stoker-bench")
            fsspec.filesystem("s3").put(str(local) + "/", "stoker-bench/ds/", recursive=True)
            roots["s3"] = "s3://stoker-bench/ds"
            # DALI's S3 client (the AWS SDK) takes the endpoint and keys from the environment.
            os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench",
                              AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1")
    except ImportError:
        print("no s3fs or moto[server]: the s3 rows are left out")
    rows = []
    try:
        try:
            import nvidia.dali  # noqa: F401
            libs = ("stoker", "dali")
        except ImportError:
            print("no nvidia.dali: DALI's rows are left out")
            libs = ("stoker",)
        for reader in readers:
            for decode in (False, True):
                for where, root in roots.items():
                    for lib in libs:
                        if lib == "dali" and (where not in ("local", "s3") or
                                              (reader == "webdataset" and where != "local")):
                            continue  # (DALI reads neither fsspec's memory nor http)
                        src = root + "/wds" if reader == "webdataset" else root
                        ips = run(src, a.batch_size, a.threads, a.epochs, decode, lib, reader)
                        rows.append({"library": lib, "reader": reader, "source": where,
                                     "decode": decode, "images_per_s": ips})
                        print(f"{lib:7s} {reader:10s} {where:7s} "
                              f"{'read + decode + resize' if decode else 'read only':22s} "
                              f"{ips:9.0f} images/s", flush=True)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    base = {(r["reader"], r["decode"]): r["images_per_s"] for r in rows
            if r["source"] == "local" and r["library"] == "stoker"}
    lines = [f"remote.py: {len(files)} photos from {a.data}, batch {a.batch_size}, {a.threads} "
             f"threads, {a.epochs} epochs, {platform.node()}", "",
             "| library | reader | source | work | images/s | vs stoker, local |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['library']} | {r['reader']} | {r['source']} | "
                     f"{'read, decode, resize' if r['decode'] else 'read'} | "
                     f"{r['images_per_s']:,.0f} | "
                     f"{r['images_per_s'] / base[(r['reader'], r['decode'])]:.2f}x |")
    print("\n".join(lines))
    os.makedirs(a.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(os.path.join(a.out, f"remote-{stamp}.json"), "w") as f:
        json.dump({"args": vars(a), "photos": len(files), "rows": rows}, f, indent=1)
    with open(os.path.join(a.out, f"remote-{stamp}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
