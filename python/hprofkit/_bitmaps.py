"""Android bitmaps: the android.graphics.Bitmap objects of a heap, their pixels and images.

    for bmp in heap.bitmaps():
        print(bmp)                               # <Bitmap 96x96 ARGB_8888 36,864 B app @0xb0f93f80>
        if bmp.has_pixels:
            bmp.to_png(f"bitmap-{bmp.object.id:x}.png")
    for group in heap.duplicate_bitmaps():      # identical pixels, largest waste first
        print(group.wasted_bytes, group.bitmaps)

Where a dump keeps a bitmap's pixels depends on the Android version that wrote it:

- Android 2.3 to 7.1: in the Java byte[] ``mBuffer``, raw, in the layout of the bitmap's
  Bitmap.Config.  The config itself stays in native memory, so it is inferred from the
  buffer's size, as Android Studio does: 4 bytes a pixel ARGB_8888, 2 RGB_565 (ARGB_4444 has 2
  as well: such bitmaps show in the wrong colours), 1 ALPHA_8.  An immutable bitmap's buffer
  holds exactly width x height pixels; a mutable one may hold more (Bitmap.reconfigure), and
  its config is then the largest the buffer holds.  A null ``mBuffer`` means the pixels were
  in native memory (recycled, Android 2.x, purgeable or ashmem bitmaps).
- Android 8 and later keep pixels in native memory; a dump has them only when it was taken
  with bitmap data (``Debug.dumpHprofData(file, "png")``, as recent Android Studio heap
  dumps are): the static ``Bitmap.dumpData`` (``Bitmap$DumpData``) then holds
  each bitmap compressed (``buffers``, a byte[] each), keyed by its ``mNativePtr``
  (``natives``), in one ``format`` (Bitmap.CompressFormat: 0 JPEG, 1 PNG, 2 WEBP, 3
  WEBP_LOSSY, 4 WEBP_LOSSLESS), with its allocation's size (``sizes``) where the version has
  them.  The config of such a bitmap is not in the dump (config None).

Images: raw pixels become an 8-bit RGBA PNG (written with zlib, one IDAT chunk a band of
rows), converted as Android's own Bitmap.compress(PNG) converted them (core/hp_pixels.h):
ARGB_8888 un-premultiplied with Skia's table, RGB_565 widened by bit replication, ALPHA_8
black with its alpha.  A bitmap the dump holds compressed is written as it is: PNG blobs are
its PNG; JPEG and WEBP ones are not converted (png_bytes raises UnsupportedError; save() and
image_bytes() give them as they are, with their extension).

Memory: pixels are read from the dump in bands of about 1 MiB, so writing a PNG to a file
holds one band and zlib's state whatever the bitmap's size; png_bytes() and pixels() return
the whole of what they make."""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import zlib
from typing import IO, TYPE_CHECKING, Any, Iterable, Iterator, NamedTuple, Optional, Union

from ._errors import UnsupportedError
from ._output import output_file

if TYPE_CHECKING:
    from ._heap import Heap, HeapObject

__all__ = ["Bitmap", "DuplicateBitmaps", "bitmaps", "duplicate_bitmaps"]

BITMAP_CLASS = "android.graphics.Bitmap"

