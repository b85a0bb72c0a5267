"""stoker.plugin.jax: zero-copy jax arrays, the shared epoch semantics, sharding over devices.

Two CPU devices are asked for (XLA's host device count) before JAX starts; the sharding tests
skip if JAX was already started with one device by an earlier test module."""
import os

import numpy as np
import pytest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
jax = pytest.importorskip("jax")
try:
    jax.config.update("jax_num_cpu_devices", 2)
except Exception:  # older JAX without the option, or a backend that already started
    pass
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.plugin.jax import DALIGenericIterator, LastBatchPolicy, StokerJaxIterator, to_jax  # noqa: E402

FILL, DROP, PARTIAL = LastBatchPolicy.FILL, LastBatchPolicy.DROP, LastBatchPolicy.PARTIAL


@pytest.fixture(scope="module")
def seven(jpeg_files):
    files = sorted((p for p, _ in jpeg_files), key=os.path.getsize)[:7]
    assert len(files) == 7
    return files


def label_pipe(files, batch_size=2, pad=False, shard_id=0, num_shards=1):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe():
        _, labels = fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                    pad_last_batch=pad, shard_id=shard_id,
                                    num_shards=num_shards, name="Reader")
        return labels
    return pipe()


def two_devices():
    devs = jax.devices("cpu")
    if len(devs) < 2:
        pytest.skip("JAX started with one CPU device (set XLA_FLAGS="
                    "--xla_force_host_platform_device_count=2 before JAX is imported)")
    return devs[:2]


def epoch(it):
    return [np.asarray(b["label"]).reshape(-1).tolist() for b in it]


@pytest.mark.parametrize("policy,padded,expected", [
    (PARTIAL, True, [[[1, 2], [3, 4], [5, 6], [7]]] * 2),
    (PARTIAL, False, [[[1, 2], [3, 4], [5, 6], [7]], [[2, 3], [4, 5], [6, 7], [1]]]),
    (FILL, True, [[[1, 2], [3, 4], [5, 6], [7, 7]]] * 2),
    (FILL, False, [[[1, 2], [3, 4], [5, 6], [7, 1]], [[2, 3], [4, 5], [6, 7]]]),
    (DROP, False, [[[1, 2], [3, 4], [5, 6]], [[2, 3], [4, 5], [6, 7]]]),
])
def test_last_batch_policy(seven, policy, padded, expected):
    it = StokerJaxIterator(label_pipe(seven, pad=padded), ["label"], reader_name="Reader",
                           last_batch_policy=policy, auto_reset=True)
    got = [epoch(it) for _ in range(2)]
    assert got == expected
    assert DALIGenericIterator is StokerJaxIterator


def test_arrays_are_the_pipelines_buffers():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.random.uniform(range=(0, 1), shape=(3, 5)), fn.random.coin_flip(
            shape=(6,), dtype=types.BOOL)

    p = pipe()
    captured = []
    run = p.run

    def spy():
        outs = run()
        captured.append(outs)
        return outs

    p.run = spy
    it = StokerJaxIterator(p, ["x", "flips"])
    for _ in range(3):
        out = next(it)
        x, flips = captured[-1]
        assert isinstance(out["x"], jax.Array) and out["x"].shape == (4, 3, 5)
        assert out["x"].dtype == jnp.float32
        assert out["x"].unsafe_buffer_pointer() == x.as_array().ctypes.data, "a copy was made"
        np.testing.assert_array_equal(np.asarray(out["x"]), x.as_array())
        assert out["flips"].dtype == jnp.bool_
        np.testing.assert_array_equal(np.asarray(out["flips"]), flips.as_array())
    held = out["x"]
    expected = np.asarray(held).copy()
    captured.clear()
    del it, p, x, out
    import gc
    gc.collect()
    np.testing.assert_array_equal(np.asarray(held), expected)


def test_ragged_outputs_are_lists(seven):
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=seven)
        return jpegs

    p = pipe()
    (jpegs,) = p.run()
    out = to_jax(jpegs)
    assert isinstance(out, list) and len(out) == 3
    for i, a in enumerate(out):
        with open(seven[i], "rb") as f:
            assert np.asarray(a).tobytes() == f.read()


def test_two_pipelines_give_one_array_sharded_over_two_devices(seven):
    devs = two_devices()
    pipes = [label_pipe(seven, pad=True, shard_id=k, num_shards=2) for k in range(2)]
    it = StokerJaxIterator(pipes, ["label"], reader_name="Reader", last_batch_policy=FILL,
                           auto_reset=True)
    assert len(it) == 2
    for _ in range(2):
        steps = list(it)
        assert len(steps) == 2
        seen = []
        for b in steps:
            a = b["label"]
            assert a.shape == (4, 1)
            assert {s.device for s in a.addressable_shards} == set(devs)
            by_device = {s.device: np.asarray(s.data).reshape(-1).tolist()
                         for s in a.addressable_shards}
            assert np.asarray(a).reshape(-1).tolist() == by_device[devs[0]] + by_device[devs[1]]
            seen += np.asarray(a).reshape(-1).tolist()
        assert set(seen) == set(range(1, 8))


def test_one_pipeline_split_by_a_sharding(seven):
    devs = two_devices()
    sharding = NamedSharding(Mesh(np.array(devs), ("batch",)), PartitionSpec("batch"))
    it = StokerJaxIterator(label_pipe(seven, batch_size=4, pad=True), ["label"],
                           reader_name="Reader", sharding=sharding)
    a = next(it)["label"]
    assert a.sharding == sharding and a.shape == (4, 1)
    assert np.asarray(a).reshape(-1).tolist() == [1, 2, 3, 4]
    assert [np.asarray(s.data).reshape(-1).tolist() for s in
            sorted(a.addressable_shards, key=lambda s: s.index[0].start)] == [[1, 2], [3, 4]]


def test_partial_cannot_be_sharded(seven):
    two_devices()
    pipes = [label_pipe(seven, pad=True, shard_id=k, num_shards=2) for k in range(2)]
    with pytest.raises(ValueError, match="PARTIAL"):
        StokerJaxIterator(pipes, ["label"], reader_name="Reader", last_batch_policy=PARTIAL)
    with pytest.raises(ValueError, match="pipelines need"):
        StokerJaxIterator([label_pipe(seven) for _ in range(len(jax.local_devices()) + 1)],
                          ["label"], size=7)
