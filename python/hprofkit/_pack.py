"""hprofkit's compact format ("pack"), specified in docs/format.md and written
whole in the C core (src/core/hp_pack*.c, hp_packer.c, hp_unpacker.c):
modelling, container, CRC-32s, compression threads.  This module only turns
Python arguments (strip policies by name) into the core types'."""

from __future__ import annotations

from typing import Iterable

from . import _hprof
from ._types import PRIMITIVE_CODES

MAGIC = b"\x89HPK\r\n\x1a\n"
STREAMS = _hprof.PACK_STREAMS
DEFAULT_LEVEL = 6

STRIP_PRESETS = {"default": ("char", "byte"), "tailor": ("char", "byte"), "all": tuple(PRIMITIVE_CODES), "none": ()}


def is_pack(head: bytes) -> bool:
    """Whether `head` (the first bytes of a file) starts a pack; a head shorter
    than the magic answers whether it could."""
    head = bytes(head[:len(MAGIC)])
    return len(head) > 0 and MAGIC.startswith(head)


def strip_mask(strip: str | Iterable[str | int]) -> int:
    """The strip_types bit mask for a preset ("default", "tailor", "all",
    "none"), a comma-separated list of type names, or an iterable of names or codes."""
    if isinstance(strip, str):
        names: Iterable[str | int] = STRIP_PRESETS[strip] if strip in STRIP_PRESETS else \
            [s.strip() for s in strip.split(",") if s.strip()]
    else:
        names = strip
    mask = 0
    for name in names:
        # A bool is an int to isinstance, but no type code.
        code = name if isinstance(name, int) and not isinstance(name, bool) else \
            None if isinstance(name, bool) else PRIMITIVE_CODES.get(name)
        if code is None or not 4 <= code <= 11:
            raise ValueError(f"unknown primitive type {name!r}: choose from {', '.join(PRIMITIVE_CODES)} "
                             f"or a preset ({', '.join(STRIP_PRESETS)})")
        mask |= 1 << code
    return mask


def PackDecoder(*, threads: int = 1, max_block: int = 0, max_record: int = 0,
                max_output: int = 0) -> _hprof.PackDecoder:
    """Pack in, HPROF out: feed(data) -> bytes, flush() -> bytes (fd=N writes
    there instead).  threads inflate blocks in parallel; max_block (0: 64 MiB)
    bounds what one block may declare, max_record (0: 64 MiB) what is held of
    a heap record whose length comes at its end, max_output (0: the larger of
    4 GiB and 1,000 times the pack) what the restored dump may hold.  Raises
    TruncatedError, CorruptError or FormatError for a pack that is not whole
    and sound, RestoreLimitError for one that declares too much."""
    return _hprof.PackDecoder(threads=threads, max_block=max_block, max_record=max_record, max_output=max_output)
