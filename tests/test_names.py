"""Class names and modified UTF-8, decoded in C (hprofkit._hprof.java_name,
decode_mutf8: the heap's class names, STRING records) exactly as the
reference below, Python's codecs, decodes them."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hprofkit
from hprofkit import _hprof
from conftest import dump_path

DESCRIPTOR_NAMES = {"Z": "boolean", "C": "char", "F": "float", "D": "double", "B": "byte", "S": "short",
                    "I": "int", "J": "long"}


def _surrogates_kept(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    raw, start = exc.object, exc.start
    if raw[start] == 0xED and start + 2 < len(raw) and 0xA0 <= raw[start + 1] <= 0xBF and \
            0x80 <= raw[start + 2] <= 0xBF:
        return chr(0xD000 | (raw[start + 1] & 0x3F) << 6 | (raw[start + 2] & 0x3F)), start + 3
    return "\ufffd", exc.end


codecs.register_error("test_names.modified_utf8", _surrogates_kept)


def reference_decode(raw: bytes) -> str:
    """Modified UTF-8 by Python's codecs: NUL as C0 80, astral characters as
    surrogate pairs of 3-byte sequences; anything invalid (an unpaired
    surrogate too) becomes U+FFFD."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "test_names.modified_utf8")
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def reference_java_name(name: str) -> str:
    """VisualVM's and MAT's spelling of a class name written either way."""
    depth = len(name) - len(name.lstrip("["))
    if depth == 0:
        return name.replace("/", ".")
    element = name[depth:]
    if element in DESCRIPTOR_NAMES:
        return DESCRIPTOR_NAMES[element] + "[]" * depth
    if element.startswith("L") and element.endswith(";"):
        return element[1:-1].replace("/", ".") + "[]" * depth
    return name.replace("/", ".")  # not a descriptor after all


# Pieces that exercise every rule: surrogate halves, NUL, truncated and stray bytes, descriptors.
PIECES = [b"\xed\xa0\x80", b"\xed\xb0\x80", b"\xed\xaf\xbf", b"\xed\xbf\xbf", b"\xc0\x80", b"\xc0", b"\x80",
          b"\xed", b"\xed\xa0", b"\xe2\x82", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff", b"a", b"/", b"[", b"L",
          b";", b"I", b"Z"]
names = st.binary(max_size=24) | st.lists(st.sampled_from(PIECES), max_size=10).map(b"".join)


@settings(max_examples=3000)
@given(names)
def test_modified_utf8_decodes_as_the_reference(raw):
    assert _hprof.decode_mutf8(raw) == reference_decode(raw)


@settings(max_examples=3000)
@given(names)
def test_java_names_as_the_reference(raw):
    assert _hprof.java_name(raw) == reference_java_name(reference_decode(raw))


@pytest.mark.parametrize("raw, name", [
    (b"java/lang/String", "java.lang.String"), (b"[[I", "int[][]"), (b"[Z", "boolean[]"),
    (b"[[Ljava/lang/Object;", "java.lang.Object[][]"), (b"java.lang.Object[]", "java.lang.Object[]"),
    (b"a/B$C", "a.B$C"), (b"[", "["), (b"[L;", "[]"), (b"caf\xc3\xa9", "caf\u00e9"),
    (b"x\xc0\x80y", "x\x00y"), (b"\xed\xa0\xbd\xed\xb8\x80", "\U0001f600"), (b"\xed\xa0\xbd", "\ufffd"),
])
def test_documented_spellings(raw, name):
    assert _hprof.java_name(raw) == name


@pytest.mark.parametrize("name", ["leakcanary__leak_service_binder.hprof", "mat__oracle_jdk8_05_x64.hprof"])
def test_heap_class_names_are_the_histograms(name):
    """The heap index's names are those of the class histogram (a pass of its own over the
    LOAD_CLASS and STRING records), class by class."""
    with hprofkit.open(dump_path(name)) as dump:
        rows = [row for row in dump.stats().histogram if row.class_id is not None]
        heap = dump.heap()
    assert len(rows) > 100
    for row in rows:
        assert heap.object(row.class_id).name == row.name
