"""The staged executor on the GPU machine: the cpu and device stages on threads of their own give
exactly the batches of the same pipeline run with its stages in turn (exec_pipelined=False),
keep errors, checkpoints and memory in order, and say where the time goes."""
import gc
import json

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

HAS_GPU = stoker._C.cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="no GPU here")

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def train_pipe(files, pipelined, batch_size=8, threads=3, seed=5, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=threads, device_id=0, seed=seed,
                  exec_pipelined=pipelined, **kw)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, labels=list(range(len(files))),
                                        random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed")
        images = fn.resize(images, size=[64, 64])
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT16, output_layout="CHW",
                                          mean=MEAN, std=STD, mirror=fn.random.coin_flip())
        return images, labels
    p = pipe()
    p.build()
    return p


def batches(p, n):
    out = []
    for _ in range(n):
        images, labels = p.run()
        out.append((np.asarray(images.as_cpu().as_tensor()), np.asarray(labels.as_tensor())))
    return out


@pytest.fixture
def files(jpeg_files):
    return [f for f, _ in jpeg_files[:24]]


def test_pipelined_stages_give_the_unpipelined_batches(files):
    a = train_pipe(files, pipelined=True)
    b = train_pipe(files, pipelined=False)
    assert a.profile()["pipelined"] and not b.profile()["pipelined"]
    assert [s["stage"] for s in a.profile()["stages"]] == ["cpu", "mixed", "gpu"]
    assert [s["stage"] for s in b.profile()["stages"]] == ["cpu+mixed+gpu"]
    for (ia, la), (ib, lb) in zip(batches(a, 12), batches(b, 12)):  # 4 epochs
        np.testing.assert_array_equal(la, lb)
        np.testing.assert_array_equal(ia, ib)


def test_two_staged_pipelines_decode_on_the_engines_at_once(files):
    """Two staged pipelines whose device stages submit nvJPEG hardware batches from their own
    threads at once, running ahead of the consumer, each giving what it gives unstaged."""
    many = files * 4
    a = train_pipe(many, pipelined=True, batch_size=32, seed=11)
    b = train_pipe(many, pipelined=True, batch_size=32, seed=12)
    ref_a = train_pipe(many, pipelined=False, batch_size=32, seed=11)
    labels_b = []
    for it in range(60):  # 20 epochs of 3 batches
        (ia, la), (_, lb) = batches(a, 1)[0], batches(b, 1)[0]
        labels_b += lb.ravel().tolist()
        ir, lr = batches(ref_a, 1)[0]
        np.testing.assert_array_equal(la, lr)
        np.testing.assert_array_equal(ia, ir)
    for epoch in range(20):  # b: each of the 96 entries once an epoch
        assert sorted(labels_b[96 * epoch:96 * (epoch + 1)]) == list(range(96))


def test_pipelined_checkpoint_resumes_with_the_same_batches(files):
    a = train_pipe(files, pipelined=True, enable_checkpointing=True)
    batches(a, 4)
    cp = a.checkpoint()
    assert json.loads(cp)  # a JSON string
    expected = batches(a, 5)
    b = train_pipe(files, pipelined=True, enable_checkpointing=True, checkpoint=cp)
    for (ia, la), (ib, lb) in zip(expected, batches(b, 5)):
        np.testing.assert_array_equal(la, lb)
        np.testing.assert_array_equal(ia, ib)


