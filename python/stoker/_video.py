"""Python-side pieces of the video operators (see src/ops/video/)."""


def _adapt_video_reader(kwargs):
    """readers.video's outputs, as DALI numbers them: video, then labels (with file_root,
    file_list or labels), frame_num (with enable_frame_num) and timestamps (with
    enable_timestamps); the operator refuses frame_num and timestamps without labels."""
    fnum = kwargs.get("enable_frame_num", "none")
    if fnum is True:
        fnum = "scalar"
    elif fnum is None or fnum is False:
        fnum = "none"
    if "enable_frame_num" in kwargs:
        kwargs["enable_frame_num"] = fnum
    root = bool(kwargs.get("file_root"))
    labels = root or bool(kwargs.get("file_list")) or kwargs.get("labels") is not None
    extra = (fnum != "none") + bool(kwargs.get("enable_timestamps", False)) if labels else 0
    return kwargs, 1 + labels + extra, None
