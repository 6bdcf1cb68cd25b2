"""Tests for python/hprofkit/writer.py and the sample heap of python/hprofkit/sample.py.

Layouts are checked byte for byte against hand-computed values from ../shared/docs/hprof-format.md, the
whole output is re-read by an independent walker written here from the same document, and the
sample dumps are opened by two real peers: VisualVM's heap library (the oracle) and AOSP's
hprof-conv.
"""

from __future__ import annotations

import io
import struct
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import hprofkit
from hprofkit import sample, writer
from conftest import peer

HprofWriter, HeapDumpBuilder = writer.HprofWriter, writer.HeapDumpBuilder



def h(text: str) -> bytes:
    """Bytes from hex with any whitespace."""
    return bytes.fromhex("".join(text.split()))


def hid(value: int, id_size: int) -> str:
    return f"{value:0{2 * id_size}x}"


# ---------------------------------------------------------------------------------------------
# An independent reader, written from ../shared/docs/hprof-format.md (it shares no code with the writer)
# ---------------------------------------------------------------------------------------------

PRIM_SIZE = {4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
PRIM_NAME = {4: "boolean", 5: "char", 6: "float", 7: "double", 8: "byte", 9: "short",
             10: "int", 11: "long"}
PRIM_LETTER = {"Z": "boolean", "C": "char", "F": "float", "D": "double", "B": "byte",
               "S": "short", "I": "int", "J": "long"}
ANDROID_SUBTAGS = {0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90, 0xC3, 0xFE}
ROOT_TAGS = {0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
             0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90}


def read_records(data: bytes):
    """(magic, id_size, timestamp, [(offset, tag, time, body)]); asserts exact framing."""
    nul = data.index(b"\0")
    magic = data[:nul].decode("ascii")
    id_size, hi, lo = struct.unpack_from(">III", data, nul + 1)
    pos = nul + 13
    records = []
    while pos < len(data):
        assert pos + 9 <= len(data), f"truncated record header at {pos}"
        tag, time, length = struct.unpack_from(">BII", data, pos)
        body = data[pos + 9:pos + 9 + length]
        assert len(body) == length, f"record at {pos} claims {length} bytes, {len(body)} remain"
        records.append((pos, tag, time, body))
        pos += 9 + length
    assert pos == len(data)
    return magic, id_size, (hi << 32) | lo, records


def read_subrecords(body: bytes, ids: int):
    """[(tag, fields...)] of one heap-dump record; asserts the last one ends at the end."""
    def rid(p):
        return int.from_bytes(body[p:p + ids], "big")

    def u4(p):
        return struct.unpack_from(">I", body, p)[0]

    out, p = [], 0
    while p < len(body):
        tag, q = body[p], p + 1
        if tag in (0xFF, 0x05, 0x07, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x90):
            rec, q = (tag, rid(q)), q + ids
        elif tag == 0x01:
            rec, q = (tag, rid(q), rid(q + ids)), q + 2 * ids
        elif tag in (0x02, 0x03, 0x08, 0x8E):
            rec, q = (tag, rid(q), u4(q + ids), u4(q + ids + 4)), q + ids + 8
        elif tag in (0x04, 0x06):
            rec, q = (tag, rid(q), u4(q + ids)), q + ids + 4
        elif tag == 0xFE:
            rec, q = (tag, u4(q), rid(q + 4)), q + 4 + ids
        elif tag == 0x20:
            cid, serial, sup, loader = rid(q), u4(q + ids), rid(q + ids + 4), rid(q + 2 * ids + 4)
            isize = u4(q + 6 * ids + 4)
            q += 7 * ids + 8
            consts, statics, fields = [], [], []
            (n,) = struct.unpack_from(">H", body, q)
            q += 2
            for _ in range(n):
                idx, t = struct.unpack_from(">HB", body, q)
                size = ids if t == 2 else PRIM_SIZE[t]
                consts.append((idx, t, body[q + 3:q + 3 + size]))
                q += 3 + size
            (n,) = struct.unpack_from(">H", body, q)
            q += 2
            for _ in range(n):
                name, t = rid(q), body[q + ids]
                size = ids if t == 2 else PRIM_SIZE[t]
                statics.append((name, t, body[q + ids + 1:q + ids + 1 + size]))
                q += ids + 1 + size
            (n,) = struct.unpack_from(">H", body, q)
            q += 2
            for _ in range(n):
                fields.append((rid(q), body[q + ids]))
                q += ids + 1
            rec = (tag, cid, serial, sup, loader, isize, consts, statics, fields)
        elif tag == 0x21:
            n = u4(q + 2 * ids + 4)
            rec = (tag, rid(q), u4(q + ids), rid(q + ids + 4),
                   body[q + 2 * ids + 8:q + 2 * ids + 8 + n])
            q += 2 * ids + 8 + n
        elif tag == 0x22:
            n = u4(q + ids + 4)
            elems = [rid(q + 2 * ids + 8 + i * ids) for i in range(n)]
            rec = (tag, rid(q), u4(q + ids), rid(q + ids + 8), elems)
            q += 2 * ids + 8 + n * ids
        elif tag == 0x23:
            n, t = u4(q + ids + 4), body[q + ids + 8]
            rec = (tag, rid(q), u4(q + ids), t, n, body[q + ids + 9:q + ids + 9 + n * PRIM_SIZE[t]])
            q += ids + 9 + n * PRIM_SIZE[t]
        elif tag == 0xC3:
            rec, q = (tag, rid(q), u4(q + ids), u4(q + ids + 4), body[q + ids + 8]), q + ids + 9
        else:
            raise AssertionError(f"unknown sub-record tag {tag:#x} at {p}")
        assert q <= len(body), f"sub-record {tag:#x} at {p} runs past its record"
        out.append(rec)
        p = q
    assert p == len(body)
    return out


def readable(name: str) -> str:
    """VisualVM's spelling of a class name (HotSpot internal names converted)."""
    dims = len(name) - len(name.lstrip("["))
    if not dims:
        return name.replace("/", ".")
    rest = name[dims:]
    base = PRIM_LETTER[rest] if rest in PRIM_LETTER else rest[1:-1].replace("/", ".")
    return base + "[]" * dims


class Dump:
    """A parsed dump: strings, classes, objects, roots, histogram."""

    def __init__(self, data: bytes):
        self.magic, self.ids, self.timestamp, self.records = read_records(data)
        self.strings = {}
        self.class_names = {}   # class id -> name
        self.class_serials = {}
        self.class_dumps = {}
        self.objects = {}       # id -> sub-record
        self.roots = []
        self.heap_records = []  # (tag, [subrecords])
        self.histogram = Counter()
        self.heaps = {}         # heap name -> Counter
        for _, tag, _, body in self.records:
            if tag == 0x01:
                self.strings[int.from_bytes(body[:self.ids], "big")] = body[self.ids:]
            elif tag == 0x02:
                serial, = struct.unpack_from(">I", body)
                cid = int.from_bytes(body[4:4 + self.ids], "big")
                sid = int.from_bytes(body[8 + self.ids:8 + 2 * self.ids], "big")
                self.class_names[cid] = self.strings[sid].decode()
                self.class_serials[cid] = serial
            elif tag in (0x0C, 0x1C):
                subs = read_subrecords(body, self.ids)
                self.heap_records.append((tag, subs))
                heap = "default"     # the 0xFE state is reset at every record (ART's rule)
                for s in subs:
                    if s[0] == 0xFE:
                        heap = self.strings[s[2]].decode()
                    elif s[0] in ROOT_TAGS:
                        self.roots.append(s)
                    elif s[0] == 0x20:
                        self.class_dumps[s[1]] = s
                        self.objects[s[1]] = s
                    else:
                        assert s[1] not in self.objects, f"duplicate object id {s[1]:#x}"
                        self.objects[s[1]] = s
                        if s[0] == 0x21:
                            name = readable(self.class_names[s[3]])
                        elif s[0] == 0x22:
                            name = readable(self.class_names[s[3]])
                        else:
                            name = PRIM_NAME[s[3]] + "[]"
                        self.histogram[name] += 1
                        self.heaps.setdefault(heap, Counter())[name] += 1

    def field_types(self, class_id: int):
        types = []
        while class_id:
            cd = self.class_dumps[class_id]
            types += [t for _, t in cd[8]]
            class_id = cd[3]
        return types

    def check_consistent(self) -> None:
        """Every reference resolves; every instance's data matches its class layout."""
        ids = self.ids
        known = set(self.objects) | {0}
        for cid, cd in self.class_dumps.items():
            assert cid in self.class_names, f"CLASS_DUMP {cid:#x} without LOAD_CLASS"
            assert cd[3] in known and cd[4] in known
            for name, t, raw in cd[7]:
                assert name in self.strings
                if t == 2:
                    assert int.from_bytes(raw, "big") in known
            for name, _ in cd[8]:
                assert name in self.strings
        for obj in self.objects.values():
            if obj[0] == 0x21:
                types = self.field_types(obj[3])
                data = obj[4]
                assert len(data) == sum(ids if t == 2 else PRIM_SIZE[t] for t in types)
                p = 0
                for t in types:
                    size = ids if t == 2 else PRIM_SIZE[t]
                    if t == 2:
                        ref = int.from_bytes(data[p:p + size], "big")
                        assert ref in known, f"dangling reference {ref:#x} in {obj[1]:#x}"
                    p += size
            elif obj[0] == 0x22:
                assert obj[3] in self.class_dumps
                assert all(e in known for e in obj[4])
        for r in self.roots:
            assert r[1] in known, f"root {r[0]:#x} to unknown object {r[1]:#x}"


def oracle_counts(result: dict) -> dict:
    return {k: v[0] for k, v in result["histogram"].items()}


# ---------------------------------------------------------------------------------------------
# Header and top-level records: exact bytes
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["1.0", "1.0.1", "1.0.2", "1.0.3"])
@pytest.mark.parametrize("id_size", [4, 8])
def test_header_bytes(version, id_size):
    buf = io.BytesIO()
    with HprofWriter(buf, version=version, id_size=id_size, timestamp=0x0102030405060708) as w:
        assert w.offset == len(version) + 13 + 1 + 12
    expected = (b"JAVA PROFILE " + version.encode() + b"\0"
                + h(f"{id_size:08x} 01020304 05060708"))
    assert buf.getvalue() == expected
    if version != "1.0":
        assert len(expected) == 31   # "With any of the standard magics the header is 31 bytes"


