"""hprofkit's compact format ("pack"): the container around the C core's
blocks of streams.  docs/format.md is the specification.

    header  magic, version, the dump's header fields, the policy, CRC-32
    block*  'B', lengths, one entry per stream (method, sizes, CRC-32 of the
            raw stream), CRC-32 of the frame, then the compressed streams
    end     'E', block count, totals, CRC-32

Each stream of each block is compressed on its own (raw deflate, stdlib
zlib), so blocks compress in parallel and the output does not depend on the
number of threads.  Every stored byte is covered by a CRC-32 (header, block
frames, each stream as stored, end record) and checked before the core sees
it: a corrupt file fails with the block index and file offset, and is never
restored into a wrong dump."""

from __future__ import annotations

import struct
import zlib
from typing import Any, Iterable, Sequence

from . import _hprof
from ._io import OrderedJobs, to_fd
from ._errors import CorruptError, FormatError, HprofError, TruncatedError
from ._types import PRIMITIVE_CODES, TYPE_NAMES

MAGIC = b"\x89HPK\r\n\x1a\n"
SLICE = 16 << 20  # feed() handles larger inputs in slices: memory stays bounded by the thread window
VERSION = 2
STREAMS = _hprof.PACK_STREAMS
NSTREAMS = len(STREAMS)
DEFAULT_LEVEL = 6

STRIP_PRESETS = {"default": ("char", "byte"), "tailor": ("char", "byte"), "all": tuple(PRIMITIVE_CODES), "none": ()}

FLAG_APP_ONLY = 1
FLAG_DROP_TRACES = 2

METHOD_EMPTY, METHOD_STORED, METHOD_DEFLATE = 0, 1, 2

_HEADER = struct.Struct(">8sBBBBQHBB")  # magic, version, streams, hprof version, id size, timestamp, strip, flags, level
HEADER_SIZE = _HEADER.size + 4
BLOCK_MARK, END_MARK = 0x42, 0x45  # 'B', 'E'


def is_pack(head: bytes) -> bool:
    """Whether `head` (the first bytes of a file) starts a pack; a head shorter
    than the magic answers whether it could."""
    head = bytes(head[:len(MAGIC)])
    return len(head) > 0 and MAGIC.startswith(head)


def strip_mask(strip: str | Iterable[str | int]) -> int:
    """The strip_types bit mask for a preset ("default", "tailor", "all",
    "none"), a comma-separated list of type names, or an iterable of names or codes."""
    if isinstance(strip, str):
        names: Iterable[str | int] = STRIP_PRESETS[strip] if strip in STRIP_PRESETS else \
            [s.strip() for s in strip.split(",") if s.strip()]
    else:
        names = strip
    mask = 0
    for name in names:
        code = name if isinstance(name, int) else PRIMITIVE_CODES.get(name)
        if code is None or not 4 <= code <= 11:
            raise ValueError(f"unknown primitive type {name!r}: choose from {', '.join(PRIMITIVE_CODES)} "
                             f"or a preset ({', '.join(STRIP_PRESETS)})")
        mask |= 1 << code
    return mask


def strip_names(mask: int) -> tuple[str, ...]:
    return tuple(TYPE_NAMES[code] for code in range(4, 12) if mask >> code & 1)


# ---- varints ---------------------------------------------------------------

def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


class _Short(Exception):
    """More input is needed to parse the structure at hand."""


