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

import os
import warnings
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Optional, Union

from . import _hprof, _values
from ._hprof import Field, GcRoot, Reference, Referrer, StackFrame
from ._layout import Layout
from ._reach import HeapPath, NoPath, path_to_root, paths_to_root
from ._views import SequenceView
from ._values import (AllocationSite, AllocSite, ClassCount, CollectionWaste, DuplicateString, Frame, LargeArray,
                      Thread)

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from ._io import DumpSource
    from ._mapping import Mapping, MappingArg
    import pyarrow as _pyarrow  # private: stubtest looks for public names at run time

    from ._bitmaps import Bitmap, DuplicateBitmaps
    from ._progress import ProgressArg
    from ._report.tree import View
    from ._classtree import ClassTree
    from ._tree import Group, MergedPaths, _VirtualRoot
    from ._waste import Waste
    from .leaks import Leak, Report
    from .match import Matcher

__all__ = ["Heap", "HeapObject", "HeapClass", "ObjectTable", "GroupTable", "Reference", "Referrer", "Field", "GcRoot",
           "GcRoots", "StackFrame", "open_heap", "SIZE_MODELS", "SEMANTICS", "Frame", "Thread", "AllocationSite",
           "AllocSite", "DuplicateString", "CollectionWaste", "LargeArray", "ClassCount", "ResultList"]

SIZE_MODELS = ("visualvm", "uncompressed")
SEMANTICS = ("hprofkit", "visualvm")


# The public classes: Python subclasses of the C types, so that what is
# written in Python is a method here, written once.  They add no storage
# (__slots__ = ()): a handle stays the C struct.  C instantiates the handle
# classes itself, once hprofkit/__init__.py has registered them
# (_hprof._register); isinstance(x, HeapObject) holds for every handle.

class _Table(list):  # type: ignore[type-arg]
    """A list a notebook shows as a table: a slice of it is one too (_like)."""

    __slots__ = ()

    def __getitem__(self, index: Any) -> Any:
        found = list.__getitem__(self, index)
        return self._like(found) if isinstance(index, slice) else found

    def _like(self, items: list[Any]) -> Any:
        return type(self)(items)


class ObjectTable(_Table):
    """A list of objects, or of (object, bytes) pairs, that a notebook shows as a
    table with bars (top_retainers(), dominated(), dominator_roots()).  It is the
    list it was: index, slice (a slice is one too), compare and json.dumps it as one."""

    __slots__ = ()
    __module__ = "hprofkit"

    def _repr_html_(self) -> str:
        from ._html import fragment, object_table
        pairs = [item if isinstance(item, tuple) else (item, item.retained_size) for item in self]
        return fragment(object_table(pairs))


class GroupTable(_Table):
    """heap.retained_by()'s Groups: a list that a notebook shows as a table with bars (a
    slice of it too)."""

    __slots__ = ()
    __module__ = "hprofkit"

    def _repr_html_(self) -> str:
        from ._html import fragment, group_table
        return fragment(group_table(self))


class ResultList(_Table):
    """A list of one kind of result (find_leaks(), threads(), bitmaps(), the waste queries,
    histogram(), fields(), referrers()...) that a notebook shows as a table (bitmaps as a
    gallery), sizes in human units.  It is the list it was (index, compare, json.dumps); a
    slice of it is one too.  `kind` names the view."""

    __slots__ = ("kind",)
    __module__ = "hprofkit"

    def __init__(self, items: Iterable[Any] = (), kind: str = "") -> None:
        super().__init__(items)
        self.kind = kind

    def _like(self, items: list[Any]) -> Any:
        return ResultList(items, self.kind)

    def __reduce__(self) -> Any:
        return ResultList, (list(self), self.kind)

    def _repr_html_(self) -> str:
        from ._html import result_list
        return result_list(self.kind, self)


