"""What a file holds, told from its first bytes without reading it whole
(the pytest plugin picks the dumps of a directory with it).  Opening any of
them is hprofkit.open_heap's job: plain, gzip or bzip2 dumps are mapped,
hprofkit packs and Tailor minis restored first (see _dump.py)."""

from __future__ import annotations

import gzip
import os

from ._dump import _open_regular, encoded_kind

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
    return "encoded" if encoded_kind(head) else None
