"""Ctrl-C ends a write that the C glue is blocked in: output to a pipe nobody
reads fills it, write(2) waits, SIGINT arrives, and the command must stop
with KeyboardInterrupt instead of retrying the write forever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

import hprofkit
from conftest import dump_path
from procstate import blocked_in, end, reap, wait_for

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
        # Nobody reads the pipe: the child fills it, then waits in write(2).
        wait_for(proc, lambda: blocked_in(proc.pid, "write", 1), "waited in write(2) on the full pipe")
        os.kill(proc.pid, signal.SIGINT)
        code = end(proc)
        assert code == 3, proc.stderr.read().decode()
        assert proc.stderr.read().decode().endswith("KeyboardInterrupt\n")
    finally:
        reap(proc)
