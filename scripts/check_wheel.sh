#!/usr/bin/env bash
# Installs the newest wheel in dist/ (scripts/build_wheel.sh) into a fresh virtual environment as
# an ordinary user would: pip alone, as a user who is not root (nobody, when this runs as root),
# no compiler on the PATH. Then, from outside the source tree, imports stoker and runs two
# pipelines whose results it checks: a JPEG decoded and resized (a real photo from the shared
# test data, where there is one) and crop_mirror_normalize against NumPy. Prints how long the
# install took (the bar: under a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
whl=$(ls -t dist/stoker-*manylinux*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || { echo "check_wheel: no manylinux wheel in dist/; run scripts/build_wheel.sh" >&2; exit 1; }
testdata=${STOKER_TESTDATA:-$(cd .. && pwd)/shared/testdata}
photo=$(ls "$testdata"/imagenet-sample/*/*.jpg 2>/dev/null | head -n 1 || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$whl" "$work/"
[ -n "$photo" ] && cp "$photo" "$work/photo.jpg"
cat > "$work/check.py" <<'PY'
import os, sys, numpy as np
import stoker
from stoker import fn, types
here = os.path.dirname(os.path.abspath(__file__))
assert stoker.__file__.startswith(os.path.join(here, "venv")), stoker.__file__
x = np.arange(2 * 6 * 8 * 3, dtype=np.uint8).reshape(2, 6, 8, 3)
pipe = stoker.Pipeline(batch_size=2, num_threads=2, device_id=None, seed=0)
with pipe:
    images = fn.external_source(source=lambda: list(x), batch=True, layout="HWC")
    pipe.set_outputs(fn.crop_mirror_normalize(images, crop=(4, 4), mean=[10, 20, 30],
                                              std=[2, 4, 8], output_layout="CHW",
                                              dtype=types.FLOAT))
got = np.stack([np.asarray(t) for t in pipe.run()[0]])
want = ((x[:, 1:5, 2:6, :].astype(np.float32) - [10, 20, 30]) / [2, 4, 8]).transpose(0, 3, 1, 2)
np.testing.assert_allclose(got, want, rtol=1e-6)
photo = os.path.join(here, "photo.jpg")
if os.path.exists(photo):
    pipe = stoker.Pipeline(batch_size=1, num_threads=1, device_id=None, seed=0)
    with pipe:
        jpegs, _ = fn.readers.file(files=[photo])
        pipe.set_outputs(fn.resize(fn.decoders.image(jpegs, device="cpu"), size=[224, 224]))
    out = np.asarray(pipe.run()[0][0])
    assert out.shape == (224, 224, 3) and out.dtype == np.uint8 and 10 < out.mean() < 245, out.shape
    print("decoded and resized", os.path.basename(photo), out.shape)
print("stoker", stoker.__version__, "from the wheel: pipelines ran and matched NumPy")
PY
as_user=()
if [ "$(id -u)" = 0 ]; then
  chown -R nobody "$work"
  as_user=(runuser -u nobody --)
fi
# A Python of the wheel's version that this user may run (python3 may be root's own, a pyenv
# under /root, say).
tag=$(basename "$whl" | cut -d- -f3)
python=
for p in "$(python3 -c 'import sys; print(sys.executable)')" /usr/bin/python3 /usr/local/bin/python3; do
  if [ -x "$p" ] && "${as_user[@]}" "$p" -c "import sys, venv; sys.exit(f'cp{sys.version_info[0]}{sys.version_info[1]}' != '$tag')" 2>/dev/null; then
    python=$p
    break
  fi
done
[ -n "$python" ] || { echo "check_wheel: no Python of the wheel's version ($tag) that ${as_user[*]:-this user} may run" >&2; exit 1; }
# No compiler on the PATH: nothing may be built from source.
path=$(mktemp -d)
chmod 755 "$path"
ln -s "$python" "$path/python3"
start=$(date +%s)
"${as_user[@]}" env PATH="$path" HOME="$work" PIP_NO_CACHE_DIR=1 python3 -m venv "$work/venv"
"${as_user[@]}" env PATH="$path" HOME="$work" PIP_NO_CACHE_DIR=1 \
  "$work/venv/bin/python" -m pip install -q --only-binary=:all: "$work/$(basename "$whl")"
echo "== $(basename "$whl") installed in a fresh virtual environment in $(( $(date +%s) - start )) s"
(cd "$work" && "${as_user[@]}" env PATH="$path" HOME="$work" "$work/venv/bin/python" check.py)
rm -rf "$path"
