"""heap.tables() against the heap index build it follows, on one HeapGen dump (issue #22: the
tables without the dominator tree in at most 1.5 times the index build).

    python benchmarks/bench_tables.py [--dump FILE] [--mb 1000] [--repeat 5] [--profile]

Without --dump it writes a fresh HeapGen dump of --mb MB (`java HeapGen.java OUT MB 7`) into a
temporary directory and deletes it afterwards.  Each round opens the dump (the index build), then
builds tables(retained=False), then the full tables(); the rounds interleave so that a loaded
machine slows both alike, and the figures are the best round's wall and CPU seconds (CPU time:
user + system of this process, which other processes on the machine disturb less).  Prints the
ratios to the index build, the rows, and the seconds of each part of the C fill (--profile)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import dump_options, measured_dump, timed  # noqa: E402

import hprofkit  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dump_options(parser, 1000)
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--profile", action="store_true", help="time each part of the C fill too")
    args = parser.parse_args()
    with measured_dump(args) as path:
        best: dict[str, tuple[float, float]] = {}

        def keep(name: str, wall: float, cpu: float) -> None:
            old = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(old[0], wall), min(old[1], cpu))

        rows = {}
        for _ in range(args.repeat):
            heap, wall, cpu = timed(lambda: hprofkit.open_heap(path))
            keep("index build", wall, cpu)
            with heap:
                lean, wall, cpu = timed(lambda: heap.tables(retained=False))
                keep("tables(retained=False)", wall, cpu)
                rows = {name: table.num_rows for name, table in lean.items()}
                del lean
                if args.profile:
                    for part in ("objects", "strings", "references", "classes", "roots"):
                        _, wall, cpu = timed(lambda: heap._columns([part]))
                        keep(f"  C fill: {part}", wall, cpu)
                full, wall, cpu = timed(heap.tables)
                keep("tables() (dominators too)", wall, cpu)
                del full
        build_wall, build_cpu = best["index build"]
        print(f"rows: {rows['objects']:,} objects, {rows['references']:,} references, {rows['classes']:,} classes, "
              f"{rows['roots']:,} roots")
        print(f"{'':34} {'wall s':>8} {'CPU s':>8} {'wall/build':>11} {'CPU/build':>10}")
        for name, (wall, cpu) in best.items():
            print(f"{name:34} {wall:8.3f} {cpu:8.3f} {wall / build_wall:11.2f} {cpu / build_cpu:10.2f}")


if __name__ == "__main__":
    main()
