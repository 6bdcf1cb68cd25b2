#!/usr/bin/env python3
"""VisualVM's heap model, written plainly: the independent reference for hprofkit's
semantics="visualvm" (docs/heap-model.md states every rule and why it is VisualVM's).

For every object VisualVM's heap library enumerates, `Model` computes its class name, shallow
size, outbound references, GC-root flag, nearest-GC-root parent and depth, and retained size;
plus the retained size of every class and the biggest objects by retained size. It uses only
hprofkit's record iterators, and a naive iterative dominator algorithm (Cooper, Harvey and
Kennedy's, over an explicit virtual root) where VisualVM has its own fix-point.

    python tests/vvmodel.py DUMP --check [--oracle-cache DIR]   compare with VisualVM
    python tests/vvmodel.py DUMP --facts                        graph figures, as JSON
    python tests/vvmodel.py DUMP                                the oracle's object lines

--check runs VisualVM's heap library (../shared/tools/oracle/graph.sh, modes roots, classes,
objects and objects --sample 0) and prints, per field, how many lines match and the first
mismatches; it exits 0 when everything matches, or when both refuse the dump.
"""

from __future__ import annotations

import argparse
import bz2
import collections
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import hprofkit

ORACLE = Path(__file__).resolve().parents[2] / "shared" / "tools" / "oracle" / "graph.sh"

CLASS_DUMP, INSTANCE_DUMP, OBJECT_ARRAY_DUMP, PRIMITIVE_ARRAY_DUMP = 0x20, 0x21, 0x22, 0x23
OBJECT, BOOLEAN, CHAR, FLOAT, DOUBLE, BYTE, SHORT, INT, LONG = 2, 4, 5, 6, 7, 8, 9, 10, 11
VALUE_SIZE = {BOOLEAN: 1, CHAR: 2, FLOAT: 4, DOUBLE: 8, BYTE: 1, SHORT: 2, INT: 4, LONG: 8}
PRIMITIVE_NAMES = {"Z": "boolean", "C": "char", "F": "float", "D": "double",
                   "B": "byte", "S": "short", "I": "int", "J": "long"}
# The classes VisualVM takes for primitive arrays, by their name in LOAD_CLASS (HotSpot or ART).
PRIMITIVE_ARRAY_CLASSES = {"[Z": BOOLEAN, "[C": CHAR, "[F": FLOAT, "[D": DOUBLE, "[B": BYTE, "[S": SHORT,
                           "[I": INT, "[J": LONG, "boolean[]": BOOLEAN, "char[]": CHAR, "float[]": FLOAT,
                           "double[]": DOUBLE, "byte[]": BYTE, "short[]": SHORT, "int[]": INT, "long[]": LONG}
# GC root kinds in the order VisualVM lists them: tag by tag, each tag's roots in file order.
ROOT_KINDS = {0xFF: "unknown", 0x01: "JNI global", 0x02: "JNI local", 0x03: "Java frame",
              0x04: "native stack", 0x05: "sticky class", 0x06: "thread block", 0x07: "monitor used",
              0x08: "thread object", 0x89: "interned string", 0x8A: "finalizing", 0x8B: "debugger",
              0x8C: "reference cleanup", 0x8D: "VM internal", 0x8E: "JNI monitor"}
REFERENCE_KINDS = ("java.lang.ref.WeakReference", "java.lang.ref.SoftReference",
                   "java.lang.ref.FinalReference", "java.lang.ref.PhantomReference")
SVM_REFERENCES = ("com.oracle.svm.core.heap.heapImpl.DiscoverableReference",
                  "com.oracle.svm.core.heap.DiscoverableReference")
CANNOT_CONTAIN_ITSELF = {"java.lang.String", "java.lang.StringBuffer", "java.lang.StringBuilder", "java.io.File"}
ALIGNMENT = 8
INT32_FILE_LIMIT = 2**31 - 1      # below this file size VisualVM stores retained sizes as int32


class VisualVMFails(Exception):
    """A dump on which VisualVM's heap library itself throws."""


class NotModelled(Exception):
    """A dump VisualVM reads in a way this model does not reproduce."""


def java_name(vm_name: str) -> str:
    """'[[I' -> 'int[][]', '[Ljava/lang/Object;' -> 'java.lang.Object[]', 'a/B' -> 'a.B'."""
    name = vm_name.replace("/", ".")
    depth = len(name) - len(name.lstrip("["))
    if depth == 0:
        return name
    name = name[depth:]
    name = name[1:-1] if name.startswith("L") else PRIMITIVE_NAMES.get(name[:1], name)
    return name + "[]" * depth


def align(size: int) -> int:
    return (size + ALIGNMENT - 1) & ~(ALIGNMENT - 1)


def int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


class ClassInfo:
    __slots__ = ("id", "super_id", "loader_id", "statics", "fields", "raw_size", "index", "vm_name", "name",
                 "instances", "has_arrays", "retained_by_class")

    def __init__(self, sub, index: int) -> None:
        self.id, self.super_id, self.loader_id = sub.id, sub.super_id, sub.loader_id
        self.statics = sub.statics            # [(name id, type, value)]
        self.fields = sub.fields              # declared instance fields [(name id, type)]
        self.raw_size = sub.instance_size     # the dump's instance size (0 in HotSpot dumps)
        self.index = index
        self.vm_name = self.name = ""
        self.instances = 0
        self.has_arrays = False
        self.retained_by_class = 0


