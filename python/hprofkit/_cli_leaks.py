"""Command line: python -m hprofkit leaks FILE [-n N] [--json] [--ignore CLASS.FIELD] [--library CLASS.FIELD]
[--ignore-root CLASS] [--heap-dump N] [--semantics S]

Prints the leak traces of a dump (LeakCanary's and Android's leak finders,
hprofkit.leaks) and exits 0 whether or not there are leaks: the report is the
output.  A failure (an unreadable dump) prints one line on stderr and exits
1, a bad argument argparse's usage and exits 2, as for every command."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from . import _cli_args as grammar
from . import match

if TYPE_CHECKING:
    from ._heap import Heap


def _matcher(heap: Heap, spec: tuple[str, str], kind: str) -> match.Matcher:
    """CLASS.FIELD as a matcher: a static field if the class declares a static
    of that name, an instance field otherwise."""
    class_name, field = spec
    description = f"--{kind} {class_name}.{field}"
    if any(f.name == field for cls in heap.classes_named(class_name) for f in cls.statics()):
        return match.static_field(class_name, field, kind=kind, description=description)
    return match.instance_field(class_name, field, kind=kind, description=description)


def cmd_leaks(args: argparse.Namespace) -> int:
    from .leaks import default_exclude, find_leaks
    with grammar.read_heap(args) as heap:
        exclude = default_exclude(heap) + tuple(
            _matcher(heap, spec, kind) for kind, specs in (("ignore", args.ignore), ("library", args.library))
            for spec in specs) + tuple(
            match.root_class(name, description=f"--ignore-root {name}") for name in args.ignore_root)
        leaks = find_leaks(heap, exclude=exclude)
        library = sum(leak.library for leak in leaks)
        shown = leaks if args.top is None else leaks[:args.top]
        if args.json:
            grammar.print_json({"leaks": [leak.to_dict() for leak in shown], "application": len(leaks) - library,
                                "library": library})
            return 0
        out = sys.stdout
        groups = len({leak.fingerprint for leak in leaks})
        out.write(f"{len(leaks)} leak{'s' * (len(leaks) != 1)}: {len(leaks) - library} application, "
                  f"{library} library; {groups} distinct fingerprint{'s' * (groups != 1)}\n")
        for leak in shown:
            out.write(f"\n{leak}\n")
        if len(shown) < len(leaks):
            out.write(f"\n... {len(leaks) - len(shown):,} more (-n)\n")
    return 0


def add_commands(sub: Any) -> None:
    p = grammar.command(sub, "leaks", cmd_leaks,
                        "leak traces: LeakCanary's watched objects and destroyed Android components",
                        example="hprofkit leaks app.hprof\n"
                                "hprofkit leaks app.hpk --library com.example.Cache.sInstance -n 3 --json")
    grammar.add_heap_input(p)
    grammar.add_rows(p, None, "leak traces to print (default: all; the counts are of all)")
    p.add_argument("--ignore", action="append", type=grammar.class_member, default=[], metavar="CLASS.FIELD",
                   help="a reference the path search never follows (repeatable)")
    p.add_argument("--library", action="append", type=grammar.class_member, default=[], metavar="CLASS.FIELD",
                   help="a known library leak: followed last, and a path through it is a library leak "
                        "(repeatable)")
    p.add_argument("--ignore-root", action="append", type=grammar.non_empty("a class name"), default=[],
                   metavar="CLASS",
                   help="GC roots holding an instance of CLASS (or a subclass) are not roots (repeatable)")
    grammar.add_json(p)
