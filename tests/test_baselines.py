"""The hprof_baseline fixture's files, through real pytest runs (pytester)
over the shared dumps: names that never collide, one class per line,
written only when changed and atomically, never through a link to a dump,
inputs that are not regular files refused at once, corrupt baselines as
one-line failures, format-1 files still read, and the run's account of its
baselines ("N baselines written, M updated, K unused")."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import threading
import xml.etree.ElementTree as ET

import pytest

import hprofkit
import hprofkit.testing

from conftest import dump_path
from test_cli_bad_inputs import feed_fifo
from test_diff import run_stable
from visualvm import LiveSet

pytest_plugins = ["pytester"]

# Small dumps with different histograms: a baseline read by the wrong test fails.
DUMPS = [dump_path(n) for n in ("mat__sun_jdk5_64bit.hprof", "mat__sun_jdk6_31_hprofagent_compressedOops.hprof",
                                "mat__oracle_jdk7_21_hprofagent.hprof")]
DUMP = DUMPS[0]


def baselines(pytester, module: str = "test_snap"):
    return pytester.path / "__hprof_baselines__" / module


def summary_line(result) -> str:
    """The run's account of its baselines, the line after its header."""
    lines = result.stdout.lines
    return lines[lines.index(next(x for x in lines if "- hprofkit baselines -" in x)) + 1]


def snapshot_module(pytester, tests: str = "test_a test_b") -> None:
    """test_snap.py: one baseline test per name given, each on its own dump, sized by
    VisualVM's model (its histogram is the oracle's; on the JDK 5 dump the default, the JVM's
    layout read off the addresses, is another)."""
    pytester.makepyfile(test_snap="\n".join(f"""
def {name}(hprof_heap, hprof_baseline):
    hprof_baseline.check(hprof_heap({str(DUMPS[i % len(DUMPS)])!r}, size_model="visualvm"))
""" for i, name in enumerate(tests.split())))


# -- names ----------------------------------------------------------------------------------

COLLIDING_IDS = ["x/y", "x_y", "a" * 200 + "1", "a" * 200 + "2", "Big", "big", "0.5", "é", "e"]


def test_distinct_tests_never_share_a_baseline(pytester):
    """#19: ids x/y and x_y, and two ids sharing their first 200 characters,
    had one file: the update wrote 2 files for 4 tests and the next run
    failed 2.  Tests of two classes with one method name shared one too, and
    ids differing in case share one on macOS and Windows."""
    pytester.makepyfile(test_snap=f"""
        import pytest

        DUMPS = {[str(d) for d in DUMPS]!r}
        IDS = {COLLIDING_IDS!r}

        @pytest.mark.parametrize("i", range(len(IDS)), ids=IDS)
        def test_snap(hprof_heap, hprof_baseline, i):
            hprof_baseline.check(hprof_heap(DUMPS[i % 2]))

        class TestOne:
            def test_same(self, hprof_heap, hprof_baseline):
                hprof_baseline.check(hprof_heap(DUMPS[0]), name="after")

        class TestTwo:
            def test_same(self, hprof_heap, hprof_baseline):
                hprof_baseline.check(hprof_heap(DUMPS[1]), name="after")
    """)
    tests = len(COLLIDING_IDS) + 2
    pytester.runpytest("--hprof-update-baselines").assert_outcomes(passed=tests)
    names = sorted(p.name for p in baselines(pytester).iterdir())
    assert len(names) == tests
    assert len({n.lower() for n in names}) == tests  # distinct on a file system that folds case
    # The documented rule: plain ids as they are; others readable, plus a hash of the exact id.
    assert {"test_snap[x_y].json", "test_snap[big].json", "test_snap[0.5].json", "test_snap[e].json"} <= set(names)
    digest = hashlib.sha256(json.dumps(["test_snap[x/y]", None]).encode()).hexdigest()[:12]
    assert f"test_snap[x_y]@{digest}.json" in names
    assert all(len(n) <= 100 + len(".json") for n in names)
    pytester.runpytest().assert_outcomes(passed=tests)


