"""Leak traces: what leaked, what keeps it, and which references to suspect.

::

    import hprofkit
    heap = hprofkit.open_heap("app.hprof")
    for leak in heap.find_leaks():          # = hprofkit.leaks.find_leaks(heap)
        print(leak)                         # a LeakCanary 2-style trace
        leak.fingerprint                    # groups the same leak across dumps

It works as LeakCanary's analyzer (Shark) does:

1. *Finders* name the objects that should be gone (``DEFAULT_FINDERS``):
   LeakCanary's ``KeyedWeakReference`` referents, destroyed activities,
   fragments without a FragmentManager, detached root views of destroyed
   activities, destroyed windows.  A finder is any callable ``finder(heap)``
   yielding ``Candidate``s (or HeapObjects): pass your own in ``finders=``.
2. One shortest-path search from the GC roots finds a path to each of them
   (with the reference matchers of ``exclude``; the watched objects are
   leaves, so a path to one never passes through another); objects that
   are not strongly reachable are not leaks.
3. *Inspectors* (``DEFAULT_INSPECTORS``) give each object on a path reasons to
   be leaking or not (an Activity's ``mDestroyed``, a class is never
   leaking...), then statuses propagate along the path: above the last node
   known not leaking, nothing leaks; below the first leaking node, everything
   does.  The references between those two nodes are the *suspects*: the
   leak's cause is one of them, and the SHA-1 of their class and field names
   is the leak's fingerprint.
"""

from __future__ import annotations

import hashlib
from array import array
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional, Protocol, Sequence

from . import match
from ._classnames import stable_name
from ._heap import Heap, HeapClass, HeapObject
from ._progress import ProgressArg, Reporter, reporting, step
from ._reach import (HeapPath, Hop, NoPath, _thread_name, default_exclude, format_trace, leaf_paths, library_lines,
                     reference_line, root_description)
from ._units import human_size
from ._views import SequenceView

__all__ = [
    "find_leaks", "Leak", "TraceNode", "Candidate", "Finder", "Report", "LEAKING", "NOT_LEAKING", "UNKNOWN",
    "KEYED_WEAK_REFERENCE", "DESTROYED_ACTIVITY", "DETACHED_FRAGMENT", "DETACHED_VIEW", "DESTROYED_WINDOW",
    "DEFAULT_FINDERS", "DEFAULT_INSPECTORS", "default_exclude", "android_build", "leaks_of_paths", "fingerprint",
    "TraceNodes",
]

LEAKING, NOT_LEAKING, UNKNOWN = "LEAKING", "NOT_LEAKING", "UNKNOWN"

KEYED_WEAK_REFERENCE_CLASSES = ("leakcanary.KeyedWeakReference", "com.squareup.leakcanary.KeyedWeakReference")
FRAGMENT_CLASSES = ("android.app.Fragment", "android.support.v4.app.Fragment", "androidx.fragment.app.Fragment")
_REFERENCE = "java.lang.ref.Reference"
_ACTIVITY = "android.app.Activity"
_VIEW = "android.view.View"


# ---- heap helpers ------------------------------------------------------------

def _field(obj: HeapObject, declaring_class: str, name: str, default: Any = None) -> Any:
    """The value of `name` as declared by `declaring_class`, or default when
    the object has no such field (an older or newer framework)."""
    try:
        return obj[declaring_class, name]
    except (KeyError, TypeError):
        return default


def _static(cls: Optional[HeapClass], name: str, default: Any = None) -> Any:
    """A static field's value, or default when the class (or the field) is missing."""
    if cls is None:
        return default
    try:
        return cls[name]
    except KeyError:
        return default


def _text(value: object) -> Optional[str]:
    """A String object's text (None for null, a non-String or a primitive)."""
    return value.as_str() if isinstance(value, HeapObject) else None


def _instances(heap: Heap, class_name: str) -> Iterator[HeapObject]:
    """Instances of every class of that name (a dump may hold duplicates) and their subclasses."""
    for cls in heap.classes_named(class_name):
        yield from cls.instances(subclasses=True)


class _Ancestry:
    """Class names of an object's class and superclasses, cached per class:
    the inspectors ask "instance of X?" for every node of every path."""

    def __init__(self) -> None:
        self._names: dict[int, frozenset[str]] = {}

    def names(self, obj: object) -> frozenset[str]:
        """Empty for anything but an instance (a class, an array, a primitive)."""
        if not isinstance(obj, HeapObject) or obj.kind != "instance" or obj.class_ is None:
            return frozenset()
        cls = obj.class_
        names = self._names.get(cls.index)
        if names is None:
            chain: list[str] = []
            ancestor: Optional[HeapClass] = cls
            while ancestor is not None and len(chain) < 256:     # a hostile superclass cycle ends
                chain.append(ancestor.name)
                ancestor = ancestor.superclass
            names = self._names[cls.index] = frozenset(chain)
        return names


