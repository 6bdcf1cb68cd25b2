"""Command line: the heap explored as MAT, AHAT and jstack show it.

    python -m hprofkit threads FILE [-n N] [--json]          stacks as jstack prints them, with what each
                                                             frame holds and its retained size
    python -m hprofkit sites FILE [--depth N] [-n N] [--json]  allocation stacks as pprof --text prints them
    python -m hprofkit waste FILE [-n N] [--json]            duplicate strings, wasteful collections, large
                                                             primitive arrays (MAT's Java Basics and Java
                                                             Collections queries)

The views are hprofkit.Heap's threads(), allocation_sites(), duplicate_strings(),
collection_waste() and large_arrays() (docs/values.md)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Optional

from ._cli_args import (add_heap_input, add_json, add_rows, add_unreachable, byte_size, command, print_json, printable,
                        read_heap, whole_number)
from ._cli_show import ref
from ._units import human_size
from ._waste import KINDS

if TYPE_CHECKING:
    from ._heap import HeapObject
    from ._values import AllocationSite, Frame, Thread
    from ._waste import WasteKind


def _object(obj: HeapObject) -> dict[str, Any]:
    return {**ref(obj), "shallow_size": obj.shallow_size}


def _maybe(obj: Optional[HeapObject]) -> Optional[dict[str, Any]]:
    return None if obj is None else _object(obj)


def _retained(obj: HeapObject) -> dict[str, Any]:
    return {**_object(obj), "retained_size": obj.retained_size}


def _frame_json(frame: Frame) -> dict[str, Any]:
    return {"class": frame.class_name, "method": frame.method, "signature": frame.signature,
            "source": frame.source, "line": frame.line}


# ---- threads ---------------------------------------------------------------------------------

def _held(obj: HeapObject) -> str:
    return f"<0x{obj.id:x}> (a {obj.class_name}), retained {human_size(obj.retained_size)}"


def _thread_text(thread: Thread) -> str:
    name = f'"{thread.name}"' if thread.name is not None else "<no name>"
    lines = [f"{name} #{thread.serial}{' daemon' if thread.daemon else ''} "
             f"retained {human_size(thread.retained_size)}"
             + (f" <0x{thread.object.id:x}>" if thread.object is not None else " (no thread object)")]
    for frame in thread.frames:
        lines.append(f"\tat {frame}")
        lines += [f"\t- local {_held(obj)}" for obj in frame.locals]
    lines += [f"\t- held {_held(obj)}" for obj in thread.held]
    return "\n".join(lines)


def cmd_threads(args: argparse.Namespace) -> int:
    with read_heap(args) as heap:
        threads = heap.threads()[:args.top] if args.top else heap.threads()
        if args.json:
            print_json([{
                "serial": t.serial, "name": t.name, "daemon": t.daemon, "object": _maybe(t.object),
                "retained_size": t.retained_size,
                "frames": [{**_frame_json(f), "locals": [_retained(o) for o in f.locals]} for f in t.frames],
                "held": [_retained(o) for o in t.held]} for t in threads])
            return 0
        if not threads:
            print("the dump records no threads (no ROOT_THREAD_OBJECT)")
        print("\n\n".join(_thread_text(t) for t in threads))
    return 0


# ---- allocation sites ------------------------------------------------------------------------

def _stack(site: AllocationSite) -> str:
    return " < ".join(str(f) for f in site.frames) if site.frames else "(no stack trace)"


def cmd_sites(args: argparse.Namespace) -> int:
    with read_heap(args) as heap:
        sites = heap.allocation_sites(depth=args.depth)
        total = sum(s.bytes for s in sites) or 1
        shown = sites[:args.top]
        if args.json:
            print_json({"total_bytes": sum(s.bytes for s in sites), "buckets": len(sites), "sites": [
                {"frames": [_frame_json(f) for f in s.frames], "objects": s.objects, "bytes": s.bytes,
                 "cum_objects": s.cum_objects, "cum_bytes": s.cum_bytes} for s in shown]})
            return 0
        if len(sites) == 1 and not sites[0].frames:
            print("the dump records no allocation stacks (the hprof agent writes them; HotSpot's and ART's "
                  "dumps do not)")
        print(f"Showing {len(shown)} of {len(sites)} buckets, {human_size(sum(s.bytes for s in sites))} in "
              f"{sum(s.objects for s in sites):,} objects")
        print(f"{'flat':>11} {'flat%':>6} {'sum%':>6} {'cum':>11} {'cum%':>6}  stack (callers after <)")
        running = 0
        for site in shown:
            running += site.bytes
            print(f"{human_size(site.bytes):>11} {100 * site.bytes / total:5.1f}% {100 * running / total:5.1f}% "
                  f"{human_size(site.cum_bytes):>11} {100 * site.cum_bytes / total:5.1f}%  {_stack(site)}")
    return 0


# ---- waste -----------------------------------------------------------------------------------

# waste --json gives each String's first characters (duplicate strings, the String kinds' items), as many
# as this, and its full length: a dump may hold a 50 MB String many times.
JSON_TEXT_MAX = 1000


def _short(text: str, width: int = 60) -> str:
    text = printable(text)
    return text if len(text) <= width else text[:width - 1] + "…"


def _text_of(obj: HeapObject) -> Optional[str]:
    """A String's text (the String kinds' items show it), else None."""
    return obj.as_str() if obj.kind == "instance" and obj.class_name == "java.lang.String" else None


def _kind_json(kind: WasteKind, top: int, holders: int) -> dict[str, Any]:
    items = []
    for item in kind.top(top):
        row = {**_object(item.object), "wasted_bytes": item.wasted_bytes}
        text = _text_of(item.object)
        if text is not None:
            row.update(text=text[:JSON_TEXT_MAX], length=len(text))
        items.append(row)
    return {"kind": kind.kind, "objects": kind.objects, "wasted_bytes": kind.wasted_bytes, "items": items,
            "holders": [h._asdict() for h in kind.holders(holders)] if holders else []}


def _write_kind(out: Any, kind: WasteKind, top: int, holders: int) -> None:
    out.write(f"\n{kind.kind}: {kind.objects:,} objects, {human_size(kind.wasted_bytes)}\n")
    for item in kind.top(top):
        text = _text_of(item.object)
        shown = f' "{_short(text)}"' if text is not None else ""
        out.write(f"{human_size(item.wasted_bytes):>11}  {item.object.class_name} <0x{item.object.id:x}>{shown}\n")
    if holders and kind.objects:
        out.write("  held by:\n")
        for h in kind.holders(holders):
            out.write(f"{human_size(h.wasted_bytes):>11} {h.objects:>9,}  {h}\n")


def cmd_waste(args: argparse.Namespace) -> int:
    with read_heap(args) as heap:
        w = heap.waste(unreachable=args.unreachable)
        kinds = [w[args.kind]] if args.kind else [k for k in w if k.objects]
        strings = heap.duplicate_strings(min_count=args.min_count, unreachable=args.unreachable)
        collections = heap.collection_waste(unreachable=args.unreachable)
        arrays = heap.large_arrays(args.min_bytes, unreachable=args.unreachable)
        counted = "every object, unreachable ones too" if heap._members(args.unreachable) == "all" else \
            "reachable objects (--unreachable counts garbage too)"
        if args.json:
            print_json({
                "counted": "all" if heap._members(args.unreachable) == "all" else "reachable",
                "total_bytes": w.total_bytes,
                "duplicate_boxes": {"objects": w.duplicate_boxes, "wasted_bytes": w.duplicate_box_bytes},
                "kinds": [_kind_json(k, args.top, args.holders) for k in kinds],
                "duplicate_strings": [{"text": s.text[:JSON_TEXT_MAX], "length": len(s.text), "count": s.count,
                                       "wasted_bytes": s.wasted_bytes} for s in strings[:args.top]],
                "collections": [{"class": c.class_name, "class_id": c.class_.class_id, "instances": c.instances,
                                 "empty": c.empty, "mean_fill": c.mean_fill, "wasted_bytes": c.wasted_bytes,
                                 "corrupt": c.corrupt}
                                for c in collections[:args.top]],
                "large_arrays": [{**_object(a.array), "dominator": _maybe(a.dominator)} for a in arrays[:args.top]]})
            return 0
        out = sys.stdout
        out.write(f"Counting {counted}.\n\n{w}\n")
        if w.duplicate_boxes:
            out.write(f"(boxed_numbers: {w.duplicate_boxes:,} boxes equal to another, "
                      f"{human_size(w.duplicate_box_bytes)})\n")
        for kind in kinds:
            _write_kind(out, kind, args.top, args.holders)
        if args.kind:
            return 0
        out.write(f"\nDuplicate strings: {len(strings):,} texts held {args.min_count}+ times waste "
                  f"{human_size(sum(s.wasted_bytes for s in strings))}\n")
        for s in strings[:args.top]:
            out.write(f"{human_size(s.wasted_bytes):>11} {s.count:>8,} × \"{_short(s.text)}\"\n")
        out.write(f"\nCollections: {sum(c.instances for c in collections):,} in {len(collections)} classes waste "
                  f"{human_size(sum(c.wasted_bytes for c in collections))}\n")
        out.write(f"{'wasted':>11} {'instances':>9} {'empty':>7} {'fill':>5}  class\n")
        for c in collections[:args.top]:
            fill = f"{c.mean_fill:5.2f}" if c.mean_fill is not None else "    -"
            out.write(f"{human_size(c.wasted_bytes):>11} {c.instances:>9,} {c.empty:>7,} {fill}  {c.class_name}\n")
        out.write(f"\nPrimitive arrays of {human_size(args.min_bytes)} or more: {len(arrays):,}, "
                  f"{human_size(sum(a.bytes for a in arrays))}\n")
        for a in arrays[:args.top]:
            dominator = a.dominator
            held = f"held by {dominator.class_name} <0x{dominator.id:x}>" if dominator is not None else "a GC root"
            out.write(f"{human_size(a.bytes):>11}  {a.array.class_name} <0x{a.array.id:x}>, {held}\n")
    return 0


def add_commands(sub: Any) -> None:
    p = command(sub, "threads", cmd_threads, "threads' stacks as jstack prints them, with the objects each frame "
                "holds and their retained sizes", example="hprofkit threads app.hprof -n 5")
    add_heap_input(p)
    add_rows(p, default=None, help="threads to print, in the dump's order (default: all)")
    add_json(p, "a JSON list of threads")

    p = command(sub, "sites", cmd_sites, "objects and bytes by allocation stack, as pprof --text prints them "
                "(dumps written by the hprof agent)", example="hprofkit sites app.hprof --depth 4 -n 30")
    add_heap_input(p)
    p.add_argument("--depth", type=whole_number(1, what="a frame count"), default=None, metavar="N",
                   help="cut stacks to their N top frames (default: whole)")
    add_rows(p)
    add_json(p)

    p = command(sub, "waste", cmd_waste, "memory waste of every kind (JXRay's: duplicate and zero arrays, boxed "
                "numbers, empty/sparse collections, direct buffers...) with the fields holding it; duplicate "
                "strings, wasteful collections, large primitive arrays (MAT's Java Basics/Collections)",
                example="hprofkit waste app.hprof -n 10\nhprofkit waste app.hprof --kind zero_arrays --holders 20\n"
                        "hprofkit waste app.hprof --min-bytes 64KB --json")
    add_heap_input(p)
    add_rows(p, help="rows of each section (default 20)")
    p.add_argument("--kind", choices=KINDS, default=None, metavar="K",
                   help=f"only this kind of waste ({', '.join(KINDS)})")
    p.add_argument("--holders", type=whole_number(0, what="a count"), default=5, metavar="N",
                   help="fields holding each kind to show (default 5; 0: none)")
    p.add_argument("--min-count", type=whole_number(2, what="a count"), default=2, metavar="N",
                   help="texts held by N or more Strings (default 2)")
    p.add_argument("--min-bytes", type=byte_size, default=1 << 20, metavar="SIZE",
                   help="primitive arrays of SIZE or more ('64 KB', '1 MB'; default 1 MiB)")
    add_unreachable(p, "each section")
    add_json(p)
