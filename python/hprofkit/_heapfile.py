"""Opening any file hprofkit reads as a Heap: plain, gzip or bzip2 dumps
(mapped by open_heap), hprofkit packs and Tailor minis (restored first).

A restored dump goes to a temporary file that is unlinked as soon as the
heap has mapped it: the mapping keeps the pages, nothing is left behind."""

from __future__ import annotations

import gzip
import os
import tempfile
from typing import Any

from ._codec import TAILOR_MAGIC, sniff
from ._dump import _open_regular
from ._files import decode
from ._heap import Heap, open_heap
from ._pack import is_pack

HPROF_MAGIC = b"JAVA PROFILE 1.0"
_HEAD = 32


def dump_kind(path: str | os.PathLike[str]) -> str | None:
    """What a file holds, from its first bytes: 'hprof' (plain, gzip or bzip2
    HPROF), 'encoded' (an hprofkit pack or a Tailor mini: zlib, gzip or bare),
    or None (neither).  FormatError at once for what is not a regular file (a
    FIFO would wait for a writer)."""
    with _open_regular(os.fspath(path)) as f:
        head = f.read(_HEAD)
        if head.startswith(b"\x1f\x8b"):
            f.seek(0)
            try:
                with gzip.GzipFile(fileobj=f) as inner:
                    head = inner.read(_HEAD)
            except (OSError, EOFError):
                return "hprof"  # open_heap names the damage
            return "hprof" if head.startswith(HPROF_MAGIC) else "encoded"
    if head.startswith(HPROF_MAGIC) or head.startswith(b"BZh"):
        return "hprof"
    if len(head) >= 8 and is_pack(head[:8]):
        return "encoded"
    if head.startswith(TAILOR_MAGIC) or (len(head) >= 2 and sniff(head[:2]) == "zlib"):
        return "encoded"
    return None


def open_any(path: str | os.PathLike[str], **options: Any) -> Heap:
    """The Heap of a dump, a pack or a Tailor mini (options as open_heap)."""
    if dump_kind(path) != "encoded":
        return open_heap(path, **options)  # raises FormatError for what is no dump
    with tempfile.TemporaryDirectory(prefix="hprofkit-") as tmp:
        restored = os.path.join(tmp, "restored.hprof")
        decode(path, restored, threads=1)
        return open_heap(restored, **options)
