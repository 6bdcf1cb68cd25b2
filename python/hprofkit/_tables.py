"""A heap as Arrow tables, Parquet files and SQL (DuckDB).

    tables = heap.tables()                  # {name: pyarrow.Table}
    heap.to_parquet("out/")                 # out/objects.parquet, ...
    hprofkit.sql(heap, "select ...")        # a pyarrow.Table

The tables follow Perfetto's ``heap_graph_*`` tables:

- ``objects(id, class_id, kind, shallow_size, retained_size, heap, dominator_id)``: one row per object in
  id order; ``kind`` is "instance", "class", "object_array" or "primitive_array" (HeapObject.kind);
  ``class_id`` is the id of HeapObject.class_ (java.lang.Class for class objects), null when the dump lacks
  it; ``heap`` the Android heap name or null; ``retained_size`` is heap.retained_size(obj) (int64: 0 for
  an unreachable object; under semantics="visualvm" VisualVM's value) and ``dominator_id`` the id of
  heap.dominator(obj), null for a GC root, an object no single object dominates or an unreachable one
  (both computed under the heap's semantics; tables(retained=False) leaves them null).
- ``references(source_id, target_id, name)``: every outbound reference (HeapObject.references(), in
  source id order); ``name`` is the field name, "[i]" for an array element, the static's name or
  "<loader>"; ``target_id`` may name an object absent from the dump (a dangling reference).
- ``classes(id, name, super_id, loader_id, instance_size)``: one row per class (HeapClass);
  ``instance_size`` is null for array classes.
- ``roots(object_id, kind)``: every GC root in file order (Heap.gc_roots), kind as "JNI_GLOBAL"...
- ``class_retained(class_id, objects, shallow_size, retained_size)``: one row per class (in the order of
  ``classes``): its instances and arrays, their shallow bytes, and the bytes they retain together,
  heap.retained_by("class") (= HeapClass.instances_retained_size, VisualVM's retained size by class).
  That is the size of the union of their retained sets: summing ``objects.retained_size`` per class
  counts an object once for each instance of its class that it is under (docs/explore.md);
  tables(retained=False) leaves retained_size null.

Ids are uint64.  The big columns are filled by the C core into buffers that pyarrow wraps without a
copy (no Python object per row); names are dictionary-encoded."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping

from ._output import new_directory

if TYPE_CHECKING:
    import pyarrow as _pyarrow  # private: stubtest looks for public names at run time

    from ._heap import Heap

__all__ = ["tables", "to_parquet", "sql", "TABLE_NAMES"]

TABLE_NAMES = ("objects", "references", "classes", "roots", "class_retained")
KINDS = ("instance", "class", "object_array", "primitive_array")  # hp_kind order


def require(module: str, extra: str, what: str) -> Any:
    """Imports an optional dependency, or raises an ImportError saying which extra installs it."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what} needs {module.split('.')[0]}: pip install 'hprofkit[{extra}]' "
                          f"(or pip install {module.split('.')[0]})") from exc


def _pa():
    return require("pyarrow", "tables", "heap.tables()")


def _fixed(pa, type_, rows: int, data: bytes, valid: bytes | None = None):
    buffers = [pa.py_buffer(valid) if valid is not None else None, pa.py_buffer(data)]
    return pa.Array.from_buffers(type_, rows, buffers)


def _dictionary(pa, index_type, rows: int, codes: bytes, names, valid: bytes | None = None):
    indices = _fixed(pa, index_type, rows, codes, valid)
    values = names if isinstance(names, pa.Array) else pa.array(names, pa.string())
    return pa.DictionaryArray.from_arrays(indices, values)


def _objects(pa, heap: Heap, retained: bool):
    c = heap._columns("objects")
    n = len(c["id"]) // 8
    if retained:
        r = heap._columns("retained")
        retained_size = _fixed(pa, pa.int64(), n, r["retained_size"])
        dominator_id = _fixed(pa, pa.uint64(), n, r["dominator_id"], r["dominator_valid"])
    else:
        retained_size, dominator_id = pa.nulls(n, pa.int64()), pa.nulls(n, pa.uint64())
    return pa.table({
        "id": _fixed(pa, pa.uint64(), n, c["id"]),
        "class_id": _fixed(pa, pa.uint64(), n, c["class_id"], c["class_valid"]),
        "kind": _dictionary(pa, pa.int8(), n, c["kind"], KINDS),
        "shallow_size": _fixed(pa, pa.uint64(), n, c["shallow_size"]),
        "retained_size": retained_size,
        "heap": _dictionary(pa, pa.int16(), n, c["heap"], c["heap_names"], c["heap_valid"]),
        "dominator_id": dominator_id,
    })


def _references(pa, heap: Heap):
    c = heap._columns("references")
    n = len(c["source_id"]) // 8
    words = len(c["name_offsets"]) // 8 - 1
    names = pa.Array.from_buffers(pa.large_string(), words,
                                  [None, pa.py_buffer(c["name_offsets"]), pa.py_buffer(c["name_data"])])
    return pa.table({
        "source_id": _fixed(pa, pa.uint64(), n, c["source_id"]),
        "target_id": _fixed(pa, pa.uint64(), n, c["target_id"]),
        "name": _dictionary(pa, pa.int32(), n, c["name"], names, c["name_valid"]),
    })


