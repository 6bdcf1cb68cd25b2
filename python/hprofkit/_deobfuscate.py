"""deobfuscate(): an obfuscated dump rewritten with the clear names of its
mapping, as an HPROF any reader opens.

Two passes over the dump (held as open() holds it: mapped, or spooled when
compressed or piped):

1. a scan of its names: STRING ids, LOAD_CLASS, every CLASS_DUMP's field
   name ids, STACK_FRAMEs and STACK_TRACEs (memory: the dump's string ids
   and classes, never its objects, unless the mapping gives several fields
   of a class one name: the dump is then indexed, as a heap, for the values
   that tell them apart: _overloads.py);
2. the core renamer (core/hp_rename.c) streams the dump into the output
   with a plan made from the scan and the mapping.

Ids.  No STRING record of the dump is changed: one string may be the name
of a class and of fields of several classes at once (ProGuard names them
all `a`), and those map to different clear names.  Each clear name gets a
new STRING record, one per distinct text, with a new id above the dump's
highest string id; they are written right after the file header, before
any record that uses them.  The LOAD_CLASS records, CLASS_DUMP field tables
and STACK_FRAMEs that change point at them; every other id, object and
byte stays as it was (the old strings too).  Heap records keep their
lengths.  A frame that R8 inlined into others becomes several STACK_FRAMEs,
with new frame ids above the dump's highest, written with the STACK_TRACE
that uses them.  docs/deobfuscation.md lists every difference from Badoo's
deobfuscator."""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from . import _hprof, _overloads
from ._dump import Dump
from ._errors import UnsupportedError
from ._files import CHUNK, Result, _Output
from ._mapping import MappedFrame, Mapping, warn_misfit
from ._output import check_not_same_file, output_file
from ._stats import unfinished_of
from ._types import TYPE_NAMES

TAG_STRING, TAG_LOAD_CLASS, TAG_FRAME, TAG_TRACE = 0x01, 0x02, 0x04, 0x05
SUB_CLASS_DUMP = 0x20
Progress = Callable[[int, int], object]


@dataclass
class DeobfuscateResult(Result):
    """What deobfuscate() did: Result's bytes in and out, and how many class
    names, field names (statics included) and stack frames it renamed, how
    many STRING records it added for them, and the first name of the dump
    the mapping should list and does not (None when it fits; a
    MappingWarning says the same)."""
    classes: int = 0
    fields: int = 0
    frames: int = 0
    strings: int = 0
    mismatch: str | None = None


@dataclass
class _Scan:
    """The names of a dump (pass 1).  Of its strings only the texts of those
    the names use are located, and the highest id kept: memory follows the
    classes and frames, not the strings."""
    id_size: int
    top_string_id: int = 0
    strings: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (offset, length) of its text
    load_class: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # class id -> (serial, stack, name id)
    serial_class: dict[int, int] = field(default_factory=dict)  # class serial -> class id
    class_dumps: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = field(default_factory=dict)
    frames: dict[int, bytes] = field(default_factory=dict)  # frame id -> STACK_FRAME body
    traces: list[bytes] = field(default_factory=list)  # STACK_TRACE bodies

    def name_ids(self) -> set[int]:
        """The string ids the names of classes, fields and frames use."""
        ids = {name for _, _, name in self.load_class.values()}
        for statics, fields in self.class_dumps.values():
            ids.update(name for name, _ in statics)
            ids.update(name for name, _ in fields)
        fmt = struct.Struct(">" + ("Q" if self.id_size == 8 else "I") * 4)
        for body in self.frames.values():
            ids.update(fmt.unpack_from(body)[1:])
        return ids


def _string_id(record: Any, id_format: struct.Struct) -> int | None:
    return id_format.unpack_from(record.body)[0] if record.length >= id_format.size else None


