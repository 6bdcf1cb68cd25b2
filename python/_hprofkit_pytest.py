"""hprofkit's pytest plugin (registered through the pytest11 entry point).

It lives outside the hprofkit package so that loading it costs pytest
nothing: hprofkit itself is imported only when a test uses a fixture, an
assertion or --hprof-check.  Fixtures: hprof_heap, hprof_baseline; options:
--hprof-update-baselines, --hprof-check DIR.  See hprofkit.testing."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

# Reports of the running test, filled by hprofkit.testing and attached to
# its report as the "hprofkit" section; None outside a test.
sink: list[str] | None = None

_NOTES = pytest.StashKey[list]()
_SETTINGS = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hprofkit", "heap regression tests (hprofkit)")
    group.addoption("--hprof-update-baselines", action="store_true", default=False,
                    help="write the heap baselines that hprof_baseline.check() compares with")
    group.addoption("--hprof-check", action="append", default=[], metavar="DIR",
                    help="collect every heap dump under DIR as a test item running the checks of "
                         "[tool.hprofkit] in pyproject.toml (may be repeated)")


def pytest_configure(config: pytest.Config) -> None:
    dirs = [os.path.abspath(d) for d in config.getoption("hprof_check")]
    if not dirs:
        return
    for d in dirs:
        if not os.path.isdir(d):
            raise pytest.UsageError(f"--hprof-check {d}: not a directory")
    config.stash[_SETTINGS] = _load_settings(config.rootpath / "pyproject.toml")
    # `pytest --hprof-check DIR` checks the dumps only; with paths given too,
    # it checks the dumps besides them.
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args.extend(d for d in dirs if d not in map(os.path.abspath, config.args))
    else:
        config.args[:] = dirs


def _load_settings(pyproject: Path) -> Any:
    from hprofkit.testing import CheckSettings
    table: dict[str, Any] = {}
    if pyproject.is_file():
        if sys.version_info >= (3, 11):
            import tomllib
        else:
            import tomli as tomllib
        with open(pyproject, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("hprofkit", {})
    try:
        return CheckSettings.from_toml(table)
    except (ValueError, TypeError) as exc:
        raise pytest.UsageError(f"{pyproject}: {exc}") from None


# -- fixtures ------------------------------------------------------------------

@pytest.fixture(scope="session")
def _hprof_heap_cache() -> Any:
    cache: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}
    yield cache
    for heap in cache.values():
        heap.close()


@pytest.fixture
def hprof_heap(request: pytest.FixtureRequest, _hprof_heap_cache: dict) -> Callable[..., Any]:
    """A factory: hprof_heap("app.hprof", **open_heap options) opens a dump
    (plain, .gz, .bz2, an hprofkit pack or a Tailor mini; relative paths from
    the test file's directory) and caches its Heap for the session."""
    from hprofkit.testing import open_any

    def open_(path: str | os.PathLike[str], **options: Any) -> Any:
        full = Path(request.path).parent / path
        key = (str(full.resolve()), tuple(sorted(options.items())))
        heap = _hprof_heap_cache.get(key)
        if heap is None:
            heap = _hprof_heap_cache[key] = open_any(full, **options)
        return heap
    return open_


@pytest.fixture
def hprof_baseline(request: pytest.FixtureRequest) -> Any:
    """hprof_baseline.check(heap, retained=[...], mask=[...]): compares a heap
    summary with __hprof_baselines__/<module>/<test>.json beside the test."""
    from hprofkit.testing import Baseline
    path = Path(request.path)
    return Baseline(path.parent / "__hprof_baselines__" / path.stem, request.node.name,
                    update=request.config.getoption("hprof_update_baselines"))


# -- the "hprofkit" report section ------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    global sink
    outer, sink = sink, []  # saved: pytester runs suites inside a test
    try:
        yield
    finally:
        item.stash[_NOTES], sink = sink, outer


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    notes = item.stash.get(_NOTES, None) if call.when == "call" else None
    if notes:
        outcome.get_result().sections.append(("hprofkit", "\n\n".join(notes)))


# -- dumps as test items ------------------------------------------------------------------

def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    settings = parent.config.stash.get(_SETTINGS, None)
    if settings is None:
        return None
    dirs = [Path(d) for d in parent.config.getoption("hprof_check")]
    if not any(file_path.resolve().is_relative_to(d.resolve()) for d in dirs):
        return None
    from hprofkit._heapfile import dump_kind
    if dump_kind(file_path) is None:
        return None
    return HeapDumpFile.from_parent(parent, path=file_path)


class HeapDumpFile(pytest.File):
    def collect(self) -> Any:
        yield HeapDumpItem.from_parent(self, name="hprof-check")


class HeapDumpItem(pytest.Item):
    """One dump under --hprof-check: the checks of [tool.hprofkit]."""

    def runtest(self) -> None:
        from hprofkit.testing import check_dump
        check_dump(self.path, self.config.stash[_SETTINGS])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        summary = getattr(excinfo.value, "summary", None)
        if summary is not None:
            return f"{self.path}: {summary}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"hprof-check {self.path.name}"
