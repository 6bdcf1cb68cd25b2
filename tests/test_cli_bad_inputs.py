"""Every CLI command over a corpus of bad inputs (truncations at many offsets,
flipped bytes, wrong formats, empty files, directories, FIFOs, /dev/zero):
exit status 1 and exactly one line on stderr starting "hprofkit: error:",
never a traceback, and no output file left.  Inputs that stay valid despite
the damage (a flipped byte in an array) may pass; nothing else may."""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import hprofkit
from conftest import DATA
from hprofkit.cli import main

pytestmark = pytest.mark.sanitize


def sample(android: bool) -> bytes:
    out = io.BytesIO()
    hprofkit.write_sample_dump(out, android=android, objects=40)
    return out.getvalue()


ANDROID = sample(True)
HOTSPOT = sample(False)


def encoded(data: bytes, **options) -> bytes:
    enc = hprofkit.Encoder(**options)
    return enc.feed(data) + enc.flush()


PACK = encoded(ANDROID, threads=1)
MINI = encoded(ANDROID, format="tailor", threads=1)
BARE_MINI = encoded(ANDROID, format="tailor", level=0)


def cuts(n: int, rng: random.Random) -> list[int]:
    return sorted({0, 1, 2, 5, 10, 18, 19, 25, 30, 31, 40, n // 2, n - 1} | {rng.randrange(1, n) for _ in range(8)})


def corpus() -> dict[str, tuple[bytes, bool]]:
    """name: (bytes, must_fail).  Truncations can end on a record boundary,
    which is a shorter valid dump: those are not must_fail."""
    rng = random.Random(9)
    out: dict[str, tuple[bytes, bool]] = {
        "empty": (b"", True),
        "text": (b"hello, this is not a heap dump\n" * 20, True),
        "png": (b"\x89PNG\r\n\x1a\n" + bytes(200), True),
        "zeros": (bytes(4096), True),
        "wrong magic": (b"JAVA PROFILE 9.9.9\0" + ANDROID[19:], True),
        "id size 3": (ANDROID[:19] + b"\0\0\0\3" + ANDROID[23:], True),
        "gzip of text": (gzip.compress(b"not a dump" * 100, mtime=0), True),
    }
    sources = {"hprof": ANDROID, "hotspot": HOTSPOT, "pack": PACK, "mini": MINI, "bare mini": BARE_MINI,
               "gz": gzip.compress(ANDROID, mtime=0), "bz2": bz2.compress(ANDROID)}
    for name, data in sources.items():
        for cut in cuts(len(data), rng):
            out[f"{name} cut at {cut}"] = (data[:cut], name in ("gz", "bz2", "pack", "mini") or cut < 31)
        for i in range(4):
            flipped = bytearray(data)
            for _ in range(1 + i):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            out[f"{name} flipped {i}"] = (bytes(flipped), False)
    return out


CORPUS = corpus()
COMMANDS = {
    "info": lambda src, dst: ["info", src],
    "stats": lambda src, dst: ["stats", src],
    "stats --json": lambda src, dst: ["stats", "--json", src],
    "encode": lambda src, dst: ["encode", "-i", src, "-o", dst],
    "encode --keep-all": lambda src, dst: ["encode", "--keep-all", "-i", src, "-o", dst],
    "encode tailor": lambda src, dst: ["encode", "--format", "tailor", "-i", src, "-o", dst],
    "encode hprof": lambda src, dst: ["encode", "--format", "hprof", "--app-only", "-i", src, "-o", dst],
    "decode": lambda src, dst: ["decode", "-i", src, "-o", dst],
    "convert": lambda src, dst: ["convert", "-i", src, "-o", dst],
    "show class": lambda src, dst: ["show", src, "java.lang.String"],
    "show object": lambda src, dst: ["show", src, "0x1"],
    "leaks": lambda src, dst: ["leaks", src],
    "path": lambda src, dst: ["path", src, "0x1"],
    "top": lambda src, dst: ["top", src],
    "top by class": lambda src, dst: ["top", src, "--by", "class"],
    "diff": lambda src, dst: ["diff", src, src],
    "stats --mapping": lambda src, dst: ["stats", "--mapping", str(DATA / "obfuscated" / "mapping.txt"), src],
    "deobfuscate": lambda src, dst: ["deobfuscate", src, dst, "--mapping", str(DATA / "obfuscated" / "mapping.txt")],
    "dominators": lambda src, dst: ["dominators", src],
    "dominators --group-by": lambda src, dst: ["dominators", "--group-by", "package", "--json", src],
    "report": lambda src, dst: ["report", src, "-o", dst],
}


def check_one_line_error(code: int, err: str, where: str) -> None:
    assert code == 1, where
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hprofkit: error: "), f"{where}: {err!r}"
    assert "Traceback" not in err and "internal error" not in err, f"{where}: {err!r}"  # a bug is no answer


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_over_the_corpus(command, tmp_path, capsys):
    src, dst = tmp_path / "input", tmp_path / "out" / "output"
    dst.parent.mkdir()
    for name, (data, must_fail) in CORPUS.items():
        src.write_bytes(data)
        code = main(COMMANDS[command](str(src), str(dst)))
        out, err = capsys.readouterr()
        where = f"{command} on {name}"
        if code == 0:
            assert not must_fail and "hprofkit: error" not in err, where
        else:
            check_one_line_error(code, err, where)
            assert os.listdir(dst.parent) == [], where  # a failure leaves no output
        for leftover in dst.parent.iterdir():
            leftover.unlink()


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("special", ["directory", "fifo", "/dev/zero", "missing"])
def test_every_command_on_what_is_not_a_file(command, special, tmp_path, capsys):
    src = {"directory": tmp_path, "fifo": tmp_path / "in.fifo", "/dev/zero": Path("/dev/zero"),
           "missing": tmp_path / "missing.hprof"}[special]
    done = threading.Event()
    writer = None
    if special == "fifo":
        os.mkfifo(src)
        writer = threading.Thread(target=feed_fifo, args=(src, b"not a dump at all" * 1000, done), daemon=True)
        writer.start()
    try:
        code = main(COMMANDS[command](str(src), str(tmp_path / "output")))
    finally:
        done.set()
        if writer:
            writer.join(10)
    check_one_line_error(code, capsys.readouterr().err, f"{command} on {special}")
    assert not (tmp_path / "output").exists()


def feed_fifo(path: Path, data: bytes, done: threading.Event) -> None:
    """Writes data into the FIFO once a reader opens it (if one ever does)."""
    while not done.is_set():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            done.wait(0.01)
            continue
        try:
            os.set_blocking(fd, True)
            os.write(fd, data)
        except BrokenPipeError:
            pass  # the reader gave up early, as it should on bad input
        finally:
            os.close(fd)
        return


@pytest.mark.parametrize("name", ["gz cut at 30", "bz2 flipped 3", "pack cut at 40", "empty", "/dev/zero"])
@pytest.mark.parametrize("command", ["stats", "encode", "decode", "convert"])
def test_the_process_exits_1_with_one_line(name, command, tmp_path):
    """The same through `python -m hprofkit`: the real exit status, and no
    traceback printed by anything (a truncated .gz printed 35 lines)."""
    if name == "/dev/zero":
        src = Path("/dev/zero")
    else:
        src = tmp_path / "input"
        src.write_bytes(CORPUS[name][0])
    proc = subprocess.run([sys.executable, "-m", "hprofkit", *COMMANDS[command](str(src), str(tmp_path / "o"))],
                          capture_output=True, text=True, timeout=120)
    check_one_line_error(proc.returncode, proc.stderr, f"{command} on {name}")
