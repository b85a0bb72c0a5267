"""stoker.plugin.pytorch: DALI's epoch semantics (last batch policy, padding, shards, reset),
zero-copy outputs, ragged batches, and a short real training loop."""
import gc
import math
import os
import warnings

import pytest

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.plugin import base_iterator  # noqa: E402
from stoker.plugin.pytorch import (DALIClassificationIterator, DALIGenericIterator,  # noqa: E402
                                   LastBatchPolicy, StokerClassificationIterator,
                                   StokerGenericIterator, resolve_shard, to_torch)
from _plugin_cases import EPOCHS  # noqa: E402

FILL, DROP, PARTIAL = LastBatchPolicy.FILL, LastBatchPolicy.DROP, LastBatchPolicy.PARTIAL


def label_pipe(files, batch_size=2, pad=False, shard_id=0, num_shards=1, stick=False,
               shuffle=False):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                        pad_last_batch=pad, shard_id=shard_id,
                                        num_shards=num_shards, stick_to_shard=stick,
                                        random_shuffle=shuffle, name="Reader")
        return jpegs, labels
    return pipe()


def labels_of(out):
    """[[labels of pipeline 0], [labels of pipeline 1], ...] of one iterator step."""
    return [d["label"].reshape(-1).tolist() for d in out]


def epoch(it):
    """All steps of one epoch, for a one-pipeline iterator: [[1, 2], [3, 4], ...]."""
    return [labels_of(out)[0] for out in it]




@pytest.mark.parametrize("policy,padded", list(EPOCHS))
@pytest.mark.parametrize("by", ["reader_name", "size"])
def test_last_batch_policy_table(seven, policy, padded, by):
    pipe = label_pipe(seven, pad=padded)
    kwargs = dict(reader_name="Reader") if by == "reader_name" else \
        dict(size=7, last_batch_padded=padded)
    it = StokerGenericIterator(pipe, ["data", "label"], last_batch_policy=policy,
                               auto_reset=True, **kwargs)
    assert len(it) == (3 if policy == DROP else 4)
    got = [epoch(it) for _ in range(3)]
    assert got == EPOCHS[(policy, padded)]


def test_the_table_in_the_brief(seven):
    """The short form of the table: how each epoch ends and how the next one starts."""
    ends = {}
    for (policy, padded) in EPOCHS:
        it = StokerGenericIterator(label_pipe(seven, pad=padded), ["data", "label"],
                                   reader_name="Reader", last_batch_policy=policy,
                                   auto_reset=True)
        first = epoch(it)
        ends[(policy.name, padded)] = (first[-1], epoch(it)[0])
    assert ends == {("PARTIAL", True): ([7], [1, 2]), ("PARTIAL", False): ([7], [2, 3]),
                    ("FILL", True): ([7, 7], [1, 2]), ("FILL", False): ([7, 1], [2, 3]),
                    ("DROP", True): ([5, 6], [1, 2]), ("DROP", False): ([5, 6], [2, 3])}


@pytest.mark.parametrize("auto_reset", [True, "yes"])
def test_auto_reset_raises_stop_iteration_then_goes_on(seven, auto_reset):
    it = StokerClassificationIterator(label_pipe(seven, pad=True), reader_name="Reader",
                                      last_batch_policy=PARTIAL, auto_reset=auto_reset)
    for _ in range(4):
        next(it)
    with pytest.raises(StopIteration):
        next(it)
    assert labels_of(next(it)) == [[1, 2]]


@pytest.mark.parametrize("auto_reset", [False, "no", None])
def test_without_auto_reset_the_epoch_waits_for_reset(seven, auto_reset):
    it = StokerClassificationIterator(label_pipe(seven, pad=True), reader_name="Reader",
                                      last_batch_policy=PARTIAL, auto_reset=auto_reset)
    for _ in range(4):
        next(it)
    for _ in range(2):
        with pytest.raises(StopIteration):
            next(it)  # the epoch stays over until reset()
    it.reset()
    assert labels_of(next(it)) == [[1, 2]]