def _scan(view: memoryview, id_size: int) -> _Scan:
    scan = _Scan(id_size)
    ids = "Q" if id_size == 8 else "I"
    id_format = struct.Struct(">" + ids)
    for record in _hprof.records(view):
        tag = record.tag
        if tag == TAG_STRING:
            string_id = _string_id(record, id_format)
            if string_id is not None and string_id > scan.top_string_id:
                scan.top_string_id = string_id
        elif tag == TAG_LOAD_CLASS:
            body = bytes(record.body)
            if len(body) == 8 + 2 * id_size:
                serial, class_id, stack, name_id = struct.unpack(f">I{ids}I{ids}", body)
                scan.load_class[class_id] = (serial, stack, name_id)
                scan.serial_class[serial] = class_id
        elif tag == TAG_FRAME:
            body = bytes(record.body)
            if len(body) == 4 * id_size + 8:
                scan.frames[id_format.unpack_from(body)[0]] = body
        elif tag == TAG_TRACE:
            body = bytes(record.body)
            if len(body) >= 12:
                scan.traces.append(body)
    for sub in _hprof.subrecords(view, tag=SUB_CLASS_DUMP):
        scan.class_dumps[sub.id or 0] = ([(name, type_) for name, type_, _ in sub.statics or ()],
                                         list(sub.fields or ()))
    wanted = scan.name_ids()
    for record in _hprof.records(view):
        if record.tag == TAG_STRING:
            string_id = _string_id(record, id_format)
            if string_id in wanted:
                scan.strings[string_id] = (record.offset + 9 + id_size, record.length - id_size)
    return scan


def _every_string_id(view: memoryview, id_size: int) -> set[int]:
    id_format = struct.Struct(">" + ("Q" if id_size == 8 else "I"))
    return {i for r in _hprof.records(view) if r.tag == TAG_STRING and (i := _string_id(r, id_format)) is not None}


def _fresh_ids(top: int, count: int, id_size: int, used: Callable[[], Any]) -> list[int]:
    """`count` ids above `top` (the highest in use), or, when that would
    overflow id_size, ids in the gaps of used() (every id in use)."""
    limit = (1 << (8 * id_size)) - 1
    if top + count <= limit:
        return list(range(top + 1, top + 1 + count))
    taken = used()
    out: list[int] = []
    candidate = 1
    while len(out) < count:
        if candidate > limit:
            raise UnsupportedError(f"no {count:,} free identifiers of {id_size} bytes for the clear names")
        if candidate not in taken:
            out.append(candidate)
        candidate += 1
    return out


