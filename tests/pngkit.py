"""A small PNG decoder and encoder of the tests' own (zlib and struct only), to check the
PNGs hprofkit writes without trusting its writer: every chunk's CRC, IHDR, the zlib stream
of the IDAT chunks, and the five filter types of PNG (None, Sub, Up, Average, Paeth) undone.
The encoder writes PNGs with a chosen filter type per row, to check the decoder, and the
PNG copies of Android 8+ dump data."""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}   # colour type -> samples per pixel (8-bit, no palette)


class Image(NamedTuple):
    width: int
    height: int
    colour_type: int
    pixels: bytes          # rows of width * channels bytes, unfiltered
    chunks: list[bytes]    # the chunk types in file order


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of each chunk, each CRC checked; AssertionError on anything wrong."""
    assert data[:8] == SIGNATURE, "no PNG signature"
    out, pos = [], 8
    while pos < len(data):
        assert pos + 12 <= len(data), f"chunk head cut at {pos}"
        (length,) = struct.unpack_from(">I", data, pos)
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert len(body) == length, f"chunk {kind!r} cut"
        (crc,) = struct.unpack_from(">I", data, pos + 8 + length)
        assert crc == zlib.crc32(kind + body), f"bad CRC of chunk {kind!r}"
        out.append((kind, body))
        pos += 12 + length
        if kind == b"IEND":
            break
    assert pos == len(data), "bytes after IEND"
    return out


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw: bytes, width: int, height: int, bpp: int) -> bytes:
    """Rows of a decompressed IDAT stream with their filters undone."""
    stride = width * bpp
    assert len(raw) == height * (1 + stride), f"{len(raw)} bytes of scanlines for {width}x{height}x{bpp}"
    out = bytearray()
    prior = bytearray(stride)
    for y in range(height):
        kind = raw[y * (1 + stride)]
        assert kind <= 4, f"filter type {kind} in row {y}"
        line = bytearray(raw[y * (1 + stride) + 1:(y + 1) * (1 + stride)])
        for x in range(stride if kind else 0):  # None (0) leaves the row as it is
            left = line[x - bpp] if x >= bpp else 0
            up = prior[x]
            upper_left = prior[x - bpp] if x >= bpp else 0
            pred = (0, left, up, (left + up) // 2, paeth(left, up, upper_left))[kind]
            line[x] = (line[x] + pred) & 0xFF
        out += line
        prior = line
    return bytes(out)


def decode(data: bytes) -> Image:
    """An 8-bit, non-interlaced PNG (grey, RGB, grey+alpha or RGBA)."""
    parts = chunks(data)
    kinds = [kind for kind, _ in parts]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND", kinds
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    assert (depth, compression, filtering, interlace) == (8, 0, 0, 0), parts[0][1]
    assert colour in CHANNELS and width > 0 and height > 0
    idat = [i for i, kind in enumerate(kinds) if kind == b"IDAT"]
    assert idat and idat == list(range(idat[0], idat[-1] + 1)), "IDAT chunks must follow each other"
    inflater = zlib.decompressobj()
    raw = inflater.decompress(b"".join(parts[i][1] for i in idat))
    assert inflater.eof and not inflater.unused_data, "the zlib stream must end with the last IDAT"
    return Image(width, height, colour, unfilter(raw, width, height, CHANNELS[colour]), kinds)


def filtered(line: bytes, prior: bytes, bpp: int, kind: int) -> bytes:
    out = bytearray()
    for x, value in enumerate(line):
        left = line[x - bpp] if x >= bpp else 0
        up = prior[x]
        upper_left = prior[x - bpp] if x >= bpp else 0
        pred = (0, left, up, (left + up) // 2, paeth(left, up, upper_left))[kind]
        out.append((value - pred) & 0xFF)
    return bytes(out)


def encode(width: int, height: int, rgba: bytes, filters: list[int] | None = None) -> bytes:
    """An RGBA PNG, row y filtered with filters[y % len(filters)] (default: cycling 0 to 4)."""
    filters = filters or [0, 1, 2, 3, 4]
    stride = width * 4
    raw, prior = bytearray(), bytes(stride)
    for y in range(height):
        line = rgba[y * stride:(y + 1) * stride]
        kind = filters[y % len(filters)]
        raw += bytes([kind]) + filtered(line, prior, 4, kind)
        prior = line

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))
