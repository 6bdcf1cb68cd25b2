"""Reachability on a >= 1 GB HotSpot dump, against VisualVM's heap library.

    python benchmarks/bench_reach.py [--dump FILE] [--mb 1000] [--no-oracle]

Without --dump it writes a fresh HeapGen dump into a temporary folder (and
deletes it).  One run prints, for semantics="hprofkit": the graph build,
one shortest-path search reaching every object, the dominators with every
retained size (seconds and objects/s), the same under semantics="visualvm"
(whose largest retained size must equal VisualVM's), the peak anonymous RSS
per object of index + graph + dominators (in a fresh interpreter), and
VisualVM's time for getBiggestObjectsByRetainedSize(20) on the same dump
(after its createHeap, timed apart).  Targets: retained sizes >= 15x faster
than VisualVM, <= 48 bytes per object."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import hprofkit

from _common import child_anon_peak, dump_options, measured_dump, run_visualvm


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def line(label: str, seconds: float, n: int) -> None:
    print(f"{label:<44}{seconds:>9.3f} s  {n / seconds / 1e6:>8.2f} M objects/s")


def visualvm_retained(path: Path) -> tuple[float, float, int]:
    """(open seconds, retained-size seconds, the biggest retained size) inside VisualVM's JVM."""
    out = run_visualvm("VisualVMRetained.java", path, heap="12g")
    return float(out[0]), float(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 1000, oracle="skip VisualVM")
    args = parser.parse_args()

    with measured_dump(args) as path:
        heap = hprofkit.open_heap(path)
        n = heap.object_count
        print(f"{n:,} objects, {heap.class_count:,} classes, semantics {heap.semantics}")
        # The first search builds the graph; the second is the search alone.
        first = timed(lambda: heap._routes([], []))
        search = timed(lambda: heap._routes([], []))
        line("graph build", first - search, n)
        line("shortest paths to every object (one BFS)", search, n)
        dominators = timed(heap.compute_retained)
        line("dominators + retained sizes", dominators, n)
        (top, size), = heap.top_retainers(1)
        print(f"{'largest retainer':<44}{size:>9,} B  {top!r}")
        heap.close()
        vv = hprofkit.open_heap(path, semantics="visualvm")
        vv_seconds = timed(vv.compute_retained)
        line("semantics=visualvm: search, graph, retained", vv_seconds, n)
        (vv_top, vv_size), = vv.top_retainers(1)
        print(f"{'semantics=visualvm: largest retainer':<44}{vv_size:>9,} B  {vv_top!r}")
        vv.close()

        base_kb, peak_kb = child_anon_peak(
            f"heap = hprofkit.open_heap({str(path)!r}); heap._routes([], []); heap.compute_retained()")
        print(f"{'peak anonymous RSS, index+graph+dominators':<44}{(peak_kb - base_kb) * 1024 / n:>9.2f} B/object"
              f"  ({(peak_kb - base_kb) / 1024:,.0f} MiB)")

        if not args.no_oracle:
            opened, retained, biggest = visualvm_retained(Path(path))
            print(f"{'VisualVM createHeap':<44}{opened:>9.3f} s")
            line("VisualVM getBiggestObjectsByRetainedSize", retained, n)
            print(f"{'VisualVM biggest retained size':<44}{biggest:>9,} B  "
                  f"({'equal to' if biggest == vv_size else 'DIFFERENT from'} semantics=visualvm's)")
            # The headline counts everything retained sizes need after the
            # index (VisualVM's createHeap is timed apart on its side too).
            print(f"{'retained sizes vs VisualVM (graph + dominators)':<44}"
                  f"{retained / (first - search + dominators):>9.1f} x faster "
                  f"(dominators alone: {retained / dominators:.1f} x; "
                  f"semantics=visualvm: {retained / vv_seconds:.1f} x)")


if __name__ == "__main__":
    main()
