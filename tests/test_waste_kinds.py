"""heap.waste() (issue #32): every kind computed again by a plain Python walk over
heap.objects() (field values, array bytes, Strings' text; never the waste code) on
shared dumps and a fresh HeapGen dump, objects and bytes compared exactly; the
kinds that overlap the older views agree with duplicate_strings() and
collection_waste(); holders folded again from heap.paths_to_root; the default
(reachable) against unreachable=True on a dump with garbage."""

from __future__ import annotations

import struct
from collections import defaultdict

import pytest

import hprofkit
from hprofkit._waste import KINDS, LONG_STRING_CHARS, hop_key

from conftest import dump_path

SHARED = ["mat__openjdk_jdk11_04_x64.hprof.gz", "leakcanary__leak_service_binder.hprof", "platform_art__RI.hprof",
          "mat__oracle_jdk8_05_x64.hprof"]
BOX_SIZES = {"java.lang.Boolean": 1, "java.lang.Byte": 1, "java.lang.Character": 2, "java.lang.Short": 2,
             "java.lang.Integer": 4, "java.lang.Long": 8, "java.lang.Float": 4, "java.lang.Double": 8}
BOX_FORMATS = {"java.lang.Float": ">f", "java.lang.Double": ">d"}


def holder_key(path) -> tuple:
    """(ref_type, class name, name) of the last hop of a paths_to_root answer, or why it has none."""
    if not path or not path.hops:
        return ("UNREACHABLE" if getattr(path, "reason", "unreachable") == "unreachable" else "NO_STRONG_PATH",
                None, None)
    hop = path.hops[-1]
    return hop_key(hop.ref_type, hop.holder, hop.name)


def is_direct_buffer(cls) -> bool:
    while cls is not None:
        if cls.name == "java.nio.DirectByteBuffer":
            return True
        cls = cls.superclass
    return False


def box_bits(obj) -> object:
    """A box's value as its bits (floats by their IEEE bits, as the dump holds them)."""
    value = obj.value
    fmt = BOX_FORMATS.get(obj.class_name)
    return struct.pack(fmt, value) if fmt else value


def walk(heap, oop_size: int) -> tuple[dict[str, dict[int, int]], int, int]:
    """Every kind but the collections and duplicate Strings: {kind: {object id: wasted}}, and
    the duplicate boxes (count, bytes), from the objects' values alone."""
    kinds: dict[str, dict[int, int]] = {k: {} for k in KINDS}
    string_arrays = set()
    prim_groups: dict[tuple, list] = defaultdict(list)
    obj_groups: dict[tuple, list] = defaultdict(list)
    boxes: dict[tuple, list] = defaultdict(list)
    objects = list(heap.objects())
    for o in objects:
        if o.kind == "instance" and o.class_name == "java.lang.String":
            try:
                arr = o["value"]
            except KeyError:
                arr = None
            if arr is not None and arr.kind == "primitive_array":
                string_arrays.add(arr.id)
    for o in objects:
        if o.kind == "primitive_array":
            view = o.values()
            raw, esize, n = view.tobytes(), view.itemsize, len(view)
            if o.id not in string_arrays:
                prim_groups[(o.class_name, raw)].append(o)
            if n == 0:
                continue
            stripped = raw.rstrip(b"\0")
            if not stripped:
                kinds["zero_arrays"][o.id] = o.shallow_size
            else:
                zeros = n - 1 - (len(stripped) - 1) // esize
                if zeros >= 8 and 2 * zeros >= n:
                    kinds["trailing_zero_arrays"][o.id] = zeros * esize
        elif o.kind == "object_array":
            refs = {r.name: r.target_id for r in o.references()} if o.reference_count else {}
            elements = tuple(refs.get(f"[{k}]", 0) for k in range(len(o)))
            obj_groups[(o.class_.class_id, elements)].append(o)
            nulls = elements.count(0)
            if elements and nulls == len(elements):
                kinds["empty_arrays"][o.id] = o.shallow_size
            if elements and 2 * nulls >= len(elements):
                kinds["sparse_arrays"][o.id] = nulls * oop_size
        elif o.kind == "instance":
            name = o.class_name
            if name in BOX_SIZES:
                kinds["boxed_numbers"][o.id] = o.shallow_size - BOX_SIZES[name]
                boxes[(o.class_.class_id, box_bits(o))].append(o)
            elif name == "java.lang.String":
                text = o.as_str()
                if text is not None and len(text.encode("utf-16-le")) // 2 > LONG_STRING_CHARS:
                    kinds["long_strings"][o.id] = o["value"].shallow_size
            elif is_direct_buffer(o.class_):
                kinds["direct_buffers"][o.id] = max(o["capacity"], 0) if o["att"] is None else 0
    for kind, groups in (("duplicate_arrays", prim_groups), ("duplicate_object_arrays", obj_groups)):
        for members in groups.values():
            for copy in sorted(members, key=lambda m: m.index)[1:]:
                kinds[kind][copy.id] = copy.shallow_size
    dup_boxes = sum(len(m) - 1 for m in boxes.values())
    dup_box_bytes = sum(sum(b.shallow_size for b in sorted(m, key=lambda m: m.index)[1:]) for m in boxes.values())
    return kinds, dup_boxes, dup_box_bytes