def new(id_size=4, version="1.0.2"):
    buf = io.BytesIO()
    w = HprofWriter(buf, version=version, id_size=id_size)
    start = len(buf.getvalue())
    return buf, w, start


def test_utf8_record_and_interning():
    buf, w, start = new(4)
    assert w.string("hello") == 0x400000
    assert buf.getvalue()[start:] == h("01 00000000 00000009 00400000 68656c6c6f")
    mark = len(buf.getvalue())
    assert w.string("hello") == 0x400000           # interned: nothing written
    assert len(buf.getvalue()) == mark
    assert w.string("hello", sid=0x400001) == 0x400001  # explicit sid: always written
    assert w.string("x") == 0x400002                # auto ids skip explicit ones
    assert w.string(b"\xff\x00raw") == 0x400003     # bytes are written as they are
    assert buf.getvalue().endswith(h("01 00000000 00000009 00400003 ff00726177"))


def test_utf8_record_id8():
    buf, w, start = new(8)
    w.string("ab", sid=0x7F3AD4001000)
    assert buf.getvalue()[start:] == h("01 00000000 0000000a 00007f3ad4001000 6162")


@pytest.mark.parametrize("text,encoded", [
    ("plain", "706c61696e"),
    ("a\0b", "61 c080 62"),                     # NUL is two bytes in modified UTF-8
    ("é", "c3a9"),
    ("€", "e282ac"),
    ("😀", "eda0bd edb880"),                   # U+1F600 as a surrogate pair, 3 bytes each
])
def test_modified_utf8(text, encoded):
    assert writer.modified_utf8(text) == h(encoded)


