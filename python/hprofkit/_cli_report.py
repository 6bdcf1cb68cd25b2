"""Command line: python -m hprofkit report FILE [-o report.html] [--baseline OTHER]
[--semantics hprofkit|visualvm] [--heap-dump N]

Writes the self-contained HTML report of a dump (hprofkit.report) and says
on one line what it wrote; on standard error when the page itself goes to
standard output (-o -)."""

from __future__ import annotations

import argparse
import os
import sys

from ._output import is_stdout
from ._units import human_size

SEMANTICS = ("hprofkit", "visualvm")


def cmd_report(args: argparse.Namespace) -> int:
    from ._report import report
    if args.heap_dump < 0:
        raise ValueError("--heap-dump must be 0 or more")
    written = report(args.file, args.output, baseline=args.baseline, semantics=args.semantics,
                     heap_dump=args.heap_dump)
    to_stdout = is_stdout(args.output)
    size = "" if to_stdout or not os.path.isfile(written) else f" ({human_size(os.path.getsize(written))})"
    print(f"wrote {'the report to standard output' if to_stdout else written}{size}",
          file=sys.stderr if to_stdout else sys.stdout)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="a self-contained HTML report: overview, leak suspects, leak traces, "
                                      "histogram, diff against a baseline")
    p.add_argument("file", help="dump (HPROF, .gz, .bz2, hprofkit pack or Tailor mini)")
    p.add_argument("-o", "--output", default="report.html", metavar="OUT",
                   help="the HTML file to write (default report.html; - for standard output)")
    p.add_argument("--baseline", default=None, metavar="OTHER",
                   help="an earlier dump: adds the delta histogram and the paths along which growth hangs")
    p.add_argument("--semantics", choices=SEMANTICS, default=None,
                   help="reference graph of paths and retained sizes: hprofkit (default) or visualvm")
    p.add_argument("--heap-dump", type=int, default=0, metavar="N",
                   help="which heap dump of the file (from 0; default the first)")
    p.set_defaults(func=cmd_report)