class Record:
    """A CLASS_DUMP, INSTANCE_DUMP, OBJECT_ARRAY_DUMP or PRIMITIVE_ARRAY_DUMP of the heap dump."""
    __slots__ = ("tag", "id", "class_id", "data", "count", "elem_type", "in_range", "cls")

    def __init__(self, sub) -> None:
        self.tag, self.id, self.class_id = sub.tag, sub.id, sub.class_id
        self.data = bytes(sub.data) if sub.data is not None else b""
        self.count, self.elem_type = sub.count, sub.elem_type
        self.in_range = False                 # between the first and last instance or array
        self.cls: ClassInfo | None = None     # class of the object VisualVM enumerates (or None)


class Model:
    """VisualVM's view of the first heap dump of a file."""

    def __init__(self, path: str | os.PathLike) -> None:
        with hprofkit.open(path) as dump:
            self.id_size = dump.id_size
            self.file_size = dump.size
            self._read(dump)
        self._resolve_classes()
        self._sizes()
        self._references()
        self._nearest_gc_root()
        self._tree_objects()
        self._dominators()
        self._retained()
        self._retained_by_class()

    # ---- reading ---------------------------------------------------------------------------------

    def _read(self, dump) -> None:
        self.strings: dict[int, str] = {}
        self.load_class: dict[int, int] = {}          # class id -> name id (the last LOAD_CLASS wins)
        heap_dumps, segments, segments_ended = [], [], False
        for rec in dump.records():
            body = rec.body
            if rec.tag >= 0x80:          # VisualVM reads the tag as a signed byte and indexes with it
                raise VisualVMFails(f"top-level record tag 0x{rec.tag:02x} at offset {rec.offset}")
            if rec.length == 0 and rec.tag != 0x2C and dump.version != "1.0.3":
                raise VisualVMFails(f"zero-length record 0x{rec.tag:02x} at offset {rec.offset}")
            if rec.tag == 0x01:
                sid = int.from_bytes(body[:self.id_size], "big")
                self.strings[sid] = bytes(body[self.id_size:]).decode("utf-8", "replace")   # the last wins
            elif rec.tag == 0x02:
                cid = int.from_bytes(body[4:4 + self.id_size], "big")
                self.load_class[cid] = int.from_bytes(body[8 + self.id_size:8 + 2 * self.id_size], "big")
            elif rec.tag == 0x0C:
                heap_dumps.append(rec)
            elif rec.tag == 0x1C and not segments_ended:
                last = segments[-1] if segments else None
                if last is not None and last.offset + 9 + last.length != rec.offset:   # 9: record header
                    raise NotModelled("records between heap dump segments (VisualVM reads them as sub-records)")
                segments.append(rec)
            elif rec.tag == 0x2C and segments:
                segments_ended = True
        if heap_dumps:                                # any HEAP_DUMP record wins over segments
            chosen = heap_dumps[:1]
        elif segments and not segments_ended:
            raise VisualVMFails("heap dump segments without HEAP_DUMP_END")
        else:
            chosen = segments
        self.classes: list[ClassInfo] = []
        self.records: list[Record] = []               # class dumps, instances and arrays, in file order
        self.roots: list[tuple[int, int]] = []        # (tag, object id), in file order
        for rec in chosen:
            for sub in rec.subrecords():
                if sub.tag == CLASS_DUMP:
                    self.classes.append(ClassInfo(sub, len(self.classes)))
                if sub.tag in (CLASS_DUMP, INSTANCE_DUMP, OBJECT_ARRAY_DUMP, PRIMITIVE_ARRAY_DUMP):
                    self.records.append(Record(sub))
                elif sub.tag in ROOT_KINDS:
                    self.roots.append((sub.tag, sub.id))
        # The objects VisualVM enumerates lie between the first instance or array record and the
        # last one (the end of the heap dump when it has no INSTANCE_DUMP): class dumps written
        # among them are objects too, the ones written before are not.
        objects = [i for i, r in enumerate(self.records) if r.tag != CLASS_DUMP]
        if objects:
            has_instances = any(r.tag == INSTANCE_DUMP for r in self.records)
            end = objects[-1] if has_instances else len(self.records) - 1
            for r in self.records[objects[0]:end + 1]:
                r.in_range = True

    def _resolve_classes(self) -> None:
        counts = collections.Counter(c.id for c in self.classes)
        self.class_by_id = {c.id: c for c in self.classes if counts[c.id] == 1}   # duplicated ids resolve to none
        self.java_lang_class = self.java_lang_object = None
        self.primitive_array_class: dict[int, ClassInfo] = {}
        for c in self.classes:                        # the last class of a special name wins
            if c.id not in self.load_class:
                raise NotModelled(f"class 0x{c.id:x} has no LOAD_CLASS record")
            sid = self.load_class[c.id]
            c.vm_name = self.strings.get(sid, f"<unresolved string 0x{sid:x}>")
            c.name = java_name(c.vm_name)
            if c.vm_name in ("java/lang/Class", "java.lang.Class"):
                self.java_lang_class = c
            elif c.vm_name in ("java/lang/Object", "java.lang.Object"):
                self.java_lang_object = c
            elif c.vm_name in PRIMITIVE_ARRAY_CLASSES:
                self.primitive_array_class[PRIMITIVE_ARRAY_CLASSES[c.vm_name]] = c
        # VisualVM's id table: class ids first, then instance and array ids; the first record wins.
        # Id 0 is null to VisualVM (and the virtual root here).
        self.entry: dict[int, Record] = {}
        for classes_first in (True, False):
            for r in self.records:
                if r.id and (r.tag == CLASS_DUMP) == classes_first:
                    self.entry.setdefault(r.id, r)
        for r in self.records:
            if r.in_range:
                r.cls = self.class_of(r)
                if r.tag == CLASS_DUMP and r.id not in self.class_by_id:
                    r.cls = None
                if r.cls is not None and r.tag != CLASS_DUMP:
                    r.cls.instances += 1
                    r.cls.has_arrays |= r.tag != INSTANCE_DUMP

    # ---- lookups VisualVM makes ----------------------------------------------------------------

    def class_of(self, r: Record) -> ClassInfo | None:
        """The class of the object a record stands for (a class dump: java.lang.Class)."""
        if r.tag == CLASS_DUMP:
            return self.java_lang_class
        if r.tag == PRIMITIVE_ARRAY_DUMP:
            if r.elem_type not in self.primitive_array_class:
                raise VisualVMFails(f"no class for primitive arrays of type {r.elem_type}")
            return self.primitive_array_class[r.elem_type]
        return self.class_by_id.get(r.class_id)

    def object_at(self, oid: int) -> Record | None:
        """getInstanceByID: the record of an id, if VisualVM can make an object of it."""
        r = self.entry.get(oid) if oid else None
        if r is None:
            return None
        if r.tag == CLASS_DUMP:
            return r if oid in self.class_by_id else None
        return r if self.class_of(r) is not None else None

    def class_by_name(self, name: str) -> ClassInfo | None:
        return next((c for c in self.classes if c.name == name), None)

    def super_of(self, c: ClassInfo) -> ClassInfo | None:
        return self.class_by_id.get(c.super_id)

    def chain(self, c: ClassInfo | None) -> list[ClassInfo]:
        """A class and its superclasses, the class first."""
        out, seen = [], set()
        while c is not None and c.id not in seen:
            seen.add(c.id)
            out.append(c)
            c = self.super_of(c)
        return out

    def field_values(self, r: Record) -> list[tuple[ClassInfo, int, int, int, object]]:
        """(declaring class, field index in it, name id, type, value) for an instance's fields:
        its class's own fields first, then its superclasses' (their order in INSTANCE_DUMP)."""
        out, pos = [], 0
        for decl in self.chain(r.cls):
            for index, (name, typ) in enumerate(decl.fields):
                width = self.id_size if typ == OBJECT else VALUE_SIZE[typ]
                raw = r.data[pos:pos + width]
                pos += width
                if len(raw) < width:
                    return out
                if typ == OBJECT:
                    value = int.from_bytes(raw, "big")
                elif typ in (FLOAT, DOUBLE):
                    value = struct.unpack(">f" if typ == FLOAT else ">d", raw)[0]
                elif typ == BOOLEAN:
                    value = raw != b"\0"
                else:
                    value = int.from_bytes(raw, "big", signed=typ != CHAR)
                out.append((decl, index, name, typ, value))
        return out

    def field(self, r: Record, name: str) -> tuple[int, object] | None:
        """getValueOfField: (type, value) of the first field of that name, or None."""
        for _, _, name_id, typ, value in self.field_values(r):
            if self.strings.get(name_id) == name:
                return typ, value
        return None

    def static(self, c: ClassInfo, name: str) -> tuple[int, object] | None:
        for name_id, typ, value in c.statics:
            if self.strings.get(name_id) == name:
                return typ, value
        return None

    def reference(self, r: Record | None, name: str, static: bool = False) -> Record | None:
        """The object a field (or a class's static) refers to, if VisualVM can build it."""
        if r is None:
            return None
        v = self.static(r, name) if static else self.field(r, name)
        return self.object_at(v[1]) if v and v[0] == OBJECT else None

    def object_values(self, r: Record) -> list[int]:
        """Raw ids in an object's reference slots, zeros included: an instance's object fields,
        an array's elements, or a class's object statics followed by its class loader."""
        if r.tag == INSTANCE_DUMP:
            if r.cls is None:
                return []
            return [v for _, _, _, typ, v in self.field_values(r) if typ == OBJECT]
        if r.tag == OBJECT_ARRAY_DUMP:
            n = self.id_size
            return [int.from_bytes(r.data[i:i + n], "big") for i in range(0, len(r.data), n)]
        if r.tag == CLASS_DUMP and r.id in self.class_by_id:
            return self.class_values(self.class_by_id[r.id])
        return []

    @staticmethod
    def class_values(c: ClassInfo) -> list[int]:
        return [v for _, typ, v in c.statics if typ == OBJECT] + [c.loader_id]

    # ---- shallow sizes -----------------------------------------------------------------------

    def _sizes(self) -> None:
        obj = self.java_lang_object
        self.new_size = obj is not None and obj.raw_size > 0     # ART writes sizes: trust them
        if self.new_size:
            self.minimum_instance = obj.raw_size
            self.oop, self.oop_rule = self.id_size, "id size"
            if self.id_size == 8:
                self.oop, self.oop_rule = obj.raw_size - 8, "java.lang.Object size - 8"
        elif self.id_size == 8:
            self.oop, self.oop_rule = self._guess_oop()
            self.minimum_instance = self.id_size + self.oop
        else:
            self.oop, self.oop_rule = self.id_size, "id size"
            self.minimum_instance = self.id_size + self.oop
        self._unaligned: dict[int, int] = {}

    def _guess_oop(self) -> tuple[int, str]:
        """Compressed oops on a 64-bit HotSpot dump: the distance between two Unsafe field
        offsets the JDK keeps in statics, else the JVM's compressed-oops property, else 8."""
        for cname, first, second in (("java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset"),
                                     ("java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset")):
            c = self.class_by_name(cname)
            a, b = (self.static(c, first), self.static(c, second)) if c else (None, None)
            if a and b and a[0] == LONG and b[0] == LONG and int32(b[1] - a[1]) in (4, 8):
                return int32(b[1] - a[1]), f"{cname}.{second} - {first}"
        if "java.vm.compressedOopsMode" in self._system_property_keys():
            return 4, "java.vm.compressedOopsMode is set"
        return self.id_size, "default"

    def element_size(self, typ: int) -> int:
        return self.oop if typ == OBJECT else VALUE_SIZE[typ]

    def _unaligned_size(self, c: ClassInfo) -> int:
        if c.id not in self._unaligned:
            size = self.minimum_instance
            for k in reversed(self.chain(c)):
                size += sum(self.element_size(t) for _, t in k.fields)
                self._unaligned.setdefault(k.id, size)
        return self._unaligned[c.id]

    def instance_size(self, c: ClassInfo) -> int:
        if c.has_arrays or (c.instances == 0 and c.name.endswith("[]")):
            return -1                                  # an array class
        return c.raw_size if self.new_size else align(self._unaligned_size(c))

    def array_size(self, typ: int, length: int) -> int:
        return align(self.minimum_instance + 4 + self.element_size(typ) * length)

    def size(self, r: Record) -> int:
        if r.tag == OBJECT_ARRAY_DUMP:
            return self.array_size(OBJECT, r.count)
        if r.tag == PRIMITIVE_ARRAY_DUMP:
            return self.array_size(r.elem_type, r.count)
        return self.instance_size(self.class_of(r))    # a class dump: java.lang.Class's size

    # ---- strings and system properties -------------------------------------------------------

    def string_text(self, r: Record) -> str | None:
        """The oracle's reading of a java.lang.String: char[] (cut by offset/count when both are
        ints inside the array), or byte[], Latin-1 unless coder is 1 (UTF-16 little-endian)."""
        arr = self.reference(r, "value")
        if arr is None or arr.tag != PRIMITIVE_ARRAY_DUMP or arr.elem_type not in (CHAR, BYTE):
            return None
        if arr.elem_type == CHAR:
            text = "".join(chr(int.from_bytes(arr.data[i:i + 2], "big")) for i in range(0, len(arr.data), 2))
            count, offset = self.field(r, "count"), self.field(r, "offset")
            if count and offset and count[0] == INT and offset[0] == INT:
                o, n = offset[1], count[1]
                if o >= 0 and n >= 0 and o + n <= len(text):
                    return text[o:o + n]
            return text
        coder, data = self.field(r, "coder"), arr.data
        if coder and coder[0] == BYTE and coder[1] == 1:
            return "".join(chr(data[k] | data[k + 1] << 8) for k in range(0, len(data) - 1, 2))
        return data.decode("latin-1")

    def _system_property_keys(self) -> set[str]:
        """Keys of java.lang.System.props (or .systemProperties) as VisualVM reads them: a
        Hashtable's table, a JDK 9+ map's table, or an old Hashtable's elementData; defaults too."""
        system = self.class_by_name("java.lang.System")
        props = self.reference(system, "props", True) or self.reference(system, "systemProperties", True)
        if props is None:
            raise VisualVMFails("64-bit dump without the hints VisualVM needs to guess compressed oops")
        keys: set[str] = set()
        todo, seen = [props], set()
        while todo:
            props = todo.pop()
            if props.id in seen or props.tag != INSTANCE_DUMP:
                continue
            seen.add(props.id)
            if (defaults := self.reference(props, "defaults")) is not None:
                todo.append(defaults)
            table = self.reference(props, "table")
            if table is None:
                cmap = self.reference(props, "map")
                table = self.reference(cmap, "table") if cmap else self.reference(props, "elementData")
            if table is None or table.tag != OBJECT_ARRAY_DUMP:
                continue
            for head in self.object_values(table):
                entry, hops = self.object_at(head), set()
                while entry is not None and entry.tag == INSTANCE_DUMP and entry.id not in hops:
                    hops.add(entry.id)
                    key = self.reference(entry, "key")
                    if key is not None and key.tag == INSTANCE_DUMP and (text := self.string_text(key)):
                        keys.add(text)
                    entry = self.reference(entry, "next")
        return keys

    # ---- references ----------------------------------------------------------------------------

    def outbound(self, r: Record) -> list[int]:
        """The oracle's `refs`: non-null reference slots naming an object VisualVM can build
        (ids missing from the dump and instances of unknown classes are dropped)."""
        return [v for v in self.object_values(r) if self.object_at(v) is not None]

    def _references(self) -> None:
        """Referrers of every object: each instance (of a known class) and object array, and each
        class (statics and loader), holding its id. Weak referents are references here."""
        self.referrers: dict[int, set[int]] = collections.defaultdict(set)
        holders = [(r.id, self.object_values(r)) for r in self.records if r.tag in (INSTANCE_DUMP, OBJECT_ARRAY_DUMP)]
        holders += [(c.id, self.class_values(c)) for c in self.classes]
        for holder, values in holders:
            for v in values:
                if v and v in self.entry:
                    self.referrers[v].add(holder)

    def single(self, oid: int) -> bool:
        """At most one distinct referrer (VisualVM: hasOnlyOneReference)."""
        return len(self.referrers.get(oid, ())) <= 1

    # ---- nearest GC root: breadth-first from the roots -------------------------------------------

    def _reference_filter(self) -> None:
        """The `referent` field of java.lang.ref.Reference, and the classes whose instances do not
        follow it: the four reference kinds and their subclasses (Substrate VM: its own)."""
        self.referent, self.weak_classes = None, set()
        for holder, field, kinds in [("java.lang.ref.Reference", "referent", REFERENCE_KINDS)] + [
                (svm, "rawReferent", None) for svm in SVM_REFERENCES]:
            declaring = self.class_by_name(holder)
            names = [self.strings.get(n) for n, _ in declaring.fields] if declaring else []
            if field not in names:
                continue
            self.referent = (declaring.id, names.index(field))
            roots = {c.id for c in map(self.class_by_name, kinds or ()) if c} if kinds else {declaring.id}
            self.weak_classes = {c.id for c in self.classes if any(k.id in roots for k in self.chain(c))}
            if len(self.weak_classes) >= len(kinds or (holder,)):
                return
        raise VisualVMFails("reference field not found")

    def _strong_values(self, r: Record) -> list[int]:
        """What the nearest-root search follows: array elements, a class's statics and loader,
        an instance's object fields except the referent of a reference kind."""
        if r.tag != INSTANCE_DUMP:
            return self.object_values(r)
        weak = r.class_id in self.weak_classes
        return [v for decl, index, _, typ, v in self.field_values(r)
                if typ == OBJECT and not (weak and (decl.id, index) == self.referent)]

    def _nearest_gc_root(self) -> None:
        """Breadth-first search from the GC roots, level by level; VisualVM notes on the way the
        leaves, the objects with several referrers, and the instance-to-class edges it adds."""
        self.root_ids = {oid for _, oid in self.roots}
        self.nearest: dict[int, int] = {}             # object id -> its parent on the search tree
        self.tree: dict[int, int] = {}                # tree objects: id -> retained size
        self.marks: dict[int, int] = {}               # retained-size slots written before dominators
        self.leaf_parents: list[int] = []
        self.class_edges: list[tuple[int, int]] = []
        if not self.classes:
            return
        self._reference_filter()
        queue = collections.deque(self.entry[oid] for tag in ROOT_KINDS for t, oid in self.roots
                                  if t == tag and oid in self.entry)
        classes_claimed = set()
        while queue:
            r = queue.popleft()
            cls = self.class_of(r) if r.tag != CLASS_DUMP or r.id in self.class_by_id else None
            if cls is None:                          # an instance of an unknown class: not searched
                continue
            if r.tag == PRIMITIVE_ARRAY_DUMP:
                self._leaf(r)
                continue
            has_values = False
            for v in self._strong_values(r):
                has_values |= self._connect(r.id, v, queue)
            if r.tag != OBJECT_ARRAY_DUMP and cls.id not in classes_claimed:
                classes_claimed.add(cls.id)          # the first object of a class tries to claim it
                has_values |= self._connect_class(r, cls.id, queue)
            if not has_values:
                self._leaf(r)

    def _claimable(self, oid: int) -> bool:
        return oid in self.entry and oid not in self.nearest and oid not in self.root_ids

    def _connect(self, parent: int, oid: int, queue) -> bool:
        if oid and self._claimable(oid):
            self.nearest[oid] = parent
            queue.append(self.entry[oid])
            return True
        return bool(oid) and oid in self.entry

    def _connect_class(self, r: Record, class_id: int, queue) -> bool:
        """An instance-to-class edge, added to the graph only if it claims the class."""
        if not self._claimable(class_id):
            return False
        if r.tag != INSTANCE_DUMP or class_id not in self.object_values(r):   # no field already holds it
            self.referrers[class_id].add(r.id)
            self.class_edges.append((r.id, class_id))
        self.nearest[class_id] = r.id
        queue.append(self.entry[class_id])
        return True

    def _leaf(self, r: Record) -> None:
        """An object with nothing to follow: a tree object of its own size. Its parent, if the
        object has a single referrer, becomes a tree-object candidate (marked -1)."""
        self.tree[r.id] = self.marks[r.id] = self.size(r)
        parent = self.nearest.get(r.id)
        if self.single(r.id) and parent and self.marks.get(parent, 0) == 0:
            self.marks[parent] = -1
            self.leaf_parents.append(parent)

    # ---- tree objects ----------------------------------------------------------------------------

    def _tree_objects(self) -> None:
        """VisualVM's shortcut before dominators, level by level from the leaves' parents: an
        object all of whose children are single-referrer tree objects is a tree object, of its
        size plus its distinct children's retained sizes."""
        level = self.leaf_parents
        while True:
            next_level, queued, changed = [], set(), False
            for oid in level:
                r = self.object_at(oid)
                if r is None or r.tag == PRIMITIVE_ARRAY_DUMP:
                    continue
                values = self.object_values(r)
                if r.tag != OBJECT_ARRAY_DUMP:        # fields and statics as objects: unbuildable ones drop
                    values = [v for v in values if self.object_at(v) is not None]
                total, counted = 0, set()
                for v in values:
                    if not v or v not in self.entry or v in counted:
                        continue
                    if not self.single(v) or v not in self.tree:
                        break
                    counted.add(v)
                    total += self.tree[v]
                else:
                    self.tree[oid] = self.marks[oid] = self.size(r) + total
                    changed = True
                    parent = self.nearest.get(oid)
                    if self.single(oid) and parent and parent not in queued:
                        queued.add(parent)
                        next_level.append(parent)
            if not changed:
                return
            level = next_level

    # ---- dominators: Cooper-Harvey-Kennedy over an explicit virtual root -------------------------

    def _dominators(self) -> None:
        """Immediate dominators (0: the virtual root) on the graph: virtual root -> every GC root
        in the dump and every object the search did not reach; referrer -> object, for all
        referrers (weak referents and the claiming instance-to-class edges included)."""
        root = 0
        self.reached = set(self.nearest) | (self.root_ids & self.entry.keys())
        preds: dict[int, list[int]] = {oid: sorted(self.referrers.get(oid, ())) for oid in self.entry}
        succ: dict[int, list[int]] = collections.defaultdict(list)
        for oid in self.entry:
            if oid not in self.reached or oid in self.root_ids:
                preds[oid].append(root)
            for p in preds[oid]:
                succ[p].append(oid)
        post, seen, stack = [], {root}, [(root, iter(succ[root]))]
        while stack:                                   # iterative depth-first post-order
            node, it = stack[-1]
            for nxt in it:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(succ[nxt])))
                    break
            else:
                stack.pop()
                post.append(node)
        number = {node: i for i, node in enumerate(post)}
        idom = {root: root}

        def intersect(a: int, b: int) -> int:
            while a != b:
                while number[a] < number[b]:
                    a = idom[a]
                while number[b] < number[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for node in reversed(post[:-1]):          # reverse post-order, the root excluded
                new = None
                for p in preds[node]:
                    if p in idom:
                        new = p if new is None else intersect(p, new)
                if idom.get(node) != new:
                    idom[node], changed = new, True
        del idom[root]
        self.idom = idom
        self.children: dict[int, list[int]] = collections.defaultdict(list)
        for node, parent in idom.items():
            self.children[parent].append(node)

    def post_order(self) -> list[int]:
        """Every object of the dominator tree after all it dominates."""
        out, stack = [], [(0, False)]
        while stack:
            node, done = stack.pop()
            if done:
                out.append(node)
            else:
                stack.append((node, True))
                stack.extend((c, False) for c in self.children[node])
        return out[:-1]

    # ---- retained sizes --------------------------------------------------------------------------

    def _retained(self) -> None:
        """A tree object keeps its tree size. Every other instance or array the search reached
        adds its size to itself and to each dominator above it up to the first tree object; a tree
        instance or array adds its tree size the same way. Class dumps add nothing, and a slot
        nothing is added to keeps its mark (0, or -1 for a leaf's parent)."""
        self.retained = dict(self.marks)
        handed: dict[int, int] = {}                   # what a node adds to its dominator
        hands: dict[int, bool] = {}                   # whether it adds anything at all
        for node in self.post_order():
            r = self.entry[node]
            object_record = r.tag != CLASS_DUMP
            if node in self.tree:
                handed[node], hands[node] = (self.tree[node] if object_record else 0), object_record
                continue
            own = 0
            if object_record and node in self.reached:
                own = self.size(r) if self.object_at(node) else self.minimum_instance
            handed[node] = own + sum(handed[c] for c in self.children[node])
            hands[node] = own > 0 or any(hands[c] for c in self.children[node])
            if hands[node]:
                self.retained[node] = handed[node]
        if self.file_size < INT32_FILE_LIMIT:
            self.retained = {k: int32(v) for k, v in self.retained.items()}

    def retained_size(self, oid: int) -> int:
        return self.retained.get(oid, 0)

    def _retained_by_class(self) -> None:
        """An instance or array adds its retained size to its class unless an object of the same
        class dominates it (VisualVM looks only for object arrays and for instances of classes
        that can contain themselves)."""
        under_same_class: set[int] = set()
        on_path = collections.Counter()
        stack = [(0, False)]
        while stack:                                   # depth-first over the dominator tree
            node, done = stack.pop()
            cls = self.class_of(self.entry[node]) if node else None
            if done:
                on_path[cls and cls.id] -= 1
                continue
            if node and on_path[cls and cls.id] > 0:
                under_same_class.add(node)
            on_path[cls and cls.id] += 1
            stack.append((node, True))
            stack.extend((c, False) for c in self.children[node])
        for r in self.records:
            if r.tag == CLASS_DUMP or r.cls is None:
                continue
            if r.tag == PRIMITIVE_ARRAY_DUMP or (r.tag == INSTANCE_DUMP and not self.can_contain_itself(r.cls)):
                dominated = False
            else:
                dominated = r.id in under_same_class
            if not dominated:
                r.cls.retained_by_class += self.retained_size(r.id)

    def can_contain_itself(self, c: ClassInfo) -> bool:
        return (c.instances >= 2 and c.name not in CANNOT_CONTAIN_ITSELF
                and any(t == OBJECT for k in self.chain(c) for _, t in k.fields))

    def biggest(self, n: int) -> list[int]:
        """getBiggestObjectsByRetainedSize(n): by retained size, larger first, then smaller id;
        at the cut-off a later slot of VisualVM's id hash table never displaces an equal size."""
        slots = len(self.records) * 4 // 3            # VisualVM's table: 4/3 of the records
        table: list[int] = [0] * slots
        for oid in self.entry:                        # inserted in the order of self.entry
            i = (oid & 0x7FFFFFFFFFFFFFFF) % slots
            while table[i]:
                i = (i + 1) % slots
            table[i] = oid
        best: list[tuple[int, int]] = []               # (-retained, id), kept sorted
        for oid in table:
            if not oid:
                continue
            size = self.retained_size(oid)
            if len(best) < n:
                best.append((-size, oid))
                best.sort()
            elif size > -best[-1][0]:
                best[-1] = (-size, oid)
                best.sort()
        return [oid for _, oid in best]

    # ---- what the oracle prints ----------------------------------------------------------------

    def objects(self):
        """(record, oracle line) for every object VisualVM enumerates, in its order."""
        for r in self.records:
            if r.in_range and r.cls is not None:
                yield r, self.object_line(r)

    def depth(self, oid: int) -> int | None:
        hops = 0
        while oid not in self.root_ids:
            oid = self.nearest.get(oid)
            if oid is None:
                return None
            hops += 1
        return hops

    def object_line(self, r: Record) -> dict:
        root = r.id in self.root_ids
        line = {"id": r.id, "class": r.cls.name, "size": self.size(r), "retained": self.retained_size(r.id),
                "gcroot": root, "nearest": r.id if root else self.nearest.get(r.id),
                "depth": self.depth(r.id), "refs": self.outbound(r)}
        if r.cls.name == "java.lang.String" and r.tag == INSTANCE_DUMP:
            line["string"] = self.string_text(r)
        return line

    def class_lines(self):
        for c in self.classes:
            yield {"name": c.name, "id": c.id, "super": c.super_id if self.super_of(c) else None,
                   "instances": c.instances, "bytes": self.class_bytes(c), "retained": c.retained_by_class}

    def class_bytes(self, c: ClassInfo) -> int:
        if c.has_arrays:
            return sum(self.size(r) for r in self.records if r.cls is c and r.tag != CLASS_DUMP)
        return c.instances * self.instance_size(c)

    def root_lines(self):
        for tag in ROOT_KINDS:
            for t, oid in self.roots:
                if t == tag:
                    yield {"kind": ROOT_KINDS[tag], "id": oid if self.object_at(oid) else None}

    def facts(self) -> dict:
        """Figures an implementer sizes things by."""
        enumerated = [r for r in self.records if r.in_range and r.cls is not None]
        depths = [d for d in (self.depth(r.id) for r in enumerated) if d is not None]
        kinds = collections.Counter({CLASS_DUMP: "class objects", INSTANCE_DUMP: "instances",
                                     OBJECT_ARRAY_DUMP: "object arrays", PRIMITIVE_ARRAY_DUMP: "primitive arrays"}[r.tag]
                                    for r in enumerated)
        edges = sum(len(v) for v in self.referrers.values())
        return {"id_size": self.id_size, "new_size": self.new_size, "oop": self.oop, "oop_rule": self.oop_rule,
                "minimum_instance": self.minimum_instance, "classes": len(self.classes),
                "objects": len(enumerated), **kinds, "table_ids": len(self.entry),
                "root_records": len(self.roots), "root_objects": len(self.root_ids & self.entry.keys()),
                "reached": len(self.reached), "reached_fraction": round(len(self.reached) / max(1, len(self.entry)), 4),
                "refs_per_object": round(sum(len(self.outbound(r)) for r in enumerated) / max(1, len(enumerated)), 3),
                "graph_edges": edges, "class_edges": len(self.class_edges),
                "several_referrers": sum(1 for oid in self.reached if not self.single(oid)),
                "tree_objects": len(self.tree), "max_depth": max(depths, default=None),
                "max_dominator_depth": self._dominator_depth(),
                "heap_shallow": sum(self.size(r) for r in enumerated)}

    def _dominator_depth(self) -> int:
        depth, best = {0: 0}, 0
        for node in reversed(self.post_order()):
            depth[node] = depth[self.idom[node]] + 1
            best = max(best, depth[node])
        return best


# ---- the check against VisualVM's heap library -------------------------------------------------

def plain_copy(path: Path, tmp: Path) -> Path:
    """graph.sh needs a plain file: .gz/.bz2 dumps are decompressed into tmp."""
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix)
    if opener is None:
        return path
    out = tmp / path.stem
    if not out.exists():
        with opener(path, "rb") as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return out