def test_a_new_for_loop_starts_the_next_epoch(seven):
    # As in DALI: iter() on an iterator whose epoch is over resets it, so plain `for` loops
    # run epoch after epoch without auto_reset; iter() in the middle of an epoch does nothing.
    it = StokerClassificationIterator(label_pipe(seven, pad=True), reader_name="Reader",
                                      last_batch_policy=PARTIAL)
    assert epoch(it) == [[1, 2], [3, 4], [5, 6], [7]]
    with pytest.raises(StopIteration):
        next(it)  # next() alone does not start an epoch
    assert labels_of(next(iter(it))) == [[1, 2]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert iter(it) is it
    assert epoch(it) == [[3, 4], [5, 6], [7]]


def test_reset_mid_epoch_warns_and_is_ignored(seven):
    it = StokerClassificationIterator(label_pipe(seven, pad=True), reader_name="Reader",
                                      last_batch_policy=PARTIAL)
    next(it)
    with pytest.warns(RuntimeWarning, match="middle of an epoch"):
        it.reset()
    assert epoch(it) == [[3, 4], [5, 6], [7]]


def test_drop_reset_after_len_batches_discards_the_unfilled_batch(seven):
    # The common loop `for i in range(len(it))` never asks for the batch DROP discards; reset()
    # reads it from the pipeline so that the next epoch starts where it should.
    it = StokerClassificationIterator(label_pipe(seven), reader_name="Reader",
                                      last_batch_policy=DROP)
    assert [labels_of(next(it))[0] for _ in range(len(it))] == [[1, 2], [3, 4], [5, 6]]
    it.reset()
    assert [labels_of(next(it))[0] for _ in range(len(it))] == [[2, 3], [4, 5], [6, 7]]


def test_fill_last_batch_is_a_deprecated_alias(seven):
    with pytest.warns(DeprecationWarning, match="fill_last_batch"):
        it = StokerClassificationIterator(label_pipe(seven, pad=True), reader_name="Reader",
                                          fill_last_batch=False)
    assert epoch(it)[-1] == [7]
    with pytest.warns(DeprecationWarning):
        it = StokerClassificationIterator(label_pipe(seven, pad=True), reader_name="Reader",
                                          fill_last_batch=True)
    assert epoch(it)[-1] == [7, 7]


def test_size_and_reader_name_agree_and_len(seven):
    by_name = StokerClassificationIterator(label_pipe(seven), reader_name="Reader")
    by_size = StokerClassificationIterator(label_pipe(seven), size=7)
    assert by_name.size == 8 and by_size.size == 7  # reader_name: whole batches of the shard
    assert len(by_name) == len(by_size) == 4
    assert epoch(by_name) == epoch(by_size)
    # Without either, there are no epochs: batches come until the pipeline stops.
    endless = StokerClassificationIterator(label_pipe(seven))
    assert [labels_of(next(endless))[0] for _ in range(5)] == [[1, 2], [3, 4], [5, 6], [7, 1],
                                                             [2, 3]]
    with pytest.raises(TypeError, match="no length"):
        len(endless)


def test_size_counts_samples_over_all_pipelines(seven):
    # Two pipelines, each reading the whole set, and an epoch of 7 samples given by hand:
    # PARTIAL takes the samples in pipeline order and stops at exactly 7.
    pipes = [label_pipe(seven, batch_size=3), label_pipe(seven, batch_size=3)]
    it = StokerClassificationIterator(pipes, size=7, last_batch_policy=PARTIAL)
    assert len(it) == 2
    steps = [labels_of(out) for out in it]
    assert steps == [[[1, 2, 3], [1, 2, 3]], [[4]]]
    assert sum(len(x) for s in steps for x in s) == 7


def shard_sizes(n, s):
    return [(k + 1) * n // s - k * n // s for k in range(s)]


@pytest.mark.parametrize("num_shards", [2, 3])
@pytest.mark.parametrize("stick", [False, True])
def test_sharded_padded_epochs_cover_every_sample_once(seven, num_shards, stick):
    pipes = [label_pipe(seven, pad=True, shard_id=k, num_shards=num_shards, stick=stick)
             for k in range(num_shards)]
    it = StokerClassificationIterator(pipes, reader_name="Reader", last_batch_policy=PARTIAL,
                                      auto_reset=True)
    assert len(it) == math.ceil(math.ceil(7 / num_shards) / 2)
    for e in range(4):
        per_pipe = [[] for _ in pipes]
        for out in it:
            assert len(out) == num_shards
            for k, labels in enumerate(labels_of(out)):
                per_pipe[k] += labels
        assert sorted(sum(per_pipe, [])) == list(range(1, 8)), f"epoch {e}: {per_pipe}"
        # Each pipeline read exactly its shard of this epoch (shards rotate unless stick).
        for k, got in enumerate(per_pipe):
            shard = k if stick else (k + e) % num_shards
            begin = shard * 7 // num_shards
            assert got == list(range(begin + 1, begin + 1 + shard_sizes(7, num_shards)[shard]))


@pytest.mark.parametrize("num_shards", [2, 3])
def test_sharded_unpadded_first_epoch_covers_every_sample_once(seven, num_shards):
    pipes = [label_pipe(seven, shard_id=k, num_shards=num_shards) for k in range(num_shards)]
    it = StokerClassificationIterator(pipes, reader_name="Reader", last_batch_policy=PARTIAL)
    seen = [x for out in it for labels in labels_of(out) for x in labels]
    assert sorted(seen) == list(range(1, 8))


@pytest.mark.parametrize("num_shards", [2, 3])
@pytest.mark.parametrize("stick", [False, True])
def test_sharded_unpadded_fill_loses_nothing_across_epochs(seven, num_shards, stick):
    # FILL without padding reads into the next epoch. The iterator counts what each shard read
    # ahead: an epoch ends as soon as every pipeline has delivered its whole shard, and no
    # pipeline ever skips a sample of its reader's stream.
    pipes = [label_pipe(seven, shard_id=k, num_shards=num_shards, stick=stick)
             for k in range(num_shards)]
    it = StokerClassificationIterator(pipes, reader_name="Reader", last_batch_policy=FILL,
                                      auto_reset=True)
    sizes = shard_sizes(7, num_shards)
    shard_of = lambda k, e: k if stick else (k + e) % num_shards  # noqa: E731
    streams = [[] for _ in pipes]
    owed = [0] * num_shards  # samples each pipeline must have delivered by the end of the epoch
    for e in range(6):
        owed = [owed[k] + sizes[shard_of(k, e)] for k in range(num_shards)]
        steps = 0
        for out in it:
            assert any(len(s) < o for s, o in zip(streams, owed)), "a batch past the epoch"
            for k, labels in enumerate(labels_of(out)):
                assert len(labels) == 2
                streams[k] += labels
            steps += 1
        assert all(len(s) >= o for s, o in zip(streams, owed)), f"epoch {e} ended early"
    for k, got in enumerate(streams):
        expected, e = [], 0
        while len(expected) < len(got):
            begin = shard_of(k, e) * 7 // num_shards
            expected += list(range(begin + 1, begin + 1 + sizes[shard_of(k, e)]))
            e += 1
        assert got == expected[:len(got)], f"pipeline {k} skipped or repeated a sample"


@pytest.mark.parametrize("policy", [FILL, DROP, PARTIAL])
@pytest.mark.parametrize("pad", [False, True])
def test_one_process_per_shard_gets_the_same_number_of_steps(seven, policy, pad):
    # As under torchrun: one iterator per process, each with its own shard. Every rank must
    # take the same number of steps per epoch, or DDP's collectives hang.
    iters = [StokerClassificationIterator(label_pipe(seven, pad=pad, shard_id=k, num_shards=3),
                                          reader_name="Reader", last_batch_policy=policy,
                                          auto_reset=True) for k in range(3)]
    for _ in range(4):
        lengths = [len(it) for it in iters]  # FILL without padding: it changes between epochs
        counts = [len(epoch(it)) for it in iters]
        assert len(set(counts)) == 1 and counts == lengths, (counts, lengths)


def _run_epochs(iterator_cls, policy, pipe_factory, files, pad, num_shards, stick, by, bs,
                epochs):
    pipes = [pipe_factory(files, pad, k, num_shards, stick, bs) for k in range(num_shards)]
    kwargs = dict(reader_name="Reader") if by == "reader_name" else \
        dict(size=len(files), last_batch_padded=pad)
    it = iterator_cls(pipes, ["label"], last_batch_policy=policy, auto_reset=True, **kwargs)
    out = []
    for _ in range(epochs):
        out.append([[d["label"].reshape(-1).tolist() for d in step] for step in it])
    return out


def _dali_pipe(files, pad, shard_id, num_shards, stick, bs):
    from nvidia.dali import fn as dfn, pipeline_def as dpipeline_def

    @dpipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=1)
    def pipe():
        _, labels = dfn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                     pad_last_batch=pad, shard_id=shard_id,
                                     num_shards=num_shards, stick_to_shard=stick, name="Reader")
        return labels
    return pipe()


