"""The dominator tree, navigable, as MAT and AHAT show it.

    for obj in heap.dominator_roots(n=10):      # largest retained first
        print(obj, obj.retained_size)
        for child in obj.dominated(n=5):         # one level down
            ...
    heap.dominator_of(obj)                       # a HeapObject, hprofkit.ROOT, or None
    for group in heap.retained_by("package")[:10]:
        print(group.key, group.objects, group.shallow_size, group.retained_size)
    print(heap.merged_paths(cls.instances()))    # MAT's "merge shortest paths to GC roots"

dominator_roots() and dominated() are C methods (src/_hprof_tree.c) over the
tree's rows, built once per heap.  retained_by() hands the C core a table
of group numbers and gets each group's totals back from one walk of the
tree: the retained size of a group is the size of the union of its
members' retained sets (no byte counted twice; docs/explore.md).
merged_paths() folds the paths of one search in C and builds the tree of
MergedPath nodes here.
"""

from __future__ import annotations

import array
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, NamedTuple, Optional, Union

from ._units import human_size

if TYPE_CHECKING:
    from ._heap import Heap, HeapClass, HeapObject
    from .match import Matcher

__all__ = ["ROOT", "Group", "GROUP_KEYS", "MergedPath", "MergedPaths", "retained_by", "dominator_of",
           "merged_paths", "package_of"]

GROUP_KEYS = ("class", "package", "loader", "heap")
_NO_GROUP = 0xFFFFFFFF
_SHADOW = 0x80000000  # hp_reach_tree.h: HP_GROUP_SHADOW


class _VirtualRoot:
    """The dominator tree's virtual root: what heap.dominator_of(obj) returns
    for an object no single object dominates (a GC root, or an object two
    roots reach by separate paths)."""

    __slots__ = ()
    __module__ = "hprofkit"

    def __repr__(self) -> str:
        return "hprofkit.ROOT"

    def __reduce__(self) -> str:
        return "ROOT"  # pickles as the module global: one ROOT per process


ROOT = _VirtualRoot()


class Group(NamedTuple):
    """One group of heap.retained_by(key).

    key: the group's key (a HeapClass for "class", a package name for
    "package", the class loader object or None for "loader", the heap name
    for "heap", what the callable returned otherwise).  objects: how many
    objects are in the group; shallow_size: the sum of their shallow sizes;
    retained_size: the bytes freed if every object of the group went, i.e.
    the size of the union of their retained sets (no byte counted twice)."""

    key: Any
    objects: int
    shallow_size: int
    retained_size: int


def dominator_of(heap: Heap, obj: HeapObject) -> Union[HeapObject, _VirtualRoot, None]:
    """obj's immediate dominator: a HeapObject; ROOT when no single object
    dominates it (a GC root, or held by several roots); None when obj is
    unreachable (under semantics="hprofkit": no strong path from a root)."""
    parent = heap._tree_parent(obj)
    if parent is True:
        return ROOT
    if parent is False:
        return None
    return parent


def package_of(name: str) -> str:
    """The package of a class as Java's Class.getPackageName() gives it:
    'java.util' for 'java.util.HashMap$Node' and 'java.util.HashMap[]', ''
    for a class of the default package, 'java.lang' for a primitive array."""
    element = name
    while element.endswith("[]"):
        element = element[:-2]
    if element != name and "." not in element:
        return "java.lang" if element in _PRIMITIVES else ""
    return element.rpartition(".")[0]


_PRIMITIVES = frozenset(("boolean", "char", "float", "double", "byte", "short", "int", "long"))


def _class_table(heap: Heap, keys_by_class: list[Hashable], *,
                 class_objects: str) -> tuple[array.array[int], list[Hashable]]:
    """The C table of mode "class" (entries by class ordinal for instances
    and arrays, then for class objects by the class they are) from one key
    per class ordinal, and the keys by group number.

    class_objects: "own" puts a class object in its class's group (its
    package, its loader: its statics belong to its code); "shadow" puts it
    in java.lang.Class's group as VisualVM's retained size by class does
    (it counts for nothing there but hides what it dominates)."""
    numbers: dict[Hashable, int] = {}
    keys: list[Hashable] = []
    table = array.array("I", bytes(8 * len(keys_by_class)))
    count = len(keys_by_class)
    for ordinal, key in enumerate(keys_by_class):
        number = numbers.get(key)
        if number is None:
            number = numbers[key] = len(keys)
            keys.append(key)
        table[ordinal] = number
        if class_objects == "own":
            table[count + ordinal] = number
    if class_objects == "shadow":
        java_lang_class = heap.find_class("java.lang.Class")
        shadow = _NO_GROUP if java_lang_class is None else table[java_lang_class.ordinal] | _SHADOW
        for ordinal in range(count):
            table[count + ordinal] = shadow
    return table, keys