def android_build(heap: Heap) -> tuple[Optional[int], Optional[str]]:
    """(SDK_INT, MANUFACTURER) of an Android heap, from android.os.Build's
    statics; (None, None) when the dump is not Android's or lacks them."""
    value = _static(heap.find_class("android.os.Build$VERSION"), "SDK_INT")
    sdk = value if type(value) is int else None
    return sdk, _text(_static(heap.find_class("android.os.Build"), "MANUFACTURER"))


# ---- finders -----------------------------------------------------------------

class Candidate(NamedTuple):
    """An object a finder holds for leaking: its watch key (LeakCanary's
    KeyedWeakReference key) if any, and why."""

    object: HeapObject
    key: Optional[str] = None
    reason: str = ""


class Finder(NamedTuple):
    """A named leak finder: ``find(heap)`` yields Candidates."""

    name: str
    description: str
    find: Callable[[Heap], Iterable[Candidate]]

    def __call__(self, heap: Heap) -> Iterable[Candidate]:
        return self.find(heap)

    def __repr__(self) -> str:
        return f"<Finder {self.name}>"


class _FinderFunction(Protocol):
    """What find_leaks takes as a finder: ``finder(heap)`` yielding Candidates
    or HeapObjects.  A Protocol, not a Callable: mypy does not take a
    NamedTuple's __call__ (Finder's) for a Callable (python/mypy#9858)."""

    def __call__(self, heap: Heap, /) -> Iterable[Candidate | HeapObject]: ...


def _watched(heap: Heap) -> Iterator[tuple[HeapObject, HeapObject, str]]:
    """(reference, referent, reason) for every KeyedWeakReference still
    watching an object that was not collected."""
    for class_name in KEYED_WEAK_REFERENCE_CLASSES:
        legacy = class_name.startswith("com.")
        for ref in _instances(heap, class_name):
            referent = _field(ref, _REFERENCE, "referent")
            if not isinstance(referent, HeapObject):
                continue
            # LeakCanary 2 sets retainedUptimeMillis when the watch expires;
            # -1 means the object was still within its grace period.
            if _field(ref, class_name, "retainedUptimeMillis", 0) == -1:
                continue
            why = _text(_field(ref, class_name, "description")) or _text(_field(ref, class_name, "name"))
            watcher = "RefWatcher" if legacy else "ObjectWatcher"
            yield ref, referent, f"{watcher} was watching this" + (f" because {why}" if why else "")


def _find_keyed_weak_references(heap: Heap) -> Iterator[Candidate]:
    for ref, referent, reason in _watched(heap):
        yield Candidate(referent, _text(_field(ref, ref.class_name, "key")), reason)


def _destroyed_activity_reason(activity: HeapObject) -> Optional[str]:
    if _field(activity, _ACTIVITY, "mDestroyed") is True:
        return "Activity#mDestroyed is true"
    if _field(activity, _ACTIVITY, "mFinished") is True:
        return "Activity#mFinished is true"
    return None


def _find_destroyed_activities(heap: Heap) -> Iterator[Candidate]:
    for activity in _instances(heap, _ACTIVITY):
        reason = _destroyed_activity_reason(activity)
        if reason:
            yield Candidate(activity, None, reason)


def _find_detached_fragments(heap: Heap) -> Iterator[Candidate]:
    for class_name in FRAGMENT_CLASSES:
        for fragment in _instances(heap, class_name):
            if _field(fragment, class_name, "mFragmentManager", False) is None:
                yield Candidate(fragment, None, "Fragment.mFragmentManager is null")


def _activity_of(context: object, ancestry: _Ancestry) -> Optional[HeapObject]:
    """The Activity a Context is or wraps (ContextWrapper.mBase chains), or None."""
    seen: set[int] = set()
    while isinstance(context, HeapObject) and context.id not in seen:
        seen.add(context.id)
        names = ancestry.names(context)
        if _ACTIVITY in names:
            return context
        if "android.content.ContextWrapper" not in names:
            return None
        context = _field(context, "android.content.ContextWrapper", "mBase")
    return None


def _find_detached_views(heap: Heap) -> Iterator[Candidate]:
    # Root views only (no parent, or a ViewRootImpl parent): one per hierarchy.
    ancestry = _Ancestry()
    for view in _instances(heap, _VIEW):
        parent = _field(view, _VIEW, "mParent")
        if parent is not None and _VIEW in ancestry.names(parent):
            continue
        if _field(view, _VIEW, "mAttachInfo", False) is not None:
            continue
        activity = _activity_of(_field(view, _VIEW, "mContext"), ancestry)
        if activity is not None and _destroyed_activity_reason(activity):
            yield Candidate(view, None, "View detached and View.mContext references a destroyed activity")