def _stoker_pipe(files, pad, shard_id, num_shards, stick, bs):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=1)
    def pipe():
        _, labels = fn.readers.file(files=files, labels=list(range(1, len(files) + 1)),
                                    pad_last_batch=pad, shard_id=shard_id,
                                    num_shards=num_shards, stick_to_shard=stick, name="Reader")
        return labels
    return pipe()


@pytest.mark.filterwarnings("ignore:Please set `reader_name`")
@pytest.mark.parametrize("policy", ["FILL", "DROP", "PARTIAL"])
@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("num_shards,stick,by,bs", [
    (1, False, "reader_name", 2), (1, False, "size", 2), (2, False, "reader_name", 2),
    (2, False, "size", 2), (3, False, "reader_name", 2), (3, True, "reader_name", 2),
    # Shards smaller than a batch: FILL reads whole epochs ahead and skips them.
    (3, False, "reader_name", 4), (5, False, "reader_name", 3), (5, True, "reader_name", 3)])
def test_same_batches_as_dali(seven, policy, pad, num_shards, stick, by, bs):
    """Where NVIDIA DALI is installed, its own iterator over its own reader is the reference."""
    import importlib.util
    try:
        have_dali = importlib.util.find_spec("nvidia.dali") is not None
    except (ImportError, ValueError):
        have_dali = False
    if not have_dali:
        pytest.skip("NVIDIA DALI is not installed; it is only the reference here")
    import nvidia.dali.plugin.pytorch as dali_torch
    if dali_torch.__name__.startswith("stoker"):
        pytest.skip("nvidia.dali is aliased to stoker in this process")
    args = (seven, pad, num_shards, stick, by, bs, 6)
    if policy == "DROP" and bs > 7 // num_shards:
        # No shard fills a batch: DROP has nothing to give, and both refuse to start.
        with pytest.raises(RuntimeError, match="no data"):
            _run_epochs(dali_torch.DALIGenericIterator, dali_torch.LastBatchPolicy[policy],
                        _dali_pipe, *args)
        with pytest.raises(ValueError, match="no data"):
            _run_epochs(StokerGenericIterator, LastBatchPolicy[policy], _stoker_pipe, *args)
        return
    ref = _run_epochs(dali_torch.DALIGenericIterator, dali_torch.LastBatchPolicy[policy],
                      _dali_pipe, *args)
    got = _run_epochs(StokerGenericIterator, LastBatchPolicy[policy], _stoker_pipe, *args)
    assert got == ref


