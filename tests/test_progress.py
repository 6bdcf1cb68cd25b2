"""Progress (#21): one mechanism, three sinks.  A callable progress(done,
total, stage) sees each stage's done grow from 0 to its total on real dumps;
the command line draws a bar on a real terminal's stderr (a pty) and clears
it, and prints nothing when stderr is not a terminal; in a notebook the line
is an output of the executed cell (tests/notebook_run.py)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections import defaultdict

import pytest

import hprofkit
import notebook_run
from conftest import HPROF_DIR, SHARED_TOOLS, kept_dump, run_heapgen

SHARED = HPROF_DIR / "leakcanary__leak_service_binder.hprof"


class Recorder:
    """A progress callable that keeps every call, by stage."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, done: int, total: int, stage: str) -> None:
        self.calls.append((stage, done, total))

    def stages(self) -> list[str]:
        seen: list[str] = []
        for stage, _, _ in self.calls:
            if stage not in seen:
                seen.append(stage)
        return seen

    def check(self) -> dict[str, list[int]]:
        """Each stage runs from 0 up to its total, never going back (stages may nest: a
        report's "report" spans the leaks' stages; a stage may run again: each dump's index)."""
        runs: dict[str, list[int]] = defaultdict(list)
        open_runs: dict[str, list[tuple[int, int]]] = {}
        for stage, done, total in self.calls:
            run = open_runs.setdefault(stage, [])
            assert run or done == 0, (stage, done, "a run starts at 0")
            assert not run or (total == run[-1][1] and done >= run[-1][0]), (stage, run, done, total)
            run.append((done, total))
            runs[stage].append(done)
            if done == total:
                del open_runs[stage]
        assert not open_runs, open_runs
        return runs


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory):
    """A 40 MB HotSpot dump from HeapGen: its index build checks in every 16 MB."""
    return kept_dump(tmp_path_factory, "heapgen-40mb-seed7.hprof", lambda path: run_heapgen(path, 40, 7),
                     SHARED_TOOLS / "heapgen" / "HeapGen.java")


def test_open_heap_reports_the_index_by_bytes_walked(big_dump):
    """The C build reports how far its walk over the records is, then done."""
    dump = big_dump
    size = dump.stat().st_size
    seen = Recorder()
    with hprofkit.open_heap(dump, progress=seen) as heap:
        assert heap.object_count > 0
    runs = seen.check()
    assert seen.stages() == ["index"] and all(t == size for _, _, t in seen.calls)
    assert len(set(runs["index"])) >= 4  # 0, at least two points inside the walk, size


class Stop(Exception):
    pass


def test_a_callable_that_raises_stops_the_build(big_dump):
    """Raised inside the C build (from its checkpoint), the exception ends open_heap as it is."""
    def stop_inside(done: int, total: int, stage: str) -> None:
        if 0 < done < total:
            raise Stop(done)
    with pytest.raises(Stop) as raised:
        hprofkit.open_heap(big_dump, progress=stop_inside)
    assert raised.value.args[0] >= 16 << 20
    with pytest.raises(TypeError, match="progress must be"):
        hprofkit.open_heap(SHARED, progress="yes")


def test_each_analysis_reports_its_stages(tmp_path):
    seen = Recorder()
    with hprofkit.open_heap(SHARED, progress=seen) as heap:
        leaks = heap.find_leaks(progress=seen)
        tables = heap.tables(progress=seen)
    assert leaks and set(tables) >= {"objects", "references"}
    assert seen.stages() == ["index", "finders", "paths", "dominators", "leaks", "tables"]
    runs = seen.check()
    assert max(runs["leaks"]) == len(leaks) and max(runs["tables"]) == 5

    seen = Recorder()
    hprofkit.diff(SHARED, SHARED, retained=True, paths=["java.lang.String"], progress=seen)
    assert seen.stages() == ["index", "dominators", "histogram", "paths"]
    seen.check()

    seen = Recorder()
    hprofkit.report(SHARED, tmp_path / "report.html", progress=seen)
    assert seen.stages()[:3] == ["index", "dominators", "report"] and "leaks" in seen.stages()
    seen.check()


def test_nothing_when_not_asked(capfd):
    with hprofkit.open_heap(SHARED) as heap:
        heap.find_leaks()
    with hprofkit.open_heap(SHARED, progress=True) as heap:  # stderr is pytest's pipe: the bar anyway
        heap.find_leaks(progress=False)
    out, err = capfd.readouterr()
    assert out == "" and err.count("hprofkit index") >= 1 and "finders" not in err


def run_cli_on_pty(*args: str) -> tuple[int, bytes, bytes]:
    """The CLI with stderr on a real terminal (a pty) and stdout on a pipe: (status, stdout, terminal)."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "hprofkit", *args], stdout=subprocess.PIPE, stderr=terminal,
                            stdin=subprocess.DEVNULL)
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read()
    proc.stdout.close()
    os.close(controller)
    return proc.wait(), out, seen


@pytest.mark.parametrize("command, stages", [
    (["top", "{dump}", "-n", "3"], ["index", "dominators"]),
    (["leaks", "{dump}"], ["index", "finders", "paths", "dominators", "leaks"]),
    (["dominators", "{dump}", "-n", "3"], ["index", "dominators"]),
    (["show", "{dump}", "java.lang.Thread"], ["index"]),
    (["diff", "{dump}", "{dump}", "--retained"], ["index", "dominators", "histogram"]),
    (["report", "{dump}", "-o", "{out}"], ["index", "dominators", "report", "leaks"]),
])
def test_cli_bar_on_a_terminal_is_drawn_and_cleared(command, stages, tmp_path):
    args = [a.format(dump=SHARED, out=tmp_path / "report.html") for a in command]
    status, out, terminal = run_cli_on_pty(*args)
    assert status == 0 and out
    text = terminal.decode()
    for stage in stages:
        assert f"\rhprofkit {stage:<10} [" in text, stage
    # Each line drawn is blanked again: the terminal ends on an empty line.
    last = text.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == "", repr(text[-200:])


def test_cli_prints_no_bar_when_stderr_is_not_a_terminal():
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "top", str(SHARED), "-n", "3"], capture_output=True)
    assert proc.returncode == 0 and proc.stdout and proc.stderr == b""


def test_notebook_line(tmp_path):
    nb = notebook_run.execute(notebook_run.build({
        "open": f"import hprofkit\nheap = hprofkit.open_heap({str(SHARED)!r}, progress=True)\n"
                "leaks = heap.find_leaks(progress=True)\nlen(leaks)"}), tmp_path)
    outputs = notebook_run.outputs(nb, "open")
    lines = [o["data"]["text/html"] for o in outputs if o["output_type"] == "display_data"]
    assert len(lines) == 2, outputs  # one line a call, updated in place
    assert "hprofkit index" in lines[0] and "done in" in lines[0]
    assert "hprofkit leaks" in lines[1] and "value='1.000'" in lines[1] and "done in" in lines[1]
    assert not any(o["output_type"] == "stream" for o in outputs), outputs
