"""stoker.plugin.jax: zero-copy jax arrays, the shared epoch semantics, sharding over devices,
and (on a machine where stoker and JAX both have a GPU; skipped elsewhere) GPU outputs: zero-copy,
equal to the CPU pipeline's, and ordered on JAX's stream.

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

import stoker  # noqa: E402
from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.plugin.jax import DALIGenericIterator, LastBatchPolicy, StokerJaxIterator, to_jax  # noqa: E402

FILL, DROP, PARTIAL = LastBatchPolicy.FILL, LastBatchPolicy.DROP, LastBatchPolicy.PARTIAL


def label_pipe(files, batch_size=2, pad=False, shard_id=0, num_shards=1):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe():
        _, labels = fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                    pad_last_batch=pad, shard_id=shard_id,
                                    num_shards=num_shards, name="Reader")
        return labels
    return pipe()


def two_devices():
    """Two devices of JAX's default backend, where the iterator places shards: two CPU devices
    here (XLA_FLAGS above), two GPUs on a machine with two."""
    devs = jax.local_devices()
    if len(devs) < 2:
        pytest.skip(f"JAX's default backend has one device ({devs}): needs two GPUs, or the CPU "
                    "backend started with XLA_FLAGS=--xla_force_host_platform_device_count=2")
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


def test_arrays_are_the_pipelines_buffers(capture_runs):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.random.uniform(range=(0, 1), shape=(3, 5)), fn.random.coin_flip(
            shape=(6,), dtype=types.BOOL)

    p = pipe()
    captured = capture_runs(p)
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


# ---------------------------------------------------------------------------- GPU (GPU machine)

@pytest.fixture(scope="module")
def jax_gpu():
    """JAX's device for CUDA device 0; skips unless both stoker and JAX have a GPU."""
    if stoker._C.cuda_device_count() < 1:
        pytest.skip("stoker sees no GPU here")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        pytest.skip("this JAX has no GPU backend")
    for d in gpus:
        if getattr(d, "local_hardware_id", d.id) == 0:
            return d
    pytest.skip("JAX does not see CUDA device 0")


def gpu_image_pipe(jpeg_dir, how, batch_size=8, size=64):
    """Decoded, resized photos with labels, made on the GPU ('mixed': nvJPEG and a GPU resize)
    or on the CPU and moved ('moved': .gpu(), bit-identical to 'cpu', the same pipeline with
    nothing on the GPU)."""
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None if how == "cpu" else 0,
                  seed=5)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True,
                                        initial_fill=16, name="Reader")
        if how == "mixed":
            images = fn.decoders.image(jpegs, device="mixed", jpeg_fancy_upsampling=True)
        else:
            images = fn.decoders.image(jpegs)
        images = fn.resize(images, size=[size, size])
        if how == "moved":
            images, labels = images.gpu(), labels.gpu()
        return images, labels
    return pipe()


def assert_close_images(got, want):
    """nvJPEG + the GPU resize against libjpeg-turbo + the CPU resize: a little rounding apart,
    never a different or unfinished image."""
    assert got.shape == want.shape
    d = np.abs(got.astype(np.int32) - want.astype(np.int32))
    assert d.mean() <= 2.0, d.mean()
    assert (d > 8).mean() <= 0.03, (d > 8).mean()


@pytest.mark.parametrize("how", ["mixed", "moved"])
def test_gpu_outputs_are_the_pipelines_buffers(jpeg_dir, jax_gpu, how, capture_runs):
    p = gpu_image_pipe(jpeg_dir, how)
    captured = capture_runs(p)
    it = StokerJaxIterator(p, ["images", "labels"], reader_name="Reader")
    held = []
    for _ in range(4):
        out = next(it)
        images, labels = captured[-1]
        assert isinstance(images, stoker.TensorListGPU) and images.device_id == 0
        for name, batch in (("images", images), ("labels", labels)):
            arr = out[name]
            assert isinstance(arr, jax.Array)
            if isinstance(batch, stoker.TensorListGPU):  # (labels stay on the CPU in 'mixed')
                assert arr.devices() == {jax_gpu}
                assert arr.unsafe_buffer_pointer() == batch.data_ptr(), f"{name}: a copy"
            else:
                assert arr.unsafe_buffer_pointer() == batch.as_array().ctypes.data, name
        assert out["images"].shape == (8, 64, 64, 3) and out["images"].dtype == jnp.uint8
        np.testing.assert_array_equal(np.asarray(out["images"]), images.as_cpu().as_array())
        held.append((out["images"], images.as_cpu().as_array()))
    captured.clear()
    del it, p, out, images, labels
    import gc
    gc.collect()
    for arr, want in held:  # the arrays keep their buffers after the pipeline is gone
        np.testing.assert_array_equal(np.asarray(arr), want)


@pytest.mark.parametrize("how", ["mixed", "moved"])
def test_gpu_values_equal_the_cpu_pipeline(jpeg_dir, jax_gpu, how):
    gpu = StokerJaxIterator(gpu_image_pipe(jpeg_dir, how), ["images", "labels"],
                            reader_name="Reader", last_batch_policy=PARTIAL)
    cpu = StokerJaxIterator(gpu_image_pipe(jpeg_dir, "cpu"), ["images", "labels"],
                            reader_name="Reader", last_batch_policy=PARTIAL)
    n = 0
    for g, c in zip(gpu, cpu):  # one epoch, the PARTIAL last batch included
        assert g["images"].devices() == {jax_gpu}
        np.testing.assert_array_equal(np.asarray(g["labels"]), np.asarray(c["labels"]))
        if how == "moved":
            np.testing.assert_array_equal(np.asarray(g["images"]), np.asarray(c["images"]))
        else:
            assert_close_images(np.asarray(g["images"]), np.asarray(c["images"]))
        n += len(c["labels"])
    assert n == 47


@pytest.mark.parametrize("how", ["mixed", "moved"])
def test_gpu_arrays_are_ready_for_the_consumers_stream(jpeg_dir, jax_gpu, how):
    # Large batches of full-size decodes: the GPU is still working on a batch when the iterator
    # hands it over. JAX's own stream must wait for it (stoker makes the stream JAX passes to
    # __dlpack__ wait on the batch's event); a computation queued at once must see the finished
    # batch, and arrays held while the pool recycles buffers must keep their values.
    bs, size = 32, 256
    gpu = StokerJaxIterator(gpu_image_pipe(jpeg_dir, how, batch_size=bs, size=size),
                            ["images", "labels"], reader_name="Reader", auto_reset=True)
    cpu = gpu_image_pipe(jpeg_dir, "cpu", batch_size=bs, size=size)
    worst = jax.jit(lambda a, b: jnp.abs(a.astype(jnp.float32) - b.astype(jnp.float32)).max())
    mean = jax.jit(lambda a, b: jnp.abs(a.astype(jnp.float32) - b.astype(jnp.float32)).mean())
    kept = []
    for step in range(24):
        want, _ = cpu.run()
        want = want.as_array()
        want_dev = jax.device_put(want, jax_gpu)
        try:
            out = next(gpu)
        except StopIteration:
            out = next(gpu)
        got = out["images"]
        if how == "moved":
            assert float(worst(got, want_dev)) == 0, f"step {step}: unfinished batch"
        else:
            assert float(mean(got, want_dev)) <= 2.0, f"step {step}: unfinished batch"
        if step % 5 == 0:
            kept.append((got, want))
    for got, want in kept:
        if how == "moved":
            np.testing.assert_array_equal(np.asarray(got), want)
        else:
            assert_close_images(np.asarray(got), want)
