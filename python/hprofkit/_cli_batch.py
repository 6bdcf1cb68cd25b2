"""Command line: python -m hprofkit batch leaks|stats|histogram|encode|decode INPUTS... [--jobs N]
[--scheduler ADDR] [--out FILE].

Prints a summary (or writes --out: JSON for a .json name, else a directory of Parquet files); exits 1
with a one-line message when any input failed, after every other input was processed."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from typing import Any, Iterator, TextIO

from ._progress import Progress
from ._stats import UnfinishedDump
from .batching import TASKS, BatchResult, batch

TOP = 20


@contextlib.contextmanager
def _executor(scheduler: str | None) -> Iterator[Any]:
    """None (the local pool), or a distributed.Client on the scheduler at ADDR."""
    if scheduler is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs distributed: pip install 'hprofkit[dask]'") from None
    with Client(scheduler) as client:
        yield client


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def write_summary(result: BatchResult, seconds: float, out: TextIO) -> None:
    failed = result.failed
    out.write(f"{result.task}: {len(result.rows)} inputs, {len(result.rows) - len(failed)} ok, "
              f"{len(failed)} failed, {seconds:.1f} s\n")
    for row in failed:
        out.write(f"  FAILED {row.input}: {row.error}\n")
    if result.task == "leaks":
        out.write(f"\n{len(result.leak_groups)} leak groups\n{'dumps':>6}{'retained':>14}  fingerprint\n")
        for group in result.leak_groups[:TOP]:
            out.write(f"{group.dumps:>6}{group.retained_size:>14,}  {group.fingerprint}  "
                      f"{_first_line(group.example)}\n")
    elif result.histogram:
        out.write(f"\n{'dumps':>6}{'instances':>14}{'shallow bytes':>18}  class (top {min(TOP, len(result.histogram))}"
                  f" of {len(result.histogram):,})\n")
        for c in result.histogram[:TOP]:
            out.write(f"{c.dumps:>6}{c.instances:>14,}{c.shallow_bytes:>18,}  {c.name}\n")
    elif result.task in ("encode", "decode"):
        for row in result.rows:
            if row.ok:
                out.write(f"  {row.input} -> {row.value['output']} ({row.value['written']:,} bytes)\n")


def _warn_unfinished(result: BatchResult) -> None:
    """A warning line on stderr per dump that was cut short, as encode and
    decode print it: the input that encode read, the dump that decode wrote."""
    for row in result.rows:
        if row.ok and result.task in ("encode", "decode") and row.value.get("unfinished"):
            name = row.value["output"] if result.task == "decode" else row.input
            print(f"hprofkit: warning: {UnfinishedDump(**row.value['unfinished']).describe(name)}", file=sys.stderr)


def cmd_batch(args: argparse.Namespace) -> int:
    progress = Progress("batch", unit="dumps")
    start = time.perf_counter()
    try:
        with _executor(args.scheduler) as executor:
            result = batch(args.task, args.inputs, executor, jobs=args.jobs, output_dir=args.output_dir,
                           progress=progress)
    finally:
        progress.close()
    seconds = time.perf_counter() - start
    if args.out is None:
        write_summary(result, seconds, sys.stdout)
    elif args.out.endswith(".json"):
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(result.to_json(indent=1) + "\n")
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
    p = sub.add_parser("batch", help="one task over many dumps: a local pool, or a Dask cluster")
    p.add_argument("task", choices=TASKS, help="leaks (grouped by fingerprint), stats, histogram (totals across "
                                               "dumps), encode (NAME.hpk), decode (NAME.hprof)")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="dumps (or packs / minis for decode)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="local worker processes (default: one per CPU)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="run on the Dask cluster of this scheduler (tcp://HOST:PORT) instead")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the result: FILE.json as JSON, any other name as a directory of Parquet files")
    p.add_argument("--output-dir", default=None, metavar="DIR",
                   help="encode / decode: where outputs go (default: beside each input)")
    p.set_defaults(func=cmd_batch)
