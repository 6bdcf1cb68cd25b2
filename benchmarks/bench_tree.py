"""Exploring a heap as MAT does (#24), on a 1 GB HeapGen dump, side by side
with VisualVM's heap library in the same run.

    python benchmarks/bench_tree.py [--dump FILE] [--mb 1000] [--no-oracle] [--diff] [--diff-mb 300 500]

Without --dump it writes a fresh HeapGen dump (seed 7) into a temporary
folder (and deletes it).  After the dominators (timed, for context), prints
for hprofkit and for VisualVM (benchmarks/VisualVMTree.java: what its
library needs for the same view) wall seconds, CPU seconds (hprofkit), the
ratio, and the issue's target:

- the tree: dominator_roots() and dominated(n=25) of the 25 largest of each
  row, 3 levels down (MAT's pages of 25 rows; the first call builds the
  rows);                                                     target <= 0.2 s
- retained_by("package"), and "class" and "loader";         target <= 0.5 s
- merged_paths() of 100,000 java.lang.Integer instances;      target <= 2 s
- with --diff: diff(a, b, paths=True) against diff(a, b) on two fresh
  HeapGen dumps of --diff-mb MB (300 and 500);      target <= 3x diff(a, b).

The machine's load shows in wall seconds; CPU seconds are this process's."""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path

import hprofkit

from _common import dump_options, heapgen, measured_dump, run_visualvm, timed, warm

ROWS = 25
MERGED_CLASS = "java.lang.Integer"
MERGED_OBJECTS = 100_000


def row(label: str, wall: float, cpu: float | None, peer: float | None, target: str, extra: str = "") -> None:
    cpu_text = f"{cpu:>8.3f}" if cpu is not None else f"{'':>8}"
    peer_text = f"{peer:>9.3f}  {peer / wall:>7.1f}x" if peer is not None else f"{'':>9}  {'':>8}"
    print(f"{label:<40}{wall:>8.3f}{cpu_text}  {peer_text}  {target:<9}{extra}")


def tree_levels(heap: hprofkit.Heap) -> int:
    """dominator_roots() and 3 levels of dominated(n=25) below the 25 largest of each row."""
    roots = heap.dominator_roots()
    listed, frontier = len(roots), roots[:ROWS]
    for _ in range(3):
        below = []
        for obj in frontier:
            kids = obj.dominated(n=ROWS)
            listed += len(kids)
            below.extend(kids)
        frontier = below
    return listed


def bench_tree(path: Path, oracle: bool) -> None:
    heap, wall, cpu = timed(lambda: hprofkit.open_heap(path))
    n = heap.object_count
    print(f"{n:,} objects, {heap.class_count:,} classes; open_heap {wall:.2f} s")
    _, wall, cpu = timed(heap.compute_retained)
    print(f"dominators and retained sizes: {wall:.2f} s wall, {cpu:.2f} s CPU (before everything below)")
    vv = None
    if oracle:
        vv = [float(w) for w in run_visualvm("VisualVMTree.java", path, "12g", MERGED_CLASS)[:6]]
        print(f"VisualVM: createHeap {vv[0]:.2f} s, retained sizes {vv[1]:.2f} s (before its figures below)")
    print(f"\n{'':<40}{'hprofkit':>8}{'CPU':>8}  {'VisualVM':>9}  {'ratio':>8}  {'target':<9}")
    listed, wall, cpu = timed(lambda: tree_levels(heap))
    row("roots + 3 levels (25 a row)", wall, cpu, vv[2] if vv else None, "<= 0.2 s",
        f"{listed:,} objects listed; rows {8 * n / 2**20:,.0f} MiB (8 B an object)")
    for key, peer in (("package", vv[4] + vv[3] if vv else None), ("class", vv[3] if vv else None),
                      ("loader", None)):
        groups, wall, cpu = timed(lambda: heap.retained_by(key))
        row(f'retained_by("{key}")', wall, cpu, peer, "<= 0.5 s" if key == "package" else "",
            f"{len(groups):,} groups" + (" (VisualVM: by class, then summed)" if key == "package" else ""))
    cls = heap.find_class(MERGED_CLASS)
    objs = list(itertools.islice(cls.instances(), MERGED_OBJECTS))
    merged, wall, cpu = timed(lambda: heap.merged_paths(objs, exclude=()))
    row(f"merged_paths({len(objs):,} {MERGED_CLASS})", wall, cpu, vv[5] if vv else None, "<= 2 s",
        f"{sum(1 for _ in merged.walk()):,} nodes; VisualVM: nearest-root chains")
    heap.close()


def bench_diff(megabytes: list[int]) -> None:
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-tree-", dir="/tmp") as tmp:
        a, b = (heapgen(Path(tmp) / f"heapgen-{mb}.hprof", mb, seed) for mb, seed in zip(megabytes, (7, 8)))
        for path in (a, b):
            warm(path)
        _, plain, plain_cpu = timed(lambda: hprofkit.diff(a, b))
        result, with_paths, paths_cpu = timed(lambda: hprofkit.diff(a, b, paths=True))
        print(f"\ndiff of HeapGen {megabytes[0]} MB and {megabytes[1]} MB")
        print(f"{'diff(a, b)':<40}{plain:>8.2f} s wall {plain_cpu:>8.2f} s CPU")
        print(f"{'diff(a, b, paths=True)':<40}{with_paths:>8.2f} s wall {paths_cpu:>8.2f} s CPU  "
              f"{with_paths / plain:.2f}x diff(a, b) (target <= 3x); {len(result.paths):,} grown paths")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 1000, oracle="skip VisualVM")
    parser.add_argument("--diff", action="store_true", help="also time diff(paths=True) on two fresh dumps")
    parser.add_argument("--diff-mb", type=int, nargs=2, default=[300, 500], metavar="MB",
                        help="the sizes of those dumps (default 300 500)")
    args = parser.parse_args()
    with measured_dump(args) as path:
        bench_tree(Path(path), not args.no_oracle)
    if args.diff:
        bench_diff(args.diff_mb)


if __name__ == "__main__":
    main()
