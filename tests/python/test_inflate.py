"""decoders.inflate: LZ4 blocks made by the lz4 package (python-lz4, liblz4's block format, as
nvCOMP's) inflate to the original arrays, whole or in chunks (offsets, sizes, both), for every
dtype and per-sample shapes; damaged blocks, wrong sizes and bad arguments give errors naming
the sample and chunk. DALI 2.4 has this operator on the GPU only; the GPU backend (stoker's own
kernel) is checked against this one in test_gpu_ops.py."""
import re

import numpy as np
import pytest

from stoker import fn, pipeline_def, types

lz4_block = pytest.importorskip("lz4.block")

RNG = np.random.RandomState(7)


def compress(a):
    return np.frombuffer(lz4_block.compress(np.ascontiguousarray(a).tobytes(), store_size=False,
                                            mode="high_compression"), np.uint8)


def samples():
    """Arrays that compress in different ways: runs (long matches, overlapping copies at
    distances 1 to 40), noise (literals only), an image, and tiny and empty ones."""
    ramp = np.tile(np.arange(37, dtype=np.uint8), 200)
    runs = np.repeat(RNG.randint(0, 255, 300).astype(np.uint8), RNG.randint(1, 60, 300))
    noise = RNG.randint(0, 256, 5000).astype(np.uint8)
    image = np.kron(RNG.randint(0, 256, (20, 30, 3)), np.ones((4, 4, 1))).astype(np.uint8)
    return [ramp, runs, noise, image, np.zeros(1, np.uint8), np.zeros(0, np.uint8),
            np.full(100000, 9, np.uint8)]


def run(data, device="cpu", **kw):
    @pipeline_def(batch_size=len(data), num_threads=2, device_id=0 if device == "gpu" else None)
    def p():
        x = fn.external_source(source=lambda: data, batch=True)
        return fn.decoders.inflate(x.gpu() if device == "gpu" else x, device=device, **kw)
    (out,) = p().run()
    out = out.as_cpu() if hasattr(out, "as_cpu") else out
    return [np.array(out[i]) for i in range(len(data))], out.layout()


def test_blocks_inflate_to_the_arrays():
    arrays = samples()
    for a in arrays:
        out, _ = run([compress(a)], shape=list(a.shape))
        np.testing.assert_array_equal(out[0], a)


@pytest.mark.parametrize("dtype,np_type", [(types.FLOAT, np.float32), (types.INT16, np.int16),
                                           (types.UINT32, np.uint32), (types.FLOAT64, np.float64)])
def test_dtypes_and_per_sample_shapes(dtype, np_type):
    arrays = [(RNG.rand(5, 7) * 100).astype(np_type), (RNG.rand(3, 2) * 100).astype(np_type)]

    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def p():
        x = fn.external_source(source=lambda: [compress(a) for a in arrays], batch=True)
        shapes = fn.external_source(source=lambda: [np.int32(a.shape) for a in arrays], batch=True)
        return fn.decoders.inflate(x, shape=shapes, dtype=dtype, layout="HW")
    (out,) = p().run()
    assert out.layout() == "HW"
    for i in range(2):
        np.testing.assert_array_equal(np.array(out[i]), arrays[i])


def test_chunks_stack_along_the_sequence_axis():
    frames = [RNG.randint(0, 4, (6, 8, 3)).astype(np.uint8) * 60 for _ in range(5)]
    blocks = [compress(f) for f in frames]
    data = np.concatenate(blocks)
    sizes = [len(b) for b in blocks]
    offsets = list(np.cumsum([0] + sizes[:-1]))
    for kw in (dict(chunk_sizes=sizes), dict(chunk_offsets=offsets),
               dict(chunk_offsets=offsets, chunk_sizes=sizes)):
        out, layout = run([data], shape=[6, 8, 3], layout="HWC", **kw)
        np.testing.assert_array_equal(out[0], np.stack(frames))
        assert layout == "FHWC"
    # Gaps and order: chunks named out of order, with bytes between them.
    padded = np.concatenate([blocks[2], np.zeros(5, np.uint8), blocks[0]])
    out, layout = run([padded], shape=[6, 8, 3], chunk_offsets=[len(blocks[2]) + 5, 0],
                      chunk_sizes=[sizes[0], sizes[2]], layout="HWC", sequence_axis_name="T")
    np.testing.assert_array_equal(out[0], np.stack([frames[0], frames[2]]))
    assert layout == "THWC"


def error(exc, data, **kw):
    with pytest.raises(exc) as e:
        run(data, **kw)
    return re.sub(r" \([^()]*\.py:\d+\)", "", str(e.value))


def test_errors():
    op = "fn.decoders.inflate"
    a = np.arange(1000, dtype=np.uint8) % 7
    block = compress(a)
    assert error(ValueError, [block]) == (
        f"{op}: argument 'shape' must be given: the shape of an inflated sample (or chunk)")
    assert error(ValueError, [block], shape=[1000], algorithm="zstd") == (
        f"{op}: argument 'algorithm' must be 'LZ4' (the only algorithm DALI 2.4 has), got 'zstd'")
    assert error(stoker_decode_error(), [block], shape=[999]) == (
        f"{op}, sample 0: not an LZ4 block that inflates to the 999 bytes that shape and dtype "
        "ask for (damaged, or it inflates to more)")
    assert error(stoker_decode_error(), [block, block], shape=[1001]) == (
        f"{op}, sample 0: the LZ4 block inflates to 1000 bytes, but shape and dtype ask for 1001")
    damaged = block.copy()
    damaged[len(damaged) // 2:] = 255
    assert error(stoker_decode_error(), [block, damaged], shape=[1000]).startswith(
        f"{op}, sample 1: not an LZ4 block")
    n = len(block)
    assert error(ValueError, [block], shape=[1000], chunk_offsets=[0, n - 2],
                 chunk_sizes=[n - 2, 5]) == (
        f"{op}, sample 0: chunk 1 (offset {n - 2}, size 5) reaches outside the sample's {n} bytes")
    assert error(ValueError, [block], shape=[1000], chunk_offsets=[0, 3], chunk_sizes=[3]) == (
        f"{op}, sample 0: chunk_offsets has 2 values and chunk_sizes 1; give one of each per chunk")
    assert error(TypeError, [np.zeros((2, 2), np.uint8)], shape=[4]) == (
        f"{op}: the input must be 1-D uint8 samples of compressed bytes, got 2-D uint8")
    assert error(ValueError, [block], shape=[1000], layout="HW") == (
        f"{op}: argument 'layout' 'HW' has 2 axes, but the output of sample 0 has 1")


def stoker_decode_error():
    import stoker
    return stoker.DecodeError
