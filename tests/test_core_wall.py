"""The C core stays Python-free: no Python.h, no Py* calls under src/core."""

from __future__ import annotations

import re

from conftest import ROOT


def test_core_never_touches_python():
    offenders = []
    for path in sorted((ROOT / "src" / "core").glob("*.[ch]")):
        text = path.read_text()
        if "Python.h" in text or re.search(r"\bPy[A-Z_][A-Za-z_]*\s*\(", text):
            offenders.append(path.name)
    assert offenders == []
    assert len(list((ROOT / "src" / "core").glob("*.c"))) >= 5
