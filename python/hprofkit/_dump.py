"""Opening dumps: a Dump is a buffer holding a whole dump, walked by the C core.

What it holds, by source:
 - a path, or a regular file open at its start (sys.stdin redirected from a
   file included): an mmap of the file, read-only, zero-copy;
 - a bytes-like object (bytes, bytearray, memoryview, mmap) or an
   io.BytesIO: that memory itself, no copy (a BytesIO's current value);
 - any other binary stream (a pipe, a socket, a file not at its start): its
   bytes from the current position, spooled into an anonymous temporary file
   which is then mapped, so memory stays bounded whatever the dump's size.
Compressed inputs (gzip, bzip2; told by their magic bytes, not by names)
are streamed into an anonymous temporary file the same way, and so are
hprofkit packs, Tailor minis (zlib, gzip or bare) and Badoo BMDs, restored
into one:
whatever the source, the Dump holds a plain HPROF dump."""

from __future__ import annotations

import datetime as _dt
import io
import mmap
import os
import shutil
import stat
import tempfile
import threading
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator, Optional

from . import _hprof
from ._bmd import is_bmd
from ._codec import TAILOR_MAGIC, Decoder, sniff
from ._compressed import decompressed, detect_compression  # noqa: F401 - detect_compression is re-exported
from ._errors import FormatError, NoHeapDumpError
from ._io import DumpSource, Readable, is_buffer, open_regular
from ._mapping import Mapping, MappingArg, warn_misfit
from ._pack import is_pack
from ._stats import VERSION_NAMES, HeapDump, Stats, heap_dumps_of
from ._units import max_output_of

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from ._heap import Heap
    from ._progress import ProgressArg

_COPY_CHUNK = 1 << 20
_RESTORE_CHUNK = 8 << 20
MAGIC_LENGTH = 4  # bytes detect_compression needs
def _open_regular(path: str) -> IO[bytes]:
    """The file at path, opened for reading; FormatError (without blocking
    on a FIFO) unless it is a regular file, which is what gets mapped."""
    def refuse(kind: str) -> FormatError:
        return FormatError(f"not an HPROF file: {path} is {kind}, not a regular file (stream it into "
                           f"encode/convert with -i -, or save it to a file first)", 0)
    return open_regular(path, refuse)


def read_head(f: Readable, n: int = MAGIC_LENGTH) -> bytes:
    """Up to n bytes from the stream, fewer only at its end (a pipe may
    hand over fewer bytes per read)."""
    head = b""
    while len(head) < n:
        more = f.read(n - len(head))
        if not more:
            break
        head += more
    return head


class Rewound(io.RawIOBase):
    """A binary stream whose first bytes were already read (to look at the
    magic): gives them back, then the rest of the stream.  tell() counts the
    bytes given."""

    def __init__(self, head: bytes, rest: Readable) -> None:
        super().__init__()
        self._head, self._rest, self._pos = head, rest, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        view = memoryview(b).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
        else:
            read = getattr(self._rest, "read1", None) or self._rest.read  # one system call: see _files._read_chunks
            data = read(len(view))
            n = len(data or b"")
            view[:n] = data or b""
        self._pos += n
        return n

    def tell(self) -> int:
        return self._pos


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


def encoded_kind(head: bytes) -> str | None:
    """'hprofkit pack', 'Tailor mini' or 'Badoo BMD' when head (the first
    bytes of a dump, decompressed; 18 tell them all) starts one (a mini: zlib,
    gzip or bare), else None."""
    if is_pack(head[:8]) and len(head) >= 8:
        return "hprofkit pack"
    if is_bmd(head):
        return "Badoo BMD"
    if head.startswith(TAILOR_MAGIC) or sniff(head[:2]) == "zlib":
        return "Tailor mini"
    return None


