"""Helpers shared by the benchmark scripts: input dumps, timing, memory."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HPROFKIT_SHARED", ROOT.parent / "shared"))


def heapgen(path: Path, megabytes: int, seed: int = 7) -> Path:
    """Writes a HotSpot dump of about `megabytes` MB with ../shared/tools/heapgen."""
    print(f"generating {path} ({megabytes} MB heap, seed {seed}) ...", file=sys.stderr)
    subprocess.run(["java", str(SHARED / "tools" / "heapgen" / "HeapGen.java"), str(path), str(megabytes), str(seed)],
                   check=True, stdout=subprocess.DEVNULL)
    return path


def androidize(src: Path, dst: Path) -> Path:
    """Rewrites a HotSpot dump as an ART-style one with ../shared/tools/androidize."""
    print(f"androidizing {src} -> {dst} ...", file=sys.stderr)
    subprocess.run([sys.executable, str(SHARED / "tools" / "androidize" / "androidize.py"), str(src), str(dst)],
                   check=True)
    return dst


VISUALVM_JAR = Path("/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar")


def dump_options(parser: argparse.ArgumentParser, megabytes: int, oracle: str | None = None) -> None:
    """--dump and --mb (and --no-oracle, helped by `oracle`): which dump a script measures."""
    parser.add_argument("--dump", type=Path, help="an existing dump (default: generate one)")
    parser.add_argument("--mb", type=int, default=megabytes,
                        help=f"HeapGen heap size when generating (default {megabytes})")
    if oracle:
        parser.add_argument("--no-oracle", action="store_true", help=oracle)


@contextlib.contextmanager
def measured_dump(args: argparse.Namespace) -> Iterator[Path]:
    """The dump of --dump, or a fresh HeapGen dump of --mb in a temporary
    folder (deleted afterwards); in the page cache, and named on stdout."""
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-", dir="/tmp") as tmp:
        path = args.dump or heapgen(Path(tmp) / "heapgen.hprof", args.mb)
        warm(path)
        print(f"dump: {path} ({os.path.getsize(path) / 1e6:,.0f} MB)")
        yield path


def run_visualvm(program: str, path: Path, heap: str = "8g", *args: str) -> list[str]:
    """The words `program` (a .java file here, run against VisualVM's heap
    library) prints about the dump at `path` (and its further `args`)."""
    with tempfile.TemporaryDirectory(prefix="hprofkit-vv-") as tmp:
        link = Path(tmp) / "dump.hprof"  # VisualVM writes its caches beside the dump
        link.symlink_to(path.resolve())
        return subprocess.run(["java", f"-Xmx{heap}", "-cp", str(VISUALVM_JAR), str(ROOT / "benchmarks" / program),
                               str(link), *args], check=True, capture_output=True, text=True).stdout.split()


def warm(path: Path) -> None:
    """Reads the file once so every measurement runs on the page cache."""
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


def timed(fn):
    """(result, wall seconds, CPU seconds of this process) of fn()."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def best_of(n: int, fn) -> float:
    """Best wall time of n runs of fn()."""
    best = float("inf")
    for _ in range(n):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


class AnonPeak:
    """Samples this process's anonymous RSS (/proc/self/status RssAnon) in a
    thread: file-backed pages of a mapped dump are not counted, heap growth is."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def current_kb() -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
        return 0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, self.current_kb())
            time.sleep(self.interval)

    def __enter__(self) -> "AnonPeak":
        self.peak_kb = self.current_kb()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_kb = max(self.peak_kb, self.current_kb())


def child_anon_peak(code: str, setup: str = "pass") -> tuple[int, int]:
    """Runs `code` in a fresh interpreter under AnonPeak, after `setup` (one line, not
    measured: the baseline is taken after it); returns (baseline kB, peak kB)."""
    script = (
        "import sys; sys.path.insert(0, %r)\n"
        "from _common import AnonPeak\n"
        "import hprofkit\n"
        "%s\n"
        "base = AnonPeak.current_kb()\n"
        "with AnonPeak() as peak:\n"
        "    %s\n"
        "print(base, peak.peak_kb)\n" % (str(Path(__file__).parent), setup, code)
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    base, peak = out.split()
    return int(base), int(peak)


def javac_dump(folder: Path, classes: int, live: bool = True) -> Path:
    """javac's heap, dumped by its main thread after generating half of `classes` classes
    (benchmarks/JavacHeapDump.java); live=False keeps its garbage, as `jmap -dump` does
    without `live` (HotSpotDiagnosticMXBean.dumpHeap(file, false))."""
    plugin, sources, out = folder / "plugin", folder / "src", folder / "out"
    for d in (plugin / "META-INF" / "services", sources, out):
        d.mkdir(parents=True)
    subprocess.run(["javac", "-d", str(plugin), str(ROOT / "benchmarks" / "JavacHeapDump.java")], check=True)
    (plugin / "META-INF" / "services" / "com.sun.source.util.Plugin").write_text("JavacHeapDump\n")
    for i in range(classes):
        methods = "\n".join(
            f"    public int m{j}(int x) {{ java.util.List<String> l = new java.util.ArrayList<>();"
            f" for (int k = 0; k < x; k++) l.add(\"s{i}_{j}\" + k); return l.size() + (x > 0 ? m{j}(x - 1) : 0); }}"
            for j in range(40))
        (sources / f"C{i}.java").write_text(f"public class C{i} {{\n{methods}\n}}\n")
    dump = folder / "javac.hprof"
    print(f"compiling {classes} classes with javac, dumping its heap half way ...", file=sys.stderr)
    subprocess.run(["javac", "-J--add-modules=jdk.management", "-processorpath", str(plugin),
                    f"-Xplugin:JavacHeapDump {dump} {classes // 2} {'live' if live else 'all'}", "-d", str(out),
                    *sorted(str(p) for p in sources.iterdir())], check=True)
    return dump