class HeapObject(_hprof.HeapObject):
    """A handle on one object of a Heap (light: the heap and an index).

    A handle is always true (test `is None` for a null reference); len() and iter() are an
    array's length and elements."""

    __slots__ = ()
    __module__ = "hprofkit"

    def entries(self) -> list[tuple[Any, Any]]:
        """A map's entries as [(key, value)], in its iteration order (hprofkit/_values.py):
        java.util maps (HashMap, LinkedHashMap, Hashtable, WeakHashMap, IdentityHashMap,
        TreeMap, ConcurrentHashMap, ImmutableCollections, Collections' wrappers...) and
        Android's (ArrayMap, SparseArray, LongSparseArray, SparseIntArray, androidx copies)
        of every JDK 5-25 and Android layout; subclasses as their nearest known superclass.
        Keys and values are HeapObjects, None (null or absent from the dump), or Python values
        (a SparseIntArray's ints).  TypeError for a list or set (use elements()) or anything
        else."""
        return self._walk(True)

    def elements(self) -> list[Any]:
        """A list's, set's or queue's elements in iteration order (a HashSet's keys...), or an
        array's (as tolist()).  TypeError for a map (use entries()) or anything else."""
        return _values.elements_of(self)

    @property
    def fill_ratio(self) -> Optional[float]:
        """MAT's fill ratio: size / capacity of an array-backed collection (an ArrayList's
        size over its elementData's length, a HashMap's over its table's, an ArrayMap's
        entries over its mArray's pairs); of an object array, its non-null elements over its
        length.  None when there is no backing array (a LinkedList, an empty HashMap whose
        table is not allocated); TypeError for an object that is neither."""
        return _values.fill_ratio_of(self)

    @property
    def value(self) -> Any:
        """A boxed primitive as bool, int, float or 1-char str; a String as str (None when the
        dump lacks its characters); an enum constant as its name (str).  TypeError for any
        other object."""
        return _values.value_of(self)

    def __iter__(self) -> Iterator[Any]:
        """An array's elements (as tolist()); TypeError for other objects."""
        return iter(self.tolist())

    def dominated(self, n: Optional[int] = None) -> ObjectTable:
        """The objects this one immediately dominates, largest retained size first
        (the first n): an ObjectTable (a list)."""
        return ObjectTable(_hprof.HeapObject.dominated(self, n))

    def fields(self) -> list[Field]:
        """Every field of an instance, its class's first, as Field(declaring_class, name, type,
        value): a ResultList (a list a notebook shows as a table)."""
        return ResultList(_hprof.HeapObject.fields(self), "fields")

    def references(self, limit: Optional[int] = None) -> list[Reference]:
        """Outbound non-null references as Reference(name, target_id, target); the first
        `limit` only, when given (reference_count counts them all): a ResultList."""
        return ResultList(_hprof.HeapObject.references(self, limit), "references")

    def referrers(self, limit: Optional[int] = None) -> list[Referrer]:
        """References to this object as Referrer(name, source_id, source); the first `limit`
        only, when given (referrer_count counts them all; the first call builds the heap's
        referrer index): a ResultList."""
        return ResultList(_hprof.HeapObject.referrers(self, limit), "referrers")

    def _repr_html_(self) -> str:
        """What the object is and keeps, its fields or elements, its referrers (Jupyter)."""
        from ._html import heap_object
        return heap_object(self)


class _DeclaredFields(list[Field]):
    """What cls.fields gives for one release: call it, cls.fields(), as one calls every
    fields(); read as the list it was before (len, iteration, indexing, ==), it still
    answers, with a DeprecationWarning."""

    __slots__ = ()

    def __call__(self) -> list[Field]:
        return list.copy(self)

    @staticmethod
    def _deprecated() -> None:
        warnings.warn("HeapClass.fields is a method: call cls.fields() (the property form goes in the next "
                      "release)", DeprecationWarning, stacklevel=3)

    def __iter__(self) -> Iterator[Field]:
        self._deprecated()
        return list.__iter__(self)

    def __len__(self) -> int:
        self._deprecated()
        return list.__len__(self)

    def __getitem__(self, index: Any) -> Any:
        self._deprecated()
        return list.__getitem__(self, index)

    def __contains__(self, item: object) -> bool:
        self._deprecated()
        return list.__contains__(self, item)

    def __eq__(self, other: object) -> bool:
        self._deprecated()
        return list.__eq__(self, other)

    __hash__ = None


