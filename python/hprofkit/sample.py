"""A sample application heap, written with :class:`~hprofkit.writer.HprofWriter`.

:func:`write_sample_dump` writes a small, deterministic, realistic application heap (HotSpot
or ART flavour) and returns a :class:`SampleInfo` saying what it holds; it is what
``python -m hprofkit demo`` and the tests use.  It is ``hprofkit.write_sample_dump`` too.
"""

from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Sequence

from ._types import BOOLEAN, BYTE, CHAR, DOUBLE, FLOAT, INT, LONG, OBJECT, SHORT, TYPE_SIZES
from .writer import VERSIONS, HeapDumpBuilder, HprofWriter, Name, hotspot_class_name, java_chars, \
    modified_utf8, type_code

__all__ = ["SampleInfo", "write_sample_dump"]


@dataclass(frozen=True)
class SampleInfo:
    """What :func:`write_sample_dump` wrote.

    ``histogram`` maps the readable class name (as VisualVM shows it, e.g.
    ``"java.lang.Object[]"``) to the number of instances/arrays of that class;
    ``heaps`` splits it by heap (``"default"`` for HotSpot, ``"image"``, ``"zygote"``,
    ``"app"`` for Android); ``class_ids`` gives every class's object id; ``roots`` counts the
    GC-root sub-records by kind (sub-record tag name).
    """

    android: bool
    version: str
    id_size: int
    seed: int
    histogram: dict[str, int]
    heaps: dict[str, dict[str, int]]
    class_ids: dict[str, int]
    roots: dict[str, int]
    segments: int

    @property
    def instances(self) -> int:
        """Total number of instances and arrays."""
        return sum(self.histogram.values())

    def keyed_histogram(self) -> dict[str, int]:
        """``{"name@hexid": count}``, the key format of the oracle tool."""
        return {f"{n}@{self.class_ids[n]:x}": c for n, c in self.histogram.items()}


@dataclass
class _Cls:
    name: str                      # readable name
    super: str | None
    fields: list[tuple[str, int]]  # own instance fields
    statics: list[tuple[str, int]]
    heap: str
    id: int = 0
    static_values: dict[str, Any] = field(default_factory=dict)
    elem: int | None = None        # primitive array element type, if a primitive array class


@dataclass
class _Obj:
    kind: str                      # "instance", "objarray", "primarray", "class"
    id: int
    cls: _Cls
    heap: str
    payload: Any = None
    trailer: Any = None            # ART: synthetic value array written after a String


_PRIM_ARRAYS = ["boolean[]", "char[]", "float[]", "double[]", "byte[]", "short[]", "int[]",
                "long[]"]
_ELEM = {"boolean[]": BOOLEAN, "char[]": CHAR, "float[]": FLOAT, "double[]": DOUBLE,
         "byte[]": BYTE, "short[]": SHORT, "int[]": INT, "long[]": LONG}

_FIRST = ["Alice", "Bob", "Chloé", "Dmitri", "Eve", "Fatima", "Grace", "Hiro", "Ines", "Jonas",
          "Kateřina", "Liam", "Mei", "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Søren", "Tariq",
          "Uma", "Victor", "Wen", "Xavier", "Yuki", "Zoë", "Łukasz", "Ана", "Ming 明", "Ayşe"]
_LAST = ["Smith", "Müller", "García", "Rossi", "Kowalski", "Tanaka", "Nguyen", "Silva",
         "Johansson", "Dubois", "Novak", "Öztürk", "Kim", "Haddad", "O'Brien"]


def _java_hash(text: str) -> int:
    h = 0
    for (u,) in struct.iter_unpack(">H", java_chars(text)):
        h = (31 * h + u) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _align8(n: int) -> int:
    return (n + 7) & ~7


