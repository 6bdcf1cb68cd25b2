"""hprofkit.report(): one self-contained HTML page about a heap dump.

    hprofkit.report("app.hprof", "report.html")                 # or a Heap
    hprofkit.report("after.hprof", "diff.html", baseline="before.hprof")

The page opens offline (no network, no fonts fetched: its Content Security
Policy forbids any), holds its data as one compact JSON document, and draws
it with a small hand-written script: the overview and the biggest objects,
MAT's leak suspects, LeakCanary's leak traces folded by fingerprint, the
class histogram, the dominator tree (an explorer and a flame graph), the
threads, the waste (duplicate Strings, collections, large arrays) and,
with a baseline, the diff.  Each list keeps its top
rows (Limits) and says what it left out, so the page stays small (a few MB
at most) whatever the heap.

The package splits the work: source.py opens what the report is made of,
objects.py and sections.py gather each section's data, page.py writes the
HTML around report.js and report.css (the views, reusable one at a time:
page.view_html)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from typing import TYPE_CHECKING, Any, BinaryIO, Optional

from .dominators import Ranking
from .objects import ObjectTable, bounded
from .sections import Limits
from .source import Source, opened

if TYPE_CHECKING:
    from .._heap import Heap

__all__ = ["report", "write", "collect", "Limits"]

FORMAT = 1  # of the JSON document: bumped when a view's data changes shape
_HALVINGS = 6  # times the lists may be halved to fit Limits.page_bytes


def collect(src: Source, *, baseline: Optional[Source] = None, limits: Limits = Limits()) -> dict[str, Any]:
    """The report's JSON document for an opened Source (and a baseline's); it
    reports progress to the calling report()'s reporter, if any."""
    from .._progress import reporting
    with reporting(None) as reporter:
        if reporter is not None:
            src.heap.compute_retained(progress=reporter)
            reporter(0, 1, "report")  # spans the leaks' stages, which the sections run
        data = _collect(src, baseline, limits)
        if reporter is not None:
            reporter(1, 1, "report")
    return data


def _collect(src: Source, baseline: Optional[Source], limits: Limits) -> dict[str, Any]:
    from .. import __version__
    from . import images, sections
    from .objects import paths_of
    table = ObjectTable(src.heap)
    # The dominators first: the histogram's stats may still be counted beside them.
    ranking = Ranking(src.heap)
    biggest = ranking.top_level(limits.dominators)
    rows = sections.histogram_rows(src)
    garbage = sections.unreachable_rows(src.heap)
    overview = sections.overview(src, table, limits, rows, garbage, biggest)
    # Paths from GC roots: one search gives each of the biggest objects its own shortest.
    paths = paths_of(table, [obj for obj, _ in biggest])
    data: dict[str, Any] = {
        "format": FORMAT, "generator": f"hprofkit {__version__}",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "title": src.label,
        "sections": {
            "overview": overview,
            "suspects": sections.suspects(src.heap, table, ranking, biggest, paths, overview["total"]),
            "leaks": sections.leaks(src, table, limits),
            "histogram": sections.histogram(src, rows, limits),
            "unreachable": sections.unreachable(src, garbage, limits),
        },
        "paths": paths,
    }
    tree, tree_objects = sections.dominator_tree(src.heap, table, limits)
    data["sections"]["domtree"] = tree
    data["sections"]["flame"] = sections.flame(src.heap, limits)
    # Each tree node's path one click away: one more search for them all.
    paths.update({row: path for row, path in paths_of(table, tree_objects).items() if row not in paths})
    data["sections"]["threads"] = sections.threads(src.heap, table, limits)
    data["sections"]["waste"] = sections.waste(src, table, limits)
    pictures = images.bitmaps(src.heap, table, shown=limits.bitmaps, groups=limits.bitmap_groups,
                              members=limits.leak_objects)
    if pictures is not None:
        data["sections"]["bitmaps"], thumbnails = pictures
    if baseline is not None:
        base_rows = sections.histogram_rows(baseline)
        data["sections"]["diff"] = sections.diff(baseline, base_rows, src, rows, limits)
    data["objects"] = table.to_json()  # last: every section above has added its objects
    data = bounded(data)
    if pictures is not None:
        data["images"] = thumbnails  # after bounded(): data: URIs are long, and made here, not read from the dump
    return data


