"""Badoo's BMD format (docs/bmd.md): encode(format="bmd") and the decoding
of a BMD, told apart by its first bytes.

The C filters (BmdEncoder, BmdDecoder) read their input more than once, as
Badoo's own tools do: a path or a buffer is read again for each pass; any
other source (standard input, a pipe, a compressed file) is first spooled
into an anonymous temporary file, so memory stays bounded.  The decoder can
give hashed strings back from the class and field names of the app's jars,
apks and dex files, or from text files of names, one a line."""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
import zipfile
from typing import IO, TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Iterator, overload

from ._io import is_buffer

if TYPE_CHECKING:
    from typing_extensions import Buffer

    from ._hprof import _BmdFilter

HEAD = 18  # bytes that tell a BMD: version 1, the magic's length, "JAVA PROFILE 1.0"
CHUNK = 8 << 20
Chunks = Callable[[], ContextManager[Iterator[Any]]]


def is_bmd(head: bytes) -> bool:
    """Whether a file starting with `head` (at least HEAD bytes) is a BMD."""
    return len(head) >= HEAD and head[0] == 1 and 16 <= head[1] <= 18 and head[2:HEAD] == b"JAVA PROFILE 1.0"


# ---- names to restore hashed strings from ----------------------------------------------

def _java_bytes(text: str) -> bytes:
    """A Java String's getBytes(): UTF-8, a lone surrogate as '?'."""
    return text.encode("utf-8", "replace")


