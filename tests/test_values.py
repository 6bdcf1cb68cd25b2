"""Collections, values, threads, allocation sites and waste (issue #24), each
against an independent computation: VisualVM's heap library reads the dump
(tests/peers/VisualVMValues.java) and tests/vvvalues.py walks, sizes and
measures the collections again from those field values; the allocation
sites against hprofkit's record iterator, which never touches the heap
index.  On the shared dumps of every JDK (5 to 11) and Android layout, and
on a dump of every collection this machine's JDK writes
(tests/peers/CollectionsHeap.java) and its ART-style rewrite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import hprofkit
from hprofkit.writer import HprofWriter
from conftest import SHARED_TOOLS, dump_path, kept_dump, peer, run_androidize
import hostile
from leaky_heap import LeakyHeap
from vvvalues import VV, run_peer, shared_arrays, walk, wasted

# One dump per producer, JDK and layout family (each costs a VisualVM run): JDK 5 (HashMap's
# NULL_KEY, buckets backward), JDK 6 (LinkedList's header, ConcurrentHashMap's segments, TreeMap,
# PriorityQueue), JDK 7 (ConcurrentSkipListMap), JDK 8 (Node, head/after, first/last, ArrayDeque),
# JDK 11 (tree bins, TreeBin, ImmutableCollections, Properties' map), Android before N
# (entryForNullKey, LinkedEntry, Harmony's WeakHashMap, ArrayMap, SparseArray...), the hprof
# agent (arrays without their trailing nulls) and JDK 9's example.
COLLECTION_DUMPS = ["mat__sun_jdk5_64bit.hprof", "mat__HeapDumpSample.hprof", "mat__sun_jdk6_18_x64.hprof",
                    "mat__oracle_jdk7_21_x64.hprof", "mat__oracle_jdk8_05_x64.hprof", "hprof-slurp__hprof-64.bin",
                    "mat__openjdk_jdk11_04_x64.hprof.gz", "leakcanary__leak_service_binder.hprof",
                    "platform_tools_base__dialer.android-hprof", "platform_art__RI.hprof",
                    "mat__oracle_jdk7_21_hprofagent.hprof", "py-hprof__example-java.hprof.bz2"]
# The issue's classes: every one that has instances in a dump above must be walked in it.
ISSUE_CLASSES = {
    "java.util.HashMap", "java.util.LinkedHashMap", "java.util.HashSet", "java.util.LinkedHashSet",
    "java.util.Hashtable", "java.util.WeakHashMap", "java.util.IdentityHashMap", "java.util.TreeMap",
    "java.util.TreeSet", "java.util.concurrent.ConcurrentHashMap", "java.util.ArrayList", "java.util.LinkedList",
    "java.util.ArrayDeque", "java.util.Vector", "java.util.concurrent.CopyOnWriteArrayList",
    "java.util.PriorityQueue", "android.util.ArrayMap", "android.util.ArraySet", "android.util.SparseArray",
    "android.util.LongSparseArray", "android.util.SparseIntArray"}


@pytest.fixture(scope="session")
def collections_dump(tmp_path_factory) -> Path:
    """Every collection layout of this machine's JDK, with null keys, tree bins, counter cells."""
    program = Path(__file__).parent / "peers" / "CollectionsHeap.java"
    java = peer("java")

    def make(out: Path) -> Path:
        subprocess.run([java, "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED", str(program), str(out)],
                       check=True, capture_output=True, timeout=600)
        return out
    return kept_dump(tmp_path_factory, "collections.hprof", make, program, Path(os.path.realpath(java)))


@pytest.fixture(scope="session")
def android_collections_dump(collections_dump, tmp_path_factory) -> Path:
    return kept_dump(tmp_path_factory, "collections-art.hprof", lambda out: run_androidize(collections_dump, out),
                     collections_dump, SHARED_TOOLS / "androidize" / "androidize.py")


def ours(value):
    """A key, element or value as an id (objects) or itself (primitives)."""
    return value.id if isinstance(value, hprofkit.HeapObject) else value


