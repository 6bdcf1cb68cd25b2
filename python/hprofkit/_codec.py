"""Stream codecs shaped like zlib.compressobj: Encoder (trim + compress),
Decoder (inflate + restore), Converter (Android -> standard HPROF).

feed(data) -> bytes, flush() -> bytes, eof.  Input chunks may have any size;
the output does not depend on how the input was cut."""

from __future__ import annotations

import zlib

from typing import Any, Iterator

from . import _hprof
from ._errors import CorruptError, FormatError, TruncatedError
from ._io import to_fd
from ._pack import PackDecoder, PackEncoder, is_pack
from ._zstream import ZlibStream, resolve_threads

FORMATS = ("hprofkit", "tailor", "hprof")
PIECE = 4 << 20  # largest inflated piece handed to the restorer at once
TAILOR_MAGIC = b"JAVA PROFILE 6.0.1"
Converter = _hprof.Converter


class Encoder:
    """Trims a dump as it is written and compresses it.

    format="hprofkit" (the default): hprofkit's own compact format, for any
    dump (docs/format.md); strip names the primitive array types whose
    contents are dropped ("default": char and byte, as Tailor; "all"; "none"
    keeps everything, and then decoding gives back the dump byte for byte);
    drop_traces drops STACK_TRACE / STACK_FRAME records.
    format="tailor": Tailor's mini format (char[]/byte[] contents, serials and
    lengths dropped) in one zlib stream, level 0-9 (0: the bare mini stream,
    as Tailor's native library writes with isGzip=false).
    format="hprof": plain HPROF (with app_only, the zygote and image heaps'
    objects dropped), uncompressed.
    app_only: drop the objects of the zygote and image heaps, keep classes
    and roots (hprof-conv -z's rule).
    threads: compression threads, 0 (the default) for one per core; 1 writes
    exactly zlib.compress's bytes (still overlapping trimming), more write a
    pigz-style stream that inflates to the same bytes."""

    def __init__(self, format: str = "hprofkit", *, level: int = 6, app_only: bool = False,
                 threads: int = 0, strip: Any = "default", drop_traces: bool = False) -> None:
        if format not in FORMATS:
            raise ValueError(f"unknown format {format!r}: choose one of {', '.join(FORMATS)}")
        self.format = format
        self._pack: PackEncoder | None = None
        self._zlib: ZlibStream | None = None
        if format == "hprofkit":
            self._pack = PackEncoder(strip=strip, app_only=app_only, drop_traces=drop_traces, level=level,
                                     threads=resolve_threads(threads))
            self.bytes_out = 0
            return
        if strip != "default" or drop_traces:
            raise ValueError(f"strip= and drop_traces= belong to the hprofkit format, not {format!r}")
        if format == "tailor":
            self._filter = _hprof.TailorEncoder(app_only=app_only)
            self._zlib = ZlibStream(level, threads) if level else None
        else:
            self._filter = _hprof.Converter(to_standard=False, app_only=app_only)
        self.bytes_out = 0

    def feed(self, data, fd: int = -1) -> bytes | int:
        """The output this chunk completed; with fd >= 0, written there and counted instead."""
        if self._pack is not None:
            return self._count(self._pack.feed(data, fd))
        try:
            if self._zlib is None:
                out = self._filter.feed(data, fd=fd)
            else:
                out = to_fd(self._zlib.compress(self._filter.feed(data)), fd)
        except BaseException:
            self._abort()
            raise
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    def flush(self, fd: int = -1) -> bytes | int:
        if self._pack is not None:
            return self._count(self._pack.flush(fd))
        try:
            if self._zlib is None:
                out = self._filter.flush(fd=fd)
            else:
                out = to_fd(self._zlib.compress(self._filter.flush()) + self._zlib.flush(), fd)
        except BaseException:
            self._abort()
            raise
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    def _count(self, out: bytes | int) -> bytes | int:
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    def _abort(self) -> None:
        if self._zlib:
            self._zlib.close()

    @property
    def eof(self) -> bool:
        return self._pack.eof if self._pack is not None else self._filter.eof

    @property
    def bytes_in(self) -> int:
        """Dump bytes consumed."""
        return self._pack.bytes_in if self._pack is not None else self._filter.bytes_in

    @property
    def trimmed_bytes(self) -> int | None:
        """Bytes of the trimmed stream before compression (None for the hprofkit format)."""
        return None if self._pack is not None else self._filter.bytes_out

    def counter(self) -> dict[str, int]:
        """The tag counter Tailor's encode.py prints (first-seen order); {} for other formats."""
        return self._filter.counter() if self.format == "tailor" else {}

    def __repr__(self) -> str:
        state = "finished" if self.eof else f"{self.bytes_in:,} bytes in, {self.bytes_out:,} out"
        return f"<hprofkit.Encoder format={self.format!r}, {state}>"


def sniff(head: bytes) -> str | None:
    """What a compressed dump starts with: 'zlib', 'gzip', 'mini' (bare Tailor stream) or None."""
    if head.startswith(TAILOR_MAGIC[:len(head)]) and len(head) >= 1:
        return "mini"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if len(head) >= 2 and head[0] & 0x0F == 8 and ((head[0] << 8) | head[1]) % 31 == 0:
        return "zlib"
    return None