# Raw configs: bytes per pixel, and the code of core/hp_pixels.h.
_PIXEL_SIZES = {"ARGB_8888": 4, "RGB_565": 2, "ALPHA_8": 1}
_CONFIG_CODES = {"ARGB_8888": 1, "RGB_565": 2, "ALPHA_8": 3}
_CONFIG_BY_SIZE = {4: "ARGB_8888", 2: "RGB_565", 1: "ALPHA_8"}
# Bitmap.CompressFormat.nativeInt -> name, and what a file of it is.
COMPRESS_FORMATS = {0: "JPEG", 1: "PNG", 2: "WEBP", 3: "WEBP_LOSSY", 4: "WEBP_LOSSLESS"}
_FILE_TYPES = {"PNG": (".png", "image/png"), "JPEG": (".jpg", "image/jpeg"), "WEBP": (".webp", "image/webp"),
               "WEBP_LOSSY": (".webp", "image/webp"), "WEBP_LOSSLESS": (".webp", "image/webp")}

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BAND_BYTES = 1 << 20       # scanlines (or pixel bytes) made at a time
IDAT_BYTES = 1 << 20       # compressed bytes gathered into one IDAT chunk
HTML_MAX_SIDE = 512        # _repr_html_ shows larger bitmaps scaled down to this
# An image embedded in HTML (a notebook's _repr_html_, the report's thumbnails) is at most this
# many bytes: a larger one (a compressed copy is embedded as it is) is described, not embedded.
EMBED_MAX = 48 << 10
# The most bytes a pixel takes in any Bitmap.Config (RGBA_F16): an allocation Bitmap$DumpData's
# sizes give as larger than width x height of them is no allocation of that bitmap.
_MAX_PIXEL_BYTES = 8


