"""find_leaks on a big dump: what the Python layer costs on top of the C search.

    python benchmarks/bench_leaks.py [--dump FILE] [--mb 300] [--watch 1000]

Without --dump it writes a fresh HeapGen dump into a temporary folder.  HeapGen
heaps hold no Android component, so the run times: the default finders
scanning the heap (they find nothing), then a finder "watching" the
instances among --watch objects spread over the heap: the path search alone
(heap.paths_to_root, once cold, once warm), the dominators, the Python layer
alone on those paths (leaks.leaks_of_paths: inspectors, statuses,
fingerprints, retained-size look-ups), and find_leaks as a whole."""

from __future__ import annotations

import argparse
import time

import hprofkit
from hprofkit import leaks

from _common import dump_options, measured_dump


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 300)
    parser.add_argument("--watch", type=int, default=1000, help="objects the benchmark finder names")
    args = parser.parse_args()
    with measured_dump(args) as path:
        heap, seconds = timed(lambda: hprofkit.open_heap(path))
        print(f"{'index build':<44}{seconds:>8.2f} s  ({heap.object_count:,} objects)")
        found, seconds = timed(lambda: heap.find_leaks())
        print(f"{'default finders (no Android classes)':<44}{seconds:>8.2f} s  ({len(found)} leaks)")

        step = max(1, heap.object_count // args.watch)
        watched = [obj for i, obj in enumerate(heap.objects()) if i % step == 0 and obj.kind == "instance"]
        exclude = hprofkit.match.JDK_DEFAULTS
        _, first = timed(lambda: heap.paths_to_root(watched, exclude=exclude))
        print(f"{'first paths_to_root (builds the graph)':<44}{first:>8.2f} s  ({len(watched):,} instances)")
        paths, search = timed(lambda: heap.paths_to_root(watched, exclude=exclude))
        reached = sum(p is not None for p in paths)
        print(f"{'paths_to_root':<44}{search:>8.2f} s  ({reached:,} reached)")
        _, seconds = timed(heap.compute_retained)
        print(f"{'compute_retained (dominators)':<44}{seconds:>8.2f} s")
        candidates = [leaks.Candidate(obj) for obj in watched]
        found, seconds = timed(lambda: leaks.leaks_of_paths(heap, candidates, paths))
        print(f"{'leak traces from the paths':<44}{seconds:>8.2f} s  ({len(found):,} leaks, "
              f"{sum(len(leak.nodes) for leak in found):,} nodes: {len(found) / seconds:,.0f} leaks/s)")
        _, seconds = timed(lambda: heap.find_leaks(exclude=exclude, finders=(lambda h: watched,)))
        print(f"{'find_leaks (search + traces)':<44}{seconds:>8.2f} s")
        if found:
            print(f"\nthe deepest trace:\n{max(found, key=lambda leak: len(leak.nodes))}")
        heap.close()


if __name__ == "__main__":
    main()
