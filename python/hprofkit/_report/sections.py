"""The report's sections as JSON-ready data, one function each.

Each takes the Source (source.py), the shared ObjectTable (objects.py) and
the Limits, and returns a dict the page's view of that name draws
(report.js).  Every list is cut at its limit and says what it left out
("rest": rows, and their sums), so the page stays small whatever the heap."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from .._classnames import stable_name
from .dominators import BIG_DROP_RATIO, Ranking, accumulation_chain
from .objects import ObjectTable, class_label, cut_ends

if TYPE_CHECKING:
    from .._heap import Heap, HeapObject
    from ..heapdiff import HeapDiff
    from ..leaks import Leak
    from .._waste import Waste
    from .source import Source


@dataclass(frozen=True)
class Limits:
    """How much each view lists; beyond, the page shows a summary line.
    page_bytes: the page's size at most; a page above it is made again with
    every list halved (report() does), and says so."""
    dominators: int = 20        # the overview's chart of the biggest objects
    histogram: int = 5000       # class rows
    leak_groups: int = 200      # leak fingerprints
    leak_objects: int = 20      # leaking objects listed per fingerprint
    diff_rows: int = 2000
    diff_paths: int = 50
    diff_path_classes: int = 10  # the classes that grew most, whose growth paths are searched
    bitmaps: int = 48           # Android bitmaps shown, with a thumbnail each
    bitmap_groups: int = 20     # groups of duplicate bitmaps
    tree_children: int = 20     # the dominator tree explorer's children per node (3 levels)
    flame_frames: int = 2000    # the flame graph's frames, the widest (6 levels)
    threads: int = 200
    thread_locals: int = 20     # objects listed per frame (and held outside frames) of a thread
    duplicate_strings: int = 200
    collections: int = 100      # collection classes of the waste section
    large_arrays: int = 100
    large_array_bytes: int = 1 << 20  # a primitive array this big or bigger is a large array
    waste_items: int = 20       # objects listed per kind of waste (heap.waste())
    waste_holders: int = 10     # fields holding each kind of waste
    page_bytes: int = 10 << 20

    def halved(self) -> "Limits":
        """Every list's limit halved (at least 1); the page's size and thresholds kept."""
        return replace(self, **{f.name: max(1, getattr(self, f.name) // 2) for f in fields(self)
                                if f.name not in _NOT_HALVED})


_NOT_HALVED = ("page_bytes", "large_array_bytes")


# Classes the overview's composition bar shows (the rest is one part).
COMPOSITION = 8
# MAT's leak suspect: a dominator holding more than this share of the heap.
SUSPECT_SHARE = 0.10


def suspect_threshold(total: int) -> int:
    """The retained bytes a suspect holds more than."""
    return int(total * SUSPECT_SHARE)


def heap_totals(src: Source, histogram: list[list[Any]]) -> tuple[int, int, Optional[list[list[Any]]]]:
    """(objects, bytes, [[heap name, objects, bytes]...] or None) of the histogram's rows
    (the objects the report counts: Source.members)."""
    names = heap_names(src)
    heaps = [[name, sum(r[5][k][0] for r in histogram if r[5][k]), sum(r[5][k][1] for r in histogram if r[5][k])]
             for k, name in enumerate(names)] if names else None
    return sum(r[2] for r in histogram), sum(r[3] for r in histogram), heaps


def overview(src: Source, table: ObjectTable, limits: Limits, histogram: list[list[Any]],
             unreachable: list[list[Any]], biggest: list[tuple[HeapObject, int]]) -> dict[str, Any]:
    heap = src.heap
    objects, total, heaps = heap_totals(src, histogram)
    out: dict[str, Any] = {
        "label": src.label, "objects": heap.object_count, "classes": heap.class_count,
        "gc_roots": len(heap.gc_roots), "id_size": heap.id_size, "semantics": heap.semantics,
        "heap_dumps": heap.heap_dump_count, "instances_and_arrays": objects, "total": total, "heaps": heaps,
        # What the figures count (MAT's rule: the reachable objects), and the garbage beside them.
        "counts": "reachable" if src.members == "live" else "all",
        "unreachable": {"objects": sum(r[2] for r in unreachable), "bytes": sum(r[3] for r in unreachable)},
        "dominators": {"rows": [[table.row(obj), size] for obj, size in biggest],
                       "rest": max(total - sum(size for _, size in biggest), 0)},
        # What the bytes are: the classes of most shallow bytes ([name, instances, shallow]).
        "composition": [[r[0], r[2], r[3]] for r in heapq.nsmallest(COMPOSITION, histogram,
                                                                    key=lambda r: (-r[3], r[0]))],
    }
    stats = src.stats
    if src.file is not None and stats is not None:
        f = src.file
        out["file"] = {"name": f.name, "size": f.size, "compression": f.compression, "format": f.magic,
                       "id_size": f.id_size, "timestamp_ms": f.timestamp_ms,
                       "heap_dump": stats.heap_dump or 0, "heap_dumps": len(stats.heap_dumps),
                       "complete": stats.complete}
    if stats is not None:
        out["instances"] = stats.instances
        out["arrays"] = stats.arrays
    return out


# ---- histogram ---------------------------------------------------------------

HISTOGRAM_COLUMNS = ("class", "class_id", "instances", "shallow_size", "retained_size")


def histogram_rows(src: Source) -> list[list[Any]]:
    """[class name, class id, instances, shallow bytes, retained bytes] per
    class with objects the report counts (Source.members: the reachable ones
    by default, heap.histogram()), largest retained first (the id written in
    hex by histogram(), for the rows it keeps).  Retained is VisualVM's by
    class (HeapClass.instances_retained_size).  With several heaps (Android),
    a sixth item splits instances and shallow bytes by heap: [[instances,
    shallow] or 0 per heap of heap_names(src)]."""
    counted = src.histogram()
    names = heap_names(src)
    rows: list[list[Any]] = []
    for c in counted:
        cls = c.class_
        rows.append([c.name, cls and cls.class_id, c.instances, c.shallow_size, cls.instances_retained_size if cls else 0])
        if names:
            rows[-1].append([list(c.per_heap[n]) if c.per_heap.get(n, (0, 0))[0] else 0 for n in names])
    rows.sort(key=lambda r: (-r[4], -r[3], r[0]))
    return rows


def heap_names(src: Source) -> list[str]:
    """The heaps a histogram row splits its objects over: Android's (app,
    zygote, image) when the dump has objects in several, else none."""
    return src.heap_names()


def _hex(class_id: Optional[int]) -> Optional[str]:
    """A histogram row's class id as the page shows it; None for a primitive type without a class."""
    return None if class_id is None else f"{class_id:x}"


