"""What every framework iterator shares: epoch accounting, the last batch policy, reset and the
bookkeeping of shards. The framework adapters (pytorch.py, jax.py, tf.py) only turn one batch
into the framework's tensors.

The semantics are DALI's framework iterators', so that code moved from DALI counts epochs the
same way. For data 1..7, batch size 2 and one shard:

    policy    reader padded   last batch   next epoch starts
    PARTIAL   yes             [7]          [1, 2]
    PARTIAL   no              [7]          [2, 3]   (1 was read ahead into the dropped part)
    FILL      yes             [7, 7]       [1, 2]
    FILL      no              [7, 1]       [2, 3]   (the next epoch is one sample shorter)
    DROP      either          [5, 6]       [1, 2] padded, [2, 3] not

The reader never rewinds (stoker's readers, like DALI's, run on across epochs: a padded shard
ends on a batch boundary, an unpadded one wraps into the next epoch within a batch), so the
iterator keeps count of where each pipeline stands in its shard and ends epochs accordingly.

Checkpoints (``checkpoints()``) therefore hold two things per pipeline: the pipeline's own
checkpoint as of the last batch the *iterator* handed out (not the batch it prepared ahead), and
those counters, in an "iterator" section of the same JSON string. Pipelines built from these
strings make a new iterator pick the counters up and continue where the old one stood.
"""
import enum
import json
import math
import sys
import warnings

__all__ = ["LastBatchPolicy", "StokerBaseIterator", "resolve_shard"]

_ITERATOR_CHECKPOINT_FORMAT = "stoker.iterator"
_ITERATOR_CHECKPOINT_VERSION = 1


class LastBatchPolicy(enum.Enum):
    """What the iterator does with the last batch of an epoch when the shard does not fill it.

    - FILL: return a full batch, completed with samples that follow (the padding the reader
      adds with ``pad_last_batch=True``, or the start of the next epoch).
    - DROP: drop the batch that cannot be filled with samples of this epoch.
    - PARTIAL: return only this epoch's samples; the last batch is smaller.
    """
    FILL = 0
    DROP = 1
    PARTIAL = 2


def resolve_shard(shard_id=None, num_shards=None):
    """(shard_id, num_shards) for this process: the given values, else the rank and world size
    of an initialised ``torch.distributed`` process group, else (0, 1).

    Lets one training script run unchanged on one process or under ``torchrun``::

        shard_id, num_shards = resolve_shard()
        pipe = train_pipe(root, shard_id=shard_id, num_shards=num_shards, device_id=local_rank)
    """
    if shard_id is not None and num_shards is not None:
        return _check_shard(shard_id, num_shards)
    rank, world = _distributed_rank_and_size()
    if num_shards is None:
        num_shards = world
    if shard_id is None:
        if num_shards != world:
            raise ValueError(
                f"resolve_shard: num_shards={num_shards} was given without shard_id, and it "
                f"differs from the torch.distributed world size ({world}), so the rank cannot "
                f"choose the shard. Give shard_id too.")
        shard_id = rank
    return _check_shard(shard_id, num_shards)


def _check_shard(shard_id, num_shards):
    for name, v in (("shard_id", shard_id), ("num_shards", num_shards)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"resolve_shard: {name} must be an int, got {type(v).__name__} {v!r}.")
    if num_shards < 1 or not 0 <= shard_id < num_shards:
        raise ValueError(f"resolve_shard: shard_id must be in [0, num_shards) and num_shards >= 1; "
                         f"got shard_id={shard_id}, num_shards={num_shards}.")
    return shard_id, num_shards


def _distributed_rank_and_size():
    try:
        import torch.distributed as dist
    except ImportError:
        return 0, 1
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _parse_auto_reset(auto_reset):
    if auto_reset is None or auto_reset is False or auto_reset == "no":
        return False
    if auto_reset is True or auto_reset == "yes":
        return True
    raise ValueError(f"auto_reset must be True, False, 'yes' or 'no', got {auto_reset!r}.")


