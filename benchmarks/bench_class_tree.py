"""The class tree (heap.class_tree(): the dominator tree folded by class path)
and its pprof profile, on a HeapGen dump.

    python benchmarks/bench_class_tree.py [--dump FILE] [--mb 300]

Without --dump it writes a fresh HeapGen dump (seed 7) into a temporary
folder (and deletes it).  Prints wall and CPU seconds of compute_retained()
(the dominators the fold stands on), then of the fold in C alone
(heap._class_tree), of class_tree() (the fold and the Python nodes), of the
flame graph's document and of hprofkit.pprof (class tree, written to
/dev/null), with the anonymous memory the fold took at its peak; then
the nodes against the objects."""

from __future__ import annotations

import argparse
import os

import hprofkit
from hprofkit._report.tree import class_tree_data

from _common import AnonPeak, dump_options, measured_dump, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    dump_options(parser, 300)
    args = parser.parse_args()
    with measured_dump(args) as path:
        heap, wall, _ = timed(lambda: hprofkit.open_heap(path))
        n = heap.object_count
        print(f"{n:,} objects, {heap.class_count:,} classes; open_heap {wall:.2f} s\n")
        print(f"{'':<34}{'wall s':>8}{'CPU s':>8}")
        _, wall, cpu = timed(heap.compute_retained)
        print(f"{'compute_retained()':<34}{wall:>8.3f}{cpu:>8.3f}")
        heap.dominator_roots(0)  # the tree's rows, built once, are not the fold's
        # The first fold of the process: its scratch is fresh memory, which the peak shows.
        with AnonPeak() as peak:
            before = AnonPeak.current_kb()
            _, wall, cpu = timed(lambda: heap._class_tree(10))
        print(f"{'the fold in C (_class_tree)':<34}{wall:>8.3f}{cpu:>8.3f}   peak +{(peak.peak_kb - before) / 1024:,.0f} "
              f"MiB ({(peak.peak_kb - before) * 1024 / n:.1f} B an object)")
        tree, wall, cpu = timed(heap.class_tree)
        print(f"{'class_tree()':<34}{wall:>8.3f}{cpu:>8.3f}")
        _, wall, cpu = timed(lambda: class_tree_data(tree, depth=6))
        print(f"{'flame graph document':<34}{wall:>8.3f}{cpu:>8.3f}")
        written, wall, cpu = timed(lambda: hprofkit.pprof(heap, os.devnull))
        print(f"{'pprof(by=class-tree)':<34}{wall:>8.3f}{cpu:>8.3f}   {written['size'] / 2**20:,.1f} MiB gzip'd, "
              f"{written['samples']:,} samples")
        depth = max(d for d, _ in tree.walk())
        print(f"\nnodes: {len(tree):,} for {n:,} objects ({n / len(tree):,.0f} objects a node); deepest path "
              f"{depth:,} classes; root retains {tree.root.retained_size / 2**20:,.1f} MiB")
        top = tree.root.children[0]
        print(f"widest top-level node: {top.name}, {top.objects:,} objects, {top.retained_size / 2**20:,.1f} MiB")
        heap.close()


if __name__ == "__main__":
    main()
