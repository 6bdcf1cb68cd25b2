"""Stream codecs shaped like zlib.compressobj: Encoder (trim + compress),
Decoder (inflate + restore), Converter (Android -> standard HPROF).

feed(data) -> bytes, flush() -> bytes, eof.  Input chunks may have any size
(any bytes-like object); the output does not depend on how the input was
cut.  Each object serializes its own calls: several threads may share one,
their calls take turns."""

from __future__ import annotations

import threading
import zlib
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypedDict, overload

from . import _hprof
from ._bmd import HEAD as BMD_HEAD, Spool, is_bmd, names_from
from ._errors import CorruptError, FormatError, TruncatedError
from ._io import to_fd
from ._pack import PackDecoder, is_pack, strip_mask
from ._stats import UnfinishedDump, unfinished_of
from ._units import max_output_of
from ._zstream import ZlibStream, resolve_threads

if TYPE_CHECKING:
    from typing_extensions import Buffer

FORMATS = ("hprofkit", "tailor", "hprof", "bmd")
DEFAULT_LEVEL = 6
PIECE = 4 << 20  # largest inflated piece handed to the restorer at once
STEP = 64 << 10  # compressed bytes inflated at a time: an error is placed within them, then exactly
TAILOR_MAGIC = b"JAVA PROFILE 6.0.1"
TAILOR_STRIP = strip_mask("tailor")
Converter = _hprof.Converter


def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {low} or more, not {value}" if high is None else
                         f"{name} must be in {low}..{high}, not {value}")
    return value


class EncoderOptions(TypedDict):
    """What encoder_options resolves: strip is the core's type mask."""
    level: int
    app_only: bool
    threads: int
    strip: int
    drop_traces: bool


