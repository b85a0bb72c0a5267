"""Checkpoints: Pipeline(enable_checkpointing=True), pipe.checkpoint() and
Pipeline(..., checkpoint=...). The reference for "the batches that would have come next" is the
same pipeline run without interruption: a pipeline restored after N batches must give, bit for
bit, batches N, N+1, ... of an uninterrupted run -- for every reader, with shuffling, sharding and
padding, across epoch boundaries, with random operators, and while the executor has already
made batches ahead of the checkpoint. Also: shuffle_after_epoch against DALI's documented
behaviour, and the errors for checkpoints that do not fit the pipeline."""
import gzip
import json
import math
import struct
import time

import numpy as np
import pytest

import stoker
from stoker import fn, pipeline_def, types

if not hasattr(stoker._C.Executor, "checkpoint"):
    pytest.skip("this build has no checkpoints", allow_module_level=True)

HAS = stoker._schema.SCHEMAS


def outputs_of(pipe, n):
    """n batches, each a tuple of outputs, each a list of NumPy copies of the samples."""
    out = []
    for _ in range(n):
        batch = pipe.run()
        out.append(tuple([np.array(b[i]) for i in range(len(b))] for b in batch))
    return out


def assert_same(got, want):
    assert len(got) == len(want)
    for it, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for o, (gb, wb) in enumerate(zip(g, w)):
            assert len(gb) == len(wb), f"batch {it} output {o}"
            for i, (gs, ws) in enumerate(zip(gb, wb)):
                assert gs.dtype == ws.dtype and gs.shape == ws.shape, f"batch {it} output {o} sample {i}"
                assert gs.tobytes() == ws.tobytes(), f"batch {it} output {o} sample {i} differs"


def wait_ahead(pipe, n):
    """Waits until the producer has made n iterations (so the checkpoint must ignore some)."""
    deadline = time.time() + 20
    while pipe._executor.iterations_produced() < n and time.time() < deadline:
        time.sleep(0.01)


def check_resume(make, warmup, more, prefetch=2, **kw):
    """make(**pipeline_kwargs) -> Pipeline. Returns the checkpoint taken after `warmup` batches."""
    reference = outputs_of(make(prefetch_queue_depth=prefetch, **kw), warmup + more)
    p = make(enable_checkpointing=True, prefetch_queue_depth=prefetch, **kw)
    assert_same(outputs_of(p, warmup), reference[:warmup])
    if p.exec_async and warmup:  # (the producer starts with the first run())
        wait_ahead(p, warmup + prefetch)
    ckpt = p.checkpoint()
    assert isinstance(ckpt, str) and json.loads(ckpt)["iteration"] == warmup
    # A random pipeline seed: the checkpoint's must be the one that counts.
    q = make(enable_checkpointing=True, checkpoint=ckpt, prefetch_queue_depth=prefetch, seed=-1,
             **kw)
    assert_same(outputs_of(q, more), reference[warmup:])
    assert_same(outputs_of(p, more), reference[warmup:])  # checkpointing changed nothing
    return ckpt


# ---------------------------------------------------------------------------- readers.file

@pytest.fixture(scope="module")
def few_jpegs(jpeg_files):
    return [p for p, _ in jpeg_files[::9]]  # 6 photos of several classes


def file_pipe(files=None, file_root=None, batch_size=4, reader=None, extra=None, **pipe_kw):
    pipe_kw.setdefault("seed", 7)

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, **pipe_kw)
    def pipe():
        args = dict(reader or {})
        if files is not None:
            args["files"] = files
        if file_root is not None:
            args["file_root"] = file_root
        jpegs, labels = fn.readers.file(name="Reader", **args)
        outs = (jpegs, labels)
        if extra:
            outs += tuple(extra(jpegs))
        return outs

    return lambda **kw: pipe(**kw)


