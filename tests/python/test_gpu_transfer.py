"""DataNode.gpu(): CPU pipelines handing batches to CUDA frameworks (run on the GPU machine)."""
import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

HAS_GPU = stoker._C.cuda_device_count() > 0
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")


def make(jpeg_dir, to_gpu, device_id=0, batch_size=8):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=3)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, size=(64, 64))
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=[128.0] * 3, std=[64.0] * 3,
                                          mirror=fn.random.coin_flip())
        return (images.gpu(), labels.gpu()) if to_gpu else (images, labels)
    return pipe()


def test_gpu_without_a_device_id_says_so(jpeg_dir):
    with pytest.raises(ValueError, match=r"\.gpu\(\).*runs on 'mixed'.*device_id=None"):
        make(jpeg_dir, True, device_id=None).build()


@pytest.mark.skipif(HAS_GPU, reason="needs a machine without a GPU")
def test_gpu_on_a_machine_without_one(jpeg_dir):
    with pytest.raises((NotImplementedError, ValueError), match="GPU|CUDA"):
        make(jpeg_dir, True).build()


@needs_gpu
def test_gpu_batches_equal_the_cpu_ones(jpeg_dir):
    gpu, cpu = make(jpeg_dir, True), make(jpeg_dir, False)
    for _ in range(5):
        (gi, gl), (ci, cl) = gpu.run(), cpu.run()
        assert isinstance(gi, stoker.TensorListGPU) and gi.device_id == 0
        assert gi.__dlpack_device__() == (2, 0)
        assert np.array_equal(gi.as_cpu().as_array(), ci.as_array())
        assert np.array_equal(gl.as_cpu().as_array(), cl.as_array())
        s = gi[-1]  # a sample: a TensorGPU of its own shape, no copy
        assert s.shape() == list(ci[len(ci) - 1].shape) and s.layout() == ci.layout()
        assert np.array_equal(np.asarray(s.as_cpu()), np.asarray(ci[len(ci) - 1]))
        assert s.__cuda_array_interface__["shape"] == tuple(ci[len(ci) - 1].shape)
        assert s.data_ptr() == s.__cuda_array_interface__["data"][0]


@needs_gpu
def test_gpu_samples_go_to_torch_without_a_copy(jpeg_dir):
    torch = pytest.importorskip("torch")
    gpu, cpu = make(jpeg_dir, True), make(jpeg_dir, False)
    (gi, _), (ci, _) = gpu.run(), cpu.run()
    for i in range(len(ci)):
        t = torch.from_dlpack(gi[i])
        assert t.is_cuda and t.data_ptr() == gi[i].data_ptr()
        assert np.array_equal(t.cpu().numpy(), np.asarray(ci[i]))
    whole = gi.as_tensor()  # the dense batch as one TensorGPU, as DALI's as_tensor()
    assert whole.shape() == [len(ci)] + list(ci[0].shape) and whole.layout() == "NCHW"
    assert np.array_equal(np.asarray(whole.as_cpu()), ci.as_array())
    assert torch.from_dlpack(whole).data_ptr() == gi.data_ptr()


@needs_gpu
def test_torch_takes_gpu_batches_without_a_copy_and_in_stream_order(jpeg_dir):
    torch = pytest.importorskip("torch")
    gpu, cpu = make(jpeg_dir, True, batch_size=32), make(jpeg_dir, False, batch_size=32)
    side = torch.cuda.Stream()
    kept = []
    for it in range(20):
        (gi, _), (ci, _) = gpu.run(), cpu.run()
        with torch.cuda.stream(side):  # a non-default consumer stream
            t = torch.from_dlpack(gi)
            assert t.is_cuda and t.data_ptr() == gi.data_ptr()
            total = t.float().sum()  # queued right away: must see the finished batch
        side.synchronize()
        ref = ci.as_array().astype(np.float32)
        assert abs(total.item() - ref.sum()) <= 1e-3 * abs(ref).sum() + 1
        if it % 3 == 0:
            kept.append((t, ref))  # held tensors must stay valid while the pool recycles
    for t, ref in kept:
        assert np.array_equal(t.cpu().numpy().astype(np.float32), ref)
    stats = torch.cuda.memory_stats()  # torch allocated nothing for the batches themselves
    assert stats.get("allocation.all.current", 0) < 100


@needs_gpu
def test_feed_ndarray_and_copy_to_external():
    """DALI's feed_ndarray: a GPU batch copied into an existing CUDA tensor on a given stream,
    without a tensor made on the way (TensorListGPU.copy_to_external); CPU batches, another
    dtype or shape take the general path or fail with a message."""
    torch = pytest.importorskip("torch")
    from stoker.plugin.pytorch import feed_ndarray
    rng = np.random.default_rng(3)
    data = [rng.integers(0, 256, (5, 7, 3), dtype=np.uint8) for _ in range(4)]

    @pipeline_def(batch_size=4, num_threads=1, device_id=0)
    def pipe():
        x = fn.external_source(source=lambda: data, layout="HWC")
        return x.gpu(), fn.cast(x.gpu(), dtype=types.FLOAT)

    g8, gf = pipe().run()
    want = np.stack(data)
    stream = torch.cuda.Stream()
    out = torch.empty((4, 5, 7, 3), dtype=torch.uint8, device="cuda")
    assert feed_ndarray(g8, out, cuda_stream=stream) is out
    stream.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    out.zero_()
    g8.copy_to_external(out.data_ptr())  # blocking, on the default stream
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    # Another dtype: converted on the general path.
    as_half = torch.empty((4, 5, 7, 3), dtype=torch.float16, device="cuda")
    feed_ndarray(gf, as_half)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(as_half.cpu().numpy(), want.astype(np.float16))
    with pytest.raises(ValueError, match=r"feed_ndarray: the batch has shape \(4, 5, 7, 3\) but "
                                         r"the destination tensor has shape \(4, 5, 7\)\."):
        feed_ndarray(g8, torch.empty((4, 5, 7), dtype=torch.uint8, device="cuda"))
