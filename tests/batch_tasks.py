"""Tasks for tests/test_batch.py that the batch's worker processes import by name.

A "victim" input (its name starts with "victim") makes the task announce its worker's pid on the
FIFO `victims.pid` in the input's folder, then wait for ever: the test reads the pid (a blocking read,
no polling) and kills that worker from the outside, as the OOM killer would, or interrupts the
batch while the task runs.  Every other input gets hprofkit's own histogram task."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import hprofkit.tasks


def announce_pid(path: Path) -> None:
    """Writes this process's pid, one line, into the FIFO victims.pid beside `path` (the test reads it)."""
    with open(path.parent / "victims.pid", "w") as fifo:
        fifo.write(f"{os.getpid()}\n")


def histogram_or_hang(path) -> list:
    path = Path(path)
    if path.name.startswith("victim"):
        announce_pid(path)
        threading.Event().wait()  # until the worker is killed or stopped
    return hprofkit.tasks.histogram(path)