def encoder_options(format: str, *, level: int | None, app_only: bool, threads: int,
                    strip: str | Iterable[str | int] | None, drop_traces: bool) -> EncoderOptions:
    """The one check of what an Encoder (encode(), the CLI) is asked for:
    every argument's type, and every combination a format cannot honour
    raises (TypeError, ValueError), the same way everywhere.  Returns the
    options resolved: level and the strip mask (None: the format's default).

    hprofkit: any strip policy (default char,byte), drop_traces, level 0-9.
    tailor: always strips char[] and byte[] contents (Tailor's format has no
    room for them) and drops stack traces itself; level 0-9.
    hprof: plain, uncompressed HPROF; strip zeroes the contents of those
    primitive arrays (default: none), app_only drops the zygote and image
    heaps' objects.
    bmd: Badoo's format, as its cruncher writes it: no option applies."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: choose one of {', '.join(FORMATS)}")
    app_only = _check_bool("app_only", app_only)
    drop_traces = _check_bool("drop_traces", drop_traces)
    threads = _check_int("threads", threads, 0)
    if level is not None:
        level = _check_int("level", level, 0, 9)
    if format == "bmd":
        given = [name for name, value in (("level", level), ("strip", strip), ("app_only", app_only),
                                          ("drop_traces", drop_traces)) if value not in (None, False)]
        if given:
            raise ValueError(f"the BMD format is what Badoo's cruncher writes: {', '.join(given)} cannot be "
                             "honoured (it drops every primitive array's contents and primitive field itself)")
        mask = 0
    elif format == "hprofkit":
        mask = strip_mask("default" if strip is None else strip)
    elif format == "tailor":
        mask = TAILOR_STRIP if strip is None else strip_mask(strip)
        if mask != TAILOR_STRIP:
            raise ValueError("the Tailor format always drops the contents of char[] and byte[] and keeps the "
                             f"others: strip={strip!r} cannot be honoured (use format='hprofkit')")
        if drop_traces:
            raise ValueError("the Tailor format drops stack traces itself: drop_traces=True applies to "
                             "format='hprofkit'")
    else:
        mask = strip_mask("none" if strip is None else strip)
        if drop_traces:
            raise ValueError("format 'hprof' keeps stack traces: drop_traces=True applies to format='hprofkit'")
        if level is not None:
            raise ValueError("format 'hprof' is not compressed: level applies to 'hprofkit' and 'tailor'")
    return {"level": DEFAULT_LEVEL if level is None else level, "app_only": app_only, "threads": threads,
            "strip": mask, "drop_traces": drop_traces}


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
    format="hprof": plain HPROF, uncompressed; strip zeroes the contents of
    primitive arrays of those types, lengths kept (a dump that can be shared
    and opened anywhere); app_only drops the zygote and image heaps' objects.
    format="bmd": Badoo's BMD, byte for byte what its cruncher writes (see
    docs/bmd.md); it needs the whole dump twice, so what is fed is kept in
    an anonymous temporary file until flush() (encode() reads a path twice
    instead).
    app_only: drop the objects of the zygote and image heaps, keep classes
    and roots (hprof-conv -z's rule).
    threads: compression threads, 0 (the default) for one per core; 1 writes
    exactly zlib.compress's bytes (still overlapping trimming), more write a
    pigz-style stream that inflates to the same bytes.
    A combination a format cannot honour raises (see encoder_options)."""

    def __init__(self, format: str = "hprofkit", *, level: int | None = None, app_only: bool = False,
                 threads: int = 0, strip: str | Iterable[str | int] | None = None, drop_traces: bool = False) -> None:
        opts = encoder_options(format, level=level, app_only=app_only, threads=threads, strip=strip,
                               drop_traces=drop_traces)
        self.format = format
        self._lock = threading.Lock()
        self._zlib: ZlibStream | None = None
        self.bytes_out = 0
        self._core: _hprof.PackEncoder | Spool | _hprof.TailorEncoder | _hprof.Converter
        if format == "hprofkit":
            self._core = _hprof.PackEncoder(strip_types=opts["strip"], app_only=opts["app_only"],
                                            drop_traces=opts["drop_traces"], level=opts["level"],
                                            threads=resolve_threads(opts["threads"]))
        elif format == "bmd":
            self._core = Spool(_hprof.BmdEncoder())
        elif format == "tailor":
            self._core = _hprof.TailorEncoder(app_only=opts["app_only"])
            self._zlib = ZlibStream(opts["level"], opts["threads"]) if opts["level"] else None
        else:
            self._core = _hprof.Converter(to_standard=False, app_only=opts["app_only"], strip_types=opts["strip"])

    @overload
    def feed(self, data: Buffer) -> bytes: ...
    @overload
    def feed(self, data: Buffer, fd: int) -> bytes | int: ...

    def feed(self, data: Buffer, fd: int = -1) -> bytes | int:
        """The output this chunk completed; with fd >= 0, written there and counted instead."""
        view = memoryview(data)  # TypeError for what is not bytes-like, before anything changes
        with self._lock:
            return self._run(lambda: self._core.feed(view, fd=fd) if self._zlib is None else
                             to_fd(self._zlib.compress(self._core.feed(view)), fd))

    @overload
    def flush(self) -> bytes: ...
    @overload
    def flush(self, fd: int) -> bytes | int: ...

    def flush(self, fd: int = -1) -> bytes | int:
        with self._lock:
            return self._run(lambda: self._core.flush(fd=fd) if self._zlib is None else
                             to_fd(self._zlib.compress(self._core.flush()) + self._zlib.flush(), fd))

    def _run(self, call: Callable[[], bytes | int]) -> bytes | int:
        try:
            out = call()
        except BaseException:
            if self._zlib:
                self._zlib.close()
            raise
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    @property
    def eof(self) -> bool:
        return self._core.eof

    @property
    def bytes_in(self) -> int:
        """Dump bytes consumed."""
        return self._core.bytes_in

    @property
    def trimmed_bytes(self) -> int | None:
        """Bytes of the trimmed stream before compression (None for the hprofkit and BMD formats)."""
        core = self._core  # by format: hprofkit, a PackEncoder; bmd, a Spool
        return None if isinstance(core, (_hprof.PackEncoder, Spool)) else core.bytes_out

    def counter(self) -> dict[str, int]:
        """The tag counter Tailor's encode.py prints (first-seen order); the
        records written by kind for BMD; {} for other formats."""
        core = self._core  # by format: tailor, a TailorEncoder; bmd, a Spool
        return core.counter() if isinstance(core, (_hprof.TailorEncoder, Spool)) else {}

    @property
    def unfinished(self) -> UnfinishedDump | None:
        """Once flushed: the dump's first heap dump that stops without its
        HEAP_DUMP_END (input offsets) and how many do, else None.  The
        output holds what there was; a Tailor mini cannot, so that format
        raises TruncatedError instead."""
        return unfinished_of(self._core.unfinished)

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


