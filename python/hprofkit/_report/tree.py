"""The dominator tree as the notebook's interactive views draw it
(heap.dominator_tree(), heap.flamegraph()): its top levels, bounded.

A node is [label, id (hex), retained, shallow, parent, hidden, hidden_bytes]
(parent -1 for the tree's virtual root's children; hidden: the children not
shown, hidden_bytes what they retain together), in breadth-first order.
Each node shows its `children` largest children, `depth` levels down, and
the whole at most MAX_NODES nodes: the JSON stays small (tens of KB) whatever
the heap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._heap import Heap, HeapObject

MAX_NODES = 3000


def _label(obj: HeapObject) -> str:
    from .._heap import HeapClass
    return f"class {obj.name}" if isinstance(obj, HeapClass) else obj.class_name


def tree_data(heap: Heap, *, depth: int, children: int) -> dict[str, Any]:
    """The view's JSON document (module doc)."""
    if depth < 1 or children < 1:
        raise ValueError("depth and children must be at least 1")
    nodes: list[list[Any]] = []
    roots = heap.dominator_roots()
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
            "columns": ["label", "id", "retained", "shallow", "parent", "hidden", "hidden_bytes"], "nodes": nodes}


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