@pytest.mark.parametrize("id_size", [4, 8])
def test_load_class_bytes(id_size):
    buf, w, start = new(id_size)
    assert w.load_class(0x1000, 0x400123, stack_serial=7) == 1
    assert w.load_class(0x2000, 0x400124, serial=5) == 5
    assert w.class_serial(0x2000) == 5
    n = 8 + 2 * id_size
    assert buf.getvalue()[start:] == h(
        f"02 00000000 {n:08x} 00000001 {hid(0x1000, id_size)} 00000007 {hid(0x400123, id_size)}"
        f"02 00000000 {n:08x} 00000005 {hid(0x2000, id_size)} 00000000 {hid(0x400124, id_size)}")


def test_load_class_interns_name():
    buf, w, start = new(4)
    w.load_class(0x1000, "java/lang/Object")
    assert buf.getvalue()[start:] == h(
        "01 00000000 00000014 00400000" + b"java/lang/Object".hex()
        + "02 00000000 00000010 00000001 00001000 00000000 00400000")


@pytest.mark.parametrize("id_size", [4, 8])
def test_frame_trace_thread_bytes(id_size):
    buf, w, start = new(id_size)
    I = lambda v: hid(v, id_size)  # noqa: E731
    assert w.stack_frame(0x77, 1, 2, 3, 9, -3) == 0x77
    assert w.stack_trace(5, 1, [0x77, 0x78]) == 5
    w.start_thread(1, 0x2000, 5, 0x10, 0x11, 0x12)
    w.end_thread(1)
    assert buf.getvalue()[start:] == h(
        f"04 00000000 {4 * id_size + 8:08x} {I(0x77)} {I(1)} {I(2)} {I(3)} 00000009 fffffffd"
        f"05 00000000 {12 + 2 * id_size:08x} 00000005 00000001 00000002 {I(0x77)} {I(0x78)}"
        f"0a 00000000 {8 + 4 * id_size:08x} 00000001 {I(0x2000)} 00000005 {I(0x10)} {I(0x11)} {I(0x12)}"
        f"0b 00000000 00000004 00000001")


