"""What a report is made from: the heap, and (when a file was given) the
dump's header and its class histogram from one pass of the C core.

A path is opened once: the Dump maps it (packs, minis and BMDs restored
first), stats() reads the histogram in a thread while the heap indexes the
same mapping.  A Heap given as it is has no file behind it that the report
can see: the overview then says what the heap itself knows, and the
histogram is counted from its classes."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Optional, Union

if TYPE_CHECKING:
    from .._dump import Dump
    from .._heap import ClassCount, Heap
    from .._stats import Stats


@dataclass
class FileInfo:
    """The dump's header and size, as the overview shows them."""
    name: str
    size: int                   # bytes on disk
    compression: Optional[str]  # as Dump.compression: 'gzip', 'bzip2', 'pack', 'tailor, gzip'... or None
    magic: str
    id_size: int
    timestamp_ms: int


class Source:
    """The heap, how the page names it, which objects its figures count
    (members: 'live', the reachable ones, or 'all'; Heap._members), and for
    a file its Stats and FileInfo (None for a Heap given as it is).  The
    stats may still be on their way (counted in a thread while the heap is
    indexed and its dominators computed): reading them waits."""

    def __init__(self, heap: Heap, label: str, stats: Union[Stats, _Background, None] = None,
                 file: Optional[FileInfo] = None, members: str = "live") -> None:
        self.heap, self.label, self.file, self.members = heap, label, file, members
        self._stats = stats
        self._histogram: Optional[list[ClassCount]] = None
        self._heap_names: Optional[list[str]] = None

    def histogram(self) -> list[ClassCount]:
        """heap.histogram() of the objects the report counts, counted once."""
        if self._histogram is None:
            self._histogram = self.heap.histogram(unreachable=self.members == "all")
        return self._histogram

    def heap_names(self) -> list[str]:
        """The Android heaps the histogram's rows split their objects over, in the rows'
        order (none on a dump of one heap), found once."""
        if self._heap_names is None:
            names: list[str] = []
            for row in self.histogram():
                names.extend(n for n in row.per_heap if n not in names)
            self._heap_names = names
        return self._heap_names

    @property
    def stats(self) -> Optional[Stats]:
        if isinstance(self._stats, _Background):
            self._stats = self._stats.result()
        return self._stats


class _Cancelled(Exception):
    pass


CANCEL_WAIT = 0.1  # seconds


class _Background:
    """dump.stats() in a thread.  It runs in C without the GIL, beside the
    heap's index and dominator tree (most of a report's time), so the
    histogram comes almost free.  cancel() stops it at its next slice."""

    def __init__(self, dump: Dump, heap_dump: int) -> None:
        self._cancelled = threading.Event()
        self._value: Optional[Stats] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, args=(dump, heap_dump), name="hprofkit-report-stats",
                                        daemon=True)
        self._thread.start()

    def _check(self, done: int, total: int) -> None:
        if self._cancelled.is_set():
            raise _Cancelled()

    def _run(self, dump: Dump, heap_dump: int) -> None:
        try:
            self._value = dump.stats(self._check, heap_dump=heap_dump)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def result(self) -> Stats:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value

    def cancel(self) -> None:
        """Stops the pass at its next slice, waiting for it CANCEL_WAIT at most: after
        the pass, the rows of a million classes take seconds to sort, which Ctrl-C must
        not wait for (the daemon thread ends by itself; the dump's mapping stays with it)."""
        self._cancelled.set()
        self._thread.join(CANCEL_WAIT)


def _heap_options(semantics: Optional[str]) -> dict[str, Any]:
    return {} if semantics is None else {"semantics": semantics}


@contextlib.contextmanager
def opened(source: Any, *, heap_dump: int = 0, semantics: Optional[str] = None, mapping: Any = None,
           max_output: "int | str | None" = None, unreachable: Optional[bool] = None) -> Iterator[Source]:
    """The Source of a Heap, of a dump's path (any format the Dump opens:
    plain, gzip, bzip2, hprofkit pack, Tailor mini, Badoo BMD) or of a binary
    file (standard input), a dump read through `mapping` (None: none; a Heap
    keeps its own names); what it opened is closed on exit.  unreachable: as
    the heap's analyses take it (None: the semantics' default)."""
    from .._heap import Heap
    if isinstance(source, Heap):
        if semantics is not None and semantics != source.semantics:
            raise ValueError(f"semantics={semantics!r}, but the heap given was opened with "
                             f"semantics={source.semantics!r}: open it with the one wanted")
        yield Source(source, repr(source), None, None, source._members(unreachable))
        return
    if isinstance(source, (str, os.PathLike)):
        name, size = os.path.basename(os.fspath(source)), os.path.getsize(source)
    elif hasattr(source, "read"):
        given = getattr(source, "name", None)
        name, size = (given if isinstance(given, str) and not given.startswith("<") else "<stdin>"), None
    else:
        raise TypeError(f"report() takes a Heap, a dump's path or a binary file, not {type(source).__name__}")
    from .._dump import Dump
    with Dump(source, max_output=max_output) as dump:
        stats = _Background(dump, heap_dump)
        try:
            heap = dump.heap(heap_dump=heap_dump, mapping=mapping, **_heap_options(semantics))
            try:
                yield Source(heap, name, stats, FileInfo(name, dump.size if size is None else size, dump.compression,
                                                         dump.magic, dump.id_size, dump.timestamp),
                             heap._members(unreachable))
            finally:
                heap.close()
        finally:
            stats.cancel()  # a no-op once it is done; on an error, it is asked to stop, not waited for