@pytest.mark.parametrize("reader", [
    {},
    {"random_shuffle": True, "initial_fill": 10},
    {"random_shuffle": True},                      # a shuffle buffer bigger than the data set
    {"shuffle_after_epoch": True},
    {"num_shards": 3, "shard_id": 1},              # the shard moves on every epoch
    {"num_shards": 3, "shard_id": 2, "random_shuffle": True, "initial_fill": 5},
    {"num_shards": 4, "shard_id": 3, "pad_last_batch": True},
    {"num_shards": 2, "shard_id": 0, "stick_to_shard": True, "pad_last_batch": True,
     "random_shuffle": True, "initial_fill": 3},
    {"num_shards": 3, "shard_id": 0, "shuffle_after_epoch": True, "pad_last_batch": True},
], ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "plain")
def test_file_reader_resumes_mid_epoch_and_across_epochs(jpeg_dir, reader):
    make = file_pipe(file_root=str(jpeg_dir), batch_size=5, reader=reader)
    # 47 files: an epoch is 10 batches of 5 (fewer per shard); 13 + 11 crosses one or more
    # epoch boundaries, and the checkpoint lands mid-epoch and mid-shuffle-buffer.
    check_resume(make, 13, 11)


@pytest.mark.parametrize("warmup", [0, 1, 2, 3, 4, 7])
def test_file_reader_any_checkpoint_position(jpeg_dir, warmup):
    # 47 files, batch 6, no padding: epochs end inside batches 7, 15, ...
    make = file_pipe(file_root=str(jpeg_dir), batch_size=6,
                     reader={"random_shuffle": True, "initial_fill": 7})
    check_resume(make, warmup, 10)


@pytest.mark.parametrize("exec_async,prefetch", [(False, 1), (True, 1), (True, 4)])
def test_checkpoint_ignores_batches_made_ahead(jpeg_dir, exec_async, prefetch):
    make = file_pipe(file_root=str(jpeg_dir), batch_size=4,
                     reader={"random_shuffle": True, "initial_fill": 6}, exec_async=exec_async)
    check_resume(make, 5, 8, prefetch=prefetch)


def test_checkpoint_of_a_checkpointed_pipeline_and_file(jpeg_dir, tmp_path):
    make = file_pipe(file_root=str(jpeg_dir), batch_size=4, reader={"shuffle_after_epoch": True})
    reference = outputs_of(make(), 30)
    p = make(enable_checkpointing=True)
    outputs_of(p, 5)
    path = tmp_path / "ckpt.json"
    text = p.checkpoint(str(path))
    assert path.read_text() == text
    q = make(enable_checkpointing=True, checkpoint=path.read_text())
    assert_same(outputs_of(q, 9), reference[5:14])
    # A checkpoint taken by a restored pipeline resumes as well (two epochs further on).
    r = make(enable_checkpointing=True, checkpoint=q.checkpoint())
    assert_same(outputs_of(r, 16), reference[14:30])
    # Before the first batch: the checkpoint is the start.
    fresh = make(enable_checkpointing=True, seed=99)
    s = make(enable_checkpointing=True, checkpoint=fresh.checkpoint())
    assert_same(outputs_of(s, 3), outputs_of(make(seed=99), 3))


@pytest.mark.skipif("decoders.image_random_crop" not in HAS or "random_resized_crop" not in HAS,
                    reason="no image operators in this build")
def test_random_operators_resume(few_jpegs):
    def extra(jpegs):
        crop = fn.decoders.image_random_crop(jpegs, output_type=types.RGB, random_area=[0.1, 0.5])
        small = fn.resize(crop, resize_x=12, resize_y=10)
        rrc = fn.random_resized_crop(fn.decoders.image(jpegs), size=[9, 11])
        return (small, rrc, fn.random.coin_flip(probability=0.5),
                fn.random.uniform(range=[-3, 7], shape=[2]), fn.random.normal(shape=[3]),
                fn.random.coin_flip(seed=1234))  # an operator seed of its own

    make = file_pipe(files=few_jpegs, batch_size=4, reader={"random_shuffle": True}, extra=extra)
    # 6 files, batches of 4: the epoch boundary is inside batch 1, 3, ...
    check_resume(make, 3, 3)


def test_random_operators_alone():
    @pipeline_def(batch_size=3, num_threads=3, device_id=None, seed=5)
    def pipe():
        return (fn.random.uniform(range=[0, 1], shape=[4]), fn.random.normal(),
                fn.random.coin_flip(probability=0.3, dtype=types.INT32))

    # The state of random operators is the iteration: a checkpoint after 50 batches resumes at 50.
    check_resume(lambda **kw: pipe(**kw), 50, 5)