def test_other_agent_records_bytes():
    buf, w, start = new(4)
    w.unload_class(3)
    w.heap_summary(1, 2, 3, 4)
    w.control_settings(3, 16)
    w.cpu_samples(10, [(7, 5)])
    w.alloc_sites(1, 0.5, 1, 2, 3, 4, [(0, 1, 2, 3, 4, 5, 6)])
    w.heap_dump_end()
    assert buf.getvalue()[start:] == h(
        "03 00000000 00000004 00000003"
        "07 00000000 00000018 00000001 00000002 0000000000000003 0000000000000004"
        "0e 00000000 00000006 00000003 0010"
        "0d 00000000 00000010 0000000a 00000001 00000007 00000005"
        "06 00000000 0000003b 0001 3f000000 00000001 00000002 0000000000000003 0000000000000004"
        "   00000001 00 00000001 00000002 00000003 00000004 00000005 00000006"
        "2c 00000000 00000000")


def test_raw_records_for_corrupt_inputs():
    buf, w, start = new(4)
    w.record(0x99, b"xy", time=7)                 # unknown tag
    w.record(0x1C, b"", length=100)               # a length that lies
    w.raw(b"\x01\x00")                            # a truncated record header
    assert buf.getvalue()[start:] == h("99 00000007 00000002 7879  1c 00000000 00000064  0100")
    assert w.offset == len(buf.getvalue())


# ---------------------------------------------------------------------------------------------
# Heap sub-records: exact bytes
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("id_size", [4, 8])
def test_class_dump_and_instance_bytes(id_size):
    I = lambda v: hid(v, id_size)  # noqa: E731
    b = HeapDumpBuilder(id_size=id_size)
    b.class_dump(0x2000, fields=[(0x400006, "int")])
    base = len(b.getvalue())
    b.class_dump(0x1000, super_id=0x2000, loader_id=0x3000, instance_size=13, stack_serial=1,
                 constants=[(7, "int", 42)],
                 statics=[(0x400001, "long", -2), (0x400002, writer.OBJECT, 0x5000)],
                 fields=[(0x400003, "boolean"), (0x400004, "object"), (0x400005, "D")])
    b.instance(0x6000, 0x1000, values=[True, 0x7000, 1.5, -1], stack_serial=2)
    b.instance(0x6001, 0x1000, b"\xAA\xBB")
    n = 1 + id_size + 8 + 4
    expected = h(
        f"20 {I(0x1000)} 00000001 {I(0x2000)} {I(0x3000)} {I(0)} {I(0)} {I(0)} {I(0)} 0000000d"
        f"0001 0007 0a 0000002a"
        f"0002 {I(0x400001)} 0b fffffffffffffffe {I(0x400002)} 02 {I(0x5000)}"
        f"0003 {I(0x400003)} 04 {I(0x400004)} 02 {I(0x400005)} 07"
        # own fields first (boolean, object, double), then the superclass's int
        f"21 {I(0x6000)} 00000002 {I(0x1000)} {n:08x} 01 {I(0x7000)} 3ff8000000000000 ffffffff"
        f"21 {I(0x6001)} 00000000 {I(0x1000)} 00000002 aabb")
    assert b.getvalue()[base:] == expected
    assert b.instance_field_types(0x1000) == (4, 2, 7, 10)
    # the class dump's size: 7 ids + 8, plus the three tables
    assert len(expected) - 2 * (1 + 2 * id_size + 8) - n - 2 == (
        1 + 7 * id_size + 8 + (2 + 3 + 4) + (2 + id_size + 1 + 8 + id_size + 1 + id_size)
        + (2 + 3 * (id_size + 1)))


