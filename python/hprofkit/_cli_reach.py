"""CLI commands on reachability: `path FILE ID` (the shortest path from a GC
root to an object) and `top FILE` (the largest retained sizes, by object or
by class)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from . import _cli_args as grammar
from ._cli_show import object_ref, ref
from ._units import human_size

if TYPE_CHECKING:
    from ._heap import HeapObject


def cmd_path(args: argparse.Namespace) -> int:
    from . import match
    with grammar.read_heap(args) as heap:
        try:
            obj = heap.object(args.id)
        except KeyError:
            raise ValueError(f"no object 0x{args.id:x} in the heap dump") from None
        exclude = () if args.all_references else match.JDK_DEFAULTS
        (path,) = heap.paths_to_root([obj], exclude=exclude)  # a HeapPath, or a NoPath saying why
        if args.json:
            grammar.print_json({"object": object_ref(obj), "path": None if not path else [
                {"type": hop.ref_type, "holder": object_ref(hop.holder), "name": hop.name,
                 "target": object_ref(hop.target)} for hop in path.hops]})
        elif not path:
            print(f"{obj!r}: {path}")
        else:
            print(path)
    return 0 if path else 1


def describe(obj: HeapObject) -> str:
    """An object as a table row names it: a class object by the class it is."""
    if obj.kind == "class":
        return f"class {obj.name}"  # type: ignore[attr-defined]  # a class object is a HeapClass
    return f"{obj.class_name} {'instance' if obj.kind == 'instance' else 'array'}"


def cmd_top(args: argparse.Namespace) -> int:
    with grammar.read_heap(args) as heap:
        out = sys.stdout
        if args.by == "class":
            ranked = sorted(((cls.instances_retained_size, cls) for cls in heap.classes), key=lambda r: (-r[0], r[1].name))
            if args.json:
                grammar.print_json([{"class": cls.name, "class_id": cls.class_id, "instances": cls.instance_count,
                                     "retained_size": size} for size, cls in ranked[:args.top]])
                return 0
            out.write(f"{'retained':>10}  {'instances':>9}  class\n")
            for size, cls in ranked[:args.top]:
                out.write(f"{human_size(size):>10}  {cls.instance_count:>9,}  {cls.name}\n")
            return 0
        top = heap.top_retainers(args.top)
        if args.json:
            grammar.print_json([{**ref(obj), "shallow_size": obj.shallow_size, "retained_size": size,
                                 "retained_count": obj.retained_count} for obj, size in top])
            return 0
        out.write(f"{'retained':>10}  {'objects':>9}  {'id':<12}  object\n")
        for obj, size in top:
            out.write(f"{human_size(size):>10}  {obj.retained_count:>9,}  {f'0x{obj.id:x}':<12}  {describe(obj)}\n")
    return 0


def add_commands(sub: Any) -> None:
    p = grammar.command(sub, "path", cmd_path,
                        "the shortest path from a GC root to an object, as LeakCanary prints it",
                        example="hprofkit path app.hprof 0x12c4a8f0\n"
                                "hprofkit path app.hprof 0x12c4a8f0 --all-references --json")
    grammar.add_heap_input(p)
    p.add_argument("id", metavar="ID", type=grammar.object_id, help="object id (decimal or 0x hex)")
    p.add_argument("--all-references", action="store_true",
                   help="follow every strong reference (default: skip Shark's JDK matchers, e.g. finalizer links)")
    grammar.add_json(p, "one JSON object: the object and the path's hops (null: no path, exit status 1)")

    p = grammar.command(sub, "top", cmd_top, "the largest retained sizes, by object (default) or by class",
                        example="hprofkit top app.hprof -n 10\n"
                                "hprofkit top app.hprof --by class --semantics visualvm --json")
    grammar.add_heap_input(p)
    grammar.add_rows(p)
    p.add_argument("--by", choices=("object", "class"), default="object",
                   help="rank objects, or classes by the retained size of their instances")
    grammar.add_json(p, "a JSON list of the rows")
