"""Reachability: retained sizes, dominators and paths.

- With semantics="visualvm", every object's retained size equals VisualVM's
  (../shared/tools/oracle/graph.sh objects), and so does the retained size
  of every class (classes mode) and the length of sampled paths (the depth
  of VisualVM's nearest-GC-root chain), on the shared dumps and fresh
  HeapGen / androidized ones.
- A naive iterative dominator algorithm (tests/vvmodel.py) agrees with the
  C core on random graphs written as dumps (hypothesis) and on real dumps,
  in both semantics.
- The Path API, matchers, leaves, threads and the CLI commands."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hprofkit
from hprofkit import match
from hprofkit.writer import HprofWriter
from conftest import dump_path
from vvmodel import Model, iterative_dominators

# One dump per kind of graph, as the oracle (with retained sizes) takes 8 to
# 60 s a dump: 32-bit HotSpot; ART (class objects enumerated, the tree-object
# shortcut matters); a 10,000-deep chain; 64-bit with compressed oops and many
# unreached referrers; the old hprof agent (two dumps, repeated roots); 64-bit
# uncompressed JDK 5; JDK 6 with compressed oops.  Every shared dump VisualVM
# opens was checked once this way (docs/reachability.md).
VISUALVM_DUMPS = ["heapdump__small_heap.bin", "leakcanary__leak_service_binder.hprof", "platform_art__RI.hprof",
                  "hprof-slurp__hprof-64.bin", "mat__oracle_jdk7_21_hprofagent.hprof", "mat__sun_jdk5_64bit.hprof",
                  "mat__sun_jdk6_30_x64_compressedOops.hprof"]
CLASS_DUMPS = VISUALVM_DUMPS[:5]
NAIVE_DUMPS = ["leakcanary__leak_service_binder.hprof", "platform_art__RI.hprof", "mat__sun_jdk6_18_x32.hprof"]


def oracle_run(graph_oracle, path: Path, mode: str) -> list[dict]:
    """graph.sh with retained sizes (GraphOracle caches per dump and mode)."""
    return graph_oracle.run(path, mode, retained=True)


def path_depth(path) -> int | None:
    """A path's length as VisualVM counts depth: references from the root
    object (the LOCAL hop of a frame root is no reference of the graph)."""
    if path is None:
        return None
    return sum(1 for hop in path.hops if hop.ref_type not in ("ROOT", "LOCAL"))


def check_against_visualvm(path: Path, graph_oracle, classes: bool) -> None:
    heap = hprofkit.open_heap(path, semantics="visualvm")
    lines = oracle_run(graph_oracle, path, "objects")
    wrong = [(hex(o["id"]), o["class"], heap.retained_size(heap.object(o["id"])), o["retained"])
             for o in lines if heap.retained_size(heap.object(o["id"])) != o["retained"]]
    assert not wrong, f"{len(wrong)} of {len(lines)} retained sizes differ, e.g. {wrong[:5]}"
    sample = random.Random(path.name).sample(lines, min(40, len(lines)))
    # VisualVM's nearest root: every strong reference (exclude=(), no matcher).
    depths = [(hex(o["id"]), path_depth(heap.path_to_root(heap.object(o["id"]), exclude=())), o["depth"])
              for o in sample]
    assert [d for d in depths if d[1] != d[2]] == []
    assert any(d[2] for d in depths)
    if classes:
        rows = oracle_run(graph_oracle, path, "classes")
        wrong = [(c["name"], heap.object(c["id"]).instances_retained_size, c["retained"]) for c in rows
                 if heap.object(c["id"]).instances_retained_size != c["retained"]]
        assert not wrong, f"{len(wrong)} of {len(rows)} class retained sizes differ, e.g. {wrong[:5]}"


@pytest.mark.parametrize("name", VISUALVM_DUMPS)
def test_retained_sizes_equal_visualvm(name, graph_oracle, plain_path):
    check_against_visualvm(plain_path(name), graph_oracle, classes=name in CLASS_DUMPS)


def test_retained_sizes_equal_visualvm_on_fresh_dumps(heapgen_dumps, android_heapgen_dump, graph_oracle):
    check_against_visualvm(heapgen_dumps[0], graph_oracle, classes=True)
    check_against_visualvm(android_heapgen_dump, graph_oracle, classes=False)


# ---- the naive dominators ---------------------------------------------------------------------

ROOT = -1  # the virtual root of the naive graphs (object ids are positive)
# The kinds of root a thread holds (each names its serial).
THREADS_ROOTS = {"JAVA_FRAME", "JNI_LOCAL", "NATIVE_STACK", "THREAD_BLOCK", "JNI_MONITOR"}


def strong_references(heap) -> dict[int, list[int]]:
    """hprofkit's references in Python, from the heap API: every reference to
    an object of the dump but the referents of Reference subclasses."""
    reference = heap.find_class("java.lang.ref.Reference")
    weak = set()
    if reference is not None:
        weak = {c.ordinal for c in reference.subclasses()} | {reference.ordinal}
    succ: dict[int, list[int]] = {}
    for obj in heap.objects():
        skip_referent = obj.kind == "instance" and obj.class_ is not None and obj.class_.ordinal in weak
        succ[obj.id] = [ref.target_id for ref in obj.references()
                        if ref.target is not None and not (skip_referent and ref.name == "referent")]
    return succ


def hprofkit_graph(heap) -> tuple[dict, dict]:
    """hprofkit's graph in Python: its references, and the virtual root over
    the GC roots (ROOT_UNREACHABLE is none) but a thread's own roots, which
    hang from its thread object (MAT's model; of two thread objects of one
    serial, the lower id)."""
    succ: dict[int, list[int]] = {ROOT: [], **strong_references(heap)}
    preds: dict[int, list[int]] = {node: [] for node in succ if node != ROOT}
    thread_of: dict[int, int] = {}
    for root in heap.gc_roots:
        if root.kind == "THREAD_OBJECT" and root.object is not None:
            thread_of[root.thread_serial] = min(thread_of.get(root.thread_serial, root.object_id), root.object_id)
    for root in heap.gc_roots:
        if root.object is None or root.kind == "UNREACHABLE":
            continue
        holder = thread_of.get(root.thread_serial) if root.kind in THREADS_ROOTS else None
        succ[ROOT if holder is None else holder].append(root.object_id)
    for node, targets in succ.items():
        for t in targets:
            preds.setdefault(t, []).append(node)
    return succ, preds


def check_dominators(heap, idom: dict[int, int], sizes: dict[int, int] | None) -> None:
    """heap.dominator agrees with `idom` (ROOT for the virtual root) for every
    object; with `sizes`, retained sizes are the dominator subtrees' sums."""
    wrong = []
    for obj in heap.objects():
        expected = idom.get(obj.id)
        got = heap.dominator(obj)
        if (None if expected in (None, ROOT, 0) else expected) != (got.id if got is not None else None):
            wrong.append((hex(obj.id), expected, got))
    assert not wrong, f"{len(wrong)} dominators differ, e.g. {wrong[:5]}"
    if sizes is None:
        return
    total = dict(sizes)
    children: dict[int, list[int]] = {}
    for node, parent in idom.items():
        children.setdefault(parent, []).append(node)
    order, stack = [], [ROOT]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(children.get(node, ()))
    for node in reversed(order):
        if node != ROOT and idom[node] != ROOT:
            total[idom[node]] = total.get(idom[node], 0) + total[node]
    wrong = [(hex(o.id), heap.retained_size(o), total.get(o.id, 0)) for o in heap.objects()
             if heap.retained_size(o) != (total[o.id] if o.id in idom else 0)]
    assert not wrong, f"{len(wrong)} retained sizes differ, e.g. {wrong[:5]}"


