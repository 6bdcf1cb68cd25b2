"""CLI commands on reachability: `path FILE ID` (the shortest path from a GC
root to an object) and `top FILE` (the largest retained sizes, by object or
by class)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ._units import human_size

if TYPE_CHECKING:
    from ._heap import HeapObject

SEMANTICS = ("hprofkit", "visualvm")


def _object_id(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an object id: {text!r} (decimal or 0x hex)") from None


def cmd_path(args: argparse.Namespace) -> int:
    from . import match
    from ._heap import open_heap
    with open_heap(args.file, semantics=args.semantics) as heap:
        try:
            obj = heap.object(args.id)
        except KeyError:
            raise ValueError(f"no object 0x{args.id:x} in the heap dump") from None
        exclude = () if args.all_references else match.JDK_DEFAULTS
        path = heap.path_to_root(obj, exclude=exclude)
        if path is None:
            print(f"{obj!r}: no strong path from a GC root (unreachable or only weakly reachable)")
            return 1
        print(path)
    return 0


def _row(obj: HeapObject, retained: int) -> dict[str, Any]:
    return {"id": obj.id, "class": obj.class_name, "kind": obj.kind, "shallow": obj.shallow_size,
            "retained": retained, "retained_count": obj.retained_count}


def cmd_top(args: argparse.Namespace) -> int:
    from ._heap import open_heap
    if args.n < 0:
        raise ValueError("-n must be >= 0")
    with open_heap(args.file, semantics=args.semantics) as heap:
        rows: list[dict[str, Any]]
        if args.by == "class":
            ranked = sorted(((cls.instances_retained_size, cls) for cls in heap.classes), key=lambda r: (-r[0], r[1].name))
            rows = [{"class": cls.name, "id": cls.class_id, "instances": cls.instance_count, "retained": size}
                    for size, cls in ranked[:args.n]]
        else:
            rows = [_row(obj, size) for obj, size in heap.top_retainers(args.n)]
        if args.json:
            json.dump(rows, sys.stdout, indent=1)
            sys.stdout.write("\n")
            return 0
        for row in rows:
            if args.by == "class":
                print(f"{human_size(row['retained']):>10}  {row['instances']:>9,}  {row['class']}")
            else:
                print(f"{human_size(row['retained']):>10}  {row['retained_count']:>9,}  "
                      f"0x{row['id']:x}  {row['class']} {row['kind']}")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("path", help="the shortest path from a GC root to an object, as LeakCanary prints it")
    p.add_argument("file", help="HPROF dump (.hprof, .gz or .bz2)")
    p.add_argument("id", type=_object_id, help="object id (decimal or 0x hex)")
    p.add_argument("--semantics", choices=SEMANTICS, default="hprofkit",
                   help="reference graph: hprofkit (default; referents are weak) or visualvm (VisualVM's)")
    p.add_argument("--all-references", action="store_true",
                   help="follow every strong reference (default: skip Shark's JDK matchers, e.g. finalizer links)")
    p.set_defaults(func=cmd_path)

    p = sub.add_parser("top", help="the largest retained sizes, by object (default) or by class")
    p.add_argument("file", help="HPROF dump (.hprof, .gz or .bz2)")
    p.add_argument("-n", type=int, default=20, metavar="N", help="rows (default 20)")
    p.add_argument("--by", choices=("object", "class"), default="object", help="rank objects or classes")
    p.add_argument("--semantics", choices=SEMANTICS, default="hprofkit",
                   help="reference graph: hprofkit (default) or visualvm (VisualVM's retained sizes)")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=cmd_top)