# ---- unreachable objects (MAT's Unreachable Objects Histogram) ---------------

UNREACHABLE_COLUMNS = ("class", "class_id", "instances", "shallow_size")


def unreachable_rows(heap: Heap) -> list[list[Any]]:
    """[class name, class id, instances, shallow bytes] of the objects no GC root reaches,
    most shallow bytes first (heap.unreachable_histogram())."""
    return [[c.name, c.class_ and c.class_.class_id, c.instances, c.shallow_size] for c in heap.unreachable_histogram()]


def unreachable(src: Source, rows: list[list[Any]], limits: Limits) -> dict[str, Any]:
    kept = [[r[0], _hex(r[1]), r[2], r[3]] for r in rows[:limits.histogram]]
    rest = rows[limits.histogram:]
    return {"columns": list(UNREACHABLE_COLUMNS), "rows": kept, "total_rows": len(rows),
            "counted": src.members != "live",
            "objects": sum(r[2] for r in rows), "bytes": sum(r[3] for r in rows),
            "rest": {"rows": len(rest), "instances": sum(r[2] for r in rest), "shallow_size": sum(r[3] for r in rest)}}


def histogram(src: Source, rows: list[list[Any]], limits: Limits) -> dict[str, Any]:
    kept = [[r[0], _hex(r[1]), *r[2:]] for r in rows[:limits.histogram]]
    rest = rows[limits.histogram:]
    return {"columns": list(HISTOGRAM_COLUMNS), "heaps": heap_names(src), "rows": kept, "total_rows": len(rows),
            "counts": "reachable" if src.members == "live" else "all",
            "rest": {"rows": len(rest), "instances": sum(r[2] for r in rest), "shallow_size": sum(r[3] for r in rest)}}


# ---- leak suspects (MAT) -----------------------------------------------------

# Rows of MAT's "accumulated objects by class" table at an accumulation point, and the
# biggest instances a class suspect lists.
ACCUMULATED_CLASSES = 10
GROUP_INSTANCES = 5


