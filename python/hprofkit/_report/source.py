"""What a report is made from: the heap, and (when a file was given) the
dump's header and its class histogram from one pass of the C core.

A path is opened once: the Dump maps it (plain, gzip, bzip2), stats() reads
the histogram and the heap indexes the same mapping.  An hprofkit pack or a
Tailor mini is restored into a temporary file first (deleted as soon as it
is mapped).  A Heap given as it is has no file behind it that the report can
see: the overview then says what the heap itself knows, and the histogram is
counted from its classes."""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Optional

if TYPE_CHECKING:
    from .._hprof import Heap
    from .._stats import Stats


@dataclass
class FileInfo:
    """The dump's header and size, as the overview shows them."""
    name: str
    size: int                   # bytes on disk
    compression: Optional[str]  # 'gzip', 'bzip2', 'pack', 'tailor' or None
    magic: str
    id_size: int
    timestamp_ms: int
    heap_dump: int
    heap_dumps: int
    complete: bool


@dataclass
class Source:
    heap: Heap
    label: str                  # how the page names the dump
    stats: Optional[Stats]      # None for a Heap given as it is
    file: Optional[FileInfo]


def _heap_options(semantics: Optional[str]) -> dict[str, Any]:
    return {} if semantics is None else {"semantics": semantics}


@contextlib.contextmanager
def opened(source: Any, *, heap_dump: int = 0, semantics: Optional[str] = None) -> Iterator[Source]:
    """The Source of a Heap or of a dump's path; what it opened is closed on exit."""
    from .._heap import Heap
    if isinstance(source, Heap):
        if semantics is not None and semantics != source.semantics:
            raise ValueError(f"semantics={semantics!r}, but the heap given was opened with "
                             f"semantics={source.semantics!r}: open it with the one wanted")
        yield Source(source, repr(source), None, None)
        return
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"report() takes a Heap or a dump's path, not {type(source).__name__}")
    path = os.fspath(source)
    from .._heapfile import dump_kind
    if dump_kind(path) == "encoded":
        from .._files import decode
        from .._pack import is_pack
        with open(path, "rb") as f:
            kind = "pack" if is_pack(f.read(8)) else "tailor"
        with tempfile.TemporaryDirectory(prefix="hprofkit-report-") as tmp:
            restored = os.path.join(tmp, "restored.hprof")
            decode(path, restored, threads=1)
            with _dump_source(restored, os.path.basename(path), os.path.getsize(path), kind, heap_dump,
                              semantics) as opened_source:
                yield opened_source
        return
    with _dump_source(path, os.path.basename(path), os.path.getsize(path), None, heap_dump, semantics) as src:
        yield src


@contextlib.contextmanager
def _dump_source(path: str, name: str, size: int, encoded: Optional[str], heap_dump: int,
                 semantics: Optional[str]) -> Iterator[Source]:
    from .._dump import Dump
    with Dump(path) as dump:
        stats = dump.stats(heap_dump=heap_dump)
        heap = dump.heap(heap_dump=heap_dump, **_heap_options(semantics))
        info = FileInfo(name, size, encoded or dump.compression, dump.magic, dump.id_size, dump.timestamp,
                        stats.heap_dump if stats.heap_dump is not None else heap_dump, len(stats.heap_dumps),
                        stats.complete)
    try:
        yield Source(heap, name, stats, info)
    finally:
        heap.close()
