#!/usr/bin/env bash
# Packs what the GPU machine lacks for scripts/gpu_check.sh (it cannot download, and at most
# 64 MiB travels with one device call) into the git-ignored .gpu_deps/:
#   .gpu_deps/root.tar.xz   googletest, the DLPack header, libsndfile and libsoxr with the codecs
#                           they load, FFmpeg's libraries with their run-time closure (~51 MB)
#   .gpu_deps/testdata/     the shared test files the GPU tests read (JPEGs, edge cases, a few
#                           PNGs, orientation, video, audio; ~44 MB)
#   .gpu_deps/whl/          PyAV's wheel for the machine's Python 3.12 (the video tests' reference)
#   .gpu_deps/lz4whl/       python-lz4's wheel (decoders.inflate's GPU test; 1.4 MB: it can go
#                           with the test data: `pip install --no-index .gpu_deps/lz4whl/*.whl`)
# Each goes in a call of its own: `tar xJf .gpu_deps/root.tar.xz -C .gpu_deps` there first, then
# gpu_check.sh (the build stays on the machine while it is warm).
#   bash scripts/gpu_deps.sh [SHARED_TESTDATA]
set -euo pipefail
cd "$(dirname "$0")/.."
TESTDATA=${1:-../shared/testdata}
out=.gpu_deps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

echo "== Debian packages (apt-get download, unpacked with dpkg -x)"
pkgs=(libdlpack-dev libgtest-dev libsndfile1 libsndfile1-dev libsoxr0 libsoxr-dev libflac12
      libvorbis0a libvorbisenc2 libogg0 libopus0 libmpg123-0 libmp3lame0
      libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev)
# FFmpeg's libraries load many others; take each one's run-time closure as installed here
# (setup_deps.sh installs FFmpeg's -dev packages), leaving out what every Linux has.
for lib in libavformat libavcodec libavutil libswscale libswresample; do
  so=$(ls /usr/lib/x86_64-linux-gnu/$lib.so.[0-9]* | head -n1)
  pkgs+=("$(dpkg -S "$(readlink -f "$so")" | head -n1 | cut -d: -f1)")  # the library's own
  while read -r dep; do
    case "$(basename "$dep")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++*|libgcc_s*|libz.so*) continue ;;
    esac
    pkg=$(dpkg -S "$(readlink -f "$dep")" 2>/dev/null | head -n1 | cut -d: -f1) || true
    [ -n "$pkg" ] && pkgs+=("$pkg")
  done < <(ldd "$so" | awk '/=> \//{print $3}')
done
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
( cd "$work" && apt-get download -q "${pkgs[@]}" >/dev/null )
mkdir -p "$work/root"
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/root"; done
lib=$work/root/usr/lib/x86_64-linux-gnu
# The -dev packages' libav*.so links point at the run-time packages' names; keep them pointing at
# the copies that travel. googletest: the static libraries and CMake files are all it needs.
for l in "$lib"/libav*.so "$lib"/libsw*.so; do
  target=$(ls "$l".[0-9]* 2>/dev/null | head -n1) && ln -sf "$(basename "$target")" "$l"
done
rm -rf "$work/root/usr/share/doc" "$work/root/usr/share/man" "$work/root/usr/src" "$lib/mfx" \
       "$lib/sndfile/tests"
find "$lib" -name '*.a' ! -name 'libgtest*' ! -name 'libgmock*' -delete
tar -C "$work" -cf - root | xz -6 -T2 > "$out/root.tar.xz"

echo "== test files"
rm -rf "$out/testdata"; mkdir -p "$out/testdata/images"
cp -r "$TESTDATA/images/jpeg" "$TESTDATA/images/jpeg_edge" "$TESTDATA/images/orientation" "$out/testdata/images/"
cp -r "$TESTDATA/video" "$TESTDATA/audio" "$out/testdata/"
mkdir -p "$out/testdata/images/png/0"
find "$TESTDATA/images/png" -name '*.png' | sort | head -n 6 | xargs -r cp -t "$out/testdata/images/png/0/"
cp -r "$TESTDATA/fuzzing" "$out/testdata/"

echo "== PyAV for Python 3.12"
rm -rf "$out/whl"; mkdir -p "$out/whl"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$out/whl" "av==18.1.0"
echo "== python-lz4 for Python 3.12 (decoders.inflate's GPU test compresses its data; small"
echo "   enough to travel with the test data)"
rm -rf "$out/lz4whl"; mkdir -p "$out/lz4whl"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$out/lz4whl" lz4
du -sh "$out/root.tar.xz" "$out/testdata" "$out/whl" "$out/lz4whl"
