"""The dominator tree as the notebook's interactive views draw it
(heap.dominator_tree(), heap.flamegraph()): its top levels, bounded.

The explorer's (tree_data) node is [label, id (hex), retained, shallow,
parent, hidden, hidden_bytes] (parent -1 for the tree's virtual root's
children; hidden: the children not shown, hidden_bytes what they retain
together), in breadth-first order.  The flame graph draws the class tree
(class_tree_data): a node is a class path, [label (the class), id (the
node's number in the class tree), retained, shallow, parent, hidden,
hidden_bytes, objects, top], top its largest objects as [label, id (hex),
retained] rows; the widest frames first, wherever they are.  The explorer's
node shows its `children` largest children, `depth` levels down; either
document holds at most MAX_NODES nodes: the JSON stays small (tens to
hundreds of KB) whatever the heap."""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .._classtree import ClassNode, ClassTree
    from .._heap import Heap, HeapObject

MAX_NODES = 3000
TOP_OBJECTS = 5  # the objects a class node lists (the fold keeps 10)


def _label(obj: HeapObject) -> str:
    from .._heap import HeapClass
    return f"class {obj.name}" if isinstance(obj, HeapClass) else obj.class_name


def tree_data(heap: Heap, *, depth: int, children: int, root: Optional[HeapObject] = None) -> dict[str, Any]:
    """The view's JSON document (module doc): the tree from its virtual root, or from `root`
    (its subtree: what it dominates, level by level)."""
    if depth < 1 or children < 1:
        raise ValueError("depth and children must be at least 1")
    nodes: list[list[Any]] = []
    roots = heap.dominator_roots() if root is None else root.dominated()
    total = sum(obj.retained_size for obj in roots)
    kids_of: dict[int, list[HeapObject]] = {-1: list(roots)}
    level = [-1]
    for _ in range(depth):
        below = []
        for parent in level:
            for obj in kids_of[parent][:children]:
                if len(nodes) == MAX_NODES:
                    break
                below.append(len(nodes))
                kids_of[len(nodes)] = obj.dominated()
                nodes.append([_label(obj), f"{obj.id:x}", obj.retained_size, obj.shallow_size, parent, 0, 0])
        level = below
    # What each node does not show: its children beyond those listed (all of them on the last level).
    shown: dict[int, tuple[int, int]] = {}
    for node in nodes:
        count, size = shown.get(node[4], (0, 0))
        shown[node[4]] = (count + 1, size + node[2])
    hidden = {index: (len(kids) - shown.get(index, (0, 0))[0],
                      sum(o.retained_size for o in kids) - shown.get(index, (0, 0))[1])
              for index, kids in kids_of.items()}
    for index, node in enumerate(nodes):
        node[5], node[6] = hidden[index]
    return {"total": total, "roots": len(roots), "hidden": list(hidden[-1]), "depth": depth,
            "root": None if root is None else f"{root.id:x}",
            "columns": ["label", "id", "retained", "shallow", "parent", "hidden", "hidden_bytes"], "nodes": nodes}


def class_tree_data(tree: ClassTree, *, depth: int, frames: int = MAX_NODES, children: Optional[int] = None
                    ) -> dict[str, Any]:
    """The flame graph's document (module doc): the class tree's widest frames, best
    first -- each node shown has its parent shown, at most `depth` levels, `children`
    children a frame (None: any), `frames` (at most MAX_NODES) in all -- so what it
    leaves out is the narrowest frames, wherever they are."""
    if depth < 1 or frames < 1 or (children is not None and children < 1):
        raise ValueError("depth, frames and children must be at least 1")
    frames = min(frames, MAX_NODES)
    nodes: list[list[Any]] = []
    shown: list[ClassNode] = []
    waiting: list[tuple[int, int, int, ClassNode]] = []

    def offer(row: int, node: ClassNode) -> None:
        for child in node.children if children is None else node.children[:children]:
            heapq.heappush(waiting, (-child.retained_size, child.index, row, child))
    offer(-1, tree.root)
    while waiting and len(nodes) < frames:
        _, _, parent, node = heapq.heappop(waiting)
        top = [[_label(obj), f"{obj.id:x}", size] for obj, size in node.sample(TOP_OBJECTS)]
        nodes.append([node.name, str(node.index), node.retained_size, node.shallow_size, parent, 0, 0, node.objects,
                      top])
        shown.append(node)
        if node.depth < depth:
            offer(len(nodes) - 1, node)
    # What each frame leaves out: its children not shown, and what they retain together.
    kept: dict[int, tuple[int, int]] = {}
    for frame in nodes:
        count, size = kept.get(frame[4], (0, 0))
        kept[frame[4]] = (count + 1, size + frame[2])

    def left_out(row: int, node: ClassNode) -> list[int]:
        count, size = kept.get(row, (0, 0))
        return [len(node.children) - count, node.retained_size - node.shallow_size - size]
    for row, node in enumerate(shown):
        nodes[row][5:7] = left_out(row, node)
    return {"total": tree.root.retained_size, "roots": len(tree.root.children), "hidden": left_out(-1, tree.root),
            "depth": depth, "nodes": nodes,
            "columns": ["label", "id", "retained", "shallow", "parent", "hidden", "hidden_bytes", "objects", "top"]}


class View:
    """One of report.js's views with its data, for a notebook: its _repr_html_
    embeds the view's element, its JSON and the bundle (the page draws it: no
    kernel needed, and it survives an export to HTML)."""

    __slots__ = ("name", "data")

    def __init__(self, name: str, data: dict[str, Any]) -> None:
        self.name = name
        self.data = data

    def __repr__(self) -> str:
        return f"<hprofkit view {self.name}: {len(self.data['nodes']):,} nodes>"

    def _repr_html_(self) -> str:
        from .page import view_html
        return view_html(self.name, self.data)
