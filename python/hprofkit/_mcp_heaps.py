"""The open heaps of `hprofkit mcp`: a small LRU keyed by (real path, mtime), and the --root
rule every path argument passes before anything is read.

Kept apart from _mcp.py so that it needs no SDK: the policy is plain Python."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ._heap import Heap

OPEN_HEAPS = 4  # heaps kept open between calls; the least recently used is closed beyond it


class PathRefused(ValueError):
    """A path argument outside --root, or not a readable file."""


class OpenHeaps:
    """Heaps by (realpath, mtime_ns): a dump rewritten in place opens anew.  `root` (None: any
    file the user can read) is resolved once; a path is resolved (symbolic links followed) and
    must lie under it, and the resolved path is what is opened."""

    def __init__(self, root: Optional[str] = None, size: int = OPEN_HEAPS) -> None:
        self.root = None if root is None else os.path.realpath(root)
        if self.root is not None and not os.path.isdir(self.root):
            raise PathRefused(f"--root {root!r} is not a directory")
        self.size = size
        self._heaps: OrderedDict[tuple[str, int], Heap] = OrderedDict()
        self._extras: dict[tuple[str, int], dict[str, Any]] = {}  # per heap: built once (the SQL tables)
        self._lock = threading.Lock()  # tools may run on worker threads

    def resolve(self, path: str) -> str:
        """path made real and checked against root; PathRefused otherwise (nothing is read)."""
        if not isinstance(path, str) or not path:
            raise PathRefused("path must name a dump file")
        real = os.path.realpath(os.path.expanduser(path))
        if self.root is not None and os.path.commonpath([self.root, real]) != self.root:
            raise PathRefused(f"{path!r} is outside the allowed root {self.root!r}")
        if not os.path.isfile(real):
            raise PathRefused(f"{path!r} is not a file")
        return real

    def _key(self, path: str) -> tuple[str, int]:
        real = self.resolve(path)
        return real, os.stat(real).st_mtime_ns

    def get(self, path: str) -> Heap:
        """The open heap of path, opened (and the oldest closed) when not already open."""
        from ._heap import open_heap
        key = self._key(path)
        with self._lock:  # one opener at a time: two calls on one new dump open it once
            heap = self._heaps.get(key)
            if heap is not None:
                self._heaps.move_to_end(key)
                return heap
            heap = open_heap(key[0])
            for stale in [k for k in self._heaps if k[0] == key[0]]:  # the dump as it was before a rewrite
                self._drop(stale)
            self._heaps[key] = heap
            while len(self._heaps) > self.size:
                self._drop(next(iter(self._heaps)))
            return heap

    def _drop(self, key: tuple[str, int]) -> None:
        self._extras.pop(key, None)
        self._heaps.pop(key).close()

    def extra(self, path: str, name: str, build: Any) -> Any:
        """What build(heap) gives for path's heap, built once while the heap stays open."""
        heap = self.get(path)
        key = self._key(path)
        with self._lock:
            cached = self._extras.setdefault(key, {})
            if name not in cached:
                cached[name] = build(heap)
            return cached[name]

    def close(self) -> None:
        with self._lock:
            for heap in self._heaps.values():
                heap.close()
            self._heaps.clear()
            self._extras.clear()