class _Plan:
    """What the renamer changes, made from the scan and the mapping."""

    def __init__(self, view: memoryview, scan: _Scan, mapping: Mapping) -> None:
        self.view, self.scan, self.mapping = view, scan, mapping
        self.ids = "Q" if scan.id_size == 8 else "I"
        self._texts: dict[int, str | None] = {}
        self.clear_ids: dict[str, int] = {}  # clear text -> its index among the new strings (ids later)
        self.records: list[tuple[int, int, Any]] = []  # (tag, key, bytes or a builder of them)
        self.classes: list[tuple[int, list[Any], list[Any]]] = []
        self.renamed_classes = self.renamed_fields = self.renamed_frames = 0
        self.listed_classes = 0
        self.mismatch: str | None = None
        self.dotted: dict[int, str] = {}  # class id -> its obfuscated name, dotted (as mappings write it)

    def text(self, string_id: int) -> str | None:
        if string_id not in self._texts:
            where = self.scan.strings.get(string_id)
            self._texts[string_id] = None if where is None else \
                _hprof.decode_mutf8(bytes(self.view[where[0]:where[0] + where[1]]))
        return self._texts[string_id]

    def new_string(self, text: str) -> "_NewId":
        return _NewId(self.clear_ids.setdefault(text, len(self.clear_ids)))

    # -- classes ------------------------------------------------------------------
    def plan_classes(self) -> None:
        for class_id, (serial, stack, name_id) in self.scan.load_class.items():
            name = self.text(name_id)
            if name is None:
                continue
            self.dotted[class_id] = name.replace("/", ".")
            clear = self.mapping.lookup_class(name)
            if clear is None:
                continue
            self.listed_classes += 1
            if clear != name:
                self.renamed_classes += 1
                self.records.append((TAG_LOAD_CLASS, class_id, (serial, class_id, stack, self.new_string(clear))))

    def plan_fields(self, overloaded: Callable[[], dict[int, list[tuple[int, str]]]]) -> None:
        """The fields' clear names; those of classes whose mapping gives one
        name to several fields come from overloaded() (class id -> (k, clear
        name), k counting statics then fields), called once if any."""
        resolved: dict[int, list[tuple[int, str]]] | None = None
        for class_id, (statics, fields) in self.scan.class_dumps.items():
            cls = self.dotted.get(class_id)
            if cls is None or cls not in self.mapping:
                continue
            listed = self.mapping.fields(cls)
            new_statics = [self._field(cls, listed, name_id, type_) for name_id, type_ in statics]
            new_fields = [self._field(cls, listed, name_id, type_) for name_id, type_ in fields]
            if _overloads.overloads(self.mapping, cls, [(self.text(n), t) for n, t in statics + fields]):
                resolved = overloaded() if resolved is None else resolved
                row = new_statics + new_fields
                for k, clear in resolved.get(class_id, ()):
                    self.renamed_fields += not row[k]
                    row[k] = self.new_string(clear)
                new_statics, new_fields = row[:len(statics)], row[len(statics):]
            if any(new_statics) or any(new_fields):
                self.classes.append((class_id, new_statics, new_fields))

    def _field(self, cls: str, listed: list[tuple[str, str, str]], name_id: int, type_code: int) -> Any:
        """The new name id of a field (0: unchanged).  A name the mapping
        lacks, in a class whose fields it lists, is the mismatch reported."""
        name = self.text(name_id)
        if name is None or name.startswith("<"):  # HotSpot's <resolved_references> & co: no field of the program
            return 0
        clear = self.mapping.field_name(cls, name, TYPE_NAMES.get(type_code))
        if clear is None:
            if listed and self.mismatch is None and all(obfuscated != name for obfuscated, _, _ in listed):
                self.mismatch = (f"field {name!r} of class {cls} ({self.mapping.class_name(cls)}) is not in the "
                                 f"mapping")
            return 0
        if clear == name:
            return 0
        self.renamed_fields += 1
        return self.new_string(clear)

    # -- frames -------------------------------------------------------------------
    def plan_frames(self) -> None:
        """Frames retraced one by one (rewritten in place), then the traces
        whose frames expand (inlined methods) or hand their line on
        (outlines), rewritten with frames of their own."""
        size = self.scan.id_size
        unpack = struct.Struct(f">{self.ids}{self.ids}{self.ids}{self.ids}Ii").unpack
        obfuscated: dict[int, tuple[str, str, str | None, int | None, tuple[Any, ...]]] = {}
        for frame_id, body in self.scan.frames.items():
            _, method_id, sig_id, source_id, serial, line = unpack(body)
            class_id = self.scan.serial_class.get(serial)
            cls = self.dotted.get(class_id) if class_id is not None else None
            method = self.text(method_id)
            if cls is None or method is None or cls not in self.mapping:
                continue
            obfuscated[frame_id] = (cls, method, self.text(sig_id), line if line > 0 else None,
                                    (method_id, sig_id, source_id, serial, line))
        single: dict[int, list[MappedFrame] | None] = {}
        for frame_id, (cls, method, sig, line, _) in obfuscated.items():
            single[frame_id] = self.mapping.frames(cls, method, sig, line)
            mapped = single[frame_id]
            if mapped:  # in place: the outermost frame stands for the frame
                self.records.append((TAG_FRAME, frame_id, self._frame(frame_id, obfuscated[frame_id], mapped[-1])))
                self.renamed_frames += 1
        frames = self.scan.frames
        next_ids = iter(_fresh_ids(max(frames, default=0), sum(len(m or ()) for m in single.values()) + 1, size,
                                   lambda: frames))
        for body in self.scan.traces:
            serial, thread, count = struct.unpack_from(">III", body)
            frame_ids = list(struct.unpack_from(f">{count}{self.ids}", body, 12)) if len(body) == 12 + count * size \
                else []
            stack = [obfuscated.get(f) for f in frame_ids]
            if not any(stack):
                continue
            retraced = self.mapping.retrace([(s[0], s[1], s[2], s[3]) if s else ("", "", None, None) for s in stack])
            if not any(s is not None and r is not None and (len(r) != 1 or r != single.get(f))
                       for f, s, r in zip(frame_ids, stack, retraced)):
                continue  # every frame stands for itself: rewritten in place already
            new_frames: list[tuple[Any, ...]] = []
            new_ids: list[int] = []
            for frame_id, s, mapped in zip(frame_ids, stack, retraced):
                if s is None or mapped is None:
                    new_ids.append(frame_id)
                    continue
                for clear in mapped:  # an outline's frame ([]) is left out: its caller carries its line
                    new_frame = self._frame(next(next_ids), s, clear)
                    new_ids.append(new_frame[1])
                    new_frames.append(new_frame)
            self.records.append((TAG_TRACE, serial, (serial, thread, new_frames, new_ids)))

    def _frame(self, frame_id: int, obfuscated: tuple[Any, ...], clear: MappedFrame) -> tuple[Any, ...]:
        """A STACK_FRAME for one retraced frame: under its own class's serial when
        the dump loads that class, else under the dump's class (Mapping.frame_of)."""
        cls, method, sig, line, (method_id, sig_id, source_id, serial, raw_line) = obfuscated
        owner_serial = self._serial_of(clear.class_name) if clear.class_name != self.mapping.class_name(cls) else None
        dump_source = self.text(source_id) if source_id else None
        framed = self.mapping.frame_of(cls, clear, sig, dump_source, raw_line, qualify=owner_serial is None)
        return ("frame", frame_id, self.new_string(framed.method),
                self.new_string(framed.signature) if framed.signature is not None else sig_id,
                self.new_string(framed.source) if framed.source and framed.source != dump_source else source_id,
                owner_serial if owner_serial is not None else serial, framed.line)

    def _serial_of(self, clear_class: str) -> int | None:
        """The LOAD_CLASS serial of a class of the dump by its clear name."""
        obfuscated = self.mapping.obfuscated_class(clear_class) or clear_class
        for class_id, name in self.dotted.items():
            if name == obfuscated:
                return self.scan.load_class[class_id][0]
        return None


