"""hprofkit.report() against what it stands on, in the same run, on a HeapGen
dump (1 GB by default): the report's wall time over open_heap +
top_retainers (issue #21: at most 1.5x), the page's size (at most 10 MB),
and the time until the page is interactive in headless Chromium (at most
2 s): the "hprofkit-ready" mark report.js sets once every view is drawn,
from the start of navigation (Navigation Timing), and DOMContentLoaded.

    python benchmarks/bench_report.py                 # generates the dump
    python benchmarks/bench_report.py --dump big.hprof [--repeat 3]"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from pathlib import Path

import hprofkit

from _common import ROOT, dump_options, measured_dump, timed


def stand_on(path: Path) -> None:
    with hprofkit.open_heap(path) as heap:
        heap.top_retainers(20)


def time_to_interactive(page: Path) -> tuple[float, float] | str:
    """(ready mark, DOMContentLoaded) in ms from navigation start, or why not measured."""
    sys.path.insert(0, str(ROOT / "tests"))
    import chromium  # tests/chromium.py: Debian's chromium through selenium
    missing = chromium.missing()
    if missing:
        return f"not measured: {missing} is missing"
    driver = chromium.start()
    try:
        chromium.open_page(driver, page)
        ready, loaded = driver.execute_script(
            "const nav = performance.getEntriesByType('navigation')[0];"
            "return [performance.getEntriesByName('hprofkit-ready')[0].startTime, nav.domContentLoadedEventEnd];")
        errors = chromium.console_errors(driver)
        if errors:
            return f"console errors: {errors}"
        return ready, loaded
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dump_options(parser, 1000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (default 1; the best is kept)")
    args = parser.parse_args()
    with measured_dump(args) as path, tempfile.TemporaryDirectory(prefix="hprofkit-bench-report-") as tmp:
        out = Path(tmp) / "report.html"
        base, made = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same machine
            base.append(timed(lambda: stand_on(path))[1:])
            made.append(timed(lambda: hprofkit.report(path, out))[1:])
        (b, b_cpu), (r, r_cpu) = min(base), min(made)
        print(f"open_heap + top_retainers(20): {b:6.2f} s wall, {b_cpu:6.2f} s CPU")
        print(f"report:                         {r:6.2f} s wall, {r_cpu:6.2f} s CPU  "
              f"({r / b:.2f}x wall, {r_cpu / b_cpu:.2f}x CPU; target <= 1.5x)")
        print(f"page: {os.path.getsize(out) / 1e6:.2f} MB (target <= 10 MB)")
        print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
        tti = time_to_interactive(out)
        if isinstance(tti, str):
            print(f"time to interactive: {tti}")
        else:
            print(f"time to interactive in Chromium: {tti[0] / 1000:.2f} s (ready mark; target <= 2 s), "
                  f"DOMContentLoaded {tti[1] / 1000:.2f} s")


if __name__ == "__main__":
    main()
