"""Sizes past any memory, the host-memory cap and its messages, batches larger than the epoch.

Before: an output of 2^63 bytes or more made the pool's size-class loop spin forever (Ctrl-C
did not stop it), exactly 2^64 wrapped to a 0-byte buffer that a worker then wrote into
(segfault), a batch far larger than the data grew without a word until the machine swapped,
and "out of host memory allocating 983040.0 MiB" named no operator. Every error here is
asserted whole, and each test returns at once: nothing is allocated beyond a few MiB.
"""
import re
import os
import sys
import warnings

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

HERE = os.path.basename(__file__)


def at():
    """'test_sizes_and_memory.py:NN': the caller's line, as messages name the user's line."""
    return f"{HERE}:{sys._getframe(1).f_lineno}"


def error_of(pipe, kind):
    with pytest.raises(kind) as e:
        pipe.run()
    return str(e.value)


def usable_ram():
    """Physical RAM, or the cgroup's limit where lower: what stoker's default cap is a share of."""
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().split()[0]
        except (OSError, IndexError):
            continue
        if text.isdigit() and 0 < int(text) < ram:
            ram = int(text)
    return ram


# ---- item 1: sizes that overflow, from arguments

def test_random_uniform_shape_of_2_to_64_bytes():
    where = {}

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=1)
    def pipe():
        out, where["loc"] = fn.random.uniform(shape=[2**31, 2**31, 4], dtype=types.UINT8), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.random.uniform ({where['loc']}): the output would be 18446744073709551616 bytes "
        "(16.0 EiB: 1 sample of shape (2147483648, 2147483648, 4), uint8), more than any "
        "machine can address; check the argument 'shape'")


def test_random_normal_shape_past_2_to_63_elements():
    where = {}

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        out, where["loc"] = fn.random.normal(shape=[2**62, 2]), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.random.normal ({where['loc']}): the output would be 73786976294838206464 bytes "
        "(64.0 EiB: 2 samples of shape (4611686018427387904, 2), float32), more than any "
        "machine can address; check the argument 'shape'")


def test_pad_shape_past_any_memory():
    where = {}

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.random.uniform(shape=[2, 3])
        out, where["loc"] = fn.pad(x, shape=[2**32, 2**32]), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.pad ({where['loc']}): the output would be 147573952589676412928 bytes (128.0 EiB: "
        "2 samples of shape (4294967296, 4294967296), float32), more than any machine can "
        "address; check the argument 'shape'")


def test_pad_shape_past_2_to_62_per_axis():
    where = {}

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.random.uniform(shape=[2, 3])
        out, where["loc"] = fn.pad(x, shape=[2**63 - 1, 1]), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (f"fn.pad ({where['loc']}): argument 'shape' must be at most 2^62 per axis, "
                   "got 9223372036854775808 for sample 0.")


def test_crop_pad_policy_with_a_2_to_31_crop(jpeg_dir):
    where = {}

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        images = fn.decoders.image(jpegs)
        out, where["loc"] = fn.crop(images, crop=(2**31, 2**31), out_of_bounds_policy="pad"), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.crop ({where['loc']}): the output would be 27670116110564327424 bytes (24.0 EiB: "
        "2 samples of shape (2147483648, 2147483648, 3), uint8), more than any machine can "
        "address; check the argument 'crop'")


def test_resize_to_a_size_past_any_memory(jpeg_dir):
    where = {}

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=str(jpeg_dir))
        images = fn.decoders.image(jpegs)
        out, where["loc"] = fn.resize(images, resize_x=2**31, resize_y=2**31), at()
        return out

    # resize bounds its output itself, before any allocation.
    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.resize ({where['loc']}), sample 0: resize: the output extent of spatial axis 0 "
        "would be 2147483648.000000 pixels for the input of shape (408, 640); use max_size to "
        "bound it")


def test_a_failed_iteration_leaves_the_pool_usable():
    # The pad's target comes from an external source: only the second batch is too big.
    targets = [[4, 5], [2**32, 2**32], [3, 2], [6, 1]]

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=1)
    def pipe():
        shape = fn.external_source(source=lambda info: [np.array(targets[info.iteration])],
                                   batch_info=True)
        x = fn.random.uniform(shape=[2, 2], range=(1, 2))
        return fn.pad(x, shape=shape, fill_value=7)

    p = pipe()
    out, = p.run()
    assert out.as_array().shape == (1, 4, 5)
    with pytest.raises(ValueError, match=r"the output would be 73786976294838206464 bytes"):
        p.run()
    for want in [(3, 2), (6, 2)]:
        out, = p.run()
        a = out.as_array()[0]
        assert a.shape == want
        assert np.all(a[2:] == 7) and np.all(a[:, 2:] == 7)
        assert np.all((a[:2, :2] >= 1) & (a[:2, :2] < 2))
    del out, a
    host = p.memory_stats()["host"]
    assert host["allocated"] <= 64 << 10
    assert host["peak_reserved"] <= 1 << 20


# ---- items 8 and 9: the host-memory cap and its messages

