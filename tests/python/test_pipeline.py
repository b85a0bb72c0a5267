"""The Pipeline API: building, running, outputs, determinism, the legacy ops API."""
import gc
import threading

import numpy as np
import pytest

import stoker
from stoker import Pipeline, fn, ops, pipeline_def, types


def test_pipeline_def_arguments_can_be_overridden_at_call_time():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=5)
    def pipe(shape):
        return fn.random.uniform(range=(0, 1), shape=shape)

    p = pipe((2, 3), batch_size=6, num_threads=2)
    assert (p.batch_size, p.num_threads, p.seed) == (6, 2, 5)
    (out,) = p.run()
    assert len(out) == 6 and out.shape() == [(2, 3)] * 6


def test_function_parameter_named_like_a_pipeline_argument_receives_it():
    @pipeline_def(num_threads=1, device_id=None, seed=1)
    def pipe(batch_size):
        return fn.random.uniform(shape=[batch_size])

    (out,) = pipe(batch_size=3).run()
    assert out.shape() == [(3,)] * 3


def test_outputs_api():
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=1)
    def pipe():
        return fn.random.uniform(range=(0, 10), shape=(2, 2), dtype=types.INT32)

    (out,) = pipe().run()
    assert isinstance(out, stoker.TensorListCPU)
    assert len(out) == 3 and out.layout() == "" and out.dtype == types.INT32
    arr = out.as_array()
    assert arr.shape == (3, 2, 2) and arr.dtype == np.int32
    assert np.array_equal(out[1], arr[1]) and np.array_equal(out.at(2), arr[2])
    assert out.is_dense_tensor()
    # Zero-copy: the sample views share the batch's memory.
    assert out[0].__array_interface__["data"][0] == arr.__array_interface__["data"][0]
    via_dlpack = np.from_dlpack(out)
    assert via_dlpack.__array_interface__["data"][0] == arr.__array_interface__["data"][0]
    assert np.array_equal(via_dlpack, arr)
    assert out.__dlpack_device__() == (1, 0)
    assert out.as_cpu() is out
    with pytest.raises(IndexError):
        out[3]


def test_samples_stay_valid_after_the_pipeline_is_gone():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=9)
    def pipe():
        return fn.random.uniform(range=(5, 6), shape=(1000,))

    p = pipe()
    (out,) = p.run()
    sample = out[1]
    expected = sample.copy()
    del out, p
    gc.collect()
    assert np.array_equal(sample, expected)


def test_ragged_batches_refuse_as_array_with_a_clear_message(jpeg_files):
    files = [p for p, _ in jpeg_files[:3]]

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        return fn.decoders.image(jpegs)

    (images,) = pipe().run()
    with pytest.raises(ValueError, match="different shapes"):
        images.as_array()
    assert len(images.shape()) == 3


def augment_pipe(jpeg_dir, num_threads, seed, exec_async=True):
    @pipeline_def(batch_size=8, num_threads=num_threads, device_id=None, seed=seed,
                  exec_async=exec_async)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True, initial_fill=10)
        images = fn.decoders.image(jpegs)
        noise = fn.random.normal(shape=(4,))
        coin = fn.random.coin_flip(probability=0.3)
        u = fn.random.uniform(range=fn.random.uniform(range=(0, 1), shape=(2,)) * 0 + 1)
        return images, labels, noise, coin, u
    return pipe()


def batches_bytes(p, n):
    out = []
    for _ in range(n):
        out.append([b"".join(t[i].tobytes() for i in range(len(t))) for t in p.run()])
    return out


def test_same_seed_same_batches_whatever_the_thread_count(jpeg_dir):
    a = batches_bytes(augment_pipe(jpeg_dir, 1, 42), 4)
    b = batches_bytes(augment_pipe(jpeg_dir, 4, 42), 4)
    c = batches_bytes(augment_pipe(jpeg_dir, 3, 42, exec_async=False), 4)
    assert a == b == c
    d = batches_bytes(augment_pipe(jpeg_dir, 2, 43), 4)
    assert a != d


def test_chains_of_tiny_operators_give_the_same_values_on_the_stage_thread():
    # Each step's normal() reads the step before as an argument, so the chain is handed over
    # 20 times an iteration; after the first, such chains are measured tiny and run on the
    # stage's own thread. The values must not change when they do (stddev 0: x doubles).
    def pipe(threads):
        @pipeline_def(batch_size=6, num_threads=threads, device_id=None, seed=5)
        def p():
            x = fn.external_source(name="x", dtype=types.FLOAT)
            for _ in range(20):
                x = x + fn.random.normal(mean=x, stddev=0.0)
            return x, fn.random.uniform(range=[0, 1])
        return p()

    runs = {}
    for threads in (1, 4):
        p = pipe(threads)
        p.build()
        out = []
        for it in range(6):
            p.feed_input("x", [np.float32(it + k / 8) for k in range(6)])
            x, u = p.run()
            out.append((np.array(x.as_array()), np.array(u.as_array())))
        runs[threads] = out
    for it, (x, u) in enumerate(runs[1]):
        expected = np.array([(it + k / 8) * 2.0 ** 20 for k in range(6)], np.float32)
        np.testing.assert_array_equal(x, expected)
        np.testing.assert_array_equal(runs[4][it][0], x)
        np.testing.assert_array_equal(runs[4][it][1], u)


