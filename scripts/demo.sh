#!/usr/bin/env bash
# stoker's main job on a fresh machine: installs what it needs, builds and installs stoker,
# makes a small dataset when you give none, runs a training-style pipeline, prints images/s and
# writes a PNG grid of the first batch to out/first_batch.png.
# Usage: bash scripts/demo.sh [IMAGE_FOLDER]   (one sub-folder of images per class)
# Where dist/ holds a wheel for this Python (scripts/build_wheel.sh), it installs that wheel
# with pip alone (no compiler, no apt) instead of building.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
wheel=$(ls -t dist/stoker-*-"$py"-"$py"-*manylinux*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$wheel" ]; then
  echo "== Installing stoker from $wheel (made by scripts/build_wheel.sh)"
  { python3 -m pip install -q --force-reinstall --no-deps "$wheel" &&
    python3 -m pip install -q "numpy>=1.22" pillow; } 2>&1 | grep -v "^\s*$" | tail -n 20 || true
else
  source scripts/setup_deps.sh
  # The CUDA kernels take most of the build's time: compiled where there is an NVIDIA GPU, or
  # when STOKER_CUDA=ON asks for them.
  cuda=${STOKER_CUDA:-}
  if [ -z "$cuda" ]; then
    if [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; else cuda=OFF; fi
  fi
  echo "== Building and installing stoker (pip install .; CUDA: $cuda$([ "$cuda" = OFF ] && echo ", no NVIDIA GPU here; STOKER_CUDA=ON builds the GPU operators too"))"
  # --no-build-isolation: the build tools setup_deps.sh installed, not fresh copies from PyPI.
  python3 -m pip install -q --no-build-isolation -C cmake.define.STOKER_CUDA="$cuda" . 2>&1 |
    grep -v "^\s*$" | tail -n 20 || true
fi
python3 -c "import stoker" 2>/dev/null || { echo "stoker did not install; run 'python3 -m pip install .' to see why"; exit 1; }

DATA=${1:-}
if [ -z "$DATA" ]; then
  DATA=out/demo_data
  if [ ! -d "$DATA" ]; then
    echo "== No image folder given: making a small dataset in $DATA"
    python3 bench/make_dataset.py "$DATA" 256 --seed 0
  fi
fi
echo "== Running the pipeline"
# Run from outside the source tree so that the installed package is the one imported.
ROOT=$PWD
(cd /tmp && python3 -m stoker demo --data "$(cd "$ROOT" && realpath "$DATA")" --out "$ROOT/out" --batches 10)
