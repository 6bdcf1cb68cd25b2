"""Reachable objects: what every heap-level figure counts (#31, point 1; docs/reference/behaviour.md).

The live set is computed independently of hprofkit's marking (tests/visualvm.py LiveSet):
VisualVM's references of every object and its GC roots, walked in Python, plus each
object's class and a class's superclass and loader.  On dumps that hold much garbage (MAT's
JDK 8 sample: 60% of its bytes; py-hprof's example: 68%; an ART dump), the histogram,
duplicate Strings, large arrays, collections, retained_by groups, diff and the report count
exactly that set by default, everything with unreachable=True, and the complement in
unreachable_histogram(); semantics="visualvm" counts everything, as VisualVM does."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

import hprofkit
from hprofkit._report import write
from conftest import dump_path
from visualvm import LiveSet

GARBAGE_DUMPS = ["mat__oracle_jdk8_05_x64.hprof", "py-hprof__example-java.hprof.bz2",
                 "leakcanary__leak_service_binder.hprof", "mat__sun_jdk6_18_x32.hprof"]


@pytest.fixture(scope="module")
def seen(graph_oracle, plain_path):
    """(heap, oracle) per dump, made once for the module."""
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            path = plain_path(name)
            heap = hprofkit.open_heap(path)
            cache[name] = (path, heap, LiveSet(graph_oracle, path, heap))
        return cache[name]
    return get


def counts(rows) -> dict[int, int]:
    return {r.class_.class_id: r.instances for r in rows}


@pytest.mark.parametrize("name", GARBAGE_DUMPS)
def test_histograms_count_the_live_set(name, seen):
    path, heap, vv = seen(name)
    dead = set(vv.objects) - vv.live
    assert len(dead) > 300  # the dumps chosen hold garbage
    assert counts(heap.histogram()) == vv.by_class(heap, vv.live)
    assert counts(heap.unreachable_histogram()) == vv.by_class(heap, dead)
    assert counts(heap.histogram(unreachable=True)) == vv.by_class(heap, vv.objects)
    for rows, ids in ((heap.histogram(), vv.live), (heap.unreachable_histogram(), dead)):
        assert sum(r.shallow_size for r in rows) == sum(
            heap.object(i).shallow_size for i in ids if heap.object(i).kind != "class")
        assert [r.shallow_size for r in rows] == sorted((r.shallow_size for r in rows), reverse=True)
    # VisualVM counts garbage: under its semantics, so does the default.
    visualvm = hprofkit.open_heap(path, semantics="visualvm")
    assert counts(visualvm.histogram()) == counts(heap.histogram(unreachable=True))
    assert counts(visualvm.unreachable_histogram()) == counts(heap.unreachable_histogram())


@pytest.mark.parametrize("name", GARBAGE_DUMPS)
def test_waste_counts_the_live_set(name, seen):
    path, heap, vv = seen(name)
    for unreachable, ids in ((False, vv.live & set(vv.objects)), (True, set(vv.objects))):
        texts = Counter(vv.objects[i]["string"] for i in ids
                        if vv.objects[i]["class"] == "java.lang.String" and vv.objects[i].get("string") is not None
                        and heap.object(i).as_str() is not None)
        got = {d.text: d.count for d in heap.duplicate_strings(unreachable=unreachable)}
        assert got == {t: n for t, n in texts.items() if n >= 2}
        arrays = {i for i in ids if heap.object(i).kind == "primitive_array"}
        assert {a.array.id for a in heap.large_arrays(0, unreachable=unreachable)} == arrays
        lists = {r.class_name: r.instances for r in heap.collection_waste(unreachable=unreachable)}
        for cls in ("java.util.ArrayList", "java.util.Vector"):  # no wrapper owns them
            want = sum(1 for i in ids if vv.objects[i]["class"] == cls)
            assert lists.get(cls, 0) == want, (cls, unreachable)
    garbage_texts = [d for d in heap.duplicate_strings(unreachable=True) if d.text not in
                     {x.text for x in heap.duplicate_strings()}]
    assert garbage_texts or name.startswith("leakcanary")  # garbage Strings were counted before


@pytest.mark.parametrize("name", GARBAGE_DUMPS[:2])
def test_groups_and_diff_count_the_live_set(name, seen):
    path, heap, vv = seen(name)
    want = vv.by_class(heap, vv.live)
    groups = {g.key.class_id: g.objects for g in heap.retained_by("class") if g.key.name != "java.lang.Class"}
    assert groups == {k: n for k, n in want.items() if heap.object(k).name != "java.lang.Class"}
    (everything,) = heap.retained_by(lambda obj: "all")
    assert everything.objects == len(vv.live)
    (everything,) = heap.retained_by(lambda obj: "all", unreachable=True)
    assert everything.objects == heap.object_count
    other = hprofkit.open_heap(path)
    for unreachable in (None, True):
        result = hprofkit.diff(heap, other, unreachable=unreachable)
        assert result.rows == []  # the same dump
    histogram = hprofkit.heapdiff.class_histogram(heap)
    assert sum(n for n, _ in histogram.values()) == sum(want.values())


def test_report_shows_the_reachable_heap_and_the_garbage(seen, tmp_path):
    path, heap, vv = seen("mat__oracle_jdk8_05_x64.hprof")
    dead = set(vv.objects) - vv.live
    shallow = {i: heap.object(i).shallow_size for i in vv.objects if heap.object(i).kind != "class"}
    data = write(path, tmp_path / "r.html")
    overview = data["sections"]["overview"]
    assert overview["counts"] == "reachable"
    assert overview["total"] == sum(s for i, s in shallow.items() if i in vv.live)
    assert overview["unreachable"] == {"objects": sum(1 for i in shallow if i in dead),
                                       "bytes": sum(s for i, s in shallow.items() if i in dead)}
    assert overview["unreachable"]["bytes"] > overview["total"]  # 60% garbage
    assert data["sections"]["suspects"]["threshold"] == int(overview["total"] * 0.10)
    garbage = data["sections"]["unreachable"]
    assert garbage["bytes"] == overview["unreachable"]["bytes"] and garbage["counted"] is False
    assert {int(r[1], 16): r[2] for r in garbage["rows"]} == vv.by_class(heap, dead)
    rows = {int(r[1], 16): r[2] for r in data["sections"]["histogram"]["rows"]}
    assert rows == vv.by_class(heap, vv.live)
    strings = {r[0]: r[1] for r in data["sections"]["waste"]["strings"]["rows"]}
    assert strings == {d.text: d.count for d in heap.duplicate_strings()}
    everything = write(path, tmp_path / "all.html", unreachable=True)["sections"]
    assert everything["overview"]["counts"] == "all"
    assert everything["overview"]["total"] == sum(shallow.values())
    assert everything["unreachable"]["counted"] is True


def test_command_line_counts_the_live_set(seen):
    path, heap, vv = seen("mat__oracle_jdk8_05_x64.hprof")

    def waste(*flags: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "hprofkit", "waste", str(path), "--json", "-n", "100000",
                              *flags], capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    default, everything = waste(), waste("--unreachable")
    assert default["counted"] == "reachable" and everything["counted"] == "all"
    assert {s["text"]: s["count"] for s in default["duplicate_strings"]} == {
        d.text: d.count for d in heap.duplicate_strings()}
    assert {s["text"]: s["count"] for s in everything["duplicate_strings"]} == {
        d.text: d.count for d in heap.duplicate_strings(unreachable=True)}
    text = subprocess.run([sys.executable, "-m", "hprofkit", "waste", str(path)], capture_output=True, text=True,
                          check=True).stdout
    assert text.startswith("Counting reachable objects")


def test_bad_flags():
    heap = hprofkit.open_heap(dump_path("heapdump__small_heap.bin"))
    for call in (heap.histogram, heap.duplicate_strings, heap.collection_waste, lambda **kw: heap.large_arrays(1, **kw),
                 lambda **kw: heap.retained_by("class", **kw)):
        with pytest.raises(TypeError, match="unreachable must be"):
            call(unreachable="yes")
    heap.close()
    with pytest.raises(ValueError, match="closed"):
        heap.histogram()
