"""fn.external_source(parallel=True): sources called in worker processes that pass their data
through shared memory. The reference is the same source run serially (parallel=False), which
test_readers_external_source.py checks against plain NumPy; here: equal results for per-sample
and batch sources, several workers really used, epochs, errors from workers naming the source
and the sample, dead workers, and workers (and their shared memory) gone with the pipeline."""
import gc
import os
import time

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

if not hasattr(stoker._C, "ExternalSourceState"):
    pytest.skip("this build has no external_source binding", allow_module_level=True)


class Boom(Exception):
    pass


# Module level, so that py_start_method='spawn' can pickle them.
def sample_source(info):
    rng = np.random.default_rng(info.idx_in_epoch * 7919 + info.epoch_idx)
    shape = (1 + info.idx_in_epoch % 4, 3)
    return (rng.integers(0, 255, shape).astype(np.uint8),
            np.array([info.idx_in_epoch, info.idx_in_batch, info.iteration, info.epoch_idx],
                     np.int64),
            np.float32(info.idx_in_epoch / 3),          # a 0-d sample
            np.array([os.getpid()], np.int64))


def batch_source(info):
    return [np.full((2, info.iteration + 1), info.iteration * 100 + info.epoch_idx, np.int16)
            for _ in range(3)], np.arange(3, dtype=np.float64) + info.iteration


def make(source, batch_size=5, workers=3, start="fork", parallel=True, post=None, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1,
                  py_num_workers=workers, py_start_method=start)
    def pipe():
        out = fn.external_source(source=source, parallel=parallel, **kw)
        outs = out if isinstance(out, list) else [out]
        return tuple(post(o) for o in outs) if post else tuple(outs)

    return pipe()


def batches(pipe, n):
    out = []
    for _ in range(n):
        out.append([[np.array(b[i]) for i in range(len(b))] for b in pipe.run()])
    return out


def assert_equal_batches(got, want, skip_outputs=()):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for o, (gb, wb) in enumerate(zip(g, w)):
            if o in skip_outputs:
                continue
            assert len(gb) == len(wb)
            for gs, ws in zip(gb, wb):
                assert gs.dtype == ws.dtype and gs.shape == ws.shape
                np.testing.assert_array_equal(gs, ws)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("workers", [1, 3, 8])
def test_per_sample_source_equals_serial(workers):
    serial = batches(make(sample_source, num_outputs=4, batch=False, parallel=False), 6)
    p = make(sample_source, num_outputs=4, workers=workers)  # batch=False is implied
    got = batches(p, 6)
    assert_equal_batches(got, serial, skip_outputs=(3,))
    pids = {int(s[0]) for b in got for s in b[3]}
    assert os.getpid() not in pids
    assert pids <= set(p._py_pool.pids)
    assert len(pids) == min(workers, 5)  # the samples of each batch are spread over the workers
    assert got[0][1][4].tolist() == [4, 4, 0, 0] and got[2][1][0].tolist() == [10, 0, 2, 0]


def test_batch_sources_equal_serial():
    for kw in ({"batch": True, "batch_info": True}, {"batch": True}):
        src = batch_source if kw.get("batch_info") else (
            lambda i: batch_source(stoker.external_source.BatchInfo(i, 0)))
        serial = batches(make(src, batch_size=3, num_outputs=2, parallel=False, **kw), 5)
        got = batches(make(src, batch_size=3, num_outputs=2, workers=2, prefetch_queue_depth=3,
                           **kw), 5)
        assert_equal_batches(got, serial)
        assert got[4][0][0].tolist() == [[400] * 5] * 2


def test_spawn_workers():
    serial = batches(make(sample_source, num_outputs=4, batch=False, parallel=False), 3)
    p = make(sample_source, num_outputs=4, workers=2, start="spawn")
    assert_equal_batches(batches(p, 3), serial, skip_outputs=(3,))
    with pytest.raises(TypeError, match=r"py_start_method='spawn'.*'<lambda>' cannot be pickled.*"
                                        r"define it at module level"):
        make(lambda info: np.zeros(1), workers=2, start="spawn").build()


def test_large_and_changing_sample_sizes():
    # Samples from bytes to megabytes: the shared memory segments grow and are reused.
    def src(info):
        n = [10, 3_000_000, 0, 70_000, 1][info.iteration % 5] + info.idx_in_batch
        return np.arange(n, dtype=np.uint8) + np.uint8(info.iteration)

    serial = batches(make(src, batch_size=4, batch=False, parallel=False), 10)
    got = batches(make(src, batch_size=4, batch=False, workers=2, prefetch_queue_depth=2), 10)
    assert_equal_batches(got, serial)