def _find_destroyed_windows(heap: Heap) -> Iterator[Candidate]:
    for window in _instances(heap, "android.view.Window"):
        if _field(window, "android.view.Window", "mDestroyed") is True:
            yield Candidate(window, None, "Window#mDestroyed is true")


KEYED_WEAK_REFERENCE = Finder(
    "KEYED_WEAK_REFERENCE", "referents of LeakCanary's KeyedWeakReference (leakcanary. and com.squareup.leakcanary.) "
    "that were not collected", _find_keyed_weak_references)
DESTROYED_ACTIVITY = Finder(
    "DESTROYED_ACTIVITY", "android.app.Activity instances with mDestroyed (or mFinished) set",
    _find_destroyed_activities)
DETACHED_FRAGMENT = Finder(
    "DETACHED_FRAGMENT", "fragments (android.app, support, androidx) with no FragmentManager",
    _find_detached_fragments)
DETACHED_VIEW = Finder(
    "DETACHED_VIEW", "detached root views whose context is a destroyed activity", _find_detached_views)
DESTROYED_WINDOW = Finder("DESTROYED_WINDOW", "android.view.Window instances with mDestroyed set",
                          _find_destroyed_windows)
DEFAULT_FINDERS: tuple[Finder, ...] = (
    KEYED_WEAK_REFERENCE, DESTROYED_ACTIVITY, DETACHED_FRAGMENT, DETACHED_VIEW, DESTROYED_WINDOW)


# ---- inspectors ----------------------------------------------------------------

class Report:
    """What inspectors say about one object of a path: labels shown under it,
    and reasons it is leaking or not.  ``names`` are its class and
    superclasses' names; ``cache`` is shared by every report of one
    find_leaks call (for heap-wide facts an inspector computes once)."""

    __slots__ = ("heap", "object", "names", "labels", "leaking_reasons", "not_leaking_reasons", "cache", "_ancestry")

    def __init__(self, heap: Heap, obj: HeapObject, ancestry: _Ancestry, cache: dict[str, Any]) -> None:
        self.heap = heap
        self.object = obj
        self._ancestry = ancestry
        self.names = ancestry.names(obj)
        self.labels: list[str] = []
        self.leaking_reasons: list[str] = []
        self.not_leaking_reasons: list[str] = []
        self.cache = cache

    def instance_of(self, class_name: str) -> bool:
        return class_name in self.names

    def names_of(self, obj: object) -> frozenset[str]:
        """Another object's class and superclasses' names (empty for a non-instance)."""
        return self._ancestry.names(obj)

    def activity_of(self, context: object) -> Optional[HeapObject]:
        return _activity_of(context, self._ancestry)


def _inspect_watched(report: Report) -> None:
    watched = report.cache.get("watched")
    if watched is None:
        watched = report.cache["watched"] = {}
        for ref, referent, reason in _watched(report.heap):
            labels = []
            key = _text(_field(ref, ref.class_name, "key"))
            if key is not None:
                labels.append(f"key = {key}")
            # LeakCanary 2 records when the watch started and expired, and when the heap was dumped.
            dumped = _static(ref.class_, "heapDumpUptimeMillis")
            for name, label in (("watchUptimeMillis", "watchDurationMillis"),
                                ("retainedUptimeMillis", "retainedDurationMillis")):
                since = _field(ref, ref.class_name, name)
                if type(dumped) is int and type(since) is int and 0 < since <= dumped:
                    labels.append(f"{label} = {dumped - since}")
            watched.setdefault(referent.id, (reason, labels))
    entry = watched.get(report.object.id)
    if entry is not None:
        report.leaking_reasons.append(entry[0])
        report.labels.extend(entry[1])


def _inspect_jdk(report: Report) -> None:
    obj = report.object
    if obj.kind == "class":
        report.not_leaking_reasons.append("a class is never leaking")
    elif report.instance_of("java.lang.ClassLoader"):
        report.not_leaking_reasons.append("A ClassLoader is never leaking")
    elif report.instance_of("java.lang.Thread"):
        name = _thread_name(obj)
        if name is not None:
            report.labels.append(f"Thread name: '{name}'")
        if name == "main":
            report.not_leaking_reasons.append("the main thread always runs")
    if obj.kind == "instance":
        class_name = obj.class_name
        tail = class_name.rsplit("$", 1)[-1]
        if "$" in class_name and tail.isdigit():
            superclass = obj.class_.superclass if obj.class_ is not None else None
            if superclass is not None and superclass.name != "java.lang.Object":
                report.labels.append(f"Anonymous subclass of {superclass.name}")
            else:
                report.labels.append("Anonymous class")


def _destroyed_label(activity: HeapObject) -> str:
    destroyed = _field(activity, _ACTIVITY, "mDestroyed")
    return f"instance of {activity.class_name} with mDestroyed = {str(destroyed).lower()}"


