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

:func:`write_sample_dump` writes a small, deterministic, realistic application heap (HotSpot
or ART flavour); it is what ``python -m hprofkit demo`` uses.

The byte layouts follow ``docs/hprof-format.md`` of the hprofkit project. This module imports
nothing from the rest of the package, so tests may load it by path.
"""

from __future__ import annotations

import enum
import operator
import os
import random
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterable, Mapping, Sequence, Union

__all__ = [
    "HprofWriter",
    "HeapDumpBuilder",
    "SampleInfo",
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
    "write_sample_dump",
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


OBJECT, BOOLEAN, CHAR, FLOAT, DOUBLE, BYTE, SHORT, INT, LONG = 2, 4, 5, 6, 7, 8, 9, 10, 11

#: Size in bytes of each primitive basic type (OBJECT is ``id_size`` and is not listed).
TYPE_SIZES = {BOOLEAN: 1, CHAR: 2, FLOAT: 4, DOUBLE: 8, BYTE: 1, SHORT: 2, INT: 4, LONG: 8}

_TYPE_BY_NAME = {
    "object": OBJECT, "boolean": BOOLEAN, "char": CHAR, "float": FLOAT, "double": DOUBLE,
    "byte": BYTE, "short": SHORT, "int": INT, "long": LONG,
    # JVM descriptor letters are accepted too ("L" and "[" both mean a reference).
    "L": OBJECT, "[": OBJECT, "Z": BOOLEAN, "C": CHAR, "F": FLOAT, "D": DOUBLE,
    "B": BYTE, "S": SHORT, "I": INT, "J": LONG,
}
_PRIM_LETTER = {"boolean": "Z", "char": "C", "float": "F", "double": "D",
                "byte": "B", "short": "S", "int": "I", "long": "J"}
_PRIM_BY_LETTER = {v: k for k, v in _PRIM_LETTER.items()}
_TYPE_NAME = {OBJECT: "object", BOOLEAN: "boolean", CHAR: "char", FLOAT: "float",
              DOUBLE: "double", BYTE: "byte", SHORT: "short", INT: "int", LONG: "long"}

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
    """Readable Java name of a class as HotSpot or ART spells it.

    ``"java/lang/String"`` -> ``"java.lang.String"``, ``"[C"`` -> ``"char[]"``,
    ``"[[Ljava/lang/Object;"`` -> ``"java.lang.Object[][]"``; ART names (already
    ``"java.lang.Object[]"``) come back unchanged. This is how VisualVM displays class names.
    """
    dims = len(name) - len(name.lstrip("["))
    if dims:
        rest = name[dims:]
        if rest.startswith("L") and rest.endswith(";"):
            base = rest[1:-1].replace("/", ".")
        elif rest in _PRIM_BY_LETTER:
            base = _PRIM_BY_LETTER[rest]
        else:
            raise ValueError(f"malformed array class name {name!r}")
        return base + "[]" * dims
    return name.replace("/", ".")


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
    elem = _PRIM_LETTER.get(name) or "L" + name.replace(".", "/") + ";"
    return "[" * dims + elem


def _utf16_units(text: str) -> bytes:
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
        v = operator.index(v)
        if not 0 <= v <= self.id_max:
            raise ValueError(f"{what} {v:#x} does not fit in a {self.id_size}-byte id"
                             if v >= 0 else f"{what} {v} is negative")
        return v.to_bytes(self.id_size, "big")

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
                raise ValueError(f"bad {_TYPE_NAME[t]} value {v!r}: {exc}") from None
        return _bits(v, TYPE_SIZES[t], _TYPE_NAME[t])

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
                                 f"{_TYPE_NAME[t]} elements ({size} bytes each)")
            return len(data) // size, data
        if t == CHAR and isinstance(values, str):
            data = _utf16_units(values)
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

    def __init__(self, dest: str | os.PathLike | BinaryIO, *, version: str = "1.0.2",
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

    def record(self, tag: int, body: bytes = b"", time: int = 0, *,
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

    @classmethod
    def sample(cls, dest: str | os.PathLike | BinaryIO, **kwargs: Any) -> "SampleInfo":
        """Same as :func:`write_sample_dump`."""
        return write_sample_dump(dest, **kwargs)


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


# ---------------------------------------------------------------------------------------------
# Sample heap
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SampleInfo:
    """What :func:`write_sample_dump` wrote.

    ``histogram`` maps the readable class name (as VisualVM shows it, e.g.
    ``"java.lang.Object[]"``) to the number of instances/arrays of that class;
    ``heaps`` splits it by heap (``"default"`` for HotSpot, ``"image"``, ``"zygote"``,
    ``"app"`` for Android); ``class_ids`` gives every class's object id; ``roots`` counts the
    GC-root sub-records by kind (sub-record tag name).
    """

    android: bool
    version: str
    id_size: int
    seed: int
    histogram: dict[str, int]
    heaps: dict[str, dict[str, int]]
    class_ids: dict[str, int]
    roots: dict[str, int]
    segments: int

    @property
    def instances(self) -> int:
        """Total number of instances and arrays."""
        return sum(self.histogram.values())

    def keyed_histogram(self) -> dict[str, int]:
        """``{"name@hexid": count}``, the key format of the oracle tool."""
        return {f"{n}@{self.class_ids[n]:x}": c for n, c in self.histogram.items()}


@dataclass
class _Cls:
    name: str                      # readable name
    super: str | None
    fields: list[tuple[str, int]]  # own instance fields
    statics: list[tuple[str, int]]
    heap: str
    id: int = 0
    static_values: dict[str, Any] = field(default_factory=dict)
    elem: int | None = None        # primitive array element type, if a primitive array class


@dataclass
class _Obj:
    kind: str                      # "instance", "objarray", "primarray", "class"
    id: int
    cls: _Cls
    heap: str
    payload: Any = None
    trailer: Any = None            # ART: synthetic value array written after a String


_PRIM_ARRAYS = ["boolean[]", "char[]", "float[]", "double[]", "byte[]", "short[]", "int[]",
                "long[]"]
_ELEM = {"boolean[]": BOOLEAN, "char[]": CHAR, "float[]": FLOAT, "double[]": DOUBLE,
         "byte[]": BYTE, "short[]": SHORT, "int[]": INT, "long[]": LONG}

_FIRST = ["Alice", "Bob", "Chloé", "Dmitri", "Eve", "Fatima", "Grace", "Hiro", "Ines", "Jonas",
          "Kateřina", "Liam", "Mei", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Søren", "Tariq",
          "Uma", "Victor", "Wen", "Xavier", "Yuki", "Zoë", "Łukasz", "Ана", "Ming 明", "Ayşe"]
_LAST = ["Smith", "Müller", "García", "Rossi", "Kowalski", "Tanaka", "Nguyen", "Silva",
         "Johansson", "Dubois", "Novak", "Öztürk", "Kim", "Haddad", "O'Brien"]


def _java_hash(text: str) -> int:
    h = 0
    for (u,) in struct.iter_unpack(">H", _utf16_units(text)):
        h = (31 * h + u) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _align8(n: int) -> int:
    return (n + 7) & ~7


class _Sample:
    """Builds the object graph of the sample heap, then writes it."""

    def __init__(self, android: bool, id_size: int, seed: int, objects: int,
                 jdk8: bool = False):
        self.android = android
        self.jdk8 = jdk8 and not android   # JDK 8 class shapes (char[] strings, Hashtable props)
        self.id_size = id_size
        self.seed = seed
        self.rng = random.Random(seed)
        self.n_users = objects
        self.classes: dict[str, _Cls] = {}
        self.objs: list[_Obj] = []
        self.ref = 4   # ART, 32-bit HotSpot and 64-bit HotSpot with compressed oops
        self.header = 8 if (android or id_size == 4) else 12
        self.array_header = 12 if (android or id_size == 4) else 16
        if android:
            self.next = {"image": 0x70000000, "zygote": 0x12C00000, "app": 0x13000000}
        elif id_size == 8:
            self.next = {"default": 0x0000000716000000}
        else:
            self.next = {"default": 0xE1000000}
        self.heap_of_boot = "image" if android else "default"

    # -- allocation ----------------------------------------------------------------------------
    def alloc(self, size: int, heap: str) -> int:
        addr = self.next[heap]
        self.next[heap] = addr + _align8(max(size, 8))
        return addr

    def instance_size(self, cls: _Cls) -> int:
        n = 0
        c: _Cls | None = cls
        while c is not None:
            n += sum(self.ref if t == OBJECT else TYPE_SIZES[t] for _, t in c.fields)
            c = self.classes[c.super] if c.super else None
        return self.header + n

    def data_size(self, cls: _Cls) -> int:
        n = 0
        c: _Cls | None = cls
        while c is not None:
            n += sum(self.id_size if t == OBJECT else TYPE_SIZES[t] for _, t in c.fields)
            c = self.classes[c.super] if c.super else None
        return n

    # -- classes -------------------------------------------------------------------------------
    def define(self, name: str, sup: str | None = "java.lang.Object",
               fields: Sequence[tuple[str, str]] = (), statics: Sequence[tuple[str, str]] = (),
               heap: str | None = None) -> _Cls:
        if heap is None:
            heap = "app" if (self.android and name.startswith("com.example")) else self.heap_of_boot
        cls = _Cls(name, sup, [(n, type_code(t)) for n, t in fields],
                   [(n, type_code(t)) for n, t in statics], heap)
        if name in _ELEM:
            cls.elem = _ELEM[name]
        self.classes[name] = cls
        return cls

    def define_classes(self) -> None:
        a = self.android
        self.define("java.lang.Object", None)
        self.define("java.lang.Class", fields=[] if not a else [
            ("classLoader", "object"), ("componentType", "object"), ("dexCache", "object"),
            ("name", "object"), ("superClass", "object"), ("accessFlags", "int"),
            ("classSize", "int"), ("objectSize", "int"), ("status", "int")])
        if a:
            self.define("java.lang.String", fields=[("count", "int"), ("hash", "int")],
                        statics=[("serialVersionUID", "long"), ("CASE_INSENSITIVE_ORDER", "object")])
        elif self.jdk8:
            self.define("java.lang.String", fields=[("value", "object"), ("hash", "int")],
                        statics=[("serialVersionUID", "long"),
                                 ("CASE_INSENSITIVE_ORDER", "object")])
        else:
            self.define("java.lang.String",
                        fields=[("value", "object"), ("coder", "byte"), ("hash", "int"),
                                ("hashIsZero", "boolean")],
                        statics=[("serialVersionUID", "long"), ("COMPACT_STRINGS", "boolean"),
                                 ("CASE_INSENSITIVE_ORDER", "object")])
        self.define("java.lang.ClassLoader", fields=[("parent", "object")])
        if a:
            self.define("dalvik.system.BaseDexClassLoader", "java.lang.ClassLoader",
                        fields=[("pathList", "object")])
            self.define("dalvik.system.PathClassLoader", "dalvik.system.BaseDexClassLoader")
        elif self.jdk8:
            self.define("java.security.SecureClassLoader", "java.lang.ClassLoader")
            self.define("java.net.URLClassLoader", "java.security.SecureClassLoader",
                        fields=[("ucp", "object")])
            self.define("sun.misc.Launcher$AppClassLoader", "java.net.URLClassLoader")
        else:
            self.define("jdk.internal.loader.BuiltinClassLoader", "java.lang.ClassLoader",
                        fields=[("nameToModule", "object")])
            self.define("jdk.internal.loader.ClassLoaders$AppClassLoader",
                        "jdk.internal.loader.BuiltinClassLoader")
        self.define("java.lang.ThreadGroup",
                    fields=[("parent", "object"), ("name", "object"), ("maxPriority", "int"),
                            ("daemon", "boolean")])
        self.define("java.lang.Thread",
                    fields=[("name", "object"), ("group", "object"), ("tid", "long"),
                            ("priority", "int"), ("daemon", "boolean")],
                    statics=[("threadSeqNumber", "long")])
        self.define("java.util.AbstractCollection")
        self.define("java.util.AbstractList", "java.util.AbstractCollection",
                    fields=[("modCount", "int")])
        self.define("java.util.ArrayList", "java.util.AbstractList",
                    fields=[("elementData", "object"), ("size", "int")],
                    statics=[("serialVersionUID", "long"), ("DEFAULT_CAPACITY", "int"),
                             ("EMPTY_ELEMENTDATA", "object")])
        self.define("java.util.AbstractMap", fields=[("keySet", "object"), ("values", "object")])
        self.define("java.util.HashMap", "java.util.AbstractMap",
                    fields=[("table", "object"), ("entrySet", "object"), ("size", "int"),
                            ("modCount", "int"), ("threshold", "int"), ("loadFactor", "float")],
                    statics=[("serialVersionUID", "long")])
        self.define("java.util.HashMap$Node",
                    fields=[("hash", "int"), ("key", "object"), ("value", "object"),
                            ("next", "object")])
        if not a:
            # java.lang.System.props: heap tools (VisualVM) read the system properties to
            # learn the VM's reference size, as in every real 64-bit HotSpot dump.
            self.define("java.lang.System", statics=[("props", "object"), ("out", "object")])
            self.define("java.util.Dictionary")
            self.define("java.util.Hashtable", "java.util.Dictionary",
                        fields=[("table", "object"), ("count", "int"), ("threshold", "int"),
                                ("loadFactor", "float"), ("modCount", "int")])
            if self.jdk8:
                self.define("java.util.Properties", "java.util.Hashtable",
                            fields=[("defaults", "object")])
                self.define("java.util.Hashtable$Entry",
                            fields=[("hash", "int"), ("key", "object"), ("value", "object"),
                                    ("next", "object")])
            else:
                self.define("java.lang.StringUTF16",
                            statics=[("HI_BYTE_SHIFT", "int"), ("LO_BYTE_SHIFT", "int")])
                self.define("java.util.Properties", "java.util.Hashtable",
                            fields=[("defaults", "object"), ("map", "object")])
                self.define("java.util.concurrent.ConcurrentHashMap", "java.util.AbstractMap",
                            fields=[("table", "object"), ("nextTable", "object"),
                                    ("baseCount", "long"), ("sizeCtl", "int")])
                self.define("java.util.concurrent.ConcurrentHashMap$Node",
                            fields=[("hash", "int"), ("key", "object"), ("val", "object"),
                                    ("next", "object")])
        if a:
            self.define("android.content.Context")
            self.define("android.content.ContextWrapper", "android.content.Context",
                        fields=[("mBase", "object")])
            self.define("android.app.Activity", "android.content.ContextWrapper",
                        fields=[("mTitle", "object"), ("mResumed", "boolean"),
                                ("mFinished", "boolean"), ("mIdent", "int")])
            base = "android.app.Activity"
        else:
            self.define("com.example.app.BaseActivity",
                        fields=[("mTitle", "object"), ("mResumed", "boolean"),
                                ("mFinished", "boolean"), ("mIdent", "int")])
            base = "com.example.app.BaseActivity"
        self.define("com.example.app.MainActivity", base,
                    fields=[("mAdapter", "object"), ("mCache", "object"), ("mUsers", "object"),
                            ("mStartTime", "long"), ("mVisible", "boolean"), ("mTheme", "int")],
                    statics=[("TAG", "object"), ("sInstance", "object"), ("DEBUG", "boolean"),
                             ("sSeparator", "char"), ("sScale", "float"), ("sRatio", "double"),
                             ("sFlags", "byte"), ("sMode", "short"), ("sLaunchCount", "int"),
                             ("sVersionCode", "long")])
        self.define("com.example.app.model.User",
                    fields=[("id", "long"), ("age", "int"), ("score", "float"),
                            ("balance", "double"), ("premium", "boolean"), ("initial", "char"),
                            ("level", "byte"), ("flags", "short"), ("name", "object"),
                            ("email", "object"), ("avatar", "object"), ("password", "object"),
                            ("friends", "object"), ("bestFriend", "object")],
                    statics=[("sCount", "int"), ("EMPTY", "object")])
        self.define("com.example.app.cache.ImageCache",
                    fields=[("map", "object"), ("maxBytes", "int"), ("hits", "long"),
                            ("misses", "long")])
        self.define("com.example.app.cache.Thumbnail",
                    fields=[("width", "int"), ("height", "int"), ("pixels", "object"),
                            ("histogram", "object"), ("alphaMask", "object"), ("gamma", "object"),
                            ("curve", "object"), ("timestamps", "object"), ("config", "byte")],
                    statics=[("MAX_SIZE", "int")])
        self.define("com.example.app.ui.UserAdapter",
                    fields=[("users", "object"), ("listener", "object"), ("selected", "int")])
        arrays = _PRIM_ARRAYS + ["java.lang.Object[]", "java.lang.String[]",
                                 "java.util.HashMap$Node[]", "java.lang.Thread[]"]
        if not a:
            arrays.append("java.util.Hashtable$Entry[]" if self.jdk8
                          else "java.util.concurrent.ConcurrentHashMap$Node[]")
        for name in arrays:
            self.define(name)
        self.define("com.example.app.model.User[]", heap="app" if a else "default")

    # -- object creation -----------------------------------------------------------------------
    def new(self, cls_name: str, heap: str, **values: Any) -> int:
        cls = self.classes[cls_name]
        oid = self.alloc(self.instance_size(cls), heap)
        self.objs.append(_Obj("instance", oid, cls, heap, values))
        return oid

    def prim(self, cls_name: str, heap: str, values: Any) -> int:
        cls = self.classes[cls_name]
        if isinstance(values, (bytes, str)):
            n = len(values) if isinstance(values, bytes) else len(_utf16_units(values)) // 2
        else:
            values = list(values)
            n = len(values)
        oid = self.alloc(self.array_header + n * TYPE_SIZES[cls.elem], heap)
        self.objs.append(_Obj("primarray", oid, cls, heap, values))
        return oid

    def objarray(self, cls_name: str, heap: str, elements: Sequence[int]) -> int:
        cls = self.classes[cls_name]
        oid = self.alloc(self.array_header + len(elements) * self.ref, heap)
        self.objs.append(_Obj("objarray", oid, cls, heap, list(elements)))
        return oid

    def string(self, text: str, heap: str) -> int:
        units = _utf16_units(text)
        h = _java_hash(text)
        latin1 = all(ord(c) < 0x100 for c in text)
        if self.android:
            compressed = all(ord(c) < 0x80 for c in text)
            n = len(units) // 2
            size = 16 + (n if compressed else 2 * n)
            oid = self.alloc(size, heap)
            cls = self.classes["java.lang.String"]
            value_id = oid + (16 if n else 8)
            if compressed:
                trailer = ("byte[]", text.encode("ascii"))
            else:
                trailer = ("char[]", text)
            obj = _Obj("instance", oid, cls, heap,
                       {"count": (n << 1) | (0 if compressed else 1), "hash": h,
                        "value": value_id}, trailer=(value_id,) + trailer)
            self.objs.append(obj)
            return oid
        if self.jdk8:
            return self.new("java.lang.String", heap, value=self.prim("char[]", heap, text),
                            hash=h)
        if latin1:
            value = self.prim("byte[]", heap, text.encode("latin-1"))
            coder = 0
        else:
            # HotSpot keeps UTF16 strings in native (little-endian on x86) byte order.
            value = self.prim("byte[]", heap, text.encode("utf-16-le", "surrogatepass"))
            coder = 1
        return self.new("java.lang.String", heap, value=value, coder=coder, hash=h,
                        hashIsZero=False)

    def build_objects(self) -> None:
        a, r = self.android, self.rng
        boot = self.heap_of_boot
        zyg = "zygote" if a else "default"
        app = "app" if a else "default"
        # class objects, in their heap, before the instances
        for cls in self.classes.values():
            cls.id = self.alloc(512 if a else 96 + 8 * len(cls.statics), cls.heap)
            self.objs.append(_Obj("class", cls.id, cls, cls.heap))
        # boot-image / JDK objects
        empty = self.string("", boot)
        case_cmp = self.new("java.lang.Object", boot)
        self.classes["java.lang.String"].static_values.update(
            serialVersionUID=-6849794470754667710, COMPACT_STRINGS=not self.jdk8,
            CASE_INSENSITIVE_ORDER=case_cmp)
        empty_data = self.objarray("java.lang.Object[]", boot, [])
        self.classes["java.util.ArrayList"].static_values.update(
            serialVersionUID=8683452581122892189, DEFAULT_CAPACITY=10,
            EMPTY_ELEMENTDATA=empty_data)
        self.classes["java.util.HashMap"].static_values.update(
            serialVersionUID=362498820763181265)
        system_name = self.string("system", zyg)
        main_name = self.string("main", zyg)
        system = self.new("java.lang.ThreadGroup", zyg, name=system_name, maxPriority=10)
        main_group = self.new("java.lang.ThreadGroup", zyg, parent=system, name=main_name,
                              maxPriority=10)
        thread_names = (["main", "HeapTaskDaemon", "FinalizerDaemon", "RenderThread"] if a
                        else ["main", "Reference Handler", "Finalizer", "Signal Dispatcher"])
        self.threads: list[tuple[int, str]] = []
        for i, tn in enumerate(thread_names):
            heap = app if tn == "RenderThread" else zyg
            name = main_name if tn == "main" else self.string(tn, heap)
            t = self.new("java.lang.Thread", heap, name=name,
                         group=main_group if tn in ("main", "RenderThread") else system,
                         tid=i + 1, priority=5 if i == 0 or tn == "RenderThread" else 10,
                         daemon=i != 0)
            self.threads.append((t, tn))
        self.classes["java.lang.Thread"].static_values.update(threadSeqNumber=len(thread_names))
        self.thread_array = self.objarray("java.lang.Thread[]", zyg,
                                          [t for t, _ in self.threads])
        if a:
            self.loader = self.new("dalvik.system.PathClassLoader", zyg,
                                   pathList=self.new("java.lang.Object", zyg))
        elif self.jdk8:
            self.loader = self.new("sun.misc.Launcher$AppClassLoader", boot,
                                   ucp=self.new("java.lang.Object", boot))
        else:
            self.loader = self.new("jdk.internal.loader.ClassLoaders$AppClassLoader", boot,
                                   nameToModule=self.new("java.lang.Object", boot))
        self.args = None if a else self.objarray("java.lang.String[]", app, [])
        if not a:
            self.system_properties(boot)
        self.interned = [empty, main_name, system_name]

        # the app
        tag = self.string("MainActivity", app)
        self.interned.append(tag)
        users: list[int] = []
        user_objs: list[_Obj] = []
        for i in range(self.n_users):
            first, last = r.choice(_FIRST), r.choice(_LAST)
            name = self.string(f"{first} {last}", app)
            email = self.string(f"{first.lower()}.{i}@example.com", app)
            avatar = self.prim("byte[]", app, r.randbytes(r.randint(32, 256)))
            password = self.prim("char[]", app, "".join(
                r.choice("abcdefghijkmnopqrstuvwxyz23456789") for _ in range(r.randint(8, 14))))
            uid = self.new("com.example.app.model.User", app, id=1000 + i,
                           age=r.randint(16, 90), score=round(r.uniform(0, 5), 2),
                           balance=round(r.uniform(-500, 5000), 2), premium=r.random() < 0.2,
                           initial=first[0], level=r.randint(-128, 127),
                           flags=r.randint(-32768, 32767), name=name, email=email,
                           avatar=avatar, password=password)
            users.append(uid)
            user_objs.append(self.objs[-1])
        for i, obj in enumerate(user_objs):
            friends = r.sample(users, min(len(users), r.randint(0, 3)))
            obj.payload["friends"] = self.objarray("com.example.app.model.User[]", app, friends)
            obj.payload["bestFriend"] = friends[0] if friends else users[(i + 1) % len(users)]
        self.users = users
        cap = max(10, len(users) + len(users) // 2)
        elements = self.objarray("java.lang.Object[]", app, users + [0] * (cap - len(users)))
        user_list = self.new("java.util.ArrayList", app, elementData=elements, size=len(users),
                             modCount=len(users))
        # image cache: HashMap<String, Thumbnail>
        n_thumbs = max(1, len(users) // 2)
        table_size = 16
        while table_size * 0.75 < n_thumbs:
            table_size *= 2
        buckets: list[int] = [0] * table_size
        for i in range(n_thumbs):
            w, h = r.choice([(8, 8), (16, 16), (16, 9), (12, 12)])
            key_text = f"thumb/{1000 + i}.png"
            key = self.string(key_text, app)
            thumb = self.new(
                "com.example.app.cache.Thumbnail", app, width=w, height=h,
                pixels=self.prim("int[]", app, [r.getrandbits(32) - (1 << 31) for _ in range(w * h)]),
                histogram=self.prim("short[]", app, [r.randint(-32768, 32767) for _ in range(16)]),
                alphaMask=self.prim("boolean[]", app, [r.random() < 0.5 for _ in range(w)]),
                gamma=self.prim("float[]", app, [round(r.uniform(0.5, 2.5), 3) for _ in range(3)]),
                curve=self.prim("double[]", app, [r.random() for _ in range(8)]),
                timestamps=self.prim("long[]", app,
                                     [1700000000000 + r.randint(0, 10**9) for _ in range(4)]),
                config=r.randint(0, 3))
            hsh = _java_hash(key_text)
            spread = (hsh ^ ((hsh & 0xFFFFFFFF) >> 16))
            bucket = spread & (table_size - 1)
            node = self.new("java.util.HashMap$Node", app, hash=spread, key=key, value=thumb,
                            next=buckets[bucket])
            buckets[bucket] = node
        table = self.objarray("java.util.HashMap$Node[]", app, buckets)
        hmap = self.new("java.util.HashMap", app, table=table, size=n_thumbs, modCount=n_thumbs,
                        threshold=int(table_size * 0.75), loadFactor=0.75)
        cache = self.new("com.example.app.cache.ImageCache", app, map=hmap, maxBytes=4 << 20,
                         hits=r.randint(0, 10**6), misses=r.randint(0, 10**4))
        adapter = self.new("com.example.app.ui.UserAdapter", app, users=user_list, selected=-1)
        adapter_obj = self.objs[-1]
        title = self.string("Users", app)
        activity = self.new("com.example.app.MainActivity", app, mAdapter=adapter, mCache=cache,
                            mUsers=user_list, mStartTime=1700000000000 + r.randint(0, 10**6),
                            mVisible=True, mTheme=0x7F0F0001, mTitle=title, mResumed=True,
                            mIdent=r.getrandbits(31))
        if a:
            self.objs[-1].payload["mBase"] = self.new("java.lang.Object", app)
        adapter_obj.payload["listener"] = activity
        self.activity, self.cache, self.user_list = activity, cache, user_list
        self.classes["com.example.app.MainActivity"].static_values.update(
            TAG=tag, sInstance=activity, DEBUG=False, sSeparator="/", sScale=1.5,
            sRatio=16 / 9, sFlags=-3, sMode=2, sLaunchCount=1, sVersionCode=4200001)
        self.classes["com.example.app.model.User"].static_values.update(
            sCount=len(users), EMPTY=self.objarray("com.example.app.model.User[]", app, []))
        self.classes["com.example.app.cache.Thumbnail"].static_values.update(MAX_SIZE=256)

    def system_properties(self, heap: str) -> None:
        """java.lang.System.props: a JDK 9+ Properties backed by a ConcurrentHashMap, or a
        JDK 8 Properties that is a Hashtable."""
        props = {
            "java.version": "1.8.0_392" if self.jdk8 else "17.0.9",
            "java.vendor": "Eclipse Adoptium",
            "java.vm.name": ("OpenJDK 64-Bit Server VM" if self.id_size == 8
                             else "OpenJDK Server VM"),
            "java.vm.version": "25.392-b08" if self.jdk8 else "17.0.9+9", "os.name": "Linux",
            "os.arch": "amd64" if self.id_size == 8 else "i386",
            "sun.arch.data.model": "64" if self.id_size == 8 else "32",
            "file.encoding": "UTF-8", "user.dir": "/home/app", "line.separator": "\n",
            "java.class.path": "/home/app/example-app.jar",
        }
        if self.id_size == 8:
            props["java.vm.compressedOopsMode"] = "Zero based"
        size = 32
        table = [0] * size
        if self.jdk8:
            for key, value in props.items():
                k, v = self.string(key, heap), self.string(value, heap)
                h = _java_hash(key)
                slot = (h & 0x7FFFFFFF) % size
                table[slot] = self.new("java.util.Hashtable$Entry", heap, hash=h, key=k,
                                       value=v, next=table[slot])
            sysprops = self.new(
                "java.util.Properties", heap, count=len(props), threshold=24,
                loadFactor=0.75, modCount=len(props),
                table=self.objarray("java.util.Hashtable$Entry[]", heap, table))
            self.classes["java.lang.System"].static_values.update(props=sysprops)
            return
        for key, value in props.items():
            k, v = self.string(key, heap), self.string(value, heap)
            h = _java_hash(key) & 0xFFFFFFFF
            spread = (h ^ (h >> 16)) & 0x7FFFFFFF
            slot = spread & (size - 1)
            table[slot] = self.new("java.util.concurrent.ConcurrentHashMap$Node", heap,
                                   hash=spread, key=k, val=v, next=table[slot])
        chm = self.new("java.util.concurrent.ConcurrentHashMap", heap,
                       table=self.objarray("java.util.concurrent.ConcurrentHashMap$Node[]",
                                           heap, table),
                       baseCount=len(props), sizeCtl=24)
        sysprops = self.new("java.util.Properties", heap, map=chm, loadFactor=0.75)
        self.classes["java.lang.System"].static_values.update(props=sysprops)
        self.classes["java.lang.StringUTF16"].static_values.update(HI_BYTE_SHIFT=0,
                                                                   LO_BYTE_SHIFT=8)

    # -- output --------------------------------------------------------------------------------
    def flat_values(self, obj: _Obj) -> tuple[list[int], list[Any]]:
        """Field types and values of an instance: own fields first, then the superclass's."""
        types: list[int] = []
        out: list[Any] = []
        c: _Cls | None = obj.cls
        while c is not None:
            for name, t in c.fields:
                types.append(t)
                out.append(obj.payload.get(name, 0))
            if self.android and c.name == "java.lang.String":
                types.append(OBJECT)
                out.append(obj.payload["value"])
            c = self.classes[c.super] if c.super else None
        return types, out

    def write(self, dest: Any, version: str) -> SampleInfo:
        a = self.android
        hist: dict[str, dict[str, int]] = {}
        roots: dict[str, int] = {}

        def count(cls_name: str, heap: str) -> None:
            h = hist.setdefault(heap, {})
            h[cls_name] = h.get(cls_name, 0) + 1

        def raw_name(name: str) -> str:
            return name if a else hotspot_class_name(name)

        with HprofWriter(dest, version=version, id_size=self.id_size,
                         timestamp=1700000000000) as w:
            # The string table comes first, as ART and HotSpot write it. ART numbers strings
            # from 0x400000 (the writer's default); HotSpot uses Symbol* addresses.
            sym = [0x00007F3AD4001000 if self.id_size == 8 else 0xB5401000]

            def sid(text: str) -> int:
                if a:
                    return w.string(text)
                known = w._strings.get(modified_utf8(text))
                if known is not None:
                    return known
                addr = sym[0]
                sym[0] += _align8(16 + len(modified_utf8(text)) + 8)
                return w.string(text, addr)
            for cls in self.classes.values():
                sid(raw_name(cls.name))
            for cls in self.classes.values():
                for n, _ in cls.fields + cls.statics:
                    sid(n)
            if a:
                for n in ("value", "$classOverhead", "app", "image", "zygote"):
                    sid(n)
            frames = []
            if not a:
                frames = [
                    ("main", [("onCreate", "()V", "MainActivity.java", "com.example.app.MainActivity", 42),
                              ("main", "([Ljava/lang/String;)V", "MainActivity.java",
                               "com.example.app.MainActivity", 17)]),
                    ("Reference Handler", [("waitForReferencePendingList", "()V", "Reference.java",
                                            "java.lang.Object", -3),
                                           ("run", "()V", "Thread.java", "java.lang.Thread", 829)]),
                    ("Finalizer", [("wait", "(J)V", "Object.java", "java.lang.Object", -3),
                                   ("run", "()V", "Thread.java", "java.lang.Thread", 829)]),
                    ("Signal Dispatcher", []),
                ]
                for _, fr in frames:
                    for m, s, f, _, _ in fr:
                        sid(m), sid(s), sid(f)
            # classes
            for cls in self.classes.values():
                w.load_class(cls.id, sid(raw_name(cls.name)), stack_serial=0 if a else 1)
            # stack traces
            w.stack_trace(0 if a else 1, 0, [])  # the dummy trace every object points to
            thread_traces = {}
            if not a:
                for i, (tn, fr) in enumerate(frames):
                    ids = [w.stack_frame(None, sid(m), sid(s), sid(f),
                                         w.class_serial(self.classes[c].id), line)
                           for m, s, f, c, line in fr]
                    thread_traces[tn] = w.stack_trace(2 + i, i + 1, ids)
            obj_serial = 0 if a else 1

            split = dict(split_bytes=4096, split_objects=128) if a else dict(split_bytes=1 << 20)
            segment = version in ("1.0.2", "1.0.3")
            if not segment:
                split = {}
            with w.heap_dump(segment=segment, **split) as h:
                def root(kind: str, fn: Any, *args: Any) -> None:
                    fn(*args)
                    roots[kind] = roots.get(kind, 0) + 1

                def emit_roots() -> None:
                    for serial, (t, tn) in enumerate(self.threads, 1):
                        root("ROOT_THREAD_OBJECT", h.root_thread_object, t, serial,
                             -1 if a else thread_traces[tn])
                    main_serial = 1
                    if a:
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.activity, main_serial, -1)
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.users[0], main_serial, -1)
                        root("ROOT_JNI_LOCAL", h.root_jni_local, self.cache, main_serial, -1)
                        root("ROOT_JNI_GLOBAL", h.root_jni_global, self.loader, 0x2A6)
                        root("ROOT_JNI_GLOBAL", h.root_jni_global, self.thread_array, 0x2B6)
                        root("ROOT_NATIVE_STACK", h.root_native_stack, self.threads[3][0], 4)
                        root("ROOT_THREAD_BLOCK", h.root_thread_block, self.threads[1][0], 2)
                        root("ROOT_MONITOR_USED", h.root_monitor_used, self.user_list)
                        root("ROOT_DEBUGGER", h.root_debugger, self.activity)
                        root("ROOT_VM_INTERNAL", h.root_vm_internal, self.thread_array)
                        root("ROOT_UNKNOWN", h.root_unknown, self.cache)
                        for s in self.interned:
                            root("ROOT_INTERNED_STRING", h.root_interned_string, s)
                        for cls in self.classes.values():
                            if cls.heap == "image":
                                root("ROOT_STICKY_CLASS", h.root_sticky_class, cls.id)
                    else:
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.activity, main_serial, 0)
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.args, main_serial, 1)
                        root("ROOT_JNI_LOCAL", h.root_jni_local, self.users[0], main_serial, 0)
                        root("ROOT_JNI_GLOBAL", h.root_jni_global, self.loader, 0x7F3AD8012A70
                             if self.id_size == 8 else 0xB7A12A70)
                        for cls in self.classes.values():
                            if not cls.name.startswith("com.example"):
                                root("ROOT_STICKY_CLASS", h.root_sticky_class, cls.id)

                if a:
                    emit_roots()  # ART visits the roots first
                heap_order = {"image": 0, "zygote": 1, "app": 2}
                objs = sorted(self.objs, key=lambda o: (heap_order[o.heap], o.id)) if a else (
                    [o for o in self.objs if o.kind == "class"]
                    + [o for o in self.objs if o.kind != "class"])
                current_heap = None
                for obj in objs:
                    if a and obj.heap != current_heap:
                        h.heap_dump_info(obj.heap)
                        current_heap = obj.heap
                    cls = obj.cls
                    if obj.kind == "class":
                        self.write_class(h, cls, obj_serial)
                    elif obj.kind == "instance":
                        types, values = self.flat_values(obj)
                        h.instance(obj.id, cls.id, values=values, field_types=types,
                                   stack_serial=obj_serial)
                        count(cls.name, obj.heap)
                        if obj.trailer:
                            vid, arr, data = obj.trailer
                            h.primitive_array(vid, _ELEM[arr], data, stack_serial=obj_serial)
                            count(arr, obj.heap)
                    elif obj.kind == "objarray":
                        h.object_array(obj.id, cls.id, obj.payload, stack_serial=obj_serial)
                        count(cls.name, obj.heap)
                    else:
                        h.primitive_array(obj.id, cls.elem, obj.payload, stack_serial=obj_serial)
                        count(cls.name, obj.heap)
                    if a and cls.statics and obj.kind == "class":
                        count("byte[]", obj.heap)   # the $classOverhead array
                if not a:
                    emit_roots()  # HotSpot dumps thread/JNI/sticky-class roots after the objects
            segments = h.records_written
            if segment:
                w.heap_dump_end()

        total: dict[str, int] = {}
        for hh in hist.values():
            for k, v in hh.items():
                total[k] = total.get(k, 0) + v
        return SampleInfo(android=a, version=version, id_size=self.id_size,
                          seed=self.seed, histogram=dict(sorted(total.items())),
                          heaps={k: dict(sorted(v.items())) for k, v in hist.items()},
                          class_ids={c.name: c.id for c in self.classes.values()},
                          roots=roots, segments=segments)

    def write_class(self, h: HeapDumpBuilder, cls: _Cls, serial: int) -> None:
        a = self.android
        sup = self.classes[cls.super].id if cls.super else 0
        loader = self.loader if (cls.name.startswith("com.example")) else 0
        statics: list[tuple[Name, int, Any]] = []
        if a and cls.statics:
            # ART: a synthetic byte[] (id = class | 1) accounts for the static storage
            overhead = 16 + sum(4 if t == OBJECT else TYPE_SIZES[t] for _, t in cls.statics)
            h.primitive_array(cls.id | 1, BYTE, bytes(overhead), stack_serial=serial)
            statics.append(("$classOverhead", OBJECT, cls.id | 1))
        for name, t in cls.statics:
            statics.append((name, t, cls.static_values.get(name, 0)))
        fields: list[tuple[Name, int]] = list(cls.fields)
        if a and cls.name == "java.lang.String":
            fields.append(("value", OBJECT))   # ART adds the value array as a fake field
        if cls.name.endswith("[]"):
            size = 0
        elif a:
            size = self.instance_size(cls) if cls.name != "java.lang.String" else 16
        else:
            size = self.data_size(cls)
        h.class_dump(cls.id, super_id=sup, loader_id=loader, instance_size=size,
                     stack_serial=serial, statics=statics, fields=fields)