def suspects(heap: Heap, table: ObjectTable, ranking: Ranking, biggest: list[tuple[HeapObject, int]],
             paths: dict[str, Any], total: int) -> dict[str, Any]:
    """MAT's problem suspects: the top-level dominators holding more than
    SUSPECT_SHARE of the heap (`biggest` holds them all, and `paths` their
    paths from GC roots), each with the dominator chain down to its
    accumulation point and the objects accumulated there by class; then
    MAT's class suspects: the other top-level dominators of one class
    (two or more) that together hold more than that share."""
    threshold = suspect_threshold(total)
    items = []
    for obj, size in biggest:
        if size <= threshold:
            continue
        chain, stopped = accumulation_chain(ranking, obj, size)
        items.append({"object": table.row(obj), "retained": size, "path": paths[str(table.row(obj))],
                      "chain": cut_ends([[table.row(o), s] for o, s in chain]), "chain_stopped": stopped,
                      "accumulated": accumulated_by_class(heap, chain[-1][0])})
    singles = {obj.id for obj, size in biggest if size > threshold}
    return {"share": SUSPECT_SHARE, "drop_ratio": BIG_DROP_RATIO, "total": total, "threshold": threshold,
            "items": items, "groups": class_suspects(heap, table, threshold, singles)}


def accumulated_by_class(heap: Heap, point: HeapObject) -> dict[str, Any]:
    """MAT's "accumulated objects by class" at an accumulation point: the objects it
    dominates directly, by class ([class, objects, shallow, retained], most retained first,
    the first ACCUMULATED_CLASSES) and how many classes and objects there are in all."""
    rows: dict[str, list[Any]] = {}
    for child in point.dominated():
        name = class_label(child)
        row = rows.setdefault(name, [name, 0, 0, 0])
        row[1] += 1
        row[2] += child.shallow_size
        row[3] += max(heap.retained_size(child), 0)
    ranked = sorted(rows.values(), key=lambda r: (-r[3], -r[1], r[0]))
    return {"rows": ranked[:ACCUMULATED_CLASSES], "classes": len(ranked), "objects": sum(r[1] for r in ranked)}


def class_suspects(heap: Heap, table: ObjectTable, threshold: int, singles: set[int]) -> list[dict[str, Any]]:
    """The classes whose top-level dominators (but those suspected one by one: `singles`, by
    id), two or more,
    retain more than `threshold` together: [{class, instances, retained, biggest: [[row,
    retained]...]}], largest first (MAT: "8,023 instances of JCMethodDecl occupy ...")."""
    groups: dict[str, list[Any]] = {}
    for obj in heap.dominator_roots():  # largest retained first
        size = heap.retained_size(obj)
        if size <= 0:
            break
        if obj.id in singles:
            continue
        group = groups.setdefault(class_label(obj), [0, 0, []])
        group[0] += 1
        group[1] += size
        if len(group[2]) < GROUP_INSTANCES:
            group[2].append((obj, size))
    found = [{"class": name, "instances": n, "retained": size, "biggest": [[table.row(o), s] for o, s in top]}
             for name, (n, size, top) in groups.items() if n >= 2 and size > threshold]
    return sorted(found, key=lambda g: (-g["retained"], g["class"]))



# ---- leak traces (LeakCanary) ------------------------------------------------

def _trace(table: ObjectTable, leak: Leak) -> list[Any]:
    """The trace's nodes, a long one cut at its ends (see cut_ends)."""
    out: list[Any] = []
    for node in cut_ends(leak.nodes):
        if isinstance(node, int):
            out.append(node)
            continue
        entry: dict[str, Any] = {"object": table.row(node.object), "status": node.status, "reason": node.reason,
                                 "labels": list(node.labels)}
        if node.reference is not None:
            entry["reference"] = {"type": node.reference.ref_type, "owner": node.owner,
                                  "name": node.reference_display, "suspect": node.suspect}
        out.append(entry)
    return out


def leaks(src: Source, table: ObjectTable, limits: Limits) -> dict[str, Any]:
    """The leak traces of heap.find_leaks(), folded by fingerprint: one
    trace per fingerprint (its first leak's), the leaks' count, the retained
    bytes they hold together, the leaking objects (the largest first)."""
    found = src.heap.find_leaks()
    groups: dict[str, list[Leak]] = {}
    for leak in found:
        groups.setdefault(leak.fingerprint, []).append(leak)

    def held(group: list[Leak]) -> int:
        # The sum is the union of their retained sets: no leaking object dominates another (each one's
        # path avoids the others, so one reached only through another would have none: no leak).
        return sum(leak.retained_size or 0 for leak in group)

    ranked = sorted(groups.values(), key=lambda g: (g[0].library, -held(g), -len(g), g[0].fingerprint))
    items = []
    for group in ranked[:limits.leak_groups]:
        first = group[0]
        largest = sorted(group, key=lambda leak: -(leak.retained_size or 0))
        keys = [leak.key for leak in group if leak.key is not None]
        items.append({
            "fingerprint": first.fingerprint, "count": len(group), "retained": held(group),
            "library": first.library, "description": first.description,
            "pattern": None if first.pattern is None else _matcher_text(first.pattern),
            "root": first.root_kind, "trace": _trace(table, first),
            "objects": [[table.row(leak.object), leak.retained_size, leak.key] for leak in largest[:limits.leak_objects]],
            "more": max(len(group) - limits.leak_objects, 0), "keys": len(keys),
        })
    library = sum(leak.library for leak in found)
    rest = ranked[limits.leak_groups:]
    return {"total": len(found), "application": len(found) - library, "library": library,
            "fingerprints": len(groups), "groups": items,
            "rest": {"groups": len(rest), "leaks": sum(len(g) for g in rest)}}


