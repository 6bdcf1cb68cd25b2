"""Statistics of a dump: counts and bytes per record tag and per heap
sub-tag, the file's heap dumps, and class histograms (all heaps, and per
Android heap).  Built from the plain values that the C core returns
(hprofkit._hprof.stats)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _hprof
from ._types import TYPE_NAMES
from ._units import human_size

VERSION_NAMES = {0: "1.0", 1: "1.0.1", 2: "1.0.2", 3: "1.0.3"}
# Names of ART's heaps, for a HEAP_DUMP_INFO whose name string is missing.
HEAP_NAMES = {0: "default", 0x41: "app", 0x49: "image", 0x5A: "zygote"}
DEFAULT_TOP = 20


def record_name(tag: int, sub: bool = False) -> str:
    """Tailor's name for a tag, or UNKNOWN_0xNN."""
    return _hprof.tag_name(tag, sub=sub) or f"UNKNOWN_0x{tag:02X}"


@dataclass(frozen=True)
class Tally:
    """How many records of one tag, and their bytes (record heads and tags included)."""
    count: int
    bytes: int


@dataclass(frozen=True, slots=True)  # a million classes: a million rows
class ClassRow:
    """One histogram row: a class (or primitive array type) and its objects.
    ``heap`` names the heap of a per-heap histogram (None in the histogram
    of all heaps).  With a mapping, ``name`` is the clear name and
    ``obfuscated_name`` the name the dump gives (None when they are the
    same)."""
    name: str
    instances: int
    shallow_bytes: int
    class_id: int | None = None
    heap: str | None = None
    obfuscated_name: str | None = None


@dataclass(frozen=True)
class HeapDump:
    """One heap dump of a file: a HEAP_DUMP record, or a run of
    HEAP_DUMP_SEGMENTs closed by a HEAP_DUMP_END.  ``offset`` is its first
    record, ``end`` just past its last; ``records`` and ``bytes`` count its
    records (heads included); the rest counts its sub-records.  ``complete``
    is False for a run of segments that stops without its HEAP_DUMP_END."""
    index: int
    offset: int
    end: int
    records: int
    bytes: int
    subrecords: int
    instances: int
    object_arrays: int
    primitive_arrays: int
    classes: int
    gc_roots: int
    complete: bool

    @property
    def arrays(self) -> int:
        return self.object_arrays + self.primitive_arrays


@dataclass(frozen=True)
class UnfinishedDump:
    """A dump that was cut short: the first of its heap dumps that stops
    without its HEAP_DUMP_END (``index`` from 0 in file order, ``offset`` its
    first record, ``end`` just past its last: where it stops), and ``count``,
    how many heap dumps stop so."""
    index: int
    offset: int
    end: int
    count: int = 1

    def describe(self, name: str) -> str:
        """The one line that warns about it, for the dump called `name`."""
        more = f" (and {self.count - 1} more)" if self.count > 1 else ""
        return (f"{name} is incomplete: heap dump {self.index}{more} stops at offset {self.end:,} without its "
                f"HEAP_DUMP_END (the dump was cut short)")


def unfinished_of(raw: tuple[int, int, int, int] | None) -> UnfinishedDump | None:
    """The UnfinishedDump of a core codec's ``unfinished`` attribute."""
    return None if raw is None else UnfinishedDump(*raw)


def heap_dumps_of(raw: dict[str, Any]) -> list[HeapDump]:
    """The HeapDump list of a raw _hprof.stats result."""
    return [HeapDump(i, *fields) for i, fields in enumerate(raw["heap_dumps"])]


def _sorted(rows: list[ClassRow]) -> list[ClassRow]:
    return sorted(rows, key=lambda r: (-r.shallow_bytes, -r.instances, r.name))


