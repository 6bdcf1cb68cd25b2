"""Command line: python -m hprofkit pprof FILE [-o heap.pb.gz] [--by class-tree|sites]
[--heap-dump N] [--semantics hprofkit|visualvm] [--json]

Writes the dump as a gzip'd pprof profile (hprofkit.pprof: the class tree as
stacks, or the allocation sites' stacks) and says what it wrote: one line
(on standard error when the profile goes to standard output, -o -), or with
--json one object."""

from __future__ import annotations

import argparse
import sys

from ._cli_args import add_heap_input, add_json, command, print_json, read_heap
from ._output import check_not_same_file, is_stdout
from ._units import human_size

BY = ("class-tree", "sites")  # _pprof.BY (not imported: the CLI loads lightly)


def cmd_pprof(args: argparse.Namespace) -> int:
    from ._pprof import pprof
    if args.file != "-":
        check_not_same_file(args.file, args.output)  # before the dump is read
    with read_heap(args) as heap:
        written = pprof(heap, args.output, by=args.by)
    to_stdout = is_stdout(args.output)
    where = "-" if to_stdout else args.output
    if args.json:
        print_json({"output": where, **written}, sys.stderr if to_stdout else sys.stdout)
        return 0
    print(f"wrote {'the profile to standard output' if to_stdout else where} ({human_size(written['size'])}): "
          f"{written['samples']:,} samples, {written['objects']:,} objects, {human_size(written['bytes'])}",
          file=sys.stderr if to_stdout else sys.stdout)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = command(sub, "pprof", cmd_pprof,
                "a gzip'd pprof profile (profile.proto): the class tree as stacks, or the allocation sites'",
                example="hprofkit pprof app.hprof -o heap.pb.gz && go tool pprof -top heap.pb.gz\n"
                        "hprofkit pprof agent.hprof -o sites.pb.gz --by sites")
    add_heap_input(p)
    p.add_argument("-o", "--output", default="heap.pb.gz", metavar="OUT",
                   help="the profile to write (default heap.pb.gz; - for standard output)")
    p.add_argument("--by", choices=BY, default="class-tree",
                   help="class-tree (default): a sample per class tree node, its stack the classes from the root, "
                        "each reachable object's shallow size once (pprof's cum of a node: its retained size); "
                        "sites: a sample per allocation stack the object records name")
    add_json(p, "what was written as one JSON object (on stderr when OUT is stdout)")
