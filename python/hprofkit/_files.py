"""File-level helpers over the stream codecs: encode, decode, convert, and a
writer adaptor that trims what is written to it (as Tailor's write() hook).

Sources and destinations are paths, binary file objects, or "-" for
stdin/stdout.  A path destination is written atomically and never replaces
anything but a regular file (see _output.py); the output may not be the
input file.  The source is never touched."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import queue
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Iterator

from . import _bmd, _hprof
from ._codec import Converter, Decoder, Encoder, encoder_options
from ._compressed import decompressed, detect_compression
from ._output import check_not_same_file, is_path, named, output_file
from ._pack import is_pack
from ._stats import UnfinishedDump, unfinished_of
from ._units import max_output_of
from ._dump import MAGIC_LENGTH, Rewound, read_head
from ._io import Destination, DumpSource, Readable, is_buffer

CHUNK = 8 << 20
Progress = Callable[[int, int], object]


@dataclass
class Result:
    """What a file operation did: bytes in and out, and Tailor's tag counter.
    ``unfinished`` is set when the dump was cut short (a heap dump stops
    without its HEAP_DUMP_END): the output was still written, and holds the
    dump as far as it goes.  Its offsets are the source's for encode() and
    convert(), the restored dump's for decode()."""
    consumed: int
    size: int | None
    output: int
    trimmed: int | None = None
    counter: dict[str, int] = field(default_factory=dict)
    unfinished: UnfinishedDump | None = None
    restored: int | None = None  # decoding a BMD: hashed strings given back from `strings`

    @property
    def incomplete(self) -> bool:
        """Whether the dump was cut short (see ``unfinished``)."""
        return self.unfinished is not None


@contextlib.contextmanager
def _source(src: DumpSource) -> Iterator[tuple[Iterator[Any], int | None]]:
    """Chunks of the source and its size if known.  A source is a path, "-"
    (stdin), a bytes-like object or a binary file object; gzip and bzip2
    sources (told by their magic, whatever the kind) are decompressed on the
    fly."""
    if is_buffer(src):
        view = memoryview(src).cast("B")
        if detect_compression(bytes(view[:MAGIC_LENGTH])) is None:
            yield (view[i:i + CHUNK] for i in range(0, len(view), CHUNK)), len(view)
            return
        src = io.BytesIO(view)
    if isinstance(src, (str, os.PathLike)):
        if src != "-":
            with open(src, "rb") as f:
                kind = detect_compression(f.read(MAGIC_LENGTH))
                f.seek(0)
                if kind:
                    yield decompressed(f, kind), None
                else:
                    yield _read_chunks(f), os.fstat(f.fileno()).st_size
            return
        src = sys.stdin.buffer
    with _stream(src, None) as source:
        yield source


@contextlib.contextmanager
def _stream(f: Readable, size: int | None) -> Iterator[tuple[Iterator[Any], int | None]]:
    """Chunks of binary stream f, decompressed if it starts with a gzip or bzip2 magic."""
    head = read_head(f)
    kind = detect_compression(head)
    rest = Rewound(head, f)
    if kind:
        yield decompressed(rest, kind), None  # type: ignore[arg-type]  # a RawIOBase reads as IO[bytes] does
    else:
        yield _read_chunks(rest), size


def _read_chunks(f: Readable) -> Iterator[memoryview]:
    """Reads into one reused buffer: the codecs consume each chunk before the
    next read.  One system call per chunk where the file allows (readinto1):
    readinto() on a pipe would wait for a whole chunk, and a signal (Ctrl-C,
    SIGTERM) that lands between two of its reads is not seen until the pipe
    delivers more."""
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    readinto = getattr(f, "readinto1", None) or getattr(f, "readinto", None)
    while True:
        if readinto is not None:
            n = readinto(view)
        else:
            data = f.read(CHUNK) or b""
            n = len(data)
            view[:n] = data
        if not n:
            return
        yield view[:n]


