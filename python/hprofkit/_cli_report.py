"""Command line: python -m hprofkit report FILE [-o report.html] [--baseline OTHER]
[--heap-dump N] [--semantics hprofkit|visualvm] [--json]

Writes the self-contained HTML report of a dump (hprofkit.report) and says
what it wrote: one line (on standard error when the page itself goes to
standard output, -o -), or with --json one object: the output, its size and
the sections the page holds."""

from __future__ import annotations

import argparse
import os
import sys

from ._cli_args import add_heap_input, add_json, add_unreachable, command, heap_options, print_json, source
from ._cli_mapping import mapping_warnings
from ._output import is_stdout
from ._units import human_size


def cmd_report(args: argparse.Namespace) -> int:
    from ._report import write
    options = heap_options(args)  # a malformed mapping fails before the dump is read
    with mapping_warnings():
        document = write(source(args.file), args.output, baseline=args.baseline, max_output=args.max_output,
                         unreachable=args.unreachable, **options)
    to_stdout = is_stdout(args.output)
    written = "-" if to_stdout else os.fspath(args.output)
    size = None if to_stdout or not os.path.isfile(written) else os.path.getsize(written)
    if args.json:
        print_json({"output": written, "size": size, "sections": list(document["sections"]),
                    "shortened": bool(document.get("shortened"))}, sys.stderr if to_stdout else sys.stdout)
        return 0
    print(f"wrote {'the report to standard output' if to_stdout else written}"
          + ("" if size is None else f" ({human_size(size)})"), file=sys.stderr if to_stdout else sys.stdout)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = command(sub, "report", cmd_report,
                "a self-contained HTML report: overview, leak suspects, leak traces, histogram, bitmaps, "
                "dominator tree, flame graph, threads, waste, diff",
                example="hprofkit report app.hprof -o report.html\n"
                        "hprofkit report after.hprof --baseline before.hprof -o growth.html")
    add_heap_input(p)
    p.add_argument("-o", "--output", default="report.html", metavar="OUT",
                   help="the HTML file to write (default report.html; - for standard output)")
    p.add_argument("--baseline", default=None, metavar="OTHER",
                   help="an earlier dump (a path): adds the delta histogram and the paths along which growth hangs")
    add_unreachable(p, "the page's figures")
    add_json(p, "one JSON object: the file written, its size and its sections")