class StokerBaseIterator:
    """Runs one or more pipelines (one per device or shard) in lock step and counts epochs.

    Subclasses implement ``_convert(batch, pipe_index, keep)``: one pipeline output (a
    TensorList) to the framework's tensor, keeping its first ``keep`` samples, and
    ``_assemble(per_pipe)``: the list of per-pipeline results to what ``__next__`` returns.

    Arguments are DALI's (see ``StokerGenericIterator`` for their documentation).
    """

    def __init__(self, pipelines, output_map, size=-1, reader_name=None, auto_reset=False,
                 fill_last_batch=None, last_batch_padded=False,
                 last_batch_policy=LastBatchPolicy.FILL, prepare_first_batch=True):
        name = type(self).__name__
        if pipelines is None:
            raise ValueError(f"{name}: pipelines is required: a Pipeline or a list of them.")
        if not isinstance(pipelines, (list, tuple)):
            pipelines = [pipelines]
        pipelines = list(pipelines)
        if not pipelines:
            raise ValueError(f"{name}: pipelines is an empty list; give at least one Pipeline.")
        self._pipes = pipelines
        self._num_gpus = len(pipelines)
        sizes = [p.max_batch_size for p in pipelines]
        if any(s is None for s in sizes):
            raise ValueError(f"{name}: every pipeline needs a batch_size.")
        if len(set(sizes)) != 1:
            raise ValueError(f"{name}: all pipelines must have the same batch size, got {sizes}.")
        self.batch_size = sizes[0]

        output_map = list(output_map)
        if len(set(output_map)) != len(output_map):
            raise ValueError(f"{name}: the names in output_map must be distinct, got {output_map}.")
        self.output_map = output_map

        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"{name}: size must be an int, got {type(size).__name__} {size!r}.")
        self._size = size
        self._auto_reset = _parse_auto_reset(auto_reset)
        self._prepare_first_batch = bool(prepare_first_batch)

        if fill_last_batch is not None:
            warnings.warn(f"{name}: fill_last_batch is deprecated; use last_batch_policy="
                          "LastBatchPolicy.FILL (True) or LastBatchPolicy.PARTIAL (False).",
                          DeprecationWarning, stacklevel=3)
            last_batch_policy = LastBatchPolicy.FILL if fill_last_batch else LastBatchPolicy.PARTIAL
        if not isinstance(last_batch_policy, LastBatchPolicy):
            # Another enum with the same names (the real DALI's) or a plain name.
            try:
                last_batch_policy = LastBatchPolicy[getattr(last_batch_policy, "name",
                                                            last_batch_policy)]
            except (KeyError, TypeError):
                raise TypeError(f"{name}: last_batch_policy must be a LastBatchPolicy (FILL, DROP "
                                f"or PARTIAL), got {last_batch_policy!r}.") from None
        self._last_batch_policy = last_batch_policy
        self._last_batch_padded = bool(last_batch_padded)

        if size == 0:
            raise ValueError(f"{name}: size cannot be 0; give the number of samples per epoch, "
                             "or reader_name to take it from the reader.")
        if size < -1:
            raise ValueError(f"{name}: size must be positive, or -1 for no epoch size; got {size}.")
        if reader_name is not None and size > 0:
            raise ValueError(f"{name}: give either size or reader_name, not both (reader_name "
                             f"takes the epoch size from the reader {reader_name!r}).")
        if size < 0 and reader_name is None and self._num_gpus > 1:
            raise ValueError(f"{name}: with {self._num_gpus} pipelines the iterator needs the "
                             "epoch size: give reader_name (the name= of the reader) or size.")
        if size < 0 and reader_name is None:
            # No epoch: batches come until the pipeline itself stops.
            self._last_batch_policy = LastBatchPolicy.FILL
            self._last_batch_padded = False

        self._size_arg = size
        self._counter = 0
        self._reader_name = reader_name
        for p in self._pipes:
            p.build()
        if reader_name is not None:
            self._read_reader_meta(last_batch_padded)
        self._first_batch = None
        # The pipelines' checkpoints and the counters from before the batch prepared ahead was
        # run: what checkpoints() describes until that batch is handed out.
        self._first_batch_checkpoint = None
        self._pending_stop = False  # a restored iterator's first next() ends the epoch
        self._ever_consumed = False
        restored = self._restore_iterator_state()
        if self._prepare_first_batch and not (restored and self._epoch_over()):
            before = self._checkpoint_now() if self._checkpointing_enabled() else None
            try:
                self._first_batch = self._next_batch()
            except StopIteration:
                if not restored:
                    raise ValueError(f"{name}: the pipeline gave no data for the first batch. "
                                     "With last_batch_policy=DROP this happens when a shard is "
                                     "smaller than the batch size.") from None
                # The original iterator stood right before the end of an epoch (a batch DROP
                # discards, or an external source at the end of its data): its next() would
                # have raised StopIteration, so this one's first next() does.
                self._pending_stop = True
            self._first_batch_checkpoint = before

    # ---- reader bookkeeping
    def _read_reader_meta(self, last_batch_padded):
        name = type(self).__name__
        metas = [p.reader_meta(self._reader_name) for p in self._pipes]

        def same(key, what):
            values = [m[key] for m in metas]
            if len(set(values)) != 1:
                raise ValueError(f"{name}: the reader {self._reader_name!r} must have the same "
                                 f"{what} in every pipeline, got {values}.")
            return values[0]

        self._size_no_pad = same("epoch_size", "data set (epoch_size)")
        self._shards_num = same("number_of_shards", "num_shards")
        padded = same("pad_last_batch", "pad_last_batch")
        self._is_stick_to_shard = same("stick_to_shard", "stick_to_shard")
        if last_batch_padded and not padded:
            raise ValueError(f"{name}: last_batch_padded=True, but the reader "
                             f"{self._reader_name!r} does not pad (pad_last_batch=False). With "
                             "reader_name the iterator takes padding from the reader; leave "
                             "last_batch_padded unset.")
        self._last_batch_padded = padded
        self._shards_id = [m["shard_id"] for m in metas]
        if self._shards_num == 1 and "torch.distributed" in sys.modules:
            rank, world = _distributed_rank_and_size()
            if world > 1:
                warnings.warn(f"{name}: torch.distributed runs {world} processes, but the reader "
                              f"{self._reader_name!r} has one shard, so every process reads the "
                              "whole data set. Give the reader shard_id and num_shards, e.g. "
                              "from stoker.plugin.resolve_shard().", RuntimeWarning, stacklevel=3)
        s, n, bs = self._shards_num, self._size_no_pad, self.batch_size
        if self._last_batch_policy == LastBatchPolicy.DROP:
            self._size = n // s
        elif padded:
            self._size = metas[0]["epoch_size_padded"] // s
        else:
            # A whole number of batches that covers the largest shard.
            self._size = math.ceil(math.ceil(n / s) / bs) * bs
        self._shard_sizes = [(k + 1) * n // s - k * n // s for k in range(s)]
        # Per shard *position* (not per pipeline): how far into the epoch it starts. Unpadded
        # shards of different sizes read ahead into the next epoch by different amounts.
        self._shard_sizes_per_gpu = list(self._shard_sizes)
        self._counter_per_gpu = [0] * s

    def _samples_to_keep(self):
        """How many samples of the batch just read each pipeline keeps (PARTIAL trims)."""
        bs = self.batch_size
        if self._last_batch_policy != LastBatchPolicy.PARTIAL:
            return [bs] * self._num_gpus
        if self._reader_name is not None:
            return [max(0, min(bs, bs - (self._counter - self._shard_sizes[sid])))
                    for sid in self._shards_id]
        if self._size > 0 and self._counter > self._size:
            # The samples up to exactly `size` over all pipelines, in pipeline order.
            left = self._size - (self._counter - self._num_gpus * bs)
            return [max(0, min(bs, left - k * bs)) for k in range(self._num_gpus)]
        return [bs] * self._num_gpus

    # ---- iteration
    def _end_iteration(self):
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def _run_pipelines(self):
        if self._size > 0 and self._counter >= self._size:
            self._end_iteration()
        try:
            outputs = [p.run() for p in self._pipes]
        except StopIteration:
            if self._size < 0 and self._auto_reset:
                self.reset()
            raise
        for k, outs in enumerate(outputs):
            if len(outs) != len(self.output_map):
                raise ValueError(
                    f"{type(self).__name__}: pipeline {k} has {len(outs)} outputs but output_map "
                    f"names {len(self.output_map)} ({self.output_map}); give one name per "
                    "output.")
        return outputs

    def _advance(self, dry_run=False, end_iteration=True):
        """Counts the batch just read; True when DROP says it belongs to no epoch."""
        counter = self._counter
        should_end = False
        if self._reader_name is not None:
            counter += self.batch_size
            if self._last_batch_policy == LastBatchPolicy.DROP:
                should_end = any(c + counter > s for c, s in
                                 zip(self._counter_per_gpu, self._shard_sizes_per_gpu))
        else:
            counter += self._num_gpus * self.batch_size
            if self._last_batch_policy == LastBatchPolicy.DROP:
                should_end = self._size > 0 and counter > self._size
        if not dry_run:
            self._counter = counter
            if should_end and end_iteration:
                self._end_iteration()
        return should_end

    def _next_batch(self):
        outputs = self._run_pipelines()
        self._advance()
        keep = self._samples_to_keep()
        per_pipe = []
        for k, (outs, n) in enumerate(zip(outputs, keep)):
            if n == 0 and self._reader_name is None:
                break  # size given by hand: the samples ended in an earlier pipeline
            per_pipe.append({name: self._convert_output(j, b, k, n)
                             for j, (name, b) in enumerate(zip(self.output_map, outs))})
        return self._assemble(per_pipe)

    def __next__(self):
        self._ever_consumed = True
        self._first_batch_checkpoint = None
        if self._pending_stop:
            self._pending_stop = False
            raise StopIteration
        if self._first_batch is not None:
            batch, self._first_batch = self._first_batch, None
            return batch
        return self._next_batch()

    def next(self):
        return self.__next__()

    def __iter__(self):
        # As DALI: a new `for` loop over an iterator whose epoch ended starts the next epoch,
        # auto_reset or not; iter() on a fresh or running iterator changes nothing.
        if self._ever_consumed and self._size > 0 and self._counter >= self._size:
            self.reset()
        return self

    def reset(self):
        """Starts the next epoch. Call it after StopIteration (auto_reset=True does it for you);
        in the middle of an epoch it warns and does nothing, as in DALI."""
        if self._last_batch_policy == LastBatchPolicy.DROP:
            # A loop that stopped after len(self) batches left the unfillable batch in the
            # pipeline: read it and drop it so the next epoch starts where it should.
            should_end = self._advance(dry_run=True)
            already_ended = self._size > 0 and self._counter >= self._size
            if should_end and not already_ended:
                self._run_pipelines()
                self._advance(end_iteration=False)

        if not (self._counter >= self._size or self._size < 0):
            warnings.warn(f"{type(self).__name__}: reset() in the middle of an epoch is ignored "
                          f"({self._counter} of {self._size} samples read); iterate to the end "
                          "of the epoch first.", RuntimeWarning, stacklevel=2)
            return
        if self._last_batch_policy == LastBatchPolicy.FILL and not self._last_batch_padded:
            if self._reader_name is not None:
                # Each shard position read past its shard's end into the next epoch.
                start = min(self._counter_per_gpu)
                read = self._counter - start
                self._counter_per_gpu = [c + read - s for c, s in
                                         zip(self._counter_per_gpu, self._shard_sizes_per_gpu)]
                self._counter = min(self._counter_per_gpu)
            elif self._size > 0:
                self._counter %= self._size
            else:
                self._counter = 0
        else:
            self._counter = 0
        if self._reader_name is not None:
            if not self._is_stick_to_shard:
                self._shards_id = [(s + 1) % self._shards_num for s in self._shards_id]
            if self._last_batch_policy == LastBatchPolicy.FILL and not self._last_batch_padded:
                if not self._is_stick_to_shard:
                    # Position k now reads shard k + 1 (the reader moves on by one shard).
                    self._shard_sizes_per_gpu = (self._shard_sizes_per_gpu[1:] +
                                                 self._shard_sizes_per_gpu[:1])
                left = [s - c for s, c in zip(self._shard_sizes_per_gpu, self._counter_per_gpu)]
                bs = self.batch_size
                self._size = math.ceil(max(left) / bs) * bs
                if self._size == 0:
                    # Every shard read the whole next epoch ahead already: that epoch is done,
                    # and the readers have moved on to the one after.
                    self._counter_per_gpu = [0] * self._shards_num
                    self._counter = 0
                    if not self._is_stick_to_shard:
                        self._shards_id = [(s + 1) % self._shards_num for s in self._shards_id]
                        self._shard_sizes_per_gpu = (self._shard_sizes_per_gpu[1:] +
                                                     self._shard_sizes_per_gpu[:1])
                    self._size = math.ceil(max(self._shard_sizes_per_gpu) / bs) * bs
        for p in self._pipes:
            r = getattr(p, "reset", None)
            if callable(r):
                r()

    # ---- checkpoints
    def checkpoints(self):
        """One checkpoint string per pipeline (in the order of ``pipelines``), describing the
        state right after the last batch this iterator returned: the batch it prepared ahead is
        not counted, and its epoch counters (position in each shard, samples read ahead into the
        next epoch, whether the epoch is over) are included.

        To resume, build the same pipelines with ``enable_checkpointing=True`` and
        ``checkpoint=checkpoints()[k]`` for the k-th, and a new iterator over them with the same
        arguments: it gives the batches, epoch ends and StopIterations this one would have
        given next. Needs pipelines built with ``enable_checkpointing=True``.
        """
        self._check_checkpointing("checkpoints()")
        if self._first_batch_checkpoint is not None:
            texts, state = self._first_batch_checkpoint
        else:
            texts, state = self._checkpoint_now()
        out = []
        for k, text in enumerate(texts):
            ckpt = json.loads(text)
            ckpt["iterator"] = {"format": _ITERATOR_CHECKPOINT_FORMAT,
                                "version": _ITERATOR_CHECKPOINT_VERSION, "pipeline": k,
                                "config": self._checkpoint_config(), "state": state}
            out.append(json.dumps(ckpt))
        return out

    def _checkpointing_enabled(self):
        return all(getattr(p, "enable_checkpointing", False) for p in self._pipes)

    def _check_checkpointing(self, what):
        for k, p in enumerate(self._pipes):
            if not getattr(p, "enable_checkpointing", False):
                raise ValueError(
                    f"{type(self).__name__}.{what}: pipeline {k} was built without "
                    "enable_checkpointing=True, so it keeps no checkpoints. Build the pipelines "
                    "with enable_checkpointing=True (e.g. @pipeline_def(..., "
                    "enable_checkpointing=True)) to take checkpoints of the iterator.")

    def _checkpoint_now(self):
        return [p.checkpoint() for p in self._pipes], self._iterator_state()

    def _checkpoint_config(self):
        """The arguments a resuming iterator must share with this one."""
        return {"pipelines": self._num_gpus, "batch_size": self.batch_size,
                "reader_name": self._reader_name, "size": self._size_arg,
                "last_batch_policy": self._last_batch_policy.name,
                "last_batch_padded": self._last_batch_padded}

    def _iterator_state(self):
        state = {"counter": self._counter, "size": self._size,
                 "ever_consumed": self._ever_consumed}
        if self._reader_name is not None:
            state.update(counter_per_gpu=list(self._counter_per_gpu),
                         shard_sizes_per_gpu=list(self._shard_sizes_per_gpu),
                         shards_id=list(self._shards_id))
        return state

    def _epoch_over(self):
        return self._size > 0 and self._counter >= self._size

    def _restore_iterator_state(self):
        """Takes the counters from the pipelines' checkpoints when they were made by
        checkpoints(); True when it did."""
        name = type(self).__name__
        sections = []
        for p in self._pipes:
            ckpt = getattr(p, "_checkpoint", None)
            sections.append(ckpt.get("iterator") if isinstance(ckpt, dict) else None)
        if all(s is None for s in sections):
            return False
        without = [k for k, s in enumerate(sections) if s is None]
        if without:
            raise ValueError(
                f"{name}: pipeline(s) {without} were not built from an iterator checkpoint, the "
                "others were. Build every pipeline from its entry of one checkpoints() list "
                "(checkpoint=checkpoints()[k] for the k-th pipeline).")
        config = self._checkpoint_config()
        for k, s in enumerate(sections):
            if (not isinstance(s, dict) or s.get("format") != _ITERATOR_CHECKPOINT_FORMAT or
                    not isinstance(s.get("config"), dict) or not isinstance(s.get("state"), dict)):
                raise ValueError(f"{name}: the iterator section of pipeline {k}'s checkpoint is "
                                 "damaged; pass the strings checkpoints() returned, unchanged.")
            if s.get("version") != _ITERATOR_CHECKPOINT_VERSION:
                raise ValueError(f"{name}: pipeline {k}'s checkpoint has iterator version "
                                 f"{s.get('version')!r}; this stoker reads version "
                                 f"{_ITERATOR_CHECKPOINT_VERSION}. Take the checkpoint again "
                                 "with this version of stoker.")
            for key, have in config.items():
                saved = s["config"].get(key)
                if saved != have:
                    raise ValueError(
                        f"{name}: pipeline {k}'s checkpoint was taken from an iterator with "
                        f"{key}={saved!r}, but this iterator has {key}={have!r}. Resume with "
                        "the same iterator arguments (and the same number of pipelines).")
            if s.get("pipeline") != k:
                raise ValueError(
                    f"{name}: pipeline {k} was built from checkpoints()[{s.get('pipeline')}]; "
                    "give the k-th pipeline checkpoints()[k], in the order the pipelines had.")
        states = [s["state"] for s in sections]
        if any(st != states[0] for st in states[1:]):
            raise ValueError(f"{name}: the pipelines' checkpoints come from different calls of "
                             "checkpoints(); build all pipelines from one checkpoints() list.")
        self._set_iterator_state(states[0])
        return True

    def _set_iterator_state(self, state):
        def ints(key, n=None):
            v = state.get(key)
            ok = (isinstance(v, int) and not isinstance(v, bool)) if n is None else (
                isinstance(v, list) and len(v) == n and
                all(isinstance(x, int) and not isinstance(x, bool) for x in v))
            if not ok:
                raise ValueError(f"{type(self).__name__}: the iterator section of the checkpoint "
                                 f"is damaged ({key!r} is {v!r}); pass the strings checkpoints() "
                                 "returned, unchanged.")
            return v if n is None else list(v)

        self._counter = ints("counter")
        self._size = ints("size")
        self._ever_consumed = bool(state.get("ever_consumed"))
        if self._reader_name is not None:
            n = self._shards_num
            self._counter_per_gpu = ints("counter_per_gpu", n)
            self._shard_sizes_per_gpu = ints("shard_sizes_per_gpu", n)
            self._shards_id = ints("shards_id", self._num_gpus)

    # ---- sizes
    @property
    def size(self):
        """Samples per epoch: per shard with reader_name, over all pipelines with size."""
        return self._size

    def __len__(self):
        if self._size < 0:
            raise TypeError(f"{type(self).__name__} has no length: it was made without size or "
                            "reader_name, so it does not know the epoch size.")
        per_step = self.batch_size if self._reader_name is not None else \
            self._num_gpus * self.batch_size
        if self._last_batch_policy == LastBatchPolicy.DROP:
            return self._size // per_step
        return math.ceil(self._size / per_step)

    # ---- framework adapters
    def _convert(self, batch, pipe_index, keep):
        raise NotImplementedError

    def _convert_output(self, output_index, batch, pipe_index, keep):
        """_convert for adapters that treat outputs differently (DALIRaggedIterator)."""
        return self._convert(batch, pipe_index, keep)

    def _assemble(self, per_pipe):
        return per_pipe
