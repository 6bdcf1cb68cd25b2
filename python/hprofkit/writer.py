"""Pure-Python writer for HPROF heap dumps (Java HotSpot and Android ART).

:class:`HprofWriter` emits the file header and top-level records; :meth:`HprofWriter.heap_dump`
returns a :class:`HeapDumpBuilder` that collects heap sub-records and writes them as one
HEAP_DUMP_SEGMENT (0x1C) or HEAP_DUMP (0x0C) record with the right length when it is closed::

    with HprofWriter(path, version="1.0.2", id_size=8) as w:
        w.load_class(0x1000, "java/lang/Object")
        with w.heap_dump() as h:
            h.class_dump(0x1000)
            h.instance(0x2000, 0x1000)
            h.root_sticky_class(0x1000)
        w.heap_dump_end()

Everything is big-endian. Every id is checked against ``id_size`` and every type code against
the HPROF basic types; bad input raises :class:`ValueError` (``TypeError`` for a non-integer
where an integer is needed). Nothing stops you from writing a *semantically* odd dump (dangling
references, duplicate ids, a LOAD_CLASS after its use): that is the point for crafting test
inputs. :meth:`HprofWriter.raw`, :meth:`HprofWriter.record` (with ``length=``) and
:meth:`HeapDumpBuilder.raw` write deliberately corrupt bytes.

A realistic application heap written with this API is in :mod:`hprofkit.sample`.

The byte layouts follow the HPROF notes the project works from, ``../shared/docs/hprof-format.md``
(beside the repository, not in it; docs/guides/formats.md names the format's references). The basic types
(codes, names, sizes) come from the package's one table of them, ``hprofkit._types``.
"""

from __future__ import annotations

import enum
import operator
import os
import struct
from typing import Any, BinaryIO, Iterable, Mapping, Sequence, Union

from . import _hprof
from ._types import (BOOLEAN, BYTE, CHAR, DESCRIPTOR_LETTERS, DOUBLE, FLOAT, INT, LONG,
                     OBJECT, SHORT, TYPE_CODES, TYPE_NAMES, TYPE_SIZES)

__all__ = [
    "HprofWriter",
    "HeapDumpBuilder",
    "Tag",
    "SubTag",
    "OBJECT", "BOOLEAN", "CHAR", "FLOAT", "DOUBLE", "BYTE", "SHORT", "INT", "LONG",
    "TYPE_SIZES",
    "HEAP_DEFAULT", "HEAP_APP", "HEAP_IMAGE", "HEAP_ZYGOTE",
    "VERSIONS",
    "type_code",
    "type_size",
    "modified_utf8",
    "java_class_name",
    "hotspot_class_name",
    "java_chars",
]


# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------

class Tag(enum.IntEnum):
    """Top-level record tags."""

    UTF8 = 0x01
    LOAD_CLASS = 0x02
    UNLOAD_CLASS = 0x03
    FRAME = 0x04
    TRACE = 0x05
    ALLOC_SITES = 0x06
    HEAP_SUMMARY = 0x07
    START_THREAD = 0x0A
    END_THREAD = 0x0B
    HEAP_DUMP = 0x0C
    CPU_SAMPLES = 0x0D
    CONTROL_SETTINGS = 0x0E
    HEAP_DUMP_SEGMENT = 0x1C
    HEAP_DUMP_END = 0x2C


class SubTag(enum.IntEnum):
    """Heap-dump sub-record tags (inside HEAP_DUMP / HEAP_DUMP_SEGMENT)."""

    ROOT_UNKNOWN = 0xFF
    ROOT_JNI_GLOBAL = 0x01
    ROOT_JNI_LOCAL = 0x02
    ROOT_JAVA_FRAME = 0x03
    ROOT_NATIVE_STACK = 0x04
    ROOT_STICKY_CLASS = 0x05
    ROOT_THREAD_BLOCK = 0x06
    ROOT_MONITOR_USED = 0x07
    ROOT_THREAD_OBJECT = 0x08
    CLASS_DUMP = 0x20
    INSTANCE_DUMP = 0x21
    OBJECT_ARRAY_DUMP = 0x22
    PRIMITIVE_ARRAY_DUMP = 0x23
    # Android (1.0.3)
    ROOT_INTERNED_STRING = 0x89
    ROOT_FINALIZING = 0x8A
    ROOT_DEBUGGER = 0x8B
    ROOT_REFERENCE_CLEANUP = 0x8C
    ROOT_VM_INTERNAL = 0x8D
    ROOT_JNI_MONITOR = 0x8E
    UNREACHABLE = 0x90
    PRIMITIVE_ARRAY_NODATA = 0xC3
    HEAP_DUMP_INFO = 0xFE


# OBJECT..LONG and TYPE_SIZES (size in bytes of each primitive basic type; OBJECT is
# ``id_size`` and is not listed) come from hprofkit._types.

# Type names and JVM descriptor letters ("L" and "[" both mean a reference).
_TYPE_BY_NAME = {**TYPE_CODES, "L": OBJECT, "[": OBJECT,
                 **{letter: TYPE_CODES[name] for name, letter in DESCRIPTOR_LETTERS.items()}}

HEAP_DEFAULT, HEAP_APP, HEAP_IMAGE, HEAP_ZYGOTE = 0, 0x41, 0x49, 0x5A
_HEAP_BY_NAME = {"default": HEAP_DEFAULT, "app": HEAP_APP, "image": HEAP_IMAGE,
                 "zygote": HEAP_ZYGOTE}
