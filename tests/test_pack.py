"""hprofkit's compact format ("pack"): byte-identical keep-all round trips of
every dump, policies that restore exactly what they keep (checked against a
Python reference and by the VisualVM oracle), chunking and thread-count
invariance, and corrupt or truncated packs -> clear errors, never output."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import threading

import pytest
from hypothesis import given, settings, strategies as st

import hprofkit
from hprofkit import _hprof, _pack
from hprofkit._errors import CorruptError, FormatError, HprofError, TruncatedError
from conftest import HPROF_CONV, HPROF_DIR, INVENTORY, ROOT, TAILOR_DIR, feed_in_pieces, raw_bytes
import hostile
from packframe import HEADER_SIZE, pack_block, pack_end, pack_header, read_pack, read_varint, varint

ALL_DUMPS = [entry["file"] for entry in INVENTORY]
REAL_ANDROID = ["leakcanary__leak_service_binder.hprof", "platform_tools_base__dialer.android-hprof"]
SMALL_BLOCK = 4096  # many blocks, and cuts inside payloads


def pack_encoder(*, strip="default", app_only=False, drop_traces=False, level=_pack.DEFAULT_LEVEL, threads=1,
                 block_size=0) -> _hprof.PackEncoder:
    """The core's encoder with strip by name, and the block size hprofkit.Encoder leaves at its default."""
    return _hprof.PackEncoder(strip_types=_pack.strip_mask(strip), app_only=app_only, drop_traces=drop_traces,
                              level=level, threads=threads, block_size=block_size)


def pack(data: bytes, cuts=(), **options) -> bytes:
    return feed_in_pieces(pack_encoder(**options), data, cuts)


def unpack(blob: bytes, cuts=(), threads: int = 1) -> bytes:
    return feed_in_pieces(_pack.PackDecoder(threads=threads), blob, cuts)


def expected(data: bytes, strip: int = 0, drop_traces: bool = False) -> bytes:
    """What a pack made with this policy must restore: stripped arrays zeroed,
    trace records removed, everything else as it was."""
    out = bytearray(data)
    for sub in hprofkit.iter_subrecords(data):
        if sub.tag == 0x23 and strip >> sub.elem_type & 1:
            n = len(sub.data)
            out[sub.offset + sub.length - n:sub.offset + sub.length] = bytes(n)
    if not drop_traces:
        return bytes(out)
    records = list(hprofkit.iter_records(data))
    start = records[0].offset if records else len(data)
    kept = [out[:start]] + [out[r.offset:r.offset + 9 + r.length] for r in records if r.tag not in (4, 5)]
    return b"".join(kept)


def app_only_reference(data: bytes) -> bytes:
    """hp_converter's 1.0.3 app_only output: what the app_only policy keeps."""
    if not data.startswith(b"JAVA PROFILE 1.0.3"):
        return data
    conv = _hprof.Converter(to_standard=False, app_only=True)
    return conv.feed(data) + conv.flush()


# ---- keep-all: byte for byte ---------------------------------------------------

@pytest.mark.parametrize("name", ALL_DUMPS)
def test_keep_all_round_trip_is_byte_identical(name):
    data = raw_bytes(name)
    blob = pack(data, strip="none")
    assert _pack.is_pack(blob[:8])
    assert unpack(blob) == data
    # many small blocks: cuts inside arrays and heap records, parallel inflation
    assert unpack(pack(data, strip="none", block_size=SMALL_BLOCK, threads=2), threads=2) == data


def test_keep_all_round_trip_of_tailor_synthetic_dump():
    data = (TAILOR_DIR / "art_like.hprof").read_bytes()
    assert unpack(pack(data, strip="none", block_size=SMALL_BLOCK)) == data


def test_keep_all_round_trip_of_fresh_heapgen_dumps(heapgen_dumps, android_heapgen_dump, tmp_path):
    for path in [*heapgen_dumps, android_heapgen_dump]:
        data = path.read_bytes()
        blob = pack(data, cuts=range(0, len(data), 1 << 20), strip="none", threads=2)
        assert unpack(blob, cuts=range(0, len(blob), 300_000), threads=2) == data
        # with fd output
        out = tmp_path / "restored.hprof"
        decoder = _pack.PackDecoder()
        with open(out, "wb") as f:
            n = decoder.feed(blob, fd=f.fileno()) + decoder.flush(fd=f.fileno())
        assert n == len(data) and out.read_bytes() == data


def test_keep_all_is_smaller_than_gzip_and_policy_smaller_than_tailor():
    for name in REAL_ANDROID:
        data = raw_bytes(name)
        gz = len(subprocess.run(["gzip", "-9", "-c"], input=data, capture_output=True, check=True).stdout)
        assert len(pack(data, strip="none")) <= 0.75 * gz
        mini = (TAILOR_DIR / ("dialer.mini" if "dialer" in name else "leak_service_binder.mini")).read_bytes()
        assert len(pack(data)) <= 0.6 * len(mini)


# ---- policies: exactly what they keep --------------------------------------------

POLICIES = {
    "default": dict(),
    "all": dict(strip="all"),
    "none+traces": dict(strip="none", drop_traces=True),
    "int,long": dict(strip="int,long"),
}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", ["heapdump__small_heap.bin", "hprof-slurp__hprof-64.bin", *REAL_ANDROID,
                                  "mat__oracle_jdk7_21_hprofagent.hprof", "platform_art__RI.hprof"])