@pytest.mark.parametrize("id_size", [4, 8])
def test_array_bytes(id_size):
    I = lambda v: hid(v, id_size)  # noqa: E731
    b = HeapDumpBuilder(id_size=id_size)
    b.object_array(0x8000, 0x9000, [0x1, None, 0x2], stack_serial=3)
    b.primitive_array(0xA000, "char", "hé")
    b.primitive_array(0xA001, "int", [1, -1, 0xFFFFFFFE])
    b.primitive_array(0xA002, writer.LONG, [-2])
    b.primitive_array(0xA003, "boolean", [True, False])
    b.primitive_array(0xA004, "byte", b"\x80\x7f")          # bytes taken as they are
    b.primitive_array(0xA005, "short", [-2, 0x1234])
    b.primitive_array(0xA006, "float", [1.0])
    b.primitive_array(0xA007, "double", [-2.0])
    b.primitive_array(0xA008, "int", b"\0\0\0\1\0\0\0\2")   # count = len / 4
    b.primitive_array(0xA009, "char", ["a", 0x263A])
    b.primitive_array_nodata(0xA00A, "byte", 100)
    assert b.getvalue() == h(
        f"22 {I(0x8000)} 00000003 00000003 {I(0x9000)} {I(1)} {I(0)} {I(2)}"
        f"23 {I(0xA000)} 00000000 00000002 05 0068 00e9"
        f"23 {I(0xA001)} 00000000 00000003 0a 00000001 ffffffff fffffffe"
        f"23 {I(0xA002)} 00000000 00000001 0b fffffffffffffffe"
        f"23 {I(0xA003)} 00000000 00000002 04 01 00"
        f"23 {I(0xA004)} 00000000 00000002 08 807f"
        f"23 {I(0xA005)} 00000000 00000002 09 fffe 1234"
        f"23 {I(0xA006)} 00000000 00000001 06 3f800000"
        f"23 {I(0xA007)} 00000000 00000001 07 c000000000000000"
        f"23 {I(0xA008)} 00000000 00000002 0a 00000001 00000002"
        f"23 {I(0xA009)} 00000000 00000002 05 0061 263a"
        f"c3 {I(0xA00A)} 00000000 00000064 08")


ROOTS = [  # method, args, tag, tail after the object id, size after the tag (doc §4)
    ("root_unknown", (), 0xFF, "", lambda i: i),
    ("root_jni_global", (0x55667788,), 0x01, "55667788", lambda i: 2 * i),
    ("root_jni_local", (5, 2), 0x02, "00000005 00000002", lambda i: i + 8),
    ("root_java_frame", (5, -1), 0x03, "00000005 ffffffff", lambda i: i + 8),
    ("root_native_stack", (6,), 0x04, "00000006", lambda i: i + 4),
    ("root_sticky_class", (), 0x05, "", lambda i: i),
    ("root_thread_block", (7,), 0x06, "00000007", lambda i: i + 4),
    ("root_monitor_used", (), 0x07, "", lambda i: i),
    ("root_thread_object", (8, 9), 0x08, "00000008 00000009", lambda i: i + 8),
    ("root_interned_string", (), 0x89, "", lambda i: i),
    ("root_finalizing", (), 0x8A, "", lambda i: i),
    ("root_debugger", (), 0x8B, "", lambda i: i),
    ("root_reference_cleanup", (), 0x8C, "", lambda i: i),
    ("root_vm_internal", (), 0x8D, "", lambda i: i),
    ("root_jni_monitor", (3, -1), 0x8E, "00000003 ffffffff", lambda i: i + 8),
    ("unreachable", (), 0x90, "", lambda i: i),
]


@pytest.mark.parametrize("id_size", [4, 8])
@pytest.mark.parametrize("method,args,tag,tail,size", ROOTS, ids=[r[0] for r in ROOTS])
def test_root_bytes(id_size, method, args, tag, tail, size):
    b = HeapDumpBuilder(id_size=id_size)
    if method == "root_jni_global" and id_size == 8:
        tail = "0000000055667788"
    getattr(b, method)(0x11223344, *args)
    data = b.getvalue()
    assert data == bytes((tag,)) + h(hid(0x11223344, id_size) + tail)
    assert len(data) == 1 + size(id_size)


def test_heap_dump_info_bytes_and_names():
    b = HeapDumpBuilder(id_size=4)
    b.heap_dump_info("zygote", 0x400010)
    b.heap_dump_info(0x41, 0x400011)
    b.heap_dump_info(0, 0x400012)
    assert b.getvalue() == h("fe 0000005a 00400010  fe 00000041 00400011  fe 00000000 00400012")
    buf, w, start = new(4, "1.0.3")
    with w.heap_dump() as hd:
        hd.heap_dump_info("image")                  # the name is interned through the writer
    assert buf.getvalue()[start:] == h(
        "01 00000000 00000009 00400000" + b"image".hex()
        + "1c 00000000 00000009 fe 00000049 00400000")