def _heap_table(heap: Heap) -> tuple[array.array[int], list[Hashable]]:
    """The C table of mode "heap": a group per heap name (Android heaps
    0..255), and "default" for objects of no heap (every HotSpot object)."""
    numbers: dict[str, int] = {}
    keys: list[Hashable] = []
    table = array.array("I", bytes(4 * 257))
    for number, name in enumerate(list(heap._heap_names()) + [None]):
        key = "default" if name is None else name
        if key not in numbers:
            numbers[key] = len(keys)
            keys.append(key)
        table[number] = numbers[key]
    return table, keys


def _object_table(heap: Heap, key: Callable[[HeapObject], Hashable]) -> tuple[array.array[int], list[Hashable]]:
    """The C table of mode "object": key(obj) for every object (a Python
    call each); None puts an object in no group."""
    numbers: dict[Hashable, int] = {}
    keys: list[Hashable] = []
    table = array.array("I")
    for obj in heap.objects():
        k = key(obj)
        if k is None:
            table.append(_NO_GROUP)
            continue
        number = numbers.get(k)
        if number is None:
            number = numbers[k] = len(keys)
            keys.append(k)
        table.append(number)
    return table, keys


def retained_by(heap: Heap, key: Union[str, Callable[[HeapObject], Hashable]], members: str = "all") -> list[Group]:
    """heap.retained_by(key): the objects grouped by key, largest retained
    size first (ties: the order in which the groups' keys first occur),
    over the objects `members` counts ('all', 'live', 'garbage').
    See Heap.retained_by."""
    how = "class"
    if key == "class":
        classes = heap.classes
        table, keys = _class_table(heap, list(classes), class_objects="shadow")
    elif key == "package":
        table, keys = _class_table(heap, [package_of(c.name) for c in heap.classes], class_objects="own")
    elif key == "loader":
        table, keys = _class_table(heap, [c.loader for c in heap.classes], class_objects="own")
    elif key == "heap":
        how = "heap"
        table, keys = _heap_table(heap)
    elif callable(key):
        how = "object"
        table, keys = _object_table(heap, key)
    else:
        raise ValueError(f"key must be one of {', '.join(map(repr, GROUP_KEYS))} or a callable obj -> key, "
                         f"not {key!r}")
    objects, shallow, retained = (array.array("Q", raw) for raw in heap._retained_by(how, table, len(keys), members))
    order = sorted(range(len(keys)), key=lambda g: -retained[g])
    return [Group(keys[g], objects[g], shallow[g], retained[g]) for g in order if objects[g]]


# ---- merged paths ------------------------------------------------------------------------------

class MergedPath:
    """One node of heap.merged_paths(objs): the objects at one place of the
    shortest paths from the GC roots, reached from the parent node's objects
    by one reference (ref_type and name as a Hop has them; "[]" for any
    element of an array; for a root node ref_type "ROOT" and name the root
    kind), all of one class (``class_``: a HeapClass, None when the dump lacks
    it; is_class: they are class objects, of the class ``class_``).

    objects, shallow_size: how many objects the node holds, their shallow
    bytes; retained_size: the union of their retained sets; targets,
    target_shallow_size: how many of the objects asked about have their path
    through this node (ending here or below: MAT's "Ref. Objects") and
    their shallow bytes.  children: the nodes below, most targets first."""

    __slots__ = ("ref_type", "name", "class_", "is_class", "objects", "shallow_size", "retained_size", "targets",
                 "target_shallow_size", "children")

    def __init__(self, ref_type: str, name: Optional[str], class_: Optional[HeapClass], is_class: bool,
                 objects: int, shallow_size: int, retained_size: int, targets: int,
                 target_shallow_size: int) -> None:
        self.ref_type = ref_type
        self.name = name
        self.class_ = class_
        self.is_class = is_class
        self.objects = objects
        self.shallow_size = shallow_size
        self.retained_size = retained_size
        self.targets = targets
        self.target_shallow_size = target_shallow_size
        self.children: list[MergedPath] = []

    def describe(self) -> str:
        """The node's objects as a path prints them: "java.util.HashMap instance"."""
        name = self.class_.name if self.class_ is not None else "<unknown class>"
        if self.is_class:
            return f"{name} class"
        return f"{name} {'array' if name.endswith('[]') else 'instance'}"

    def reference(self) -> str:
        """How the parent's objects hold these: "ROOT JNI_GLOBAL", ".next", "static .INSTANCE", "[]"."""
        if self.ref_type == "ROOT":
            return f"ROOT {self.name}"
        if self.ref_type == "STATIC_FIELD":
            return f"static .{self.name}"
        return str(self.name) if self.ref_type == "ARRAY_ENTRY" else f".{self.name}"

    def _fields(self) -> dict[str, Any]:
        return {"ref_type": self.ref_type, "name": self.name,
                "class": self.class_.name if self.class_ is not None else None, "is_class": self.is_class,
                "objects": self.objects, "shallow_size": self.shallow_size, "retained_size": self.retained_size,
                "targets": self.targets, "target_shallow_size": self.target_shallow_size}

    def to_dict(self) -> dict[str, Any]:
        """The node and those below as plain data (JSON-ready; class as its name)."""
        return _as_dicts([self])[0]

    def __repr__(self) -> str:
        return (f"<hprofkit.MergedPath {self.reference()} -> {self.describe()}: {self.objects:,} objects, "
                f"{self.targets:,} targets>")