@pytest.mark.parametrize("name", NAIVE_DUMPS)
def test_naive_dominators_agree_on_real_dumps(name, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path)
    succ, preds = hprofkit_graph(heap)
    idom = iterative_dominators(succ, preds, ROOT)
    check_dominators(heap, idom, {o.id: o.shallow_size for o in heap.objects()})
    # visualvm: VisualVM's graph as tests/vvmodel.py builds it from the records.
    model = Model(path)
    vv = hprofkit.open_heap(path, semantics="visualvm")
    check_dominators(vv, {k: (ROOT if v == 0 else v) for k, v in model.idom.items()}, None)


# Random graphs as dumps: objects of class Node(next, other), a WeakReference,
# an Object[]; roots of a few kinds, some naming absent objects.
graphs = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(-2, n - 1), st.integers(-2, n - 1)), min_size=n, max_size=n),
    st.lists(st.integers(-2, n - 1), max_size=4),                     # array elements
    st.integers(-1, n - 1),                                            # the weak referent
    st.lists(st.tuples(st.sampled_from(["jni", "sticky", "frame", "thread", "monitor", "native", "thread2"]),
                       st.integers(-2, n + 1)), min_size=1, max_size=6)))

NODE, OBJ, REF, WEAK, ARR, STRING = 0x1000, 0x1008, 0x1010, 0x1018, 0x1020, 0x1028
# VisualVM wants its four reference kinds.
KINDS = ((0x1040, "java/lang/ref/SoftReference"), (0x1048, "java/lang/ref/FinalReference"),
         (0x1050, "java/lang/ref/PhantomReference"))