def _inspect_android_components(report: Report) -> None:
    obj = report.object
    if report.instance_of(_ACTIVITY):
        destroyed = _field(obj, _ACTIVITY, "mDestroyed")
        reason = _destroyed_activity_reason(obj)
        if reason:
            report.leaking_reasons.append(reason)
        elif destroyed is False:
            report.not_leaking_reasons.append("Activity#mDestroyed is false")
    elif report.instance_of("android.app.Application"):
        report.not_leaking_reasons.append("Application is a singleton")
    elif report.instance_of("android.app.ActivityThread"):
        report.not_leaking_reasons.append("ActivityThread is a singleton")
    elif report.instance_of("android.view.inputmethod.InputMethodManager"):
        report.not_leaking_reasons.append("InputMethodManager is a singleton")
    elif report.instance_of("android.content.ContextWrapper"):
        activity = report.activity_of(_field(obj, "android.content.ContextWrapper", "mBase"))
        if activity is not None:
            if _destroyed_activity_reason(activity):
                report.leaking_reasons.append(f"{obj.class_name.rsplit('.', 1)[-1]} wraps an Activity with "
                                              "Activity.mDestroyed true")
            else:
                report.labels.append(f"{obj.class_name.rsplit('.', 1)[-1]} wraps an {_destroyed_label(activity)}")
    elif report.instance_of("android.app.ContextImpl"):
        outer = _field(obj, "android.app.ContextImpl", "mOuterContext")
        activity = report.activity_of(outer) if outer is not None and outer.id != obj.id else None
        if activity is not None and _destroyed_activity_reason(activity):
            report.leaking_reasons.append("ContextImpl.mOuterContext is an instance of a destroyed Activity")
    if report.instance_of("android.app.Service"):
        services = report.cache.get("services")
        if services is None:
            services = report.cache["services"] = _running_services(report.heap)
        if obj.id in services:
            report.not_leaking_reasons.append("Service held by ActivityThread")
        elif services:
            report.leaking_reasons.append("Service not held by ActivityThread")
    for class_name in FRAGMENT_CLASSES:
        if report.instance_of(class_name):
            manager = _field(obj, class_name, "mFragmentManager", False)
            if manager is None:
                report.leaking_reasons.append("Fragment.mFragmentManager is null")
            elif manager is not False:
                report.not_leaking_reasons.append("Fragment.mFragmentManager is not null")
            tag = _text(_field(obj, class_name, "mTag"))
            if tag:
                report.labels.append(f"Fragment.mTag={tag}")
            break


def _running_services(heap: Heap) -> frozenset[int]:
    """Ids of the services ActivityThread.mServices holds (a map: its entries
    are at most three references away)."""
    thread = _static(heap.find_class("android.app.ActivityThread"), "sCurrentActivityThread")
    services = _field(thread, "android.app.ActivityThread", "mServices") if thread is not None else None
    found: set[int] = set()
    frontier: list[HeapObject] = [services] if services is not None else []
    for _ in range(3):
        frontier = [ref.target for obj in frontier for ref in obj.references()
                    if ref.target is not None and ref.name != "<loader>"]
        found.update(o.id for o in frontier if o.kind == "instance")
    return frozenset(found)


def _inspect_views(report: Report) -> None:
    obj = report.object
    if report.instance_of(_VIEW):
        context = _field(obj, _VIEW, "mContext")
        activity = report.activity_of(context)
        attached = _field(obj, _VIEW, "mAttachInfo", False) is not None
        if activity is not None and _destroyed_activity_reason(activity):
            report.leaking_reasons.append("View.mContext references a destroyed activity")
        else:
            # Walk up to the root view: a hierarchy under a ViewRootImpl is in a window.
            root, parent, hops = obj, _field(obj, _VIEW, "mParent"), 0
            while parent is not None and _VIEW in report.names_of(parent) and hops < 10_000:
                root, parent, hops = parent, _field(parent, _VIEW, "mParent"), hops + 1
            in_window = parent is not None or root.class_name == "com.android.internal.policy.DecorView"
            attach_count = _field(obj, _VIEW, "mWindowAttachCount")
            if in_window and type(attach_count) is int and attach_count > 0:
                if not attached:
                    report.leaking_reasons.append("View detached yet still part of window view hierarchy")
                else:
                    report.not_leaking_reasons.append("View is part of a window view hierarchy")
        report.labels.append("View#mAttachInfo is " + ("not null (view attached)" if attached else
                                                       "null (view detached)"))
        if context is not None:
            report.labels.append(f"View.mContext references {_destroyed_label(activity)}" if activity is not None
                                 else f"View.mContext references an instance of {context.class_name}")
    elif report.instance_of("android.view.Window"):
        destroyed = _field(obj, "android.view.Window", "mDestroyed")
        if destroyed is True:
            report.leaking_reasons.append("Window#mDestroyed is true")
        elif destroyed is False:
            report.not_leaking_reasons.append("Window#mDestroyed is false")
    elif report.instance_of("android.view.ViewRootImpl"):
        view = _field(obj, "android.view.ViewRootImpl", "mView", False)
        if view is None:
            report.leaking_reasons.append("ViewRootImpl#mView is null")
        elif view is not False:
            report.not_leaking_reasons.append("ViewRootImpl#mView is not null")
    elif report.instance_of("android.os.MessageQueue"):
        quitting = _field(obj, "android.os.MessageQueue", "mQuitting")
        if quitting is None:
            quitting = _field(obj, "android.os.MessageQueue", "mQuiting")     # its name before API 21
        if quitting is True:
            report.leaking_reasons.append("MessageQueue#mQuitting is true")
        elif quitting is False:
            report.not_leaking_reasons.append("MessageQueue#mQuitting is false")
    elif report.instance_of("android.os.Message"):
        for name in ("what", "when"):
            value = _field(obj, "android.os.Message", name)
            if value is not None:
                report.labels.append(f"Message.{name} = {value}")