# -- the file -------------------------------------------------------------------------------

def test_one_class_a_line_written_only_when_changed(pytester, graph_oracle):
    """#22: one class per line (4 lines a class before), written only when
    its text changes, and the run's account of what it wrote: the reachable
    objects' classes (#31), as VisualVM's objects reached from the roots count them."""
    snapshot_module(pytester, "test_a")
    first = pytester.runpytest("--hprof-update-baselines")
    first.assert_outcomes(passed=1)
    assert summary_line(first) == "1 baseline written, 0 updated, 0 unused"
    path = baselines(pytester) / "test_a.json"
    text = path.read_text()
    stored = json.loads(text)
    with hprofkit.open_heap(DUMP) as heap:
        live = LiveSet(graph_oracle, DUMP, heap)
        expected = {name: list(v) for name, v in live.by_name(heap, live.live, run_stable).items()}
    assert stored["classes"] == expected and stored["test"] == "test_a" and stored["format"] == 3
    lines = text.splitlines()
    assert len(lines) == len(expected) + 8  # {, format, test, name, retained, "classes": {, }, }
    assert f'  "java.lang.String": {json.dumps(expected["java.lang.String"])},' in lines

    before = os.stat(path)
    again = pytester.runpytest("--hprof-update-baselines")
    assert summary_line(again) == "0 baselines written, 0 updated, 0 unused"
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)

    stored["classes"]["java.lang.String"][0] += 1
    path.write_text(json.dumps(stored))
    pytester.runpytest().assert_outcomes(failed=1)
    updated = pytester.runpytest("--hprof-update-baselines")
    assert summary_line(updated) == "0 baselines written, 1 updated, 0 unused"
    assert path.read_text() == text


def test_format_1_baselines_are_still_read(pytester):
    """Baselines main wrote (json.dump indent=1, format 1, under names that
    could collide, counting every object, garbage too) keep passing, and the
    update rewrites them in format 3 under their new names."""
    pytester.makepyfile(test_snap=f"""
        import pytest

        @pytest.mark.parametrize("dump", [{str(DUMP)!r}], ids=["Dumps/A"])
        def test_old(hprof_heap, hprof_baseline, dump):
            hprof_baseline.check(hprof_heap(dump))

        def test_plain(hprof_heap, hprof_baseline):
            hprof_baseline.check(hprof_heap({str(DUMP)!r}), name="after")
    """)
    pytester.runpytest("--hprof-update-baselines").assert_outcomes(passed=2)
    directory = baselines(pytester)
    with hprofkit.open_heap(DUMP) as heap:  # what hprofkit counted then: every object
        counted = hprofkit.testing.Baseline.summary(heap, unreachable=True)["classes"]
    for path in list(directory.iterdir()):  # as format 1 had them: name, layout and fields
        doc = json.loads(path.read_text())
        assert doc["classes"] != counted  # the dump holds garbage: the test tells the formats apart
        old = {"format": 1, "classes": counted, "retained": doc["retained"]}
        path.unlink()
        name = "test_old[Dumps_A].json" if doc["test"] != "test_plain" else "test_plain.after.json"
        with open(directory / name, "w") as f:
            json.dump(old, f, indent=1, sort_keys=True)
            f.write("\n")
    pytester.runpytest().assert_outcomes(passed=2)
    stale = directory / "test_old[Dumps_A].json"
    stale_doc = json.loads(stale.read_text())
    stale_doc["classes"]["java.lang.String"][0] += 1
    stale.write_text(json.dumps(stale_doc))
    failed = pytester.runpytest()
    failed.assert_outcomes(passed=1, failed=1)
    failed.stdout.fnmatch_lines(["*heap differs from its baseline in 1 class: java.lang.String*"])

    rewritten = pytester.runpytest("--hprof-update-baselines")
    assert summary_line(rewritten) == "1 baseline written, 1 updated, 1 unused (deleted)"
    names = sorted(p.name for p in directory.iterdir())
    assert len(names) == 2 and "test_plain.after.json" in names and names[0].startswith("test_old[Dumps_A]@")
    assert all(json.loads((directory / n).read_text())["format"] == 3 for n in names)