def test_policy_restores_exactly_what_it_keeps(name, policy):
    data = raw_bytes(name)
    options = POLICIES[policy]
    mask = _pack.strip_mask(options.get("strip", "default"))
    want = expected(data, mask, options.get("drop_traces", False))
    for block in (0, SMALL_BLOCK):
        blob = pack(data, block_size=block, **options)
        assert unpack(blob) == want
    info = _pack.PackDecoder()
    info.feed(blob)
    assert info.info["strip_types"] == mask
    assert info.info["drop_traces"] == options.get("drop_traces", False)


@pytest.mark.parametrize("name", [*REAL_ANDROID, "mat__sun_jdk6_18_x64.hprof"])
def test_app_only_keeps_what_hp_converter_keeps(name):
    data = raw_bytes(name)
    want = app_only_reference(data)
    for block in (0, SMALL_BLOCK, 1 << 16):  # cut inside heap records: held and closed by an END op
        assert unpack(pack(data, strip="none", app_only=True, block_size=block)) == want
    assert unpack(pack(data, strip="all", app_only=True)) == expected(want, _pack.strip_mask("all"))


def test_tailor_synthetic_dump_under_every_policy():
    data = (TAILOR_DIR / "art_like.hprof").read_bytes()
    assert unpack(pack(data, strip="all", drop_traces=True)) == expected(data, _pack.strip_mask("all"), True)
    assert unpack(pack(data, strip="none", app_only=True)) == app_only_reference(data)


# ---- policies, as an independent analyzer sees them -------------------------------

def restore_to(tmp_path, data: bytes, name: str, **options):
    path = tmp_path / name
    path.write_bytes(unpack(pack(data, **options)))
    return path


@pytest.mark.parametrize("source", REAL_ANDROID)
def test_policies_keep_every_object_and_reference_for_the_oracle(source, tmp_path, oracle):
    """Same instances per class, and same retained sizes per class: those
    follow every reference, so a wrong one would change them."""
    path = HPROF_DIR / source
    data = path.read_bytes()
    want = oracle.retained_by_class(path)
    for policy, options in [("default", {}), ("all", dict(strip="all")), ("traces", dict(drop_traces=True))]:
        assert oracle.retained_by_class(restore_to(tmp_path, data, f"{policy}.hprof", **options)) == want, policy


@pytest.mark.parametrize("source", REAL_ANDROID)
def test_app_only_matches_hprof_conv_z_for_the_oracle(source, tmp_path, oracle):
    conv = tmp_path / "conv-z.hprof"
    subprocess.run([HPROF_CONV, "-z", str(HPROF_DIR / source), str(conv)], check=True, capture_output=True)
    # hprof-conv -z leaves empty segments, which VisualVM refuses: drop them for the reference.
    ref = conv.read_bytes()
    keep = [(r.offset, r.offset + 9 + r.length) for r in hprofkit.iter_records(ref)
            if not (r.tag == 0x1C and r.length == 0)]
    reference = tmp_path / "reference.hprof"
    reference.write_bytes(ref[:31] + b"".join(ref[a:b] for a, b in keep))
    restored = restore_to(tmp_path, (HPROF_DIR / source).read_bytes(), "app.hprof", app_only=True)
    assert oracle.retained_by_class(restored) == oracle.retained_by_class(reference)
    with hprofkit.open(restored) as dump:
        assert all(r.length > 0 for r in dump.records() if r.tag == 0x1C)  # no empty segments


def test_policies_on_fresh_heapgen_dump_for_the_oracle(heapgen_dumps, tmp_path, oracle):
    source = heapgen_dumps[0]
    restored = restore_to(tmp_path, source.read_bytes(), "all.hprof", strip="all", drop_traces=True)
    assert oracle.retained_by_class(restored) == oracle.retained_by_class(source)


# ---- chunking and threads ---------------------------------------------------------

LEAK = raw_bytes("leakcanary__leak_service_binder.hprof")
HOTSPOT = raw_bytes("mat__sun_jdk6_18_x64.hprof")
LEAK_PACK = pack(LEAK, strip="none", block_size=1 << 16)
HOTSPOT_PACK = pack(HOTSPOT, block_size=SMALL_BLOCK)
# A smaller HotSpot dump's pack for the tests that decode once per block (and
# five times per block for flips): each decode starts from the header.
FEW_BLOCKS_PACK = pack(raw_bytes("mat__sun_jdk6_30_x64_compressedOops.hprof"), block_size=SMALL_BLOCK)
cuts = lambda data: st.lists(st.integers(0, len(data)), max_size=40)


@settings(max_examples=30)
@given(cuts(LEAK))
def test_encoder_output_does_not_depend_on_chunking(c):
    assert pack(LEAK, c, strip="none", block_size=1 << 16) == LEAK_PACK


@settings(max_examples=30)
@given(cuts(HOTSPOT))
def test_encoder_output_does_not_depend_on_chunking_with_tiny_blocks(c):
    assert pack(HOTSPOT, c, block_size=SMALL_BLOCK) == HOTSPOT_PACK


@settings(max_examples=30)
@given(cuts(LEAK_PACK))
def test_decoder_output_does_not_depend_on_chunking(c):
    assert unpack(LEAK_PACK, c) == LEAK


def test_one_byte_feeds():
    data = (TAILOR_DIR / "art_like.hprof").read_bytes()
    blob = pack(data, strip="none")
    assert pack(data, range(len(data)), strip="none") == blob
    assert unpack(blob, range(len(blob))) == data


