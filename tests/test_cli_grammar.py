"""The command line's one grammar (hprofkit/_cli_args.py): argument types that
make argparse report a bad value, the shared heap input, rows and --json."""

from __future__ import annotations

import argparse
import inspect
import json
import re

import pytest

import hprofkit
from conftest import ROOT, dump_path
from hprofkit import _cli_args
from hprofkit.cli import build_parser, command_table, main

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
        "x.hprof", True, {"heap_dump": -1, "semantics": "visualvm", "mapping": None})
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


# ---- every command speaks it -------------------------------------------------------------------

def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings}


HEAP_COMMANDS = ["show", "path", "top", "diff", "leaks", "batch", "bitmaps", "dominators", "report", "pprof", "serve",  # read a heap
                 "threads", "sites", "waste"]                                                                    # graph
SERVERS = ["mcp"]  # answer JSON-RPC on stdio: no dump argument, no --json (tests/test_mcp.py)
LISTINGS = ["stats", "show", "top", "diff", "leaks", "batch", "bitmaps", "dominators",       # print rows
            "threads", "sites", "waste"]


def test_the_command_list_is_known():
    """A new command joins these lists (and so the checks below)."""
    assert set(commands()) == {"info", "stats", "encode", "decode", "convert", "deobfuscate", "demo", *HEAP_COMMANDS,
                              *SERVERS}


@pytest.mark.parametrize("name", sorted(set(commands()) - {"demo", *SERVERS}))
def test_every_command_has_json(name):
    assert "--json" in options(commands()[name])


@pytest.mark.parametrize("name", HEAP_COMMANDS)
def test_every_heap_command_reads_heaps_alike(name):
    """--heap-dump, --semantics and --mapping wherever a heap is read (as open_heap takes them);
    info and stats read records: --heap-dump and --mapping."""
    assert {"heap_dump", "semantics", "mapping"} <= set(inspect.signature(hprofkit.open_heap).parameters)
    assert {"--heap-dump", "--semantics", "--mapping"} <= options(commands()[name])
    for reader in ("info", "stats"):
        assert {"--heap-dump", "--mapping"} <= options(commands()[reader])


@pytest.mark.parametrize("name", [n for n in HEAP_COMMANDS if n != "diff"])
def test_a_heap_command_takes_one_mapping(name, tmp_path):
    """--mapping names one mapping.txt (diff: once for both dumps, or twice, A's then B's)."""
    positional = {"show": ["x.hprof", "java.lang.String"], "path": ["x.hprof", "0x1"], "batch": ["stats", "x.hprof"]}
    argv = positional.get(name, ["x.hprof"]) + ["--mapping", str(tmp_path / "m.txt")]
    assert commands()[name].parse_args(argv).mapping == str(tmp_path / "m.txt")


def test_diff_takes_one_mapping_or_two():
    p = commands()["diff"]
    assert p.parse_args(["a.hprof", "b.hprof"]).mapping is None
    assert p.parse_args(["a.hprof", "b.hprof", "--mapping", "m.txt"]).mapping == ["m.txt"]
    assert p.parse_args(["a.hprof", "b.hprof", "--mapping", "1.txt", "--mapping", "2.txt"]).mapping == ["1.txt", "2.txt"]


