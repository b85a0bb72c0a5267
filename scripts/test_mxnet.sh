#!/usr/bin/env bash
# Runs the MXNet plugin's tests (tests/python/test_plugin_mxnet.py) against a stoker build.
# MXNet 1.9.1 needs NumPy < 1.24, which cannot sit beside the NumPy 2 the other tests use, so the
# tests run in a virtual environment of their own, made once and kept in build/mxvenv.
# Usage: bash scripts/test_mxnet.sh                       (the build of scripts/test.sh)
#        STOKER_BUILD_DIR=build/mine bash scripts/test_mxnet.sh -k gluon
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${STOKER_BUILD_DIR:-build/dev}
case "$BUILD" in /*) PKG="$BUILD/python" ;; *) PKG="$PWD/$BUILD/python" ;; esac
VENV=${STOKER_MXNET_VENV:-build/mxvenv}
# NumPy 1.23 is the last with the np.bool alias MXNet 1.9 still uses.
REQS=("numpy<1.24" "mxnet==1.9.1" "pytest")

if ! ls "$PKG"/stoker/_C*.so >/dev/null 2>&1; then
  echo "test_mxnet.sh: no stoker build in $PKG (its _C module is missing). Build one" \
       "first: STOKER_BUILD_DIR=$BUILD bash scripts/test.sh (or set STOKER_BUILD_DIR)." >&2
  exit 2
fi

# The venv must be of the Python the build's _C module was made for.
PY=${STOKER_PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.stoker-reqs" 2>/dev/null)" != "${REQS[*]}" ]; then
  echo "== Making $VENV (${REQS[*]})"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  if ! "$VENV/bin/python" -m pip install -q "${REQS[@]}"; then
    echo "test_mxnet.sh: could not install ${REQS[*]} for $("$PY" --version); MXNet 1.9.1 and" \
         "NumPy < 1.24 need Python <= 3.11." >&2
    rm -rf "$VENV"
    exit 2
  fi
  echo "${REQS[*]}" > "$VENV/.stoker-reqs"
fi

echo "== MXNet plugin tests (pytest, $VENV)"
PYTHONPATH="$PKG" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  tests/python/test_plugin_mxnet.py "$@"