def _restore(view: memoryview, name: str, max_output: int | str | None) -> IO[bytes]:
    """The pack, mini or BMD in view restored into an anonymous temporary
    file, in bounded pieces (Decoder writes each straight to the file), no
    larger than max_output allows (see Decoder)."""
    if is_pack(bytes(view[:8])):  # its end record says what it restores to: a bomb is refused now
        _hprof.pack_check_end(view[-_hprof.PACK_END_MAX:], len(view), max_output_of(max_output))
    tmp = tempfile.TemporaryFile(prefix="hprofkit-")
    try:
        decoder, fd = Decoder(max_output=max_output), tmp.fileno()
        try:
            for start in range(0, len(view), _RESTORE_CHUNK):
                decoder.feed(view[start:start + _RESTORE_CHUNK], fd=fd)
            decoder.flush(fd=fd)
        except OSError as exc:
            raise OSError(exc.errno, f"{exc.strerror or exc} while restoring {name} into a temporary file "
                                     f"in {tempfile.gettempdir()} (set TMPDIR elsewhere?)") from None
    except BaseException:
        tmp.close()
        raise
    return tmp


def _spool(f: Any, kind: str | None, name: str) -> IO[bytes]:
    """The rest of stream f (whose compression is `kind`, named `name` in
    errors) in an anonymous temporary file."""
    if kind:
        return _decompress_to_temp(f, kind, name)
    tmp = tempfile.TemporaryFile(prefix="hprofkit-")
    try:
        shutil.copyfileobj(f, tmp, _COPY_CHUNK)
        tmp.flush()
    except BaseException:
        tmp.close()
        raise
    return tmp


def _mappable(f: Any) -> bool:
    """Whether f is a regular file open at its start (so its mmap is the stream)."""
    try:
        return stat.S_ISREG(os.fstat(f.fileno()).st_mode) and f.tell() == 0
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False


def _map_file(f: IO[bytes]) -> mmap.mmap:
    """A read-only mmap of the whole regular file f."""
    if os.fstat(f.fileno()).st_size == 0:
        raise FormatError("not an HPROF file: it is empty", 0)
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