@pytest.mark.parametrize("level", [1, 6, 9])
def test_output_is_the_same_for_any_thread_count(level, heapgen_dumps):
    data = heapgen_dumps[0].read_bytes()
    one = pack(data, strip="none", level=level, threads=1, block_size=1 << 18)
    four = pack(data, cuts=range(0, len(data), 1 << 19), strip="none", level=level, threads=4, block_size=1 << 18)
    assert one == four
    assert unpack(one, threads=4) == data


def test_level_zero_stores_streams():
    blob = pack(LEAK, strip="none", level=0)
    assert unpack(blob) == LEAK and len(blob) > len(LEAK_PACK)


# ---- an independent decoder, written from docs/format.md ------------------------------

class SpecDecoder:
    """A slow pure-Python decoder following docs/format.md (§2-§8), to check
    that the spec says what the C decoder does."""

    STREAMS = 41
    PRIM = 33  # prim.boolean; prim.byte is PRIM + 4

    def __init__(self, blob: bytes) -> None:
        import struct as st
        import zlib as zl
        self.st, self.zl = st, zl
        head = blob[:24]
        assert blob[:8] == b"\x89HPK\r\n\x1a\n" and st.unpack(">I", blob[24:28])[0] == zl.crc32(head)
        _, version, n, self.hversion, self.ids, self.timestamp, self.strip, flags, _ = st.unpack(">8sBBBBQHBB", head)
        assert version == 2 and n == self.STREAMS
        self.mask = (1 << (8 * self.ids)) - 1
        self.blob, self.pos = blob, 28
        self.prev, self.score, self.serials = {}, {}, {}
        self.classes, self.index, self.fields = [], {}, {}
        self.out = bytearray()
        self.last_shape, self.step_keys, self.steps = 0, [0] * 4096, [0] * 4096
        self.heaps, self.heap_next = [], 0
        self.texts = []  # newest first
        magic = b"JAVA PROFILE 1.0" + [b"", b".1", b".2", b".3"][self.hversion]
        self.out += magic + b"\0" + st.pack(">IQ", self.ids, self.timestamp)
        self.in_heap = self.held = False
        self.heap_left = 0
        self.cont = None

    # -- §1 primitives
    def var(self, s):
        v = shift = 0
        while True:
            b = self.s[s][self.p[s]]
            self.p[s] += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    def u8(self, s):
        self.p[s] += 1
        return self.s[s][self.p[s] - 1]

    def take(self, s, n):
        self.p[s] += n
        assert self.p[s] <= len(self.s[s])
        return self.s[s][self.p[s] - n:self.p[s]]

    def left(self, s):
        return len(self.s[s]) - self.p[s]

    @staticmethod
    def unzz(u):
        return (u >> 1) ^ -(u & 1)

    def sdiff(self, v):
        v &= self.mask
        return v - (1 << 8 * self.ids) if v >> (8 * self.ids - 1) else v

    # -- §5.1
    def learn(self, ctx, d):
        sc = self.score.get(ctx, 0)
        self.score[ctx] = (sc - (sc >> 4) + (64 if d & 7 else 0)) & 0xFFFFFFFF

    def delta(self, s, ctx):
        code = self.var(s)
        if self.score.get(ctx, 0) < 256:
            d = (self.unzz(code) << 3) | self.u8(12)
        else:
            d = self.unzz(code)
        self.learn(ctx, d)
        return d

    def get_id(self, s, ctx):
        v = (self.prev.get(ctx, 0) + self.delta(s, ctx)) & self.mask
        self.prev[ctx] = v
        return v

    def get_ref(self, s, ctx, base):
        c = self.var(s)
        if c == 0:
            return 0
        if self.score.get(ctx, 0) < 256:
            d = (self.unzz(c - 1) << 3) | self.u8(12)
        elif c == 1:
            d = (self.unzz(self.var(s)) << 3) | self.u8(12)
        else:
            d = self.unzz(c - 2)
        self.learn(ctx, d)
        return (base + d) & self.mask

    def ser(self, s, ctx):  # §5.3
        v = (self.serials.get(ctx, 0) + self.unzz(self.var(s))) & 0xFFFFFFFF
        self.serials[ctx] = v
        return v

    # -- §5.5 learnt object steps
    @staticmethod
    def shape(tag, what, count):
        m = (1 << 64) - 1
        h = ((what + 0x9E3779B97F4A7C15 * (count + 1)) & m) ^ (tag << 56)
        h ^= h >> 31
        h = (h * 0xBF58476D1CE4E5B9) & m
        return (h ^ (h >> 29)) | 1

    def obj_id(self):
        prev, k = self.prev.get("obj", 0), (self.last_shape >> 20) & 4095
        known = self.last_shape and self.step_keys[k] == self.last_shape
        v = (prev + (self.steps[k] if known else 0) + self.unzz(self.var(15))) & self.mask
        if self.last_shape:
            self.step_keys[k], self.steps[k] = self.last_shape, (v - prev) & self.mask
        self.prev["obj"] = v
        return v

    # -- §5.6 heap names
    def heap_name(self, heap):
        names = dict(self.heaps)
        v = (names.get(heap, self.prev.get("heap_name", 0)) + self.unzz(self.var(6))) & self.mask
        self.prev["heap_name"] = v
        slots = [h for h, _ in self.heaps]
        if heap in slots:
            self.heaps[slots.index(heap)] = (heap, v)
        elif len(self.heaps) < 8:
            self.heaps.append((heap, v))
        else:
            self.heaps[self.heap_next % 8] = (heap, v)
            self.heap_next += 1
        return v

    def idb(self, v):
        return v.to_bytes(self.ids, "big")

    # -- §5.4
    def add(self, cid):
        if cid not in self.index and len(self.classes) < 1 << 22:
            self.index[cid] = len(self.classes)
            self.classes.append(cid)

    def class_ref(self):
        k = self.var(16)
        if k:
            return self.classes[k - 1]
        cid = self.get_id(17, "classraw")
        assert cid not in self.index
        self.add(cid)
        return cid

    def layout(self, cid):
        types, depth = [], 0
        while cid:
            if cid not in self.fields or depth > 1024:
                return None
            sup, own = self.fields[cid]
            types += own
            cid, depth = sup, depth + 1
        return types

    def size(self, t):
        return self.ids if t == 2 else {4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}[t]

    # -- §2 / §3
    def run(self) -> bytes:
        st, zl, blob = self.st, self.zl, self.blob
        while blob[self.pos] == 0x42:
            start, self.pos = self.pos, self.pos + 1
            def v():
                r = shift = 0
                while True:
                    b = blob[self.pos]
                    self.pos += 1
                    r |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        return r
            v()
            out_len = v()
            entries = []
            for _ in range(self.STREAMS):
                method = blob[self.pos]
                self.pos += 1
                raw = comp = crc = 0
                if method:
                    raw = v()
                    comp = v() if method == 2 else raw
                    crc = st.unpack_from(">I", blob, self.pos)[0]
                    self.pos += 4
                entries.append((method, raw, comp, crc))
            assert st.unpack_from(">I", blob, self.pos)[0] == zl.crc32(blob[start:self.pos])
            self.pos += 4
            self.s = []
            for method, raw, comp, crc in entries:
                data = blob[self.pos:self.pos + comp]
                self.pos += comp
                assert zl.crc32(data) == crc
                self.s.append(b"" if method == 0 else data if method == 1 else zl.decompressobj(-15).decompress(data))
            for k in (self.PRIM + 1, self.PRIM + 5):  # prim.char, prim.short planes
                h = len(self.s[k]) // 2
                self.s[k] = bytes(b for pair in zip(self.s[k][:h], self.s[k][h:]) for b in pair)
            self.p = [0] * self.STREAMS
            self.produced = 0
            self.row_groups, self.group_of = [], {}
            self.block()
            assert all(g["next"] == g["count"] for g in self.row_groups), "rows left over"
            assert all(self.p[k] == len(self.s[k]) for k in range(self.STREAMS)), "streams left over"
            assert self.produced == out_len  # held bytes count where they are produced
        assert blob[self.pos] == 0x45
        return bytes(self.out)

    def ranks(self, n):
        w = 1 if n <= 1 << 8 else 2 if n <= 1 << 16 else 3 if n <= 1 << 24 else 4
        planes = self.take(10, n * w)
        return [int.from_bytes(bytes(planes[p * n + j] for p in range(w)), "big") for j in range(n)]

    def block(self):
        # §6.1 strings
        self.strs = []
        if self.left(4):
            n = self.var(4)
            g = [self.var(4) for _ in range(n)]
            low = self.take(4, n)
            sids, s = [], 0
            for k in range(n):
                s = (s + (g[k] << 3 | low[k])) & self.mask
                sids.append(s)
            texts = []
            for k in range(n):
                e = self.var(4)
                if e == 0:
                    end = self.s[5].index(0, self.p[5])
                    texts.append(self.s[5][self.p[5]:end])
                    self.p[5] = end + 1
                else:
                    texts.append(self.take(5, e - 1))
            self.strs = [(sids[r], texts[r]) for r in self.ranks(n)]
        # §6.2 classes
        self.lcs = []
        if self.left(9):
            n = self.var(9)
            serials, s = [], 0
            for _ in range(n):
                s = (s + self.var(9)) & 0xFFFFFFFF
                serials.append(s)
            cd = [self.unzz(self.var(9)) for _ in range(n)]
            stacks = [self.var(9) for _ in range(n)]
            nd = [self.unzz(self.var(9)) for _ in range(n)]
            low = self.take(9, 2 * n)
            cls, names, c, m = [], [], 0, 0
            for k in range(n):
                c = (c + (cd[k] << 3 | low[k])) & self.mask
                m = (m + (nd[k] << 3 | low[n + k])) & self.mask
                cls.append(c)
                names.append(m)
            self.lcs = [(serials[r], cls[r], stacks[r], names[r]) for r in self.ranks(n)]
        if self.cont:
            self.payload(*self.cont)
        while not self.cont:
            if self.in_heap and not self.held and self.heap_left == 0:
                self.in_heap = False
                continue
            if not self.left(0):
                break
            op = self.u8(0)
            if self.in_heap:
                if op == 0 and self.held:
                    body = self.heap_out[9:]
                    self.out += self.heap_out[:5] + len(body).to_bytes(4, "big") + body
                    self.in_heap = self.held = False
                else:
                    self.sub(op)
            else:
                self.record(op)
        assert not self.strs and not self.lcs

    def emit(self, data):
        (self.heap_out if self.held and self.in_heap else self.out).extend(data)
        self.produced += len(data)

    # -- §8
    def payload(self, kind, s, left):
        if kind == "aref":
            base, out = self.aref_base, bytearray()
            while left and self.left(29):
                v = self.get_ref(29, "aref", base)
                out += self.idb(v)
                base = v or base
                left -= 1
            self.aref_base = base
        else:
            n = min(left, self.left(s))
            out = self.take(s, n)
            left -= n
        self.emit(out)
        self.cont = (kind, s, left) if left else None

    # -- §6
    def record(self, op):
        st = self.st
        if op == 0:
            tag = self.u8(0)
            time = self.ser(1, "time")
            length = self.var(2)
            self.emit(st.pack(">BII", tag, time, length))
            self.payload("raw", 3, length)
            return
        time = self.ser(1, "time")
        if op == 1:
            sid, text = self.strs.pop(0)
            self.emit(st.pack(">BII", 1, time, self.ids + len(text)) + self.idb(sid) + text)
        elif op == 2:
            serial, cid, stack, name = self.lcs.pop(0)
            self.emit(st.pack(">BIII", 2, time, 8 + 2 * self.ids, serial) + self.idb(cid) + st.pack(">I", stack)
                      + self.idb(name))
            self.add(cid)
        elif op == 4:
            body = b"".join(self.idb(self.get_id(s, c)) for s, c in
                            [(11, "frame_id"), (6, "frame_name"), (6, "frame_sig"), (6, "frame_src")])
            body += st.pack(">II", self.ser(7, "frame_class"), self.ser(7, "frame_line"))
            self.emit(st.pack(">BII", 4, time, len(body)) + body)
        elif op == 5:
            serial, thread = self.ser(7, "trace"), self.ser(7, "trace_thread")
            n = self.var(2)
            frames = b"".join(self.idb(self.get_id(11, "trace_frame")) for _ in range(n))
            self.emit(st.pack(">BIIIII", 5, time, 12 + len(frames), serial, thread, n) + frames)
        elif op in (0x0C, 0x1C):
            v = self.var(2)
            self.in_heap, self.held = True, v == 0
            if self.held:
                self.heap_out = bytearray()
                self.emit(st.pack(">BII", op, time, 0))
            else:
                self.heap_left = v - 1
                self.emit(st.pack(">BII", op, time, v - 1))
        elif op == 0x2C:
            self.emit(st.pack(">BII", 0x2C, time, 0))
        else:
            raise AssertionError(f"op {op}")

    # -- §7
    def sub(self, op):
        st, ids = self.st, self.ids
        out = bytearray((op,))
        pay = None
        if op in (0xFF, 0x05, 0x07, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x90, 0x01, 0x02, 0x03, 0x08, 0x8E, 0x04, 0x06):
            out += self.idb(self.get_id(13, "root"))
            if op == 0x01:
                out += self.idb(self.get_id(14, "jni"))
            elif op in (0x02, 0x03, 0x08, 0x8E):
                out += st.pack(">II", self.var(14), (self.var(14) - 1) & 0xFFFFFFFF)
            elif op in (0x04, 0x06):
                out += st.pack(">I", self.var(14))
        elif op == 0xFE:
            heap = self.var(0)
            out += st.pack(">I", heap) + self.idb(self.heap_name(heap))
        elif op == 0x20:
            cid = self.obj_id()
            self.last_shape = self.shape(0x20, 0, 0)
            self.add(cid)
            out += self.idb(cid) + st.pack(">I", self.var(8))
            sup = self.class_ref()
            out += self.idb(sup)
            for k in range(5):
                out += self.idb(self.get_id(19, f"cd_ref{k}"))
            out += st.pack(">I", self.var(18))

            def value():
                t = self.u8(20)
                return bytes((t,)) + (self.idb(self.get_ref(22, "cdsref", cid)) if t == 2 else self.take(21, self.size(t)))
            n = self.var(18)
            out += st.pack(">H", n)
            for _ in range(n):
                out += st.pack(">H", self.var(18)) + value()
            n = self.var(18)
            out += st.pack(">H", n)
            for _ in range(n):
                out += self.idb(self.get_id(6, "field_name")) + value()
            n = self.var(18)
            out += st.pack(">H", n)
            own = []
            for _ in range(n):
                out += self.idb(self.get_id(6, "field_name"))
                own.append(self.u8(20))
                out.append(own[-1])
            self.fields[cid] = (sup, own)
        elif op == 0x21:
            oid = self.obj_id()
            stack = self.var(8)
            cid = self.class_ref()
            self.last_shape = self.shape(0x21, cid, 0)
            s = self.var(23)
            if s == 0:
                layout = self.layout(cid)
                width = sum(self.size(t) for t in layout if t != 2)
                row = b""
                if width:  # §7.2 row groups
                    g = self.group_of.get(cid)
                    if g is None or g["width"] != width:
                        count = self.var(32)
                        g = {"width": width, "count": count, "planes": self.take(25, count * width), "next": 0}
                        self.row_groups.append(g)
                        self.group_of[cid] = g
                    assert g["next"] < g["count"]
                    row = bytes(g["planes"][j * g["count"] + g["next"]] for j in range(width))
                    g["next"] += 1
                fields, at = bytearray(), 0
                for t in layout:
                    if t == 2:
                        fields += self.idb(self.get_ref(24, "iref", oid))
                    else:
                        fields += row[at:at + self.size(t)]
                        at += self.size(t)
                out += self.idb(oid) + st.pack(">I", stack) + self.idb(cid) + st.pack(">I", len(fields)) + fields
            else:
                out += self.idb(oid) + st.pack(">I", stack) + self.idb(cid) + st.pack(">I", s - 1)
                pay = ("iraw", 26, s - 1)
        elif op == 0x22:
            oid = self.obj_id()
            stack, count = self.var(8), self.var(27)
            cid = self.class_ref()
            self.last_shape = self.shape(0x22, cid, count)
            out += self.idb(oid) + st.pack(">II", stack, count) + self.idb(cid)
            self.aref_base = oid
            pay = ("aref", 29, count)
        elif op in (0x23, 0xC3):
            oid = self.obj_id()
            stack, count = self.var(8), self.var(27)
            a = self.u8(28)
            t = a & 0x1F
            self.last_shape = self.shape(op, t, count)
            out += self.idb(oid) + st.pack(">II", stack, count) + bytes((t,))
            n = count * self.size(t) if op == 0x23 else 0
            if a & 0x80:
                out += self.take(self.PRIM + t - 4, self.size(t)) * count
            elif a & 0x40:
                pay = ("noise", 30, n)
            elif a & 0x20:  # text: shared prefix, then the rest in prim.byte
                shared = self.var(31)
                back = self.u8(31) if shared else 0
                assert t in (5, 8) and (not shared or shared <= min(count, len(self.texts[back])))
                text = (self.texts[back][:shared] if shared else b"") + self.take(self.PRIM + 4, count - shared)
                self.texts = [text[:1024]] + self.texts[:15]
                out += text if t == 8 else b"".join(b"\0" + bytes((c,)) for c in text)
            elif self.strip >> t & 1:
                out += bytes(n)
            elif n:
                pay = ("prim", self.PRIM + t - 4, n)
        else:
            raise AssertionError(f"sub op {op:#x}")
        total = len(out) + (pay[2] * (ids if pay[0] == "aref" else 1) if pay else 0)
        if not self.held:
            assert total <= self.heap_left
            self.heap_left -= total
        self.emit(out)
        if pay:
            self.payload(*pay)