class Decoder:
    """Restores an hprofkit pack or a Tailor mini (zlib at any level, gzip,
    or the bare stream), told apart by their first bytes.  A truncated or
    corrupt input raises an HprofError naming the offset, never a partial
    success."""

    def __init__(self, *, threads: int = 0) -> None:
        self._threads = resolve_threads(threads)
        self._pack: PackDecoder | None = None
        self._filter = _hprof.TailorDecoder()
        self._head = b""
        self._kind: str | None = None
        self._inflate = None
        self._consumed = 0  # compressed bytes taken
        self.bytes_out = 0

    def _start(self, data: bytes) -> bytes:
        """Buffers until the kind of input is known; returns the bytes to process."""
        self._head += bytes(data)
        if is_pack(self._head[:8]):
            if len(self._head) < 8:
                return b""
            self._kind, self._pack = "hprofkit", PackDecoder(threads=self._threads)
            data, self._head = self._head, b""
            return data
        if len(self._head) < 2:
            return b""
        kind = sniff(self._head[:len(TAILOR_MAGIC)])
        if kind == "mini" and len(self._head) < len(TAILOR_MAGIC):
            return b""
        if kind is None:
            raise FormatError("neither an hprofkit pack nor a Tailor mini (zlib, gzip or 'JAVA PROFILE 6.0.1')", 0)
        self._kind = kind
        if kind != "mini":
            self._inflate = zlib.decompressobj(15 if kind == "zlib" else 31)
        data, self._head = self._head, b""
        return data

    def inflate(self, data) -> Iterator[bytes]:
        """The mini stream inside `data`, in pieces of at most PIECE bytes
        (a small zlib input can inflate to a lot)."""
        if self._kind is None:
            data = self._start(data)
            if self._kind is None:
                return
        if self._inflate is None:
            self._consumed += len(data)
            yield data
            return
        pending = data
        while pending:
            if self._inflate.eof:
                raise CorruptError(f"data after the end of the {self._kind} stream at offset {self._consumed}",
                                   self._consumed)
            try:
                out = self._inflate.decompress(pending, PIECE)
            except zlib.error as exc:
                raise CorruptError(f"corrupt {self._kind} stream near offset {self._consumed}: {exc}",
                                   self._consumed) from None
            tail = self._inflate.unconsumed_tail or self._inflate.unused_data
            self._consumed += len(pending) - len(tail)
            pending = self._inflate.unconsumed_tail
            if self._inflate.eof and self._inflate.unused_data:
                raise CorruptError(f"data after the end of the {self._kind} stream at offset {self._consumed}",
                                   self._consumed)
            if out:
                yield out

    def restore(self, mini, fd: int = -1) -> bytes | int:
        """Feeds already inflated mini bytes to the restorer (see inflate())."""
        out = self._filter.feed(mini, fd=fd)
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    def feed(self, data, fd: int = -1) -> bytes | int:
        """The HPROF bytes this chunk completed; with fd >= 0, written there and counted instead."""
        if self._kind is None:
            data = self._start(data)
            if self._kind is None:
                return 0 if fd >= 0 else b""
        if self._pack is not None:
            out = self._pack.feed(data, fd)
            self.bytes_out += out if isinstance(out, int) else len(out)
            self._consumed += len(data)
            return out
        outs = [self.restore(piece, fd) for piece in self.inflate(data)]
        return sum(outs) if fd >= 0 else b"".join(outs)

    def flush(self, fd: int = -1) -> bytes | int:
        if self._pack is not None:
            out = self._pack.flush(fd)
            self.bytes_out += out if isinstance(out, int) else len(out)
            return out
        if self._kind is None:
            if self._head and sniff(self._head) == "mini":
                raise TruncatedError(f"truncated Tailor mini header at offset 0: needs {len(TAILOR_MAGIC)} "
                                     f"bytes, {len(self._head)} remain", 0)
            if self._head and is_pack(self._head):
                raise TruncatedError(f"truncated hprofkit pack header at offset 0: {len(self._head)} bytes", 0)
            raise FormatError("not a Tailor mini file" if self._head else "empty input", 0)
        if self._inflate is not None and not self._inflate.eof:
            raise TruncatedError(f"truncated {self._kind} stream at offset {self._consumed}: the compressed "
                                 f"data ends before its end marker", self._consumed)
        out = self._filter.flush(fd=fd)
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    @property
    def eof(self) -> bool:
        return self._pack.eof if self._pack is not None else self._filter.eof

    @property
    def bytes_in(self) -> int:
        """Input bytes consumed (compressed)."""
        return self._consumed

    @property
    def mini_bytes(self) -> int | None:
        """Bytes of the inflated mini stream (None for a pack)."""
        return None if self._pack is not None else self._filter.bytes_in

    @property
    def kind(self) -> str | None:
        """'hprofkit', or for a Tailor mini 'zlib', 'gzip' or 'mini', once known."""
        return self._kind

    def counter(self) -> dict[str, int]:
        """The tag counter Tailor's decode.py prints ({} for a pack)."""
        return {} if self._pack is not None else self._filter.counter()

    def __repr__(self) -> str:
        state = "finished" if self.eof else f"{self.bytes_in:,} bytes in, {self.bytes_out:,} out"
        return f"<hprofkit.Decoder kind={self.kind!r}, {state}>"
