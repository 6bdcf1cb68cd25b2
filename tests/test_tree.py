"""The dominator tree, navigable (#24): dominator_roots(), dominated(),
dominator_of() and retained_by().

- The tree's rows agree with dominators computed independently: a naive
  iterative algorithm over hprofkit's graph rebuilt from the heap API
  (tests/test_reach.py's), and tests/vvmodel.py's model of VisualVM's graph
  (itself checked against VisualVM on every shared dump).
- retained_by("class") equals cls.instances_retained_size for every class of every
  shared dump in both semantics, and VisualVM's retained size by class (the
  oracle) on real and fresh dumps.
- Every group's retained size equals the size of the union of its members'
  retained sets, computed by brute force from the naive dominators.
"""

from __future__ import annotations

import itertools
import json
import pickle
import threading
from collections import defaultdict
from pathlib import Path

import pytest

import hprofkit
from conftest import INVENTORY, dump_path
from test_reach import ROOT as NAIVE_ROOT, hprofkit_graph
from vvmodel import Model, iterative_dominators

ALL_DUMPS = [e["file"] for e in INVENTORY if e["file"] != "py-hprof__basic_reads.hprof"]
# Small dumps of each kind for the naive checks: ART, a 10,000-deep chain, 32-bit HotSpot, JDK 11.
NAIVE_DUMPS = ["leakcanary__leak_service_binder.hprof", "platform_art__RI.hprof", "mat__sun_jdk6_18_x32.hprof",
               "heapdump__small_heap.bin"]
ORACLE_DUMPS = ["heapdump__small_heap.bin", "leakcanary__leak_service_binder.hprof",
                "mat__oracle_jdk8_05_x64.hprof", "mat__sun_jdk5_64bit.hprof"]


def naive_tree(heap, path: Path) -> dict[int, object]:
    """{object id: its immediate dominator's id, NAIVE_ROOT, or absent when
    unreachable}, computed without hprofkit's dominators: the naive
    algorithm over hprofkit's graph, or vvmodel's model of VisualVM's."""
    if heap.semantics == "hprofkit":
        succ, preds = hprofkit_graph(heap)
        idom = iterative_dominators(succ, preds, NAIVE_ROOT)
        idom.pop(NAIVE_ROOT, None)
        return idom
    return {k: (NAIVE_ROOT if v == 0 else v) for k, v in Model(path).idom.items()}


def retained_key(heap, obj) -> tuple[int, int]:
    """The order of a row: largest retained first (VisualVM's -1 as 0), ties by id."""
    return (-max(heap.retained_size(obj), 0), obj.id)


@pytest.mark.parametrize("semantics", ["hprofkit", "visualvm"])
@pytest.mark.parametrize("name", NAIVE_DUMPS)
def test_rows_agree_with_naive_dominators(name, semantics, plain_path):
    path = plain_path(name)
    heap = hprofkit.open_heap(path, semantics=semantics)
    idom = naive_tree(heap, path)
    children: dict[object, list[int]] = defaultdict(list)
    for node, parent in idom.items():
        children[parent].append(node)
    roots = heap.dominator_roots()
    assert sorted(o.id for o in roots) == sorted(children[NAIVE_ROOT])
    assert roots == sorted(roots, key=lambda o: retained_key(heap, o))
    assert heap.dominator_roots(n=3) == roots[:3] and heap.dominator_roots(n=0) == []
    wrong = []
    for obj in heap.objects():
        kids = obj.dominated()
        if sorted(k.id for k in kids) != sorted(children.get(obj.id, ())):
            wrong.append((hex(obj.id), len(kids), len(children.get(obj.id, ()))))
        elif kids != sorted(kids, key=lambda o: retained_key(heap, o)):
            wrong.append((hex(obj.id), "order"))
        parent = heap.dominator_of(obj)
        expected = idom.get(obj.id)
        if expected is None:
            ok = parent is None
        elif expected == NAIVE_ROOT:
            ok = parent is hprofkit.ROOT
        else:
            ok = isinstance(parent, hprofkit.HeapObject) and parent.id == expected
        if not ok:
            wrong.append((hex(obj.id), "dominator_of", parent, expected))
        # dominator() keeps its old answers: None for the root and for the unreachable.
        if heap.dominator(obj) != (parent if isinstance(parent, hprofkit.HeapObject) else None):
            wrong.append((hex(obj.id), "dominator", heap.dominator(obj), parent))
    assert not wrong, f"{len(wrong)} objects differ, e.g. {wrong[:5]}"
    if semantics == "hprofkit":
        # Both kinds of None of dominator() are told apart now: some objects are unreachable.
        assert any(heap.dominator_of(o) is None for o in heap.objects())
        assert all(heap.dominator(o) is None for o in roots)


