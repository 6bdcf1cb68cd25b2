"""Time and peak memory of the graph surfaces on hostile inputs (issues #19 and #30).

    python benchmarks/bench_graph_hostile.py [--only WORD ...] [--code DIR] [--timeout S] [--keep DIR]
                                             [--no-interrupt] [--diff]

Builds the issue's inputs with tests/hostile.py (deep class chains, a 10 M
long list, 50 M referrers, 5 M roots, a 1 M long leak chain, an 80,000-slot
array; for #30, 1 M flat classes and 10 M identical Strings, and `waste` and
`report` over them and the chains), then runs each case in a child process and prints the wall time
of the call, the child's peak RSS (ru_maxrss, the index and mapping
included) and what it printed.  --code runs another checkout's package
(its python/ folder, extension built in place): the figures before and
after a change come from one script.  A case still running after
--timeout seconds is killed and reported as such.

Unless --no-interrupt, each case that runs a second or more is run again
and sent SIGINT once the child printed "ready" (just before the call) and
the kernel says it has run 0.2 s of CPU since: how long it takes to stop
(target 0.5 s).

--diff adds hprofkit.diff(..., paths=True) on a HeapGen pair (about 56 and
91 MB; needs java)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import hostile  # noqa: E402

from _common import heapgen  # noqa: E402

# The child's peak is its VmHWM: ru_maxrss would start from the parent's
# RSS at the fork.
PRELUDE = f"""
import atexit, contextlib, io, sys, time
sys.path.insert(0, {str(ROOT / 'tests')!r})
import hprofkit, hostile
def timed(fn):
    start = time.perf_counter()
    result = fn()
    print(f"call {{time.perf_counter() - start:.3f}}", file=sys.__stdout__, flush=True)
    return result
def cli(*argv):
    from hprofkit.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = timed(lambda: main(list(argv)))
    assert code == 0, code
    return out.getvalue()
def peak():
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    print(f"peak {{kb}}", flush=True)
atexit.register(peak)
"""

INPUTS = {
    "chain20k": lambda: hostile.class_chain_dump(20_000),
    "chain40k": lambda: hostile.class_chain_dump(40_000),
    "chain80k": lambda: hostile.class_chain_dump(80_000),
    "chain1m": lambda: hostile.class_chain_dump(1_000_000),
    "wide80k": lambda: hostile.wide_array_dump(80_000),
    "list10m": lambda: hostile.linked_list_dump(10_000_000),
    "leak1m": lambda: hostile.leak_chain_dump(1_000_000),
    "shared50m": lambda: hostile.shared_target_dump(50_000_000),
    "roots5m": lambda: hostile.many_roots_dump(5_000_000),
    "roots2m5": lambda: hostile.many_roots_dump(2_500_000),
    "flat1m": lambda: hostile.flat_classes_dump(1_000_000),
    "strings10m": lambda: hostile.identical_strings_dump(10_000_000),
}

DEEP = """
heap = hprofkit.open_heap(sys.argv[1]); obj = heap.object(hostile.object_id(0))
heap.retained_size(obj)             # the graph, built before
print("ready", flush=True)
path = timed(lambda: heap.path_to_root(obj))
print(f"{len(path)} hops")
"""

ARRAY = """
heap = hprofkit.open_heap(sys.argv[1])
objs = [heap.object(hostile.object_id(k)) for k in range({lo}, {lo} + 2000)]
heap.path_to_root(objs[0])          # the graph, built before
print("ready", flush=True)
paths = timed(lambda: [str(p.hops[-1].name) for p in heap.paths_to_root(objs)])
print(paths[-1])
"""

WASTE = """
print("ready", flush=True)
text = cli("waste", sys.argv[1])
print(text.splitlines()[0])
"""

REPORT = """
import os, tempfile
print("ready", flush=True)
with tempfile.TemporaryDirectory() as out:
    cli("report", sys.argv[1], "-o", os.path.join(out, "r.html"))
    print(f"report {os.path.getsize(os.path.join(out, 'r.html')):,} bytes")