class _Sample:
    """Builds the object graph of the sample heap, then writes it."""

    def __init__(self, android: bool, id_size: int, seed: int, objects: int,
                 jdk8: bool = False):
        self.android = android
        self.jdk8 = jdk8 and not android   # JDK 8 class shapes (char[] strings, Hashtable props)
        self.id_size = id_size
        self.seed = seed
        self.rng = random.Random(seed)
        self.n_users = objects
        self.classes: dict[str, _Cls] = {}
        self.objs: list[_Obj] = []
        self.ref = 4   # ART, 32-bit HotSpot and 64-bit HotSpot with compressed oops
        self.header = 8 if (android or id_size == 4) else 12
        self.array_header = 12 if (android or id_size == 4) else 16
        if android:
            self.next = {"image": 0x70000000, "zygote": 0x12C00000, "app": 0x13000000}
        elif id_size == 8:
            self.next = {"default": 0x0000000716000000}
        else:
            self.next = {"default": 0xE1000000}
        self.heap_of_boot = "image" if android else "default"

    # -- allocation ----------------------------------------------------------------------------
    def alloc(self, size: int, heap: str) -> int:
        addr = self.next[heap]
        self.next[heap] = addr + _align8(max(size, 8))
        return addr

    def instance_size(self, cls: _Cls) -> int:
        n = 0
        c: _Cls | None = cls
        while c is not None:
            n += sum(self.ref if t == OBJECT else TYPE_SIZES[t] for _, t in c.fields)
            c = self.classes[c.super] if c.super else None
        return self.header + n

    def data_size(self, cls: _Cls) -> int:
        n = 0
        c: _Cls | None = cls
        while c is not None:
            n += sum(self.id_size if t == OBJECT else TYPE_SIZES[t] for _, t in c.fields)
            c = self.classes[c.super] if c.super else None
        return n

    # -- classes -------------------------------------------------------------------------------
    def define(self, name: str, sup: str | None = "java.lang.Object",
               fields: Sequence[tuple[str, str]] = (), statics: Sequence[tuple[str, str]] = (),
               heap: str | None = None) -> _Cls:
        if heap is None:
            heap = "app" if (self.android and name.startswith("com.example")) else self.heap_of_boot
        cls = _Cls(name, sup, [(n, type_code(t)) for n, t in fields],
                   [(n, type_code(t)) for n, t in statics], heap)
        if name in _ELEM:
            cls.elem = _ELEM[name]
        self.classes[name] = cls
        return cls

    def define_classes(self) -> None:
        a = self.android
        self.define("java.lang.Object", None)
        self.define("java.lang.Class", fields=[] if not a else [
            ("classLoader", "object"), ("componentType", "object"), ("dexCache", "object"),
            ("name", "object"), ("superClass", "object"), ("accessFlags", "int"),
            ("classSize", "int"), ("objectSize", "int"), ("status", "int")])
        if a:
            self.define("java.lang.String", fields=[("count", "int"), ("hash", "int")],
                        statics=[("serialVersionUID", "long"), ("CASE_INSENSITIVE_ORDER", "object")])
        elif self.jdk8:
            self.define("java.lang.String", fields=[("value", "object"), ("hash", "int")],
                        statics=[("serialVersionUID", "long"),
                                 ("CASE_INSENSITIVE_ORDER", "object")])
        else:
            self.define("java.lang.String",
                        fields=[("value", "object"), ("coder", "byte"), ("hash", "int"),
                                ("hashIsZero", "boolean")],
                        statics=[("serialVersionUID", "long"), ("COMPACT_STRINGS", "boolean"),
                                 ("CASE_INSENSITIVE_ORDER", "object")])
        self.define("java.lang.ClassLoader", fields=[("parent", "object")])
        if a:
            self.define("dalvik.system.BaseDexClassLoader", "java.lang.ClassLoader",
                        fields=[("pathList", "object")])
            self.define("dalvik.system.PathClassLoader", "dalvik.system.BaseDexClassLoader")
        elif self.jdk8:
            self.define("java.security.SecureClassLoader", "java.lang.ClassLoader")
            self.define("java.net.URLClassLoader", "java.security.SecureClassLoader",
                        fields=[("ucp", "object")])
            self.define("sun.misc.Launcher$AppClassLoader", "java.net.URLClassLoader")
        else:
            self.define("jdk.internal.loader.BuiltinClassLoader", "java.lang.ClassLoader",
                        fields=[("nameToModule", "object")])
            self.define("jdk.internal.loader.ClassLoaders$AppClassLoader",
                        "jdk.internal.loader.BuiltinClassLoader")
        self.define("java.lang.ThreadGroup",
                    fields=[("parent", "object"), ("name", "object"), ("maxPriority", "int"),
                            ("daemon", "boolean")])
        self.define("java.lang.Thread",
                    fields=[("name", "object"), ("group", "object"), ("tid", "long"),
                            ("priority", "int"), ("daemon", "boolean")],
                    statics=[("threadSeqNumber", "long")])
        self.define("java.util.AbstractCollection")
        self.define("java.util.AbstractList", "java.util.AbstractCollection",
                    fields=[("modCount", "int")])
        self.define("java.util.ArrayList", "java.util.AbstractList",
                    fields=[("elementData", "object"), ("size", "int")],
                    statics=[("serialVersionUID", "long"), ("DEFAULT_CAPACITY", "int"),
                             ("EMPTY_ELEMENTDATA", "object")])
        self.define("java.util.AbstractMap", fields=[("keySet", "object"), ("values", "object")])
        self.define("java.util.HashMap", "java.util.AbstractMap",
                    fields=[("table", "object"), ("entrySet", "object"), ("size", "int"),
                            ("modCount", "int"), ("threshold", "int"), ("loadFactor", "float")],
                    statics=[("serialVersionUID", "long")])
        self.define("java.util.HashMap$Node",
                    fields=[("hash", "int"), ("key", "object"), ("value", "object"),
                            ("next", "object")])
        if not a:
            # java.lang.System.props: heap tools (VisualVM) read the system properties to
            # learn the VM's reference size, as in every real 64-bit HotSpot dump.
            self.define("java.lang.System", statics=[("props", "object"), ("out", "object")])
            self.define("java.util.Dictionary")
            self.define("java.util.Hashtable", "java.util.Dictionary",
                        fields=[("table", "object"), ("count", "int"), ("threshold", "int"),
                                ("loadFactor", "float"), ("modCount", "int")])
            if self.jdk8:
                self.define("java.util.Properties", "java.util.Hashtable",
                            fields=[("defaults", "object")])
                self.define("java.util.Hashtable$Entry",
                            fields=[("hash", "int"), ("key", "object"), ("value", "object"),
                                    ("next", "object")])
            else:
                self.define("java.lang.StringUTF16",
                            statics=[("HI_BYTE_SHIFT", "int"), ("LO_BYTE_SHIFT", "int")])
                self.define("java.util.Properties", "java.util.Hashtable",
                            fields=[("defaults", "object"), ("map", "object")])
                self.define("java.util.concurrent.ConcurrentHashMap", "java.util.AbstractMap",
                            fields=[("table", "object"), ("nextTable", "object"),
                                    ("baseCount", "long"), ("sizeCtl", "int")])
                self.define("java.util.concurrent.ConcurrentHashMap$Node",
                            fields=[("hash", "int"), ("key", "object"), ("val", "object"),
                                    ("next", "object")])
        if a:
            self.define("android.content.Context")
            self.define("android.content.ContextWrapper", "android.content.Context",
                        fields=[("mBase", "object")])
            self.define("android.app.Activity", "android.content.ContextWrapper",
                        fields=[("mTitle", "object"), ("mResumed", "boolean"),
                                ("mFinished", "boolean"), ("mIdent", "int")])
            base = "android.app.Activity"
        else:
            self.define("com.example.app.BaseActivity",
                        fields=[("mTitle", "object"), ("mResumed", "boolean"),
                                ("mFinished", "boolean"), ("mIdent", "int")])
            base = "com.example.app.BaseActivity"
        self.define("com.example.app.MainActivity", base,
                    fields=[("mAdapter", "object"), ("mCache", "object"), ("mUsers", "object"),
                            ("mStartTime", "long"), ("mVisible", "boolean"), ("mTheme", "int")],
                    statics=[("TAG", "object"), ("sInstance", "object"), ("DEBUG", "boolean"),
                             ("sSeparator", "char"), ("sScale", "float"), ("sRatio", "double"),
                             ("sFlags", "byte"), ("sMode", "short"), ("sLaunchCount", "int"),
                             ("sVersionCode", "long")])
        self.define("com.example.app.model.User",
                    fields=[("id", "long"), ("age", "int"), ("score", "float"),
                            ("balance", "double"), ("premium", "boolean"), ("initial", "char"),
                            ("level", "byte"), ("flags", "short"), ("name", "object"),
                            ("email", "object"), ("avatar", "object"), ("password", "object"),
                            ("friends", "object"), ("bestFriend", "object")],
                    statics=[("sCount", "int"), ("EMPTY", "object")])
        self.define("com.example.app.cache.ImageCache",
                    fields=[("map", "object"), ("maxBytes", "int"), ("hits", "long"),
                            ("misses", "long")])
        self.define("com.example.app.cache.Thumbnail",
                    fields=[("width", "int"), ("height", "int"), ("pixels", "object"),
                            ("histogram", "object"), ("alphaMask", "object"), ("gamma", "object"),
                            ("curve", "object"), ("timestamps", "object"), ("config", "byte")],
                    statics=[("MAX_SIZE", "int")])
        self.define("com.example.app.ui.UserAdapter",
                    fields=[("users", "object"), ("listener", "object"), ("selected", "int")])
        arrays = _PRIM_ARRAYS + ["java.lang.Object[]", "java.lang.String[]",
                                 "java.util.HashMap$Node[]", "java.lang.Thread[]"]
        if not a:
            arrays.append("java.util.Hashtable$Entry[]" if self.jdk8
                          else "java.util.concurrent.ConcurrentHashMap$Node[]")
        for name in arrays:
            self.define(name)
        self.define("com.example.app.model.User[]", heap="app" if a else "default")

    # -- object creation -----------------------------------------------------------------------
    def new(self, cls_name: str, heap: str, **values: Any) -> int:
        cls = self.classes[cls_name]
        oid = self.alloc(self.instance_size(cls), heap)
        self.objs.append(_Obj("instance", oid, cls, heap, values))
        return oid

    def prim(self, cls_name: str, heap: str, values: Any) -> int:
        cls = self.classes[cls_name]
        assert cls.elem is not None, f"{cls_name} is not a primitive array class"
        if isinstance(values, (bytes, str)):
            n = len(values) if isinstance(values, bytes) else len(java_chars(values)) // 2
        else:
            values = list(values)
            n = len(values)
        oid = self.alloc(self.array_header + n * TYPE_SIZES[cls.elem], heap)
        self.objs.append(_Obj("primarray", oid, cls, heap, values))
        return oid

    def objarray(self, cls_name: str, heap: str, elements: Sequence[int]) -> int:
        cls = self.classes[cls_name]
        oid = self.alloc(self.array_header + len(elements) * self.ref, heap)
        self.objs.append(_Obj("objarray", oid, cls, heap, list(elements)))
        return oid

    def string(self, text: str, heap: str) -> int:
        units = java_chars(text)
        h = _java_hash(text)
        latin1 = all(ord(c) < 0x100 for c in text)
        if self.android:
            compressed = all(ord(c) < 0x80 for c in text)
            n = len(units) // 2
            size = 16 + (n if compressed else 2 * n)
            oid = self.alloc(size, heap)
            cls = self.classes["java.lang.String"]
            value_id = oid + (16 if n else 8)
            trailer: tuple[str, Any]
            if compressed:
                trailer = ("byte[]", text.encode("ascii"))
            else:
                trailer = ("char[]", text)
            obj = _Obj("instance", oid, cls, heap,
                       {"count": (n << 1) | (0 if compressed else 1), "hash": h,
                        "value": value_id}, trailer=(value_id,) + trailer)
            self.objs.append(obj)
            return oid
        if self.jdk8:
            return self.new("java.lang.String", heap, value=self.prim("char[]", heap, text),
                            hash=h)
        if latin1:
            value = self.prim("byte[]", heap, text.encode("latin-1"))
            coder = 0
        else:
            # HotSpot keeps UTF16 strings in native (little-endian on x86) byte order.
            value = self.prim("byte[]", heap, text.encode("utf-16-le", "surrogatepass"))
            coder = 1
        return self.new("java.lang.String", heap, value=value, coder=coder, hash=h,
                        hashIsZero=False)

    def build_objects(self) -> None:
        a, r = self.android, self.rng
        boot = self.heap_of_boot
        zyg = "zygote" if a else "default"
        app = "app" if a else "default"
        # class objects, in their heap, before the instances
        for cls in self.classes.values():
            cls.id = self.alloc(512 if a else 96 + 8 * len(cls.statics), cls.heap)
            self.objs.append(_Obj("class", cls.id, cls, cls.heap))
        # boot-image / JDK objects
        empty = self.string("", boot)
        case_cmp = self.new("java.lang.Object", boot)
        self.classes["java.lang.String"].static_values.update(
            serialVersionUID=-6849794470754667710, COMPACT_STRINGS=not self.jdk8,
            CASE_INSENSITIVE_ORDER=case_cmp)
        empty_data = self.objarray("java.lang.Object[]", boot, [])
        self.classes["java.util.ArrayList"].static_values.update(
            serialVersionUID=8683452581122892189, DEFAULT_CAPACITY=10,
            EMPTY_ELEMENTDATA=empty_data)
        self.classes["java.util.HashMap"].static_values.update(
            serialVersionUID=362498820763181265)
        system_name = self.string("system", zyg)
        main_name = self.string("main", zyg)
        system = self.new("java.lang.ThreadGroup", zyg, name=system_name, maxPriority=10)
        main_group = self.new("java.lang.ThreadGroup", zyg, parent=system, name=main_name,
                              maxPriority=10)
        thread_names = (["main", "HeapTaskDaemon", "FinalizerDaemon", "RenderThread"] if a
                        else ["main", "Reference Handler", "Finalizer", "Signal Dispatcher"])
        self.threads: list[tuple[int, str]] = []
        for i, tn in enumerate(thread_names):
            heap = app if tn == "RenderThread" else zyg
            name = main_name if tn == "main" else self.string(tn, heap)
            t = self.new("java.lang.Thread", heap, name=name,
                         group=main_group if tn in ("main", "RenderThread") else system,
                         tid=i + 1, priority=5 if i == 0 or tn == "RenderThread" else 10,
                         daemon=i != 0)
            self.threads.append((t, tn))
        self.classes["java.lang.Thread"].static_values.update(threadSeqNumber=len(thread_names))
        self.thread_array = self.objarray("java.lang.Thread[]", zyg,
                                          [t for t, _ in self.threads])
        if a:
            self.loader = self.new("dalvik.system.PathClassLoader", zyg,
                                   pathList=self.new("java.lang.Object", zyg))
        elif self.jdk8:
            self.loader = self.new("sun.misc.Launcher$AppClassLoader", boot,
                                   ucp=self.new("java.lang.Object", boot))
        else:
            self.loader = self.new("jdk.internal.loader.ClassLoaders$AppClassLoader", boot,
                                   nameToModule=self.new("java.lang.Object", boot))
        self.args = None if a else self.objarray("java.lang.String[]", app, [])
        if not a:
            self.system_properties(boot)
        self.interned = [empty, main_name, system_name]

        # the app
        tag = self.string("MainActivity", app)
        self.interned.append(tag)
        users: list[int] = []
        user_objs: list[_Obj] = []
        for i in range(self.n_users):
            first, last = r.choice(_FIRST), r.choice(_LAST)
            name = self.string(f"{first} {last}", app)
            email = self.string(f"{first.lower()}.{i}@example.com", app)
            avatar = self.prim("byte[]", app, r.randbytes(r.randint(32, 256)))
            password = self.prim("char[]", app, "".join(
                r.choice("abcdefghijkmnopqrstuvwxyz23456789") for _ in range(r.randint(8, 14))))
            uid = self.new("com.example.app.model.User", app, id=1000 + i,
                           age=r.randint(16, 90), score=round(r.uniform(0, 5), 2),
                           balance=round(r.uniform(-500, 5000), 2), premium=r.random() < 0.2,
                           initial=first[0], level=r.randint(-128, 127),
                           flags=r.randint(-32768, 32767), name=name, email=email,
                           avatar=avatar, password=password)
            users.append(uid)
            user_objs.append(self.objs[-1])
        for i, obj in enumerate(user_objs):
            friends = r.sample(users, min(len(users), r.randint(0, 3)))
            obj.payload["friends"] = self.objarray("com.example.app.model.User[]", app, friends)
            obj.payload["bestFriend"] = friends[0] if friends else users[(i + 1) % len(users)]
        self.users = users
        cap = max(10, len(users) + len(users) // 2)
        elements = self.objarray("java.lang.Object[]", app, users + [0] * (cap - len(users)))
        user_list = self.new("java.util.ArrayList", app, elementData=elements, size=len(users),
                             modCount=len(users))
        # image cache: HashMap<String, Thumbnail>
        n_thumbs = max(1, len(users) // 2)
        table_size = 16
        while table_size * 0.75 < n_thumbs:
            table_size *= 2
        buckets: list[int] = [0] * table_size
        for i in range(n_thumbs):
            w, h = r.choice([(8, 8), (16, 16), (16, 9), (12, 12)])
            key_text = f"thumb/{1000 + i}.png"
            key = self.string(key_text, app)
            thumb = self.new(
                "com.example.app.cache.Thumbnail", app, width=w, height=h,
                pixels=self.prim("int[]", app, [r.getrandbits(32) - (1 << 31) for _ in range(w * h)]),
                histogram=self.prim("short[]", app, [r.randint(-32768, 32767) for _ in range(16)]),
                alphaMask=self.prim("boolean[]", app, [r.random() < 0.5 for _ in range(w)]),
                gamma=self.prim("float[]", app, [round(r.uniform(0.5, 2.5), 3) for _ in range(3)]),
                curve=self.prim("double[]", app, [r.random() for _ in range(8)]),
                timestamps=self.prim("long[]", app,
                                     [1700000000000 + r.randint(0, 10**9) for _ in range(4)]),
                config=r.randint(0, 3))
            hsh = _java_hash(key_text)
            spread = (hsh ^ ((hsh & 0xFFFFFFFF) >> 16))
            bucket = spread & (table_size - 1)
            node = self.new("java.util.HashMap$Node", app, hash=spread, key=key, value=thumb,
                            next=buckets[bucket])
            buckets[bucket] = node
        table = self.objarray("java.util.HashMap$Node[]", app, buckets)
        hmap = self.new("java.util.HashMap", app, table=table, size=n_thumbs, modCount=n_thumbs,
                        threshold=int(table_size * 0.75), loadFactor=0.75)
        cache = self.new("com.example.app.cache.ImageCache", app, map=hmap, maxBytes=4 << 20,
                         hits=r.randint(0, 10**6), misses=r.randint(0, 10**4))
        adapter = self.new("com.example.app.ui.UserAdapter", app, users=user_list, selected=-1)
        adapter_obj = self.objs[-1]
        title = self.string("Users", app)
        activity = self.new("com.example.app.MainActivity", app, mAdapter=adapter, mCache=cache,
                            mUsers=user_list, mStartTime=1700000000000 + r.randint(0, 10**6),
                            mVisible=True, mTheme=0x7F0F0001, mTitle=title, mResumed=True,
                            mIdent=r.getrandbits(31))
        if a:
            self.objs[-1].payload["mBase"] = self.new("java.lang.Object", app)
        adapter_obj.payload["listener"] = activity
        self.activity, self.cache, self.user_list = activity, cache, user_list
        self.classes["com.example.app.MainActivity"].static_values.update(
            TAG=tag, sInstance=activity, DEBUG=False, sSeparator="/", sScale=1.5,
            sRatio=16 / 9, sFlags=-3, sMode=2, sLaunchCount=1, sVersionCode=4200001)
        self.classes["com.example.app.model.User"].static_values.update(
            sCount=len(users), EMPTY=self.objarray("com.example.app.model.User[]", app, []))
        self.classes["com.example.app.cache.Thumbnail"].static_values.update(MAX_SIZE=256)

    def system_properties(self, heap: str) -> None:
        """java.lang.System.props: a JDK 9+ Properties backed by a ConcurrentHashMap, or a
        JDK 8 Properties that is a Hashtable."""
        props = {
            "java.version": "1.8.0_392" if self.jdk8 else "17.0.9",
            "java.vendor": "Eclipse Adoptium",
            "java.vm.name": ("OpenJDK 64-Bit Server VM" if self.id_size == 8
                             else "OpenJDK Server VM"),
            "java.vm.version": "25.392-b08" if self.jdk8 else "17.0.9+9", "os.name": "Linux",
            "os.arch": "amd64" if self.id_size == 8 else "i386",
            "sun.arch.data.model": "64" if self.id_size == 8 else "32",
            "file.encoding": "UTF-8", "user.dir": "/home/app", "line.separator": "\n",
            "java.class.path": "/home/app/example-app.jar",
        }
        if self.id_size == 8:
            props["java.vm.compressedOopsMode"] = "Zero based"
        size = 32
        table = [0] * size
        if self.jdk8:
            for key, value in props.items():
                k, v = self.string(key, heap), self.string(value, heap)
                h = _java_hash(key)
                slot = (h & 0x7FFFFFFF) % size
                table[slot] = self.new("java.util.Hashtable$Entry", heap, hash=h, key=k,
                                       value=v, next=table[slot])
            sysprops = self.new(
                "java.util.Properties", heap, count=len(props), threshold=24,
                loadFactor=0.75, modCount=len(props),
                table=self.objarray("java.util.Hashtable$Entry[]", heap, table))
            self.classes["java.lang.System"].static_values.update(props=sysprops)
            return
        for key, value in props.items():
            k, v = self.string(key, heap), self.string(value, heap)
            h = _java_hash(key) & 0xFFFFFFFF
            spread = (h ^ (h >> 16)) & 0x7FFFFFFF
            slot = spread & (size - 1)
            table[slot] = self.new("java.util.concurrent.ConcurrentHashMap$Node", heap,
                                   hash=spread, key=k, val=v, next=table[slot])
        chm = self.new("java.util.concurrent.ConcurrentHashMap", heap,
                       table=self.objarray("java.util.concurrent.ConcurrentHashMap$Node[]",
                                           heap, table),
                       baseCount=len(props), sizeCtl=24)
        sysprops = self.new("java.util.Properties", heap, map=chm, loadFactor=0.75)
        self.classes["java.lang.System"].static_values.update(props=sysprops)
        self.classes["java.lang.StringUTF16"].static_values.update(HI_BYTE_SHIFT=0,
                                                                   LO_BYTE_SHIFT=8)

    # -- output --------------------------------------------------------------------------------
    def flat_values(self, obj: _Obj) -> tuple[list[int], list[Any]]:
        """Field types and values of an instance: own fields first, then the superclass's."""
        types: list[int] = []
        out: list[Any] = []
        c: _Cls | None = obj.cls
        while c is not None:
            for name, t in c.fields:
                types.append(t)
                out.append(obj.payload.get(name, 0))
            if self.android and c.name == "java.lang.String":
                types.append(OBJECT)
                out.append(obj.payload["value"])
            c = self.classes[c.super] if c.super else None
        return types, out

    def write(self, dest: Any, version: str) -> SampleInfo:
        a = self.android
        hist: dict[str, dict[str, int]] = {}
        roots: dict[str, int] = {}

        def count(cls_name: str, heap: str) -> None:
            h = hist.setdefault(heap, {})
            h[cls_name] = h.get(cls_name, 0) + 1

        def raw_name(name: str) -> str:
            return name if a else hotspot_class_name(name)

        with HprofWriter(dest, version=version, id_size=self.id_size,
                         timestamp=1700000000000) as w:
            # The string table comes first, as ART and HotSpot write it. ART numbers strings
            # from 0x400000 (the writer's default); HotSpot uses Symbol* addresses.
            sym = [0x00007F3AD4001000 if self.id_size == 8 else 0xB5401000]

            def sid(text: str) -> int:
                if a:
                    return w.string(text)
                known = w._strings.get(modified_utf8(text))
                if known is not None:
                    return known
                addr = sym[0]
                sym[0] += _align8(16 + len(modified_utf8(text)) + 8)
                return w.string(text, addr)
            for cls in self.classes.values():
                sid(raw_name(cls.name))
            for cls in self.classes.values():
                for n, _ in cls.fields + cls.statics:
                    sid(n)
            if a:
                for n in ("value", "$classOverhead", "app", "image", "zygote"):
                    sid(n)
            frames = []
            if not a:
                frames = [
                    ("main", [("onCreate", "()V", "MainActivity.java", "com.example.app.MainActivity", 42),
                              ("main", "([Ljava/lang/String;)V", "MainActivity.java",
                               "com.example.app.MainActivity", 17)]),
                    ("Reference Handler", [("waitForReferencePendingList", "()V", "Reference.java",
                                            "java.lang.Object", -3),
                                           ("run", "()V", "Thread.java", "java.lang.Thread", 829)]),
                    ("Finalizer", [("wait", "(J)V", "Object.java", "java.lang.Object", -3),
                                   ("run", "()V", "Thread.java", "java.lang.Thread", 829)]),
                    ("Signal Dispatcher", []),
                ]
                for _, fr in frames:
                    for m, s, f, _, _ in fr:
                        sid(m), sid(s), sid(f)
            # classes
            for cls in self.classes.values():
                w.load_class(cls.id, sid(raw_name(cls.name)), stack_serial=0 if a else 1)
            # stack traces
            w.stack_trace(0 if a else 1, 0, [])  # the dummy trace every object points to
            thread_traces = {}
            if not a:
                for i, (tn, fr) in enumerate(frames):
                    ids = [w.stack_frame(None, sid(m), sid(s), sid(f),
                                         w.class_serial(self.classes[c].id), line)
                           for m, s, f, c, line in fr]
                    thread_traces[tn] = w.stack_trace(2 + i, i + 1, ids)
            obj_serial = 0 if a else 1

            split = dict(split_bytes=4096, split_objects=128) if a else dict(split_bytes=1 << 20)
            segment = version in ("1.0.2", "1.0.3")
            if not segment:
                split = {}
            with w.heap_dump(segment=segment, **split) as h:
                def root(kind: str, fn: Any, *args: Any) -> None:
                    fn(*args)
                    roots[kind] = roots.get(kind, 0) + 1

                def emit_roots() -> None:
                    for serial, (t, tn) in enumerate(self.threads, 1):
                        root("ROOT_THREAD_OBJECT", h.root_thread_object, t, serial,
                             -1 if a else thread_traces[tn])
                    main_serial = 1
                    if a:
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.activity, main_serial, -1)
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.users[0], main_serial, -1)
                        root("ROOT_JNI_LOCAL", h.root_jni_local, self.cache, main_serial, -1)
                        root("ROOT_JNI_GLOBAL", h.root_jni_global, self.loader, 0x2A6)
                        root("ROOT_JNI_GLOBAL", h.root_jni_global, self.thread_array, 0x2B6)
                        root("ROOT_NATIVE_STACK", h.root_native_stack, self.threads[3][0], 4)
                        root("ROOT_THREAD_BLOCK", h.root_thread_block, self.threads[1][0], 2)
                        root("ROOT_MONITOR_USED", h.root_monitor_used, self.user_list)
                        root("ROOT_DEBUGGER", h.root_debugger, self.activity)
                        root("ROOT_VM_INTERNAL", h.root_vm_internal, self.thread_array)
                        root("ROOT_UNKNOWN", h.root_unknown, self.cache)
                        for s in self.interned:
                            root("ROOT_INTERNED_STRING", h.root_interned_string, s)
                        for cls in self.classes.values():
                            if cls.heap == "image":
                                root("ROOT_STICKY_CLASS", h.root_sticky_class, cls.id)
                    else:
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.activity, main_serial, 0)
                        root("ROOT_JAVA_FRAME", h.root_java_frame, self.args, main_serial, 1)
                        root("ROOT_JNI_LOCAL", h.root_jni_local, self.users[0], main_serial, 0)
                        root("ROOT_JNI_GLOBAL", h.root_jni_global, self.loader, 0x7F3AD8012A70
                             if self.id_size == 8 else 0xB7A12A70)
                        for cls in self.classes.values():
                            if not cls.name.startswith("com.example"):
                                root("ROOT_STICKY_CLASS", h.root_sticky_class, cls.id)

                if a:
                    emit_roots()  # ART visits the roots first
                heap_order = {"image": 0, "zygote": 1, "app": 2}
                objs = sorted(self.objs, key=lambda o: (heap_order[o.heap], o.id)) if a else (
                    [o for o in self.objs if o.kind == "class"]
                    + [o for o in self.objs if o.kind != "class"])
                current_heap = None
                for obj in objs:
                    if a and obj.heap != current_heap:
                        h.heap_dump_info(obj.heap)
                        current_heap = obj.heap
                    cls = obj.cls
                    if obj.kind == "class":
                        self.write_class(h, cls, obj_serial)
                    elif obj.kind == "instance":
                        types, values = self.flat_values(obj)
                        h.instance(obj.id, cls.id, values=values, field_types=types,
                                   stack_serial=obj_serial)
                        count(cls.name, obj.heap)
                        if obj.trailer:
                            vid, arr, data = obj.trailer
                            h.primitive_array(vid, _ELEM[arr], data, stack_serial=obj_serial)
                            count(arr, obj.heap)
                    elif obj.kind == "objarray":
                        h.object_array(obj.id, cls.id, obj.payload, stack_serial=obj_serial)
                        count(cls.name, obj.heap)
                    else:
                        assert cls.elem is not None
                        h.primitive_array(obj.id, cls.elem, obj.payload, stack_serial=obj_serial)
                        count(cls.name, obj.heap)
                    if a and cls.statics and obj.kind == "class":
                        count("byte[]", obj.heap)   # the $classOverhead array
                if not a:
                    emit_roots()  # HotSpot dumps thread/JNI/sticky-class roots after the objects
            segments = h.records_written
            if segment:
                w.heap_dump_end()

        total: dict[str, int] = {}
        for hh in hist.values():
            for k, v in hh.items():
                total[k] = total.get(k, 0) + v
        return SampleInfo(android=a, version=version, id_size=self.id_size,
                          seed=self.seed, histogram=dict(sorted(total.items())),
                          heaps={k: dict(sorted(v.items())) for k, v in hist.items()},
                          class_ids={c.name: c.id for c in self.classes.values()},
                          roots=roots, segments=segments)

    def write_class(self, h: HeapDumpBuilder, cls: _Cls, serial: int) -> None:
        a = self.android
        sup = self.classes[cls.super].id if cls.super else 0
        loader = self.loader if (cls.name.startswith("com.example")) else 0
        statics: list[tuple[Name, int, Any]] = []
        if a and cls.statics:
            # ART: a synthetic byte[] (id = class | 1) accounts for the static storage
            overhead = 16 + sum(4 if t == OBJECT else TYPE_SIZES[t] for _, t in cls.statics)
            h.primitive_array(cls.id | 1, BYTE, bytes(overhead), stack_serial=serial)
            statics.append(("$classOverhead", OBJECT, cls.id | 1))
        for name, t in cls.statics:
            statics.append((name, t, cls.static_values.get(name, 0)))
        fields: list[tuple[Name, int]] = list(cls.fields)
        if a and cls.name == "java.lang.String":
            fields.append(("value", OBJECT))   # ART adds the value array as a fake field
        if cls.name.endswith("[]"):
            size = 0
        elif a:
            size = self.instance_size(cls) if cls.name != "java.lang.String" else 16
        else:
            size = self.data_size(cls)
        h.class_dump(cls.id, super_id=sup, loader_id=loader, instance_size=size,
                     stack_serial=serial, statics=statics, fields=fields)