def write_sample_dump(dest: str | os.PathLike | BinaryIO, *, android: bool = False,
                      id_size: int | None = None, seed: int = 0, objects: int = 24,
                      version: str | None = None) -> SampleInfo:
    """Write a small, consistent, realistic application heap and return what it holds.

    HotSpot flavour (default): ``JAVA PROFILE 1.0.2``, 8-byte ids unless ``id_size=4``, class
    names in internal form (``java/lang/String``, ``[Ljava/lang/Object;``, ``[C``), JDK 17
    shapes (compact ``java.lang.String`` with ``byte[] value`` and ``coder``; System.props
    backed by a ConcurrentHashMap), strings/classes/stack traces first, then one segment of
    class dumps, objects and the GC roots of threads, JNI and system classes, then
    HEAP_DUMP_END. ``version="1.0.1"`` (or ``"1.0"``) writes a JDK 8 style dump instead: one
    HEAP_DUMP record, no HEAP_DUMP_END, ``char[]`` strings and Hashtable properties.

    Android flavour (``android=True``): ``JAVA PROFILE 1.0.3`` with 4-byte ids as ART writes
    it: dotted names (``java.lang.Object[]``), string ids from 0x400000, a dummy stack trace,
    roots first (Android roots included), objects in address order split into small segments
    (128 sub-records / 4096 bytes) with HEAP_DUMP_INFO switches between the image, zygote and
    app heaps, Strings followed by their synthetic value arrays and ``$classOverhead`` arrays.

    The heap: java.lang.Object, Class, String, ClassLoader, Thread(Group), ArrayList, HashMap,
    and ``com.example.app`` classes (MainActivity, model.User, cache.ImageCache,
    cache.Thumbnail, ui.UserAdapter) with fields and statics of every type, references in
    cycles, object arrays and primitive arrays of all eight types. ``objects`` is the number
    of ``User`` objects (the heap grows linearly with it); ``seed`` makes it deterministic.
    """
    if id_size is None:
        id_size = 4 if android else 8
    if version is None:
        version = "1.0.3" if android else "1.0.2"
    if version not in VERSIONS:
        raise ValueError(f"unknown HPROF version {version!r}")
    if objects < 1:
        raise ValueError("objects must be at least 1")
    s = _Sample(android, id_size, seed, objects, jdk8=version in ("1.0", "1.0.1"))
    s.define_classes()
    s.build_objects()
    return s.write(dest, version)
