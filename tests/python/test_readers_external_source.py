"""fn.external_source and Pipeline.feed_input: every kind of source, epochs, errors."""
import gc
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import stoker
from stoker import fn, ops, pipeline_def, types

if not hasattr(stoker._C, "ExternalSourceState"):
    pytest.skip("this build has no external_source binding", allow_module_level=True)


def make(source=None, batch_size=3, exec_async=True, post=None, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1,
                  exec_async=exec_async)
    def pipe():
        out = fn.external_source(source=source, **kw)
        outs = out if isinstance(out, list) else [out]
        return tuple(post(o) for o in outs) if post else tuple(outs)

    return pipe()


def values(batch):
    return [batch[i].tolist() for i in range(len(batch))]


@pytest.mark.parametrize("exec_async", [True, False])
def test_callable_batch_sources(exec_async):
    calls = []

    def no_args():
        calls.append(1)
        return [np.full((2,), len(calls), np.int32)] * 3

    p = make(no_args, exec_async=exec_async)
    assert [values(p.run()[0])[0] for _ in range(3)] == [[1, 1], [2, 2], [3, 3]]

    p = make(lambda i: np.arange(3 * 2, dtype=np.float32).reshape(3, 2) + i, layout="W",
             exec_async=exec_async)
    for it in range(3):
        (b,) = p.run()
        assert b.dtype == types.FLOAT and b.layout() == "W"
        np.testing.assert_array_equal(b.as_array(), np.arange(6, dtype=np.float32).reshape(3, 2) + it)

    infos = []

    def with_info(info):
        infos.append((info.iteration, info.epoch_idx))
        return [np.array([info.iteration], np.int64)] * 3

    p = make(with_info, batch_info=True, exec_async=exec_async)
    for _ in range(2):
        p.run()
    assert infos[:2] == [(0, 0), (1, 0)]


def test_per_sample_source_gets_sample_info():
    def sample(info):
        assert isinstance(info, types.SampleInfo)
        return np.array([info.idx_in_epoch, info.idx_in_batch, info.iteration, info.epoch_idx],
                        np.int64)

    p = make(sample, batch=False, batch_size=4)
    assert values(p.run()[0]) == [[i, i, 0, 0] for i in range(4)]
    assert values(p.run()[0]) == [[4 + i, i, 1, 0] for i in range(4)]


def test_callable_ends_the_epoch_and_reset_starts_over():
    def src(info):
        if info.iteration >= 2:
            raise StopIteration
        return [np.array([info.epoch_idx * 10 + info.iteration], np.int32)] * 3

    p = make(src, batch_info=True)
    for epoch in range(3):
        got = [values(p.run()[0])[0][0] for _ in range(2)]
        assert got == [epoch * 10, epoch * 10 + 1]
        with pytest.raises(StopIteration):
            p.run()
        with pytest.raises(StopIteration):  # still the end, until reset()
            p.run()
        p.reset()


@pytest.mark.parametrize("cycle", [False, "no", True, "quiet", "raise"])
def test_iterables_and_cycle(cycle):
    data = [[np.array([k], np.uint8)] * 2 for k in range(3)]
    p = make(data, batch_size=2, cycle=cycle)
    got = [values(p.run()[0])[0][0] for _ in range(3)]
    assert got == [0, 1, 2]
    if cycle in (True, "quiet"):
        assert [values(p.run()[0])[0][0] for _ in range(4)] == [0, 1, 2, 0]
        return
    with pytest.raises(StopIteration):
        p.run()
    p.reset()
    if cycle == "raise":
        assert [values(p.run()[0])[0][0] for _ in range(3)] == [0, 1, 2]
        with pytest.raises(StopIteration):
            p.run()
    else:  # as DALI: without cycle the iterator stays exhausted
        with pytest.raises(StopIteration):
            p.run()


def test_generator_function_and_num_outputs():
    def gen():
        for k in range(2):
            yield (np.full((2, 3), k, np.float32), [np.array([k], np.int64)] * 2)

    p = make(gen, batch_size=2, num_outputs=2, cycle="raise", layout=["W", ""])
    for _ in range(2):
        for k in range(2):
            a, b = p.run()
            assert a.layout() == "W" and b.dtype == types.INT64
            np.testing.assert_array_equal(a.as_array(), np.full((2, 3), k, np.float32))
            assert values(b) == [[k], [k]]
        with pytest.raises(StopIteration):
            p.run()
        p.reset()