DEFAULT_INSPECTORS: tuple[Callable[[Report], None], ...] = (
    _inspect_watched, _inspect_jdk, _inspect_android_components, _inspect_views)


# ---- statuses ------------------------------------------------------------------

def _resolve(report: Report, leaking_wins: bool) -> tuple[str, str]:
    """One node's status from its own reasons (a conflict is told, not hidden)."""
    status, reason = UNKNOWN, ""
    if report.not_leaking_reasons:
        status, reason = NOT_LEAKING, " and ".join(report.not_leaking_reasons)
    if report.leaking_reasons:
        leaking = " and ".join(report.leaking_reasons)
        if status == NOT_LEAKING and not leaking_wins:
            reason += f". Conflicts with {leaking}"
        else:
            reason = f"{leaking}. Conflicts with {reason}" if status == NOT_LEAKING else leaking
            status = LEAKING
    return status, reason


def _class_name(obj: HeapObject) -> str:
    """The class a trace names for an object: a class object's own name."""
    return obj.name if isinstance(obj, HeapClass) else obj.class_name


def _simple_name(obj: HeapObject) -> str:
    return _class_name(obj).rsplit(".", 1)[-1]


_STATUS_CODES = (UNKNOWN, NOT_LEAKING, LEAKING)


class _Trace:
    """The statuses of one path's nodes, LeakCanary's way: the last node is
    leaking; nodes above the last not-leaking one are not leaking; nodes
    below the first leaking one are leaking; the references from the last
    not-leaking node to the first leaking one are the suspects.

    Each node is inspected once, in one pass; what is kept is compact (a
    status byte and the node that explains a propagated status, 5 B a node;
    reasons and labels only where an inspector gave some), and the
    TraceNodes are made when read: a trace of a million nodes costs a few
    megabytes."""

    __slots__ = ("heap", "path", "n", "own", "reasons", "labels", "last_not_leaking", "first_leaking", "cause",
                 "owners")

    def __init__(self, heap: Heap, path: HeapPath, inspectors: Sequence[Callable[[Report], None]], ancestry: _Ancestry,
                 cache: dict[str, Any]) -> None:
        self.heap, self.path = heap, path
        n = self.n = len(path.hops)
        last = n - 1
        self.own = bytearray(n)
        self.reasons: dict[int, str] = {}
        self.labels: dict[int, tuple[str, ...]] = {}
        self.owners: dict[tuple[int, str], str] = cache.setdefault("owners", {})
        last_not_leaking, first_leaking = -1, last
        for i in range(n):
            report = Report(heap, path._target(i), ancestry, cache)
            for inspect in inspectors:
                inspect(report)
            status, reason = _resolve(report, leaking_wins=i == last)
            if i == last and status != LEAKING:
                reason = "This is the leaking object" + (f". Conflicts with {reason}" if status == NOT_LEAKING else "")
                status = LEAKING
            self.own[i] = _STATUS_CODES.index(status)
            if reason:
                self.reasons[i] = reason
            if report.labels:
                self.labels[i] = tuple(report.labels)
            if status == NOT_LEAKING:
                last_not_leaking, first_leaking = i, last
            elif status == LEAKING and first_leaking == last:
                first_leaking = i
        self.last_not_leaking, self.first_leaking = last_not_leaking, first_leaking
        # The node a propagated status names: the next not-leaking one below
        # (above the last not-leaking node), the nearest leaking one above
        # (below the first leaking node).
        cause = self.cause = array("i", bytes(4 * n))
        below = -1
        for i in range(last_not_leaking, -1, -1):
            cause[i] = below
            if self.own[i] == 1:
                below = i
        above = first_leaking
        for i in range(first_leaking + 1, last):
            cause[i] = above
            if self.own[i] == 2:
                above = i

    def status(self, i: int) -> str:
        if i < self.last_not_leaking:
            return NOT_LEAKING
        if self.first_leaking < i < self.n - 1:
            return LEAKING
        return _STATUS_CODES[self.own[i]]

    def reason(self, i: int) -> str:
        own, reason = _STATUS_CODES[self.own[i]], self.reasons.get(i, "")
        if i < self.last_not_leaking:
            cause = f"{_simple_name(self.path._target(self.cause[i]))}↓ is not leaking"
            return (cause if own == UNKNOWN else f"{cause} and {reason}" if own == NOT_LEAKING
                    else f"{cause}. Conflicts with {reason}")
        if self.first_leaking < i < self.n - 1:
            cause = f"{_simple_name(self.path._target(self.cause[i]))}↑ is leaking"
            return cause if own == UNKNOWN else f"{cause} and {reason}"
        return reason

    def suspect(self, i: int) -> bool:
        """Whether the reference leaving node i is suspect."""
        if i >= self.n - 1:
            return False
        status = self.status(i)
        return status == UNKNOWN or (status == NOT_LEAKING and self.status(i + 1) != NOT_LEAKING)

    def suspects(self) -> range:
        """The nodes whose references are suspect: a run."""
        start = max(self.last_not_leaking, 0)
        while start < self.n - 1 and not self.suspect(start):
            start += 1
        end = start
        while end < self.n - 1 and self.suspect(end):
            end += 1
        return range(start, end)

    def owner(self, obj: HeapObject, reference: Hop) -> str:
        """The class a reference belongs to: a field's declaring class, else the holder's."""
        if reference.ref_type != "INSTANCE_FIELD":
            return _class_name(obj)
        name = _hop_name(reference)
        key = (obj.class_.index if obj.class_ is not None else -1, name)
        owner = self.owners.get(key)
        if owner is None:
            owner = self.owners[key] = _declaring_class(obj, name)
        return owner

    def node(self, i: int) -> TraceNode:
        obj = self.path._target(i)
        reference = self.path.hops[i + 1] if i + 1 < self.n else None
        return TraceNode(obj, self.status(i), self.reason(i), self.labels.get(i, ()), reference,
                         self.owner(obj, reference) if reference is not None else None, self.suspect(i))


