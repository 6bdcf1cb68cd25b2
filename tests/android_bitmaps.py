"""Real Android dumps extended with the bitmaps the shared dumps lack (for test_bitmaps.py).

The shared Android dumps (Android 4.x) hold ARGB_8888 bitmaps in mBuffer only.  extend()
copies a real dump and adds to it, written with hprofkit.writer: names and LOAD_CLASS records
before its first heap dump, and one HEAP_DUMP_SEGMENT of the app heap before its
HEAP_DUMP_END.  legacy_bitmaps() adds Android 4.x bitmaps of every config, mutable and
unpremultiplied ones, shared buffers and hostile sizes to a dump that has the Android 4.x
android.graphics.Bitmap class; dump_data_bitmaps() adds Android 8+ bitmaps (mNativePtr) and
the Bitmap.dumpData that Debug.dumpHprofData(file, format) writes, to an ART-style dump
without bitmaps (androidize.py's)."""

from __future__ import annotations

import io
import random
import struct
from typing import Any, Callable, NamedTuple

import hprofkit
from hprofkit.writer import HprofWriter

import pngkit

HEAP_DUMP_TAGS = (0x0C, 0x1C)
HEAP_DUMP_END = 0x2C
FIRST_ID = 0x70000000      # ids of what is added (checked free in the dump)
FIRST_SID = 0x6F000000
FIRST_SERIAL = 0x6E000000


def header_length(data: bytes) -> int:
    return data.index(b"\0") + 1 + 4 + 8


def records(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, tag, body length) of each top-level record."""
    out, pos = [], header_length(data)
    while pos < len(data):
        tag, _, length = struct.unpack_from(">BII", data, pos)
        out.append((pos, tag, length))
        pos += 9 + length
    assert pos == len(data)
    return out


class Added(NamedTuple):
    """A bitmap object added: what hprofkit must find in it."""

    id: int
    width: int
    height: int
    config: str | None        # Bitmap.config
    format: str | None        # Bitmap.format (None: no pixels)
    byte_size: int | None
    pixels: bytes | None      # pixels() exactly
    premultiplied: bool
    reason: str | None        # a part of no_pixels_reason


class Extension:
    """Records to add to one dump, written by one HprofWriter into memory."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.heap = hprofkit.Heap(data)
        self.string_ids = {struct.unpack_from(">I", data, pos + 9)[0]
                           for pos, tag, _ in records(data) if tag == 0x01}
        self.out = io.BytesIO()
        self.writer = HprofWriter(self.out, version="1.0.3", id_size=4)
        self._next_id, self._next_sid, self._next_serial = FIRST_ID, FIRST_SID, FIRST_SERIAL
        self.names: dict[str, int] = {}
        self.classes: list[tuple[int, int, list, list]] = []   # written by build() as CLASS_DUMPs
        self.added: list[Added] = []

    def new_id(self) -> int:
        while True:
            self._next_id += 8
            try:
                self.heap.object(self._next_id)
            except KeyError:
                return self._next_id

    def name(self, text: str) -> int:
        """A string id for text (a name used by the records added)."""
        if text not in self.names:
            while self._next_sid in self.string_ids:
                self._next_sid += 1
            self.names[text] = self.writer.string(text, sid=self._next_sid)
            self._next_sid += 1
        return self.names[text]

    def new_class(self, name: str, super_id: int, fields=(), statics=()) -> int:
        class_id = self.new_id()
        self._next_serial += 1
        self.writer.load_class(class_id, self.name(name), serial=self._next_serial)
        self.classes.append((class_id, super_id, [(self.name(n), t) for n, t in fields],
                             [(self.name(n), t, v) for n, t, v in statics]))
        return class_id

    def build(self, fill: Callable[[Any], None]) -> bytes:
        """The dump with the records added: fill(builder) writes the heap sub-records (after
        the class dumps of new_class)."""
        with self.writer.heap_dump() as h:
            h.heap_dump_info("app", self.name("app"))
            for class_id, super_id, fields, statics in self.classes:
                h.class_dump(class_id, super_id=super_id, fields=fields, statics=statics)
            fill(h)
        body = self.out.getvalue()
        body = body[header_length(body):]
        names = b"".join(body[pos:pos + 9 + n] for pos, tag, n in records_of(body) if tag not in HEAP_DUMP_TAGS)
        segment = b"".join(body[pos:pos + 9 + n] for pos, tag, n in records_of(body) if tag in HEAP_DUMP_TAGS)
        top = records(self.data)
        first_heap = next(pos for pos, tag, _ in top if tag in HEAP_DUMP_TAGS)
        end = next(pos for pos, tag, _ in reversed(top) if tag == HEAP_DUMP_END)
        return self.data[:first_heap] + names + self.data[first_heap:end] + segment + self.data[end:]


