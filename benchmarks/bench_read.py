"""Reading speed and memory on a >= 1 GB HotSpot dump, against the VisualVM oracle.

    python benchmarks/bench_read.py [--dump FILE] [--mb 1000] [--no-oracle] [--parser]

--parser adds the push parser's rate: Parser.feed over the file in 1 MiB
chunks of bytes, every event (with its payload view) built and dropped.

Without --dump it writes a fresh HeapGen dump into a temporary folder.  All
figures come from the same file in the same run, on a warm page cache."""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from pathlib import Path

import hprofkit
from hprofkit import _hprof

from _common import SHARED, best_of, child_anon_peak, dump_options, measured_dump


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 1000, oracle="skip the oracle baseline")
    parser.add_argument("--parser", action="store_true", help="also time Parser.feed (1 MiB chunks)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per C measurement; the best is kept")
    args = parser.parse_args()

    with measured_dump(args) as path:
        size = os.path.getsize(path)
        mb = size / 1e6

        with hprofkit.open(path) as dump:
            events = _hprof.walk(dump.buffer)
            t_walk = best_of(args.repeat, lambda: _hprof.walk(dump.buffer))
            t_stats = best_of(args.repeat, lambda: dump.stats())
            stats = dump.stats()
            subrecords = sum(t.count for t in stats.subrecords.values())
            start = time.perf_counter()
            n = 0
            for _ in dump.subrecords():
                n += 1
            t_iter = time.perf_counter() - start
        assert n == subrecords

        base_kb, peak_kb = child_anon_peak(f"hprofkit.stats({str(path)!r})")

        print(f"{'C sub-record walk':<38}{mb / t_walk:>10,.0f} MB/s  ({events:,} events in {t_walk:.3f} s)")
        print(f"{'stats() with class histogram':<38}{mb / t_stats:>10,.0f} MB/s  ({t_stats:.3f} s, "
              f"{len(stats.histogram):,} classes)")
        print(f"{'Python sub-record iteration':<38}{n / t_iter / 1e6:>10,.2f} M sub-records/s  "
              f"({n:,} in {t_iter:.2f} s)")
        print(f"{'peak anonymous RSS during stats()':<38}{peak_kb / 1024:>10,.1f} MB  "
              f"(interpreter + hprofkit at rest: {base_kb / 1024:.1f} MB; growth {(peak_kb - base_kb) / 1024:.1f} MB)")

        if args.parser:
            events, t_feed, cpu_feed = parser_feed(path)
            print(f"{'Parser.feed, 1 MiB chunks':<38}{mb / t_feed:>10,.1f} MB/s  ({events:,} events in {t_feed:.2f} s; "
                  f"CPU {cpu_feed:.2f} s: {mb / cpu_feed:,.1f} MB/s)")

        if not args.no_oracle:
            start = time.perf_counter()
            subprocess.run(["bash", str(SHARED / "tools" / "oracle" / "run.sh"), str(path)], check=True,
                           stdout=subprocess.DEVNULL)
            t_oracle = time.perf_counter() - start
            print(f"{'oracle (VisualVM heap library)':<38}{mb / t_oracle:>10,.0f} MB/s  ({t_oracle:.2f} s)")
            print(f"{'stats() speed / oracle speed':<38}{t_oracle / t_stats:>10,.1f} x")


def parser_feed(path: Path) -> tuple[int, float, float]:
    """Events, wall and CPU seconds of feeding the whole file to a Parser
    (chunks read from the page cache as bytes, as a pipe reader gets them).
    CPU time is the steadier figure on a shared machine."""
    parser = hprofkit.Parser()
    events = 0
    start, cpu = time.perf_counter(), time.process_time()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            events += len(parser.feed(chunk))
    events += len(parser.finish())
    return events, time.perf_counter() - start, time.process_time() - cpu


if __name__ == "__main__":
    main()
