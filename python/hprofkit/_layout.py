"""heap.layout: the object layout behind a heap's shallow sizes, and what it
rests on (the rule: docs/reference/behaviour.md, "Shallow sizes")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    objects are rounded up to a multiple of it; compressed_class_pointers and
    compact_headers: what the header says of a 64-bit JVM (False on 32-bit
    ones); inferred: whether the dump's addresses gave the layout; source: what
    it rests on, in words."""

    size_model: str
    header: int
    reference_size: int
    array_header: int
    wide_array_header: int
    alignment: int
    compressed_class_pointers: bool
    compact_headers: bool
    inferred: bool
    source: str

    @classmethod
    def of(cls, heap: Heap) -> Layout:
        (model, id_size, header, reference_size, array_header, wide_array_header, alignment, raw, inferred, gaps,
         fits, fallback_fits) = heap._layout()
        return cls(model, header, reference_size, array_header, wide_array_header, alignment,
                   id_size == 8 and header <= 12, id_size == 8 and header == 8, bool(inferred),
                   _source(model, bool(raw), bool(inferred), gaps, fits, fallback_fits))

    def __str__(self) -> str:
        kind = ", compact headers" if self.compact_headers else (
            ", compressed class pointers" if self.compressed_class_pointers else "")
        return (f"{self.size_model}: header {self.header} B{kind}, references {self.reference_size} B, array "
                f"elements at {self.array_header} B (8-byte ones at {self.wide_array_header} B), aligned to "
                f"{self.alignment} B; {self.source}")

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