def write_sample_dump(dest: str | os.PathLike[str] | BinaryIO, *, android: bool = False,
                      id_size: int | None = None, seed: int = 0, objects: int = 24,
                      version: str | None = None) -> SampleInfo:
    """Write a small, consistent, realistic application heap and return what it holds.

    HotSpot flavour (default): ``JAVA PROFILE 1.0.2``, 8-byte ids unless ``id_size=4``, class
    names in internal form (``java/lang/String``, ``[Ljava/lang/Object;``, ``[C``), JDK 17
    shapes (compact ``java.lang.String`` with ``byte[] value`` and ``coder``; System.props
    backed by a ConcurrentHashMap), strings/classes/stack traces first, then one segment of
    class dumps, objects and the GC roots of threads, JNI and system classes, then
    HEAP_DUMP_END. ``version="1.0.1"`` (or ``"1.0"``) writes a JDK 8 style dump instead: one
    HEAP_DUMP record, no HEAP_DUMP_END, ``char[]`` strings and Hashtable properties.

    Android flavour (``android=True``): ``JAVA PROFILE 1.0.3`` with 4-byte ids as ART writes
    it: dotted names (``java.lang.Object[]``), string ids from 0x400000, a dummy stack trace,
    roots first (Android roots included), objects in address order split into small segments
    (128 sub-records / 4096 bytes) with HEAP_DUMP_INFO switches between the image, zygote and
    app heaps, Strings followed by their synthetic value arrays and ``$classOverhead`` arrays.

    The heap: java.lang.Object, Class, String, ClassLoader, Thread(Group), ArrayList, HashMap,
    and ``com.example.app`` classes (MainActivity, model.User, cache.ImageCache,
    cache.Thumbnail, ui.UserAdapter) with fields and statics of every type, references in
    cycles, object arrays and primitive arrays of all eight types. ``objects`` is the number
    of ``User`` objects (the heap grows linearly with it); ``seed`` makes it deterministic.
    """
    if id_size is None:
        id_size = 4 if android else 8
    if version is None:
        version = "1.0.3" if android else "1.0.2"
    if version not in VERSIONS:
        raise ValueError(f"unknown HPROF version {version!r}")
    if objects < 1:
        raise ValueError("objects must be at least 1")
    s = _Sample(android, id_size, seed, objects, jdk8=version in ("1.0", "1.0.1"))
    s.define_classes()
    s.build_objects()
    return s.write(dest, version)
