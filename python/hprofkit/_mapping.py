"""ProGuard and R8 mapping files: what an obfuscated dump's names were.

    mapping = hprofkit.Mapping.read("mapping.txt")
    mapping.class_name("a.b")                    # 'com.example.Cart', or None
    mapping.deobfuscate_class("[La/b;")          # '[Lcom/example/Cart;' (a dump's own spelling kept)
    mapping.field_name("a.b", "c")               # 'items': fields per declaring class
    mapping.frames("a.b", "d", "(I)V", 12)       # retraced frames, innermost first

The C core parses and indexes the text (core/hp_mapping.c: a 40 MB mapping
in a fraction of a second, a malformed line an error naming it); this
module gives the lookups their meaning:

- classes by exact obfuscated name; arrays and HotSpot's hidden lambda
  classes (``a$$Lambda$1+0x...``) through their element or host class;
  names the mapping does not list are left as they are (JDK classes,
  classes R8 kept);
- fields per declaring class, told apart by type when a class has several
  of one obfuscated name; a field the type does not tell has no name here
  (field_name: None), and a dump's values and field order tell it
  (_overloads.py, for heaps and deobfuscate);
- method frames by R8's line ranges: the range that holds the frame's line
  gives the original line, and inlined frames (lines with the same range,
  innermost first) come back as several frames; overloads are told apart
  by the frame's signature (R8's residual signature where it gives one);
  frames of synthesized methods are dropped where a real frame remains,
  and an outline frame hands its line to the call site that follows it
  (``retrace``).  R8's rewriteFrame rules apply to frames of a thrown
  exception, which heap dumps do not have: they are read and not used."""

from __future__ import annotations

import os
import re
import sys
import threading
import warnings
from typing import Any, Iterator, NamedTuple, Sequence, Union

from . import _hprof
from ._errors import MappingError, MappingWarning
from ._io import open_regular
from ._types import TYPE_CODES

# R8's newest map version this reader knows (com.android.tools.r8.mapping).
SUPPORTED_VERSION = (2, 2)
_PRIMITIVE_DESCRIPTORS = {"boolean": "Z", "byte": "B", "char": "C", "short": "S", "int": "I", "long": "J",
                          "float": "F", "double": "D", "void": "V"}
_CLASS_IN_DESCRIPTOR = re.compile(r"L([^;()]+);")
# The largest mapping.txt read (the index addresses its text with 32 bits); a
# mapping is held in memory whole, about twice its size with its index.
MAX_BYTES = (4 << 30) - 1
# Obfuscated names given to several classes warned about one by one (then one line for the rest).
_SHARED_WARNINGS = 5
# What a `mapping=` argument takes (Mapping.of): a Mapping, the path of a mapping.txt, or None.
MappingArg = Union["Mapping", str, "os.PathLike[str]", None]


class MappedFrame(NamedTuple):
    """One frame of a retraced stack: the clear class (dotted), method,
    JVM descriptor (None when the mapping does not give the types), source
    file (None when unknown) and line (None when unknown)."""
    class_name: str
    method: str
    signature: str | None
    source: str | None
    line: int | None


class _Member(NamedTuple):
    kind: str
    type: str
    owner: str | None
    name: str
    args: str | None
    obfuscated: str
    residual: str | None
    min_lo: int | None
    min_hi: int | None
    orig_lo: int | None
    orig_hi: int | None
    synthesized: int
    outline: int
    positions: dict[int, int]
    line: int
    member_index: int  # among all members: an inline stack's lines are consecutive


def _descriptor(java_type: str, rename: Any = None) -> str:
    """The JVM descriptor of a Java type as mappings write them ("int[]",
    "com.example.Item"); rename maps a dotted class name to the one to use."""
    depth = 0
    while java_type.endswith("[]"):
        java_type, depth = java_type[:-2], depth + 1
    base = _PRIMITIVE_DESCRIPTORS.get(java_type)
    if base is None:
        name = rename(java_type) if rename else java_type
        base = "L" + name.replace(".", "/") + ";"
    return "[" * depth + base


def source_name(clear_class: str, dump_source: str | None, mapped_source: str | None) -> str | None:
    """The source file of a retraced frame: the mapping's (R8's sourceFile),
    else the dump's when the obfuscator left it, else, when the dump shows a
    stand-in (-renamesourcefileattribute's "SourceFile", R8's
    "r8-map-id-...", none), the one ProGuard's ReTrace infers: the outermost
    class's simple name + ".java"."""
    if mapped_source:
        return mapped_source
    if dump_source and dump_source != "SourceFile" and not dump_source.startswith("r8-map-id-"):
        return dump_source
    return clear_class.rsplit(".", 1)[-1].split("$", 1)[0] + ".java"


