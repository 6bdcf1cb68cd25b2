"""The heap explored as MAT, AHAT and VisualVM show it: values, threads,
allocation sites and waste.

    obj.entries()                    # a map's [(key, value)], in iteration order
    obj.elements()                   # a list's, set's or queue's elements; an array's
    obj.fill_ratio                   # size / capacity of an array-backed collection
    obj.value                        # a boxed primitive, String or enum constant as Python
    heap.threads()                   # [Thread(object, name, daemon, frames, retained_size, ...)]
    heap.allocation_sites(depth=4)   # objects and bytes by allocation stack (hprof agent dumps)
    heap.duplicate_strings()         # [(text, count, wasted_bytes)], largest waste first
    heap.collection_waste()          # per collection class: instances, empty, mean fill, wasted
    heap.large_arrays(1 << 20)       # primitive arrays of 1 MiB and more, with dominator and path

The walks run in C (src/_hprof_values.c over core/hp_coll.c, hp_strdup.c,
hp_heap_trace.c); this module gives their raw rows names and Python
values.  docs/values.md defines each view."""

from __future__ import annotations

import array
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Optional

if TYPE_CHECKING:
    from ._heap import Heap, HeapClass, HeapObject
    from ._hprof import StackFrame
    from ._reach import HeapPath

__all__ = ["Frame", "Thread", "AllocationSite", "AllocSite", "DuplicateString", "CollectionWaste", "LargeArray"]

# The box classes and the type of the `value` field each declares.
BOX_TYPES = {"java.lang.Boolean": "boolean", "java.lang.Byte": "byte", "java.lang.Character": "char",
             "java.lang.Short": "short", "java.lang.Integer": "int", "java.lang.Long": "long",
             "java.lang.Float": "float", "java.lang.Double": "double"}
BOXES = frozenset(BOX_TYPES)


# ---- values ------------------------------------------------------------------------------

def value_of(obj: HeapObject) -> Any:
    """HeapObject.value: a boxed primitive as bool, int, float or a 1-char str; a String as
    str (None when the dump lacks its characters); an enum constant as its name (str)."""
    name = obj.class_name
    if name == "java.lang.String":
        return obj.as_str()
    if name in BOXES and obj.kind == "instance":
        return _box_value(obj, BOX_TYPES[name])
    if obj.kind == "instance" and is_enum(obj.class_):
        constant = obj["name"]
        return None if constant is None else constant.as_str()
    raise TypeError(f"{name} has no value: .value reads boxed primitives, Strings and enum constants")


def _box_value(obj: HeapObject, want: str) -> Any:
    """The `value` of a box, which must be a field of the box's primitive type."""
    field = next((f for f in obj.fields() if f.name == "value"), None)
    if field is None or field.type != want:
        found = "no field value" if field is None else f"a field value of type {field.type}"
        obj._corrupt(f"{obj.class_name} {obj.id:#x} has {found}, not the {want} value of its box")
    return field.value


def is_enum(cls: Optional[HeapClass]) -> bool:
    """Whether cls descends from java.lang.Enum (enum constants with a body are subclasses)."""
    while cls is not None:
        if cls.name == "java.lang.Enum":
            return True
        cls = cls.superclass
    return False


def fill_ratio_of(obj: HeapObject) -> Optional[float]:
    """HeapObject.fill_ratio: size / capacity (MAT's fill ratio)."""
    measure = obj._measure()
    if measure is None:
        raise TypeError(f"{obj.class_name} is no collection hprofkit knows nor an object array: no fill ratio")
    _shape, size, capacity, _wasted, _inner = measure
    if size is None or not capacity:
        return None
    return size / capacity


def elements_of(obj: HeapObject) -> list[Any]:
    """HeapObject.elements(): an array's elements, or a list's, set's or queue's."""
    if obj.kind in ("object_array", "primitive_array"):
        return obj.tolist()
    return obj._walk(False)


# ---- threads -----------------------------------------------------------------------------