def node_id(k: int) -> int:
    return 0 if k == -1 else 0x7770 if k == -2 else 0x10000 + 8 * k


def write_graph(path: Path, graph) -> None:
    n, fields, items, referent, roots = graph
    with HprofWriter(path, id_size=4) as w:
        for cid, name in ((OBJ, "java/lang/Object"), (REF, "java/lang/ref/Reference"),
                          (WEAK, "java/lang/ref/WeakReference"), (NODE, "Node"), (ARR, "[Ljava/lang/Object;"),
                          *KINDS):
            w.load_class(cid, name)
        with w.heap_dump() as seg:
            for cid, _ in KINDS:
                seg.class_dump(cid, super_id=REF)
            for kind, k in roots:
                target = 0x2000 if k == n else 0x2008 if k == n + 1 else node_id(k) or 0x7770
                if kind == "jni":
                    seg.root_jni_global(target)
                elif kind == "sticky":
                    seg.root_sticky_class(NODE if k % 2 else target)
                elif kind == "frame":
                    seg.root_java_frame(target, 1)
                elif kind == "thread":
                    seg.root_thread_object(target, 1)
                elif kind == "native":  # held by thread 2, whose object may be missing
                    seg.root_native_stack(target, 2)
                elif kind == "thread2":
                    seg.root_thread_object(target, 2)
                else:
                    seg.root_monitor_used(target)
            seg.class_dump(OBJ)
            seg.class_dump(REF, super_id=OBJ, fields=[("referent", "object")], instance_size=4)
            seg.class_dump(WEAK, super_id=REF, instance_size=4)
            seg.class_dump(NODE, super_id=OBJ, fields=[("next", "object"), ("other", "object")], instance_size=8,
                           statics=[("first", "object", node_id(0))])
            seg.class_dump(ARR, super_id=OBJ)
            seg.instance(0x2000, WEAK, values=[node_id(referent)])
            seg.object_array(0x2008, ARR, [node_id(k) for k in items])
            for k, (a, b) in enumerate(fields):
                seg.instance(node_id(k), NODE, values=[node_id(a), node_id(b)])
        w.heap_dump_end()


@settings(max_examples=60)
@given(graphs)
def test_naive_dominators_agree_on_random_graphs(tmp_path_factory, graph):
    path = tmp_path_factory.mktemp("graph") / "g.hprof"
    write_graph(path, graph)
    heap = hprofkit.open_heap(path)
    succ, preds = hprofkit_graph(heap)
    check_dominators(heap, iterative_dominators(succ, preds, ROOT), {o.id: o.shallow_size for o in heap.objects()})
    model = Model(path)
    vv = hprofkit.open_heap(path, semantics="visualvm")
    check_dominators(vv, {k: (ROOT if v == 0 else v) for k, v in model.idom.items()}, None)
    wrong = [(hex(o.id), vv.retained_size(o), model.retained_size(o.id)) for o in vv.objects()
             if vv.retained_size(o) != model.retained_size(o.id)]
    assert not wrong


# ---- the API -----------------------------------------------------------------------------------

LEAKCANARY = "leakcanary__leak_service_binder.hprof"


@pytest.fixture(scope="module")
def leak_heap():
    return hprofkit.open_heap(dump_path(LEAKCANARY))


