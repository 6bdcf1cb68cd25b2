"""Heaps as Arrow tables, Parquet files and SQL (DuckDB); docs/sql.md describes every column.

    tables = heap.tables()                       # {name: pyarrow.Table}
    tables = hprofkit.tables(["a.hprof", b])     # many dumps: a `dump` column, and a `dumps` table
    hprofkit.to_parquet(paths, "out/")           # out/objects.parquet, ... one dump in memory at a time
    hprofkit.sql(tables, "select ...")           # a pyarrow.Table
    con = hprofkit.connect("out/")               # a DuckDB connection with the tables and the views

hprofkit's tables (the Python API's values, row for row):

- ``objects(id, class_id, kind, shallow_size, retained_size, heap, dominator_id, reachable,
  root_distance, root_type, array_length, array_hash, array_nulls, array_refs_hash,
  array_trailing_zeros, string_length, value_string)``
- ``references(source_id, target_id, name, qualified_name)``
- ``classes(id, name, super_id, loader_id, instance_size, kind)``
- ``roots(object_id, kind)``
- ``class_retained(class_id, objects, shallow_size, retained_size)``: one row per class (in the
  order of ``classes``): its instances and arrays, their shallow bytes, and the bytes they retain
  together, heap.retained_by("class") (= HeapClass.instances_retained_size, VisualVM's retained
  size by class).  That is the size of the union of their retained sets: summing
  ``objects.retained_size`` per class counts an object once for each instance of its class that
  it is under (docs/sql.md, docs/explore.md)
- ``fields(object_id, name, qualified_name, type, int_value, double_value)`` with fields=True

and, in SQL, Perfetto's ``heap_graph_object``, ``heap_graph_class``, ``heap_graph_reference``,
``heap_graph_object_data`` and (fields=True) ``heap_graph_primitive`` as views over them (_perfetto_views),
so that Perfetto's queries run unchanged.  Ids and sizes are int64.  The columns are filled by the C
core into buffers that pyarrow wraps without a copy (no Python object per row, class or name)."""

from __future__ import annotations

import mmap
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, Union, cast

from ._output import new_directory

if TYPE_CHECKING:
    import duckdb as _duckdb
    import pyarrow as _pyarrow  # private: stubtest looks for public names at run time
    from typing_extensions import Buffer, TypeGuard

    from ._heap import Heap

__all__ = ["tables", "to_parquet", "sql", "connect", "TABLE_NAMES", "MAX_CHARS"]

TABLE_NAMES = ("objects", "references", "classes", "roots", "class_retained")
MAX_CHARS = 1024  # String characters (UTF-16 units) value_string keeps by default
KINDS = ("instance", "class", "object_array", "primitive_array")  # hp_kind order
FIELD_TYPES = ("boolean", "char", "float", "double", "byte", "short", "int", "long")  # HP_T_* - 4
ID_BITS = 48  # the Perfetto views' ids over many dumps: dump << 48 | id

Source = Union["Heap", str, "os.PathLike[str]"]
# What connect() and sql() read: tables already built, a Parquet directory to_parquet() wrote,
# or what tables() takes.
Tables = Union[Source, Iterable[Source], Mapping[str, "_pyarrow.Table"]]
# The C core's columns (Heap._columns): buffers, lists of them, and its dictionaries by name.
Columns = dict[str, Any]
# Memory the core filled and handed over: (address, size, the object that frees it).
Owned = tuple[int, int, object]
# A dictionary array's values: an Arrow array, or names in code order.
Names = Union["_pyarrow.Array", Sequence[str]]


