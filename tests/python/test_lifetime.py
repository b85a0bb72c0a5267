"""Pipeline lifetime and shutdown: Ctrl-C and the interpreter's exit with an external_source
stuck in the user's code, external_source's timeout, a deleted pipeline freeing its threads and
memory without the cyclic garbage collector, and a batch kept after its pipeline is gone
holding only its own memory.

Threads are counted in /proc/self/task (threading.active_count() does not see the executor's
C++ threads) and memory is VmRSS; both are measured in a fresh interpreter, where no other
test's pipelines come and go."""
import gc
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

from stoker import Pipeline, fn, types

from conftest import JPEG_DIR

MiB = 1 << 20


def _threads():
    return len(os.listdir("/proc/self/task"))


def _python(code, timeout=120):
    """Runs _HELPERS and `code` in a fresh interpreter; the JSON it prints last."""
    r = subprocess.run([sys.executable, "-c", _HELPERS + textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": ":".join(sys.path)})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


_HELPERS = f"""
import gc, json, os, sys, threading, time, weakref
import numpy as np
from stoker import Pipeline, fn, types

JPEG_DIR = {str(JPEG_DIR)!r}

def threads():
    return len(os.listdir("/proc/self/task"))

def threads_down_to(n, timeout=5.0):
    # A joined thread can stay listed in /proc for a moment after pthread_join returns: wait
    # (at most `timeout`) for the count to come down to n; a leaked thread never does.
    end = time.monotonic() + timeout
    while threads() > n and time.monotonic() < end:
        time.sleep(0.01)
    return threads()

def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

def image_pipe(batch_size, size, num_threads=2):
    pipe = Pipeline(batch_size=batch_size, num_threads=num_threads, device_id=None, seed=7)
    with pipe:
        jpegs, labels = fn.readers.file(file_root=JPEG_DIR)
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        pipe.set_outputs(fn.resize(images, resize_x=size, resize_y=size), labels)
    return pipe
"""


# ---- Ctrl-C and exit while a source never returns

_BLOCKED = """
import signal
import threading
# A process started from a backgrounded shell job inherits SIGINT ignored, and Python then
# installs no KeyboardInterrupt handler: take Ctrl-C as a terminal would deliver it.
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
from stoker import Pipeline, fn

never = threading.Event()

def source():
    never.wait()
    return [np.zeros(2, np.uint8)]

pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
with pipe:
    pipe.set_outputs(fn.external_source(source=source))
pipe.build()
print("running", flush=True)
"""


def _interrupt(body):
    """Runs a pipeline whose source blocks forever, sends SIGINT while run() waits for it:
    (return code, stdout, stderr, seconds from the signal to the end of the process)."""
    proc = subprocess.Popen([sys.executable, "-c", _BLOCKED + textwrap.dedent(body)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ":".join(sys.path)})
    try:
        assert proc.stdout.readline() == "running\n"
        time.sleep(1.0)  # run() is waiting; the source is inside never.wait()
        proc.send_signal(signal.SIGINT)
        t = time.monotonic()
        out, err = proc.communicate(timeout=30)
        return proc.returncode, out, err, time.monotonic() - t
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the process hung at exit after Ctrl-C")
    finally:
        if proc.poll() is None:
            proc.kill()


def test_ctrl_c_with_a_blocked_source_exits():
    rc, out, err, took = _interrupt("pipe.run()\n")
    assert rc == -signal.SIGINT, err
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt"
    assert out == ""
    # The pipeline's shutdown gives a stuck stage thread 2 s, then leaves it to the process' end.
    assert took < 8, f"exit took {took:.1f} s"


def test_ctrl_c_caught_then_normal_exit():
    rc, out, err, took = _interrupt("""
        try:
            pipe.run()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        """)
    assert (rc, out, err) == (0, "interrupted\n", "")
    assert took < 8, f"exit took {took:.1f} s"


def test_close_with_a_blocked_source_returns_and_the_threads_end_when_it_does():
    release = threading.Event()

    def source():
        release.wait()
        return [np.zeros(2, np.uint8)]

    before = _threads()
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=source, timeout=0.2))
    with pytest.raises(TimeoutError):
        pipe.run()
    t = time.monotonic()
    pipe.close()
    assert time.monotonic() - t < 5
    release.set()  # the call returns; the executor's threads end and it is freed
    deadline = time.monotonic() + 10
    while _threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _threads() == before


