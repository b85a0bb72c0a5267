"""Pipeline(set_affinity=...): which cores a pipeline's threads keep to when its process is one
of several on the host (python/stoker/_affinity.py)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from stoker import _affinity


def test_share_splits_contiguous_equal_parts():
    cores = list(range(64))
    parts = [_affinity.share(cores, r, 4) for r in range(4)]
    assert parts == [list(range(16 * r, 16 * (r + 1))) for r in range(4)]
    # uneven: the first parts take one more, nothing is left out or given twice
    parts = [_affinity.share(range(10), r, 4) for r in range(4)]
    assert parts == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    # the cores this process may use need not be contiguous numbers
    assert _affinity.share([9, 3, 5, 7], 1, 2) == [7, 9]
    # more ranks than cores: one core each, round robin
    assert [_affinity.share([4, 5], r, 3) for r in range(3)] == [[4], [5], [4]]
    assert _affinity.share([0, 1], 0, 1) == [0, 1]


def test_local_rank_and_size_from_launchers():
    assert _affinity.local_rank_and_size({}) == (0, 1)
    assert _affinity.local_rank_and_size({"LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "4"}) == (2, 4)
    assert _affinity.local_rank_and_size(
        {"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "8"}) == (1, 8)
    # nonsense is ignored, not trusted
    assert _affinity.local_rank_and_size({"LOCAL_RANK": "4", "LOCAL_WORLD_SIZE": "4"}) == (0, 1)
    assert _affinity.local_rank_and_size({"LOCAL_RANK": "x", "LOCAL_WORLD_SIZE": "2"}) == (0, 1)


@pytest.mark.parametrize("set_affinity, device_id, env, expected", [
    (None, 0, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}, [4, 5, 6, 7]),   # GPU, torchrun
    (None, None, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}, []),          # CPU-only: no
    (True, None, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}, [4, 5, 6, 7]),
    (False, 0, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}, []),
    (None, 0, {}, []),                                                        # one process
    (True, 0, {}, []),
])
def test_pipeline_cores(set_affinity, device_id, env, expected):
    assert _affinity.pipeline_cores(set_affinity, device_id, env, allowed=range(16),
                                    machine=16) == expected


def test_a_process_its_launcher_bound_is_left_alone():
    # SLURM's --cpu-bind or numactl gave this rank 4 of the machine's 16 cores: splitting those
    # again would leave the pipeline one core
    env = {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}
    assert _affinity.pipeline_cores(None, 0, env, allowed=[4, 5, 6, 7], machine=16) == []
    assert _affinity.pipeline_cores(True, 0, env, allowed=range(16), machine=16) == [4, 5, 6, 7]


def test_set_affinity_rejects_other_values():
    import stoker
    n = os.cpu_count()
    for bad, kind in [("yes", TypeError), ([0.5], TypeError), ([], ValueError), ([-1], ValueError),
                      ([n], ValueError)]:
        with pytest.raises(kind) as e:
            stoker.Pipeline(batch_size=1, num_threads=1, device_id=None, set_affinity=bad)
        assert str(e.value).startswith("Pipeline: set_affinity must be True, False, None (pin "
                                       "when this process is one of several on the host) or a "
                                       "list of core numbers"), e.value


def test_a_list_is_the_cores_whatever_the_launcher():
    import numpy as np
    assert _affinity.check([1, 0, np.int64(1)]) == [0, 1]
    assert _affinity.pipeline_cores([1, 3], None, {}) == [1, 3]
    assert _affinity.pipeline_cores([1, 3], 0, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"},
                                    allowed=[4, 5], machine=16) == [1, 3]


CHILD = textwrap.dedent("""
    import json, os, numpy as np, stoker
    from stoker import fn

    def allowed(tid):
        with open(f"/proc/self/task/{tid}/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return line.split(":")[1].strip()

    before = set(os.listdir("/proc/self/task"))
    pipe = stoker.Pipeline(batch_size=4, num_threads=3, device_id=None, seed=1,
                           set_affinity=SET_AFFINITY)
    with pipe:
        x = fn.random.uniform(range=[0.0, 1.0], shape=[8])
        pipe.set_outputs(x * 2)
    pipe.build()
    out = pipe.run()
    new = sorted(set(os.listdir("/proc/self/task")) - before)
    print(json.dumps(dict(new=[allowed(t) for t in new], main=allowed(str(os.getpid())),
                          process=sorted(os.sched_getaffinity(0)), shape=list(np.asarray(out[0][0]).shape))))
""")


def run_child(set_affinity, env_extra):
    env = dict(os.environ, **env_extra)
    env.pop("OMPI_COMM_WORLD_LOCAL_RANK", None)
    code = CHILD.replace("SET_AFFINITY", repr(set_affinity))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def cpu_list(cores):
    """Linux's Cpus_allowed_list form of a sorted list of cores: "0-3,6"."""
    out, start = [], None
    for i, c in enumerate(cores):
        if start is None:
            start = c
        if i + 1 == len(cores) or cores[i + 1] != c + 1:
            out.append(f"{start}" if start == c else f"{start}-{c}")
            start = None
    return ",".join(out)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or not os.path.isdir("/proc/self/task"),
                    reason="needs Linux's per-thread affinity")
def test_pipeline_threads_keep_to_the_ranks_share():
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs at least 2 usable cores")
    if len(allowed) < (os.cpu_count() or 0):
        pytest.skip("this process was bound to some of the cores: stoker leaves it as it is")
    r = run_child(True, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"})
    assert r["shape"] == [8]
    want = cpu_list(_affinity.share(allowed, 1, 2))
    # the workers (3) and the stage threads keep to rank 1's share; the process and its main
    # thread (the training loop's) do not
    assert len(r["new"]) >= 3
    assert r["new"].count(want) >= 3, r
    assert r["main"] == cpu_list(allowed)
    assert r["process"] == allowed


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or not os.path.isdir("/proc/self/task"),
                    reason="needs Linux's per-thread affinity")
def test_pipeline_threads_keep_to_a_list_of_cores():
    allowed = sorted(os.sched_getaffinity(0))
    r = run_child([allowed[-1]], {})
    assert r["new"].count(str(allowed[-1])) >= 3, r
    assert r["main"] == cpu_list(allowed)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or not os.path.isdir("/proc/self/task"),
                    reason="needs Linux's per-thread affinity")
def test_pipeline_threads_unpinned_when_off_or_alone():
    allowed = cpu_list(sorted(os.sched_getaffinity(0)))
    for set_affinity, env in [(False, {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}),
                              (True, {"LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"})]:
        r = run_child(set_affinity, env)
        assert r["new"] and all(a == allowed for a in r["new"]), (set_affinity, r)