def test_skipped_bad_files_stay_skipped(few_jpegs, tmp_path):
    if "decoders.image" not in HAS:
        pytest.skip("no image decoder in this build")
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG")
    files = few_jpegs[:3] + [str(bad)] + few_jpegs[3:]

    def extra(jpegs):
        return (fn.resize(fn.decoders.image(jpegs, on_error="skip"), resize_x=8, resize_y=8),)

    make = file_pipe(files=files, batch_size=3, reader={"random_shuffle": True, "initial_fill": 4},
                     extra=extra)
    reference = outputs_of(make(), 12)
    p = make(enable_checkpointing=True)
    assert_same(outputs_of(p, 4), reference[:4])  # 12 samples of 6 good + 1 bad files
    assert sum(v["skipped"] for v in p.error_stats().values()) >= 1
    saved = json.loads(p.checkpoint())
    (reader_state,) = [o["state"] for o in saved["operators"] if o["op"] == "readers.file"]
    assert reader_state.startswith("stoker.reader 1 bad 1 3 ")  # index 3: bad.jpg
    q = make(enable_checkpointing=True, checkpoint=p.checkpoint())
    assert_same(outputs_of(q, 8), reference[4:12])
    # The restored reader never delivered the bad file again, so nothing was skipped.
    assert q.error_stats() == {}