_HEAP_NAME = {v: k for k, v in _HEAP_BY_NAME.items()}

#: Header versions the writer accepts (the magic is ``b"JAVA PROFILE " + version + b"\0"``).
VERSIONS = ("1.0", "1.0.1", "1.0.2", "1.0.3")

#: First id handed out by :meth:`HprofWriter.string` when no sid is given (ART's choice).
FIRST_STRING_ID = 0x400000

_U2_MAX = 0xFFFF
_U4_MAX = 0xFFFFFFFF
_U8_MAX = 0xFFFFFFFFFFFFFFFF

Name = Union[str, bytes, int]
"""A name argument: a str/bytes (interned as a UTF8 record) or an int (an existing sid)."""


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def type_code(t: int | str) -> int:
    """Return the HPROF basic type code for ``t``.

    ``t`` is a code (2, 4..11), a Java type name (``"int"``, ``"object"``, ...) or a JVM
    descriptor letter (``"I"``, ``"L"``, ...). Anything else raises :class:`ValueError`.
    """
    if isinstance(t, str):
        code = _TYPE_BY_NAME.get(t)
        if code is None:
            code = _TYPE_BY_NAME.get(t.lower()) if len(t) > 1 else None
        if code is None:
            raise ValueError(f"unknown HPROF basic type {t!r}")
        return code
    if isinstance(t, bool):
        raise ValueError(f"unknown HPROF basic type {t!r}")
    code = operator.index(t)
    if code != OBJECT and code not in TYPE_SIZES:
        raise ValueError(f"unknown HPROF basic type code {code}")
    return code


def type_size(t: int | str, id_size: int) -> int:
    """Size in bytes of a value of basic type ``t`` in a dump with ``id_size``-byte ids."""
    code = type_code(t)
    return id_size if code == OBJECT else TYPE_SIZES[code]


def _int(value: Any, lo: int, hi: int, what: str) -> int:
    v = operator.index(value)
    if not lo <= v <= hi:
        raise ValueError(f"{what} {v} out of range [{lo}, {hi}]")
    return v


def _u1(v: Any, what: str = "u1") -> bytes:
    return bytes((_int(v, 0, 0xFF, what),))


def _u2(v: Any, what: str = "u2") -> bytes:
    return _int(v, 0, _U2_MAX, what).to_bytes(2, "big")


def _u4(v: Any, what: str = "u4") -> bytes:
    return _int(v, 0, _U4_MAX, what).to_bytes(4, "big")


def _s4(v: Any, what: str = "i4") -> bytes:
    """A 4-byte field that may be given signed (-1 for "none") or as its unsigned bit pattern."""
    return (_int(v, -(1 << 31), _U4_MAX, what) & _U4_MAX).to_bytes(4, "big")


def _u8(v: Any, what: str = "u8") -> bytes:
    return _int(v, 0, _U8_MAX, what).to_bytes(8, "big")


def _bits(v: Any, size: int, what: str) -> bytes:
    """Pack an integer of ``size`` bytes given either signed or as unsigned bit pattern."""
    nbits = 8 * size
    return (_int(v, -(1 << (nbits - 1)), (1 << nbits) - 1, what) & ((1 << nbits) - 1)).to_bytes(
        size, "big")


def modified_utf8(text: str) -> bytes:
    """Encode ``text`` the way the JVM stores names: Java "modified UTF-8".

    U+0000 becomes ``C0 80`` and characters outside the BMP become two 3-byte surrogate
    encodings (CESU-8). Lone surrogates in ``text`` are encoded as they are.
    """
    try:
        b = text.encode("ascii")
    except UnicodeEncodeError:
        pass
    else:
        if b"\0" not in b:
            return b
    out = bytearray()
    for (u,) in struct.iter_unpack(">H", text.encode("utf-16-be", "surrogatepass")):
        if 0 < u < 0x80:
            out.append(u)
        elif u < 0x800:
            out += bytes((0xC0 | (u >> 6), 0x80 | (u & 0x3F)))
        else:
            out += bytes((0xE0 | (u >> 12), 0x80 | ((u >> 6) & 0x3F), 0x80 | (u & 0x3F)))
    return bytes(out)


def java_class_name(name: str) -> str:
    """Readable Java name of a class as HotSpot or ART spells it, as VisualVM and MAT show it.

    ``"java/lang/String"`` -> ``"java.lang.String"``, ``"[C"`` -> ``"char[]"``,
    ``"[[Ljava/lang/Object;"`` -> ``"java.lang.Object[][]"``; ART names (already
    ``"java.lang.Object[]"``) come back unchanged, and so does a name that only starts like
    an array descriptor (``"[X"``).  The heap index names its classes by the same rule
    (hprofkit._hprof.java_name, in the C core).
    """
    return _hprof.java_name(name.encode("utf-8", "surrogatepass"))


def hotspot_class_name(name: str) -> str:
    """HotSpot's internal spelling of a readable class name (inverse of :func:`java_class_name`).

    ``"java.lang.String"`` -> ``"java/lang/String"``, ``"char[]"`` -> ``"[C"``,
    ``"java.lang.Object[]"`` -> ``"[Ljava/lang/Object;"``.
    """
    dims = 0
    while name.endswith("[]"):
        name = name[:-2]
        dims += 1
    if not dims:
        return name.replace(".", "/")
    elem = DESCRIPTOR_LETTERS.get(name) or "L" + name.replace(".", "/") + ";"
    return "[" * dims + elem


