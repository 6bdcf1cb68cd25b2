"""What the report reads off the dominator tree: the top-level dominators
(children of the tree's root, largest first) and MAT's accumulation points.

Both come from heap.top_retainers(), the objects ranked by retained size:
an object's children in the dominator tree all rank below it, and a child
holding at least a share of its parent ranks among the objects holding at
least that much.  So a walk down the tree only reads the top of the ranking,
fetched in growing slices (Ranking)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .._heap import Heap, HeapObject

# MAT's accumulation point: the walk goes to the biggest dominated child
# while that child keeps at least this share of its parent.
BIG_DROP_RATIO = 0.7
# Steps a walk takes at most (a linked list is one step per node).
MAX_STEPS = 10_000
# The ranking is read in slices from this many objects, 4 times more each
# time, up to the last size.
_FIRST, _GROWTH, _MOST = 256, 4, 1 << 20


class Ranking:
    """heap.top_retainers(), read as far as needed, with each ranked object's
    dominator (the id, None for a top-level one)."""

    def __init__(self, heap: Heap) -> None:
        self.heap = heap
        self.ranked: list[tuple[HeapObject, int]] = []
        self.complete = False
        self.capped = False  # stopped at _MOST objects with more to rank
        self._dominators: list[Optional[int]] = []
        self._children: dict[int, tuple[HeapObject, int]] = {}  # biggest child ranked so far, by parent id

    def _more(self) -> bool:
        """Reads the next slice; False when the ranking is whole (or at its cap)."""
        if self.complete:
            return False
        ask = max(_FIRST, len(self.ranked) * _GROWTH)
        ranked = self.heap.top_retainers(min(ask, _MOST))
        self.complete = len(ranked) < ask or ask >= _MOST or (bool(ranked) and ranked[-1][1] == 0)
        self.capped = ask >= _MOST and len(ranked) == ask and ranked[-1][1] > 0
        for obj, size in ranked[len(self.ranked):]:
            dominator = self.heap.dominator(obj)
            parent = None if dominator is None else dominator.id
            self._dominators.append(parent)
            if parent is not None and parent not in self._children:
                self._children[parent] = (obj, size)  # ranked largest first: the first seen is the biggest
        self.ranked = ranked
        return True

    def down_to(self, size: int) -> None:
        """Reads on until every object retaining at least `size` bytes is ranked."""
        while (not self.ranked or self.ranked[-1][1] >= size) and self._more():
            pass

    def top_level(self, n: int) -> list[tuple[HeapObject, int]]:
        """The n top-level dominators retaining the most (and something)."""
        found: list[tuple[HeapObject, int]] = []
        start = 0
        while True:
            for (obj, size), parent in zip(self.ranked[start:], self._dominators[start:]):
                if parent is None and size > 0:
                    found.append((obj, size))
                    if len(found) == n:
                        return found
            start = len(self.ranked)
            if not self._more():
                return found

    def biggest_child(self, obj: HeapObject, size: int, share: float) -> Optional[tuple[HeapObject, int]]:
        """obj's dominated child retaining the most, if it keeps at least
        `share` of obj's `size`."""
        self.down_to(int(size * share))
        child = self._children.get(obj.id)
        return child if child is not None and child[1] >= size * share else None

    def covers(self, size: float) -> bool:
        """Whether every object retaining at least `size` bytes is ranked."""
        return not self.capped or self.ranked[-1][1] < size


def accumulation_chain(ranking: Ranking, obj: HeapObject, size: int) -> tuple[list[tuple[HeapObject, int]], bool]:
    """MAT's walk from a suspect to its accumulation point: [(object,
    retained)], the suspect first, each the biggest child of the one before
    while it keeps BIG_DROP_RATIO of it; and whether the walk stopped at
    MAX_STEPS (or at the end of the ranking read) before its end."""
    chain = [(obj, size)]
    while len(chain) <= MAX_STEPS:
        child = ranking.biggest_child(*chain[-1], BIG_DROP_RATIO)
        if child is None:
            return chain, not ranking.covers(chain[-1][1] * BIG_DROP_RATIO)
        chain.append(child)
    return chain, True
