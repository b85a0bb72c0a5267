#!/usr/bin/env bash
# Runs several GPU training pipelines at once on the GPU machine (staged and not, engines on and
# off) for SECONDS, each under stackdump.c, so that a hang leaves every thread's native stack.
# Needs the build of scripts/gpu_check.sh (build/gpu). Logs: $OUT/hunt_*.log (stacks resolved).
#   bash scripts/debug/hang_hunt.sh SECONDS [IMAGE_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-240}
DIR=${2:-${STOKER_TESTDATA:-$PWD/.gpu_deps/testdata}/images/jpeg}
LOG=${OUT:-out/gpu}
mkdir -p "$LOG"
cc -O1 -g -shared -fPIC -pthread -o build/gpu/libstackdump.so scripts/debug/stackdump.c || exit 1
run() {  # run NAME [ENV=VALUE...] -- ARGS...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" PYTHONPATH="$PWD/build/gpu/python" LD_PRELOAD="$PWD/build/gpu/libstackdump.so" \
    python3 scripts/debug/staged_soak.py "$DIR" --seconds "$SECS" "$@" > "$LOG/hunt_$name.log" 2>&1
  local rc=$?
  if grep -q "^=== stackdump" "$LOG/hunt_$name.log"; then
    python3 scripts/debug/resolve_stack.py < "$LOG/hunt_$name.log" > "$LOG/hunt_${name}_stacks.log"
  fi
  echo "hunt $name: exit $rc, $(grep -c . "$LOG/hunt_$name.log") lines; last: $(tail -n 1 "$LOG/hunt_$name.log")"
}
run staged_b8 X=1 -- --staged --batch 8 &
run staged_b32_all X=1 -- --staged --batch 32 --files 0 &
run staged_b8_whole X=1 -- --staged --batch 8 --decoder image &
run staged_b8_nohw STOKER_NVJPEG_HARDWARE=0 -- --staged --batch 8 &
run unstaged_b8 X=1 -- --batch 8 &
wait
