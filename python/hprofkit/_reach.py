"""Paths from GC roots, as LeakCanary reports them.

    path = heap.path_to_root(obj)   # the default matchers excluded (exclude=() for none)
    if path is not None:
        print(path)                 # one line per hop, root first
        path.hops[0].name           # the root kind: 'JNI_GLOBAL', 'THREAD_OBJECT'...
        path.library                # True if only a "library" matcher's reference reaches obj

The search runs in C (one breadth-first search with Shark's two queues for
any number of objects); this module turns matchers into the C rules and the
raw hops into Hop and HeapPath objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, NamedTuple, Optional, Sequence

from .match import ANDROID_DEFAULTS, JDK_DEFAULTS, Matcher

if TYPE_CHECKING:
    from ._heap import Heap, HeapObject
    from ._hprof import StackFrame

# heap._paths()'s rules and answers (src/_hprof_reach.c): a rule is (pattern,
# edge, class ordinal, thread serial, name); a path is its hops (ref_type,
# holder, name, target) and the index of the library rule crossed, or -1.
_Rule = tuple[int, int, int, int, Optional[bytes]]
_RawPath = tuple[list[tuple[str, Any, Any, "HeapObject"]], int]

__all__ = ["Hop", "HeapPath", "REF_TYPES", "path_to_root", "paths_to_root", "default_exclude"]

REF_TYPES = ("ROOT", "STATIC_FIELD", "INSTANCE_FIELD", "ARRAY_ENTRY", "LOCAL")

# hp_reach.h: HP_RULE_* and HP_EDGE_*.
_PATTERNS = {"instance_field": 0, "static_field": 1, "thread_local": 2, "root_class": 3}
_EDGES = {"library": 1, "ignore": 2}


class Hop(NamedTuple):
    """One step of a path.

    ref_type: "ROOT" (hops[0]: holder None, name the root kind such as
    "JNI_GLOBAL" or "JAVA_FRAME"), "STATIC_FIELD" (holder the HeapClass, name
    the static, or "<loader>"), "INSTANCE_FIELD" (holder the HeapObject, name
    the field; "<class>" for VisualVM's instance-to-class edge), "ARRAY_ENTRY"
    (name "[i]") or "LOCAL" (holder the thread object, name the frame as text,
    or None).  target: the object reached."""

    ref_type: str
    holder: Any
    name: Optional[str]
    target: Any


class HeapPath:
    """The shortest strong path from a GC root to an object.

    hops: the Hop list, root first, the object last.  library: True when the
    object is reached only across a "library" matcher (library_matcher names
    the first one crossed).  len(path) is the number of hops."""

    __slots__ = ("hops", "library", "library_matcher")

    def __init__(self, hops: list[Hop], library_matcher: Optional[Matcher] = None) -> None:
        self.hops = hops
        self.library_matcher = library_matcher
        self.library = library_matcher is not None

    def __len__(self) -> int:
        return len(self.hops)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HeapPath):
            return NotImplemented
        return self.hops == other.hops and self.library_matcher == other.library_matcher

    __hash__ = None  # type: ignore[assignment]  # mutable hop list

    def __iter__(self) -> Iterator[Hop]:
        return iter(self.hops)

    @property
    def target(self) -> Any:
        return self.hops[-1].target

    def __repr__(self) -> str:
        return f"<hprofkit.HeapPath {len(self.hops)} hops from {self.hops[0].name} to {_describe(self.target)}>"

    def _repr_html_(self) -> str:
        from ._html import heap_path
        return heap_path(self)

    def __str__(self) -> str:
        lines = ["┬───", f"│ GC Root: {self.hops[0].name}"]
        if self.library_matcher is not None:
            m = self.library_matcher
            lines.append(f"│ Library leak match: {m.description or repr(m)}")
        lines.append("│")
        for i, hop in enumerate(self.hops):
            last = i == len(self.hops) - 1
            lines.append(("╰→ " if last else "├─ ") + _describe(hop.target))
            if not last:
                lines.append(f"│    ↓ {_reference(self.hops[i + 1])}")
        return "\n".join(lines)


def _simple(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _describe(obj: Any) -> str:
    kind = obj.kind
    if kind == "class":
        return f"{obj.name} class"
    if kind == "instance":
        return f"{obj.class_name} instance"
    return f"{obj.class_name} array"


def _reference(hop: Hop) -> str:
    if hop.ref_type == "STATIC_FIELD":
        return f"static {_simple(hop.holder.name)}.{hop.name}"
    if hop.ref_type == "ARRAY_ENTRY":
        return f"{_simple(hop.holder.class_name)}{hop.name}"
    if hop.ref_type == "LOCAL":
        return "Thread<Java Local>" + (f" in {hop.name}" if hop.name else "")
    return f"{_simple(hop.holder.class_name)}.{hop.name}"


def _frame_text(frame: Optional[StackFrame]) -> Optional[str]:
    """A StackFrame as a stack trace prints it: Class.method(File.java:12)."""
    if frame is None or frame.method is None:
        return None
    where = frame.source or "Unknown Source"
    if frame.line is not None and frame.line > 0:
        where += f":{frame.line}"
    elif frame.line == -3:
        where = "Native Method"
    return f"{frame.class_name or '?'}.{frame.method}({where})"


def _thread_name(thread: HeapObject) -> Optional[str]:
    try:
        name = thread["name"]
    except (KeyError, TypeError):
        return None
    if name is None:
        return None
    if name.kind == "instance":
        return name.as_str()
    if name.kind == "primitive_array":
        return "".join(name.tolist())
    return None


def _rules(heap: Heap, exclude: Iterable[Matcher]) -> tuple[list[_Rule], list[Matcher]]:
    """Matchers as the C rules (pattern, edge, class ordinal, thread serial,
    name), each with the matcher it came from.  Names no class of the dump
    has match nothing."""
    rules: list[_Rule] = []
    owners: list[Matcher] = []
    threads: Optional[dict[str, list[int]]] = None
    for m in exclude:
        if not isinstance(m, Matcher):
            raise TypeError(f"exclude must hold hprofkit.match matchers, not {type(m).__name__}")
        pattern, edge = _PATTERNS[m.pattern], _EDGES[m.kind]
        if m.pattern == "thread_local":
            if threads is None:
                threads = {}
                for root in heap.gc_roots:
                    if root.kind == "THREAD_OBJECT" and root.object is not None and root.thread_serial is not None:
                        name = _thread_name(root.object)
                        if name is not None:
                            threads.setdefault(name, []).append(root.thread_serial)
            for serial in threads.get(m.name, ()) if m.name is not None else ():
                rules.append((pattern, edge, 0, serial, None))
                owners.append(m)
            continue
        if m.class_name is None:  # only a Matcher built by hand, not by hprofkit.match
            raise TypeError(f"{m!r}: a {m.pattern} matcher needs a class name")
        field_name = m.name.encode("utf-8") if m.name is not None else None
        for cls in heap.classes_named(m.class_name):
            rules.append((pattern, edge, cls.ordinal, 0, field_name))
            owners.append(m)
    return rules, owners


def _path(raw: Optional[_RawPath], owners: Sequence[Matcher]) -> Optional[HeapPath]:
    if raw is None:
        return None
    hops, rule = raw
    out = []
    for ref_type, holder, name, target in hops:
        if ref_type == "LOCAL":
            name = _frame_text(name)
        out.append(Hop(ref_type, holder, name, target))
    return HeapPath(out, owners[rule] if rule >= 0 else None)


def default_exclude(heap: Heap) -> tuple[Matcher, ...]:
    """What exclude=None means wherever hprofkit takes reference matchers (paths, leaks,
    diffs, testing): ANDROID_DEFAULTS for an Android heap (one with android.os.Build),
    JDK_DEFAULTS otherwise.  exclude=() means none."""
    return ANDROID_DEFAULTS if heap.find_class("android.os.Build") is not None else JDK_DEFAULTS


def paths_to_root(heap: Heap, objs: Iterable[HeapObject], exclude: Optional[Iterable[Matcher]] = None
                  ) -> list[Optional[HeapPath]]:
    """Shortest paths from GC roots to each of objs, by one search; a list
    aligned with objs, None where no strong path exists.  The objects are
    leaves of the search: a path to one never passes through another.
    exclude: reference matchers (None: default_exclude(heap); (): none)."""
    rules, owners = _rules(heap, default_exclude(heap) if exclude is None else exclude)
    return [_path(raw, owners) for raw in heap._paths(list(objs), rules)]


def path_to_root(heap: Heap, obj: HeapObject, exclude: Optional[Iterable[Matcher]] = None) -> Optional[HeapPath]:
    """The shortest path from a GC root to obj, or None."""
    return paths_to_root(heap, [obj], exclude)[0]
