"""Command line: python -m hprofkit leaks FILE [--json] [--ignore CLASS.FIELD] [--library CLASS.FIELD]
[--ignore-root CLASS]

Prints the leak traces of a dump (LeakCanary's and Android's leak finders,
hprofkit.leaks) and exits 0 whether or not there are leaks: the report is the
output.  A failure (unreadable dump, bad argument) prints one line on stderr
and exits 1, as every command does."""

from __future__ import annotations

import argparse
import json
import sys

from . import _cli_args as grammar
from . import match


def _matcher(heap, spec: tuple[str, str], kind: str) -> match.Matcher:
    """CLASS.FIELD as a matcher: a static field if the class declares a static
    of that name, an instance field otherwise."""
    class_name, field = spec
    description = f"--{kind} {class_name}.{field}"
    if any(f.name == field for cls in heap.classes_named(class_name) for f in cls.statics()):
        return match.static_field(class_name, field, kind=kind, description=description)
    return match.instance_field(class_name, field, kind=kind, description=description)


def cmd_leaks(args: argparse.Namespace) -> int:
    from ._heap import open_heap
    from .leaks import default_exclude, find_leaks
    with open_heap(args.file) as heap:
        exclude = default_exclude(heap) + tuple(
            _matcher(heap, spec, kind) for kind, specs in (("ignore", args.ignore), ("library", args.library))
            for spec in specs) + tuple(
            match.root_class(name, description=f"--ignore-root {name}") for name in args.ignore_root)
        leaks = find_leaks(heap, exclude=exclude)
        library = sum(leak.library for leak in leaks)
        if args.json:
            json.dump({"leaks": [leak.to_dict() for leak in leaks], "application": len(leaks) - library,
                       "library": library}, sys.stdout, indent=1, ensure_ascii=False)
            sys.stdout.write("\n")
            return 0
        out = sys.stdout
        groups = len({leak.fingerprint for leak in leaks})
        out.write(f"{len(leaks)} leak{'s' * (len(leaks) != 1)}: {len(leaks) - library} application, "
                  f"{library} library; {groups} distinct fingerprint{'s' * (groups != 1)}\n")
        for leak in leaks:
            out.write(f"\n{leak}\n")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("leaks", help="leak traces: LeakCanary's watched objects and destroyed Android components")
    p.add_argument("file", help="HPROF dump (.hprof, .gz or .bz2)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--ignore", action="append", type=grammar.class_member, default=[], metavar="CLASS.FIELD",
                   help="a reference the path search never follows (repeatable)")
    p.add_argument("--library", action="append", type=grammar.class_member, default=[], metavar="CLASS.FIELD",
                   help="a known library leak: followed last, and a path through it is a library leak "
                        "(repeatable)")
    p.add_argument("--ignore-root", action="append", type=grammar.non_empty("a class name"), default=[],
                   metavar="CLASS",
                   help="GC roots holding an instance of CLASS (or a subclass) are not roots (repeatable)")
    p.set_defaults(func=cmd_leaks)