def test_variable_shapes_and_smaller_batches():
    def src(i):
        return [np.ones((k + 1, 2), np.int16) * k for k in range(1 + i % 3)]

    p = make(src, batch_size=3)
    for i in range(4):
        (b,) = p.run()
        assert len(b) == 1 + i % 3
        assert [b[k].shape for k in range(len(b))] == [(k + 1, 2) for k in range(1 + i % 3)]


def test_into_other_operators():
    imgs = [np.random.default_rng(k).random((5, 7, 3)).astype(np.float32) for k in range(3)]
    p = make(lambda: imgs, layout="HWC", post=lambda x: x * 2)
    (b,) = p.run()
    for k in range(3):
        np.testing.assert_allclose(b[k], imgs[k] * 2)
    if "flip" in stoker._schema.SCHEMAS:
        p = make(lambda: imgs, layout="HWC", post=lambda x: fn.flip(x, horizontal=1))
        (b,) = p.run()
        for k in range(3):
            np.testing.assert_array_equal(b[k], imgs[k][:, ::-1])


def test_feed_input_by_name_and_node():
    pipe = stoker.Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        x = fn.external_source(name="x", dtype=types.FLOAT, ndim=1)
        y = fn.external_source(name="y")
        pipe.set_outputs(x, y + 1)
    for k in range(3):  # several batches may be queued ahead of run()
        pipe.feed_input("x", [np.full((3,), k, np.float32)] * 2)
        pipe.feed_input(y, np.full((2, 2), k, np.int32))
    for k in range(3):
        a, b = pipe.run()
        assert values(a) == [[k] * 3] * 2 and values(b) == [[k + 1] * 2] * 2
    with pytest.raises(RuntimeError, match=r"no data for this batch: feed the external_source 'x'"):
        pipe.run()
    with pytest.raises(ValueError, match=r"no external_source 'z'.*'x', 'y'"):
        pipe.feed_input("z", [np.zeros(1)])
    with pytest.raises(TypeError, match="dtype int32, but dtype=FLOAT was declared"):
        pipe.feed_input("x", [np.zeros(3, np.int32)])
    with pytest.raises(ValueError, match="ndim=1 was declared"):
        pipe.feed_input("x", [np.zeros((3, 1), np.float32)])


def test_feed_input_repeat_last():
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(fn.external_source(name="x", repeat_last=True))
    pipe.feed_input("x", [np.array([7])])
    assert [values(pipe.run()[0]) for _ in range(3)] == [[[7]]] * 3
    pipe.feed_input("x", [np.array([8])])
    time.sleep(0.05)
    got = [values(pipe.run()[0]) for _ in range(3)]
    assert got[-1] == [[8]]


