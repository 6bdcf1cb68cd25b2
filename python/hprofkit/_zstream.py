"""One zlib stream (RFC 1950) written by one or several threads.

With one thread it is exactly what zlib.compressobj(level) writes, computed
in a worker thread so that compression overlaps the caller's own work (the
trimmer).  With several, the input is cut into blocks compressed in parallel,
each primed with the 32 KiB before it, ended with a sync flush and joined
into one valid stream with a combined Adler-32 (what pigz does): it inflates
to the same bytes, nearly as small, on every core."""

from __future__ import annotations

import os
import zlib

from ._io import OrderedJobs

BLOCK = 1 << 20
WINDOW = 32 << 10
_ADLER_BASE = 65521


def resolve_threads(threads: int) -> int:
    """threads, or for 0 (auto) the machine's cores, at most 8."""
    if threads < 0:
        raise ValueError(f"threads must be 0 (auto) or more, not {threads}")
    return threads or min(8, os.cpu_count() or 1)


def adler32_combine(adler1: int, adler2: int, len2: int) -> int:
    """Adler-32 of A+B from adler32(A), adler32(B) and len(B) (zlib's adler32_combine)."""
    rem = len2 % _ADLER_BASE
    sum1 = adler1 & 0xFFFF
    sum2 = (rem * sum1) % _ADLER_BASE
    sum1 += (adler2 & 0xFFFF) + _ADLER_BASE - 1
    sum2 += ((adler1 >> 16) & 0xFFFF) + ((adler2 >> 16) & 0xFFFF) + _ADLER_BASE - rem
    sum1 %= _ADLER_BASE
    sum2 %= _ADLER_BASE
    return sum1 | (sum2 << 16)


def zlib_header(level: int) -> bytes:
    """The two header bytes zlib writes for `level` (78 01, 78 5E, 78 9C or 78 DA)."""
    flevel = 0 if level in (0, 1) else 1 if level < 6 else 2 if level == 6 or level == -1 else 3
    cmf, flg = 0x78, flevel << 6
    flg += 31 - ((cmf << 8) + flg) % 31
    return bytes((cmf, flg))


def _compress_block(block: bytes, level: int, primer: bytes, final: bool) -> tuple[bytes, int, int]:
    """Raw deflate of one block: (output, adler32 of the block, its length)."""
    comp = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=primer) if primer else \
        zlib.compressobj(level, zlib.DEFLATED, -15)
    out = comp.compress(block) + comp.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)
    return out, zlib.adler32(block), len(block)


class ZlibStream:
    """compress(data) -> bytes and flush() -> bytes, like zlib.compressobj."""

    def __init__(self, level: int = 6, threads: int = 1, block: int = BLOCK) -> None:
        if not -1 <= level <= 9:
            raise ValueError(f"zlib level must be in -1..9, not {level}")
        self.level, self.threads, self.block = level, resolve_threads(threads), block
        self._jobs = OrderedJobs(self.threads, "hprofkit-zlib")
        self._finished = False
        if self.threads == 1:
            self._comp = zlib.compressobj(level)
        else:
            self._buffer = bytearray()
            self._primer = b""
            self._adler = 1
            self._header_sent = False

    def _ready(self, wait_for: int | None = None) -> bytes:
        """Output of finished jobs, in order (see OrderedJobs.ready)."""
        out = []
        for result in self._jobs.ready(wait_for):
            if isinstance(result, tuple):  # a parallel block: (data, adler32, length)
                data, adler, length = result
                self._adler = adler32_combine(self._adler, adler, length)
                out.append(data)
            else:
                out.append(result)
        return b"".join(out)

    def _submit_block(self, block: bytes, final: bool) -> None:
        primer = self._primer
        self._primer = bytes(block[-WINDOW:]) if len(block) >= WINDOW else (primer + block)[-WINDOW:]
        self._jobs.submit(_compress_block, block, self.level, primer, final)

    def compress(self, data: bytes) -> bytes:
        if self._finished:
            raise ValueError("compress() after flush()")
        if not data:
            return self._ready()
        if self.threads == 1:  # compressobj in a worker: overlaps the caller's trimming
            self._jobs.submit(self._comp.compress, bytes(data))
            return self._ready()
        head = b""
        if not self._header_sent:
            head, self._header_sent = zlib_header(self.level), True
        self._buffer += data
        while len(self._buffer) >= self.block:
            block = bytes(self._buffer[:self.block])
            del self._buffer[:self.block]
            self._submit_block(block, final=False)
        return head + self._ready()

    def flush(self) -> bytes:
        if self._finished:
            return b""
        self._finished = True
        try:
            if self.threads == 1:
                self._jobs.submit(self._comp.flush)
                return self._ready(0)
            head = b"" if self._header_sent else zlib_header(self.level)
            self._submit_block(bytes(self._buffer), final=True)
            self._buffer = bytearray()
            body = self._ready(0)
            return head + body + self._adler.to_bytes(4, "big")
        finally:
            self._jobs.close()

    def close(self) -> None:
        """Stops the workers without writing the end of the stream."""
        self._finished = True
        self._jobs.close(cancel=True)
