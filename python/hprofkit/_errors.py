"""The hprofkit exception hierarchy.

Defined in Python so they pickle and document themselves; the C module looks
them up once at import and raises them with the byte offset and the tag of
the record or sub-record that failed."""

from __future__ import annotations


class HprofError(ValueError):
    """Bad HPROF input.  ``offset`` is the absolute byte offset of the unit
    (header, record or sub-record) that failed, ``tag`` its tag byte (None
    for the file header) and ``record`` the tag's name."""

    def __init__(self, message: str, offset: int | None = None, tag: int | None = None,
                 record: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.tag = None if tag is None or tag < 0 else tag
        self.record = record

    def __reduce__(self) -> tuple[type[HprofError], tuple[str | int | None, ...]]:
        return (type(self), (self.args[0], self.offset, self.tag, self.record))


class TruncatedError(HprofError):
    """The input ended inside a header, record or sub-record."""


class FormatError(HprofError):
    """The input is not an HPROF file (or a format hprofkit reads), or its header is unsupported."""


class CorruptError(HprofError):
    """Bytes that cannot be a valid record: an unknown sub-tag, an invalid type code..."""


class OverrunError(CorruptError):
    """A sub-record runs past the end of its HEAP_DUMP / HEAP_DUMP_SEGMENT record."""


class UnsupportedError(HprofError):
    """Valid input that the requested output format cannot represent."""


class RestoreLimitError(HprofError):
    """A pack, Tailor mini or BMD that declares more output than a restore
    may write (a decompression bomb: a 165-byte BMD can declare 40 GB): the
    larger of 4 GiB and 1,000 times the input, unless ``max_output=`` (CLI
    ``--max-output``) says otherwise.  Raised before those bytes are written."""


class NoHeapDumpError(HprofError, IndexError):
    """A valid dump without the heap dump asked for: it holds none (only
    records such as strings and classes), or fewer than the number given.
    An IndexError too, as a heap dump number out of range is."""


class FileChangedError(HprofError):
    """The file changed while it was read: it shrank under its mapping, and
    ``offset`` is the byte that was no longer there."""


class MappingError(HprofError):
    """A malformed ProGuard or R8 mapping file: ``line`` is the number (from
    1) of the line at fault, ``path`` the file (None for a text given)."""

    def __init__(self, message: str, line: int | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.path = path

    def __reduce__(self) -> tuple[type[HprofError], tuple[str | int | None, ...]]:
        return (type(self), (self.args[0], self.line, self.path))


class MappingWarning(UserWarning):
    """A mapping that does not fit the dump it is applied to: no class of the
    dump is in it, or a class's field is not; the message names the first
    mismatch."""
