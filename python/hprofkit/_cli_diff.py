"""Command line: python -m hprofkit diff A B [-n N] [--json] [--retained] [--paths]
[--heap-dump N] [--semantics S] [--mapping FILE]..."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import _cli_args as grammar
from ._cli_mapping import read_mapping_pair


def cmd_diff(args: argparse.Namespace) -> int:
    from .heapdiff import diff
    if args.a == "-" and args.b == "-":
        raise grammar.UsageError("A and B cannot both be standard input")
    mapping_a, mapping_b = read_mapping_pair(args)  # a malformed mapping fails before the dumps are read
    # Both dumps are read alike (--heap-dump, --semantics), named as the command line names them.
    with grammar.read_heap(args, args.a, mapping_a) as heap_a, grammar.read_heap(args, args.b, mapping_b) as heap_b:
        result = diff(heap_a, heap_b, retained=args.retained, paths=args.paths, unreachable=args.unreachable)
    result.a, result.b = ("<stdin>" if name == "-" else name for name in (args.a, args.b))
    if args.json:
        grammar.print_json(result.to_dict(top=args.top))
    else:
        sys.stdout.write(result.format(top=args.top if args.top is not None else grammar.ROWS) + "\n")
    return 0


def add_commands(sub: Any) -> None:
    p = grammar.command(sub, "diff", cmd_diff,
                        "which classes grew from dump A to dump B (instances, shallow and retained sizes)",
                        example="hprofkit diff before.hprof after.hprof -n 10\n"
                                "hprofkit diff before.hpk after.hprof --retained --paths --json")
    p.add_argument("a", metavar="A", help="the earlier dump (HPROF, .gz, .bz2, hprofkit pack or Tailor mini; "
                                          "- for stdin)")
    p.add_argument("b", metavar="B", help="the later dump")
    grammar.add_heap_options(p, pair=True)
    grammar.add_rows(p, None, "rows to print (default 20; JSON: all)")
    p.add_argument("--retained", action="store_true", help="also compare retained sizes per class (dominator trees)")
    p.add_argument("--paths", action="store_true",
                   help="also show the reference paths along which the grown classes' objects hang")
    grammar.add_unreachable(p, "the class counts")
    grammar.add_json(p)