def test_output_past_the_cap_names_operator_size_and_what_to_do():
    where = {}

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        out, where["loc"] = fn.random.uniform(shape=[512, 512]), at()
        return out

    p = pipe()
    p.set_host_memory_cap(1 << 20)
    assert p.memory_stats()["host"]["cap"] == 1 << 20
    msg = error_of(p, MemoryError)
    assert msg == (
        f"fn.random.uniform ({where['loc']}): the output would be 2097152 bytes (2.0 MiB: 2 "
        "samples of shape (512, 512), float32): the host memory pool would exceed its cap of "
        "1.0 MiB: it holds 0.0 MiB in live buffers and 0.0 MiB cached, and needs 2.0 MiB more. "
        "Lower batch_size or prefetch_queue_depth, release batches you hold, or raise the cap "
        "with Pipeline.set_host_memory_cap() (the default is 80% of RAM; "
        "STOKER_HOST_MEMORY_CAP=<bytes> sets it)")


def test_reader_past_the_cap_names_the_reader(jpeg_dir):
    where = {}

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=1)
    def pipe():
        (jpegs, labels), where["loc"] = fn.readers.file(file_root=str(jpeg_dir)), at()
        return jpegs, labels

    p = pipe()
    p.set_host_memory_cap(64 << 10)
    msg = error_of(p, MemoryError)
    assert msg.startswith(f"fn.readers.file ({where['loc']}): sample 0: the host memory pool "
                          "would exceed its cap of 0.1 MiB: it holds 0.0 MiB in live buffers "
                          "and 0.0 MiB cached, and needs "), msg
    assert msg.endswith("raise the cap with Pipeline.set_host_memory_cap() (the default is 80% "
                        "of RAM; STOKER_HOST_MEMORY_CAP=<bytes> sets it)"), msg


def test_memory_the_system_refuses_names_operator_size_and_cap():
    # 2^48 bytes: more than a process can map (user address space is 2^47 bytes), whatever
    # the kernel's overcommit policy.
    where = {}

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=1)
    def pipe():
        out, where["loc"] = fn.random.uniform(shape=[2**48], dtype=types.UINT8), at()
        return out

    p = pipe()
    p.set_host_memory_cap(2**62)
    msg = error_of(p, MemoryError)
    assert msg == (
        f"fn.random.uniform ({where['loc']}): the output would be 281474976710656 bytes "
        "(256.0 TiB: 1 sample of shape (281474976710656,), uint8): out of host memory "
        "allocating 256.0 TiB (the host memory pool holds 0.0 MiB in live buffers and 0.0 MiB "
        "cached, under a cap of 4.0 EiB)")


def test_default_host_cap_is_80_percent_of_ram(monkeypatch):
    monkeypatch.delenv("STOKER_HOST_MEMORY_CAP", raising=False)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        return fn.random.uniform(shape=[4])

    p = pipe()
    assert p.memory_stats()["host"]["cap"] == int(usable_ram() * 0.8)
    out, = p.run()
    assert out.as_array().shape == (1, 4)


def test_environment_sets_the_default_cap(monkeypatch):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        return fn.random.uniform(shape=[4])

    monkeypatch.setenv("STOKER_HOST_MEMORY_CAP", "123456789")
    assert pipe().memory_stats()["host"]["cap"] == 123456789
    monkeypatch.setenv("STOKER_HOST_MEMORY_CAP", "0")
    assert pipe().memory_stats()["host"]["cap"] == 0
    monkeypatch.setenv("STOKER_HOST_MEMORY_CAP", "8G")
    with pytest.raises(ValueError) as e:
        pipe().build()
    assert str(e.value) == ("STOKER_HOST_MEMORY_CAP must be a number of bytes (0: no cap), got "
                            "'8G'; unset it for the default cap of 80% of RAM")


# ---- item 8a: a batch larger than the reader's epoch

@pytest.mark.parametrize("shards", [(1, 0), (3, 1)])
def test_batch_larger_than_the_epoch_warns(jpeg_dir, jpeg_files, shards):
    num_shards, shard_id = shards
    n = len(jpeg_files)
    in_shard = (shard_id + 1) * n // num_shards - shard_id * n // num_shards
    where = {}

    def make(batch_size):
        @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=1)
        def pipe():
            where["loc"], (jpegs, labels) = at(), fn.readers.file(
                file_root=str(jpeg_dir), num_shards=num_shards, shard_id=shard_id)
            return labels
        return pipe()

    with pytest.warns(UserWarning) as record:
        p = make(in_shard + 1)
        p.build()
    assert [str(w.message) for w in record] == [
        f"fn.readers.file ({where['loc']}): batch_size={in_shard + 1} is larger than the "
        f"reader's epoch of {in_shard} samples (shard {shard_id} of {num_shards}), so every "
        "batch holds samples more than once, and memory grows with batch_size, not with the "
        f"data. If that is not intended, use a batch_size of at most {in_shard}."]
    labels, = p.run()
    assert len(labels) == in_shard + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make(in_shard).build()


