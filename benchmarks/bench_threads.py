"""A thread's retained size with what its stack holds (#31, point 6b), on javac's
own heap, and what that model costs the dominators.

    python benchmarks/bench_threads.py [--dump FILE] [--runs 5] [--against DIR]

Without --dump, javac compiles --classes generated classes with
JavacHeapDump.java as a plugin, which dumps javac's heap from its main thread
half way through.  Prints, for the hprofkit imported and, with --against, for
the one in DIR/python (a build of another commit, run in a subprocess): the
threads retaining most, each with its retained size, the roots its stack holds
and the largest size one of them retains alone; then heap.compute_retained()'s
best wall and CPU seconds over --runs runs (each in a fresh process, the two
builds interleaved so that the machine's load falls on both alike) and the
ratio of the imported build's to the other's (target <= 1.10x)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, javac_dump, warm



def measure(path: str, figures: bool) -> dict:
    """One run in this process: compute_retained()'s wall and CPU seconds, and
    with `figures` the threads retaining most."""
    import time

    import hprofkit
    with hprofkit.open_heap(path) as heap:
        wall, cpu = time.perf_counter(), time.process_time()
        heap.compute_retained()
        out: dict = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
        if figures:
            out["threads"] = []
            for t in sorted(heap.threads(), key=lambda t: (-t.retained_size, t.serial))[:3]:
                held = [o for f in t.frames for o in f.locals] + list(t.held)
                alone = max((heap.retained_size(o) for o in held if o != t.object), default=0)
                out["threads"].append([t.name, t.retained_size, len(held), alone])
    return out


def run(python_dir: Path, path: Path, figures: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(python_dir))
    proc = subprocess.run([sys.executable, __file__, "--measure", str(path)] + (["--figures"] if figures else []),
                          env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, help="an existing dump (default: javac's, generated)")
    parser.add_argument("--classes", type=int, default=400, help="classes javac compiles (default 400)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, help="a source tree whose python/ holds another hprofkit build")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--figures", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.figures)))
        return
    import hprofkit
    builds = {"this": Path(hprofkit.__file__).resolve().parents[1]}
    if args.against:
        builds["against"] = args.against.resolve() / "python"
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-", dir="/tmp") as tmp:
        path = args.dump or javac_dump(Path(tmp), args.classes)
        warm(path)
        print(f"dump: {path} ({os.path.getsize(path) / 1e6:,.0f} MB)")
        best = {name: (float("inf"), 0.0) for name in builds}
        for k in range(args.runs):
            for name, python_dir in builds.items():
                got = run(python_dir, path, figures=k == 0)
                if k == 0:
                    print(f"{name} ({python_dir.relative_to(ROOT.parent) if ROOT.parent in python_dir.parents else python_dir}):")
                    for thread, retained, held, alone in got["threads"]:
                        print(f"  thread {thread!r:24} retains {retained:>12,} B; its stack holds {held} roots, "
                              f"the largest retaining {alone:,} B alone")
                best[name] = min(best[name], (got["wall"], got["cpu"]))
        for name, (wall, cpu) in best.items():
            print(f"compute_retained(), {name:<7}  best of {args.runs}: wall {wall:6.3f} s  cpu {cpu:6.3f} s")
        if args.against:
            print(f"ratio this / against: {best['this'][0] / best['against'][0]:.3f}x wall, "
                  f"{best['this'][1] / best['against'][1]:.3f}x cpu (target <= 1.10x)")


if __name__ == "__main__":
    main()