def require(module: str, extra: str, what: str) -> ModuleType:
    """Imports an optional dependency, or raises an ImportError saying which extra installs it."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what} needs {module.split('.')[0]}: pip install 'hprofkit[{extra}]' "
                          f"(or pip install {module.split('.')[0]})") from exc


def _pa() -> ModuleType:
    return require("pyarrow", "tables", "heap.tables()")


# ---- arrays over the core's buffers ----------------------------------------------------------

def _fixed(pa: ModuleType, type_: _pyarrow.DataType, rows: int, data: Buffer,
           valid: Buffer | None = None) -> _pyarrow.Array:
    buffers = [pa.py_buffer(valid) if valid is not None else None, pa.py_buffer(data)]
    return pa.Array.from_buffers(type_, rows, buffers)


def _owned(pa: ModuleType, chunk: Owned) -> _pyarrow.Buffer:
    """Memory the core filled and handed over as (address, size, owner): the owner frees it
    when the buffer goes."""
    address, size, owner = chunk
    return pa.foreign_buffer(address, size, base=owner)


def _text(pa: ModuleType, entry: tuple[Owned, Owned, int]) -> _pyarrow.Array:
    """A dictionary the core collected: (int64 offsets, bytes, count) as a large_string array."""
    offsets, data, count = entry
    return pa.Array.from_buffers(pa.large_string(), count, [None, _owned(pa, offsets), _owned(pa, data)])


def _dictionary(pa: ModuleType, index_type: _pyarrow.DataType, rows: int, codes: Buffer, names: Names,
                valid: Buffer | None = None) -> _pyarrow.DictionaryArray:
    values = names if isinstance(names, pa.Array) else pa.array(names, pa.string())
    # safe=False: the core wrote every code below the dictionary's length (no pass to check them)
    return pa.DictionaryArray.from_arrays(_fixed(pa, index_type, rows, codes, valid), values, safe=False)


class _Nulls:
    """All-null columns of one length sharing one buffer of zeros that the kernel maps lazily
    (tables(retained=False) costs no memory for the columns it leaves empty)."""

    def __init__(self, pa: ModuleType, rows: int) -> None:
        self.pa, self.rows = pa, rows
        self.zeros = pa.py_buffer(mmap.mmap(-1, max(rows * 8, 1)))

    def __call__(self, type_: _pyarrow.DataType) -> _pyarrow.Array:
        return self.pa.Array.from_buffers(type_, self.rows, [self.zeros, self.zeros], null_count=self.rows)


# ---- one heap's tables ---------------------------------------------------------------------------

def _objects(pa: ModuleType, raw: Columns, dicts: Columns, retained: bool) -> _pyarrow.Table:
    o, s = raw["objects"], raw["strings"]
    n = len(o["id"]) // 8
    nulls = _Nulls(pa, n)
    if retained:
        r = raw["reach"]
        reach = {
            "retained_size": _fixed(pa, pa.int64(), n, r["retained_size"]),
            "dominator_id": _fixed(pa, pa.int64(), n, r["dominator_id"], r["dominator_valid"]),
            "reachable": _fixed(pa, pa.bool_(), n, r["reachable"]),
            "root_distance": _fixed(pa, pa.int32(), n, r["root_distance"]),
        }
    else:
        reach = {"retained_size": nulls(pa.int64()), "dominator_id": nulls(pa.int64()),
                 "reachable": nulls(pa.bool_()), "root_distance": nulls(pa.int32())}
    # String values: one chunk per slice of rows (each chunk's text has its own offsets).
    step, valid = s["slice_rows"], pa.py_buffer(s["string_valid"])
    chunks = [pa.Array.from_buffers(pa.string(), min(step, n - k * step),
                                    [valid.slice(k * step // 8), _owned(pa, offsets), _owned(pa, data)])
              for k, (offsets, data) in enumerate(zip(s["value_offsets"], s["value_data"]))]
    return pa.table({
        "id": _fixed(pa, pa.int64(), n, o["id"]),
        "class_id": _fixed(pa, pa.int64(), n, o["class_id"], o["class_valid"]),
        "kind": _dictionary(pa, pa.int8(), n, o["kind"], KINDS),
        "shallow_size": _fixed(pa, pa.int64(), n, o["shallow_size"]),
        "retained_size": reach["retained_size"],
        "heap": _dictionary(pa, pa.int16(), n, o["heap"], _text(pa, dicts["heaps"]), o["heap_valid"]),
        "dominator_id": reach["dominator_id"],
        "reachable": reach["reachable"],
        "root_distance": reach["root_distance"],
        "root_type": _dictionary(pa, pa.int8(), n, o["root_type"], _text(pa, dicts["root_kinds"]), o["root_valid"]),
        "array_length": _fixed(pa, pa.int64(), n, o["array_length"], o["array_valid"]),
        "array_hash": _fixed(pa, pa.int64(), n, o["array_hash"], o["hash_valid"]),
        "array_nulls": _fixed(pa, pa.int64(), n, o["array_nulls"], o["nulls_valid"]),
        "array_refs_hash": _fixed(pa, pa.int64(), n, o["array_refs_hash"], o["nulls_valid"]),
        "array_trailing_zeros": _fixed(pa, pa.int64(), n, o["array_trailing_zeros"], o["zeros_valid"]),
        "string_length": _fixed(pa, pa.int64(), n, s["string_length"], s["string_valid"]),
        "value_string": pa.chunked_array(chunks, pa.string()),
    })


def _references(pa: ModuleType, c: Columns, names: _pyarrow.Array) -> _pyarrow.Table:
    """One chunk per slice of objects (the core fills each at its bound, then trims it)."""
    columns: dict[str, list[_pyarrow.Array]] = {
        name: [] for name in ("source_id", "target_id", "name", "qualified_name")}
    for k, source in enumerate(c["source_id"]):
        n = len(source) // 8
        columns["source_id"].append(_fixed(pa, pa.int64(), n, source))
        columns["target_id"].append(_fixed(pa, pa.int64(), n, c["target_id"][k]))
        columns["name"].append(_dictionary(pa, pa.int32(), n, c["name"][k], names, c["name_valid"][k]))
        columns["qualified_name"].append(_dictionary(pa, pa.int32(), n, c["qualified"][k], names,
                                                     c["qualified_valid"][k]))
    types = {"source_id": pa.int64(), "target_id": pa.int64(), "name": pa.dictionary(pa.int32(), pa.large_string()),
             "qualified_name": pa.dictionary(pa.int32(), pa.large_string())}
    return pa.table({name: pa.chunked_array(chunks, types[name]) for name, chunks in columns.items()})


def _classes(pa: ModuleType, c: Columns, class_names: _pyarrow.Array, kinds: Names) -> _pyarrow.Table:
    n = len(c["id"]) // 8
    return pa.table({
        "id": _fixed(pa, pa.int64(), n, c["id"]),
        "name": _dictionary(pa, pa.int32(), n, c["name"], class_names).dictionary_decode().cast(pa.string()),
        "obfuscated_name": _dictionary(pa, pa.int32(), n, c["dump_name"], class_names).dictionary_decode()
        .cast(pa.string()),
        "super_id": _fixed(pa, pa.int64(), n, c["super_id"], c["super_valid"]),
        "loader_id": _fixed(pa, pa.int64(), n, c["loader_id"], c["loader_valid"]),
        "instance_size": _fixed(pa, pa.int64(), n, c["instance_size"], c["size_valid"]),
        "kind": _dictionary(pa, pa.int8(), n, c["kind"], kinds),
    })


def _roots(pa: ModuleType, c: Columns, kinds: Names) -> _pyarrow.Table:
    n = len(c["object_id"]) // 8
    return pa.table({
        "object_id": _fixed(pa, pa.int64(), n, c["object_id"]),
        "kind": _dictionary(pa, pa.int8(), n, c["kind"], kinds),
    })


def _class_retained(pa: ModuleType, raw: Columns, classes: _pyarrow.Table, retained: bool) -> _pyarrow.Table:
    n = classes.num_rows
    o = raw["objects"]
    return pa.table({
        "class_id": classes.column("id"),
        "objects": _fixed(pa, pa.int64(), n, o["class_objects"]),
        "shallow_size": _fixed(pa, pa.int64(), n, o["class_shallow"]),
        "retained_size": _fixed(pa, pa.int64(), n, raw["reach"]["class_retained"]) if retained
        else pa.nulls(n, pa.int64()),
    })


def _fields(pa: ModuleType, c: Columns, names: _pyarrow.Array) -> _pyarrow.Table:
    n = len(c["object_id"]) // 8
    return pa.table({
        "object_id": _fixed(pa, pa.int64(), n, c["object_id"]),
        "name": _dictionary(pa, pa.int32(), n, c["name"], names, c["name_valid"]),
        "qualified_name": _dictionary(pa, pa.int32(), n, c["qualified"], names, c["qualified_valid"]),
        "type": _dictionary(pa, pa.int8(), n, c["type"], FIELD_TYPES),
        "int_value": _fixed(pa, pa.int64(), n, c["int_value"], c["int_valid"]),
        "double_value": _fixed(pa, pa.float64(), n, c["double_value"], c["double_valid"]),
    })


def heap_tables(heap: Heap, *, retained: bool = True, fields: bool = False,
                max_chars: int = MAX_CHARS, progress: Any = None) -> dict[str, _pyarrow.Table]:
    """heap.tables(): one heap's tables (module doc; docs/sql.md).  progress: as open_heap takes
    it: the dominators first when retained, then the "tables" stage, one step a table (the C
    core fills every column in one call before the first)."""
    from ._progress import reporting
    pa = _pa()
    wanted = ["objects", "strings", "references", "classes", "roots"]
    wanted += ["reach"] if retained else []
    wanted += ["fields"] if fields else []
    with reporting(progress) as reporter:
        if retained and reporter is not None:
            heap.compute_retained(progress=reporter)
        raw = heap._columns(wanted, max_chars=max_chars)
        dicts = raw["dictionaries"]
        names, class_names = _text(pa, dicts["names"]), _text(pa, dicts["classes"])
        made: dict[str, _pyarrow.Table] = {}
        builds: dict[str, Callable[[], _pyarrow.Table]] = {"objects": lambda: _objects(pa, raw, dicts, retained),
                  "references": lambda: _references(pa, raw["references"], names),
                  "classes": lambda: _classes(pa, raw["classes"], class_names, dicts["class_kinds"]),
                  "roots": lambda: _roots(pa, raw["roots"], _text(pa, dicts["root_kinds"])),
                  "class_retained": lambda: _class_retained(pa, raw, made["classes"], retained)}
        if fields:
            builds["fields"] = lambda: _fields(pa, raw["fields"], names)
        for done, (name, build) in enumerate(builds.items()):
            if reporter is not None:
                reporter(done, len(builds), "tables")
            made[name] = build()
        if reporter is not None:
            reporter(len(builds), len(builds), "tables")
    return made


# ---- many dumps --------------------------------------------------------------------------------

def _is_source_list(source: object) -> TypeGuard[Iterable[Source]]:
    return isinstance(source, (list, tuple)) or (
        not isinstance(source, (str, bytes, os.PathLike, Mapping)) and hasattr(source, "__iter__")
        and not hasattr(source, "_columns"))


def _each_dump(sources: Iterable[Source], open_options: Mapping[str, Any]
               ) -> Iterator[tuple[int, Heap, dict[str, Any]]]:
    """(dump number, heap, its row of the dumps table) for each source; a path is opened for its turn
    and closed after it, so one dump's index is in memory at a time."""
    from ._dump import Dump
    for number, source in enumerate(sources):
        if hasattr(source, "_columns"):
            heap = cast("Heap", source)
            yield number, heap, {"dump": number, "path": None, "timestamp": None, "id_size": heap.id_size}
            continue
        path = os.fspath(source)
        with Dump(path) as dump:
            row = {"dump": number, "path": path, "timestamp": dump.timestamp, "id_size": dump.id_size}
            heap = dump.heap(**open_options)
        with heap:
            yield number, heap, row


