"""Opening dumps: a Dump is an mmap of the file, walked by the C core.

Compressed inputs (gzip, bzip2; told by their magic bytes, not their names)
are first streamed into an anonymous temporary file, which is then mapped:
every later pass is zero-copy and the memory used stays bounded, whatever the
dump's size."""

from __future__ import annotations

import builtins
import bz2
import datetime as _dt
import gzip
import mmap
import os
import shutil
import tempfile
import zlib
from typing import IO, Any, Callable, Iterator

from . import _hprof
from ._errors import FormatError, TruncatedError
from ._stats import VERSION_NAMES, Stats

_COPY_CHUNK = 1 << 20


def detect_compression(head: bytes) -> str | None:
    """'gzip', 'bzip2' or None, from the first bytes of a file."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh"):
        return "bzip2"
    return None


def _decompress_to_temp(f: IO[bytes], kind: str) -> IO[bytes]:
    """Streams a compressed file into an anonymous temporary file."""
    tmp = tempfile.TemporaryFile(prefix="hprofkit-")
    try:
        src_file = gzip.GzipFile(fileobj=f, mode="rb") if kind == "gzip" else bz2.BZ2File(f, mode="rb")
        with src_file as src:
            shutil.copyfileobj(src, tmp, _COPY_CHUNK)
    except EOFError as exc:
        tmp.close()
        raise TruncatedError(f"truncated {kind} stream: {exc}", f.tell()) from None
    except (OSError, zlib.error, ValueError) as exc:
        tmp.close()
        raise FormatError(f"corrupt {kind} stream: {exc}", f.tell()) from None
    tmp.flush()
    return tmp


class Dump:
    """An HPROF dump mapped into memory.  Use as a context manager.

    Records and sub-records it yields are views into the mapping and hold its
    buffer export: while any is alive the mmap itself refuses to close
    (``dump.buffer.close()`` raises BufferError), so nothing can read freed
    memory.  ``Dump.close()`` then hands the mapping over to them: it is
    unmapped when the last of them is freed."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._file: IO[bytes] | None = None
        self._map: mmap.mmap | None = None
        f: IO[bytes] = builtins.open(self.path, "rb")
        try:
            self.compression = detect_compression(f.read(4))
            f.seek(0)
            if self.compression:
                compressed, f = f, _decompress_to_temp(f, self.compression)
                compressed.close()
            self.size = os.fstat(f.fileno()).st_size
            if self.size == 0:
                raise FormatError("not an HPROF file: it is empty", 0)
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._file = f
            self.magic, version, self.id_size, self.timestamp, self.header_length = _hprof.parse_header(self._map)
        except BaseException:
            if self._map is not None:
                self._map.close()
            f.close()
            raise
        self.version: str = VERSION_NAMES[version]

    @property
    def buffer(self) -> mmap.mmap:
        """The mapped (decompressed) dump."""
        if self._map is None:
            raise ValueError("I/O operation on a closed Dump")
        return self._map

    @property
    def datetime(self) -> _dt.datetime:
        """The header timestamp as an aware UTC datetime."""
        return _dt.datetime.fromtimestamp(self.timestamp / 1000, _dt.timezone.utc)

    def records(self) -> Iterator[Any]:
        """Top-level records in file order (hprofkit.Record), zero-copy."""
        return _hprof.records(self.buffer)

    def subrecords(self) -> Iterator[Any]:
        """Every heap sub-record of every HEAP_DUMP / HEAP_DUMP_SEGMENT (hprofkit.SubRecord)."""
        return _hprof.subrecords(self.buffer)

    def stats(self, progress: Callable[[int, int], object] | None = None) -> Stats:
        """Tallies and class histogram (see hprofkit.Stats)."""
        return Stats(_hprof.stats(self.buffer, progress=progress))

    def heap(self, *, heap_dump: int = 0, size_model: str = "visualvm") -> Any:
        """The object graph of one heap dump (hprofkit.Heap): heap_dump picks
        which (0, the first, as VisualVM); size_model is 'visualvm' (its
        shallow sizes, compressed oops guessed on 64-bit dumps) or
        'uncompressed' (references at id size).  The heap keeps the mapping
        alive: it stays usable after the Dump is closed."""
        return _hprof.Heap(self.buffer, heap_dump=heap_dump, size_model=size_model)

    def close(self) -> None:
        """Closes the dump.  The mapping is released now, or, while records
        still point into it, when the last of them is freed."""
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass  # live views keep the mmap object, which unmaps itself when freed
            self._map = None
        if self._file is not None:
            self._file.close()
            self._file = None

    @property
    def closed(self) -> bool:
        return self._map is None

    def __enter__(self) -> "Dump":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.size:,} bytes"
        return f"<hprofkit.Dump {self.path!r} {self.magic} id_size={self.id_size} {state}>"


def open(path: str | os.PathLike[str]) -> Dump:  # noqa: A001 - mirrors gzip.open & co
    """Opens an HPROF dump (plain, .gz or .bz2) as a Dump."""
    return Dump(path)


def stats(source: Any, progress: Callable[[int, int], object] | None = None) -> Stats:
    """Stats of a dump given as a path or as a bytes-like object holding a whole dump."""
    if isinstance(source, (str, os.PathLike)):
        with Dump(source) as dump:
            return dump.stats(progress)
    return Stats(_hprof.stats(source, progress=progress))


def iter_records(buffer: Any) -> Iterator[Any]:
    """Top-level records of a whole dump held in any bytes-like object (zero-copy)."""
    return _hprof.records(buffer)


def iter_subrecords(buffer: Any) -> Iterator[Any]:
    """Heap sub-records of a whole dump held in any bytes-like object (zero-copy)."""
    return _hprof.subrecords(buffer)
