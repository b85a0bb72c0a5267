#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) into build/fuzz and runs each for SECONDS
# (the image harness, which covers every image format, for twice that) from seed corpora made
# from ../shared/testdata, as many at once as there are cores. Fails on any crash, leak, UB
# report, timeout or out-of-memory, and prints the reproducer's path and how to replay and
# minimise it.
# Usage: bash fuzz/run.sh [SECONDS]                 (default 60; CI runs it)
#        STOKER_FUZZ_TARGETS="tar npy" bash fuzz/run.sh 300
#        STOKER_FUZZ_FORMATS=tiff STOKER_FUZZ_TARGETS=image bash fuzz/run.sh 600
#        bash fuzz/run.sh 0                          (build and replay the regressions only)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
BUILD=${STOKER_FUZZ_BUILD_DIR:-build/fuzz}
TESTDATA=${STOKER_TESTDATA:-$PWD/../shared/testdata}
TARGETS=${STOKER_FUZZ_TARGETS:-image file_list sample_order tfrecord recordio tar caffe npy fits lmdb dali_format}
JOBS=${STOKER_JOBS:-$(nproc)}

# clang with libFuzzer's runtime (Debian: clang, libclang-rt-dev; llvm for the symbolizer).
if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "Installing clang and libFuzzer's runtime"
  if [ "$(id -u)" = 0 ]; then _sudo=""; else _sudo="sudo"; fi
  $_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -qq clang libclang-rt-dev llvm >/dev/null
fi
# liblmdb for lmdb_fuzzer, and the Python lmdb package that writes its seed databases.
if [ ! -f /usr/include/lmdb.h ]; then
  echo "Installing liblmdb"
  if [ "$(id -u)" = 0 ]; then _sudo=""; else _sudo="sudo"; fi
  $_sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -qq liblmdb-dev >/dev/null
fi
python3 -c "import lmdb" 2>/dev/null || python3 -m pip install -q lmdb
if command -v llvm-symbolizer >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer); fi
if [ ! -d "$TESTDATA" ]; then echo "fuzz: shared test data not found at $TESTDATA" >&2; exit 1; fi

echo "== fuzz: build ($BUILD)"
start=$(date +%s)
CC=clang CXX=clang++ cmake -S fuzz -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" -j "$JOBS" | grep -v -E "^\[|^ninja: no work to do" || true
cmake --build "$BUILD" -j "$JOBS" >/dev/null  # fail here if the build failed
echo "   built in $(( $(date +%s) - start ))s"

rm -rf "$BUILD/seeds" "$BUILD/artifacts" "$BUILD/logs"
mkdir -p "$BUILD/artifacts" "$BUILD/logs"
python3 fuzz/make_seeds.py "$TESTDATA" "$BUILD/seeds"

# UBSan: stop at the first report (also compiled in with -fno-sanitize-recover).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}

run_one() {  # target seconds
  local t=$1 secs=$2 bin="$BUILD/${1}_fuzzer" corpus="$BUILD/corpus/$1"  # corpus: grows across local runs
  mkdir -p "$corpus"
  local args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$((256 * 1024 + 64))
              -print_final_stats=1 -artifact_prefix="$PWD/$BUILD/artifacts/$t-")
  [ -f "fuzz/$t.dict" ] && args+=(-dict="fuzz/$t.dict")
  if [ "$secs" = 0 ]; then args=(-runs=0 -artifact_prefix="$PWD/$BUILD/artifacts/$t-"); fi
  local s=$(date +%s) rc=0
  "$bin" "${args[@]}" "$corpus" "$BUILD/seeds/$t" >"$BUILD/logs/$t.log" 2>&1 || rc=$?
  echo "$rc $(( $(date +%s) - s ))" >"$BUILD/logs/$t.rc"
}

echo "== fuzz: ${SECS}s each (image: $((2 * SECS))s), $JOBS at a time: $TARGETS"
for t in $TARGETS; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  secs=$SECS
  [ "$t" = image ] && secs=$((2 * SECS))
  run_one "$t" "$secs" &
done
wait

status=0
for t in $TARGETS; do
  read -r rc took <"$BUILD/logs/$t.rc"
  if [ "$rc" = 0 ]; then
    echo "   $t: ok in ${took}s: $(grep -E '^#[0-9]+.*(DONE|INITED)' "$BUILD/logs/$t.log" | tail -1)"
    continue
  fi
  status=1
  bin="$BUILD/${t}_fuzzer"
  echo "   $t: FAILED after ${took}s; the report ends with"
  grep -E "ERROR: |FINDING|runtime error|SUMMARY|Test unit written|==[0-9]+==" "$BUILD/logs/$t.log" | head -20 | sed 's/^/   | /'
  for a in "$BUILD"/artifacts/"$t"-*; do
    [ -e "$a" ] || continue
    echo "   reproducer: $a"
    echo "     replay:   $bin $a"
    echo "     minimise: $bin -minimize_crash=1 -runs=20000 -artifact_prefix=$BUILD/artifacts/min- $a"
  done
  echo "   full log: $BUILD/logs/$t.log"
done
exit $status
