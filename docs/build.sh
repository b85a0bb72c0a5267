#!/usr/bin/env bash
# Builds the documentation site: the guide pages of docs/ and the API reference that
# `python -m stoker docs` writes from the operator schemas, with `mkdocs build --strict` (any
# warning fails the build).
#
#   PYTHONPATH=build/dev/python bash docs/build.sh [OUT]     # default OUT: build/docs
#
# Needs stoker importable (a build: scripts/test.sh puts one in build/dev/python) and MkDocs
# (`pip install mkdocs`). OUT/src is the staging folder MkDocs reads, OUT/site the site
# (open OUT/site/index.html).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-build/docs}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SRC="$OUT/src"

python3 -c "import stoker._docs" 2>/dev/null || {
  echo "docs/build.sh: cannot import stoker (or it predates \`python -m stoker docs\`); build it" \
       "and set PYTHONPATH, e.g. PYTHONPATH=build/dev/python" >&2; exit 1; }
python3 -c "import mkdocs" 2>/dev/null || {
  echo "docs/build.sh: MkDocs is not installed: pip install mkdocs" >&2; exit 1; }

rm -rf "$SRC"
mkdir -p "$SRC"
# Every page of docs/ (docs/README.md describes the folder; it is not a page of the site).
cp -r docs/. "$SRC/"
rm -f "$SRC/README.md" "$SRC/mkdocs.yml" "$SRC/build.sh"
python3 -m stoker docs --out "$SRC/reference" > /dev/null
# (Not --quiet: it hides the warnings from --strict, which then passes them.)
STOKER_DOCS_SRC="$SRC" python3 -m mkdocs build --strict -f docs/mkdocs.yml -d "$OUT/site"
echo "docs/build.sh: site in $OUT/site (open $OUT/site/index.html)"