def _mutf8(raw: bytes) -> str:
    """A dex string (modified UTF-8: NUL as C0 80, supplementary characters as surrogate pairs)."""
    text = raw.replace(b"\xc0\x80", b"\0").decode("utf-8", "surrogatepass")
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _uleb128(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def dex_names(data: bytes) -> Iterator[str]:
    """What Badoo's decruncher reads from a dex: each class's name (dotted)
    and the names of the fields it defines.  ValueError for a broken dex."""
    try:
        (string_count, strings_at, types_at) = struct.unpack_from("<II4xI", data, 56)
        (fields_at,) = struct.unpack_from("<I", data, 84)
        (classes, classes_at) = struct.unpack_from("<II", data, 96)

        def string(index: int) -> str:
            if index >= string_count:
                raise ValueError("string index out of range")
            (at,) = struct.unpack_from("<I", data, strings_at + 4 * index)
            _, at = _uleb128(data, at)
            end = data.index(b"\0", at)
            return _mutf8(data[at:end])

        def type_name(index: int) -> str:
            (descriptor,) = struct.unpack_from("<I", data, types_at + 4 * index)
            return string(descriptor)

        for i in range(classes):
            class_idx, class_data = struct.unpack_from("<I20xI", data, classes_at + 32 * i)
            yield type_name(class_idx)[1:-1].replace("/", ".")
            if class_data == 0:
                continue
            statics, pos = _uleb128(data, class_data)
            instances, pos = _uleb128(data, pos)
            _, pos = _uleb128(data, pos)
            _, pos = _uleb128(data, pos)
            for count in (statics, instances):
                field = 0
                for _ in range(count):
                    diff, pos = _uleb128(data, pos)
                    _, pos = _uleb128(data, pos)
                    field += diff
                    (name_idx,) = struct.unpack_from("<I", data, fields_at + 8 * field + 4)
                    yield string(name_idx)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a readable dex file ({exc})") from None


def _zip_names(z: zipfile.ZipFile) -> Iterator[str]:
    """A jar's classes (both as the JVM names them, com/x/Y, and dotted, as
    ART's dumps do), and the names in an apk's dex files."""
    for entry in z.namelist():
        if entry.endswith(".class"):
            name = entry[:-len(".class")]
            yield name
            yield name.replace("/", ".")
        elif entry.startswith("classes") and entry.endswith(".dex"):
            yield from dex_names(z.read(entry))


def names_from(sources: Iterable[Any]) -> list[bytes]:
    """The strings of `sources` (paths of jars, apks, dex files or text
    files of one name a line, told apart by their content), each once, in
    the order they come: a later one sharing a hash and length with an
    earlier one wins, as in Badoo's decruncher."""
    if isinstance(sources, (str, bytes, os.PathLike)):
        raise TypeError("strings must be a list of paths, not one path")
    found: dict[bytes, None] = {}
    for source in sources:
        path = os.fspath(source)
        with open(path, "rb") as f:
            head = f.read(8)
            f.seek(0)
            try:
                if head.startswith(b"PK\x03\x04"):
                    with zipfile.ZipFile(f) as z:
                        names: Iterable[str] = list(_zip_names(z))
                elif head.startswith(b"dex\n"):
                    names = list(dex_names(f.read()))
                else:
                    names = [line.rstrip(b"\r\n").decode("utf-8", "replace") for line in f if line.strip(b"\r\n")]
            except (zipfile.BadZipFile, ValueError) as exc:
                raise ValueError(f"cannot read names from {path}: {exc}") from None
        found.update((_java_bytes(name), None) for name in names)
    return list(found)


# ---- passes ---------------------------------------------------------------------------

def run_passes(core: _BmdFilter, chunks: Chunks, take: Callable[[Callable[[int], bytes | int]], None],
               progress: Callable[[int, int], object] | None = None, size: int | None = None) -> None:
    """Feeds the whole input to `core` (a BmdEncoder or BmdDecoder) as often
    as it asks.  `chunks()` opens the input from its first byte; `take`
    hands each call's output on (see _files._Output.take)."""
    while True:
        with chunks() as pieces:
            for piece in pieces:
                take(lambda fd: core.feed(piece, fd=fd))
                if progress and size:
                    progress(min(core.bytes_in, size * core.passes), size * core.passes)
        take(lambda fd: core.flush(fd=fd))
        if not core.again:
            return


def _file_chunks(f: IO[bytes]) -> Chunks:
    """The chunks of a seekable file, from its start, each time."""
    @contextlib.contextmanager
    def chunks() -> Iterator[Iterator[bytes]]:
        f.seek(0)
        yield iter(lambda: f.read(CHUNK), b"")
    return chunks


@contextlib.contextmanager
def spooled(pieces: Iterable[Any]) -> Iterator[Chunks]:
    """An input that can only be read once, kept in an anonymous temporary
    file to be read again."""
    with tempfile.TemporaryFile(prefix="hprofkit-bmd-") as spool:
        for piece in pieces:
            spool.write(piece)
        yield _file_chunks(spool)


class Spool:
    """What the stream codecs (Encoder, Decoder) do with a BMD filter: the
    input fed is kept in an anonymous temporary file, and flush() runs the
    filter's passes over it."""

    unfinished = None  # a BMD has no HEAP_DUMP_END to miss

    def __init__(self, core: _BmdFilter) -> None:
        self.core = core
        self.file: IO[bytes] | None = tempfile.TemporaryFile(prefix="hprofkit-bmd-")
        self.bytes_in = 0

    @overload
    def feed(self, data: Buffer) -> bytes: ...
    @overload
    def feed(self, data: Buffer, fd: int) -> bytes | int: ...

    def feed(self, data: Buffer, fd: int = -1) -> bytes | int:
        if self.file is None:
            raise ValueError(f"{type(self.core).__name__}: feed() after flush() or an error")
        self.bytes_in += self.file.write(data)
        return 0 if fd >= 0 else b""

    @overload
    def flush(self) -> bytes: ...
    @overload
    def flush(self, fd: int) -> bytes | int: ...

    def flush(self, fd: int = -1) -> bytes | int:
        if self.file is None:
            raise ValueError(f"{type(self.core).__name__}: flush() after flush() or an error")
        written, parts = 0, []

        def take(call: Callable[[int], bytes | int]) -> None:
            nonlocal written
            out = call(fd)
            if isinstance(out, int):
                written += out
            else:
                parts.append(out)
        try:
            run_passes(self.core, _file_chunks(self.file), take)
        finally:
            self.close()
        return written if fd >= 0 else b"".join(parts)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    @property
    def eof(self) -> bool:
        return bool(self.core.eof)

    def counter(self) -> dict[str, int]:
        return self.core.counter()


def reread(src: Any, first: Iterable[Any], size: int | None, source: Callable[[Any], Any]) -> ContextManager[Chunks]:
    """The input again and again: a plain file or a buffer is read anew
    through `source` (_files._source) for each pass; anything else (`first`:
    the chunks of the one reading there is) goes to a spool."""
    if size is not None and (isinstance(src, (str, os.PathLike)) and src != "-" or is_buffer(src)):
        close = getattr(first, "close", None)
        if close is not None:  # the reading begun is not needed: let its buffer go
            close()

        @contextlib.contextmanager
        def chunks() -> Iterator[Iterator[Any]]:
            with source(src) as (pieces, _):
                yield pieces
        return contextlib.nullcontext(chunks)
    return spooled(first)
