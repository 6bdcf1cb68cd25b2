"""The class tree: the dominator tree folded by class path, as Perfetto's and
AHAT's class views show a heap.

    tree = heap.class_tree()
    for node in tree.root.children[:5]:            # largest retained first
        print(node.path, node.objects, node.retained_size)
        node.sample(3)                              # its largest objects: one click to the object level
    print(tree.format(max_depth=4, rows=5))

A node is a path of classes from the dominator tree's virtual root: the
objects whose own class ends that path and whose immediate dominator sits in
the parent node (a class object counts as "the class object of C", apart
from C's instances).  The rule of the sizes: each object's shallow size
counts once, in its own node, and a node's retained size is its shallow size
plus its children's retained sizes -- the size of the union of its objects'
retained sets (no byte counted twice when one object of a node dominates
another of the same node, as along a linked list).  The root holds every
byte of the dominator tree: under semantics="hprofkit" every strongly
reachable byte.

The fold runs in C (src/core/hp_domfold.c: linear, 8 B an object while it
runs); the nodes live here as Python objects.  An object's node is not kept:
sample() finds a node's objects again from the root down its path.
"""

from __future__ import annotations

import array
from typing import TYPE_CHECKING, Any, Iterator, Optional

from ._units import human_size

if TYPE_CHECKING:
    from ._heap import Heap, HeapClass, ObjectTable

__all__ = ["ClassNode", "ClassTree", "class_tree"]

_NONE = 0xFFFFFFFF
TOP = 10  # objects the fold keeps per node, largest retained first: sample(n <= TOP) reads them


class ClassNode:
    """One node of heap.class_tree(): the objects at one class path.

    ``class_``: their HeapClass (None for the tree's root, and for objects of a
    class the dump lacks); is_class: they are class objects, of that class.
    objects, shallow_size: how many, their shallow bytes; retained_size: the
    shallow size and the children's retained sizes (the union of the
    objects' retained sets).  children: the nodes below, largest retained
    first; parent: the node above (None for the root); index: its number in
    the tree (parents before children; the root is 0)."""

    __slots__ = ("_tree", "index", "class_", "is_class", "objects", "shallow_size", "retained_size", "parent",
                 "children")

    def __init__(self, tree: ClassTree, index: int, class_: Optional[HeapClass], is_class: bool, objects: int,
                 shallow_size: int, retained_size: int, parent: Optional[ClassNode]) -> None:
        self._tree = tree
        self.index = index
        self.class_ = class_
        self.is_class = is_class
        self.objects = objects
        self.shallow_size = shallow_size
        self.retained_size = retained_size
        self.parent = parent
        self.children: list[ClassNode] = []

    @property
    def name(self) -> str:
        """The node's step of a path: the class name, "C.class" for class objects of C,
        "<unknown class>" without a class, "<root>" for the root."""
        if self.parent is None:
            return "<root>"
        name = self.class_.name if self.class_ is not None else "<unknown class>"
        return f"{name}.class" if self.is_class else name

    @property
    def path(self) -> tuple[str, ...]:
        """The names of the nodes from the root's child down to this one (() for the root)."""
        names = []
        node: Optional[ClassNode] = self
        while node is not None and node.parent is not None:
            names.append(node.name)
            node = node.parent
        return tuple(reversed(names))

    @property
    def depth(self) -> int:
        return len(self.path)

    def sample(self, n: Optional[int] = 10) -> ObjectTable:
        """The node's objects, largest retained size first (ties by lower index), as
        (object, retained size) pairs in an ObjectTable: the n first (None: all).  The
        fold keeps each node's 10 largest; more are found again from the root down the
        node's path (time: the objects of the nodes on it and their children)."""
        from ._heap import ObjectTable
        if n is not None and (not isinstance(n, int) or n < 0):
            raise ValueError(f"n must be a count (0 or more) or None, not {n!r}")
        tree = self._tree
        want = self.objects if n is None else min(n, self.objects)
        if want <= TOP:  # kept by the fold: no walk
            objs = tree._heap._handles(tree._tops[self.index * TOP:self.index * TOP + want])
        else:
            objs = tree._heap._class_tree_members(tree._parents, tree._keys, self.index, want)
        return ObjectTable([(obj, obj.retained_size) for obj in objs])

    def walk(self) -> Iterator[tuple[int, ClassNode]]:
        """(depth below this node, node) for it and every node below, depth first
        (children largest first); no recursion."""
        stack = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, child) for child in reversed(node.children))

    def __repr__(self) -> str:
        return (f"<hprofkit.ClassNode {' > '.join(self.path) or '<root>'}: {self.objects:,} objects, "
                f"retained {human_size(self.retained_size)}>")


