#!/usr/bin/env bash
# The GPU machine's one-shot check: builds stoker with CUDA (all cores), runs the gtests (the
# CUDA and nvJPEG ones included), compute-sanitizer on the CUDA tests, the GPU pytest files, and
# optionally benchmarks; prints a short summary last and keeps full logs in $OUT (or out/gpu).
#
# That machine cannot download: googletest, the DLPack header, libsndfile, libsoxr and FFmpeg
# travel with the tree in .gpu_deps/root (scripts/gpu_deps.sh packs them on the dev machine, with
# the test files and PyAV's wheel, each small enough for a device call of its own).
#   bash scripts/gpu_check.sh            build + tests
#   STOKER_GPU_BENCH="args" bash ...     also run `bench/run.py args`
#   STOKER_GPU_SKIP_TESTS=1              build (and benchmark) only
set -uo pipefail
cd "$(dirname "$0")/.."
LOG=${OUT:-out/gpu}
mkdir -p "$LOG"
DEPS=$PWD/.gpu_deps/root
# Libraries that travel in .gpu_deps/root (libsndfile and libsoxr for audio, with what they need)
# are found there at run time too.
export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary=()
# The shared test data does not travel to that machine; a copy of its JPEGs rides in .gpu_deps.
export STOKER_TESTDATA=${STOKER_TESTDATA:-$PWD/.gpu_deps/testdata}
# A test still running after this long is taken for hung: its stacks go to the log and the run
# ends. Python's stacks by default; with STOKER_GPU_STACKDUMP=1, every thread's native stack
# (scripts/debug/stackdump.c preloaded into the pytest step; scripts/debug/hang_hunt.sh runs
# several pipelines at once under it).
export STOKER_HANG_DUMP_S=${STOKER_HANG_DUMP_S:-180}
step() {  # step NAME COMMAND...: runs it, logs it, records pass/fail
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$LOG/$name.log" 2>&1; then summary+=("PASS $name ($((SECONDS - t0)) s)")
  else summary+=("FAIL $name ($((SECONDS - t0)) s): see $name.log"); tail -n 30 "$LOG/$name.log"; fi
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$LOG/gpu.txt" 2>&1
# FFmpeg's pkg-config files name the system's include folder; its headers travel under $DEPS.
step configure cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_BUILD_TESTS=ON \
  -DSTOKER_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${STOKER_CUDA_ARCHS:-90-real}" -DCMAKE_PREFIX_PATH="$DEPS/usr" -DDLPACK_INCLUDE_DIR="$DEPS/usr/include" \
  -DCMAKE_CXX_FLAGS="-isystem $DEPS/usr/include/x86_64-linux-gnu" \
  -DGTest_DIR="$DEPS/usr/lib/x86_64-linux-gnu/cmake/GTest" \
  -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python3)" \
  -DSTOKER_TESTDATA="$STOKER_TESTDATA"
step build cmake --build build/gpu -j "$(nproc)"
STACKDUMP=
if [ -n "${STOKER_GPU_STACKDUMP:-}" ] &&
   cc -O1 -g -shared -fPIC -pthread -o build/gpu/libstackdump.so scripts/debug/stackdump.c; then
  STACKDUMP=$PWD/build/gpu/libstackdump.so
fi
rm -rf build/gpu/python && mkdir -p build/gpu/python && cp -r python/stoker build/gpu/python/ \
  && cp build/gpu/_C*.so build/gpu/python/stoker/
if [ -n "${STOKER_GPU_SKIP_TESTS:-}" ]; then  # build (and benchmark) only
  RUN_TESTS=
else
  RUN_TESTS=1
fi
[ -n "$RUN_TESTS" ] && step gtest_cuda build/gpu/stoker_tests --gtest_filter='Cuda*:Nvjpeg*'
GPU_PYTEST="tests/python/test_gpu_transfer.py tests/python/test_gpu_geometry.py tests/python/test_gpu_decoder.py"
GPU_PYTEST="$GPU_PYTEST tests/python/test_gpu_ops.py tests/python/test_gpu_pipeline.py tests/python/test_gpu_graph_ops.py"
GPU_PYTEST="$GPU_PYTEST tests/python/test_gpu_detection.py tests/python/test_gpu_filters.py tests/python/test_gpu_audio.py"
GPU_PYTEST="$GPU_PYTEST tests/python/test_gpu_augment.py tests/python/test_c_api.py tests/python/test_plugins.py"
GPU_PYTEST="$GPU_PYTEST tests/python/test_dali_format.py tests/python/test_video_gpu.py"
[ -n "$RUN_TESTS" ] && step pytest_gpu env PYTHONPATH="$PWD/build/gpu/python" LD_PRELOAD="$STACKDUMP" \
  python3 -m pytest -q -rs -p no:cacheprovider --capture=sys \
  $GPU_PYTEST tests/python/test_plugin_pytorch.py tests/python/test_plugin_jax.py \
  tests/python/test_pipeline.py tests/python/test_checkpoint.py ${STOKER_GPU_PYTEST:-}
if grep -q "^=== stackdump" "$LOG/pytest_gpu.log"; then  # a hang: name the frames
  python3 scripts/debug/resolve_stack.py < "$LOG/pytest_gpu.log" > "$LOG/pytest_gpu_stacks.log"
  summary+=("HANG pytest_gpu: stacks in pytest_gpu_stacks.log")
fi
if [ -n "$RUN_TESTS" ] && [ -z "${STOKER_GPU_SKIP_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
  # API errors are expected (the tests provoke out-of-memory and bad JPEGs); memory errors are not.
  step memcheck compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
    build/gpu/stoker_tests --gtest_filter='Cuda*:Nvjpeg*'
  step memcheck_python compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \
    env PYTHONPATH="$PWD/build/gpu/python" python3 -m pytest -q -p no:cacheprovider -x \
    tests/python/test_gpu_transfer.py tests/python/test_gpu_geometry.py tests/python/test_gpu_decoder.py \
    -k "not every_edge_case and not parities"
  step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 build/gpu/stoker_tests --gtest_filter='Cuda*:-CudaPool.ManyThreadsManyStreams'
  # The operators' kernels (resample, colour, warp, blur, ...) run from the Python tests.
  step racecheck_python compute-sanitizer --tool racecheck --error-exitcode 1 \
    env PYTHONPATH="$PWD/build/gpu/python" python3 -m pytest -q -p no:cacheprovider -x \
    tests/python/test_gpu_ops.py tests/python/test_gpu_geometry.py tests/python/test_gpu_graph_ops.py \
    tests/python/test_gpu_detection.py tests/python/test_gpu_augment.py
fi
if [ -n "${STOKER_GPU_BENCH:-}" ]; then
  # A PYTHONPATH already set (NVIDIA DALI unpacked beside the tree, for its rows) is kept.
  step bench env PYTHONPATH="$PWD/build/gpu/python${PYTHONPATH:+:$PYTHONPATH}" python3 bench/run.py $STOKER_GPU_BENCH
  tail -n 40 "$LOG/bench.log"
fi
echo "== $(cat "$LOG/gpu.txt")"
printf '%s\n' "${summary[@]}"
