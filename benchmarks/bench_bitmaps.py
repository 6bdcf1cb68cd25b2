"""Android bitmaps: heap.bitmaps(), heap.duplicate_bitmaps() and the PNGs, against plain
Python doing the same in the same run.

    python benchmarks/bench_bitmaps.py [--count 48] [--side 1024] [--dump FILE]

Measures the shared Android dumps (LeakCanary's and perflib's dialer), then a big one:
without --dump, an Android 4.x-style dump written with hprofkit.writer into a temporary
folder, holding --count ARGB_8888 bitmaps of --side x --side pixels in mBuffer (tiled with
the shared dumps' icons, translucent edges and all; 8 distinct images: duplicates).  Peers, timed on the same pixels:
- hashing: hashlib.blake2b over bytes(array.values()) (an unguarded copy) per bitmap;
- PNG: zlib.compress of the rows with their filter bytes, no conversion (the least a PNG
  writer does), and a per-pixel Python conversion as Android Studio's decoder loops (on one
  bitmap: it is slow);
- memory: what a to_png of the largest bitmap allocates at its peak (tracemalloc sees the
  core's allocations too): pixels are read a band at a time."""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
import tracemalloc
import zlib
from pathlib import Path

import hprofkit
from hprofkit.writer import HprofWriter

from _common import SHARED, warm

BITMAP_FIELDS = [("mBuffer", "object"), ("mIsMutable", "boolean"), ("mIsPremultiplied", "boolean"),
                 ("mHeight", "int"), ("mNativeBitmap", "int"), ("mDensity", "int"), ("mRecycled", "boolean"),
                 ("mWidth", "int")]


def tiled(side: int, variant: int, icons: list[tuple[int, int, bytes]]) -> bytes:
    """A side x side ARGB_8888 image tiled with real icons (the pixels of the shared dumps'
    bitmaps, premultiplied as Android stored them), `variant` picking where the tiling starts."""
    canvas = bytearray(side * side * 4)
    y, row_height, i = 0, 0, variant
    x = 0
    while y < side:
        width, height, pixels = icons[i % len(icons)]
        i += 1
        if x + width > side:
            x, y, row_height = 0, y + row_height, 0
            continue
        for r in range(min(height, side - y)):
            start = ((y + r) * side + x) * 4
            canvas[start:start + width * 4] = pixels[r * width * 4:(r + 1) * width * 4]
        x += width
        row_height = max(row_height, height)
    return bytes(canvas)


def write_dump(path: Path, count: int, side: int) -> Path:
    print(f"writing {path}: {count} bitmaps of {side}x{side} ...", file=sys.stderr)
    icons = [(b.width, b.height, b.pixels()) for b in
             hprofkit.open_heap(SHARED / "data" / "hprof" / "leakcanary__leak_service_binder.hprof").bitmaps()]
    images = [tiled(side, v, icons) for v in range(min(8, count))]
    with open(path, "wb") as f, HprofWriter(f, version="1.0.3", id_size=4) as w:
        w.load_class(0x1000, "java.lang.Object")
        w.load_class(0x2000, "android.graphics.Bitmap")
        with w.heap_dump(split_bytes=1 << 20) as h:
            h.heap_dump_info("app")
            h.class_dump(0x1000)
            h.class_dump(0x2000, super_id=0x1000, instance_size=52, fields=BITMAP_FIELDS)
            for i in range(count):
                buffer_id, bitmap_id = 0x10000000 + 16 * i, 0x20000000 + 16 * i
                h.primitive_array(buffer_id, "byte", images[i % len(images)])
                h.instance(bitmap_id, 0x2000, values=[buffer_id, False, True, side, 0, 320, False, side])
                h.root_jni_global(bitmap_id)
        w.heap_dump_end()
    return path


def timed(fn, repeats: int = 3):
    """fn()'s result and its best wall time of `repeats` runs (the first also maps the
    pages: peers and hprofkit then read the same warm mapping)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def python_argb_to_rgba(raw: bytes) -> bytes:
    """Android Studio's way: one pixel at a time (here un-premultiplied as hprofkit does)."""
    out = bytearray(len(raw))
    for i in range(0, len(raw), 4):
        r, g, b, a = raw[i:i + 4]
        if 0 < a < 255:
            scale = ((255 << 24) + (a >> 1)) // a
            r, g, b = (min(255, (c * scale + (1 << 23)) >> 24) for c in (r, g, b))
        out[i:i + 4] = bytes((r, g, b, a))
    return bytes(out)