def test_random_operators_statistics():
    @pipeline_def(batch_size=64, num_threads=2, device_id=None, seed=11)
    def pipe():
        return (fn.random.uniform(range=(2, 4), shape=(100,)),
                fn.random.coin_flip(probability=0.25, shape=(100,)),
                fn.random.normal(mean=1.0, stddev=2.0, shape=(100,)),
                fn.random.uniform(values=[1, 5, 9], shape=(100,), dtype=types.INT32),
                fn.random.coin_flip())

    u, c, n, v, scalar = pipe().run()
    u, c, n, v = u.as_array(), c.as_array(), n.as_array(), v.as_array()
    assert u.dtype == np.float32 and u.min() >= 2 and u.max() < 4 and abs(u.mean() - 3) < 0.02
    assert c.dtype == np.int32 and set(np.unique(c)) <= {0, 1} and abs(c.mean() - 0.25) < 0.02
    assert abs(n.mean() - 1) < 0.05 and abs(n.std() - 2) < 0.05
    assert set(np.unique(v)) == {1, 5, 9}
    assert scalar.shape()[0] == ()
    # Samples differ from each other (each has its own stream).
    assert not np.array_equal(u[0], u[1])


def test_per_sample_tensor_arguments():
    @pipeline_def(batch_size=16, num_threads=2, device_id=None, seed=2)
    def pipe():
        p = fn.random.uniform(range=(0, 1))
        return p, fn.random.coin_flip(probability=p, shape=(2000,))

    p, flips = pipe().run()
    for i in range(16):
        assert abs(flips[i].mean() - p[i]) < 0.05


def test_cast_rounds_half_away_from_zero_and_saturates():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def pipe():
        x = fn.random.uniform(range=(-300, 300), shape=(1000,))
        return x, fn.cast(x, dtype=types.UINT8), fn.cast(x, dtype=types.INT8), fn.cast(x, dtype=types.FLOAT16)

    x, u8, i8, f16 = pipe().run()
    x = x.as_array()
    r = np.trunc(x) + np.trunc(2 * (x - np.trunc(x)))  # half away from zero, as DALI; exact
    assert np.array_equal(u8.as_array(), np.clip(r, 0, 255).astype(np.uint8))
    assert np.array_equal(i8.as_array(), np.clip(r, -128, 127).astype(np.int8))
    assert np.array_equal(f16.as_array(), x.astype(np.float16))


