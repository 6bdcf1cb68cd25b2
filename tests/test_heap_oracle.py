"""The heap graph agrees with an independent parser, VisualVM's heap library
(../shared/tools/oracle/graph.sh), on every shared dump and on fresh HeapGen
and androidized dumps: each object's class, shallow size, outbound reference
ids and String text; classes (super, instance counts, bytes); GC roots per
kind; field names and values of a sample of objects.  Shallow sizes are VisualVM's model,
asked for (size_model="visualvm"): the default, the JVM's own layout read off the addresses,
differs from it (class objects with their statics; real headers of the 64-bit JDK 5 to 7
dumps), and tests/test_layout_sizes.py checks it against the addresses."""

from __future__ import annotations

import math
import random
import struct
from collections import Counter

import pytest

import hprofkit
from conftest import INVENTORY

ORACLE_DUMPS = [e["file"] for e in INVENTORY if e["instances"]]
# Field values are compared on a sample of objects of one dump per producer,
# version and id size (each comparison costs a JVM run).
FIELD_DUMPS = {"heapdump__small_heap.bin", "hprof-slurp__hprof-64.bin", "leakcanary__leak_service_binder.hprof",
               "mat__openjdk_jdk11_04_x64.hprof.gz", "mat__oracle_jdk7_21_hprofagent.hprof",
               "mat__oracle_jdk8_05_x64.hprof", "mat__sun_jdk6_31_hprofagent_compressedOops.hprof",
               "platform_art__RI.hprof", "py-hprof__example-java.hprof.bz2"}

# VisualVM's names for the root kinds.
ROOT_KINDS = {
    "UNKNOWN": "unknown", "JNI_GLOBAL": "JNI global", "JNI_LOCAL": "JNI local", "JAVA_FRAME": "Java frame",
    "NATIVE_STACK": "native stack", "STICKY_CLASS": "sticky class", "THREAD_BLOCK": "thread block",
    "MONITOR_USED": "monitor used", "THREAD_OBJECT": "thread object", "INTERNED_STRING": "interned string",
    "FINALIZING": "finalizing", "DEBUGGER": "debugger", "REFERENCE_CLEANUP": "reference cleanup",
    "VM_INTERNAL": "VM internal", "JNI_MONITOR": "JNI monitor",
}


def check_objects(heap: hprofkit.Heap, lines: list[dict]) -> None:
    """Every object VisualVM lists has our class, size, references and text."""
    seen_instances = 0
    problems = []
    for line in lines:
        obj = heap.object(line["id"])
        assert (obj.kind == "class") == ("class_of" in line)
        if obj.kind != "class":
            seen_instances += 1
        ours = (obj.class_name, obj.shallow_size,
                Counter(r.target_id for r in obj.references() if r.target is not None))
        theirs = (line["class"], line["size"], Counter(line["refs"]))
        if ours != theirs:
            problems.append((line["id"], ours, theirs))
        if "string" in line and line["string"] is not None:
            if obj.as_str() != line["string"]:
                problems.append((line["id"], obj.as_str(), line["string"]))
    assert problems[:5] == []
    # VisualVM lists every instance and array (class objects only where they
    # lie among them): the same number of non-class objects.
    ours = sum(1 for o in heap.objects() if o.kind != "class")
    assert seen_instances == ours


def check_classes(heap: hprofkit.Heap, lines: list[dict]) -> None:
    theirs = {c["id"]: (c["name"], c["super"], c["instances"], c["bytes"]) for c in lines}
    ours = {}
    for cls in heap.classes:
        sup = cls.superclass.class_id if cls.superclass is not None else None
        size = sum(o.shallow_size for o in cls.instances()) if cls.instance_size is None else \
            cls.instance_count * cls.instance_size
        ours[cls.class_id] = (cls.name, sup, cls.instance_count, size)
    assert ours == theirs


def check_roots(heap: hprofkit.Heap, lines: list[dict]) -> None:
    theirs = Counter((r["kind"], r["id"]) for r in lines)
    ours = Counter((ROOT_KINDS[r.kind], r.object_id if r.object is not None else None) for r in heap.gc_roots)
    assert ours == theirs


def check_fields(heap: hprofkit.Heap, lines: list[dict]) -> None:
    """Field names, declaring classes, types and values of sampled objects
    (a class object's fields are its statics, as VisualVM shows them)."""
    for line in lines:
        obj = heap.object(line["id"])
        fields = obj.statics() if obj.kind == "class" else obj.fields()
        theirs = [f for f in line["fields"] if f["name"] != "<classLoader>"]
        assert [(f.declaring_class.name, f.name, f.type) for f in fields] == \
            [(f["class"], f["name"], f["type"]) for f in theirs], line["id"]
        for ours, their in zip(fields, theirs):
            assert same_value(heap, ours, their["value"]), (line["id"], ours, their)


def same_value(heap: hprofkit.Heap, field, text: str | None) -> bool:
    """Whether our value is the one VisualVM prints as `text`."""
    value = field.value
    if field.type == "object":
        if value is not None:
            return text == str(value.id)
        if text == "0":
            return True
        try:  # a reference to an object the dump lacks reads as None
            heap.object(int(text))
        except KeyError:
            return True
        return False
    if field.type == "boolean":
        return text == ("true" if value else "false")
    if field.type in ("float", "double"):
        theirs = float(text)
        if math.isnan(theirs):
            return math.isnan(value)
        if field.type == "float":
            theirs = struct.unpack(">f", struct.pack(">f", theirs))[0]
        return value == theirs
    return text == str(value)


def compare(heap: hprofkit.Heap, path, graph_oracle, sample_fields: int = 40) -> None:
    check_objects(heap, graph_oracle.run(path, "objects"))
    check_classes(heap, graph_oracle.run(path, "classes"))
    check_roots(heap, graph_oracle.run(path, "roots"))
    if not sample_fields:
        return
    ids = sorted(o.id for o in heap.objects() if o.kind in ("instance", "class"))
    sample = random.Random(11).sample(ids, min(sample_fields, len(ids)))
    check_fields(heap, graph_oracle.run(path, "object", *map(str, sample)))


@pytest.mark.parametrize("name", ORACLE_DUMPS)
def test_heap_equals_oracle(name, graph_oracle, plain_path):
    path = plain_path(name)
    with hprofkit.open_heap(path, size_model="visualvm") as heap:
        compare(heap, path, graph_oracle, sample_fields=40 if name in FIELD_DUMPS else 0)


def test_heap_equals_oracle_on_fresh_heapgen_dump(heapgen_dumps, graph_oracle):
    with hprofkit.open_heap(heapgen_dumps[0], size_model="visualvm") as heap:
        compare(heap, heapgen_dumps[0], graph_oracle)


def test_heap_equals_oracle_on_androidized_dump(android_heapgen_dump, graph_oracle):
    with hprofkit.open_heap(android_heapgen_dump, size_model="visualvm") as heap:
        compare(heap, android_heapgen_dump, graph_oracle)