BIGGEST = 50                      # graph.sh lists the 50 biggest objects with any --sample
ORACLE_MODES = {"roots": ["roots"], "classes": ["classes"], "objects": ["objects"],
                "biggest": ["objects", "--sample", "0"]}   # no sample: just the 50 biggest, in order


def run_oracle(path: Path, mode: str, cache: Path | None, tmp: Path) -> list[dict]:
    name = path.name.removesuffix(".gz").removesuffix(".bz2")
    cached = cache / f"{name}.{mode}.jsonl" if cache else None
    if cached is not None and cached.exists():
        text = cached.read_text(encoding="utf-8")
    else:
        proc = subprocess.run(["bash", str(ORACLE), str(plain_copy(path, tmp)), *ORACLE_MODES[mode]],
                              capture_output=True, encoding="utf-8")
        if proc.returncode != 0:
            first = next((l for l in proc.stderr.splitlines() if "Exception" in l), proc.stderr.strip()[-300:])
            raise RuntimeError(f"oracle failed ({mode}): {first}")
        text = proc.stdout
        if cached is not None:
            cached.write_text(text, encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]  # not splitlines: texts hold U+0085


def compare(label: str, model_lines: dict, oracle_lines: dict, fields, show: int) -> bool:
    def value(field, line):
        v = line.get(field)
        return sorted(v) if field == "refs" and v is not None else v

    missing = [k for k in oracle_lines if k not in model_lines]
    extra = [k for k in model_lines if k not in oracle_lines]
    print(f"{label}: oracle {len(oracle_lines)}, model {len(model_lines)}, "
          f"missing from model {len(missing)}, extra in model {len(extra)}")
    ok = not missing and not extra
    if not ok:
        print(f"  missing: {missing[:show]}  extra: {extra[:show]}")
    for field in fields:
        both = [k for k, line in oracle_lines.items() if k in model_lines and (field in line or field in model_lines[k])]
        bad = [k for k in both if value(field, oracle_lines[k]) != value(field, model_lines[k])]
        ok &= not bad
        print(f"  {field:10} {len(both) - len(bad)}/{len(both)} match")
        for k in bad[:show]:
            what = oracle_lines[k].get("class", oracle_lines[k].get("name", ""))
            print(f"    {k}: oracle {value(field, oracle_lines[k])!r} model {value(field, model_lines[k])!r} {what}")
    return ok