def _resolve_overloads(view: memoryview, mapping: Mapping, out: list[Any]) -> dict[int, list[tuple[int, str]]]:
    """The clear names of fields the mapping gives one name, by class id:
    told apart as a heap with the mapping tells them (_overloads.py), for
    which the dump is indexed (its values tell them apart).  The resolution
    is appended to `out`, for its warnings."""
    with _hprof.Heap(view, mapping=mapping) as heap:
        resolution = _overloads.resolve(heap, mapping)
        if resolution is None:
            return {}
        out.append(resolution)
        classes = heap.classes
        return {classes[ordinal].class_id: names for ordinal, names in resolution.names.items()}


class _NewId:
    """A new STRING id, known once every new string is counted."""
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __bool__(self) -> bool:
        return True


def _assemble(plan: _Plan) -> tuple[bytes, list[tuple[int, int, bytes]], list[tuple[int, tuple[int, ...], tuple[int, ...]]]]:
    """The renamer's arguments: new STRINGs, replaced records, class dumps."""
    scan = plan.scan
    size = scan.id_size
    ids_format = plan.ids
    string_ids = _fresh_ids(scan.top_string_id, len(plan.clear_ids), size,
                            lambda: _every_string_id(plan.view, size))

    def sid(value: Any) -> int:
        return string_ids[value.index] if isinstance(value, _NewId) else value

    prelude = bytearray()
    for text, index in plan.clear_ids.items():
        data = text.encode("utf-8", "surrogatepass")
        prelude += struct.pack(f">BII{ids_format}", TAG_STRING, 0, size + len(data), string_ids[index]) + data

    def record(tag: int, body: bytes) -> bytes:
        return struct.pack(">BII", tag, 0, len(body)) + body

    def frame_record(fields: tuple[Any, ...]) -> bytes:
        _, frame_id, method, sig, source, serial, line = fields
        return record(TAG_FRAME, struct.pack(f">{ids_format}{ids_format}{ids_format}{ids_format}Ii", frame_id,
                                             sid(method), sid(sig), sid(source), serial, line))

    records: list[tuple[int, int, bytes]] = []
    for tag, key, value in plan.records:
        if tag == TAG_LOAD_CLASS:
            serial, class_id, stack, name = value
            records.append((tag, key, record(tag, struct.pack(f">I{ids_format}I{ids_format}", serial, class_id, stack,
                                                               sid(name)))))
        elif tag == TAG_FRAME:
            records.append((tag, key, frame_record(value)))
        else:
            serial, thread, new_frames, new_ids = value
            out = bytearray()
            for new_frame in new_frames:
                out += frame_record(new_frame)
            out += record(TAG_TRACE, struct.pack(f">III{len(new_ids)}{ids_format}", serial, thread, len(new_ids),
                                                 *new_ids))
            records.append((tag, key, bytes(out)))
    classes = [(class_id, tuple(sid(v) for v in statics), tuple(sid(v) for v in fields))
               for class_id, statics, fields in plan.classes]
    return bytes(prelude), records, classes


