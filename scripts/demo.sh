#!/usr/bin/env bash
# stoker's main job on a fresh machine: installs what it needs, builds and installs stoker,
# makes a small dataset when you give none, runs a training-style pipeline, prints images/s and
# writes a PNG grid of the first batch to out/first_batch.png.
# Usage: bash scripts/demo.sh [IMAGE_FOLDER]   (one sub-folder of images per class)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_deps.sh

echo "== Building and installing stoker (pip install .)"
python3 -m pip install -q . 2>&1 | grep -v "^\s*$" | tail -n 20 || true
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