"""

CASES = {
    # name: (input, child code, the issue's figure)
    "path_to_root, 20,000 chained classes": ("chain20k", DEEP, "2.3 s"),
    "path_to_root, 40,000 chained classes": ("chain40k", DEEP, "~10 s"),
    "path_to_root, 80,000 chained classes": ("chain80k", DEEP, "~90 s"),
    "path_to_root, 1,000,000 chained classes": ("chain1m", DEEP, "> 390 s"),
    "paths_to_root, 2,000 slots near 0 of an 80,000-slot Object[]": ("wide80k", ARRAY.format(lo=0), "0.4 s"),
    "paths_to_root, 2,000 slots near the end of it": ("wide80k", ARRAY.format(lo=78_000), "11.5 s"),
    "path_to_root(tail), a 10 M-long list": ("list10m", """
        heap = hprofkit.open_heap(sys.argv[1]); tail = heap.object(hostile.object_id(9_999_999))
        print("ready", flush=True)
        path = timed(lambda: heap.path_to_root(tail))
        print(f"{len(path):,} hops, str(path) {len(str(path)):,} chars")
    """, "77 s, 3.9 GB"),
    "find_leaks, a 1 M-long leak chain": ("leak1m", """
        heap = hprofkit.open_heap(sys.argv[1])
        print("ready", flush=True)
        (leak,) = timed(lambda: heap.find_leaks())
        print(f"{len(leak.nodes):,} nodes, str(leak) {len(str(leak)):,} chars")
    """, "41 s, 801 MB, 88 MB of text"),
    "show ID --limit 5, 50 M referrers": ("shared50m", """
        print("ready", flush=True)
        text = cli("show", sys.argv[1], hex(hostile.object_id(0)), "--limit", "5")
        print(next(l for l in text.splitlines() if l.startswith("referrers")))
    """, "7.7 GB"),
    "heap.gc_roots, 5 M roots": ("roots5m", """
        heap = hprofkit.open_heap(sys.argv[1])
        print("ready", flush=True)
        roots = timed(lambda: heap.gc_roots)
        print(f"{len(roots):,} roots, last {roots[-1].kind}")
    """, "1.3 GB"),
    # Issue #30: collection layouts were quadratic in the hierarchy's depth, and the report's
    # memory on big legitimate inputs (its docs' limits table).
    "waste, 20,000 chained classes": ("chain20k", WASTE, "1.4 s"),
    "waste, 40,000 chained classes": ("chain40k", WASTE, "4.9 s"),
    "waste, 80,000 chained classes": ("chain80k", WASTE, "21 s"),
    "waste, 1,000,000 chained classes": ("chain1m", WASTE, "-"),
    "report, 1,000,000 chained classes": ("chain1m", REPORT, "> 600 s"),
    "report, 1 M flat classes": ("flat1m", REPORT, "1.59 GB"),
    "report, 10 M identical strings": ("strings10m", REPORT, "1.99 GB"),
    "report, a 10 M-deep chain": ("list10m", REPORT, "1.07 GB"),
    "show ID --limit 5, an object held by 2.5 M roots": ("roots2m5", """
        print("ready", flush=True)
        text = cli("show", sys.argv[1], hex(hostile.object_id(0)), "--limit", "5")
        line = next(l for l in text.splitlines() if l.startswith("  GC roots"))
        print(f"GC roots line: {len(line):,} chars")
    """, "a 30 MB line"),
}

DIFF = """
import hprofkit
print("ready", flush=True)
result = timed(lambda: hprofkit.diff(sys.argv[1], sys.argv[2], paths=True))
print(f"{len(result.paths):,} growth paths")
"""


def stat(pid: int) -> tuple[str, int]:
    """A process's state letter and the CPU ticks it used (utime + stime)."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[11]) + int(fields[12])


