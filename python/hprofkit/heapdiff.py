"""Heap diffs: which classes grew between two dumps, and along which
reference paths.

    d = hprofkit.diff("before.hprof", "after.hprof")     # heaps or paths
    for row in d.rows[:10]:                               # sorted by growth
        print(row.name, row.count_delta, row.shallow_delta)
    d.to_pandas()                                         # with pandas installed

Rows are per class *name*: classes of the same name (several class loaders)
are summed, as MAT's delta histogram and hprof-slurp's diff do, since object
and class ids are addresses that do not survive from one dump to the next.
Classes whose counts and sizes did not change are left out.

Growth paths follow Shark's heap-growth idea: each object of a grown class
is named by its shortest path from a GC root (`REFTYPE Owner.field ->
class` per hop, array indexes as `[x]`), and the objects hanging on the same
named path are counted in both dumps, so a report says where growth hangs,
not only which class grew."""

from __future__ import annotations

import itertools
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from ._classnames import stable_name
from ._heap import Heap, HeapClass, HeapObject, open_heap
from ._reach import _TIER_LOW, Hop, _hop, _rules, default_exclude
from ._units import human_size
from .match import Matcher

if TYPE_CHECKING:
    from ._progress import ProgressArg

__all__ = ["diff", "HeapDiff", "DiffRow", "PathGrowth", "class_histogram", "retained_by_class", "growth_paths"]

_NO_NODE = 0xFFFFFFFF  # Routes.parents(), Routes.hop_groups(): a root's parent


