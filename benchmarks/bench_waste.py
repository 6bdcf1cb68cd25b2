"""heap.waste() (issue #32) against the dominator tree, on a HeapGen dump.

    python benchmarks/bench_waste.py [--dump FILE] [--mb 1000]

Without --dump it writes a fresh HeapGen dump (`HeapGen.java big.hprof 1000 7`)
into a temporary folder.  One run prints, after the index is built: the time of
heap.waste() (the reachable objects: the live set's marking included, as a
first call pays it, with the reference graph both share) and of
heap.waste(unreachable=True), then the time of heap.compute_retained() (the
dominator tree) on the dump opened again (so it too builds the graph), and
their ratio; then the peak
anonymous memory heap.waste() adds beyond the index (a fresh process: the heap
opened first, its memory the baseline), per object of the dump: the reachable
objects' (its live set marked on the reference graph), every object's (no
graph), and the reachable objects' once the live set exists.
Targets: waste() <= 1.5x compute_retained(); <= 8 bytes an object."""

from __future__ import annotations

import argparse

import hprofkit

from _common import child_anon_peak, dump_options, measured_dump, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 1000)
    args = parser.parse_args()
    with measured_dump(args) as path:
        heap, t_open, _ = timed(lambda: hprofkit.open_heap(path))
        n = heap.object_count
        print(f"{'index build':<40}{t_open:>8.2f} s  ({n:,} objects)")
        w, t_waste, cpu_waste = timed(heap.waste)
        print(f"{'waste() (reachable)':<40}{t_waste:>8.2f} s  ({cpu_waste:.2f} s CPU; "
              f"{w.total_bytes:,} bytes wasted, each object once)")
        for kind in w:
            print(f"    {kind.kind:<36}{kind.objects:>12,} objects {kind.wasted_bytes:>16,} bytes")
        _, t_all, _ = timed(lambda: heap.waste(unreachable=True))
        print(f"{'waste(unreachable=True)':<40}{t_all:>8.2f} s")
        heap.close()
        heap = hprofkit.open_heap(path)
        _, t_tree, cpu_tree = timed(heap.compute_retained)
        print(f"{'compute_retained() (dominator tree)':<40}{t_tree:>8.2f} s  ({cpu_tree:.2f} s CPU)")
        print(f"{'waste() / compute_retained()':<40}{t_waste / t_tree:>8.2f} x  (target <= 1.5; of CPU time "
              f"{cpu_waste / cpu_tree:.2f} x: steadier on a shared machine)")
        heap.close()
        opened = f"heap = hprofkit.open_heap({str(path)!r})"
        for label, code, setup in (
                ("waste() beyond the index", "heap.waste()", opened),
                ("waste(unreachable=True) beyond the index", "heap.waste(unreachable=True)", opened),
                # the live set (and the reference graph it is marked on) made first, as histogram() makes it
                ("waste() beyond the index and live set", "heap.waste()", opened + "; heap.histogram()")):
            base, peak = child_anon_peak(code, setup=setup)
            extra = (peak - base) * 1024
            print(f"{label:<40}{extra / 1e6:>8.1f} MB  ({extra / n:.2f} bytes an object; target <= 8)")


if __name__ == "__main__":
    main()
