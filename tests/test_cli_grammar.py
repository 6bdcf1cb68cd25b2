"""The command line's one grammar (hprofkit/_cli_args.py): argument types that
make argparse report a bad value, the shared heap input, rows and --json."""

from __future__ import annotations

import argparse

import pytest

import hprofkit
from conftest import dump_path
from hprofkit import _cli_args

TWO_DUMPS = "mat__oracle_jdk7_21_hprofagent.hprof"


def parser_of(*adders) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hprofkit")
    sub = parser.add_subparsers(dest="command", required=True)
    p = _cli_args.command(sub, "cmd", lambda args: 0, "a command", example="hprofkit cmd x.hprof")
    for add in adders:
        add(p)
    return parser


@pytest.mark.parametrize("argv", [
    ["cmd", "-n", "0"], ["cmd", "-n", "-3"], ["cmd", "-n", "99999999999999999999999"], ["cmd", "-n", "x"],
    ["cmd", "--top", "1.5"],
])
def test_rows_are_whole_numbers_of_one_or_more(argv, capsys):
    with pytest.raises(SystemExit) as exit:
        parser_of(_cli_args.add_rows).parse_args(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: hprofkit cmd") and "argument -n/--top" in err


def test_rows_default_and_both_spellings():
    parser = parser_of(_cli_args.add_rows)
    assert parser.parse_args(["cmd"]).top == _cli_args.ROWS
    assert parser.parse_args(["cmd", "-n", "7"]).top == parser.parse_args(["cmd", "--top", "7"]).top == 7


@pytest.mark.parametrize("text, value", [("0", 0), ("42", 42), ("0x2a", 42), ("0X2A", 42),
                                         ("0xffffffffffffffff", (1 << 64) - 1)])
def test_object_ids(text, value):
    assert _cli_args.object_id(text) == value


@pytest.mark.parametrize("text", ["-1", "0x10000000000000000", "", "abc", "1.0", "-0x1"])
def test_what_is_no_object_id(text):
    with pytest.raises(argparse.ArgumentTypeError, match="not an object id"):
        _cli_args.object_id(text)


@pytest.mark.parametrize("text", ["", " ", " java.lang.String"])
def test_names_are_not_empty(text):
    with pytest.raises(argparse.ArgumentTypeError):
        _cli_args.non_empty("a class name")(text)


@pytest.mark.parametrize("text", ["field", ".field", "Class.", "", " a.b"])
def test_class_members(text):
    with pytest.raises(argparse.ArgumentTypeError, match="CLASS.FIELD"):
        _cli_args.class_member(text)
    assert _cli_args.class_member("com.example.Cache.sInstance") == ("com.example.Cache", "sInstance")


def test_heap_input_and_help_example(capsys):
    parser = parser_of(_cli_args.add_heap_input, _cli_args.add_json)
    args = parser.parse_args(["cmd", "x.hprof", "--heap-dump", "-1", "--semantics", "visualvm", "--json"])
    assert (args.file, args.json, _cli_args.heap_options(args)) == (
        "x.hprof", True, {"heap_dump": -1, "semantics": "visualvm"})
    with pytest.raises(SystemExit):
        parser.parse_args(["cmd", "--help"])
    assert "example:\n  hprofkit cmd x.hprof" in capsys.readouterr().out


def test_a_heap_dump_counted_from_the_end():
    """--heap-dump -1, as stats takes it, opens the last heap dump."""
    path = dump_path(TWO_DUMPS)
    with hprofkit.open(path) as dump:
        assert len(dump.heap_dumps) == 2
        last = dump.heap(heap_dump=1)
        assert sorted(o.id for o in dump.heap(heap_dump=-1).objects()) == sorted(o.id for o in last.objects())
    with hprofkit.open_heap(path, heap_dump=-2) as first:
        assert first.object_count == hprofkit.open_heap(path).object_count != last.object_count
    with pytest.raises(ValueError, match="no heap dump -3: the file holds 2"):
        hprofkit.open_heap(path, heap_dump=-3)
