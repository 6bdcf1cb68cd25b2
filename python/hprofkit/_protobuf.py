"""The protocol buffers wire format, the little of it a writer needs: varints,
tags, length-delimited fields and packed repeated integers
(https://protobuf.dev/programming-guides/encoding/).  _pprof.py writes
profile.proto's messages with it; nothing here knows a schema."""

from __future__ import annotations

from typing import Iterable

VARINT = 0
LENGTH_DELIMITED = 2


def varint(value: int) -> bytes:
    """An unsigned varint; a negative int64 as its two's complement (ten bytes), as
    protobuf writes int64."""
    if value < 0:
        value += 1 << 64
    if not 0 <= value < 1 << 64:
        raise ValueError(f"{value} does not fit 64 bits")
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint(field << 3 | wire_type)


def integer(field: int, value: int) -> bytes:
    """A varint field; nothing for 0 (proto3's default is not written)."""
    return key(field, VARINT) + varint(value) if value else b""


def data(field: int, payload: bytes) -> bytes:
    """A length-delimited field: bytes, a string's UTF-8, or an embedded message."""
    return key(field, LENGTH_DELIMITED) + varint(len(payload)) + payload


def packed(field: int, values: Iterable[int]) -> bytes:
    """A packed repeated varint field; nothing when empty."""
    payload = b"".join(varint(v) for v in values)
    return data(field, payload) if payload else b""
