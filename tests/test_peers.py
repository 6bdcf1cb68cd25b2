"""Tests that need a peer tool (hprof-conv, Java, the VisualVM oracle) ask
conftest.peer() for it: skipped where it is missing, failed when CI=true."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT


def test_a_missing_peer_fails_under_ci_and_is_skipped_elsewhere(tmp_path):
    test = tmp_path / "test_needs_java.py"
    test.write_text("from conftest import peer\n\n\ndef test_it():\n    peer('java')\n")
    for ci, outcome in (("true", "1 failed"), ("", "1 skipped")):
        env = {**os.environ, "PATH": str(tmp_path), "CI": ci, "PYTHONPATH": str(ROOT / "tests")}
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfs", str(test)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert outcome in proc.stdout, proc.stdout + proc.stderr
        assert ("peer tool java is missing, and CI=true" in proc.stdout) == (ci == "true")
