"""Class names that stay the same from one run of a program to the next.

The JVM names hidden classes with their address (JDK 17:
``java.lang.invoke.LambdaForm$DMH+0x00007f5e5c100800``; JDK 21+: ``.../0x...``)
and lambda classes with a counter as well (``HeapGen$$Lambda$244+0x00007f44...``,
``HeapGen$$Lambda/0x...``): two runs of one program name them differently, and
a diff would show every one as gone and new.  ``stable_name`` drops both: the
host class and ``$$Lambda`` stay, so the lambdas of one host are matched (and
counted) together, as are one hidden class's copies.  diff, leak fingerprints
and baselines compare classes by it; where one class is shown, the dump's own
name is."""

from __future__ import annotations

import re

_ADDRESS = re.compile(r"[+/]0x[0-9a-fA-F]+$")
_COUNTER = re.compile(r"\$\$Lambda\$\d+")


def stable_name(name: str) -> str:
    """``HeapGen$$Lambda$244+0x00007f44…`` -> ``HeapGen$$Lambda``; other names unchanged."""
    if "0x" not in name and "$$Lambda$" not in name:
        return name
    return _COUNTER.sub("$$Lambda", _ADDRESS.sub("", name))
