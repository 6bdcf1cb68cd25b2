"""Ctrl-C ends a write that the C glue is blocked in: output to a pipe nobody
reads fills it, write(2) waits, SIGINT arrives, and the command must stop
with KeyboardInterrupt instead of retrying the write forever."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import termios
import time

import pytest

import hprofkit
from conftest import dump_path

ANDROID = dump_path("leakcanary__leak_service_binder.hprof")

# The child writes its output to stdout, a pipe the parent never reads.
CHILD = """
import sys
import hprofkit
job, src = sys.argv[1], sys.argv[2]
try:
    getattr(hprofkit, job)(src, "-")
except KeyboardInterrupt:
    sys.stderr.write("KeyboardInterrupt\\n")
    sys.exit(3)
sys.exit(0)
"""


def _waits_on_full_pipe(pid: int, fd: int, capacity: int) -> bool:
    """Whether the child waits in write(2) on the pipe: as the kernel tells
    (wchan), or the pipe holds its capacity.  (A pipe is full as soon as its
    pages are taken, and a short write leaves one part-filled: a few kB below
    its capacity can already be full.)"""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            if "pipe_write" in f.read():
                return True
    except OSError:
        pass
    waiting = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, waiting)
    return int.from_bytes(waiting, sys.byteorder) >= capacity


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    base = tmp_path_factory.mktemp("interrupt")
    pack, mini = base / "dump.hpk", base / "dump.mini"
    hprofkit.encode(ANDROID, pack, strip="none")
    hprofkit.encode(ANDROID, mini, format="tailor")
    return {"convert": ANDROID, "decode-pack": pack, "decode-tailor": mini}


# convert: the Converter filter; decode-tailor: the TailorDecoder filter;
# decode-pack: PackDecoder.  All three write to the descriptor from C.
@pytest.mark.parametrize("case", ["convert", "decode-pack", "decode-tailor"])
def test_ctrl_c_ends_a_write_blocked_on_a_full_pipe(sources, case):
    job = case.split("-")[0]
    proc = subprocess.Popen([sys.executable, "-c", CHILD, job, str(sources[case])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        capacity = fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ)
        deadline = time.monotonic() + 60
        while not _waits_on_full_pipe(proc.pid, proc.stdout.fileno(), capacity):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the child never filled the pipe"
            time.sleep(0.05)
        time.sleep(0.2)  # the child is now waiting in write(2)
        os.kill(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("SIGINT did not end a write blocked on a full pipe")
        assert code == 3, proc.stderr.read().decode()
        assert proc.stderr.read().decode().endswith("KeyboardInterrupt\n")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