@pytest.mark.parametrize("name", LISTINGS)
def test_every_listing_takes_one_row_count(name):
    p = commands()[name]
    assert {"-n", "--top"} <= options(p)
    assert {a.dest for a in p._actions if "-n" in a.option_strings} == {"top"}


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_help_has_an_example(name, capsys):
    with pytest.raises(SystemExit) as exit:
        main([name, "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    example = out.split("\nexample:\n", 1)[1]
    assert example.startswith(f"  hprofkit {name}")


def test_the_readme_table_is_the_parsers():
    """The command table of the docs' command line guide (docs/guides/cli.md, once the README's)
    is what command_table() makes of the parsers now
    (regenerate: python -c 'from hprofkit.cli import command_table; print(command_table())')."""
    readme = (ROOT / "docs" / "guides" / "cli.md").read_text()
    section = readme.split("\n## Command line\n", 1)[1]
    block = section.split("```\n", 2)[1]
    assert block.rstrip("\n") == command_table()


# ---- one vocabulary of JSON keys ---------------------------------------------------------------

LEAKCANARY = str(dump_path("leakcanary__leak_service_binder.hprof"))
# The keys the commands once used for what the vocabulary now names class, instances, shallow_size,
# retained_size (top: class/shallow; stats: shallow_bytes; diff: name/shallow_a/count_a).
OLD_KEYS = {"shallow", "shallow_bytes", "retained", "retained_bytes", "count_a", "count_b", "count_delta",
            "shallow_a", "shallow_b", "shallow_delta", "retained_a", "retained_b", "retained_delta"}


def keys_of(doc) -> set[str]:
    if isinstance(doc, dict):
        return set(doc).union(*(keys_of(v) for v in doc.values()))
    if isinstance(doc, list):
        return set().union(*(keys_of(v) for v in doc))
    return set()


def json_of(argv: list[str], capsys) -> object:
    assert main([*argv, "--json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


JSON_COMMANDS = {
    "info": ["info", LEAKCANARY], "stats": ["stats", LEAKCANARY, "-n", "5"],
    "show object": ["show", LEAKCANARY, "0xb0cc6c78", "-n", "3"], "show class": ["show", LEAKCANARY, "java.lang.String"],
    "path": ["path", LEAKCANARY, "0xb0cc6c78"], "top": ["top", LEAKCANARY, "-n", "5"],
    "top by class": ["top", LEAKCANARY, "-n", "5", "--by", "class"],
    "diff": ["diff", str(dump_path("mat__sun_jdk6_18_x32.hprof")), str(dump_path("mat__sun_jdk6_18_x64.hprof")),
             "-n", "5", "--retained"],
    "leaks": ["leaks", LEAKCANARY],
    "dominators": ["dominators", LEAKCANARY, "-n", "3", "--depth", "2"],
    "dominators by class": ["dominators", LEAKCANARY, "-n", "3", "--group-by", "class"],
    "threads": ["threads", LEAKCANARY, "-n", "3"],
    "sites": ["sites", str(dump_path("platform_art__RI.hprof")), "-n", "3"],
    "waste": ["waste", LEAKCANARY, "-n", "3", "--min-bytes", "4096"],
}


@pytest.mark.parametrize("command", list(JSON_COMMANDS))
def test_one_vocabulary_of_json_keys(command, capsys):
    doc = json_of(JSON_COMMANDS[command], capsys)
    assert not keys_of(doc) & OLD_KEYS
    rows = {"stats": lambda d: d["histogram"], "top": lambda d: d, "top by class": lambda d: d,
            "diff": lambda d: d["rows"], "show class": lambda d: d["classes"], "dominators": lambda d: d["roots"],
            "dominators by class": lambda d: d["groups"], "waste": lambda d: d["collections"]}.get(command)
    if rows is not None:
        assert rows(doc) and all(isinstance(row["class"], str) for row in rows(doc))
    if command == "top":
        assert set(doc[0]) == {"id", "class", "kind", "shallow_size", "retained_size", "retained_count"}
    if command == "top by class":
        assert set(doc[0]) == {"class", "class_id", "instances", "retained_size"}
    if command == "diff":
        assert {"class", "instances_delta", "shallow_size_delta", "retained_size_delta"} <= set(doc["rows"][0])


def test_top_prints_a_header_and_names_class_objects_by_their_class(capsys):
    """`top` printed no header and named a class object 'java.lang.Class class'."""
    assert main(["top", LEAKCANARY, "-n", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["retained", "objects", "id", "object"] and len(lines) == 6
    classes = [line for line in lines[1:] if re.search(r" 0x[0-9a-f]+ +class ", line)]
    assert classes and all("java.lang.Class" not in line for line in lines)
    assert "class android.content.res.Resources" in lines[1]
    assert main(["top", LEAKCANARY, "-n", "2", "--by", "class"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split() == ["retained", "instances", "class"]


# ---- IN [OUT] --------------------------------------------------------------------------------------

def test_files_in_and_out_positional_or_as_options(tmp_path, capsys):
    src = tmp_path / "app.hprof"
    src.write_bytes(dump_path("leakcanary__leak_service_binder.hprof").read_bytes())
    assert main(["encode", str(src)]) == 0                  # OUT beside IN, named after it
    assert (tmp_path / "app.hpk").is_file()
    assert main(["encode", "-i", str(src), "-o", str(tmp_path / "b.hpk")]) == 0   # as hprofkit 0.1 took it
    assert (tmp_path / "b.hpk").read_bytes() == (tmp_path / "app.hpk").read_bytes()
    capsys.readouterr()
    assert main(["decode", str(tmp_path / "b.hpk"), str(tmp_path / "back.hprof"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["output"] == str(tmp_path / "back.hprof") and report["written"] == (tmp_path / "back.hprof").stat().st_size
    assert main(["convert", str(src)]) == 0
    assert (tmp_path / "app.converted.hprof").is_file()
    capsys.readouterr()


@pytest.mark.parametrize("argv, words", [
    (["encode", "{src}"], "exists: name OUT to replace it"),          # app.hpk made by the first call
    (["encode", "{src}", "x.hpk", "-i", "{src}"], "IN given twice"),
    (["encode", "-o", "x.hpk"], "IN is missing"),
    (["decode", "-"], "name OUT (a file, or - for stdout) when IN is standard input"),
])
def test_files_in_and_out_usage_errors(argv, words, tmp_path, capsys):
    src = tmp_path / "app.hprof"
    src.write_bytes(dump_path("leakcanary__leak_service_binder.hprof").read_bytes())
    assert main(["encode", str(src)]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit:
        main([a.format(src=src) for a in argv])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and words in err.splitlines()[-1] and err.startswith(f"usage: hprofkit {argv[0]} ")
