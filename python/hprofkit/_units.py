"""Byte counts as people read them, for the CLI and the Stats report."""

from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_size(n: float) -> str:
    """1536 -> '1.5 KiB': whole bytes below 1 KiB, binary units up to TiB."""
    unit = 0
    while abs(n) >= 1024 and unit < len(_UNITS) - 1:
        n /= 1024
        unit += 1
    return f"{n:,.0f} B" if unit == 0 else f"{n:,.1f} {_UNITS[unit]}"