def as_map(kind) -> dict[int, int]:
    return {item.object.id: item.wasted_bytes for item in kind.items}


@pytest.fixture(scope="module", params=SHARED + ["heapgen"])
def heap(request, heapgen_dumps):
    path = heapgen_dumps[0] if request.param == "heapgen" else dump_path(request.param)
    with hprofkit.open_heap(path) as h:
        yield h


def test_kinds_match_an_independent_walk(heap):
    w = heap.waste(unreachable=True)
    expected, dup_boxes, dup_box_bytes = walk(heap, heap.reference_size)
    for kind in KINDS:
        if kind in ("duplicate_strings", "empty_collections", "small_collections", "sparse_collections"):
            continue
        assert as_map(w[kind]) == expected[kind], kind
        assert w[kind].wasted_bytes == sum(expected[kind].values()), kind
    assert (w.duplicate_boxes, w.duplicate_box_bytes) == (dup_boxes, dup_box_bytes)


def test_duplicate_strings_and_collections_agree_with_their_views(heap):
    w = heap.waste(unreachable=True)
    groups = heap.duplicate_strings(unreachable=True)
    assert w["duplicate_strings"].objects == sum(g.count - 1 for g in groups)
    assert w["duplicate_strings"].wasted_bytes == sum(g.wasted_bytes for g in groups)
    texts = defaultdict(int)
    for o in heap.objects():
        if o.kind == "instance" and o.class_name == "java.lang.String" and o.as_str() is not None:
            texts[o.as_str()] += 1
    assert w["duplicate_strings"].objects == sum(n - 1 for n in texts.values() if n > 1)
    per_class = {c.class_.class_id: c for c in heap.collection_waste(unreachable=True)}
    empty = defaultdict(int)
    for item in w["empty_collections"].items:
        empty[item.object.class_.class_id] += 1
    assert dict(empty) == {k: c.empty for k, c in per_class.items() if c.empty}
    for kind, size in (("empty_collections", 0), ("small_collections", 1)):
        for item in w[kind].items[:300]:
            obj = item.object
            shape, *_rest, inner = obj._measure()
            if "Weak" in (inner or obj).class_name:
                continue  # its size counts entries whose key the GC cleared, which its walk skips
            walked = obj.entries() if shape == "map" else obj.elements()
            assert len(walked) == size, (kind, obj)
    for item in w["sparse_collections"].items[:300]:
        assert item.object.fill_ratio < 0.5


def test_total_counts_each_object_once(heap):
    w = heap.waste(unreachable=True)
    most: dict[int, int] = {}
    for kind in w:
        if kind.kind != "direct_buffers":
            for obj_id, wasted in as_map(kind).items():
                most[obj_id] = max(most.get(obj_id, 0), wasted)
    assert w.total_bytes == sum(most.values())
    assert [k.wasted_bytes for k in w] == sorted((k.wasted_bytes for k in w), reverse=True)
    assert len(w) == len(KINDS) and {k.kind for k in w} == set(KINDS)
    assert all(line.split()[0] in KINDS for line in str(w).splitlines()[1:-1])
    assert "data-hprofkit-view=\"waste\"" in w._repr_html_()


def test_holders_fold_the_shortest_paths(heap):
    w = heap.waste(unreachable=True)
    for kind in w:
        if not kind.objects:
            continue
        objs = [item.object for item in kind.items]
        folded: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
        for obj, item, path in zip(objs, kind.items, heap.paths_to_root(objs)):
            if path:
                hop = path.hops[-1]
                assert hop.target == obj
            key = holder_key(path)
            folded[key][0] += 1
            folded[key][1] += item.wasted_bytes
        holders = kind.holders(None)
        assert {(h.ref_type, h.class_name, h.name): [h.objects, h.wasted_bytes] for h in holders} == dict(folded)
        assert holders[:3] == kind.holders(3)
        assert sum(h.objects for h in holders) == kind.objects


def test_reachable_by_default_on_a_dump_with_garbage():
    with hprofkit.open_heap(dump_path("mat__oracle_jdk8_05_x64.hprof")) as heap:
        live, every = heap.waste(), heap.waste(unreachable=True)
        assert not live.unreachable and every.unreachable
        garbage_seen = 0
        for kind in KINDS:
            live_ids, all_ids = set(as_map(live[kind])), set(as_map(every[kind]))
            if kind not in ("duplicate_strings", "duplicate_arrays", "duplicate_object_arrays"):
                assert live_ids <= all_ids, kind  # which copy is kept may change with the members
            garbage = [heap.object(i) for i in all_ids - live_ids]
            if kind in ("zero_arrays", "empty_arrays", "sparse_arrays", "boxed_numbers", "long_strings"):
                for path in heap.paths_to_root(garbage):
                    assert not path and path.reason == "unreachable", kind
                garbage_seen += len(garbage)
        assert garbage_seen > 0
        assert live.total_bytes < every.total_bytes