class MergedPaths:
    """heap.merged_paths(objs): the shortest paths from the GC roots to the
    objects, one search for all, folded into a tree from the roots down by
    (reference, class), as MAT's "merge shortest paths to GC roots".

    children: the root nodes (MergedPath), most targets first.  targets:
    the distinct objects asked about; reached / unreached: how many have a
    strong path / have none.  str() prints the tree; to_dict() gives it as
    plain data (nested as the tree: json's encoder recurses, so a tree
    thousands of levels deep is better exported from walk()); walk() yields
    (depth, node) depth first."""

    __slots__ = ("children", "targets", "reached", "unreached")

    def __init__(self, children: list[MergedPath], reached: int, unreached: int) -> None:
        self.children = children
        self.reached = reached
        self.unreached = unreached
        self.targets = reached + unreached

    def walk(self) -> Iterator[tuple[int, MergedPath]]:
        stack = [(0, node) for node in reversed(self.children)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, child) for child in reversed(node.children))

    def to_dict(self) -> dict[str, Any]:
        return {"targets": self.targets, "reached": self.reached, "unreached": self.unreached,
                "children": _as_dicts(self.children)}

    def __repr__(self) -> str:
        return f"<hprofkit.MergedPaths {len(self.children)} roots, {self.reached:,} of {self.targets:,} reached>"

    def __str__(self) -> str:
        return self.format()

    def format(self, max_depth: Optional[int] = None, rows: Optional[int] = None) -> str:
        """The tree as text, one node a line: targets through it, its objects
        and their retained size, then the reference and the class.  max_depth:
        levels printed (None: all); rows: children printed per node (None: all;
        the others are summed on a "… N more" line); ValueError when negative."""
        for name, limit in (("max_depth", max_depth), ("rows", rows)):
            if limit is not None and (not isinstance(limit, int) or limit < 0):
                raise ValueError(f"{name} must be a count (0 or more) or None, not {limit!r}")
        lines = [f"Merged paths to {self.targets:,} objects: {self.reached:,} reached"
                 + (f", {self.unreached:,} with no strong path" if self.unreached else ""),
                 f"{'targets':>9}  {'objects':>9}  {'retained':>10}  path"]
        # Depth first without recursion (a path may be millions of hops long):
        # a stack of (nodes of a row, next index, branch prefix, depth).
        stack: list[tuple[list[MergedPath], list[int], Optional[str], int]] = [(self.children, [0], None, 0)]
        while stack:
            nodes, at, prefix, depth = stack[-1]
            shown = len(nodes) if rows is None else min(rows, len(nodes))
            if at[0] == shown:
                stack.pop()
                rest = nodes[shown:]
                if rest:
                    lines.append(f"{sum(n.targets for n in rest):>9,}  {sum(n.objects for n in rest):>9,}  "
                                 f"{'':>10}  {'' if prefix is None else prefix + '╰─ '}… {len(rest):,} more")
                continue
            node = nodes[at[0]]
            at[0] += 1
            last = at[0] == shown and shown == len(nodes)
            lead = "" if prefix is None else prefix + ("╰─ " if last else "├─ ")
            lines.append(f"{node.targets:>9,}  {node.objects:>9,}  {human_size(node.retained_size):>10}  "
                         f"{lead}{node.reference()} → {node.describe()}")
            if node.children and (max_depth is None or depth + 1 < max_depth):
                below = "" if prefix is None else prefix + ("   " if last else "│  ")
                stack.append((node.children, [0], below, depth + 1))
        return "\n".join(lines)


def _as_dicts(nodes: list[MergedPath]) -> list[dict[str, Any]]:
    """Nodes and those below as dicts, without recursion."""
    out = [node._fields() for node in nodes]
    stack = list(zip(nodes, out))
    while stack:
        node, doc = stack.pop()
        doc["children"] = [child._fields() for child in node.children]
        stack.extend(zip(node.children, doc["children"]))
    return out


def _by_weight(node: MergedPath) -> tuple[int, int]:
    return (-node.targets, -node.retained_size)


def merged_paths(heap: Heap, objs: Iterable[HeapObject], exclude: Optional[Iterable[Matcher]] = None) -> MergedPaths:
    """heap.merged_paths(objs): see Heap.merged_paths."""
    from ._reach import _rules, default_exclude
    rules, _ = _rules(heap, default_exclude(heap) if exclude is None else exclude)
    raw, reached, unreached = heap._merged_paths(list(objs), rules)
    classes = heap.classes
    nodes: list[MergedPath] = []
    roots: list[MergedPath] = []
    for parent, ref_type, name, cls, is_class, objects, shallow, retained, targets, target_shallow in raw:
        node = MergedPath(ref_type, name, classes[cls] if cls is not None else None, is_class, objects, shallow,
                          retained, targets, target_shallow)
        nodes.append(node)
        (roots if parent is None else nodes[parent].children).append(node)
    for node in nodes:
        node.children.sort(key=_by_weight)
    roots.sort(key=_by_weight)
    return MergedPaths(roots, reached, unreached)
