#!/usr/bin/env bash
# Runs all of stoker's tests: builds the C++ core with its gtests and the Python module in one
# CMake build (both cores, ccache), runs the gtests, then pytest against that build.
# Usage: bash scripts/test.sh            (what CI runs)
#        STOKER_TEST_ARGS="tests/python/test_resize.py -k linear" bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
STOKER_TEST_DEPS=1 source scripts/setup_deps.sh

BUILD=${STOKER_BUILD_DIR:-build/dev}
JOBS=${STOKER_JOBS:-$(nproc)}
EXTRA=()
# Where CUDA is, check stoker's nvJPEG declarations against the real header (from the
# nvidia-nvjpeg wheel when the toolkit has none; stoker itself never needs the header).
if command -v nvcc >/dev/null && [ "${STOKER_CUDA:-AUTO}" != OFF ]; then
  NVJ=build/third_party/nvjpeg
  if [ ! -f "$(dirname "$(dirname "$(command -v nvcc)")")/include/nvjpeg.h" ]; then
    [ -f "$NVJ/include/nvjpeg.h" ] || bash scripts/fetch_nvjpeg_headers.sh "$NVJ" >/dev/null 2>&1 || true
    if [ -f "$NVJ/include/nvjpeg.h" ]; then EXTRA+=("-DNVJPEG_INCLUDE_DIR=$PWD/$NVJ/include"); fi
  fi
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_BUILD_TESTS=ON \
      -DPython_EXECUTABLE="$(command -v python3)" -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" \
      -DSTOKER_CUDA="${STOKER_CUDA:-AUTO}" "${EXTRA[@]}" ${STOKER_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j "$JOBS"
# The Python package as it would install: the sources plus the freshly built module, in the
# build folder (so that several builds can coexist).
rm -rf "$BUILD/python" && mkdir -p "$BUILD/python" && cp -r python/stoker "$BUILD/python/"
cp "$BUILD"/_C*.so "$BUILD/python/stoker/"

echo "== C++ tests (gtest)"
"$BUILD"/stoker_tests --gtest_brief=1 ${STOKER_GTEST_ARGS:-}

echo "== Python tests (pytest)"
PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -p no:cacheprovider ${STOKER_TEST_ARGS:-tests/python}