class Frame(NamedTuple):
    """One frame of a stack, top first: the method's class, name, signature, source file and
    line (> 0; -1 unknown, -2 compiled, -3 native; None when the dump lacks the frame), and
    the objects a ROOT_JAVA_FRAME or ROOT_JNI_LOCAL of the thread holds at that depth."""

    class_name: Optional[str]
    method: Optional[str]
    signature: Optional[str]
    source: Optional[str]
    line: Optional[int]
    locals: tuple[HeapObject, ...] = ()

    def __str__(self) -> str:
        """As jstack prints a frame: 'java.lang.Object.wait(Native Method)'."""
        where = (f"{self.source}:{self.line}" if self.source and self.line and self.line > 0 else
                 "Native Method" if self.line == -3 else "Compiled Code" if self.line == -2 and not self.source
                 else self.source or "Unknown Source")
        return f"{self.class_name or '?'}.{self.method or '?'}({where})"


class Thread(NamedTuple):
    """A thread of the dump, from its ROOT_THREAD_OBJECT: its java.lang.Thread object (None
    when the dump lacks it), name and daemon flag read from that object, its stack (frames,
    top first, with the objects each holds), its retained size, its serial number, and
    `held`: objects its other roots hold (JNI locals of no frame, native stacks, thread
    blocks, JNI monitors).

    retained_size is the thread object's retained size (0 when the dump lacks the object).
    Under semantics="hprofkit" (the default) it includes what the thread's stack holds, as
    MAT counts it: the objects of its frames and of `held` hang from the thread object in
    the dominator tree, so the thread retains those it alone holds and what only they keep
    alive; one another thread's stack, another GC root or an object the thread does not
    retain also holds is not the thread's (docs/reference/behaviour.md).  Under
    semantics="visualvm" it is VisualVM's figure, without them."""

    object: Optional[HeapObject]
    name: Optional[str]
    daemon: Optional[bool]
    frames: list[Frame]
    retained_size: int
    serial: int
    held: tuple[HeapObject, ...] = ()

    def _repr_html_(self) -> str:
        """The stack as jstack prints it, each frame with the objects it holds (Jupyter)."""
        from ._html import thread
        return thread(self)


def _text(value: Optional[HeapObject]) -> Optional[str]:
    """A thread's name: a String (JDK 7+, Android), or a char[] (JDK 6)."""
    if value is None:
        return None
    if value.class_name == "java.lang.String":
        return value.as_str()
    if value.class_name == "char[]":
        return "".join(value.tolist())
    return None


def _thread_field(thread: HeapObject, name: str) -> Any:
    """A field of a Thread, or of its FieldHolder (JDK 19+ keeps daemon, priority there)."""
    try:
        return thread[name]
    except KeyError:
        pass
    try:
        holder = thread["holder"]
    except KeyError:
        return None
    try:
        return holder[name] if holder is not None else None
    except KeyError:
        return None


def _frame(raw: StackFrame, held: tuple[HeapObject, ...] = ()) -> Frame:
    return Frame(raw.class_name, raw.method, raw.signature, raw.source, raw.line, held)


def threads(heap: Heap) -> list[Thread]:
    """Heap.threads()."""
    locals_at: dict[tuple[int, int], list[HeapObject]] = {}
    held: dict[int, list[HeapObject]] = {}
    for root in heap.gc_roots:
        if root.thread_serial is None or root.kind == "THREAD_OBJECT" or root.object is None:
            continue
        if root.frame is not None and root.frame.depth >= 0:
            locals_at.setdefault((root.thread_serial, root.frame.depth), []).append(root.object)
        else:
            held.setdefault(root.thread_serial, []).append(root.object)
    depths: dict[int, list[int]] = {}
    for serial, depth in sorted(locals_at):
        depths.setdefault(serial, []).append(depth)
    out = []
    for serial, obj, _object_id, _trace, frames in heap._threads():
        # roots deeper than the stack the dump recorded: held by the thread, at no frame
        extra = [o for depth in depths.get(serial, ()) if depth >= len(frames) for o in locals_at[serial, depth]]
        stack = [_frame(raw, tuple(locals_at.get((serial, depth), ()))) for depth, raw in enumerate(frames)]
        name = daemon = None
        if obj is not None and obj.kind == "instance":
            name = _text(_thread_field(obj, "name"))
            flag = _thread_field(obj, "daemon")
            daemon = bool(flag) if isinstance(flag, bool) else None
        out.append(Thread(obj, name, daemon, stack, heap.retained_size(obj) if obj is not None else 0, serial,
                          tuple(held.get(serial, ())) + tuple(extra)))
    return out


# ---- allocation sites ----------------------------------------------------------------------

