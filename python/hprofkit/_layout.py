"""heap.layout: the object layout behind a heap's shallow sizes, and what it
rests on (the rule: docs/reference/behaviour.md, "Shallow sizes")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ._hprof import Heap


@dataclass(frozen=True)
class Layout:
    """The object layout a Heap sizes objects by (heap.layout).

    size_model: the model asked for ('jvm', 'visualvm' or 'uncompressed');
    header: bytes of an object header; reference_size: bytes of a reference
    (4 with compressed oops); array_header: where an array's elements of 1 to
    4 bytes start (after the header and the 4-byte length); wide_array_header:
    where 8-byte ones start (long, double, 8-byte references); alignment:
    objects are rounded up to a multiple of it; class_header: bytes of a class
    object before its class's statics (HotSpot's java.lang.Class instance holds
    fields the JVM injects and HPROF does not list, then the statics, rounded up
    to 8), or None where a class object weighs a java.lang.Class instance
    (VisualVM's rule); compressed_class_pointers and
    compact_headers: what the header says of a 64-bit JVM (False on 32-bit
    ones); inferred: whether the dump's addresses gave the layout; source: what
    it rests on, in words."""

    size_model: str
    header: int
    reference_size: int
    array_header: int
    wide_array_header: int
    alignment: int
    class_header: Optional[int]
    compressed_class_pointers: bool
    compact_headers: bool
    inferred: bool
    source: str

    @classmethod
    def of(cls, heap: Heap) -> Layout:
        (model, id_size, header, reference_size, array_header, wide_array_header, alignment, mirror, raw, inferred,
         gaps, fits, fallback_fits, mirror_gaps, mirror_fits) = heap._layout()
        source = _source(model, bool(raw), bool(inferred), gaps, fits, fallback_fits)
        if inferred:
            source += f"; class objects: {_mirrors(mirror, mirror_gaps, mirror_fits)}"
        return cls(model, header, reference_size, array_header, wide_array_header, alignment, mirror or None,
                   id_size == 8 and header <= 12, id_size == 8 and header == 8, bool(inferred), source)

    def __str__(self) -> str:
        kind = ", compact headers" if self.compact_headers else (
            ", compressed class pointers" if self.compressed_class_pointers else "")
        return (f"{self.size_model}: header {self.header} B{kind}, references {self.reference_size} B, array "
                f"elements at {self.array_header} B (8-byte ones at {self.wide_array_header} B), "
                f"{'class objects ' + str(self.class_header) + ' B + statics, ' if self.class_header else ''}"
                f"aligned to {self.alignment} B; {self.source}")

    def __repr__(self) -> str:
        return f"<Layout {self}>"


def _source(model: str, raw: bool, inferred: bool, gaps: int, fits: int, fallback_fits: int) -> str:
    if raw:
        return "Android's object sizes, as the dump writes them (no inference needed)"
    if model == "uncompressed":
        return "references at id size (size_model='uncompressed')"
    if model == "visualvm":
        return "VisualVM's guess (size_model='visualvm')"
    if inferred:
        return (f"inferred from the addresses: fits {fits:,} of {gaps:,} gaps between consecutive objects "
                f"(VisualVM's guess fits {fallback_fits:,})")
    if 2 * fits >= gaps:
        return (f"VisualVM's guess: too few gaps between consecutive objects to tell ({gaps:,}, the best "
                f"layout fits {fits:,})")
    return (f"VisualVM's guess: the addresses show no layout (the best fits {fits:,} of {gaps:,} gaps "
            "between consecutive objects)")


def _mirrors(base: int, gaps: int, fits: int) -> str:
    if base:
        return f"{fits:,} of {gaps:,} gaps after them fit a header of {base} B and their statics"
    return f"a java.lang.Class instance each (the best header fits only {fits:,} of {gaps:,} gaps after them)"