def test_root_sentinel():
    assert repr(hprofkit.ROOT) == "hprofkit.ROOT"
    assert pickle.loads(pickle.dumps(hprofkit.ROOT)) is hprofkit.ROOT
    assert hprofkit.ROOT is not None and hprofkit.ROOT


@pytest.mark.parametrize("name", ALL_DUMPS)
def test_retained_by_class_equals_class_retained_size(name, plain_path):
    """For every class of every shared dump, in both semantics."""
    for semantics in ("hprofkit", "visualvm"):
        heap = hprofkit.open_heap(plain_path(name), semantics=semantics)
        groups = {g.key: g for g in heap.retained_by("class", unreachable=True)}  # every object, as the classes count
        wrong = []
        for cls in heap.classes:
            group = groups.get(cls)
            got = (group.objects, group.retained_size) if group else (0, 0)
            if got != (cls.instance_count, cls.instances_retained_size):
                wrong.append((cls.name, got, cls.instance_count, cls.instances_retained_size))
        assert not wrong, f"{semantics}: {len(wrong)} of {len(heap.classes)} classes differ, e.g. {wrong[:5]}"
        sizes = [g.retained_size for g in groups.values()]
        assert list(groups) == [g.key for g in heap.retained_by("class", unreachable=True)]
        assert sizes == sorted(sizes, reverse=True)
        assert sum(g.shallow_size for g in groups.values()) == sum(
            o.shallow_size for o in heap.objects() if o.kind != "class")


def check_against_oracle(path: Path, oracle) -> None:
    heap = hprofkit.open_heap(path, semantics="visualvm")
    want = oracle.retained_by_class(path)
    got = {f"{g.key.name}@{g.key.class_id:x}": (g.objects, g.retained_size) for g in heap.retained_by("class")}
    assert got == want


@pytest.mark.parametrize("name", ORACLE_DUMPS)
def test_retained_by_class_equals_visualvm(name, oracle, plain_path):
    check_against_oracle(plain_path(name), oracle)


def test_retained_by_class_equals_visualvm_on_fresh_dumps(heapgen_dumps, android_heapgen_dump, oracle):
    check_against_oracle(heapgen_dumps[0], oracle)
    check_against_oracle(android_heapgen_dump, oracle)


def package_key(obj) -> str:
    """What retained_by("package") groups by, spelled out: the package of the
    object's class, or for a class object of the class it is."""
    name = obj.name if obj.kind == "class" else obj.class_name
    element = name.rstrip("[]")
    if element != name and "." not in element:
        return "java.lang" if element in {"boolean", "char", "float", "double", "byte", "short", "int",
                                           "long"} else ""
    return element.rpartition(".")[0]


def loader_key(obj):
    """The loader's id, or "boot" (a callable's None leaves an object out)."""
    cls = obj if obj.kind == "class" else obj.class_
    loader = None if cls is None else cls.loader
    return "boot" if loader is None else loader.id


KEYS = {
    "package": package_key,
    "loader": loader_key,
    "heap": lambda obj: obj.heap_name or "default",
}