def test_resolve_shard_without_torch_distributed():
    assert resolve_shard() == (0, 1)
    assert resolve_shard(2, 4) == (2, 4)
    with pytest.raises(ValueError, match="shard_id"):
        resolve_shard(4, 4)
    with pytest.raises(ValueError, match="world size"):
        resolve_shard(num_shards=3)


def test_resolve_shard_with_torch_distributed(tmp_path):
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("this torch build has no torch.distributed")
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0,
                            world_size=1)
    try:
        assert resolve_shard() == (0, 1)
        assert resolve_shard(shard_id=0) == (0, 1)
    finally:
        dist.destroy_process_group()
    # The rank/world-size lookup itself, as a 4-process job's rank 2 sees it.
    import unittest.mock as mock
    with mock.patch.object(base_iterator, "_distributed_rank_and_size", return_value=(2, 4)):
        assert resolve_shard() == (2, 4)
        assert resolve_shard(num_shards=4) == (2, 4)
        assert resolve_shard(shard_id=1) == (1, 4)


def test_the_readmes_torchrun_example_runs_on_two_processes(tmp_path, jpeg_dir, jpeg_files):
    import pathlib
    import subprocess
    import sys
    readme = (pathlib.Path(__file__).resolve().parents[2] / "python" / "stoker" / "plugin" /
              "README.md").read_text()
    block = readme.split("<!-- torchrun-example", 1)[1].split("```python\n", 1)[1]
    script = tmp_path / "train.py"
    script.write_text(block.split("```", 1)[0])
    env = dict(os.environ, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    def launch():
        return subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc_per_node=2", str(script), str(jpeg_dir)],
                              capture_output=True, text=True, env=env, timeout=300)
    r = launch()
    # Known open bug: now and then a rank aborts while the interpreter exits ("terminate called
    # without an active exception"), after its work is done and its pipeline deleted; not yet
    # traced to stoker or to torch's gloo threads. One retry keeps CI meaningful for the rest.
    if r.returncode != 0 and "terminate called without an active exception" in r.stderr:
        r = launch()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    n = len(jpeg_files)
    lines = [line for line in r.stdout.splitlines() if line.startswith("epoch")]
    sizes = [n // 2, n - n // 2]  # the shards; each rank moves on to the next one every epoch
    assert lines == [f"epoch 0: samples per rank {sizes}, total {n}",
                     f"epoch 1: samples per rank {sizes[::-1]}, total {n}"], r.stdout


def test_dali_names_are_the_same_classes():
    assert DALIGenericIterator is StokerGenericIterator
    assert DALIClassificationIterator is StokerClassificationIterator
    assert [p.name for p in LastBatchPolicy] == ["FILL", "DROP", "PARTIAL"]


def test_outputs_are_zero_copy_and_stay_valid(seven):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
    def pipe():
        return (fn.random.uniform(range=(0, 1), shape=(3, 5)),
                fn.random.coin_flip(probability=0.5, shape=(6,), dtype=types.BOOL))

    p = pipe()
    p.build()
    (x, flips) = p.run()
    t = to_torch(x)
    assert t.data_ptr() == x.as_array().ctypes.data, "a copy was made"
    assert t.shape == (4, 3, 5) and t.dtype == torch.float32
    assert torch.equal(t, torch.from_numpy(x.as_array()))
    b = to_torch(flips)
    assert b.dtype == torch.bool and torch.equal(b, torch.from_numpy(flips.as_array()))

    it = StokerGenericIterator(p, ["x", "flips"])
    out = next(it)[0]["x"]
    keep = out.clone()
    for _ in range(5):  # later batches do not overwrite a tensor the user still holds
        next(it)
    del it, p
    gc.collect()
    assert torch.equal(out, keep)


def test_iterator_tensor_shares_the_pipelines_buffer(capture_runs):
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.random.uniform(range=(0, 1), shape=(8,))

    p = pipe()
    captured = capture_runs(p)
    it = StokerGenericIterator(p, ["x"])
    for _ in range(3):
        t = next(it)[0]["x"]
        assert t.data_ptr() == captured[-1][0].as_array().ctypes.data


def test_ragged_outputs_are_lists_of_tensors(seven):
    it = StokerGenericIterator(label_pipe(seven, batch_size=3), ["data", "label"], size=7,
                               last_batch_policy=PARTIAL)
    got = list(it)
    assert [len(o[0]["data"]) for o in got] == [3, 3, 1]
    for o in got:
        data, labels = o[0]["data"], o[0]["label"]
        assert isinstance(data, list) and all(t.dtype == torch.uint8 for t in data)
        for t, label in zip(data, labels.reshape(-1).tolist()):
            with open(seven[label - 1], "rb") as f:
                assert t.numpy().tobytes() == f.read()


def test_decoded_ragged_images_then_dense_after_resize(seven):
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
    def pipe():
        jpegs, labels = fn.readers.file(files=seven)
        images = fn.decoders.image(jpegs)
        return images, fn.resize(images, resize_x=16, resize_y=12), labels

    it = StokerGenericIterator(pipe(), ["raw", "small", "label"])
    out = next(it)[0]
    assert isinstance(out["raw"], list) and len({tuple(t.shape) for t in out["raw"]}) > 1
    assert out["small"].shape == (3, 12, 16, 3) and out["small"].dtype == torch.uint8


def test_argument_errors(seven):
    p = label_pipe(seven)
    with pytest.raises(ValueError, match="either size or reader_name"):
        StokerClassificationIterator(p, size=7, reader_name="Reader")
    with pytest.raises(ValueError, match="output_map"):
        StokerGenericIterator(p, ["data"])
    with pytest.raises(ValueError, match="distinct"):
        StokerGenericIterator(p, ["a", "a"])
    with pytest.raises(TypeError, match="list of names"):
        StokerGenericIterator(p, "data")
    with pytest.raises(ValueError, match="auto_reset"):
        StokerClassificationIterator(p, size=7, auto_reset="maybe")
    with pytest.raises(TypeError, match="last_batch_policy"):
        StokerClassificationIterator(p, size=7, last_batch_policy="SOMETIMES")
    with pytest.raises(ValueError, match="no reader named"):
        StokerClassificationIterator(p, reader_name="Nope")
    with pytest.raises(ValueError, match="does not pad"):
        StokerClassificationIterator(p, reader_name="Reader", last_batch_padded=True)
    with pytest.raises(ValueError, match="epoch size"):
        StokerClassificationIterator([label_pipe(seven), label_pipe(seven)])
    with pytest.raises(ValueError, match="same batch size"):
        StokerClassificationIterator([label_pipe(seven), label_pipe(seven, batch_size=3)],
                                     size=7)


def test_prepare_first_batch_false_runs_nothing_until_next(seven):
    p = label_pipe(seven, pad=True)
    it = StokerClassificationIterator(p, reader_name="Reader", prepare_first_batch=False,
                                      last_batch_policy=PARTIAL)
    assert it._first_batch is None
    assert epoch(it) == [[1, 2], [3, 4], [5, 6], [7]]


def test_training_a_small_cnn_lowers_the_loss(jpeg_dir):
    torch.manual_seed(0)

    @pipeline_def(batch_size=16, num_threads=2, device_id=None, seed=5)
    def train_pipe():
        jpegs, labels = fn.readers.file(file_root=str(jpeg_dir), random_shuffle=True,
                                        initial_fill=64, name="Reader")
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        images = fn.resize(images, resize_x=32, resize_y=32)
        images = fn.cast(images, dtype=types.FLOAT) * (1 / 255)
        return images, labels

    pipe = train_pipe()
    num_classes = 19
    loader = StokerClassificationIterator(pipe, reader_name="Reader", auto_reset=True,
                                          last_batch_policy=PARTIAL)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, num_classes))
    opt = torch.optim.Adam(model.parameters(), lr=4e-3)
    losses = []
    for _ in range(4):
        epoch_loss, n = 0.0, 0
        for batch in loader:
            images = batch[0]["data"].permute(0, 3, 1, 2)  # NHWC -> NCHW, a view
            labels = batch[0]["label"].reshape(-1).long()
            assert images.shape[1:] == (3, 32, 32) and images.dtype == torch.float32
            assert 0 <= float(images.min()) and float(images.max()) <= 1
            loss = torch.nn.functional.cross_entropy(model(images - 0.5), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += loss.item() * len(labels)
            n += len(labels)
        assert n == 47, "PARTIAL: one epoch is exactly the data set"
        losses.append(epoch_loss / n)
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.8 * losses[0], losses


def test_two_gpus_one_shard_each(jpeg_files, capture_runs):
    """One iterator over two pipelines, one per GPU and shard: each output lives on its own
    pipeline's GPU without a copy, and the two shards cover every sample of an epoch once.
    Runs on a machine with two GPUs; skips elsewhere."""
    import stoker
    if stoker._C.cuda_device_count() < 2 or torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs that both stoker and torch see")
    files = [p for p, _ in jpeg_files]
    n = len(files)

    def make(k):
        @pipeline_def(batch_size=8, num_threads=2, device_id=k, seed=3)
        def pipe():
            jpegs, labels = fn.readers.file(files=files, labels=list(range(n)), shard_id=k,
                                            num_shards=2, pad_last_batch=True,
                                            random_shuffle=True, initial_fill=16, name="Reader")
            images = fn.decoders.image(jpegs, device="mixed")
            images = fn.resize(images, size=[32, 32])
            return images, labels.gpu()
        p = pipe()
        return p, capture_runs(p)

    (p0, cap0), (p1, cap1) = make(0), make(1)
    it = StokerGenericIterator([p0, p1], ["data", "label"], reader_name="Reader",
                               last_batch_policy=PARTIAL, auto_reset=True)
    for e in range(2):
        seen = []
        for out in it:
            assert len(out) == 2
            for k, (d, cap) in enumerate(zip(out, (cap0, cap1))):
                data, label = d["data"], d["label"]
                assert data.device == torch.device("cuda", k), (k, data.device)
                assert label.device == torch.device("cuda", k), (k, label.device)
                assert data.shape[1:] == (32, 32, 3) and data.dtype == torch.uint8
                assert data.data_ptr() == cap[-1][0].data_ptr(), f"pipeline {k}: a copy"
                assert float(data.float().mean()) > 0  # computed on GPU k, after the batch
                seen += label.cpu().reshape(-1).tolist()
        assert sorted(seen) == list(range(n)), f"epoch {e}"