def compare_collections(heap: hprofkit.Heap, vv: VV) -> Counter:
    """Every collection VisualVM's values make up equals hprofkit's: shape, items in order,
    declared size, and items + stale entries = that size.  Returns the classes walked."""
    walked: Counter = Counter()
    problems = []
    for oid, line in vv.objects.items():
        if "fields" not in line or "class_of" in line:
            continue
        theirs = walk(vv, oid)
        obj = heap.object(oid)
        measure = obj._measure()
        if theirs is None:
            if measure is not None:
                problems.append((line["class"], oid, "hprofkit walks what the test does not", measure[0]))
            continue
        if measure is None:
            problems.append((line["class"], oid, "not walked"))
            continue
        shape, size, capacity, _wasted, _inner = measure
        items = obj.entries() if shape == "map" else obj.elements()
        got = [(ours(k), ours(v)) for k, v in items] if shape == "map" else [ours(e) for e in items]
        want = ([(vv.norm(k), vv.norm(v)) for k, v in theirs.items] if theirs.shape == "map"
                else [vv.norm(e) for e in theirs.items])
        if shape != theirs.shape or got != want:
            problems.append((line["class"], oid, shape, theirs.shape, got[:6], want[:6]))
        if size != theirs.size:
            problems.append((line["class"], oid, "size", size, theirs.size))
        if theirs.size is not None and len(got) + theirs.stale != theirs.size:
            problems.append((line["class"], oid, "count", len(got), theirs.stale, theirs.size))
        if not theirs.view and capacity != theirs.capacity:
            problems.append((line["class"], oid, "capacity", capacity, theirs.capacity))
        walked[line["class"]] += 1
    assert problems[:5] == []
    return walked