def _with_dump(pa: ModuleType, table: _pyarrow.Table, number: int) -> _pyarrow.Table:
    return table.add_column(0, "dump", pa.repeat(pa.scalar(number, pa.int32()), table.num_rows))


def _dumps_table(pa: ModuleType, rows: list[dict[str, Any]]) -> _pyarrow.Table:
    return pa.table({
        "dump": pa.array([r["dump"] for r in rows], pa.int32()),
        "path": pa.array([r["path"] for r in rows], pa.string()),
        "timestamp": pa.array([r["timestamp"] for r in rows], pa.timestamp("ms", tz="UTC")),
        "id_size": pa.array([r["id_size"] for r in rows], pa.int8()),
        "objects": pa.array([r["objects"] for r in rows], pa.int64()),
    })


def _dump_tables(sources: Iterable[Source], options: dict[str, Any]
                 ) -> Iterator[tuple[dict[str, Any], dict[str, _pyarrow.Table]]]:
    """Each dump's tables with their dump column, and its row of the dumps table."""
    pa = _pa()
    open_options: dict[str, Any] = {k: options.pop(k) for k in ("heap_dump", "semantics", "size_model") if k in options}
    for number, heap, row in _each_dump(sources, open_options):
        one = heap_tables(heap, **options)
        row["objects"] = one["objects"].num_rows
        yield row, {name: _with_dump(pa, table, number) for name, table in one.items()}