def report(heap_or_path: "Heap | str | os.PathLike[str] | BinaryIO", out: "str | os.PathLike[str]" = "report.html",
           *, baseline: "Heap | str | os.PathLike[str] | None" = None, semantics: Optional[str] = None,
           heap_dump: int = 0, limits: Limits = Limits(), mapping: Any = None, progress: Any = None,
           max_output: "int | str | None" = None, unreachable: Optional[bool] = None) -> str:
    """Writes the HTML report of a heap (a Heap, or a dump's path: plain,
    .gz, .bz2, an hprofkit pack, a Tailor mini or a BMD; or a binary file
    holding one, such as standard input) to `out` ("-" for standard output)
    and returns out's path.

    baseline: an earlier dump (or Heap) to diff against: the page adds the
    delta histogram and the reference paths along which the grown classes'
    objects hang.  semantics: the reference graph of paths and retained
    sizes for dumps opened here ('hprofkit' or 'visualvm', see open_heap).
    heap_dump: which heap dump of the file (from 0; negative counts from
    the end).  mapping: the ProGuard/R8 mapping (a hprofkit.Mapping or a
    mapping.txt path) of the dumps opened here, which the page then names by
    their clear names (a Heap given keeps the names it was opened with:
    open_heap(..., mapping=)).  A path is faster than a Heap: its class
    histogram comes from one pass of the C core.

    The file is written atomically through hprofkit's one output path: never
    over the input, never through a FIFO's or a symlink's target.

    progress: as open_heap takes it (each dump's "index", "dominators",
    "report").  max_output: what a pack, mini or BMD opened here may
    restore to (see hprofkit.open).

    The page's figures count the reachable objects, as Eclipse MAT does
    (docs/reference/behaviour.md): the overview shows the reachable heap and
    the unreachable bytes apart, and a section lists the unreachable
    objects by class.  unreachable=True counts garbage too (the default
    under semantics='visualvm')."""
    write(heap_or_path, out, baseline=baseline, semantics=semantics, heap_dump=heap_dump, limits=limits,
          mapping=mapping, progress=progress, max_output=max_output, unreachable=unreachable)
    return os.fspath(out)


def write(heap_or_path: Any, out: Any, *, baseline: Any = None, semantics: Optional[str] = None, heap_dump: int = 0,
          limits: Limits = Limits(), mapping: Any = None, progress: Any = None,
          max_output: "int | str | None" = None, unreachable: Optional[bool] = None) -> dict[str, Any]:
    """report(), returning the JSON document the page holds."""
    from .._progress import reporting
    with reporting(progress):
        return _write(heap_or_path, out, baseline, semantics, heap_dump, limits, mapping, max_output, unreachable)


def _write(heap_or_path: Any, out: Any, baseline: Any, semantics: Optional[str], heap_dump: int,
           limits: Limits, mapping: Any, max_output: "int | str | None", unreachable: Optional[bool]
           ) -> dict[str, Any]:
    from .._heap import _mapping_of
    from .._output import check_not_same_file, output_file
    from .page import render_report
    mapping = _mapping_of(mapping)  # a malformed mapping fails before a dump is read
    for source in (heap_or_path, baseline):
        if source is not None and not _is_heap(source):
            check_not_same_file(source, out)
    with contextlib.ExitStack() as stack:
        src = stack.enter_context(opened(heap_or_path, heap_dump=heap_dump, semantics=semantics, mapping=mapping,
                                         max_output=max_output, unreachable=unreachable))
        base = None if baseline is None else stack.enter_context(
            opened(baseline, heap_dump=heap_dump, semantics=semantics, mapping=mapping, max_output=max_output,
                   unreachable=unreachable))
        data = collect(src, baseline=base, limits=limits)
        page = render_report(data)
        for _ in range(_HALVINGS):
            if len(page) <= limits.page_bytes:
                break
            limits = limits.halved()
            data = dict(collect(src, baseline=base, limits=limits), shortened=True)
            page = render_report(data)
    with output_file(out) as f:
        f.write(page)
    return data


def _is_heap(obj: Any) -> bool:
    from .._heap import Heap
    return isinstance(obj, Heap)
