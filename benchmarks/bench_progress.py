"""What progress costs (#21): open_heap plus the dominators on a HeapGen dump,
without progress and with a callable progress(done, total, stage), runs
interleaved so that the machine's load falls on both alike.

    python benchmarks/bench_progress.py [--dump FILE] [--mb 400] [--runs 3]

Prints, for each way, the best wall and CPU seconds of --runs runs, the
ratio of the callable's to none's (target: within noise, <= 1.05x), and the
calls the callable received per run by stage (the index build reports every
16 MB of the file walked)."""

from __future__ import annotations

import argparse
from collections import Counter

import hprofkit

from _common import dump_options, measured_dump, timed


def open_and_dominate(path, progress) -> None:
    with hprofkit.open_heap(path, progress=progress) as heap:
        heap.compute_retained(progress=progress)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 400)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with measured_dump(args) as path:
        calls: Counter[str] = Counter()
        best = {"none": (float("inf"), 0.0), "callable": (float("inf"), 0.0)}
        for _ in range(args.runs):
            for way, progress in (("none", None), ("callable", lambda done, total, stage: calls.update([stage]))):
                _, wall, cpu = timed(lambda: open_and_dominate(path, progress))
                if wall < best[way][0]:
                    best[way] = (wall, cpu)
        for way, (wall, cpu) in best.items():
            print(f"open_heap + dominators, progress {way:<8}  wall {wall:7.3f} s  cpu {cpu:7.3f} s")
        print(f"ratio callable / none: {best['callable'][0] / best['none'][0]:.3f}x (target <= 1.05x)")
        print("calls per run by stage: " + ", ".join(f"{stage} {n // args.runs}" for stage, n in calls.items()))


if __name__ == "__main__":
    main()