def tables(source: Source | Iterable[Source], *, retained: bool = True, fields: bool = False,
           max_chars: int = MAX_CHARS, heap_dump: int = 0, semantics: str = "hprofkit",
           ) -> dict[str, _pyarrow.Table]:
    """hprofkit.tables(heap) is heap.tables(); hprofkit.tables([a, b, ...]) (heaps or paths,
    paths opened and closed one at a time) gives the same tables for all of them, each with a
    ``dump`` column (the source's position) first, and a ``dumps`` table (dump, path, timestamp,
    id_size, objects).  retained=False leaves the dominator tree and the search from the roots
    out (retained sizes, dominators, reachable, root_distance: null); fields=True adds the
    ``fields`` table; max_chars is how many characters of each String value_string keeps."""
    options: dict[str, Any] = {"retained": retained, "fields": fields, "max_chars": max_chars}
    if not _is_source_list(source):
        if hasattr(source, "_columns"):
            return heap_tables(cast("Heap", source), **options)
        from ._heap import open_heap
        with open_heap(cast("str | os.PathLike[str]", source), heap_dump=heap_dump, semantics=semantics) as heap:
            return heap_tables(heap, **options)
    pa = _pa()
    rows, parts = [], []
    for row, one in _dump_tables(source, {**options, "heap_dump": heap_dump, "semantics": semantics}):
        rows.append(row)
        parts.append(one)
    if not parts:
        raise ValueError("no dumps: hprofkit.tables() takes a heap, a path, or a list of them")
    out = {name: pa.concat_tables([p[name] for p in parts]) for name in parts[0]}
    out["dumps"] = _dumps_table(pa, rows)
    return out