def _read_varint(buf: bytes | bytearray | memoryview, pos: int, end: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= end:
            raise _Short
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


# ---- compression of one block ----------------------------------------------

STORED_STREAMS = frozenset({STREAMS.index("noise")})  # random-looking bytes: deflate would not help
# Text (byte[] and Latin-1 char[] contents): Huffman-coded letters and digits
# cost less than the short, distant matches deflate would otherwise pick.
FILTERED_STREAMS = frozenset({STREAMS.index("prim.byte")})


def _compress_stream(raw: bytes, level: int, index: int = -1) -> tuple[int, bytes]:
    """(method, payload) for one stream: deflate unless it does not help."""
    if not raw:
        return METHOD_EMPTY, b""
    if level > 0 and index not in STORED_STREAMS:
        strategy = zlib.Z_FILTERED if index in FILTERED_STREAMS else zlib.Z_DEFAULT_STRATEGY
        comp = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
        data = comp.compress(raw) + comp.flush()
        if len(data) < len(raw):
            return METHOD_DEFLATE, data
    return METHOD_STORED, raw


def _frame_block(streams: Sequence[bytes], in_len: int, out_len: int, level: int) -> bytes:
    """The bytes of one block: frame header, its CRC-32, then the payloads."""
    head = bytearray((BLOCK_MARK,))
    head += _varint(in_len) + _varint(out_len)
    payloads = []
    for index, raw in enumerate(streams):
        method, data = _compress_stream(raw, level, index)
        head.append(method)
        if method != METHOD_EMPTY:
            head += _varint(len(raw))
            if method == METHOD_DEFLATE:
                head += _varint(len(data))
            head += struct.pack(">I", zlib.crc32(data))
            payloads.append(data)
    head += struct.pack(">I", zlib.crc32(head))
    return bytes(head) + b"".join(payloads)


# ---- encoder ---------------------------------------------------------------

class PackEncoder:
    """HPROF in, pack out, shaped like zlib.compressobj: feed(data) -> bytes,
    flush() -> bytes, for chunks of any size.

    strip: primitive array types whose elements are not kept (restored as
    zeros): "default" (char and byte, as Tailor), "all", "none", or type names.
    app_only: drop the objects of Android's zygote and image heaps (hprof-conv
    -z).  drop_traces: drop STACK_TRACE and STACK_FRAME records.
    level: zlib level of the streams (0 stores them).  threads: compression
    threads; the output is the same for any number."""

    def __init__(self, *, strip: str | Iterable[str | int] = "default", app_only: bool = False,
                 drop_traces: bool = False, level: int = DEFAULT_LEVEL, threads: int = 1,
                 block_size: int = 0) -> None:
        if not 0 <= level <= 9:
            raise ValueError(f"zlib level must be in 0..9, not {level}")
        self.strip_types = strip_mask(strip)
        self.app_only, self.drop_traces, self.level = bool(app_only), bool(drop_traces), level
        self._core = _hprof.PackEncoder(strip_types=self.strip_types, app_only=self.app_only,
                                        drop_traces=self.drop_traces, block_size=block_size)
        self._jobs = OrderedJobs(threads, "hprofkit-pack")
        self._header_done = False
        self._finished = False
        self.bytes_out = 0
        self.blocks = 0

    def _header(self) -> bytes:
        if self._header_done:
            return b""
        info = self._core.header
        if info is None:
            return b""
        version, id_size, timestamp, _ = info
        flags = (FLAG_APP_ONLY if self.app_only else 0) | (FLAG_DROP_TRACES if self.drop_traces else 0)
        head = _HEADER.pack(MAGIC, VERSION, NSTREAMS, version, id_size, timestamp, self.strip_types, flags,
                            self.level)
        self._header_done = True
        return head + struct.pack(">I", zlib.crc32(head))

    def _submit(self, blocks: list[tuple[tuple[bytes, ...], int, int]]) -> None:
        for streams, in_len, out_len in blocks:
            self._jobs.submit(_frame_block, streams, in_len, out_len, self.level)
            self.blocks += 1

    def _emit(self, data: bytes, fd: int) -> bytes | int:
        out = to_fd(data, fd)
        self.bytes_out += len(data)
        return out

    def feed(self, data: Any, fd: int = -1) -> bytes | int:
        """The pack bytes this chunk completed; with fd >= 0, written there and counted instead."""
        if self._finished:
            raise ValueError("PackEncoder: feed() after flush()")
        view = memoryview(data).cast("B")
        outs = []
        try:
            for start in range(0, max(len(view), 1), SLICE):
                blocks = self._core.feed(view[start:start + SLICE])
                head = self._header()
                self._submit(blocks)
                outs.append(self._emit(head + b"".join(self._jobs.ready()), fd))
        except BaseException:
            self._abort()
            raise
        return sum(outs) if fd >= 0 else b"".join(outs)

    def flush(self, fd: int = -1) -> bytes | int:
        """Ends the dump: the rest of the pack, its end record included."""
        if self._finished:
            raise ValueError("PackEncoder: flush() was already called")
        try:
            blocks = self._core.flush()
            head = self._header()
            self._submit(blocks)
            body = b"".join(self._jobs.ready(0))
            self._finished = True
            self._jobs.close()
            end = bytearray((END_MARK,))
            end += _varint(self.blocks) + _varint(self._core.bytes_in) + _varint(self._core.bytes_out)
            end += struct.pack(">I", zlib.crc32(end))
            return self._emit(head + body + bytes(end), fd)
        except BaseException:
            self._abort()
            raise

    def _abort(self) -> None:
        self._finished = True
        self._jobs.close(cancel=True)

    @property
    def eof(self) -> bool:
        return self._finished

    @property
    def bytes_in(self) -> int:
        """Dump bytes consumed."""
        return self._core.bytes_in

    @property
    def restored_bytes(self) -> int:
        """Bytes the pack restores to (the dump minus what the policy drops)."""
        return self._core.bytes_out


# ---- decoder ---------------------------------------------------------------

def _inflate_block(index: int, offset: int, entries: list[tuple[int, int, int, int]], payload: memoryview,
                   payload_offset: int) -> list[Any]:
    """The raw streams of one block (stored ones as views of `payload`), each
    checked against its CRC-32."""
    streams = []
    pos = 0
    for i, (method, raw_len, comp_len, crc) in enumerate(entries):
        if method == METHOD_EMPTY:
            streams.append(b"")
            continue
        data = payload[pos:pos + comp_len]
        where = payload_offset + pos
        pos += comp_len
        if zlib.crc32(data) != crc:
            raise CorruptError(f"block {index}: stream '{STREAMS[i]}' at offset {where} fails its checksum",
                               where)
        if method == METHOD_STORED:
            raw = data
        else:
            inflater = zlib.decompressobj(-15)
            try:
                raw = inflater.decompress(data, raw_len + 1)
            except zlib.error as exc:
                raise CorruptError(f"block {index}: stream '{STREAMS[i]}' at offset {where} does not inflate "
                                   f"({exc})", where) from None
            if not inflater.eof or inflater.unconsumed_tail or inflater.unused_data:
                raise CorruptError(f"block {index}: stream '{STREAMS[i]}' at offset {where} does not inflate "
                                   f"to its recorded length", where)
        if len(raw) != raw_len:
            raise CorruptError(f"block {index}: stream '{STREAMS[i]}' at offset {where} does not inflate "
                               f"to its recorded length", where)
        streams.append(raw)
    return streams


class PackDecoder:
    """Pack in, HPROF out: feed(data) -> bytes, flush() -> bytes.  threads:
    streams of the next blocks are inflated while one is restored."""

    def __init__(self, *, threads: int = 1) -> None:
        self._buf = bytearray()
        self._base = 0  # file offset of _buf[0]
        self._core: Any = None
        self._info: dict[str, Any] | None = None
        self._jobs = OrderedJobs(max(1, threads), "hprofkit-unpack")
        self._blocks_seen = 0
        self._restored_blocks = 0
        self._block_offsets: dict[int, int] = {}
        self._out_lens: dict[int, int] = {}
        self._ended = False
        self._finished = False
        self.bytes_out = 0

    # -- parsing --------------------------------------------------------------
    def _parse_header(self) -> bool:
        if len(self._buf) < HEADER_SIZE:
            if not is_pack(bytes(self._buf[:len(MAGIC)])):
                raise FormatError("not an hprofkit pack (bad magic)", 0)
            return False
        fields = _HEADER.unpack_from(self._buf, 0)
        magic, version, nstreams, hversion, id_size, timestamp, strip, flags, level = fields
        if magic != MAGIC:
            raise FormatError("not an hprofkit pack (bad magic)", 0)
        (crc,) = struct.unpack_from(">I", self._buf, _HEADER.size)
        if zlib.crc32(self._buf[:_HEADER.size]) != crc:
            raise CorruptError("pack header at offset 0 fails its checksum", 0)
        if version != VERSION:
            raise FormatError(f"pack format version {version} is not supported (this hprofkit reads {VERSION})", 8)
        if nstreams != NSTREAMS or hversion > 3 or id_size not in (4, 8) or flags & ~3 or strip & ~0xFF0:
            raise CorruptError("pack header at offset 0 has impossible fields", 0)
        self._info = {"version": hversion, "id_size": id_size, "timestamp": timestamp, "strip": strip,
                      "app_only": bool(flags & FLAG_APP_ONLY), "drop_traces": bool(flags & FLAG_DROP_TRACES),
                      "level": level}
        self._core = _hprof.PackDecoder(hversion, id_size, timestamp, strip_types=strip,
                                        app_only=bool(flags & FLAG_APP_ONLY),
                                        drop_traces=bool(flags & FLAG_DROP_TRACES))
        del self._buf[:HEADER_SIZE]
        self._base += HEADER_SIZE
        return True

    def _parse_block(self) -> bool:
        """Takes one whole block out of the buffer and submits its inflation."""
        buf, end = self._buf, len(self._buf)
        offset = self._base
        index = self._blocks_seen
        try:
            in_len, pos = _read_varint(buf, 1, end)
            out_len, pos = _read_varint(buf, pos, end)
            entries = []
            total = 0
            for _ in range(NSTREAMS):
                if pos >= end:
                    raise _Short
                method = buf[pos]
                pos += 1
                raw_len = comp_len = crc = 0
                if method not in (METHOD_EMPTY, METHOD_STORED, METHOD_DEFLATE):
                    raise ValueError(f"unknown stream method {method}")
                if method != METHOD_EMPTY:
                    raw_len, pos = _read_varint(buf, pos, end)
                    comp_len = raw_len
                    if method == METHOD_DEFLATE:
                        comp_len, pos = _read_varint(buf, pos, end)
                    if pos + 4 > end:
                        raise _Short
                    (crc,) = struct.unpack_from(">I", buf, pos)
                    pos += 4
                entries.append((method, raw_len, comp_len, crc))
                total += comp_len
            if pos + 4 > end:
                raise _Short
        except ValueError as exc:
            raise CorruptError(f"block {index}: bad frame at offset {offset} ({exc})", offset) from None
        (crc,) = struct.unpack_from(">I", buf, pos)
        if zlib.crc32(memoryview(buf)[:pos]) != crc:
            raise CorruptError(f"block {index}: frame at offset {offset} fails its checksum", offset)
        pos += 4
        if end < pos + total:
            raise _Short
        payload = bytes(buf[pos:pos + total])
        del buf[:pos + total]
        self._base += pos + total
        self._block_offsets[index] = offset
        self._out_lens[index] = out_len
        self._blocks_seen += 1
        self._jobs.submit(_inflate_block, index, offset, entries, memoryview(payload), offset + pos)
        return True

    def _parse_end(self) -> bool:
        buf, end = self._buf, len(self._buf)
        offset = self._base
        try:
            blocks, pos = _read_varint(buf, 1, end)
            total_in, pos = _read_varint(buf, pos, end)
            total_out, pos = _read_varint(buf, pos, end)
        except ValueError as exc:
            raise CorruptError(f"bad end record at offset {offset} ({exc})", offset) from None
        if pos + 4 > end:
            raise _Short
        (crc,) = struct.unpack_from(">I", buf, pos)
        if zlib.crc32(memoryview(buf)[:pos]) != crc:
            raise CorruptError(f"end record at offset {offset} fails its checksum", offset)
        if blocks != self._blocks_seen:
            raise CorruptError(f"end record at offset {offset} counts {blocks} blocks, the pack holds "
                               f"{self._blocks_seen}", offset)
        del buf[:pos + 4]
        self._base += pos + 4
        self._ended = True
        self._totals = (total_in, total_out)
        if buf:
            raise CorruptError(f"data after the end of the pack at offset {self._base}", self._base)
        return True

    def _parse(self) -> None:
        while self._buf:
            if self._ended:
                raise CorruptError(f"data after the end of the pack at offset {self._base}", self._base)
            if self._core is None:
                if not self._parse_header():
                    return
                continue
            mark = self._buf[0]
            try:
                if mark == BLOCK_MARK:
                    self._parse_block()
                elif mark == END_MARK:
                    self._parse_end()
                else:
                    raise CorruptError(f"block {self._blocks_seen}: no block or end marker at offset "
                                       f"{self._base} (0x{mark:02x})", self._base)
            except _Short:
                return

    # -- restoring ------------------------------------------------------------
    def _restore(self, results: list[tuple[int, list[bytes]]], fd: int) -> list[Any]:
        outs = []
        for streams in results:
            index = self._restored_blocks
            offset = self._block_offsets.pop(index)
            try:
                out = self._core.feed_block(streams, self._out_lens.pop(index), fd=fd)
            except HprofError as exc:
                raise type(exc)(f"block {index} (offset {offset}): {exc}", offset, exc.tag, exc.record) from None
            self._restored_blocks += 1
            n = out if isinstance(out, int) else len(out)
            self.bytes_out += n
            outs.append(out)
        return outs

    def feed(self, data: Any, fd: int = -1) -> bytes | int:
        """The HPROF bytes this chunk completed; with fd >= 0, written there and counted instead."""
        if self._finished:
            raise ValueError("PackDecoder: feed() after flush()")
        view = memoryview(data).cast("B")
        outs = []
        try:
            for start in range(0, len(view), SLICE):
                self._buf += view[start:start + SLICE]
                self._parse()
                outs += self._restore(self._jobs.ready(), fd)
        except BaseException:
            self._abort()
            raise
        return sum(outs) if fd >= 0 else b"".join(outs)

    def flush(self, fd: int = -1) -> bytes | int:
        """Ends the input: raises TruncatedError unless the pack was complete."""
        if self._finished:
            raise ValueError("PackDecoder: flush() was already called")
        try:
            outs = self._restore(self._jobs.ready(0), fd)
            if self._core is None:
                if not self._buf:
                    raise FormatError("empty input: not an hprofkit pack", 0)
                raise TruncatedError(f"truncated pack header at offset 0: needs {HEADER_SIZE} bytes, "
                                     f"{len(self._buf)} remain", 0)
            if not self._ended:
                what = f"block {self._blocks_seen}" if self._buf else "the end record"
                raise TruncatedError(f"truncated pack: {what} at offset {self._base} is incomplete "
                                     f"({len(self._buf)} bytes remain)", self._base)
            tail = self._core.flush(fd=fd)
            outs.append(tail)
            self.bytes_out += tail if isinstance(tail, int) else len(tail)
            total_in, total_out = self._totals
            if self.bytes_out != total_out:
                raise CorruptError(f"the pack restored {self.bytes_out} bytes, its end record says {total_out}",
                                   self._base)
            self._finished = True
            self._jobs.close()
        except BaseException:
            self._abort()
            raise
        return sum(outs) if fd >= 0 else b"".join(outs)

    def _abort(self) -> None:
        self._finished = True
        self._jobs.close(cancel=True)

    @property
    def eof(self) -> bool:
        return self._finished

    @property
    def bytes_in(self) -> int:
        """Pack bytes consumed."""
        return self._base + len(self._buf)

    @property
    def info(self) -> dict[str, Any] | None:
        """The pack's header fields (version, id_size, timestamp, strip, app_only,
        drop_traces, level) once read."""
        if self._info is None:
            return None
        return dict(self._info, strip=strip_names(self._info["strip"]))