def _fileno(f: IO[bytes]) -> int:
    """The descriptor under a binary file, flushed, or -1 when it has none."""
    try:
        fd = f.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return -1
    f.flush()
    return fd


class _Output:
    """Writes codec output to a file: straight to its descriptor from C when
    it has one (no Python bytes in between), else through write().  A failed
    write names the destination."""

    def __init__(self, f: IO[bytes], dst: Destination) -> None:
        self.f, self.fd, self.written = f, _fileno(f), 0
        name = os.fspath(dst) if is_path(dst) else getattr(f, "name", None)
        if not isinstance(name, str):
            name = "standard output" if f is sys.stdout.buffer else "the output"
        self.name: str = name

    def take(self, produce: Callable[[int], bytes | int]) -> None:
        try:
            out = produce(self.fd)
            if isinstance(out, int):
                self.written += out
            elif out:
                self.f.write(out)
                self.written += len(out)
        except OSError as exc:
            raise named(exc, self.name) from None


@contextlib.contextmanager
def _files(src: DumpSource, dst: Destination) -> Iterator[tuple[Iterator[Any], int | None, _Output]]:
    """The source's chunks and size, and the output, once dst is known not to be src."""
    check_not_same_file(src, dst)
    with _source(src) as (chunks, size), output_file(dst) as f:
        yield chunks, size, _Output(f, dst)


def _pump(codec: Encoder | Converter, src: DumpSource, dst: Destination,
          progress: Progress | None) -> tuple[int, int | None, int]:
    """Runs src through codec into dst; returns (consumed, source size, output bytes)."""
    consumed = 0
    with _files(src, dst) as (chunks, size, out):
        for chunk in chunks:
            out.take(lambda fd: codec.feed(chunk, fd=fd))
            consumed += len(chunk)
            if progress and size:
                progress(consumed, size)
        out.take(lambda fd: codec.flush(fd=fd))
    return consumed, size, out.written