def records_of(body: bytes) -> list[tuple[int, int, int]]:
    """records() of bytes without a header."""
    out, pos = [], 0
    while pos < len(body):
        tag, _, length = struct.unpack_from(">BII", body, pos)
        out.append((pos, tag, length))
        pos += 9 + length
    return out


def _layout(cls: Any) -> list[tuple[str, str]]:
    """(name, type) of an instance's fields in dump order: the class's own, then its
    superclasses'."""
    out = []
    while cls is not None:
        out += [(f.name, f.type) for f in cls.fields()]
        cls = cls.superclass
    return out


DEFAULTS = {"object": 0, "boolean": False, "int": 0, "long": 0, "byte": 0, "short": 0, "char": 0,
            "float": 0.0, "double": 0.0}


def _instance(h: Any, obj_id: int, class_id: int, layout: list[tuple[str, str]], values: dict[str, Any]) -> None:
    h.instance(obj_id, class_id, values=[values.get(n, DEFAULTS[t]) for n, t in layout],
               field_types=[t for _, t in layout])


def _premultiplied(rng: random.Random, n: int) -> bytes:
    """n ARGB_8888 pixels as Android stores them: colours at most their alpha, alpha of
    every kind (0, 255, in between)."""
    out = bytearray()
    for _ in range(n):
        a = rng.choice([0, 255, rng.randrange(1, 255)])
        out += bytes(rng.randrange(a + 1) for _ in range(3)) + bytes([a])
    return bytes(out)


