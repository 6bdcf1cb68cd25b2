"""The heap graph: an indexed object model of one heap dump.

    heap = dump.heap()                      # or hprofkit.open_heap(path)
    activity = heap.find_class("android.app.Activity")
    for obj in activity.instances(subclasses=True):
        if obj["mDestroyed"]:
            print(obj, obj.referrers())

The index lives in C (hprofkit._hprof.Heap): objects in id order with their
file offsets and class ordinals, classes with resolved field layouts, GC
roots; values are read from the dump's mapping on demand.  Handles
(HeapObject, HeapClass) are light: a heap and an index."""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from . import _hprof
from ._hprof import Field, GcRoot, Reference, Referrer, StackFrame
from ._reach import NoPath, Path, path_to_root, paths_to_root
from ._views import SequenceView

if TYPE_CHECKING:
    import pyarrow as _pyarrow  # private: stubtest looks for public names at run time

    from .leaks import Leak, Report
    from .match import Matcher

__all__ = ["Heap", "HeapObject", "HeapClass", "Reference", "Referrer", "Field", "GcRoot", "GcRoots", "StackFrame",
           "open_heap", "SIZE_MODELS", "SEMANTICS"]

SIZE_MODELS = ("visualvm", "uncompressed")
SEMANTICS = ("hprofkit", "visualvm")


# The public classes: Python subclasses of the C types, so that what is
# written in Python is a method here, written once.  They add no storage
# (__slots__ = ()): a handle stays the C struct.  C instantiates the handle
# classes itself, once hprofkit/__init__.py has registered them
# (_hprof._register); isinstance(x, HeapObject) holds for every handle.

class HeapObject(_hprof.HeapObject):
    """A handle on one object of a Heap (light: the heap and an index)."""

    __slots__ = ()
    __module__ = "hprofkit"


class HeapClass(_hprof.HeapClass, HeapObject):
    """A class of a Heap; it is also the handle of the class object."""

    __slots__ = ()
    __module__ = "hprofkit"

    def _repr_html_(self) -> str:
        """The class, its counts, declared fields and statics as HTML (Jupyter)."""
        return class_html(self)


class GcRoots(SequenceView[GcRoot]):
    """heap.gc_roots: every GC root as GcRoot(kind, object_id, object,
    thread_serial, frame), in file order.  A sequence whose items are made
    when read, so a heap of five million roots costs nothing until then;
    list(heap.gc_roots) copies it.  Equal to any sequence of the same roots."""

    __slots__ = ("_heap",)

    def __init__(self, heap: Heap) -> None:
        self._heap = heap

    def __len__(self) -> int:
        return self._heap.gc_root_count

    def _item(self, k: int) -> GcRoot:
        return self._heap._gc_roots(k, k + 1)[0]

    def _items(self, start: int, stop: int) -> list[GcRoot]:
        return self._heap._gc_roots(start, stop)

    def of_kind(self, kind: str) -> list[GcRoot]:
        """The roots of one kind ('THREAD_OBJECT'...), in file order."""
        return self._heap._gc_roots(0, len(self), kind)

    def __repr__(self) -> str:
        return f"<GcRoots: {len(self):,} roots>"