def test_pipelined_error_comes_with_its_batch_and_the_pipeline_goes_on(files, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not a jpeg at all")
    lst = files[:7] + [str(bad)] + files[7:15]  # batch 1 of 2 per epoch has the bad file
    p = train_pipe(lst, pipelined=True, batch_size=8)
    p2 = train_pipe(lst, pipelined=False, batch_size=8)
    # The shuffle decides which batch gets it; both executors must fail on the same ones.
    outcome = []
    for q in (p, p2):
        res = []
        for _ in range(6):
            try:
                images, labels = q.run()
                res.append(np.asarray(labels.as_tensor()).tolist())
            except stoker.DecodeError as e:
                assert "bad.jpg" in str(e)
                res.append("error")
        outcome.append(res)
    assert outcome[0] == outcome[1]
    assert "error" in outcome[0]


def test_skip_in_the_mixed_stage_runs_unpipelined_and_skips(files, tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 not a jpeg at all")

    @pipeline_def(batch_size=8, num_threads=3, device_id=0, seed=5)
    def pipe():
        lst = files[:7] + [str(bad)] + files[7:16]
        jpegs, labels = fn.readers.file(files=lst, labels=list(range(len(lst))), name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", on_error="skip")
        return fn.resize(images, size=[32, 32]), labels
    p = pipe()
    p.build()
    seen = []
    for _ in range(4):
        _, labels = p.run()
        seen += np.asarray(labels.as_tensor()).ravel().tolist()
    assert not p.profile()["pipelined"]
    assert 7 not in seen  # the bad file's label (its index in the list)
    stats = p.error_stats()
    assert sum(s["skipped"] for s in stats.values()) >= 1


def test_profile_names_every_operator_and_stage(files):
    p = train_pipe(files, pipelined=True)
    batches(p, 6)
    prof = p.profile()
    names = [o["operator"] for o in prof["operators"]]
    assert any("readers.file" in n for n in names)
    assert any("decoders.image_random_crop" in n for n in names)
    assert any("crop_mirror_normalize" in n for n in names)
    for o in prof["operators"]:
        assert o["iterations"] >= 6
    for s in prof["stages"]:
        assert s["iterations"] >= 6 and s["busy_ms"] > 0
    dec = next(o for o in prof["operators"] if "decoders" in o["operator"])
    assert dec["device"] == "mixed" and dec["stage"] == 1 and dec["batch_ms"] > 0
    # Its planning (headers, windows, which decoder) ran a batch ahead in the cpu stage.
    assert dec["prepare_stage"] == 0 and dec["prepare_ms"] > 0
    unstaged = train_pipe(files, pipelined=False)
    batches(unstaged, 2)
    assert all("prepare_stage" not in o for o in unstaged.profile()["operators"])
    report = p.profile_report()
    assert "mixed" in report and "Verdict" in report
    assert "planned a batch ahead in the cpu stage" in report


@pytest.mark.parametrize("pipelined", [True, False], ids=["staged", "unstaged"])
def test_gpu_memory_does_not_grow_over_epochs(files, pipelined):
    """The GPU side of the soak (#7), staged and not: 20 epochs of random crops, whose batch sizes are
    new every time. What the process holds on the GPU (`resource_held`: the CUDA memory pool
    every device block comes from, live or cached) stays within 5% of epoch 2's figure, or one
    more of the 32 MiB chunks that pool reserves in (on the H100: 32 MiB until epoch 9, then
    64 MiB to the end, for a peak of 24 MiB in live buffers), and so does the pinned pool's
    `reserved`. With a stoker cache of size classes on top of the CUDA
    pool, the two caches fragmented each other: 64 -> 96 -> 128 MiB over these 20 epochs on the
    H100, for a peak of about 57 MiB in live buffers. Before the cache was trimmed, the device
    pool grew 138 -> 455 MiB; before memory was kept rather than given back with cudaFree, the
    staged soak hung on the H100. With the engines' targets allocated for their own stream (so
    that the host need not wait for the pipeline's stream before the hardware batch), the CUDA
    pool did not reuse those blocks once freed after use on several streams, and an unstaged
    pipeline's pool grew to 55 GB in 45 s on the H100 (the hang hunt's unstaged pipeline)."""
    gc.collect()
    p = train_pipe(files, pipelined=pipelined, batch_size=8)
    p.release_unused()  # what earlier tests' pipelines left to the memory pool
    pinned, held = [], []
    for epoch in range(20):
        batches(p, 3)  # 24 files, batch 8
        m = p.memory_stats()
        pinned.append(m["pinned"]["reserved"])
        held.append(m["device"]["resource_held"])
    m = p.memory_stats()
    print("device held, pinned reserved per epoch (MiB):", [h >> 20 for h in held],
          [r >> 20 for r in pinned], "peak live", m["device"]["peak_allocated"] >> 20)
    chunk = 32 << 20
    assert max(held[2:]) <= held[2] * 1.05 + chunk, held
    assert max(pinned[10:]) <= max(pinned[2:10]) * 1.05 + (1 << 20), pinned
    assert held[-1] <= 2 * m["device"]["peak_allocated"] + chunk, held