def test_path_names_roots_fields_and_array_entries(leak_heap):
    service = leak_heap.find_class("com.example.leakcanary.LeakyService")
    leaked = next(service.instances())
    path = leak_heap.path_to_root(leaked, exclude=match.JDK_DEFAULTS)
    assert isinstance(path, hprofkit.HeapPath) and not path.library and path.library_matcher is None
    root, *rest = path.hops
    assert root.ref_type == "ROOT" and root.holder is None and root.name == "JNI_GLOBAL"
    assert "JNI_GLOBAL" in {r.kind for r in leak_heap.gc_roots if r.object == root.target}
    assert rest[-1] == hprofkit.Hop("INSTANCE_FIELD", rest[-1].holder, "service", leaked)
    for before, hop in zip(path.hops, rest):
        assert hop.holder == before.target
        assert any(r.name == hop.name and r.target == hop.target for r in hop.holder.references())
    assert len(path) == len(path.hops) and path.target == leaked
    text = str(path).splitlines()
    assert text[:2] == ["┬───", "│ GC Root: Global variable in native code"]
    assert text[-1].startswith("╰→ com.example.leakcanary.LeakyService")
    assert "↓ LeakyService$MyBinder.service" in str(path)
    # Statics, array entries: the path to some String in a static array.
    kinds = set()
    for obj, _ in leak_heap.top_retainers(30):
        p = leak_heap.path_to_root(obj)
        kinds.update(h.ref_type for h in p.hops)
        for hop in p.hops[1:]:
            if hop.ref_type == "STATIC_FIELD":
                assert isinstance(hop.holder, hprofkit.HeapClass)
            if hop.ref_type == "ARRAY_ENTRY":
                assert hop.name.startswith("[") and hop.holder.kind == "object_array"
    assert {"ROOT", "STATIC_FIELD", "INSTANCE_FIELD", "ARRAY_ENTRY"} <= kinds


def write_matcher_dump(path: Path, thread: str = "worker", android: bool = False) -> None:
    """Holder(ref) instances held by JNI globals, a static Holder.cache, a
    Thread named `thread` whose frame alone holds a third leaf (0x3018); an
    Android heap (android.os.Build) when `android`."""
    classes = [(OBJ, "java/lang/Object"), (NODE, "Holder"), (STRING, "java/lang/String"),
               (0x1030, "java/lang/Thread"), (0x1038, "[C")] + ([(0x1040, "android/os/Build")] if android else [])
    with HprofWriter(path, id_size=4) as w:
        for cid, name in classes:
            w.load_class(cid, name)
        with w.heap_dump() as seg:
            seg.root_jni_global(0x3000)
            seg.root_sticky_class(NODE)
            seg.root_thread_object(0x3100, 3)
            seg.root_java_frame(0x3018, 3, 0)
            seg.class_dump(OBJ)
            seg.class_dump(NODE, super_id=OBJ, fields=[("ref", "object")], instance_size=4,
                           statics=[("cache", "object", 0x3010)])
            seg.class_dump(STRING, super_id=OBJ, fields=[("value", "object")], instance_size=4)
            seg.class_dump(0x1030, super_id=OBJ, fields=[("name", "object")], instance_size=4)
            for cid, _ in classes[4:]:
                seg.class_dump(cid, super_id=OBJ)
            seg.instance(0x3000, NODE, values=[0x3008])
            seg.instance(0x3008, OBJ, values=[])
            seg.instance(0x3010, OBJ, values=[])
            seg.instance(0x3018, OBJ, values=[])
            seg.instance(0x3100, 0x1030, values=[0x3108])
            seg.instance(0x3108, STRING, values=[0x3110])
            seg.primitive_array(0x3110, "char", thread)
        w.heap_dump_end()


def test_matchers(tmp_path):
    write_matcher_dump(tmp_path / "m.hprof")
    heap = hprofkit.open_heap(tmp_path / "m.hprof")
    leaf, cached, local = heap.object(0x3008), heap.object(0x3010), heap.object(0x3018)
    holder, thread = heap.object(0x3000), heap.object(0x3100)
    plain = heap.path_to_root(leaf, exclude=())
    assert plain.hops == [hprofkit.Hop("ROOT", None, "JNI_GLOBAL", holder),
                          hprofkit.Hop("INSTANCE_FIELD", holder, "ref", leaf)]
    assert not plain.library
    library = match.instance_field("Holder", "ref", kind="library", description="held by a holder")
    path = heap.path_to_root(leaf, exclude=(library,))
    assert path.hops == plain.hops and path.library and path.library_matcher is library
    assert str(path).splitlines()[:2] == [f"Library leak match: {library!r}", "Description: held by a holder"]
    assert heap.path_to_root(leaf, exclude=(library._replace(kind="ignore"),)) is None
    assert heap.path_to_root(leaf, exclude=(match.root_class("java.lang.Object"),)) is None
    assert heap.path_to_root(leaf, exclude=(match.root_class("Unknown.Class"),)) == plain
    static = heap.path_to_root(cached, exclude=())
    assert static.hops == [hprofkit.Hop("ROOT", None, "STICKY_CLASS", heap.find_class("Holder")),
                           hprofkit.Hop("STATIC_FIELD", heap.find_class("Holder"), "cache", cached)]
    assert "↓ static Holder.cache" in str(static)
    lib = heap.path_to_root(cached, exclude=(match.static_field("Holder", "cache", kind="library"),))
    assert lib.library and lib.hops == static.hops
    frame = heap.path_to_root(local, exclude=())
    assert frame.hops[0] == hprofkit.Hop("ROOT", None, "JAVA_FRAME", thread)
    assert frame.hops[1][:2] == ("LOCAL", thread) and frame.hops[1].target == local
    assert "│    ↓ Thread<Java Local>" in str(frame) and "│ GC Root: Thread object" in str(frame)
    assert heap.path_to_root(local, exclude=(match.thread_local("worker"),)) is None
    assert heap.path_to_root(local, exclude=(match.thread_local("main"),)).hops == frame.hops
    low = heap.path_to_root(local, exclude=(match.thread_local("worker", kind="library"),))
    assert low.library and low.library_matcher.pattern == "thread_local"
    # One search gives each object the path a search for it alone gives:
    # the leaf's passes through the holder, another of the targets.
    assert heap.paths_to_root([holder, leaf, cached], exclude=()) == [heap.path_to_root(holder, exclude=()), plain,
                                                                       static]


