"""Which CPU cores a pipeline's threads keep to: Pipeline(set_affinity=...).

Several processes of one host, each feeding its own GPU (torchrun's one process per GPU), each
start a stoker pipeline of worker and stage threads. Left to the scheduler, those threads move
between cores that the other processes' threads use too, and the one that waits for the JPEG
engines runs late: on 4 H100s of one host the mixed stage took 19.95 ms per batch against
16.94 ms alone, and the ranks ranged from 12.9k to 16.0k img/s (bench/RESULTS.md, multi-GPU, 2026-11-28).
With each process kept to a share of the cores of its own (os.sched_setaffinity) it took
17.13 ms and the ranks 15.7k-16.4k; in a second lease, this module's pinning of the pipeline's
threads alone gave 17,091 img/s per GPU at 4 GPUs against 15,741 without.

The share: the cores this process may use (os.sched_getaffinity), split into as many
contiguous, equal parts as there are processes on this host (LOCAL_WORLD_SIZE, which torchrun
sets, or Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE), and the part of this process's local rank.
Linux numbers the cores of a socket together, so ranks of neighbouring numbers stay on one
socket. A process that may not use every core of the machine was bound by its launcher
(SLURM's --cpu-bind, numactl, a container's cpuset shared out per rank): its set is its share
already, and it is left as it is. DALI's set_affinity=True picks the cores NVML calls near the GPU instead; on a host of
one NUMA node that is every core, and it does not split them between processes.
"""
from __future__ import annotations

import os

_LOCAL = (("LOCAL_RANK", "LOCAL_WORLD_SIZE"),
          ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"))


def local_rank_and_size(environ=None) -> tuple[int, int]:
    """(this process's rank among those of this host, how many there are); (0, 1) if unknown."""
    env = os.environ if environ is None else environ
    for rank_var, size_var in _LOCAL:
        if rank_var in env and size_var in env:
            try:
                rank, size = int(env[rank_var]), int(env[size_var])
            except ValueError:
                continue
            if size >= 1 and 0 <= rank < size:
                return rank, size
    return 0, 1


def share(cores, rank: int, size: int) -> list[int]:
    """The rank-th of `size` contiguous, equal parts of the sorted cores (the first parts take
    one more where they do not divide evenly); every part has at least one core."""
    cores = sorted(cores)
    if size <= 1 or not cores:
        return cores
    if size > len(cores):                  # more processes than cores: they share round robin
        return [cores[rank % len(cores)]]
    base, extra = divmod(len(cores), size)
    start = rank * base + min(rank, extra)
    return cores[start:start + base + (1 if rank < extra else 0)]


def check(set_affinity):
    """Pipeline(set_affinity=...) checked: None, a bool, or a sorted list of core numbers."""
    if set_affinity is None or isinstance(set_affinity, bool):
        return set_affinity
    if isinstance(set_affinity, int):
        return bool(set_affinity)
    what = ("Pipeline: set_affinity must be True, False, None (pin when this process is one of "
            "several on the host) or a list of core numbers")
    try:
        cores = sorted({c.__index__() for c in set_affinity})
    except (TypeError, AttributeError):
        raise TypeError(f"{what}, got {set_affinity!r}.") from None
    machine = os.cpu_count() or 0
    if not cores or cores[0] < 0 or (machine and cores[-1] >= machine):
        raise ValueError(f"{what} from 0 to {machine - 1} (this machine's), got "
                         f"{list(set_affinity)!r}.")
    return cores


def pipeline_cores(set_affinity, device_id, environ=None, allowed=None, machine=None) -> list[int]:
    """The cores for Pipeline(set_affinity=...); [] leaves the threads to the scheduler.

    None (stoker's default): pins when the pipeline has a GPU and this process is one of
    several on the host (torchrun, Open MPI). True: pins whenever this process is one of several,
    GPU or not. False: never. Either way, a process its launcher bound to fewer cores than the
    machine has (`allowed` against `machine`, the machine's core count) is left alone. A list
    (from check()) is the cores themselves."""
    if isinstance(set_affinity, list):
        return set_affinity
    if set_affinity is False:
        return []
    rank, size = local_rank_and_size(environ)
    if size <= 1 or (set_affinity is None and device_id is None):
        return []
    if allowed is None:
        allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else ()
    allowed = sorted(allowed)
    if machine is None:
        machine = os.cpu_count() or len(allowed)
    if len(allowed) < machine:
        return []
    return share(allowed, rank, size)
