#!/usr/bin/env bash
# Puts nvjpeg.h from the nvidia-nvjpeg wheel (PyPI) into a folder, for building the nvJPEG ABI
# test (tests/cpp/cuda/nvjpeg_abi_test.cc) where the CUDA toolkit has no nvJPEG. stoker itself
# never needs this header: it declares what it uses and loads libnvjpeg at run time.
#
#   scripts/fetch_nvjpeg_headers.sh [DEST]     (default DEST: build/third_party/nvjpeg)
#   cmake ... -DNVJPEG_INCLUDE_DIR=DEST/include
#
# NVJPEG_WHEEL picks the wheel: "nvidia-nvjpeg==13.*" (CUDA 13, the default) or
# "nvidia-nvjpeg-cu12" (CUDA 12). Both keep the header at nvidia/*/include/nvjpeg.h.
set -euo pipefail
dest="${1:-build/third_party/nvjpeg}"
wheel_spec="${NVJPEG_WHEEL:-nvidia-nvjpeg==13.*}"
python="${PYTHON:-python3}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --dest "$tmp" "$wheel_spec"
mkdir -p "$dest/include"
"$python" - "$tmp" "$dest/include" <<'PY'
import glob, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
wheels = glob.glob(src + "/*.whl")
if len(wheels) != 1:
    sys.exit(f"expected one wheel in {src}, found {wheels}")
with zipfile.ZipFile(wheels[0]) as z:
    names = [n for n in z.namelist() if n.endswith("/include/nvjpeg.h")]
    if not names:
        sys.exit(f"{wheels[0]} has no include/nvjpeg.h")
    with open(out + "/nvjpeg.h", "wb") as f:
        f.write(z.read(names[0]))
    print(f"{wheels[0].rsplit('/', 1)[-1]}: {names[0]} -> {out}/nvjpeg.h")
PY
echo "configure with: -DNVJPEG_INCLUDE_DIR=$(cd "$dest/include" && pwd)"