class AllocationSite(NamedTuple):
    """Objects allocated at one stack (gperftools' bucket): frames, top (the allocating
    method) first, cut to the depth asked; objects and bytes (shallow sizes) allocated there
    (pprof's flat); cum_objects and cum_bytes: those allocated in its top method or in what
    it called, whatever called it (pprof's cum, over the same cut stacks).  An empty frames
    tuple gathers the objects whose record names no stack trace of the dump."""

    frames: tuple[Frame, ...]
    objects: int
    bytes: int
    cum_objects: int
    cum_bytes: int


def _method(frame: Frame) -> tuple[Optional[str], Optional[str], Optional[str]]:
    return (frame.class_name, frame.method, frame.signature)


def allocation_sites(heap: Heap, depth: Optional[int] = None) -> list[AllocationSite]:
    """Heap.allocation_sites()."""
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
        raise ValueError(f"depth must be a whole number of frames, 1 or more (or None for all), not {depth!r}")
    flat: dict[tuple[Frame, ...], list[int]] = {}
    for serial, objects, nbytes in heap._site_counts():
        trace = heap._trace(serial) if serial else None
        frames = tuple(_frame(raw) for raw in trace[1]) if trace is not None else ()
        key = frames[:depth] if depth is not None else frames
        row = flat.setdefault(key, [0, 0])
        row[0] += objects
        row[1] += nbytes
    cum: dict[tuple[Optional[str], Optional[str], Optional[str]], list[int]] = {}
    for key, (objects, nbytes) in flat.items():
        for method in {_method(frame) for frame in key}:
            row = cum.setdefault(method, [0, 0])
            row[0] += objects
            row[1] += nbytes
    sites = [AllocationSite(key, objects, nbytes, *(cum[_method(key[0])] if key else (objects, nbytes)))
             for key, (objects, nbytes) in flat.items()]
    sites.sort(key=lambda s: (-s.bytes, -s.objects, [str(f) for f in s.frames]))
    return sites


class AllocSite(NamedTuple):
    """One site of an ALLOC_SITES record (the old hprof agent's allocation report): the
    record's offset and totals, then the site: array_type (0 an instance, 2 an object array,
    4..11 a primitive array of that HPROF type), its class's LOAD_CLASS serial, its stack
    trace serial, its live and allocated bytes and instances, and its class's name (None
    when the dump has no class of that serial)."""

    record_offset: int
    flags: int
    cutoff: float
    total_live_bytes: int
    total_live_instances: int
    total_bytes_allocated: int
    total_instances_allocated: int
    array_type: int
    class_serial: int
    trace_serial: int
    live_bytes: int
    live_instances: int
    bytes_allocated: int
    instances_allocated: int
    class_name: Optional[str]


# ---- waste ---------------------------------------------------------------------------------

class DuplicateString(NamedTuple):
    """Strings holding the same text: how many, and the bytes keeping one String for the text
    (the lowest id) would free: the others' shallow sizes and the value arrays only they hold
    (not an array the kept String or a String of another text shares)."""

    text: str
    count: int  # type: ignore[assignment]  # the issue's name, over tuple.count
    wasted_bytes: int


def duplicate_strings(heap: Heap, min_count: int, members: str) -> list[DuplicateString]:
    """Heap.duplicate_strings()."""
    if not isinstance(min_count, int) or isinstance(min_count, bool) or min_count < 1:
        raise ValueError(f"min_count must be a whole number, 1 or more, not {min_count!r}")
    rows = [DuplicateString(first.as_str() or "", count, wasted)
            for first, count, wasted in heap._duplicate_strings(min_count, members)]
    rows.sort(key=lambda r: (-r.wasted_bytes, -r.count, r.text))
    return rows


class CollectionWaste(NamedTuple):
    """One collection class: its instances, how many are empty (size 0), their mean fill
    ratio (over those with a backing array; None when none has one) and the bytes their
    backing arrays waste (docs/values.md defines it); ``class_`` is the HeapClass.
    ``corrupt`` counts the instances whose size their storage cannot hold (an ArrayList of
    size 2^31-1 in 10 slots): they count in ``instances`` only, never in the fill or the waste."""

    class_name: str
    instances: int
    empty: int
    mean_fill: Optional[float]
    wasted_bytes: int
    class_: HeapClass
    corrupt: int = 0


