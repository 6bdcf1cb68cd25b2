"""hprofkit's compact format: sizes against Tailor's mini and gzip -9, speed
against zlib.compress(raw, 6), all measured in the same run.

    python benchmarks/bench_compact.py [--dump ART.hprof] [--mb 600] [--threads N]

Small dumps: the Android dumps of ../shared/data (Tailor's reference minis are
the goldens made by Tailor's own encode.py).  Large dump: an ART-style dump
(HeapGen + androidize, or --dump), compared with hprofkit's own
--format tailor output (byte-compatible with encode.py)."""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import hprofkit

from _common import SHARED, AnonPeak, androidize, heapgen, warm

SMALL = {
    "leakcanary__leak_service_binder.hprof": "leak_service_binder.mini",
    "platform_tools_base__dialer.android-hprof": "dialer.mini",
}


def gzip9_size(path: Path) -> int:
    """Size of `gzip -9` of the file (the gzip tool when present, else Python's)."""
    if shutil.which("gzip"):
        proc = subprocess.Popen(["gzip", "-9", "-c", str(path)], stdout=subprocess.PIPE)
        size = 0
        while chunk := proc.stdout.read(1 << 20):
            size += len(chunk)
        proc.wait()
        return size
    return len(gzip.compress(path.read_bytes(), 9))


def ram_scratch(need: int) -> Path | None:
    """A directory in RAM (tmpfs) with room for `need` bytes twice over, or None."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > 2 * need:
            return shm
    return None


def encoded_size(src: Path, dst: Path, **options) -> tuple[int, float, int]:
    """(output bytes, seconds, peak anonymous RSS kB) of hprofkit.encode."""
    start = time.perf_counter()
    with AnonPeak() as peak:
        result = hprofkit.encode(src, dst, **options)
    return result.output, time.perf_counter() - start, peak.peak_kb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dump", type=Path, help="an ART-style dump (default: generate one)")
    parser.add_argument("--mb", type=int, default=600, help="HeapGen heap size when generating")
    parser.add_argument("--threads", type=int, default=0, help="encode/decode threads (0: one per core)")
    args = parser.parse_args()
    data = SHARED / "data"

    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-") as tmp:
        tmp = Path(tmp)
        print("size, Tailor's policy (strip char[]/byte[]) and --keep-all, level 6")
        print(f"{'dump':<44}{'raw':>12}{'tailor':>12}{'pack':>12}{'ratio':>7}"
              f"{'gzip -9':>12}{'keep-all':>12}{'ratio':>7}")

        def size_row(name: str, src: Path, tailor: int) -> None:
            pack, _, _ = encoded_size(src, tmp / "x.hpk", threads=args.threads)
            keep, _, _ = encoded_size(src, tmp / "x-all.hpk", strip="none", threads=args.threads)
            gz9 = gzip9_size(src)
            print(f"{name:<44}{os.path.getsize(src):>12,}{tailor:>12,}{pack:>12,}{pack / tailor:>7.3f}"
                  f"{gz9:>12,}{keep:>12,}{keep / gz9:>7.3f}")

        for name, mini in SMALL.items():
            size_row(name, data / "hprof" / name, os.path.getsize(data / "tailor" / mini))

        path = args.dump or androidize(heapgen(tmp / "heapgen.hprof", args.mb), tmp / "art.hprof")
        warm(path)
        tailor = hprofkit.encode(path, tmp / "big.mini", format="tailor", threads=args.threads).output
        size_row(path.name, path, tailor)

        mb = os.path.getsize(path) / 1e6
        ram_dir = ram_scratch(os.path.getsize(path))
        raw = path.read_bytes()
        start = time.perf_counter()
        zlib.compress(raw, 6)
        t_zlib = time.perf_counter() - start
        del raw
        print(f"\nspeed on {path.name} ({mb:,.0f} MB); baseline zlib.compress(raw, 6): "
              f"{mb / t_zlib:,.0f} MB/s ({t_zlib:.1f} s)")
        for label, options in (("encode, Tailor's policy", {}), ("encode --keep-all", {"strip": "none"})):
            out, t, kb = encoded_size(path, tmp / "s.hpk", threads=args.threads, **options)
            print(f"{label:<28}{mb / t:>8,.0f} MB/s  {t_zlib / t:5.1f}x the zlib baseline (target 2x)  "
                  f"peak anon RSS {kb / 1024:,.0f} MB")
            targets = [("to /dev/null", None)]
            if ram_dir:  # a file whose writes cost no disk: the decoder's own pace with a real file
                targets.append(("to a file in RAM", ram_dir / f"hprofkit-bench-{os.getpid()}.hprof"))
            targets.append(("to a file on disk", tmp / "restored.hprof"))
            for target, dst in targets:
                t = float("inf")
                for _ in range(2):  # best of two: page cache and tmpfs allocation vary from run to run
                    if dst and dst.exists():
                        dst.unlink()
                    start = time.perf_counter()
                    with AnonPeak() as peak, open(os.devnull, "wb") as null:
                        result = hprofkit.decode(tmp / "s.hpk", dst or null, threads=args.threads)
                    t = min(t, time.perf_counter() - start)
                if dst and dst.parent == ram_dir:
                    dst.unlink()
                print(f"{'  decode ' + target:<28}{result.output / 1e6 / t:>8,.0f} MB/s of restored output "
                      f"(target 400)  peak anon RSS {peak.peak_kb / 1024:,.0f} MB")
            # The disk's own pace, same run: writing that many bytes from memory to a new file.
            block = bytes(16 << 20)
            start = time.perf_counter()
            with open(tmp / "disk.bin", "wb") as f:
                for _ in range(0, result.output, len(block)):
                    f.write(block)
                os.fsync(f.fileno())
            t = time.perf_counter() - start
            (tmp / "disk.bin").unlink()
            print(f"{'  (disk: plain write + fsync)':<28}{result.output / 1e6 / t:>8,.0f} MB/s")
            if options:
                same = subprocess.run(["cmp", "-s", str(path), str(tmp / "restored.hprof")]).returncode == 0
                print(f"{'  byte-identical round trip':<28}{'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
