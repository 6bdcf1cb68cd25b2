"""The `threads`, `sites` and `waste` commands (hprofkit/_cli_explore.py): what
they print is what the heap API gives (proven in test_values.py), as jstack,
pprof --text and MAT's reports show it; --json, -n, the shared heap input;
bad arguments exit 2 with the usage line, unreadable input 1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hprofkit
from conftest import dump_path, raw_bytes
from leaky_heap import LeakyHeap
from hprofkit.cli import main

AGENT = "platform_art__RI.hprof"
JDK8 = "mat__oracle_jdk8_05_x64.hprof"


def test_threads_print_as_jstack_with_what_each_frame_holds(capsys):
    assert main(["threads", str(dump_path(JDK8))]) == 0
    out = capsys.readouterr().out
    heap = hprofkit.open_heap(dump_path(JDK8))
    threads = heap.threads()
    for thread in threads:
        assert f'"{thread.name}" #{thread.serial}' in out
        for frame in thread.frames:
            assert f"\tat {frame}\n" in out
            for obj in frame.locals:
                assert f"- local <0x{obj.id:x}> (a {obj.class_name})" in out
    assert "\tat java.lang.Object.wait(Native Method)\n" in out
    assert "at org.eclipse.mat.tests.CreateCollectionDump.main(CreateCollectionDump.java:36)" in out
    assert out.count('" #') == len(threads)


def test_threads_json_and_rows(capsys):
    assert main(["threads", str(dump_path(JDK8)), "--json", "-n", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)
    threads = hprofkit.open_heap(dump_path(JDK8)).threads()[:2]
    assert [(r["name"], r["daemon"], r["retained_size"], len(r["frames"])) for r in rows] == [
        (t.name, t.daemon, t.retained_size, len(t.frames)) for t in threads]


def test_threads_read_standard_input():
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "threads", "-", "--json"], input=raw_bytes(JDK8),
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == len(hprofkit.open_heap(dump_path(JDK8)).threads())


def test_sites_print_as_pprof_text(capsys):
    assert main(["sites", str(dump_path(AGENT)), "--depth", "2", "-n", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    sites = hprofkit.open_heap(dump_path(AGENT)).allocation_sites(depth=2)
    assert out[0] == (f"Showing 5 of {len(sites)} buckets, {hprofkit._units.human_size(sum(s.bytes for s in sites))} "
                      f"in {sum(s.objects for s in sites):,} objects")
    assert out[1].split() == ["flat", "flat%", "sum%", "cum", "cum%", "stack", "(callers", "after", "<)"]
    total = sum(s.bytes for s in sites)
    first = out[2]
    assert first.endswith("  Main$DumpedStuff.<init>(Main.java:116) < Main.main(Main.java:167)")
    assert f"{100 * sites[0].bytes / total:5.1f}%" in first
    assert len(out) == 7


def test_sites_json_and_a_dump_without_stacks(capsys):
    assert main(["sites", str(dump_path(AGENT)), "--json", "-n", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    sites = hprofkit.open_heap(dump_path(AGENT)).allocation_sites()
    assert report["buckets"] == len(sites) and len(report["sites"]) == 3
    assert [(s["bytes"], s["cum_bytes"], len(s["frames"])) for s in report["sites"]] == [
        (s.bytes, s.cum_bytes, len(s.frames)) for s in sites[:3]]
    assert main(["sites", str(dump_path(JDK8))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("the dump records no allocation stacks") and "(no stack trace)" in out


def test_waste_prints_the_three_reports(capsys):
    name = "mat__openjdk_jdk11_04_x64.hprof.gz"
    assert main(["waste", str(dump_path(name)), "-n", "3", "--min-bytes", "16 KB"]) == 0
    out = capsys.readouterr().out
    heap = hprofkit.open_heap(dump_path(name))
    strings = heap.duplicate_strings()
    collections = heap.collection_waste()
    arrays = heap.large_arrays(16 << 10)
    assert f"Duplicate strings: {len(strings):,} texts held 2+ times" in out
    assert f'{strings[0].count:>8,} × "{strings[0].text}"' in out
    assert f"  {collections[0].class_name}\n" in out and f"{collections[0].instances:>9,}" in out
    assert f"Primitive arrays of 16.0 KiB or more: {len(arrays):,}" in out
    for a in arrays[:3]:
        assert f"{a.array.class_name} <0x{a.array.id:x}>" in out


def test_waste_json(capsys):
    name = "leakcanary__leak_service_binder.hprof"
    assert main(["waste", str(dump_path(name)), "--json", "-n", "4", "--min-count", "3", "--min-bytes", "4096"]) == 0
    report = json.loads(capsys.readouterr().out)
    heap = hprofkit.open_heap(dump_path(name))
    assert [(r["text"], r["count"], r["wasted_bytes"]) for r in report["duplicate_strings"]] == [
        tuple(r) for r in heap.duplicate_strings(min_count=3)[:4]]
    assert [r["class"] for r in report["collections"]] == [r.class_name for r in heap.collection_waste()[:4]]
    assert [r["id"] for r in report["large_arrays"]] == [a.array.id for a in heap.large_arrays(4096)[:4]]
    assert all(r["dominator"] is None or r["dominator"]["id"] for r in report["large_arrays"])


def test_waste_json_gives_every_kind_with_its_holders(capsys):
    name = "mat__openjdk_jdk11_04_x64.hprof.gz"
    assert main(["waste", str(dump_path(name)), "--json", "-n", "3", "--holders", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    w = hprofkit.open_heap(dump_path(name)).waste()
    assert report["total_bytes"] == w.total_bytes
    assert [(k["kind"], k["objects"], k["wasted_bytes"]) for k in report["kinds"]] == [
        (k.kind, k.objects, k.wasted_bytes) for k in w if k.objects]
    for row in report["kinds"]:
        kind = w[row["kind"]]
        assert [(i["id"], i["wasted_bytes"]) for i in row["items"]] == [
            (i.object.id, i.wasted_bytes) for i in kind.items[:3]]
        assert [(h["ref_type"], h["class_name"], h["name"], h["objects"]) for h in row["holders"]] == [
            (h.ref_type, h.class_name, h.name, h.objects) for h in kind.holders(2)]


def test_waste_kind_prints_one_kind_with_its_holders(capsys):
    name = "mat__openjdk_jdk11_04_x64.hprof.gz"
    assert main(["waste", str(dump_path(name)), "--kind", "zero_arrays", "-n", "2", "--holders", "3"]) == 0
    out = capsys.readouterr().out
    kind = hprofkit.open_heap(dump_path(name)).waste()["zero_arrays"]
    assert f"zero_arrays: {kind.objects:,} objects" in out and "Duplicate strings:" not in out
    for item in kind.items[:2]:
        assert f"{item.object.class_name} <0x{item.object.id:x}>" in out
    for holder in kind.holders(3):
        assert f"{holder.objects:>9,}  {holder}\n" in out


def test_waste_json_cuts_long_string_items(tmp_path, capsys):
    from hprofkit._cli_explore import JSON_TEXT_MAX
    heap = LeakyHeap()
    text = "y" * 5_000
    heap.cls("Holder", fields=[("a", "object")])
    heap.roots.append(("jni_global", heap.new("Holder", a=heap.string(text))))
    heap.write(tmp_path / "long.hprof")
    assert main(["waste", str(tmp_path / "long.hprof"), "--json", "--kind", "long_strings"]) == 0
    (kind,) = json.loads(capsys.readouterr().out)["kinds"]
    (item,) = kind["items"]
    assert (item["text"], item["length"]) == (text[:JSON_TEXT_MAX], len(text))
    assert kind["holders"][0]["class_name"] == "Holder" and kind["holders"][0]["name"] == "a"


@pytest.mark.parametrize("argv", [["threads", "x.hprof", "-n", "0"], ["sites", "x.hprof", "--depth", "0"],
                                  ["waste", "x.hprof", "--min-count", "1"], ["waste", "x.hprof", "--min-bytes", "lots"],
                                  ["waste", "x.hprof", "--kind", "nothing"], ["waste", "x.hprof", "--holders", "-1"],
                                  ["sites", "x.hprof", "--heap-dump", "z"]])
def test_bad_arguments_exit_2_with_the_usage_line(argv, capsys):
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    assert capsys.readouterr().err.startswith(f"usage: hprofkit {argv[0]}")


def test_waste_json_gives_a_long_strings_start_and_length(tmp_path, capsys):
    """#30: --json printed a duplicate String whole (50 MB for a 50 MB String); it gives its
    first JSON_TEXT_MAX characters and its length, as the text output cuts it."""
    from hprofkit._cli_explore import JSON_TEXT_MAX
    heap = LeakyHeap()
    text = "é" + "x" * 5_000
    heap.cls("Holder", fields=[("a", "object"), ("b", "object")])
    heap.roots.append(("jni_global", heap.new("Holder", a=heap.string(text), b=heap.string(text))))
    heap.write(tmp_path / "strings.hprof")
    assert main(["waste", str(tmp_path / "strings.hprof"), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["duplicate_strings"]
    assert (row["text"], row["length"], row["count"]) == (text[:JSON_TEXT_MAX], len(text), 2)


@pytest.mark.parametrize("command", ["threads", "sites", "waste"])
def test_unreadable_input_exits_1_with_one_line(command, tmp_path, capsys):
    bad = tmp_path / "bad.hprof"
    bad.write_bytes(b"JAVA PROFILE 1.0.2\0\0\0\0\x04" + b"\0" * 8 + b"\x1c\0\0\0\0\0\0\0\x40\x21")
    assert main([command, str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
