"""Collections and duplicate strings (issue #24), against VisualVM's heap library.

    python benchmarks/bench_values.py [--dump FILE] [--mb 1000] [--no-oracle]

Without --dump it writes a fresh HeapGen dump (`HeapGen.java big.hprof 1000 7`)
into a temporary folder.  One run prints, for the JDK 11 dump of the shared
data and for the HeapGen dump: obj.entries() over every java.util.HashMap
(entries per second at Python level: handles and tuples made), and on the
HeapGen dump heap.duplicate_strings() (wall time, first call); then VisualVM
doing the same (benchmarks/VisualVMValues.java: the HashMaps walked by field
values, the Strings grouped by text with the same wasted bytes, its open
time printed apart).  Targets: >= 1 M entries/s; duplicate_strings() <= 2 s
on the 1 GB dump."""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import tempfile
from pathlib import Path

import hprofkit

from _common import SHARED, dump_options, measured_dump, run_visualvm, timed

JDK11 = SHARED / "data" / "hprof" / "mat__openjdk_jdk11_04_x64.hprof.gz"


def entries_rate(label: str, heap: hprofkit.Heap, repeat: int = 5) -> int:
    """Best of `repeat` passes of entries() over every HashMap (wall and CPU time: on a shared
    machine the CPU time is the steadier figure); returns the entries."""
    cls = heap.find_class("java.util.HashMap")
    maps = list(cls.instances()) if cls is not None else []
    wall = cpu = float("inf")
    count = 0
    for _ in range(repeat):
        count, seconds, cpu_seconds = timed(lambda: sum(len(m.entries()) for m in maps))
        wall, cpu = min(wall, seconds), min(cpu, cpu_seconds)
    print(f"{label:<44}{count / wall / 1e6:>8,.2f} M entries/s  ({count:,} entries of {len(maps):,} maps "
          f"in {wall:.3f} s; {count / cpu / 1e6:,.2f} M/s of CPU time)")
    return count


def visualvm(path: Path, mode: str) -> list[float]:
    return [float(word) for word in run_visualvm("VisualVMValues.java", path, "8g", mode)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 1000, oracle="skip VisualVM")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-", dir="/tmp") as tmp:
        jdk11 = Path(tmp) / "jdk11.hprof"
        with gzip.open(JDK11) as src, open(jdk11, "wb") as dst:
            shutil.copyfileobj(src, dst)
        with hprofkit.open_heap(jdk11) as heap:
            entries_rate("entries(), every HashMap of the JDK 11 dump", heap)
        if not args.no_oracle:
            seconds, entries, maps, open_s, _ = visualvm(jdk11, "hashmaps")
            print(f"{'  VisualVM, the same walk by field values':<44}{entries / seconds / 1e6:>8,.2f} M entries/s  "
                  f"({entries:,.0f} entries of {maps:,.0f} maps in {seconds:.3f} s; open {open_s:.1f} s)")

    with measured_dump(args) as path:
        heap, t_open, _ = timed(lambda: hprofkit.open_heap(path))
        print(f"{'index build':<44}{t_open:>8.2f} s  ({heap.object_count:,} objects, "
              f"{os.path.getsize(path) / 1e9:.2f} GB)")
        entries = entries_rate("entries(), every HashMap of the HeapGen dump", heap)
        groups, t_dups, cpu_dups = timed(heap.duplicate_strings)
        strings = heap.find_class("java.lang.String")
        print(f"{'duplicate_strings()':<44}{t_dups:>8.2f} s  ({len(groups):,} texts of "
              f"{strings.instance_count if strings is not None else 0:,} Strings, "
              f"{sum(g.wasted_bytes for g in groups):,} bytes wasted; {cpu_dups:.2f} s CPU)")
        if not args.no_oracle:
            seconds, n_groups, wasted, open_s = visualvm(path, "strings")
            print(f"{'  VisualVM, the same grouping':<44}{seconds:>8.2f} s  ({n_groups:,.0f} texts, {wasted:,.0f} "
                  f"bytes wasted; open {open_s:.1f} s) -> hprofkit {seconds / t_dups:,.1f}x faster")
            assert (n_groups, wasted) == (len(groups), sum(g.wasted_bytes for g in groups)), "VisualVM disagrees"
            seconds, vv_entries, maps, open_s, _ = visualvm(path, "hashmaps")
            print(f"{'  VisualVM, every HashMap by field values':<44}{vv_entries / seconds / 1e6:>8,.2f} M entries/s"
                  f"  ({vv_entries:,.0f} entries in {seconds:.3f} s)")
            assert vv_entries == entries, "VisualVM counts other entries"
        heap.close()


if __name__ == "__main__":
    main()
