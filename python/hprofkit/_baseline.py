"""Heap baseline files (what hprof_baseline.check() compares with): their
names, their text, and reading them back without trusting them.

Names.  A baseline belongs to a test `key` (the test's id inside its module:
the function and its parametrize id, classes before it joined by "::") and
to check()'s `name`.  Its stem is the key itself, with "." and the name
after it, when that is plain: lowercase ASCII letters, digits, "_" and "-",
then maybe a parametrize id in brackets that may also hold ".", "[" and "]";
a name of letters, digits, "_" and "-"; 100 characters at most.  Any other
key keeps a readable stem (every other character made "_", cut at 80) and
gets "@" and 12 hex digits of the SHA-256 of the exact key and name.  Plain
stems never hold "@", never differ from each other only in letter case
(macOS and Windows fold case) and read back into one key and name: distinct
tests never share a file.

Text (format 3): JSON with one entry a line, so that a change is a one-line
diff: the test and name it belongs to, the retained bytes of the classes
asked for, and every class's [instances, shallow bytes] of its reachable
objects (docs/reference/behaviour.md), sorted.  Format 2 is the same text
counting every object, garbage too (hprofkit before reachable objects
were the rule): a format-2 baseline is compared with every object of the
heap, as it was written, until --hprof-update-baselines rewrites it.
Format 1 (json.dump with indent=1, four lines a class, the fields of
format 2 without test and name) is read as well, for one release."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from typing import Any

from ._io import special_kind

FORMAT = 3
READ_FORMATS = (1, 2, 3)
COUNTS_GARBAGE = (1, 2)  # formats that counted unreachable objects too
MAX_BYTES = 64 << 20  # a baseline of 100,000 classes is about 6 MB
KIND = "a heap baseline"

_PLAIN_TEST = re.compile(r"[a-z0-9_\-]+(\[[a-z0-9_.\-\[\]]*\])?")
_PLAIN_NAME = re.compile(r"[a-z0-9_\-]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]]+")
_PLAIN_MAX, _HASHED_MAX, _HASH_DIGITS = 100, 80, 12


class BaselineError(ValueError):
    """A baseline file that cannot be read as one; the message says why."""


def stem(key: str, name: str | None = None) -> str:
    """The file name (without .json) of the baseline of test `key` and check() name `name`."""
    joined = key if name is None else f"{key}.{name}"
    if (_PLAIN_TEST.fullmatch(key) and (name is None or _PLAIN_NAME.fullmatch(name))
            and len(joined) <= _PLAIN_MAX):
        return joined
    exact = json.dumps([key, name]).encode("ascii")
    readable = _UNSAFE.sub("_", joined)[:_HASHED_MAX].lstrip(".")
    return f"{readable}@{hashlib.sha256(exact).hexdigest()[:_HASH_DIGITS]}"


def legacy_stem(key: str, name: str | None = None) -> str:
    """The name format-1 baselines had: the test's name without its classes,
    sanitised and cut at 200 characters (names that could collide)."""
    test = key.rsplit("::", 1)[-1]
    return re.sub(r"[^\w.\-\[\]]+", "_", test + (f".{name}" if name else ""))[:200]


def render(summary: dict[str, Any], key: str, name: str | None) -> str:
    """The text of a baseline (format 3) holding Baseline.summary()'s `summary`."""
    lines = ["{", f' "format": {FORMAT},', f' "test": {json.dumps(key)},', f' "name": {json.dumps(name)},']
    lines += _table("retained", [(n, json.dumps(v)) for n, v in sorted(summary["retained"].items())], ",")
    lines += _table("classes", [(n, f"[{i}, {s}]") for n, (i, s) in sorted(summary["classes"].items())], "")
    return "\n".join(lines + ["}", ""])


def _table(key: str, rows: list[tuple[str, str]], end: str) -> list[str]:
    if not rows:
        return [f' "{key}": {{}}{end}']
    body = [f"  {json.dumps(n)}: {v}," for n, v in rows]
    body[-1] = body[-1][:-1]
    return [f' "{key}": {{', *body, f" }}{end}"]


def read_bytes(path: str) -> bytes:
    """The bytes of the file at path, read only if it is a regular file of at
    most MAX_BYTES: a FIFO is refused at once (opened without waiting for a
    writer), as are devices and directories.  FileNotFoundError if missing;
    BaselineError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise BaselineError(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise BaselineError(os.strerror(errno.EISDIR).lower())
        if not stat.S_ISREG(st.st_mode):
            raise BaselineError(f"{special_kind(st.st_mode)}, not a regular file")
        if st.st_size > MAX_BYTES:
            raise BaselineError(f"{st.st_size:,} bytes, more than a baseline's {MAX_BYTES >> 20} MiB")
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise BaselineError(f"more than a baseline's {MAX_BYTES >> 20} MiB")
        return data
    finally:
        os.close(fd)


def parse(data: bytes) -> dict[str, Any]:
    """A baseline's fields, checked: {"format", "test", "name", "classes":
    {name: (instances, shallow)}, "retained": {name: bytes}}.  BaselineError
    says what is wrong (not JSON, not an object, a missing or mistyped field)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"not UTF-8 text (byte {exc.start:,} is 0x{data[exc.start]:02x})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:  # digits past int's limit, nesting past the stack's
        raise BaselineError(f"not JSON hprofkit reads: {exc}") from None
    if not isinstance(doc, dict):
        raise BaselineError(f"a JSON {_json_kind(doc)}, not an object")
    version = doc.get("format")
    if type(version) is not int or version not in READ_FORMATS:
        newer = type(version) is int and version > FORMAT
        raise BaselineError(f"format {version!r}" + (", written by a newer hprofkit" if newer else "")
                            + f": this one reads formats {' and '.join(map(str, READ_FORMATS))}")
    for field in ("classes", "retained"):
        if not isinstance(doc.get(field), dict):
            got = "missing" if field not in doc else f"a JSON {_json_kind(doc[field])}"
            raise BaselineError(f'"{field}" is {got}, not an object')
    classes: dict[str, tuple[int, int]] = {}
    for cls, value in doc["classes"].items():
        if not (isinstance(value, list) and len(value) == 2 and all(map(_count, value))):
            raise BaselineError(f"classes[{json.dumps(cls)}] is {json.dumps(value)[:60]}, "
                                f"not [instances, shallow bytes]")
        classes[cls] = (value[0], value[1])
    for cls, value in doc["retained"].items():
        if not _count(value):
            raise BaselineError(f"retained[{json.dumps(cls)}] is {json.dumps(value)[:60]}, not a number of bytes")
    return {"format": version, "test": doc.get("test"), "name": doc.get("name"), "classes": classes,
            "retained": dict(doc["retained"])}


def read(path: str) -> dict[str, Any]:
    """parse(read_bytes(path))."""
    return parse(read_bytes(path))


def is_baseline(path: str) -> bool:
    """Whether the file at path reads as a baseline (of any format read)."""
    try:
        read(path)
    except (OSError, BaselineError):
        return False
    return True


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _json_kind(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")