# ---- external_source(timeout=...)

def test_timeout_names_the_source_and_the_batch_still_comes():
    release = threading.Event()
    calls = []

    def source(iteration):
        calls.append(iteration)
        if iteration == 0:
            release.wait()
        return [np.full(3, iteration, np.int32)] * 2

    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        line = sys._getframe().f_lineno + 1
        out = fn.external_source(source=source, timeout=0.5, name="slow")
        pipe.set_outputs(out)
    want = (rf"fn\.external_source \(test_lifetime\.py:{line}\) \(name='slow'\): the source has "
            r"not returned for (\d+\.\d) s, longer than its timeout of 0\.5 s \(it was called "
            r"for iteration 0\)\. The call goes on: run\(\) raises this until it returns, then "
            r"gives its batch\. Make the source return or raise sooner, or give a larger "
            r"timeout \(None: no limit\)\.")
    try:
        t = time.monotonic()
        with pytest.raises(TimeoutError) as e:
            pipe.run()
        took = time.monotonic() - t
        m = re.fullmatch(want, str(e.value))
        assert m, str(e.value)
        assert 0.5 <= float(m.group(1)) <= took + 0.05
        assert took < 5
        del e
        # The call still hangs: run() says so again at once.
        t = time.monotonic()
        with pytest.raises(TimeoutError, match=r"has not returned for \d+\.\d s"):
            pipe.run()
        assert time.monotonic() - t < 1
    finally:
        release.set()
    # Once it returns, the batches come in order: none was lost or skipped.
    for k in range(3):
        (batch,) = pipe.run()
        np.testing.assert_array_equal(batch.as_array(), np.full((2, 3), k, np.int32))
    assert calls[:3] == [0, 1, 2]
    pipe.close()


def test_timeout_does_not_fire_for_a_slow_source_within_it():
    def source(iteration):
        time.sleep(0.3)
        return [np.full(1, iteration, np.uint8)]

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source=source, timeout=5))
    assert [int(pipe.run()[0].as_array()[0, 0]) for _ in range(3)] == [0, 1, 2]
    pipe.close()


def test_timeout_of_a_parallel_source_stuck_in_its_worker():
    def source(info):
        if info.idx_in_epoch == 1:
            time.sleep(60)
        return np.full(2, info.idx_in_epoch, np.uint8)

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, py_num_workers=1)
    with pipe:
        line = sys._getframe().f_lineno + 1
        pipe.set_outputs(fn.external_source(source=source, parallel=True, timeout=1))
    np.testing.assert_array_equal(pipe.run()[0].as_array(), [[0, 0]])
    with pytest.raises(TimeoutError) as e:
        pipe.run()
    assert re.fullmatch(
        rf"fn\.external_source \(test_lifetime\.py:{line}\): the source has not returned for "
        r"\d+\.\d s \(waiting for its worker processes\), longer than its timeout of 1 s \(it "
        r"was called for iteration 1\)\. .*", str(e.value)), str(e.value)
    del e
    t = time.monotonic()
    pipe.close()  # stops the worker, which is still asleep in the source
    assert time.monotonic() - t < 10