class Dump:
    """An HPROF dump held in memory: a path's or a file's mmap, or a buffer
    (see the module's docstring for each kind of source).  Use as a context
    manager.

    Records and sub-records it yields are views into the buffer and hold its
    export: while any is alive an mmap refuses to close
    (``dump.buffer.close()`` raises BufferError), so nothing can read freed
    memory.  ``Dump.close()`` then hands the buffer over to them: it is
    released when the last of them is freed.  A file object passed in is
    never closed by the Dump.

    A Dump may be shared by threads; close() waits for no walk: walks under
    way keep the buffer until they end."""

    def __init__(self, source: DumpSource, *, max_output: int | str | None = None) -> None:
        self.path: str | None = None
        self.compression: str | None = None
        self._file: IO[bytes] | None = None  # a file the Dump opened or spooled, closed with it
        self._map: Any = None
        self._lock = threading.Lock()  # between taking a view of the buffer and close()
        self._heap_dumps: list[HeapDump] | None = None
        self._max_output = max_output_of(max_output) or None  # checked before anything is read
        try:
            self._map = self._restored(self._open(source), source)
            self.size: int = len(memoryview(self._map))
            self.magic, version, self.id_size, self.timestamp, self.header_length = _hprof.parse_header(self._map)
        except BaseException:
            self.close()
            raise
        self.version: str = VERSION_NAMES[version]

    def _open(self, source: Any) -> Any:
        """The buffer holding the dump of `source`; sets path, compression and _file."""
        if is_buffer(source):
            self.compression = detect_compression(bytes(memoryview(source)[:MAGIC_LENGTH]))
            if not self.compression:
                return source
            source = io.BytesIO(source)
        if isinstance(source, io.BytesIO) and not detect_compression(source.getbuffer()[:MAGIC_LENGTH].tobytes()):
            return source.getvalue()[source.tell():] if source.tell() else source.getvalue()
        if isinstance(source, (str, os.PathLike)):
            self.path = os.fspath(source)
            f: IO[bytes] = _open_regular(self.path)
            self._file = f
        else:
            f = source
            name = getattr(f, "name", None)
            self.path = name if isinstance(name, str) else None
        if _mappable(f):
            self.compression = detect_compression(read_head(f))
            f.seek(0)
            if not self.compression:
                return _map_file(f)
        head = read_head(f)
        self.compression = detect_compression(head)
        spooled = _spool(Rewound(head, f), self.compression, self.path or "the stream")
        if self._file is not None:
            self._file.close()
        self._file = spooled
        return _map_file(spooled)

    def _restored(self, data: Any, source: Any) -> Any:
        """data, or when it holds an hprofkit pack or a Tailor mini, the dump
        restored from it (mapped from an anonymous temporary file)."""
        with memoryview(data) as raw, raw.cast("B") as view:
            kind = encoded_kind(bytes(view[:len(TAILOR_MAGIC)]))
            if kind is None:
                return data
            restored = _restore(view, self.path or "the stream", self._max_output)
        if data is not source and isinstance(data, mmap.mmap):
            data.close()  # the encoded bytes are read: their mapping and file go
        if self._file is not None:
            self._file.close()
        self._file = restored
        self.compression = f"{kind}, {self.compression}" if self.compression else kind
        return _map_file(restored)

    @property
    def buffer(self) -> Any:
        """The dump's bytes (decompressed): an mmap, or the buffer given."""
        with self._lock:
            if self._map is None:
                raise ValueError("I/O operation on a closed Dump")
            return self._map

    def _view(self) -> memoryview:
        """A view of the buffer: its export keeps the mapping until released,
        even if another thread closes the Dump meanwhile."""
        with self._lock:
            if self._map is None:
                raise ValueError("I/O operation on a closed Dump")
            return memoryview(self._map)

    @property
    def datetime(self) -> _dt.datetime:
        """The header timestamp as an aware UTC datetime."""
        return _dt.datetime.fromtimestamp(self.timestamp / 1000, _dt.timezone.utc)

    @property
    def heap_dumps(self) -> list[HeapDump]:
        """The heap dumps of the file, in order (hprofkit.HeapDump: index,
        offset, end, records, bytes and counts).  Found by one pass over the
        dump the first time (or taken from an earlier stats())."""
        if self._heap_dumps is None:
            with self._view() as view:
                self._heap_dumps = heap_dumps_of(_hprof.stats(view, heap_dump=-1))
        return self._heap_dumps

    def _heap_dump_index(self, heap_dump: int) -> int:
        """heap_dump as an index from 0; negative ones count from the end."""
        if not isinstance(heap_dump, int) or isinstance(heap_dump, bool):
            raise TypeError(f"heap_dump must be an int, not {type(heap_dump).__name__}")
        count = len(self.heap_dumps)
        index = heap_dump + count if heap_dump < 0 else heap_dump
        if not 0 <= index < count:
            raise NoHeapDumpError(f"no heap dump {heap_dump}: the file holds {count}"
                                  if count else "the file holds no heap dump", self.header_length)
        return index

    def records(self) -> Iterator[_hprof.Record]:
        """Top-level records in file order (hprofkit.Record), zero-copy."""
        with self._view() as view:
            return _hprof.records(view)

    def subrecords(self, heap_dump: int | None = None) -> Iterator[_hprof.SubRecord]:
        """The heap sub-records (hprofkit.SubRecord) of every heap dump, or of
        heap dump number heap_dump only (from 0; negative counts from the end)."""
        index = None if heap_dump is None else self._heap_dump_index(heap_dump)
        with self._view() as view:
            if index is None:
                return _hprof.subrecords(view)
            return _hprof.subrecords(view, heap_dump=index)

    def stats(self, progress: Callable[[int, int], object] | None = None, *,
              heap_dump: int | None = None, mapping: MappingArg = None) -> Stats:
        """Tallies and class histograms (see hprofkit.Stats) of heap dump
        number heap_dump (from 0; negative counts from the end), or of the
        first when None.  With a mapping (a hprofkit.Mapping or the path of
        a mapping.txt), class names are the clear ones; a mapping that
        renames no class of the dump is a MappingWarning."""
        index = 0 if heap_dump is None else self._heap_dump_index(heap_dump)
        mapping = Mapping.of(mapping)
        with self._view() as view:
            stats = Stats(_hprof.stats(view, progress=progress, heap_dump=index), index, mapping)
        self._heap_dumps = stats.heap_dumps
        if mapping is not None:
            warn_misfit(mapping, self.path or "the dump", stats.mapping_matches)
        return stats

    def heap(self, *, heap_dump: int = 0, size_model: Optional[str] = None, semantics: str = "hprofkit",
             mapping: MappingArg = None, progress: ProgressArg = None) -> Heap:
        """The object graph of one heap dump (hprofkit.Heap): heap_dump picks
        which (0, the first, as VisualVM; negative counts from the end).
        size_model: 'jvm' (the JVM's own object sizes: the layout, header
        and array sizes, the dump's addresses show; VisualVM's guess when
        they show none), 'visualvm' (VisualVM's shallow sizes, compressed
        oops guessed on 64-bit dumps), 'uncompressed' (VisualVM's with
        references at id size), or None: 'jvm' under semantics 'hprofkit',
        'visualvm' under 'visualvm'; heap.layout says which layout and why
        (docs/reference/behaviour.md).  semantics is the reference
        graph behind paths and retained sizes: 'hprofkit' (Reference
        referents are not strong; no instance-to-class edges; see
        docs/reachability.md) or 'visualvm' (VisualVM's graph, roots and
        retained sizes exactly).  mapping (a hprofkit.Mapping or the path of
        a mapping.txt) gives an obfuscated dump its clear names (see Heap).
        The heap keeps the mapping alive: it stays usable after the Dump is
        closed.  progress: the "index" stage's progress (bytes of the file
        walked), as open_heap takes it."""
        from ._heap import Heap
        from ._progress import reporting
        if isinstance(heap_dump, int) and heap_dump < 0:
            heap_dump = self._heap_dump_index(heap_dump)  # counted from the end, as stats() counts
        options: dict[str, Any] = dict(heap_dump=heap_dump, size_model=size_model, semantics=semantics,
                                       mapping=mapping)
        with reporting(progress) as reporter:
            if reporter is None:
                return Heap._open(self.buffer, self.path, **options)
            size = len(self.buffer)
            reporter(0, size, "index")
            heap = Heap._open(self.buffer, self.path, progress=reporter.stage("index"), **options)
            reporter(size, size, "index")
            return heap

    def close(self) -> None:
        """Closes the dump.  The buffer is released now, or, while records
        still point into it, when the last of them is freed."""
        with self._lock:
            mapping, self._map = self._map, None
            file, self._file = self._file, None
        if isinstance(mapping, mmap.mmap):
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
        source = repr(self.path) if self.path is not None else "<buffer>"
        return f"<hprofkit.Dump {source} {self.magic} id_size={self.id_size} {state}>"