def test_exclude_none_means_the_defaults_and_empty_means_none():
    """One rule wherever hprofkit takes reference matchers: exclude=None (every default)
    is default_exclude(heap), exclude=() is none.  Here the finalizer queue's links and
    referents (JDK_DEFAULTS matchers) hold objects that have another path, or none."""
    heap = hprofkit.open_heap(dump_path("mat__sun_jdk6_18_x64.hprof"))
    assert hprofkit.leaks.default_exclude(heap) == match.JDK_DEFAULTS
    finalizers = list(heap.find_class("java.lang.ref.Finalizer").instances(subclasses=True))
    queued = finalizers + [f["referent"] for f in finalizers if f["referent"] is not None]
    raw = heap.paths_to_root(queued, exclude=())
    defaults = heap.paths_to_root(queued)
    assert defaults == heap.paths_to_root(queued, exclude=None) == heap.paths_to_root(queued,
                                                                                   exclude=match.JDK_DEFAULTS)
    assert all(raw) and defaults != raw
    # A batch gives each object its single search's path, or a NoPath (falsy) where that is None.
    assert [heap.path_to_root(o) for o in queued] == [p or None for p in defaults]
    assert [heap.path_to_root(o, exclude=()) for o in queued] == raw


def test_the_main_threads_locals_are_transient_on_android_only(tmp_path):
    """#31: LeakCanary's rule for Android's main looper hid every object a HotSpot program's
    main thread holds in its locals (javac's JavaCompiler had no path).  It is an Android
    rule (match.ANDROID_THREADS): on a HotSpot heap main's locals are paths like any
    thread's, on an Android heap they are still skipped."""
    threads = lambda matchers: {m.name for m in matchers if m.pattern == "thread_local"}  # noqa: E731
    assert "main" in threads(match.ANDROID_THREADS) and not threads(match.JDK_DEFAULTS)
    assert set(match.ANDROID_THREADS) <= set(match.ANDROID_DEFAULTS)
    for android in (False, True):
        write_matcher_dump(tmp_path / f"{android}.hprof", "main", android)
        heap = hprofkit.open_heap(tmp_path / f"{android}.hprof")
        local, thread = heap.object(0x3018), heap.object(0x3100)
        frame = heap.path_to_root(local, exclude=())
        assert frame.hops == [hprofkit.Hop("ROOT", None, "JAVA_FRAME", thread),
                              hprofkit.Hop("LOCAL", thread, frame.hops[1].name, local)]
        assert heap.path_to_root(local) == (None if android else frame)
    # A real HotSpot dump: every local of its main thread's frames has its own frame's path.
    heap = hprofkit.open_heap(dump_path("mat__oracle_jdk8_05_x64.hprof"))
    (main,) = [t for t in heap.threads() if t.name == "main"]
    held = [obj for f in main.frames for obj in f.locals]
    assert len(held) > 10
    for obj, path in zip(held, heap.paths_to_root(held)):
        assert path and path == heap.path_to_root(obj, exclude=()) and path.hops[0].target == main.object


def test_weak_referents_are_not_strong(leak_heap):
    """The KeyedWeakReference's referent is reached by a strong path that
    is not the weak reference itself."""
    weak = next(o for o in leak_heap.objects() if o.class_name.endswith("KeyedWeakReference"))
    referent = weak["referent"]
    path = leak_heap.path_to_root(referent)
    assert path is not None and weak not in [h.holder for h in path.hops]