# ---- the leak ------------------------------------------------------------------

def _type_name(obj: HeapObject) -> str:
    return {"class": "class", "instance": "instance"}.get(obj.kind, "array")


def _declaring_class(holder: HeapObject, field_name: str) -> str:
    """The class declaring `field_name` nearest to the holder's class (what
    holder[field_name] reads)."""
    cls = holder.class_
    while cls is not None:
        if any(f.name == field_name for f in cls.fields()):
            return cls.name
        cls = cls.superclass
    return holder.class_name


class TraceNode(NamedTuple):
    """One object of a leak trace, root first, the leaking object last.

    reference: the Hop leaving this node toward the leak (None on the last).
    owner: the class name shown with that reference (the field's declaring
    class, the array class, the static's class, the thread's class).
    suspect: whether that reference is in the suspect span."""

    object: HeapObject
    status: str
    reason: str
    labels: tuple[str, ...]
    reference: Optional[Hop]
    owner: Optional[str]
    suspect: bool

    @property
    def class_name(self) -> str:
        return _class_name(self.object)

    def _hop(self) -> Hop:
        if self.reference is None:
            raise AttributeError("the leaking object's node has no reference")
        return self.reference

    @property
    def reference_name(self) -> str:
        """The reference as the fingerprint names it: array indexes as [x]."""
        ref = self._hop()
        return {"ARRAY_ENTRY": "[x]", "LOCAL": "<Java Local>"}.get(ref.ref_type) or _hop_name(ref)

    @property
    def reference_display(self) -> str:
        """The reference as the trace shows it: the field, "[3]", "<Java Local>"."""
        ref = self._hop()
        return "<Java Local>" if ref.ref_type == "LOCAL" else _hop_name(ref)


def _hop_name(hop: Hop) -> str:
    """The name a hop carries: the root kind, the field, "[3]" (only a LOCAL
    hop's may be None)."""
    assert hop.name is not None, hop
    return hop.name


class TraceNodes(SequenceView[TraceNode]):
    """The nodes of a leak trace, root first: made when read."""

    __slots__ = ("_trace",)

    def __init__(self, trace: _Trace) -> None:
        self._trace = trace

    def __len__(self) -> int:
        return self._trace.n

    def _item(self, k: int) -> TraceNode:
        return self._trace.node(k)


def fingerprint(nodes: Iterable[TraceNode]) -> str:
    """SHA-1 (hex) over the suspect references' class name + reference name,
    array indexes as [x], class names stable (a lambda's without its run's
    counter and address): no addresses, so the same leak groups across dumps."""
    sha = hashlib.sha1()
    for node in nodes:
        if node.suspect:
            sha.update((stable_name(node.class_name) + node.reference_name).encode("utf-8"))
    return sha.hexdigest()


