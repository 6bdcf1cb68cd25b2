"""HPROF basic types (format §5): the package's one table of their codes,
names, sizes and JVM descriptor letters; the other views are derived from it."""

from __future__ import annotations

OBJECT, BOOLEAN, CHAR, FLOAT, DOUBLE, BYTE, SHORT, INT, LONG = 2, 4, 5, 6, 7, 8, 9, 10, 11

#: code -> (name, size in bytes or None for an identifier, JVM descriptor letter)
BASIC_TYPES = {
    OBJECT: ("object", None, "L"),
    BOOLEAN: ("boolean", 1, "Z"),
    CHAR: ("char", 2, "C"),
    FLOAT: ("float", 4, "F"),
    DOUBLE: ("double", 8, "D"),
    BYTE: ("byte", 1, "B"),
    SHORT: ("short", 2, "S"),
    INT: ("int", 4, "I"),
    LONG: ("long", 8, "J"),
}

#: code -> name, e.g. 10 -> "int"
TYPE_NAMES = {code: name for code, (name, _, _) in BASIC_TYPES.items()}
#: name -> code, e.g. "int" -> 10
TYPE_CODES = {name: code for code, name in TYPE_NAMES.items()}
#: name -> code of the eight primitive types, in code order
PRIMITIVE_CODES = {name: code for name, code in TYPE_CODES.items() if code != OBJECT}
#: code -> size in bytes of the primitive types (an OBJECT is the dump's id size)
TYPE_SIZES = {code: size for code, (_, size, _) in BASIC_TYPES.items() if size is not None}
#: primitive name -> descriptor letter, e.g. "int" -> "I"
DESCRIPTOR_LETTERS = {name: letter for code, (name, _, letter) in BASIC_TYPES.items() if code != OBJECT}