# -- writing ----------------------------------------------------------------------------------

def test_update_never_writes_through_a_link_to_a_dump(pytester):
    """#19: a baseline linked to the dump under test replaced the dump with
    JSON.  Links to what is not a baseline, hard links to the dump read and
    dangling links are refused, and so is a directory; a link to another
    baseline is written through."""
    dump, other = pytester.path / "app.hprof", pytester.path / "other.hprof"
    shutil.copy(DUMP, dump)
    shutil.copy(DUMPS[1], other)
    originals = {p: p.read_bytes() for p in (dump, other)}
    shared = pytester.path / "shared.json"
    shared.write_text('{"format": 2, "classes": {}, "retained": {}}\n')
    pytester.makepyfile(test_snap="".join(f"""
def {name}(hprof_heap, hprof_baseline):
    hprof_baseline.check(hprof_heap("app.hprof"))
""" for name in ("test_linked", "test_foreign", "test_hard", "test_dangling", "test_directory", "test_shared")))
    directory = baselines(pytester)
    directory.mkdir(parents=True)
    (directory / "test_linked.json").symlink_to(dump)
    (directory / "test_foreign.json").symlink_to(other)
    os.link(dump, directory / "test_hard.json")
    (directory / "test_dangling.json").symlink_to(pytester.path / "nowhere" / "baseline.json")
    (directory / "test_directory.json").mkdir()
    (directory / "test_shared.json").symlink_to(shared)

    # In a child: a dump truncated under its mapping would kill this process with SIGBUS.
    result = pytester.runpytest_subprocess("--hprof-update-baselines", "-rf", "-vv")
    result.assert_outcomes(passed=1, failed=5)
    assert {p: p.read_bytes() for p in originals} == originals
    result.stdout.fnmatch_lines_random([
        "FAILED test_snap.py::test_linked - heap baseline not written: *test_linked.json' is the input file*",
        f"FAILED test_snap.py::test_foreign - heap baseline not written: *test_foreign.json is a symlink to {other}, "
        "which is not a heap baseline*",
        "FAILED test_snap.py::test_hard - heap baseline not written: *test_hard.json' is the input file*",
        "FAILED test_snap.py::test_dangling - heap baseline not written: *test_dangling.json is a symlink to *, "
        "which does not exist*",
        "FAILED test_snap.py::test_directory - heap baseline not written: *test_directory.json is a directory, "
        "not a regular file: not replaced",
    ])
    assert (directory / "test_shared.json").is_symlink()
    assert json.loads(shared.read_text())["test"] == "test_shared"
    assert not (pytester.path / "nowhere").exists()


def test_update_replaces_the_file_atomically(pytester):
    """A baseline is written into a new file that takes the old one's name
    once complete (the old one was truncated in place: a killed run left half
    a baseline); no temporary file is left beside it."""
    snapshot_module(pytester, "test_a")
    directory = baselines(pytester)
    directory.mkdir(parents=True)
    path = directory / "test_a.json"
    path.write_text('{"format": 2, "classes": {}, "retained": {}}\n')
    os.chmod(path, 0o640)
    old = os.stat(path)
    pytester.runpytest("--hprof-update-baselines").assert_outcomes(passed=1)
    new = os.stat(path)
    assert new.st_ino != old.st_ino and stat.S_IMODE(new.st_mode) == 0o640
    assert json.loads(path.read_text())["classes"]
    assert [p.name for p in directory.iterdir()] == ["test_a.json"]


# -- reading what is not a baseline ---------------------------------------------------------