@pytest.mark.parametrize("semantics", ["hprofkit", "visualvm"])
@pytest.mark.parametrize("name", ["leakcanary__leak_service_binder.hprof", "mat__sun_jdk6_18_x32.hprof"])
def test_group_sizes_are_unions_of_retained_sets(name, semantics, plain_path):
    """Brute force: each group's members, shallow sizes, and the union of the
    retained sets (subtrees of the naive dominator tree) of its members; a
    callable key gives the same groups as the named key it spells out."""
    path = plain_path(name)
    heap = hprofkit.open_heap(path, semantics=semantics)
    idom = naive_tree(heap, path)
    size = {o.id: o.shallow_size for o in heap.objects()}
    for key, spelled_out in KEYS.items():
        members: dict[object, list[int]] = defaultdict(list)
        for obj in heap.objects():
            members[spelled_out(obj)].append(obj.id)
        want = {}
        for k, ids in members.items():
            # The members no other member dominates, and the union of their subtrees.
            group = set(ids)
            tops, union = [], 0
            for oid in ids:
                d = idom.get(oid)
                while d is not None and d != NAIVE_ROOT and d not in group:
                    d = idom.get(d)
                if oid in idom and d == NAIVE_ROOT:
                    tops.append(oid)
            if semantics == "hprofkit":
                for oid in idom:  # a node is in the union when a member dominates it
                    d = oid
                    while d != NAIVE_ROOT and d not in group:
                        d = idom[d]
                    union += size[oid] if d != NAIVE_ROOT else 0
            else:  # VisualVM's retained sizes of the tops
                union = sum(max(heap.retained_size(heap.object(t)), 0) for t in tops)
            want[k] = (len(ids), sum(size[i] for i in ids), union)
        for k_fn in (key, spelled_out):
            got = {g.key: (g.objects, g.shallow_size, g.retained_size)
                   for g in heap.retained_by(k_fn, unreachable=True)}  # members: every object
            if key == "loader" and k_fn == key:
                got = {("boot" if k is None else k.id): v for k, v in got.items()}
            assert got == want, (key, k_fn)


def test_retained_by_callable_and_errors():
    heap = hprofkit.open_heap(dump_path("leakcanary__leak_service_binder.hprof"))
    calls = []

    def kind(obj):
        calls.append(obj)
        return None if obj.kind == "primitive_array" else obj.kind

    groups = heap.retained_by(kind, unreachable=True)
    assert len(calls) == heap.object_count  # one Python call per object
    assert {g.key for g in groups} == {"instance", "class", "object_array"}
    assert sum(g.objects for g in groups) == sum(1 for o in heap.objects() if o.kind != "primitive_array")
    everything = heap.retained_by(lambda obj: 1, unreachable=True)
    assert len(everything) == 1
    assert everything[0].retained_size == sum(heap.retained_size(o) for o in heap.dominator_roots())
    assert heap.retained_by(lambda obj: None) == []
    for bad in ("klass", 3, None):
        with pytest.raises(ValueError, match="key must be one of"):
            heap.retained_by(bad)

    def boom(obj):
        raise RuntimeError("key failed")
    with pytest.raises(RuntimeError, match="key failed"):
        heap.retained_by(boom)
    other = hprofkit.open_heap(dump_path("heapdump__small_heap.bin"))
    with pytest.raises(ValueError, match="another heap"):
        heap.dominator_of(next(other.objects()))
    with pytest.raises(TypeError):
        heap.dominator_of("not an object")
    obj = heap.dominator_roots(n=1)[0]
    with pytest.raises(ValueError, match="n must be"):
        obj.dominated(n=-1)
    assert obj.dominated(n=0) == []
    heap.close()
    for call in (heap.dominator_roots, obj.dominated, lambda: heap.retained_by("class"),
                 lambda: heap.dominator_of(obj)):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_heap_groups_on_android_and_hotspot():
    art = hprofkit.open_heap(dump_path("platform_tools_base__dialer.android-hprof"))
    names = {g.key for g in art.retained_by("heap", unreachable=True)}
    assert names == {o.heap_name for o in art.objects()} and "default" not in names
    hotspot = hprofkit.open_heap(dump_path("heapdump__small_heap.bin"))
    (group,) = hotspot.retained_by("heap", unreachable=True)
    assert group.key == "default" and group.objects == hotspot.object_count


def test_threads_build_the_tree_once():
    """Several threads asking first, at the same time, get the same rows."""
    path = dump_path("mat__sun_jdk6_18_x32.hprof")
    heap = hprofkit.open_heap(path)
    results: list = [None] * 6
    barrier = threading.Barrier(len(results))

    def work(k):
        barrier.wait()
        if k % 2:
            results[k] = [o.id for o in heap.dominator_roots()]
        else:
            results[k] = [o.id for o in hprofkit.open_heap(path).dominator_roots()] if k == 0 else \
                [g.retained_size for g in heap.retained_by("package")] and [o.id for o in heap.dominator_roots()]
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results)


