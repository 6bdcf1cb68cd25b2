"""python -m hprofkit mcp: the heap as tools for AI agents, over MCP's stdio transport.

Every tool takes the dump as `path` (checked against --root by _mcp_heaps.OpenHeaps before
anything is read) and answers a bounded JSON object: a list is cut to `limit` rows (at most
MAX_LIMIT) with `total` and `left_out` beside it; a text is cut to TEXT_LIMIT characters with
its full `length`.  An hprofkit error (a bad dump, a path refused, an unknown object) is a
tool error carrying its one-line message, never a crash of the server.

Imports the SDK (the `mcp` extra) at import: the CLI imports this module only for `mcp`."""

from __future__ import annotations

import functools
import json
from typing import Any, Callable, Iterable, Optional, TypeVar

from ._tables import require

_server = require("mcp.server.mcpserver", "mcp", "hprofkit mcp")
_exceptions = require("mcp.server.mcpserver.exceptions", "mcp", "hprofkit mcp")

from . import __version__  # noqa: E402  (after the SDK check: its error comes first)
from ._errors import HprofError  # noqa: E402
from ._heap import HeapObject  # noqa: E402
from ._mcp_heaps import OpenHeaps  # noqa: E402

DEFAULT_LIMIT = 20
MAX_LIMIT = 500  # rows of any list, whatever limit asks
TEXT_LIMIT = 2000  # characters of a String's text, a leak trace, a path, an SQL cell
LARGE_ARRAY_BYTES = 1 << 20  # waste: primitive arrays of at least 1 MiB

F = TypeVar("F", bound=Callable[..., Any])


def text(value: str, limit: int = TEXT_LIMIT) -> dict[str, Any]:
    """A text cut to limit characters, with its full length."""
    return {"text": value[:limit], "length": len(value), "cut": len(value) > limit}


def clamp(limit: int) -> int:
    """A row count asked for, within 1..MAX_LIMIT."""
    return max(1, min(int(limit), MAX_LIMIT))


def rows(items: Iterable[Any], limit: int, row: Callable[[Any], Any]) -> dict[str, Any]:
    """The first `limit` (1..MAX_LIMIT) items as rows, and how many there were."""
    items = list(items)
    limit = clamp(limit)
    return {"rows": [row(item) for item in items[:limit]], "total": len(items),
            "left_out": max(0, len(items) - limit)}


def parse_id(value: str | int) -> int:
    """An object id as an agent writes it: 0x-hex, or decimal."""
    try:
        return value if isinstance(value, int) else int(str(value).strip(), 0)
    except ValueError:
        raise ValueError(f"object id {value!r} is neither 0x-hex nor decimal") from None


def ref(obj: Optional[HeapObject]) -> Optional[dict[str, Any]]:
    """An object as a short row: what it is and keeps."""
    if obj is None:
        return None
    return {"id": hex(obj.id), "class": obj.class_name, "kind": obj.kind, "shallow_size": obj.shallow_size,
            "retained_size": obj.retained_size}


def value(v: Any) -> Any:
    """A field's or cell's value as JSON: an object as its row, a long text cut."""
    if isinstance(v, HeapObject):
        return ref(v)
    if isinstance(v, str):
        return v if len(v) <= TEXT_LIMIT else text(v)
    if v is None or isinstance(v, (bool, int, float)):
        return v
    return text(str(v))