def test_feed_input_copies_the_data_and_checks_the_batch_size_when_fed():
    """feed_input copies the batch on the caller's thread (the producer then takes it without
    the GIL): changing the array afterwards changes nothing, no_copy=True shares it, and a
    batch larger than batch_size is refused by feed_input itself."""
    pipe = stoker.Pipeline(batch_size=2, num_threads=2, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(fn.external_source(name="x"), fn.external_source(name="y", no_copy=True))
    a, b = np.arange(6, dtype=np.int16).reshape(2, 3), np.ones((2, 2), np.float64)
    pipe.feed_input("x", a)
    pipe.feed_input("y", b)
    a[:] = -1
    x, y = pipe.run()
    assert values(x) == [[0, 1, 2], [3, 4, 5]] and x[0].dtype == np.int16
    assert values(y) == [[1.0, 1.0]] * 2
    with pytest.raises(ValueError, match=r"the batch given to feed_input has 3 samples, more "
                                         r"than the pipeline's batch_size \(2\)"):
        pipe.feed_input("x", [np.zeros(1, np.int16)] * 3)
    pipe.feed_input("x", [np.zeros(1, np.int16)])  # the refused batch left nothing behind
    pipe.feed_input("y", b)
    x, _ = pipe.run()
    assert values(x) == [[0]]


def test_legacy_iter_setup():
    class Pipe(stoker.Pipeline):
        def __init__(self):
            super().__init__(batch_size=2, num_threads=1, device_id=None, seed=1)
            self.source = ops.ExternalSource()
            self.k = 0

        def define_graph(self):
            self.data = self.source()
            return self.data

        def iter_setup(self):
            self.feed_input(self.data, [np.array([self.k, self.k])] * 2)
            self.k += 1

    p = Pipe()
    assert [values(p.run()[0])[0] for _ in range(3)] == [[0, 0], [1, 1], [2, 2]]


def test_no_copy_shares_the_arrays():
    arrays = [np.arange(6, dtype=np.float64).reshape(2, 3) + k for k in range(2)]
    p = make(lambda: arrays, batch_size=2, no_copy=True)
    (b,) = p.run()
    for k in range(2):
        assert b[k].__array_interface__["data"][0] == arrays[k].__array_interface__["data"][0]
        np.testing.assert_array_equal(b[k], arrays[k])
    dense = np.arange(8, dtype=np.int16).reshape(2, 4)
    p = make(lambda: dense, batch_size=2, no_copy=True)
    (b,) = p.run()
    assert b[1].__array_interface__["data"][0] == dense[1].__array_interface__["data"][0]
    del p
    gc.collect()
    np.testing.assert_array_equal(b.as_array(), dense)  # the batch keeps the array alive


def test_source_errors_reach_run_unchanged():
    class Boom(Exception):
        pass

    def src(i):
        if i == 1:
            raise Boom("bad batch 1")
        return [np.zeros(1)] * 3

    p = make(src)
    p.run()
    with pytest.raises(Boom, match="bad batch 1"):
        p.run()
    p.run()  # the pipeline goes on

    with pytest.raises(TypeError, match="samples of a batch must share dtype"):
        make(lambda: [np.zeros(1, np.float32), np.zeros(1, np.int8)]).run()
    with pytest.raises(ValueError, match="has 4 samples; it must have 1 to 3"):
        make(lambda: [np.zeros(1)] * 4).run()
    with pytest.raises(TypeError, match="has dtype complex128"):
        make(lambda: [np.zeros(1, complex)]).run()
    with pytest.raises(TypeError, match="num_outputs=2 the source must return a tuple of 2"):
        make(lambda: [np.zeros(1)], num_outputs=2).run()
    with pytest.raises(TypeError, match="parallel=True"):
        make(lambda: [np.zeros(1)], parallel=True)
    with pytest.raises(ValueError, match="cycle='raise' needs a source that can start over"):
        make(lambda: [np.zeros(1)], cycle="raise")
    with pytest.raises(TypeError, match="callable, an iterable or a generator function"):
        make(42)
    with pytest.raises(ValueError, match=r"^\.gpu\(\) \(.*\) runs on 'mixed', but the pipeline has "
                                         r"device_id=None \(CPU only\)"):
        make(lambda: [np.zeros(1)], device="gpu").build()  # device='gpu' copies to the GPU


def test_torch_tensors_as_data():
    torch = pytest.importorskip("torch")
    p = make(lambda: [torch.full((2,), 3.0)] * 3)
    (b,) = p.run()
    assert values(b) == [[3.0, 3.0]] * 3


def test_framework_iterator_epochs():
    pytest.importorskip("torch")
    from stoker.plugin.pytorch import StokerGenericIterator
    data = [[np.array([k], np.int64)] * 2 for k in range(3)]
    p = make(data, batch_size=2, cycle="raise")
    it = StokerGenericIterator(p, ["x"], auto_reset=True)
    for _ in range(2):
        got = [int(batch[0]["x"][0, 0]) for batch in it]
        assert got == [0, 1, 2]


def test_closing_while_the_producer_waits_for_data():
    # The producer runs ahead and waits for feed_input; deleting the pipeline must not hang.
    code = textwrap.dedent("""
        import gc, numpy as np, stoker
        from stoker import fn
        pipe = stoker.Pipeline(batch_size=1, num_threads=1, device_id=None, seed=1)
        with pipe:
            pipe.set_outputs(fn.external_source(name="x"))
        pipe.feed_input("x", [np.zeros(1)])
        pipe.run()
        del pipe
        gc.collect()
        pipe2 = stoker.Pipeline(batch_size=1, num_threads=1, device_id=None, seed=1)
        with pipe2:
            pipe2.set_outputs(fn.external_source(source=lambda: [np.ones(1)]))
        pipe2.run()
        pipe2.close()
        print("done")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": ":".join(sys.path)})
    assert r.returncode == 0 and "done" in r.stdout, r.stderr[-2000:]