# ---- the CLI ----------------------------------------------------------------------------------

def cli_json(capsys, *args: str) -> dict:
    from hprofkit.cli import main
    assert main(["dominators", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_tree_and_groups(capsys):
    from hprofkit.cli import main
    path = str(dump_path("leakcanary__leak_service_binder.hprof"))
    heap = hprofkit.open_heap(path)
    doc = cli_json(capsys, path, "-n", "4", "--depth", "2")
    roots = heap.dominator_roots()
    assert [r["id"] for r in doc["roots"]] == [o.id for o in roots[:4]]
    assert doc["more"] == len(roots) - 4
    assert doc["more_retained_size"] == sum(heap.retained_size(o) for o in roots[4:])
    for node, obj in zip(doc["roots"], roots):
        assert node["retained_size"] == heap.retained_size(obj) and node["shallow_size"] == obj.shallow_size
        assert node["class"] == (obj.name if obj.kind == "class" else obj.class_name)
        assert [c["id"] for c in node["children"]] == [o.id for o in obj.dominated(n=4)]
        assert all("children" not in c for c in node["children"])  # --depth 2: two levels
    groups = cli_json(capsys, path, "--group-by", "package", "-n", "3", "--semantics", "visualvm")
    want = hprofkit.open_heap(path, semantics="visualvm").retained_by("package")
    assert [(g["package"], g["objects"], g["shallow_size"], g["retained_size"]) for g in groups["groups"]] == [
        tuple(g) for g in want[:3]]
    assert groups["more"] == len(want) - 3
    loaders = cli_json(capsys, path, "--group-by", "loader")
    assert {g["loader"]["id"] if g["loader"] else None for g in loaders["groups"]} == {
        g.key.id if g.key is not None else None for g in heap.retained_by("loader")}
    by_class = cli_json(capsys, path, "--group-by", "class", "-n", "1")
    top = heap.retained_by("class")[0]
    assert by_class["groups"][0] == {"class": top.key.name, "class_id": top.key.class_id, "instances": top.objects,
                                     "shallow_size": top.shallow_size, "retained_size": top.retained_size}
    # Text: a header, the column names, then one line per row printed.
    assert main(["dominators", path, "-n", "2", "--depth", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{len(roots):,} objects dominated by the virtual root")
    assert len(lines) == 2 + 2 * (1 + 2 + 1) + 1  # 2 roots, each 2 children and a "more" line; "more" roots
    assert f"0x{roots[0].id:x}" in lines[2] and lines[3].lstrip().split("  ")[-1].startswith("├─ ")
    assert lines[-1].endswith(f"… {len(roots) - 2:,} more")
    assert main(["dominators", path, "--group-by", "heap"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("zygote")


@pytest.mark.parametrize("args", [["--depth", "0"], ["-n", "0"], ["--depth", "x"], ["--group-by", "size"],
                                  ["--depth", "2", "--group-by", "class"]])
def test_cli_refuses_bad_arguments(args, capsys):
    """A usage error, as argparse reports one: the usage line, the error, exit 2."""
    from hprofkit.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(["dominators", str(dump_path("heapdump__small_heap.bin")), *args])
    err = capsys.readouterr().err.splitlines()
    assert exit_.value.code == 2 and err[0].startswith("usage: ") and "dominators: error:" in err[-1]


def test_cli_reads_stdin_and_a_heap_dump_number(capsys, monkeypatch):
    import io
    from hprofkit.cli import main
    path = dump_path("heapdump__small_heap.bin")
    want = cli_json(capsys, str(path), "--heap-dump", "-1")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert cli_json(capsys, "-") == {**want, "file": "-"}
    assert main(["dominators", str(path), "--heap-dump", "1"]) == 1
    assert "heap dump" in capsys.readouterr().err


# ---- the README's SQL recipe --------------------------------------------------------------------

def readme_recipe() -> str:
    """The query of the README's "SQL in a notebook" example, as written there."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    start = text.index('hprofkit.sql(tables, """') + len('hprofkit.sql(tables, """')
    return text[start:text.index('"""', start)]


def test_readme_recipe_counts_no_byte_twice():
    """The README's top classes by retained size are the classes' retained sizes (VisualVM's,
    the union rule), where its old recipe summed objects.retained_size by class and counted an
    object once per instance of its class above it (twice over for HashMap$Entry here)."""
    heap = hprofkit.open_heap(dump_path("mat__sun_jdk6_18_x32.hprof"))
    tables = heap.tables()
    rows = hprofkit.sql(tables, readme_recipe()).to_pylist()
    ranked = sorted(heap.classes, key=lambda c: -c.instances_retained_size)[:10]
    assert [(r["name"], r["instances"], r["retained"]) for r in rows] == [
        (c.name, c.instance_count, c.instances_retained_size) for c in ranked]
    summed = {r["name"]: r["s"] for r in hprofkit.sql(tables, """
        select c.name, sum(o.retained_size) as s from objects o join classes c on c.id = o.class_id
        where o.kind <> 'class' group by c.name""").to_pylist()}
    entry = heap.find_class("java.util.HashMap$Entry")
    assert summed[entry.name] > 2 * entry.instances_retained_size


# ---- merged paths -----------------------------------------------------------------------------

def object_key(obj) -> tuple:
    return (obj.name, True) if obj.kind == "class" else (obj.class_name, False)


def path_keys(path) -> list[tuple]:
    """A HeapPath as the merged tree folds it: the root (kind, root object's class), then per hop
    (ref_type, name with array indexes as "[]", class), each with the object it reaches.  A local
    printed as thread + LOCAL hop folds to its root object."""
    hops = path.hops
    if len(hops) > 1 and hops[1].ref_type == "LOCAL":
        first, rest = hops[1].target, hops[2:]
    else:
        first, rest = hops[0].target, hops[1:]
    keys = [(("ROOT", hops[0].name) + object_key(first), first)]
    for hop in rest:
        name = "[]" if hop.ref_type == "ARRAY_ENTRY" else hop.name
        keys.append(((hop.ref_type, name) + object_key(hop.target), hop.target))
    return keys


def node_key(node) -> tuple:
    return (node.ref_type, node.name, node.class_.name if node.class_ is not None else None, node.is_class)


@pytest.mark.parametrize("semantics", ["hprofkit", "visualvm"])
@pytest.mark.parametrize("name", ["leakcanary__leak_service_binder.hprof", "mat__oracle_jdk8_05_x64.hprof",
                                  "platform_art__RI.hprof"])
def test_merged_paths_fold_single_paths(name, semantics):
    """Every node's objects, targets and sizes equal what the targets' own path_to_root
    give, folded by hand; duplicates count once; unreached targets are counted apart."""
    heap = hprofkit.open_heap(dump_path(name), semantics=semantics)
    rng = __import__("random").Random(name)
    everything = list(heap.objects())
    targets = rng.sample(everything, min(150, len(everything)))
    # The default matchers on one dump (compiled once per path_to_root: slow), none on the others.
    exclude = None if name.startswith("leakcanary") and semantics == "hprofkit" else ()
    merged = heap.merged_paths(targets + targets[:10], exclude=exclude)
    # Prefixes of key paths numbered as they come: (parent number, key) -> number.
    number: dict[tuple, int] = {}
    want_objects: dict[int, set] = defaultdict(set)
    want_targets: dict[int, set] = defaultdict(set)
    unreached = 0
    for obj in targets:
        path = heap.path_to_root(obj, exclude=exclude)
        if path is None:
            unreached += 1
            continue
        prefix = -1
        for key, target in path_keys(path):
            prefix = number.setdefault((prefix, key), len(number))
            want_objects[prefix].add(target.id)
            want_targets[prefix].add(obj.id)
    assert (merged.targets, merged.reached, merged.unreached) == (len(targets), len(targets) - unreached, unreached)
    got = {}
    stack = [(-1, node) for node in merged.children]
    while stack:
        parent, node = stack.pop()
        prefix = number.get((parent, node_key(node)), -2 - len(got))  # unknown: a number of its own
        got[prefix] = node
        stack.extend((prefix, child) for child in node.children)
        assert node.children == sorted(node.children, key=lambda c: (-c.targets, -c.retained_size))
    assert set(got) == set(want_objects)
    for prefix, node in got.items():
        objs = [heap.object(i) for i in want_objects[prefix]]
        assert node.objects == len(objs)
        assert node.shallow_size == sum(o.shallow_size for o in objs)
        assert node.retained_size == sum(max(heap.retained_size(o), 0) for o in objs)  # none dominates another
        assert node.targets == len(want_targets[prefix])
        assert node.target_shallow_size == sum(heap.object(i).shallow_size for i in want_targets[prefix])
    assert sum(n.targets for n in merged.children) == merged.reached
    doc = merged.to_dict()
    assert doc["reached"] == merged.reached and len(doc["children"]) == len(merged.children)
    assert sum(1 for _ in merged.walk()) == len(got)
    text = str(merged).splitlines()
    assert text[0].startswith(f"Merged paths to {len(targets):,} objects") and len(text) == 2 + len(got)


def test_merged_paths_of_nothing_and_errors():
    heap = hprofkit.open_heap(dump_path("heapdump__small_heap.bin"))
    empty = heap.merged_paths([])
    assert (empty.targets, empty.children, str(empty).splitlines()[0]) == (0, [], "Merged paths to 0 objects: 0 reached")
    other = hprofkit.open_heap(dump_path("leakcanary__leak_service_binder.hprof"))
    with pytest.raises(ValueError, match="another heap"):
        heap.merged_paths([next(other.objects())])
    with pytest.raises(TypeError):
        heap.merged_paths([1])
    # A matcher excluding the only way in: the target has no strong path any more.
    obj = next(o for o in heap.objects() if heap.path_to_root(o, exclude=()) is not None and
               len(heap.path_to_root(o, exclude=()).hops) > 2)
    hop = heap.path_to_root(obj, exclude=()).hops[-1]
    if hop.ref_type == "INSTANCE_FIELD":
        cut = hprofkit.match.instance_field(hop.holder.class_name, hop.name)
        alone = heap.merged_paths([obj], exclude=[cut])
        assert (alone.reached + alone.unreached, heap.path_to_root(obj, exclude=[cut]) is None) == (
            1, alone.unreached == 1)


def test_merged_paths_format_takes_counts_only():
    """#30: format(rows=-1) raised a bare IndexError; a negative count is a ValueError, and 0
    prints each level's "… N more" line only."""
    heap = hprofkit.open_heap(dump_path("heapdump__small_heap.bin"))
    merged = heap.merged_paths(list(itertools.islice(heap.objects(), 50)))
    for bad in ({"rows": -1}, {"max_depth": -2}, {"rows": 1.5}):
        with pytest.raises(ValueError, match="must be a count"):
            merged.format(**bad)
    lines = merged.format(rows=0).splitlines()
    assert len(lines) == 3 and lines[2].endswith(f"… {len(merged.children):,} more")


def test_the_dominator_tree_view_opens_at_any_node():
    """#35: the notebook's tree goes on from any node: dominator_tree(root=obj) holds obj's
    subtree, its first level what obj dominates, each node's hidden children counted."""
    heap = hprofkit.open_heap(dump_path("leakcanary__leak_service_binder.hprof"))
    whole = heap.dominator_tree(depth=2).data
    deep = next(o for o, _ in heap.top_retainers(200) if heap.dominator(o) is not None and o.dominated(2))
    view = heap.dominator_tree(root=deep, depth=2, children=5).data
    kids = deep.dominated()
    assert whole["root"] is None and view["root"] == f"{deep.id:x}"
    assert view["total"] == sum(k.retained_size for k in kids) and view["roots"] == len(kids)
    top = [n for n in view["nodes"] if n[4] == -1]
    assert [int(n[1], 16) for n in top] == [k.id for k in kids[:5]]
    for index, n in enumerate(view["nodes"]):
        obj = heap.object(int(n[1], 16))
        listed = [m for m in view["nodes"] if m[4] == index]
        assert n[5] == len(obj.dominated()) - len(listed)