class Heap(_hprof.Heap):
    """Heap(buffer, /, *, heap_dump=0, size_model='visualvm', semantics='hprofkit')

    The object graph of one heap dump of the HPROF file in buffer (hprofkit.open_heap
    and Dump.heap() make one)."""

    __slots__ = ()
    __module__ = "hprofkit"

    @property
    def gc_roots(self) -> GcRoots:
        """Every GC root as GcRoot(kind, object_id, object, thread_serial, frame), in file order
        (a sequence made when read: see GcRoots)."""
        return GcRoots(self)

    def path_to_root(self, obj: HeapObject, /, exclude: Iterable[Matcher] = ()) -> Optional[Path]:
        """The shortest path from a GC root to obj as a hprofkit.Path, or None if no strong
        path reaches it (paths_to_root says why); exclude: hprofkit.match matchers."""
        return path_to_root(self, obj, exclude)

    def paths_to_root(self, objs: Iterable[HeapObject], /, exclude: Iterable[Matcher] = ()
                      ) -> list[Path | NoPath]:
        """One search for many objects, aligned with objs: each gets the Path path_to_root
        gives it, or a hprofkit.NoPath (falsy) saying why it has none: .reason is
        'unreachable', 'weakly reachable' or 'excluded' (.matcher the matcher)."""
        return paths_to_root(self, objs, exclude)

    def find_leaks(self, exclude: Optional[Iterable[Matcher]] = None,
                   finders: Optional[Iterable[Callable[..., Any]]] = None, *,
                   inspectors: Optional[Iterable[Callable[[Report], None]]] = None) -> list[Leak]:
        """The leaks of this heap (a list of hprofkit.leaks.Leak): see hprofkit.leaks.find_leaks;
        finders and inspectors default to its DEFAULT_FINDERS and DEFAULT_INSPECTORS."""
        from . import leaks  # a third of the package's import time: on first use
        return leaks.find_leaks(self, exclude, leaks.DEFAULT_FINDERS if finders is None else finders,
                                inspectors=leaks.DEFAULT_INSPECTORS if inspectors is None else inspectors)

    def tables(self, *, retained: bool = True) -> dict[str, _pyarrow.Table]:
        """The heap as Arrow tables (needs pyarrow): {'objects', 'references', 'classes',
        'roots'}, shaped like Perfetto's heap_graph_* tables.  See hprofkit._tables."""
        from . import _tables
        return _tables.tables(self, retained=retained)

    def to_parquet(self, directory: str | os.PathLike[str], /) -> str:
        """Writes heap.tables() as directory/<table>.parquet (atomically); returns directory."""
        from . import _tables
        return _tables.to_parquet(self, directory)


def open_heap(path: str | os.PathLike[str], *, heap_dump: int = 0, size_model: str = "visualvm",
              semantics: str = "hprofkit") -> Heap:
    """Opens a dump (plain, .gz or .bz2) and indexes one of its heap dumps.

    semantics picks the reference graph of paths and retained sizes (see
    Dump.heap).

    The dump stays mapped while the Heap or any handle on it lives."""
    from ._dump import Dump
    dump = Dump(path)
    try:
        heap = Heap(dump.buffer, heap_dump=heap_dump, size_model=size_model, semantics=semantics)
    finally:
        # The heap holds its own export of the mapping: closing the Dump now
        # leaves the mapping to it (unmapped when the heap goes).
        dump.close()
    return heap


def _cell(value: Any) -> str:
    return html.escape(f"{value:,}" if isinstance(value, int) else str(value))


def class_html(cls: HeapClass) -> str:
    """HeapClass._repr_html_: the class, its counts and its declared fields."""
    rows = "".join(f"<tr><td>{_cell(f.name)}</td><td>{_cell(f.type)}</td></tr>" for f in cls.fields)
    statics = cls.statics()
    static_rows = "".join(
        f"<tr><td>{_cell(f.name)}</td><td>{_cell(f.type)}</td><td>{_cell(repr(f.value))}</td></tr>" for f in statics)
    superclass = cls.superclass.name if cls.superclass is not None else "—"
    size = cls.instance_size
    return (f"<div><b>{_cell(cls.name)}</b> <code>@0x{cls.class_id:x}</code><br>"
            f"extends {_cell(superclass)}; {_cell(cls.instance_count)} instances"
            + (f" of {_cell(size)} B" if size is not None else "")
            + (f"<details open><summary>{len(cls.fields)} fields</summary><table><tr><th>name</th><th>type</th></tr>"
               f"{rows}</table></details>" if rows else "")
            + (f"<details><summary>{len(statics)} statics</summary><table><tr><th>name</th><th>type</th>"
               f"<th>value</th></tr>{static_rows}</table></details>" if static_rows else "")
            + "</div>")
