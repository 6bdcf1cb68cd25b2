"""Heap diffs on big dumps, and what the pytest plugin costs a suite.

    python benchmarks/bench_diff.py [--dumps A B] [--mb 300] [--runs 5]

Without --dumps it writes two fresh HeapGen dumps (seeds 7 and 8) into a
temporary folder.  Prints: opening both heaps, the per-class histogram of
each (diff's first step), the whole diff, retained sizes per class (the
dominator trees), growth paths for the 5 classes that grew most; then pytest
collecting an empty suite with the plugin and with `-p no:hprofkit` (best of
--runs), and the plugin module's own import time."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import hprofkit
from hprofkit.heapdiff import class_histogram, diff

from _common import best_of, heapgen, warm


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def bench_diff(a: Path, b: Path) -> None:
    for path in (a, b):
        warm(path)
    (heap_a, heap_b), seconds = timed(lambda: (hprofkit.open_heap(a), hprofkit.open_heap(b)))
    print(f"{'open both heaps':<44}{seconds:>8.2f} s  ({heap_a.object_count:,} + {heap_b.object_count:,} objects)")
    hist, seconds = timed(lambda: class_histogram(heap_a))
    arrays = sum(c.instance_count for c in heap_a.classes if c.instance_size is None)
    print(f"{'class_histogram(a)':<44}{seconds:>8.2f} s  ({len(hist):,} names, {arrays:,} arrays summed)")
    result, seconds = timed(lambda: diff(heap_a, heap_b))
    print(f"{'diff(a, b)':<44}{seconds:>8.2f} s  ({len(result.rows):,} classes changed)")
    _, seconds = timed(lambda: diff(heap_a, heap_b, retained=True))
    print(f"{'diff(a, b, retained=True)':<44}{seconds:>8.2f} s  (both dominator trees)")
    result, seconds = timed(lambda: diff(heap_a, heap_b, paths=True, top_paths=5))
    traced = sum(max(r.count_a, r.count_b) for r in sorted(result.rows, key=lambda r: -r.count_delta)[:5])
    print(f"{'diff(a, b, paths=True) for 5 classes':<44}{seconds:>8.2f} s  (up to {traced:,} objects a side, "
          f"{len(result.paths):,} grown paths{', sampled' if result.paths_sampled else ''})")
    heap_a.close()
    heap_b.close()


def bench_plugin(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-plugin-") as tmp:
        Path(tmp, "test_empty.py").write_text("def test_nothing():\n    pass\n")
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

        def collect(*extra: str) -> None:
            subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *extra],
                           cwd=tmp, env=env, check=True, stdout=subprocess.DEVNULL)

        with_plugin = best_of(runs, collect)
        without = best_of(runs, lambda: collect("-p", "no:hprofkit"))
        print(f"{'pytest --collect-only, plugin loaded':<44}{with_plugin:>8.3f} s  (best of {runs})")
        print(f"{'pytest --collect-only, -p no:hprofkit':<44}{without:>8.3f} s  "
              f"(difference {1000 * (with_plugin - without):+.0f} ms)")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest, _hprofkit_pytest"],
                         capture_output=True, text=True, check=True).stderr
    own = next(int(line.split("|")[0].split(":")[1]) for line in out.splitlines() if line.endswith("_hprofkit_pytest"))
    loaded = subprocess.run([sys.executable, "-c", "import pytest, _hprofkit_pytest, sys; print('hprofkit' in sys.modules)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    print(f"{'import _hprofkit_pytest (self, pytest loaded)':<44}{own / 1000:>8.1f} ms  (imports hprofkit: {loaded})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dumps", type=Path, nargs=2, metavar=("A", "B"), help="two dumps (default: generate)")
    parser.add_argument("--mb", type=int, default=300, help="HeapGen heap size when generating (default 300)")
    parser.add_argument("--runs", type=int, default=5, help="pytest runs per configuration (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-diff-") as tmp:
        a, b = args.dumps or (heapgen(Path(tmp) / "a.hprof", args.mb, 7), heapgen(Path(tmp) / "b.hprof", args.mb, 8))
        bench_diff(a, b)
    bench_plugin(args.runs)


if __name__ == "__main__":
    main()
