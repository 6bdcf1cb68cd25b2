"""A child process's state as the kernel tells it (/proc), for tests that
must act at a given point of a child's work (send Ctrl-C while it waits in
write(2), truncate a file it has mapped): they wait for that state, never
for a number of seconds, so they pass on any CPU and under any load."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest

# Not a guess at how long the child needs: a child that never gets there
# has hung, and the test says so instead of waiting for ever.
HANG_GUARD = 600.0

# System call numbers (/proc/PID/syscall gives the number).
SYSCALLS = {"x86_64": {"read": 0, "write": 1}, "aarch64": {"read": 63, "write": 64}}


def wait_for(proc: subprocess.Popen, condition: Callable[[], bool], what: str) -> None:
    """Returns once condition() holds; fails the test if the child ends first."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            pytest.fail(f"the child ended (status {proc.returncode}) before it {what}: {err!r}")
        if time.monotonic() > deadline:
            pytest.fail(f"the child has not {what} after {HANG_GUARD:.0f} s: it hangs")
        time.sleep(0.002)


def is_stopped(pid: int) -> bool:
    """The child is stopped (SIGSTOP): its state in /proc/PID/stat is T."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] in "Tt"


def end(proc: subprocess.Popen) -> int:
    """The child's exit status, waiting for it (HANG_GUARD at most)."""
    try:
        return proc.wait(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not end within {HANG_GUARD:.0f} s: it hangs")


def reap(proc: subprocess.Popen) -> None:
    """Ends the child if it still runs (a test that failed half-way) and
    closes the pipes the test opened to it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def blocked_in(pid: int, call: str, fd: int) -> bool:
    """Whether the main thread of process `pid` sleeps in system call `call`
    (read, write) on descriptor `fd`: the kernel's word that it waits there
    (a signal sent now interrupts that call)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    number = SYSCALLS[platform.machine()][call]
    return state == "S" and len(fields) > 1 and fields[0] == str(number) and int(fields[1], 16) == fd


def bytes_written(pid: int) -> int:
    """Bytes process `pid` has passed to write(2) and its kin so far."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def has_open(pid: int, directory: Path) -> bool:
    """Whether process `pid` has a file of `directory` open (named or not)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(directory) + "/"):
                return True
        except OSError:
            continue
    return False


def has_mapped(pid: int, path: Path) -> bool:
    """Whether process `pid` has `path` mapped."""
    try:
        return str(path) in Path(f"/proc/{pid}/maps").read_text()
    except FileNotFoundError:
        return False