@pytest.mark.parametrize("name", COLLECTION_DUMPS)
def test_collections_equal_a_walk_of_visualvm_values(name, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    vv = VV(run_peer(path, "values"))
    walked = compare_collections(heap, vv)
    present = {c.name for c in heap.classes if c.instance_count and c.name in ISSUE_CLASSES}
    assert present <= set(walked), present - set(walked)
    assert sum(walked.values()) > 40


def test_collections_of_this_jdk_equal_a_walk_of_visualvm_values(collections_dump, android_collections_dump):
    for path in (collections_dump, android_collections_dump):
        heap = hprofkit.open_heap(path)
        walked = compare_collections(heap, VV(run_peer(path, "values")))
        assert len(walked) >= 45, sorted(walked)


def test_collections_of_this_jdk_hold_what_the_program_put(collections_dump):
    """What CollectionsHeap.java put, read back: null keys, tree bins, counter cells, order."""
    heap = hprofkit.open_heap(collections_dump)
    keep = heap.find_class("CollectionsHeap")["KEEP"].elements()

    def text(value):
        return value.value if isinstance(value, hprofkit.HeapObject) else value

    by_class = defaultdict(list)
    for obj in keep:
        by_class[obj.class_name].append(obj)
    hash_map, trees = by_class["java.util.HashMap"][:2]
    entries = {text(k): text(v) for k, v in hash_map.entries()}
    assert entries[None] == "null-key" and entries["null-value"] is None and len(entries) == 22
    assert len(trees.entries()) == 120  # 80 in one tree bin, still linked by next
    assert heap.find_class("java.util.HashMap$TreeNode").instance_count >= 80
    access = by_class["java.util.LinkedHashMap"][1]
    assert [text(k) for k, _ in access.entries()][-2:] == ["a3", "a0"]  # access order
    weak = by_class["java.util.WeakHashMap"][0]
    assert {text(k) for k, _ in weak.entries()} == {None, *(f"w{i}" for i in range(10))}
    chm = by_class["java.util.concurrent.ConcurrentHashMap"][0]
    assert chm["counterCells"] is not None and len(chm.entries()) == 120
    assert heap.find_class("java.util.concurrent.ConcurrentHashMap$TreeBin").instance_count >= 1
    tree = by_class["java.util.TreeMap"][0]
    assert [text(k) for k, _ in tree.entries()] == sorted(f"k{i:03d}" for i in range(40))
    deque = by_class["java.util.ArrayDeque"][0]
    assert [text(e) for e in deque.elements()] == [f"dq{i}" for i in range(20, 30)] + [f"more{i}" for i in range(20)]
    nested = by_class["java.util.Collections$UnmodifiableCollection"][0]
    assert [text(e) for e in nested.elements()] == ["nest0", "nest1"]
    with pytest.raises(TypeError, match="not a collection"):
        by_class["java.util.EnumMap"][0].entries()
    assert [text(e) for e in by_class["java.util.Arrays$ArrayList"][0].elements()] == ["as", "list", None]


def test_collection_kinds_refuse_the_other_question(collections_dump):
    heap = hprofkit.open_heap(collections_dump)
    a_list = next(heap.find_class("java.util.ArrayList").instances())
    a_map = next(heap.find_class("java.util.HashMap").instances())
    with pytest.raises(TypeError, match="java.util.ArrayList is a list: use elements"):
        a_list.entries()
    with pytest.raises(TypeError, match="java.util.HashMap is a map: use entries"):
        a_map.elements()
    string = next(heap.find_class("java.lang.String").instances())
    with pytest.raises(TypeError, match="not a collection"):
        string.elements()
    with pytest.raises(TypeError, match="no fill ratio"):
        string.fill_ratio
    ints = next(heap.find_class("int[]").instances())
    assert ints.elements() == ints.tolist()


def test_fill_ratio_is_size_over_capacity(collections_dump):
    heap = hprofkit.open_heap(collections_dump)
    for obj in heap.find_class("java.util.ArrayList").instances():
        array = obj["elementData"]
        assert obj.fill_ratio == (obj["size"] / len(array) if len(array) else None)
    for obj in heap.find_class("java.util.HashMap").instances():
        table = obj["table"]
        assert obj.fill_ratio == (obj["size"] / len(table) if table is not None and len(table) else None)
    linked = next(heap.find_class("java.util.LinkedList").instances())
    assert linked.fill_ratio is None
    array = next(o for o in heap.find_class("java.lang.Object[]").instances() if len(o))
    assert array.fill_ratio == sum(e is not None for e in array.tolist()) / len(array)


# ---- values --------------------------------------------------------------------------------

BOXES = {"java.lang.Integer", "java.lang.Long", "java.lang.Short", "java.lang.Byte", "java.lang.Character",
         "java.lang.Boolean", "java.lang.Float", "java.lang.Double"}


@pytest.mark.parametrize("name", ["mat__openjdk_jdk11_04_x64.hprof.gz", "leakcanary__leak_service_binder.hprof",
                                  "mat__sun_jdk6_18_x64.hprof"])
def test_value_reads_boxes_strings_and_enums_as_visualvm(name, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    vv = VV(run_peer(path, "values"))
    enums = {c.name for c in heap.classes if hprofkit._values.is_enum(c)}
    seen = Counter()
    for oid, line in vv.objects.items():
        cls = line["class"]
        if "fields" not in line or "class_of" in line:
            continue
        obj = heap.object(oid)
        if cls == "java.lang.String":
            assert obj.value == line["string"]
        elif cls in BOXES:
            want = vv.get(oid, "value")
            assert obj.value == want and type(obj.value) is type(want), (oid, obj.value, want)
        elif cls in enums:
            constant = vv.get(oid, "name")
            assert obj.value == (vv.objects[constant]["string"] if constant else None)
        else:
            with pytest.raises(TypeError, match="has no value"):
                obj.value
            continue
        seen["string" if cls == "java.lang.String" else "box" if cls in BOXES else "enum"] += 1
    assert seen["string"] > 100 and seen["box"] > 5 and seen["enum"] > 5, seen


def test_handles_are_true_classes_have_no_length_arrays_iterate():
    """Regression (issue #24): bool(cls) raised "only arrays have a length"."""
    heap = hprofkit.open_heap(dump_path("mat__oracle_jdk8_05_x64.hprof"))
    cls = heap.find_class("java.util.HashMap")
    assert bool(cls) is True
    assert (cls or None) is cls
    with pytest.raises(TypeError, match="instance_count"):
        len(cls)
    with pytest.raises(TypeError, match="instances"):
        iter(cls)
    empty = next(o for o in heap.objects() if o.kind == "object_array" and len(o) == 0)
    assert bool(empty) is True
    ints = next(o for o in heap.find_class("int[]").instances() if len(o) > 2)
    assert list(ints) == ints.tolist() and list(iter(ints))[0] == ints[0]
    objects = next(o for o in heap.find_class("java.lang.Object[]").instances() if len(o) > 2)
    assert list(objects) == objects.tolist()
    instance = next(heap.find_class("java.util.HashMap").instances())
    assert bool(instance)
    with pytest.raises(TypeError, match="only arrays"):
        list(instance)


# ---- androidx: no shared dump holds its collections -------------------------------------------

# Fields of androidx.collection's classes: its Java releases (1.0-1.2) and its Kotlin ones
# (1.3+, where DELETED is a static of the file's class, SparseArrayCompatKt).
ANDROIDX = {
    "java": {"map": ("mHashes", "mArray", "mSize"), "set": ("mHashes", "mArray", "mSize"),
             "sparse": ("mGarbage", "mKeys", "mValues", "mSize"), "deleted_in": ""},
    "kotlin": {"map": ("hashes", "keysAndValues", "_size"), "set": ("hashes", "array", "_size"),
               "sparse": ("garbage", "keys", "values", "size"), "deleted_in": "Kt"},
}


def _androidx_dump(path: Path, flavour: str) -> dict[str, list]:
    """A dump of androidx collections as `flavour` lays them out, with DELETED slots, and
    what each one holds: {class name: [(key, value id) or element id]}."""
    spec = ANDROIDX[flavour]
    ids = iter(range(0x1000, 0x100000, 0x10))
    classes: dict[str, tuple[int, str | None, list, list]] = {}

    def cls(name, fields=(), statics=(), sup="java.lang.Object"):
        classes[name] = (next(ids), sup, list(fields), list(statics))

    cls("java.lang.Object", sup=None)
    cls("java.lang.Object[]")
    cls("java.lang.String", [("value", "object"), ("hash", "int")])
    objects: list = []
    obj = lambda: objects.append(("instance", next(ids), "java.lang.Object", {})) or objects[-1][1]  # noqa: E731

    def string(text):
        chars = next(ids)
        objects.append(("chars", chars, text))
        objects.append(("instance", next(ids), "java.lang.String", {"value": chars}))
        return objects[-1][1]

    def array(kind, items):
        objects.append((kind, next(ids), items))
        return objects[-1][1]

    want: dict[str, list] = {}
    deleted = {name: obj() for name in ("SparseArrayCompat", "LongSparseArray")}
    for name, holder in deleted.items():
        statics = [("DELETED", "object", holder)]
        if spec["deleted_in"]:
            cls(f"androidx.collection.{name}{spec['deleted_in']}", statics=statics)
            statics = []
        cls(f"androidx.collection.{name}", [(f, t) for f, t in zip(spec["sparse"], ("boolean", "object", "object",
                                                                                    "int"))], statics)
    hashes, pairs, size = spec["map"]
    cls("androidx.collection.SimpleArrayMap", [(hashes, "object"), (pairs, "object"), (size, "int")])
    cls("androidx.collection.ArrayMap", sup="androidx.collection.SimpleArrayMap")  # walked as its superclass
    hashes_s, elems, size_s = spec["set"]
    cls("androidx.collection.ArraySet", [(hashes_s, "object"), (elems, "object"), (size_s, "int")])

    def new(name, **values):
        objects.append(("instance", next(ids), name, values))
        return objects[-1][1]

    for name in ("androidx.collection.SimpleArrayMap", "androidx.collection.ArrayMap"):
        k1, v1, k2, v2 = string("a"), obj(), string("b"), obj()
        new(name, **{hashes: array("int", [1, 2, 0, 0]), pairs: array("object", [k1, v1, k2, v2, 0, 0, 0, 0]),
                     size: 2})
        want[name] = [(k1, v1), (k2, v2)]
    e1, e2 = string("x"), string("y")
    new("androidx.collection.ArraySet", **{hashes_s: array("int", [5, 6, 0]), elems: array("object", [e1, e2, 0]),
                                           size_s: 2})
    want["androidx.collection.ArraySet"] = [e1, e2]
    garbage, keys, values, size_p = spec["sparse"]
    for name, kind, big in (("SparseArrayCompat", "int", 3), ("LongSparseArray", "long", 3 << 40)):
        v1, v3 = obj(), obj()
        new(f"androidx.collection.{name}", **{garbage: True, keys: array(kind, [1, 2, big, 0]),
                                              values: array("object", [v1, deleted[name], v3, 0]), size_p: 3})
        want[f"androidx.collection.{name}"] = [(1, v1), (big, v3)]

    with HprofWriter(str(path), version="1.0.3", id_size=4) as w:
        for name, (cid, _sup, _fields, _statics) in classes.items():
            w.load_class(cid, name)
        with w.heap_dump() as h:
            for name, (cid, sup, fields, statics) in classes.items():
                h.class_dump(cid, super_id=classes[sup][0] if sup else 0, instance_size=4 * len(fields),
                             statics=statics, fields=fields)
                h.root_sticky_class(cid)
            for kind, oid, *rest in objects:
                if kind == "instance":
                    name, values_of = rest
                    layout, c = [], name
                    while c is not None:
                        layout += classes[c][2]
                        c = classes[c][1]
                    h.instance(oid, classes[name][0], field_types=[t for _, t in layout],
                               values=[values_of.get(f, False if t == "boolean" else 0) for f, t in layout])
                elif kind == "object":
                    h.object_array(oid, classes["java.lang.Object[]"][0], [e or None for e in rest[0]])
                else:
                    h.primitive_array(oid, "char" if kind == "chars" else kind, rest[0])
        w.heap_dump_end()
    return want


@pytest.mark.parametrize("flavour", sorted(ANDROIDX))
def test_androidx_collections_of_java_and_kotlin_releases(tmp_path, flavour):
    """Regression: the Kotlin releases keep DELETED in SparseArrayCompatKt, and a removed
    entry of a SparseArrayCompat or LongSparseArray came out as an entry."""
    path = tmp_path / f"androidx-{flavour}.hprof"
    want = _androidx_dump(path, flavour)
    heap = hprofkit.open_heap(path)
    for name, items in want.items():
        (coll,) = heap.find_class(name).instances()
        got = coll.elements() if name.endswith("ArraySet") else coll.entries()
        assert [ours(x) if not isinstance(x, tuple) else tuple(ours(y) for y in x) for x in got] == items, name
    (amap,) = heap.find_class("androidx.collection.SimpleArrayMap").instances()
    assert amap.fill_ratio == 0.5  # 2 entries in mArray's room for 4


# ---- bad input -----------------------------------------------------------------------------

def _map_heap(loop: str) -> LeakyHeap:
    h = LeakyHeap()
    h.cls("java.util.HashMap$Node", fields=[("key", "object"), ("value", "object"), ("next", "object")])
    h.cls("java.util.HashMap", fields=[("table", "object"), ("size", "int")])
    h.cls("java.util.ArrayDeque", fields=[("elements", "object"), ("head", "int"), ("tail", "int")])
    key = h.string("k")
    node = h.new("java.util.HashMap$Node", key=key, value=key)
    if loop == "self":
        h.set(node, next=node)
    else:
        other = h.new("java.util.HashMap$Node", key=key, value=key, next=node)
        h.set(node, next=other)
    table = h.array([node])
    h.new("java.util.HashMap", table=table, size=1)
    h.new("java.util.ArrayDeque", elements=h.array([key, key]), head=5, tail=1)
    return h


@pytest.mark.parametrize("loop", ["self", "pair"])
def test_a_looping_collection_is_a_corrupt_dump_not_a_hang(tmp_path, loop):
    path = tmp_path / "loop.hprof"
    _map_heap(loop).write(path)
    heap = hprofkit.open_heap(path)
    the_map = next(heap.find_class("java.util.HashMap").instances())
    with pytest.raises(hprofkit.CorruptError, match="nodes loop") as info:
        the_map.entries()
    assert info.value.offset > 0 and info.value.record == "INSTANCE_DUMP"
    deque = next(heap.find_class("java.util.ArrayDeque").instances())
    with pytest.raises(hprofkit.CorruptError, match="circular buffer"):
        deque.elements()
    rows = {r.class_name: r for r in heap.collection_waste(unreachable=True)}  # no root holds the map
    assert rows["java.util.HashMap"].instances == 1


# ---- waste ---------------------------------------------------------------------------------

WASTE_DUMPS = ["mat__openjdk_jdk11_04_x64.hprof.gz", "mat__sun_jdk6_18_x64.hprof",
               "leakcanary__leak_service_binder.hprof", "platform_art__RI.hprof"]


@pytest.mark.parametrize("name", WASTE_DUMPS)
def test_duplicate_strings_equal_a_grouping_of_visualvm_texts(name, plain_path):
    # The waste is counted in VisualVM's sizes, asked for here: on the JDK 6 dump the default
    # (the JVM's layout, read off the addresses) differs from VisualVM's guess.
    path = plain_path(name)
    heap = hprofkit.open_heap(path, size_model="visualvm")
    vv = VV(run_peer(path, "values"))
    groups: dict[str, list[int]] = defaultdict(list)
    for oid in sorted(vv.objects):
        line = vv.objects[oid]
        if line["class"] == "java.lang.String" and line.get("string") is not None and vv.get(oid, "value"):
            groups[line["string"]].append(oid)
    users = Counter(vv.get(m, "value") for members in groups.values() for m in members)
    want = []
    for text, members in groups.items():
        if len(members) < 2:
            continue
        kept = vv.get(members[0], "value")
        held = Counter(vv.get(m, "value") for m in members[1:])
        # an array only the others hold goes with them; one the kept String or another text holds stays
        freed = [a for a, n in held.items() if a != kept and n == users[a]]
        waste = sum(vv.objects[m]["size"] for m in members[1:]) + sum(vv.objects[a]["size"] for a in freed)
        want.append((text, len(members), waste))
    want.sort(key=lambda r: (-r[2], -r[1], r[0]))
    # VisualVM groups every String, garbage too: unreachable=True (test_reachable.py checks the default).
    got = heap.duplicate_strings(unreachable=True)
    assert [tuple(r) for r in got] == want
    assert len(want) > 20
    assert heap.duplicate_strings(min_count=3, unreachable=True) == [r for r in got if r.count >= 3]
    with pytest.raises(ValueError, match="min_count"):
        heap.duplicate_strings(min_count=0)


@pytest.mark.parametrize("name", WASTE_DUMPS)
def test_collection_waste_equals_a_measure_of_visualvm_values(name, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    vv = VV(run_peer(path, "values"))
    walks = {oid: w for oid in vv.objects if "fields" in vv.objects[oid] and "class_of" not in vv.objects[oid]
             for w in [walk(vv, oid)] if w is not None}
    owned = {w.owns for w in walks.values() if w.owns}
    shared = shared_arrays(walks, owned)  # nobody's waste (#31: counted once per collection before)
    if name.startswith("leakcanary"):  # Android's HashMap.EMPTY_TABLE, behind every empty HashMap
        table = next(f.value for f in heap.find_class("java.util.HashMap").statics() if f.name == "EMPTY_TABLE")
        assert table.id in shared
    rows: dict[str, list] = defaultdict(lambda: [0, 0, 0, 0.0, 0])
    for oid, w in walks.items():
        if oid in owned:
            continue  # a set's map counts under the set
        row = rows[vv.cls(oid)]
        row[0] += 1
        row[1] += w.size == 0
        if not w.view and w.capacity and w.size is not None:
            row[2] += 1
            row[3] += w.size / w.capacity
        row[4] += wasted(vv, w, heap.reference_size, shared)
    want = sorted(((cls, n, empty, fill / filled if filled else None, waste) for cls, (n, empty, filled, fill, waste)
                   in rows.items()), key=lambda r: (-r[4], -r[1], r[0]))
    got = [(r.class_name, r.instances, r.empty, r.mean_fill, r.wasted_bytes)
           for r in heap.collection_waste(unreachable=True)]  # as VisualVM's values: garbage too
    assert [r[:3] + r[4:] for r in got] == [r[:3] + r[4:] for r in want]
    assert all(a[3] == pytest.approx(b[3]) if b[3] is not None else a[3] is None for a, b in zip(got, want))
    assert sum(r[4] for r in want) > 0


@pytest.mark.parametrize("name", WASTE_DUMPS)
def test_large_arrays_equal_visualvm_sizes(name, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    vv = VV(run_peer(path, "values"))
    primitive = {"boolean[]", "char[]", "float[]", "double[]", "byte[]", "short[]", "int[]", "long[]"}
    sizes = sorted(line["size"] for line in vv.objects.values() if line["class"] in primitive)
    min_bytes = sizes[-20]
    want = sorted(((line["size"], oid) for oid, line in vv.objects.items()
                   if line["class"] in primitive and line["size"] >= min_bytes), key=lambda r: (-r[0], r[1]))
    got = heap.large_arrays(min_bytes, unreachable=True)  # as VisualVM lists them: garbage too
    assert [(a.bytes, a.array.id) for a in got] == want
    first = got[0]
    assert first.dominator == heap.dominator(first.array)
    assert str(first.path) == str(heap.path_to_root(first.array))
    assert heap.large_arrays(sizes[-1] + 1, unreachable=True) == []


# ---- threads -------------------------------------------------------------------------------

THREAD_DUMPS = ["mat__oracle_jdk8_05_x64.hprof", "mat__openjdk_jdk11_04_x64.hprof.gz", "mat__sun_jdk6_18_x32.hprof",
                "mat__oracle_jdk7_21_hprofagent.hprof", "platform_art__RI.hprof", "hprof-slurp__hprof-64.bin"]


def visualvm_line(frame: hprofkit.Frame) -> int:
    """A frame's line as VisualVM's StackTraceElement gives it: native (-3) as -2."""
    return -2 if frame.line == -3 else frame.line


@pytest.mark.parametrize("name", THREAD_DUMPS)
def test_threads_equal_visualvm_thread_roots(name, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    lines = run_peer(path, "threads")
    theirs = [line for line in lines if "thread" in line]
    ours_ = heap.threads()
    by_object = {t.object.id: t for t in ours_ if t.object is not None}
    assert len(ours_) == len(theirs) and theirs

    def frames(thread):
        return [(f.class_name, f.method, f.source if f.source is not None else "<unresolved string 0x0>",
                 visualvm_line(f)) for f in thread.frames]

    # The hprof agent writes thread roots of no object (id 0): those by their stacks.
    assert sorted(frames(t) for t in ours_ if t.object is None) == sorted(
        [tuple(f) for f in line["frames"]] for line in theirs if line["thread"] is None)
    for line in theirs:
        if line["thread"] is None:
            continue
        thread = by_object[line["thread"]]
        assert thread.name == line["name"]
        assert frames(thread) == [tuple(frame) for frame in line["frames"]], thread.name
        assert thread.retained_size == heap.retained_size(thread.object)
    # Java-frame and JNI-local roots: the objects each frame holds.
    want = Counter((line["of"], line["frame"], line["local"]) for line in lines
                   if "local" in line and line["of"] is not None and line["frame"] >= 0)
    got = Counter((t.object.id, depth, o.id) for t in ours_ if t.object is not None
                  for depth, f in enumerate(t.frames) for o in f.locals)
    beyond = Counter(k for k in want if k[1] >= len(by_object[k[0]].frames))
    assert got == want - beyond
    assert any(t.daemon for t in ours_) and any(t.daemon is False for t in ours_)


def test_jstack_like_threads_of_a_fresh_dump(collections_dump):
    heap = hprofkit.open_heap(collections_dump)
    threads = {t.name: t for t in heap.threads()}
    holder = threads["values-holder"]
    assert holder.daemon is True and threads["main"].daemon is False
    assert any(f.method == "wait" for f in holder.frames)
    held = [o for f in holder.frames for o in f.locals if o.class_name == "java.util.ArrayList"]
    assert [e.value for e in held[0].elements()] == ["local0", "local1", "local2"]


# ---- allocation sites ------------------------------------------------------------------------

SITE_DUMPS = ["platform_art__RI.hprof", "mat__oracle_jdk7_21_hprofagent.hprof",
              "mat__sun_jdk6_31_hprofagent_compressedOops.hprof", "mat__sun_jdk6_31_hprofagent_nocompressedOops.hprof"]


@pytest.mark.parametrize("name", SITE_DUMPS)
def test_allocation_sites_add_up_to_the_records_of_the_dump(name, plain_path):
    """Every instance and array once, at the trace its record names: counted again from the
    record iterator (no heap index), in the heap dump the heap reads (the first)."""
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    counts: Counter = Counter()
    for sub in hprofkit._hprof.subrecords(path.read_bytes(), heap_dump=0):
        if sub.name in ("INSTANCE_DUMP", "OBJECT_ARRAY_DUMP", "PRIMITIVE_ARRAY_DUMP"):
            counts[sub.stack_serial] += 1
    sites = heap.allocation_sites()
    assert sum(s.objects for s in sites) == sum(counts.values()) == heap.object_count - sum(
        1 for o in heap.objects() if o.kind == "class")
    by_stack = Counter()
    for serial, n in counts.items():
        trace = heap._trace(serial) if serial else None
        by_stack[tuple((f.class_name, f.method, f.line) for f in trace[1]) if trace else ()] += n
    assert {tuple((f.class_name, f.method, f.line) for f in s.frames): s.objects for s in sites} == dict(by_stack)
    assert sum(s.bytes for s in sites) == sum(o.shallow_size for o in heap.objects() if o.kind != "class")
    top = heap.allocation_sites(depth=1)
    assert sum(s.objects for s in top) == sum(s.objects for s in sites)
    for site in top:
        assert len(site.frames) <= 1 and site.cum_bytes >= site.bytes
        if site.frames:
            method = site.frames[0][:3]
            assert site.cum_bytes == sum(s.bytes for s in sites if any(f[:3] == method for f in s.frames[:1]))
    assert [s.bytes for s in sites] == sorted((s.bytes for s in sites), reverse=True)


def test_allocation_sites_of_a_dump_without_traces_are_one_bucket(collections_dump):
    heap = hprofkit.open_heap(collections_dump)
    sites = heap.allocation_sites()
    assert len(sites) == 1 and sites[0].frames == ()
    assert sites[0].objects == sum(1 for o in heap.objects() if o.kind != "class")
    with pytest.raises(ValueError, match="depth"):
        heap.allocation_sites(depth=0)
    assert heap.alloc_sites() == []


def test_alloc_sites_records_are_decoded(tmp_path):
    """No shared dump holds ALLOC_SITES (the hprof agent writes them on demand): one written
    with hprofkit.writer, and one cut short."""
    from hprofkit.writer import HprofWriter
    path = tmp_path / "sites.hprof"
    with HprofWriter(str(path), id_size=4) as w:
        w.load_class(0x100, "java.lang.Object", serial=7)
        w.alloc_sites(0x2, 0.5, 100, 3, 1000, 30, [(0, 7, 11, 40, 2, 400, 20), (4, 99, 12, 60, 1, 600, 10)])
        with w.heap_dump() as h:
            h.class_dump(0x100)
        w.heap_dump_end()
    heap = hprofkit.open_heap(path)
    first, second = heap.alloc_sites()
    assert first.class_name == "java.lang.Object" and second.class_name is None
    assert (first.flags, first.cutoff, first.total_live_bytes, first.total_instances_allocated) == (2, 0.5, 100, 30)
    assert (second.array_type, second.class_serial, second.trace_serial, second.live_bytes, second.live_instances,
            second.bytes_allocated, second.instances_allocated) == (4, 99, 12, 60, 1, 600, 10)
    data = bytearray(path.read_bytes())
    offset = first.record_offset
    data[offset + 5:offset + 9] = (34 + 25).to_bytes(4, "big")  # claims 2 sites, holds 1
    cut = data[:offset + 9 + 34 + 25] + data[offset + 9 + 34 + 50:]
    (tmp_path / "cut.hprof").write_bytes(bytes(cut))
    with pytest.raises(hprofkit.TruncatedError, match="ALLOC_SITES"):
        hprofkit.open_heap(tmp_path / "cut.hprof").alloc_sites()


def test_a_thread_shows_its_stack_in_a_notebook():
    """#21: Thread's _repr_html_ is the jstack view: every frame as str(frame) prints it, in
    order, with the objects it holds; names from the dump are escaped text."""
    import html
    heap = hprofkit.open_heap(dump_path("mat__oracle_jdk8_05_x64.hprof"))
    threads = [t for t in heap.threads() if t.frames]
    assert threads
    for t in threads:
        page = t._repr_html_()
        assert f"<code>{html.escape(t.name)}</code>" in page
        at = 0
        for frame in t.frames:
            at = page.index(f"<code>{html.escape(str(frame))}</code>", at) + 1
            for obj in frame.locals:
                assert f"@0x{obj.id:x}" in page
        assert f"{t.retained_size:,} B" in page
    renamed = threads[0]._replace(name="</code><script>alert(1)</script>")
    assert "<script>" not in renamed._repr_html_() and "&lt;script&gt;" in renamed._repr_html_()


# ---- hostile collections and boxes (#30) -------------------------------------------------

def test_layouts_of_a_deep_hierarchy_are_resolved_once_per_class():
    """A java.util.ArrayList subclassed 200,000 times, every third subclass declaring a field of
    its own: the deepest class's instance is walked through ArrayList's fields, moved by every
    pad declared below (a wrong offset reads a pad, 0x7fffffff, as elementData or size).  The
    layouts took time quadratic in the depth (21 s at 80,000); resolved once per class, they
    are linear (benchmarks/bench_hostile.py measures the depth's cost)."""
    depth = 200_000
    with hprofkit.open_heap(b"".join(hostile.deep_list_dump(depth))) as heap:
        listed = heap.object(hostile.LIST)
        assert listed.class_name == f"C{depth - 1}"
        assert [e.id for e in listed.elements()] == list(hostile.LIST_ITEMS)
        assert listed.fill_ratio == 0.5
        (row,) = heap.collection_waste()
        assert (row.class_name, row.instances, row.empty, row.mean_fill, row.corrupt) == (f"C{depth - 1}", 1, 0, 0.5, 0)


def test_corrupt_boxes_and_sizes_are_corrupt_errors_naming_the_object():
    """A java.lang.Character without `value` (a bare KeyError before), a java.lang.Long whose
    `value` is a reference (a HeapObject before), an ArrayList of size 2^31-1 in 2 slots (fill
    1073741823.5 before): each a CorruptError at the object's INSTANCE_DUMP; collection_waste
    counts the list as corrupt, out of the fill and the waste."""
    data = b"".join(hostile.corrupt_values_dump())
    with hprofkit.open_heap(data) as heap:
        for name, says in (("character", "has no field value, not the char value"),
                           ("long", "has a field value of type object, not the long value")):
            obj = heap.object(hostile.CORRUPT_IDS[name])
            with pytest.raises(hprofkit.CorruptError, match=says) as info:
                obj.value
            at = data.index(bytes([0x21]) + obj.id.to_bytes(4, "big"))
            assert (info.value.offset, info.value.record) == (at, "INSTANCE_DUMP")
            assert f"INSTANCE_DUMP at offset {at}" in str(info.value)
        listed = heap.object(hostile.LIST)
        with pytest.raises(hprofkit.CorruptError, match="declares size 2147483647, which its storage cannot hold"):
            listed.fill_ratio
        assert [e.id if e is not None else None for e in listed.elements()] == [hostile.object_id(12), None]
        (row,) = heap.collection_waste()
        assert (row.class_name, row.instances, row.corrupt, row.mean_fill, row.wasted_bytes) == (
            "java.util.ArrayList", 1, 1, None, 0)


def test_waste_prints_no_fill_for_a_corrupt_size(tmp_path):
    path = tmp_path / "corrupt.hprof"
    hostile.write_dump(path, hostile.corrupt_values_dump())
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "waste", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.endswith("java.util.ArrayList"))
    assert line.split()[-2:] == ["-", "java.util.ArrayList"] and "2147483647" not in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "waste", "--json", str(path)], capture_output=True,
                          text=True)
    (row,) = json.loads(proc.stdout)["collections"]
    assert (row["corrupt"], row["mean_fill"], row["wasted_bytes"]) == (1, None, 0)