def collection_waste(heap: Heap, members: str) -> list[CollectionWaste]:
    """Heap.collection_waste()."""
    rows = [CollectionWaste(cls.name, instances, empty, fill_sum / filled if filled else None, wasted, cls, corrupt)
            for cls, instances, empty, filled, fill_sum, wasted, corrupt in heap._collection_waste(members)]
    rows.sort(key=lambda r: (-r.wasted_bytes, -r.instances, r.class_name, r.class_.class_id))
    return rows


class LargeArray:
    """A large primitive array: array (the HeapObject), bytes (its shallow size); dominator
    and path (its immediate dominator, its shortest path from a GC root) are computed on
    first access."""

    __slots__ = ("heap", "array", "bytes", "_dominator", "_path")
    _UNSET: Any = object()

    def __init__(self, heap: Heap, array: HeapObject, size: int) -> None:
        self.heap = heap
        self.array = array
        self.bytes = size
        self._dominator: Optional[HeapObject] = self._UNSET
        self._path: Optional[HeapPath] = self._UNSET

    @property
    def dominator(self) -> Optional[HeapObject]:
        if self._dominator is self._UNSET:
            self._dominator = self.heap.dominator(self.array)
        return self._dominator

    @property
    def path(self) -> Optional[HeapPath]:
        if self._path is self._UNSET:
            self._path = self.heap.path_to_root(self.array)
        return self._path

    def __repr__(self) -> str:
        return f"<LargeArray {self.array!r}>"


def large_arrays(heap: Heap, min_bytes: int, members: str) -> list[LargeArray]:
    """Heap.large_arrays()."""
    if not isinstance(min_bytes, int) or isinstance(min_bytes, bool) or min_bytes < 0:
        raise ValueError(f"min_bytes must be a whole number of bytes, 0 or more, not {min_bytes!r}")
    rows = heap._large_arrays(min_bytes, members)
    rows.sort(key=lambda r: (-r[1], r[0].id))
    return [LargeArray(heap, arr, size) for arr, size in rows]


class ClassCount(NamedTuple):
    """One row of Heap.histogram(): a class's name, the HeapClass (None for a primitive array
    type the dump declares no class for: dumps written by tools), its instances (or arrays)
    and their shallow bytes; per_heap splits them by Android heap name ("app", "zygote",
    "image"...) when the dump has objects in more than one heap, else it is empty."""

    name: str
    class_: Optional[HeapClass]
    instances: int
    shallow_size: int
    per_heap: Mapping[str, tuple[int, int]] = MappingProxyType({})


def _heap_slots(heap: Heap) -> tuple[bytes, list[str]]:
    """The C table of heap slots (257 bytes: Android heap numbers 0..255, then no heap) and
    the slots' names: one per named heap, "default" for the rest."""
    names: list[str] = []
    slots = bytearray(257)
    for number, name in enumerate([*heap._heap_names(), None]):
        key = "default" if name is None else name
        if key not in names:
            names.append(key)
        slots[number] = names.index(key)
    return bytes(slots), names


def class_histogram(heap: Heap, members: str) -> list[ClassCount]:
    """Heap.histogram() and unreachable_histogram(): members 'live', 'all' or 'garbage'."""
    slots, names = _heap_slots(heap)
    counts, shallow = (array.array("Q", raw) for raw in heap._class_histogram(members, slots))
    width = len(names)
    used = [slot for slot in range(width) if any(counts[at] for at in range(slot, len(counts), width))]
    classes: list[Optional[HeapClass]] = list(heap.classes)  # by ordinal, then the class-less primitive types
    rows = []
    for row, cls in enumerate(classes + [None] * len(_PRIMITIVE_ROWS)):
        at = row * width
        instances = sum(counts[at:at + width])
        if instances:
            split = {names[s]: (counts[at + s], shallow[at + s]) for s in used} if len(used) > 1 else {}
            name = cls.name if cls is not None else _PRIMITIVE_ROWS[row - len(classes)]
            rows.append(ClassCount(name, cls, instances, sum(shallow[at:at + width]), split))
    rows.sort(key=lambda r: (-r.shallow_size, -r.instances, r.name, r.class_.class_id if r.class_ else 0))
    return rows


# The histogram's rows past the classes (core/hp_histogram.h), by HPROF basic type 4..11.
_PRIMITIVE_ROWS = ("boolean[]", "char[]", "float[]", "double[]", "byte[]", "short[]", "int[]", "long[]")


def alloc_sites(heap: Heap) -> list[AllocSite]:
    """Heap.alloc_sites()."""
    return [AllocSite(*row) for row in heap._alloc_sites()]

