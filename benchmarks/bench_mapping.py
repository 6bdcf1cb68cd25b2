"""Deobfuscation costs (issue 20): reading a large app's mapping.txt, and what
a mapping adds to reading a dump.

    python benchmarks/bench_mapping.py [--mapping-mb 40] [--dump DUMP | --mb 64]

1. A realistic R8 mapping (benchmarks/_r8map.py: map version 2.2, line
   ranges, inline frames, metadata) of --mapping-mb MB is written and read
   with hprofkit.Mapping.read, best of 3, with its peak anonymous memory in
   a fresh interpreter; a bare Python line loop over the same text (split
   and partition, no validation) is timed beside it, as the cost floor of a
   pure-Python reader.  Target: 40 MB in 1 s or less.
2. A mapping that fits the dump (every class and field of it renamed to a
   clear name, then the R8 text above, so it is as large) is applied:
   open_heap() and stats() with and without it, and deobfuscate() against
   a plain copy of the dump through the same output path.  Target: a heap
   opened with a mapping costs 10% or less more than without (the
   mapping's own reading, once per mapping, is reported apart)."""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import hprofkit
from _common import best_of, child_anon_peak, dump_options, measured_dump
from _r8map import r8_mapping


def best_cpu(n: int, fn) -> float:
    """Best CPU time (this process, all threads) of n runs of fn(): steadier
    than wall time on a shared machine."""
    best = float("inf")
    for _ in range(n):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def ratio_line(label: str, n: int, plain, mapped) -> str:
    """`label`: wall and CPU time without and with a mapping, and their ratios."""
    wall = (best_of(n, plain), best_of(n, mapped))
    cpu = (best_cpu(n, plain), best_cpu(n, mapped))
    return (f"  {label:<19} wall {wall[0]:.3f} s without, {wall[1]:.3f} s with: x{wall[1] / wall[0]:.3f}; "
            f"CPU {cpu[0]:.3f} / {cpu[1]:.3f} s: x{cpu[1] / cpu[0]:.3f}   [target <= x1.10]")


def python_line_loop(path: Path) -> float:
    """Seconds for a bare Python pass over the lines (what a pure-Python reader costs at least)."""
    start = time.perf_counter()
    data = path.read_bytes()
    for line in data.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            line.partition(b" -> ")
    return time.perf_counter() - start


