"""Command line: python -m hprofkit bitmaps FILE [--out-dir DIR] [--json] [-n N]

Lists the android.graphics.Bitmap objects of a dump (largest first) and the groups of
identical ones, and with --out-dir writes each bitmap the dump holds pixels of as an image:
DIR/bitmap-0x<id>.png (or .jpg, .webp: an Android 8+ dump's compressed copies as they are).
DIR must not exist: it is made whole or not at all (hprofkit._output.new_directory), so
nothing is ever replaced and the dump cannot be written over."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Optional

from ._cli_args import ROWS, add_heap_input, add_json, add_rows, command, read_heap
from ._output import new_directory
from ._units import human_size

if TYPE_CHECKING:
    from ._bitmaps import Bitmap, DuplicateBitmaps


def _file_name(bmp: Bitmap) -> str:
    return f"bitmap-0x{bmp.object.id:x}{bmp.extension}"


def _write_images(bitmaps: list[Bitmap], out_dir: str) -> dict[int, str]:
    """Writes the images into the new directory out_dir; {object id: file name}."""
    written: dict[int, str] = {}
    with new_directory(out_dir) as tmp:
        for bmp in bitmaps:
            if bmp.has_pixels:
                name = _file_name(bmp)
                with open(os.path.join(tmp, name), "xb") as f:
                    bmp.save(f)
                written[bmp.object.id] = name
    return written


def _ranked(bitmaps: list[Bitmap]) -> list[Bitmap]:
    """Largest pixel memory first (unknown sizes last), then by id."""
    return sorted(bitmaps, key=lambda b: (b.byte_size is None, -(b.byte_size or 0), b.object.id))


def _row(bmp: Bitmap, group: Optional[int], file: Optional[str]) -> dict[str, Any]:
    return {"id": bmp.object.id, "width": bmp.width, "height": bmp.height, "config": bmp.config,
            "format": bmp.format, "byte_size": bmp.byte_size, "premultiplied": bmp.premultiplied,
            "has_pixels": bmp.has_pixels, "no_pixels_reason": bmp.no_pixels_reason, "heap": bmp.object.heap_name,
            "duplicate_group": group, "file": file}


def _summary(bitmaps: list[Bitmap], groups: list[DuplicateBitmaps]) -> str:
    if not bitmaps:
        return "no android.graphics.Bitmap objects in this heap dump"
    with_pixels = [b for b in bitmaps if b.has_pixels]
    formats: dict[str, int] = {}
    for bmp in with_pixels:
        formats[bmp.format or "?"] = formats.get(bmp.format or "?", 0) + 1
    unknown = sum(b.byte_size is None for b in bitmaps)
    line = (f"{len(bitmaps):,} bitmap{'s' * (len(bitmaps) != 1)}, {len(with_pixels):,} with pixels"
            + "".join(f"{', ' if i else ': '}{name} {n:,}" for i, (name, n) in enumerate(sorted(formats.items())))
            + f"; {human_size(sum(b.byte_size or 0 for b in bitmaps))} of pixels"
            + (f" ({unknown:,} of unknown size)" if unknown else ""))
    wasted = sum(g.wasted_bytes or 0 for g in groups)
    return line + (f"\n{len(groups):,} group{'s' * (len(groups) != 1)} of identical bitmaps: "
                   f"{human_size(wasted)} wasted" if groups else "")


def _print_text(out: Any, bitmaps: list[Bitmap], shown: list[Bitmap], groups: list[DuplicateBitmaps],
                group_of: dict[int, int]) -> None:
    out.write(_summary(bitmaps, groups) + "\n")
    if bitmaps:
        out.write(f"\n{'memory':>10}  {'size':<11} {'format':<13} {'heap':<8} {'id':<12} dup\n")
    for bmp in shown:
        size = "?" if bmp.byte_size is None else human_size(bmp.byte_size)
        dims = "?" if bmp.width is None else f"{bmp.width}x{bmp.height}"
        number = group_of.get(bmp.object.id)
        line = (f"{size:>10}  {dims:<11} {bmp.format or 'no pixels':<13} {bmp.object.heap_name or '-':<8} "
                f"0x{bmp.object.id:<10x} {f'#{number}' if number else ''}")
        out.write(line.rstrip() + "\n")
    if len(shown) < len(bitmaps):
        out.write(f"  ... {len(bitmaps) - len(shown):,} more (-n to show them)\n")
    for number, group in enumerate(groups, 1):
        first = group.bitmaps[0]
        wasted = "? B" if group.wasted_bytes is None else human_size(group.wasted_bytes)
        out.write(f"\n#{number}: {len(group.bitmaps)} identical {first.width}x{first.height} {first.format}, "
                  f"{wasted} wasted: {' '.join(f'0x{b.object.id:x}' for b in group.bitmaps)}\n")


def cmd_bitmaps(args: argparse.Namespace) -> int:
    if args.out_dir and os.path.lexists(args.out_dir):  # before reading the dump: new_directory refuses it
        raise FileExistsError(f"{args.out_dir} exists: --out-dir names a new directory, nothing is replaced")
    with read_heap(args) as heap:  # open while the bitmaps' objects are read
        bitmaps = _ranked(heap.bitmaps())
        groups = heap.duplicate_bitmaps(bitmaps)
        written = _write_images(bitmaps, args.out_dir) if args.out_dir else {}
        group_of = {b.object.id: number for number, g in enumerate(groups, 1) for b in g.bitmaps}
        shown = bitmaps if args.json and args.top is None else bitmaps[:args.top or ROWS]
        if args.json:
            json.dump({"bitmaps": [_row(b, group_of.get(b.object.id), written.get(b.object.id)) for b in shown],
                       "count": len(bitmaps),
                       "duplicates": [{"group": number, "digest": g.digest, "wasted_bytes": g.wasted_bytes,
                                       "ids": [b.object.id for b in g.bitmaps]}
                                      for number, g in enumerate(groups, 1)],
                       "out_dir": args.out_dir, "written": len(written)},
                      sys.stdout, indent=1, ensure_ascii=False)
            sys.stdout.write("\n")
            return 0
        _print_text(sys.stdout, bitmaps, shown, groups, group_of)
    if args.out_dir:
        sys.stdout.write(f"\nwrote {len(written):,} image{'s' * (len(written) != 1)} to {args.out_dir}\n")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = command(sub, "bitmaps", cmd_bitmaps, "Android bitmaps: sizes, configs, duplicates, images",
                example="hprofkit bitmaps app.hprof -n 10\nhprofkit bitmaps app.hprof --out-dir bitmaps/ --json")
    add_heap_input(p)
    p.add_argument("--out-dir", metavar="DIR", default=None,
                   help="write each bitmap with pixels as DIR/bitmap-0x<id>.png (.jpg, .webp for an Android 8+ "
                        "dump's compressed copies); DIR must not exist")
    add_rows(p, default=None, help=f"bitmaps to list, largest first (default {ROWS}; JSON: all)")
    add_json(p)