def _matcher_text(matcher: Any) -> str:
    where = ".".join(p for p in (matcher.class_name, matcher.name) if p)
    return f"{matcher.pattern} {where}".strip()


# ---- diff against a baseline -------------------------------------------------

DIFF_COLUMNS = ("class", "instances_a", "instances_b", "shallow_size_a", "shallow_size_b", "retained_size_a",
                "retained_size_b")


def name_histogram(rows: list[list[Any]]) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    """{name: (instances, shallow)} and {name: retained} of histogram rows,
    classes of the same stable name summed (as hprofkit.diff counts them)."""
    counts: dict[str, tuple[int, int]] = {}
    retained: dict[str, int] = {}
    for shown, _, count, shallow, kept, *_ in rows:
        name = stable_name(shown)
        prev = counts.get(name, (0, 0))
        counts[name] = (prev[0] + count, prev[1] + shallow)
        retained[name] = retained.get(name, 0) + kept
    return counts, retained


def diff(base: Source, base_rows: list[list[Any]], src: Source, rows: list[list[Any]], limits: Limits
         ) -> dict[str, Any]:
    """hprofkit.diff(baseline, heap, retained=True, paths=True), from the
    histograms the report counted already: the delta histogram and where the
    objects of the classes that grew most hang."""
    from ..heapdiff import HeapDiff, growth_paths
    hist_a, ret_a = name_histogram(base_rows)
    hist_b, ret_b = name_histogram(rows)
    result: HeapDiff = HeapDiff.from_histograms(hist_a, hist_b, ret_a, ret_b, a=base.label, b=src.label)
    grown = [r.name for r in sorted(result.rows, key=lambda r: -r.count_delta)[:limits.diff_path_classes]
             if r.count_delta > 0]
    paths, sampled = growth_paths(base.heap, src.heap, grown)
    kept = result.rows[:limits.diff_rows]
    rest = result.rows[limits.diff_rows:]
    return {"a": result.a, "b": result.b, "columns": list(DIFF_COLUMNS),
            "rows": [[r.name, r.count_a, r.count_b, r.shallow_a, r.shallow_b, r.retained_a, r.retained_b]
                     for r in kept],
            "total_rows": len(result.rows),
            "rest": {"rows": len(rest), "instances_delta": sum(r.count_delta for r in rest),
                     "shallow_size_delta": sum(r.shallow_delta for r in rest)},
            "paths": [{"class": p.name, "path": cut_ends(p.path), "instances_a": p.count_a, "instances_b": p.count_b}
                      for p in paths[:limits.diff_paths]],
            "more_paths": max(len(paths) - limits.diff_paths, 0), "paths_sampled": sampled}


# ---- the dominator tree: explorer and flame graph ----------------------------

TREE_DEPTH = 3   # the explorer's levels, as heap.dominator_tree()
FLAME_DEPTH = 6  # the flame graph's, as heap.flamegraph()


def dominator_tree(heap: Heap, table: ObjectTable, limits: Limits) -> tuple[dict[str, Any], list[HeapObject]]:
    """heap.dominator_tree()'s document, each node also named by its object
    row ("rows"), and the nodes' objects (whose paths the page shows)."""
    from .tree import tree_data
    data = tree_data(heap, depth=TREE_DEPTH, children=limits.tree_children)
    objects = [heap.object(int(node[1], 16)) for node in data["nodes"]]
    return dict(data, rows=[table.row(obj) for obj in objects]), objects


def flame(heap: Heap, limits: Limits) -> dict[str, Any]:
    """heap.flamegraph()'s document: the class tree's top levels."""
    from .tree import class_tree_data
    return class_tree_data(heap.class_tree(), depth=FLAME_DEPTH, frames=limits.flame_frames)


# ---- threads -----------------------------------------------------------------