def measure(path: Path, python_peer: bool) -> None:
    warm(path)
    heap = hprofkit.open_heap(path)
    bitmaps, seconds = timed(heap.bitmaps, repeats=1)
    pixels = [b for b in bitmaps if b.has_pixels]
    total = sum(b.width * b.height * 4 for b in pixels)
    mb = total / 1e6
    print(f"\n{path.name}: {len(bitmaps):,} bitmaps, {mb:,.1f} MB of pixels")
    print(f"  {'heap.bitmaps()':<40}{seconds * 1e3:>9.1f} ms")
    groups, seconds = timed(lambda: heap.duplicate_bitmaps(bitmaps))
    print(f"  {'heap.duplicate_bitmaps()':<40}{seconds * 1e3:>9.1f} ms  {mb / seconds:>8,.0f} MB/s  "
          f"({len(groups)} groups, {sum(g.wasted_bytes or 0 for g in groups) / 1e6:,.1f} MB wasted)")
    _, peer = timed(lambda: [hashlib.blake2b(bytes(b._buffer.values()), digest_size=16).digest() for b in pixels])
    print(f"  {'  peer: blake2b(bytes(values()))':<40}{peer * 1e3:>9.1f} ms  {mb / peer:>8,.0f} MB/s  "
          f"(ratio {seconds / peer:.2f})")
    pngs, seconds = timed(lambda: [b.png_bytes() for b in pixels])
    print(f"  {'png_bytes() of each':<40}{seconds * 1e3:>9.1f} ms  {mb / seconds:>8,.0f} MB/s  "
          f"({sum(map(len, pngs)) / 1e6:,.1f} MB of PNG)")

    def bare_zlib() -> None:
        for b in pixels:
            raw, row = bytes(b._buffer.values()), b.width * 4
            zlib.compress(b"".join(b"\0" + raw[y * row:(y + 1) * row] for y in range(b.height)), 6)
    _, peer = timed(bare_zlib)
    print(f"  {'  peer: zlib of the rows, unconverted':<40}{peer * 1e3:>9.1f} ms  {mb / peer:>8,.0f} MB/s  "
          f"(ratio {seconds / peer:.2f})")
    if python_peer:
        one = max(pixels, key=lambda b: b.width * b.height)
        raw = one.pixels()
        _, ours = timed(lambda: one._buffer._png_rows(1, one.width, one.height, unpremultiply=True))
        _, theirs = timed(lambda: python_argb_to_rgba(raw), repeats=1)
        print(f"  {'conversion of one bitmap, C':<40}{ours * 1e3:>9.1f} ms  {len(raw) / 1e6 / ours:>8,.0f} MB/s")
        print(f"  {'  peer: per-pixel Python':<40}{theirs * 1e3:>9.1f} ms  {len(raw) / 1e6 / theirs:>8,.1f} MB/s  "
              f"(C {theirs / ours:,.0f}x faster)")
    _, seconds = timed(lambda: [b.png_bytes(max_side=128) for b in pixels])
    print(f"  {'thumbnails (max_side=128)':<40}{seconds * 1e3 / len(pixels):>9.2f} ms each")
    largest = max(pixels, key=lambda b: b.width * b.height)
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-") as tmp:
        tracemalloc.start()
        largest.to_png(os.path.join(tmp, "largest.png"))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"  {'to_png of the largest: peak allocated':<40}{peak / 2**20:>9.2f} MiB  "
          f"(its pixels: {largest.width * largest.height * 4 / 2**20:,.1f} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=48, help="bitmaps in the generated dump (default 48)")
    parser.add_argument("--side", type=int, default=1024, help="their width and height (default 1024)")
    parser.add_argument("--dump", type=Path, help="an existing Android dump instead of a generated one")
    args = parser.parse_args()
    for name in ("leakcanary__leak_service_binder.hprof", "platform_tools_base__dialer.android-hprof"):
        measure(SHARED / "data" / "hprof" / name, python_peer=False)
    with tempfile.TemporaryDirectory(prefix="hprofkit-bench-", dir="/tmp") as tmp:
        path = args.dump or write_dump(Path(tmp) / "bitmaps.hprof", args.count, args.side)
        measure(path, python_peer=True)


if __name__ == "__main__":
    main()
