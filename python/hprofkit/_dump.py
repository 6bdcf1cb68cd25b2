"""Opening dumps: a Dump is an mmap of the file, walked by the C core.

Compressed inputs (gzip, bzip2; told by their magic bytes, not their names)
are first streamed into an anonymous temporary file, which is then mapped:
every later pass is zero-copy and the memory used stays bounded, whatever the
dump's size."""

from __future__ import annotations

import builtins
import datetime as _dt
import errno
import mmap
import os
import stat
import tempfile
import threading
from typing import IO, Any, Callable, Iterator

from . import _hprof
from ._compressed import decompressed, detect_compression  # noqa: F401 - detect_compression is re-exported
from ._errors import FormatError
from ._stats import VERSION_NAMES, Stats

_FILE_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO",
               stat.S_IFSOCK: "a socket"}


def _open_regular(path: str) -> IO[bytes]:
    """The file at path, opened for reading; FormatError (without blocking
    on a FIFO) unless it is a regular file, which is what gets mapped."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(mode):
            kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise FormatError(f"not an HPROF file: {path} is {kind}, not a regular file (stream it into "
                              f"encode/convert with -i -, or save it to a file first)", 0)
        os.set_blocking(fd, True)
        return builtins.open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _decompress_to_temp(f: IO[bytes], kind: str, path: str) -> IO[bytes]:
    """Streams a compressed file into an anonymous temporary file.  A failed
    write there is an OSError about that disk, not about the input."""
    tmp = tempfile.TemporaryFile(prefix="hprofkit-")
    try:
        for piece in decompressed(f, kind):
            try:
                tmp.write(piece)
            except OSError as exc:
                raise OSError(exc.errno, f"{exc.strerror or exc} while unpacking {path} into a temporary "
                                         f"file in {tempfile.gettempdir()} (set TMPDIR elsewhere?)") from None
        tmp.flush()
    except BaseException:
        tmp.close()
        raise
    return tmp


class Dump:
    """An HPROF dump mapped into memory.  Use as a context manager.

    Records and sub-records it yields are views into the mapping and hold its
    buffer export: while any is alive the mmap itself refuses to close
    (``dump.buffer.close()`` raises BufferError), so nothing can read freed
    memory.  ``Dump.close()`` then hands the mapping over to them: it is
    unmapped when the last of them is freed.

    A Dump may be shared by threads; close() waits for no walk: walks under
    way keep the mapping until they end."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._file: IO[bytes] | None = None
        self._map: mmap.mmap | None = None
        self._lock = threading.Lock()  # between taking a view of the mapping and close()
        f = _open_regular(self.path)
        try:
            self.compression = detect_compression(f.read(4))
            f.seek(0)
            if self.compression:
                compressed, f = f, _decompress_to_temp(f, self.compression, self.path)
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
        with self._lock:
            if self._map is None:
                raise ValueError("I/O operation on a closed Dump")
            return self._map

    def _view(self) -> memoryview:
        """A view of the mapping: its export keeps the mapping until released,
        even if another thread closes the Dump meanwhile."""
        with self._lock:
            if self._map is None:
                raise ValueError("I/O operation on a closed Dump")
            return memoryview(self._map)

    @property
    def datetime(self) -> _dt.datetime:
        """The header timestamp as an aware UTC datetime."""
        return _dt.datetime.fromtimestamp(self.timestamp / 1000, _dt.timezone.utc)

    def records(self) -> Iterator[Any]:
        """Top-level records in file order (hprofkit.Record), zero-copy."""
        with self._view() as view:
            return _hprof.records(view)

    def subrecords(self) -> Iterator[Any]:
        """Every heap sub-record of every HEAP_DUMP / HEAP_DUMP_SEGMENT (hprofkit.SubRecord)."""
        with self._view() as view:
            return _hprof.subrecords(view)

    def stats(self, progress: Callable[[int, int], object] | None = None) -> Stats:
        """Tallies and class histogram (see hprofkit.Stats)."""
        with self._view() as view:
            return Stats(_hprof.stats(view, progress=progress))

    def heap(self, *, heap_dump: int = 0, size_model: str = "visualvm", semantics: str = "hprofkit") -> Any:
        """The object graph of one heap dump (hprofkit.Heap): heap_dump picks
        which (0, the first, as VisualVM); size_model is 'visualvm' (its
        shallow sizes, compressed oops guessed on 64-bit dumps) or
        'uncompressed' (references at id size).  semantics is the reference
        graph behind paths and retained sizes: 'hprofkit' (Reference
        referents are not strong; no instance-to-class edges; see
        docs/reachability.md) or 'visualvm' (VisualVM's graph, roots and
        retained sizes exactly).  The heap keeps the mapping alive: it stays
        usable after the Dump is closed."""
        return _hprof.Heap(self.buffer, heap_dump=heap_dump, size_model=size_model, semantics=semantics)

    def close(self) -> None:
        """Closes the dump.  The mapping is released now, or, while records
        still point into it, when the last of them is freed."""
        with self._lock:
            mapping, self._map = self._map, None
            file, self._file = self._file, None
        if mapping is not None:
            try:
                mapping.close()
            except BufferError:
                pass  # live views keep the mmap object, which unmaps itself when freed
        if file is not None:
            file.close()

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