class Bitmap:
    """One android.graphics.Bitmap of a heap (heap.bitmaps() makes them).

    object: the Bitmap's HeapObject; width, height: its mWidth and mHeight (None if the object
    lacks them); config: the Bitmap.Config name of its raw pixels ("ARGB_8888", "RGB_565",
    "ALPHA_8"), None when the dump does not say; format: how pixels() lays them out, the config
    for raw pixels, a Bitmap.CompressFormat name ("PNG", "JPEG", "WEBP"...) for a compressed
    copy, None without pixels; byte_size: bytes of memory its pixels take (the buffer's size,
    or the dump data's size of the native allocation; None when the dump does not say);
    premultiplied: whether raw ARGB_8888 pixels are stored premultiplied by alpha;
    has_pixels: whether the dump holds its pixels, and if not, no_pixels_reason says why."""

    __slots__ = ("object", "width", "height", "config", "format", "byte_size", "premultiplied",
                 "no_pixels_reason", "_buffer")
    __module__ = "hprofkit"

    def __init__(self, obj: HeapObject, width: Optional[int], height: Optional[int], *,
                 config: Optional[str] = None, format: Optional[str] = None, byte_size: Optional[int] = None,
                 premultiplied: bool = True, buffer: Optional[HeapObject] = None,
                 no_pixels_reason: Optional[str] = None) -> None:
        self.object = obj
        self.width = width
        self.height = height
        self.config = config
        self.format = format if buffer is not None else None
        self.byte_size = byte_size
        self.premultiplied = premultiplied
        self._buffer = buffer
        self.no_pixels_reason = None if buffer is not None else (no_pixels_reason or "no pixels in the dump")

    # ---- what the dump holds -------------------------------------------------------------

    @property
    def has_pixels(self) -> bool:
        """Whether the dump holds this bitmap's pixels (raw or compressed)."""
        return self._buffer is not None

    @property
    def compressed(self) -> bool:
        """Whether the pixels are a compressed copy (Android 8+ dump data), not raw."""
        return self.format in COMPRESS_FORMATS.values()

    @property
    def extension(self) -> Optional[str]:
        """The file extension of image_bytes() and save(): ".png", ".jpg" or ".webp"."""
        if not self.has_pixels:
            return None
        return self._file_type()[0]

    def _file_type(self) -> tuple[str, str]:
        """(extension, MIME type) of image_bytes()."""
        return _FILE_TYPES[self.format] if self.format in _FILE_TYPES else (".png", "image/png")

    def _raw_size(self) -> int:
        assert self.width is not None and self.height is not None and self.config is not None
        return self.width * self.height * _PIXEL_SIZES[self.config]

    def _pixel_length(self) -> int:
        assert self._buffer is not None
        return len(self._buffer) if self.compressed else self._raw_size()

    def pixels(self) -> Optional[bytes]:
        """The pixels as the dump holds them, in self.format: raw rows of width pixels in the
        config's layout (exactly width x height pixels, the buffer's spare bytes left out), or
        the compressed copy; None when the dump lacks them."""
        if self._buffer is None:
            return None
        return self._buffer._payload(0, self._pixel_length())

    def _pixel_pieces(self) -> Iterator[bytes]:
        """pixels() in pieces of at most BAND_BYTES (for hashing with bounded memory)."""
        assert self._buffer is not None
        total = self._pixel_length()
        for start in range(0, total, BAND_BYTES):
            yield self._buffer._payload(start, min(BAND_BYTES, total - start))

    # ---- images --------------------------------------------------------------------------

    def _png_pieces(self, step: int) -> Iterator[bytes]:
        """The PNG of raw pixels, piece by piece: every step-th pixel of every step-th row."""
        assert self._buffer is not None and self.width and self.height and self.config
        out_width, out_height = -(-self.width // step), -(-self.height // step)
        row_bytes = self.width * _PIXEL_SIZES[self.config]
        yield PNG_SIGNATURE
        yield _chunk(b"IHDR", struct.pack(">IIBBBBB", out_width, out_height, 8, 6, 0, 0, 0))
        band = max(1, BAND_BYTES // (1 + 4 * out_width))
        unpremultiply = self.config == "ARGB_8888" and self.premultiplied
        compressor = zlib.compressobj(6)
        pending = bytearray()
        for first in range(0, out_height, band):
            rows = self._buffer._png_rows(_CONFIG_CODES[self.config], self.width, min(band, out_height - first),
                                          offset=first * step * row_bytes, stride=step * row_bytes, step=step,
                                          unpremultiply=unpremultiply)
            pending += compressor.compress(rows)
            if len(pending) >= IDAT_BYTES:
                yield _chunk(b"IDAT", bytes(pending))
                pending.clear()
        pending += compressor.flush()
        yield _chunk(b"IDAT", bytes(pending))
        yield _chunk(b"IEND", b"")

    def _image_pieces(self, max_side: Optional[int] = None, *, png: bool = False) -> Iterator[bytes]:
        """The image's bytes, piece by piece; what is wrong raises here, before anything is
        written."""
        if self._buffer is None:
            raise ValueError(f"{self!r} has no pixels in the dump: {self.no_pixels_reason}")
        assert self.width is not None and self.height is not None
        step = _thumbnail_step(self.width, self.height, max_side)
        if not self.compressed:
            return self._png_pieces(step)
        if png and self.format != "PNG":
            raise UnsupportedError(f"{self!r}: the dump holds it as {self.format}, which hprofkit does not "
                                   f"convert to PNG; save() or image_bytes() give the {self.format} as it is")
        return self._pixel_pieces()

    def png_bytes(self, *, max_side: Optional[int] = None) -> bytes:
        """The bitmap as a PNG image.  max_side: at most that many pixels on its longest side
        (a thumbnail: every k-th pixel of every k-th row, k the smallest that fits); a PNG the
        dump holds is returned as it is, whatever max_side.  ValueError without pixels,
        UnsupportedError for a JPEG or WEBP copy."""
        return b"".join(self._image_pieces(max_side, png=True))

    def image_bytes(self, *, max_side: Optional[int] = None) -> bytes:
        """The bitmap as an image file of type self.extension: the PNG of raw pixels, or the
        dump's compressed copy as it is."""
        return b"".join(self._image_pieces(max_side))

    def to_png(self, dst: Union[str, os.PathLike[str], IO[bytes]], /, *, max_side: Optional[int] = None) -> None:
        """Writes png_bytes() to a path (atomically, through hprofkit's output rules) or a
        binary file, a band of rows at a time."""
        _write(dst, self._image_pieces(max_side, png=True))

    def save(self, dst: Union[str, os.PathLike[str], IO[bytes]], /, *, max_side: Optional[int] = None) -> None:
        """Writes image_bytes() (PNG, JPEG or WEBP: name the file with self.extension)."""
        _write(dst, self._image_pieces(max_side))

    # ---- display -------------------------------------------------------------------------

    def __repr__(self) -> str:
        parts = ["?x?" if self.width is None or self.height is None else f"{self.width}x{self.height}"]
        if self.config:
            parts.append(self.config)
        if self.compressed:
            parts.append(f"as {self.format}")
        if self.byte_size is not None:
            parts.append(f"{self.byte_size:,} B")
        if self.object.heap_name:
            parts.append(self.object.heap_name)
        if not self.has_pixels:
            parts.append(f"(no pixels: {self.no_pixels_reason})")
        return f"<Bitmap {' '.join(parts)} @0x{self.object.id:x}>"

    def _repr_png_(self) -> Optional[bytes]:
        if not self.has_pixels or (self.compressed and self.format != "PNG"):
            return None
        return self.png_bytes()

    def _repr_jpeg_(self) -> Optional[bytes]:
        return self.pixels() if self.format == "JPEG" else None

    def _repr_html_(self) -> str:
        """The image (scaled down to HTML_MAX_SIDE) over its description; everything the dump
        says is escaped."""
        from ._html import text as escape
        caption = f"<figcaption><code>{escape(repr(self))}</code></figcaption>"
        if not self.has_pixels:
            return f"<figure>{caption}</figure>"
        image = self.embeddable(HTML_MAX_SIDE)
        if image is None:
            return (f"<figure>{caption}<figcaption>its {escape(self.format or 'PNG')} image is too big to show "
                    f"here (over {EMBED_MAX >> 10} KiB): save() writes it</figcaption></figure>")
        data = base64.b64encode(image).decode("ascii")
        return (f'<figure><img src="data:{self._file_type()[1]};base64,{data}" alt="{escape(repr(self))}" '
                f'style="image-rendering: pixelated; max-width: {HTML_MAX_SIDE}px">{caption}</figure>')

    def embeddable(self, max_side: int) -> Optional[bytes]:
        """image_bytes() scaled to max_side (or down to a quarter of it) when it fits in
        EMBED_MAX bytes, else None: what HTML embeds.  A compressed copy is only ever its
        own bytes, read only when they fit.  ValueError without pixels."""
        if self.compressed:
            return self.pixels() if self._pixel_length() <= EMBED_MAX else None
        for side in (max_side, max_side // 4):
            image = self.image_bytes(max_side=max(side, 1))
            if len(image) <= EMBED_MAX:
                return image
        return None


class DuplicateBitmaps(NamedTuple):
    """Bitmaps of identical pixels (Tencent Matrix's duplicate bitmap check).

    digest: the 128-bit BLAKE2b of the pixels, hex; bitmaps: the Bitmaps, by object id;
    wasted_bytes: the memory all but one of the group's distinct pixel buffers take (the
    group's byte sizes less the largest: (n - 1) x byte_size for n buffers of one size), None
    when the dump does not give their sizes."""

    digest: str
    bitmaps: list[Bitmap]
    wasted_bytes: Optional[int]


DuplicateBitmaps.__module__ = "hprofkit"


# ---- heap.bitmaps() -----------------------------------------------------------------------

def bitmaps(heap: Heap) -> list[Bitmap]:
    """Every android.graphics.Bitmap of the heap (of every class of that name), by object id."""
    out: list[Bitmap] = []
    for cls in heap.classes_named(BITMAP_CLASS):
        dump_data = _DumpData.of(cls)
        out.extend(_bitmap(obj, dump_data) for obj in cls.instances(subclasses=True))
    out.sort(key=lambda b: b.object.id)
    return out


def _int_field(fields: dict[str, Any], name: str) -> Optional[int]:
    value = fields.get(name)
    return value if type(value) is int else None


def _bitmap(obj: HeapObject, dump_data: _DumpData) -> Bitmap:
    fields: dict[str, Any] = {}
    for f in obj.fields():
        fields.setdefault(f.name, f.value)
    width, height = _int_field(fields, "mWidth"), _int_field(fields, "mHeight")
    premultiplied = fields.get("mRequestPremultiplied", fields.get("mIsPremultiplied", True)) is not False
    if width is None or height is None:
        return Bitmap(obj, width, height, premultiplied=premultiplied,
                      no_pixels_reason="the object has no int fields mWidth and mHeight")
    if width <= 0 or height <= 0:
        return Bitmap(obj, width, height, premultiplied=premultiplied,
                      no_pixels_reason=f"its size {width}x{height} is not positive")
    if "mBuffer" in fields:
        return _legacy_bitmap(obj, width, height, fields, premultiplied)
    return dump_data.bitmap(obj, width, height, fields, premultiplied)


def _legacy_bitmap(obj: HeapObject, width: int, height: int, fields: dict[str, Any], premultiplied: bool) -> Bitmap:
    """A bitmap of Android 2.3 to 7.1: raw pixels in mBuffer."""
    buffer = fields["mBuffer"]
    if buffer is None:
        reason = ("recycled" if fields.get("mRecycled") is True
                  else "mBuffer is null: the pixels were in native memory")
        return Bitmap(obj, width, height, premultiplied=premultiplied, no_pixels_reason=reason)
    if getattr(buffer, "class_name", None) != "byte[]":
        return Bitmap(obj, width, height, premultiplied=premultiplied,
                      no_pixels_reason=f"mBuffer is not a byte[] but "
                                       f"{getattr(buffer, 'class_name', type(buffer).__name__)}")
    size = len(buffer)
    config = _infer_config(size, width * height, mutable=fields.get("mIsMutable") is True)
    if config is None:
        return Bitmap(obj, width, height, byte_size=size, premultiplied=premultiplied,
                      no_pixels_reason=f"mBuffer's {size:,} bytes are not 1, 2 or 4 bytes a pixel of "
                                       f"{width}x{height}")
    return Bitmap(obj, width, height, config=config, format=config, byte_size=size, premultiplied=premultiplied,
                  buffer=buffer)


def _infer_config(size: int, area: int, *, mutable: bool) -> Optional[str]:
    """The config of a buffer of `size` bytes for `area` pixels (None when none fits): an
    immutable bitmap's buffer holds its pixels exactly, a mutable one's at least."""
    per_pixel = size // area
    if mutable:
        return next((_CONFIG_BY_SIZE[n] for n in (4, 2, 1) if n <= per_pixel), None)
    return _CONFIG_BY_SIZE.get(per_pixel) if size % area == 0 else None


class _DumpData:
    """Bitmap.dumpData of an Android 8+ dump taken with bitmap data: the compressed copy
    (and size) of each bitmap by its mNativePtr."""

    NO_DATA = ("the dump holds no bitmap data (Android 8+ keeps pixels in native memory; "
               "Debug.dumpHprofData(path, \"png\") adds them)")

    def __init__(self, format: Optional[str], copies: dict[int, tuple[HeapObject, Optional[int]]],
                 problem: Optional[str]) -> None:
        self.format = format
        self.copies = copies
        self.problem = problem

    @classmethod
    def of(cls, bitmap_class: Any) -> _DumpData:
        holder = next((f.value for f in bitmap_class.statics() if f.name == "dumpData"), None)
        if holder is None or getattr(holder, "kind", None) != "instance":
            return cls(None, {}, cls.NO_DATA)
        fields: dict[str, Any] = {}
        for f in holder.fields():
            fields.setdefault(f.name, f.value)
        code, count = _int_field(fields, "format"), _int_field(fields, "count")
        natives: Any = fields.get("natives")
        buffers: Any = fields.get("buffers")
        sizes: Any = fields.get("sizes")
        if code is None or count is None or not _is_array(natives, "long[]") or \
                getattr(buffers, "kind", None) != "object_array":
            return cls(None, {}, "Bitmap.dumpData is not the Bitmap$DumpData hprofkit reads "
                                 "(int format, int count, long[] natives, byte[][] buffers)")
        if code not in COMPRESS_FORMATS:
            return cls(None, {}, f"the dump's bitmap data is in format {code}, no Bitmap.CompressFormat")
        n = max(0, min(count, len(natives), len(buffers)))
        native_ids = natives.tolist()[:n]
        blobs = buffers.tolist()[:n]
        byte_sizes = sizes.tolist()[:n] if _is_array(sizes, "int[]") else []
        copies: dict[int, tuple[HeapObject, Optional[int]]] = {}
        for i, (native, blob) in enumerate(zip(native_ids, blobs)):
            if _is_array(blob, "byte[]"):
                size = byte_sizes[i] if i < len(byte_sizes) and byte_sizes[i] >= 0 else None
                copies.setdefault(native, (blob, size))
        return cls(COMPRESS_FORMATS[code], copies, None)

    def bitmap(self, obj: HeapObject, width: int, height: int, fields: dict[str, Any], premultiplied: bool) -> Bitmap:
        native = fields.get("mNativePtr")
        if self.problem is not None or type(native) is not int:
            return Bitmap(obj, width, height, premultiplied=premultiplied,
                          no_pixels_reason=self.problem or "the object has neither mBuffer nor a long mNativePtr")
        copy = self.copies.get(native)
        if copy is None:
            return Bitmap(obj, width, height, premultiplied=premultiplied,
                          no_pixels_reason="the dump's bitmap data has no copy of it")
        blob, size = copy
        if size is not None and size > width * height * _MAX_PIXEL_BYTES:
            size = None  # not this bitmap's allocation: a corrupt sizes entry
        return Bitmap(obj, width, height, format=self.format, byte_size=size, premultiplied=premultiplied,
                      buffer=blob)


def _is_array(value: Any, class_name: str) -> bool:
    return getattr(value, "kind", None) == "primitive_array" and value.class_name == class_name


# ---- heap.duplicate_bitmaps() -----------------------------------------------------------

def duplicate_bitmaps(heap: Heap, of: Optional[Iterable[Bitmap]] = None) -> list[DuplicateBitmaps]:
    """Groups of bitmaps whose pixels are identical (same format, size and bytes), largest
    waste first (then the largest groups, then by their first object id).  Only bitmaps that
    share a format and size with another are hashed."""
    alike: dict[tuple[Any, ...], list[Bitmap]] = {}
    for bmp in bitmaps(heap) if of is None else of:
        if bmp.has_pixels:
            alike.setdefault((bmp.format, bmp.width, bmp.height, bmp._pixel_length()), []).append(bmp)
    groups: dict[tuple[Any, ...], list[Bitmap]] = {}
    for key, candidates in alike.items():
        for bmp in candidates if len(candidates) > 1 else ():
            digest = hashlib.blake2b(digest_size=16)
            for piece in bmp._pixel_pieces():
                digest.update(piece)
            groups.setdefault(key + (digest.hexdigest(),), []).append(bmp)
    out = [DuplicateBitmaps(key[-1], sorted(members, key=lambda b: b.object.id), _wasted(members))
           for key, members in groups.items() if len(members) > 1]
    out.sort(key=lambda g: (-(g.wasted_bytes or 0), -len(g.bitmaps), g.bitmaps[0].object.id))
    return out


def _wasted(members: list[Bitmap]) -> Optional[int]:
    """The byte sizes of the group's distinct buffers less the largest (two bitmaps on one
    buffer waste nothing)."""
    sizes = list({b._buffer.id: b.byte_size for b in members if b._buffer is not None}.values())
    if any(size is None for size in sizes):
        return None
    known = [size for size in sizes if size is not None]
    return sum(known) - max(known)


# ---- PNG and files --------------------------------------------------------------------

def _thumbnail_step(width: int, height: int, max_side: Optional[int]) -> int:
    """k: every k-th pixel of every k-th row fits max_side (1: the whole bitmap)."""
    if max_side is None:
        return 1
    if type(max_side) is not int or max_side < 1:
        raise ValueError(f"max_side must be a whole number of 1 or more, not {max_side!r}")
    return max(1, -(-max(width, height) // max_side))


def _chunk(kind: bytes, data: bytes) -> bytes:
    """A PNG chunk: length, type, data, and the CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _write(dst: Union[str, os.PathLike[str], IO[bytes]], pieces: Iterator[bytes]) -> None:
    with output_file(dst) as f:
        for piece in pieces:
            f.write(piece)