class Mapping(_hprof.MappingIndex):
    """A ProGuard or R8 mapping.txt (see the module docstring).  Build one
    with ``Mapping.read(path)`` or ``Mapping.parse(text)``; a malformed line
    raises MappingError naming it.  Read-only: one Mapping may be shared by
    threads, dumps and heaps.  ``path`` is the file it was read from (None
    for a text), ``version`` R8's map version ("2.2"), None for ProGuard's."""

    __slots__ = ("path", "version")
    path: str | None
    version: str | None

    def __new__(cls, text: str | bytes, path: str | None = None) -> "Mapping":
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        try:
            self = super().__new__(cls, data)
        except ValueError as exc:
            message, line = exc.args if len(exc.args) == 2 else (str(exc), None)
            raise MappingError(f"malformed mapping: {path or 'the mapping'} {message}", line=line or None,
                               path=path) from None
        self.path = path
        major, minor = divmod(self._version, 1000)
        self.version = f"{major}.{minor}" if self._version else None
        _warn_shared_names(self)
        return self

    # -- building ---------------------------------------------------------------
    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> "Mapping":
        """Reads the mapping file at path (ProGuard's or R8's format): a regular
        file of at most MAX_BYTES; MappingError for anything else (a FIFO or
        /dev/zero would never end)."""
        name = os.fspath(path)

        def refuse(kind: str) -> MappingError:
            return MappingError(f"not a mapping: {name} is {kind}, not a regular file", path=name)
        with open_regular(name, refuse) as f:
            # Its size as it is now (+1: a file that grows meanwhile is read no further than the limit).
            text = f.read(min(os.fstat(f.fileno()).st_size, MAX_BYTES) + 1)
        if len(text) > MAX_BYTES:
            raise MappingError(f"not a mapping: {name} holds 4 GiB or more, more than a mapping may", path=name)
        return cls(text, name)

    @classmethod
    def parse(cls, text: str | bytes, name: str | None = None) -> "Mapping":
        """The mapping whose text is given (str or UTF-8 bytes); `name`
        names it in errors."""
        return cls(text, name)

    @classmethod
    def of(cls, mapping: MappingArg) -> "Mapping | None":
        """A Mapping from what a `mapping=` argument takes: a Mapping, a
        path (read once per process while the file stays the same), or None."""
        if mapping is None or isinstance(mapping, Mapping):
            return mapping
        if isinstance(mapping, (str, os.PathLike)):
            return _read_cached(mapping)
        raise TypeError(f"mapping must be a Mapping or a path to a mapping.txt, not {type(mapping).__name__}")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its text (a batch sends the path of a mapping read from
        a file instead: hprofkit.batch)."""
        return (type(self), (self._text, self.path))

    # -- what it holds -----------------------------------------------------------
    def __len__(self) -> int:
        """Classes in the mapping."""
        return self._class_count

    def __contains__(self, obfuscated: object) -> bool:
        return isinstance(obfuscated, str) and self._find_class(obfuscated) is not None

    def __repr__(self) -> str:
        source = repr(self.path) if self.path else "<text>"
        version = f" R8 map {self.version}" if self.version else ""
        return f"<hprofkit.Mapping {source}{version}: {len(self):,} classes, {self._member_count:,} members>"

    @property
    def newer_than_supported(self) -> bool:
        """Whether R8's map version is newer than the one this reader knows
        (its newer metadata is then read as comments)."""
        return self.version is not None and tuple(map(int, self.version.split("."))) > SUPPORTED_VERSION

    def classes(self) -> Iterator[tuple[str, str]]:
        """(clear, obfuscated) of every class, in the file's order."""
        return iter(self._class_names())

    def example_class(self) -> tuple[str, str] | None:
        """A class to name in messages, (clear, obfuscated): the first that
        is renamed, else the first; None for an empty mapping."""
        first = None
        for clear, obfuscated in self.classes():
            if clear != obfuscated:
                return clear, obfuscated
            first = first or (clear, obfuscated)
        return first

    # -- classes -------------------------------------------------------------------
    def class_name(self, obfuscated: str) -> str | None:
        """The clear name of the class whose obfuscated (dotted) name is given, or None."""
        index = self._find_class(obfuscated)
        return None if index is None else self._class_info(index)[0]

    def obfuscated_class(self, clear: str) -> str | None:
        """The obfuscated name of the class whose clear (dotted) name is given, or None."""
        index = self._find_original(clear)
        return None if index is None else self._class_info(index)[1]

    def source_file(self, clear_or_obfuscated: str) -> str | None:
        """The source file R8 records for a class (by obfuscated name, else by clear name)."""
        index = self._find_class(clear_or_obfuscated)
        if index is None:
            index = self._find_original(clear_or_obfuscated)
        return None if index is None else self._class_info(index)[2]

    def is_synthesized(self, obfuscated: str) -> bool:
        """Whether R8 made the class (com.android.tools.r8.synthesized)."""
        index = self._find_class(obfuscated)
        return index is not None and self._class_info(index)[3]

    def deobfuscate_class(self, name: str) -> str:
        """A class name as a dump writes it, deobfuscated and spelled the same
        way: HotSpot's "a/b", "[La/b;" or ART's "a.b", "a.b[][]".  Names the
        mapping does not give (JDK classes, primitives) come back unchanged."""
        clear = self.lookup_class(name)
        return name if clear is None else clear

    def lookup_class(self, name: str) -> str | None:
        """As deobfuscate_class, but None for a name the mapping does not list."""
        return self._clear_class(name)

    def deobfuscate_descriptor(self, descriptor: str) -> str:
        """A JVM descriptor or signature ("(La/b;I)La/c;") with its class names deobfuscated."""
        def clear(match: re.Match[str]) -> str:
            name = self._clear_class(match.group(1))
            return match.group(0) if name is None else "L" + name + ";"
        return _CLASS_IN_DESCRIPTOR.sub(clear, descriptor)

    def _obfuscate_class(self, clear: str) -> str:
        return self.obfuscated_class(clear) or clear

    # -- fields ----------------------------------------------------------------------
    def _members_of(self, class_index: int, obfuscated: str, kind: str) -> list[_Member]:
        return [m for m in map(_Member._make, self._members(class_index, obfuscated)) if m.kind == kind]

    def field_name(self, class_obfuscated: str, field: str, type: str | None = None) -> str | None:
        """The clear name of field `field` declared by the class whose
        obfuscated (dotted) name is given; `type` (an HPROF basic type name:
        "object", "int"...) tells apart fields of one obfuscated name.  None
        when the mapping does not list it, or lists several that the type
        does not tell apart."""
        index = self._find_class(class_obfuscated)
        if index is None:
            return None
        return self._clear_field(index, field, TYPE_CODES.get(type, 0) if type else 0)

    def fields(self, class_obfuscated: str) -> list[tuple[str, str, str]]:
        """The fields the mapping lists for a class (by obfuscated dotted
        name), in its order: (obfuscated, clear, Java type); [] when none."""
        index = self._find_class(class_obfuscated)
        return [] if index is None else self._class_fields(index)

    # -- frames ----------------------------------------------------------------------
    def frames(self, class_obfuscated: str, method: str, signature: str | None = None,
               line: int | None = None) -> list[MappedFrame] | None:
        """The clear frames one obfuscated frame stands for, innermost first
        (several when R8 inlined methods into it), or None when the mapping
        does not tell (the class or method is not listed, or the frame is
        ambiguous).  `class_obfuscated` is dotted; `signature` the frame's
        JVM descriptor, if known; `line` its line (None or <= 0: unknown)."""
        group, line, ambiguous = self._frame_group(class_obfuscated, method, signature, line)
        if group is None:
            return None
        clear_class = self.class_name(class_obfuscated) or class_obfuscated  # listed: _frame_group found it
        if ambiguous:  # several ranges or overloads of one method, none picked: the method, line unknown
            owner = group[0].owner or clear_class
            signatures = {self._clear_descriptor(m) for m in group}
            return [MappedFrame(owner, group[0].name, signatures.pop() if len(signatures) == 1 else None,
                                self._source_of(owner), None)]
        out = []
        for member in group:
            owner = member.owner or clear_class
            out.append(MappedFrame(owner, member.name, self._clear_descriptor(member), self._source_of(owner),
                                   self._original_line(member, line)))
        if len(out) > 1 and group[-1].synthesized:  # a synthesized outer method: drop it, keep the real frames
            out.pop()
        return out

    def _frame_group(self, class_obfuscated: str, method: str, signature: str | None,
                     line: int | None) -> tuple[list[_Member] | None, int | None, bool]:
        """The inline group (innermost first) a frame falls in, and its line;
        or, when several groups of one method remain (ambiguous: True),
        their outermost lines."""
        index = self._find_class(class_obfuscated)
        if index is None:
            return None, line, False
        methods = self._members_of(index, method, "method")
        if not methods:
            return None, line, False
        groups: list[list[_Member]] = []
        for m in methods:  # R8: consecutive lines with one obfuscated range are one inline stack
            last = groups[-1][-1] if groups else None
            if last is not None and m.min_lo is not None and (m.min_lo, m.min_hi) == (last.min_lo, last.min_hi) \
                    and m.member_index == last.member_index + 1:
                groups[-1].append(m)
            else:
                groups.append([m])
        if signature is not None:
            matching = [g for g in groups if self._residual_descriptor(g[-1]) == signature]
            groups = matching or groups
        if line is not None and line <= 0:
            line = None
        if line is not None:
            holding = [g for g in groups if g[0].min_lo is not None and g[0].min_hi is not None
                       and g[0].min_lo <= line <= g[0].min_hi]
            candidates = holding or [g for g in groups if g[0].min_lo is None]
        else:
            candidates = [g for g in groups if g[0].min_lo is None or (g[0].min_lo, g[0].min_hi) == (0, 65535)]
        if not candidates:
            candidates, line = groups, None
        outermost = {(g[-1].owner, g[-1].name) for g in candidates}
        if len(outermost) > 1:
            return None, line, False  # methods the frame does not tell apart
        if len(candidates) > 1:
            return [g[-1] for g in candidates], None, True
        return candidates[0], line, False

    @staticmethod
    def _original_line(member: _Member, line: int | None) -> int | None:
        """The original line of obfuscated line `line` in `member`'s range."""
        lo, hi = member.orig_lo, member.orig_hi
        if lo is None:  # no original lines given: the line stands, as ProGuard's ReTrace keeps it
            return line if member.min_lo is not None else None
        if lo == 0 and hi in (None, 0):  # R8's ":0:0": no position
            return None
        if hi is None:  # ":c": the whole range comes from line c (an inlined call site)
            return lo
        if line is None or member.min_lo is None or member.min_hi is None:
            return lo if hi == lo else None
        if hi - lo == member.min_hi - member.min_lo:
            return lo + (line - member.min_lo)
        return lo

    def _clear_descriptor(self, member: _Member) -> str | None:
        if member.args is None:
            return None
        args = "".join(_descriptor(a.strip()) for a in member.args.split(",") if a.strip())
        return f"({args}){_descriptor(member.type)}"

    def _residual_descriptor(self, member: _Member) -> str | None:
        """The descriptor the obfuscated program gives this method."""
        if member.residual:
            return member.residual
        if member.args is None:
            return None
        args = "".join(_descriptor(a.strip(), self._obfuscate_class) for a in member.args.split(",") if a.strip())
        return f"({args}){_descriptor(member.type, self._obfuscate_class)}"

    def _source_of(self, clear_class: str) -> str | None:
        index = self._find_original(clear_class)
        return None if index is None else self._class_info(index)[2]

    def clear_frame(self, class_obfuscated: str, method: str, signature: str | None, source: str | None,
                    line: int | None) -> MappedFrame | None:
        """One STACK_FRAME of the dump as one clear frame (its outermost, when
        R8 inlined others into it), or None when the mapping does not tell;
        see frame_of."""
        mapped = self.frames(class_obfuscated, method, signature, line if line is not None and line > 0 else None)
        return None if not mapped else self.frame_of(class_obfuscated, mapped[-1], signature, source, line)

    def frame_of(self, class_obfuscated: str, mapped: MappedFrame, signature: str | None, source: str | None,
                 line: int | None, qualify: bool = True) -> MappedFrame:
        """A retraced frame as a STACK_FRAME of the dump's class shows it: the
        dump's signature (deobfuscated), source file (see source_name) and
        line where the mapping has none; with `qualify`, a method from
        another class (inlined or merged) is named "holder.Class.method" under
        the dump's class, as a frame names its class by the dump's own."""
        clear_class = self.class_name(class_obfuscated) or class_obfuscated
        owner, name = mapped.class_name, mapped.method
        if qualify and owner != clear_class:
            owner, name = clear_class, f"{mapped.class_name}.{mapped.method}"
        if mapped.signature is not None:
            descriptor: str | None = mapped.signature
        else:
            descriptor = self.deobfuscate_descriptor(signature) if signature is not None else None
        return MappedFrame(owner, name, descriptor, source_name(mapped.class_name, source, mapped.source),
                           mapped.line if mapped.line is not None else line)

    def is_outline(self, class_obfuscated: str, method: str) -> bool:
        """Whether the method is an R8 outline (com.android.tools.r8.outline)."""
        index = self._find_class(class_obfuscated)
        return index is not None and any(m.outline for m in self._members_of(index, method, "method"))

    def retrace(self, frames: Sequence[tuple[str, str, str | None, int | None]]) -> list[list[MappedFrame] | None]:
        """A stack (frames innermost first, each (obfuscated dotted class,
        method, descriptor or None, line or None)) retraced: per frame its
        clear frames, or None where the mapping does not tell.  An outline
        frame hands its line to the frame after it, whose outline call-site
        positions give the line that is retraced there; the outline's own
        frame then retraces to nothing ([])."""
        out: list[list[MappedFrame] | None] = []
        carried: int | None = None
        for cls, method, signature, line in frames:
            if carried is not None:
                line = self._callsite_line(cls, method, line, carried)
                carried = None
            if self.is_outline(cls, method):
                carried = line
                out.append([])
                continue
            out.append(self.frames(cls, method, signature, line))
        return out

    def _callsite_line(self, cls: str, method: str, line: int | None, outline_line: int | None) -> int | None:
        """The line an outline's caller stands at: its call-site positions map the outline's line."""
        index = self._find_class(cls)
        if index is None or outline_line is None:
            return line
        for m in self._members_of(index, method, "method"):
            if m.positions and m.min_lo is not None and m.min_hi is not None and line is not None \
                    and m.min_lo <= line <= m.min_hi:
                return m.positions.get(outline_line, line)
        return line


