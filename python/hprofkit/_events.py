"""The push parser's events (hprofkit.Parser.feed and finish return lists of them).

Each is a named tuple whose first field, ``kind``, names the event
("header", "record", "subrecord", "end"), so code that tells events apart
by ``event[0]`` or unpacks the leading fields keeps working.  ``name`` is a
property: the tag's name, as Record.name and SubRecord.name give it."""

from __future__ import annotations

from typing import NamedTuple


def _tag_name(tag: int, sub: bool) -> str:
    from . import _hprof  # the C module loads this one: import it late
    return _hprof.tag_name(tag, sub=sub) or (f"UNKNOWN_0x{tag:02X}" if not sub else "UNKNOWN")


class HeaderEvent(NamedTuple):
    """The file header: its magic ("JAVA PROFILE 1.0.2"), identifier size
    (4 or 8) and timestamp (milliseconds since the epoch)."""
    kind: str
    magic: str
    id_size: int
    timestamp: int


class RecordEvent(NamedTuple):
    """A top-level record began: its tag, the absolute offset of its tag
    byte, and its body length (the 9-byte record head excluded)."""
    kind: str
    tag: int
    offset: int
    length: int

    @property
    def name(self) -> str:
        """The tag's name, e.g. 'HEAP_DUMP_SEGMENT'; UNKNOWN_0xNN for others."""
        return _tag_name(self.tag, False)


class SubrecordEvent(NamedTuple):
    """A heap sub-record: its tag, the absolute offset of its tag byte, its
    length (tag included); ``id`` the object, class, array or root object it
    names (None for HEAP_DUMP_INFO); ``class_id`` the class of an
    INSTANCE_DUMP or OBJECT_ARRAY_DUMP (else None); ``heap`` the heap id in
    effect (Android's HEAP_DUMP_INFO, 0 = default); ``payload`` the instance
    field bytes or array elements as a read-only memoryview (None for other
    sub-records, and for a sub-record over 1 MiB that arrived split across
    chunks, whose payload the parser streams rather than holds)."""
    kind: str
    tag: int
    offset: int
    length: int
    id: int | None
    class_id: int | None
    heap: int
    payload: memoryview | None

    @property
    def name(self) -> str:
        """The tag's name, e.g. 'INSTANCE_DUMP'."""
        return _tag_name(self.tag, True)


class EndEvent(NamedTuple):
    """The input ended cleanly on a record boundary (from finish())."""
    kind: str


Event = HeaderEvent | RecordEvent | SubrecordEvent | EndEvent
