"""VisualVM's reading of a dump's values (tests/peers/VisualVMValues.java) and,
over it, the collection walks, sizes and capacities written again here in
plain Python from the JDK's and Android's sources: the independent side of
tests/test_values.py.  Nothing here calls hprofkit's collection code."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

from conftest import SHARED_TOOLS, is_shared_dump
from visualvm import OracleRunner

JAR = Path("/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar")
PEER = Path(__file__).resolve().parent / "peers" / "VisualVMValues.java"
_CACHE: dict[tuple[str, str], list[dict]] = {}
_RUNNER: list[OracleRunner] = []


def _runner(path: Path) -> OracleRunner:
    """VisualVMValues compiled once, its answers kept as the oracle's are (tests/visualvm.py)."""
    if not _RUNNER:
        if not JAR.is_file():  # graph.sh installs Debian's visualvm on first use
            subprocess.run(["bash", str(SHARED_TOOLS / "oracle" / "graph.sh"), str(path), "roots"], check=True,
                           capture_output=True, timeout=900)
        _RUNNER.append(OracleRunner([PEER], java=shutil.which("java") or "java", keep=is_shared_dump))
    return _RUNNER[0]


def run_peer(path: Path, mode: str) -> list[dict]:
    """VisualVMValues.java's JSON lines for one dump (cached for the session)."""
    key = (str(path), mode)
    if key not in _CACHE:
        text = _runner(Path(path)).output("VisualVMValues", Path(path), mode)
        _CACHE[key] = [json.loads(line) for line in text.split("\n") if line.strip()]
    return _CACHE[key]


def _value(type_: str, text: str) -> Any:
    if type_ == "object":
        return int(text)
    if type_ == "boolean":
        return text == "true"
    if type_ in ("float", "double"):
        return float(text)
    if type_ == "char":
        return text
    return int(text)


class Prim(int):
    """An element of an int[] or long[]: a value, not an object id."""


class VV:
    """A dump as VisualVM reads it: objects by id (fields in VisualVM's order, the class's
    own first), classes by name (super, statics)."""

    def __init__(self, lines: list[dict]) -> None:
        self.objects: dict[int, dict] = {}
        self.super: dict[str, Optional[str]] = {}
        self.statics: dict[str, dict[str, Any]] = {}
        class_names: dict[int, str] = {}
        supers: dict[str, Optional[int]] = {}
        self.class_ids: set[int] = set()
        for line in lines:
            if "class_id" in line:
                class_names[line["class_id"]] = line["name"]
                self.class_ids.add(line["class_id"])
                supers.setdefault(line["name"], line["super"])
                statics = self.statics.setdefault(line["name"], {})
                for name, type_, value in line["statics"]:
                    statics.setdefault(name, _value(type_, value))
            else:
                self.objects[line["id"]] = line
        for name, sup in supers.items():
            self.super[name] = class_names.get(sup) if sup else None

    # -- reads --
    def cls(self, oid: int) -> Optional[str]:
        line = self.objects.get(oid)
        return line["class"] if line else None

    def ancestors(self, name: Optional[str]) -> list[str]:
        out = []
        while name is not None and name not in out:
            out.append(name)
            name = self.super.get(name)
        return out

    def has(self, oid: int, field: str) -> bool:
        line = self.objects.get(oid)
        return bool(line) and "fields" in line and any(f[0] == field for f in line["fields"])

    def get(self, oid: int, field: str) -> Any:
        """The nearest declaration's value (VisualVM lists the class's own fields first)."""
        for name, type_, value in self.objects[oid]["fields"]:
            if name == field:
                return _value(type_, value)
        raise KeyError((oid, field))

    def first(self, oid: int, *fields: str) -> Any:
        for field in fields:
            if self.has(oid, field):
                return self.get(oid, field)
        raise KeyError((oid, fields))

    def elements(self, oid: int) -> list[Any]:
        line = self.objects.get(oid)
        if not line or "elements" not in line:
            return []
        if line["class"] == "boolean[]":
            return [bool(e) for e in line["elements"]]
        if line["class"] in ("int[]", "long[]"):
            return [Prim(e) for e in line["elements"]]
        return list(line["elements"])

    def length(self, oid: int) -> int:
        line = self.objects[oid]
        return line["length"] if "length" in line else len(line["elements"])

    def static(self, class_name: str, field: str) -> int:
        return self.statics.get(class_name, {}).get(field, 0)

    def norm(self, oid: Any) -> Any:
        """An id as hprofkit gives it: None for null or an object the dump lacks; a
        primitive as itself."""
        if isinstance(oid, (Prim, bool)):
            return oid if isinstance(oid, bool) else int(oid)
        if isinstance(oid, int) and not isinstance(oid, bool) and oid >= 0 and (
                oid in self.objects or oid in self.class_ids):
            return oid
        return None if isinstance(oid, int) and not isinstance(oid, bool) else oid


