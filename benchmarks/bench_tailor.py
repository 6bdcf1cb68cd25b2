"""Trimming, encoding, decoding and conversion speed on a >= 500 MB ART-style dump.

    python benchmarks/bench_tailor.py [--dump ART.hprof] [--mb 600]

Without --dump it writes a HeapGen dump and androidizes it (../shared/tools).
Baselines measured in the same run: zlib.compress(raw, 6) of the input, and
Debian's hprof-conv.  Tailor's own scripts, measured on a 1 GB ART-style dump
on this machine: encode.py 44 MB/s, decode.py 51 MB/s of output."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import hprofkit

from _common import AnonPeak, androidize, heapgen, warm

ENCODE_PY_MBS = 44.0
DECODE_PY_MBS = 51.0
HPROF_CONV = shutil.which("hprof-conv") or "/usr/lib/android-sdk/platform-tools/hprof-conv"


def null_output():
    """/dev/null as a real file: output goes the way it goes to any file."""
    return open(os.devnull, "wb")


def timed(fn):
    start = time.perf_counter()
    with AnonPeak() as peak:
        value = fn()
    return time.perf_counter() - start, value, peak.peak_kb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, help="an ART-style dump (default: generate one)")
    parser.add_argument("--mb", type=int, default=600, help="HeapGen heap size when generating (default 600)")
    parser.add_argument("--threads", type=int, default=2, help="compression threads for the fast runs")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-") as tmp:
        tmp = Path(tmp)
        path = args.dump or androidize(heapgen(tmp / "heapgen.hprof", args.mb), tmp / "art.hprof")
        size = os.path.getsize(path)
        mb = size / 1e6
        warm(path)
        print(f"dump: {path} ({mb:,.0f} MB)")
        rows = []

        def row(label, seconds, out_mb, peak_kb, note=""):
            rows.append((label, seconds, out_mb, peak_kb, note))
            print(f"{label:<34}{seconds:>8.2f} s {mb / seconds:>9,.0f} MB/s in {out_mb:>9,.0f} MB out"
                  f" {peak_kb / 1024:>7,.0f} MB anon RSS  {note}")

        raw = path.read_bytes()
        t, blob, kb = timed(lambda: zlib.compress(raw, 6))
        row("baseline: zlib.compress(raw, 6)", t, len(blob) / 1e6, kb)
        zlib6 = t
        del raw, blob

        def encode(**options):
            with null_output() as sink:
                result = hprofkit.encode(path, sink, **options)
            return result.output, result

        t, (n, _), kb = timed(lambda: encode(level=0))
        row("trim only (level 0)", t, n / 1e6, kb, f"target >= 1500 MB/s")
        for level, threads in ((1, 1), (1, args.threads), (6, 1), (6, args.threads)):
            t, (n, _), kb = timed(lambda: encode(level=level, threads=threads))
            target = 8 if level == 1 else 3
            row(f"encode level {level}, {threads} thread(s)", t, n / 1e6, kb,
                f"{mb / t / ENCODE_PY_MBS:.1f}x encode.py (target {target}x); {zlib6 / t:.1f}x zlib6 baseline")

        mini = tmp / "art.mini"
        hprofkit.encode(path, mini, level=6, threads=args.threads)
        t, result, kb = timed(lambda: hprofkit.decode(mini, null_output()))
        print(f"{'decode':<34}{t:>8.2f} s {result.output / 1e6 / t:>9,.0f} MB/s out "
              f"({result.output / 1e6:,.0f} MB) {kb / 1024:>7,.0f} MB anon RSS  "
              f"{result.output / 1e6 / t / DECODE_PY_MBS:.1f}x decode.py (target 8x)")

        t, result, kb = timed(lambda: hprofkit.convert(path, null_output()))
        row("convert (to standard HPROF)", t, result.output / 1e6, kb)
        out = tmp / "conv.hprof"
        start = time.perf_counter()
        subprocess.run([HPROF_CONV, str(path), str(out)], check=True)
        t_conv = time.perf_counter() - start
        out.unlink()
        t, result, kb = timed(lambda: hprofkit.convert(path, tmp / "ours.hprof"))
        row("convert, file to file", t, result.output / 1e6, kb, f"hprof-conv: {mb / t_conv:,.0f} MB/s "
            f"({t_conv:.2f} s) -> {t_conv / t:.2f}x")


if __name__ == "__main__":
    main()