def test_shuffle_after_epoch_as_dali_documents(jpeg_files, jpeg_dir):
    """DALI: 'the reader shuffles the entire dataset after each epoch'; with sharding, every
    shard sees a disjoint part of the same permutation (a fixed seed, not the pipeline's), and
    the shard does not move (stick_to_shard is implied and reported)."""
    n, shards, bs = len(jpeg_files), 3, 4
    path_label = {p: l for p, l in jpeg_files}

    def epoch_paths(shard_id, seed, epochs):
        @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=seed)
        def pipe():
            jpegs, labels = fn.readers.file(file_root=str(jpeg_dir), shuffle_after_epoch=True,
                                            num_shards=shards, shard_id=shard_id,
                                            pad_last_batch=True, name="Reader")
            return jpegs, labels

        p = pipe()
        meta = p.reader_meta("Reader")
        assert meta["stick_to_shard"] is True
        per_epoch = math.ceil(math.ceil(n / shards) / bs)  # batches per shard, with padding
        out = []
        for _ in range(epochs):
            paths = []
            for _ in range(per_epoch):
                data, labels = p.run()
                paths += [data.source_info(i) for i in range(len(data))]
            out.append(paths)
        return out

    a = [epoch_paths(s, seed=1, epochs=3) for s in range(shards)]
    b = [epoch_paths(s, seed=2, epochs=3) for s in range(shards)]
    assert a == b  # the permutation does not depend on the pipeline's seed
    for e in range(3):
        real = [list(dict.fromkeys(a[s][e])) for s in range(shards)]  # padding repeats the last
        everything = sorted(p for r in real for p in r)
        assert everything == sorted(path_label)  # shards are disjoint and cover the data set
        assert [len(r) for r in real] == [n * (s + 1) // shards - n * s // shards
                                          for s in range(shards)]
    assert a[0][0] != a[0][1] and a[0][1] != a[0][2]  # a new order every epoch
    firsts = [p for p, _ in jpeg_files[: n // shards]]
    assert a[0][0] != firsts  # already shuffled in the first epoch
    # The same shard's content changes from epoch to epoch (the data set is reshuffled).
    assert sorted(set(a[0][0])) != sorted(set(a[0][1]))
    for bad in ({"random_shuffle": True}, {"stick_to_shard": True}):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def wrong():
            return fn.readers.file(file_root=str(jpeg_dir), shuffle_after_epoch=True, **bad)[0]

        with pytest.raises(ValueError, match="shuffle_after_epoch and"):
            wrong().build()


# ---------------------------------------------------------------------------- other readers

def reader_pipe(reader_fn, batch_size, **reader_kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=3)
    def pipe():
        out = reader_fn(name="Reader", **reader_kw)
        if isinstance(out, dict):
            return tuple(out[k] for k in sorted(out))
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)

    return lambda **kw: pipe(**kw)


SHUFFLES = [{}, {"random_shuffle": True, "initial_fill": 4}, {"shuffle_after_epoch": True},
            {"num_shards": 2, "shard_id": 1, "pad_last_batch": True}]
SHUFFLE_IDS = ["plain", "random_shuffle", "shuffle_after_epoch", "shard_padded"]


@pytest.mark.skipif("readers.numpy" not in HAS, reason="no readers.numpy")
@pytest.mark.parametrize("reader", SHUFFLES, ids=SHUFFLE_IDS)
def test_numpy_reader(tmp_path, reader):
    rng = np.random.default_rng(0)
    for k in range(11):
        np.save(tmp_path / f"a{k:02d}.npy", rng.integers(0, 1000, (k % 3 + 1, 4), np.int32))
    check_resume(reader_pipe(fn.readers.numpy, 3, file_root=str(tmp_path), **reader), 5, 9)


def record_file(testdata, rel):
    """A file of the shared record data, or a skip where it did not travel (the GPU machine)."""
    path = testdata / "records" / rel
    if not path.is_file():
        pytest.skip(f"record test data not here: {path}")
    return path


@pytest.fixture(scope="module")
def sample_tar(testdata, tmp_path_factory):
    src = record_file(testdata, "webdataset/sample.tgz")
    out = tmp_path_factory.mktemp("wds") / "sample.tar"
    out.write_bytes(gzip.decompress(src.read_bytes()))
    return str(out)


@pytest.mark.skipif("readers.webdataset" not in HAS, reason="no readers.webdataset")
@pytest.mark.parametrize("reader", SHUFFLES, ids=SHUFFLE_IDS)
def test_webdataset_reader(sample_tar, reader):
    # 90 samples, batches of 8: epochs end inside batches 11, 22, ...
    check_resume(reader_pipe(fn.readers.webdataset, 8, paths=[sample_tar], ext=["png", "cls"],
                             **reader), 9, 8)


@pytest.mark.skipif("readers.tfrecord" not in HAS, reason="no readers.tfrecord")
@pytest.mark.parametrize("reader", SHUFFLES, ids=SHUFFLE_IDS)
def test_tfrecord_reader(testdata, reader):
    import stoker.tfrecord as tfrec
    path = str(record_file(testdata, "tfrecord/deeplab/testing/pascal_voc_seg/"
                                     "val-00000-of-00001.tfrecord"))
    features = {"image/filename": tfrec.FixedLenFeature((), tfrec.string, ""),
                "image/height": tfrec.FixedLenFeature([1], tfrec.int64, 0)}
    # The real file three times: 9 records, batches of 2.
    check_resume(reader_pipe(fn.readers.tfrecord, 2, path=[path] * 3, features=features,
                             **reader), 3, 7)


def _write_recordio(path, records):
    """dmlc RecordIO (magic, lrec, data, padding) with MXNet's IRHeader; one part per record
    (the test data holds no magic number)."""
    with open(path, "wb") as f:
        for label, data in records:
            payload = struct.pack("<IfQQ", 0, float(label), 0, 0) + data
            f.write(struct.pack("<II", 0xCED7230A, len(payload)))
            f.write(payload + b"\0" * (-len(payload) % 4))


@pytest.mark.skipif("readers.mxnet" not in HAS, reason="no readers.mxnet")
@pytest.mark.parametrize("reader", SHUFFLES, ids=SHUFFLE_IDS)
def test_mxnet_reader(tmp_path, reader):
    rec = tmp_path / "data.rec"
    _write_recordio(rec, [(k, bytes([k]) * (k + 1)) for k in range(13)])
    check_resume(reader_pipe(fn.readers.mxnet, 4, path=[str(rec)], **reader), 4, 9)


def _varint(v):
    out = b""
    while True:
        b, v = v & 0x7F, v >> 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


@pytest.mark.skipif("readers.caffe" not in HAS, reason="no readers.caffe")
@pytest.mark.parametrize("reader", SHUFFLES, ids=SHUFFLE_IDS)
def test_caffe_reader(tmp_path, reader):
    lmdb = pytest.importorskip("lmdb")
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 22)
    with env.begin(write=True) as txn:
        for k in range(10):
            data = bytes([k]) * (k + 2)
            # caffe.Datum: data (field 4, bytes), label (field 5, varint); encoded by default.
            datum = b"\x22" + _varint(len(data)) + data + b"\x28" + _varint(k)
            txn.put(f"{k:08d}".encode(), datum)
    env.close()
    make = reader_pipe(fn.readers.caffe, 3, path=str(tmp_path / "db"), **reader)
    try:
        make().build()
    except NotImplementedError as e:
        pytest.skip(str(e))  # built without LMDB
    check_resume(make, 4, 8)