def open(source: DumpSource, *, max_output: int | str | None = None) -> Dump:  # noqa: A001 - mirrors gzip.open
    """Opens an HPROF dump (plain, gzip or bzip2) as a Dump: from a path, a
    bytes-like object, an io.BytesIO or a binary file object (see Dump).  A
    pack, mini or BMD is restored first, into at most max_output bytes (None:
    the larger of 4 GiB and 1,000 times it; RestoreLimitError beyond)."""
    return Dump(source, max_output=max_output)


def stats(source: DumpSource, progress: Callable[[int, int], object] | None = None, *,
          heap_dump: int | None = None, mapping: MappingArg = None) -> Stats:
    """Stats of a dump given as open() takes it (see Dump.stats)."""
    mapping = Mapping.of(mapping)  # a bad mapping fails before the dump is read
    with Dump(source) as dump:
        return dump.stats(progress, heap_dump=heap_dump, mapping=mapping)


def iter_records(buffer: Buffer) -> Iterator[_hprof.Record]:
    """Top-level records of a whole dump held in any bytes-like object (zero-copy)."""
    return _hprof.records(buffer)


def iter_subrecords(buffer: Buffer, heap_dump: int | None = None) -> Iterator[_hprof.SubRecord]:
    """Heap sub-records of a whole dump held in any bytes-like object
    (zero-copy): of every heap dump, or of heap dump number heap_dump only."""
    return _hprof.subrecords(buffer, heap_dump=heap_dump)
