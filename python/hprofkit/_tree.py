"""The dominator tree, navigable, as MAT and AHAT show it.

    for obj in heap.dominator_roots(n=10):      # largest retained first
        print(obj, obj.retained_size)
        for child in obj.dominated(n=5):         # one level down
            ...
    heap.dominator_of(obj)                       # a HeapObject, hprofkit.ROOT, or None
    for group in heap.retained_by("package")[:10]:
        print(group.key, group.objects, group.shallow_size, group.retained_size)

dominator_roots() and dominated() are C methods (src/_hprof_tree.c) over the
tree's rows, built once per heap.  retained_by() hands the C core a table
of group numbers and gets each group's totals back from one walk of the
tree: the retained size of a group is the size of the union of its
members' retained sets (no byte counted twice; docs/explore.md).
"""

from __future__ import annotations

import array
from typing import TYPE_CHECKING, Any, Callable, Hashable, NamedTuple, Union

if TYPE_CHECKING:
    from ._heap import Heap, HeapObject

__all__ = ["ROOT", "Group", "GROUP_KEYS", "retained_by", "dominator_of", "package_of"]

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
                 class_objects: str) -> tuple[array.array, list[Hashable]]:
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


def _heap_table(heap: Heap) -> tuple[array.array, list[Hashable]]:
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


def _object_table(heap: Heap, key: Callable[[HeapObject], Hashable]) -> tuple[array.array, list[Hashable]]:
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


def retained_by(heap: Heap, key: Union[str, Callable[[HeapObject], Hashable]]) -> list[Group]:
    """heap.retained_by(key): the objects grouped by key, largest retained
    size first (ties: the order in which the groups' keys first occur).
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
    objects, shallow, retained = (array.array("Q", raw) for raw in heap._retained_by(how, table, len(keys)))
    order = sorted(range(len(keys)), key=lambda g: -retained[g])
    return [Group(keys[g], objects[g], shallow[g], retained[g]) for g in order if objects[g]]
