"""Issue #19, wrong results: names a dump lacks get one stable placeholder
everywhere (hp_unnamed): a class without LOAD_CLASS, or whose LOAD_CLASS
names a missing STRING, is "<unnamed class 0x1a2b>" (its id); a field or a
static whose name STRING is missing is "<unnamed field #N>" / "<unnamed
static #N>" (its place among its class's own); a stack frame's missing
method is "<unnamed method>".  Class names printed the literal "<unknown
class 0x%llx>" on Python 3.10 and 3.11; a static without a name made
find_leaks fail with AssertionError, Field.name was None and show printed
"Holder.None"."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import hprofkit
from hprofkit import match
from hprofkit.writer import HprofWriter
from leaky_heap import android_app, watch

OBJECT, NAMELESS, MISSING_STRING, FRAME_ID = 0x100, 0x1a2b, 0x1a40, 0x300
MISSING_SID = 0x7777  # a STRING id no record of the dump has


def classes_without_names(path) -> None:
    """Class 0x1a2b has no LOAD_CLASS, class 0x1a40's LOAD_CLASS names a
    STRING the dump lacks; an instance of each; a thread whose frame's
    method name is missing too."""
    with HprofWriter(str(path), version="1.0.2", id_size=4) as w:
        w.load_class(OBJECT, "java/lang/Object")
        w.load_class(MISSING_STRING, MISSING_SID)
        w.stack_frame(FRAME_ID, MISSING_SID, "()V", "Main.java", w.class_serial(OBJECT), line=7)
        w.stack_trace(1, 1, [FRAME_ID])
        with w.heap_dump() as h:
            h.class_dump(OBJECT)
            h.class_dump(NAMELESS, super_id=OBJECT, fields=[("n", "int")])
            h.class_dump(MISSING_STRING, super_id=OBJECT, fields=[("n", "int")])
            h.instance(0x2000, NAMELESS, values=[1])
            h.instance(0x2008, MISSING_STRING, values=[2])
            h.root_thread_object(0x2008, 1, 1)
            h.root_java_frame(0x2000, 1, 0)
        w.heap_dump_end()


def fields_without_names(path) -> dict[str, int]:
    """A destroyed activity, watched, held by a static of com.example.Holder
    whose name STRING is missing; Holder has an instance field without a
    name too, holding a second activity."""
    heap = android_app()
    watches: list[int] = []
    ids = {"static": heap.new("com.example.MainActivity", mDestroyed=True),
           "field": heap.new("com.example.MainActivity", mDestroyed=True)}
    heap.cls("com.example.Holder", statics={"sNamed": ("object", None), MISSING_SID: ("object", ids["static"])},
             fields=[("named", "int"), (MISSING_SID + 1, "object")])
    ids["holder"] = heap.new("com.example.Holder")
    heap.objects[-1][3][MISSING_SID + 1] = ids["field"]  # the value of the field without a name
    heap.set_static("com.example.Leaks", "sActivity", "object", ids["holder"])
    watch(heap, watches, ids["static"], "k-static")
    heap.set_static("com.example.Leaks", "sWatches", "object", heap.array(watches))
    heap.write(path)
    return ids


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", *args], capture_output=True, text=True, timeout=120)


def test_a_class_without_a_name(tmp_path):
    path = tmp_path / "classes.hprof"
    classes_without_names(path)
    names = {NAMELESS: "<unnamed class 0x1a2b>", MISSING_STRING: "<unnamed class 0x1a40>"}
    with hprofkit.open_heap(path) as heap:
        for class_id, name in names.items():
            cls = heap.find_class(name)
            assert cls is not None and cls.class_id == class_id and cls.name == name
            assert [obj.class_name for obj in cls.instances()] == [name]
        frame = next(r for r in heap.gc_roots if r.kind == "JAVA_FRAME").frame
        assert (frame.class_name, frame.method, frame.line) == ("java.lang.Object", "<unnamed method>", 7)
        assert set(heap.tables(retained=False)["classes"].column("name").to_pylist()) >= set(names.values())
    histogram = {row.class_id: row.name for row in hprofkit.stats(path).histogram}
    assert {histogram[class_id] for class_id in names} == set(names.values())
    proc = run("stats", str(path))
    assert proc.returncode == 0 and "<unnamed class 0x1a2b>" in proc.stdout and "%llx" not in proc.stdout
    proc = run("top", str(path))
    assert proc.returncode == 0 and "<unnamed class 0x1a2b>" in proc.stdout and "%llx" not in proc.stdout
    proc = run("show", str(path), "<unnamed class 0x1a40>")
    assert proc.returncode == 0 and proc.stdout.startswith("class <unnamed class 0x1a40>\n")


def test_fields_without_names(tmp_path):
    path = tmp_path / "fields.hprof"
    ids = fields_without_names(path)
    with hprofkit.open_heap(path) as heap:
        holder = heap.find_class("com.example.Holder")
        assert [f.name for f in holder.statics()] == ["sNamed", "<unnamed static #1>"]
        assert [f.name for f in holder.fields()] == ["named", "<unnamed field #1>"]
        instance = heap.object(ids["holder"])
        assert [f.name for f in instance.fields()] == ["named", "<unnamed field #1>"]
        assert instance["<unnamed field #1>"].id == ids["field"]       # looked up by its placeholder
        assert holder["<unnamed static #1>"].id == ids["static"]
        assert {r.name for r in instance.references()} == {"<unnamed field #1>"}
        assert {r.name for r in heap.object(ids["static"]).referrers()} >= {"<unnamed static #1>"}
        path_to = heap.path_to_root(heap.object(ids["field"]))
        assert "Holder.<unnamed field #1>" in str(path_to) and "None" not in str(path_to)
        names = set(heap.tables(retained=False)["references"].column("name").to_pylist())
        assert {"<unnamed static #1>", "<unnamed field #1>"} <= names and None not in names
        # find_leaks failed with AssertionError (a hop named None).
        leaks = {leak.object.id: str(leak) for leak in heap.find_leaks()}  # both activities are destroyed
        assert set(leaks) == {ids["static"], ids["field"]}
        assert "static Holder.<unnamed static #1>" in leaks[ids["static"]]
        assert "Holder.<unnamed field #1>" in leaks[ids["field"]]
        # A matcher names the field by its placeholder.
        unwatched = heap.path_to_root(heap.object(ids["static"]),
                                      exclude=[match.static_field("com.example.Holder", "<unnamed static #1>")])
        assert unwatched is None or "<unnamed static #1>" not in str(unwatched)
    proc = run("show", str(path), "com.example.Holder")
    assert proc.returncode == 0 and "<unnamed static #1>: object = " in proc.stdout and "None:" not in proc.stdout
    proc = run("path", str(path), hex(ids["field"]))
    assert proc.returncode == 0 and "Holder.<unnamed field #1>" in proc.stdout and ".None" not in proc.stdout
    proc = run("leaks", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    last_hops = {leak["object"]["id"]: [node["reference"]["name"] for node in leak["trace"] if "reference" in node][-1]
                 for leak in json.loads(proc.stdout)["leaks"]}
    assert last_hops == {ids["static"]: "<unnamed static #1>", ids["field"]: "<unnamed field #1>"}


# -- placeholders and a mapping's clear names compose (issue #20 meets #19) ---------------------

def test_a_mapping_keeps_the_placeholders(tmp_path):
    """A mapping renames what has a name and leaves a placeholder where the dump has none: a class
    without a name keeps '<unnamed class 0x1a2b>' (the mapping cannot name it), a static or field
    without one keeps '<unnamed static #1>' / '<unnamed field #1>' beside its renamed neighbours,
    never a crash, a None or a warning."""
    classes, fields = tmp_path / "classes.hprof", tmp_path / "fields.hprof"
    classes_without_names(classes)
    ids = fields_without_names(fields)
    mapping_file = tmp_path / "mapping.txt"
    mapping_file.write_text("com.example.Base -> java.lang.Object:\n"
                            "com.example.ClearHolder -> com.example.Holder:\n"
                            "    java.lang.Object sHeld -> sNamed\n"
                            "    int count -> named\n")
    mapping = hprofkit.Mapping.read(mapping_file)
    with warnings.catch_warnings():
        warnings.simplefilter("error", hprofkit.MappingWarning)
        with hprofkit.open_heap(classes, mapping=mapping) as heap:
            base = heap.find_class("com.example.Base")
            assert base is not None and base.obfuscated_name == "java.lang.Object"
            for class_id, name in {NAMELESS: "<unnamed class 0x1a2b>", MISSING_STRING: "<unnamed class 0x1a40>"}.items():
                cls = heap.find_class(name)
                assert cls is not None and cls.class_id == class_id
                assert cls.name == cls.obfuscated_name == name and cls.superclass is base
        with warnings.catch_warnings():  # stats' rows are the classes with instances: the mapping lists none
            warnings.simplefilter("ignore", hprofkit.MappingWarning)
            histogram = {row.class_id: row for row in hprofkit.stats(classes, mapping=mapping).histogram}
        assert histogram[NAMELESS].name == "<unnamed class 0x1a2b>" and histogram[NAMELESS].obfuscated_name is None
        with hprofkit.open_heap(fields, mapping=mapping) as heap:
            holder = heap.find_class("com.example.ClearHolder")
            assert holder is not None and holder.obfuscated_name == "com.example.Holder"
            assert [f.name for f in holder.statics()] == ["sHeld", "<unnamed static #1>"]
            assert [f.name for f in holder.fields()] == ["count", "<unnamed field #1>"]
            instance = heap.object(ids["holder"])
            assert [f.name for f in instance.fields()] == ["count", "<unnamed field #1>"]
            assert instance["<unnamed field #1>"].id == ids["field"] and holder["<unnamed static #1>"].id == ids["static"]
            leaks = {leak.object.id: str(leak) for leak in heap.find_leaks()}
            assert set(leaks) == {ids["static"], ids["field"]}
            assert "static ClearHolder.<unnamed static #1>" in leaks[ids["static"]]
            assert "ClearHolder.<unnamed field #1>" in leaks[ids["field"]]
    proc = run("show", str(fields), "com.example.ClearHolder", "--mapping", str(mapping_file))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith("class com.example.ClearHolder\n") and "<unnamed static #1>: object = " in proc.stdout
    proc = run("path", str(fields), hex(ids["field"]), "--mapping", str(mapping_file))
    assert proc.returncode == 0 and "ClearHolder.<unnamed field #1>" in proc.stdout


def test_a_class_named_by_an_empty_string_has_tables(tmp_path):
    """A LOAD_CLASS naming a STRING of 0 bytes, the first class: tables() raised MemoryError,
    the names' work buffer being asked for 0 bytes before any was made (found by fuzz_heap)."""
    path = tmp_path / "empty-name.hprof"
    empty = 0x80  # first by id and in the file
    with HprofWriter(str(path), version="1.0.2", id_size=4) as w:
        w.load_class(empty, "")
        w.load_class(OBJECT, "java/lang/Object")
        with w.heap_dump() as h:
            h.class_dump(empty, fields=[("next", "object")])
            h.class_dump(OBJECT)
            h.instance(0x2000, empty, values=[0x2008])
            h.instance(0x2008, empty, values=[0])
        w.heap_dump_end()
    with hprofkit.open_heap(path) as heap:
        assert heap.object(empty).name == ""
        tables = heap.tables()
    refs = tables["references"].to_pylist()
    assert [(r["source_id"], r["target_id"], r["name"]) for r in refs] == [(0x2000, 0x2008, "next")]
    assert "" in [c["name"] for c in tables["classes"].to_pylist()]