# ---- Parquet ------------------------------------------------------------------------------------

def to_parquet(source: Source | Iterable[Source] | Mapping[str, _pyarrow.Table], directory: str | os.PathLike[str],
               *, retained: bool = True, fields: bool = False, max_chars: int = MAX_CHARS, heap_dump: int = 0,
               semantics: str = "hprofkit") -> str:
    """Writes directory/<table>.parquet for each table (objects.parquet, references.parquet, ...).
    `source`: a heap, tables already built, or a list of heaps or paths: then every file holds
    every dump (the dump column; one row group or more per dump) plus dumps.parquet, and only one
    dump is in memory at a time, so a fleet's dumps become one set of files for
    ``read_parquet('dir/objects.parquet')``.  Atomic: written into a temporary directory beside
    `directory`, then renamed, so `directory` holds all the files or is not created; an existing
    `directory` is an error (FileExistsError).  Returns the directory."""
    pa = _pa()
    parquet = require("pyarrow.parquet", "tables", "to_parquet()")
    directory = os.fspath(directory)
    options: dict[str, Any] = {"retained": retained, "fields": fields, "max_chars": max_chars}
    with new_directory(directory) as tmp:  # refuses an existing name before any table is built
        if isinstance(source, Mapping):
            for name, table in source.items():
                parquet.write_table(table, os.path.join(tmp, name + ".parquet"))
        elif not _is_source_list(source):
            for name, table in tables(source, heap_dump=heap_dump, semantics=semantics, **options).items():
                parquet.write_table(table, os.path.join(tmp, name + ".parquet"))
        else:
            writers: dict[str, Any] = {}
            rows = []
            try:
                for row, one in _dump_tables(source, {**options, "heap_dump": heap_dump, "semantics": semantics}):
                    rows.append(row)
                    for name, table in one.items():
                        if name not in writers:
                            writers[name] = parquet.ParquetWriter(os.path.join(tmp, name + ".parquet"), table.schema)
                        writers[name].write_table(table)
            finally:
                for writer in writers.values():
                    writer.close()
            if not rows:
                raise ValueError("no dumps: to_parquet() takes a heap, a path, tables, or a list of heaps or paths")
            parquet.write_table(_dumps_table(pa, rows), os.path.join(tmp, "dumps.parquet"))
    return directory


# ---- SQL ------------------------------------------------------------------------------------------

