"""Paths from GC roots, as LeakCanary reports them.

    path = heap.path_to_root(obj)   # the default matchers excluded (exclude=() for none)
    if path is not None:
        print(path)                 # one line per hop, root first (long paths folded)
        path.hops[0].name           # the root kind: 'JNI_GLOBAL', 'THREAD_OBJECT'...
        path.library                # True if only a "library" matcher's reference reaches obj
    for obj, path in zip(objs, heap.paths_to_root(objs)):
        if not path:                # a NoPath: why there is none
            print(path.reason)      # 'unreachable', 'weakly reachable', 'excluded'

The search runs in C (one breadth-first search with Shark's two queues for
any number of objects, going on across excluded references and weak
referents to say why an object has no strong path); this module turns
matchers into the C rules and the C routes into HeapPath and NoPath objects,
whose hops are named only when read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple, Optional, Sequence

from ._views import SequenceView
from .match import ANDROID_DEFAULTS, JDK_DEFAULTS, Matcher

if TYPE_CHECKING:
    from ._heap import Heap, HeapObject
    from ._hprof import Route, StackFrame

# heap._routes()'s rules (src/_hprof_reach.c): (pattern, edge, class
# ordinal, thread serial, name); a Route's raw hops are (ref_type, holder,
# name, target) tuples.
_Rule = tuple[int, int, int, int, Optional[bytes]]

__all__ = ["Hop", "Hops", "HeapPath", "NoPath", "REF_TYPES", "UNREACHABLE", "WEAKLY_REACHABLE", "EXCLUDED",
           "path_to_root", "paths_to_root", "default_exclude"]

REF_TYPES = ("ROOT", "STATIC_FIELD", "INSTANCE_FIELD", "ARRAY_ENTRY", "LOCAL")

# NoPath.reason: no path at all; one only across a weak referent; one only
# across a reference an "ignore" matcher excludes.
UNREACHABLE, WEAKLY_REACHABLE, EXCLUDED = "unreachable", "weakly reachable", "excluded"

# hp_reach.h: HP_RULE_*, HP_EDGE_*, and the tiers of Routes.status.
_PATTERNS = {"instance_field": 0, "static_field": 1, "thread_local": 2, "root_class": 3}
_EDGES = {"library": 1, "ignore": 2}
_TIER_NORMAL, _TIER_LOW, _TIER_IGNORED, _TIER_WEAK, _TIER_NONE = range(5)

# Hops printed at each end of a long path or leak trace; the middle is one line.
FOLD = 10


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


def _hop(raw: tuple[str, Any, Any, Any]) -> Hop:
    ref_type, holder, name, target = raw
    return Hop(ref_type, holder, _frame_text(name) if ref_type == "LOCAL" else name, target)


class Hops(SequenceView[Hop]):
    """The hops of a HeapPath, root first: a sequence whose items are named when
    read (a path of millions of hops costs a few bytes a hop until then).
    Equal to any sequence of the same Hops."""

    __slots__ = ("_route",)

    def __init__(self, route: Route) -> None:
        self._route = route

    def __len__(self) -> int:
        return len(self._route)

    def _item(self, k: int) -> Hop:
        return _hop(self._route[k])

    def _items(self, start: int, stop: int) -> list[Hop]:
        return [_hop(raw) for raw in self._route[start:stop]]

    def target(self, i: int) -> Any:
        """The object hop i reaches, without naming the hop."""
        return self._route.target(i)


class HeapPath:
    """The shortest strong path from a GC root to an object.

    hops: the Hop sequence, root first, the object last (named when read).
    library: True when the object is reached only across a "library" matcher
    (library_matcher names the first one crossed).  len(path) is the number
    of hops.  str(path) prints it as LeakCanary does, folding the middle of
    a path of more than 2 * FOLD + 1 hops."""

    __slots__ = ("hops", "library", "library_matcher")

    def __init__(self, hops: Sequence[Hop], library_matcher: Optional[Matcher] = None) -> None:
        self.hops = hops
        self.library_matcher = library_matcher
        self.library = library_matcher is not None

    def __len__(self) -> int:
        return len(self.hops)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HeapPath):
            return NotImplemented
        return self.library_matcher == other.library_matcher and self.hops == other.hops

    __hash__ = None  # type: ignore[assignment]  # its hops may be a list

    def __iter__(self) -> Iterator[Hop]:
        return iter(self.hops)

    def _target(self, i: int) -> Any:
        hops = self.hops
        return hops.target(i) if isinstance(hops, Hops) else hops[i].target

    @property
    def target(self) -> Any:
        return self._target(-1)

    def __repr__(self) -> str:
        return f"<hprofkit.HeapPath {len(self.hops):,} hops from {self.hops[0].name} to {_describe(self.target)}>"

    def _repr_html_(self) -> str:
        from ._html import heap_path
        return heap_path(self)

    def __str__(self) -> str:
        header = library_lines(self.library_matcher) + ["┬───", f"│ GC Root: {root_description(self.hops)}"]
        hops = self.hops

        def node(i: int, last: bool) -> list[str]:
            lines = [("╰→ " if last else "├─ ") + _describe(self._target(i))]
            if not last:
                lines.append("│" + reference_line(hops[i + 1]))
            return lines
        return format_trace(header, len(hops), node)


class NoPath:
    """Why an object has no strong path (paths_to_root's answer then); falsy.

    reason: UNREACHABLE (no path at all), WEAKLY_REACHABLE (only across a
    weak, soft, phantom or final referent) or EXCLUDED (only across a
    reference an "ignore" matcher excludes: matcher is the first one).
    path: that path, crossing the weak or excluded reference (None when
    unreachable).  hops is empty and len() 0, so code written for None
    (`if path:`) reads it as no path."""

    __slots__ = ("target", "reason", "matcher", "path")

    hops: tuple[Hop, ...] = ()
    library = False
    library_matcher = None

    def __init__(self, target: Any, reason: str, matcher: Optional[Matcher] = None,
                 path: Optional[HeapPath] = None) -> None:
        self.target = target
        self.reason = reason
        self.matcher = matcher
        self.path = path

    def __bool__(self) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NoPath):
            return NotImplemented
        return (self.target, self.reason, self.matcher, self.path) == (other.target, other.reason, other.matcher,
                                                                      other.path)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        why = f"{self.reason} ({self.matcher!r})" if self.matcher is not None else self.reason
        return f"<hprofkit.NoPath to {_describe(self.target)}: {why}>"

    def __str__(self) -> str:
        what = f"No strong path to {_describe(self.target)}: {self.reason}"
        if self.reason == EXCLUDED and self.matcher is not None:
            what += f" by {self.matcher.description or repr(self.matcher)}"
        return what if self.path is None else f"{what}, across the last reference kept below:\n{self.path}"


# ---- printing, shared with leak traces -----------------------------------------

_ROOT_DESCRIPTIONS = {
    "JNI_GLOBAL": "Global variable in native code", "JNI_LOCAL": "Local variable in native code",
    "JAVA_FRAME": "Java local variable", "NATIVE_STACK": "Input or output parameters in native code",
    "STICKY_CLASS": "System class", "THREAD_BLOCK": "Thread block",
    "MONITOR_USED": "Monitor (anything that called the wait() or notify() methods, or that is synchronized.)",
    "THREAD_OBJECT": "Thread object", "JNI_MONITOR": "Root JNI monitor",
    "INTERNED_STRING": "Interned string", "FINALIZING": "Object waiting for finalization",
    "DEBUGGER": "Debugger", "VM_INTERNAL": "VM internal", "REFERENCE_CLEANUP": "Reference cleanup",
    "UNREACHABLE": "Unreachable", "UNKNOWN": "Unknown",
}


def library_lines(matcher: Optional[Matcher]) -> list[str]:
    """The lines above a trace that must cross a library matcher's reference."""
    if matcher is None:
        return []
    return [f"Library leak match: {matcher!r}"] + ([f"Description: {matcher.description}"] if matcher.description
                                                    else [])


def root_description(hops: Sequence[Hop]) -> str:
    """The GC Root line as LeakCanary words it.  A frame's local hung from
    its thread starts at the thread, so LeakCanary names the thread's root:
    "Thread object"."""
    if len(hops) > 1 and hops[1].ref_type == "LOCAL":
        return _ROOT_DESCRIPTIONS["THREAD_OBJECT"]
    kind = hops[0].name or "UNKNOWN"
    return _ROOT_DESCRIPTIONS.get(kind, kind)


def format_trace(header: list[str], n: int, node: Callable[[int, bool], list[str]], fold: int = FOLD) -> str:
    """A LeakCanary trace: the header, then node(i, last) lines for each of
    the n nodes, root first; past 2 * fold + 1 nodes only the first and last
    `fold` are printed, and one line counts the others."""
    lines = header + ["│"]
    shown: Iterable[int] = range(n)
    if n > 2 * fold + 1:
        shown = [*range(fold), -1, *range(n - fold, n)]
    for i in shown:
        if i < 0:
            lines.append(f"│ … {n - 2 * fold:,} more hops …")
            continue
        lines += node(i, i == n - 1)
    return "\n".join(lines)


def reference_line(hop: Hop, owner: Optional[str] = None) -> str:
    """The reference leaving a node, LeakCanary's way: "    ↓ static Leaks.sLoop",
    "    ↓ Object[].[3]", "    ↓ Thread<Java Local>"; owner: the class the
    reference belongs to (a field's declaring class), the holder's by default."""
    if owner is None:
        owner = hop.holder.name if hop.ref_type == "STATIC_FIELD" else hop.holder.class_name
    simple = _simple(owner)
    if hop.ref_type == "LOCAL":
        return f"    ↓ {simple}<Java Local>"
    static = " static" if hop.ref_type == "STATIC_FIELD" else ""
    return f"    ↓{static} {simple}.{hop.name}"


def _simple(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _describe(obj: Any) -> str:
    kind = obj.kind
    if kind == "class":
        return f"{obj.name} class"
    if kind == "instance":
        return f"{obj.class_name} instance"
    return f"{obj.class_name} array"


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
    name: Optional[HeapObject]
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
                for root in heap.gc_roots.of_kind("THREAD_OBJECT"):
                    if root.object is not None and root.thread_serial is not None:
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


def default_exclude(heap: Heap) -> tuple[Matcher, ...]:
    """What exclude=None means wherever hprofkit takes reference matchers (paths, leaks,
    diffs, testing): ANDROID_DEFAULTS for an Android heap (one with android.os.Build),
    JDK_DEFAULTS otherwise: a HotSpot dump's main thread holds its locals as any thread
    does, Android's main looper's are transient (match.ANDROID_THREADS).  exclude=() means
    none."""
    return ANDROID_DEFAULTS if heap.find_class("android.os.Build") is not None else JDK_DEFAULTS


def _routes(heap: Heap, objs: Iterable[HeapObject], exclude: Optional[Iterable[Matcher]], leaves: bool
            ) -> tuple[list[HeapObject], Any, list[Matcher]]:
    objects = list(objs)
    rules, owners = _rules(heap, default_exclude(heap) if exclude is None else exclude)
    return objects, heap._routes(objects, rules, leaves), owners


def _answer(routes: Any, i: int, target: Any, owners: Sequence[Matcher]) -> HeapPath | NoPath:
    """Target i's HeapPath, or the NoPath saying why it has none."""
    tier, rule = routes.status(i)
    route = routes.route(i)
    if tier == _TIER_NONE:
        return NoPath(target, UNREACHABLE)
    if tier <= _TIER_LOW:
        return HeapPath(Hops(route), owners[rule] if tier == _TIER_LOW and rule >= 0 else None)
    return NoPath(target, WEAKLY_REACHABLE if tier == _TIER_WEAK else EXCLUDED,
                  owners[rule] if tier == _TIER_IGNORED and rule >= 0 else None, HeapPath(Hops(route)))


def paths_to_root(heap: Heap, objs: Iterable[HeapObject], exclude: Optional[Iterable[Matcher]] = None
                  ) -> list[HeapPath | NoPath]:
    """Shortest paths from GC roots to each of objs, by one search; a list
    aligned with objs.  Each object gets the path path_to_root gives it (a
    path to one may pass through another), or a NoPath saying why there is
    none.  exclude: reference matchers (None: default_exclude(heap); (): none)."""
    objects, routes, owners = _routes(heap, objs, exclude, False)
    return [_answer(routes, i, obj, owners) for i, obj in enumerate(objects)]


def leaf_paths(heap: Heap, objs: Iterable[HeapObject], exclude: Optional[Iterable[Matcher]] = None
               ) -> list[Optional[HeapPath]]:
    """LeakCanary's search for leaks: the objects are leaves, so a path to
    one never passes through another (an object reached only through
    another gets None, its leak being the other's)."""
    objects, routes, owners = _routes(heap, objs, exclude, True)
    out: list[Optional[HeapPath]] = []
    for i, obj in enumerate(objects):
        answer = _answer(routes, i, obj, owners)
        out.append(answer if isinstance(answer, HeapPath) else None)
    return out


def path_to_root(heap: Heap, obj: HeapObject, exclude: Optional[Iterable[Matcher]] = None) -> Optional[HeapPath]:
    """The shortest path from a GC root to obj, or None (paths_to_root says why)."""
    answer = paths_to_root(heap, [obj], exclude)[0]
    return answer if isinstance(answer, HeapPath) else None
