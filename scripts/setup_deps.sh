# Installs what building and testing stoker needs, when it is missing (sourced by other scripts).
# System: a C++ compiler, CMake, Ninja, libjpeg-turbo, libpng, DLPack, googletest, ccache.
# Python: numpy, pybind11, scikit-build-core, pytest, Pillow, OpenCV (headless), SciPy, and
# soundfile and librosa (the audio tests' references).
_need_apt=()
command -v g++ >/dev/null || _need_apt+=(g++)
[ -f /usr/include/jpeglib.h ] || [ -f /usr/include/x86_64-linux-gnu/jpeglib.h ] || _need_apt+=(libjpeg-dev)
[ -f /usr/include/png.h ] || _need_apt+=(libpng-dev)
[ -f /usr/include/dlpack/dlpack.h ] || _need_apt+=(libdlpack-dev)
[ -d /usr/src/googletest ] || [ -f /usr/include/gtest/gtest.h ] || _need_apt+=(libgtest-dev)
command -v ccache >/dev/null || _need_apt+=(ccache)
# Optional: LMDB for readers.caffe / readers.caffe2 (without it they say "built without LMDB").
[ -f /usr/include/lmdb.h ] || _need_apt+=(liblmdb-dev)
# Optional image formats (without them, decoding that format says "built without X"):
# TIFF (libtiff), WebP (libwebp), JPEG 2000 (OpenJPEG). JSON for readers.coco (header-only).
[ -f /usr/include/tiffio.h ] || [ -f /usr/include/x86_64-linux-gnu/tiffio.h ] || _need_apt+=(libtiff-dev)
[ -f /usr/include/webp/decode.h ] || _need_apt+=(libwebp-dev)
ls /usr/include/openjpeg-2*/openjpeg.h >/dev/null 2>&1 || _need_apt+=(libopenjp2-7-dev)
[ -f /usr/include/nlohmann/json.hpp ] || _need_apt+=(nlohmann-json3-dev)
# OpenSSL's libcrypto: the C API checks the SHA-256 of serialized pipelines.
[ -f /usr/include/openssl/evp.h ] || _need_apt+=(libssl-dev)
# Optional: libprotobuf (lite) and protoc read pipelines that DALI serialized (model.dali).
[ -f /usr/include/google/protobuf/message_lite.h ] || _need_apt+=(libprotobuf-dev)
command -v protoc >/dev/null || _need_apt+=(protobuf-compiler)
# Optional audio: libsndfile (decoders.audio, readers.nemo_asr) and libsoxr (resampling); without
# them those operators say "built without libsndfile" / "built without libsoxr".
[ -f /usr/include/sndfile.h ] || _need_apt+=(libsndfile1-dev)
[ -f /usr/include/soxr.h ] || _need_apt+=(libsoxr-dev)
# Optional: liblz4 (decoders.inflate on the CPU); without it that backend says so.
[ -f /usr/include/lz4.h ] || _need_apt+=(liblz4-dev)
# Optional video: FFmpeg (readers.video, decoders.video); without it those operators say
# "built without FFmpeg".
[ -f /usr/include/x86_64-linux-gnu/libavformat/avformat.h ] || [ -f /usr/include/libavformat/avformat.h ] || _need_apt+=(libavformat-dev)
[ -f /usr/include/x86_64-linux-gnu/libavcodec/avcodec.h ] || [ -f /usr/include/libavcodec/avcodec.h ] || _need_apt+=(libavcodec-dev)
[ -f /usr/include/x86_64-linux-gnu/libswscale/swscale.h ] || [ -f /usr/include/libswscale/swscale.h ] || _need_apt+=(libswscale-dev)
if [ ${#_need_apt[@]} -gt 0 ]; then
  echo "Installing system packages: ${_need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then _sudo=""; else _sudo="sudo"; fi
  $_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -qq "${_need_apt[@]}" >/dev/null
fi
_need_pip=()
for _m in numpy:numpy pybind11:pybind11 scikit_build_core:scikit-build-core pytest:pytest \
          PIL:pillow cv2:opencv-python-headless scipy:scipy ninja:ninja cmake:cmake \
          soundfile:soundfile librosa:librosa av:av==18.1.0; do
  python3 -c "import ${_m%%:*}" 2>/dev/null || _need_pip+=("${_m##*:}")
done
if [ ${#_need_pip[@]} -gt 0 ]; then
  echo "Installing Python packages: ${_need_pip[*]}"
  python3 -m pip install -q "${_need_pip[@]}"
fi
unset _need_apt _need_pip _m _sudo
# The tests also need the frameworks the plugins serve (CPU builds are enough; torch 2.14.1
# matches the torchvision the benchmarks use). Only scripts/test.sh asks for them.
if [ "${STOKER_TEST_DEPS:-0}" = 1 ]; then
  _need_pip=()
  python3 -c "import torch" 2>/dev/null || _need_pip+=("torch==2.14.1")
  python3 -c "import jax" 2>/dev/null || _need_pip+=("jax==0.10.2" "jaxlib==0.10.2")
  python3 -c "import tensorflow" 2>/dev/null || _need_pip+=("tensorflow-cpu==2.21.0")
  python3 -c "import paddle" 2>/dev/null || _need_pip+=("paddlepaddle==3.3.1")  # CPU build
  python3 -c "import lmdb" 2>/dev/null || _need_pip+=("lmdb")  # writes the LMDB test fixtures
  python3 -c "import tifffile" 2>/dev/null || _need_pip+=("tifffile")  # writes tiled/planar TIFF fixtures
  python3 -c "import astropy" 2>/dev/null || _need_pip+=("astropy")  # writes the FITS test files
  python3 -c "import lz4" 2>/dev/null || _need_pip+=("lz4")  # compresses decoders.inflate's test data
  python3 -c "import pycocotools" 2>/dev/null || _need_pip+=("pycocotools")  # readers.coco masks reference
  python3 -c "import numba" 2>/dev/null || _need_pip+=("numba")  # compiles numba_function's run_fn/setup_fn
  python3 -c "import mypy" 2>/dev/null || _need_pip+=("mypy")  # checks the .pyi stubs (test_stubs.py)
  python3 -c "import mkdocs" 2>/dev/null || _need_pip+=("mkdocs")  # builds the docs site (test_docs.py)
  # Remote data (test_remote_data.py): fsspec, its S3 and HTTP file systems, and moto's S3
  # server on loopback.
  python3 -c "import fsspec, s3fs, aiohttp" 2>/dev/null || _need_pip+=("fsspec" "s3fs" "aiohttp")
  python3 -c "import moto.server, flask" 2>/dev/null || _need_pip+=("moto[server]")
  # DALI 2.4 itself, the reference the DALI-semantics tests compare against (its CPU operators
  # run without a GPU).
  python3 -c "import nvidia.dali" 2>/dev/null || _need_pip+=("nvidia-dali-cuda130==2.4.0")
  if [ ${#_need_pip[@]} -gt 0 ]; then
    echo "Installing test frameworks: ${_need_pip[*]}"
    python3 -m pip install -q "${_need_pip[@]}" || echo "warning: could not install ${_need_pip[*]}; their tests will skip"
  fi
  unset _need_pip
fi