# ---------------------------------------------------------------------------- external sources

def test_external_sources_resume_as_in_dali(jpeg_dir):
    """Callables that take an argument continue where the checkpoint was taken; iterables start
    from the beginning (their state is in the user's code, as DALI documents)."""
    def per_sample(info):
        return np.array([info.idx_in_epoch, info.iteration, info.epoch_idx], np.int64)

    def per_batch(info):
        return [np.full(2, info.iteration * 10 + info.epoch_idx, np.int32)] * 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        a = fn.external_source(source=per_sample, batch=False)
        b = fn.external_source(source=per_batch, batch_info=True)
        c = fn.external_source(source=lambda i: [np.array([i], np.int64)] * 2)
        r = fn.random.uniform(range=[0, 1])
        return a, b, c, r

    reference = outputs_of(pipe(), 9)
    p = pipe(enable_checkpointing=True)
    outputs_of(p, 4)
    q = pipe(enable_checkpointing=True, checkpoint=p.checkpoint())
    assert_same(outputs_of(q, 5), reference[4:])

    def gen():
        for k in range(100):
            yield [np.array([k], np.int64)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def with_iterable():
        return fn.external_source(source=gen), fn.random.uniform(range=[0, 1])

    reference = outputs_of(with_iterable(), 4)
    p = with_iterable(enable_checkpointing=True)
    outputs_of(p, 3)
    q = with_iterable(enable_checkpointing=True, checkpoint=p.checkpoint())
    ((src, rnd),) = outputs_of(q, 1)
    assert src[0].tolist() == [0]  # the generator starts over ...
    assert_same([(rnd,)], [(reference[3][1],)])  # ... the random operator resumes


def test_external_source_epochs_resume():
    n = 5

    def src(info):
        if info.idx_in_epoch >= n:
            raise StopIteration
        return np.array([info.epoch_idx, info.idx_in_epoch], np.int32)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        return fn.external_source(source=src, batch=False)

    def run_epochs(p, batches):
        got = []
        while len(got) < batches:
            try:
                (b,) = p.run()
            except StopIteration:
                p.reset()
                continue
            got.append([b[i].tolist() for i in range(len(b))])
        return got

    reference = run_epochs(pipe(), 7)
    p = pipe(enable_checkpointing=True)
    assert run_epochs(p, 3) == reference[:3]  # into the second epoch
    q = pipe(enable_checkpointing=True, checkpoint=p.checkpoint())
    assert run_epochs(q, 4) == reference[3:]


# ---------------------------------------------------------------------------- errors

def test_checkpoint_needs_enable_checkpointing(jpeg_dir):
    make = file_pipe(file_root=str(jpeg_dir))
    p = make()
    with pytest.raises(ValueError, match=r"checkpoint\(\).*enable_checkpointing=True"):
        p.checkpoint()
    ckpt = make(enable_checkpointing=True).checkpoint()
    with pytest.raises(ValueError, match="restoring a checkpoint needs enable_checkpointing=True"):
        make(checkpoint=ckpt)


def test_mismatching_checkpoints_are_refused(jpeg_dir, few_jpegs, tmp_path):
    make = file_pipe(file_root=str(jpeg_dir), batch_size=4,
                     reader={"num_shards": 3, "shard_id": 0, "random_shuffle": True})
    p = make(enable_checkpointing=True)
    p.run()
    ckpt = p.checkpoint()

    def refused(maker, match, exc=ValueError, **kw):
        with pytest.raises(exc, match=match):
            maker(enable_checkpointing=True, checkpoint=ckpt, **kw).build()

    refused(file_pipe(file_root=str(jpeg_dir), batch_size=5,
                      reader={"num_shards": 3, "shard_id": 0, "random_shuffle": True}),
            r"does not match this pipeline: it was taken with batch_size=4, this pipeline has "
            r"batch_size=5")
    refused(file_pipe(file_root=str(jpeg_dir), batch_size=4,
                      reader={"num_shards": 3, "shard_id": 1, "random_shuffle": True}),
            r"fn.readers.file \(test_checkpoint.py:\d+\): reader state is not valid: it comes "
            r"from a reader with shard_id=0, this one has shard_id=1")
    refused(file_pipe(file_root=str(jpeg_dir), batch_size=4,
                      reader={"num_shards": 2, "shard_id": 0, "random_shuffle": True}),
            r"num_shards=3, this one has num_shards=2")
    refused(file_pipe(file_root=str(jpeg_dir), batch_size=4,
                      reader={"num_shards": 3, "shard_id": 0}),
            r"it comes from a reader with random_shuffle=True, this one has random_shuffle=False")
    refused(file_pipe(files=few_jpegs, batch_size=4,
                      reader={"num_shards": 3, "shard_id": 0, "random_shuffle": True}),
            r"num_samples=47, this one has num_samples=6")
    refused(file_pipe(file_root=str(jpeg_dir), batch_size=4,
                      reader={"num_shards": 3, "shard_id": 0, "random_shuffle": True},
                      extra=lambda j: (fn.random.coin_flip(),)),
            r"its readers and random operators are \[readers.file 'Reader' \(operator 0\)\], this "
            r"pipeline's are \[readers.file 'Reader' \(operator 0\), random.coin_flip \(operator 1\)\]")
    refused(file_pipe(file_root=str(jpeg_dir), batch_size=4,
                      reader={"num_shards": 3, "shard_id": 0, "random_shuffle": True, "seed": 5}),
            r"readers.file 'Reader' \(operator 0\) has seed=5, the checkpoint's has seed=7")

    np.save(tmp_path / "a.npy", np.zeros(3))

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def numpy_instead():
        return fn.readers.numpy(file_root=str(tmp_path), name="Reader")

    refused(numpy_instead, r"are \[readers.file 'Reader' \(operator 0\)\], this pipeline's are "
                           r"\[readers.numpy 'Reader' \(operator 0\)\]")


def resealed(ckpt):
    """The checkpoint with checksums that match its (edited) contents."""
    return {**ckpt, "checksums": stoker.pipeline._checksums(ckpt)}


def test_malformed_checkpoints_are_refused(jpeg_dir):
    make = file_pipe(file_root=str(jpeg_dir), batch_size=4, reader={"random_shuffle": True})
    p = make(enable_checkpointing=True)
    p.run()
    ckpt = json.loads(p.checkpoint())
    with pytest.raises(ValueError, match=r"not a stoker checkpoint.*Pipeline.checkpoint\(\) returned"):
        make(enable_checkpointing=True, checkpoint="hello")
    with pytest.raises(ValueError, match="not a stoker checkpoint"):
        make(enable_checkpointing=True, checkpoint=json.dumps({"format": "dali"}))
    with pytest.raises(TypeError, match="checkpoint must be the string"):
        make(enable_checkpointing=True, checkpoint=42)
    with pytest.raises(ValueError, match="version 99; this stoker reads versions 1 to 2"):
        make(enable_checkpointing=True, checkpoint=json.dumps({**ckpt, "version": 99}))
    with pytest.raises(ValueError, match="damaged"):
        make(enable_checkpointing=True, checkpoint=json.dumps({**ckpt, "iteration": "3"}))
    state = ckpt["operators"][0]["state"]
    altered = state.replace(" order stoker.sample_order 1 cfg 47", " order stoker.sample_order 1 cfg 48")
    assert altered != state
    # (Resealed: the reader state's own check, behind the checkpoint's checksums.)
    bad = resealed({**ckpt, "operators": [{**ckpt["operators"][0], "state": altered}]})
    with pytest.raises(ValueError, match="reader state is not valid: the checksum does not match"):
        make(enable_checkpointing=True, checkpoint=json.dumps(bad)).build()
    bad = resealed({**ckpt, "operators": [{**ckpt["operators"][0], "state": "stoker.reader 1 junk"}]})
    with pytest.raises(ValueError, match="reader state is not valid: it has no sample order"):
        make(enable_checkpointing=True, checkpoint=json.dumps(bad)).build()
    bad = {**ckpt, "operators": [{**ckpt["operators"][0], "state": 5}]}
    with pytest.raises(ValueError, match="damaged"):
        make(enable_checkpointing=True, checkpoint=json.dumps(bad)).build()


def test_edited_checkpoints_are_refused_naming_the_field(jpeg_dir):
    """Every field is check-summed: an edited iteration (which the reader states do not repeat)
    would otherwise resume without error and give other batches."""
    make = file_pipe(file_root=str(jpeg_dir), batch_size=4, reader={"random_shuffle": True},
                     extra=lambda jpegs: (fn.random.coin_flip(),))
    p = make(enable_checkpointing=True)
    for _ in range(3):
        p.run()
    text = p.checkpoint()
    ckpt = json.loads(text)
    assert set(ckpt["checksums"]) == {"format", "version", "batch_size", "seed", "iteration",
                                      "operators", "operators[0]", "operators[1]",
                                      "external_sources"}

    def refused(bad, fields):
        verb = "does" if "," not in fields else "do"
        with pytest.raises(ValueError) as e:
            make(enable_checkpointing=True, checkpoint=json.dumps(bad))
        assert str(e.value) == (
            f"Pipeline: the checkpoint is damaged or was edited: {fields} {verb} not match the "
            "checksum written with it. Pass the string Pipeline.checkpoint() returned, unchanged "
            "(take a new checkpoint to resume from another point).")

    refused({**ckpt, "iteration": 5}, "'iteration'")
    refused({**ckpt, "iteration": ckpt["iteration"] + 1, "seed": 8}, "'seed', 'iteration'")
    op = ckpt["operators"][1]
    refused({**ckpt, "operators": [ckpt["operators"][0], {**op, "seed": op["seed"] + 1}]},
            "'operators[1]' (random.coin_flip)")
    reader = ckpt["operators"][0]
    refused({**ckpt, "operators": [{**reader, "state": reader["state"][:-1]}, op]},
            "'operators[0]' (readers.file 'Reader')")
    refused({**ckpt, "operators": [reader]}, "'operators', 'operators[1]' (which is missing)")
    refused({**ckpt, "checksums": {**ckpt["checksums"], "iteration": "0" * 16}}, "'iteration'")
    with pytest.raises(ValueError, match=r"^Pipeline: the checkpoint is damaged \(its 'checksums' "
                                         r"field is missing or not a dict\); pass the string"):
        make(enable_checkpointing=True, checkpoint=json.dumps({**ckpt, "checksums": None}))
    # Key order and spacing are not part of the checksums: the same JSON, reformatted, resumes.
    again = json.dumps(ckpt, indent=2, sort_keys=True)
    reference = outputs_of(make(), 6)
    assert_same(outputs_of(make(enable_checkpointing=True, checkpoint=again), 3), reference[3:])
    # A version-1 checkpoint (no checksums, as stoker wrote before) is still read.
    old = {k: v for k, v in ckpt.items() if k != "checksums"}
    old["version"] = 1
    assert_same(outputs_of(make(enable_checkpointing=True, checkpoint=json.dumps(old)), 3),
                reference[3:])


@pytest.mark.parametrize("arg, value, maximum", [
    ("seed", 2**64, 2**63 - 1), ("seed", 2**63, 2**63 - 1), ("batch_size", 2**31, 2**31 - 1),
    ("num_threads", 2**31, 2**31 - 1), ("prefetch_queue_depth", 2**40, 2**31 - 1),
    ("device_id", 2**31, 2**31 - 1), ("py_num_workers", 2**31, 2**31 - 1)])
def test_pipeline_integers_out_of_range(arg, value, maximum):
    kw = {"batch_size": 2, "num_threads": 1, "device_id": None, "seed": 1, arg: value}
    with pytest.raises(ValueError) as e:
        stoker.Pipeline(**kw)
    assert str(e.value) == f"Pipeline: {arg} must be <= {maximum}, got {value}."
    # The largest value is taken (and a pipeline with the largest seed runs).
    if arg == "seed":
        @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=maximum)
        def pipe():
            return fn.random.uniform(range=[0, 1])
        (out,) = pipe().run()
        assert out.as_array().shape == (2,)
