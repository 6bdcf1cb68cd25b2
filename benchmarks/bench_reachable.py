"""Reachable objects by default (issue #31, point 1): what changes, and what it costs.

    python benchmarks/bench_reachable.py [--dump FILE] [--mb 300] [--code DIR] [--classes 400 | --no-javac]

Part 1, on the shared dumps that hold garbage (a dump written without `live` keeps what the
last collection had not freed) and on javac's own heap dumped half way through compiling
--classes generated classes, garbage kept (benchmarks/JavacHeapDump.java with `all`: the
issue's `jcmd GC.heap_dump -all`): each figure as every object gives it (before: what
hprofkit printed, and what VisualVM prints) and as the reachable objects give it (after: the
default, Eclipse MAT's) — heap bytes, the largest class, duplicate Strings and their waste,
the leak-suspect threshold (10% of the heap).

Part 2, on a HeapGen dump (--mb, default 300 MB; or --dump): the time of open_heap, of the
dominators, of duplicate_strings() counting every String (the pass hprofkit ran before, now
with a bit test per String) and of the default (the reachable ones: the reference graph is
built and marked first, unless the dominators built it already), and of marking alone on a
heap whose dominators are computed.  --code DIR measures another checkout's package in the
same way (its default counts every String), for a side-by-side run."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from _common import SHARED, dump_options, javac_dump, measured_dump

ROOT = Path(__file__).resolve().parent.parent
DUMPS = ["mat__oracle_jdk8_05_x64.hprof", "py-hprof__example-java.hprof.bz2", "mat__sun_jdk6_18_x64.hprof",
         "mat__oracle_jdk7_21_x64.hprof", "leakcanary__leak_service_binder.hprof"]

FIGURES = """
import sys, hprofkit
from hprofkit._units import human_size
heap = hprofkit.open_heap(sys.argv[1])
for label, unreachable in (("every object (before)", True), ("reachable (after)", False)):
    rows = heap.histogram(unreachable=unreachable)
    total = sum(r.shallow_size for r in rows)
    dups = heap.duplicate_strings(unreachable=unreachable)
    top = max(rows, key=lambda r: r.shallow_size)
    print(f"  {label:<22} heap {human_size(total):>10}  largest {top.name} {human_size(top.shallow_size):>9}  "
          f"duplicate Strings {len(dups):>5,} texts {sum(d.count for d in dups):>7,} copies "
          f"{human_size(sum(d.wasted_bytes for d in dups)):>9} wasted  suspect threshold {human_size(total // 10)}")
garbage = heap.unreachable_histogram()
tree = sum(max(heap.retained_size(o), 0) for o in heap.dominator_roots())
print(f"  unreachable: {sum(r.instances for r in garbage):,} objects, "
      f"{human_size(sum(r.shallow_size for r in garbage))}; the dominator tree holds {human_size(tree)}")
"""

TIMES = """
import sys, time, hprofkit
path, new = sys.argv[1], hasattr(hprofkit.Heap, "histogram")

def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start

best = lambda fn, n=3: min(timed(fn) for _ in range(n))
print(f"  open_heap                            {best(lambda: hprofkit.open_heap(path).close()):7.2f} s")
every = (lambda h: h.duplicate_strings(unreachable=True)) if new else (lambda h: h.duplicate_strings())
print(f"  duplicate_strings, every String      {best(lambda: every(hprofkit.open_heap(path))):7.2f} s (with the open)")
if new:
    print(f"  duplicate_strings, reachable         {best(lambda: hprofkit.open_heap(path).duplicate_strings()):7.2f} s"
          " (with the open; the default: graph and marking first)")
heap = hprofkit.open_heap(path)
print(f"  dominators (compute_retained)        {timed(heap.compute_retained):7.2f} s")
if new:
    print(f"  marking the reachable set after them {timed(lambda: heap.histogram()):7.2f} s (with the histogram)")
    print(f"  duplicate_strings, reachable, then   {best(heap.duplicate_strings):7.2f} s")
"""


def child(code: str, tree: Path, *args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree / "python"))
    subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dump_options(parser, 300)
    parser.add_argument("--code", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--classes", type=int, default=400, help="classes javac compiles (default 400)")
    parser.add_argument("--no-javac", action="store_true", help="leave javac's heap out of part 1")
    args = parser.parse_args()
    print("Part 1: figures, every object vs the reachable ones")
    for name in DUMPS:
        print(name)
        child(FIGURES, ROOT, str(SHARED / "data" / "hprof" / name))
    if not args.no_javac:
        with tempfile.TemporaryDirectory(prefix="hprofkit-bench-", dir="/tmp") as tmp:
            path = javac_dump(Path(tmp), args.classes, live=False)
            print(f"javac's heap, garbage kept ({os.path.getsize(path) / 1e6:,.0f} MB)")
            child(FIGURES, ROOT, str(path))
    print("\nPart 2: times")
    with measured_dump(args) as path:
        for tree in [ROOT] + ([args.code.resolve()] if args.code else []):
            print(f"code: {tree}")
            child(TIMES, tree, str(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
