"""Read-only sequences whose items are made when read (hprofkit.Hops,
hprofkit.GcRoots, hprofkit.leaks.TraceNodes): what a heap holds millions of
costs nothing until it is read.  A subclass gives __len__ and _item(k) for
0 <= k < len; indexing, slices, iteration and equality come from here."""

from __future__ import annotations

import operator
from typing import Iterator, Sequence, TypeVar, overload

T = TypeVar("T")


class SequenceView(Sequence[T]):
    """A sequence made when read; equal to any sequence of equal items."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def _item(self, k: int) -> T:
        raise NotImplementedError

    def _items(self, start: int, stop: int) -> list[T]:
        """Items start..stop (a run: subclasses make it in one call)."""
        return [self._item(k) for k in range(start, stop)]

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step == 1:
                return self._items(start, max(start, stop))
            return [self._item(k) for k in range(start, stop, step)]
        k = operator.index(i)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._item(k)

    def __iter__(self) -> Iterator[T]:
        n, chunk = len(self), 4096
        for start in range(0, n, chunk):
            yield from self._items(start, min(n, start + chunk))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        n = len(self)
        shown = ", ".join(repr(item) for item in self[:3])
        return f"{type(self).__name__}([{shown}{', ...' if n > 3 else ''}])  # {n:,} items"