@pytest.mark.parametrize("name", ["leakcanary__leak_service_binder.hprof", "mat__oracle_jdk7_21_hprofagent.hprof",
                                  "hprof-slurp__hprof-64.bin", "platform_art__RI.hprof"])
def test_the_spec_decodes_what_the_encoder_writes(name):
    data = raw_bytes(name)
    for options in (dict(strip="none"), dict(strip="all", drop_traces=True, block_size=SMALL_BLOCK),
                    dict(strip="none", app_only=True, block_size=SMALL_BLOCK)):
        blob = pack(data, **options)
        assert SpecDecoder(blob).run() == unpack(blob), options


# ---- the corners of the model (docs/format.md §5.5-§5.7, §6.3, §7.2, §7.4) -----------

def model_corners_dump(id_size: int) -> bytes:
    """An Android-style dump built to hit every corner of the model: text arrays
    whose best prefix is the oldest remembered one (its slot is the one being
    overwritten), texts longer than the 1024 bytes remembered, Latin-1 char[]
    next to non-Latin-1 ones, more heaps than the 8 heap-name pairs, a class
    redefined with another layout in the middle of a block, ids with
    irregular gaps, small held segments and one segment over 1 MiB."""
    import io
    from hprofkit.writer import HprofWriter
    rng = random.Random(id_size)
    out = io.BytesIO()
    w = HprofWriter(out, version="1.0.3", id_size=id_size)
    names = [w.string(f"heap{k}") for k in range(11)]
    for cid in (0x1000, 0x2000):
        w.load_class(cid, f"C{cid:x}")
    next_id = 0x100000

    def new_id() -> int:
        nonlocal next_id
        next_id += rng.choice((16, 16, 16, 24, 8, 4096))
        return next_id

    with w.heap_dump(split_objects=9) as h:
        h.class_dump(0x1000, fields=[("a", "int"), ("r", "object"), ("b", "short")])
        h.class_dump(0x2000, fields=[("x", "long")])
        for round_ in range(3):
            texts = [f"p{i:02d}-{rng.random()}" for i in range(16)]
            texts += [f"p00-{rng.random()}", f"p01-{rng.random()}"]  # back 15, twice
            texts += ["L" * 1500 + str(round_), "L" * 1300 + "x", "é-ü-" + texts[3], "\u20ac-" + texts[4], "a\0b"]
            for i, text in enumerate(texts):
                h.heap_dump_info(0x40 + (i * 7 + round_) % 11, names[(i * 7 + round_) % 11])
                if i % 3 == 0:
                    h.primitive_array(new_id(), "char", text)
                else:
                    h.primitive_array(new_id(), "byte", text.encode("utf-8"))
                fields = [rng.randrange(1 << 31), new_id(), i]
                h.instance(new_id(), 0x1000, values=fields[:len(h.instance_field_types(0x1000))])
                h.instance(new_id(), 0x2000, values=[rng.randrange(1 << 63)])
            h.primitive_array(new_id(), "byte", b"")
            if round_ == 1:  # C loses a field: rows of another width in the same block
                h.class_dump(0x1000, fields=[("a", "int"), ("r", "object")])
    with w.heap_dump() as h:
        h.primitive_array(new_id(), "byte", bytes(rng.randrange(97, 123) for _ in range(1_200_000)))
        h.instance(new_id(), 0x2000, values=[7])
    w.heap_dump_end()
    w.close()
    return out.getvalue()