def test_a_fifo_baseline_is_refused_at_once(pytester):
    """#19: a baseline that is a FIFO hung pytest (open() waits for a
    writer).  Here a writer feeds it once a reader opens it, so that the old
    code ended too; the FIFO must be refused unread, in both modes."""
    snapshot_module(pytester, "test_a")
    directory = baselines(pytester)
    directory.mkdir(parents=True)
    fifo = directory / "test_a.json"
    os.mkfifo(fifo)
    done = threading.Event()
    feeder = threading.Thread(target=feed_fifo, args=(fifo, b'{"format": 2, "classes": {}, "retained": {}}', done),
                              daemon=True)
    feeder.start()
    try:
        result = pytester.runpytest("-rf", "-vv")
    finally:
        done.set()
        feeder.join(60)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_snap.py::test_a - heap baseline *test_a.json is unreadable: "
                                 "a FIFO, not a regular file"])

    # Updating: a reader holds the FIFO open, so a write would not block.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        result = pytester.runpytest("--hprof-update-baselines", "-rf", "-vv")
        assert os.read(reader, 1 << 16) == b""  # nothing was written into it
    finally:
        os.close(reader)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_snap.py::test_a - heap baseline not written: *test_a.json is a FIFO, "
                                 "not a regular file: not replaced"])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def like(text: str, pattern: str) -> bool:
    """fnmatch with only "*" special (baseline names hold brackets)."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), text, re.S) is not None


def corrupt_baselines(directory) -> dict[str, str]:
    """{kind: what the failure must say} for baselines test_b[kind].json made here."""
    good = '{"format": 2, "test": "x", "name": null, "retained": {}, "classes": {"java.lang.String": [1, 24]}}'
    contents = {
        "truncated": (good[:len(good) // 2], "not JSON: * at line 1, column *"),
        "list": ("[1, 2]", "a JSON array, not an object"),
        "missing": ('{"format": 2, "classes": {}}', '"retained" is missing, not an object'),
        "mistyped": ('{"format": 2, "classes": {"java.lang.String": "many"}, "retained": {}}',
                     'classes["java.lang.String"] is "many", not [instances, shallow bytes]'),
        "negative": ('{"format": 2, "classes": {}, "retained": {"a.B": -1}}', 'retained["a.B"] is -1, not a number*'),
        "newer": ('{"format": 4, "classes": {}, "retained": {}}', "format 4, written by a newer hprofkit: *"),
        "nested": ("[" * 100_000, "not JSON*"),
        "binary": (None, "not UTF-8 text (byte *"),
        "directory": (None, "is a directory"),
    }
    for kind, (text, _) in contents.items():
        path = directory / f"test_b[{kind}].json"
        if kind == "binary":
            path.write_bytes(DUMP.read_bytes()[:4096])
        elif kind == "directory":
            path.mkdir()
        else:
            path.write_text(text)
    return {kind: why for kind, (_, why) in contents.items()}


def test_corrupt_baselines_fail_in_one_line(pytester):
    """#19: truncated JSON, a list, missing keys, wrong types, a directory,
    binary: each a failure whose reason is one line, not a traceback through
    json and hprofkit."""
    directory = baselines(pytester)
    directory.mkdir(parents=True)
    expected = corrupt_baselines(directory)
    pytester.makepyfile(test_snap=f"""
        import pytest

        @pytest.mark.parametrize("kind", {sorted(expected)!r})
        def test_b(hprof_heap, hprof_baseline, kind):
            hprof_baseline.check(hprof_heap({str(DUMP)!r}))
    """)
    result = pytester.runpytest("--junitxml=junit.xml")
    result.assert_outcomes(failed=len(expected))
    cases = {case.get("name"): case.find("failure") for case in ET.parse(pytester.path / "junit.xml").iter("testcase")}
    for kind, why in expected.items():
        failure = cases[f"test_b[{kind}]"]
        message, text = failure.get("message"), failure.text
        assert message.startswith("heap baseline ") and " is unreadable: " in message, message
        assert like(message.split(" is unreadable: ", 1)[1], why), (kind, message)
        assert "\n" not in message
        # One frame, the test's own: nothing of hprofkit's or json's.
        assert text.count("\nE   ") == 1 and "Traceback" not in text, text
        assert "testing.py" not in text and "json" + os.sep not in text and "_baseline.py" not in text, text


# -- unused baselines -------------------------------------------------------------------------

def test_unused_baselines_are_told_and_deleted_only_after_a_complete_run(pytester):
    """#22: "N baselines written, M updated, K unused"; --hprof-update-baselines
    deletes the unused ones.  Only a module whose every test was selected,
    ran and passed can tell a baseline nobody uses from one its tests did not
    reach (syrupy's rule): -k, node ids, --lf and failures count and delete nothing."""
    snapshot_module(pytester, "test_a test_b test_c")
    for module, test in (("test_gone", "test_g"), ("test_other", "test_o")):
        pytester.makepyfile(**{module: f"""
            def {test}(hprof_heap, hprof_baseline):
                hprof_baseline.check(hprof_heap({str(DUMP)!r}))
        """})
    written = pytester.runpytest("--hprof-update-baselines")
    assert summary_line(written) == "5 baselines written, 0 updated, 0 unused"
    snapshot_module(pytester, "test_a test_b")  # test_c is gone, and test_gone.py
    (pytester.path / "test_gone.py").unlink()
    stale_c, stale_g = baselines(pytester) / "test_c.json", baselines(pytester, "test_gone") / "test_g.json"

    # -k: test_b, test_c, test_o and test_g not counted; a node id: test_other.py not even collected.
    for args, left in ((["-k", "test_a"], 4), (["test_snap.py::test_a"], 3)):
        partial = pytester.runpytest("--hprof-update-baselines", *args)
        partial.assert_outcomes(passed=1)
        assert summary_line(partial) == "0 baselines written, 0 updated, 0 unused"
        partial.stdout.fnmatch_lines([f"{left} more not used by this run, in modules that did not run completely*"])
    assert stale_c.exists() and stale_g.exists()

    b = baselines(pytester) / "test_b.json"
    good = b.read_text()
    b.write_text(good.replace('"java.lang.String": [', '"java.lang.String": [1'))
    failing = pytester.runpytest()
    failing.assert_outcomes(passed=2, failed=1)
    assert summary_line(failing) == "0 baselines written, 0 updated, 0 unused"
    # --lf reruns test_b alone; it reports test_other.py collected, and empty.
    rerun = pytester.runpytest("--lf", "--hprof-update-baselines")
    rerun.assert_outcomes(passed=1)
    assert summary_line(rerun) == "0 baselines written, 1 updated, 0 unused"
    assert b.read_text() == good and (baselines(pytester, "test_other") / "test_o.json").exists()

    one_file = pytester.runpytest("test_snap.py")  # test_snap complete; the directory was not asked for
    assert summary_line(one_file) == "0 baselines written, 0 updated, 1 unused"
    one_file.stdout.fnmatch_lines(["  unused: __hprof_baselines__/test_snap/test_c.json",
                                   "pytest --hprof-update-baselines deletes them", "1 more not used by this run*"])

    told = pytester.runpytest()
    assert summary_line(told) == "0 baselines written, 0 updated, 2 unused"
    told.stdout.fnmatch_lines_random(["  unused: __hprof_baselines__/test_snap/test_c.json",
                                      "  unused: __hprof_baselines__/test_gone/test_g.json"])
    assert stale_c.exists() and stale_g.exists()

    deleted = pytester.runpytest("--hprof-update-baselines")
    deleted.assert_outcomes(passed=3)
    assert summary_line(deleted) == "0 baselines written, 0 updated, 2 unused (deleted)"
    assert sorted(p.name for p in baselines(pytester).iterdir()) == ["test_a.json", "test_b.json"]
    assert not stale_g.parent.exists()
