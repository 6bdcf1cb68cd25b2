"""`python -m hprofkit demo`: writes a sample Android dump with HprofWriter
and runs the workflow on it, so a new user sees every step on real bytes."""

from __future__ import annotations

import os
import time
from typing import TextIO

import gzip

from ._dump import Dump
from . import match
from ._files import convert, decode, encode
from ._heap import open_heap
from ._units import human_size
from .sample import write_sample_dump


def _mb(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


def run(workdir: str, out: TextIO) -> int:
    """Runs the demo in `workdir`; returns the exit status (0 when every check passed)."""
    source = os.path.join(workdir, "sample-android.hprof")
    started = time.perf_counter()
    sample = write_sample_dump(source, android=True, objects=3000, seed=7)
    out.write(f"1. wrote a sample ART heap dump with HprofWriter: {source}\n"
              f"   {_mb(os.path.getsize(source))}, {sample.instances:,} objects in {sample.segments} segments "
              f"({time.perf_counter() - started:.2f} s)\n\n")

    with Dump(source) as dump:
        records = sum(1 for _ in dump.records())
        first = next(r for r in dump.records() if r.name == "HEAP_DUMP_SEGMENT")
        out.write(f"2. opened it: {dump.magic}, identifier size {dump.id_size}, {records:,} records;\n"
                  f"   first heap segment at offset {first.offset:,}, its body a zero-copy "
                  f"{type(first.body).__name__} of {len(first.body):,} bytes\n")
        del first
        stats = dump.stats()
    out.write("\n3. statistics and class histogram:\n")
    out.write("   " + stats.format(top=8).replace("\n", "\n   ") + "\n")

    counted = {row.name: row.instances for row in stats.histogram}
    ok = counted == sample.histogram
    out.write(f"\n4. check: histogram equals what the writer wrote "
              f"({sum(counted.values()):,} objects in {len(counted)} classes): {'OK' if ok else 'MISMATCH'}\n")

    size = os.path.getsize(source)
    mini = os.path.join(workdir, "sample.mini")
    restored = os.path.join(workdir, "sample-restored.hprof")
    app_mini = os.path.join(workdir, "sample-app.mini")
    pack = os.path.join(workdir, "sample.hpk")
    pack_all = os.path.join(workdir, "sample-keep-all.hpk")
    pack_restored = os.path.join(workdir, "sample-from-pack.hprof")
    converted = os.path.join(workdir, "sample-standard.hprof")
    started = time.perf_counter()
    encoded = encode(source, mini, format="tailor")
    elapsed = time.perf_counter() - started
    decode(mini, restored)
    encode(source, app_mini, format="tailor", app_only=True)
    packed = encode(source, pack)  # hprofkit's own format, Tailor's policy
    packed_all = encode(source, pack_all, strip="none")
    decode(pack_all, pack_restored)
    convert(source, converted)
    gz = len(gzip.compress(open(source, "rb").read(), 6))
    out.write(f"\n5. encode -> decode (Tailor's policy: char[]/byte[] contents and serials dropped):\n"
              f"   {'source':<28}{_mb(size):>12}\n"
              f"   {'gzip -6 of the source':<28}{_mb(gz):>12}  {size / gz:5.1f}x smaller\n"
              f"   {'Tailor mini':<28}{_mb(encoded.output):>12}  {size / encoded.output:5.1f}x smaller "
              f"({elapsed:.2f} s)\n"
              f"   {'Tailor mini, --app-only':<28}{_mb(os.path.getsize(app_mini)):>12}  "
              f"{size / os.path.getsize(app_mini):5.1f}x smaller\n"
              f"   {'hprofkit pack, same policy':<28}{_mb(packed.output):>12}  {size / packed.output:5.1f}x smaller "
              f"({packed.output / encoded.output:.2f}x Tailor's)\n"
              f"   {'hprofkit pack, --keep-all':<28}{_mb(packed_all.output):>12}  "
              f"{size / packed_all.output:5.1f}x smaller ({packed_all.output / gz:.2f}x gzip's), lossless\n"
              f"   {'restored from the mini':<28}{_mb(os.path.getsize(restored)):>12}\n"
              f"   {'converted to standard 1.0.2':<28}{_mb(os.path.getsize(converted)):>12}\n")

    with Dump(restored) as dump:
        again = {row.name: row.instances for row in dump.stats().histogram}
    with Dump(converted) as dump:
        standard = {row.name: row.instances for row in dump.stats().histogram}
    round_trip = again == counted and standard == counted
    out.write(f"\n6. check: the restored and the converted dumps hold the same objects per class: "
              f"{'OK' if round_trip else 'MISMATCH'}\n")
    with open(source, "rb") as a, open(pack_restored, "rb") as b:
        lossless = a.read() == b.read()
    out.write(f"7. check: decode(encode --keep-all) gives back the dump byte for byte: "
              f"{'OK' if lossless else 'MISMATCH'}\n")
    out.write("\n8. the heap graph: what holds memory, and what holds it alive\n")
    with open_heap(source) as heap:
        started = time.perf_counter()
        top = heap.top_retainers(5)
        out.write(f"   {heap}; dominator tree and retained sizes in {time.perf_counter() - started:.2f} s\n")
        for obj, size in top:
            out.write(f"   {human_size(size):>10} retained by {obj}\n")
        activity_class = heap.find_class("com.example.app.MainActivity")
        assert activity_class is not None, "write_sample_dump writes MainActivity"
        activity = next(iter(activity_class.instances()))
        path = heap.path_to_root(activity, exclude=match.ANDROID_DEFAULTS)
        out.write(f"   what keeps {activity} alive ({human_size(activity.retained_size)} retained):\n")
        out.write("   " + str(path).replace("\n", "\n   ") + "\n")
        leaks = heap.find_leaks()
        out.write(f"   leaks found (destroyed components, KeyedWeakReferences): {len(leaks)}\n")
    return 0 if ok and round_trip and lossless else 1
