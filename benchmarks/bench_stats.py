"""stats() against the number of classes: time per class stays flat when
the histogram is built in linear time (issue 9 measured 0.71 / 2.95 / 11.3 s
for 25k / 50k / 100k classes when each row was found by a scan from the
first class).

    python benchmarks/bench_stats.py [--classes 25000,50000,100000]

Each dump is made in memory: one STRING and LOAD_CLASS per class, then one
heap dump with a CLASS_DUMP and two instances per class."""

from __future__ import annotations

import argparse
import struct

import hprofkit
from _common import best_of


def many_classes(n: int) -> bytes:
    """A 1.0.2 dump (id size 4) with n classes of two instances each."""
    out = [b"JAVA PROFILE 1.0.2\0", struct.pack(">IQ", 4, 0)]
    for i in range(n):
        name = f"com/example/C{i}".encode()
        out.append(struct.pack(">BII", 0x01, 0, 4 + len(name)) + struct.pack(">I", 0x100000 + i) + name)
        out.append(struct.pack(">BIIIIII", 0x02, 0, 16, i + 1, 0x10000000 + 8 * i, 0, 0x100000 + i))
    body = bytearray()
    for i in range(n):
        cls = 0x10000000 + 8 * i
        body += struct.pack(">BII", 0x20, cls, 0) + bytes(24) + struct.pack(">IHHH", 8, 0, 0, 0)
        for k in range(2):
            body += struct.pack(">BIIII", 0x21, 0x40000000 + 16 * i + 8 * k, 0, cls, 0)
    out.append(struct.pack(">BII", 0x1C, 0, len(body)) + body)
    out.append(struct.pack(">BII", 0x2C, 0, 0))
    return b"".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", default="25000,50000,100000", help="comma-separated class counts")
    args = parser.parse_args()
    print(f"{'classes':>10}{'dump MB':>10}{'stats() s':>12}{'us/class':>10}")
    for n in (int(x) for x in args.classes.split(",")):
        data = many_classes(n)
        stats = hprofkit.stats(data)
        assert len(stats.histogram) == n and stats.instances == 2 * n
        seconds = best_of(3, lambda: hprofkit.stats(data))
        print(f"{n:>10,}{len(data) / 1e6:>10.1f}{seconds:>12.3f}{seconds / n * 1e6:>10.2f}")


if __name__ == "__main__":
    main()
