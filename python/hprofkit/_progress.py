"""A one-line progress bar on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


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