# Ticks of CPU the child spends inside the call before SIGINT: so that it
# lands in the call, not in the Python before it.
INSIDE_TICKS = max(1, os.sysconf("SC_CLK_TCK") // 5)


def run(code: str, args: list[str], env: dict[str, str], timeout: float, interrupt: bool) -> dict:
    """Runs a case in a child: its output lines, peak RSS (kB), wall time of
    the call, and with `interrupt` the seconds from SIGINT to its exit."""
    child = subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    drain = threading.Thread(target=lambda: err.append(child.stderr.read()), daemon=True)
    drain.start()
    out: list[str] = []
    ready = child.stdout.readline()
    sent = None
    start = time.perf_counter()
    if ready == "ready\n" and interrupt:
        _, ticks = stat(child.pid)
        while child.poll() is None:
            now, used = stat(child.pid)
            if now in "RD" and used >= ticks + INSIDE_TICKS:
                sent = time.perf_counter()
                child.send_signal(signal.SIGINT)
                break
    reader = threading.Thread(target=lambda: out.extend(child.stdout), daemon=True)
    reader.start()
    killed = False
    deadline = time.perf_counter() + timeout
    pid = 0
    while not pid:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if not pid and time.perf_counter() > deadline:
            child.kill()
            killed = True
            _, status, usage = os.wait4(child.pid, 0)
            break
        if not pid:
            time.sleep(0.005)
    end = time.perf_counter()
    reader.join(5)
    drain.join(5)
    lines = [line.rstrip("\n") for line in out]
    call = next((float(line.split()[1]) for line in lines if line.startswith("call ")), None)
    peak = next((int(line.split()[1]) for line in lines if line.startswith("peak ")), None)
    return {"rss": peak, "call": call, "killed": killed, "elapsed": end - start,
            "stop": None if sent is None else end - sent, "status": os.waitstatus_to_exitcode(status),
            "said": [line for line in lines if not line.startswith(("call ", "peak "))],
            "error": (err[0].strip().splitlines() or [""])[-1] if err and err[0].strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="run the cases whose name contains one of these words")
    parser.add_argument("--code", type=Path, help="a checkout whose package to run (default: this one)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a case is killed (default 600)")
    parser.add_argument("--keep", type=Path, help="build the inputs here and keep them (default: a temporary folder)")
    parser.add_argument("--no-interrupt", action="store_true", help="skip the Ctrl-C runs")
    parser.add_argument("--diff", action="store_true", help="also diff(paths=True) on a HeapGen pair (needs java)")
    args = parser.parse_args()
    code = (args.code or ROOT).resolve()
    env = dict(os.environ, PYTHONPATH=str(code / "python"))
    with tempfile.TemporaryDirectory(prefix="hprofkit-graph-hostile-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        cases = {name: case for name, case in CASES.items()
                 if not args.only or any(word in name for word in args.only)}
        for name in sorted({case[0] for case in cases.values()}):
            path = folder / f"{name}.hprof"
            if not path.exists():
                print(f"building {path} ...", file=sys.stderr, flush=True)
                hostile.write_dump(path, INPUTS[name]())
        print(f"code: {code}")
        print(f"{'case':<64}{'call':>10}{'peak RSS':>11}  {'issue':<24}result")
        for name, (dump, child, issue) in cases.items():
            first = run(child, [str(folder / f"{dump}.hprof")], env, args.timeout, False)
            report(name, first, issue)
            if not args.no_interrupt and (first["killed"] or (first["call"] or 0) >= 1):
                result = run(child, [str(folder / f"{dump}.hprof")], env, args.timeout, True)
                stop = ("killed" if result["killed"] else "not sent" if result["stop"] is None
                        else f"{result['stop']:.2f} s")
                print(f"{'  Ctrl-C once inside: stopped after':<64}{stop:>10}", flush=True)
        if args.diff:
            pair = [heapgen(folder / f"growth-{mb}.hprof", mb, 11) if not (folder / f"growth-{mb}.hprof").exists()
                    else folder / f"growth-{mb}.hprof" for mb in (40, 64)]
            sizes = " / ".join(f"{p.stat().st_size / 1e6:.0f} MB" for p in pair)
            report(f"diff(paths=True), HeapGen pair {sizes}",
                   run(DIFF, [str(p) for p in pair], env, args.timeout, False), "> 24 min")


def report(name: str, r: dict, issue: str) -> None:
    call = "killed" if r["killed"] else f"{r['call']:.2f} s" if r["call"] is not None else "-"
    said = "; ".join(r["said"]) if r["status"] == 0 else f"exit {r['status']}: {r['error'][:80]}"
    if r["killed"]:
        said = f"still running after {r['elapsed']:.0f} s"
    rss = f"{r['rss'] / 1024:,.0f} MB" if r["rss"] is not None else "-"
    print(f"{name:<64}{call:>10}{rss:>11}  {issue:<24}{said}", flush=True)


if __name__ == "__main__":
    main()