def legacy_bitmaps(data: bytes, seed: int = 7) -> tuple[bytes, list[Added]]:
    """`data` (a dump with Android 4.x's android.graphics.Bitmap) with bitmaps of every
    layout Android 2.3 to 7.1 writes added, and hostile ones."""
    ext = Extension(data)
    rng = random.Random(seed)
    cls = ext.heap.find_class("android.graphics.Bitmap")
    assert cls is not None and "mIsPremultiplied" in [f.name for f in cls.fields()]
    layout = _layout(cls)
    objects: list[tuple[str, Any]] = []   # (kind, args) written by fill

    def bitmap(width: int, height: int, buffer: int | None, *, config=None, fmt=None, byte_size=None,
               pixels=None, premultiplied=True, reason=None, **fields: Any) -> int:
        obj_id = ext.new_id()
        values = {"mWidth": width, "mHeight": height, "mBuffer": buffer or 0, "mIsPremultiplied": premultiplied,
                  "mDensity": 320, **fields}
        objects.append(("instance", (obj_id, values)))
        ext.added.append(Added(obj_id, width, height, config, fmt, byte_size, pixels, premultiplied, reason))
        return obj_id

    def byte_array(payload: bytes) -> int:
        array_id = ext.new_id()
        objects.append(("bytes", (array_id, payload)))
        return array_id

    def raw(width: int, height: int, payload: bytes, config: str, *, extra: bytes = b"", **fields: Any) -> int:
        return bitmap(width, height, byte_array(payload + extra), config=config, fmt=config,
                      byte_size=len(payload) + len(extra), pixels=payload, **fields)

    rgb565 = bytes(rng.randrange(256) for _ in range(7 * 5 * 2))
    raw(7, 5, rgb565, "RGB_565")
    raw(7, 5, rgb565, "RGB_565")                                  # a duplicate of the one above
    raw(9, 4, bytes(rng.randrange(256) for _ in range(36)), "ALPHA_8")
    raw(6, 6, _premultiplied(rng, 36), "ARGB_8888", extra=bytes(50), mIsMutable=True)  # reconfigured smaller
    raw(5, 3, bytes(rng.randrange(256) for _ in range(30)), "RGB_565", extra=bytes(7), mIsMutable=True)
    raw(4, 4, bytes(rng.randrange(256) for _ in range(64)), "ARGB_8888", premultiplied=False)
    raw(33, 21, _premultiplied(rng, 33 * 21), "ARGB_8888")
    raw(640, 480, rng.randbytes(640 * 480 * 4), "ARGB_8888")       # more than a band, noise zlib cannot shrink
    shared = _premultiplied(rng, 12)
    shared_id = byte_array(shared)
    for _ in range(2):                                            # two bitmaps on one buffer
        bitmap(4, 3, shared_id, config="ARGB_8888", fmt="ARGB_8888", byte_size=48, pixels=shared)
    # What the dump cannot hold as pixels.
    bitmap(100, 100, byte_array(bytes(100)), byte_size=100, reason="are not 1, 2 or 4 bytes a pixel")
    bitmap(3, 3, byte_array(bytes(20)), byte_size=20, reason="are not 1, 2 or 4 bytes a pixel")
    bitmap(2**31 - 1, 2, byte_array(bytes(8)), byte_size=8, reason="are not 1, 2 or 4 bytes a pixel")
    bitmap(2**31 - 1, 2**31 - 1, byte_array(bytes(8)), byte_size=8, mIsMutable=True,
           reason="are not 1, 2 or 4 bytes a pixel")
    bitmap(-5, 4, byte_array(bytes(80)), reason="is not positive")
    bitmap(5, 0, byte_array(bytes(80)), reason="is not positive")
    bitmap(-(2**31), -(2**31), None, reason="is not positive")
    bitmap(8, 8, None, mRecycled=True, reason="recycled")
    bitmap(8, 8, None, reason="native memory")
    int_array = ext.new_id()
    objects.append(("ints", (int_array, [0] * 64)))
    bitmap(8, 8, int_array, reason="not a byte[]")

    def fill(h: Any) -> None:
        for kind, args in objects:
            if kind == "instance":
                _instance(h, args[0], cls.class_id, layout, args[1])
            elif kind == "bytes":
                h.primitive_array(args[0], "byte", args[1])
            else:
                h.primitive_array(args[0], "int", args[1])
    return ext.build(fill), ext.added