# ---------------------------------------------------------------------------------------------
# Heap-dump records, segments and splitting
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("segment,tag", [(True, 0x1C), (False, 0x0C)])
def test_heap_dump_record_length(segment, tag):
    buf, w, start = new(8)
    with w.heap_dump(segment=segment, time=5) as hd:
        hd.root_unknown(1)
        hd.primitive_array(2, "byte", b"abc")
        content = hd.getvalue()
    assert buf.getvalue()[start:] == bytes((tag,)) + h(f"00000005 {len(content):08x}") + content
    _, _, _, records = read_records(buf.getvalue())
    assert [(t, len(b)) for _, t, _, b in records] == [(tag, (1 + 8) + (1 + 8 + 4 + 4 + 1 + 3))]


def test_empty_and_discarded_heap_dumps():
    buf, w, start = new(4)
    with w.heap_dump():
        pass
    assert buf.getvalue()[start:] == h("1c 00000000 00000000")
    mark = len(buf.getvalue())
    with pytest.raises(RuntimeError):
        with w.heap_dump() as hd:
            hd.root_unknown(1)
            raise RuntimeError("abandon")
    assert len(buf.getvalue()) == mark          # nothing written for a failed block
    hd2 = w.heap_dump()
    hd2.root_unknown(1)
    hd2.close()
    hd2.close()                                   # idempotent
    with pytest.raises(ValueError):
        hd2.root_unknown(2)


def test_records_written_inside_a_heap_dump_come_first():
    buf, w, start = new(4)
    with w.heap_dump() as hd:
        hd.class_dump(0x100, fields=[("count", "int")])   # str names are interned on the fly
    _, _, _, records = read_records(buf.getvalue())
    assert [t for _, t, _, _ in records] == [0x01, 0x1C]
    sub = read_subrecords(records[1][3], 4)
    assert sub[0][8] == [(0x400000, 10)]


def test_split_segments_like_art():
    buf, w, _ = new(4, "1.0.3")
    with w.heap_dump(split_objects=3, split_bytes=4096) as hd:
        hd.root_unknown(0x10)
        hd.heap_dump_info("app", 0x400100)
        for i in range(7):
            hd.instance(0x1000 + i, 0x20, b"")
    assert hd.records_written == 3
    _, _, _, records = read_records(buf.getvalue())
    segs = [read_subrecords(b, 4) for _, t, _, b in records]
    assert [[s[0] for s in seg] for seg in segs] == [
        [0xFF, 0xFE, 0x21, 0x21],
        [0xFE, 0x21, 0x21, 0x21],           # the heap is re-announced in the next segment
        [0xFE, 0x21, 0x21],
    ]
    assert all(seg[0] == (0xFE, 0x41, 0x400100) for seg in segs[1:])

    buf, w, _ = new(4)
    with w.heap_dump(split_bytes=100) as hd:
        for i in range(5):
            hd.primitive_array(i + 1, "byte", bytes(60))   # 74 bytes each
    _, _, _, records = read_records(buf.getvalue())
    assert [len(b) for _, _, _, b in records] == [148, 148, 74]   # never straddles a record


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

def test_validation_errors():
    with pytest.raises(ValueError):
        HprofWriter(io.BytesIO(), version="1.0.4")
    with pytest.raises(ValueError):
        HprofWriter(io.BytesIO(), id_size=2)
    with pytest.raises(TypeError):
        HprofWriter(object())
    buf, w, start = new(4)
    with pytest.raises(ValueError):
        w.string("x", sid=1 << 32)                  # id too big for 4 bytes
    with pytest.raises(ValueError):
        w.load_class(-1, 1)
    with pytest.raises(ValueError):
        w.load_class(1, 1, serial=1 << 32)
    assert len(buf.getvalue()) == start             # nothing half-written
    b = HeapDumpBuilder(id_size=4)
    for bad in ("integer", 3, 12, 1, 0, True):
        with pytest.raises(ValueError):
            b.primitive_array(1, bad, [])
    with pytest.raises(ValueError):
        b.primitive_array(1, "object", [])
    with pytest.raises(ValueError):
        b.class_dump(1, fields=[(1, "void")])
    with pytest.raises(ValueError):
        b.primitive_array(1, "int", b"\0\0\0")       # not a whole number of ints
    with pytest.raises(ValueError):
        b.primitive_array(1, "byte", [300])
    with pytest.raises(ValueError):
        b.primitive_array(1, "char", ["ab"])
    with pytest.raises(ValueError):
        b.object_array(1, 2, [1 << 32])
    with pytest.raises(ValueError):
        b.instance(1, 2, values=[1], field_types=["int", "int"])
    with pytest.raises(ValueError):
        b.instance(1, 0x999, values=[1])            # no layout known for the class
    with pytest.raises(ValueError):
        b.instance(1, 2, b"", values=[])
    with pytest.raises(ValueError):
        b.root_java_frame(1, 2, 1 << 32)
    with pytest.raises(ValueError):
        b.heap_dump_info("nursery", 1)
    with pytest.raises(ValueError):
        b.class_dump(1, fields=[("name", "int")])   # text names need a writer
    with pytest.raises(ValueError):
        HeapDumpBuilder(id_size=4, split_bytes=10)
    assert b.getvalue() == b""                      # failed calls leave no bytes behind
    b8 = HeapDumpBuilder(id_size=8)
    b8.root_unknown((1 << 64) - 1)
    with pytest.raises(ValueError):
        b8.root_unknown(1 << 64)


