"""What a contender costs the machine: CPU time, host memory and GPU memory of this process and
all its descendants (DataLoader workers included).

On Linux it reads /proc directly (so it needs nothing installed: the GPU machine has no psutil);
elsewhere it uses psutil if it is installed, else this process alone through getrusage.

CPU time of the tree = sum over live processes of (user + system + children_user +
children_system): the children_* fields hold the time of children already reaped, so a worker
that exits mid-measurement is neither lost nor counted twice.
"""
from __future__ import annotations

import os
import resource
import sys
import threading
import time

_LINUX = sys.platform.startswith("linux") and os.path.exists("/proc/self/stat")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:                       # the process is gone: it is simply not counted
        return None


def _children_proc(pid: int) -> list[int]:
    out = []
    tasks = f"/proc/{pid}/task"
    try:
        tids = os.listdir(tasks)
    except OSError:
        return out
    for tid in tids:
        s = _read(f"{tasks}/{tid}/children")
        if s is None:
            return _children_scan(pid)    # kernel without CONFIG_PROC_CHILDREN
        out += [int(c) for c in s.split()]
    return out


def _children_scan(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = _read(f"/proc/{name}/stat")
            if s and int(s[s.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(name))
    return out


def tree_pids(root: int | None = None) -> list[int]:
    """``root`` (default: this process) and all its live descendants."""
    root = os.getpid() if root is None else root
    if _LINUX:
        pids, todo = [], [root]
        while todo:
            p = todo.pop()
            pids.append(p)
            todo += _children_proc(p)
        return pids
    try:
        import psutil
        me = psutil.Process(root)
        return [root] + [c.pid for c in me.children(recursive=True)]
    except ImportError:
        return [root]


def _cpu_proc(pid: int) -> float:
    s = _read(f"/proc/{pid}/stat")
    if not s:
        return 0.0
    f = s[s.rindex(")") + 2:].split()     # fields from the 3rd on; utime is the 14th
    return sum(int(x) for x in f[11:15]) / _TICK


def tree_cpu_seconds(root: int | None = None) -> float:
    """CPU seconds (user + system) used so far by ``root`` and its descendants."""
    if _LINUX:
        return sum(_cpu_proc(p) for p in tree_pids(root))
    try:
        import psutil
        total = 0.0
        for p in tree_pids(root):
            try:
                t = psutil.Process(p).cpu_times()
                total += t.user + t.system + getattr(t, "children_user", 0) + \
                    getattr(t, "children_system", 0)
            except psutil.Error:
                pass
        return total
    except ImportError:
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def tree_rss_bytes(pids) -> int:
    if _LINUX:
        total = 0
        for p in pids:
            s = _read(f"/proc/{p}/statm")
            if s:
                total += int(s.split()[1]) * _PAGE
        return total
    try:
        import psutil
        total = 0
        for p in pids:
            try:
                total += psutil.Process(p).memory_info().rss
            except psutil.Error:
                pass
        return total
    except ImportError:
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r * (1 if sys.platform == "darwin" else 1024)


def tree_pss_bytes(pids) -> int | None:
    """Proportional set size summed over the tree: shared pages (the libraries a forked
    worker shares with its parent) counted once in all. Costs ~10 ms per process with torch
    loaded, so it is taken once, after the timed passes, not sampled."""
    if not _LINUX:
        return None
    total = 0
    for p in pids:
        s = _read(f"/proc/{p}/smaps_rollup")
        if s is None:
            continue
        for line in s.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1]) * 1024
                break
    return total or None


class _Nvml:
    """Per-process GPU memory from NVML (nvidia-ml-py), if it is installed."""

    def __init__(self):
        import pynvml
        pynvml.nvmlInit()
        self.nv = pynvml
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i)
                        for i in range(pynvml.nvmlDeviceGetCount())]

    def used(self, pids) -> int:
        pids, total = set(pids), 0
        for h in self.handles:
            try:
                procs = self.nv.nvmlDeviceGetComputeRunningProcesses(h)
            except self.nv.NVMLError:
                continue
            total += sum(p.usedGpuMemory or 0 for p in procs if p.pid in pids)
        return total


class Monitor:
    """Samples the tree's RSS (and GPU memory) from a background thread, every ``interval``
    seconds, and keeps the peaks. Reading /proc/<pid>/statm costs microseconds, so sampling
    does not disturb the CPU time being measured."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak_rss = 0
        self.peak_gpu_nvml = None          # bytes, this tree's processes, from NVML
        self.peak_gpu_device = None        # bytes used on the device (all processes)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-monitor", daemon=True)
        self._nvml = None
        try:
            self._nvml = _Nvml()
        except Exception:
            pass

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.sample()

    def sample(self):
        pids = tree_pids()
        self.peak_rss = max(self.peak_rss, tree_rss_bytes(pids))
        if self._nvml is not None:
            self.peak_gpu_nvml = max(self.peak_gpu_nvml or 0, self._nvml.used(pids))
        torch = sys.modules.get("torch")
        # Device-wide use, only once someone initialised CUDA here (never initialise it
        # ourselves: a CUDA context costs a CPU-only contender hundreds of MB).
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            try:
                free, total = torch.cuda.mem_get_info(0)
                self.peak_gpu_device = max(self.peak_gpu_device or 0, total - free)
            except Exception:
                pass

    def _loop(self):
        while not self._stop.wait(self.interval):
            self.sample()


def torch_gpu_peak_bytes() -> int | None:
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    return torch.cuda.max_memory_allocated(0)


def sync_gpu():
    """Wait for all work on the device, every stream (the pipelines' own included)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def wall() -> float:
    return time.perf_counter()
