"""The report's object table: every object a section names is one row,
shared by all sections (they name it by its row number), with what the page
shows of it: id, class, kind, sizes and a short preview of its value.  And
paths from GC roots, in the form the page draws them.

Everything here comes from the dump and is untrusted: the page inserts it as
text, never as markup (report.js), and page.py escapes the JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, Union

if TYPE_CHECKING:
    from .._hprof import Heap, HeapObject
    from .._reach import Path

# A String's text is shown up to this many characters (then "…").
PREVIEW_CHARS = 120
# Hops a path keeps at each end; the hops between are counted, not listed.
PATH_ENDS = 12

OBJECT_COLUMNS = ("id", "class", "kind", "shallow", "retained", "retained_count", "preview")

# A path as the page gets it: hops [ref_type, name, object row], root first;
# an int in the list stands for that many hops left out.
PathData = list[Union[list[Any], int]]


def preview(obj: HeapObject) -> Optional[str]:
    """What the page shows beside the class name: a String's text (cut at
    PREVIEW_CHARS), an array's length, a class object's name."""
    kind = obj.kind
    if kind == "class":
        return getattr(obj, "name", None)
    if kind in ("object_array", "primitive_array"):
        return f"length {len(obj):,}"
    if obj.class_name == "java.lang.String":
        try:
            text = obj.as_str()
        except (TypeError, ValueError):
            return None
        if text is None:
            return None
        return repr_text(text)
    return None


def repr_text(text: str) -> str:
    cut = text[:PREVIEW_CHARS]
    return '"' + cut + ('"' if len(cut) == len(text) else f'…" ({len(text):,} chars)')


class ObjectTable:
    """Rows of OBJECT_COLUMNS, one per object named anywhere in the report."""

    def __init__(self, heap: Heap) -> None:
        self.heap = heap
        self.rows: list[list[Any]] = []
        self._row_of: dict[int, int] = {}

    def row(self, obj: HeapObject) -> int:
        """The row number of obj (added on first use)."""
        found = self._row_of.get(obj.id)
        if found is not None:
            return found
        heap = self.heap
        self._row_of[obj.id] = len(self.rows)
        self.rows.append([f"{obj.id:x}", obj.class_name if obj.kind != "class" else "java.lang.Class", obj.kind,
                          obj.shallow_size, heap.retained_size(obj), heap.retained_count(obj), preview(obj)])
        return self._row_of[obj.id]

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(OBJECT_COLUMNS), "rows": self.rows}


def path_data(table: ObjectTable, path: Optional[Path]) -> Optional[PathData]:
    """A path's hops as [ref_type, name, row of the object reached]; a long
    path keeps PATH_ENDS hops at each end and the count of those between."""
    if path is None:
        return None
    hops = path.hops
    if len(hops) > 2 * PATH_ENDS + 1:
        kept: list[Any] = list(hops[:PATH_ENDS]) + [len(hops) - 2 * PATH_ENDS] + list(hops[-PATH_ENDS:])
    else:
        kept = list(hops)
    out: PathData = []
    for hop in kept:
        if isinstance(hop, int):
            out.append(hop)
        else:
            out.append([hop.ref_type, hop.name or "", table.row(hop.target)])
    return out


def paths_of(table: ObjectTable, objects: Iterable[HeapObject]) -> dict[str, Optional[PathData]]:
    """{object row: path data} for objects, found by one search (the
    shortest strong paths, the heap's default matchers excluded)."""
    from ..leaks import default_exclude
    objects = list(objects)
    if not objects:
        return {}
    found = table.heap.paths_to_root(objects, exclude=default_exclude(table.heap))
    return {str(table.row(obj)): path_data(table, path) for obj, path in zip(objects, found)}
