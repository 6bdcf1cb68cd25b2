"""The report's object table: every object a section names is one row,
shared by all sections (they name it by its row number), with what the page
shows of it: id, class, kind, sizes and a short preview of its value.  And
paths from GC roots, in the form the page draws them.

Everything here comes from the dump and is untrusted: the page inserts it as
text, never as markup (report.js), and page.py escapes the JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

if TYPE_CHECKING:
    from .._heap import Heap, HeapObject
    from .._reach import HeapPath, NoPath

# A String's text is shown up to this many characters (then "…"); a String
# longer than DECODE_CHARS is not even decoded (memory stays bounded).
PREVIEW_CHARS = 120
DECODE_CHARS = 1 << 20
# Hops a path (or a dominator chain) keeps at each end; those between are counted, not listed.
PATH_ENDS = 12

# A string from the dump (a class or field name, a label...) is cut at this
# many characters on the page: a hostile dump cannot make the page big.
MAX_TEXT = 300

# Named as every --json of the command line names them.
OBJECT_COLUMNS = ("id", "class", "kind", "shallow_size", "retained_size", "retained_count", "preview")

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
        return string_preview(obj)
    return None


def string_preview(obj: HeapObject) -> Optional[str]:
    """A String's text in quotes, cut at PREVIEW_CHARS; a String over
    DECODE_CHARS long is not decoded (only its length shown)."""
    try:
        value = obj["value"]
    except (KeyError, TypeError, ValueError):
        value = None
    if value is not None and hasattr(value, "kind") and value.kind == "primitive_array" and len(value) > DECODE_CHARS:
        return f"({len(value):,}-long text, not shown)"
    try:
        text = obj.as_str()
    except (TypeError, ValueError):
        return None
    if text is None:
        return None
    cut = text[:PREVIEW_CHARS]
    return '"' + cut + ('"' if len(cut) == len(text) else f'…" ({len(text):,} chars)')


def class_label(obj: HeapObject) -> str:
    """The class an object is shown and counted under: a class object under java.lang.Class."""
    return "java.lang.Class" if obj.kind == "class" else obj.class_name


class ObjectTable:
    """Rows of OBJECT_COLUMNS, one per object named anywhere in the report."""

    def __init__(self, heap: Heap, retained: bool = True) -> None:
        self.heap = heap
        self.retained = retained  # False: retained_size and retained_count None (no dominator tree)
        self.rows: list[list[Any]] = []
        self._row_of: dict[int, int] = {}

    def row(self, obj: HeapObject) -> int:
        """The row number of obj (added on first use)."""
        found = self._row_of.get(obj.id)
        if found is not None:
            return found
        heap = self.heap
        self._row_of[obj.id] = len(self.rows)
        self.rows.append([f"{obj.id:x}", class_label(obj), obj.kind,
                          obj.shallow_size, heap.retained_size(obj) if self.retained else None,
                          heap.retained_count(obj) if self.retained else None, preview(obj)])
        return self._row_of[obj.id]

    def to_json(self) -> dict[str, Any]:
        return {"columns": list(OBJECT_COLUMNS), "rows": self.rows}


def bounded(data: Any) -> Any:
    """data with every string longer than MAX_TEXT cut (and "…" added)."""
    if isinstance(data, str):
        return data if len(data) <= MAX_TEXT else data[:MAX_TEXT] + "…"
    if isinstance(data, list):
        return [bounded(item) for item in data]
    if isinstance(data, dict):
        return {key: bounded(value) for key, value in data.items()}
    return data


def cut_ends(items: Sequence[Any]) -> list[Any]:
    """A long list as its PATH_ENDS first and last items with the count of
    those between (an int) in the middle; a short one as it is."""
    if len(items) <= 2 * PATH_ENDS + 1:
        return list(items)
    return list(items[:PATH_ENDS]) + [len(items) - 2 * PATH_ENDS] + list(items[-PATH_ENDS:])


def path_data(table: ObjectTable, path: Union[HeapPath, NoPath, None]) -> Optional[PathData]:
    """A path's hops as [ref_type, name, row of the object reached], cut at its ends."""
    if not path:  # None, or (with a search that says why) a false NoPath
        return None
    return [hop if isinstance(hop, int) else [hop.ref_type, hop.name or "", table.row(hop.target)]
            for hop in cut_ends(path.hops)]


def paths_of(table: ObjectTable, objects: Iterable[HeapObject]) -> dict[str, Optional[PathData]]:
    """{object row: path data} for objects: their shortest paths from GC
    roots in the graph the dominators are computed on (the heap's semantics;
    no matcher: leak traces apply LeakCanary's, this is MAT's "path to GC
    roots").  One search gives each object the path a search for it alone
    gives (a path to one may pass through another); None where it has none."""
    heap = table.heap
    objects = list(objects)
    found = heap.paths_to_root(objects, exclude=())
    return {str(table.row(obj)): path_data(table, path) for obj, path in zip(objects, found)}