@pytest.mark.parametrize("timeout, exc, got", [
    (0, ValueError, "0"), (-1.5, ValueError, "-1.5"), (float("nan"), ValueError, "nan"),
    (float("inf"), ValueError, "inf"), ("5", TypeError, "str '5'"),
    (True, TypeError, "bool True"),
])
def test_timeout_argument_errors(timeout, exc, got):
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        with pytest.raises(exc) as e:
            line = sys._getframe().f_lineno + 1
            fn.external_source(source=lambda: [np.zeros(1)], timeout=timeout)
    where = f"fn.external_source (test_lifetime.py:{line})"
    if exc is TypeError:
        want = f"{where}: timeout must be a number of seconds (or None: no limit), got {got}"
    else:
        want = (f"{where}: timeout must be a positive, finite number of seconds (or None: no "
                f"limit), got {got}")
    assert str(e.value) == want


def test_timeout_is_documented_as_stokers_own():
    doc = fn.external_source.__doc__
    assert "timeout (float" in doc and "(stoker's own; DALI has none)" in doc
    assert "None (the default) waits as long as it takes" in doc


# ---- a deleted pipeline is freed at once (reference counting, not the cyclic GC)

def test_del_frees_the_pipeline_without_the_garbage_collector():
    gc.disable()
    try:
        pipe = Pipeline(batch_size=2, num_threads=2, device_id=None, seed=1)
        with pipe:
            node = fn.random.uniform(range=(0, 1), shape=(2,))
            pipe.set_outputs(node * 2)
        pipe.run()
        assert node.pipeline is pipe
        ref = weakref.ref(pipe)
        del pipe
        assert ref() is None
        assert node.pipeline is None  # the node outlives its pipeline, without keeping it
    finally:
        gc.enable()


def test_forty_pipelines_dropped_in_a_loop_keep_threads_and_memory_flat(testdata):
    r = _python("""
        gc.disable()
        before = threads()
        p = image_pipe(8, 512)
        p.run()
        del p
        t0, r0 = threads_down_to(before), rss()
        per_loop = []
        for i in range(40):
            p = image_pipe(8, 512)
            p.run()
            p.run()
            alive = weakref.ref(p)
            del p
            per_loop.append([alive() is not None, threads_down_to(t0)])
        print(json.dumps({"t0": t0, "r0": r0, "loops": per_loop, "r1": rss()}))
        """)
    assert r["loops"] == [[False, r["t0"]]] * 40
    # Each pipeline held ~50 MiB of batches (1.38 GB after 40 when they were not freed).
    grew = (r["r1"] - r["r0"]) / MiB
    assert grew < 40, f"RSS grew {grew:.0f} MiB over 40 pipelines"


# ---- a batch kept after its pipeline is gone holds only its own memory

def test_kept_batch_holds_only_its_own_memory(testdata):
    r = _python("""
        p = image_pipe(2, 64)
        p.run()
        del p
        gc.collect()
        r0 = rss()
        pipe = image_pipe(16, 1024)
        for _ in range(4):
            images, labels = pipe.run()
        kept = images.as_array()        # shares the batch's memory (16 x 1024 x 1024 x 3)
        copy = kept.copy()
        r_run = rss() - copy.nbytes
        del images, labels, pipe
        gc.collect()
        r_kept = rss() - copy.nbytes
        same = bool(np.array_equal(kept, copy))
        del kept
        r_none = rss() - copy.nbytes
        print(json.dumps({"r0": r0, "run": r_run, "kept": r_kept, "none": r_none,
                          "same": same, "nbytes": copy.nbytes}))
        """)
    assert r["same"]  # the kept batch's memory stayed valid and unchanged
    batch = r["nbytes"]
    assert batch == 16 * 1024 * 1024 * 3
    held_running = r["run"] - r["r0"]
    # The pool held several batches while the pipeline ran (prefetching) ...
    assert held_running > 3 * batch, held_running / MiB
    # ... and once it is gone, the kept batch holds its own 48 MiB and nothing more.
    held_kept = r["kept"] - r["r0"]
    assert held_kept < batch + 24 * MiB, (held_kept / MiB, held_running / MiB)
    assert r["none"] - r["r0"] < 24 * MiB
