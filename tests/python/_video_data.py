"""The test videos and the helpers the video test files share (test_video_cpu.py,
test_video_gpu.py, test_video_experimental_reader.py). No PyAV here: the GPU machine runs the
GPU tests with FFmpeg's libraries alone."""
import re

import numpy as np

import stoker
from stoker import fn, pipeline_def

from conftest import TESTDATA

VIDEO = TESTDATA / "video"
AVC = str(VIDEO / "mp4" / "bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")  # keys 0,30,60,90
VP9_WEBM = str(VIDEO / "mkv" / "bbb_642x642_768kbps_30fps_vp9.webm")       # keys 0,30,60
VP8_WEBM = str(VIDEO / "mkv" / "bbb_960x540_60fps_vp8.webm")
VP9_MP4 = str(VIDEO / "mp4" / "bbb_800x640_768kbps_30fps_vp9.mp4")
HEVC = str(VIDEO / "mp4" / "h265_bframes.mp4")
HEVC_META = str(VIDEO / "mp4" / "h265_with_metadata_track.mp4")            # yuvj420p, full range
SAMPLE = str(VIDEO / "mp4" / "sample.mp4")
AV1 = str(VIDEO / "mp4" / "sample_av1.mp4")
COCKATOO = str(VIDEO / "cockatoo.mp4")                                      # H.264 4:4:4, keys 0,76,145
ALL = [AVC, VP9_WEBM, VP8_WEBM, VP9_MP4, HEVC, HEVC_META, SAMPLE, AV1, COCKATOO]

WITHOUT_FFMPEG = ("stoker was built without FFmpeg; install libavformat-dev libavcodec-dev "
                  "libswscale-dev and rebuild")


def plain(msg):
    """The message without the user's file:line after the operator's name."""
    return re.sub(r" \([^()]*\.py:\d+\)", "", str(msg))


def ffmpeg_built():
    """Whether this build decodes video (a build without FFmpeg says so by name)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        return fn.decoders.video(fn.external_source(source=lambda: [np.zeros(1, np.uint8)],
                                                    batch=True))
    try:
        p().run()
    except NotImplementedError as e:
        assert plain(e) == f"fn.decoders.video: {WITHOUT_FFMPEG}"
        return False
    except stoker.DecodeError:
        pass
    return True


_REFS = {}


def pyav_frames(path, upto=None):
    """PyAV's RGB frames of `path` (the first `upto` of them), cached per file."""
    import av
    key = (path, upto)
    if key not in _REFS:
        out = []
        with av.open(path) as c:
            for fr in c.decode(video=0):
                out.append(fr.to_ndarray(format="rgb24"))
                if upto is not None and len(out) >= upto:
                    break
        _REFS[key] = out
    return _REFS[key]