def deobfuscate(src: Any, dst: Any, *, mapping: Mapping | str | Any, progress: Progress | None = None
                ) -> DeobfuscateResult:
    """Writes `src` (an obfuscated dump, as open() takes it, or "-" for
    stdin) into `dst` (a path, "-" or a binary file; written atomically as
    every output) with
    the clear names of `mapping` (a hprofkit.Mapping or the path of a
    mapping.txt): class names, field names per declaring class and stack
    frames (R8 line ranges, inlined frames).  Everything else is copied
    byte for byte.  A mapping that does not fit the dump is a
    MappingWarning naming the first mismatch."""
    mapping = Mapping.of(mapping)
    if mapping is None:
        raise TypeError("deobfuscate() needs a mapping: a hprofkit.Mapping or the path of a mapping.txt")
    check_not_same_file(src, dst)
    with Dump(sys.stdin.buffer if isinstance(src, str) and src == "-" else src) as dump, dump._view() as view:
        plan = _Plan(view, _scan(view, dump.id_size), mapping)
        plan.plan_classes()
        overloads: list[_overloads.Resolution] = []
        plan.plan_fields(lambda: _resolve_overloads(view, mapping, overloads))
        plan.plan_frames()
        prelude, records, classes = _assemble(plan)
        renamer = _hprof.Renamer(prelude=prelude, records=records, classes=classes)
        total = len(view)
        with output_file(dst) as f:
            out = _Output(f, dst)
            for start in range(0, total, CHUNK):
                chunk = view[start:start + CHUNK]
                out.take(lambda fd: renamer.feed(chunk, fd=fd))
                chunk.release()
                if progress:
                    progress(min(start + CHUNK, total), total)
            out.take(lambda fd: renamer.flush(fd=fd))
        name = dump.path or "the dump"
    warn_misfit(mapping, name, plan.listed_classes, plan.mismatch)
    for resolution in overloads:
        _overloads.warn_ambiguous(mapping, name, resolution)
    return DeobfuscateResult(total, total, out.written, unfinished=unfinished_of(renamer.unfinished),
                             classes=plan.renamed_classes, fields=plan.renamed_fields, frames=plan.renamed_frames,
                             strings=len(plan.clear_ids), mismatch=plan.mismatch)
