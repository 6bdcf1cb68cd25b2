"""Command line: python -m hprofkit diff A B [--json] [--top N] [--retained] [--paths]."""

from __future__ import annotations

import argparse
import json
import sys


def cmd_diff(args: argparse.Namespace) -> int:
    from .heapdiff import diff
    result = diff(args.a, args.b, retained=args.retained, paths=args.paths)
    if args.json:
        json.dump(result.to_dict(top=args.top), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(result.format(top=args.top if args.top is not None else 20) + "\n")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="which classes grew from dump A to dump B (instances, shallow and retained bytes)")
    p.add_argument("a", metavar="A", help="the earlier dump (HPROF, .gz, .bz2, hprofkit pack or Tailor mini)")
    p.add_argument("b", metavar="B", help="the later dump")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--top", type=int, default=None, metavar="N", help="rows to show (default 20; JSON: all)")
    p.add_argument("--retained", action="store_true", help="also compare retained sizes per class (dominator trees)")
    p.add_argument("--paths", action="store_true",
                   help="also show the reference paths along which the grown classes' objects hang")
    p.set_defaults(func=cmd_diff)