def test_type_codes_and_names():
    assert [writer.type_code(t) for t in ("object", "boolean", "char", "float", "double",
                                          "byte", "short", "int", "long")] == [2, *range(4, 12)]
    assert [writer.type_code(t) for t in "LZCFDBSIJ"] == [2, *range(4, 12)]
    assert writer.type_size("object", 8) == 8 and writer.type_size("long", 4) == 8
    assert writer.java_class_name("[[Ljava/lang/Object;") == "java.lang.Object[][]"
    assert writer.java_class_name("[C") == "char[]"
    assert writer.java_class_name("java.lang.Object[]") == "java.lang.Object[]"
    assert writer.hotspot_class_name("java.util.HashMap$Node[]") == "[Ljava/util/HashMap$Node;"
    assert writer.hotspot_class_name("long[][]") == "[[J"


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

def test_path_and_file_destinations(tmp_path):
    path = tmp_path / "a.hprof"
    with HprofWriter(path, version="1.0.3") as w:
        w.string("s")
    assert w.closed
    with pytest.raises(ValueError):
        w.string("t")
    assert path.read_bytes().startswith(b"JAVA PROFILE 1.0.3\0")
    buf = io.BytesIO()
    with HprofWriter(buf) as w:
        pass
    assert not buf.closed                           # a caller's file object stays open
    with HprofWriter(str(tmp_path / "b.hprof")) as w:
        pass
    assert (tmp_path / "b.hprof").stat().st_size == 31


# ---------------------------------------------------------------------------------------------
# The sample heap
# ---------------------------------------------------------------------------------------------

SAMPLES = {
    "hotspot8": dict(android=False, id_size=8),
    "hotspot4": dict(android=False, id_size=4),
    "jdk8-1.0.1": dict(android=False, id_size=8, version="1.0.1"),
    "android": dict(android=True),
}


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    out = {}
    base = tmp_path_factory.mktemp("samples")
    for name, kwargs in SAMPLES.items():
        path = base / f"{name}.hprof"
        out[name] = (path, sample.write_sample_dump(path, seed=7, objects=30, **kwargs))
    return out


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sample_reads_back_consistently(samples, name):
    path, info = samples[name]
    dump = Dump(path.read_bytes())
    assert dump.magic == f"JAVA PROFILE {info.version}"
    assert dump.ids == info.id_size
    dump.check_consistent()
    assert dict(dump.histogram) == info.histogram
    assert sum(info.histogram.values()) == info.instances
    assert {readable(n) for n in dump.class_names.values()} == set(info.class_ids)
    assert {readable(dump.class_names[c]): c for c in dump.class_dumps} == info.class_ids
    assert Counter(writer.SubTag(r[0]).name for r in dump.roots) == Counter(info.roots)
    assert len(dump.heap_records) == info.segments
    tags = [t for _, t, _, _ in dump.records]
    if info.version in ("1.0.2", "1.0.3"):
        assert set(t for t, _ in dump.heap_records) == {0x1C} and tags[-1] == 0x2C
    else:
        assert [t for t, _ in dump.heap_records] == [0x0C] and 0x2C not in tags
    # names, records and values look like the producer's
    names = set(dump.class_names.values())
    assert "com.example.app.MainActivity" in info.class_ids
    assert all(n in info.histogram for n in ["boolean[]", "char[]", "float[]", "double[]",
                                              "byte[]", "short[]", "int[]", "long[]"])
    if info.android:
        assert {"java.lang.Object[]", "java.lang.String", "com.example.app.model.User[]"} <= names
        assert min(dump.strings) == 0x400000
        assert set(dump.heaps) == {"image", "zygote", "app"}
        assert info.heaps == {k: dict(v) for k, v in dump.heaps.items()}
        assert {t for _, t, _, _ in dump.records} == {0x01, 0x02, 0x05, 0x1C, 0x2C}
        first_heap = tags.index(0x1C)
        assert set(tags[:first_heap]) == {0x01, 0x02, 0x05}   # names and classes first
        for _, subs in dump.heap_records:   # ART's segment limits: 128 objects / 4096 bytes
            assert sum(s[0] != 0xFE for s in subs) <= 128
            objs = [s for s in subs if s[0] != 0xFE]
            if objs and objs[0][0] not in ROOT_TAGS:
                assert subs[0][0] == 0xFE                     # heap announced in every segment
        assert {r[0] for r in dump.roots} >= {0x89, 0x8B, 0x8D, 0x08, 0x03, 0x05}
    else:
        assert {"java/lang/String", "[Ljava/lang/Object;", "[C", "[B"} <= names
        assert not ANDROID_SUBTAGS & {s[0] for _, subs in dump.heap_records for s in subs}
        string_fields = [dump.strings[n] for n, _ in
                         dump.class_dumps[info.class_ids["java.lang.String"]][8]]
        assert string_fields == ([b"value", b"hash"] if info.version == "1.0.1"
                                 else [b"value", b"coder", b"hash", b"hashIsZero"])


