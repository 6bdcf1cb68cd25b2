"""The "Heap regression tests" example of the docs (docs/guides/testing.md, once the README's),
run as written: its suite and its [tool.hprofkit] table, on copies of a real Android dump."""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pytest

from conftest import ROOT, dump_path

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

pytest_plugins = ["pytester"]


def readme_section() -> str:
    text = (ROOT / "docs" / "guides" / "testing.md").read_text()
    section = text[text.index("## Heap regression tests"):]
    end = section.find("\n## ", 1)
    return section if end < 0 else section[:end]


def readme_blocks() -> dict[str, str]:
    """The first python and toml blocks of the section."""
    section = readme_section()
    return {lang: re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1) for lang in ("python", "toml")}


def test_readme_suite_runs_as_written(pytester):
    blocks = readme_blocks()
    tests = pytester.mkdir("tests")
    dumps = tests / "dumps"
    dumps.mkdir()
    for name in ("before.hprof", "after.hprof"):
        shutil.copy(dump_path("platform_tools_base__dialer.android-hprof"), dumps / name)
    # Not test_heap.py: a module of that name is in this suite (pytester runs in-process).
    (tests / "test_app_heap.py").write_text(blocks["python"])
    pytester.makepyprojecttoml(blocks["toml"])

    first = pytester.runpytest("tests")
    first.assert_outcomes(passed=4, failed=1)
    first.stdout.fnmatch_lines(["*no heap baseline*test_snapshot.json", "*- hprofkit -*", "*--hprof-update-baselines*"])
    written = pytester.runpytest("tests", "--hprof-update-baselines")
    written.assert_outcomes(passed=5)
    written.stdout.fnmatch_lines(["*- hprofkit baselines -*", "1 baseline written, 0 updated, 0 unused"])
    assert (tests / "__hprof_baselines__" / "test_app_heap" / "test_snapshot.json").is_file()
    pytester.runpytest("tests").assert_outcomes(passed=5)

    checked = pytester.runpytest("--hprof-check", "tests/dumps", "-v")
    checked.assert_outcomes(passed=2)
    checked.stdout.fnmatch_lines_random([
        f"hprofkit: --hprof-check {dumps}: [[]tool.hprofkit] of {pytester.path / 'pyproject.toml'}",
        "tests/dumps/after.hprof::hprof-check PASSED*", "tests/dumps/before.hprof::hprof-check PASSED*"])


def test_readme_names_a_baseline_as_the_rule_says():
    """The section's example of a hashed baseline name, computed as it says."""
    name, test_id = re.search(r"`(test_snapshot\[x_y\]@[0-9a-f]{12}\.json)` for the id `(.*?)`",
                              readme_section().replace("\n  ", " ")).groups()
    digest = hashlib.sha256(json.dumps([f"test_snapshot[{test_id}]", None]).encode()).hexdigest()[:12]
    assert name == f"test_snapshot[x_y]@{digest}.json"
