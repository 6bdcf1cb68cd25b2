"""Tests that need a peer tool (hprof-conv, Java, the VisualVM oracle) ask
conftest.peer() for it: skipped where it is missing, failed when CI=true."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import DATA, ROOT


def test_a_missing_peer_fails_under_ci_and_is_skipped_elsewhere(tmp_path):
    test = tmp_path / "test_needs_java.py"
    test.write_text("from conftest import peer\n\n\ndef test_it():\n    peer('java')\n")
    for ci, outcome in (("true", "1 failed"), ("", "1 skipped")):
        env = {**os.environ, "PATH": str(tmp_path), "CI": ci, "PYTHONPATH": str(ROOT / "tests")}
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfs", str(test)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert outcome in proc.stdout, proc.stdout + proc.stderr
        assert ("peer tool java is missing, and CI=true" in proc.stdout) == (ci == "true")


def test_the_oracles_server_answers_as_its_own_jvm_does(oracle_runner):
    """tests/visualvm.py runs the oracle's programs in one JVM (OracleServer.java): each answer
    must be what `java MAIN DUMP ARGS...` prints, run after others in that JVM, failures too."""
    dump = DATA / "hprof" / "mat__sun_jdk6_30_x64_compressedOops.hprof"
    for args in (["classes", "--no-retained"], ["roots", "--no-retained"], ["classes"], ["objects", "--sample", "50"]):
        alone = subprocess.run(oracle_runner.command("HeapGraphOracle", str(dump), *args),
                               capture_output=True, text=True, timeout=600)
        assert alone.returncode == 0 and alone.stdout.count("\n") > 20, alone.stderr
        assert oracle_runner._run("HeapGraphOracle", str(dump), *args) == (0, alone.stdout, alone.stderr)
    # output() takes objects without retained sizes from the run with them, that key dropped
    alone = oracle_runner._run("HeapGraphOracle", str(dump), "objects", "--no-retained")
    assert alone[0] == 0 and alone[1].count("\n") > 1000 and "retained" not in alone[1]
    assert oracle_runner.output("HeapGraphOracle", dump, "objects", "--no-retained") == alone[1]
    status, out, err = oracle_runner._run("HeapGraphOracle", str(dump.with_name("no such dump.hprof")), "classes")
    assert status == 1 and "IOException" in err and not out  # VisualVM's exception, and the server lives on
    assert oracle_runner._run("HeapOracle", str(dump))[0] == 0
