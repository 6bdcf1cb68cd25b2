"""Hostile and extreme inputs for the codecs (issue 9), written with plain
Python (struct, zlib, and packframe for packs) so that nothing of hprofkit's
own code is trusted to make them.  benchmarks/bench_hostile.py builds them full size and
measures peak RSS; the tests build small ones.

    pack_bomb          a crafted pack: one opaque record whose body stream
                       declares `raw` bytes (zeros, deflated); CRCs all right
    pack_of_zeros      a legitimate pack of `blocks` such records, restoring
                       to gigabytes from megabytes (made without encoding them)
    mini_of_roots      a zlib Tailor mini: one segment of `roots` empty roots
    zero_arrays_dump   HPROF chunks: `count` zeroed byte[] of `size` bytes
    one_array_dump     Android HPROF chunks: one segment holding one byte[]
    app_heap_dump      Android HPROF chunks: one segment of `count` byte[]
                       of the app heap (what an app_only pack holds)
    classes_twice_dump HPROF: `n` classes dumped in two heap dumps
and traced_peak, the peak memory a call allocates.
"""

from __future__ import annotations

import struct
import tracemalloc
import zlib
from typing import Any, Callable, Iterator

from packframe import pack_block, pack_end, pack_header, varint

OP, TIME, LEN, RAW = 0, 1, 2, 3
CHUNK = 1 << 20


def traced_peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """(result, peak bytes traced) of fn(): the core allocates through
    PyMem_Raw*, which tracemalloc sees."""
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def deflated_zeros(n: int) -> bytes:
    """Raw deflate of n zero bytes (level 9: about 1/1000 of n)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytes(CHUNK)
    out = []
    for _ in range(n // CHUNK):
        out.append(comp.compress(block))
    out.append(comp.compress(bytes(n % CHUNK)))
    out.append(comp.flush())
    return b"".join(out)


def pack_bomb(raw: int = 1 << 30) -> bytes:
    """A 1.0.2 pack of one opaque record (tag 0x0D, CPU_SAMPLES) whose body
    is `raw` zero bytes, coded as a stream that declares `raw` bytes: valid
    for a decoder that trusts declared lengths, and about raw/1000 bytes."""
    header = b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 4, 0)
    out_len = 9 + raw
    block = pack_block({OP: b"\x00\x0d", TIME: b"\x00", LEN: varint(raw), RAW: (raw, deflated_zeros(raw))},
                       in_len=out_len, out_len=out_len)
    return pack_header() + block + pack_end(1, len(header) + out_len, len(header) + out_len)


def pack_of_zeros(blocks: int, raw: int = 32 << 20) -> bytes:
    """A 1.0.2 pack of `blocks` blocks, each one opaque record of `raw` zero
    bytes (what pack_bomb declares, but within the limits): it restores to
    blocks * (9 + raw) bytes after the header.  The blocks are identical (a
    record's time is coded against the previous one's, both 0), so one is
    deflated and repeated: about raw/1000 bytes each."""
    header = b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 4, 0)
    out_len = 9 + raw
    block = pack_block({OP: b"\x00\x0d", TIME: b"\x00", LEN: varint(raw), RAW: (raw, deflated_zeros(raw))},
                       in_len=out_len, out_len=out_len)
    total = len(header) + blocks * out_len
    return pack_header() + block * blocks + pack_end(blocks, total, total)


# ---- Tailor minis ----------------------------------------------------------------

def mini_of_roots(roots: int, level: int = 9) -> bytes:
    """A zlib Tailor mini: one heap segment of `roots` ROOT_UNKNOWN (5 bytes
    each, restored as they are), then HEAP_DUMP_END."""
    comp = zlib.compressobj(level)
    out = [comp.compress(b"JAVA PROFILE 6.0.1" + b"\x1c")]
    unit = b"\xff\0\0\0\0" * (CHUNK // 5)
    per = CHUNK // 5
    for _ in range(roots // per):
        out.append(comp.compress(unit))
    out.append(comp.compress(b"\xff\0\0\0\0" * (roots % per)))
    out.append(comp.compress(b"\x2c"))
    out.append(comp.flush())
    return b"".join(out)


# ---- HPROF streams -----------------------------------------------------------------

def hprof_header(version: int = 3, id_size: int = 4) -> bytes:
    return b"JAVA PROFILE 1.0." + str(version).encode() + b"\0" + struct.pack(">IQ", id_size, 0)


def record(tag: int, length: int) -> bytes:
    return struct.pack(">BII", tag, 0, length)


def byte_array_head(obj_id: int, count: int) -> bytes:
    return struct.pack(">BIIIB", 0x23, obj_id, 0, count, 8)


def _zeros(n: int) -> Iterator[bytes]:
    block = bytes(CHUNK)
    while n > 0:
        yield block if n >= CHUNK else bytes(n)
        n -= CHUNK


def zero_arrays_dump(count: int, size: int, version: int = 2) -> Iterator[bytes]:
    """A dump of `count` heap segments, each one zeroed byte[] of `size` bytes."""
    yield hprof_header(version)
    for i in range(count):
        yield record(0x1C, 14 + size) + byte_array_head(0x1000 + 8 * i, size)
        yield from _zeros(size)
    yield record(0x2C, 0)


def one_array_dump(size: int) -> Iterator[bytes]:
    """An Android dump with one segment holding one zeroed byte[] of `size` bytes."""
    yield hprof_header(3) + record(0x1C, 14 + size) + byte_array_head(0x1000, size)
    yield from _zeros(size)
    yield record(0x2C, 0)


def app_heap_dump(count: int, size: int) -> Iterator[bytes]:
    """An Android dump whose one segment holds `count` zeroed byte[] of the
    app heap ('A'): what an app_only pack holds until the segment ends."""
    info = struct.pack(">BII", 0xFE, ord("A"), 0)
    yield hprof_header(3) + record(0x1C, len(info) + count * (14 + size)) + info
    for i in range(count):
        yield byte_array_head(0x1000 + 8 * i, size)
        yield from _zeros(size)
    yield record(0x2C, 0)


def classes_twice_dump(n: int) -> bytes:
    """n classes, each with one int field, dumped in two heap dumps, with an
    instance of each after each dump: every second dump of a class used to
    reset every class's layout."""
    out = [hprof_header(2)]
    for dump in range(2):
        body = bytearray()
        for i in range(n):
            cls = 0x100000 + 16 * i
            body += struct.pack(">BIIIIIIIIIHHH", 0x20, cls, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1)
            body += struct.pack(">IB", 0x10, 10)  # field: name id, int
            body += struct.pack(">BIIII", 0x21, 0x40000000 + 16 * i, 0, cls, 4) + struct.pack(">I", i)
        out.append(record(0x0C, len(body)) + bytes(body))
    out.append(record(0x2C, 0))
    return b"".join(out)
