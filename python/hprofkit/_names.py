"""Class names as analyzers show them.

HotSpot writes JVM internal names ("java/lang/String", "[Ljava/lang/Object;",
"[[I"); ART writes Java names ("java.lang.String", "java.lang.Object[]").
Both become what VisualVM and MAT print: "java.lang.String",
"java.lang.Object[]", "int[][]"."""

from __future__ import annotations

from ._types import DESCRIPTOR_NAMES, TYPE_NAMES


def decode_utf8(raw: bytes) -> str:
    """Decodes HPROF's modified UTF-8 (Java's) without ever failing."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # Modified UTF-8 writes NUL as C0 80 and astral characters as surrogate pairs.
        return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass").encode(
            "utf-16", "surrogatepass").decode("utf-16", "replace")


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