def test_epochs_and_reset():
    n = 7

    def src(info):
        if info.idx_in_epoch >= n:
            raise StopIteration
        return np.array([info.epoch_idx, info.idx_in_epoch], np.int32)

    def epochs(pipe, count):
        out = []
        for _ in range(count):
            epoch = []
            while True:
                try:
                    (b,) = pipe.run()
                except StopIteration:
                    pipe.reset()
                    break
                epoch.append([b[i].tolist() for i in range(len(b))])
            out.append(epoch)
        return out

    serial = epochs(make(src, batch_size=3, batch=False, parallel=False), 3)
    got = epochs(make(src, batch_size=3, batch=False, workers=2, prefetch_queue_depth=3), 3)
    assert got == serial
    assert got[2] == [[[2, 0], [2, 1], [2, 2]], [[2, 3], [2, 4], [2, 5]]]


def test_exception_in_a_worker_names_source_and_sample():
    def src(info):
        if info.iteration == 1 and info.idx_in_batch == 2:
            raise Boom("no such record")
        return np.array([info.idx_in_epoch], np.int32)

    p = make(src, batch_size=4, batch=False, workers=2)
    p.run()
    with pytest.raises(Boom, match=r"fn.external_source \(test_external_source_parallel.py:\d+\): "
                                   r"the source raised Boom: no such record \(for "
                                   r"SampleInfo\(idx_in_epoch=6, idx_in_batch=2, iteration=1, "
                                   r"epoch_idx=0\), in a worker process\)") as e:
        p.run()
    assert "raise Boom" in str(e.value.__cause__)  # the worker's traceback
    (b,) = p.run()  # the pipeline goes on
    assert [b[i].tolist() for i in range(4)] == [[8], [9], [10], [11]]

    def src_type_error(info):
        return "not an array"

    with pytest.raises(TypeError, match=r"the sample has dtype <U12, which stoker has no type for"):
        make(src_type_error, batch=False, workers=2).run()


def test_a_dead_worker_is_reported():
    def src(info):
        if info.iteration == 1:
            os._exit(3)
        return np.zeros(1)

    p = make(src, batch_size=2, batch=False, workers=1, prefetch_queue_depth=1)
    p.run()
    with pytest.raises(RuntimeError, match=r"parallel worker process 0 \(pid \d+\) exited with "
                                           r"code 3 before returning its data"):
        p.run()


def shm_files(pool):
    return [f for f in os.listdir("/dev/shm") if f.startswith(pool._prefix)]


def test_workers_stop_when_the_pipeline_is_deleted():
    p = make(sample_source, num_outputs=4, workers=3)
    batches(p, 2)
    pool = p._py_pool
    pids = pool.pids
    assert all(alive(pid) for pid in pids)
    assert shm_files(pool)
    del p
    gc.collect()
    deadline = time.time() + 10
    while any(alive(pid) for pid in pids) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in pids)
    assert not shm_files(pool)

    q = make(sample_source, num_outputs=4, workers=2)
    batches(q, 1)
    pool = q._py_pool
    q.close()  # close() stops them too, at once
    assert not any(alive(pid) for pid in pool.pids) and not shm_files(pool)


def test_workers_stop_with_batches_in_flight():
    def slow(info):
        time.sleep(0.2)
        return np.zeros(1)

    p = make(slow, batch_size=4, batch=False, workers=2, prefetch_queue_depth=3)
    p.run()
    pids = p._py_pool.pids
    t = time.time()
    p.close()
    assert time.time() - t < 8
    assert not any(alive(pid) for pid in pids)


def test_no_workers_runs_on_the_pipeline_thread():
    p = make(sample_source, num_outputs=4, workers=0)
    (_, _, _, pid) = p.run()
    assert p._py_pool is None and int(pid[0][0]) == os.getpid()


def test_start_py_workers_before_build():
    p = make(sample_source, num_outputs=4, workers=2)
    p.start_py_workers()
    pids = p._py_pool.pids
    assert all(alive(pid) for pid in pids)
    p.build()
    assert p._py_pool.pids == pids
    p.run()


def test_sources_parallel_cannot_take():
    def gen():
        yield [np.zeros(1)]

    with pytest.raises(TypeError, match=r"parallel=True needs a callable source .* that takes one "
                                        r"argument \(a SampleInfo\).*got a generator function"):
        make(gen)
    with pytest.raises(TypeError, match=r"got an iterable"):
        make([[np.zeros(1)]], batch=True)
    with pytest.raises(TypeError, match=r"the source is called with one argument \(the iteration "
                                        r"number\), but '<lambda>' takes none"):
        make(lambda: [np.zeros(1)], batch=True)
    with pytest.raises(ValueError, match="py_start_method must be 'fork' or 'spawn', got 'thread'"):
        make(sample_source, start="thread")
    with pytest.raises(ValueError, match=r"prefetch_queue_depth must be a positive int, got 0"):
        make(sample_source, prefetch_queue_depth=0)