def test_paths_to_root_alignment_and_single_search_paths(leak_heap):
    strings = list(leak_heap.find_class("java.lang.String").instances())[:200]
    arrays = [s["value"] for s in strings]
    both = leak_heap.paths_to_root(strings + arrays)
    assert len(both) == 400
    for obj, path in zip(strings + arrays, both):
        # Each gets the path a search for it alone gives, even through a String of the batch.
        single = leak_heap.path_to_root(obj)
        assert (path if path else None) == single
        assert path.target == obj
    assert any(any(h.target in strings for h in p.hops[:-1]) for p in both[200:] if p)
    assert leak_heap.paths_to_root([]) == []


def test_frame_roots_hang_from_their_thread():
    heap = hprofkit.open_heap(dump_path("platform_art__RI.hprof"))
    frames = [r for r in heap.gc_roots if r.kind in ("JAVA_FRAME", "JNI_LOCAL") and r.object is not None]
    threads = {r.thread_serial: r.object for r in heap.gc_roots if r.kind == "THREAD_OBJECT" and r.object is not None}
    checked = 0
    for root in frames[:50]:
        path = heap.path_to_root(root.object)
        if path.hops[0].name in ("JAVA_FRAME", "JNI_LOCAL") and root.thread_serial in threads:
            assert path.hops[0].target == threads[root.thread_serial]
            assert path.hops[1].ref_type == "LOCAL" and path.hops[1].holder == threads[root.thread_serial]
            assert path.hops[1].name is None or "(" in path.hops[1].name
            assert "<Java Local>" in str(path) and "│ GC Root: Thread object" in str(path)
            checked += 1
    assert checked


# ---- what a thread retains (#31, point 6b) ----------------------------------------------------

def reachable(succ: dict[int, list[int]], roots, removed: int | None = None) -> set[int]:
    """The objects a plain walk from `roots` reaches, never entering `removed`."""
    seen = {r for r in roots if r != removed}
    todo = list(seen)
    while todo:
        for target in succ[todo.pop()]:
            if target not in seen and target != removed:
                seen.add(target)
                todo.append(target)
    return seen


def removal_retained(heap, succ, thread, stack_included: bool = True) -> int:
    """What becomes unreachable when `thread`'s object goes, with the roots of
    its stack when `stack_included` (MAT's model) or without (the model
    before #31): the bytes a walk from the other roots no longer reaches."""
    roots = [r for r in heap.gc_roots if r.object is not None and r.kind != "UNREACHABLE"]
    everything = reachable(succ, [r.object_id for r in roots])
    left = reachable(succ, [r.object_id for r in roots if not (
        stack_included and r.kind in THREADS_ROOTS and r.thread_serial == thread.serial)], thread.object.id)
    return sum(heap.object(i).shallow_size for i in everything - left)


@pytest.mark.parametrize("name", ["mat__oracle_jdk8_05_x64.hprof", "mat__sun_jdk6_18_x32.hprof",
                                  "hprof-slurp__hprof-64.bin", "platform_art__RI.hprof"])
def test_a_thread_retains_what_only_its_stack_holds(name):
    """A thread's retained size is what removing its object, and with it the roots of its
    stack, leaves unreachable: a plain walk from the other roots, for every thread.  The
    roots of a thread are the objects threads() lists for it.  On the HotSpot dumps some
    thread retains more than its object alone did (the JDK 8 dump's main: 77,008 B, 528 B
    before); on the ART one each object of a stack has another holder."""
    heap = hprofkit.open_heap(dump_path(name))
    succ = strong_references(heap)
    threads = [t for t in heap.threads() if t.object is not None]
    assert len({t.serial for t in threads}) == len(threads) > 3
    moved = 0
    for t in threads:
        assert t.retained_size == removal_retained(heap, succ, t) == heap.retained_size(t.object), t.name
        stack = {o.id for f in t.frames for o in f.locals} | {o.id for o in t.held}
        assert stack == {r.object_id for r in heap.gc_roots
                         if r.object is not None and r.kind in THREADS_ROOTS and r.thread_serial == t.serial}
        moved += t.retained_size > removal_retained(heap, succ, t, stack_included=False)
    assert bool(moved) == (name != "platform_art__RI.hprof")


