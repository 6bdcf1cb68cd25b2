#!/usr/bin/env python3
"""VisualVM's heap model, written plainly: the independent reference for hprofkit's
semantics="visualvm".

For every object VisualVM's heap library enumerates, `Model` computes its class name,
shallow size, outbound references, GC-root flag, nearest-GC-root parent and depth, and
retained size, plus the retained size of every class. It uses only hprofkit's record
iterators and a naive iterative dominator algorithm (Cooper, Harvey and Kennedy's, over an
explicit virtual root); docs/heap-model.md states every rule and why it is VisualVM's.

    python tests/vvmodel.py DUMP --check [--oracle-cache DIR]

runs VisualVM's heap library (../shared/tools/oracle/graph.sh, modes objects, classes and
roots) on DUMP and prints, per field, how many objects match and the first mismatches.
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

# Heap sub-record and basic-type tags (HPROF).
CLASS_DUMP, INSTANCE_DUMP, OBJECT_ARRAY_DUMP, PRIMITIVE_ARRAY_DUMP = 0x20, 0x21, 0x22, 0x23
OBJECT, BOOLEAN, CHAR, FLOAT, DOUBLE, BYTE, SHORT, INT, LONG = 2, 4, 5, 6, 7, 8, 9, 10, 11
VALUE_SIZE = {BOOLEAN: 1, CHAR: 2, FLOAT: 4, DOUBLE: 8, BYTE: 1, SHORT: 2, INT: 4, LONG: 8}
PRIMITIVE_NAMES = {"Z": "boolean", "C": "char", "F": "float", "D": "double",
                   "B": "byte", "S": "short", "I": "int", "J": "long"}
PRIMITIVE_ARRAY_TYPES = {"[Z": BOOLEAN, "[C": CHAR, "[F": FLOAT, "[D": DOUBLE, "[B": BYTE, "[S": SHORT,
                         "[I": INT, "[J": LONG, "boolean[]": BOOLEAN, "char[]": CHAR, "float[]": FLOAT,
                         "double[]": DOUBLE, "byte[]": BYTE, "short[]": SHORT, "int[]": INT, "long[]": LONG}

# GC root kinds in the order VisualVM lists them (tag by tag, each in file order).
ROOT_KINDS = {0xFF: "unknown", 0x01: "JNI global", 0x02: "JNI local", 0x03: "Java frame",
              0x04: "native stack", 0x05: "sticky class", 0x06: "thread block", 0x07: "monitor used",
              0x08: "thread object", 0x89: "interned string", 0x8A: "finalizing", 0x8B: "debugger",
              0x8C: "reference cleanup", 0x8D: "VM internal", 0x8E: "JNI monitor"}

REFERENCE_KINDS = ("java.lang.ref.WeakReference", "java.lang.ref.SoftReference",
                   "java.lang.ref.FinalReference", "java.lang.ref.PhantomReference")
CANNOT_CONTAIN_ITSELF = {"java.lang.String", "java.lang.StringBuffer", "java.lang.StringBuilder", "java.io.File"}
ALIGNMENT = 8


class VisualVMFails(Exception):
    """A dump on which VisualVM's heap library itself throws."""


def java_name(vm_name: str) -> str:
    """'[[I' -> 'int[][]', '[Ljava/lang/Object;' -> 'java.lang.Object[]', 'a/B' -> 'a.B'."""
    name = vm_name.replace("/", ".")
    depth = len(name) - len(name.lstrip("["))
    if depth == 0:
        return name
    name = name[depth:]
    if name.startswith("L"):
        name = name[1:-1]
    else:
        name = PRIMITIVE_NAMES.get(name[:1], name)
    return name + "[]" * depth


def align(size: int) -> int:
    return (size + ALIGNMENT - 1) & ~(ALIGNMENT - 1)


class ClassInfo:
    __slots__ = ("id", "super_id", "loader_id", "statics", "fields", "raw_size", "vm_name", "name", "index",
                 "instances", "has_arrays", "retained_by_class")

    def __init__(self, sub, index: int) -> None:
        self.id, self.super_id, self.loader_id = sub.id, sub.super_id, sub.loader_id
        self.statics = sub.statics            # [(name id, type, value)]
        self.fields = sub.fields              # declared instance fields [(name id, type)]
        self.raw_size = sub.instance_size
        self.index = index
        self.vm_name = self.name = None
        self.instances = 0
        self.has_arrays = False
        self.retained_by_class = 0


class Record:
    """One CLASS_DUMP, INSTANCE_DUMP, OBJECT_ARRAY_DUMP or PRIMITIVE_ARRAY_DUMP of the heap."""
    __slots__ = ("tag", "id", "class_id", "data", "count", "elem_type", "in_range", "cls")

    def __init__(self, sub) -> None:
        self.tag, self.id = sub.tag, sub.id
        self.class_id = sub.class_id
        self.data = bytes(sub.data) if sub.data is not None else b""
        self.count, self.elem_type = sub.count, sub.elem_type
        self.in_range = False
        self.cls: ClassInfo | None = None     # VisualVM's class of the object (None: not an object)


