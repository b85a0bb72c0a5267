"""Python-side pieces of the video operators (see src/ops/video/)."""


def _video_reader_outputs(kwargs, experimental):
    fnum = kwargs.get("enable_frame_num", "none")
    if fnum is True:
        fnum = "scalar"
    elif fnum is None or fnum is False:
        fnum = "none"
    if "enable_frame_num" in kwargs:
        kwargs["enable_frame_num"] = fnum
    root = bool(kwargs.get("file_root"))
    labels = root or bool(kwargs.get("file_list")) or kwargs.get("labels") is not None
    extra = (fnum != "none") + bool(kwargs.get("enable_timestamps", False))
    return kwargs, 1 + labels + (extra if labels or experimental else 0), None


def _adapt_video_reader(kwargs):
    """readers.video's outputs, as DALI numbers them: video, then labels (with file_root,
    file_list or labels), frame_num (with enable_frame_num) and timestamps (with
    enable_timestamps); the operator refuses frame_num and timestamps without labels."""
    return _video_reader_outputs(kwargs, experimental=False)


def _adapt_experimental_video_reader(kwargs):
    """experimental.readers.video's outputs: readers.video's, where frame_num and timestamps
    need no labels."""
    return _video_reader_outputs(kwargs, experimental=True)


def _video_input_class():
    import collections

    import numpy as np

    from . import _C
    from .external_source import _ExternalSource

    class VideoInput(_ExternalSource):
        """The Python side of fn.experimental.inputs.video: the videos fed with feed_input, in
        a queue, cut into batches of sequences (a start frame and a length each) that
        decoders.video decodes from the fed bytes, which the batch's samples share."""

        def __init__(self, where, name, sequence_length, pad, blocking, no_copy):
            super().__init__(where, None, 3, True, False, "no", [np.uint8, np.int64, np.int64],
                             [1, 0, 0], False, name)
            self._kind = "video"
            self._length = sequence_length
            self._pad = pad
            self._blocking = blocking
            self._copy = not no_copy
            self._videos = collections.deque()  # [bytes, frames, next frame to hand out]
            self.output = lambda: None  # the decoded frames' operator, which feed_input may name

        def named_by(self, data_node):
            return data_node.op is self.output()

        def feed(self, data, layout=None, batch_size=None):
            what = (f"{self.where}: feed_input takes a batch of one encoded video (a list "
                    "holding one 1-D uint8 array of the file's bytes)")
            if isinstance(data, np.ndarray) and data.ndim == 2:
                data = list(data)
            if not isinstance(data, (list, tuple)) or len(data) != 1:
                n = f"{len(data)} samples" if isinstance(data, (list, tuple)) else type(data).__name__
                raise ValueError(f"{what}, got {n}")
            if layout not in (None, ""):
                raise ValueError(f"{what}; it takes no layout (the output's is FHWC), got {layout!r}")
            video = data[0]
            if isinstance(video, (bytes, bytearray, memoryview)):
                video = np.frombuffer(video, np.uint8)
            video = np.asarray(video)
            if video.dtype != np.uint8 or video.ndim != 1:
                raise TypeError(f"{what}, got a {video.dtype} array of shape {video.shape}")
            video = np.array(video) if self._copy else np.ascontiguousarray(video)
            try:
                frames = _C.video_frame_count(video)
            except Exception as e:
                raise type(e)(f"{self.where}: the video fed with feed_input cannot be read: {e}") from None
            if frames == 0:
                raise ValueError(f"{self.where}: the video fed with feed_input has no frames")
            with self._lock:
                self._videos.append([video, frames, 0])
            self.state.notify()

        def _fetch_locked(self, iteration, batch_size):
            with self._lock:
                if not self._videos:
                    if iteration < self._requested and not self._blocking:
                        raise RuntimeError(
                            f"{self.where}: no video left to decode for this batch: feed one "
                            f"with pipe.feed_input({self.name!r}, [encoded]) (encoded: a 1-D "
                            "uint8 array of the file's bytes) before pipe.run(), or make it "
                            "with blocking=True to wait for one")
                    return None  # run() has not asked for it yet, or it waits: feed_input wakes it
                video = self._videos[0]
                data, frames, first = video
                starts = list(range(first, frames, self._length))[:batch_size]
                video[2] = starts[-1] + self._length
                if video[2] >= frames:
                    self._videos.popleft()
            lengths = [self._length if self._pad else min(self._length, frames - s) for s in starts]
            return self._normalize(([data] * len(starts),
                                    [np.array(s, np.int64) for s in starts],
                                    [np.array(n, np.int64) for n in lengths]), batch_size)

    return VideoInput