def java_chars(text: str) -> bytes:
    """The UTF-16 code units of ``text`` as a Java ``char[]`` holds them, big-endian."""
    return text.encode("utf-16-be", "surrogatepass")


# struct codes used for fast array packing: (signed, unsigned)
_STRUCT_CODES = {BYTE: ("b", "B"), SHORT: ("h", "H"), INT: ("i", "I"), LONG: ("q", "Q"),
                 CHAR: ("H", "H"), BOOLEAN: ("B", "B"), FLOAT: ("f", "f"), DOUBLE: ("d", "d")}


class _Packer:
    """Packs ids and typed values for one id size."""

    def __init__(self, id_size: int):
        self.id_size = id_size
        self.id_max = (1 << (8 * id_size)) - 1

    def id(self, v: Any, what: str = "id") -> bytes:
        if v is None:
            v = 0
        n = operator.index(v)
        if not 0 <= n <= self.id_max:
            raise ValueError(f"{what} {n:#x} does not fit in a {self.id_size}-byte id"
                             if n >= 0 else f"{what} {n} is negative")
        return n.to_bytes(self.id_size, "big")

    def value(self, t: int, v: Any) -> bytes:
        """Pack one value of basic type ``t`` (a validated code)."""
        if t == OBJECT:
            return self.id(v, "object id")
        if t == BOOLEAN:
            return _u1(v, "boolean")
        if t == CHAR:
            if isinstance(v, str):
                if len(v) != 1 or ord(v) > 0xFFFF:
                    raise ValueError(f"char value must be a single BMP character, not {v!r}")
                v = ord(v)
            return _u2(v, "char")
        if t in (FLOAT, DOUBLE):
            try:
                return struct.pack(">f" if t == FLOAT else ">d", v)
            except (struct.error, OverflowError) as exc:
                raise ValueError(f"bad {TYPE_NAMES[t]} value {v!r}: {exc}") from None
        return _bits(v, TYPE_SIZES[t], TYPE_NAMES[t])

    def values(self, types: Sequence[int | str], values: Sequence[Any]) -> bytes:
        """Pack ``values`` according to ``types`` (same length), back to back."""
        if len(types) != len(values):
            raise ValueError(f"{len(values)} values for {len(types)} field types")
        return b"".join(self.value(type_code(t), v) for t, v in zip(types, values))

    def array(self, t: int, values: Any) -> tuple[int, bytes]:
        """Pack primitive array ``values`` of type ``t``; returns (count, data)."""
        size = TYPE_SIZES[t]
        if isinstance(values, (bytes, bytearray, memoryview)):
            data = bytes(values)
            if len(data) % size:
                raise ValueError(f"{len(data)} bytes is not a whole number of "
                                 f"{TYPE_NAMES[t]} elements ({size} bytes each)")
            return len(data) // size, data
        if t == CHAR and isinstance(values, str):
            data = java_chars(values)
            return len(data) // 2, data
        values = list(values)
        if t == CHAR:
            values = [ord(v) if isinstance(v, str) and len(v) == 1 else v for v in values]
        n = len(values)
        signed, unsigned = _STRUCT_CODES[t]
        if t in (FLOAT, DOUBLE):
            try:
                return n, struct.pack(f">{n}{signed}", *values)
            except (struct.error, OverflowError, TypeError):
                pass  # fall through to the per-element path for a precise error
        else:
            if not any(isinstance(v, float) for v in values):
                for code in (signed, unsigned):
                    try:
                        return n, struct.pack(f">{n}{code}", *values)
                    except struct.error:
                        pass
        return n, b"".join(self.value(t, v) for v in values)


def _sub(kind: int, *parts: bytes) -> bytes:
    return bytes((kind,)) + b"".join(parts)


# ---------------------------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------------------------

