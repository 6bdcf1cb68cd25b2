"""hprofkit's pytest plugin (registered through the pytest11 entry point).

It lives outside the hprofkit package so that loading it costs pytest
nothing: hprofkit itself is imported only when a test uses a fixture, an
assertion or --hprof-check.  Fixtures: hprof_heap, hprof_baseline; options:
--hprof-update-baselines, --hprof-check DIR.  See hprofkit.testing.

A failing test's "hprofkit" report goes into its failure (longrepr): the
terminal, --junitxml and every other reporter show it, and the short
summary shows the one-line reason.  The run ends with what it did to the
baselines ("N baselines written, M updated, K unused"); unused ones are
counted, and deleted by --hprof-update-baselines, only in the modules whose
every test was selected, ran and passed (as syrupy does: a -k, -m, --lf or
node-id run, or a failure, cannot tell a baseline nobody uses from one a
test did not reach)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

# Reports of the running test, filled by hprofkit.testing and attached to
# its failure (or its report, if it passes) as the "hprofkit" section; None
# outside a test.
sink: list[str] | None = None

BASELINES = "__hprof_baselines__"
_NOTES = pytest.StashKey[list]()
_CHECKS = pytest.StashKey[list]()  # [(DIR, CheckSettings, the pyproject.toml read or None)]
_RUN = pytest.StashKey["_Run"]()
# The dumps collected so far, by (device, inode): a symlink loop under DIR
# (or two links to one file) shows a dump again, which is checked once.
_SEEN = pytest.StashKey[set]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hprofkit", "heap regression tests (hprofkit)")
    group.addoption("--hprof-update-baselines", action="store_true", default=False,
                    help="write the heap baselines that hprof_baseline.check() compares with (those that "
                         "changed), and delete unused ones of modules that ran completely")
    group.addoption("--hprof-check", action="append", default=[], metavar="DIR",
                    help="collect every heap dump under DIR as a test item running the checks of "
                         "[tool.hprofkit] in the nearest pyproject.toml above DIR (may be repeated)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RUN] = _Run()
    dirs = [os.path.abspath(d) for d in config.getoption("hprof_check")]
    if not dirs:
        return
    for d in dirs:
        if not os.path.isdir(d):
            raise pytest.UsageError(f"--hprof-check {d}: not a directory")
    config.stash[_CHECKS] = [(Path(d), *_settings_for(Path(d), config)) for d in dirs]
    # `pytest --hprof-check DIR` checks the dumps only; with paths given too,
    # it checks the dumps besides them.
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args.extend(d for d in dirs if d not in map(os.path.abspath, config.args))
    else:
        config.args[:] = dirs


# -- [tool.hprofkit] ------------------------------------------------------------------------

def _settings_for(directory: Path, config: pytest.Config) -> tuple[Any, Path | None]:
    """The checks for the dumps under `directory`: the [tool.hprofkit] of the
    nearest pyproject.toml above it that has one, else the rootdir's, else
    the defaults (with a warning)."""
    from hprofkit.testing import CheckSettings
    root = config.rootpath / "pyproject.toml"
    for pyproject in [p / "pyproject.toml" for p in (directory, *directory.parents)] + [root]:
        table = _hprofkit_table(pyproject)
        if table is not None:
            try:
                settings = CheckSettings.from_toml(table)
            except (ValueError, TypeError) as exc:
                raise pytest.UsageError(f"{pyproject}: {exc}") from None
            if settings.mapping is not None:  # relative to the pyproject.toml that names it
                settings.mapping = str(pyproject.parent / settings.mapping)
            return settings, pyproject
    config.issue_config_time_warning(pytest.PytestConfigWarning(
        f"--hprof-check {directory}: no [tool.hprofkit] in a pyproject.toml above it nor in the rootdir's: "
        f"running the default checks (no application leaks, Android matchers)"), stacklevel=2)
    return CheckSettings.from_toml({}), None


def _hprofkit_table(pyproject: Path) -> dict[str, Any] | None:
    if not pyproject.is_file():
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        with open(pyproject, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("hprofkit")
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise pytest.UsageError(f"--hprof-check: cannot read {pyproject}: {exc}") from None
    if table is not None and not isinstance(table, dict):
        raise pytest.UsageError(f"{pyproject}: [tool.hprofkit] must be a table")
    return table


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"hprofkit: --hprof-check {d}: "
            + (f"[tool.hprofkit] of {source}" if source else "no [tool.hprofkit] found: the default checks")
            for d, _, source in config.stash.get(_CHECKS, [])]


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
    the test file's directory, a mapping= path too) and caches its Heap for
    the session."""
    from hprofkit import open_heap
    inputs = request.config.stash[_RUN].inputs

    def open_(path: str | os.PathLike[str], **options: Any) -> Any:
        full = Path(request.path).parent / path
        if isinstance(options.get("mapping"), (str, os.PathLike)):
            options["mapping"] = str((Path(request.path).parent / options["mapping"]).resolve())
        key = (str(full.resolve()), tuple(sorted(options.items())))
        heap = _hprof_heap_cache.get(key)
        if heap is None:
            heap = _hprof_heap_cache[key] = open_heap(full, **options)
        inputs.add(str(full))  # a baseline written must never be it
        return heap
    return open_


