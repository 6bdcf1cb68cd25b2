"""The heap graph: an indexed object model of one heap dump.

    heap = dump.heap()                      # or hprofkit.open_heap(path)
    activity = heap.find_class("android.app.Activity")
    for obj in activity.instances(subclasses=True):
        if obj["mDestroyed"]:
            print(obj, obj.referrers())

The index lives in C (hprofkit._hprof.Heap): objects in id order with their
file offsets and class ordinals, classes with resolved field layouts, GC
roots; values are read from the dump's mapping on demand.  Handles
(HeapObject, HeapClass) are light: a heap and an index."""

from __future__ import annotations

import html
import os
from typing import Any

from . import _hprof
from ._hprof import Field, GcRoot, Heap, HeapClass, HeapObject, Reference, Referrer, StackFrame

__all__ = ["Heap", "HeapObject", "HeapClass", "Reference", "Referrer", "Field", "GcRoot", "StackFrame",
           "open_heap", "SIZE_MODELS"]

SIZE_MODELS = ("visualvm", "uncompressed")


def open_heap(path: str | os.PathLike[str], *, heap_dump: int = 0, size_model: str = "visualvm") -> Heap:
    """Opens a dump (plain, .gz or .bz2) and indexes one of its heap dumps.

    The dump stays mapped while the Heap or any handle on it lives."""
    from ._dump import Dump
    dump = Dump(path)
    try:
        heap = _hprof.Heap(dump.buffer, heap_dump=heap_dump, size_model=size_model)
    finally:
        # The heap holds its own export of the mapping: closing the Dump now
        # leaves the mapping to it (unmapped when the heap goes).
        dump.close()
    return heap


def _cell(value: Any) -> str:
    return html.escape(f"{value:,}" if isinstance(value, int) else str(value))


def class_html(cls: HeapClass) -> str:
    """HeapClass._repr_html_: the class, its counts and its declared fields."""
    rows = "".join(f"<tr><td>{_cell(f.name)}</td><td>{_cell(f.type)}</td></tr>" for f in cls.fields)
    statics = cls.statics()
    static_rows = "".join(
        f"<tr><td>{_cell(f.name)}</td><td>{_cell(f.type)}</td><td>{_cell(repr(f.value))}</td></tr>" for f in statics)
    superclass = cls.superclass.name if cls.superclass is not None else "—"
    size = cls.instance_size
    return (f"<div><b>{_cell(cls.name)}</b> <code>@0x{cls.class_id:x}</code><br>"
            f"extends {_cell(superclass)}; {_cell(cls.instance_count)} instances"
            + (f" of {_cell(size)} B" if size is not None else "")
            + (f"<details open><summary>{len(cls.fields)} fields</summary><table><tr><th>name</th><th>type</th></tr>"
               f"{rows}</table></details>" if rows else "")
            + (f"<details><summary>{len(statics)} statics</summary><table><tr><th>name</th><th>type</th>"
               f"<th>value</th></tr>{static_rows}</table></details>" if static_rows else "")
            + "</div>")