def threads(heap: Heap, table: ObjectTable, limits: Limits) -> dict[str, Any]:
    """heap.threads(), largest retained first: [name, daemon, retained, object
    row or None, frame count, frames, held, more held, retains, more retains]
    per thread, frames cut at their ends, each [str(frame), [rows it holds],
    more it holds]; retains: the objects the thread object immediately
    dominates (its stack's among them), largest retained first."""
    all_threads = sorted(heap.threads(), key=lambda t: (-t.retained_size, t.serial))
    kept, rest = all_threads[:limits.threads], all_threads[limits.threads:]

    def rows_of(objects: Sequence[HeapObject]) -> list[int]:
        return [table.row(obj) for obj in objects[:limits.thread_locals]]

    items = []
    for t in kept:
        frames = [hop if isinstance(hop, int) else [str(hop), rows_of(hop.locals),
                                                    max(len(hop.locals) - limits.thread_locals, 0)]
                  for hop in cut_ends(t.frames)]
        retains = t.object.dominated() if t.object is not None else []
        items.append([t.name, t.daemon, t.retained_size, None if t.object is None else table.row(t.object),
                      len(t.frames), frames, rows_of(t.held), max(len(t.held) - limits.thread_locals, 0),
                      rows_of(retains), max(len(retains) - limits.thread_locals, 0)])
    return {"columns": ["name", "daemon", "retained_size", "object", "frame_count", "frames", "held", "more_held",
                        "retains", "more_retains"],
            "rows": items, "total_rows": len(all_threads),
            "rest": {"rows": len(rest), "retained_size": sum(t.retained_size for t in rest)}}


# ---- waste: duplicate Strings, collections, large arrays -------------------

def waste(src: Source, table: ObjectTable, limits: Limits) -> dict[str, Any]:
    """heap.waste()'s kinds (each with its objects and holders) and MAT's waste queries:
    heap.duplicate_strings(), heap.collection_waste(), heap.large_arrays(limits.large_array_bytes)
    over the objects the report counts, each cut at its limit."""
    heap, unreachable = src.heap, src.members == "all"
    kinds = heap.waste(unreachable=unreachable)
    strings = heap.duplicate_strings(unreachable=unreachable)
    collections = heap.collection_waste(unreachable=unreachable)
    arrays = heap.large_arrays(limits.large_array_bytes, unreachable=unreachable)
    return {
        **waste_kinds(kinds, table, limits),
        "strings": _cut([[s.text, s.count, s.wasted_bytes] for s in strings], limits.duplicate_strings,
                        ["text", "count", "wasted_bytes"], lambda r: {"count": r[1], "wasted_bytes": r[2]}),
        "collections": _cut([[c.class_name, f"{c.class_.class_id:x}", c.instances, c.empty, c.mean_fill,
                              c.wasted_bytes] for c in collections], limits.collections,
                            ["class", "class_id", "instances", "empty", "mean_fill", "wasted_bytes"],
                            lambda r: {"instances": r[2], "wasted_bytes": r[5]}),
        "arrays": dict(_cut(arrays, limits.large_arrays, ["object", "bytes"], lambda a: {"bytes": a.bytes},
                            lambda a: [table.row(a.array), a.bytes]), min_bytes=limits.large_array_bytes),
    }


def waste_kinds(w: Waste, table: ObjectTable, limits: Limits) -> dict[str, Any]:
    """heap.waste()'s kinds as report.js's waste view draws them (the report, and a Waste in a
    notebook): each kind's figures, its largest objects and its holders, cut at their limits."""
    return {"total_bytes": w.total_bytes,
            "kinds": [{"kind": k.kind, "objects": k.objects, "wasted_bytes": k.wasted_bytes,
                       "items": [[table.row(i.object), i.wasted_bytes] for i in k.top(limits.waste_items)],
                       "holders": [[str(h), h.objects, h.wasted_bytes] for h in k.holders(limits.waste_holders)]}
                      for k in w]}


def _cut(rows: list[Any], limit: int, columns: list[str], sums: Callable[[Any], dict[str, int]],
         shown: Optional[Callable[[Any], list[Any]]] = None) -> dict[str, Any]:
    """{"columns", "rows" (the first `limit`, as shown(row)), "total_rows",
    "rest": {"rows", and sums(row)'s fields summed over those left out}}."""
    kept, rest = rows[:limit], rows[limit:]
    summed: dict[str, Any] = {"rows": len(rest)}
    for row in rest:
        for key, value in sums(row).items():
            summed[key] = summed.get(key, 0) + value
    return {"columns": columns, "rows": [shown(r) for r in kept] if shown else kept, "total_rows": len(rows),
            "rest": summed}