@pytest.fixture
def hprof_baseline(request: pytest.FixtureRequest) -> Any:
    """hprof_baseline.check(heap, retained=[...], mask=[...], name=None):
    compares a heap summary with __hprof_baselines__/<module>/<test>.json
    beside the test (names: see hprofkit._baseline)."""
    from hprofkit.testing import Baseline
    path = Path(request.path)
    return Baseline(path.parent / BASELINES / path.stem, _key(request.node),
                    update=request.config.getoption("hprof_update_baselines"), ledger=request.config.stash[_RUN])


def _key(item: pytest.Item) -> str:
    """The test's id inside its module: classes and the test, joined by "::"."""
    chain = item.listchain()
    module = max((i for i, node in enumerate(chain) if isinstance(node, pytest.File)), default=0)
    return "::".join(node.name for node in chain[module + 1:])


# -- the "hprofkit" report --------------------------------------------------------------

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
    report = outcome.get_result()
    run = item.config.stash.get(_RUN, None)
    if run is not None:
        run.phases.setdefault(item.nodeid, {})[call.when] = report.outcome
    notes = item.stash.get(_NOTES, None) if call.when == "call" else None
    if notes:
        text = "\n\n".join(notes)
        if report.failed and hasattr(report.longrepr, "addsection"):
            report.longrepr.addsection("hprofkit", text)  # in the failure: JUnit XML's text too
        else:
            report.sections.append(("hprofkit", text))
    testing = sys.modules.get("hprofkit.testing")
    if (report.failed and call.excinfo is not None and testing is not None
            and isinstance(call.excinfo.value, testing.HeapCheckFailed)):
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:  # the short summary's and JUnit's message: the one-line reason
            crash.message = call.excinfo.value.summary


# -- dumps as test items ------------------------------------------------------------------

def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Any:
    checks = parent.config.stash.get(_CHECKS, None)
    if checks is None or _checks_of(checks, file_path) is None:
        return None
    from hprofkit._heapfile import dump_kind
    try:
        if dump_kind(file_path) is None:
            return None
        st = file_path.stat()
        seen = parent.config.stash.setdefault(_SEEN, set())
        if (st.st_dev, st.st_ino) in seen:
            return None
        seen.add((st.st_dev, st.st_ino))
    except OSError:
        pass  # the item says what is wrong with it
    return HeapDumpFile.from_parent(parent, path=file_path)


def _checks_of(checks: list[tuple[Path, Any, Path | None]], path: Path) -> tuple[Any, Path | None] | None:
    """The settings of the innermost --hprof-check DIR holding path."""
    resolved = path.resolve()
    inside = [(len(d.parts), settings, source) for d, settings, source in checks
              if resolved.is_relative_to(d.resolve())]
    return max(inside, key=lambda c: c[0])[1:] if inside else None


class HeapDumpFile(pytest.File):
    def collect(self) -> Any:
        yield HeapDumpItem.from_parent(self, name="hprof-check")


class HeapDumpItem(pytest.Item):
    """One dump under --hprof-check: the checks of [tool.hprofkit].  Any
    failure, a dump hprofkit cannot read included, is one line."""

    def runtest(self) -> None:
        from hprofkit import HprofError
        from hprofkit.testing import HeapCheckFailed, check_dump
        checks = _checks_of(self.config.stash[_CHECKS], self.path)
        assert checks is not None
        settings, source = checks
        try:
            check_dump(self.path, settings)
            return
        except HeapCheckFailed as exc:
            where = f"[tool.hprofkit] of {source}" if source else "the default checks (no [tool.hprofkit] found)"
            reason, report = exc.summary, f"{exc.report}\n\nchecks: {where}"
            if sink is not None:
                sink.append(f"checks: {where}")
        except (HprofError, OSError) as exc:
            reason = report = f"{type(exc).__name__}: {exc}"
        # The failure's text names the file; the short summary gives the reason.
        failure = HeapCheckFailed(f"{self.path}: {reason}", report, sectioned=True)
        failure.summary = reason
        raise failure

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        testing = sys.modules.get("hprofkit.testing")
        if testing is not None and isinstance(excinfo.value, testing.HeapCheckFailed):
            return excinfo.getrepr(style="value")  # the summary line; the report is the section
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"hprof-check {self.path.name}"


# -- what the run did to the baselines ----------------------------------------------------------

