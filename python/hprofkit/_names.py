"""Class names as analyzers show them.

HotSpot writes JVM internal names ("java/lang/String", "[Ljava/lang/Object;",
"[[I"); ART writes Java names ("java.lang.String", "java.lang.Object[]").
Both become what VisualVM and MAT print: "java.lang.String",
"java.lang.Object[]", "int[][]"."""

from __future__ import annotations

import codecs

from ._types import DESCRIPTOR_NAMES, TYPE_NAMES


def _modified_utf8_errors(exc: UnicodeError) -> tuple[str, int]:
    """Error handler of decode_utf8: a surrogate written as three bytes
    (modified UTF-8 writes astral characters as a pair of them) is kept as
    the surrogate; any other bad byte becomes U+FFFD."""
    assert isinstance(exc, UnicodeDecodeError)
    raw, start = exc.object, exc.start
    if raw[start] == 0xED and start + 2 < len(raw) and 0xA0 <= raw[start + 1] <= 0xBF and \
            0x80 <= raw[start + 2] <= 0xBF:
        return chr(0xD000 | (raw[start + 1] & 0x3F) << 6 | (raw[start + 2] & 0x3F)), start + 3
    return "\ufffd", exc.end


codecs.register_error("hprofkit.modified_utf8", _modified_utf8_errors)


def decode_utf8(raw: bytes) -> str:
    """Decodes HPROF's modified UTF-8 (Java's) and never fails: the one
    decoding of names and strings of the package.  Bytes that are not valid
    become U+FFFD, as do unpaired surrogates."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Modified UTF-8 writes NUL as C0 80 and astral characters as surrogate pairs.
    text = bytes(raw).replace(b"\xc0\x80", b"\x00").decode("utf-8", "hprofkit.modified_utf8")
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def java_name(name: str) -> str:
    """The Java name of a class written either way in a dump."""
    depth = 0
    while depth < len(name) and name[depth] == "[":
        depth += 1
    if depth == 0:
        return name.replace("/", ".")
    element = name[depth:]
    if element in DESCRIPTOR_NAMES:
        base = DESCRIPTOR_NAMES[element]
    elif element.startswith("L") and element.endswith(";"):
        base = element[1:-1].replace("/", ".")
    else:  # not a descriptor after all
        return name.replace("/", ".")
    return base + "[]" * depth


def array_name(elem_type: int) -> str:
    """Name of a primitive array class by HPROF element type, e.g. 8 -> 'byte[]'."""
    return TYPE_NAMES.get(elem_type, f"type{elem_type}") + "[]"
