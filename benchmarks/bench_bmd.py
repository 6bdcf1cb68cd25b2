"""Badoo's BMD: size and speed of hprofkit's BMD codec against Badoo's own
cruncher and decruncher, with hprofkit's Tailor codec and its pack beside,
on the shared Android dumps, all measured in the same run.

    python benchmarks/bench_bmd.py [--badoo DIR] [--mb N] [--runs 3] [--all-dumps]

--badoo: Badoo's tools as ../shared/tools/badoo/build.sh builds them
(default $HPROFKIT_BADOO or /tmp/hprofkit-badoo); --mb N adds a generated
ART-style HeapGen dump of about N MB heap.  Times are the best of --runs
(Badoo's tools run in one JVM: its first, cold run is shown too); MB/s are
of the HPROF, encoding and decoding alike.  Sizes: the BMD as Badoo writes
it (uncompressed), and zlib -6 of it for a fair look beside the compressed
formats.  --all-dumps first checks, on every 4-byte-id dump of
../shared/data/hprof, that hprofkit's BMD and HPROF equal the cruncher's and
decruncher's byte for byte, and that the cruncher refuses an 8-byte-id dump
whose hprofkit BMD the decruncher reads into hprofkit's HPROF (the test
suite checks the golden vectors of ../shared/data/bmd; the tools themselves
are built only where a developer ran ../shared/tools/badoo/build.sh)."""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import os
import subprocess
import tempfile
import zlib
from pathlib import Path

import hprofkit

from _common import ROOT, SHARED, androidize, best_of, heapgen, warm

DUMPS = [SHARED / "data" / "hprof" / "leakcanary__leak_service_binder.hprof",
         SHARED / "data" / "hprof" / "platform_tools_base__dialer.android-hprof",
         SHARED / "data" / "obfuscated" / "heapgen_s5_16mb_obf_android.hprof.gz"]


def badoo(home: Path, what: str, src: Path, dst: Path, runs: int) -> tuple[float, float]:
    """(first, best) seconds of Badoo's cruncher or decruncher, runs in one JVM."""
    classpath = (home / "classpath").read_text().strip()
    bench = ROOT / "benchmarks" / "BadooBench.java"
    out = subprocess.run(["java", "-Dfile.encoding=UTF-8", "-cp", classpath, str(bench), what, str(src), str(dst),
                          str(runs)], check=True, capture_output=True, text=True).stdout
    times = [float(line.split()[1]) for line in out.splitlines() if line.startswith("seconds ")]
    return times[0], min(times)


def measure(path: Path, home: Path, runs: int, tmp: Path) -> None:
    mb = path.stat().st_size / 1e6
    warm(path)
    print(f"\n{path.name}: {mb:,.2f} MB")
    print(f"{'':<34}{'size':>12}{'ratio':>8}{'encode':>12}{'decode':>12}")

    def row(label: str, size: int, encode: float, decode: float, note: str = "") -> None:
        print(f"{label:<34}{size:>12,}{size / path.stat().st_size:>8.3f}{mb / encode:>8.1f} MB/s"
              f"{mb / decode:>8.1f} MB/s  {note}")

    ours_bmd, theirs_bmd = tmp / "ours.bmd", tmp / "theirs.bmd"
    encode = best_of(runs, lambda: hprofkit.encode(path, ours_bmd, format="bmd"))
    decode = best_of(runs, lambda: hprofkit.decode(ours_bmd, tmp / "ours.hprof"))
    size = ours_bmd.stat().st_size
    first_enc, best_enc = badoo(home, "crunch", path, theirs_bmd, runs)
    first_dec, best_dec = badoo(home, "decrunch", theirs_bmd, tmp / "theirs.hprof", runs)
    same = ours_bmd.read_bytes() == theirs_bmd.read_bytes() and \
        (tmp / "ours.hprof").read_bytes() == (tmp / "theirs.hprof").read_bytes()
    row("Badoo cruncher / decruncher", theirs_bmd.stat().st_size, best_enc, best_dec,
        f"first run {mb / first_enc:.1f} / {mb / first_dec:.1f} MB/s (JVM cold)")
    row("hprofkit bmd", size, encode, decode,
        f"{best_enc / encode:.1f}x / {best_dec / decode:.1f}x Badoo's best; "
        f"{'byte-identical' if same else 'DIFFERENT'} BMD and HPROF")
    print(f"{'  bmd + zlib -6':<34}{len(zlib.compress(ours_bmd.read_bytes(), 6)):>12,}"
          f"{len(zlib.compress(ours_bmd.read_bytes(), 6)) / path.stat().st_size:>8.3f}")
    for label, options in (("hprofkit tailor (mini, zlib 6)", {"format": "tailor", "threads": 1}),
                           ("hprofkit pack (default, 1 thread)", {"threads": 1})):
        out = tmp / "out.enc"
        encode = best_of(runs, lambda: hprofkit.encode(path, out, **options))
        decode = best_of(runs, lambda: hprofkit.decode(out, tmp / "back.hprof", threads=1))
        row(label, out.stat().st_size, encode, decode)


