"""URLs for the readers (s3://, gs://, https://, memory://: any protocol fsspec knows): the file
system that src/readers/remote.h calls from the readers' threads, backed by fsspec. Installed
when stoker is imported; fsspec, and the protocol's own package (s3fs, gcsfs, aiohttp...), are
imported at the first URL. A batch's files go to fsspec's ``cat`` in one call, which keeps them
all in flight at once on the file systems that can (s3fs, gcsfs, http).

Credentials and options come from fsspec's own configuration (environment variables, its config
files, the protocol's usual ones: AWS_* for s3fs, for example)."""
from . import _C

# The package that gives fsspec a protocol, for the message when it is missing.
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "http": "aiohttp",
             "https": "aiohttp", "az": "adlfs", "abfs": "adlfs", "hf": "huggingface_hub"}


def _fs(url):
    """(file system, path) of a URL; ImportError saying what to install."""
    try:
        import fsspec
    except ImportError:
        raise ImportError(f"'{url}' is a URL, which stoker reads through fsspec: install it "
                          "(pip install fsspec)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as e:
        protocol = url.split("://", 1)[0]
        package = _PACKAGES.get(protocol)
        raise ImportError(f"reading '{url}' needs fsspec's '{protocol}' file system"
                          + (f": pip install {package}" if package else "") + f" ({e})") from None


def _full(fs, name):
    return name if "://" in name else fs.unstrip_protocol(name)


class FsspecFiles:
    """readers/remote.h's RemoteFiles: list(url), read(urls), size(url), read_range(url, offset,
    n), read_ranges(urls, offsets, sizes)."""

    def list(self, url):
        fs, path = _fs(url)
        try:
            is_dir = fs.isdir(path)
        except FileNotFoundError:
            is_dir = False
        if not is_dir:
            if fs.exists(path):
                raise NotADirectoryError(f"'{url}' is not a folder")
            raise FileNotFoundError(f"'{url}' does not exist")
        out = []
        for e in fs.ls(path, detail=True):
            entry = _full(fs, e["name"])
            if entry.rstrip("/") == url.rstrip("/"):
                continue  # (some file systems list the folder itself)
            out.append((entry.rstrip("/"), e.get("type") == "directory"))
        return out

    def read(self, urls):
        """Per URL: its bytes, or the exception that says why it could not be read."""
        groups = {}
        for k, url in enumerate(urls):
            try:
                fs, path = _fs(url)
            except ImportError as e:
                groups.setdefault(None, []).append((k, url, e))
                continue
            groups.setdefault(id(fs), [fs]).append((k, url, path))
        out = [None] * len(urls)
        for key, items in groups.items():
            if key is None:
                for k, url, e in items:
                    out[k] = e
                continue
            fs, items = items[0], items[1:]
            paths = [p for _, _, p in items]
            try:
                got = fs.cat(paths, on_error="return")
                if not isinstance(got, dict):  # (one path: some versions return its bytes)
                    got = {paths[0]: got}
            except Exception as e:  # noqa: BLE001 (each file gets the error)
                got = {p: e for p in paths}
            for k, url, path in items:
                v = got.get(path)
                if v is None:
                    v = got.get(fs._strip_protocol(path), got.get(url))
                if isinstance(v, (bytes, bytearray)):
                    out[k] = bytes(v)
                elif isinstance(v, FileNotFoundError) or v is None:
                    out[k] = FileNotFoundError(f"file '{url}' does not exist")
                else:
                    out[k] = OSError(f"cannot read '{url}': {type(v).__name__}: {v}")
        return out


    def size(self, url):
        fs, path = _fs(url)
        try:
            if fs.isdir(path):
                raise IsADirectoryError(f"'{url}' is a folder, not a file")
            return int(fs.size(path))
        except FileNotFoundError:
            raise FileNotFoundError(f"file '{url}' does not exist") from None

    def read_range(self, url, offset, n):
        """Up to n bytes of the file from offset (fewer only at its end)."""
        fs, path = _fs(url)
        try:
            data = fs.cat_file(path, start=offset, end=offset + n)
            if len(data) > n:
                # A web server that ignores Range requests (Python's http.server) sends the
                # whole file, which fsspec passes on: take the range from it.
                _warn_no_ranges(url)
                data = data[offset:offset + n]
            return bytes(data)
        except FileNotFoundError:
            raise FileNotFoundError(f"file '{url}' does not exist") from None
        except Exception as e:  # noqa: BLE001 (named with the file and the range)
            raise OSError(f"cannot read '{url}' at offset {offset} ({n} bytes): "
                          f"{type(e).__name__}: {e}") from None

    def read_ranges(self, urls, offsets, sizes):
        """Per range: its bytes, or the exception that says why it could not be read. The ranges of
        one file system go to its cat_ranges in one call, in flight together where it can."""
        out = [None] * len(urls)
        groups = {}
        for k, url in enumerate(urls):
            try:
                fs, path = _fs(url)
            except ImportError as e:
                out[k] = e
                continue
            groups.setdefault(id(fs), (fs, []))[1].append((k, url, path))
        for fs, items in groups.values():
            paths = [p for _, _, p in items]
            starts = [offsets[k] for k, _, _ in items]
            ends = [offsets[k] + sizes[k] for k, _, _ in items]
            try:
                got = fs.cat_ranges(paths, starts, ends, on_error="return")
            except Exception as e:  # noqa: BLE001 (each range gets the error)
                got = [e] * len(items)
            for (k, url, _), v in zip(items, got):
                if isinstance(v, (bytes, bytearray)):
                    if len(v) > sizes[k]:  # a server that ignores Range requests: the whole file
                        _warn_no_ranges(url)
                        v = v[offsets[k]:offsets[k] + sizes[k]]
                    out[k] = bytes(v)
                elif isinstance(v, FileNotFoundError):
                    out[k] = FileNotFoundError(f"file '{url}' does not exist")
                else:
                    out[k] = OSError(f"cannot read '{url}' at offset {offsets[k]} ({sizes[k]} bytes): "
                                     f"{type(v).__name__}: {v}")
        return out


_warned_hosts = set()


def _warn_no_ranges(url):
    host = url.split("://", 1)[-1].split("/", 1)[0]
    if host not in _warned_hosts:
        _warned_hosts.add(host)
        import logging
        logging.getLogger("stoker").warning(
            "%s ignores Range requests: each part of a file that a record reader asks for comes "
            "with the whole file. Serve it from a server that answers ranges (S3, GCS, nginx...) "
            "or give the readers index files.", host)


def install():
    _C.set_remote_files(FsspecFiles())
