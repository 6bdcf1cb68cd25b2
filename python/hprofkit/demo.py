"""`python -m hprofkit demo`: writes a sample Android dump with HprofWriter
and runs the workflow on it, so a new user sees every step on real bytes."""

from __future__ import annotations

import os
import time
from typing import TextIO

from ._dump import Dump
from .writer import write_sample_dump


def _mb(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


def run(workdir: str, out: TextIO) -> int:
    """Runs the demo in `workdir`; returns the exit status (0 when every check passed)."""
    source = os.path.join(workdir, "sample-android.hprof")
    started = time.perf_counter()
    sample = write_sample_dump(source, android=True, objects=3000, seed=7)
    out.write(f"1. wrote a sample ART heap dump with HprofWriter: {source}\n"
              f"   {_mb(os.path.getsize(source))}, {sample.instances:,} objects in {sample.segments} segments "
              f"({time.perf_counter() - started:.2f} s)\n\n")

    with Dump(source) as dump:
        records = sum(1 for _ in dump.records())
        first = next(r for r in dump.records() if r.name == "HEAP_DUMP_SEGMENT")
        out.write(f"2. opened it: {dump.magic}, identifier size {dump.id_size}, {records:,} records;\n"
                  f"   first heap segment at offset {first.offset:,}, its body a zero-copy "
                  f"{type(first.body).__name__} of {len(first.body):,} bytes\n")
        del first
        stats = dump.stats()
    out.write("\n3. statistics and class histogram:\n")
    out.write("   " + stats.format(top=8).replace("\n", "\n   ") + "\n")

    counted = {row.name: row.instances for row in stats.histogram}
    ok = counted == sample.histogram
    out.write(f"\n4. check: histogram equals what the writer wrote "
              f"({sum(counted.values()):,} objects in {len(counted)} classes): {'OK' if ok else 'MISMATCH'}\n")
    return 0 if ok else 1