def test_random_shape_past_64_bits_is_a_value_error():
    # Before: pybind11's bare "Unable to cast Python instance of type <class 'list'>".
    with pytest.raises(ValueError) as e:
        @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
        def pipe():
            return fn.random.uniform(shape=[3, 2**64])
        pipe().build()
    assert re.fullmatch(r"fn\.random\.uniform \(test_sizes_and_memory\.py:\d+\): " + re.escape(
        "argument 'shape': 18446744073709551616 does not fit in 64 bits (the largest value is "
        "2**63 - 1)."), str(e.value)), str(e.value)


def test_random_shape_past_2_to_62_per_axis():
    # Read as a float, 2^63 - 1 rounds to 2^63, which became -2^63 as an integer.
    where = {}

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        out, where["loc"] = fn.random.uniform(shape=[2**63 - 1]), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (f"fn.random.uniform ({where['loc']}): argument 'shape' must be at most 2^62 "
                   "per axis, got 9223372036854775808.000000 in the shape of sample 0.")


def test_slice_and_coin_flip_past_any_memory():
    where = {}

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.reshape(fn.random.uniform(shape=[4, 6, 3], dtype=types.UINT8), layout="HWC")
        where["slice"], s = at(), fn.slice(x, start=[0, 0], shape=[2**32, 2**32],
                                           out_of_bounds_policy="pad")
        return s

    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.slice ({where['slice']}): the output would be 110680464442257309696 bytes (96.0 EiB: "
        "2 samples of shape (4294967296, 4294967296, 3), uint8), more than any machine can "
        "address")

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, seed=1)
    def coin():
        c, where["coin"] = fn.random.coin_flip(shape=[2**40, 2**40]), at()
        return c

    msg = error_of(coin(), ValueError)
    assert msg == (
        f"fn.random.coin_flip ({where['coin']}): the output would be 9671406556917033397649408 "
        "bytes (8388608.0 EiB: 2 samples of shape (1099511627776, 1099511627776), int32), more "
        "than any machine can address; check the argument 'shape'")


# ---- item 9: decoder messages name the operator once

def test_corrupt_jpeg_message_names_the_decoder_once(testdata):
    bad = str(testdata / "images/jpeg_edge/crashtest/images/derive-huffman-codes-overflow.jpg")
    where = {}

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[bad])
        out, where["loc"] = fn.decoders.image(jpegs), at()
        return out

    msg = error_of(pipe(), stoker.DecodeError)
    assert msg == (f"fn.decoders.image ({where['loc']}), sample 0 ('{bad}'): corrupt JPEG: "
                   "Bogus Huffman table definition")


def test_decoder_argument_error_names_the_decoder_once(jpeg_files):
    # Before: "fn.decoders.image_crop (x.py:3): sample 0 ('a.jpg'): fn.decoders.image_crop
    # (x.py:3): argument 'crop' ...".
    path = jpeg_files[0][0]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def shape_pipe():
        jpegs, _ = fn.readers.file(files=[path])
        return fn.peek_image_shape(jpegs)

    h, w, _ = shape_pipe().run()[0].as_array()[0]
    where = {}

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[path])
        out, where["loc"] = fn.decoders.image_crop(jpegs, crop=(5000, 5000)), at()
        return out

    msg = error_of(pipe(), ValueError)
    assert msg == (
        f"fn.decoders.image_crop ({where['loc']}) [sample 0 ('{path}')]: argument 'crop' gives a "
        f"5000x5000 window, larger than the {h}x{w} (HxW) image of sample 0; the decoder crops "
        "inside the image only (for padding, decode and then use fn.crop with "
        "out_of_bounds_policy='pad').")
    assert msg.count("fn.decoders.image_crop") == 1


def test_set_host_memory_cap_checks_its_argument():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        return fn.random.uniform(shape=[4])

    p = pipe()
    with pytest.raises(ValueError) as e:
        p.set_host_memory_cap(-1)
    assert str(e.value) == "Pipeline: nbytes must be >= 0, got -1."
    with pytest.raises(TypeError) as e:
        p.set_host_memory_cap("8G")
    assert str(e.value) == "Pipeline: nbytes must be an int, got str '8G'."
    p.set_host_memory_cap(0)  # no cap
    assert p.memory_stats()["host"]["cap"] == 0
    out, = p.run()
    assert out.as_array().shape == (1, 4)


def test_skip_log_names_the_decoder_once(tmp_path, jpeg_files, caplog):
    from PIL import Image
    tiny = str(tmp_path / "tiny.jpg")
    Image.new("RGB", (4, 4), (200, 10, 10)).save(tiny)
    good = jpeg_files[0][0]
    where = {}

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=[tiny, good])
        out, where["loc"] = fn.decoders.image_crop(jpegs, crop=(8, 8), on_error="skip"), at()
        return out

    p = pipe()
    out, = p.run()
    assert out.as_array().shape == (1, 8, 8, 3)
    err = "\n".join(r.getMessage() for r in caplog.records if r.name == "stoker")
    assert err.splitlines() == [
        f"stoker: skipped '{tiny}' in fn.decoders.image_crop ({where['loc']}): argument 'crop' "
        "gives a 8x8 window, larger than the 4x4 (HxW) image of sample 0; the decoder crops "
        "inside the image only (for padding, decode and then use fn.crop with "
        "out_of_bounds_policy='pad')."]
