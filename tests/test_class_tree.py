"""heap.class_tree(): the dominator tree folded by class path, against a fold
written here in plain Python over heap.dominator_roots() and obj.dominated()
(a node per (parent node, class), class objects apart; each object's shallow
size from the dump counted once, in its own node; a node's retained size its
shallow size and its children's), on shared dumps of both VMs and a fresh
HeapGen dump: every node's objects, shallow and retained bytes, its objects
themselves (node.sample), the root holding what the top-level dominators
retain, and far fewer nodes than objects."""

from __future__ import annotations

from collections import defaultdict

import pytest

import hprofkit
from conftest import HPROF_DIR
from leaky_heap import android_app

SHARED = ["mat__openjdk_jdk11_04_x64.hprof.gz", "leakcanary__leak_service_binder.hprof",
          "mat__oracle_jdk8_05_x64.hprof"]


def key_of(obj) -> tuple[bool, int | None]:
    """(is a class object, the class ordinal): a class object by the class it is."""
    if isinstance(obj, hprofkit.HeapClass):
        return True, obj.ordinal
    cls = obj.class_
    return False, None if cls is None else cls.ordinal


def plain_fold(heap):
    """The fold, breadth first down the dominator tree: per node (parent, key) its
    objects' ids, shallow sum and retained size (shallow + children's)."""
    node_of_key: dict[tuple[int, tuple], int] = {}
    parent_of, key, members, shallow = [None], [None], [[]], [0]
    level = [(0, obj) for obj in heap.dominator_roots()]
    while level:
        below = []
        for parent, obj in level:
            k = key_of(obj)
            node = node_of_key.get((parent, k))
            if node is None:
                node = node_of_key[(parent, k)] = len(parent_of)
                parent_of.append(parent)
                key.append(k)
                members.append([])
                shallow.append(0)
            members[node].append(obj.id)
            shallow[node] += obj.shallow_size
            below.extend((node, child) for child in obj.dominated())
        level = below
    retained = list(shallow)
    for node in range(len(parent_of) - 1, 0, -1):  # children were numbered after their parents
        retained[parent_of[node]] += retained[node]
    return parent_of, key, members, shallow, retained


def path_of(parent_of, key, node):
    path = []
    while node:
        path.append(key[node])
        node = parent_of[node]
    return tuple(reversed(path))


def tree_path(node):
    path = []
    while node.parent is not None:
        path.append((node.is_class, None if node.class_ is None else node.class_.ordinal))
        node = node.parent
    return tuple(reversed(path))


def check_against_plain_fold(heap):
    tree = heap.class_tree()
    parent_of, key, members, shallow, retained = plain_fold(heap)
    expected = {path_of(parent_of, key, n): (len(members[n]), shallow[n], retained[n]) for n in range(1, len(key))}
    got = {tree_path(node): (node.objects, node.shallow_size, node.retained_size) for node in tree.nodes[1:]}
    assert got == expected
    assert tree.root.retained_size == retained[0] == sum(obj.retained_size for obj in heap.dominator_roots())
    assert tree.root.objects == 0 and tree.root.class_ is None and tree.root.path == ()
    # Children: largest retained first, each below its parent; names as the path shows them.
    for node in tree.nodes:
        assert [c.retained_size for c in node.children] == sorted((c.retained_size for c in node.children),
                                                                  reverse=True)
        assert all(c.parent is node for c in node.children)
    # The objects of a node, one click away: every object of the largest nodes, and the first few of all.
    ids = {path_of(parent_of, key, n): members[n] for n in range(1, len(key))}
    for node in sorted(tree.nodes[1:], key=lambda n: -n.retained_size)[:25]:
        listed = node.sample(None)
        assert sorted(obj.id for obj, _ in listed) == sorted(ids[tree_path(node)])
        assert [size for _, size in listed] == sorted((size for _, size in listed), reverse=True)
        assert node.sample(3) == listed[:3]
    return tree


@pytest.mark.parametrize("name", SHARED)
def test_the_class_tree_is_the_plain_fold_on_shared_dumps(name):
    with hprofkit.open_heap(HPROF_DIR / name) as heap:
        tree = check_against_plain_fold(heap)
        top = tree.root.children[0]
        assert top.path == (top.name,)
        assert top.name == (f"{top.class_.name}.class" if top.is_class else top.class_.name)


def test_the_class_tree_of_a_heapgen_dump_has_far_fewer_nodes_than_objects(heapgen_dumps):
    with hprofkit.open_heap(heapgen_dumps[1]) as heap:
        tree = check_against_plain_fold(heap)
        assert len(tree) * 10 < heap.object_count
        # Every class path names classes the objects on it have.
        for depth, node in tree.walk():
            if depth:
                for obj, _ in node.sample(2):
                    assert key_of(obj) == (node.is_class, node.class_.ordinal if node.class_ else None)


def test_a_chain_of_one_class_counts_each_byte_once(tmp_path):
    """A linked list held by a static: one node per link (the paths differ in length),
    and a node's retained size the union of its objects' subtrees."""
    app = android_app()
    links, head = 50, None
    for _ in range(links):
        head = app.new("com.example.Node", next=head)
    app.set_static("com.example.Leaks", "sLoop", "object", head)
    app.write(tmp_path / "chain.hprof")
    with hprofkit.open_heap(tmp_path / "chain.hprof") as heap:
        tree = check_against_plain_fold(heap)
        (held,) = tree.find("com.example.Leaks.class")
        (chain,) = held.children
        assert (chain.name, chain.objects) == ("com.example.Node", 1)
        nodes = heap.find_class("com.example.Node").instances()
        assert chain.retained_size == sum(o.shallow_size for o in nodes) == heap.object(
            chain.sample(1)[0][0].id).retained_size
        depth = 1
        while chain.children:
            (chain,) = chain.children
            depth += 1
        assert depth == links and chain.path[0] == "com.example.Leaks.class"


def test_bounded_views():
    with hprofkit.open_heap(HPROF_DIR / "mat__oracle_jdk8_05_x64.hprof") as heap:
        tree = heap.class_tree()
        rows = list(tree.rows(max_depth=2, rows=3))
        assert max(depth for depth, *_ in rows) == 1
        shown = defaultdict(int)
        for depth, node, hidden, hidden_bytes in rows:
            if node is not None:
                shown[(depth, node.parent.index)] += 1
            else:
                assert hidden > 0 and hidden_bytes > 0
        assert max(shown.values()) == 3
        text = tree.format(max_depth=2, rows=3)
        assert text.splitlines()[2].split()[-1] == tree.root.children[0].name
        html = tree._repr_html_()
        assert "more" in html and tree.root.children[0].name in html
        with pytest.raises(ValueError):
            tree.format(rows=-1)
        with pytest.raises(ValueError):
            tree.root.children[0].sample(-1)
