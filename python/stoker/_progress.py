"""A one-line progress report for stoker's command-line tools (no dependency): redrawn on stderr
at most ten times a second, where stderr is a terminal (or when asked), silent elsewhere so that
logs and pipes get the final lines only."""
import sys
import time


def _size(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


class Progress:
    """``Progress("indexing x.tfrecord", total_bytes)``; ``update(done, extra)``; ``close()``.
    ``show``: None follows whether the stream is a terminal."""

    def __init__(self, what, total, bytes_=True, show=None, stream=None):
        self.what, self.total, self.bytes = what, total, bytes_
        self.stream = stream or sys.stderr
        self.show = self.stream.isatty() if show is None else show
        self._last = 0.0
        self._width = 0
        self._start = time.monotonic()

    def _fmt(self, n):
        return _size(n) if self.bytes else f"{n}"

    def update(self, done, extra=""):
        if not self.show:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done < self.total:
            return
        self._last = now
        pct = 100.0 * done / self.total if self.total else 100.0
        line = (f"{self.what}: {pct:3.0f}% ({self._fmt(done)} of {self._fmt(self.total)})"
                f"{extra}, {now - self._start:.1f} s")
        self.stream.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self.stream.flush()

    def close(self):
        """Ends the line (the caller prints the result after it)."""
        if self.show and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
