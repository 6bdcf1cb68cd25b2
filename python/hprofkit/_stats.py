"""Statistics of a dump: counts and bytes per record tag and per heap
sub-tag, and a class histogram.  Built from the plain values that the C core
returns (hprofkit._hprof.stats)."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from . import _hprof
from ._names import array_name, decode_utf8, java_name
from ._units import human_size

VERSION_NAMES = {0: "1.0", 1: "1.0.1", 2: "1.0.2", 3: "1.0.3"}
ROOT_SUBTAGS = {0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90}


def record_name(tag: int, sub: bool = False) -> str:
    """Tailor's name for a tag, or UNKNOWN_0xNN."""
    return _hprof.tag_name(tag, sub=sub) or f"UNKNOWN_0x{tag:02X}"


@dataclass(frozen=True)
class Tally:
    """How many records of one tag, and their bytes (record heads and tags included)."""
    count: int
    bytes: int


@dataclass(frozen=True)
class ClassRow:
    """One histogram row: a class (or primitive array type) and its objects."""
    name: str
    instances: int
    shallow_bytes: int
    class_id: int | None = None


class Stats:
    """Record and sub-record tallies plus the class histogram of one dump.

    ``records`` and ``subrecords`` map tag names to Tally; ``histogram`` is
    sorted by shallow bytes, largest first.  Shallow sizes follow VisualVM's
    model: an instance weighs its class's CLASS_DUMP instance size (HotSpot:
    plus a two-id header), an array its header plus elements, padded to 8
    bytes.  For 64-bit JDK 8+ dumps VisualVM also guesses a compressed-oops
    layout, which hprofkit does not.  A file holding several heap dumps (the
    old hprof agent wrote two) is histogrammed on its first, as analyzers do;
    the tallies count every record."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.magic: str = raw["magic"]
        self.version: str = VERSION_NAMES[raw["version"]]
        self.id_size: int = raw["id_size"]
        self.timestamp: int = raw["timestamp"]
        self.size: int = raw["size"]
        self.heap_dumps: int = raw["heap_dumps"]
        self.records = {record_name(t): Tally(*v) for t, v in sorted(raw["records"].items())}
        self.subrecords = {record_name(t, sub=True): Tally(*v) for t, v in sorted(raw["subrecords"].items())}
        self.record_tags = dict(raw["records"])
        self.subrecord_tags = dict(raw["subrecords"])
        rows = []
        for class_id, elem_type, instances, shallow, name in raw["histogram"]:
            if elem_type not in (0, 2):
                rows.append(ClassRow(array_name(elem_type), instances, shallow, None))
            else:
                label = java_name(decode_utf8(name)) if name is not None else f"<unknown class 0x{class_id:x}>"
                rows.append(ClassRow(label, instances, shallow, class_id))
        rows.sort(key=lambda r: (-r.shallow_bytes, -r.instances, r.name))
        self.histogram: list[ClassRow] = rows

    # -- totals ---------------------------------------------------------------
    def _sub_count(self, *tags: int) -> int:
        return sum(self.subrecord_tags.get(t, (0, 0))[0] for t in tags)

    @property
    def instances(self) -> int:
        """INSTANCE_DUMP sub-records."""
        return self._sub_count(0x21)

    @property
    def arrays(self) -> int:
        """Object and primitive arrays (PRIMITIVE_ARRAY_NODATA included)."""
        return self._sub_count(0x22, 0x23, 0xC3)

    @property
    def classes(self) -> int:
        """CLASS_DUMP sub-records."""
        return self._sub_count(0x20)

    @property
    def gc_roots(self) -> int:
        """GC root sub-records of every kind."""
        return self._sub_count(*ROOT_SUBTAGS)

    @property
    def shallow_bytes(self) -> int:
        return sum(r.shallow_bytes for r in self.histogram)

    def top(self, n: int) -> list[ClassRow]:
        """The n heaviest histogram rows."""
        return self.histogram[:n]

    # -- output -----------------------------------------------------------------
    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        """Plain data for JSON: version, id_size, records and subrecords as
        {NAME: {"count", "bytes"}}, histogram as [{"class", "instances", "shallow_bytes"}]."""
        rows = self.histogram if top is None else self.histogram[:top]
        return {
            "version": self.version,
            "id_size": self.id_size,
            "timestamp": self.timestamp,
            "size": self.size,
            "records": {k: {"count": v.count, "bytes": v.bytes} for k, v in self.records.items()},
            "subrecords": {k: {"count": v.count, "bytes": v.bytes} for k, v in self.subrecords.items()},
            "histogram": [{"class": r.name, "instances": r.instances, "shallow_bytes": r.shallow_bytes}
                          for r in rows],
        }

    def format(self, top: int = 20) -> str:
        """A readable report: header, tallies, and the top classes."""
        lines = [f"{self.magic}, id size {self.id_size}, {human_size(self.size)} "
                 f"({self.instances:,} instances, {self.arrays:,} arrays, {self.classes:,} classes, "
                 f"{self.gc_roots:,} GC roots)", "", f"{'record':<24}{'count':>12}{'bytes':>16}"]
        lines += [f"{k:<24}{v.count:>12,}{v.bytes:>16,}" for k, v in self.records.items()]
        lines += ["", f"{'heap sub-record':<24}{'count':>12}{'bytes':>16}"]
        lines += [f"{k:<24}{v.count:>12,}{v.bytes:>16,}" for k, v in self.subrecords.items()]
        if self.histogram:
            lines += ["", f"{'instances':>12}{'shallow bytes':>16}  class (top {min(top, len(self.histogram))} "
                          f"of {len(self.histogram):,})"]
            lines += [f"{r.instances:>12,}{r.shallow_bytes:>16,}  {r.name}" for r in self.histogram[:top]]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return (f"<Stats {self.magic} id_size={self.id_size} records={sum(v.count for v in self.records.values())}"
                f" subrecords={sum(v.count for v in self.subrecords.values())} classes={len(self.histogram)}>")

    def _repr_html_(self, top: int = 20) -> str:
        def table(title: str, head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
            cells = "".join("<tr>" + "".join(
                f"<td style='text-align:{'left' if i == 0 else 'right'}'>"
                f"{html.escape(f'{c:,}' if isinstance(c, int) else str(c))}</td>"
                for i, c in enumerate(row)) + "</tr>" for row in rows)
            header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
            return f"<details open><summary>{html.escape(title)}</summary><table><tr>{header}</tr>{cells}</table></details>"

        return (f"<div><b>{html.escape(self.magic)}</b>, id size {self.id_size}, {human_size(self.size)}"
                + table("records", ("record", "count", "bytes"),
                        [(k, v.count, v.bytes) for k, v in self.records.items()])
                + table("heap sub-records", ("sub-record", "count", "bytes"),
                        [(k, v.count, v.bytes) for k, v in self.subrecords.items()])
                + table(f"top {top} classes", ("class", "instances", "shallow bytes"),
                        [(r.name, r.instances, r.shallow_bytes) for r in self.histogram[:top]])
                + "</div>")