class HprofWriter:
    """Writes an HPROF file: header, top-level records and heap dumps.

    ``dest`` is a path (str or :class:`os.PathLike`, opened ``"wb"`` and closed by
    :meth:`close`) or a binary file object (left open). ``version`` is the header version
    (``"1.0"``, ``"1.0.1"``, ``"1.0.2"`` or ``"1.0.3"``), ``id_size`` 4 or 8, ``timestamp``
    the header time in ms since the epoch. The header is written at once.

    Records are written in call order. A :class:`HeapDumpBuilder` buffers its sub-records
    and writes them when it is closed, so records written while a builder is open (a
    ``string()`` for a field name, say) land in the file *before* that heap-dump record.
    """

    def __init__(self, dest: str | os.PathLike[str] | BinaryIO, *, version: str = "1.0.2",
                 id_size: int = 4, timestamp: int = 0):
        if version not in VERSIONS:
            raise ValueError(f"unknown HPROF version {version!r}; expected one of {VERSIONS}")
        if isinstance(id_size, bool) or id_size not in (4, 8):
            raise ValueError(f"id_size must be 4 or 8, not {id_size!r}")
        ts = _u8(timestamp, "timestamp")
        self.version = version
        self.id_size = id_size
        self.timestamp = timestamp
        self._p = _Packer(id_size)
        if isinstance(dest, (str, bytes, os.PathLike)):
            self._fh: BinaryIO = open(dest, "wb")
            self._owns = True
        elif hasattr(dest, "write"):
            self._fh = dest
            self._owns = False
        else:
            raise TypeError(f"dest must be a path or a binary file object, not {type(dest).__name__}")
        self._closed = False
        self._offset = 0
        self._strings: dict[bytes, int] = {}
        self._used_sids: set[int] = set()
        self._next_sid = FIRST_STRING_ID
        self._class_serials: dict[int, int] = {}
        self._used_class_serials: set[int] = set()
        self._next_class_serial = 1
        self._next_frame_id = 1
        self._next_trace_serial = 1
        self._layouts: dict[int, tuple[int, tuple[int, ...]]] = {}
        self._write(b"JAVA PROFILE " + version.encode("ascii") + b"\0" + _u4(id_size) + ts)

    # -- plumbing ------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        if self._closed:
            raise ValueError("write to a closed HprofWriter")
        self._fh.write(data)
        self._offset += len(data)

    @property
    def offset(self) -> int:
        """Number of bytes written so far (header included): the offset of the next record."""
        return self._offset

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    def flush(self) -> None:
        """Flush the underlying file object."""
        if not self._closed:
            self._fh.flush()

    def close(self) -> None:
        """Flush, and close the file if the writer opened it. Idempotent."""
        if self._closed:
            return
        try:
            self._fh.flush()
        finally:
            self._closed = True
            if self._owns:
                self._fh.close()

    def __enter__(self) -> "HprofWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pack_id(self, value: int | None) -> bytes:
        """``value`` as an id of this file's ``id_size`` (``None`` is 0); ValueError if it doesn't fit."""
        return self._p.id(value)

    def _sid(self, name: Name | None, what: str = "sid") -> bytes:
        if name is None:
            return self._p.id(0)
        if isinstance(name, (str, bytes, bytearray)):
            return self._p.id(self.string(name))
        return self._p.id(name, what)

    # -- raw output ----------------------------------------------------------------------------
    def raw(self, data: bytes) -> None:
        """Write ``data`` as they are (for truncated or otherwise corrupt files)."""
        self._write(bytes(data))

    def record(self, tag: int, body: bytes | bytearray | memoryview = b"", time: int = 0, *,
               length: int | None = None) -> None:
        """Write one top-level record: u1 tag, u4 time, u4 length, body.

        Any tag (0..255) is allowed, unknown ones too. ``length`` overrides the length field
        (default ``len(body)``) to craft records that lie about their size.
        """
        body = bytes(body)
        n = len(body) if length is None else length
        if len(body) > _U4_MAX:
            raise ValueError(f"record body of {len(body)} bytes does not fit a u4 length")
        self._write(_u1(tag, "tag") + _u4(time, "time") + _u4(n, "length") + body)

    # -- top-level records ---------------------------------------------------------------------
    def string(self, text: str | bytes, sid: int | None = None) -> int:
        """Write a UTF8 (0x01) record and return its id.

        ``text`` is encoded as modified UTF-8 (bytes are written as they are). Without
        ``sid`` the string is interned: the id of an earlier record with the same bytes is
        returned and nothing is written; otherwise a fresh id (from 0x400000, skipping ids
        already used) is allocated. With an explicit ``sid`` a record is always written.
        """
        data = bytes(text) if isinstance(text, (bytes, bytearray, memoryview)) else modified_utf8(text)
        if sid is None:
            known = self._strings.get(data)
            if known is not None:
                return known
            while self._next_sid in self._used_sids:
                self._next_sid += 1
            sid = self._next_sid
            self._next_sid += 1
        packed = self._p.id(sid, "string id")
        self._strings.setdefault(data, sid)
        self._used_sids.add(sid)
        self.record(Tag.UTF8, packed + data)
        return sid

    def load_class(self, class_id: int, name: Name, *, serial: int | None = None,
                   stack_serial: int = 0) -> int:
        """Write LOAD_CLASS (0x02) and return the class serial (allocated from 1 when None).

        ``name`` is a str/bytes (interned via :meth:`string`) or the sid of an existing UTF8
        record. HotSpot spells names ``java/lang/String`` and ``[Ljava/lang/Object;``; ART
        spells them ``java.lang.String`` and ``java.lang.Object[]``.
        """
        cid = self._p.id(class_id, "class id")
        name_id = self._sid(name, "class name sid")
        if serial is None:
            while self._next_class_serial in self._used_class_serials:
                self._next_class_serial += 1
            serial = self._next_class_serial
            self._next_class_serial += 1
        self.record(Tag.LOAD_CLASS, _u4(serial, "class serial") + cid
                    + _u4(stack_serial, "stack serial") + name_id)
        self._used_class_serials.add(serial)
        self._class_serials[class_id] = serial
        return serial

    def class_serial(self, class_id: int) -> int:
        """Serial of the last :meth:`load_class` for ``class_id`` (KeyError if none)."""
        return self._class_serials[class_id]

    def unload_class(self, serial: int) -> None:
        """Write UNLOAD_CLASS (0x03)."""
        self.record(Tag.UNLOAD_CLASS, _u4(serial, "class serial"))

    def stack_frame(self, frame_id: int | None, method_name: Name, signature: Name,
                    source_file: Name | None, class_serial: int, line: int = 0) -> int:
        """Write FRAME (0x04) and return the frame id (allocated from 1 when None).

        Names are str/bytes (interned) or sids; ``source_file=None`` writes sid 0. ``line``:
        >0 a line number, 0 none, -1 unknown, -2 compiled, -3 native.
        """
        if frame_id is None:
            frame_id = self._next_frame_id
            self._next_frame_id += 1
        body = (self._p.id(frame_id, "frame id") + self._sid(method_name)
                + self._sid(signature) + self._sid(source_file)
                + _u4(class_serial, "class serial") + _s4(line, "line"))
        self.record(Tag.FRAME, body)
        return frame_id

    def stack_trace(self, serial: int | None, thread_serial: int,
                    frame_ids: Iterable[int] = ()) -> int:
        """Write TRACE (0x05) and return its serial (allocated from 1 when None)."""
        if serial is None:
            serial = self._next_trace_serial
            self._next_trace_serial += 1
        frames = [self._p.id(f, "frame id") for f in frame_ids]
        self.record(Tag.TRACE, _u4(serial, "trace serial") + _u4(thread_serial, "thread serial")
                    + _u4(len(frames)) + b"".join(frames))
        return serial

    def alloc_sites(self, flags: int, cutoff_ratio: float, live_bytes: int,
                    live_instances: int, bytes_allocated: int, instances_allocated: int,
                    sites: Iterable[Sequence[int]] = ()) -> None:
        """Write ALLOC_SITES (0x06).

        ``sites`` holds 7-tuples (is_array, class_serial, trace_serial, bytes_alive,
        instances_alive, bytes_allocated, instances_allocated).
        """
        packed = []
        for site in sites:
            if len(site) != 7:
                raise ValueError("an allocation site has 7 fields")
            packed.append(_u1(site[0], "is_array") + b"".join(_u4(x) for x in site[1:]))
        body = (_u2(flags, "flags") + struct.pack(">f", cutoff_ratio) + _u4(live_bytes)
                + _u4(live_instances) + _u8(bytes_allocated) + _u8(instances_allocated)
                + _u4(len(packed)) + b"".join(packed))
        self.record(Tag.ALLOC_SITES, body)

    def heap_summary(self, live_bytes: int, live_instances: int, bytes_allocated: int,
                     instances_allocated: int) -> None:
        """Write HEAP_SUMMARY (0x07)."""
        self.record(Tag.HEAP_SUMMARY, _u4(live_bytes) + _u4(live_instances)
                    + _u8(bytes_allocated) + _u8(instances_allocated))

    def start_thread(self, thread_serial: int, thread_id: int, stack_serial: int,
                     name: Name | None, group_name: Name | None = None,
                     parent_group_name: Name | None = None) -> None:
        """Write START_THREAD (0x0A). Names are str/bytes (interned), sids, or None (sid 0)."""
        self.record(Tag.START_THREAD, _u4(thread_serial, "thread serial")
                    + self._p.id(thread_id, "thread object id") + _u4(stack_serial, "stack serial")
                    + self._sid(name) + self._sid(group_name) + self._sid(parent_group_name))

    def end_thread(self, thread_serial: int) -> None:
        """Write END_THREAD (0x0B)."""
        self.record(Tag.END_THREAD, _u4(thread_serial, "thread serial"))

    def cpu_samples(self, total: int, samples: Iterable[tuple[int, int]] = ()) -> None:
        """Write CPU_SAMPLES (0x0D); ``samples`` holds (count, trace_serial) pairs."""
        packed = [_u4(c) + _u4(t) for c, t in samples]
        self.record(Tag.CPU_SAMPLES, _u4(total) + _u4(len(packed)) + b"".join(packed))

    def control_settings(self, flags: int, depth: int) -> None:
        """Write CONTROL_SETTINGS (0x0E): u4 flags (0x1 alloc traces, 0x2 cpu sampling), u2 depth."""
        self.record(Tag.CONTROL_SETTINGS, _u4(flags, "flags") + _u2(depth, "depth"))

    def heap_dump(self, *, segment: bool = True, time: int = 0,
                  split_bytes: int | None = None,
                  split_objects: int | None = None) -> "HeapDumpBuilder":
        """Start a heap dump; use the returned builder as a context manager.

        On exit it writes one HEAP_DUMP_SEGMENT (0x1C), or one HEAP_DUMP (0x0C) when
        ``segment=False``, whose length is that of its content. ``split_bytes`` /
        ``split_objects`` (segments only) start a new segment before a sub-record once the
        current one holds that many bytes / sub-records, the way ART does (4096 / 128) and
        HotSpot does with its 1 MiB buffer; after a split the last HEAP_DUMP_INFO is
        re-emitted before the next object. Nothing is written if the block raises.
        """
        return HeapDumpBuilder(self, segment=segment, time=time, split_bytes=split_bytes,
                               split_objects=split_objects)

    def heap_dump_end(self, time: int = 0) -> None:
        """Write HEAP_DUMP_END (0x2C), which closes a run of segments."""
        self.record(Tag.HEAP_DUMP_END, b"", time)

    # -- convenience ---------------------------------------------------------------------------
    def instance_field_types(self, class_id: int) -> tuple[int, ...]:
        """Field types of an instance of ``class_id``, own fields first then the superclass's,
        from the CLASS_DUMPs written so far (ValueError if a class in the chain is unknown)."""
        return _flatten_layout(self._layouts, class_id)