# ---- the walks --------------------------------------------------------------------------------

class Walk:
    """What one collection holds: shape ('list', 'set', 'map'), its items (elements, or
    (key, value) pairs) as ids or primitive values, the size its fields declare (None when
    none does), the stale entries among them (a WeakHashMap's cleared keys), its capacity
    (None when not array-backed) and the arrays behind it [(array id, slots per item)]."""

    def __init__(self, shape: str, items: list[Any], size: Optional[int] = None, stale: int = 0,
                 capacity: Optional[int] = None, arrays: Optional[list[tuple[int, int]]] = None,
                 owns: Optional[int] = None, view: bool = False) -> None:
        self.shape, self.items, self.size, self.stale = shape, items, size, stale
        self.capacity, self.arrays, self.owns, self.view = capacity, arrays or [], owns, view


def _chain(vv: VV, node: int, value_field: str = "value", key_field: str = "key") -> list[tuple[int, Any, Any]]:
    """A bucket's nodes from `node`: (node, key, value); a tree bin's from its first."""
    out = []
    while node:
        if vv.cls(node) is None:
            break
        if vv.has(node, "first") and vv.cls(node).endswith("$TreeBin"):
            node = vv.get(node, "first")
            continue
        if vv.cls(node).endswith("$ForwardingNode"):
            break
        out.append((node, vv.get(node, key_field), vv.get(node, value_field)))
        node = vv.get(node, "next")
    return out


def _hash(vv: VV, oid: int, table_field: str, size_field: str, reverse: bool, value_field: str = "value",
          key_field: str = "key") -> tuple[list[tuple[int, Any, Any]], Optional[int], int]:
    table = vv.get(oid, table_field) if vv.has(oid, table_field) else 0
    nodes = []
    if vv.has(oid, "entryForNullKey") and vv.get(oid, "entryForNullKey"):  # Android before N: first
        nodes += _chain(vv, vv.get(oid, "entryForNullKey"))
    buckets = vv.elements(table) if table else []
    for head in (reversed(buckets) if reverse else buckets):
        nodes += _chain(vv, head, value_field, key_field)
    size = vv.get(oid, size_field) if vv.has(oid, size_field) else None
    return nodes, size, vv.length(table) if table else 0


def _linked(vv: VV, start: int, next_field: str, item: str, sentinel: bool, value: Optional[str] = None):
    out = []
    node = vv.get(start, next_field) if sentinel else start
    seen = 0
    while node and not (sentinel and node == start) and seen <= len(vv.objects):
        out.append((node, vv.get(node, item), vv.get(node, value) if value else None))
        node = vv.get(node, next_field)
        seen += 1
    return out


def _tree(vv: VV, root: int) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    stack, node = [], root
    while stack or node:
        while node:
            stack.append(node)
            node = vv.get(node, "left")
        node = stack.pop()
        out.append((vv.get(node, "key"), vv.get(node, "value")))
        node = vv.get(node, "right")
    return out


def _keys(walk: Optional[Walk]) -> Optional[Walk]:
    if walk is None:
        return None
    return Walk("set", [k for k, _ in walk.items], walk.size, walk.stale, walk.capacity, walk.arrays)


def walk(vv: VV, oid: int, depth: int = 0) -> Optional[Walk]:
    """The collection `oid` is, walked from VisualVM's values; None when it is none."""
    cls = vv.cls(oid)
    if cls is None or depth > 16 or "fields" not in vv.objects[oid]:
        return None
    for name in vv.ancestors(cls):
        result = _walk_as(vv, oid, name, depth)
        if result is not None:
            return result
    return None


def _inner(vv: VV, oid: int, field: str, depth: int, keys: bool = False, owns: bool = True) -> Optional[Walk]:
    inner = vv.get(oid, field)
    got = walk(vv, inner, depth + 1) if inner else Walk("list", [], 0)
    if got is None:
        return None
    if keys:
        got = _keys(got)
    got.owns = inner if owns and inner else None
    got.view = not owns
    return got