def _inputs_video(inputs, kwargs):
    """fn.experimental.inputs.video: an external source that cuts the videos fed to it into
    batches of sequences, and decoders.video, which decodes each sequence (on device='mixed',
    then copies it to the GPU, as that operator does)."""
    import weakref

    from ._schema import SCHEMAS, _decoded_on_cpu, checked_arg, plain_arg, record_op, unexpected_arg
    from .pipeline import DataNode, _user_location
    op = "experimental.inputs.video"
    where = f"fn.{op} ({_user_location()})"
    if inputs:
        raise TypeError(f"fn.{op} takes no inputs, got {len(inputs)}; feed it videos with "
                        "pipe.feed_input(name, data).")
    device = kwargs.pop("device", None) or "cpu"
    if device not in ("cpu", "mixed"):
        raise ValueError(f"{where}: device must be 'cpu' or 'mixed', got {device!r}.")
    name = kwargs.pop("name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: give it a name (name=\"...\"): pipe.feed_input(name, data) "
                         "feeds it its videos.")
    kwargs.pop("preserve", None)
    kwargs.pop("bytes_per_sample_hint", None)
    argdefs = {a["name"]: a for a in SCHEMAS[op]["args"]}
    args = {}
    for k, v in kwargs.items():
        if k not in argdefs:
            raise unexpected_arg(op, k, argdefs)
        if isinstance(v, DataNode):
            raise TypeError(f"fn.{op}: argument '{k}' must be a constant; it does not accept a "
                            "per-sample tensor from another operator.")
        args[k] = checked_arg(op, k, plain_arg(v, f"{where}: argument '{k}'"), where)
    if "sequence_length" not in args:
        raise TypeError(f"{where}: the argument 'sequence_length' is required (frames in each "
                        "sequence).")
    pad = args.get("last_sequence_policy", "partial") == "pad"
    es = _video_input_class()(where, name, int(args["sequence_length"]), pad,
                              bool(args.get("blocking", False)), bool(args.get("no_copy", False)))
    encoded, first, length = record_op(
        "external_source", (), {"_python_side": es, "num_outputs": 3, "no_copy": True})
    on_cpu = device == "mixed" and _decoded_on_cpu(op, device)
    frames = record_op("decoders.video", [encoded],
                       {"start_frame": first, "sequence_length": length,
                        "pad_mode": "constant" if pad else "none",
                        "device": "cpu" if on_cpu else device,
                        **({"_display_name": f"fn.{op}(device='mixed')"} if device == "mixed"
                           and not on_cpu else {})})
    if on_cpu:
        frames = record_op("_to_gpu", [frames], {"_display_name": f"fn.{op}(device='mixed')"},
                           default_device="mixed")
    es.output = weakref.ref(frames.op)
    return frames


def video_resize_schema(schemas):
    """readers.video_resize's schema: readers.video's arguments, then resize's (its dtype is
    the reader's)."""
    reader, resize = schemas["readers.video"], schemas["resize"]
    taken = {a["name"] for a in reader["args"]}
    gpu = "mixed" in schemas["_to_gpu"]["backends"]
    return dict(
        reader, name="readers.video_resize",
        args=list(reader["args"]) + [a for a in resize["args"] if a["name"] not in taken],
        backends=["cpu", "gpu"] if gpu else ["cpu"],
        doc="Reads video sequences as readers.video does and resizes their frames as resize does "
            "(resize_x/resize_y, resize_shorter, size, mode, interp_type, ...): readers.video "
            "then resize, on the CPU or, with device='gpu', on the GPU (decoded on NVDEC).")


def _video_resize(inputs, kwargs):
    """fn.readers.video_resize: readers.video, resize on its frames, and on device='gpu' a copy
    of every output to the GPU."""
    from ._schema import SCHEMAS, _decoded_on_cpu, record_op, unexpected_arg
    op = "readers.video_resize"
    if inputs:
        raise TypeError(f"fn.{op} takes no inputs, got {len(inputs)}.")
    device = kwargs.pop("device", None) or "cpu"
    if device not in SCHEMAS[op]["backends"]:
        raise ValueError(f"fn.{op} has no '{device}' backend in this build of stoker; it runs "
                         f"on: {', '.join(SCHEMAS[op]['backends'])}.")
    argdefs = {a["name"]: a for a in SCHEMAS[op]["args"]}
    for k in kwargs:
        if k not in argdefs and k not in ("name", "preserve", "bytes_per_sample_hint"):
            raise unexpected_arg(op, k, argdefs)
    sizes = {a["name"] for a in SCHEMAS["resize"]["args"]} - {"dtype"}
    resize_kw = {k: kwargs.pop(k) for k in list(kwargs) if k in sizes}
    on_cpu = device == "gpu" and _decoded_on_cpu(op, device)
    outs = record_op("readers.video", (), dict(kwargs, device="cpu" if on_cpu else device))
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    outs[0] = record_op("resize", [outs[0]], resize_kw)
    if on_cpu:
        shown = f"fn.{op}(device='gpu')"
        outs = [record_op("_to_gpu", [o], {"_display_name": shown}, default_device="mixed")
                for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)
