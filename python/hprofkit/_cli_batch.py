"""Command line: python -m hprofkit batch leaks|stats|histogram|encode|decode|report INPUTS... [--jobs N]
[--scheduler ADDR] [--out FILE] [--json] [-n N] [--heap-dump N] [--semantics S].

Prints a summary (--json: the result as JSON; or writes --out: JSON for a .json name or -, else a
new directory of Parquet files; never over an input, see _output.py); exits 1 with a one-line
message when any input failed, after every other input was processed."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, TextIO

from . import _cli_args as grammar
from ._output import check_not_same_file, output_file
from ._progress import Progress
from ._stats import UnfinishedDump
from .batching import NAMED_TASKS, TASKS, BatchResult, batch


def write_summary(result: BatchResult, seconds: float, out: TextIO, top: int = grammar.ROWS) -> None:
    failed = result.failed
    out.write(f"{result.task}: {len(result.rows)} inputs, {len(result.rows) - len(failed)} ok, "
              f"{len(failed)} failed, {seconds:.1f} s\n")
    for row in failed:
        out.write(f"  FAILED {grammar.printable(row.input)}: {grammar.printable(str(row.error))}"
                  f"{f' (worker {row.worker})' if row.worker else ''}\n")
    if result.task == "leaks":
        # A group is named by its leak (class and suspect reference), its fingerprint told once.
        out.write(f"\n{len(result.leak_groups)} leak groups\n{'dumps':>6}{'retained':>14}  {'fingerprint':<12}  leak\n")
        for group in result.leak_groups[:top]:
            out.write(f"{group.dumps:>6}{group.retained_size:>14,}  {group.fingerprint[:12]}  "
                      f"{group.short_description or '?'}\n")
    elif result.histogram:
        out.write(f"\n{'dumps':>6}{'instances':>14}{'shallow size':>18}  class (top {min(top, len(result.histogram))}"
                  f" of {len(result.histogram):,})\n")
        for c in result.histogram[:top]:
            out.write(f"{c.dumps:>6}{c.instances:>14,}{c.shallow_bytes:>18,}  {c.name}\n")
    elif result.task in ("encode", "decode", "report"):
        for row in result.rows:
            if row.ok:
                found = (f", {row.value['suspects']} suspects, {row.value['leaks']} leaks"
                         if result.task == "report" else "")
                out.write(f"  {grammar.printable(row.input)} -> {grammar.printable(row.value['output'])} "
                          f"({row.value['written']:,} bytes{found})\n")


def _warn_unfinished(result: BatchResult) -> None:
    """A warning line on stderr per dump that was cut short, as encode and
    decode print it: the input that encode read, the dump that decode wrote."""
    for row in result.rows:
        if row.ok and result.task in ("encode", "decode") and row.value.get("unfinished"):
            name = row.value["output"] if result.task == "decode" else row.input
            print(f"hprofkit: warning: {UnfinishedDump(**row.value['unfinished']).describe(name)}", file=sys.stderr)


def _writes_json(out: str) -> bool:
    return out == "-" or out.endswith(".json")


def _check_out(out: str, inputs: list[str]) -> None:
    """Before any work: --out may not be an input (by device and inode: a symlink to one too), and
    a Parquet directory is new."""
    for path in inputs:
        check_not_same_file(path, out)
    if not _writes_json(out) and os.path.lexists(out):
        raise ValueError(f"--out {out} exists: Parquet results go to a new directory (a .json name writes JSON)")


def cmd_batch(args: argparse.Namespace) -> int:
    if args.out is not None:
        _check_out(args.out, args.inputs)
    start = time.perf_counter()
    if args.json and args.out is not None:
        raise grammar.UsageError("--json prints the result, --out writes it: give one")
    if args.mapping is not None and args.task not in NAMED_TASKS:
        raise grammar.UsageError(f"--mapping: the {args.task} task reads no names ({', '.join(NAMED_TASKS)} do)")
    result = batch(args.task, args.inputs, args.scheduler, jobs=args.jobs, output_dir=args.output_dir,
                   heap_options=grammar.heap_options(args), progress=Progress("batch", unit="dumps"))
    seconds = time.perf_counter() - start
    if args.json:
        grammar.print_json(result.to_dict())
    elif args.out is None:
        write_summary(result, seconds, sys.stdout, args.top)
    elif _writes_json(args.out):
        with output_file(args.out) as f:
            f.write((result.to_json(indent=1) + "\n").encode())
    else:
        try:
            result.to_parquet(args.out)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    _warn_unfinished(result)
    failed = len(result.failed)
    if failed:
        print(f"hprofkit: error: {failed} of {len(result.rows)} inputs failed", file=sys.stderr)
        return 1
    return 0


def add_commands(sub: Any) -> None:
    p = grammar.command(sub, "batch", cmd_batch, "one task over many dumps: a local pool, or a Dask cluster",
                        example="hprofkit batch leaks dumps/*.hprof --jobs 4\n"
                                "hprofkit batch histogram dumps/*.hpk --scheduler tcp://10.0.0.5:8786 --out h.json")
    p.add_argument("task", choices=TASKS, help="leaks (grouped by fingerprint), stats, histogram (totals across "
                                               "dumps), encode (NAME.hpk), decode (NAME.hprof), report (NAME.html)")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="dumps (or packs / minis for decode)")
    p.add_argument("--jobs", type=grammar.workers, default=None, metavar="N",
                   help="local worker processes (default: one per CPU)")
    p.add_argument("--scheduler", type=grammar.non_empty("a scheduler address"), default=None, metavar="ADDR",
                   help="run on the Dask cluster of this scheduler (tcp://HOST:PORT) instead")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the result: FILE.json (or -) as JSON, any other name as a new directory of Parquet files")
    p.add_argument("--output-dir", default=None, metavar="DIR",
                   help="encode / decode / report: where outputs go (default: beside each input)")
    grammar.add_heap_options(p)
    grammar.add_rows(p, help="rows of the summary's table (default 20)")
    grammar.add_json(p, "the result as one JSON object (as --out FILE.json writes it)")
