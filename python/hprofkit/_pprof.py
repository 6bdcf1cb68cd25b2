"""A heap as a pprof profile (profile.proto, gzip'd), the format of Go's pprof,
Perfetto's UI, speedscope and Pyroscope.

    hprofkit.pprof("app.hprof", "heap.pb.gz")                 # the class tree as stacks
    hprofkit.pprof(heap, "sites.pb.gz", by="sites")          # allocation sites' stacks

by="class-tree": a sample per node of heap.class_tree(), its stack the classes
from the tree's root down to the node, leaf first as pprof orders locations
(a "function" per class; a class object is "C.class"), its values the node's
objects and their shallow bytes.  Each reachable object counts once, in its
own node, so pprof's cumulative figure of a stack prefix is the retained size
of the class tree node it names, and the total is every reachable byte.
by="sites": a sample per allocation_sites() stack (the STACK_TRACE frames the
object records name; a frame a function per method, its line), its values
the objects allocated there and their shallow bytes (pprof's flat and cum are
then allocation_sites()' own).

Sample types: objects/count and space/bytes (the default).  Written with the
standard library only (_protobuf.py), through hprofkit's one output path
(_output.output_file: atomic, never the input)."""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING, Any, Iterable, Optional

from . import _protobuf as pb

if TYPE_CHECKING:
    from ._classtree import ClassNode
    from ._heap import Heap

__all__ = ["pprof", "BY"]

BY = ("class-tree", "sites")


class _Profile:
    """The tables of a Profile message as they fill: strings, functions and
    locations numbered on first use, samples in order."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {"": 0}
        self.functions: dict[tuple[str, str, str], int] = {}
        self.locations: dict[tuple[int, int], int] = {}
        self.samples: list[bytes] = []
        self.objects = self.bytes = 0

    def string(self, text: Optional[str]) -> int:
        text = text or ""
        return self.strings.setdefault(text, len(self.strings))

    def location(self, name: str, system_name: str = "", filename: str = "", line: int = 0) -> int:
        """The location of one line of one function (made on first use)."""
        function = self.functions.setdefault((name, system_name, filename), len(self.functions) + 1)
        return self.locations.setdefault((function, line), len(self.locations) + 1)

    def sample(self, locations: Iterable[int], objects: int, nbytes: int) -> None:
        self.samples.append(pb.packed(1, locations) + pb.packed(2, (objects, nbytes)))
        self.objects += objects
        self.bytes += nbytes

    def encode(self) -> bytes:
        def value_type(kind: str, unit: str) -> bytes:
            return pb.integer(1, self.string(kind)) + pb.integer(2, self.string(unit))
        types = [value_type("objects", "count"), value_type("space", "bytes")]
        out = [pb.data(1, t) for t in types]
        out += [pb.data(2, s) for s in self.samples]
        for (function, line), number in self.locations.items():
            out.append(pb.data(4, pb.integer(1, number) + pb.data(4, pb.integer(1, function) + pb.integer(2, line))))
        for (name, system_name, filename), number in self.functions.items():
            out.append(pb.data(5, pb.integer(1, number) + pb.integer(2, self.string(name)) +
                               pb.integer(3, self.string(system_name)) + pb.integer(4, self.string(filename))))
        default = self.string("space")
        out += [pb.data(6, text.encode("utf-8", "backslashreplace")) for text in self.strings]
        out.append(pb.integer(14, default))
        return b"".join(out)


def _class_names(nodes: list[ClassNode]) -> dict[int, str]:
    """Each node's function name: its class name, or with the class's id when two
    classes of the dump share the name (two loaders), so that pprof keeps them apart."""
    ids: dict[str, set[int]] = {}
    for node in nodes:
        if node.class_ is not None:
            ids.setdefault(node.name, set()).add(node.class_.class_id)
    return {node.index: node.name if node.class_ is None or len(ids[node.name]) == 1
            else f"{node.name} @0x{node.class_.class_id:x}" for node in nodes}


def class_tree_profile(heap: Heap) -> _Profile:
    profile = _Profile()
    tree = heap.class_tree()
    names = _class_names(tree.nodes[1:])
    stacks: list[tuple[int, ...]] = [()]
    for node in tree.nodes[1:]:  # parents first: a node's stack is its own class above its parent's stack
        parent = node.parent.index if node.parent is not None else 0
        stacks.append((profile.location(names[node.index]),) + stacks[parent])
        profile.sample(stacks[-1], node.objects, node.shallow_size)
    return profile


def sites_profile(heap: Heap) -> _Profile:
    profile = _Profile()
    for site in heap.allocation_sites():
        frames = [profile.location(f"{f.class_name or '?'}.{f.method or '?'}", f.signature or "", f.source or "",
                                   f.line if f.line and f.line > 0 else 0) for f in site.frames]
        profile.sample(frames or [profile.location("<no stack trace>")], site.objects, site.bytes)
    return profile


def pprof(heap_or_path: Any, out: Any, *, by: str = "class-tree", **open_options: Any) -> dict[str, Any]:
    """Writes heap_or_path's profile (a Heap, or a dump opened with open_heap's
    `open_options` and closed after) to `out` (a path, "-" or a binary file) as a
    gzip'd profile.proto; by: "class-tree" or "sites" (module doc).  Returns what it
    wrote: {"by", "samples", "locations", "objects", "bytes" (the samples' totals),
    "size" (the file's bytes)}."""
    from ._heap import Heap, open_heap
    from ._output import check_not_same_file, output_file
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(map(repr, BY))}, not {by!r}")
    if isinstance(heap_or_path, Heap):
        heap, owned = heap_or_path, False
    else:
        check_not_same_file(heap_or_path, out)
        heap, owned = open_heap(heap_or_path, **open_options), True
    try:
        profile = class_tree_profile(heap) if by == "class-tree" else sites_profile(heap)
    finally:
        if owned:
            heap.close()
    payload = gzip.compress(profile.encode(), mtime=0)
    with output_file(out) as f:
        f.write(payload)
    return {"by": by, "samples": len(profile.samples), "locations": len(profile.locations),
            "objects": profile.objects, "bytes": profile.bytes, "size": len(payload)}