class Stats:
    """Record and sub-record tallies, heap dumps and class histograms of one dump.

    A file may hold several heap dumps (the old hprof agent wrote two); one is
    *selected*, the first unless asked otherwise (``stats(heap_dump=N)``):
    ``subrecords``, the object totals (``instances``, ``arrays``, ``classes``,
    ``gc_roots``) and the histograms describe it, so they agree with each
    other.  ``records`` tallies every record of the file; ``heap_dumps`` lists
    every heap dump with its own counts; ``complete`` is False when one of
    them stops early (no HEAP_DUMP_END).

    The histograms are the record-level ones VisualVM prints: every object the
    dump holds, unreachable ones (garbage a dump without ``live`` keeps) too.
    ``heap.histogram()`` counts the reachable ones, as Eclipse MAT and every
    other hprofkit analysis do (docs/reference/behaviour.md).

    ``histogram`` covers all heaps, sorted by shallow bytes, largest first;
    ``heaps`` maps each heap name (Android: "app", "zygote", "image"; else
    "default") to its own histogram.  Shallow sizes follow VisualVM's model:
    an instance weighs its class's CLASS_DUMP instance size (HotSpot: plus a
    two-id header), an array its header plus elements, padded to 8 bytes.
    For 64-bit JDK 8+ dumps VisualVM also guesses a compressed-oops layout,
    which hprofkit does not.

    ``top_n`` (20 by default, settable) is how many rows ``str()`` and the
    notebook table show; ``format(top=...)`` and ``to_dict(top=...)`` take
    their own."""

    def __init__(self, raw: dict[str, Any], heap_dump: int | None = 0, mapping: Any = None) -> None:
        self.magic: str = raw["magic"]
        self.version: str = VERSION_NAMES[raw["version"]]
        self.id_size: int = raw["id_size"]
        self.timestamp: int = raw["timestamp"]
        self.size: int = raw["size"]
        self.complete: bool = raw["complete"]
        self.heap_dumps: list[HeapDump] = heap_dumps_of(raw)
        self.heap_dump: int | None = heap_dump if heap_dump is not None and heap_dump < len(self.heap_dumps) else None
        self.records = {record_name(t): Tally(*v) for t, v in sorted(raw["records"].items())}
        self.subrecords = {record_name(t, sub=True): Tally(*v) for t, v in sorted(raw["subrecords"].items())}
        self.record_tags = dict(raw["records"])
        self.subrecord_tags = dict(raw["subrecords"])
        heap_names = {heap_id: _hprof.decode_mutf8(name) if name is not None else HEAP_NAMES.get(heap_id, f"0x{heap_id:X}")
                      for heap_id, name in raw["heaps"]}
        # A class has a row per heap: decode (and deobfuscate) its name once.
        labels: dict[bytes | None, tuple[str, str | None]] = {}
        self.mapping = mapping
        self.mapping_matches = 0  # class names of the dump the mapping lists
        # (name, class id or None, heap, instances, shallow bytes, obfuscated name) per row of the core
        self._rows: list[tuple[str, int | None, str, int, int, str | None]] = []
        for class_id, elem_type, instances, shallow, name, heap_id in raw["histogram"]:
            obfuscated = None
            if elem_type not in (0, 2):
                label, ident = TYPE_NAMES.get(elem_type, f"type{elem_type}") + "[]", None
            elif name is None:
                label, ident = _hprof.unnamed_class(class_id), class_id
            else:
                if name not in labels:
                    labels[name] = self._label(name)
                label, obfuscated = labels[name]
                ident = class_id
            self._rows.append((label, ident, heap_names[heap_id], instances, shallow, obfuscated))
        if len(heap_names) <= 1:
            merged = [ClassRow(label, n, size, ident, None, obf) for label, ident, _, n, size, obf in self._rows]
        else:
            sums: dict[tuple[str, int | None, str | None], list[int]] = {}
            for label, ident, _, n, size, obf in self._rows:
                totals = sums.setdefault((label, ident, obf), [0, 0])
                totals[0] += n
                totals[1] += size
            merged = [ClassRow(label, n, size, ident, None, obf) for (label, ident, obf), (n, size) in sums.items()]
        self.histogram: list[ClassRow] = _sorted(merged)
        self._heaps: dict[str, list[ClassRow]] | None = None
        self._top_n = DEFAULT_TOP

    def _label(self, name: bytes) -> tuple[str, str | None]:
        """A class name of the dump (its bytes) as rows show it, and the
        obfuscated name when a mapping changed it."""
        java = _hprof.java_name(name)
        if self.mapping is None:
            return java, None
        clear = self.mapping.lookup_class(_hprof.decode_mutf8(name))
        if clear is None:
            return java, None
        self.mapping_matches += 1
        clear_java = _hprof.java_name(clear.encode("utf-8", "surrogatepass"))
        return (clear_java, java) if clear_java != java else (java, None)

    @property
    def heap_names(self) -> list[str]:
        """The names of the heaps that hold objects, in the order of heaps (without
        building their histograms: a million rows each)."""
        return list(dict.fromkeys(heap for _, _, heap, _, _, _ in self._rows))

    @property
    def heaps(self) -> dict[str, list[ClassRow]]:
        """The histogram of each heap that holds objects, by heap name."""
        if self._heaps is None:
            by_heap: dict[str, list[ClassRow]] = {}
            for label, ident, heap, n, size, obf in self._rows:
                by_heap.setdefault(heap, []).append(ClassRow(label, n, size, ident, heap, obf))
            self._heaps = {name: _sorted(rows) for name, rows in by_heap.items()}
        return self._heaps

    # -- totals of the selected heap dump ------------------------------------
    @property
    def _selected(self) -> HeapDump | None:
        return self.heap_dumps[self.heap_dump] if self.heap_dump is not None else None

    @property
    def instances(self) -> int:
        """INSTANCE_DUMP sub-records."""
        return self._selected.instances if self._selected else 0

    @property
    def arrays(self) -> int:
        """Object and primitive arrays (PRIMITIVE_ARRAY_NODATA included)."""
        return self._selected.arrays if self._selected else 0

    @property
    def classes(self) -> int:
        """CLASS_DUMP sub-records."""
        return self._selected.classes if self._selected else 0

    @property
    def gc_roots(self) -> int:
        """GC root sub-records of every kind."""
        return self._selected.gc_roots if self._selected else 0

    @property
    def shallow_bytes(self) -> int:
        return sum(r.shallow_bytes for r in self.histogram)

    @property
    def top_n(self) -> int:
        """Rows that str() and the notebook table show (a positive int)."""
        return self._top_n

    @top_n.setter
    def top_n(self, n: int) -> None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"top_n must be a positive int, not {n!r}")
        self._top_n = n

    def top(self, n: int, heap: str | None = None) -> list[ClassRow]:
        """The n heaviest histogram rows (of one heap, when named)."""
        return self.rows(heap)[:n]

    def rows(self, heap: str | None = None) -> list[ClassRow]:
        """The histogram of all heaps, or of the heap named `heap`."""
        if heap is None:
            return self.histogram
        if heap not in self.heaps:
            known = ", ".join(self.heaps) or "none"
            raise ValueError(f"no heap named {heap!r} in the heap dump (heaps: {known})")
        return self.heaps[heap]

    @property
    def heap_totals(self) -> dict[str, Tally]:
        """Objects (count) and shallow bytes per heap (summed from the rows, not from the
        per-heap histograms: a million classes would build and sort a million rows)."""
        sums: dict[str, list[int]] = {}
        for _, _, heap, n, size, _ in self._rows:
            totals = sums.setdefault(heap, [0, 0])
            totals[0] += n
            totals[1] += size
        return {name: Tally(n, size) for name, (n, size) in sums.items()}

    def incomplete_dumps(self) -> list[HeapDump]:
        """The heap dumps that stop without their HEAP_DUMP_END."""
        return [d for d in self.heap_dumps if not d.complete]

    @property
    def unfinished(self) -> UnfinishedDump | None:
        """The first heap dump that stops without its HEAP_DUMP_END and how
        many do (as encode(), convert() and decode() report it), or None."""
        incomplete = self.incomplete_dumps()
        if not incomplete:
            return None
        first = incomplete[0]
        return UnfinishedDump(first.index, first.offset, first.end, len(incomplete))

    # -- output -----------------------------------------------------------------
    def _headline(self) -> str:
        return (f"{self.instances:,} instances, {self.arrays:,} arrays, {self.classes:,} classes, "
                f"{self.gc_roots:,} GC roots")

    def _dump_label(self) -> str:
        """Which heap dump the figures describe, when the file has several."""
        if len(self.heap_dumps) < 2 or self.heap_dump is None:
            return ""
        return f"heap dump {self.heap_dump} of {len(self.heap_dumps)}: "

    def to_dict(self, top: int | None = None, heap: str | None = None) -> dict[str, Any]:
        """Plain data for JSON: the header fields; the totals of the selected
        heap dump (instances, arrays, classes, gc_roots) and its index
        (heap_dump); complete; heap_dumps, one object per heap dump; records
        and subrecords as {NAME: {"count", "bytes"}}; heaps as {NAME:
        {"instances", "shallow_size"}}; histogram (of all heaps, or of `heap`)
        as [{"class", "class_id", "instances", "shallow_size"}], the top
        `top` rows (all when None): the command line's one vocabulary; with
        a mapping each row also has "obfuscated", the name in the dump (null
        when the same)."""
        rows = self.rows(heap)
        rows = rows if top is None else rows[:top]
        return {
            "version": self.version,
            "id_size": self.id_size,
            "timestamp": self.timestamp,
            "size": self.size,
            "complete": self.complete,
            "heap_dump": self.heap_dump,
            "instances": self.instances,
            "arrays": self.arrays,
            "classes": self.classes,
            "gc_roots": self.gc_roots,
            "heap_dumps": [{"index": d.index, "offset": d.offset, "end": d.end, "records": d.records,
                            "bytes": d.bytes, "subrecords": d.subrecords, "instances": d.instances,
                            "arrays": d.arrays, "classes": d.classes, "gc_roots": d.gc_roots,
                            "complete": d.complete} for d in self.heap_dumps],
            "records": {k: {"count": v.count, "bytes": v.bytes} for k, v in self.records.items()},
            "subrecords": {k: {"count": v.count, "bytes": v.bytes} for k, v in self.subrecords.items()},
            "heaps": {name: {"instances": t.count, "shallow_size": t.bytes} for name, t in self.heap_totals.items()},
            "heap": heap,
            "histogram": [self._row_dict(r) for r in rows],
        }

    def _row_dict(self, row: ClassRow) -> dict[str, Any]:
        out = {"class": row.name, "class_id": row.class_id, "instances": row.instances,
               "shallow_size": row.shallow_bytes}
        if self.mapping is not None:  # with a mapping, what the dump calls it too
            out["obfuscated"] = row.obfuscated_name
        return out

    def format(self, top: int | None = None, heap: str | None = None) -> str:
        """A readable report: header, totals, tallies, and the top classes
        (of all heaps, or of `heap`); `top` defaults to top_n."""
        top = self.top_n if top is None else top
        rows = self.rows(heap)
        lines = [f"{self.magic}, id size {self.id_size}, {human_size(self.size)} "
                 f"({self._dump_label()}{self._headline()})"]
        lines += [f"INCOMPLETE: heap dump {d.index} stops at offset {d.end:,} without its HEAP_DUMP_END"
                  for d in self.incomplete_dumps()]
        lines += ["", f"{'record':<24}{'count':>12}{'bytes':>16}"]
        lines += [f"{k:<24}{v.count:>12,}{v.bytes:>16,}" for k, v in self.records.items()]
        lines += ["", f"{'heap sub-record':<24}{'count':>12}{'bytes':>16}"]
        lines += [f"{k:<24}{v.count:>12,}{v.bytes:>16,}" for k, v in self.subrecords.items()]
        if len(self.heaps) > 1:
            lines += ["", f"{'heap':<24}{'objects':>12}{'shallow bytes':>16}"]
            lines += [f"{name:<24}{t.count:>12,}{t.bytes:>16,}" for name, t in self.heap_totals.items()]
        if rows:
            where = f" in heap {heap}" if heap is not None else ""
            lines += ["", f"{'instances':>12}{'shallow bytes':>16}  class (top {min(top, len(rows))} "
                          f"of {len(rows):,}{where}; every object, unreachable ones too)"]
            lines += [f"{r.instances:>12,}{r.shallow_bytes:>16,}  {r.name}" for r in rows[:top]]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return (f"<Stats {self.magic} id_size={self.id_size} records={sum(v.count for v in self.records.values())}"
                f" subrecords={sum(v.count for v in self.subrecords.values())} classes={len(self.histogram)}"
                f"{'' if self.complete else ' INCOMPLETE'}>")

    def _repr_html_(self) -> str:
        from ._html import text as escape
        cell = "padding:0.1em 0.8em"

        def table(title: str, head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
            def td(i: int, c: Any) -> str:
                align = "left" if i == 0 else "right;font-variant-numeric:tabular-nums"
                text = f"{c:,}" if isinstance(c, int) else str(c)
                return f"<td style='{cell};text-align:{align}'>{escape(text)}</td>"
            header = "".join(f"<th style='{cell};text-align:{'left' if i == 0 else 'right'}'>{escape(h)}</th>"
                             for i, h in enumerate(head))
            body = "".join("<tr>" + "".join(td(i, c) for i, c in enumerate(row)) + "</tr>" for row in rows)
            return (f"<details open><summary>{escape(title)}</summary>"
                    f"<table><tr>{header}</tr>{body}</table></details>")

        top = self.top_n
        warning = "".join(f"<div><b>INCOMPLETE</b>: heap dump {d.index} stops at offset {d.end:,} without its "
                          f"HEAP_DUMP_END</div>" for d in self.incomplete_dumps())
        parts = [f"<div><b>{escape(self.magic)}</b>, id size {self.id_size}, {human_size(self.size)}: "
                 f"{escape(self._dump_label() + self._headline())}</div>", warning,
                 table("records", ("record", "count", "bytes"),
                       [(k, v.count, v.bytes) for k, v in self.records.items()]),
                 table("heap sub-records", ("sub-record", "count", "bytes"),
                       [(k, v.count, v.bytes) for k, v in self.subrecords.items()])]
        if len(self.heaps) > 1:
            parts.append(table("heaps", ("heap", "objects", "shallow bytes"),
                               [(name, t.count, t.bytes) for name, t in self.heap_totals.items()]))
        parts.append(table(f"top {min(top, len(self.histogram))} of {len(self.histogram):,} classes "
                           "(every object, unreachable ones too)",
                           ("class", "instances", "shallow bytes"),
                           [(r.name, r.instances, r.shallow_bytes) for r in self.histogram[:top]]))
        return "<div>" + "".join(parts) + "</div>"