def check(path: Path, cache: Path | None, show: int) -> bool:
    """Prints per field how many lines agree; true if all do, or if both refuse the dump."""
    try:
        model, refused = Model(path), None
    except (VisualVMFails, NotModelled) as exc:
        model, refused = None, exc
    # The oracle cannot list the 50 biggest of a heap with fewer ids (VisualVM pads with nulls).
    modes = [m for m in ORACLE_MODES if m != "biggest" or model is None or len(model.entry) >= BIGGEST]
    with tempfile.TemporaryDirectory(prefix="vvmodel-") as tmp:
        try:
            oracle = {mode: run_oracle(path, mode, cache, Path(tmp)) for mode in modes}
        except RuntimeError as exc:
            print(f"VisualVM cannot open {path.name}: {exc}")
            print(f"model: {f'refuses it too: {refused}' if refused else 'opens it'}")
            return isinstance(refused, VisualVMFails)
    if refused is not None:
        print(f"model refuses {path.name} ({type(refused).__name__}: {refused}) but VisualVM opens it")
        return False
    ok = compare("roots", dict(enumerate(model.root_lines())), dict(enumerate(oracle["roots"])),
                 ("kind", "id"), show)
    ok &= compare("classes", {line["id"]: line for line in model.class_lines()},
                  {line["id"]: line for line in oracle["classes"]}, ("name", "instances", "bytes", "retained"), show)
    ok &= compare("objects", {r.id: line for r, line in model.objects()},
                  {line["id"]: line for line in oracle["objects"]},
                  ("class", "size", "refs", "gcroot", "nearest", "depth", "retained", "string"), show)
    if "biggest" not in oracle:
        print(f"biggest {BIGGEST} by retained size: not checked, the heap has {len(model.entry)} ids")
        return ok
    theirs = [line["id"] for line in oracle["biggest"]]
    ours = model.biggest(BIGGEST)
    print(f"biggest {BIGGEST} by retained size: {'same ids in the same order' if ours == theirs else 'DIFFER'}")
    if ours != theirs:
        print(f"  oracle {theirs[:show * 2]}\n  model  {ours[:show * 2]}")
    return ok and ours == theirs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", type=Path)
    parser.add_argument("--check", action="store_true", help="compare with VisualVM's heap library")
    parser.add_argument("--facts", action="store_true", help="print graph figures as JSON")
    parser.add_argument("--oracle-cache", type=Path, help="reuse and keep oracle output in this directory")
    parser.add_argument("--show", type=int, default=5, help="mismatches shown per field")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if check(args.dump, args.oracle_cache, args.show) else 1
    model = Model(args.dump)
    if args.facts:
        print(json.dumps({"dump": args.dump.name, **model.facts()}))
        return 0
    for _, line in model.objects():
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
