"""Progress: the byte-counting bar of the codec commands (Progress), and the
one mechanism of the heap analyses (Reporter: a callable, a terminal bar, a
notebook line)."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Optional, TextIO, Union


class Progress:
    """Callable as progress(done, total); draws at most ten times a second.  `done` counts bytes
    (shown as MB/s), or `unit`s when one is given ("dumps": shown as dumps/s)."""

    def __init__(self, label: str, stream: TextIO | None = None, force: bool = False, unit: str | None = None) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self.start = time.perf_counter()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        fraction = done / total if total else 1.0
        width = 30
        filled = int(width * fraction)
        rate = done / (now - self.start) if now > self.start else 0.0
        speed = f"{rate / 1e6:8.0f} MB/s" if self.unit is None else f"{done}/{total} {self.unit}, {rate:.2f}/s"
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {fraction:6.1%} {speed}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Ends the bar's line, if one was drawn."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


# ---- progress(done, total, stage): one mechanism, three sinks --------------------------------
#
# What runs long (open_heap, the dominators, find_leaks, tables, diff, report) takes a
# `progress` argument and reports each stage through a Reporter:
#   None  (the default) nothing, unless an outer call reports already: a report() asked for
#         progress shows the open_heap and find_leaks it runs;
#   True  a bar on stderr when stderr is a terminal, else a live line in a notebook, else
#         the bar on stderr anyway (it was asked for);
#   False nothing, even inside an outer call that reports;
#   a callable progress(done, total, stage), called in the caller's thread: for each stage,
#         done grows from 0 to total (bytes of the file for "index", else steps or objects).
# The command line reports on a terminal's stderr only (cli.main: reporting(stderr.isatty())).

ProgressArg = Union[None, bool, Callable[[int, int, str], object]]

_active: ContextVar[Optional["Reporter"]] = ContextVar("hprofkit_progress", default=None)


class TerminalBar:
    """A bar on a terminal's stderr, redrawn at most ten times a second, and cleared
    (the line blanked) when each stage ends: it leaves nothing behind."""

    WIDTH = 24

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = 0.0
        self.shown = 0  # characters of the line drawn last

    def __call__(self, done: int, total: int, stage: str) -> None:
        if done >= total:
            self.close()  # a stage done leaves a clean line for what the command prints next
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done > 0:
            return
        self.last = now
        fraction = min(done / total, 1.0) if total > 0 else 1.0
        filled = int(self.WIDTH * fraction)
        line = f"hprofkit {stage:<10} [{'#' * filled}{'.' * (self.WIDTH - filled)}] {fraction:4.0%}"
        self.stream.write("\r" + line.ljust(self.shown))
        self.stream.flush()
        self.shown = max(self.shown, len(line))

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0


class NotebookLine:
    """A live line under the running cell: an HTML display updated in place
    (IPython's display(..., display_id=True).update), no widget library needed."""

    def __init__(self) -> None:
        self.handle: Any = None
        self.last = 0.0
        self.start = time.monotonic()
        self.state: tuple[int, int, str] = (0, 0, "")

    def _html(self, note: str) -> Any:
        from IPython.core.display import HTML  # where it is defined (IPython.display re-exports it)

        from ._html import text
        done, total, stage = self.state
        fraction = min(done / total, 1.0) if total > 0 else 1.0
        return HTML(f"<div class='hprofkit-progress' style='font:12px ui-monospace,monospace;color:#4a5264'>"
                    f"hprofkit {text(stage)} <progress value='{fraction:.3f}' max='1' style='width:160px;"
                    f"vertical-align:middle'></progress> {fraction:.0%}{note}</div>")

    def __call__(self, done: int, total: int, stage: str) -> None:
        self.state = (done, total, stage)
        now = time.monotonic()
        if self.handle is None:
            from IPython.display import display
            self.handle = display(self._html(""), display_id=True)
        elif now - self.last >= 0.1 or done >= total:
            self.handle.update(self._html(""))
        self.last = now

    def close(self) -> None:
        if self.handle is not None:
            self.handle.update(self._html(f" — done in {time.monotonic() - self.start:.1f} s"))


class Reporter:
    """Tells each sink how far each stage is: reporter(done, total, stage)."""

    def __init__(self, sinks: list[Any]) -> None:
        self.sinks = sinks

    def __call__(self, done: int, total: int, stage: str) -> None:
        for sink in self.sinks:
            sink(done, total, stage)

    def stage(self, name: str) -> Callable[[int, int], None]:
        """progress(done, total) for one stage (what the C builds call)."""
        return lambda done, total: self(done, total, name)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """One step of work that tells nothing while it runs (a C call): 0 of 1, then 1 of 1."""
        self(0, 1, name)
        yield
        self(1, 1, name)

    def close(self) -> None:
        for sink in self.sinks:
            if hasattr(sink, "close"):
                sink.close()

    @classmethod
    def of(cls, progress: ProgressArg) -> Optional["Reporter"]:
        """The Reporter a progress argument asks for (None for none)."""
        if progress is None or progress is False:
            return None
        if progress is True:
            if not sys.stderr.isatty() and in_notebook():
                return cls([NotebookLine()])
            return cls([TerminalBar(sys.stderr)])
        if callable(progress):
            return cls([progress])
        raise TypeError(f"progress must be None, True, False or a callable progress(done, total, stage), "
                        f"not {type(progress).__name__}")


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (IPython's ZMQ shell)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


@contextmanager
def reporting(progress: Union[ProgressArg, Reporter]) -> Iterator[Optional[Reporter]]:
    """The Reporter for a call: the one progress asks for (closed when the call
    ends), or, for None, the one an outer call set up."""
    if progress is None or isinstance(progress, Reporter):
        yield progress if progress is not None else _active.get()
        return
    reporter = Reporter.of(progress)
    token = _active.set(reporter)
    try:
        yield reporter
    finally:
        _active.reset(token)
        if reporter is not None:
            reporter.close()


@contextmanager
def step(reporter: Optional[Reporter], name: str) -> Iterator[None]:
    """reporter.step(name), or nothing without a reporter."""
    if reporter is None:
        yield
    else:
        with reporter.step(name):
            yield