def dump_data_bitmaps(data: bytes, compress_format: int | None, *, sizes: bool = True,
                      seed: int = 11, big: bool = False) -> tuple[bytes, list[Added]]:
    """`data` (an ART-style dump without android.graphics.Bitmap) with Android 8+ bitmaps
    added, and Bitmap.dumpData holding compressed copies of most in `compress_format`
    (Bitmap.CompressFormat: 0 JPEG, 1 PNG, 2 WEBP...; None: no dumpData, as a dump taken
    without bitmap data), with their sizes (Android 14+) or without (the first versions).
    big: one more, 200x200 of noise (a copy of about 160 KB) whose size entry says 2 GiB, more
    than any allocation of 200x200 pixels (its byte_size is then unknown)."""
    ext = Extension(data)
    rng = random.Random(seed)
    heap = ext.heap
    assert heap.find_class("android.graphics.Bitmap") is None
    object_class = heap.find_class("java.lang.Object")
    assert object_class is not None
    bitmap_fields = [("mNativePtr", "long"), ("mWidth", "int"), ("mHeight", "int"), ("mDensity", "int"),
                     ("mRequestPremultiplied", "boolean"), ("mRecycled", "boolean"), ("mNinePatchChunk", "object"),
                     ("mId", "long"), ("mSourceId", "long")]
    dump_data_fields = [("count", "int"), ("format", "int"), ("max", "int"), ("natives", "object"),
                        ("buffers", "object")] + ([("sizes", "object")] if sizes else [])
    holder_id = ext.new_id() if compress_format is not None else 0
    bitmap_class = ext.new_class("android.graphics.Bitmap", object_class.class_id, bitmap_fields,
                                 [("dumpData", "object", holder_id)])
    holder_class = ext.new_class("android.graphics.Bitmap$DumpData", object_class.class_id, dump_data_fields)
    buffers_class = ext.new_class("byte[][]", object_class.class_id)
    names = {0: "JPEG", 1: "PNG", 2: "WEBP", 3: "WEBP_LOSSY", 4: "WEBP_LOSSLESS"}
    fmt = names.get(compress_format) if compress_format is not None else None

    def blob(width: int, height: int) -> bytes:
        rgba = bytes(rng.randrange(256) for _ in range(width * height * 4))
        if compress_format == 1:
            return pngkit.encode(width, height, rgba)
        # A JPEG or WEBP copy is written and read as it is: only its first bytes are real.
        head = b"\xff\xd8\xff\xe0" if compress_format == 0 else b"RIFF\0\0\0\0WEBPVP8L"
        return head + rgba

    bitmaps: list[tuple[int, dict[str, Any]]] = []
    copies: list[tuple[int, int, bytes, int]] = []     # native, array id, blob, size

    def bitmap(width: int, height: int, *, copy: bytes | None = None, listed: bool = True,
               reason: str | None = None, bogus_size: int | None = None) -> int:
        obj_id, native = ext.new_id(), rng.randrange(1 << 40, 1 << 62)
        size = width * height * 4
        bitmaps.append((obj_id, {"mNativePtr": native, "mWidth": width, "mHeight": height, "mDensity": 420,
                                 "mRequestPremultiplied": True, "mId": obj_id, "mSourceId": -1}))
        has = compress_format is not None and copy is not None and listed
        if compress_format is not None and copy is not None:
            copies.append((native, ext.new_id(), copy, size if bogus_size is None else bogus_size))
        if compress_format is None:
            reason = "holds no bitmap data"
        ext.added.append(Added(obj_id, width, height, None, fmt if has else None,
                               size if has and sizes and bogus_size is None else None, copy if has else None,
                               True, reason))
        return obj_id

    first = blob(5, 4)
    bitmap(5, 4, copy=first)
    bitmap(5, 4, copy=first)                            # identical copies: a duplicate group
    bitmap(17, 9, copy=blob(17, 9))
    bitmap(3, 3, reason="has no copy of it")            # not in natives
    if big:
        bitmap(200, 200, copy=blob(200, 200), bogus_size=0x7FFF_FFFF)
    listed = len(copies)
    bitmap(6, 2, copy=blob(6, 2), listed=False, reason="has no copy of it")  # beyond count

    def fill(h: Any) -> None:
        layout = [(n, t) for n, t in bitmap_fields]
        for obj_id, values in bitmaps:
            _instance(h, obj_id, bitmap_class, layout, values)
        if compress_format is None:
            return
        natives_id, buffers_id, sizes_id = ext.new_id(), ext.new_id(), ext.new_id()
        max_count = len(copies) + 2                      # arrays longer than count, as DumpData's
        _instance(h, holder_id, holder_class, dump_data_fields,
                  {"count": listed, "format": compress_format, "max": max_count, "natives": natives_id,
                   "buffers": buffers_id, "sizes": sizes_id})
        h.primitive_array(natives_id, "long", [c[0] for c in copies] + [0] * (max_count - len(copies)))
        h.object_array(buffers_id, buffers_class, [c[1] for c in copies] + [None] * (max_count - len(copies)))
        if sizes:
            h.primitive_array(sizes_id, "int", [c[3] for c in copies] + [0] * (max_count - len(copies)))
        for _, array_id, payload, _ in copies:
            h.primitive_array(array_id, "byte", payload)
    return ext.build(fill), ext.added
