"""The documentation site (docs/): it builds with `mkdocs build --strict` (no warnings), its API
reference covers every operator, and every ```python block of the guide pages runs.

Code blocks: the blocks of one page run in order, as one script, in a fresh Python process
whose working directory is an empty temporary folder (a block may use what the blocks above it
on the same page defined). The examples find their data through the environment variable
IMAGE_FOLDER, which this test points at the shared test data's imagenet-sample/ (one folder
per class). A block that is shown but not run is preceded by `<!-- skip: REASON -->`; the
test lists those skips and keeps them few.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, TESTDATA

DOCS = ROOT / "docs"
IMAGE_FOLDER = TESTDATA / "imagenet-sample"
MAX_SKIPS = 6          # blocks shown but not run, over the whole guide
PAGE_TIMEOUT_S = 120

_FENCE = re.compile(r"^```(\S*)\s*$")
# Libraries a page shows stoker beside, which a machine may lack (CI installs no torchvision).
OPTIONAL_PEERS = {"torchvision", "torch", "jax", "tensorflow", "nvidia"}
_SKIP = re.compile(r"^<!--\s*skip:\s*(.*?)\s*-->$")


def _guide_pages():
    """Every page of the site written by hand: the .md files of docs/ but its README."""
    return sorted(p for p in DOCS.rglob("*.md") if p != DOCS / "README.md")


def _blocks(path):
    """[(line number, language, code, skip reason or None)] of a page's fenced code blocks."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        assert j < len(lines), f"{path}:{start + 1}: a code block that is never closed"
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        skip = _SKIP.match(lines[k].strip()) if k >= 0 else None
        out.append((start + 1, lang, "\n".join(lines[start + 1:j]) + "\n",
                    skip.group(1) if skip else None))
        i = j + 1
    return out


def _python_pages():
    return [p for p in _guide_pages() if any(lang == "python" for _, lang, _, _ in _blocks(p))]


def _env(pythonpath=None):
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath)] + (
            [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def test_skipped_blocks_are_few_and_say_why():
    skips = [(p.relative_to(ROOT), n, reason) for p in _guide_pages()
             for n, lang, _, reason in _blocks(p) if lang == "python" and reason is not None]
    for where, n, reason in skips:
        assert reason, f"{where}:{n}: a skip marker must give its reason"
    assert len(skips) <= MAX_SKIPS, f"{len(skips)} python blocks are not run: {skips}"
    # Every python block is fenced as ```python, so that none escapes the test unnoticed.
    for p in _guide_pages():
        for n, lang, code, _ in _blocks(p):
            assert lang in ("python", "bash", "text", "yaml", "c", "cpp"), \
                f"{p.relative_to(ROOT)}:{n}: code block in {lang or 'no language'}; give it one " \
                "of python, bash, text, yaml, c, cpp"


def test_torchrun_example_is_the_one_the_plugin_tests_run():
    # The guide shows the script test_plugin_pytorch.py launches under torchrun; its skip
    # marker says so, which holds only while the two are the same.
    readme = (ROOT / "python" / "stoker" / "plugin" / "README.md").read_text()
    tested = readme.split("<!-- torchrun-example", 1)[1].split("```python\n", 1)[1]
    tested = tested.split("```", 1)[0]
    shown = [code for _, lang, code, skip in _blocks(DOCS / "guide" / "sharding.md")
             if lang == "python" and skip and "torchrun" in skip]
    assert len(shown) == 1
    assert shown[0] == tested, \
        "docs/guide/sharding.md's torchrun script differs from python/stoker/plugin/README.md's"


_RUNNER = textwrap.dedent("""
    import sys, traceback
    blocks = {blocks!r}
    namespace = {{"__name__": "__main__"}}
    for line, code in blocks:
        try:
            exec(compile(code, "{page}:" + str(line), "exec"), namespace)
        except SystemExit as e:
            if e.code not in (None, 0):
                raise
        except BaseException:
            print(f"FAILED: the block at {page}:{{line}}", file=sys.stderr)
            traceback.print_exc()
            sys.exit(1)
    print("ran", len(blocks), "blocks")
""")


@pytest.mark.parametrize("page", _python_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_code_blocks_run(page, tmp_path):
    if not IMAGE_FOLDER.is_dir():
        pytest.skip(f"shared test data not found at {IMAGE_FOLDER}")
    blocks = [(n, code) for n, lang, code, skip in _blocks(page)
              if lang == "python" and skip is None]
    if not blocks:
        pytest.skip("every python block of this page is marked skip")
    script = tmp_path / "page_blocks.py"
    rel = page.relative_to(ROOT)
    script.write_text(_RUNNER.format(blocks=blocks, page=rel))
    work = tmp_path / "cwd"
    work.mkdir()
    env = _env()
    env["IMAGE_FOLDER"] = str(IMAGE_FOLDER)
    r = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True,
                       text=True, timeout=PAGE_TIMEOUT_S)
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", r.stderr)
    if r.returncode and missing and missing.group(1).split(".")[0] in OPTIONAL_PEERS:
        pytest.skip(f"{rel} shows {missing.group(1)}, which is not installed here")
    assert r.returncode == 0, f"{rel}: a code block failed\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}"


# ---------------------------------------------------------------- the site

def _stoker_with_docs(tmp_path):
    """A PYTHONPATH entry under which `python -m stoker docs` exists, or None for the one given.
    A build made before the generator existed gets this tree's Python modules beside its
    compiled core, as scripts/test.sh puts them together."""
    probe = subprocess.run([sys.executable, "-c", "import stoker._docs"], env=_env(),
                           capture_output=True, text=True)
    if probe.returncode == 0:
        return None
    import stoker
    pkg = tmp_path / "pkg" / "stoker"
    shutil.copytree(ROOT / "python" / "stoker", pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for so in pathlib.Path(stoker.__file__).parent.glob("_C*.so"):
        os.symlink(so, pkg / so.name)
    return pkg.parent


def _nav_pages():
    text = (DOCS / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:"):]
    return re.findall(r":\s*(\S+\.md)\s*$", nav, re.M)


def test_site_builds_without_warnings(tmp_path):
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs is not installed (pip install mkdocs; scripts/setup_deps.sh "
                    "installs it with STOKER_TEST_DEPS=1)")
    env = _env(_stoker_with_docs(tmp_path))
    out = tmp_path / "site_build"
    r = subprocess.run(["bash", str(DOCS / "build.sh"), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    log = r.stdout + r.stderr
    assert r.returncode == 0, f"docs/build.sh failed:\n{log}"
    assert "WARNING" not in log, log
    site = out / "site"
    assert (site / "index.html").is_file() and (site / "reference" / "fn.html").is_file()

    # Every page, hand-written or generated, is in the navigation, and the nav names no page
    # that is not there.
    src = out / "src"
    pages = sorted(str(p.relative_to(src)) for p in src.rglob("*.md"))
    assert sorted(_nav_pages()) == pages, (
        "docs/mkdocs.yml's nav and the pages differ; a new page (or a new operator namespace "
        f"in the reference) needs its nav entry.\nnav: {sorted(_nav_pages())}\npages: {pages}")

    # The reference has a section for every operator, with its DALI name line.
    from stoker._schema import SCHEMAS, is_internal
    reference = "\n".join(p.read_text() for p in (src / "reference").glob("fn*.md"))
    headings = set(re.findall(r"^## fn\.(\S+)$", reference, re.M))
    public = {n for n in SCHEMAS if not is_internal(n)}
    assert headings == public, sorted(headings ^ public)
    assert reference.count("- **DALI 2.4.0:**") == len(public)