def _walk_as(vv: VV, oid: int, name: str, depth: int) -> Optional[Walk]:  # noqa: C901 - one table, as the JDK's
    has, get = (lambda f: vv.has(oid, f)), (lambda f: vv.get(oid, f))
    if name in ("java.util.LinkedHashMap",):
        table = get("table")
        cap = vv.length(table) if table else 0
        arrays = [(table, 1)] if table else []
        if has("head"):
            nodes = _linked(vv, get("head"), "after", "key", False, "value") if get("head") else []
        elif has("header"):
            header = get("header")
            nxt = "after" if vv.has(header, "after") else "nxt"
            nodes = _linked(vv, header, nxt, "key", True, "value")
        else:
            return None
        return Walk("map", [(k, v) for _, k, v in nodes], get("size"), 0, cap, arrays)
    if name == "java.util.HashMap":
        marker = vv.static("java.util.HashMap", "NULL_KEY")
        nodes, size, cap = _hash(vv, oid, "table", "size", reverse=bool(marker))
        items = [(None if marker and k == marker else k, v) for _, k, v in nodes]
        return Walk("map", items, size, 0, cap, [(get("table"), 1)] if get("table") else [])
    if name == "java.util.Hashtable":
        if not has("table"):
            return None
        reverse = has("count")
        nodes, size, cap = _hash(vv, oid, "table", "count" if reverse else "size", reverse)
        return Walk("map", [(k, v) for _, k, v in nodes], size, 0, cap, [(get("table"), 1)] if get("table") else [])
    if name == "java.util.Properties" and has("map"):
        return _inner(vv, oid, "map", depth)
    if name == "java.util.WeakHashMap":
        jdk = has("table")
        marker = vv.static(name, "NULL_KEY")
        table = get("table" if jdk else "elementData")
        nodes, size, cap = _hash(vv, oid, "table" if jdk else "elementData", "size" if jdk else "elementCount",
                                 reverse=jdk, key_field="referent")
        items, stale = [], 0
        for node, k, v in nodes:
            if k == 0 and not (vv.has(node, "isNull") and vv.get(node, "isNull")):
                stale += 1
            else:
                items.append((None if k == marker else k, v))
        return Walk("map", items, size, stale, cap, [(table, 1)] if table else [])
    if name == "java.util.IdentityHashMap":
        field = "table" if has("table") else "elementData"
        marker = vv.static(name, "NULL_KEY") or vv.static(name, "NULL_OBJECT")
        slots = vv.elements(get(field)) if get(field) else []
        items = [(None if slots[i] == marker else slots[i], slots[i + 1]) for i in range(0, len(slots) - 1, 2)
                 if slots[i]]
        cap = len(slots) // 2
        return Walk("map", items, get("size"), 0, cap, [(get(field), 2)] if get(field) else [])
    if name == "java.util.TreeMap":
        return Walk("map", _tree(vv, get("root")), get("size"))
    if name == "java.util.concurrent.ConcurrentHashMap":
        if has("baseCount"):
            nodes, size, cap = _hash(vv, oid, "table", "baseCount", False, value_field="val")
            cells = get("counterCells")
            for cell in vv.elements(cells) if cells else []:
                if cell:
                    size += vv.get(cell, "value")
            return Walk("map", [(k, v) for _, k, v in nodes], size, 0, cap,
                        [(get("table"), 1)] if get("table") else [])
        items, size, cap, arrays = [], 0, 0, []
        for seg in reversed(vv.elements(get("segments"))):
            if not seg:
                continue
            size += vv.get(seg, "count")
            table = vv.get(seg, "table")
            if table:
                cap += vv.length(table)
                arrays.append((table, 1))
                for head in reversed(vv.elements(table)):
                    items += [(k, v) for _, k, v in _chain(vv, head)]
        return Walk("map", items, size, 0, cap, arrays)
    if name == "java.util.concurrent.ConcurrentSkipListMap":
        node = vv.get(get("head"), "node") if get("head") else 0  # JDK 11+: made on the first put
        items = []
        while node:
            key = vv.get(node, "key")
            value = vv.first(node, "val", "value")
            if key and value and value != node:
                items.append((key, value))
            node = vv.get(node, "next")
        return Walk("map", items)
    if name in ("java.util.Collections$EmptyMap", "java.util.ImmutableCollections$Map0"):
        return Walk("map", [], 0)
    if name == "java.util.Collections$SingletonMap":
        return Walk("map", [(get("k"), get("v"))], 1)
    if name == "java.util.ImmutableCollections$Map1":
        return Walk("map", [(get("k0"), get("v0"))], 1)
    if name == "java.util.ImmutableCollections$MapN":
        slots = vv.elements(get("table")) if get("table") else []
        items = [(slots[i], slots[i + 1]) for i in range(0, len(slots) - 1, 2) if slots[i]]
        return Walk("map", items, get("size"), 0, len(slots) // 2, [(get("table"), 2)] if get("table") else [])
    if name in ("java.util.Collections$UnmodifiableMap", "java.util.Collections$SynchronizedMap",
                "java.util.Collections$CheckedMap"):
        return _inner(vv, oid, "m", depth, owns=False)
    if name in ("android.util.ArrayMap", "androidx.collection.SimpleArrayMap",
                "android.support.v4.util.SimpleArrayMap"):
        array, size = get("mArray"), get("mSize")
        slots = vv.elements(array) if array else []
        items = [(slots[2 * i], slots[2 * i + 1]) for i in range(min(size, len(slots) // 2))]
        arrays = ([(array, 2)] if array else []) + ([(get("mHashes"), 1)] if get("mHashes") else [])
        return Walk("map", items, size, 0, len(slots) // 2, arrays)
    if name in ("android.util.SparseArray", "android.util.LongSparseArray", "android.util.SparseIntArray",
                "android.util.SparseBooleanArray", "android.util.SparseLongArray", "android.util.LongSparseLongArray",
                "androidx.collection.SparseArrayCompat", "androidx.collection.LongSparseArray",
                "android.support.v4.util.SparseArrayCompat", "android.support.v4.util.LongSparseArray"):
        keys = vv.elements(get("mKeys")) if get("mKeys") else []
        values = vv.elements(get("mValues")) if get("mValues") else []
        deleted = vv.static(name, "DELETED")
        size = get("mSize")
        pairs = list(zip(keys, values))[:size]
        items = [(k, v) for k, v in pairs if not (deleted and v == deleted)]
        arrays = [(a, 1) for a in (get("mKeys"), get("mValues")) if a]
        return Walk("map", items, size, size - len(items), len(keys) if get("mKeys") else 0, arrays)
    # ---- sets ----
    if name == "java.util.HashSet":
        return _inner(vv, oid, "map" if has("map") else "backingMap", depth, keys=True)
    if name == "java.util.TreeSet":
        return _inner(vv, oid, "m" if has("m") else "backingMap", depth, keys=True)
    if name in ("java.util.concurrent.ConcurrentSkipListSet", "java.util.Collections$SetFromMap"):
        return _inner(vv, oid, "m", depth, keys=True)
    if name == "java.util.concurrent.CopyOnWriteArraySet":
        got = _inner(vv, oid, "al", depth)
        if got is not None:
            got.shape = "set"
        return got
    if name in ("java.util.Collections$EmptySet", "java.util.ImmutableCollections$Set0"):
        return Walk("set", [], 0)
    if name == "java.util.Collections$SingletonSet":
        return Walk("set", [get("element")], 1)
    if name in ("java.util.ImmutableCollections$Set12", "java.util.ImmutableCollections$List12"):
        empty = vv.static("java.util.ImmutableCollections", "EMPTY")
        items = [e for e in (get("e0"), get("e1")) if e and e != empty]
        return Walk("set" if name.endswith("Set12") else "list", items, len(items))
    if name == "java.util.ImmutableCollections$SetN":
        slots = vv.elements(get("elements")) if get("elements") else []
        return Walk("set", [e for e in slots if e], get("size"), 0, len(slots),
                    [(get("elements"), 1)] if get("elements") else [])
    if name in ("android.util.ArraySet", "androidx.collection.ArraySet"):
        array, size = get("mArray"), get("mSize")
        slots = vv.elements(array) if array else []
        arrays = ([(array, 1)] if array else []) + ([(get("mHashes"), 1)] if get("mHashes") else [])
        return Walk("set", slots[:size], size, 0, len(slots), arrays)
    # ---- lists ----
    sized = {"java.util.ArrayList": (("elementData", "array"), "size"), "java.util.Vector": (("elementData",), "elementCount"),
             "java.util.PriorityQueue": (("queue",), "size"),
             "java.util.concurrent.PriorityBlockingQueue": (("queue",), "size")}
    if name in sized:
        fields, size_field = sized[name]
        if not any(has(f) for f in fields):
            return None
        array = vv.first(oid, *fields)
        slots = vv.elements(array) if array else []
        return Walk("list", slots[:max(get(size_field), 0)], get(size_field), 0, len(slots),
                    [(array, 1)] if array else [])
    if name in ("java.util.concurrent.CopyOnWriteArrayList", "java.util.ImmutableCollections$ListN",
                "java.util.Arrays$ArrayList"):
        array = vv.first(oid, "array", "elements", "a")
        slots = vv.elements(array) if array else []
        return Walk("list", slots, len(slots), 0, len(slots), [(array, 1)] if array else [])
    if name == "java.util.LinkedList":
        if has("first"):
            nodes = _linked(vv, get("first"), "next", "item", False) if get("first") else []
        else:
            header = vv.first(oid, "header", "voidLink")
            nodes = _linked(vv, header, "next", "element" if vv.has(header, "element") else "data", True)
        return Walk("list", [item for _, item, _ in nodes], get("size"))
    if name in ("java.util.ArrayDeque", "java.util.concurrent.ArrayBlockingQueue"):
        deque = name == "java.util.ArrayDeque"
        array = get("elements" if deque else "items")
        slots = vv.elements(array) if array else []
        head = get("head" if deque else "takeIndex")
        n = len(slots)
        if not n:
            return Walk("list", [], 0, 0, 0, [(array, 1)] if array else [])
        if deque:
            tail = get("tail")
            count = tail - head if head <= tail else n - head + tail
        else:
            count = get("count")
        return Walk("list", [slots[(head + k) % n] for k in range(count)], count, 0, n, [(array, 1)])
    if name == "java.util.concurrent.LinkedBlockingQueue":
        nodes = _linked(vv, vv.get(get("head"), "next"), "next", "item", False) if vv.get(get("head"), "next") else []
        return Walk("list", [item for _, item, _ in nodes])
    if name == "java.util.concurrent.LinkedBlockingDeque":
        nodes = _linked(vv, get("first"), "next", "item", False) if get("first") else []
        return Walk("list", [item for _, item, _ in nodes], get("count"))
    if name in ("java.util.concurrent.ConcurrentLinkedQueue", "java.util.concurrent.ConcurrentLinkedDeque"):
        nodes = _linked(vv, get("head"), "next", "item", False) if get("head") else []
        return Walk("list", [item for _, item, _ in nodes if item])
    if name in ("java.util.Collections$EmptyList", "java.util.ImmutableCollections$List0"):
        return Walk("list", [], 0)
    if name == "java.util.Collections$SingletonList":
        return Walk("list", [get("element")], 1)
    if name in ("java.util.Collections$UnmodifiableCollection", "java.util.Collections$SynchronizedCollection",
                "java.util.Collections$CheckedCollection"):
        return _inner(vv, oid, "c", depth, owns=False)
    return None


# ---- measures ----------------------------------------------------------------------------

PRIMITIVE_SIZES = {"boolean[]": 1, "byte[]": 1, "char[]": 2, "short[]": 2, "int[]": 4, "float[]": 4, "long[]": 8,
                   "double[]": 8}

def shared_arrays(walks: dict[int, Walk], owned: set[int]) -> set[int]:
    """The arrays more than one of the measured collections (not the owned ones, not views)
    holds behind it: nobody's waste (docs/values.md)."""
    holders: dict[int, int] = defaultdict(int)
    for oid, w in walks.items():
        if oid not in owned and not w.view:
            for array in {array for array, _ in w.arrays}:
                holders[array] += 1
    return {array for array, n in holders.items() if n > 1}


def wasted(vv: VV, w: Walk, reference_size: int, shared: set[int] = frozenset()) -> int:
    """docs/values.md's wasted bytes: an empty collection's whole backing arrays, else the
    slots past what its size uses, at their element size; arrays in `shared` are nobody's."""
    if w.view or w.capacity is None or w.size is None or w.size < 0:
        return 0
    total = 0
    for array, per_item in w.arrays:
        if array in shared:
            continue
        line = vv.objects[array]
        if w.size == 0:
            total += line["size"]
            continue
        elem = PRIMITIVE_SIZES.get(line["class"], reference_size)
        total += max(0, vv.length(array) - w.size * per_item) * elem
    return total