def _flatten_layout(layouts: Mapping[int, tuple[int, tuple[int, ...]]],
                    class_id: int) -> tuple[int, ...]:
    out: list[int] = []
    seen = set()
    cid = class_id
    while cid:
        if cid in seen:
            raise ValueError(f"superclass cycle through class {cid:#x}")
        seen.add(cid)
        layout = layouts.get(cid)
        if layout is None:
            raise ValueError(f"no CLASS_DUMP seen for class {cid:#x}; pass field_types")
        cid, types = layout
        out.extend(types)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Heap dump builder
# ---------------------------------------------------------------------------------------------

class HeapDumpBuilder:
    """Collects heap-dump sub-records; written as one 0x1C/0x0C record (or several, when
    splitting) by :meth:`close` / on leaving the ``with`` block.

    Usually obtained from :meth:`HprofWriter.heap_dump`. ``HeapDumpBuilder(id_size=4)``
    without a writer is a standalone byte builder: :meth:`getvalue` returns the sub-records,
    :meth:`close` writes nothing, and names must be given as sids (not str).

    Object methods return the object id; root methods return None.
    """

    def __init__(self, writer: HprofWriter | None = None, *, id_size: int | None = None,
                 segment: bool = True, time: int = 0, split_bytes: int | None = None,
                 split_objects: int | None = None):
        if writer is not None:
            if id_size is not None and id_size != writer.id_size:
                raise ValueError("id_size differs from the writer's")
            id_size = writer.id_size
            self._layouts = writer._layouts
        else:
            id_size = 4 if id_size is None else id_size
            if isinstance(id_size, bool) or id_size not in (4, 8):
                raise ValueError(f"id_size must be 4 or 8, not {id_size!r}")
            self._layouts = {}
        if (split_bytes or split_objects) and (writer is None or not segment):
            raise ValueError("splitting needs a writer and segment=True "
                             "(HEAP_DUMP is a single record)")
        self.id_size = id_size
        self.segment = segment
        self._writer = writer
        self._p = _Packer(id_size)
        self._time = _int(time, 0, _U4_MAX, "time")
        self._split_bytes = split_bytes
        self._split_objects = split_objects
        self._buf = bytearray()
        self._count = 0          # sub-records in the current segment
        self._written = 0        # records already written
        self._heap_info: bytes | None = None
        self._pending_info: bytes | None = None
        self._closed = False

    # -- plumbing ------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Bytes buffered for the current record."""
        return len(self._buf)

    @property
    def records_written(self) -> int:
        """Number of 0x1C/0x0C records this builder has written so far."""
        return self._written

    def getvalue(self) -> bytes:
        """The sub-record bytes buffered for the current record."""
        return bytes(self._buf)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("heap dump builder is closed")

    def _flush(self) -> None:
        tag = Tag.HEAP_DUMP_SEGMENT if self.segment else Tag.HEAP_DUMP
        if self._writer is not None:
            self._writer.record(tag, self._buf, self._time)
        self._written += 1
        self._buf = bytearray()
        self._count = 0

    def _maybe_split(self) -> None:
        if not self._buf:
            return
        if ((self._split_bytes is not None and len(self._buf) >= self._split_bytes)
                or (self._split_objects is not None and self._count >= self._split_objects)):
            self._flush()
            self._pending_info = self._heap_info

    def _root(self, data: bytes) -> None:
        self._check_open()
        self._maybe_split()
        self._buf += data
        self._count += 1

    def _object(self, data: bytes) -> None:
        self._check_open()
        self._maybe_split()
        if self._pending_info is not None:
            self._buf += self._pending_info
            self._pending_info = None
        self._buf += data
        self._count += 1

    def _sid(self, name: Name | None) -> bytes:
        if isinstance(name, (str, bytes, bytearray)):
            if self._writer is None:
                raise ValueError("names given as text need a writer; pass a sid")
            return self._p.id(self._writer.string(name))
        return self._p.id(name, "sid")

    def close(self) -> None:
        """Write the buffered sub-records as a record (an empty one if nothing was written).

        A standalone builder only stops accepting sub-records; :meth:`getvalue` still works.
        """
        if self._closed:
            return
        if self._writer is None:
            self._closed = True
            return
        if self._buf or self._written == 0:
            self._flush()
        self._closed = True

    def discard(self) -> None:
        """Drop the buffered sub-records and close without writing."""
        self._buf = bytearray()
        self._closed = True

    def __enter__(self) -> "HeapDumpBuilder":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.discard()

    def raw(self, data: bytes) -> None:
        """Append arbitrary bytes to the current record (for crafting corrupt inputs)."""
        self._check_open()
        self._buf += bytes(data)

    # -- roots ---------------------------------------------------------------------------------
    def root_unknown(self, obj: int) -> None:
        """ROOT_UNKNOWN (0xFF): ID object."""
        self._root(_sub(SubTag.ROOT_UNKNOWN, self._p.id(obj)))

    def root_jni_global(self, obj: int, ref: int = 0) -> None:
        """ROOT_JNI_GLOBAL (0x01): ID object; ID JNI global ref."""
        self._root(_sub(SubTag.ROOT_JNI_GLOBAL, self._p.id(obj), self._p.id(ref, "JNI ref")))

    def root_jni_local(self, obj: int, thread_serial: int, frame: int = -1) -> None:
        """ROOT_JNI_LOCAL (0x02): ID object; u4 thread serial; u4 frame (-1 none)."""
        self._root(_sub(SubTag.ROOT_JNI_LOCAL, self._p.id(obj), _u4(thread_serial),
                        _s4(frame, "frame")))

    def root_java_frame(self, obj: int, thread_serial: int, frame: int = -1) -> None:
        """ROOT_JAVA_FRAME (0x03): ID object; u4 thread serial; u4 frame (-1 none)."""
        self._root(_sub(SubTag.ROOT_JAVA_FRAME, self._p.id(obj), _u4(thread_serial),
                        _s4(frame, "frame")))

    def root_native_stack(self, obj: int, thread_serial: int) -> None:
        """ROOT_NATIVE_STACK (0x04): ID object; u4 thread serial."""
        self._root(_sub(SubTag.ROOT_NATIVE_STACK, self._p.id(obj), _u4(thread_serial)))

    def root_sticky_class(self, obj: int) -> None:
        """ROOT_STICKY_CLASS (0x05): ID class object."""
        self._root(_sub(SubTag.ROOT_STICKY_CLASS, self._p.id(obj)))

    def root_thread_block(self, obj: int, thread_serial: int) -> None:
        """ROOT_THREAD_BLOCK (0x06): ID object; u4 thread serial."""
        self._root(_sub(SubTag.ROOT_THREAD_BLOCK, self._p.id(obj), _u4(thread_serial)))

    def root_monitor_used(self, obj: int) -> None:
        """ROOT_MONITOR_USED (0x07): ID object."""
        self._root(_sub(SubTag.ROOT_MONITOR_USED, self._p.id(obj)))

    def root_thread_object(self, obj: int, thread_serial: int, stack_serial: int = 0) -> None:
        """ROOT_THREAD_OBJ (0x08): ID thread object; u4 thread serial; u4 stack-trace serial
        (ART writes -1)."""
        self._root(_sub(SubTag.ROOT_THREAD_OBJECT, self._p.id(obj), _u4(thread_serial),
                        _s4(stack_serial, "stack serial")))

    def root_interned_string(self, obj: int) -> None:
        """ROOT_INTERNED_STRING (0x89, Android): ID object."""
        self._root(_sub(SubTag.ROOT_INTERNED_STRING, self._p.id(obj)))

    def root_finalizing(self, obj: int) -> None:
        """ROOT_FINALIZING (0x8A, Android, obsolete): ID object."""
        self._root(_sub(SubTag.ROOT_FINALIZING, self._p.id(obj)))

    def root_debugger(self, obj: int) -> None:
        """ROOT_DEBUGGER (0x8B, Android): ID object."""
        self._root(_sub(SubTag.ROOT_DEBUGGER, self._p.id(obj)))

    def root_reference_cleanup(self, obj: int) -> None:
        """ROOT_REFERENCE_CLEANUP (0x8C, Android, obsolete): ID object."""
        self._root(_sub(SubTag.ROOT_REFERENCE_CLEANUP, self._p.id(obj)))

    def root_vm_internal(self, obj: int) -> None:
        """ROOT_VM_INTERNAL (0x8D, Android): ID object."""
        self._root(_sub(SubTag.ROOT_VM_INTERNAL, self._p.id(obj)))

    def root_jni_monitor(self, obj: int, thread_serial: int, depth: int = -1) -> None:
        """ROOT_JNI_MONITOR (0x8E, Android): ID object; u4 thread serial; u4 depth (ART: -1)."""
        self._root(_sub(SubTag.ROOT_JNI_MONITOR, self._p.id(obj), _u4(thread_serial),
                        _s4(depth, "depth")))

    def unreachable(self, obj: int) -> None:
        """UNREACHABLE (0x90, Android, obsolete): ID object."""
        self._root(_sub(SubTag.UNREACHABLE, self._p.id(obj)))

    # -- objects -------------------------------------------------------------------------------
    def class_dump(self, class_id: int, *, super_id: int = 0, loader_id: int = 0,
                   signers_id: int = 0, protection_domain_id: int = 0, instance_size: int = 0,
                   stack_serial: int = 0, constants: Iterable[tuple[int, Any, Any]] = (),
                   statics: Iterable[tuple[Name, Any, Any]] = (),
                   fields: Iterable[tuple[Name, Any]] = (),
                   reserved: tuple[int, int] = (0, 0)) -> int:
        """CLASS_DUMP (0x20).

        ``constants``: (cp index, type, value); ``statics``: (name, type, value);
        ``fields``: (name, type), own instance fields only. Types are codes or names
        (``"int"``, ``"object"``, ``"I"``, ...); names are sids or str (interned through the
        writer). The field types are remembered so :meth:`instance` can pack ``values``
        without ``field_types``.
        """
        p = self._p
        parts = [p.id(class_id, "class id"), _u4(stack_serial, "stack serial"),
                 p.id(super_id, "super id"), p.id(loader_id, "loader id"),
                 p.id(signers_id, "signers id"), p.id(protection_domain_id, "protection domain id"),
                 p.id(reserved[0], "reserved id"), p.id(reserved[1], "reserved id"),
                 _u4(instance_size, "instance size")]
        constants = list(constants)
        parts.append(_u2(len(constants), "constant pool count"))
        for index, t, value in constants:
            code = type_code(t)
            parts += [_u2(index, "cp index"), bytes((code,)), p.value(code, value)]
        statics = list(statics)
        parts.append(_u2(len(statics), "static field count"))
        for name, t, value in statics:
            code = type_code(t)
            parts += [self._sid(name), bytes((code,)), p.value(code, value)]
        fields = list(fields)
        parts.append(_u2(len(fields), "instance field count"))
        types = []
        for name, t in fields:
            code = type_code(t)
            types.append(code)
            parts += [self._sid(name), bytes((code,))]
        self._object(_sub(SubTag.CLASS_DUMP, *parts))
        self._layouts[class_id] = (super_id or 0, tuple(types))
        return class_id

    def instance_field_types(self, class_id: int) -> tuple[int, ...]:
        """Field types of an instance of ``class_id`` (own first, then the superclass's)."""
        return _flatten_layout(self._layouts, class_id)

    def instance(self, obj_id: int, class_id: int, data: bytes | None = None, *,
                 values: Sequence[Any] | None = None,
                 field_types: Sequence[int | str] | None = None,
                 stack_serial: int = 0) -> int:
        """INSTANCE_DUMP (0x21).

        Either ``data`` (the field bytes, as they are) or ``values`` packed big-endian by
        ``field_types`` (objects as ids, char as int or 1-char str). Without ``field_types``
        the types come from the CLASS_DUMPs of ``class_id`` and its superclasses written
        earlier through the same writer (own fields first, then the superclass's).
        """
        if data is not None and values is not None:
            raise ValueError("give either data or values, not both")
        if values is not None:
            if field_types is None:
                field_types = self.instance_field_types(class_id)
            data = self._p.values(field_types, values)
        elif field_types is not None:
            raise ValueError("field_types given without values")
        data = b"" if data is None else bytes(data)
        self._object(_sub(SubTag.INSTANCE_DUMP, self._p.id(obj_id, "object id"),
                          _u4(stack_serial, "stack serial"), self._p.id(class_id, "class id"),
                          _u4(len(data), "instance data length"), data))
        return obj_id

    def object_array(self, array_id: int, array_class_id: int, elements: Iterable[int | None],
                     *, stack_serial: int = 0) -> int:
        """OBJ_ARRAY_DUMP (0x22); ``elements`` are ids (None is 0)."""
        p = self._p
        elems = [p.id(e, "element id") for e in elements]
        self._object(_sub(SubTag.OBJECT_ARRAY_DUMP, p.id(array_id, "array id"),
                          _u4(stack_serial, "stack serial"), _u4(len(elems), "length"),
                          p.id(array_class_id, "array class id"), b"".join(elems)))
        return array_id

    def primitive_array(self, array_id: int, elem_type: int | str, values: Any, *,
                        stack_serial: int = 0) -> int:
        """PRIM_ARRAY_DUMP (0x23).

        ``values``: a sequence packed by ``elem_type`` (ints given signed or as unsigned bit
        patterns, char as ints or a str, which is written as UTF-16 code units), or
        bytes/bytearray/memoryview taken as they are (count = len // element size).
        """
        t = type_code(elem_type)
        if t == OBJECT:
            raise ValueError("a primitive array cannot have element type object")
        count, data = self._p.array(t, values)
        self._object(_sub(SubTag.PRIMITIVE_ARRAY_DUMP, self._p.id(array_id, "array id"),
                          _u4(stack_serial, "stack serial"), _u4(count, "length"),
                          bytes((t,)), data))
        return array_id

    def primitive_array_nodata(self, array_id: int, elem_type: int | str, count: int, *,
                               stack_serial: int = 0) -> int:
        """PRIMITIVE_ARRAY_NODATA (0xC3, Android/Dalvik): like 0x23 without element bytes."""
        t = type_code(elem_type)
        if t == OBJECT:
            raise ValueError("a primitive array cannot have element type object")
        self._object(_sub(SubTag.PRIMITIVE_ARRAY_NODATA, self._p.id(array_id, "array id"),
                          _u4(stack_serial, "stack serial"), _u4(count, "length"), bytes((t,))))
        return array_id

    def heap_dump_info(self, heap_id: int | str, name_sid: Name | None = None) -> None:
        """HEAP_DUMP_INFO (0xFE, Android): u4 heap id; ID heap-name sid.

        ``heap_id`` is ``"app"``/``"image"``/``"zygote"``/``"default"`` or a number (0x41,
        0x49, 0x5A, 0, anything else as is). ``name_sid`` defaults to the heap's name,
        interned through the writer.
        """
        if isinstance(heap_id, str):
            try:
                hid = _HEAP_BY_NAME[heap_id]
            except KeyError:
                raise ValueError(f"unknown heap {heap_id!r}; expected one of "
                                 f"{sorted(_HEAP_BY_NAME)}") from None
        else:
            hid = _int(heap_id, 0, _U4_MAX, "heap id")
        if name_sid is None:
            name_sid = _HEAP_NAME.get(hid)
            if name_sid is None:
                raise ValueError(f"no default name for heap id {hid:#x}; pass name_sid")
        self._check_open()
        self._maybe_split()
        info = _sub(SubTag.HEAP_DUMP_INFO, _u4(hid), self._sid(name_sid))
        self._buf += info
        self._heap_info = info
        self._pending_info = None