def tool_errors(fn: F) -> F:
    """fn whose expected failures (bad dump, refused path, unknown id, bad argument) are tool
    errors with one line: the agent reads the reason, the server goes on."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (HprofError, OSError, ValueError, KeyError, TypeError, ImportError) as exc:
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise _exceptions.ToolError(message) from None
    return wrapper  # type: ignore[return-value]


def build_server(heaps: OpenHeaps) -> Any:
    """The MCPServer with hprofkit's tools over `heaps`."""
    server = _server.MCPServer("hprofkit", version=__version__, instructions=(
        "Heap dumps (HPROF, HotSpot and Android) as tools: start with overview, then histogram, "
        "top_retainers and dominator_children; object and path_to_root follow an object id (0x-hex). "
        f"Lists are cut to `limit` rows (at most {MAX_LIMIT}) with `total` and `left_out`; texts to "
        f"{TEXT_LIMIT} characters with their `length`."))

    def tool(fn: F) -> F:  # open_, object_: named so as not to hide the builtins; the tools drop the "_"
        server.add_tool(tool_errors(fn), name=fn.__name__.rstrip("_"), description=fn.__doc__)
        return fn

    @tool
    def open_(path: str) -> dict[str, Any]:
        """Open (index) a heap dump and keep it open for the next calls; its sizes and counts."""
        heap = heaps.get(path)
        return {"path": heaps.resolve(path), "objects": heap.object_count, "classes": heap.class_count,
                "gc_roots": heap.gc_root_count, "id_size": heap.id_size, "heap_dumps": heap.heap_dump_count,
                "semantics": heap.semantics}

    @tool
    def overview(path: str, limit: int = 10) -> dict[str, Any]:
        """Reachable objects and bytes, unreachable (garbage) ones, and the largest classes and retainers."""
        heap = heaps.get(path)
        reachable, garbage = heap.histogram(), heap.unreachable_histogram()
        return {"objects": heap.object_count, "gc_roots": heap.gc_root_count,
                "reachable_objects": sum(r.instances for r in reachable),
                "reachable_bytes": sum(r.shallow_size for r in reachable),
                "unreachable_objects": sum(r.instances for r in garbage),
                "unreachable_bytes": sum(r.shallow_size for r in garbage),
                "largest_classes": rows(reachable, limit, class_row),
                "top_retainers": rows(heap.top_retainers(clamp(limit)), limit, retainer_row)}

    @tool
    def histogram(path: str, limit: int = DEFAULT_LIMIT, unreachable: bool = False) -> dict[str, Any]:
        """Classes by shallow bytes of their reachable objects (unreachable=true: of the garbage)."""
        heap = heaps.get(path)
        return rows(heap.unreachable_histogram() if unreachable else heap.histogram(), limit, class_row)

    @tool
    def top_retainers(path: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """The objects of largest retained size (what freeing them would free), largest first."""
        return {"rows": [retainer_row(pair) for pair in heaps.get(path).top_retainers(clamp(limit))]}

    @tool
    def dominator_children(path: str, object_id: Optional[str] = None,
                           limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """The dominator tree one level at a time: the children of the root (no object_id) or of an
        object, largest retained size first."""
        heap = heaps.get(path)
        children = heap.dominator_roots() if object_id is None else find(heap, object_id).dominated()
        return rows(children, limit, ref)

    @tool
    def object_(path: str, object_id: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """One object: class, sizes, GC root kinds, fields with values (or an array's elements), its
        outgoing references and its referrers (each list cut to limit), a String's text."""
        obj = find(heaps.get(path), object_id)
        answer: dict[str, Any] = {**(ref(obj) or {}), "root_kinds": list(obj.root_kinds),
                                  "dominator": ref(obj.heap.dominator(obj))}
        if obj.kind == "instance":
            answer["fields"] = rows(obj.fields(), limit, lambda f: {"name": f.name, "type": f.type,
                                                                    "value": value(f.value)})
            if obj.class_name == "java.lang.String":
                s = obj.as_str()
                answer["string"] = None if s is None else text(s)
        elif obj.kind != "class":
            answer["length"] = len(obj)
        answer["references"] = rows(obj.references(), limit,
                                    lambda r: {"name": r.name, "target": ref(r.target) or hex(r.target_id)})
        answer["referrers"] = rows(obj.referrers(), limit, lambda r: {"name": r.name, "source": ref(r.source)})
        return answer

    @tool
    def path_to_root(path: str, object_id: str) -> dict[str, Any]:
        """The shortest strong path from a GC root to the object (weak references and the
        defaults' known holders excluded), root first."""
        heap = heaps.get(path)
        found = heap.path_to_root(find(heap, object_id))
        if found is None or not hasattr(found, "hops"):
            return {"found": False, "reason": None if found is None else text(str(found))}
        hops = [{"ref_type": h.ref_type, "name": h.name, "target": ref(h.target)} for h in found.hops]
        return {"found": True, **rows(hops, MAX_LIMIT, lambda h: h), "trace": text(str(found))}

    @tool
    def leaks(path: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """Leak suspects as LeakCanary finds them (destroyed Activities, Fragments, watched objects...),
        each with what it retains and its trace."""
        return rows(heaps.get(path).find_leaks(), limit, lambda leak: {
            "object": ref(leak.object), "key": leak.key, "library": leak.library,
            "retained_size": leak.retained_size, "retained_count": leak.retained_count,
            "fingerprint": leak.fingerprint, "trace": text(str(leak))})

    @tool
    def waste(path: str, limit: int = DEFAULT_LIMIT, min_array_bytes: int = LARGE_ARRAY_BYTES) -> dict[str, Any]:
        """Memory spent for nothing: duplicate Strings, collections' unused capacity, large primitive arrays."""
        heap = heaps.get(path)
        return {"duplicate_strings": rows(heap.duplicate_strings(), limit, lambda d: {
                    "text": text(d.text, 200), "count": d.count, "wasted_bytes": d.wasted_bytes}),
                "collection_waste": rows(heap.collection_waste(), limit, lambda c: {
                    "class": c.class_name, "instances": c.instances, "empty": c.empty, "mean_fill": c.mean_fill,
                    "wasted_bytes": c.wasted_bytes}),
                "large_arrays": rows(heap.large_arrays(min_array_bytes), limit, lambda a: {
                    **(ref(a.array) or {}), "bytes": a.bytes})}

    @tool
    def diff(path: str, other_path: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """What changed by class from the dump at path (before) to other_path (after): reachable
        objects and shallow bytes, largest byte change first."""
        from .heapdiff import diff as heap_diff
        changes = heap_diff(heaps.get(path), heaps.get(other_path)).rows
        changes = sorted(changes, key=lambda r: (-abs(r.shallow_delta), r.name))
        return rows(changes, limit, lambda r: {
            "class": r.name, "count_before": r.count_a, "count_after": r.count_b, "count_delta": r.count_delta,
            "bytes_before": r.shallow_a, "bytes_after": r.shallow_b, "bytes_delta": r.shallow_delta})

    @tool
    def sql(path: str, query: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
        """DuckDB SQL over the heap's tables (objects, classes, refs, roots...: docs/sql.md); needs
        the `tables` extra.  The tables are built once per open dump; no file other than the dump
        can be read or written."""
        duckdb = require("duckdb", "tables", "the sql tool")
        from ._tables import connect, query_table
        tables = heaps.extra(path, "tables", lambda heap: heap.tables())
        with connect(tables) as con:
            # DuckDB reads and writes files by name (read_csv, COPY, ATTACH): off, and locked against
            # the query turning it back on, so --root holds for SQL too
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            try:
                result = query_table(con, query)
            except duckdb.Error as exc:
                raise ValueError(str(exc)) from None
        limit = clamp(limit)
        cells = result.slice(0, limit).to_pylist()
        return {"columns": list(result.column_names),
                "rows": [{k: cell(v) for k, v in r.items()} for r in cells],
                "total": result.num_rows, "left_out": max(0, result.num_rows - limit)}

    return server


def find(heap: Any, object_id: str | int) -> HeapObject:
    """The object of an id an agent gives; ValueError (a tool error) for an unknown one."""
    oid = parse_id(object_id)
    try:
        found: HeapObject = heap.object(oid)
    except KeyError:
        raise ValueError(f"no object {oid:#x} in the dump") from None
    return found


def class_row(row: Any) -> dict[str, Any]:
    return {"class": row.name, "instances": row.instances, "shallow_size": row.shallow_size}


def retainer_row(pair: tuple[HeapObject, int]) -> dict[str, Any]:
    return {**(ref(pair[0]) or {}), "retained_size": pair[1]}


def cell(v: Any) -> Any:
    """An SQL cell as JSON: a list or struct as its JSON text, bytes and the rest as theirs, cut at
    TEXT_LIMIT."""
    return value(json.dumps(v, default=str) if isinstance(v, (list, dict)) else v)


def serve(root: Optional[str] = None) -> None:
    """Runs the server on standard input and output until the client closes them; the heaps
    are closed on the way out."""
    heaps = OpenHeaps(root)
    try:
        build_server(heaps).run("stdio")
    finally:
        heaps.close()