_CACHE: dict[tuple[str, int, int], Mapping] = {}
_CACHE_SIZE = 4  # mappings a process keeps: a batch worker reads each build's once
_CACHE_LOCK = threading.Lock()


def _read_cached(path: str | os.PathLike[str]) -> Mapping:
    """Mapping.read(path), kept while the file keeps its size and time (a
    batch worker or a test session reads a 40 MB mapping once, not per dump)."""
    name = os.fspath(path)
    st = os.stat(name)
    key = (os.path.realpath(name), st.st_mtime_ns, st.st_size)
    with _CACHE_LOCK:
        found = _CACHE.get(key)
    if found is None:
        found = Mapping.read(name)
        with _CACHE_LOCK:
            while len(_CACHE) >= _CACHE_SIZE:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = found
    return found


def _caller_level() -> int:
    """The stacklevel of the first frame outside the package (the user's call)."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _warn_shared_names(mapping: Mapping) -> None:
    """A MappingWarning for each obfuscated name the mapping gives to more
    than one class (a broken or concatenated mapping): the first class in
    the file is the one used; the warning names every line."""
    first: dict[str, int] = {}
    shared: dict[str, list[int]] = {}
    for index, (_clear, obfuscated) in enumerate(mapping._class_names()):
        if obfuscated in first:
            shared.setdefault(obfuscated, [first[obfuscated]]).append(index)
        else:
            first[obfuscated] = index
    name = mapping.path or "the mapping"
    for obfuscated, indexes in list(shared.items())[:_SHARED_WARNINGS]:
        classes = [mapping._class_info(i) for i in indexes]
        lines = ", ".join(str(info[4]) for info in classes)
        warnings.warn(MappingWarning(
            f"{name} gives the obfuscated name {obfuscated} to {len(indexes)} classes (lines {lines}): "
            f"the first, {classes[0][0]}, is used"), stacklevel=_caller_level())
    if len(shared) > _SHARED_WARNINGS:
        warnings.warn(MappingWarning(f"{name} gives {len(shared) - _SHARED_WARNINGS:,} more obfuscated names to "
                                     f"several classes each"), stacklevel=_caller_level())


def warn_misfit(mapping: Mapping, dump: str, listed_classes: int, mismatch: str | None = None) -> None:
    """A MappingWarning when `mapping` does not fit the dump called `dump`:
    it lists none of its classes (listed_classes == 0), or `mismatch` names
    the first name it lacks (a field of a class it renamed)."""
    name = mapping.path or "the mapping"
    first = mapping.example_class() if listed_classes == 0 else None
    if first is not None:
        message = (f"{name} fits no class of {dump}: none of its {len(mapping):,} classes is named in the dump "
                   f"(for example {first[0]} -> {first[1]}); is it the mapping of this build?")
    elif mismatch is not None:
        message = f"{name} does not fit {dump}: {mismatch}"
    else:
        return
    warnings.warn(MappingWarning(message), stacklevel=_caller_level())