def test_arithmetic_and_comparisons_match_numpy():
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=4)
    def pipe():
        a = fn.random.uniform(range=(0, 200), shape=(5, 4), dtype=types.UINT8)
        b = fn.random.uniform(range=(-50, 50), shape=(4,), dtype=types.INT16)
        f = fn.random.uniform(range=(1, 2), shape=(5, 4))
        return a, b, f, a * 2 + 1, a + b, a / 3, -b, a // 7, b % 7, a == 3, f < 1.5, a * f, 2 - a, abs(b)

    a, b, f, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11 = pipe().run()
    A, B, F = a.as_array(), b.as_array(), f.as_array()
    # DALI's promotion: a Python int is int32, a Python float is float32.
    assert r1.dtype == types.INT32 and np.array_equal(r1.as_array(), A.astype(np.int32) * 2 + 1)
    assert r2.dtype == types.INT16 and np.array_equal(r2.as_array(), A.astype(np.int16) + B[:, None, :])
    assert r3.dtype == types.FLOAT and np.allclose(r3.as_array(), A / np.float32(3), rtol=1e-6)
    assert np.array_equal(r4.as_array(), -B)
    assert np.array_equal(r5.as_array(), (A.astype(np.int32) // 7))
    # DALI's %: C's remainder, with the dividend's sign (not Python's).
    assert np.array_equal(r6.as_array(), np.fmod(B.astype(np.int32), 7))
    assert r7.dtype == types.BOOL and np.array_equal(r7.as_array(), A == 3)
    assert np.array_equal(r8.as_array(), F < 1.5)
    assert r9.dtype == types.FLOAT and np.allclose(r9.as_array(), A * F)
    assert np.array_equal(r10.as_array(), 2 - A.astype(np.int32))
    assert np.array_equal(r11.as_array(), np.abs(B))


def test_legacy_ops_api_gives_the_same_results_as_fn(jpeg_dir):
    class LegacyPipe(Pipeline):
        def __init__(self):
            super().__init__(batch_size=6, num_threads=2, device_id=0, seed=12)
            self.input = ops.FileReader(file_root=str(jpeg_dir), random_shuffle=True, initial_fill=8)
            self.decode = ops.ImageDecoder(output_type=types.RGB)
            self.coin = ops.random.CoinFlip(probability=0.5)
            self.cast = ops.Cast(dtype=types.FLOAT)

        def define_graph(self):
            jpegs, labels = self.input(name="Reader")
            return self.decode(jpegs), labels, self.cast(self.coin())

    @pipeline_def(batch_size=6, num_threads=2, device_id=0, seed=12)
    def fn_pipe():
        jpegs, labels = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True,
                                        initial_fill=8, name="Reader")
        return fn.decoders.image(jpegs, output_type=types.RGB), labels, fn.cast(fn.random.coin_flip(probability=0.5), dtype=types.FLOAT)

    legacy, new = LegacyPipe(), fn_pipe()
    legacy.build()
    assert legacy.epoch_size("Reader") == new.epoch_size("Reader")
    assert batches_bytes(legacy, 3) == batches_bytes(new, 3)


def test_dalis_experimental_aliases_are_the_main_operators(jpeg_dir):
    """fn.experimental.decoders.* and peek_image_shape (DALI 1.2x names, kept by DALI as
    deprecated aliases) run the main operators: the same batches."""
    def make(exp):
        ns = fn.experimental if exp else fn

        @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
        def pipe():
            jpegs, _ = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True, seed=1)
            return (ns.decoders.image(jpegs), ns.decoders.image_crop(jpegs, crop=(32, 48)),
                    ns.decoders.image_random_crop(jpegs), ns.peek_image_shape(jpegs),
                    ns.decoders.image_slice(jpegs, rel_start=(0.25, 0.5), rel_shape=(0.5, 0.5)))
        return pipe()

    assert batches_bytes(make(True), 2) == batches_bytes(make(False), 2)

    class Legacy(Pipeline):
        def __init__(self):
            super().__init__(batch_size=2, num_threads=1, device_id=None, seed=3)
            self.input = ops.readers.File(file_root=str(jpeg_dir))
            self.decode = ops.experimental.decoders.Image()
            self.peek = ops.experimental.PeekImageShape()

        def define_graph(self):
            jpegs, _ = self.input()
            return self.decode(jpegs), self.peek(jpegs)

    images, shapes = Legacy().run()
    assert [list(images.at(i).shape) for i in range(2)] == \
        [list(shapes.at(i)) for i in range(2)]


def test_memory_stats_and_release():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def pipe():
        return fn.random.uniform(shape=(10000,))

    p = pipe()
    for _ in range(3):
        p.run()
    s = p.memory_stats()["host"]
    assert s["peak_allocated"] >= 4 * 10000 * 4 and s["reserved"] >= s["allocated"]
    p.release_unused()


def test_prefetching_runs_ahead():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1, prefetch_queue_depth=3)
    def pipe():
        return fn.random.uniform(shape=(2,))

    p = pipe()
    p.run()
    import time
    time.sleep(0.2)
    assert p._executor.iterations_produced() == 4  # 1 consumed + 3 queued


def test_profile_says_where_the_time_goes(jpeg_files):
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(files=[f for f, _ in jpeg_files[:8]], name="Reader")
        images = fn.decoders.image(jpegs)
        return fn.resize(images, size=[32, 32]), labels

    p = pipe()
    p.build()
    assert "no batch" in p.profile_report()
    for _ in range(5):
        p.run()
    prof = p.profile()
    assert prof["batches"] == 5 and prof["batch_size"] == 4 and prof["num_threads"] == 2
    assert not prof["pipelined"]  # one stage: everything on the CPU
    assert [s["stage"] for s in prof["stages"]] == ["cpu"]
    assert prof["stages"][0]["iterations"] >= 5
    assert prof["elapsed_ms"] > 0 and 0 <= prof["wait_ms"] <= prof["elapsed_ms"] * 1.01
    ops = {o["operator"].split(" ")[0]: o for o in prof["operators"]}
    assert set(ops) == {"fn.readers.file", "fn.decoders.image", "fn.resize"}
    for o in ops.values():
        assert o["device"] == "cpu" and o["stage"] == 0 and o["iterations"] >= 5
    assert ops["fn.readers.file"]["batch_ms"] > 0        # a batch operator
    assert ops["fn.decoders.image"]["sample_ms"] > 0     # per sample, on the workers
    assert ops["fn.resize"]["sample_ms"] > 0
    # Decoding a JPEG costs more than resizing it to 32x32.
    assert ops["fn.decoders.image"]["sample_ms"] > ops["fn.resize"]["sample_ms"]
    report = p.profile_report()
    for name in ops:
        assert name in report
    assert "samples/s" in report and "Verdict" in report
