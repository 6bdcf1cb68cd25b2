"""The bitmaps section (Android): heap.bitmaps() largest first, each with a
thumbnail embedded as a data: URI (the page's policy allows images from
data: only), and heap.duplicate_bitmaps(), the same pixels held twice."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Optional

from .._bitmaps import EMBED_MAX
from .._errors import UnsupportedError
from .._units import human_size
from .objects import ObjectTable

if TYPE_CHECKING:
    from .._bitmaps import Bitmap
    from .._heap import Heap

# A thumbnail is at most this many pixels on its longest side (and, as in a
# notebook, at most _bitmaps.EMBED_MAX bytes).
THUMB_SIDE = 96
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".webp": "image/webp"}


def thumbnail(bmp: Bitmap, side: int = THUMB_SIDE) -> tuple[Optional[str], Optional[str]]:
    """(data: URI of the bitmap's image scaled down to `side` pixels at most, None) or (None, why not)."""
    if not bmp.has_pixels:
        return None, bmp.no_pixels_reason
    try:
        data = bmp.embeddable(side)
    except (UnsupportedError, ValueError) as exc:
        return None, str(exc)
    if data is None:  # a compressed copy is embedded as it is, whatever its size
        return None, f"its {bmp.format or 'PNG'} image is too big to embed (over {human_size(EMBED_MAX)})"
    mime = _MIME.get(bmp.extension or "")
    if mime is None:
        return None, f"no image type for {bmp.extension}"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}", None


def bitmaps(heap: Heap, table: ObjectTable, *, shown: int, groups: int, members: int
            ) -> Optional[tuple[dict[str, Any], dict[str, str]]]:
    """The section's data and the thumbnails ({object row: data: URI}, kept
    apart from the strings the page cuts), or None for a heap without
    android.graphics.Bitmap.  items: [object row, width, height, config (or
    the compressed format), bytes, why there is no thumbnail or None], most
    bytes first."""
    if heap.find_class("android.graphics.Bitmap") is None:
        return None
    found = heap.bitmaps()
    ranked = sorted(found, key=lambda b: (-(b.byte_size or 0), b.object.id))
    items, thumbs = [], {}
    for bmp in ranked[:shown]:
        uri, why = thumbnail(bmp)
        row = table.row(bmp.object)
        items.append([row, bmp.width, bmp.height, bmp.config or bmp.format, bmp.byte_size, why])
        if uri is not None:
            thumbs[str(row)] = uri
    rest = ranked[shown:]
    duplicates = heap.duplicate_bitmaps(found)
    return {"count": len(found), "bytes": sum(b.byte_size or 0 for b in found),
            "with_pixels": sum(b.has_pixels for b in found), "items": items,
            "rest": {"bitmaps": len(rest), "bytes": sum(b.byte_size or 0 for b in rest)},
            "duplicates": [{"wasted": g.wasted_bytes, "count": len(g.bitmaps), "digest": g.digest,
                            "bitmaps": [table.row(b.object) for b in g.bitmaps[:members]]}
                           for g in duplicates[:groups]],
            "more_duplicates": max(len(duplicates) - groups, 0)}, thumbs