@dataclass(frozen=True)
class DiffRow:
    """One class name in both dumps: instances, shallow bytes, and retained
    bytes (None when not computed)."""
    name: str
    count_a: int
    count_b: int
    shallow_a: int
    shallow_b: int
    retained_a: int | None = None
    retained_b: int | None = None

    @property
    def count_delta(self) -> int:
        return self.count_b - self.count_a

    @property
    def shallow_delta(self) -> int:
        return self.shallow_b - self.shallow_a

    @property
    def retained_delta(self) -> int | None:
        if self.retained_a is None or self.retained_b is None:
            return None
        return self.retained_b - self.retained_a

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data, in the command line's vocabulary: class,
        instances, shallow_size and retained_size, each _a, _b and _delta."""
        return {"class": self.name, "instances_a": self.count_a, "instances_b": self.count_b,
                "instances_delta": self.count_delta, "shallow_size_a": self.shallow_a,
                "shallow_size_b": self.shallow_b, "shallow_size_delta": self.shallow_delta,
                "retained_size_a": self.retained_a, "retained_size_b": self.retained_b,
                "retained_size_delta": self.retained_delta}


@dataclass(frozen=True)
class PathGrowth:
    """Objects of class `name` hanging on one named reference path (root
    first, one `REFTYPE Owner.field -> class` per hop), counted in both dumps."""
    name: str
    path: tuple[str, ...]
    count_a: int
    count_b: int

    @property
    def count_delta(self) -> int:
        return self.count_b - self.count_a

    def format(self) -> str:
        lines = [f"{self.count_delta:+,} {self.name} ({self.count_a:,} -> {self.count_b:,}) along:"]
        lines += [f"  {'  ' * min(i, 1)}{hop}" for i, hop in enumerate(self.path)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.name, "path": list(self.path), "instances_a": self.count_a,
                "instances_b": self.count_b, "instances_delta": self.count_delta}


def class_histogram(heap: Heap, unreachable: Optional[bool] = None) -> dict[str, tuple[int, int]]:
    """{class name: (instances, shallow bytes)} of a heap's reachable objects
    (unreachable=True: every object; heap.histogram()), classes of the same
    stable name summed (stable_name: a lambda's or hidden class's name
    without its run's counter and address)."""
    out: dict[str, tuple[int, int]] = {}
    for row in heap.histogram(unreachable=unreachable):
        name = stable_name(row.name)
        prev = out.get(name, (0, 0))
        out[name] = (prev[0] + row.instances, prev[1] + row.shallow_size)
    return out


def classes_stably_named(heap: Heap, name: str) -> list[HeapClass]:
    """The classes whose stable name is `name` (heap.classes_named, and the
    lambdas and hidden classes it stands for)."""
    found = heap.classes_named(name)
    if not found or "$$Lambda" in name:  # a stable name no class of the heap has as its own
        found = found + [c for c in heap.classes if c.name != name and stable_name(c.name) == name]
    return found


def retained_by_class(heap: Heap, names: Iterable[str] | None = None) -> dict[str, int]:
    """{class name: retained bytes}: VisualVM's retained size of each class
    (its instances without an instance of the same class above them in the
    dominator tree), classes of the same name summed.  `names` limits the
    classes (default: every class with instances)."""
    names = list(names) if names is not None else None
    classes = [c for name in names for c in classes_stably_named(heap, name)] if names is not None else heap.classes
    out: dict[str, int] = {}
    for cls in classes:
        if cls.instance_count:
            name = stable_name(cls.name)
            out[name] = out.get(name, 0) + cls.instances_retained_size
    if names is not None:
        for name in names:
            out.setdefault(name, 0)
    return out


def _target_name(obj: HeapObject | None) -> str:
    if obj is None:
        return "?"
    return f"class {obj.name}" if isinstance(obj, HeapClass) else obj.class_name


def hop_name(hop: Hop) -> str:
    """A path hop named without addresses: 'INSTANCE_FIELD a.B.field -> c.D',
    'ARRAY_ENTRY java.lang.Object[].[x] -> c.D', 'ROOT JNI_GLOBAL -> c.D'."""
    target = _target_name(hop.target)
    if hop.ref_type == "ROOT":
        return f"ROOT {hop.name} -> {target}"
    holder = hop.holder
    owner = "?" if holder is None else (holder.name if holder.kind == "class" else holder.class_name)
    if hop.ref_type == "ARRAY_ENTRY":
        return f"ARRAY_ENTRY {owner}.[x] -> {target}"
    if hop.ref_type == "LOCAL":
        return f"LOCAL {owner} {hop.name} -> {target}"
    return f"{hop.ref_type} {owner}.{hop.name} -> {target}"


def _path_counts(heap: Heap, name: str, exclude: Iterable[Matcher] | None, sample: int | None = None
                 ) -> tuple[Counter[tuple[str, ...]], bool]:
    """{named path: objects of class `name` on it}, and whether it is a sample
    (the first `sample` objects only; None: every object, exactly).

    One search finds the path of each object, the path a search for it
    alone finds (through other objects of the class too: a chained hash
    bucket, a linked list, an array of arrays).  A hop repeated along such a
    chain is named once, so the items a list or a bucket chain gained count
    on one path.  The paths share their prefixes (the search's tree); its
    nodes are grouped in C by their parent's group and what names their hop
    (a million elements of one array: one group), and a group is named once,
    so this is linear in the vertices on the paths, however long the chains."""
    objects: list[HeapObject] = []
    classes = classes_stably_named(heap, name)
    for cls in classes:
        objects += cls.instances() if sample is None else itertools.islice(cls.instances(), sample - len(objects))
    sampled = sample is not None and len(objects) == sample and sum(c.instance_count for c in classes) > sample
    rules, _ = _rules(heap, default_exclude(heap) if exclude is None else exclude)
    routes = heap._routes(objects, rules)
    # The nodes whose hops are named alike, grouped in C (a million elements of one array: one
    # group), each group named once here, parents first.
    raw_parents, raw_nodes, raw_counts, weak = routes.hop_groups(_TIER_LOW)
    group_parent = memoryview(raw_parents).cast("I")
    group_node = memoryview(raw_nodes).cast("I")
    group_count = memoryview(raw_counts).cast("Q")
    # Folded paths, interned: key -> (the key without its last name, that name).
    links: list[tuple[int, str]] = []
    interned: dict[tuple[int, str], int] = {}

    def extend(key: int, hop: str) -> int:
        if key >= 0 and links[key][1] == hop:
            return key  # a hop repeated along a chain is named once
        found = interned.get((key, hop))
        if found is None:
            found = interned[(key, hop)] = len(links)
            links.append((key, hop))
        return found

    def named(key: int) -> tuple[str, ...]:
        names = []
        while key >= 0:
            key, name = links[key]
            names.append(name)
        return tuple(reversed(names))

    group_key = [-1] * len(group_parent)
    for group, (parent, node) in enumerate(zip(group_parent, group_node)):
        key = -1 if parent == _NO_NODE else group_key[parent]
        for raw in routes.node_hops(node):
            key = extend(key, hop_name(_hop(raw)))
        group_key[group] = key
    by_key: Counter[int] = Counter()
    for group, count in enumerate(group_count):
        if count:
            by_key[group_key[group]] += count
    counts: Counter[tuple[str, ...]] = Counter()
    if weak:
        counts[("(not strongly reachable)",)] = weak
    for key, count in by_key.items():
        counts[named(key)] += count
    return counts, sampled


def growth_paths(a: Heap, b: Heap, names: Iterable[str], *, exclude: Iterable[Matcher] | None = None,
                 sample: int | None = None) -> tuple[list[PathGrowth], bool]:
    """Where the objects of classes `names` hang in both heaps: the named
    paths whose object count rose, most growth first, every object counted;
    and whether counts come from a sample (with `sample`, a class's first
    that many instances only: faster, and its counts are not counts)."""
    grown: list[PathGrowth] = []
    sampled = False
    for name in names:
        counts_a, cut_a = _path_counts(a, name, exclude, sample)  # None: each heap's defaults
        counts_b, cut_b = _path_counts(b, name, exclude, sample)
        sampled = sampled or cut_a or cut_b
        for key, count_b in counts_b.items():
            if count_b > counts_a.get(key, 0):
                grown.append(PathGrowth(name, key, counts_a.get(key, 0), count_b))
    grown.sort(key=lambda g: (-g.count_delta, g.name, g.path))
    return grown, sampled


@dataclass
class HeapDiff:
    """Per-class changes from dump a to dump b; see the module doc."""
    rows: list[DiffRow]
    a: str = "a"
    b: str = "b"
    paths: list[PathGrowth] = field(default_factory=list)
    paths_sampled: bool = False

    @classmethod
    def from_histograms(cls, hist_a: dict[str, tuple[int, int]], hist_b: dict[str, tuple[int, int]],
                        retained_a: dict[str, int] | None = None, retained_b: dict[str, int] | None = None,
                        *, a: str = "a", b: str = "b") -> "HeapDiff":
        """A diff of two {name: (instances, shallow bytes)} histograms (and
        {name: retained bytes}, when both are given)."""
        both = (retained_a, retained_b) if retained_a is not None and retained_b is not None else None
        rows = []
        for name in hist_a.keys() | hist_b.keys() | (both[0].keys() | both[1].keys() if both is not None else set()):
            count_a, shallow_a = hist_a.get(name, (0, 0))
            count_b, shallow_b = hist_b.get(name, (0, 0))
            row = DiffRow(name, count_a, count_b, shallow_a, shallow_b,
                          both[0].get(name, 0) if both is not None else None,
                          both[1].get(name, 0) if both is not None else None)
            if row.count_delta or row.shallow_delta or row.retained_delta:
                rows.append(row)
        rows.sort(key=lambda r: (-r.shallow_delta, -r.count_delta, -(r.retained_delta or 0), r.name))
        return cls(rows, a, b)

    def row(self, name: str) -> DiffRow | None:
        """The row of a class name, or None if it did not change."""
        return next((r for r in self.rows if r.name == name), None)

    @property
    def grown(self) -> list[DiffRow]:
        """Rows whose instance count or shallow bytes rose."""
        return [r for r in self.rows if r.count_delta > 0 or r.shallow_delta > 0]

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        rows = self.rows if top is None else self.rows[:top]
        return {"a": self.a, "b": self.b, "rows": [r.to_dict() for r in rows],
                "paths": [p.to_dict() for p in self.paths], "paths_sampled": self.paths_sampled}

    def format(self, top: int | None = 20) -> str:
        """A readable table (and the growth paths, when computed)."""
        rows = self.rows if top is None else self.rows[:top]
        with_retained = any(r.retained_delta is not None for r in rows)
        head = f"{'count a':>10} {'count b':>10} {'Δ count':>10}  {'shallow a':>10} {'shallow b':>10} {'Δ shallow':>11}"
        if with_retained:
            head += f"  {'retained a':>10} {'retained b':>10} {'Δ retained':>11}"
        lines = [f"a: {self.a}", f"b: {self.b}",
                 f"{len(self.rows):,} classes changed" + (f", top {len(rows)}" if len(rows) < len(self.rows) else ""),
                 f"{head}  class"]
        for r in rows:
            line = (f"{r.count_a:>10,} {r.count_b:>10,} {r.count_delta:>+10,}  {human_size(r.shallow_a):>10} "
                    f"{human_size(r.shallow_b):>10} {_signed_size(r.shallow_delta):>11}")
            if with_retained:
                line += (f"  {human_size(r.retained_a):>10} {human_size(r.retained_b):>10} "
                         f"{_signed_size(r.retained_delta):>11}"
                         if r.retained_a is not None and r.retained_b is not None else " " * 35)
            lines.append(f"{line}  {r.name}")
        if self.paths:
            lines += ["", "grown along reference paths" + (" (sampled)" if self.paths_sampled else "") + ":"]
            lines += [p.format() for p in self.paths[:top]]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def _repr_html_(self, top: int = 50) -> str:
        from ._html import text as escape
        with_retained = any(r.retained_delta is not None for r in self.rows[:top])
        heads = ["class", "count a", "count b", "Δ count", "shallow a", "shallow b", "Δ shallow"]
        heads += ["retained a", "retained b", "Δ retained"] if with_retained else []

        def cell(value: Any, delta: bool = False, sized: bool = False) -> str:
            if value is None:
                text, title = "", ""
            elif sized:  # bytes in human units, the exact figure in the tooltip
                text = ("+" if delta and value > 0 else "-" if value < 0 else "") + human_size(abs(value))
                title = f" title='{value:+,} B'" if delta else f" title='{value:,} B'"
            else:
                text, title = f"{value:+,}" if delta else f"{value:,}", ""
            color = "" if not delta or not value else f";color:{'#b00' if value > 0 else '#070'}"
            return f"<td style='text-align:right{color}'{title}>{escape(text)}</td>"

        body = []
        for r in self.rows[:top]:
            cells = (f"<td style='text-align:left'>{escape(r.name)}</td>" + cell(r.count_a) + cell(r.count_b)
                     + cell(r.count_delta, True) + cell(r.shallow_a, sized=True) + cell(r.shallow_b, sized=True)
                     + cell(r.shallow_delta, True, True))
            if with_retained:
                cells += (cell(r.retained_a, sized=True) + cell(r.retained_b, sized=True)
                          + cell(r.retained_delta, True, True))
            body.append(f"<tr>{cells}</tr>")
        paths = "".join(f"<li><b>{p.count_delta:+,}</b> {escape(p.name)} ({p.count_a:,} → {p.count_b:,})<br>"
                        + "<br>".join(escape(h) for h in p.path) + "</li>" for p in self.paths[:top])
        return (f"<div><b>heap diff</b> {escape(self.a)} → {escape(self.b)}: {len(self.rows):,} classes "
                f"changed<table><tr>{''.join(f'<th>{h}</th>' for h in heads)}</tr>{''.join(body)}</table>"
                + (f"<details><summary>grown along reference paths</summary><ol>{paths}</ol></details>"
                   if paths else "") + "</div>")

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (deltas included), one row per class;
        its columns are DiffRow.to_dict's."""
        try:
            import pandas
        except ImportError:
            raise ImportError("HeapDiff.to_pandas() needs pandas: pip install pandas") from None
        columns = ["class", "instances_a", "instances_b", "instances_delta", "shallow_size_a", "shallow_size_b",
                   "shallow_size_delta", "retained_size_a", "retained_size_b", "retained_size_delta"]
        return pandas.DataFrame([r.to_dict() for r in self.rows], columns=columns)


def _signed_size(n: int | None) -> str:
    if n is None:
        return ""
    return ("+" if n > 0 else "-" if n < 0 else "") + human_size(abs(n))


def _as_heap(source: Heap | str | os.PathLike[str], opened: list[Heap], mapping: Any = None,
             reporter: Any = None) -> tuple[Heap, str]:
    if isinstance(source, Heap):
        return source, repr(source)
    heap = open_heap(source, mapping=mapping, progress=reporter)
    opened.append(heap)
    return heap, os.fspath(source)


def diff(a: Heap | str | os.PathLike[str], b: Heap | str | os.PathLike[str], *, retained: bool = False,
         paths: bool | Sequence[str] = False, exclude: Iterable[Matcher] | None = None, top_paths: int = 10,
         mapping: Any = None, unreachable: Optional[bool] = None, progress: ProgressArg = None) -> HeapDiff:
    """The per-class changes from heap (or dump path) `a` to `b`: the classes'
    reachable objects (unreachable=True: garbage too; heap.histogram()).

    retained: also compare each class's retained size (computes the
    dominator trees).  paths: also find the reference paths along which the
    grown classes' objects hang (True: the `top_paths` classes that grew
    most in instances; or a list of class names), with `exclude` matchers
    as heap.path_to_root takes them (None: each heap's defaults; (): none).  Paths given are opened (dumps, packs,
    Tailor minis) and closed again; heaps given stay open.  mapping: the
    ProGuard/R8 mapping (a hprofkit.Mapping or a mapping.txt path) of the
    dumps given as paths, or a pair (A's, B's) for two releases whose
    names differ: classes then compare by their clear names.  progress: as
    open_heap takes it (each dump's "index" and "dominators", "histogram",
    "paths")."""
    from ._progress import reporting
    with reporting(progress) as reporter:
        return _diff(a, b, retained, paths, exclude, top_paths, mapping, unreachable, reporter)


def _diff(a: Heap | str | os.PathLike[str], b: Heap | str | os.PathLike[str], retained: bool,
          paths: bool | Sequence[str], exclude: Iterable[Matcher] | None, top_paths: int, mapping: Any,
          unreachable: Optional[bool], reporter: Any) -> HeapDiff:
    from ._progress import step
    mapping_a, mapping_b = mapping if isinstance(mapping, tuple) else (mapping, mapping)
    opened: list[Heap] = []
    try:
        heap_a, label_a = _as_heap(a, opened, mapping_a, reporter)
        heap_b, label_b = _as_heap(b, opened, mapping_b, reporter)
        if retained and reporter is not None:
            heap_a.compute_retained(progress=reporter)
            heap_b.compute_retained(progress=reporter)
        ret_a = retained_by_class(heap_a) if retained else None
        ret_b = retained_by_class(heap_b) if retained else None
        with step(reporter, "histogram"):
            hist_a, hist_b = class_histogram(heap_a, unreachable), class_histogram(heap_b, unreachable)
        result = HeapDiff.from_histograms(hist_a, hist_b, ret_a, ret_b, a=label_a, b=label_b)
        if paths:
            if paths is True:
                names = [r.name for r in sorted(result.rows, key=lambda r: -r.count_delta)[:top_paths]
                         if r.count_delta > 0]
            else:
                names = list(paths)
            with step(reporter, "paths"):
                result.paths, result.paths_sampled = growth_paths(heap_a, heap_b, names, exclude=exclude)
        return result
    finally:
        for heap in opened:
            heap.close()