class HeapClass(_hprof.HeapClass, HeapObject):
    """A class of a Heap; it is also the handle of the class object.

    retained_size and retained_count are the class object's own, as for any object
    (heap.retained_size(cls)); instances_retained_size and instances_retained_count are
    the figures by class (its instances' and arrays', VisualVM's retained size by class)."""

    __slots__ = ()
    __module__ = "hprofkit"

    @property
    def fields(self) -> _DeclaredFields:  # a method once the property form goes
        """Declared instance fields as Field(declaring_class, name, type, None): call
        cls.fields() (reading cls.fields as a list is deprecated)."""
        return _DeclaredFields(_hprof.HeapClass.fields(self))

    def _repr_html_(self) -> str:
        """The class, its counts, declared fields and statics as HTML (Jupyter)."""
        from ._html import heap_class
        return heap_class(self)

    def __len__(self) -> int:
        raise TypeError(f"a class has no length: {self.name}.instance_count counts its instances")

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(f"a class is not iterable: iterate {self.name}.instances()")


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
    """Heap(buffer, /, *, heap_dump=0, size_model=None, semantics='hprofkit', mapping=None, progress=None)

    The object graph of one heap dump of the HPROF file in buffer (hprofkit.open_heap
    and Dump.heap() make one).  With a mapping (a hprofkit.Mapping or the path of a
    mapping.txt), an obfuscated dump reads with its clear names: classes, fields,
    statics, references, stack frames, and so paths, leak traces, diffs and tables;
    HeapClass.obfuscated_name keeps the dump's.  A mapping that does not fit the dump
    is a MappingWarning naming the first mismatch."""

    __slots__ = ()
    __module__ = "hprofkit"

    def __new__(cls, buffer: Buffer, /, *, heap_dump: int = 0, size_model: Optional[str] = None,
                semantics: str = "hprofkit", mapping: MappingArg = None) -> "Heap":
        return cls._open(buffer, None, heap_dump=heap_dump, size_model=size_model, semantics=semantics,
                         mapping=mapping)

    @classmethod
    def _open(cls, buffer: Buffer, name: Optional[str], *, mapping: MappingArg = None, **options: Any) -> "Heap":
        """A Heap of buffer, `name` naming the dump in warnings."""
        mapping = _mapping_of(mapping)
        heap = super().__new__(cls, buffer, mapping=mapping, **options)
        if mapping is not None:
            from . import _overloads
            from ._mapping import warn_misfit
            heap._rename_frames(_clear_frames(heap, mapping))
            overloads = _overloads.resolve(heap, mapping)
            if overloads is not None:
                _overloads.rename(heap, overloads)
            listed, _, _, cls_name, field = heap._renames()
            mismatch = None if cls_name is None else (f"field {field!r} of class {cls_name} "
                                                      f"({mapping.class_name(cls_name)}) is not in the mapping")
            warn_misfit(mapping, name or "the dump", listed, mismatch)
            if overloads is not None:
                _overloads.warn_ambiguous(mapping, name or "the dump", overloads)
        return heap

    @property
    def layout(self) -> Layout:
        """The object layout shallow sizes follow (a hprofkit.Layout): header, reference size,
        array headers and alignment, and what they rest on: under size_model 'jvm' (the
        default with semantics 'hprofkit') the JVM's own layout as the dump's addresses show
        it, or VisualVM's guess when they show none; see docs/reference/behaviour.md."""
        return Layout.of(self)

    @property
    def gc_roots(self) -> GcRoots:
        """Every GC root as GcRoot(kind, object_id, object, thread_serial, frame), in file order
        (a sequence made when read: see GcRoots)."""
        return GcRoots(self)

    def top_retainers(self, n: int = 20) -> ObjectTable:
        """The n objects of largest retained size as (object, bytes), largest first:
        an ObjectTable (a list)."""
        self._dominators_reported()
        return ObjectTable(_hprof.Heap.top_retainers(self, n))

    def dominator_roots(self, n: Optional[int] = None) -> ObjectTable:
        """The children of the dominator tree's virtual root, largest retained size
        first (the first n): an ObjectTable (a list)."""
        self._dominators_reported()
        return ObjectTable(_hprof.Heap.dominator_roots(self, n))

    def dominator_tree(self, *, depth: int = 3, children: int = 20, root: Optional[HeapObject] = None) -> View:
        """The dominator tree as an interactive view for a notebook (its _repr_html_):
        each node with its retained size, opened with a click.  It holds `depth` levels,
        each node's `children` largest children (the rest counted), at most 3,000 nodes;
        drawn by the report's script in the page (no kernel needed).  root: an object whose
        subtree to show instead of the whole tree: any node, at any depth."""
        from ._report.tree import View, tree_data
        self._dominators_reported()
        return View("domtree", tree_data(self, depth=depth, children=children, root=root))

    def class_tree(self) -> ClassTree:
        """The dominator tree folded by class path (Perfetto's and AHAT's class view): a
        node per path of classes from the root, with its objects, their shallow bytes and
        its retained bytes (its shallow size and its children's: each object's shallow size
        counted once, in its own node), children largest first; node.sample(n) gives its
        objects.  The root holds every byte of the dominator tree (under "hprofkit": every
        strongly reachable byte) in far fewer nodes than objects.  A hprofkit.ClassTree."""
        from ._classtree import class_tree
        self._dominators_reported()
        return class_tree(self)

    def flamegraph(self, *, depth: int = 6, frames: int = 2000, children: Optional[int] = None) -> View:
        """The class tree (class_tree()) as a flame graph (an icicle, the roots on top) for
        a notebook: a frame per class path, its width the retained size; click a frame to
        zoom in and list its largest objects, again to zoom out; a search box highlights
        a class.  The widest `frames` (at most 3,000) of the top `depth` levels, at most
        `children` a frame (None: any); what a frame leaves out is one grey frame."""
        from ._report.tree import View, class_tree_data
        return View("flame", class_tree_data(self.class_tree(), depth=depth, frames=frames, children=children))

    def _dominators_reported(self) -> None:
        """Inside a call that reports progress (the command line's, a report()'s),
        the dominators are computed as a stage of their own."""
        from ._progress import reporting
        with reporting(None) as reporter:
            if reporter is not None:
                self.compute_retained(progress=reporter)

    def compute_retained(self, *, progress: ProgressArg = None) -> None:
        """Computes the dominator tree and retained sizes now (the first call that needs
        them does otherwise); progress: as open_heap takes it (the "dominators" stage)."""
        from ._progress import reporting, step
        with reporting(progress) as reporter, step(reporter, "dominators"):
            _hprof.Heap.compute_retained(self)

    def _repr_html_(self) -> str:
        """The overview (Jupyter): counts, GC roots by kind, classes by instances."""
        from ._html import heap
        return heap(self)

    def path_to_root(self, obj: HeapObject, /, exclude: Optional[Iterable[Matcher]] = None) -> Optional[HeapPath]:
        """The shortest path from a GC root to obj as a hprofkit.HeapPath, or None if no
        strong path reaches it (paths_to_root says why).  exclude: hprofkit.match matchers;
        None (the default) means the defaults, hprofkit.leaks.default_exclude(heap), as
        everywhere: on any heap match.JDK_DEFAULTS (Reference referents, the finalizer and
        cleaner queues are not strong); on an Android heap (one with android.os.Build) also
        match.ANDROID_THREADS (the main looper's locals) and LeakCanary's known leaks (library
        references).  () means none."""
        return path_to_root(self, obj, exclude)

    def paths_to_root(self, objs: Iterable[HeapObject], /, exclude: Optional[Iterable[Matcher]] = None
                      ) -> list[HeapPath | NoPath]:
        """One search for many objects, aligned with objs: each gets the HeapPath path_to_root
        gives it, or a hprofkit.NoPath (falsy) saying why it has none: .reason is
        'unreachable', 'weakly reachable' or 'excluded' (.matcher the matcher).  exclude: as
        path_to_root."""
        return paths_to_root(self, objs, exclude)

    def dominator_of(self, obj: HeapObject, /) -> Union[HeapObject, _VirtualRoot, None]:
        """obj's immediate dominator: a HeapObject; hprofkit.ROOT when no single object
        dominates it (a GC root, or held by several roots: a child of the dominator tree's
        virtual root); None when obj is unreachable.  heap.dominator(obj) gives None for
        both of the last two."""
        from ._tree import dominator_of
        return dominator_of(self, obj)

    def _members(self, unreachable: Optional[bool]) -> str:
        """Which objects an analysis counts (docs/reference/behaviour.md, "Reachable
        objects"): 'live' (reachable from a GC root through any reference), or 'all' with
        unreachable=True; None is the semantics' default: reachable under "hprofkit" (MAT's
        rule), all under "visualvm" (VisualVM counts garbage)."""
        if unreachable is None:
            unreachable = self.semantics == "visualvm"
        if not isinstance(unreachable, bool):
            raise TypeError(f"unreachable must be True, False or None, not {unreachable!r}")
        return "all" if unreachable else "live"

    def histogram(self, *, unreachable: Optional[bool] = None) -> list[ClassCount]:
        """The class histogram of the reachable objects (MAT's default; unreachable=True:
        of every object, garbage too, as VisualVM and stats() count): a ClassCount (name,
        ``class_``, instances, shallow_size, per_heap) per class with any, most shallow bytes first.  A class
        object is not an instance of java.lang.Class here.  Marks the reachable objects
        once (1 bit an object) over the reference graph."""
        return ResultList(_values.class_histogram(self, self._members(unreachable)), "histogram")

    def unreachable_histogram(self) -> list[ClassCount]:
        """MAT's "Unreachable Objects Histogram": the classes of the objects no GC root
        reaches through any reference (garbage the dump kept: `jmap -dump` without `live`,
        `jcmd GC.heap_dump -all`), as histogram() gives them; [] for a live dump."""
        return ResultList(_values.class_histogram(self, "garbage"), "histogram")

    def retained_by(self, key: Union[str, Callable[[HeapObject], Hashable]], /, *,
                    unreachable: Optional[bool] = None) -> GroupTable:
        """The objects grouped by key, as [Group(key, objects, shallow_size, retained_size)],
        largest retained size first.  key: "class" (HeapClass; equals cls.instances_retained_size,
        VisualVM's retained size by class), "package" (Java's package name of the class:
        'java.util'; a class object counts with the class it is), "loader" (the class
        loader object, None for the boot loader; class objects likewise), "heap" (Android's
        heap name, "default" on HotSpot), or a callable obj -> key (called once per object,
        a Python call each; None leaves the object out).  A group's retained_size is the
        size of the union of its members' retained sets: no byte counted twice.  Groups count
        the reachable objects (unreachable=True: garbage too; an unreachable object retains
        nothing either way).  A GroupTable: a list, shown as a table in a notebook."""
        from ._tree import retained_by
        self._dominators_reported()
        return GroupTable(retained_by(self, key, self._members(unreachable)))

    def merged_paths(self, objs: Iterable[HeapObject], /, exclude: Optional[Iterable[Matcher]] = None
                     ) -> MergedPaths:
        """MAT's "merge shortest paths to GC roots": the shortest path of each of objs (one
        search; the path path_to_root gives), folded from the roots down into one tree by
        (reference, class), with at each node its objects, their retained size (the union
        of their retained sets) and how many of objs have their path through it.  A
        hprofkit.MergedPaths: .children, str() prints the tree, .to_dict().  exclude: as
        path_to_root (None: the defaults; (): none)."""
        from ._tree import merged_paths
        return merged_paths(self, objs, exclude)

    def find_leaks(self, exclude: Optional[Iterable[Matcher]] = None,
                   finders: Optional[Iterable[Callable[..., Any]]] = None, *,
                   inspectors: Optional[Iterable[Callable[[Report], None]]] = None,
                   progress: ProgressArg = None) -> list[Leak]:
        """The leaks of this heap (a list of hprofkit.leaks.Leak): see hprofkit.leaks.find_leaks;
        exclude as path_to_root (None: the defaults; (): none); finders and inspectors default
        to its DEFAULT_FINDERS and DEFAULT_INSPECTORS; progress as open_heap takes it."""
        from . import leaks  # a third of the package's import time: on first use
        return ResultList(leaks.find_leaks(self, exclude, leaks.DEFAULT_FINDERS if finders is None else finders,
                                           inspectors=leaks.DEFAULT_INSPECTORS if inspectors is None else inspectors,
                                           progress=progress), "leaks")

    def threads(self) -> list[Thread]:
        """Every thread of its ROOT_THREAD_OBJECT records, in file order: Thread(object, name,
        daemon, frames, retained_size, serial, held).  frames: the thread's stack (STACK_TRACE
        and STACK_FRAME records), top first, as Frame(class_name, method, signature, source,
        line, locals), locals the objects a ROOT_JAVA_FRAME or ROOT_JNI_LOCAL holds at that
        depth.  The first call computes the dominator tree (retained_size)."""
        return ResultList(_values.threads(self), "threads")

    def allocation_sites(self, depth: Optional[int] = None) -> list[AllocationSite]:
        """Objects and bytes by allocation stack, as gperftools buckets: the stack trace serial
        each object record carries (written by the hprof agent; HotSpot's and ART's dumps name
        none), stacks cut to their `depth` top frames (None: whole).  Largest flat bytes first;
        see AllocationSite for flat and cum."""
        return _values.allocation_sites(self, depth)

    def alloc_sites(self) -> list[AllocSite]:
        """The sites of the file's ALLOC_SITES records (the hprof agent's allocation report),
        in file order; [] when it has none."""
        return _values.alloc_sites(self)

    def duplicate_strings(self, min_count: int = 2, *, unreachable: Optional[bool] = None) -> list[DuplicateString]:
        """Texts that min_count or more reachable java.lang.String objects hold, as
        DuplicateString(text, count, wasted_bytes), largest waste first (MAT's Duplicate
        Strings).  wasted_bytes: what keeping one String for the text would free, the others'
        shallow sizes and the value arrays only they hold.  unreachable=True counts garbage
        Strings too."""
        return ResultList(_values.duplicate_strings(self, min_count, self._members(unreachable)), "duplicate_strings")

    def collection_waste(self, *, unreachable: Optional[bool] = None) -> list[CollectionWaste]:
        """Per collection class (MAT's Java Collections queries): reachable instances, empty
        ones, mean fill ratio and the bytes their backing arrays waste (unused slots; an empty
        collection's whole arrays), largest waste first.  A set's backing map counts under the
        set.  unreachable=True measures garbage collections too.  See docs/values.md."""
        return ResultList(_values.collection_waste(self, self._members(unreachable)), "collection_waste")

    def large_arrays(self, min_bytes: int, *, unreachable: Optional[bool] = None) -> list[LargeArray]:
        """Reachable primitive arrays of min_bytes (shallow size) or more, largest first, each
        a LargeArray(array, bytes) whose dominator and path are computed on first access.
        unreachable=True lists garbage arrays too."""
        return ResultList(_values.large_arrays(self, min_bytes, self._members(unreachable)), "large_arrays")

    def waste(self, unreachable: Optional[bool] = None) -> Waste:
        """Memory waste as JXRay reports it: every kind (duplicate and zero arrays, boxed
        numbers, empty/small/sparse collections, direct buffers...; docs/waste.md defines
        each) over the reachable objects (unreachable=True: garbage too), as a
        hprofkit.Waste: w["zero_arrays"] a WasteKind (.objects, .wasted_bytes, .items,
        .holders(n)), iteration largest waste first, total_bytes each object once."""
        from ._waste import waste
        return waste(self, self._members(unreachable))

    def bitmaps(self) -> list[Bitmap]:
        """Every android.graphics.Bitmap of the heap as a hprofkit.Bitmap (size, config,
        pixels, PNG), by object id; [] for a heap without them.  See hprofkit._bitmaps for
        where each Android version keeps the pixels."""
        from . import _bitmaps
        return ResultList(_bitmaps.bitmaps(self), "bitmaps")

    def duplicate_bitmaps(self, bitmaps: Optional[Iterable[Bitmap]] = None, /) -> list[DuplicateBitmaps]:
        """Groups of bitmaps with identical pixels (Tencent Matrix's check), each a
        DuplicateBitmaps(digest, bitmaps, wasted_bytes), the largest waste first.  bitmaps:
        the ones to compare (default: heap.bitmaps()), e.g. those of the app heap only."""
        from . import _bitmaps
        return ResultList(_bitmaps.duplicate_bitmaps(self, bitmaps), "duplicate_bitmaps")

    def tables(self, *, retained: bool = True, fields: bool = False, max_chars: int = 1024,
               progress: ProgressArg = None) -> dict[str, _pyarrow.Table]:
        """The heap as Arrow tables (needs pyarrow): {'objects', 'references', 'classes', 'roots',
        'class_retained'}, and 'fields' with fields=True (primitive field values); in SQL
        (hprofkit.sql) Perfetto's heap_graph_* tables are views over them.  retained=False skips
        the dominator tree and the search from the roots (their columns null); max_chars: the
        characters of each String that value_string keeps.  progress: as open_heap takes it
        (the "tables" stage, one step a table).  See docs/sql.md."""
        from . import _tables
        return _tables.heap_tables(self, retained=retained, fields=fields, max_chars=max_chars, progress=progress)

    def to_parquet(self, directory: str | os.PathLike[str], /, *, retained: bool = True, fields: bool = False,
                   max_chars: int = 1024) -> str:
        """Writes heap.tables() as directory/<table>.parquet (atomically); returns directory."""
        from . import _tables
        return _tables.to_parquet(self, directory, retained=retained, fields=fields, max_chars=max_chars)


