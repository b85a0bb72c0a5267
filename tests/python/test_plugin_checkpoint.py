"""Iterator checkpoints: it.checkpoints() -> pipelines built with checkpoint=... -> a new
iterator with the same arguments continues with exactly what the old one would have given next.

The reference is the same iterator run without interruption. Every test records each next() as
either the batch (labels and random draws of every pipeline) or "STOP", takes checkpoints after
every step (so: before the first batch, mid-epoch, right after an epoch's last batch, right after
StopIteration, after auto_reset), resumes from each and compares the rest of the sequence."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.plugin.pytorch import LastBatchPolicy, StokerGenericIterator  # noqa: E402

FILL, DROP, PARTIAL = LastBatchPolicy.FILL, LastBatchPolicy.DROP, LastBatchPolicy.PARTIAL
STOP = "STOP"


def label_pipe(files, checkpoint=None, batch_size=2, pad=False, shard_id=0, num_shards=1,
               stick=False, shuffle=False, checkpointing=True):
    """Labels 1..7 of the files and a random draw per sample (coin flips)."""
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=7,
                  enable_checkpointing=checkpointing)
    def pipe():
        _, labels = fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                    pad_last_batch=pad, shard_id=shard_id,
                                    num_shards=num_shards, stick_to_shard=stick,
                                    random_shuffle=shuffle, initial_fill=3, name="Reader")
        flips = fn.random.coin_flip(probability=0.5, shape=(4,), dtype=types.UINT8)
        return labels, flips
    kw = {} if checkpoint is None else {"checkpoint": checkpoint}
    return pipe(**kw)


def pipes_for(files, num_shards, ckpts=None, **kw):
    return [label_pipe(files, None if ckpts is None else ckpts[k], shard_id=k,
                       num_shards=num_shards, **kw) for k in range(num_shards)]


def step(it, after_stop=False):
    """One next(): the batch of every pipeline as (labels, flips) lists, or STOP.
    `after_stop`: call iter() first, as a new `for` loop over the iterator does after an epoch
    ended (it starts the next epoch when there is no auto_reset)."""
    if after_stop:
        it = iter(it)
    try:
        out = next(it)
    except StopIteration:
        return STOP
    return tuple((d["label"].reshape(-1).tolist(), d["flips"].reshape(-1).tolist()) for d in out)


def steps(it, n, loop=False, prev=None):
    """n steps; with `loop`, as successive `for` loops (iter() after each StopIteration);
    `prev`: the step before the first one (STOP: a new loop starts)."""
    out = []
    for _ in range(n):
        prev = step(it, after_stop=loop and prev == STOP)
        out.append(prev)
    return out


def check_every_resume(make_iter, make_pipes, n, loop=False):
    """make_pipes(ckpts or None) -> pipelines; make_iter(pipelines) -> iterator. Checkpoints
    after each of n steps; each resumed iterator must give the rest of the reference."""
    reference = steps(make_iter(make_pipes(None)), n, loop)
    it = make_iter(make_pipes(None))
    ckpts = [it.checkpoints()]
    got = []
    for _ in range(n):
        got += steps(it, 1, loop, got[-1] if got else None)
        ckpts.append(it.checkpoints())
    assert got == reference, "taking checkpoints changed the iterator's batches"
    for k, ck in enumerate(ckpts):
        resumed = steps(make_iter(make_pipes(ck)), n - k, loop, reference[k - 1] if k else None)
        assert resumed == reference[k:], f"resumed after {k} steps"
    return reference


@pytest.mark.parametrize("policy", [FILL, DROP, PARTIAL], ids=lambda p: p.name)
@pytest.mark.parametrize("pad", [False, True], ids=["unpadded", "padded"])
@pytest.mark.parametrize("num_shards", [1, 2])
@pytest.mark.parametrize("auto_reset", [True, False], ids=["auto_reset", "manual"])
@pytest.mark.parametrize("by", ["reader_name", "size"])
def test_resumes_after_any_step(seven, policy, pad, num_shards, auto_reset, by):
    kwargs = dict(reader_name="Reader") if by == "reader_name" else \
        dict(size=7, last_batch_padded=pad)

    def make_iter(pipes):
        return StokerGenericIterator(pipes, ["label", "flips"], last_batch_policy=policy,
                                     auto_reset=auto_reset, **kwargs)

    # 16 steps: three or more epochs, with StopIterations between them. Without auto_reset a
    # new `for` loop (iter()) after each StopIteration starts the next epoch.
    ref = check_every_resume(make_iter, lambda ck: pipes_for(seven, num_shards, ck, pad=pad),
                             16, loop=not auto_reset)
    assert ref.count(STOP) >= 3


def test_resumes_shuffled_sticky_shards_reading_ahead(seven):
    # FILL without padding over 3 shards of 2-3 samples with batch 3: every epoch reads ahead
    # into the next one, the shards move on, and the shuffle buffers carry across epochs.
    for stick in (False, True):
        def make_pipes(ck):
            return pipes_for(seven, 3, ck, batch_size=3, shuffle=True, stick=stick)

        def make_iter(pipes):
            return StokerGenericIterator(pipes, ["label", "flips"], reader_name="Reader",
                                         last_batch_policy=FILL, auto_reset=True)

        ref = check_every_resume(make_iter, make_pipes, 14)
        assert STOP in ref


def test_the_checkpoint_describes_the_last_batch_handed_out(seven):
    it = StokerGenericIterator(label_pipe(seven), ["label", "flips"], reader_name="Reader")
    (ck,) = it.checkpoints()
    # The iterator ran the first batch already (prepare_first_batch), but gave out nothing.
    assert json.loads(ck)["iteration"] == 0
    for _ in range(3):
        next(it)
    ckpts = it.checkpoints()
    assert isinstance(ckpts, list) and len(ckpts) == 1 and isinstance(ckpts[0], str)
    data = json.loads(ckpts[0])
    assert data["iteration"] == 3
    assert data["iterator"]["state"]["counter"] == 6
    assert data["iterator"]["config"]["last_batch_policy"] == "FILL"


def test_after_stop_iteration_the_epoch_stays_over_until_reset(seven):
    def make(ck=None):
        return StokerGenericIterator(label_pipe(seven, ck, pad=True), ["label", "flips"],
                                     reader_name="Reader", last_batch_policy=PARTIAL)

    it = make()
    first = steps(it, 5)
    assert first[-1] == STOP and [b[0][0] for b in first[:4]] == [[1, 2], [3, 4], [5, 6], [7]]
    (ck,) = it.checkpoints()
    it.reset()
    after_reset = steps(it, 3)

    resumed = make(ck)
    assert steps(resumed, 2) == [STOP, STOP]  # no reset() yet: still over
    resumed.reset()
    assert steps(resumed, 3) == after_reset
    assert after_reset[0][0][0] == [1, 2]

    # A new `for` loop over the resumed iterator starts the next epoch, as over the original.
    again = make(ck)
    assert steps(again, 3, loop=True, prev=STOP) == after_reset


def test_resumes_without_prepare_first_batch(seven):
    def make_iter(pipes):
        return StokerGenericIterator(pipes, ["label", "flips"], reader_name="Reader",
                                     last_batch_policy=DROP, auto_reset=True,
                                     prepare_first_batch=False)

    check_every_resume(make_iter, lambda ck: pipes_for(seven, 2, ck, pad=False), 10)


def test_random_operators_continue_identically(jpeg_files):
    files = [p for p, _ in jpeg_files[:10]]

    def make_pipes(ck):
        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=11,
                      enable_checkpointing=True)
        def pipe():
            jpegs, labels = fn.readers.file(files=files, random_shuffle=True, initial_fill=4,
                                            name="Reader")
            images = fn.decoders.image_random_crop(jpegs)
            images = fn.resize(images, resize_x=8, resize_y=8)
            flip = fn.random.coin_flip(probability=0.5)
            images = fn.flip(images, horizontal=flip)
            noise = fn.random.uniform(range=(0, 1), shape=(5,))
            return images, labels, flip, noise
        return [pipe(**({} if ck is None else {"checkpoint": ck[0]}))]

    def make_iter(pipes):
        return StokerGenericIterator(pipes, ["images", "label", "flip", "noise"],
                                     reader_name="Reader", last_batch_policy=PARTIAL,
                                     auto_reset=True)

    def record(it, n):
        out = []
        for _ in range(n):
            try:
                d = next(it)[0]
            except StopIteration:
                out.append(STOP)
                continue
            out.append({k: v.numpy().tobytes() for k, v in d.items()})
        return out

    reference = record(make_iter(make_pipes(None)), 12)
    flips = [b["flip"] for b in reference if b != STOP]
    assert len(set(flips)) > 1, "the coin flips should vary"
    for k in (0, 2, 4, 5, 7):
        it = make_iter(make_pipes(None))
        record(it, k)
        resumed = make_iter(make_pipes(it.checkpoints()))
        assert record(resumed, 12 - k) == reference[k:], f"resumed after {k} steps"


def test_external_source_without_epoch_size(seven):
    # No size and no reader: the iterator runs until the source raises StopIteration. (No
    # random operator here: how many iterations the pipeline drops at an external source's
    # epoch end depends on how far its producer ran ahead, so draws after reset() vary from run
    # to run even without checkpoints.)
    n = 6

    def src(info):
        if info.idx_in_epoch >= n:
            raise StopIteration
        return np.array([info.epoch_idx, info.idx_in_epoch], np.int32)

    def make_pipes(ck):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1,
                      enable_checkpointing=True)
        def pipe():
            x = fn.external_source(source=src, batch=False)
            return x, x * 10 + 1
        return [pipe(**({} if ck is None else {"checkpoint": ck[0]}))]

    for auto_reset in (True, False):
        def make_iter(pipes):
            return StokerGenericIterator(pipes, ["label", "flips"], auto_reset=auto_reset)

        def record(it, count):
            out = []
            for _ in range(count):
                s = step(it)
                out.append(s)
                if s == STOP and not auto_reset:
                    it.reset()
            return out

        reference = record(make_iter(make_pipes(None)), 12)
        assert reference.count(STOP) == 3
        it = make_iter(make_pipes(None))
        for k in range(12):
            resumed = make_iter(make_pipes(it.checkpoints()))
            assert record(resumed, 12 - k) == reference[k:], (auto_reset, k)
            s = record(it, 1)
            assert s == reference[k:k + 1]


def test_jax_iterator_resumes(seven):
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    jax = pytest.importorskip("jax")
    from stoker.plugin.jax import StokerJaxIterator

    def record(it, n):
        out = []
        for _ in range(n):
            try:
                d = next(it)
            except StopIteration:
                out.append(STOP)
                continue
            out.append((np.asarray(d["label"]).reshape(-1).tolist(),
                        np.asarray(d["flips"]).reshape(-1).tolist()))
        return out

    cases = [(1, PARTIAL, False)]
    if len(jax.devices("cpu")) >= 2:
        cases.append((2, FILL, False))  # one array sharded over two devices
    for num_shards, policy, pad in cases:
        def make_iter(pipes):
            return StokerJaxIterator(pipes, ["label", "flips"], reader_name="Reader",
                                     last_batch_policy=policy, auto_reset=True)

        reference = record(make_iter(pipes_for(seven, num_shards, pad=pad)), 12)
        for k in range(13):
            it = make_iter(pipes_for(seven, num_shards, pad=pad))
            record(it, k)
            resumed = make_iter(pipes_for(seven, num_shards, it.checkpoints(), pad=pad))
            assert record(resumed, 12 - k) == reference[k:], (num_shards, k)


# ---------------------------------------------------------------------------- errors

def test_checkpoints_need_enable_checkpointing(seven):
    it = StokerGenericIterator([label_pipe(seven, checkpointing=False)], ["label", "flips"],
                               reader_name="Reader")
    with pytest.raises(ValueError, match=r"StokerGenericIterator\.checkpoints\(\): pipeline 0 "
                                         r"was built without enable_checkpointing=True.*"
                                         r"enable_checkpointing=True"):
        it.checkpoints()
    next(it)
    with pytest.raises(ValueError, match="enable_checkpointing=True"):
        it.checkpoints()


def test_checkpoints_that_do_not_fit_are_refused(seven):
    it = StokerGenericIterator(pipes_for(seven, 2), ["label", "flips"], reader_name="Reader",
                               last_batch_policy=FILL)
    next(it)
    ck = it.checkpoints()

    def resume(ckpts, pipes=None, **kw):
        args = dict(reader_name="Reader", last_batch_policy=FILL)
        args.update(kw)
        return StokerGenericIterator(pipes or pipes_for(seven, 2, ckpts), ["label", "flips"],
                                     **args)

    resume(ck)  # the matching case works
    with pytest.raises(ValueError, match="last_batch_policy='FILL', but this iterator has "
                                         "last_batch_policy='DROP'"):
        resume(ck, last_batch_policy=DROP)
    with pytest.raises(ValueError, match=r"pipeline 0 was built from checkpoints\(\)\[1\]"):
        resume(None, pipes=[label_pipe(seven, ck[1], shard_id=1, num_shards=2),
                            label_pipe(seven, ck[0], shard_id=0, num_shards=2)])
    with pytest.raises(ValueError, match=r"pipeline\(s\) \[1\] were not built from an iterator "
                                         "checkpoint"):
        resume(None, pipes=[label_pipe(seven, ck[0], shard_id=0, num_shards=2),
                            label_pipe(seven, shard_id=1, num_shards=2)])
    next(it)
    later = it.checkpoints()
    with pytest.raises(ValueError, match="different calls of checkpoints"):
        resume(None, pipes=[label_pipe(seven, ck[0], shard_id=0, num_shards=2),
                            label_pipe(seven, later[1], shard_id=1, num_shards=2)])
    one = StokerGenericIterator(label_pipe(seven), ["label", "flips"], reader_name="Reader")
    damaged = json.loads(one.checkpoints()[0])
    damaged["iterator"]["state"]["counter"] = "six"
    with pytest.raises(ValueError, match=r"damaged \('counter' is 'six'\)"):
        StokerGenericIterator(label_pipe(seven, json.dumps(damaged)), ["label", "flips"],
                              reader_name="Reader")
