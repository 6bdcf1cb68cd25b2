"""Compressed inputs: gzip and bzip2 dumps, told by their first bytes (not by
their names) and decompressed as a stream, in bounded pieces.

Every failure names the format and the offset in the compressed file:
TruncatedError when the file ends inside the stream, CorruptError for bytes
that cannot be decompressed (an exact offset for gzip; for bzip2, which
checks a whole block at once, the offset where the decompressor gave up).
Reading the file may still raise OSError, which stays an OSError."""

from __future__ import annotations

import bz2
import zlib
from typing import IO, TYPE_CHECKING, Generator, Iterator, Union, cast

from ._errors import CorruptError, TruncatedError

if TYPE_CHECKING:  # zlib's decompressor type has no public name at run time
    from typing_extensions import TypeAlias
    _Decompressor: TypeAlias = Union[zlib._Decompress, bz2.BZ2Decompressor]

READ = 1 << 20   # compressed bytes read at once
PIECE = 8 << 20  # largest decompressed piece yielded: a small input may inflate to a lot
_BZ2_STEP = 64 << 10  # bzip2 is fed in steps this long, to place its errors
_MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh"}


def detect_compression(head: bytes) -> str | None:
    """'gzip', 'bzip2' or None, from the first bytes of a file."""
    for kind, magic in _MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def decompressed(f: IO[bytes], kind: str) -> Iterator[bytes]:
    """The decompressed bytes of `f`, a binary file holding a `kind`
    ('gzip' or 'bzip2') stream from its current position, in pieces of at
    most PIECE bytes.  Concatenated streams (pigz, `cat a.gz b.gz`) and zero
    padding between them are read as gzip and bzip2 do."""
    stream = _Stream(kind)
    while True:
        data = f.read(READ)
        if not data:
            break
        yield from stream.feed(data)
    stream.finish()


class _Stream:
    def __init__(self, kind: str) -> None:
        if kind not in _MAGIC:
            raise ValueError(f"unknown compression {kind!r}")
        self.kind = kind
        self.offset = 0       # compressed bytes consumed
        self.member: _Decompressor | None = self._new()
        self.members = 1

    def _new(self) -> _Decompressor:
        return zlib.decompressobj(31) if self.kind == "gzip" else bz2.BZ2Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        view = memoryview(data)
        while view:
            if self.member is None:  # between two streams: zero padding, or the next stream
                rest = bytes(view).lstrip(b"\0")
                self.offset += len(view) - len(rest)
                view = memoryview(rest)
                if not view:
                    return
                self.member, self.members = self._new(), self.members + 1
            step = self._zlib_step if self.kind == "gzip" else self._bz2_step
            used = yield from step(view)
            self.offset += used
            view = view[used:]
            if self.member.eof:
                self.member = None

    def _zlib_step(self, view: memoryview) -> Generator[bytes, None, int]:
        """Decompresses from view until PIECE bytes come out or it is used up; returns the bytes used."""
        member = cast("zlib._Decompress", self.member)  # a gzip stream's, between two streams never
        before = member.copy()  # to find the failing byte if this step fails
        try:
            out = member.decompress(view, PIECE)
        except zlib.error as exc:
            raise self._corrupt(self.offset + _failing_byte(before, view), exc) from None
        if out:
            yield out
        return len(view) - len(member.unconsumed_tail) - len(member.unused_data)

    def _bz2_step(self, view: memoryview) -> Generator[bytes, None, int]:
        member = cast(bz2.BZ2Decompressor, self.member)
        view = view[:_BZ2_STEP]
        try:
            out = member.decompress(view, PIECE)
            while True:
                if out:
                    yield out
                if member.eof or member.needs_input:
                    break
                out = member.decompress(b"", PIECE)
        except (OSError, EOFError, ValueError) as exc:  # bz2 says "Invalid data stream" as an OSError
            raise self._corrupt(self.offset + len(view), exc, near=True) from None
        return len(view) - len(member.unused_data)

    def _corrupt(self, at: int, exc: BaseException, near: bool = False) -> CorruptError:
        where = "near" if near else "at"
        after = f" (in stream {self.members}: data after the end of the previous one?)" if self.members > 1 else ""
        return CorruptError(f"corrupt {self.kind} stream {where} compressed offset {at}{after}: {exc}", at)

    def finish(self) -> None:
        if self.member is not None:
            raise TruncatedError(f"truncated {self.kind} stream: the file ends at compressed offset {self.offset} "
                                 f"before the end of the stream", self.offset)


def _failing_byte(decompressor: zlib._Decompress, view: memoryview) -> int:
    """Where in `view` the zlib stream in the state `decompressor` fails:
    replayed in 4 KiB steps, then byte by byte within the failing step."""
    probe = decompressor
    step = 4096
    start = 0
    while start < len(view):
        saved = probe.copy()
        try:
            probe.decompress(view[start:start + step])
        except zlib.error:
            probe = saved
            for at in range(start, min(start + step, len(view))):
                try:
                    probe.decompress(view[at:at + 1])
                except zlib.error:
                    return at
            return start
        start += step
    return len(view)
