"""Every Python example of the documentation (README.md and the docs site's pages), run as
written against the real shared dumps.

Each page's ```python blocks run in order in one namespace (a later block may use what an
earlier one made), in a directory where the file names the examples use are real dumps of
../shared/data (DUMPS: `app.hprof` an Android app's, `leak_service_binder.hprof` LeakCanary's,
`before.hprof`/`after.hprof` and `a.hprof`/`b.hprof` two dumps, also in `dumps/` and
`uploads/`), `release.hprof` a release build's dump and `mapping.txt` its ProGuard mapping,
`app.jar` an obfuscated app's jar and `names.txt` a list of its names (for BMD's
hashed strings).  Files an example writes land there too, and later examples read them back.
As a doctest setup would, the namespace starts with `hprofkit` imported and `__file__` naming a
file of that directory (the heap-test suite of docs/guides/testing.md builds paths from it;
tests/test_readme_testing.py runs that suite under pytest).  Excerpts of the package's own
source are not examples: they are shown as ```{code-block} python with a caption naming their
file.  .ci/run runs this file beside the Sphinx build (-W)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import hprofkit

from conftest import DATA, ROOT, dump_path

# Names the examples use -> the shared dump each one is.
DUMPS = {
    "app.hprof": "platform_tools_base__dialer.android-hprof",
    "leak_service_binder.hprof": "leakcanary__leak_service_binder.hprof",
    "before.hprof": "platform_tools_base__dialer.android-hprof",
    "after.hprof": "leakcanary__leak_service_binder.hprof",
    "a.hprof": "platform_tools_base__dialer.android-hprof",
    "b.hprof": "leakcanary__leak_service_binder.hprof",
}

FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def pages() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def blocks(page: Path) -> list[tuple[int, str]]:
    """(line, code) of each python block of the page."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in FENCE.finditer(text)]


PAGES = [p for p in pages() if blocks(p)]


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    for name, shared in DUMPS.items():
        shutil.copyfile(dump_path(shared), tmp_path / name)
    for folder in ("dumps", "uploads"):
        (tmp_path / folder).mkdir()
        for name in ("before.hprof", "after.hprof"):
            shutil.copyfile(tmp_path / name, tmp_path / folder / name)
    shutil.copyfile(DATA / "obfuscated" / "heapgen-obf.jar", tmp_path / "app.jar")
    # A release build's dump (gzip'd, as uploads are) and the mapping.txt its build wrote.
    shutil.copyfile(DATA / "obfuscated" / "heapgen_s5_16mb_obf.hprof.gz", tmp_path / "release.hprof")
    shutil.copyfile(DATA / "obfuscated" / "mapping.txt", tmp_path / "mapping.txt")
    (tmp_path / "names.txt").write_text("a\nb\nc\nHeapGen\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_examples_run_as_written(page, workdir):
    namespace: dict[str, object] = {"__name__": "__docs__", "__file__": str(workdir / "example.py"),
                                    "hprofkit": hprofkit}
    for line, code in blocks(page):
        try:
            exec(compile(code, f"{page.relative_to(ROOT)}:{line}", "exec"), namespace)
        except Exception as error:
            raise AssertionError(f"the example at {page.relative_to(ROOT)} line {line} fails: {error!r}") from error


def test_readme_is_a_newcomers_page():
    """The README is what a newcomer needs (issue #23): its two set-up commands first (.ci/run
    runs the second), a tour, links; at most 200 lines. The rest lives in docs/."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move sections into docs/guides/"
    assert lines[:5] == ["# hprofkit", "", "```", "pip install . && python -m hprofkit demo",
                         "pip install '.[test]' && python -m pytest -q"]
