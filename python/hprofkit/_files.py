"""File-level helpers over the stream codecs: encode, decode, convert, and a
writer adaptor that trims what is written to it (as Tailor's write() hook).

Sources and destinations are paths, binary file objects, or "-" for
stdin/stdout.  A path destination is written atomically: into a temporary
file beside it, renamed over it only when everything succeeded, removed on
any failure.  The source is never touched."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import itertools
import os
import queue
import sys
import threading
import tempfile
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterator

from ._codec import Converter, Decoder, Encoder
from ._pack import is_pack
from ._dump import detect_compression

CHUNK = 8 << 20
Progress = Callable[[int, int], object]


@dataclass
class Result:
    """What a file operation did: bytes in and out, and Tailor's tag counter."""
    consumed: int
    size: int | None
    output: int
    trimmed: int | None = None
    counter: dict[str, int] = field(default_factory=dict)


@contextlib.contextmanager
def _source(src: Any) -> Iterator[tuple[Iterator[memoryview], int | None]]:
    """Chunks of the source (decompressing gzip/bzip2 sources on the fly) and its size if known."""
    if src == "-":
        yield _read_chunks(sys.stdin.buffer), None
        return
    if isinstance(src, (str, os.PathLike)):
        with open(src, "rb") as f:
            kind = detect_compression(f.read(4))
            f.seek(0)
            size = os.fstat(f.fileno()).st_size
            if kind == "gzip":
                with gzip.GzipFile(fileobj=f) as g:
                    yield _read_chunks(g), None
            elif kind == "bzip2":
                with bz2.BZ2File(f) as b:
                    yield _read_chunks(b), None
            else:
                yield _read_chunks(f), size
        return
    yield _read_chunks(src), None


def _read_chunks(f: IO[bytes]) -> Iterator[memoryview]:
    """Reads into one reused buffer: the codecs consume each chunk before the next read."""
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    readinto = getattr(f, "readinto", None)
    while True:
        if readinto is not None:
            n = readinto(view)
        else:
            data = f.read(CHUNK)
            n = len(data)
            view[:n] = data
        if not n:
            return
        yield view[:n]


@contextlib.contextmanager
def atomic_output(dst: Any) -> Iterator[IO[bytes]]:
    """A binary file to write into; for a path it appears only once complete."""
    if dst == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    if not isinstance(dst, (str, os.PathLike)):
        yield dst
        return
    path = os.fspath(dst)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".partial",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would have created it
        with os.fdopen(fd, "wb") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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
    it has one (no Python bytes in between), else through write()."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f, self.fd, self.written = f, _fileno(f), 0

    def take(self, produce: Callable[[int], Any]) -> None:
        out = produce(self.fd)
        if isinstance(out, int):
            self.written += out
        elif out:
            self.f.write(out)
            self.written += len(out)


def _pump(codec: Any, src: Any, dst: Any, progress: Progress | None) -> tuple[int, int | None, int]:
    """Runs src through codec into dst; returns (consumed, source size, output bytes)."""
    consumed = 0
    with _source(src) as (chunks, size), atomic_output(dst) as f:
        out = _Output(f)
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
    pieces: queue.Queue = queue.Queue(maxsize=4)
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


def encode(src: Any, dst: Any, *, format: str = "hprofkit", level: int | None = None, app_only: bool = False,
           threads: int = 0, strip: Any = None, drop_traces: bool = False,
           progress: Progress | None = None) -> Result:
    """Trims (and compresses) the dump `src` into `dst`; see Encoder (every
    option goes to it, and what a format cannot honour raises there)."""
    encoder = Encoder(format, level=level, app_only=app_only, threads=threads, strip=strip, drop_traces=drop_traces)
    consumed, size, written = _pump(encoder, src, dst, progress)
    return Result(consumed, size, written, encoder.trimmed_bytes, encoder.counter())


def decode(src: Any, dst: Any, *, threads: int = 0, max_block: int = 0, max_record: int = 0,
           progress: Progress | None = None) -> Result:
    """Restores an hprofkit pack or a Tailor mini (zlib, gzip or bare) `src`
    into an HPROF `dst`; max_block and max_record bound memory (see Decoder)."""
    decoder = Decoder(threads=threads, max_block=max_block, max_record=max_record)
    with _source(src) as (chunks, size), atomic_output(dst) as f:
        out = _Output(f)
        chunks = iter(chunks)
        first = next(chunks, None)
        if first is not None and is_pack(bytes(first[:8])):
            # A pack inflates its blocks in its own threads: feed it directly.
            for chunk in itertools.chain([first], chunks):
                out.take(lambda fd: decoder.feed(chunk, fd=fd))
                if progress and size:
                    progress(decoder.bytes_in, size)
        else:
            for piece in _inflating(decoder, itertools.chain([] if first is None else [first], chunks)):
                out.take(lambda fd: decoder.restore(piece, fd=fd))
                if progress and size:
                    progress(decoder.bytes_in, size)
        out.take(lambda fd: decoder.flush(fd=fd))
    return Result(decoder.bytes_in, size, out.written, decoder.mini_bytes, decoder.counter())


def convert(src: Any, dst: Any, *, app_only: bool = False, max_record: int = 0,
            progress: Progress | None = None) -> Result:
    """Android HPROF -> standard HPROF, as hprof-conv ([-z] is app_only); a
    heap record longer than max_record (0: 64 MiB) is streamed, not held."""
    converter = Converter(to_standard=True, app_only=app_only, max_record=max_record)
    consumed, size, written = _pump(converter, src, dst, progress)
    return Result(consumed, size, written)


class EncodeWriter(io.RawIOBase):
    """A binary file object that trims and compresses what is written to it
    into `fileobj` (Tailor's write() hook, in Python).  close() ends the
    stream; the dump written must be complete by then."""

    def __init__(self, fileobj: IO[bytes], *, closefd: bool = False, **options: Any) -> None:
        super().__init__()
        self._out = fileobj
        self._closefd = closefd
        self._encoder = Encoder(**options)

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError("write to a closed encode_writer")
        out = self._encoder.feed(data)
        if out:
            self._out.write(out)
        return memoryview(data).nbytes

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._out.write(self._encoder.flush())
            self._out.flush()
        finally:
            super().close()
            if self._closefd:
                self._out.close()

    def tell(self) -> int:
        return self._encoder.bytes_in

    @property
    def encoder(self) -> Encoder:
        return self._encoder


def encode_writer(fileobj: IO[bytes], **options: Any) -> EncodeWriter:
    """A writable file that trims (and compresses) into fileobj; options as Encoder."""
    return EncodeWriter(fileobj, **options)
