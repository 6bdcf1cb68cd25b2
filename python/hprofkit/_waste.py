"""Memory waste as JXRay reports it: heap.waste() and its kinds.

    w = heap.waste()                        # the reachable objects; unreachable=True: garbage too
    w.total_bytes                           # each object once, however many kinds it falls in
    w["zero_arrays"]                        # a WasteKind: .kind .objects .wasted_bytes .items
    w["zero_arrays"].holders(n=10)          # the fields that hold them, most waste first
    for kind in w: ...                      # largest waste first

The kinds are found in C (core/hp_waste.c, one pass over the index);
docs/waste.md defines each and compares them with JXRay, MAT and
HeapDumpStarDiver."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, NamedTuple, Optional, cast

if TYPE_CHECKING:
    from ._heap import Heap, HeapClass, HeapObject

__all__ = ["Waste", "WasteKind", "WasteItem", "Holder", "KINDS", "LONG_STRING_CHARS"]

# The kinds, in core/hp_waste.h's order.
KINDS = ("duplicate_strings", "duplicate_arrays", "zero_arrays", "empty_arrays", "sparse_arrays", "boxed_numbers",
         "empty_collections", "small_collections", "sparse_collections", "direct_buffers",
         "duplicate_object_arrays", "trailing_zero_arrays", "long_strings")

# A String longer than this (in characters) is a long string.
LONG_STRING_CHARS = 1024


class WasteItem(NamedTuple):
    """One object of a kind and the bytes it wastes (direct_buffers: its native capacity)."""

    object: HeapObject
    wasted_bytes: int


class Holder(NamedTuple):
    """Where a kind's objects hang: the reference their shortest path from a GC root ends
    with.  ref_type: "INSTANCE_FIELD" (class_name the class declaring the field, name the
    field), "ARRAY_ENTRY" (class_name the array's class, name "[]"), "STATIC_FIELD"
    (class_name the class, name the static), "ROOT" (name the root kind: the object is a GC
    root), "LOCAL" (a thread's frame: class_name None) or "UNREACHABLE" (no strong path).
    objects: how many of the kind's objects, wasted_bytes: their waste."""

    ref_type: str
    class_name: Optional[str]
    name: Optional[str]
    objects: int
    wasted_bytes: int

    def __str__(self) -> str:
        if self.ref_type == "ARRAY_ENTRY":
            return f"element of {self.class_name}"
        if self.ref_type in ("INSTANCE_FIELD", "STATIC_FIELD"):
            return f"{'static ' if self.ref_type == 'STATIC_FIELD' else ''}{self.class_name}.{self.name}"
        if self.ref_type == "ROOT":
            return f"GC root ({self.name})"
        if self.ref_type == "LOCAL":
            return "thread stack"
        return "unreachable" if self.ref_type == "UNREACHABLE" else "weakly reachable or excluded"


def declaring_class(cls: Optional[HeapClass], field: str) -> Optional[HeapClass]:
    """The class among cls and its superclasses that declares instance field `field`
    (Java reads a field where it is declared: the nearest)."""
    while cls is not None:
        if any(f.name == field for f in cls.fields()):
            return cls
        cls = cls.superclass
    return None


def hop_key(ref_type: str, holder: Optional[HeapObject], name: Optional[str]) -> tuple[str, Optional[str],
                                                                                      Optional[str]]:
    """(ref_type, class name, name) of a hop: a field by the class declaring it, any element
    of an array by the array's class, a static by its class, a root by its kind."""
    if ref_type == "INSTANCE_FIELD" and holder is not None and name is not None:
        cls = declaring_class(holder.class_, name)
        return (ref_type, (cls or holder.class_).name if holder.class_ else None, name)
    if ref_type == "ARRAY_ENTRY" and holder is not None:
        return (ref_type, holder.class_name, "[]")
    if ref_type == "STATIC_FIELD" and holder is not None:  # held by a class object: the class it is
        return (ref_type, cast("HeapClass", holder).name, name)
    if ref_type == "ROOT":
        return (ref_type, None, name)
    return (ref_type, None, None)


# Routes' tiers (hprofkit._reach): a path (0, or 1 crossing a library reference) ends in a holder;
# one only across an excluded (2) or weak (3) reference, or none at all (4), is no holder.
_PATH_TIERS = 1
_NO_PATH = ("NO_STRONG_PATH", "NO_STRONG_PATH", "UNREACHABLE")


class WasteKind:
    """One kind of waste: kind (its name), objects (how many), wasted_bytes (their sum;
    direct_buffers: native bytes), items (WasteItem, largest waste first, made on first
    read); holders(n) the fields that hold them."""

    __slots__ = ("heap", "kind", "objects", "wasted_bytes", "_ids", "_bytes", "_items", "_holders")

    def __init__(self, heap: Heap, kind: str, ids: bytes, wasted: bytes) -> None:
        self.heap = heap
        self.kind = kind
        self._ids = memoryview(ids).cast("Q")  # views, not copies: a kind may have millions of objects
        self._bytes = memoryview(wasted).cast("Q")
        self.objects = len(self._ids)
        self.wasted_bytes = sum(self._bytes)
        self._items: Optional[list[WasteItem]] = None
        self._holders: Optional[list[Holder]] = None

    @property
    def items(self) -> list[WasteItem]:
        if self._items is None:
            find = self.heap.object
            self._items = [WasteItem(find(i), b) for i, b in zip(self._ids, self._bytes)]
        return self._items

    def top(self, n: int) -> list[WasteItem]:
        """The n items of most waste (without making the others)."""
        find = self.heap.object
        return [WasteItem(find(i), b) for i, b in zip(self._ids[:n], self._bytes[:n])]

    def holders(self, n: Optional[int] = 10) -> list[Holder]:
        """The references holding this kind's objects, folded by field (the class declaring it
        and its name) or by array class, each with its objects and their waste, most waste
        first; n of them (None: all).  One search (heap.paths_to_root) for all the objects."""
        if self._holders is None:
            folded: dict[tuple[str, Optional[str], Optional[str]], list[int]] = {}
            if self.objects:
                # One search for all, folded in C by the hop each path ends with (Routes.last_hops):
                # a group per distinct last hop, named once; nothing kept per object.
                from ._reach import _routes
                find = self.heap.object  # the objects live for the search only
                _, routes, _ = _routes(self.heap, (find(i) for i in self._ids), None, False)
                nodes, counts, sums, others = routes.last_hops(self._bytes, _PATH_TIERS)
                for node, count, wasted in zip(memoryview(nodes).cast("I"), memoryview(counts).cast("Q"),
                                               memoryview(sums).cast("Q")):
                    ref_type, holder, name, _ = routes.node_hops(node)[-1]
                    row = folded.setdefault(hop_key(ref_type, holder, name), [0, 0])
                    row[0] += count
                    row[1] += wasted
                for key, (count, wasted) in zip(_NO_PATH, others[_PATH_TIERS + 1:]):
                    if count:
                        row = folded.setdefault((key, None, None), [0, 0])
                        row[0] += count
                        row[1] += wasted
            rows = [Holder(*key, objects, wasted) for key, (objects, wasted) in folded.items()]
            rows.sort(key=lambda h: (-h.wasted_bytes, -h.objects, h.ref_type, h.class_name or "", h.name or ""))
            self._holders = rows
        return self._holders if n is None else self._holders[:n]

    def __repr__(self) -> str:
        return f"<WasteKind {self.kind}: {self.objects} objects, {self.wasted_bytes} bytes>"


class Waste:
    """heap.waste(): every kind (WasteKind) by name (w["zero_arrays"]); iteration gives them
    largest waste first.  total_bytes: heap bytes wasted, each object counted once (its
    largest waste of any kind; direct_buffers' native bytes apart).  duplicate_boxes /
    duplicate_box_bytes: boxed numbers equal (class and value) to another one kept."""

    __slots__ = ("kinds", "total_bytes", "duplicate_boxes", "duplicate_box_bytes", "unreachable")

    def __init__(self, kinds: dict[str, WasteKind], total: int, boxes: int, box_bytes: int, unreachable: bool) -> None:
        self.kinds = kinds
        self.total_bytes = total
        self.duplicate_boxes = boxes
        self.duplicate_box_bytes = box_bytes
        self.unreachable = unreachable

    def __getitem__(self, kind: str) -> WasteKind:
        try:
            return self.kinds[kind]
        except KeyError:
            raise KeyError(f"no waste kind {kind!r}: the kinds are {', '.join(KINDS)}") from None

    def __iter__(self) -> Iterator[WasteKind]:
        return iter(sorted(self.kinds.values(), key=lambda k: (-k.wasted_bytes, -k.objects, KINDS.index(k.kind))))

    def __len__(self) -> int:
        return len(self.kinds)

    def __str__(self) -> str:
        from ._units import human_size
        width = max(len(k) for k in KINDS)
        lines = [f"{'kind':<{width}}  {'objects':>10}  {'wasted':>10}"]
        lines += [f"{k.kind:<{width}}  {k.objects:>10,}  {human_size(k.wasted_bytes):>10}" for k in self]
        lines.append(f"{'total (each object once)':<{width}}  {'':>10}  {human_size(self.total_bytes):>10}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The report's waste view (Jupyter): every kind with its largest objects and holders,
        as the report's Limits cut them (no dominator tree computed for it)."""
        from ._report.objects import ObjectTable
        from ._report.page import view_html
        from ._report.sections import Limits, waste_kinds
        heap = next(iter(self.kinds.values())).heap
        table = ObjectTable(heap, retained=False)
        data = waste_kinds(self, table, Limits())
        return view_html("waste", {**data, "objects": table.to_json()})

    def __repr__(self) -> str:
        return f"<Waste {self.total_bytes} bytes in {sum(1 for k in self.kinds.values() if k.objects)} kinds>"


def waste(heap: Heap, members: str, long_string_chars: int = LONG_STRING_CHARS) -> Waste:
    """Heap.waste()."""
    total, boxes, box_bytes, raw = heap._waste(members, long_string_chars)
    kinds = {name: WasteKind(heap, name, ids, wasted) for name, (ids, wasted) in zip(KINDS, raw)}
    return Waste(kinds, total, boxes, box_bytes, members == "all")
