"""Issue #19, errors on the command line.

- A bad argument is a usage error, reported by argparse: exit status 2, the
  command's usage and one error line naming the argument, no traceback (`top
  -n 99999999999999999999999` was an OverflowError, `leaks --ignore-root ""` a
  TypeError, `show --limit -1` dropped a row, `show FILE -1` said "no object
  0x-1").
- Every heap command on a valid dump without a heap dump (the shared
  py-hprof__basic_reads.hprof), or without the heap dump asked for, is one
  line and exit status 1 (it was "internal error, please report it:
  IndexError")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import dump_path

DUMP = str(dump_path("leakcanary__leak_service_binder.hprof"))
BASIC_READS = str(dump_path("py-hprof__basic_reads.hprof"))

# (argv, the argument argparse names): every numeric, id, name or pattern argument of every command.
BAD_ARGUMENTS = [
    (["top", "-n", "99999999999999999999999", DUMP], "-n"),
    (["top", "-n", "0", DUMP], "-n"),
    (["top", "-n", "-5", DUMP], "-n"),
    (["leaks", "--ignore-root", "", DUMP], "--ignore-root"),
    (["leaks", "--ignore", "mContext", DUMP], "--ignore"),
    (["leaks", "--library", "Class.", DUMP], "--library"),
    (["show", "--limit", "-1", DUMP, "java.lang.String"], "--limit"),
    (["show", "--limit", "many", DUMP, "java.lang.String"], "--limit"),
    (["show", DUMP, "-1"], "ID|CLASS"),
    (["show", DUMP, "0x10000000000000000"], "ID|CLASS"),
    (["show", DUMP, " "], "ID|CLASS"),
    (["path", DUMP, "-1"], "ID"),
    (["path", DUMP, "0xg"], "ID"),
    (["info", DUMP, "--heap-dump", "x"], "--heap-dump"),
    (["stats", DUMP, "--heap-dump", "99999999999"], "--heap-dump"),
    (["stats", DUMP, "--top", "0"], "--top"),
    (["stats", DUMP, "--top", "99999999999999999999999"], "--top"),
    (["stats", DUMP, "--heap", ""], "--heap"),
    (["diff", DUMP, DUMP, "--top", "-1"], "--top"),
    (["encode", "-i", DUMP, "-o", "x.hpk", "--threads", "-1"], "--threads"),
    (["encode", "-i", DUMP, "-o", "x.hpk", "--threads", "100000000"], "--threads"),
    (["encode", "-i", DUMP, "-o", "x.hpk", "--level", "10"], "--level"),
    (["encode", "-i", DUMP, "-o", "x.hpk", "--strip", "bytes"], "--strip"),
    (["decode", "-i", "x.hpk", "-o", "x.hprof", "--threads", "-2"], "--threads"),
    (["batch", "stats", DUMP, "--jobs", "0"], "--jobs"),
    (["batch", "stats", DUMP, "--jobs", "99999999999999999999"], "--jobs"),
    (["batch", "stats", DUMP, "--scheduler", ""], "--scheduler"),
]


def run(argv: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", *argv], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def check_usage_error(proc: subprocess.CompletedProcess, command: str, argument: str | None) -> None:
    """Exit 2, argparse's usage of the command, then one error line."""
    where = f"{command}: {proc.stderr!r}"
    assert proc.returncode == 2, where
    assert proc.stderr.startswith(f"usage: hprofkit {command} ") and proc.stderr.count("usage:") == 1, where
    last = proc.stderr.splitlines()[-1]
    assert last.startswith(f"hprofkit {command}: error: "), where
    if argument is not None:  # "argument -n/--top: ...": the argument by any of its names
        assert argument in last.split(": error: argument ", 1)[1].split(": ", 1)[0].split("/"), where
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr and proc.stdout == "", where


@pytest.mark.parametrize("argv, argument", BAD_ARGUMENTS,
                         ids=[" ".join("DUMP" if arg == DUMP else arg for arg in argv) for argv, _ in BAD_ARGUMENTS])
def test_a_bad_argument_is_a_usage_error(argv, argument, tmp_path):
    check_usage_error(run(argv, tmp_path), argv[0], argument)
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("options", [["--keep-all", "--strip", "int"], ["--format", "tailor", "--drop-traces"],
                                     ["--format", "hprof", "--level", "3"]])
def test_options_wrong_together_are_a_usage_error(options, tmp_path):
    """encode's options that each pass but not together: the same report, exit 2."""
    check_usage_error(run(["encode", *options, "-i", DUMP, "-o", "x"], tmp_path), "encode", None)
    assert list(tmp_path.iterdir()) == []


HEAP_COMMANDS = {
    "show": ["show", "{}", "java.lang.String"],
    "show id": ["show", "{}", "0x1"],
    "path": ["path", "{}", "0x1"],
    "top": ["top", "{}"],
    "top by class": ["top", "{}", "--by", "class"],
    "leaks": ["leaks", "{}"],
    "diff": ["diff", "{}", "{}"],
    "diff retained": ["diff", "{}", "{}", "--retained"],
    "dominators": ["dominators", "{}"],
    "dominators by package": ["dominators", "{}", "--group-by", "package"],
}


@pytest.mark.parametrize("command", list(HEAP_COMMANDS))
def test_a_heap_command_on_a_dump_without_a_heap_dump(command, tmp_path):
    proc = run([arg.format(BASIC_READS) for arg in HEAP_COMMANDS[command]], tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "hprofkit: error: the file holds no heap dump\n"


@pytest.mark.parametrize("command", ["show", "path", "top", "leaks", "diff", "dominators"])
def test_a_heap_command_on_a_heap_dump_the_file_lacks(command, tmp_path):
    argv = [arg.format(DUMP) for arg in HEAP_COMMANDS[command]]
    proc = run(argv + ["--heap-dump", "1"], tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "hprofkit: error: no heap dump 1: the file holds 1\n"