def _trace_fingerprint(trace: _Trace) -> str:
    """fingerprint() over the suspects alone (a run: the rest is not read)."""
    sha = hashlib.sha1()
    hops = trace.path.hops
    for i in trace.suspects():
        hop = hops[i + 1]
        name = {"ARRAY_ENTRY": "[x]", "LOCAL": "<Java Local>"}.get(hop.ref_type) or _hop_name(hop)
        sha.update((stable_name(_class_name(trace.path._target(i))) + name).encode("utf-8"))
    return sha.hexdigest()


class Leak:
    """One leaking object and the shortest strong path that keeps it.

    object: the leaking HeapObject; key: its LeakCanary watch key or None;
    path: the HeapPath from its GC root; library: True when the path must cross a
    "library" matcher (a known framework or vendor leak), pattern: that
    matcher; nodes: the TraceNodes (made when read); fingerprint: the SHA-1
    grouping the same leak across dumps; retained_size / retained_count: what
    it keeps alive.  str(leak) is LeakCanary's trace, folded past 2 * FOLD + 1
    nodes."""

    __slots__ = ("object", "key", "path", "library", "pattern", "nodes", "fingerprint", "retained_size",
                 "retained_count", "_trace")

    def __init__(self, obj: HeapObject, key: Optional[str], trace: _Trace) -> None:
        self.object = obj
        self.key = key
        self.path = trace.path
        self.library = bool(self.path.library)
        self.pattern = self.path.library_matcher
        self._trace = trace
        self.nodes = TraceNodes(trace)
        self.fingerprint = _trace_fingerprint(trace)
        self.retained_size: Optional[int]
        self.retained_count: Optional[int]
        self.retained_size, self.retained_count = _retained(trace.heap, obj)

    @property
    def root_kind(self) -> str:
        return _hop_name(self.path.hops[0])

    @property
    def description(self) -> str:
        """The library matcher's description, "" for an application leak."""
        return self.pattern.description if self.pattern is not None else ""

    @property
    def short_description(self) -> str:
        """The leak in one line, as LeakCanary's shortDescription names a group of
        them: the leaking object's class and the first suspect reference
        ("com.example.MainActivity via static Leaks.sActivity")."""
        leaking = self.nodes[-1].class_name
        suspects = self._trace.suspects()  # a run: the first is read, not the whole trace
        suspect = self.nodes[suspects[0]] if suspects else None
        if suspect is None or suspect.reference is None or suspect.owner is None:
            return leaking
        static = "static " if suspect.reference.ref_type == "STATIC_FIELD" else ""
        dot = "" if suspect.reference.ref_type == "LOCAL" else "."
        return f"{leaking} via {static}{suspect.owner.rsplit('.', 1)[-1]}{dot}{suspect.reference_display}"

    def __repr__(self) -> str:
        kind = "library leak" if self.library else "leak"
        return f"<{kind} {self.object!r} {self.fingerprint[:12]}>"

    def _repr_html_(self) -> str:
        """The trace, statuses coloured and suspect references underlined (Jupyter)."""
        from ._html import leak
        return leak(self)

    def _node_lines(self, node: TraceNode, first: str, rest: str) -> list[str]:
        lines = [f"{first}{node.class_name} {_type_name(node.object)}"]
        status = {LEAKING: "YES", NOT_LEAKING: "NO"}.get(node.status, "UNKNOWN")
        lines.append(f"{rest}Leaking: {status}" + (f" ({node.reason})" if node.status != UNKNOWN else ""))
        if node.status == LEAKING:
            size, count = _retained(self._trace.heap, node.object)
            if size is not None:
                lines.append(f"{rest}Retaining {human_size(size)} in {count:,} objects")
        lines.extend(rest + label for label in node.labels)
        return lines

    def __str__(self) -> str:
        header = library_lines(self.pattern) + [f"Signature: {self.fingerprint}", "┬───",
                                                f"│ GC Root: {root_description(self.path.hops)}"]

        def node_lines(i: int, last: bool) -> list[str]:
            node = self._trace.node(i)
            if last:
                return self._node_lines(node, "╰→ ", "     ")
            lines = self._node_lines(node, "├─ ", "│    ")
            assert node.reference is not None and node.owner is not None  # every node but the last has both
            line = reference_line(node.reference, node.owner)
            lines.append("│" + line)
            if node.suspect:
                lines.append("│" + " " * (len(line) - len(node.reference_display)) + "~" * len(node.reference_display))
            return lines
        return format_trace(header, self._trace.n, node_lines)

    def to_dict(self) -> dict[str, Any]:
        """The leak as JSON-ready data (every node of the trace)."""
        def node_dict(node: TraceNode) -> dict[str, Any]:
            out: dict[str, Any] = {"id": node.object.id, "class": node.class_name, "type": _type_name(node.object),
                                   "status": node.status, "reason": node.reason, "labels": list(node.labels)}
            if node.status == LEAKING:
                size, count = _retained(self._trace.heap, node.object)
                if size is not None:
                    out["retained_size"], out["retained_count"] = size, count
            if node.reference is not None:
                out["reference"] = {"type": node.reference.ref_type, "owner": node.owner,
                                    "name": node.reference.name, "suspect": node.suspect}
            return out
        return {"object": {"id": self.object.id, "class": _class_name(self.object)}, "key": self.key,
                "library": self.library, "pattern": self.pattern._asdict() if self.pattern is not None else None,
                "description": self.description, "fingerprint": self.fingerprint,
                "retained_size": self.retained_size, "retained_count": self.retained_count,
                "root": self.root_kind, "trace": [node_dict(n) for n in self.nodes]}