def _mapping_of(mapping: MappingArg) -> Optional[Mapping]:
    """Mapping.of(mapping): hprofkit._mapping loads with the first mapping given
    (`import hprofkit` stays light)."""
    if mapping is None:
        return None
    from ._mapping import Mapping
    return Mapping.of(mapping)


def _clear_frames(heap: Heap, mapping: Mapping) -> list[tuple[int, str, Optional[str], Optional[str], int]]:
    """The dump's STACK_FRAMEs of classes the mapping lists, retraced:
    (frame id, method, signature, source, line) for heap._rename_frames."""
    out = []
    for frame_id, cls, method, signature, source, line in heap._frames():
        if cls is None or method is None:
            continue
        clear = mapping.clear_frame(cls, method, signature, source, line)
        if clear is not None:
            out.append((frame_id, clear.method, clear.signature, clear.source,
                        clear.line if clear.line is not None else line))
    return out


def open_heap(source: DumpSource, *, heap_dump: int = 0, size_model: Optional[str] = None,
              semantics: str = "hprofkit", mapping: MappingArg = None, progress: ProgressArg = None,
              max_output: int | str | None = None) -> Heap:
    """Opens a dump and indexes one of its heap dumps: the one opener of the
    package.  source is what hprofkit.open takes (a path, a bytes-like
    object, an io.BytesIO, a binary file object such as a pipe or
    sys.stdin.buffer), holding plain HPROF, gzip or bzip2, an hprofkit pack
    or a Tailor mini (restored first into an anonymous temporary file).

    heap_dump picks the heap dump (from 0; negative counts from the end);
    size_model and semantics the shallow sizes and the reference graph of
    paths and retained sizes (see Dump.heap); mapping (a hprofkit.Mapping or
    the path of a mapping.txt) gives an obfuscated dump its clear names (see
    Heap).  The dump stays
    mapped while the Heap or any handle on it lives.

    progress: None (the default) shows nothing (unless an outer call
    reports), True a bar on a terminal's stderr or a line in a notebook, or a
    callable progress(done, total, stage), here for the "index" stage (bytes
    of the file walked); False nothing at all.  max_output bounds what a
    pack, mini or BMD restores to (see hprofkit.open)."""
    from ._dump import Dump
    mapping = _mapping_of(mapping)  # a bad mapping fails before the dump is read (or restored)
    dump = Dump(source, max_output=max_output)
    try:
        heap = dump.heap(heap_dump=heap_dump, size_model=size_model, semantics=semantics, mapping=mapping,
                         progress=progress)
    finally:
        # The heap holds its own export of the mapping: closing the Dump now
        # leaves the mapping to it (unmapped when the heap goes).
        dump.close()
    return heap