def write_threads_dump(path: Path) -> None:
    """Two threads (serials 1 and 2; Thread 0x5000 and 0x5100): a frame of the first alone
    holds a 1 MB byte[] (0x6000) through an Object[] (0x6100); both frames hold a shared
    Object[] (0x6200) and its 64 KB byte[] (0x6300); the second's native stack holds an
    Object (0x6400) a JNI global holds too."""
    with HprofWriter(path, id_size=4) as w:
        for cid, name in ((OBJ, "java/lang/Object"), (0x1030, "java/lang/Thread"), (ARR, "[Ljava/lang/Object;"),
                          (0x1038, "[B")):
            w.load_class(cid, name)
        with w.heap_dump() as seg:
            seg.root_thread_object(0x5000, 1)
            seg.root_thread_object(0x5100, 2)
            seg.root_java_frame(0x6100, 1, 0)
            seg.root_java_frame(0x6200, 1, 0)
            seg.root_jni_local(0x6200, 2, 0)
            seg.root_native_stack(0x6400, 2)
            seg.root_jni_global(0x6400)
            seg.class_dump(OBJ)
            seg.class_dump(0x1030, super_id=OBJ, fields=[("name", "object")], instance_size=4)
            seg.class_dump(ARR, super_id=OBJ)
            seg.class_dump(0x1038, super_id=OBJ)
            seg.instance(0x5000, 0x1030, values=[0])
            seg.instance(0x5100, 0x1030, values=[0])
            seg.object_array(0x6100, ARR, [0x6000])
            seg.primitive_array(0x6000, "byte", bytes(1 << 20))
            seg.object_array(0x6200, ARR, [0x6300])
            seg.primitive_array(0x6300, "byte", bytes(1 << 16))
            seg.instance(0x6400, OBJ, values=[])
        w.heap_dump_end()


def test_a_threads_stack_is_its_own_or_shared(tmp_path):
    """The first thread retains the 1 MB array its frame alone holds, and the Object[]
    holding it; the array both threads' frames hold is retained by neither, nor is the
    object a JNI global holds too; semantics="visualvm" keeps VisualVM's figures (a thread
    object's own)."""
    path = tmp_path / "threads.hprof"
    write_threads_dump(path)
    heap = hprofkit.open_heap(path)
    first, second = sorted((t for t in heap.threads()), key=lambda t: t.serial)
    alone, shared = heap.object(0x6100), heap.object(0x6200)
    assert first.retained_size == first.object.shallow_size + alone.retained_size
    assert alone.retained_size == alone.shallow_size + heap.object(0x6000).shallow_size > 1 << 20
    assert heap.dominator(alone) == first.object and heap.dominator(shared) is None
    assert second.retained_size == second.object.shallow_size and heap.dominator(heap.object(0x6400)) is None
    assert [o for o, _ in heap.top_retainers(1)] == [first.object]
    succ = strong_references(heap)
    assert [removal_retained(heap, succ, t) for t in (first, second)] == [first.retained_size, second.retained_size]
    # Paths still start at the roots: a LOCAL hop from the thread.
    assert [h.ref_type for h in heap.path_to_root(heap.object(0x6000), exclude=()).hops] == [
        "ROOT", "LOCAL", "ARRAY_ENTRY"]
    vv = hprofkit.open_heap(path, semantics="visualvm")
    assert all(t.retained_size == t.object.shallow_size for t in vv.threads())
    assert vv.dominator(vv.object(0x6100)) is None


