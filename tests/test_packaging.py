"""Packaging: the license, what the sdist carries, and stubs that match the extension."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import hprofkit
from conftest import ROOT

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed


def tracked(*folders: str) -> set[str]:
    """Files git tracks under the folders (the repository's own view)."""
    out = subprocess.run(["git", "ls-files", *folders], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_license_is_apache_2(tmp_path):
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text[:200] and "Version 2.0, January 2004" in text[:200]
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a pointer to it


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The sdist, built without isolation as a user with the test extras
    would (no `wheel` package needed: setuptools builds wheels itself)."""
    out = tmp_path_factory.mktemp("sdist")
    proc = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out),
                           str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "SetuptoolsDeprecationWarning" not in proc.stderr  # the license table form warned
    (path,) = out.glob("hprofkit-*.tar.gz")
    return path


def test_sdist_carries_sources_tests_and_docs(sdist):
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
        pkg_info = tar.extractfile(next(n for n in tar.getnames() if n.endswith("/PKG-INFO") and n.count("/") == 1))
        assert pkg_info is not None
        metadata = pkg_info.read().decode()
    wanted = tracked("src", "tests", "docs", "python", "benchmarks") | {"LICENSE", "README.md", "pyproject.toml",
                                                                          "setup.py", "MANIFEST.in"}
    assert wanted <= names, sorted(wanted - names)
    assert {"tests/c/Makefile", "tests/c/test_stats.c", "tests/conftest.py", "docs/format.md"} <= names
    assert not any("__pycache__" in n or n.startswith("tests/c/build/") for n in names)
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    assert f"Version: {hprofkit.__version__}" in metadata


def test_metadata_says_where_it_runs_and_what_the_extras_bring(sdist):
    with tarfile.open(sdist) as tar:
        pkg_info = tar.extractfile(next(n for n in tar.getnames() if n.endswith("/PKG-INFO") and n.count("/") == 1))
        assert pkg_info is not None
        metadata = pkg_info.read().decode().splitlines()
    classifiers = {line.split(": ", 1)[1] for line in metadata if line.startswith("Classifier: ")}
    assert {"Framework :: Pytest", "Operating System :: POSIX :: Linux"} <= classifiers
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (10, 11, 12, 13)} <= classifiers
    # The README's .to_pandas() of tables and diffs works with the tables extra alone.
    assert 'Requires-Dist: pandas; extra == "tables"' in metadata


def test_the_sdists_tests_skip_cleanly_without_the_shared_data(sdist, tmp_path):
    """Unpacked where no ../shared/data lies beside it, the sdist's test
    suite reports each test file skipped, and passes (a user's run, not CI)."""
    with tarfile.open(sdist) as tar:
        # filter: what 3.14 does by default (3.12 and 3.13 warn without it)
        tar.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (unpacked,) = tmp_path.glob("hprofkit-*")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HPROFKIT_DATA", "PYTEST_ADDOPTS")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"], cwd=unpacked,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    skipped = len(list((unpacked / "tests").glob("test_*.py")))
    assert f"{skipped} skipped" in proc.stdout and "shared dumps" in proc.stdout


def test_stubs_match_the_extension(tmp_path):
    # stubtest compares the stubs with this interpreter's runtime, so mypy reads them as this
    # version (3.13's NamedTuples have __replace__); the project's config says 3.10, for mypy --strict.
    pinned = 'python_version = "3.10"'
    text = (ROOT / "pyproject.toml").read_text()
    assert pinned in text
    config = tmp_path / "pyproject.toml"
    # The optional libraries' own modules are read as Any: stubtest compares hprofkit's stubs
    # with its runtime, and mypy --strict (below) checks the calls into them; analysing them
    # (some 300 modules of dask, distributed, IPython...) was two thirds of stubtest's time.
    config.write_text(text.replace(pinned, f'python_version = "{sys.version_info[0]}.{sys.version_info[1]}"') + """
[[tool.mypy.overrides]]
module = ["pyarrow", "pyarrow.*", "duckdb", "duckdb.*", "distributed", "distributed.*", "dask", "dask.*",
          "pandas", "pandas.*", "IPython", "IPython.*"]
follow_imports = "skip"
""")
    # Run from an empty folder, so that the installed package is the one checked.
    work = tmp_path / "run"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "hprofkit", "--mypy-config-file", str(config)],
                          cwd=work, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    assert "Success" in proc.stdout



def test_mypy_strict_passes_over_the_package_and_its_api_types(tmp_path):
    """Issue #23: the package type-checks under pyproject.toml's strict
    configuration (stubtest alone does not fail on an untyped def), and
    tests/typecheck/api_types.py's assert_types hold: records() yields
    Records, feed() without an fd gives bytes, and so on."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(tmp_path / "cache"), str(ROOT / "python" / "hprofkit"),
                           str(ROOT / "tests" / "typecheck" / "api_types.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    assert "Success" in proc.stdout