def pack_streams(data: bytes, **options) -> list[bytes]:
    """Each stream of every block of the pack (keep-all unless told), joined."""
    blocks = read_pack(pack(data, **{"strip": "none", **options})).blocks
    return [b"".join(block.streams[k] for block in blocks) for k in range(len(_pack.STREAMS))]


def varints(data: bytes) -> list[int]:
    values, v, shift = [], 0, 0
    for byte in data:
        v |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            values.append(v)
            v = shift = 0
    return values


@pytest.mark.parametrize("id_size", [4, 8])
def test_model_corners_round_trip(id_size):
    data = model_corners_dump(id_size)
    streams = pack_streams(data)
    shared, backs, pos = streams[_pack.STREAMS.index("shared")], [], 0
    while pos < len(shared):  # varint k, then the text it names when k > 0
        k, pos = read_varint(shared, pos)
        if k:
            backs.append(shared[pos])
            pos += 1
    assert 15 in backs and 0 in backs
    # classes 0x1000 and 0x2000, then 0x1000 again with its new width
    assert len(varints(streams[_pack.STREAMS.index("rows")])) == 3
    assert streams[_pack.STREAMS.index("len")]  # the 1 MiB segment has its length
    for block_size in (0, SMALL_BLOCK):
        blob = pack(data, strip="none", block_size=block_size)
        assert unpack(blob) == data
        assert SpecDecoder(blob).run() == data
        assert pack(data, cuts=range(0, len(data), 997), strip="none", block_size=block_size) == blob


