"""The pack container (docs/format.md §2) read and written by a small Python
implementation of its own, independent of hprofkit's C one: tests use it to
look at a pack's streams, and to make packs whose CRCs are right but whose
contents lie."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

MAGIC = b"\x89HPK\r\n\x1a\n"
STREAMS = 41
HEADER_SIZE = 28


def varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, pos
        shift += 7


def pack_header(hprof_version: int = 2, id_size: int = 4, strip: int = 0, flags: int = 0, level: int = 6,
                timestamp: int = 0) -> bytes:
    head = struct.pack(">8sBBBBQHBB", MAGIC, 2, STREAMS, hprof_version, id_size, timestamp, strip, flags, level)
    return head + struct.pack(">I", zlib.crc32(head))


def pack_block(streams: dict[int, bytes | tuple[int, bytes]], in_len: int = 0, out_len: int = 0) -> bytes:
    """A block frame and its payloads.  streams: index -> raw bytes (stored),
    or (raw_len, deflate payload) for a deflated stream."""
    frame = bytearray(b"B") + varint(in_len) + varint(out_len)
    payloads = []
    for index in range(STREAMS):
        item = streams.get(index)
        if item is None or item == b"":
            frame.append(0)
            continue
        if isinstance(item, tuple):
            raw_len, data = item
            frame += b"\x02" + varint(raw_len) + varint(len(data))
        else:
            data = item
            frame += b"\x01" + varint(len(data))
        frame += struct.pack(">I", zlib.crc32(data))
        payloads.append(data)
    frame += struct.pack(">I", zlib.crc32(frame))
    return bytes(frame) + b"".join(payloads)


def pack_end(blocks: int, total_in: int, total_out: int) -> bytes:
    end = bytearray(b"E") + varint(blocks) + varint(total_in) + varint(total_out)
    return bytes(end + struct.pack(">I", zlib.crc32(end)))


@dataclass
class Block:
    offset: int           # file offset of the frame
    streams: list[bytes]  # raw (inflated) streams
    in_len: int
    out_len: int


@dataclass
class Pack:
    header: bytes
    blocks: list[Block]
    end_offset: int
    totals: tuple[int, int]  # total_in, total_out

    def frame(self, index: int) -> bytes:
        """Block `index` framed again, every stream stored (CRCs recomputed)."""
        b = self.blocks[index]
        return pack_block(dict(enumerate(b.streams)), b.in_len, b.out_len)

    def write(self, frames: list[bytes] | None = None) -> bytes:
        """The pack again from its blocks' frames (by default, frame(i) of every block)."""
        if frames is None:
            frames = [self.frame(i) for i in range(len(self.blocks))]
        return b"".join([self.header, *frames, pack_end(len(self.blocks), *self.totals)])


def read_pack(blob: bytes) -> Pack:
    """Parses a whole, sound pack (asserts otherwise)."""
    assert blob[:8] == MAGIC
    pos, blocks = HEADER_SIZE, []
    while blob[pos] == ord("B"):
        offset = pos
        in_len, pos = read_varint(blob, pos + 1)
        out_len, pos = read_varint(blob, pos)
        entries = []
        for _ in range(STREAMS):
            method = blob[pos]
            pos += 1
            raw_len = comp_len = 0
            if method:
                raw_len, pos = read_varint(blob, pos)
                comp_len = raw_len
                if method == 2:
                    comp_len, pos = read_varint(blob, pos)
                pos += 4
            entries.append((method, raw_len, comp_len))
        pos += 4
        streams = []
        for method, raw_len, comp_len in entries:
            data = blob[pos:pos + comp_len]
            pos += comp_len
            streams.append(zlib.decompress(data, -15) if method == 2 else data)
            assert len(streams[-1]) == raw_len
        blocks.append(Block(offset, streams, in_len, out_len))
    end_offset = pos
    assert blob[pos] == ord("E")
    count, pos = read_varint(blob, pos + 1)
    total_in, pos = read_varint(blob, pos)
    total_out, pos = read_varint(blob, pos)
    assert count == len(blocks) and pos + 4 == len(blob)
    return Pack(blob[:HEADER_SIZE], blocks, end_offset, (total_in, total_out))
