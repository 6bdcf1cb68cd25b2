"""hprofkit in a subinterpreter (one sharing the main GIL, as the module
declares with Py_mod_multiple_interpreters): each interpreter gets its own
module, types, exceptions and state, so one can use it while the main
interpreter has it too, and the main one goes on after the other ends.  In a
child process, so that a crash fails this test instead of ending the run."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from conftest import dump_path

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

CHILD = r'''
import sys
import _testcapi
import hprofkit
dump = sys.argv[1]
main_count = hprofkit.stats(dump).instances
code = f"""
import hprofkit
count = hprofkit.stats({dump!r}).instances
with hprofkit.open_heap({dump!r}) as heap:
    names = sorted(c.name for c in heap.classes)[:3]
try:
    hprofkit.stats(b"JAVA PROFILE 1.0.2\\0" + bytes(4))
except hprofkit.HprofError as exc:
    error = type(exc).__name__
with open({sys.argv[2]!r}, "w") as f:
    f.write(repr((count, names, error)))
"""
assert _testcapi.run_in_subinterp(code) == 0
assert hprofkit.stats(dump).instances == main_count  # the main interpreter's module still works
print(main_count)
'''


def test_a_subinterpreter_imports_and_uses_hprofkit(tmp_path):
    dump = dump_path("mat__sun_jdk6_32bit.hprof")
    result = tmp_path / "result"
    proc = subprocess.run([sys.executable, "-c", CHILD, str(dump), str(result)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    count, names, error = ast.literal_eval(result.read_text())
    assert count == int(proc.stdout) > 0
    assert len(names) == 3 and error == "TruncatedError"