# ---- corrupt and truncated packs ----------------------------------------------------

def block_offsets(blob: bytes) -> list[int]:
    """File offsets of every block frame (and of the end record, last)."""
    parsed = read_pack(blob)
    return [block.offset for block in parsed.blocks] + [parsed.end_offset]


def must_fail(blob: bytes, kinds=(HprofError,)) -> HprofError:
    with pytest.raises(kinds) as info:
        unpack(blob)
    return info.value


def test_every_block_boundary_cut_is_a_truncation():
    offsets = block_offsets(FEW_BLOCKS_PACK)
    assert len(offsets) > 50
    for cut in [0, 5, HEADER_SIZE, *offsets, len(FEW_BLOCKS_PACK) - 1]:
        if cut == 0:
            must_fail(FEW_BLOCKS_PACK[:cut], FormatError)
            continue
        err = must_fail(FEW_BLOCKS_PACK[:cut], TruncatedError)
        assert "truncated" in str(err)


def test_random_cuts_are_truncations():
    rng = random.Random(7)
    for cut in rng.sample(range(1, len(HOTSPOT_PACK)), 200):
        must_fail(HOTSPOT_PACK[:cut], TruncatedError)


def test_flipped_bytes_in_every_block_are_reported_with_the_block():
    rng = random.Random(11)
    offsets = block_offsets(FEW_BLOCKS_PACK)
    assert len(offsets) > 50
    for index, (start, end) in enumerate(zip(offsets, offsets[1:])):
        for pos in {start, start + 1, end - 1, rng.randrange(start, end), rng.randrange(start, end)}:
            bad = bytearray(FEW_BLOCKS_PACK)
            bad[pos] ^= 1 << rng.randrange(8)
            err = must_fail(bytes(bad))
            assert f"block {index}" in str(err) or isinstance(err, TruncatedError), (pos, str(err))
            assert err.offset is not None


