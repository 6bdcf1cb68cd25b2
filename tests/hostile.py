"""Hostile and extreme inputs for the codecs (issue 9), written with plain
Python (struct, zlib, and packframe for packs) so that nothing of hprofkit's
own code is trusted to make them.  benchmarks/bench_hostile.py builds them full size and
measures peak RSS; the tests build small ones.

    pack_bomb          a crafted pack: one opaque record whose body stream
                       declares `raw` bytes (zeros, deflated); CRCs all right
    pack_of_zeros      a legitimate pack of `blocks` such records, restoring
                       to gigabytes from megabytes (made without encoding them)
    mini_of_roots      a zlib Tailor mini: one segment of `roots` empty roots
    mini_of_byte_arrays a bare Tailor mini: one segment of byte[] heads
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


def mini_of_byte_arrays(arrays: int, length: int) -> bytes:
    """A bare Tailor mini: one heap segment of `arrays` byte[length] (10
    bytes each: a mini drops byte[] contents, restored as zeros)."""
    heads = b"".join(struct.pack(">BIIB", 0x23, 0x100 + 8 * k, length, 8) for k in range(arrays))
    return b"JAVA PROFILE 6.0.1" + b"\x1c" + heads + b"\x2c"


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


# ---- heap graphs (issue 19: graph surfaces) ------------------------------------------
#
# HPROF 1.0.2 dumps with 4-byte ids, written sub-record by sub-record into
# heap dump segments of at most SEGMENT bytes, so that the benchmark can
# build them at the sizes (10 M objects, 50 M references) in
# seconds:
#
#   class_chain_dump   `depth` classes, each extending the one before, and
#                      one instance of the deepest, held by a JNI global
#                      through an Object[]
#   linked_list_dump   `n` Node{next} instances in a chain from a JNI global
#   shared_target_dump one Object[] of `n` slots, all holding one object
#   many_roots_dump    `n` GC roots (JNI global, monitor, unknown in turn)
#                      on one object
#   leak_chain_dump    a destroyed android.app.Activity at the end of a
#                      chain of `n` Node{next} from a JNI global
#   wide_array_dump    an Object[] of `n` distinct Leaf instances
#
# GRAPH_IDS names the objects the tests and the benchmark ask about.

SEGMENT = 32 << 20
OBJECT_CLASS, NODE_CLASS, ARRAY_CLASS, LEAF_CLASS, ACTIVITY_CLASS = 0x100, 0x108, 0x110, 0x118, 0x120
CHAIN_CLASS0 = 0x1000_0000     # class k of a chain: CHAIN_CLASS0 + 8 k
OBJECT0 = 0x4000_0000          # the objects: OBJECT0 + 8 k
HOLDER = 0x3000_0000           # the Object[] a root holds, or the shared target
_NAMES = {OBJECT_CLASS: "java/lang/Object", NODE_CLASS: "Node", ARRAY_CLASS: "[Ljava/lang/Object;",
          LEAF_CLASS: "Leaf", ACTIVITY_CLASS: "android/app/Activity"}
_FIELD_NAMES = {1: "next", 2: "mDestroyed"}  # string ids of field names (class names use 100 +)


def object_id(k: int) -> int:
    return OBJECT0 + 8 * k


def _string(sid: int, text: str) -> bytes:
    data = text.encode()
    return record(0x01, 4 + len(data)) + struct.pack(">I", sid) + data


def _load_class(serial: int, cid: int, sid: int) -> bytes:
    return record(0x02, 16) + struct.pack(">IIII", serial, cid, 0, sid)


def _class_dump(cid: int, super_id: int, instance_size: int, fields: tuple[tuple[int, int], ...] = ()) -> bytes:
    body = struct.pack(">BIIIIIIIIIHH", 0x20, cid, 0, super_id, 0, 0, 0, 0, 0, instance_size, 0, 0)
    return body + struct.pack(">H", len(fields)) + b"".join(struct.pack(">IB", sid, t) for sid, t in fields)


def _instance(oid: int, cid: int, data: bytes = b"") -> bytes:
    return struct.pack(">BIIII", 0x21, oid, 0, cid, len(data)) + data


def _object_array_head(oid: int, count: int) -> bytes:
    return struct.pack(">BIIII", 0x22, oid, 0, count, ARRAY_CLASS)


def _jni_global(oid: int) -> bytes:
    return struct.pack(">BII", 0x01, oid, 0)


def _segments(subs: Iterator[bytes]) -> Iterator[bytes]:
    """Sub-records grouped into HEAP_DUMP_SEGMENT records, then HEAP_DUMP_END.
    Each item is whole sub-records: a segment never splits one."""
    pending: list[bytes] = []
    size = 0
    for sub in subs:
        if size + len(sub) > SEGMENT and pending:
            yield record(0x1C, size)
            yield from pending
            pending, size = [], 0
        pending.append(sub)
        size += len(sub)
    if pending:
        yield record(0x1C, size)
        yield from pending
    yield record(0x2C, 0)


def _preamble(classes: dict[int, str], fields: dict[int, str] = _FIELD_NAMES) -> Iterator[bytes]:
    """The header, the field names, and STRING + LOAD_CLASS for each class."""
    yield hprof_header(2, 4)
    for sid, name in fields.items():
        yield _string(sid, name)
    for serial, (cid, name) in enumerate(classes.items(), 1):
        yield _string(100 + serial, name) + _load_class(serial, cid, 100 + serial)


def _base_classes() -> Iterator[bytes]:
    yield _class_dump(OBJECT_CLASS, 0, 0)
    yield _class_dump(ARRAY_CLASS, OBJECT_CLASS, 0)
    yield _class_dump(NODE_CLASS, OBJECT_CLASS, 4, ((1, 2),))
    yield _class_dump(LEAF_CLASS, OBJECT_CLASS, 0)
    yield _class_dump(ACTIVITY_CLASS, OBJECT_CLASS, 1, ((2, 4),))


def class_chain_dump(depth: int) -> Iterator[bytes]:
    chain = {CHAIN_CLASS0 + 8 * k: f"C{k}" for k in range(depth)}
    yield from _preamble({**_NAMES, **chain})

    def subs() -> Iterator[bytes]:
        yield _jni_global(HOLDER)
        yield from _base_classes()
        for k in range(depth):
            yield _class_dump(CHAIN_CLASS0 + 8 * k, CHAIN_CLASS0 + 8 * (k - 1) if k else OBJECT_CLASS, 0)
        yield _object_array_head(HOLDER, 1) + struct.pack(">I", object_id(0))
        yield _instance(object_id(0), CHAIN_CLASS0 + 8 * (depth - 1))
    yield from _segments(subs())


def _chain(n: int, last: int) -> Iterator[bytes]:
    """Nodes 0..n-1, each holding the next; the last holds `last`."""
    node = struct.Struct(">BIIIII")
    for start in range(0, n, 4096):
        yield b"".join(node.pack(0x21, object_id(k), 0, NODE_CLASS, 4, object_id(k + 1) if k + 1 < n else last)
                       for k in range(start, min(n, start + 4096)))


def linked_list_dump(n: int) -> Iterator[bytes]:
    yield from _preamble(_NAMES)

    def subs() -> Iterator[bytes]:
        yield _jni_global(object_id(0))
        yield from _base_classes()
        yield from _chain(n, 0)
    yield from _segments(subs())


def leak_chain_dump(n: int) -> Iterator[bytes]:
    """The Activity is object n."""
    yield from _preamble(_NAMES)

    def subs() -> Iterator[bytes]:
        yield _jni_global(object_id(0))
        yield from _base_classes()
        yield from _chain(n, object_id(n))
        yield _instance(object_id(n), ACTIVITY_CLASS, b"\x01")
    yield from _segments(subs())


def shared_target_dump(n: int) -> Iterator[bytes]:
    """The Object[] is HOLDER, the target object 0."""
    yield from _preamble(_NAMES)

    def subs() -> Iterator[bytes]:
        yield _jni_global(HOLDER)
        yield from _base_classes()
        yield _instance(object_id(0), LEAF_CLASS)
        yield _object_array_head(HOLDER, n) + struct.pack(">I", object_id(0)) * n  # one sub-record: one piece
    yield from _segments(subs())


def many_roots_dump(n: int) -> Iterator[bytes]:
    """Object 0 held by n roots."""
    yield from _preamble(_NAMES)
    target = object_id(0)
    three = _jni_global(target) + struct.pack(">BI", 0x07, target) + struct.pack(">BI", 0xFF, target)

    def subs() -> Iterator[bytes]:
        for start in range(0, n // 3, 1 << 16):
            yield three * min(1 << 16, n // 3 - start)
        yield three[:(9, 14)[n % 3 - 1]] if n % 3 else b""
        yield from _base_classes()
        yield _instance(target, LEAF_CLASS)
    yield from _segments(subs())


def wide_array_dump(n: int) -> Iterator[bytes]:
    """HOLDER is an Object[] whose slot k holds Leaf object k."""
    yield from _preamble(_NAMES)
    leaf = struct.Struct(">BIIII")

    def subs() -> Iterator[bytes]:
        yield _jni_global(HOLDER)
        yield from _base_classes()
        yield _object_array_head(HOLDER, n) + b"".join(struct.pack(">I", object_id(k)) for k in range(n))
        for start in range(0, n, 4096):
            yield b"".join(leaf.pack(0x21, object_id(k), 0, LEAF_CLASS, 0) for k in range(start, min(n, start + 4096)))
    yield from _segments(subs())


# ---- collections and boxes (issue 30: hardening III) ----------------------------------
#
#   deep_list_dump     a java.util.ArrayList subclassed `depth` times (every
#                      third subclass declares an int `pad` of its own), one
#                      instance of the deepest holding LIST_ITEMS in 4 slots
#   corrupt_values_dump a java.lang.Character without `value`, a
#                      java.lang.Long whose `value` is a reference, and an
#                      ArrayList of size 2^31-1 in 2 slots (CORRUPT_IDS)
#   flat_classes_dump  `n` classes, one instance each (the report's memory)
#   identical_strings_dump `n` Strings of one text

LIST_CLASS, CHARACTER_CLASS, LONG_CLASS = 0x130, 0x138, 0x140
LIST = 0x2000_0000             # the list instance, its elementData at LIST + 8
LIST_ITEMS = (object_id(1), object_id(2))
PAD = 0x7FFF_FFFF              # what every `pad` holds: read as a size or a reference, it shows
_VALUE_FIELDS = {**_FIELD_NAMES, 3: "elementData", 4: "size", 5: "pad", 6: "value", 7: "other", 8: "hash"}
STRING_CLASS = 0x148
_LIST_FIELDS = ((3, 2), (4, 10))  # elementData: Object[], size: int
CORRUPT_IDS = {"character": object_id(10), "long": object_id(11), "list": LIST}


def _list_subrecords(list_class: int, own_pads: int, size: int, slots: tuple[int, ...]) -> Iterator[bytes]:
    """An instance of list_class (whose classes declare own_pads pads before
    ArrayList's fields) with `size`, its elementData holding `slots`."""
    data = struct.pack(">I", PAD) * own_pads + struct.pack(">Ii", LIST + 8, size)
    yield _jni_global(LIST)
    yield _instance(LIST, list_class, data)
    yield _object_array_head(LIST + 8, len(slots)) + b"".join(struct.pack(">I", k) for k in slots)


def deep_list_dump(depth: int) -> Iterator[bytes]:
    chain = {CHAIN_CLASS0 + 8 * k: f"C{k}" for k in range(depth)}
    yield from _preamble({**_NAMES, LIST_CLASS: "java/util/ArrayList", **chain}, _VALUE_FIELDS)

    def subs() -> Iterator[bytes]:
        yield from _base_classes()
        yield _class_dump(LIST_CLASS, OBJECT_CLASS, 8, _LIST_FIELDS)
        for k in range(depth):
            pad = ((5, 10),) if k % 3 == 0 else ()
            yield _class_dump(CHAIN_CLASS0 + 8 * k, CHAIN_CLASS0 + 8 * (k - 1) if k else LIST_CLASS, 4 * len(pad), pad)
        for item in LIST_ITEMS:
            yield _instance(item, OBJECT_CLASS)
        yield from _list_subrecords(CHAIN_CLASS0 + 8 * (depth - 1), (depth + 2) // 3, 2, (*LIST_ITEMS, 0, 0))
    yield from _segments(subs())


def corrupt_values_dump() -> Iterator[bytes]:
    yield from _preamble({**_NAMES, LIST_CLASS: "java/util/ArrayList", CHARACTER_CLASS: "java/lang/Character",
                          LONG_CLASS: "java/lang/Long"}, _VALUE_FIELDS)

    def subs() -> Iterator[bytes]:
        yield from _base_classes()
        yield _class_dump(LIST_CLASS, OBJECT_CLASS, 8, _LIST_FIELDS)
        yield _class_dump(CHARACTER_CLASS, OBJECT_CLASS, 2, ((7, 5),))  # char other
        yield _class_dump(LONG_CLASS, OBJECT_CLASS, 4, ((6, 2),))       # Object value
        yield _jni_global(CORRUPT_IDS["character"]) + _jni_global(CORRUPT_IDS["long"])
        yield _instance(CORRUPT_IDS["character"], CHARACTER_CLASS, b"\0A")
        yield _instance(CORRUPT_IDS["long"], LONG_CLASS, struct.pack(">I", CORRUPT_IDS["character"]))
        yield from _list_subrecords(LIST_CLASS, 0, 2**31 - 1, (object_id(12), 0))
        yield _instance(object_id(12), OBJECT_CLASS)
    yield from _segments(subs())


def flat_classes_dump(n: int) -> Iterator[bytes]:
    """`n` classes extending Object, one instance of each, held by an Object[]
    (the report's memory per class: benchmarks/bench_graph_hostile.py)."""
    flat = {CHAIN_CLASS0 + 8 * k: f"F{k}" for k in range(n)}
    yield from _preamble({**_NAMES, **flat})

    def subs() -> Iterator[bytes]:
        yield _jni_global(HOLDER)
        yield from _base_classes()
        for k in range(n):
            yield _class_dump(CHAIN_CLASS0 + 8 * k, OBJECT_CLASS, 0)
        yield _object_array_head(HOLDER, n) + b"".join(struct.pack(">I", object_id(k)) for k in range(n))
        for k in range(n):
            yield _instance(object_id(k), CHAIN_CLASS0 + 8 * k)
    yield from _segments(subs())


def identical_strings_dump(n: int, text: str = "hello, world") -> Iterator[bytes]:
    """`n` java.lang.Strings of one text, each with a char[] of its own, held
    by an Object[] (the report's memory per duplicate String)."""
    yield from _preamble({**_NAMES, STRING_CLASS: "java/lang/String"}, _VALUE_FIELDS)
    chars = text.encode("utf-16-be")
    string = struct.Struct(">BIIII" + "Ii")
    array = struct.pack(">BIIIB", 0x23, 0, 0, len(text), 5)[5:]  # stack serial, count, char: after the id

    def subs() -> Iterator[bytes]:
        yield _jni_global(HOLDER)
        yield from _base_classes()
        yield _class_dump(STRING_CLASS, OBJECT_CLASS, 8, ((6, 2), (8, 10)))
        yield _object_array_head(HOLDER, n) + b"".join(struct.pack(">I", object_id(2 * k)) for k in range(n))
        for start in range(0, n, 4096):
            yield b"".join(string.pack(0x21, object_id(2 * k), 0, STRING_CLASS, 8, object_id(2 * k + 1), 0)
                           + b"\x23" + struct.pack(">I", object_id(2 * k + 1)) + array + chars
                           for k in range(start, min(n, start + 4096)))
    yield from _segments(subs())


def write_dump(path, chunks: Iterator[bytes]) -> None:
    with open(path, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
