"""encode / decode / convert never lose or destroy a file: the output may not
be the input (by device and inode), an existing FIFO, device or symlink is
written through and kept, an output appears only once complete (nothing is
left behind by an error, SIGTERM, SIGHUP or SIGKILL), and encode_writer
leaves nothing when it is abandoned."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import hprofkit
import hprofkit.tasks
from hprofkit.cli import main
from conftest import dump_path, peer, raw_bytes
from procstate import blocked_in, end, has_open, reap, wait_for

pytestmark = pytest.mark.sanitize

ANDROID = dump_path("leakcanary__leak_service_binder.hprof")   # 1.0.3: convert takes it
HOTSPOT = dump_path("mat__sun_jdk6_32bit.hprof")


@pytest.fixture
def real(tmp_path) -> Path:
    path = tmp_path / "real.hprof"
    path.write_bytes(ANDROID.read_bytes())
    return path


# ---- the output is not the input ----------------------------------------------------------------

def spellings(real: Path) -> dict[str, tuple[Path, Path]]:
    """(input, output) pairs that name one file."""
    d = real.parent
    (d / "lnk.hprof").symlink_to(real)
    os.link(real, d / "hard.hprof")
    (d / "dirlink").symlink_to(d)
    return {
        "same path": (real, real),
        "symlink as input": (d / "lnk.hprof", real),
        "symlink as output": (real, d / "lnk.hprof"),
        "hard link": (real, d / "hard.hprof"),
        "symlinked directory": (d / "dirlink" / "real.hprof", real),
        "dot-dot": (real, d / "dirlink" / ".." / d.name / "real.hprof"),
    }


@pytest.mark.parametrize("job", ["encode", "encode-tailor", "decode", "convert"])
def test_the_library_refuses_to_write_over_its_input(job, real):
    if job == "decode":
        hprofkit.encode(ANDROID, real)  # a pack to decode
    before = real.read_bytes()
    for name, (src, dst) in spellings(real).items():
        with pytest.raises(ValueError, match="is the input file"):
            if job == "encode":
                hprofkit.encode(src, dst)
            elif job == "encode-tailor":
                hprofkit.encode(src, dst, format="tailor")
            elif job == "decode":
                hprofkit.decode(src, dst)
            else:
                hprofkit.convert(src, dst)
        assert real.read_bytes() == before, name
    with open(real, "rb") as fin, open(real, "r+b") as fout:  # file objects on the same file
        with pytest.raises(ValueError, match="is the input file"):
            hprofkit.convert(fin, fout)
    assert real.read_bytes() == before


def test_the_cli_refuses_a_symlink_to_its_output(real, capsys):
    """The issue's reproduction: `ln -s real.hprof lnk.hprof; encode -i lnk.hprof -o real.hprof`."""
    lnk = real.parent / "lnk.hprof"
    lnk.symlink_to(real.name)
    before = real.read_bytes()
    assert main(["encode", "-i", str(lnk), "-o", str(real)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("hprofkit: error: ") and "is the input file" in err and err.count("\n") == 1
    assert real.read_bytes() == before and lnk.is_symlink()


def test_stdout_redirected_to_the_input_is_refused(real):
    before = real.read_bytes()
    with open(real, "r+b") as out:
        proc = subprocess.run([sys.executable, "-m", "hprofkit", "convert", "-i", str(real), "-o", "-"],
                              stdout=out, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1 and "standard output is the input file" in proc.stderr
    assert real.read_bytes() == before


def test_batch_out_is_never_an_input(real):
    """The issue's report: `batch stats in.json --out in.json` (the input a dump) left JSON where
    the dump was; through a symlink (--out l.json pointing at an input) too.  Refused before any
    work, one line, the dump kept."""
    dump = real.parent / "in.json"
    os.rename(real, dump)
    (real.parent / "l.json").symlink_to(dump.name)
    os.link(dump, real.parent / "hard.json")
    other = dump_path("mat__oracle_jdk8_05_x64.hprof")
    before = dump.read_bytes()
    for out in ("in.json", "l.json", "hard.json", "./../" + real.parent.name + "/in.json"):
        proc = subprocess.run([sys.executable, "-m", "hprofkit", "batch", "stats", str(other), "in.json", "--out", out],
                              cwd=real.parent, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1 and proc.stdout == "", out
        assert proc.stderr == f"hprofkit: error: {out!r} is the input file: writing it would destroy the input\n"
        assert dump.read_bytes() == before and (real.parent / "l.json").is_symlink()
    # A symlink to a new name is followed: the result lands in its target, the link kept.
    (real.parent / "result-link.json").symlink_to("result.json")
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "batch", "stats", "in.json", "--out", "result-link.json"],
                          cwd=real.parent, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((real.parent / "result.json").read_text())["rows"][0]["ok"]
    assert (real.parent / "result-link.json").is_symlink()


def test_batch_outputs_into_a_fifo_are_written_into(tmp_path):
    """--out into an existing FIFO is written into (a reader gets the JSON), never replaced."""
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "batch", "histogram", str(HOTSPOT), "--out", str(fifo)],
                          capture_output=True, text=True, timeout=600)
    reader.join()
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(got[0])["rows"][0]["value"] == hprofkit.tasks.histogram(HOTSPOT)


def test_parquet_results_go_to_a_new_directory_only(tmp_path):
    """BatchResult.to_parquet and heap.to_parquet share the output path's new_directory(): an
    existing name (a directory, a file, a symlink) is refused and kept; nothing is left behind."""
    result = hprofkit.batch("histogram", [HOTSPOT], jobs=1)
    (tmp_path / "taken").mkdir()
    (tmp_path / "file").write_text("mine")
    (tmp_path / "link").symlink_to("file")
    for name in ("taken", "file", "link"):
        with pytest.raises(FileExistsError):
            result.to_parquet(tmp_path / name)
    assert (tmp_path / "file").read_text() == "mine" and (tmp_path / "link").is_symlink()
    assert result.to_parquet(tmp_path / "new") == str(tmp_path / "new")
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["histogram.parquet", "leak_groups.parquet",
                                                                    "rows.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "link", "new", "taken"]  # no temporary left


# ---- special outputs are written through, never replaced ----------------------------------------

def test_a_symlink_output_keeps_the_link_and_replaces_its_target(tmp_path):
    target = tmp_path / "data" / "out.hprof"
    target.parent.mkdir()
    target.write_bytes(b"old")
    target.chmod(0o600)  # a private dump stays private
    link = tmp_path / "out.hprof"
    link.symlink_to(target)
    hprofkit.convert(ANDROID, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes()[:18] == b"JAVA PROFILE 1.0.2"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.hprof"]


def test_a_dangling_symlink_output_creates_its_target(tmp_path):
    link = tmp_path / "out.hpk"
    link.symlink_to(tmp_path / "made.hpk")
    hprofkit.encode(HOTSPOT, link)
    assert link.is_symlink() and (tmp_path / "made.hpk").stat().st_size > 0


def test_a_symlink_to_dev_null_stays_a_symlink(tmp_path):
    link = tmp_path / "out.hprof"
    link.symlink_to("/dev/null")
    result = hprofkit.convert(ANDROID, link)
    assert result.output > 0
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_output_is_written_into(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = bytearray()

    def read() -> None:
        with open(fifo, "rb") as f:
            received.extend(f.read())

    reader = threading.Thread(target=read, daemon=True)  # daemon: stuck for good if the FIFO were replaced
    reader.start()
    try:
        hprofkit.convert(ANDROID, fifo)
    finally:
        if reader.is_alive():  # the FIFO was never opened for writing: let the reader go
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    expected = tmp_path / "expected.hprof"
    hprofkit.convert(ANDROID, expected)
    assert bytes(received) == expected.read_bytes()


def test_dev_stdout_is_standard_output(tmp_path):
    """-o /dev/stdout goes where the shell pointed standard output, and the
    report goes to stderr so as not to mix with it.  (/proc/self/fd/1, which
    /dev/stdout links to: a build without the fix would replace the machine's
    /dev/stdout with a regular file.)"""
    out = tmp_path / "out.hprof"
    with open(out, "wb") as f:
        proc = subprocess.run([sys.executable, "-m", "hprofkit", "convert", "-i", str(ANDROID), "-o", "/proc/self/fd/1"],
                              stdout=f, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0 and proc.stderr.startswith("COMPLETE: ")
    expected = tmp_path / "expected.hprof"
    hprofkit.convert(ANDROID, expected)
    assert out.read_bytes() == expected.read_bytes()


def test_a_new_output_gets_the_mode_open_would_give(tmp_path):
    code = """
import os, sys, hprofkit
os.umask(0o027)
hprofkit.encode(sys.argv[1], sys.argv[2])
"""
    subprocess.run([sys.executable, "-c", code, str(HOTSPOT), str(tmp_path / "x.hpk")], check=True)
    assert stat.S_IMODE((tmp_path / "x.hpk").stat().st_mode) == 0o640


def test_the_process_umask_is_never_changed(tmp_path):
    """Another thread creating files meanwhile would get the wrong mode."""
    code = """
import os, sys, hprofkit
calls = []
umask = os.umask
os.umask = lambda mask: calls.append(mask) or umask(mask)
hprofkit.encode(sys.argv[1], sys.argv[2])
hprofkit.encode(sys.argv[1], sys.argv[2])  # over an existing file too
print(calls)
"""
    proc = subprocess.run([sys.executable, "-c", code, str(HOTSPOT), str(tmp_path / "x.hpk")],
                          capture_output=True, text=True, check=True)
    assert proc.stdout == "[]\n"


@pytest.mark.parametrize("how", ["tmpfile", "named"])
@pytest.mark.parametrize("existing", [False, True])
def test_the_output_is_synced_before_it_gets_its_name(tmp_path, how, existing):
    """A crash after the name appears must not leave an empty or short file
    under it: the data reaches the disk (fsync) before linkat/rename."""
    strace = peer("strace")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "out.hprof"
    if existing:
        out.write_bytes(b"previous")
    log = tmp_path / "strace.log"
    with open(ANDROID, "rb") as stdin:
        subprocess.run([strace, "-f", "-qq", "-o", str(log), "-e", "trace=openat,fsync,fdatasync,link,linkat,"
                        "rename,renameat,renameat2", sys.executable, "-c", CHILD, how, str(out)],
                       stdin=stdin, capture_output=True, check=True)
    calls = [line.split(None, 1)[1] for line in log.read_text().splitlines() if " " in line]
    created = [c for c in calls if c.startswith("openat(") and (str(out_dir) in c or '"."' in c or ".partial" in c)
               and ("O_TMPFILE" in c or "O_CREAT" in c)]
    assert len(created) == 1, calls
    assert ("O_TMPFILE" in created[0]) == (how == "tmpfile"), created
    fd = created[0].rsplit("= ", 1)[1].strip()
    naming = [i for i, c in enumerate(calls) if c.startswith(("link", "rename")) and "= 0" in c]
    assert naming, calls
    synced = [i for i, c in enumerate(calls) if c.startswith((f"fsync({fd})", f"fdatasync({fd})"))]
    assert synced and synced[0] < naming[0], calls
    assert out.read_bytes()[:18] == b"JAVA PROFILE 1.0.2"  # the new file, under its name


# ---- nothing is left behind --------------------------------------------------------------------

def test_a_failed_encode_leaves_nothing_and_keeps_the_old_output(tmp_path):
    out = tmp_path / "out.mini"
    out.write_bytes(b"previous")
    bad = tmp_path / "bad.hprof"
    bad.write_bytes(raw_bytes("leakcanary__leak_service_binder.hprof")[:50_000])
    with pytest.raises(hprofkit.TruncatedError):
        hprofkit.encode(bad, out, format="tailor")
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.hprof", "out.mini"]


CHILD = """
import signal, sys
# A command run from a terminal takes SIGHUP's default and Python's SIGINT handler; the suite itself
# may run under nohup (SIGHUP ignored) or as a shell's background job (SIGINT ignored, so Python
# installs no handler), which the CLI leaves so, as any program would.
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
from hprofkit import _output
_output.USE_TMPFILE &= sys.argv[1] == "tmpfile"
from hprofkit.cli import main
sys.exit(main(["convert", "-i", "-", "-o", sys.argv[2]]))
"""


@contextlib.contextmanager
def converting_child(how: str, out: Path, first: bytes, child: str = CHILD) -> Iterator[subprocess.Popen]:
    """The CLI converting from a pipe into `out` (CHILD, `how` its temporary
    file): given once it has read `first`, opened its output and waits in
    read(2) for more; ended and its pipes closed afterwards."""
    proc = subprocess.Popen([sys.executable, "-c", child, how, str(out)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(first)
        proc.stdin.flush()
        wait_for(proc, lambda: has_open(proc.pid, out.parent) and blocked_in(proc.pid, "read", 0),
                 "opened its output and waited for more input")
        yield proc
    finally:
        reap(proc)


# O_TMPFILE leaves no name even on SIGKILL; the named fallback is removed on
# SIGTERM and SIGHUP (nothing can clean up after SIGKILL: that is what
# O_TMPFILE is for).
@pytest.mark.parametrize("how,signum", [("tmpfile", signal.SIGTERM), ("tmpfile", signal.SIGHUP),
                                        ("tmpfile", signal.SIGKILL), ("named", signal.SIGTERM),
                                        ("named", signal.SIGHUP)])
def test_a_signal_during_a_write_leaves_no_file(tmp_path, how, signum):
    """The CLI converts from a pipe that stops half-way; the signal arrives
    while the output is open."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    data = ANDROID.read_bytes()
    with converting_child(how, out_dir / "out.hprof", data[:len(data) // 2]) as proc:
        proc.send_signal(signum)
        end(proc)
    assert proc.returncode == -signum
    assert os.listdir(out_dir) == []


def test_an_interrupt_leaves_no_file(tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with converting_child("named", out_dir / "out.hprof", ANDROID.read_bytes()[:100_000]) as proc:
        proc.send_signal(signal.SIGINT)
        assert end(proc) == 130
    assert os.listdir(out_dir) == []


def test_under_nohup_sighup_stays_ignored_and_the_output_is_whole(tmp_path):
    """A command started with SIGHUP ignored (nohup) keeps it ignored: the
    hang-up changes nothing, and the conversion ends whole once its input does."""
    out = tmp_path / "out.hprof"
    data = ANDROID.read_bytes()
    child = CHILD.replace("signal.SIG_DFL)", "signal.SIG_IGN)")
    with converting_child("named", out, data[:len(data) // 2], child) as proc:
        proc.send_signal(signal.SIGHUP)  # ignored: discarded when sent, never pending
        proc.stdin.write(data[len(data) // 2:])
        proc.stdin.close()
        assert end(proc) == 0, proc.stderr.read()
    want = tmp_path / "want.hprof"
    hprofkit.convert(ANDROID, want)
    assert out.read_bytes() == want.read_bytes()


def test_a_full_disk_names_the_output(tmp_path):
    """A write that fails (here past RLIMIT_FSIZE) is reported against the
    output path, never against a temporary file."""
    out = tmp_path / "out.hprof"
    code = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
from hprofkit.cli import main
sys.exit(main(["convert", "-i", sys.argv[1], "-o", sys.argv[2]]))
"""
    proc = subprocess.run([sys.executable, "-c", code, str(ANDROID), str(out)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("hprofkit: error: [Errno 27] File too large: ") and str(out) in proc.stderr
    assert "partial" not in proc.stderr and proc.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


# ---- encode_writer ------------------------------------------------------------------------------

def test_encode_writer_to_a_path_writes_what_encode_writes(tmp_path):
    data = ANDROID.read_bytes()
    with hprofkit.encode_writer(tmp_path / "w.mini", format="tailor", threads=1) as w:
        for i in range(0, len(data), 100_000):
            w.write(data[i:i + 100_000])
    hprofkit.encode(ANDROID, tmp_path / "e.mini", format="tailor", threads=1)
    assert (tmp_path / "w.mini").read_bytes() == (tmp_path / "e.mini").read_bytes()


class Oops(Exception):
    pass


@pytest.mark.parametrize("to", ["path", "file"])
def test_an_exception_in_the_with_block_goes_through_and_leaves_nothing(tmp_path, to):
    out = tmp_path / "w.mini"
    data = ANDROID.read_bytes()
    target = out if to == "path" else open(out, "wb")
    with pytest.raises(Oops):
        with hprofkit.encode_writer(target, format="tailor", closefd=True) as w:
            w.write(data[:500_000])
            raise Oops
    if to == "path":
        assert not out.exists()
    else:
        assert target.closed and out.read_bytes() == b""


@pytest.mark.parametrize("to", ["path", "file"])
def test_a_dropped_encode_writer_warns_and_leaves_nothing(tmp_path, to):
    out = tmp_path / "w.mini"
    target = out if to == "path" else open(out, "wb")
    w = hprofkit.encode_writer(target, format="tailor", closefd=True)
    w.write(ANDROID.read_bytes()[:200_000])
    with pytest.warns(ResourceWarning, match="dropped unclosed"):
        del w
        gc.collect()
    if to == "path":
        assert os.listdir(tmp_path) == []
    else:
        assert target.closed and out.read_bytes() == b""


def test_an_encode_writer_closed_on_an_incomplete_dump_leaves_nothing(tmp_path):
    out = tmp_path / "w.hpk"
    w = hprofkit.encode_writer(out)
    w.write(ANDROID.read_bytes()[:200_000])
    with pytest.raises(hprofkit.TruncatedError):
        w.close()
    assert w.closed and os.listdir(tmp_path) == []


def test_an_encode_writer_into_a_file_object_keeps_what_was_there_before(tmp_path):
    buf = io.BytesIO(b"HEAD")
    buf.seek(4)
    with pytest.raises(Oops):
        with hprofkit.encode_writer(buf, format="tailor") as w:
            w.write(ANDROID.read_bytes()[:200_000])
            raise Oops
    assert buf.getvalue() == b"HEAD"