def _inflating(decoder: Decoder, chunks: Iterator[Any]) -> Iterator[bytes]:
    """Inflates in a second thread (zlib releases the GIL), so that restoring
    and writing overlap inflation.  Yields the mini stream in bounded pieces."""
    pieces: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=4)
    stop = threading.Event()

    def produce() -> None:
        try:
            for chunk in chunks:
                for piece in decoder.inflate(chunk):
                    while not stop.is_set():
                        try:
                            pieces.put(piece, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
            pieces.put(None)
        except BaseException as exc:  # handed over to the consumer
            pieces.put(exc)

    worker = threading.Thread(target=produce, name="hprofkit-inflate", daemon=True)
    worker.start()
    try:
        while True:
            piece = pieces.get()
            if piece is None:
                return
            if isinstance(piece, BaseException):
                raise piece
            yield piece
    finally:
        stop.set()
        worker.join()


def encode(src: DumpSource, dst: Destination, *, format: str = "hprofkit", level: int | None = None,
           app_only: bool = False, threads: int = 0, strip: str | Iterable[str | int] | None = None,
           drop_traces: bool = False, progress: Progress | None = None) -> Result:
    """Trims (and compresses) the dump `src` into `dst`; see Encoder (every
    option goes to it, and what a format cannot honour raises there)."""
    if format == "bmd":  # read twice: a path or a buffer again, anything else through a spool
        encoder_options(format, level=level, app_only=app_only, threads=threads, strip=strip, drop_traces=drop_traces)
        with _files(src, dst) as (chunks, size, out):
            return _run_passes(_hprof.BmdEncoder(), src, chunks, size, out, progress)
    encoder = Encoder(format, level=level, app_only=app_only, threads=threads, strip=strip, drop_traces=drop_traces)
    consumed, size, written = _pump(encoder, src, dst, progress)
    return Result(consumed, size, written, encoder.trimmed_bytes, encoder.counter(), encoder.unfinished)


def _peek(chunks: Iterator[Any], n: int) -> tuple[bytes, Iterator[Any]]:
    """The first n bytes of the chunks (fewer if there are not so many), and
    the chunks from the first byte again.  A chunk is copied only when the
    first is too short to hold them (a pipe's first read can be)."""
    parts: list[bytes] = []
    got = 0
    for chunk in chunks:
        if not parts and len(chunk) >= n:
            return bytes(chunk[:n]), _Again([chunk], chunks)
        parts.append(bytes(chunk))  # the next read reuses the chunk's buffer
        got += len(chunk)
        if got >= n:
            break
    head = b"".join(parts)
    return head[:n], _Again([head] if head else [], chunks)


class _Again:
    """The chunks `first`, then those of `rest`; close() lets go of both
    (and of the read buffer they share)."""

    def __init__(self, first: list[Any], rest: Iterator[Any]) -> None:
        self._rest = rest
        self._chunks: Iterator[Any] = itertools.chain(first, rest)

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        return next(self._chunks)

    def close(self) -> None:
        close = getattr(self._rest, "close", None)
        if close is not None:
            close()
        self._chunks = iter(())


def _run_passes(core: _hprof.BmdEncoder | _hprof.BmdDecoder, src: DumpSource, chunks: Iterator[Any],
                size: int | None, out: _Output, progress: Progress | None) -> Result:
    """Runs a BMD filter (it asks for its input more than once) over src, of
    which `chunks` are the reading begun, into out."""
    with _bmd.reread(src, chunks, size, _source) as passes:
        _bmd.run_passes(core, passes, out.take, progress, size)
    restored = core.restored if isinstance(core, _hprof.BmdDecoder) else None
    return Result(core.input_size, size, out.written, None, core.counter(), None, restored)


def decode(src: DumpSource, dst: Destination, *, threads: int = 0, max_block: int = 0, max_record: int = 0,
           strings: Any = None, progress: Progress | None = None, max_output: int | str | None = None) -> Result:
    """Restores an hprofkit pack, a Tailor mini (zlib, gzip or bare) or a
    Badoo BMD `src` into an HPROF `dst`; max_block and max_record bound
    memory, max_output what is written (RestoreLimitError beyond it), strings
    gives a BMD's hashed strings back (see Decoder)."""
    decoder = Decoder(threads=threads, max_block=max_block, max_record=max_record, max_output=max_output)
    names = None if strings is None else _bmd.names_from(strings)
    with _files(src, dst) as (chunks, size, out):
        head, chunks = _peek(iter(chunks), _bmd.HEAD)
        if _bmd.is_bmd(head):
            return _run_passes(_hprof.BmdDecoder(names=names, max_output=max_output_of(max_output)), src, chunks,
                               size, out, progress)
        if is_pack(head[:8]):
            if size is not None:  # a pack given whole: its end record says what it restores to
                _hprof.pack_check_end(_tail(src, size), size, max_output_of(max_output))
            # A pack inflates its blocks in its own threads: feed it directly.
            for chunk in chunks:
                out.take(lambda fd: decoder.feed(chunk, fd=fd))
                if progress and size:
                    progress(decoder.bytes_in, size)
        else:
            for piece in _inflating(decoder, chunks):
                out.take(lambda fd: decoder.restore(piece, fd=fd))
                if progress and size:
                    progress(decoder.bytes_in, size)
        out.take(lambda fd: decoder.flush(fd=fd))
    return Result(decoder.bytes_in, size, out.written, decoder.mini_bytes, decoder.counter(), decoder.unfinished)


def _tail(src: DumpSource, size: int) -> bytes:
    """The last bytes (up to a pack's end record) of a source of known size,
    which _source gives only for a buffer or a path read as it is."""
    n = min(size, _hprof.PACK_END_MAX)
    if is_buffer(src):
        return bytes(memoryview(src).cast("B")[size - n:])
    with open(src, "rb") as f:  # type: ignore[arg-type]  # a path: a stream has no size
        return os.pread(f.fileno(), n, size - n)


def convert(src: DumpSource, dst: Destination, *, app_only: bool = False, max_record: int = 0,
            progress: Progress | None = None) -> Result:
    """Android HPROF -> standard HPROF, as hprof-conv ([-z] is app_only); a
    heap record longer than max_record (0: 64 MiB) is streamed, not held."""
    converter = Converter(to_standard=True, app_only=app_only, max_record=max_record)
    consumed, size, written = _pump(converter, src, dst, progress)
    return Result(consumed, size, written, unfinished=unfinished_of(converter.unfinished))


class _Abandoned(Exception):
    """Thrown into the output of an encode_writer that will not be finished."""


class EncodeWriter(io.RawIOBase):
    """A binary file object that trims and compresses what is written to it
    (Tailor's write() hook, in Python) into `fileobj`: a path (written
    atomically, as encode() writes), "-" or a binary file object.

    close() ends the stream; the dump written must be complete by then.  If
    it is not, or if the `with` block raises, or if the writer is dropped
    unclosed (a ResourceWarning), the output is abandoned: a path is never
    created, and a file object is cut back to where it was (when it can
    seek).  The exception of a `with` block goes through unchanged."""

    def __init__(self, fileobj: Destination, *, closefd: bool = False, **options: Any) -> None:
        super().__init__()
        try:
            self._encoder = Encoder(**options)
            self._closefd = closefd
            self._output: contextlib.AbstractContextManager[IO[bytes]] | None = None
            self._out: IO[bytes]
            if isinstance(fileobj, (str, os.PathLike)):
                self._output = output_file(fileobj)
                self._out = self._output.__enter__()
            else:
                self._out = fileobj
        except BaseException:
            super().close()  # nothing to abandon
            if closefd and not isinstance(fileobj, (str, os.PathLike)):
                fileobj.close()  # it was handed over to us
            raise
        self._start = _position(self._out)

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError("write to a closed encode_writer")
        out = self._encoder.feed(data)
        if isinstance(out, bytes) and out:
            self._out.write(out)
        return memoryview(data).nbytes

    def close(self) -> None:
        """Ends the stream and commits the output (abandoned if that fails)."""
        if self.closed:
            return
        try:
            out = self._encoder.flush()
            if isinstance(out, bytes):
                self._out.write(out)
            self._out.flush()
        except BaseException:
            self._abandon()
            raise
        super().close()
        if self._output:
            self._output.__exit__(None, None, None)
        elif self._closefd:
            self._out.close()

    def _abandon(self) -> None:
        """Closes without finishing the stream and takes back what was written."""
        if self.closed:
            return
        super().close()
        if self._output:
            self._output.__exit__(_Abandoned, _Abandoned(), None)
            return
        if self._start is not None:
            with contextlib.suppress(OSError, ValueError):
                self._out.seek(self._start)
                self._out.truncate()
        if self._closefd:
            self._out.close()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self._abandon()

    def __del__(self) -> None:
        if not self.closed:
            warnings.warn(f"encode_writer into {self._out!r} dropped unclosed: its output is abandoned",
                          ResourceWarning, source=self)
            self._abandon()

    def tell(self) -> int:
        return self._encoder.bytes_in

    @property
    def encoder(self) -> Encoder:
        return self._encoder


def _position(f: IO[bytes]) -> int | None:
    """Where a seekable file is, else None."""
    try:
        return f.tell() if f.seekable() else None
    except (OSError, ValueError, AttributeError):
        return None


def encode_writer(fileobj: Destination, **options: Any) -> EncodeWriter:
    """A writable file that trims (and compresses) into fileobj (a path, "-"
    or a binary file); options as Encoder."""
    return EncodeWriter(fileobj, **options)