def _perfetto_views(columns: Mapping[str, Sequence[str]]) -> list[str]:
    """CREATE VIEW statements for Perfetto's heap graph tables over hprofkit's (docs/sql.md).  With a
    dump column (many dumps) their ids are dump << 48 | id, unique across the dumps as Perfetto's
    row ids are, and upid is the dump, graph_sample_ts its header timestamp (ns)."""
    many = "dump" in columns.get("objects", ())

    def gid(expr: str, table: str) -> str:
        return f"({table}.dump::BIGINT << {ID_BITS} | {expr})" if many else expr

    upid = "o.dump" if many else "0"
    # Perfetto's name is the trace's (obfuscated) one, deobfuscated_name the clear one where a
    # mapping gave it (else null); tables written before obfuscated_name existed have no mapping.
    has_dump_name = "obfuscated_name" in columns.get("classes", ())
    dump_name = "c.obfuscated_name" if has_dump_name else "c.name"
    clear_name = "CASE WHEN c.name <> c.obfuscated_name THEN c.name END" if has_dump_name \
        else "CAST(NULL AS VARCHAR)"
    ts = "(select epoch_ns(d.timestamp) from dumps d where d.dump = o.dump)" if "dumps" in columns \
        else "CAST(NULL AS BIGINT)"
    views = [f"""
        CREATE OR REPLACE VIEW heap_graph_object AS SELECT
            {gid('o.id', 'o')} AS id, {upid} AS upid, {ts} AS graph_sample_ts,
            o.shallow_size AS self_size, CAST(0 AS BIGINT) AS native_size,
            {gid('o.id', 'o')} AS reference_set_id, o.reachable,
            CAST(o.heap AS VARCHAR) AS heap_type,
            CASE WHEN o.kind = 'class' THEN ~{gid('o.id', 'o')} ELSE {gid('o.class_id', 'o')} END AS type_id,
            'ROOT_' || CAST(o.root_type AS VARCHAR) AS root_type, o.root_distance,
            CASE WHEN o.kind = 'primitive_array' OR o.value_string IS NOT NULL THEN {gid('o.id', 'o')}
                 END AS object_data_id,
            o.retained_size, {gid('o.dominator_id', 'o')} AS dominator_id,
            CASE WHEN o.kind = 'primitive_array' THEN o.array_length END AS array_element_count,
            o.value_string, o.array_hash AS array_data_hash
        FROM objects o""", f"""
        CREATE OR REPLACE VIEW heap_graph_class AS
        SELECT {gid('c.id', 'c')} AS id, {dump_name} AS name, {clear_name} AS deobfuscated_name,
               CAST(NULL AS VARCHAR) AS location,
               {gid('c.super_id', 'c')} AS superclass_id, {gid('c.loader_id', 'c')} AS classloader_id,
               CAST(c.kind AS VARCHAR) AS kind
        FROM classes c
        UNION ALL
        SELECT ~{gid('c.id', 'c')}, 'java.lang.Class<' || {dump_name} || '>',
               'java.lang.Class<' || {clear_name} || '>', NULL, NULL, NULL, 'KIND_CLASS'
        FROM classes c""", f"""
        CREATE OR REPLACE VIEW heap_graph_reference AS SELECT
            {gid('r.source_id', 'r')} AS reference_set_id, {gid('r.source_id', 'r')} AS owner_id,
            {gid('r.target_id', 'r')} AS owned_id, CAST(r.qualified_name AS VARCHAR) AS field_name,
            coalesce(c.name, 'unknown') AS field_type_name,
            CAST(NULL AS VARCHAR) AS deobfuscated_field_name
        FROM "references" r
        LEFT JOIN objects t ON t.id = r.target_id{' AND t.dump = r.dump' if many else ''}
        LEFT JOIN classes c ON c.id = t.class_id{' AND c.dump = r.dump' if many else ''}""", f"""
        CREATE OR REPLACE VIEW heap_graph_object_data AS SELECT
            {gid('o.id', 'o')} AS id, {gid('o.id', 'o') if 'fields' in columns else 'CAST(NULL AS BIGINT)'}
                AS field_set_id,
            o.value_string,
            CASE WHEN o.kind = 'primitive_array' THEN regexp_replace(c.name, '\\[\\]$', '') END AS array_element_type,
            CASE WHEN o.kind = 'primitive_array' THEN o.array_length END AS array_element_count,
            CAST(NULL AS BIGINT) AS array_data_id, o.array_hash AS array_data_hash
        FROM objects o LEFT JOIN classes c ON c.id = o.class_id{' AND c.dump = o.dump' if many else ''}
        WHERE o.kind = 'primitive_array' OR o.value_string IS NOT NULL"""]
    if "fields" in columns:
        typed = ", ".join(f"CASE WHEN f.type = '{t}' THEN f.{'double' if t in ('float', 'double') else 'int'}_value "
                          f"END AS {t if t != 'boolean' else 'bool'}_value" for t in FIELD_TYPES)
        views.append(f"""
        CREATE OR REPLACE VIEW heap_graph_primitive AS SELECT
            {gid('f.object_id', 'f')} AS field_set_id, CAST(f.qualified_name AS VARCHAR) AS field_name,
            CAST(f.type AS VARCHAR) AS field_type, {typed}
        FROM fields f""")
    return views