def test_flipped_bytes_in_header_and_end_record():
    for pos in list(range(HEADER_SIZE)) + list(range(len(HOTSPOT_PACK) - 8, len(HOTSPOT_PACK))):
        bad = bytearray(HOTSPOT_PACK)
        bad[pos] ^= 0x10
        must_fail(bytes(bad))


def test_trailing_data_and_foreign_input():
    with pytest.raises(CorruptError, match="after the end"):
        unpack(HOTSPOT_PACK + b"\0")
    with pytest.raises(FormatError):
        unpack(LEAK[:100])
    with pytest.raises(FormatError):
        unpack(b"")
    assert not _pack.is_pack(b"JAVA PROFILE 1.0.2\0") and _pack.is_pack(b"\x89HP") and not _pack.is_pack(b"")


@pytest.mark.parametrize("data", [HOTSPOT, LEAK], ids=["hotspot", "android"])
def test_corrupt_streams_are_clean_errors_in_the_core(data):
    """Streams that pass their checksums but lie (a buggy or hostile writer):
    the decoder refuses them without crashing or over-allocating."""
    parsed = read_pack(pack(data, block_size=SMALL_BLOCK))
    frames = [parsed.frame(i) for i in range(len(parsed.blocks))]  # only the changed one is framed again
    rng = random.Random(3)
    failures = cut_failures = 0
    for trial in range(300):
        index = rng.randrange(len(parsed.blocks))
        block = parsed.blocks[index]
        k = rng.choice([k for k, s in enumerate(block.streams) if s])
        original = block.streams[k]
        s = bytearray(original)
        if trial % 3 == 0:
            del s[rng.randrange(len(s)):]  # shortened
        else:
            s[rng.randrange(len(s))] ^= 1 << rng.randrange(8)
        block.streams[k] = bytes(s)
        try:
            unpack(parsed.write(frames[:index] + [parsed.frame(index)] + frames[index + 1:]))
        except HprofError:
            failures += 1
            cut_failures += trial % 3 == 0
        block.streams[k] = original
    assert cut_failures == 100  # a shortened stream always fails
    assert failures > 150  # a flipped byte in a value can still make a valid dump: the container's CRCs catch it


def held_segment_pack(app_only: bool) -> bytes:
    """A 1.0.3 pack (byte[] stripped) of one held heap segment holding one
    1.1 MB byte[], and no END op: the segment never closes."""
    streams = {0: b"\x1c\x23", 1: b"\0", 2: b"\0", 15: b"\0", 8: b"\0", 27: varint(1_100_000), 28: b"\x08"}
    block = pack_block(streams, out_len=9 + 14 + 1_100_000)
    return pack_header(3, strip=1 << 8, flags=int(app_only)) + block + pack_end(1, 0, 31 + 9 + 14 + 1_100_000)