class ClassTree:
    """heap.class_tree(): the dominator tree folded by class path (module doc).

    root: the ClassNode of the virtual root (no objects; its retained size is
    every byte of the dominator tree).  len(): the nodes, root included.
    walk() yields (depth, node) depth first; format() prints it bounded;
    a notebook shows it as a bounded table."""

    __slots__ = ("_heap", "_parents", "_keys", "_tops", "root", "nodes")

    def __init__(self, heap: Heap) -> None:
        parents, keys, objects, shallow, retained, tops = heap._class_tree(TOP)
        self._heap = heap
        self._tops = memoryview(tops).cast("I")
        self._parents = parents
        self._keys = keys
        parent_of = array.array("I", parents)
        key_of = array.array("I", keys)
        counts, shallows, retaineds = (array.array("Q", raw) for raw in (objects, shallow, retained))
        classes = heap.classes
        count = len(classes)
        self.nodes: list[ClassNode] = []
        for index in range(len(parent_of)):
            key = key_of[index]
            cls = None if key == _NONE or key >= 2 * count else classes[key % count]
            parent = None if index == 0 else self.nodes[parent_of[index]]
            node = ClassNode(self, index, cls, count <= key < 2 * count, counts[index], shallows[index],
                             retaineds[index], parent)
            self.nodes.append(node)
            if parent is not None:
                parent.children.append(node)
        for node in self.nodes:
            node.children.sort(key=_largest_first)
        self.root = self.nodes[0]

    def __len__(self) -> int:
        return len(self.nodes)

    def walk(self) -> Iterator[tuple[int, ClassNode]]:
        """(depth, node) for every node, the root at depth 0, depth first."""
        return self.root.walk()

    def find(self, name: str) -> list[ClassNode]:
        """The nodes whose class is `name` (instances and arrays; "C.class" for class
        objects), largest retained first."""
        return sorted((node for node in self.nodes if node.parent is not None and node.name == name),
                      key=_largest_first)

    def __repr__(self) -> str:
        return (f"<hprofkit.ClassTree {len(self.nodes):,} nodes, {self.root.retained_size:,} bytes "
                f"({human_size(self.root.retained_size)})>")

    def __str__(self) -> str:
        return self.format(max_depth=4, rows=5)

    def rows(self, max_depth: Optional[int] = None, rows: Optional[int] = None
             ) -> Iterator[tuple[int, Optional[ClassNode], int, int]]:
        """The bounded view: (depth, node, 0, 0) for each node shown, depth first from the
        root's children, and (depth, None, count, bytes) for the children a node leaves out
        (`rows` per node) with what they retain together.  max_depth: levels shown."""
        for name, limit in (("max_depth", max_depth), ("rows", rows)):
            if limit is not None and (not isinstance(limit, int) or limit < 0):
                raise ValueError(f"{name} must be a count (0 or more) or None, not {limit!r}")
        stack: list[tuple[int, Any]] = []

        def expand(depth: int, node: ClassNode) -> None:
            kids = node.children
            shown = kids if rows is None else kids[:rows]
            if len(shown) < len(kids):
                stack.append((depth, kids[len(shown):]))
            stack.extend((depth, child) for child in reversed(shown))
        expand(0, self.root)
        while stack:
            depth, item = stack.pop()
            if isinstance(item, list):
                yield depth, None, len(item), sum(node.retained_size for node in item)
                continue
            yield depth, item, 0, 0
            if max_depth is None or depth + 1 < max_depth:
                expand(depth + 1, item)

    def format(self, max_depth: Optional[int] = None, rows: Optional[int] = None) -> str:
        """The tree as text, a node a line (objects, retained size, the class, indented);
        bounded as rows() says."""
        lines = [f"Class tree: {len(self.nodes):,} nodes, {human_size(self.root.retained_size)} retained",
                 f"{'objects':>11}  {'retained':>10}  class"]
        for depth, node, hidden, hidden_bytes in self.rows(max_depth, rows):
            indent = "  " * depth
            if node is None:
                lines.append(f"{'':>11}  {human_size(hidden_bytes):>10}  {indent}… {hidden:,} more")
            else:
                lines.append(f"{node.objects:>11,}  {human_size(node.retained_size):>10}  {indent}{node.name}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from ._html import class_tree
        return class_tree(self)


def _largest_first(node: ClassNode) -> tuple[int, str]:
    return (-node.retained_size, node.name)


def class_tree(heap: Heap) -> ClassTree:
    """heap.class_tree(): see Heap.class_tree."""
    return ClassTree(heap)