class Model:
    """VisualVM's view of the first heap dump of a file."""

    def __init__(self, path: str | os.PathLike) -> None:
        with hprofkit.open(path) as dump:
            self.id_size = dump.id_size
            self._read(dump)
        self._resolve_classes()
        self._sizes()
        self._references()
        self._nearest_gc_root()
        self._tree_objects()
        self._dominators()
        self._retained()
        self._retained_by_class()

    # ---- reading -------------------------------------------------------------------------------

    def _read(self, dump) -> None:
        strings, load_class = {}, {}
        heap = []                                     # the records of the first heap dump
        dumps, segments, seen_end = [], [], False
        for rec in dump.records():
            body = rec.body
            if rec.tag >= 0x80:          # VisualVM reads the tag as a signed byte and indexes with it
                raise VisualVMFails(f"top-level record tag 0x{rec.tag:02x} at offset {rec.offset}")
            if rec.length == 0 and rec.tag != 0x2C and dump.version != "1.0.3":
                raise VisualVMFails(f"zero-length record 0x{rec.tag:02x} at offset {rec.offset}")
            if rec.tag == 0x01:
                sid = int.from_bytes(body[:self.id_size], "big")
                strings.setdefault(sid, bytes(body[self.id_size:]).decode("utf-8", "replace"))
            elif rec.tag == 0x02:                     # the last LOAD_CLASS of a class names it
                cid = int.from_bytes(body[4:4 + self.id_size], "big")
                load_class[cid] = int.from_bytes(body[8 + self.id_size:8 + 2 * self.id_size], "big")
            elif rec.tag == 0x0C:
                dumps.append(rec)
            elif rec.tag == 0x1C and not seen_end:
                segments.append(rec)
            elif rec.tag == 0x2C:
                seen_end = True
            if rec.tag in (0x0C, 0x1C):
                heap.append(rec)
        if dumps:                                     # HEAP_DUMP records win over segments
            chosen = dumps[:1]
        elif segments:
            if not seen_end:
                raise VisualVMFails("heap dump segments without HEAP_DUMP_END")
            chosen = segments
        else:
            chosen = []
        self.strings, self.load_class = strings, load_class
        self.classes: list[ClassInfo] = []
        self.records: list[Record] = []               # object records in file order
        self.roots: list[tuple[int, int]] = []        # (tag, object id) in file order
        for rec in chosen:
            for sub in rec.subrecords():
                if sub.tag == CLASS_DUMP:
                    self.classes.append(ClassInfo(sub, len(self.classes)))
                    self.records.append(Record(sub))
                elif sub.tag in (INSTANCE_DUMP, OBJECT_ARRAY_DUMP, PRIMITIVE_ARRAY_DUMP):
                    self.records.append(Record(sub))
                elif sub.tag in ROOT_KINDS:
                    self.roots.append((sub.tag, sub.id))
        # VisualVM's objects: every record from the first instance or array to the last one,
        # class dumps among them included (it never reaches the classes written before).
        kinds = [i for i, r in enumerate(self.records) if r.tag != CLASS_DUMP]
        if kinds:
            first_instance = next((i for i, r in enumerate(self.records) if r.tag == INSTANCE_DUMP), None)
            last_instance = max((i for i, r in enumerate(self.records) if r.tag == INSTANCE_DUMP), default=None)
            start = min(kinds) if first_instance is not None else min(kinds)
            # without any INSTANCE_DUMP, VisualVM's range runs to the end of the heap dump
            end = max(kinds) if last_instance is not None else len(self.records) - 1
            for r in self.records[start:end + 1]:
                r.in_range = True

    def _resolve_classes(self) -> None:
        ids = collections.Counter(c.id for c in self.classes)
        self.class_by_id = {c.id: c for c in self.classes if ids[c.id] == 1}   # a duplicated id resolves to none
        for c in self.classes:
            if c.id not in self.load_class:
                raise VisualVMFails(f"class 0x{c.id:x} has no LOAD_CLASS record")
            c.vm_name = self.strings.get(self.load_class[c.id], "")
            c.name = java_name(c.vm_name)
        special = {}
        for c in self.classes:                        # the last class of each special name wins
            special[c.vm_name] = c
        self.java_lang_class = special.get("java/lang/Class") or special.get("java.lang.Class")
        self.java_lang_object = special.get("java/lang/Object") or special.get("java.lang.Object")
        if "java/lang/Class" in special and "java.lang.Class" in special:
            self.java_lang_class = max(special["java/lang/Class"], special["java.lang.Class"], key=lambda c: c.index)
        self.primitive_array_class = {}
        for c in self.classes:
            if c.vm_name in PRIMITIVE_ARRAY_TYPES:
                self.primitive_array_class[PRIMITIVE_ARRAY_TYPES[c.vm_name]] = c
        # The object table: class ids first, then instance and array ids; the first record wins.
        self.entry: dict[int, Record] = {}
        for r in self.records:
            if r.tag == CLASS_DUMP:
                self.entry.setdefault(r.id, r)
        for r in self.records:
            if r.in_range and r.tag != CLASS_DUMP:
                self.entry.setdefault(r.id, r)
        for r in self.records:
            if not r.in_range:
                continue
            if r.tag == CLASS_DUMP:
                r.cls = self.java_lang_class if r.id in self.class_by_id else None
            elif r.tag == PRIMITIVE_ARRAY_DUMP:
                if r.elem_type not in self.primitive_array_class:
                    raise VisualVMFails(f"no class for primitive arrays of type {r.elem_type}")
                r.cls = self.primitive_array_class[r.elem_type]
            else:
                r.cls = self.class_by_id.get(r.class_id)
            if r.cls is not None and r.tag != CLASS_DUMP:
                r.cls.instances += 1
                r.cls.has_arrays |= r.tag != INSTANCE_DUMP

    # ---- lookups VisualVM makes ----------------------------------------------------------------

    def class_by_name(self, name: str) -> ClassInfo | None:
        return next((c for c in self.classes if c.name == name), None)

    def super_of(self, c: ClassInfo) -> ClassInfo | None:
        return self.class_by_id.get(c.super_id)

    def all_fields(self, c: ClassInfo) -> list[tuple[ClassInfo, int, int]]:
        """Instance fields as (declaring class, name id, type), the class's own first, then its
        superclasses' (the order of the values in an INSTANCE_DUMP)."""
        out, seen = [], set()
        while c is not None and c.id not in seen:
            seen.add(c.id)
            out.extend((c, name, typ) for name, typ in c.fields)
            c = self.super_of(c)
        return out

    def field_values(self, r: Record) -> list[tuple[ClassInfo, int, int, object]]:
        """(declaring class, name id, type, value) of an instance's fields."""
        out, pos = [], 0
        for decl, name, typ in self.all_fields(r.cls):
            width = self.id_size if typ == OBJECT else VALUE_SIZE[typ]
            raw = r.data[pos:pos + width]
            pos += width
            if len(raw) < width:
                break
            if typ == OBJECT:
                value = int.from_bytes(raw, "big")
            elif typ in (FLOAT, DOUBLE):
                value = struct.unpack(">f" if typ == FLOAT else ">d", raw)[0]
            elif typ == CHAR:
                value = chr(int.from_bytes(raw, "big"))
            elif typ == BOOLEAN:
                value = raw != b"\0"
            else:
                value = int.from_bytes(raw, "big", signed=True)
            out.append((decl, name, typ, value))
        return out

    def field(self, r: Record, name: str):
        """An instance's field by name (the first in field order), or None."""
        for _, name_id, typ, value in self.field_values(r):
            if self.strings.get(name_id) == name:
                return (typ, value)
        return None

    def static(self, c: ClassInfo, name: str):
        for name_id, typ, value in c.statics:
            if self.strings.get(name_id) == name:
                return (typ, value)
        return None

    def object_at(self, oid: int) -> Record | None:
        """getInstanceByID: the record an id stands for, if VisualVM can make an object of it."""
        r = self.entry.get(oid) if oid else None
        if r is None:
            return None
        if r.tag == CLASS_DUMP:
            return r if oid in self.class_by_id else None
        if r.tag == PRIMITIVE_ARRAY_DUMP:
            return r
        return r if self.class_by_id.get(r.class_id) is not None else None

    def class_of(self, r: Record) -> ClassInfo | None:
        """The class of the object a record stands for (class dumps: java.lang.Class)."""
        if r.tag == CLASS_DUMP:
            return self.java_lang_class
        if r.tag == PRIMITIVE_ARRAY_DUMP:
            return self.primitive_array_class.get(r.elem_type)
        return self.class_by_id.get(r.class_id)

    def object_values(self, r: Record) -> list[int]:
        """Raw ids in an object's reference slots, in order (zeros included): instance object
        fields, array elements, or a class's object statics followed by its class loader."""
        if r.tag == INSTANCE_DUMP:
            cls = self.class_by_id.get(r.class_id)
            if cls is None:
                return []
            return [v for _, _, typ, v in self.field_values_of(r, cls) if typ == OBJECT]
        if r.tag == OBJECT_ARRAY_DUMP:
            n = self.id_size
            return [int.from_bytes(r.data[i:i + n], "big") for i in range(0, len(r.data), n)]
        if r.tag == CLASS_DUMP:
            c = self.class_by_id.get(r.id)
            if c is None:
                return []
            return [v for _, typ, v in c.statics if typ == OBJECT] + [c.loader_id]
        return []

    def field_values_of(self, r: Record, cls: ClassInfo):
        saved, r.cls = r.cls, cls
        try:
            return self.field_values(r)
        finally:
            r.cls = saved

    # ---- shallow sizes -------------------------------------------------------------------------

    def _sizes(self) -> None:
        obj = self.java_lang_object
        self.new_size = obj is not None and obj.raw_size > 0     # ART: trust the dump's sizes
        if self.new_size:
            self.minimum_instance = obj.raw_size
            self.oop = obj.raw_size - self.id_size if self.id_size == 8 else self.id_size
        else:
            self.oop = self._guess_oop() if self.id_size == 8 else self.id_size
            self.minimum_instance = self.id_size + self.oop
        self._unaligned: dict[int, int] = {}

    def _guess_oop(self) -> int:
        """Compressed oops on a 64-bit dump: the distance between two Unsafe field offsets that
        the JDK keeps in statics, else the JVM's compressed-oops property, else 8."""
        for cname, first, second in (("java.lang.Class$Atomic", "annotationDataOffset", "annotationTypeOffset"),
                                     ("java.util.concurrent.FutureTask", "runnerOffset", "waitersOffset")):
            c = self.class_by_name(cname)
            if c is not None:
                a, b = self.static(c, first), self.static(c, second)
                if a and b and a[0] == LONG and b[0] == LONG:
                    diff = ((b[1] - a[1] + 2**31) % 2**32) - 2**31
                    if diff in (4, 8):
                        return diff
        if "java.vm.compressedOopsMode" in self._system_property_keys():
            return 4
        return self.id_size

    def element_size(self, typ: int) -> int:
        return self.oop if typ == OBJECT else VALUE_SIZE[typ]

    def _unaligned_size(self, c: ClassInfo) -> int:
        if c.id not in self._unaligned:
            chain, seen, k = [], set(), c
            while k is not None and k.id not in seen:
                seen.add(k.id)
                chain.append(k)
                k = self.super_of(k)
            size = self.minimum_instance
            for k in reversed(chain):
                size += sum(self.element_size(t) for _, t in k.fields)
                self._unaligned.setdefault(k.id, size)
        return self._unaligned[c.id]

    def instance_size(self, c: ClassInfo) -> int:
        if c.has_arrays or (c.instances == 0 and c.name.endswith("[]")):
            return -1
        if self.new_size:
            return c.raw_size
        return align(self._unaligned_size(c))

    def array_size(self, typ: int, length: int) -> int:
        return align(self.minimum_instance + 4 + self.element_size(typ) * length)

    def size(self, r: Record) -> int:
        if r.tag == CLASS_DUMP:
            return self.instance_size(self.java_lang_class)
        if r.tag == OBJECT_ARRAY_DUMP:
            return self.array_size(OBJECT, r.count)
        if r.tag == PRIMITIVE_ARRAY_DUMP:
            return self.array_size(r.elem_type, r.count)
        return self.instance_size(self.class_by_id[r.class_id])

    # ---- strings and system properties -------------------------------------------------------

    def string_text(self, r: Record) -> str | None:
        """The oracle's reading of a java.lang.String: char[] (with offset/count when both are
        ints inside the array), or byte[] with coder 1 meaning UTF-16 little-endian."""
        value = self.field(r, "value")
        arr = self.object_at(value[1]) if value and value[0] == OBJECT else None
        if arr is None or arr.tag != PRIMITIVE_ARRAY_DUMP:
            return None
        if arr.elem_type == CHAR:
            text = "".join(chr(int.from_bytes(arr.data[i:i + 2], "big")) for i in range(0, len(arr.data), 2))
            count, offset = self.field(r, "count"), self.field(r, "offset")
            if count and offset and count[0] == INT and offset[0] == INT:
                o, n = offset[1], count[1]
                if o >= 0 and n >= 0 and o + n <= len(text):
                    return text[o:o + n]
            return text
        data = arr.data if arr.elem_type == BYTE else b""
        if arr.elem_type != BYTE:    # the oracle reads any other array's items as decimal bytes
            return None
        coder = self.field(r, "coder")
        if coder and coder[0] == BYTE and coder[1] == 1:
            return "".join(chr(data[k] | data[k + 1] << 8) for k in range(0, len(data) - 1, 2))
        return data.decode("latin-1")

    def _system_property_keys(self) -> set[str]:
        """The keys of java.lang.System.props as VisualVM reads them (Hashtable, old Hashtable
        with elementData, or JDK 9+ ConcurrentHashMap; defaults followed)."""
        system = self.class_by_name("java.lang.System")
        props = None
        if system is not None:
            for name in ("props", "systemProperties"):
                v = self.static(system, name)
                props = self.object_at(v[1]) if v and v[0] == OBJECT else None
                if props is not None:
                    break
        if props is None:
            raise VisualVMFails("64-bit dump without the hints VisualVM needs to guess compressed oops")
        keys: set[str] = set()
        self._property_keys(props, keys, set())
        return keys

    def _property_keys(self, props: Record, keys: set[str], seen: set[int]) -> None:
        if props.id in seen or props.tag != INSTANCE_DUMP:
            return
        seen.add(props.id)

        def ref(r, name):
            v = self.field(r, name)
            return self.object_at(v[1]) if v and v[0] == OBJECT else None

        defaults = ref(props, "defaults")
        if defaults is not None:
            self._property_keys(defaults, keys, seen)
        table = ref(props, "table")
        if table is None:
            cmap = ref(props, "map")
            table = ref(cmap, "table") if cmap is not None else ref(props, "elementData")
        if table is None or table.tag != OBJECT_ARRAY_DUMP:
            return
        for head in self.object_values(table):
            entry, hops = self.object_at(head), 0
            while entry is not None and entry.tag == INSTANCE_DUMP and hops < 1_000_000:
                key = ref(entry, "key")
                if key is not None and key.tag == INSTANCE_DUMP:
                    text = self.string_text(key)
                    if text is not None:
                        keys.add(text)
                entry, hops = ref(entry, "next"), hops + 1

    # ---- references ----------------------------------------------------------------------------

    def outbound(self, r: Record) -> list[int]:
        """The oracle's `refs`: the non-null values of reference slots that name an object VisualVM
        can build (ids missing from the dump, and instances of unknown classes, are dropped)."""
        if r.tag == CLASS_DUMP and self.class_by_id.get(r.id) is None:
            return []
        return [v for v in self.object_values(r) if self.object_at(v) is not None]

    def _references(self) -> None:
        """Referrers of every object: each instance (of a known class) and object array of the
        range, and each class (statics and loader), that holds its id. Weak referents count."""
        self.referrers: dict[int, set[int]] = collections.defaultdict(set)
        for r in self.records:
            if r.in_range and r.tag in (INSTANCE_DUMP, OBJECT_ARRAY_DUMP):
                if r.tag == INSTANCE_DUMP and self.class_by_id.get(r.class_id) is None:
                    continue
                for v in self.object_values(r):
                    if v and v in self.entry:
                        self.referrers[v].add(r.id)
        for c in self.classes:
            for v in self.object_values(self.entry[c.id]) if c.id in self.class_by_id else ():
                if v and v in self.entry:
                    self.referrers[v].add(c.id)

    def single(self, oid: int) -> bool:
        return len(self.referrers.get(oid, ())) <= 1

    # ---- nearest GC root: breadth-first from the roots -----------------------------------------

    def _reference_field_filter(self) -> None:
        """The `referent` field of java.lang.ref.Reference, and the classes whose instances do not
        follow it: the four reference kinds and all their subclasses."""
        ref = self.class_by_name("java.lang.ref.Reference")
        self.referent = None
        if ref is not None:
            for i, (name_id, _) in enumerate(ref.fields):
                if self.strings.get(name_id) == "referent":
                    self.referent = (ref.id, i)
                    break
        if self.referent is None:
            raise VisualVMFails("no java.lang.ref.Reference.referent (VisualVM: reference field not found)")
        kinds = {c.id for c in (self.class_by_name(n) for n in REFERENCE_KINDS) if c is not None}
        self.weak_classes = set()
        for c in self.classes:
            k, seen = c, set()
            while k is not None and k.id not in seen:
                if k.id in kinds:
                    self.weak_classes.add(c.id)
                    break
                seen.add(k.id)
                k = self.super_of(k)
        if len(self.weak_classes) < len(REFERENCE_KINDS):
            raise VisualVMFails("reference field not found")

    def _strong_values(self, r: Record) -> list[int]:
        """What the nearest-root search follows from an object: object arrays' elements, classes'
        statics and loader, instances' object fields but the referent of a reference kind."""
        if r.tag != INSTANCE_DUMP:
            return self.object_values(r)
        out = []
        weak = r.class_id in self.weak_classes
        decl_index = collections.Counter()
        for decl, _, typ, v in self.field_values_of(r, self.class_by_id[r.class_id]):
            i = decl_index[decl.id]
            decl_index[decl.id] += 1
            if typ == OBJECT and not (weak and (decl.id, i) == self.referent):
                out.append(v)
        return out

    def _nearest_gc_root(self) -> None:
        self._reference_field_filter()
        self.root_ids = {oid for _, oid in self.roots}
        self.nearest: dict[int, int] = {}             # object id -> parent on its path from a root
        self.tree: dict[int, int] = {}                # "tree objects": id -> retained size
        self.retained: dict[int, int] = {}
        self.leaf_parents: list[int] = []
        self.multiple_parents: list[int] = []
        queue = collections.deque()
        for tag in ROOT_KINDS:
            for t, oid in self.roots:
                if t == tag and oid in self.entry:
                    queue.append(self.entry[oid])
        processed_classes = set()
        self.order = []                                # BFS processing order (for stats)
        while queue:
            r = queue.popleft()
            if r.tag == CLASS_DUMP:
                if r.id not in self.class_by_id:
                    continue
                cls = self.java_lang_class
            elif r.tag == PRIMITIVE_ARRAY_DUMP:
                self._leaf(r)
                continue
            else:
                cls = self.class_by_id.get(r.class_id)
                if cls is None:                        # instance of an unknown class: skipped
                    continue
            self.order.append(r.id)
            has_values = False
            for v in self._strong_values(r):
                has_values |= self._connect(r.id, v, queue)
            if r.tag != OBJECT_ARRAY_DUMP and cls is not None and cls.id not in processed_classes:
                processed_classes.add(cls.id)           # the first object of a class claims the class
                has_values |= self._connect_class(r, cls.id, queue)
            if not has_values:
                self._leaf(r)

    def _claimable(self, oid: int) -> bool:
        return oid in self.entry and oid not in self.nearest and oid not in self.root_ids

    def _claim(self, parent: int, oid: int, queue) -> None:
        queue.append(self.entry[oid])
        self.nearest[oid] = parent
        if not self.single(oid):
            self.multiple_parents.append(oid)

    def _connect(self, parent: int, oid: int, queue) -> bool:
        if not oid:
            return False
        if self._claimable(oid):
            self._claim(parent, oid, queue)
            return True
        return oid in self.entry

    def _connect_class(self, r: Record, class_id: int, queue) -> bool:
        if not class_id or not self._claimable(class_id):
            return False
        holds_it = r.tag == INSTANCE_DUMP and class_id in self.object_values(r)
        if not holds_it:
            self.referrers[class_id].add(r.id)
        self._claim(r.id, class_id, queue)
        return True

    def _leaf(self, r: Record) -> None:
        self.tree[r.id] = self.retained[r.id] = self.size(r)
        if self.single(r.id) and self.nearest.get(r.id):
            parent = self.nearest[r.id]
            if self.retained.get(parent, 0) == 0:
                self.retained[parent] = -1
                self.leaf_parents.append(parent)

    # ---- tree objects: subtrees whose objects all have a single referrer -----------------------

    def _tree_objects(self) -> None:
        """VisualVM's shortcut before dominators: starting from the parents of leaves, an object
        whose every child is a single-referrer tree object is a tree object, its retained size its
        own plus its distinct children's. Evaluated level by level as VisualVM does."""
        level = self.leaf_parents
        while True:
            nxt, queued, changed = [], set(), False
            for oid in level:
                r = self.object_at(oid)
                if r is None or r.tag == PRIMITIVE_ARRAY_DUMP:
                    continue
                if r.tag == OBJECT_ARRAY_DUMP:
                    values = self.object_values(r)
                else:                                   # fields/statics that name a buildable object
                    values = [v for v in self.object_values(r) if self.object_at(v) is not None]
                total, last, counted = 0, 0, set()
                for v in values:
                    last = self._tree_child(v, counted)
                    if last == -1:
                        break
                    total += last
                if last == -1:
                    continue
                self.tree[oid] = self.retained[oid] = self.size(r) + total
                changed = True
                parent = self.nearest.get(oid)
                if self.single(oid) and parent and parent not in queued:
                    queued.add(parent)
                    nxt.append(parent)
            if not changed:
                break
            level = nxt

    def _tree_child(self, oid: int, counted: set[int]) -> int:
        if not oid or oid not in self.entry:
            return 0
        if not self.single(oid) or oid not in self.tree:
            return -1
        if oid in counted:
            return 0
        counted.add(oid)
        return self.tree[oid]

    # ---- dominators: Cooper-Harvey-Kennedy over an explicit virtual root -----------------------

    def _dominators(self) -> None:
        """Immediate dominators on the graph: virtual root -> every GC root in the dump and every
        object the nearest-root search did not reach; referrer -> object for every referrer."""
        ROOT = 0
        nodes = list(self.entry)
        reached = set(self.nearest) | {oid for oid in self.root_ids if oid in self.entry}
        succ = collections.defaultdict(list)
        preds = collections.defaultdict(list)
        for oid, refs in self.referrers.items():
            for src in refs:
                succ[src].append(oid)
                preds[oid].append(src)
        for oid in nodes:
            if oid not in reached or oid in self.root_ids:
                succ[ROOT].append(oid)
                preds[oid].append(ROOT)
        # reverse postorder by an iterative depth-first search
        post, seen, stack = [], {ROOT}, [(ROOT, iter(succ[ROOT]))]
        while stack:
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
        idom = {ROOT: ROOT}

        def intersect(a, b):
            while a != b:
                while number[a] < number[b]:
                    a = idom[a]
                while number[b] < number[a]:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for node in reversed(post):
                if node == ROOT:
                    continue
                new = None
                for p in preds[node]:
                    if p in idom:
                        new = p if new is None else intersect(p, new)
                if idom.get(node) != new:
                    idom[node] = new
                    changed = True
        self.idom = idom

    # ---- retained sizes --------------------------------------------------------------------------

    def _dominator_children(self) -> dict[int, list[int]]:
        children = collections.defaultdict(list)
        for node, parent in self.idom.items():
            if node != 0:
                children[parent].append(node)
        return children

    def _retained(self) -> None:
        """Tree objects keep their tree size. Every other instance or array the search reached adds
        its size to itself and to each dominator above it, up to the first tree object; a tree
        instance or array adds its tree size the same way. Class objects add nothing of their own,
        and an object nothing was added to keeps its mark (0, or -1 for a leaf's parent)."""
        children = self._dominator_children()
        reached = set(self.nearest) | (self.root_ids & set(self.entry))
        self.retained_final = dict(self.retained)
        passed_up: dict[int, int] = {}                # what a node hands to its dominator
        writes: dict[int, bool] = {}                  # whether it hands anything at all
        for node in self._post_order(children):
            r = self.entry[node]
            instance_like = r.tag != CLASS_DUMP
            if node in self.tree:
                passed_up[node] = self.tree[node] if instance_like else 0
                writes[node] = instance_like
                continue
            own = 0
            if instance_like and node in reached:
                own = self.size(r) if self.object_at(node) is not None else self.minimum_instance
            passed_up[node] = own + sum(passed_up[c] for c in children[node])
            writes[node] = bool(own) or any(writes[c] for c in children[node])
            if writes[node]:
                self.retained_final[node] = passed_up[node]
        for oid in self.entry:
            self.retained_final.setdefault(oid, 0)

    def _post_order(self, children) -> list[int]:
        """Objects of the dominator tree, every one after all it dominates."""
        out, stack = [], [(0, False)]
        while stack:
            node, done = stack.pop()
            if done:
                out.append(node)
            else:
                stack.append((node, True))
                stack.extend((c, False) for c in children[node])
        return [n for n in out if n != 0]

    def _retained_by_class(self) -> None:
        """Each instance or array adds its retained size to its class unless an object of the
        same class dominates it (VisualVM checks only for object arrays and for instances of
        classes that can hold themselves)."""
        children = self._dominator_children()
        covered: set[int] = set()
        on_path = collections.Counter()
        stack = [(0, False)]
        while stack:
            node, done = stack.pop()
            cls = self.class_of(self.entry[node]) if node else None
            key = cls.id if cls is not None else None
            if done:
                on_path[key] -= 1
                continue
            if node and on_path[key] > 0:
                covered.add(node)
            on_path[key] += 1
            stack.append((node, True))
            stack.extend((c, False) for c in children[node])
        for r in self.records:
            if not r.in_range or r.tag == CLASS_DUMP or r.cls is None:
                continue
            if r.tag == INSTANCE_DUMP and not self.can_contain_itself(r.cls):
                chained = False
            else:
                chained = r.tag != PRIMITIVE_ARRAY_DUMP and r.id in covered
            if not chained:
                r.cls.retained_by_class += self.retained_final.get(r.id, 0)

    def can_contain_itself(self, c: ClassInfo) -> bool:
        return (c.instances >= 2 and c.name not in CANNOT_CONTAIN_ITSELF
                and any(t == OBJECT for _, _, t in self.all_fields(c)))

    # ---- what the oracle prints --------------------------------------------------------------------

    def objects(self):
        """(record, line) for every object VisualVM enumerates, in its order."""
        for r in self.records:
            if r.in_range and r.cls is not None:
                yield r, self.object_line(r)

    def depth(self, oid: int):
        n, cur = 0, oid
        while cur not in self.root_ids:
            cur = self.nearest.get(cur)
            if cur is None or self.object_at(cur) is None:
                return None
            n += 1
        return n

    def object_line(self, r: Record) -> dict:
        line = {"id": r.id, "class": r.cls.name, "size": self.size(r), "retained": self.retained_final.get(r.id, 0),
                "gcroot": r.id in self.root_ids,
                "nearest": r.id if r.id in self.root_ids else self.nearest.get(r.id),
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
            return sum(self.size(r) for r in self.records if r.in_range and r.cls is c)
        return c.instances * self.instance_size(c)

    def root_lines(self):
        for tag in ROOT_KINDS:
            for t, oid in self.roots:
                if t == tag:
                    yield {"kind": ROOT_KINDS[tag], "id": oid if self.object_at(oid) is not None else None}


# ---- the check against VisualVM's heap library ---------------------------------------------------------

def plain_copy(path: Path, tmp: Path) -> Path:
    """graph.sh needs a plain file: decompress .gz/.bz2 dumps into tmp."""
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix)
    if opener is None:
        return path
    out = tmp / path.stem
    with opener(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def run_oracle(path: Path, mode: str, cache: Path | None, tmp: Path) -> list[dict]:
    cached = cache / f"{path.name.removesuffix('.gz').removesuffix('.bz2')}.{mode}.jsonl" if cache else None
    if cached is not None and cached.exists():
        text = cached.read_text(encoding="utf-8")
    else:
        proc = subprocess.run(["bash", str(ORACLE), str(plain_copy(path, tmp)), mode],
                              capture_output=True, encoding="utf-8")
        if proc.returncode != 0:
            first = next((l for l in proc.stderr.splitlines() if "Exception" in l), proc.stderr.strip()[-300:])
            raise RuntimeError(f"oracle failed ({mode}): {first}")
        text = proc.stdout
        if cached is not None:
            cached.write_text(text, encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]  # not splitlines: texts hold U+0085


OBJECT_FIELDS = ("class", "size", "refs", "gcroot", "nearest", "depth", "retained", "string")
CLASS_FIELDS = ("instances", "bytes", "retained")


def normalized(field: str, line: dict):
    value = line.get(field)
    return sorted(value) if field == "refs" and value is not None else value


def compare(model_lines: dict, oracle_lines: list[dict], key, fields, label: str, show: int) -> bool:
    ok = True
    theirs = {key(line) if key else i: line for i, line in enumerate(oracle_lines)}
    missing = [k for k in theirs if k not in model_lines]
    extra = [k for k in model_lines if k not in theirs]
    print(f"{label}: oracle {len(theirs)}, model {len(model_lines)}, "
          f"missing from model {len(missing)}, extra in model {len(extra)}")
    if missing or extra:
        ok = False
        print(f"  missing: {missing[:show]}  extra: {extra[:show]}")
    for field in fields:
        both = [k for k in theirs if k in model_lines and (field in theirs[k] or field in model_lines[k])]
        bad = [k for k in both if normalized(field, theirs[k]) != normalized(field, model_lines[k])]
        ok &= not bad
        print(f"  {field:10} {len(both) - len(bad)}/{len(both)} match")
        for k in bad[:show]:
            print(f"    {k}: oracle {normalized(field, theirs[k])!r} model {normalized(field, model_lines[k])!r}"
                  f" ({theirs[k].get('class', theirs[k].get('name'))})")
    return ok


def check(path: Path, cache: Path | None, show: int) -> bool:
    """Prints per field how many lines agree; true if all do (or both refuse the dump)."""
    try:
        model, refused = Model(path), None
    except VisualVMFails as exc:
        model, refused = None, exc
    with tempfile.TemporaryDirectory(prefix="vvmodel-") as tmp:
        try:
            oracle = {mode: run_oracle(path, mode, cache, Path(tmp)) for mode in ("roots", "classes", "objects")}
        except RuntimeError as exc:
            print(f"VisualVM cannot open {path.name}: {str(exc).splitlines()[-1] if str(exc) else exc}")
            print(f"model: {'refuses it too: ' + str(refused) if refused else 'opens it'}")
            return refused is not None
    if refused is not None:
        print(f"model refuses {path.name} ({refused}) but VisualVM opens it")
        return False
    ok = compare(dict(enumerate(model.root_lines())), oracle["roots"], key=None,
                 fields=("kind", "id"), label="roots", show=show)
    ok &= compare({line["id"]: line for line in model.class_lines()}, oracle["classes"], key=lambda l: l["id"],
                  fields=CLASS_FIELDS, label="classes", show=show)
    ok &= compare({r.id: line for r, line in model.objects()}, oracle["objects"], key=lambda l: l["id"],
                  fields=OBJECT_FIELDS, label="objects", show=show)
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump", type=Path)
    parser.add_argument("--check", action="store_true", help="compare with VisualVM's heap library")
    parser.add_argument("--oracle-cache", type=Path, help="reuse/keep oracle output in this directory")
    parser.add_argument("--show", type=int, default=5, help="mismatches shown per field")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if check(args.dump, args.oracle_cache, args.show) else 1
    for _, line in Model(args.dump).objects():
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