def _error_offset(saved: zlib._Decompress, piece: memoryview) -> int:
    """Where in `piece` inflation fails, given the inflater as it was before
    it: the length of the shortest prefix that fails, less one (bisection;
    the output of each trial is thrown away as it comes)."""
    def fails(n: int) -> bool:
        trial = saved.copy()
        tail: memoryview | bytes = piece[:n]
        try:
            while tail:
                trial.decompress(tail, PIECE)
                tail = trial.unconsumed_tail
        except zlib.error:
            return True
        return False
    low, high = 1, len(piece)  # fails(len(piece)) holds
    while low < high:
        mid = (low + high) // 2
        if fails(mid):
            high = mid
        else:
            low = mid + 1
    return low - 1


class Decoder:
    """Restores an hprofkit pack, a Tailor mini (zlib at any level, gzip,
    or the bare stream) or a Badoo BMD, told apart by their first bytes.  A
    truncated or corrupt input raises an HprofError naming the offset, never
    a partial success.  max_block and max_record bound memory whatever the
    input (see PackDecoder and TailorDecoder; 0: 64 MiB each).  strings:
    paths of jars, apks, dex or text files (one name a line) whose names a
    BMD's hashed strings are given back from, as Badoo's decruncher does; a
    BMD is kept in an anonymous temporary file until flush(), as it is read
    several times (decode() reads a path again instead).  max_output: what the
    restored dump may hold (bytes or a size such as '64 GiB'; None: the larger
    of 4 GiB and 1,000 times the input); RestoreLimitError, before the bytes
    are written, for an input that declares more (a decompression bomb)."""

    def __init__(self, *, threads: int = 0, max_block: int = 0, max_record: int = 0,
                 strings: Iterable[Any] | None = None, max_output: int | str | None = None) -> None:
        self._threads = resolve_threads(_check_int("threads", threads, 0))
        self._max_block = _check_int("max_block", max_block, 0)
        self._max_record = _check_int("max_record", max_record, 0)
        self._max_output = max_output_of(max_output)
        self._lock = threading.Lock()  # feed, flush and inflate take turns; the C restorers lock themselves
        self._pack: _hprof.PackDecoder | None = None
        self._filter: _hprof.TailorDecoder | None = None
        self._bmd: Spool | None = None
        self._names = None if strings is None else names_from(strings)
        self._head = b""
        self._kind: str | None = None
        self._inflate: zlib._Decompress | None = None
        self._consumed = 0  # compressed bytes taken
        self.bytes_out = 0

    def _start(self, data: memoryview) -> memoryview:
        """Buffers until the kind of input is known; returns the bytes to process."""
        self._head += data
        if is_pack(self._head[:8]):
            if len(self._head) < 8:
                return memoryview(b"")
            self._kind = "hprofkit"
            self._pack = PackDecoder(threads=self._threads, max_block=self._max_block, max_record=self._max_record,
                                     max_output=self._max_output)
        elif self._head[:1] == b"\x01" and len(self._head) < BMD_HEAD:
            return memoryview(b"")
        elif is_bmd(self._head):
            self._kind = "bmd"
            self._bmd = Spool(_hprof.BmdDecoder(names=self._names, max_output=self._max_output))
        else:
            if len(self._head) < 2:
                return memoryview(b"")
            kind = sniff(self._head[:len(TAILOR_MAGIC)])
            if kind == "mini" and len(self._head) < len(TAILOR_MAGIC):
                return memoryview(b"")
            if kind is None:
                raise FormatError("neither an hprofkit pack, a Tailor mini (zlib, gzip or 'JAVA PROFILE 6.0.1') "
                                  "nor a Badoo BMD", 0)
            self._kind = kind
            self._filter = _hprof.TailorDecoder(max_record=self._max_record, max_output=self._max_output)
            if kind != "mini":
                self._inflate = zlib.decompressobj(15 if kind == "zlib" else 31)
        data, self._head = memoryview(self._head), b""
        return data

    def inflate(self, data: Buffer) -> Iterator[bytes]:
        """The mini stream inside `data`, in pieces of at most PIECE bytes (a
        small zlib input can inflate to a lot); restore() takes them, possibly
        in another thread (the decoder's lock is held while this runs)."""
        view = memoryview(data).cast("B")
        with self._lock:
            yield from self._mini_pieces(view)

    def _mini_pieces(self, view: memoryview) -> Iterator[bytes]:
        if self._kind is None:
            view = self._start(view)
            if self._kind is None:
                return
        if self._pack is not None or self._bmd is not None:
            raise ValueError(f"Decoder.inflate(): the input is {'an hprofkit pack' if self._pack else 'a BMD'}, "
                             "use feed()")
        if self._inflate is None:
            self._consumed += len(view)
            if view:
                yield bytes(view)
            return
        for start in range(0, len(view), STEP):
            yield from self._inflate_step(self._inflate, view[start:start + STEP])

    def _inflate_step(self, inflater: zlib._Decompress, piece: memoryview) -> Iterator[bytes]:
        saved, base = inflater.copy(), self._consumed
        pending: memoryview | bytes = piece
        while pending:
            if inflater.eof:
                raise CorruptError(f"data after the end of the {self._kind} stream at offset {self._consumed}",
                                   self._consumed)
            try:
                out = inflater.decompress(pending, PIECE)
            except zlib.error as exc:
                where = base + _error_offset(saved, piece)
                raise CorruptError(f"corrupt {self._kind} stream at offset {where}: {exc}", where) from None
            tail = inflater.unconsumed_tail or inflater.unused_data
            self._consumed += len(pending) - len(tail)
            pending = inflater.unconsumed_tail
            if inflater.eof and inflater.unused_data:
                raise CorruptError(f"data after the end of the {self._kind} stream at offset {self._consumed}",
                                   self._consumed)
            if out:
                yield out

    @overload
    def restore(self, mini: Buffer) -> bytes: ...
    @overload
    def restore(self, mini: Buffer, fd: int) -> bytes | int: ...

    def restore(self, mini: Buffer, fd: int = -1) -> bytes | int:
        """Feeds already inflated mini bytes to the restorer (see inflate())."""
        if self._filter is None:
            raise ValueError("Decoder.restore(): no Tailor mini to restore (the input is an hprofkit pack, or "
                             "inflate() has not started it): use feed()")
        out = self._filter.feed(mini, fd=fd)
        self.bytes_out += out if isinstance(out, int) else len(out)
        return out

    @overload
    def feed(self, data: Buffer) -> bytes: ...
    @overload
    def feed(self, data: Buffer, fd: int) -> bytes | int: ...

    def feed(self, data: Buffer, fd: int = -1) -> bytes | int:
        """The HPROF bytes this chunk completed; with fd >= 0, written there and counted instead."""
        view = memoryview(data).cast("B")
        with self._lock:
            if self._kind is None:
                view = self._start(view)
            if self._bmd is not None:
                return self._bmd.feed(view, fd)
            if self._pack is not None:
                out = self._pack.feed(view, fd)
                self.bytes_out += out if isinstance(out, int) else len(out)
                self._consumed += len(view)
                return out
            written, chunks = 0, []
            for piece in self._mini_pieces(view):
                out = self.restore(piece, fd)
                if isinstance(out, int):  # fd >= 0: a count of bytes written
                    written += out
                else:
                    chunks.append(out)
            return written if fd >= 0 else b"".join(chunks)

    @overload
    def flush(self) -> bytes: ...
    @overload
    def flush(self, fd: int) -> bytes | int: ...

    def flush(self, fd: int = -1) -> bytes | int:
        with self._lock:
            if self._bmd is not None:
                out = self._bmd.flush(fd)
            elif self._pack is not None:
                out = self._pack.flush(fd)
            else:
                if self._kind is None:
                    if self._head and sniff(self._head) == "mini":
                        raise TruncatedError(f"truncated Tailor mini header at offset 0: needs {len(TAILOR_MAGIC)} "
                                             f"bytes, {len(self._head)} remain", 0)
                    if self._head and is_pack(self._head):
                        raise TruncatedError(f"truncated hprofkit pack header at offset 0: {len(self._head)} bytes",
                                             0)
                    if self._head[:1] == b"\x01":
                        raise TruncatedError(f"truncated BMD header at offset 0: {len(self._head)} bytes", 0)
                    raise FormatError("not a Tailor mini file" if self._head else "empty input", 0)
                if self._inflate is not None and not self._inflate.eof:
                    raise TruncatedError(f"truncated {self._kind} stream at offset {self._consumed}: the compressed "
                                         f"data ends before its end marker", self._consumed)
                assert self._filter is not None  # every kind but a pack has its restorer
                out = self._filter.flush(fd=fd)
            self.bytes_out += out if isinstance(out, int) else len(out)
            return out

    @property
    def eof(self) -> bool:
        core = self._bmd or (self._pack if self._pack is not None else self._filter)
        return core is not None and core.eof

    @property
    def bytes_in(self) -> int:
        """Input bytes consumed (compressed)."""
        return self._bmd.bytes_in if self._bmd is not None else self._consumed

    @property
    def mini_bytes(self) -> int | None:
        """Bytes of the inflated mini stream (None for a pack)."""
        return None if self._filter is None else self._filter.bytes_in

    @property
    def kind(self) -> str | None:
        """'hprofkit', 'bmd', or for a Tailor mini 'zlib', 'gzip' or 'mini', once known."""
        return self._kind

    def counter(self) -> dict[str, int]:
        """The tag counter Tailor's decode.py prints; a BMD's records read by kind ({} for a pack)."""
        if self._bmd is not None:
            return self._bmd.core.counter()
        return {} if self._filter is None else self._filter.counter()

    @property
    def restored(self) -> int | None:
        """A BMD's hashed strings given back from `strings` (None for other inputs)."""
        return None if self._bmd is None else self._bmd.core.restored

    @property
    def unfinished(self) -> UnfinishedDump | None:
        """Once flushed: the restored dump's first heap dump that stops
        without its HEAP_DUMP_END (restored offsets) and how many do, else
        None -- a pack of a dump that was cut short restores it cut short.
        (A Tailor mini always ends with HEAP_DUMP_END.)"""
        core = self._pack if self._pack is not None else self._filter
        return None if core is None else unfinished_of(core.unfinished)  # a BMD has no HEAP_DUMP_END to miss

    def __repr__(self) -> str:
        state = "finished" if self.eof else f"{self.bytes_in:,} bytes in, {self.bytes_out:,} out"
        return f"<hprofkit.Decoder kind={self.kind!r}, {state}>"