@dataclass
class _Run:
    """A session's baselines (a hprofkit.testing.BaselineLedger) and what
    tells whether a module ran completely."""
    inputs: set[str] = field(default_factory=set)  # dumps the tests opened: never written
    use: set[str] = field(default_factory=set)
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    modules: dict[Path, bool] = field(default_factory=dict)  # module: collected without error
    tests: dict[Path, set[str]] = field(default_factory=dict)  # module: the items its collectors made
    phases: dict[str, dict[str, str]] = field(default_factory=dict)  # item: {when: outcome}
    unused: list[str] = field(default_factory=list)
    not_counted: int = 0  # unused files of modules that did not run completely
    failed_deletes: list[str] = field(default_factory=list)

    def used(self, path: str) -> None:
        self.use.add(os.path.abspath(path))

    def wrote(self, path: str, created: bool) -> None:
        (self.created if created else self.updated).append(path)

    def clean(self, nodeid: str) -> bool:
        return self.phases.get(nodeid) == {"setup": "passed", "call": "passed", "teardown": "passed"}


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """Records every test a module holds, as its collectors made them:
    innermost, before a node id, -k, -m or --lf (which filters this very
    report) narrows them."""
    outcome = yield
    run = collector.config.stash.get(_RUN, None)
    if run is None or not isinstance(collector, (pytest.Module, pytest.Class)):
        return
    report = outcome.get_result()
    module = collector.path
    if isinstance(collector, pytest.Module):
        run.modules[module] = report.passed
    run.tests.setdefault(module, set()).update(
        node.nodeid for node in report.result if isinstance(node, pytest.Item))


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = session.config.stash.get(_RUN, None)
    if run is None:
        return
    selected = {item.nodeid for item in session.items}

    def ran_whole(module: Path) -> bool:
        # A module without tests does not count: --lf reports the files it skips as empty.
        tests = run.tests.get(module, set())
        return bool(tests) and tests <= selected and all(map(run.clean, tests))
    complete = {module: ok and ran_whole(module) for module, ok in run.modules.items()}
    for module in run.modules:
        unused = [f for f in _baseline_files(module.parent / BASELINES / module.stem) if f not in run.use]
        if complete[module]:
            run.unused += unused
        else:
            run.not_counted += len(unused)
    # The baselines of a module that is gone, when its directory ran completely.
    whole = (all(run.modules.values()) and all(map(run.clean, set().union(*run.tests.values())))
             and not session.config.getoption("lf", False))
    for directory in sorted({module.parent for module in run.modules}):
        root = directory / BASELINES
        gone = [e.path for e in _scandir(root) if e.is_dir(follow_symlinks=False)
                and not (directory / f"{e.name}.py").exists()]
        for stale in gone:
            files = _baseline_files(Path(stale))
            if whole and _covered(directory, session.config):
                run.unused += files
            else:
                run.not_counted += len(files)
    if session.config.getoption("hprof_update_baselines"):
        _delete(run)


def _baseline_files(directory: Path) -> list[str]:
    return sorted(e.path for e in _scandir(directory) if e.name.endswith(".json") and not e.name.startswith(".")
                  and (e.is_symlink() or e.is_file(follow_symlinks=False)))


def _scandir(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError:  # no baselines there (or none readable)
        return []


def _covered(directory: Path, config: pytest.Config) -> bool:
    """Whether the run was asked for every test under directory."""
    here = config.invocation_params.dir
    return any(directory.resolve().is_relative_to((here / arg).resolve()) for arg in config.args
               if "::" not in arg and (here / arg).is_dir())


def _delete(run: _Run) -> None:
    """Deletes the unused baselines (a link, not what it points to), then
    their directories if that left them empty."""
    for path in run.unused:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            run.failed_deletes.append(f"{path}: {exc.strerror}")
    for directory in sorted({os.path.dirname(p) for p in run.unused}):
        for empty in (directory, os.path.dirname(directory)):
            try:
                os.rmdir(empty)
            except OSError:  # not empty: other baselines live there
                break


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    update = config.getoption("hprof_update_baselines")
    if run is None or not (run.use or run.unused or (update and run.not_counted)):
        return  # a run that used no baseline says nothing of those it did not reach
    tr = terminalreporter
    tr.write_sep("-", "hprofkit baselines")
    tr.write_line(f"{len(run.created):,} baseline{'' if len(run.created) == 1 else 's'} written, "
                  f"{len(run.updated):,} updated, {len(run.unused):,} unused" + (" (deleted)" if update and run.unused else ""))
    for path in run.unused:
        tr.write_line(f"  {'deleted' if update else 'unused'}: {_shown(path, config)}")
    for failure in run.failed_deletes:
        tr.write_line(f"  not deleted: {failure}")
    if run.unused and not update:
        tr.write_line("pytest --hprof-update-baselines deletes them")
    if run.not_counted:
        tr.write_line(f"{run.not_counted:,} more not used by this run, in modules that did not run completely "
                      f"(-k, -m, --lf, node ids, or a test that did not pass): not counted as unused, nor deleted")


def _shown(path: str, config: pytest.Config) -> str:
    try:
        return str(Path(path).relative_to(config.invocation_params.dir))
    except ValueError:
        return path
