"""Command line: python -m hprofkit show FILE ID|CLASS [-n N] [--json]: an
object (by id) or the classes of a name, with their fields, references and
referrers, as text or JSON (one vocabulary with the other commands: id,
class, class_id, kind, shallow_size, instances)."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from typing import Any, TextIO

from . import _cli_args as grammar

ROWS = 50


def object_ref(obj: Any) -> dict[str, Any] | None:
    """An object as JSON names it: its id, its class (a class object: the
    class it is) and kind; None for null."""
    return None if obj is None else ref(obj)


def ref(obj: Any) -> dict[str, Any]:
    return {"id": obj.id, "class": obj.name if obj.kind == "class" else obj.class_name, "kind": obj.kind}


def json_value(value: Any) -> Any:
    """A field's or an element's value as JSON: primitives as they are, an object as object_ref."""
    return object_ref(value) if hasattr(value, "kind") else value


def _listing(out: TextIO, title: str, rows: list[str], total: int, limit: int) -> None:
    out.write(f"{title} ({total:,})\n")
    for row in rows[:limit]:
        out.write(f"  {row}\n")
    if total > limit:
        out.write(f"  ... {total - limit:,} more\n")


def _root_kinds(kinds: tuple[str, ...], limit: int) -> str:
    """An object's GC root kinds, each once with its count: 'JNI_GLOBAL × 3, STICKY_CLASS'
    (an object may be millions of roots: the line stays short whatever the limit)."""
    counts = Counter(kinds)
    shown = [f"{kind} × {n:,}" if n > 1 else kind for kind, n in list(counts.items())[:limit]]
    return ", ".join(shown) + (f", ... {len(counts) - limit:,} more kinds" if len(counts) > limit else "")


def _target(r: Any) -> str:
    return repr(r.target) if r.target is not None else f"0x{r.target_id:x} (missing)"


def _object_text(out: TextIO, obj: Any, limit: int) -> None:
    out.write(f"{obj!r}\n")
    out.write(f"  id          0x{obj.id:x} ({obj.id})\n  kind        {obj.kind}\n  class       {obj.class_name}\n")
    out.write(f"  size        {obj.shallow_size:,} B\n")
    if obj.heap_name is not None:
        out.write(f"  heap        {obj.heap_name}\n")
    if obj.root_kinds:
        out.write(f"  GC roots    {_root_kinds(obj.root_kinds, limit)}\n")
    if obj.kind == "instance":
        if obj.class_name == "java.lang.String":
            out.write(f"  text        {obj.as_str()!r}\n")
        fields = obj.fields()
        _listing(out, "fields", [f"{f.declaring_class.name}.{f.name}: {f.type} = {f.value!r}" for f in fields],
                 len(fields), limit)
    elif obj.kind in ("object_array", "primitive_array"):
        out.write(f"  length      {len(obj):,}\n")
        _listing(out, "elements", [f"[{i}] {obj[i]!r}" for i in range(min(len(obj), limit))], len(obj), limit)
    # The lists are cut before they are made (an object may have 50 M referrers), then counted.
    _listing(out, "references", [f"{r.name} -> {_target(r)}" for r in obj.references(limit=limit)],
             obj.reference_count, limit)
    _listing(out, "referrers", [f"{r.source!r}.{r.name}" for r in obj.referrers(limit=limit)],
             obj.referrer_count, limit)


def _object_json(obj: Any, limit: int) -> dict[str, Any]:
    cls = obj.class_
    doc: dict[str, Any] = {**ref(obj), "class_id": cls.class_id if cls is not None else None,
                           "shallow_size": obj.shallow_size, "heap": obj.heap_name}
    kinds = obj.root_kinds
    doc["gc_roots"], doc["gc_root_count"] = list(itertools.islice(kinds, limit)), len(kinds)
    if obj.kind == "instance":
        if obj.class_name == "java.lang.String":
            doc["text"] = obj.as_str()
        fields = obj.fields()
        doc["fields"] = [{"class": f.declaring_class.name, "name": f.name, "type": f.type,
                          "value": json_value(f.value)} for f in fields[:limit]]
        doc["field_count"] = len(fields)
    elif obj.kind in ("object_array", "primitive_array"):
        doc["length"] = len(obj)
        doc["elements"] = [json_value(obj[i]) for i in range(min(len(obj), limit))]
    doc["references"] = [{"name": r.name, "id": r.target_id, "target": object_ref(r.target)}
                         for r in obj.references(limit=limit)]
    doc["reference_count"] = obj.reference_count
    doc["referrers"] = [{"name": r.name, "source": object_ref(r.source)} for r in obj.referrers(limit=limit)]
    doc["referrer_count"] = obj.referrer_count
    return doc


def _class_text(out: TextIO, cls: Any, limit: int) -> None:
    out.write(f"class {cls.name}\n")
    out.write(f"  id          0x{cls.class_id:x}\n")
    out.write(f"  superclass  {cls.superclass.name if cls.superclass is not None else '-'}\n")
    out.write(f"  loader      {cls.loader!r}\n")
    if cls.instance_size is not None:
        out.write(f"  instance    {cls.instance_size:,} B\n")
    out.write(f"  instances   {cls.instance_count:,}\n")
    out.write(f"  subclasses  {len(cls.subclasses()):,}\n")
    fields = cls.fields()
    _listing(out, "fields", [f"{f.name}: {f.type}" for f in fields], len(fields), limit)
    statics = cls.statics()
    _listing(out, "statics", [f"{f.name}: {f.type} = {f.value!r}" for f in statics], len(statics), limit)
    _listing(out, "referrers", [f"{r.source!r}.{r.name}" for r in cls.referrers(limit=limit)], cls.referrer_count,
             limit)


def _class_json(cls: Any, limit: int) -> dict[str, Any]:
    fields, statics = cls.fields(), cls.statics()
    return {"class": cls.name, "class_id": cls.class_id,
            "superclass": cls.superclass.name if cls.superclass is not None else None,
            "loader": object_ref(cls.loader), "instance_size": cls.instance_size, "instances": cls.instance_count,
            "subclasses": len(cls.subclasses()),
            "fields": [{"name": f.name, "type": f.type} for f in fields[:limit]], "field_count": len(fields),
            "statics": [{"name": f.name, "type": f.type, "value": json_value(f.value)} for f in statics[:limit]],
            "static_count": len(statics),
            "referrers": [{"name": r.name, "source": object_ref(r.source)} for r in cls.referrers(limit=limit)],
            "referrer_count": cls.referrer_count}


def cmd_show(args: argparse.Namespace) -> int:
    what = args.what
    with grammar.read_heap(args) as heap:
        if isinstance(what, int):
            try:
                obj = heap.object(what)
            except KeyError:
                raise ValueError(f"no object 0x{what:x} in the heap dump") from None
            if args.json:
                grammar.print_json(_object_json(obj, args.top))
            else:
                _object_text(sys.stdout, obj, args.top)
            return 0
        classes = heap.classes_named(what)
        if not classes:
            raise ValueError(f"no class {what!r} in the heap dump")
        if args.json:
            grammar.print_json({"classes": [_class_json(cls, args.top) for cls in classes]})
        else:
            for cls in classes:
                _class_text(sys.stdout, cls, args.top)
    return 0


def add_commands(sub: Any) -> None:
    p = grammar.command(sub, "show", cmd_show, "an object (by id) or a class (by name): fields, references, referrers",
                        example="hprofkit show app.hprof android.app.Activity\n"
                                "hprofkit show app.hprof 0x12c4a8f0 -n 10 --json")
    grammar.add_heap_input(p)
    p.add_argument("what", metavar="ID|CLASS", type=grammar.object_or_class,
                   help="object id (decimal or 0x hex) or class name (java.lang.String)")
    grammar.add_rows(p, ROWS, "rows per list (default 50)", minimum=0, aliases=("--limit",))
    grammar.add_json(p)