def _classes(pa, heap: Heap):
    # One Python object per class (thousands), not per object.
    classes = heap.classes
    return pa.table({
        "id": pa.array([c.class_id for c in classes], pa.uint64()),
        "name": pa.array([c.name for c in classes], pa.string()),
        "super_id": pa.array([c.superclass.class_id if c.superclass is not None else None for c in classes],
                             pa.uint64()),
        "loader_id": pa.array([c.loader.id if c.loader is not None else None for c in classes], pa.uint64()),
        "instance_size": pa.array([c.instance_size for c in classes], pa.uint64()),
    })


def _roots(pa, heap: Heap):
    c = heap._columns("roots")
    n = len(c["object_id"]) // 8
    return pa.table({
        "object_id": _fixed(pa, pa.uint64(), n, c["object_id"]),
        "kind": _dictionary(pa, pa.int8(), n, c["kind"], c["kind_names"]),
    })


def _class_retained(pa, heap: Heap, objects, retained: bool):
    classes = heap.classes
    ids = pa.array([c.class_id for c in classes], pa.uint64())
    if retained:
        groups = {g.key.ordinal: g for g in heap.retained_by("class")}
        totals = [groups.get(c.ordinal) for c in classes]
        return pa.table({
            "class_id": ids,
            "objects": pa.array([g.objects if g else 0 for g in totals], pa.uint64()),
            "shallow_size": pa.array([g.shallow_size if g else 0 for g in totals], pa.uint64()),
            "retained_size": pa.array([g.retained_size if g else 0 for g in totals], pa.int64()),
        })
    # Without the dominators: the counts from the objects table (a class object is no instance).
    import pyarrow.compute as pc
    instances = objects.filter(pc.not_equal(objects.column("kind").cast(pa.string()), "class"))
    sums = {row["class_id"]: row for row in instances.group_by("class_id").aggregate(
        [("id", "count"), ("shallow_size", "sum")]).to_pylist()}
    rows = [sums.get(c.class_id, {}) for c in classes]
    return pa.table({
        "class_id": ids,
        "objects": pa.array([row.get("id_count", 0) for row in rows], pa.uint64()),
        "shallow_size": pa.array([row.get("shallow_size_sum", 0) for row in rows], pa.uint64()),
        "retained_size": pa.nulls(len(classes), pa.int64()),
    })


def tables(heap: Heap, *, retained: bool = True, progress: Any = None) -> dict[str, _pyarrow.Table]:
    """heap.tables(): {"objects", "references", "classes", "roots", "class_retained"} as pyarrow Tables
    (module doc).  retained=False leaves the retained sizes and dominator_id null and skips the
    dominator tree.  progress: as open_heap takes it (the "tables" stage: one step a table, the
    dominators first when retained)."""
    from ._progress import reporting
    pa = _pa()
    with reporting(progress) as reporter:
        if retained and reporter is not None:
            heap.compute_retained(progress=reporter)
        made: dict[str, Any] = {}
        builds = {"objects": lambda: _objects(pa, heap, retained), "references": lambda: _references(pa, heap),
                  "classes": lambda: _classes(pa, heap), "roots": lambda: _roots(pa, heap),
                  "class_retained": lambda: _class_retained(pa, heap, made["objects"], retained)}
        for done, (name, build) in enumerate(builds.items()):
            if reporter is not None:
                reporter(done, len(builds), "tables")
            made[name] = build()
        if reporter is not None:
            reporter(len(builds), len(builds), "tables")
    return made


def to_parquet(heap: Heap | Mapping[str, _pyarrow.Table], directory: str | os.PathLike[str]) -> str:
    """heap.to_parquet(dir): writes dir/objects.parquet, references.parquet, classes.parquet,
    roots.parquet and class_retained.parquet.  Atomic: written into a temporary directory beside
    `dir`, then renamed, so `dir` either holds all the files or is not created; an existing `dir` is an error (FileExistsError).
    Returns the directory."""
    require("pyarrow", "tables", "to_parquet()")
    parquet = require("pyarrow.parquet", "tables", "to_parquet()")
    directory = os.fspath(directory)
    with new_directory(directory) as tmp:  # refuses an existing name before the tables are built
        data = heap if isinstance(heap, Mapping) else tables(heap)
        for name, table in data.items():
            parquet.write_table(table, os.path.join(tmp, name + ".parquet"))
    return directory


def sql(heap: Heap | Mapping[str, _pyarrow.Table], query: str, params: Any = None) -> _pyarrow.Table:
    """Runs DuckDB SQL over a heap's tables (objects, references, classes, roots, class_retained) and
    returns the result as a pyarrow Table (``.to_pandas()``, ``.to_pylist()``...).

    Pass ``heap.tables()`` instead of the heap to build the tables once for many queries.  Each call
    uses its own in-memory DuckDB connection, so the result does not depend on anything left open;
    ``params`` are the query's ``?`` / ``$name`` parameters.  ``references`` is a reserved word in
    SQL: write ``"references"`` or its alias ``refs``."""
    duckdb = require("duckdb", "tables", "hprofkit.sql()")
    data = heap if isinstance(heap, Mapping) else tables(heap)
    with duckdb.connect(":memory:") as con:
        for name, table in data.items():
            con.register(name, table)
        if "references" in data:  # a reserved word in SQL: "references" needs quotes, refs does not
            con.register("refs", data["references"])
        relation = con.sql(query, params=params)
        if relation is None:  # a statement without a result (SET, CREATE...)
            return _pa().table({})
        # DuckDB 2 renamed arrow() to to_arrow_table().
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        return fetch()