def test_dominators_retained_and_top(leak_heap):
    top = leak_heap.top_retainers(10)
    assert len(top) == 10 and [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    for obj, size in top:
        assert size == leak_heap.retained_size(obj) == obj.retained_size  # a HeapClass's too: its own
        assert obj.retained_count == leak_heap.retained_count(obj) >= 1
        dom = leak_heap.dominator(obj)
        if dom is not None:
            assert leak_heap.retained_size(dom) >= size
    roots = [r.object for r in leak_heap.gc_roots if r.object is not None]
    assert all(leak_heap.dominator(o) is None for o in roots[:100])
    assert leak_heap.top_retainers(0) == []
    with pytest.raises(ValueError):
        leak_heap.top_retainers(-1)
    strings = leak_heap.find_class("java.lang.String")
    assert 0 < strings.instances_retained_size <= sum(s.retained_size for s in strings.instances())
    assert strings.instance_count <= strings.instances_retained_count <= sum(s.retained_count for s in strings.instances())
    assert (strings.retained_size, strings.retained_count) == (leak_heap.retained_size(strings),
                                                              leak_heap.retained_count(strings))
    # The pair by class is consistent: the same instances, their sizes and their counts.
    for cls in leak_heap.classes:
        assert (cls.instances_retained_size == 0) == (cls.instances_retained_count == 0), cls


def test_bad_arguments(leak_heap):
    other = hprofkit.open_heap(dump_path("mat__sun_jdk5_13_x32.hprof"))
    foreign = next(other.objects())
    with pytest.raises(ValueError):
        leak_heap.retained_size(foreign)
    with pytest.raises(ValueError):
        leak_heap.path_to_root(foreign)
    with pytest.raises(TypeError):
        leak_heap.dominator(42)
    with pytest.raises(TypeError):
        leak_heap.path_to_root(next(leak_heap.objects()), exclude=("not a matcher",))
    with pytest.raises(ValueError):
        hprofkit.open_heap(dump_path("mat__sun_jdk5_13_x32.hprof"), semantics="mat")
    other.close()
    with pytest.raises(ValueError):
        other.retained_size(foreign)
    assert hprofkit.open_heap(dump_path("mat__sun_jdk5_13_x32.hprof")).semantics == "hprofkit"


@pytest.mark.parametrize("build", [
    lambda: match.instance_field(None, "x"), lambda: match.instance_field("a.B", None),
    lambda: match.static_field(None, "x"), lambda: match.static_field("a.B", ""),
    lambda: match.thread_local(None), lambda: match.root_class(None), lambda: match.root_class(""),
    lambda: match.instance_field(b"a.B", "x"),
])
def test_matchers_check_their_arguments_when_built(build):
    """#19: match.instance_field(None, "x") was accepted and failed only when a search used it."""
    with pytest.raises(TypeError, match="must be a non-empty str"):
        build()


def test_threads_compute_once_and_agree():
    path = dump_path("mat__sun_jdk6_18_x32.hprof")
    heap = hprofkit.open_heap(path)
    objs = list(heap.objects())[::50]
    results, errors = [None] * 4, []

    def work(k):
        try:
            if k % 2:
                results[k] = [heap.retained_size(o) for o in objs]
            else:
                results[k] = [p is None for p in heap.paths_to_root(objs)] and [heap.retained_size(o) for o in objs]
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(r == results[0] for r in results)
    fresh = hprofkit.open_heap(path)
    assert results[0] == [fresh.retained_size(fresh.object(o.id)) for o in objs]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", *args], capture_output=True, text=True, timeout=300)


def test_cli_path_and_top(leak_heap):
    dump = str(dump_path(LEAKCANARY))
    service = next(leak_heap.find_class("com.example.leakcanary.LeakyService").instances())
    out = run_cli("path", dump, hex(service.id))
    assert out.returncode == 0 and out.stdout.strip() == str(leak_heap.path_to_root(service, exclude=match.JDK_DEFAULTS))
    assert run_cli("path", dump, "0x1").returncode == 1
    top = run_cli("top", dump, "-n", "5", "--json")
    rows = json.loads(top.stdout)
    assert [(r["id"], r["retained_size"]) for r in rows] == [(o.id, s) for o, s in leak_heap.top_retainers(5)]
    by_class = json.loads(run_cli("top", dump, "-n", "3", "--by", "class", "--json", "--semantics", "visualvm").stdout)
    assert len(by_class) == 3
    assert by_class[0]["retained_size"] >= by_class[1]["retained_size"] >= by_class[2]["retained_size"]
    text = run_cli("top", dump, "-n", "2")
    assert text.returncode == 0 and len(text.stdout.splitlines()) == 3  # a header and 2 rows
    bad = run_cli("top", "/nonexistent.hprof")
    assert bad.returncode != 0 and bad.stderr.startswith("hprofkit: error:") and "Traceback" not in bad.stderr


@pytest.mark.sanitize
def test_a_path_named_after_its_heap_closed_is_freed_cleanly():
    """A path whose hops were named keeps the namer's tables; freed after heap.close() (a leak
    list kept past a `with open_heap(...)`), it read the freed reachability state for its
    allocator: a segfault in test_progress's run."""
    import gc
    with hprofkit.open_heap(dump_path("leakcanary__leak_service_binder.hprof")) as heap:
        leaks = heap.find_leaks()
        paths = [heap.path_to_root(obj) for obj, _ in heap.top_retainers(20)]
        text = [str(leak) for leak in leaks] + [str(path) for path in paths if path]
    assert leaks and text
    del leaks, paths
    gc.collect()