def java_tool(home: Path, tool: str, *args: Path) -> subprocess.CompletedProcess:
    """Badoo's cruncher or decruncher, as ../shared/tools/badoo/run.sh runs them (UTF-8 pinned)."""
    main = {"cruncher": "com.badoo.hprof.cruncher.HprofCruncher",
            "decruncher": "com.badoo.bmd.decruncher.BmdDecruncher"}[tool]
    return subprocess.run(["java", "-Dfile.encoding=UTF-8", "-cp", (home / "classpath").read_text().strip(), main,
                           *map(str, args)], capture_output=True, text=True, timeout=600)


def agree_on_every_dump(home: Path, tmp: Path) -> bool:
    """Prints, per shared dump, whether hprofkit and Badoo's tools write the same bytes."""
    inventory = json.loads((SHARED / "data" / "hprof" / "INVENTORY.json").read_text())
    all_same = True
    print("hprofkit's BMD and HPROF against Badoo's cruncher and decruncher, byte for byte:")
    for entry in inventory:
        if entry["file"] == "py-hprof__basic_reads.hprof":  # no heap dump: nothing for the tools to crunch
            continue
        src = SHARED / "data" / "hprof" / entry["file"]
        if src.suffix in (".gz", ".bz2"):
            plain = tmp / "plain.hprof"
            plain.write_bytes((gzip if src.suffix == ".gz" else bz2).decompress(src.read_bytes()))
            src = plain
        theirs_bmd, theirs_hprof, ours_bmd, ours_hprof = (tmp / n for n in ("t.bmd", "t.hprof", "o.bmd", "o.hprof"))
        try:
            hprofkit.encode(src, ours_bmd, format="bmd")
            hprofkit.decode(ours_bmd, ours_hprof)
        except hprofkit.HprofError as exc:
            print(f"  {entry['file']:<58} hprofkit: {exc}")
            continue
        crunched = java_tool(home, "cruncher", src, theirs_bmd)
        if entry["id_size"] == 8:
            refused = crunched.returncode != 0 and "idSize = 8" in crunched.stderr
            read = java_tool(home, "decruncher", ours_bmd, theirs_hprof).returncode == 0
            same = refused and read and theirs_hprof.read_bytes() == ours_hprof.read_bytes()
            print(f"  {entry['file']:<58} id 8: cruncher {'refuses' if refused else 'DOES NOT REFUSE'}; "
                  f"decruncher of hprofkit's BMD {'equal' if same else 'DIFFERENT'}")
        else:
            same = crunched.returncode == 0 and java_tool(home, "decruncher", theirs_bmd, theirs_hprof).returncode == 0 \
                and ours_bmd.read_bytes() == theirs_bmd.read_bytes() and ours_hprof.read_bytes() == theirs_hprof.read_bytes()
            print(f"  {entry['file']:<58} {'byte-identical' if same else 'DIFFERENT'}")
        all_same &= same
    return all_same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--badoo", type=Path, default=Path(os.environ.get("HPROFKIT_BADOO", "/tmp/hprofkit-badoo")),
                        help="Badoo's tools as build.sh builds them")
    parser.add_argument("--mb", type=int, default=0, help="add a generated ART-style dump of this heap size")
    parser.add_argument("--runs", type=int, default=3, help="runs of each, the best counted (default 3)")
    parser.add_argument("--all-dumps", action="store_true", help="first check agreement on every shared dump")
    args = parser.parse_args()
    if not (args.badoo / "classpath").is_file():
        parser.error(f"no Badoo tools in {args.badoo}: build them with ../shared/tools/badoo/build.sh")
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-", dir="/tmp") as tmp_name:
        tmp = Path(tmp_name)
        if args.all_dumps and not agree_on_every_dump(args.badoo, tmp):
            raise SystemExit("hprofkit and Badoo's tools disagree (see above)")
        dumps = []
        for path in DUMPS:
            if path.suffix == ".gz":  # the tools read plain files
                plain = tmp / path.stem
                plain.write_bytes(gzip.decompress(path.read_bytes()))
                path = plain
            dumps.append(path)
        if args.mb:
            dumps.append(androidize(heapgen(tmp / "heapgen.hprof", args.mb), tmp / "art.hprof"))
        for path in dumps:
            measure(path, args.badoo, args.runs, tmp)


if __name__ == "__main__":
    main()