def test_sample_is_deterministic(tmp_path):
    a, b, c = (tmp_path / f"{n}.hprof" for n in "abc")
    sample.write_sample_dump(a, android=True, seed=3, objects=10)
    hprofkit.write_sample_dump(b, android=True, seed=3, objects=10)   # the package-level name
    sample.write_sample_dump(c, android=True, seed=4, objects=10)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    buf = io.BytesIO()
    info = sample.write_sample_dump(buf, seed=3, objects=50)   # a file object works too
    assert not buf.closed and buf.getvalue().startswith(b"JAVA PROFILE 1.0.2\0")
    assert info.histogram["com.example.app.model.User"] == 50


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sample_opens_in_oracle(samples, name, oracle):
    path, info = samples[name]
    result = oracle.run(path)
    assert oracle_counts(result) == info.keyed_histogram()
    assert result["instances"] == info.instances
    assert result["classes"] == len(info.class_ids)
    assert result["gcroots"] == sum(info.roots.values())


def test_android_sample_survives_hprof_conv(samples, tmp_path, oracle):
    path, info = samples["android"]
    out, app_only = tmp_path / "conv.hprof", tmp_path / "conv-z.hprof"
    for args, dest in (([], out), (["-z"], app_only)):
        res = subprocess.run([peer("hprof-conv"), *args, str(path), str(dest)],
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
    dump = Dump(out.read_bytes())
    assert dump.magic == "JAVA PROFILE 1.0.2"
    assert not ANDROID_SUBTAGS & {s[0] for _, subs in dump.heap_records for s in subs}
    assert dict(dump.histogram) == info.histogram
    assert oracle_counts(oracle.run(out)) == info.keyed_histogram()
    # -z drops the image and zygote objects: what is left is exactly the app heap
    app = {f"{n}@{info.class_ids[n]:x}": c for n, c in info.heaps["app"].items()}
    assert oracle_counts(oracle.run(app_only)) == app
    assert dict(Dump(app_only.read_bytes()).histogram) == info.heaps["app"]


def test_every_root_kind_through_hprof_conv(tmp_path, oracle):
    """A hand-built 1.0.3 dump with every root kind, Android ones included (0x8E has two u4
    after the id): hprof-conv must parse it and VisualVM must see every root afterwards."""
    src, dst = tmp_path / "roots.hprof", tmp_path / "roots-conv.hprof"
    with HprofWriter(src, version="1.0.3", id_size=4) as w:
        w.load_class(0x100, "java.lang.Object")
        w.load_class(0x200, "com.example.Leak")
        w.stack_trace(0, 0, [])
        with w.heap_dump() as hd:
            hd.heap_dump_info("app")
            hd.class_dump(0x100)
            hd.class_dump(0x200, super_id=0x100, instance_size=12, fields=[("n", "int")])
            objs = [hd.instance(0x1000 + 8 * i, 0x200, values=[i]) for i in range(16)]
            for (method, args, *_), obj in zip(ROOTS, objs):
                getattr(hd, method)(obj, *args)
        w.heap_dump_end()
    res = subprocess.run([peer("hprof-conv"), str(src), str(dst)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    dump = Dump(dst.read_bytes())
    assert len(dump.roots) == len(ROOTS)
    assert Counter(r[0] for r in dump.roots)[0xFF] == 1 + 7   # Android roots become UNKNOWN
    result = oracle.run(dst)
    assert result["gcroots"] == len(ROOTS)
    assert oracle_counts(result) == {"com.example.Leak@200": 16}
