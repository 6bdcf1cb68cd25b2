"""Byte counts as people read them, for the CLI and the Stats report."""

from __future__ import annotations

import re

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_size(n: float) -> str:
    """1536 -> '1.5 KiB': whole bytes below 1 KiB, binary units up to TiB."""
    unit = 0
    while abs(n) >= 1024 and unit < len(_UNITS) - 1:
        n /= 1024
        unit += 1
    return f"{n:,.0f} B" if unit == 0 else f"{n:,.1f} {_UNITS[unit]}"


_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*")
_MULTIPLIERS = {"": 1, "B": 1}
for _power, _unit in enumerate(_UNITS[1:], start=1):
    _MULTIPLIERS[_unit.upper()] = _MULTIPLIERS[_unit[0] + "B"] = 1024 ** _power


def max_output_of(max_output: "str | int | None") -> int:
    """A restore's max_output= argument as the core takes it: 0 for None
    (the default limit), else a byte count of at least 1 (an int or '64 GiB')."""
    if max_output is None:
        return 0
    count = parse_size(max_output)
    if count < 1:
        raise ValueError(f"max_output must be a size of at least 1 byte or None, not {max_output!r}")
    return count


def parse_size(size: "str | int") -> int:
    """'2 MB' -> 2097152: a byte count written as people write it.

    Units are binary whatever their spelling (KB = KiB = 1024 B), as
    pytest-memray reads its limits and as human_size() writes, so that
    parse_size(human_size(n)) is n to the printed precision.  An int is
    taken as bytes."""
    if isinstance(size, int) and not isinstance(size, bool):
        if size < 0:
            raise ValueError(f"a size cannot be negative: {size}")
        return size
    if not isinstance(size, str):
        raise TypeError(f"a size is a str such as '2 MB' or an int, not {type(size).__name__}")
    match = _SIZE.fullmatch(size.replace(",", "").replace("_", ""))
    multiplier = _MULTIPLIERS.get(match.group(2).upper()) if match else None
    value = float(match.group(1)) * multiplier if match and multiplier else float("inf")
    if value == float("inf"):
        raise ValueError(f"not a size: {size!r} (write a number and a unit: '512 B', '64 KB', '2 MB', '1.5 GiB')")
    return round(value)