def fitting_mapping(dump: Path, filler: str) -> str:
    """A mapping that renames every class and field of `dump` (its names
    become the obfuscated ones), followed by `filler`."""
    from hprofkit import _hprof
    lines = []
    with hprofkit.open(dump) as d:
        strings, names = {}, {}
        fmt = "Q" if d.id_size == 8 else "I"
        import struct
        for r in d.records():
            if r.tag == 1:
                body = bytes(r.body)
                strings[struct.unpack_from(">" + fmt, body)[0]] = body[d.id_size:].decode("utf-8", "replace")
            elif r.tag == 2:
                body = bytes(r.body)
                names[struct.unpack_from(">" + fmt, body, 4)[0]] = struct.unpack_from(">" + fmt, body, 8 + d.id_size)[0]
        for sub in _hprof.subrecords(d.buffer):
            if sub.tag != 0x20 or sub.id not in names:
                continue
            obf = strings.get(names[sub.id], "").replace("/", ".")
            if not obf or obf.startswith("["):
                continue
            lines.append(f"clear.{obf} -> {obf}:")
            for name_id, type_, *_ in list(sub.statics or ()) + list(sub.fields or ()):
                name = strings.get(name_id, "")
                if name and not name.startswith("<"):
                    lines.append(f"    java.lang.Object clear_{name} -> {name}")
    return "\n".join(lines) + "\n" + filler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mapping-mb", type=int, default=40, help="size of the generated R8 mapping (default 40)")
    dump_options(parser, 64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-map-", dir="/tmp") as tmp:
        tmp_path = Path(tmp)
        text = r8_mapping(args.mapping_mb * 1_000_000)
        r8 = tmp_path / "mapping.txt"
        r8.write_text(text)
        size_mb = r8.stat().st_size / 1e6
        mapping = hprofkit.Mapping.read(r8)
        read_s = best_of(3, lambda: hprofkit.Mapping.read(r8))
        loop_s = min(python_line_loop(r8) for _ in range(3))
        base, peak = child_anon_peak(f"hprofkit.Mapping.read({str(r8)!r})")
        print(f"mapping: {size_mb:,.1f} MB, {len(mapping):,} classes, R8 map {mapping.version}")
        print(f"  Mapping.read        {read_s:6.3f} s  ({size_mb / read_s:,.0f} MB/s)  peak +{(peak - base) / 1024:,.0f} MB"
              f"   [target <= 1 s]")
        print(f"  Python line loop    {loop_s:6.3f} s  (split + partition only, no validation: the floor of a "
              f"pure-Python reader)")

        with measured_dump(args) as dump:
            fits = tmp_path / "fits.txt"
            fits.write_text(fitting_mapping(dump, text))
            fitting = hprofkit.Mapping.read(fits)
            fits_mb = fits.stat().st_size / 1e6
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", hprofkit.MappingWarning)
                heap_line = ratio_line("open_heap", 7, lambda: hprofkit.open_heap(dump).close(),
                                       lambda: hprofkit.open_heap(dump, mapping=fitting).close())
                with hprofkit.open_heap(dump, mapping=fitting) as heap:
                    renamed_heap = sum(1 for c in heap.classes if c.name != c.obfuscated_name)
                stats_line = ratio_line("stats", 7, lambda: hprofkit.stats(dump),
                                        lambda: hprofkit.stats(dump, mapping=fitting))
                renamed = sum(1 for r in hprofkit.stats(dump, mapping=fitting).histogram if r.obfuscated_name)
                out = tmp_path / "out.hprof"
                copy_s = best_of(2, lambda: _copy(dump, out))
                deob_s = best_of(2, lambda: hprofkit.deobfuscate(dump, out, mapping=fitting))
            dump_mb = os.path.getsize(dump) / 1e6
            release_heap_ratio(tmp_path, text)
            print(f"fitting mapping: {fits_mb:,.1f} MB, renames {renamed:,} classes of the histogram, "
                  f"{renamed_heap:,} of the heap, and every field")
            print(heap_line + "  (worst case: every class renamed)")
            print(stats_line)
            print(f"  deobfuscate         {deob_s:6.3f} s ({dump_mb / deob_s:,.0f} MB/s); a plain copy through "
                  f"_output: {copy_s:.3f} s (x{deob_s / copy_s:.2f})")


def release_heap_ratio(tmp_path: Path, filler: str) -> None:
    """The release-build case: the shared ProGuard-obfuscated HeapGen dump
    (its app classes renamed, the JDK's not) with its own mapping.txt grown
    to a large app's size by the R8 text."""
    from _common import SHARED
    src = SHARED / "data" / "obfuscated"
    dump = tmp_path / "obf.hprof"
    with gzip.open(src / "heapgen_s5_16mb_obf.hprof.gz", "rb") as f, open(dump, "wb") as out:
        shutil.copyfileobj(f, out)
    big = tmp_path / "release-mapping.txt"
    big.write_text((src / "mapping.txt").read_text() + filler)
    mapping = hprofkit.Mapping.read(big)
    print(f"release dump: the shared obfuscated HeapGen dump ({dump.stat().st_size / 1e6:,.0f} MB) with its "
          f"mapping.txt + the R8 text ({big.stat().st_size / 1e6:,.1f} MB)")
    print(ratio_line("open_heap", 9, lambda: hprofkit.open_heap(dump).close(),
                     lambda: hprofkit.open_heap(dump, mapping=mapping).close()))


def _copy(src: Path, dst: Path) -> None:
    from hprofkit._output import output_file
    with open(src, "rb") as f, output_file(dst) as out:
        shutil.copyfileobj(f, out, 8 << 20)


if __name__ == "__main__":
    main()