def _register(con: _duckdb.DuckDBPyConnection, source: Tables, options: dict[str, Any]) -> None:
    """Registers source's tables (Arrow tables, or a Parquet directory's files) on DuckDB
    connection `con`, with the refs alias and Perfetto's views."""
    columns: dict[str, list[str]] = {}
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        for entry in sorted(os.scandir(os.fspath(source)), key=lambda e: e.name):
            if entry.name.endswith(".parquet") and not entry.name.startswith("."):
                name = entry.name[:-len(".parquet")]
                # A view's text cannot take parameters: the path is quoted as an SQL string.
                con.execute(f"CREATE OR REPLACE VIEW \"{name}\" AS SELECT * FROM read_parquet('{_quote(entry.path)}')")
                columns[name] = [row[0] for row in con.execute(f'DESCRIBE "{name}"').fetchall()]
        if "objects" not in columns:
            raise ValueError(f"{os.fspath(source)!r} holds no objects.parquet: not a directory to_parquet() wrote")
    else:
        data = source if isinstance(source, Mapping) else tables(source, **options)
        for name, table in data.items():
            con.register(name, table)
            columns[name] = list(table.column_names)
    if "references" in columns:  # a reserved word in SQL: "references" needs quotes, refs does not
        con.execute('CREATE OR REPLACE VIEW refs AS SELECT * FROM "references"')
    if {"objects", "classes", "references"} <= set(columns):
        for statement in _perfetto_views(columns):
            con.execute(statement)


def _quote(text: str) -> str:
    return os.fspath(text).replace("'", "''")


def connect(source: Tables, *, database: str = ":memory:", **options: Any) -> _duckdb.DuckDBPyConnection:
    """A DuckDB connection over `source`'s tables with the refs alias and Perfetto's views (the
    caller closes it).  `source`: a heap, tables already built, a dump's path, a list of heaps or
    paths (hprofkit.tables), or a directory to_parquet() wrote (its files are read in place).
    `options` go to hprofkit.tables (retained, fields, max_chars, heap_dump, semantics)."""
    duckdb = require("duckdb", "tables", "hprofkit.connect()")
    con: _duckdb.DuckDBPyConnection = duckdb.connect(database)
    try:
        _register(con, source, options)
    except BaseException:
        con.close()
        raise
    return con


def sql(source: Tables, query: str, params: Sequence[object] | Mapping[str, object] | None = None,
        **options: Any) -> _pyarrow.Table:
    """Runs DuckDB SQL over `source`'s tables (anything connect() takes) and returns the result as a
    pyarrow Table (``.to_pandas()``, ``.to_pylist()``...).

    Pass ``heap.tables()`` (or a Parquet directory) instead of the heap to build the tables once for
    many queries.  Each call uses its own in-memory DuckDB connection, so the result does not depend
    on anything left open; ``params`` are the query's ``?`` / ``$name`` parameters.  ``references``
    is a reserved word in SQL: write ``"references"`` or its alias ``refs``.  Perfetto's
    heap_graph_* tables are views (docs/sql.md)."""
    with connect(source, **options) as con:
        return query_table(con, query, params)


def query_table(con: _duckdb.DuckDBPyConnection, query: str,
                params: Sequence[object] | Mapping[str, object] | None = None) -> _pyarrow.Table:
    """The result of query on con as a pyarrow Table (sql() and the MCP server's sql tool)."""
    relation = con.sql(query, params=params)
    if relation is None:  # a statement without a result (SET, CREATE...)
        return _pa().table({})
    # DuckDB 2 renamed arrow() to to_arrow_table().
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    return _int64_sums(fetch())


def _int64_sums(table: _pyarrow.Table) -> _pyarrow.Table:
    """DuckDB sums BIGINTs into a HUGEINT (DECIMAL(38,0) in Arrow, Python Decimals in pandas): a
    whole-number decimal column whose values fit comes back as int64, as the sizes it sums."""
    pa = _pa()
    for k, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type) and field.type.scale == 0:
            try:
                table = table.set_column(k, field.name, table.column(k).cast(pa.int64()))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass  # past int64: kept as the decimal DuckDB gave
    return table