def _retained(heap: Heap, obj: HeapObject) -> tuple[Optional[int], Optional[int]]:
    """Retained size and count of an object (the first call computes the dominators)."""
    return heap.retained_size(obj), heap.retained_count(obj)


def find_leaks(heap: Heap, exclude: Optional[Iterable[match.Matcher]] = None,
               finders: Iterable[_FinderFunction] = DEFAULT_FINDERS, *,
               inspectors: Iterable[Callable[[Report], None]] = DEFAULT_INSPECTORS,
               progress: ProgressArg = None) -> list[Leak]:
    """The leaks of a heap: each candidate the finders name that is strongly
    reachable, with its shortest path from a GC root, statuses and fingerprint.

    exclude: reference matchers for the path search (default: ANDROID_DEFAULTS
    for an Android heap, JDK_DEFAULTS otherwise); those gated on an SDK level
    or maker that is not the heap's are dropped.  finders: callables
    ``finder(heap)`` yielding Candidates or HeapObjects; an object found twice
    is one leak (the first key found wins).  inspectors: callables
    ``inspect(report)`` filling a Report per path node.  Leaks come in the
    finders' order, each finder's in id order.  As LeakCanary, the leaking
    objects are leaves of the search: one reached only through another is
    part of the other's leak, not a leak of its own.  progress: as open_heap
    takes it (stages "finders", "paths", "dominators", "leaks": one a leak)."""
    with reporting(progress) as reporter:
        return _find_leaks(heap, exclude, finders, inspectors, reporter)


def _find_leaks(heap: Heap, exclude: Optional[Iterable[match.Matcher]], finders: Iterable[_FinderFunction],
                inspectors: Iterable[Callable[[Report], None]], reporter: Optional[Reporter]) -> list[Leak]:
    sdk, manufacturer = android_build(heap)
    matchers = match.applicable(default_exclude(heap) if exclude is None else exclude, sdk, manufacturer)

    candidates: dict[int, Candidate] = {}
    finders = list(finders)
    for done, finder in enumerate(finders):
        if reporter is not None:
            reporter(done, len(finders), "finders")
        for found in finder(heap):
            candidate = found if isinstance(found, Candidate) else Candidate(found)
            if not isinstance(candidate.object, HeapObject):
                raise TypeError(f"finder {finder!r} gave {type(candidate.object).__name__}, not a HeapObject")
            known = candidates.get(candidate.object.id)
            if known is None:
                candidates[candidate.object.id] = candidate
            elif known.key is None and candidate.key is not None:
                candidates[candidate.object.id] = known._replace(key=candidate.key)
    if reporter is not None:
        reporter(len(finders), len(finders), "finders")
    if not candidates:
        return []
    with step(reporter, "paths"):
        paths = leaf_paths(heap, [c.object for c in candidates.values()], exclude=matchers)
    if reporter is not None:
        heap.compute_retained(progress=reporter)  # each Leak reads its retained size
    return leaks_of_paths(heap, list(candidates.values()), paths, inspectors, reporter)


def leaks_of_paths(heap: Heap, candidates: list[Candidate], paths: Sequence[Optional[HeapPath | NoPath]],
                   inspectors: Iterable[Callable[[Report], None]] = DEFAULT_INSPECTORS,
                   reporter: Optional[Reporter] = None) -> list[Leak]:
    """The Leaks of candidates whose paths (aligned; None or a NoPath for no
    path) were searched already: statuses, suspects, fingerprints, retained
    sizes."""
    inspectors = tuple(inspectors)
    ancestry = _Ancestry()
    cache: dict[str, Any] = {}
    reached = [(candidate, path) for candidate, path in zip(candidates, paths) if isinstance(path, HeapPath)]
    leaks = []
    for done, (candidate, path) in enumerate(reached):
        if reporter is not None:
            reporter(done, len(reached), "leaks")
        leaks.append(Leak(candidate.object, candidate.key, _Trace(heap, path, inspectors, ancestry, cache)))
    if reporter is not None:
        reporter(len(reached), len(reached), "leaks")
    return leaks