def test_only_app_only_packs_hold_long_heap_records(tmp_path):
    """A held heap record (no length, closed by END): without app_only the
    encoder only holds records up to 1 MiB, so a pack that holds more is
    refused; an app_only one is held (or streamed past max_record)."""
    with pytest.raises(CorruptError, match="longer than 1 MiB"):
        unpack(held_segment_pack(False))
    decoder = _pack.PackDecoder()
    with open(tmp_path / "out", "wb") as f:
        decoder.feed(held_segment_pack(True), fd=f.fileno())
        with pytest.raises(TruncatedError):
            decoder.flush(fd=f.fileno())
    assert (tmp_path / "out").read_bytes() == b"JAVA PROFILE 1.0.3\0\0\0\0\x04" + bytes(8)  # the segment was held


def test_declared_lengths_are_checked_before_anything_is_inflated():
    """A block may declare at most max_block bytes of streams: a 2 KiB pack
    declaring 64 MiB + 1 of zeros is refused without inflating them; so is a
    varint of 2^63 (an error, never an OverflowError) or one too long."""
    raw = (64 << 20) + 1
    zeros = hostile.deflated_zeros(raw)
    head = pack_header(2)
    bomb = head + pack_block({0: b"\x00\x0d", 1: b"\0", 2: varint(raw), 3: (raw, zeros)}) + pack_end(1, 0, 0)
    with pytest.raises(CorruptError, match="more than the 67108864 a block may hold"):
        unpack(bomb)
    with pytest.raises(CorruptError, match="more than the 1048576"):
        feed_in_pieces(_pack.PackDecoder(max_block=1 << 20), bomb[:5000])
    # A block declaring 2^63 bytes of output: more than a restore may write (#30), refused as such.
    big = head + pack_block({3: b"x"}, in_len=1 << 63, out_len=1 << 63) + pack_end(1 << 63, 1 << 63, 1 << 64 - 1)
    with pytest.raises(hprofkit.RestoreLimitError, match="pack block 0 at offset 28: the restored dump would hold "
                                                          "9223372036854775808 bytes"):
        unpack(big)
    huge_stream = head + b"B\0\0\x01" + varint(1 << 63) + bytes(4)
    with pytest.raises(CorruptError):
        unpack(huge_stream + bytes(200))
    overlong = head + b"B" + b"\xff" * 10 + b"\x01"
    with pytest.raises(CorruptError, match="varint"):
        unpack(overlong + bytes(100))


def test_misuse():
    encoder = pack_encoder()
    encoder.feed(LEAK[:1000])
    with pytest.raises(TruncatedError):
        encoder.flush()
    with pytest.raises(ValueError):
        pack_encoder(level=10)
    with pytest.raises(TypeError):
        pack_encoder(level=6.5)
    with pytest.raises(TypeError):
        pack_encoder(app_only="no")
    with pytest.raises(TypeError):
        _pack.PackDecoder().feed(123)
    with pytest.raises(ValueError):
        pack_encoder(strip="bytes")
    decoder = _pack.PackDecoder()
    decoder.feed(LEAK_PACK)
    decoder.flush()
    with pytest.raises(ValueError):
        decoder.feed(b"x")


# ---- the same packs as the Python container wrote -------------------------------------

GOLDEN = json.loads((ROOT / "tests" / "data" / "pack_sha256.json").read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN["packs"]))
def test_packs_are_byte_identical_to_the_python_container(name):
    """The container moved from Python to C: the packs did not change, for
    any option set and any number of threads."""
    data = (TAILOR_DIR / "art_like.hprof").read_bytes() if name.startswith("tailor/") else raw_bytes(name)
    for label, options in GOLDEN["options"].items():
        want = GOLDEN["packs"][name][label]
        assert hashlib.sha256(pack(data, **options)).hexdigest() == want, label
        assert hashlib.sha256(pack(data, cuts=range(0, len(data), 1 << 16), threads=3, **options)).hexdigest() == want


# ---- threads ------------------------------------------------------------------------

def hammer(codec, pieces, threads=4):
    """Feeds `pieces` to one codec from several threads at once: each call
    must finish (serialized by the codec's lock) without crashing."""
    errors = []
    barrier = threading.Barrier(threads)

    def run(part):
        barrier.wait()
        try:
            for piece in part:
                codec.feed(piece)
        except Exception as exc:  # noqa: BLE001 - any error is a failure of the test below
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(pieces[i::threads],)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return errors


def test_one_encoder_fed_from_several_threads_does_not_crash():
    """Today's bug: two threads feeding one PackEncoder crashed the process.
    Calls now take turns; pieces fed out of order make a wrong dump, which
    is a clean HprofError (then ValueError: the encoder is finished)."""
    for _ in range(5):
        encoder = pack_encoder(threads=2)
        encoder.feed(LEAK[:100_000])
        pieces = [LEAK[i:i + 70_000] for i in range(100_000, len(LEAK), 70_000)]
        errors = hammer(encoder, pieces)
        assert all(isinstance(e, (HprofError, ValueError)) for e in errors), errors
        assert encoder.bytes_in <= len(LEAK)


def test_one_decoder_fed_from_several_threads_does_not_crash():
    for _ in range(5):
        decoder = _pack.PackDecoder(threads=2)
        decoder.feed(LEAK_PACK[:28])
        pieces = [LEAK_PACK[i:i + 10_000] for i in range(28, len(LEAK_PACK), 10_000)]
        errors = hammer(decoder, pieces)
        assert all(isinstance(e, (HprofError, ValueError)) for e in errors), errors
        assert decoder.bytes_in <= len(LEAK_PACK)
