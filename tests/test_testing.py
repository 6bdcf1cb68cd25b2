"""hprofkit.testing and its pytest plugin, run through pytest's own pytester
on suites written here: what should pass passes, what should fail fails with
its report in the output, baselines are written and compared, and
--hprof-check collects one item per dump.  Expected counts come from the
VisualVM oracle."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import hprofkit
from hprofkit._units import human_size, parse_size
from hprofkit.testing import (CheckSettings, HeapCheckFailed, assert_max_instances, assert_no_growth,
                              assert_roundtrip)
from hprofkit import match
from hprofkit.heapdiff import diff
from conftest import SHARED_TOOLS, dump_path
from leaky_heap import LeakyHeap
from test_diff import oracle_by_name, run_stable
from visualvm import LiveSet

pytest_plugins = ["pytester"]

LEAKCANARY = dump_path("leakcanary__leak_service_binder.hprof")
MINI = dump_path("../tailor/leak_service_binder.mini")
MAT_PAIR = (dump_path("mat__sun_jdk6_18_x64.hprof"), dump_path("mat__sun_jdk6_30_x64_compressedOops.hprof"))


def counts(oracle, path) -> dict[str, int]:
    """{class name: instances} of VisualVM's histogram."""
    return {name: n for name, (n, _) in oracle_by_name(oracle, path).items()}


# -- sizes --------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [("2 MB", 2 << 20), ("2MB", 2 << 20), ("1.5 GiB", 3 << 29),
                                            ("512", 512), (" 64 kb ", 65536), ("1,024 B", 1024), (7, 7)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "MB", "-1 MB", "2 XB", "nan MB", "1e400 B", "1e300 TB", -5])
def test_parse_size_refuses(bad):
    with pytest.raises(ValueError):
        parse_size(bad)


def test_parse_size_reads_human_size_back():
    for n in (0, 1023, 1536, 10 << 20, 3 << 30):
        assert abs(parse_size(human_size(n)) - n) <= n * 0.001


# -- the plugin, through pytester ------------------------------------------------------

def test_plugin_is_registered_and_imports_nothing(pytester):
    pytester.makepyfile("""
        import sys

        def test_untouched(request):
            assert request.config.pluginmanager.has_plugin("hprofkit")
            assert "hprofkit" not in sys.modules
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_max_instances_passes_and_fails_with_the_report(pytester, oracle):
    threads = counts(oracle, LEAKCANARY)["java.lang.Thread"]
    pytester.makepyfile(f"""
        from hprofkit.testing import assert_max_instances

        DUMP = {str(LEAKCANARY)!r}

        def test_within(hprof_heap):
            assert_max_instances(hprof_heap(DUMP), "java.lang.Thread", {threads}, subclasses=False)

        def test_over(hprof_heap):
            assert_max_instances(hprof_heap(DUMP), "java.lang.Thread", {threads - 1}, subclasses=False)

        def test_cached(hprof_heap):
            assert hprof_heap(DUMP) is hprof_heap(DUMP)
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        f"E * {threads} instances of java.lang.Thread, at most {threads - 1} allowed",
        "*- hprofkit -*",
        f"{threads} instances of java.lang.Thread; at most {threads - 1} allowed",
        f"*{threads}  java.lang.Thread",
        "first instances:",
        "*<Thread@0x*",
    ])


def test_hprof_heap_opens_gz_packs_and_minis(pytester, oracle, plain_path, tmp_path):
    pack = tmp_path / "leak.hpk"
    hprofkit.encode(LEAKCANARY, pack)
    gz = "mat__openjdk_jdk11_04_x64.hprof.gz"
    expected = {p: counts(oracle, q) for p, q in ((MINI, LEAKCANARY), (pack, LEAKCANARY),
                                                   (dump_path(gz), plain_path(gz)))}
    pytester.makepyfile(f"""
        import pytest
        from hprofkit.heapdiff import class_histogram

        EXPECTED = {{k: v for k, v in {[(str(k), v) for k, v in expected.items()]!r}}}

        @pytest.mark.parametrize("path", sorted(EXPECTED))
        def test_counts(hprof_heap, path):  # every object, as VisualVM counts them
            counts = {{name: n for name, (n, _) in class_histogram(hprof_heap(path), True).items()}}
            assert counts == EXPECTED[path]
    """)
    pytester.runpytest().assert_outcomes(passed=3)


def test_relative_paths_are_from_the_test_file(pytester, oracle):
    sub = pytester.mkpydir("suite")
    shutil.copy(dump_path("mat__sun_jdk5_64bit.hprof"), sub / "app.hprof")
    n = counts(oracle, dump_path("mat__sun_jdk5_64bit.hprof"))["java.lang.String"]
    (sub / "test_rel.py").write_text(textwrap.dedent(f"""
        from hprofkit.testing import assert_max_instances

        def test_rel(hprof_heap):
            assert_max_instances(hprof_heap("app.hprof"), "java.lang.String", {n})
    """))
    pytester.runpytest().assert_outcomes(passed=1)


def test_outside_pytest_the_message_holds_the_whole_report(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(textwrap.dedent(f"""
        import hprofkit
        from hprofkit.testing import HeapCheckFailed, assert_max_instances
        try:
            assert_max_instances({str(LEAKCANARY)!r}, "java.lang.Thread", 0, subclasses=False)
        except HeapCheckFailed as exc:
            assert not exc.sectioned and str(exc) == exc.summary + "\\n\\n" + exc.report, str(exc)
            print(exc)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert "instances of java.lang.Thread, at most 0 allowed" in out and "first instances:" in out


def junit_failures(path) -> dict[str, ET.Element]:
    """{test case name: its <failure>} of a JUnit XML file."""
    return {f"{case.get('classname')}::{case.get('name')}": case.find("failure")
            for case in ET.parse(path).iter("testcase") if case.find("failure") is not None}


def test_the_report_reaches_junit_xml_and_the_short_summary(pytester):
    """#22: CI shows JUnit XML, where only the one-line message arrived (no
    "GC Root" in it).  The report is in the failure's text, the message and
    the short summary are the one-line reason, and the assertions' frames are
    hidden: the failure points at the test's line."""
    dumps = pytester.mkdir("dumps")
    shutil.copy(LEAKCANARY, dumps / "leaky.hprof")
    pytester.makepyfile(test_app=f"""
        from hprofkit.testing import assert_no_leaks

        def test_leaks(hprof_heap):
            assert_no_leaks(hprof_heap({str(LEAKCANARY)!r}))
    """)
    summary = f"1 leak (1 distinct trace): {LEAKY_SERVICE}"
    result = pytester.runpytest(".", "--hprof-check", "dumps", "--junitxml=junit.xml", "-rf", "-vv")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random([f"FAILED test_app.py::test_leaks - {summary}",
                                        f"FAILED dumps/leaky.hprof::hprof-check - {summary}"])
    failures = junit_failures(pytester.path / "junit.xml")
    assert sorted(failures) == ["dumps.leaky.hprof::hprof-check", "test_app::test_leaks"]
    for failure in failures.values():
        assert failure.get("message") == summary
        for line in ("GC Root: Global variable in native code", "LeakyService$MyBinder.service",
                     f"{LEAKY_SERVICE} instance", "APPLICATION LEAK 1: 1 object"):
            assert line in failure.text, failure.text
    test_text = failures["test_app::test_leaks"].text
    assert "test_app.py:4: HeapCheckFailed" in test_text and "testing.py" not in test_text, test_text
    assert failures["dumps.leaky.hprof::hprof-check"].text.startswith(f"{dumps / 'leaky.hprof'}: {summary}\n")


def cyclic_dump(path) -> None:
    """LeakCanary's dump with one class made its superclass's superclass."""
    data = bytearray(LEAKCANARY.read_bytes())
    with hprofkit.open(LEAKCANARY) as dump:
        size = dump.id_size
        classes = {s.id: s for s in dump.subrecords() if s.name == "CLASS_DUMP"}
    child = next(c for c in classes.values() if c.super_id in classes and classes[c.super_id].super_id)
    at = classes[child.super_id].offset + 1 + size + 4  # tag, class id, stack serial: the superclass id
    data[at:at + size] = child.id.to_bytes(size, "big")
    path.write_bytes(data)


def test_hprof_check_bad_dumps_fail_in_one_line(pytester):
    """#19: a truncated dump, one whose superclasses form a cycle, and one
    without a heap dump each printed ~1,000 lines of pytest and pluggy
    traceback; each is now one line naming the dump and what is wrong."""
    dumps = pytester.mkdir("dumps")
    whole = LEAKCANARY.read_bytes()
    (dumps / "truncated.hprof").write_bytes(whole[:len(whole) // 2])
    cyclic_dump(dumps / "cyclic.hprof")
    shutil.copy(dump_path("py-hprof__basic_reads.hprof"), dumps / "heapless.hprof")
    shutil.copy(dump_path("platform_tools_base__dialer.android-hprof"), dumps / "good.hprof")
    result = pytester.runpytest("--hprof-check", "dumps", "--junitxml=junit.xml", "-rf", "-vv")
    result.assert_outcomes(passed=1, failed=3)
    reasons = {"truncated": "TruncatedError: truncated HEAP_DUMP_SEGMENT at offset *",
               "cyclic": "CorruptError: cyclic superclass chain in CLASS_DUMP at offset *",
               "heapless": "HprofError: the file holds no heap dump: nothing to check"}
    result.stdout.fnmatch_lines_random([f"FAILED dumps/{n}.hprof::hprof-check - {why}" for n, why in reasons.items()])
    failures = junit_failures(pytester.path / "junit.xml")
    assert len(failures) == 3
    for name, why in reasons.items():
        failure = failures[f"dumps.{name}.hprof::hprof-check"]
        assert failure.text.count("\n") == 0, failure.text
        assert failure.text == f"{dumps / name}.hprof: {failure.get('message')}"
        assert failure.get("message").startswith(why.split("*")[0])


def test_hprof_check_reads_the_config_of_the_project_holding_dir(pytester):
    """#22: run from a monorepo's root (rootdir there, by its pytest.ini),
    --hprof-check team/dumps ignored team/pyproject.toml: a library leak
    failed as an application leak and a budget was skipped.  Each DIR takes
    the nearest [tool.hprofkit] above it and says which; with none, a warning."""
    pytester.makeini("[pytest]\n")
    team, other = pytester.mkdir("team"), pytester.mkdir("other")
    for project in (team, other):
        (project / "dumps").mkdir()
        shutil.copy(LEAKCANARY, project / "dumps" / "leaky.hprof")
        shutil.copy(dump_path("platform_tools_base__dialer.android-hprof"), project / "dumps" / "dialer.hprof")
    (team / "pyproject.toml").write_text(textwrap.dedent(f"""
        [tool.hprofkit]
        exclude = [{{ instance_field = "{'.'.join(BINDER_FIELD)}", kind = "library" }}]
        max_instances = {{ "com.android.dialer.DialerApplication" = 0 }}
    """))
    (team / "dumps" / "pyproject.toml").write_text("[project]\nname = 'no-hprofkit-table'\n")  # passed over
    result = pytester.runpytest("--hprof-check", "team/dumps", "--hprof-check", "other/dumps", "-rf", "-vv")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines_random([
        f"hprofkit: --hprof-check {team / 'dumps'}: [tool.hprofkit] of {team / 'pyproject.toml'}",
        f"hprofkit: --hprof-check {other / 'dumps'}: no [tool.hprofkit] found: the default checks",
        "team/dumps/leaky.hprof::hprof-check PASSED*",
        "FAILED team/dumps/dialer.hprof::hprof-check - 1 instance of com.android.dialer.DialerApplication, "
        "at most 0 allowed",
        f"FAILED other/dumps/leaky.hprof::hprof-check - 1 leak (1 distinct trace): {LEAKY_SERVICE}",
        "other/dumps/dialer.hprof::hprof-check PASSED*",
        f"*PytestConfigWarning: --hprof-check {other / 'dumps'}: no [[]tool.hprofkit] in a pyproject.toml above *",
    ])


def test_under_pytest_the_report_goes_to_the_section():
    with hprofkit.open_heap(LEAKCANARY) as heap, pytest.raises(HeapCheckFailed) as info:
        assert_max_instances(heap, "java.lang.Thread", 0, subclasses=False)
    assert info.value.sectioned and str(info.value) == info.value.summary


# -- baselines ------------------------------------------------------------------------------

def test_baselines_missing_written_compared_and_masked(pytester, graph_oracle):
    dump = dump_path("mat__sun_jdk6_32bit.hprof")
    pytester.makepyfile(test_snap=f"""
        def test_snapshot(hprof_heap, hprof_baseline):
            hprof_baseline.check(hprof_heap({str(dump)!r}), mask=MASK)

        MASK = []
    """)
    first = pytester.runpytest()
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*no heap baseline*test_snapshot.json*", "*--hprof-update-baselines*"])

    written = pytester.runpytest("--hprof-update-baselines")
    written.assert_outcomes(passed=1)
    baseline = pytester.path / "__hprof_baselines__" / "test_snap" / "test_snapshot.json"
    stored = json.loads(baseline.read_text())
    with hprofkit.open_heap(dump) as heap:  # the reachable objects, as VisualVM's reached from the roots
        live = LiveSet(graph_oracle, dump, heap)
        by_name = {name: list(v) for name, v in live.by_name(heap, live.live, run_stable).items()}
    assert stored["classes"] == by_name

    pytester.runpytest().assert_outcomes(passed=1)

    stored["classes"]["java.lang.String"][0] -= 3
    baseline.write_text(json.dumps(stored))
    changed = pytester.runpytest()
    changed.assert_outcomes(failed=1)
    n = by_name["java.lang.String"][0]
    changed.stdout.fnmatch_lines(["*heap differs from its baseline in 1 class: java.lang.String*",
                                  "*- hprofkit -*", f"*{n - 3:,}*{n:,}*+3*java.lang.String"])

    pytester.makepyfile(test_snap=f"""
        def test_snapshot(hprof_heap, hprof_baseline):
            hprof_baseline.check(hprof_heap({str(dump)!r}), mask=MASK)

        MASK = ["java.lang.Str*"]
    """)
    pytester.runpytest().assert_outcomes(passed=1)


# -- dumps as test items --------------------------------------------------------------------

def test_hprof_check_collects_one_item_per_dump(pytester, oracle):
    dumps = pytester.mkdir("dumps")
    small, other = dump_path("mat__sun_jdk5_64bit.hprof"), dump_path("mat__sun_jdk6_30_x64_compressedOops.hprof")
    shutil.copy(small, dumps / "small.hprof")
    shutil.copy(other, dumps / "other.hprof")
    (dumps / "notes.txt").write_text("not a dump\n")
    n_small, n_other = counts(oracle, small)["java.lang.String"], counts(oracle, other)["java.lang.String"]
    assert n_small < n_other
    pytester.makepyprojecttoml(f"""
        [tool.hprofkit]
        leaks = false
        max_instances = {{ "java.lang.String" = {n_small} }}
    """)
    pytester.makepyfile("def test_regular():\n    pass\n")
    result = pytester.runpytest("--hprof-check", "dumps", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines_random(["dumps/other.hprof::hprof-check FAILED*",
                                        "dumps/small.hprof::hprof-check PASSED*"])
    result.stdout.fnmatch_lines([f"*other.hprof: {n_other:,} instances of java.lang.String, at most {n_small:,}*"])
    assert "notes.txt" not in result.stdout.str() and "test_regular" not in result.stdout.str()

    both = pytester.runpytest(".", "--hprof-check", "dumps")
    both.assert_outcomes(passed=2, failed=1)


def test_hprof_check_refuses_bad_settings(pytester):
    pytester.mkdir("dumps")
    pytester.makepyprojecttoml("""
        [tool.hprofkit]
        max_instance = { "x.Y" = 1 }
    """)
    result = pytester.runpytest("--hprof-check", "dumps")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown key 'max_instance'*"])


def test_check_settings_from_toml():
    settings = CheckSettings.from_toml({
        "defaults": "jdk", "fail_on_library": True,
        "exclude": [{"static_field": "com.example.Registry.sListeners", "kind": "library", "description": "d"},
                    {"thread_local": "worker-1"}],
        "retained_below": {"com.example.ImageCache": "2 MB"}})
    assert settings.exclude == match.JDK_DEFAULTS + (
        match.static_field("com.example.Registry", "sListeners", kind="library", description="d"),
        match.thread_local("worker-1"))
    assert settings.leaks and settings.fail_on_library and settings.retained_below == {"com.example.ImageCache": "2 MB"}
    for bad in ({"defaults": "ios"}, {"exclude": [{"static_field": "NoDot"}]}, {"exclude": ["x"]},
                {"exclude": [{"static_field": "a.B.c", "thread_local": "t"}]}, {"max_instances": {"a.B": -1}},
                {"retained_below": {"a.B": "lots"}}):
        with pytest.raises(ValueError):
            CheckSettings.from_toml(bad)


@pytest.mark.parametrize("key, value, says", [
    ("leaks", "no", "leaks = 'no': write true or false"),  # bool("no") turned the check on (#30)
    ("fail_on_library", 1, "fail_on_library = 1: write true or false"),
    ("exclude", "a.B.c", "exclude = 'a.B.c': write a list of tables"),
    ("max_instances", [1], "max_instances = [1]: write a table of class = count"),
    ("retained_below", "2 MB", "retained_below = '2 MB': write a table of class = size"),
])
def test_check_settings_of_the_wrong_type_are_refused(key, value, says):
    with pytest.raises(ValueError) as info:
        CheckSettings.from_toml({key: value})
    assert str(info.value) == f"[tool.hprofkit] {says}"


def test_hprof_check_fails_a_mapping_that_never_ends_at_once(pytester):
    """#30: mapping = "/dev/zero" was read whole (23.8 GB resident); it fails the dump's item
    with the MappingError's one line."""
    dumps = pytester.mkdir("dumps")
    shutil.copy(dump_path("mat__sun_jdk5_64bit.hprof"), dumps / "small.hprof")
    pytester.makepyprojecttoml("""
        [tool.hprofkit]
        leaks = false
        mapping = "/dev/zero"
    """)
    result = pytester.runpytest("--hprof-check", "dumps", "-rf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*small.hprof: MappingError: not a mapping: /dev/zero is a character device, "
                                 "not a regular file", "FAILED dumps/small.hprof::hprof-check - MappingError*"])


def test_hprof_check_collects_a_dump_once_through_a_symlink_loop(pytester):
    """#30: a symlink loop inside DIR (dumps/loop -> dumps) showed each dump 41 times; a dump
    is one item however many paths lead to it."""
    dumps = pytester.mkdir("dumps")
    shutil.copy(dump_path("mat__sun_jdk5_64bit.hprof"), dumps / "small.hprof")
    (dumps / "loop").symlink_to(dumps, target_is_directory=True)
    (dumps / "again.hprof").symlink_to(dumps / "small.hprof")
    pytester.makepyprojecttoml("""
        [tool.hprofkit]
        leaks = false
    """)
    result = pytester.runpytest("--hprof-check", "dumps", "-v")
    result.assert_outcomes(passed=1)


# -- growth and round trips -----------------------------------------------------------------

def test_no_growth_fails_on_a_grown_class(oracle):
    a, b = MAT_PAIR
    before, after = counts(oracle, a)["java.net.URL"], counts(oracle, b)["java.net.URL"]
    assert after > before * 1.05
    with pytest.raises(HeapCheckFailed) as info:
        assert_no_growth(a, b, classes=["java.net.*"], allow="5%")
    assert f"java.net.URL {before:,} -> {after:,} instances" in info.value.summary
    assert "java.net.URL" in info.value.report
    assert_no_growth(a, b, classes=["java.net.*"], allow=after - before)
    assert_no_growth(a, b, classes="java.net.URL", allow="100 KB")
    with pytest.raises(ValueError):
        assert_no_growth(a, b, allow="five%")


@pytest.mark.parametrize("name", ["leakcanary__leak_service_binder.hprof", "mat__openjdk_jdk11_04_x64.hprof.gz"])
def test_roundtrip_holds(name):
    assert_roundtrip(dump_path(name), keep_all=True)
    assert_roundtrip(dump_path(name))


def test_roundtrip_tailor():
    assert_roundtrip(LEAKCANARY, format="tailor")
    with pytest.raises(ValueError):
        assert_roundtrip(LEAKCANARY, format="tailor", keep_all=True)


def test_roundtrip_through_a_format_that_cannot_carry_the_dump_fails(tmp_path):
    """#22: Tailor's format holds only Android dumps with 4-byte ids: a dump
    it cannot carry is a failed assertion saying so, not UnsupportedError
    from deep inside the encoder."""
    wide = tmp_path / "ids8.hprof"  # a 64-bit HotSpot dump labelled 1.0.3: refused for its 8-byte ids
    data = dump_path("mat__sun_jdk5_64bit.hprof").read_bytes()
    assert data.startswith(b"JAVA PROFILE 1.0.1\0")
    wide.write_bytes(data.replace(b"1.0.1", b"1.0.3", 1))
    for path, reason in ((wide, "Tailor's mini format holds only 4-byte identifiers, not 8"),
                         (dump_path("mat__sun_jdk5_64bit.hprof"), "Tailor's mini format holds only 'JAVA PROFILE 1.0.3'")):
        with pytest.raises(HeapCheckFailed) as info:
            assert_roundtrip(path, format="tailor")
        assert info.value.summary.startswith(f"{path} through format='tailor': the format cannot carry this dump: "
                                             f"{reason}")
        assert info.value.__context__ is None  # raised on its own, not while handling the encoder's error


# -- leaks (LeakCanary's own test dump: its ServiceBinderLeak test expects
#    LeakyService held through LeakyService$MyBinder.service from a native global) --

LEAKY_SERVICE = "com.example.leakcanary.LeakyService"
BINDER_FIELD = ("com.example.leakcanary.LeakyService$MyBinder", "service")


def test_no_leaks_fails_on_leakcanarys_dump_with_the_trace(pytester):
    pytester.makepyfile(f"""
        from hprofkit import match
        from hprofkit.testing import assert_no_leaks

        DUMP = {str(LEAKCANARY)!r}
        MINI = {str(MINI)!r}
        AS_LIBRARY = match.ANDROID_DEFAULTS + (
            match.instance_field(*{BINDER_FIELD!r}, kind="library", description="the binder outlives the service"),)

        def test_leaks(hprof_heap):
            assert_no_leaks(hprof_heap(DUMP))

        def test_leaks_in_the_mini(hprof_heap):
            assert_no_leaks(hprof_heap(MINI))

        def test_library_leak_passes(hprof_heap):
            assert_no_leaks(hprof_heap(DUMP), exclude=AS_LIBRARY)

        def test_library_leak_fails_when_asked(hprof_heap):
            assert_no_leaks(hprof_heap(DUMP), exclude=AS_LIBRARY, fail_on_library=True)
    """)
    result = pytester.runpytest("-rP")
    result.assert_outcomes(passed=1, failed=3)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        f"E * 1 leak (1 distinct trace): {LEAKY_SERVICE}",
        "*- hprofkit -*",
        "1 application leak, 0 library leaks",
        "APPLICATION LEAK 1: 1 object, retaining *, fingerprint *",
        "*GC Root: Global variable in native code*",
        "*LeakyService$MyBinder.service*",
        f"*{LEAKY_SERVICE} instance*",
    ])
    # The passing test's library leak is reported, not failed.
    passed = out[out.index("_ test_library_leak_passes _"):]
    assert "1 library leak (library leaks do not fail" in passed and "LIBRARY LEAK 1" in passed
    assert "Description: the binder outlives the service" in passed


def test_no_leaks_when_the_reference_is_ignored():
    from hprofkit.testing import assert_no_leaks
    ignore = match.ANDROID_DEFAULTS + (match.instance_field(*BINDER_FIELD),)
    assert_no_leaks(LEAKCANARY, exclude=ignore)
    with pytest.raises(HeapCheckFailed, match=LEAKY_SERVICE.replace(".", r"\.")):
        assert_no_leaks(LEAKCANARY)


def test_hprof_check_runs_the_leak_check_by_default(pytester):
    dumps = pytester.mkdir("dumps")
    shutil.copy(LEAKCANARY, dumps / "leaky.hprof")
    shutil.copy(dump_path("platform_tools_base__dialer.android-hprof"), dumps / "dialer.hprof")
    result = pytester.runpytest("--hprof-check", "dumps", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines_random(["dumps/leaky.hprof::hprof-check FAILED*",
                                        "dumps/dialer.hprof::hprof-check PASSED*",
                                        f"*leaky.hprof: 1 leak (1 distinct trace): {LEAKY_SERVICE}"])
    pytester.makepyprojecttoml(f"""
        [tool.hprofkit]
        exclude = [{{ instance_field = "{'.'.join(BINDER_FIELD)}", kind = "library" }}]
    """)
    pytester.runpytest("--hprof-check", "dumps").assert_outcomes(passed=2)


# -- growth along reference paths, on dumps whose growth is known by construction ------------

def growth_dump(path, listeners: int, nodes: int) -> None:
    """Registry.sListeners: an Object[] of `listeners` Listeners; Other.sKept:
    three more, in every dump; Chain.sHead: a list of `nodes` Nodes."""
    heap = LeakyHeap()
    heap.cls("com.example.Listener")
    heap.cls("com.example.Node", fields=[("next", "object")])
    heap.cls("com.example.Registry", statics={"sListeners": ("object", None)})
    heap.cls("com.example.Other", statics={"sKept": ("object", None)})
    heap.cls("com.example.Chain", statics={"sHead": ("object", None)})
    heap.set_static("com.example.Registry", "sListeners", "object",
                    heap.array([heap.new("com.example.Listener") for _ in range(listeners)]))
    heap.set_static("com.example.Other", "sKept", "object",
                    heap.array([heap.new("com.example.Listener") for _ in range(3)]))
    head = None
    for _ in range(nodes):
        head = heap.new("com.example.Node", next=head)
    heap.set_static("com.example.Chain", "sHead", "object", head)
    heap.write(path)


def test_growth_paths_name_where_objects_were_added(tmp_path):
    a, b = tmp_path / "a.hprof", tmp_path / "b.hprof"
    growth_dump(a, listeners=2, nodes=2)
    growth_dump(b, listeners=5, nodes=4)
    result = diff(a, b, paths=True)
    assert {r.name: (r.count_a, r.count_b) for r in result.rows if r.count_delta} == {
        "com.example.Listener": (5, 8), "com.example.Node": (2, 4)}
    listeners = [p for p in result.paths if p.name == "com.example.Listener"]
    assert [(p.count_a, p.count_b) for p in listeners] == [(2, 5)]
    assert listeners[0].path == ("ROOT STICKY_CLASS -> class com.example.Registry",
                                 "STATIC_FIELD com.example.Registry.sListeners -> java.lang.Object[]",
                                 "ARRAY_ENTRY java.lang.Object[].[x] -> com.example.Listener")
    # The list grew: past its head, its Nodes hang on one path (the repeated
    # Node.next hop named once): 1 Node there before, 3 after.
    nodes = [p for p in result.paths if p.name == "com.example.Node"]
    assert [(p.count_a, p.count_b) for p in nodes] == [(1, 3)]
    assert nodes[0].path == ("ROOT STICKY_CLASS -> class com.example.Chain",
                             "STATIC_FIELD com.example.Chain.sHead -> com.example.Node",
                             "INSTANCE_FIELD com.example.Node.next -> com.example.Node")
    with pytest.raises(HeapCheckFailed) as info:
        assert_no_growth(a, b, classes=["com.example.Listener"], allow=2)
    assert "com.example.Listener 5 -> 8 instances" in info.value.summary
    assert "+3 com.example.Listener (2 -> 5) along:" in info.value.report
    assert "STATIC_FIELD com.example.Registry.sListeners -> java.lang.Object[]" in info.value.report
    assert_no_growth(a, b, classes=["com.example.Listener"], allow=3)


# -- retained sizes (VisualVM's, from the oracle, under semantics="visualvm") -----------------

def oracle_retained(oracle, path, name: str) -> tuple[int, int]:
    """(instances, retained bytes) of class `name` in VisualVM's histogram."""
    rows = [v for k, v in oracle.retained_by_class(path).items() if k.rsplit("@", 1)[0] == name]
    return sum(r[0] for r in rows), sum(r[1] for r in rows)


def oracle_object_retained(heap, name: str) -> list[int]:
    """VisualVM's retained size of each instance of `name` (graph.sh object ID...)."""
    ids = [hex(obj.id) for obj in heap.find_class(name).instances()]
    proc = subprocess.run(["bash", str(SHARED_TOOLS / "oracle" / "graph.sh"), str(LEAKCANARY), "object", *ids],
                          capture_output=True, text=True, timeout=900, check=True)
    return [json.loads(line)["retained"] for line in proc.stdout.splitlines() if line.strip()]


def test_retained_below_follows_visualvms_retained_sizes(oracle):
    from hprofkit.testing import assert_retained_below
    count, retained = oracle_retained(oracle, LEAKCANARY, "android.graphics.Bitmap")
    with hprofkit.open_heap(LEAKCANARY, semantics="visualvm") as heap:
        each = sorted(oracle_object_retained(heap, "android.graphics.Bitmap"), reverse=True)
        assert_retained_below(heap, "android.graphics.Bitmap", retained + 1)
        with pytest.raises(HeapCheckFailed) as info:
            assert_retained_below(heap, "android.graphics.Bitmap", retained)
        assert f"android.graphics.Bitmap retains {human_size(retained)} ({retained:,} B)" in info.value.report
        assert f"its {count} instances, largest first:" in info.value.report
        assert "what keeps <Bitmap@0x" in info.value.report
        assert len(each) == count
        assert_retained_below(heap, "android.graphics.Bitmap", each[0] + 1, per_instance=True)
        with pytest.raises(HeapCheckFailed) as info:
            assert_retained_below(heap, "android.graphics.Bitmap", "1 B", per_instance=True)
        over = sum(1 for r in each if r >= 1)
        assert info.value.summary == (f"android.graphics.Bitmap: {over} instances over 1 B, the largest retains "
                                      f"{human_size(each[0])}")
    with pytest.raises(ValueError):
        assert_retained_below(LEAKCANARY, "android.graphics.Bitmap", "2 parsecs")


def test_baseline_holds_retained_sizes(pytester, oracle):
    _, retained = oracle_retained(oracle, LEAKCANARY, "android.graphics.Bitmap")
    pytester.makepyfile(test_snap=f"""
        def test_snapshot(hprof_heap, hprof_baseline):
            heap = hprof_heap({str(LEAKCANARY)!r}, semantics="visualvm")
            hprof_baseline.check(heap, retained=["android.graphics.Bitmap"], name="after")
    """)
    pytester.runpytest("--hprof-update-baselines").assert_outcomes(passed=1)
    path = pytester.path / "__hprof_baselines__" / "test_snap" / "test_snapshot.after.json"
    stored = json.loads(path.read_text())
    assert stored["retained"] == {"android.graphics.Bitmap": retained}
    stored["retained"]["android.graphics.Bitmap"] -= 100
    path.write_text(json.dumps(stored))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*heap differs from its baseline in 1 class: android.graphics.Bitmap*"])


def test_growth_paths_count_every_object(tmp_path):
    """#31: the growth paths counted each class's first 20,000 objects and printed the
    sample's counts as counts (Listener 20,000 -> 30,000 would read 20,000 -> 20,000, and no
    growth); every object is counted now, and the counts over all paths are the class's."""
    from hprofkit.heapdiff import _path_counts
    a, b = tmp_path / "a.hprof", tmp_path / "b.hprof"
    growth_dump(a, listeners=20_000, nodes=1)
    growth_dump(b, listeners=30_000, nodes=1)
    result = diff(a, b, paths=True)
    listeners = [p for p in result.paths if p.name == "com.example.Listener"]
    assert [(p.count_a, p.count_b) for p in listeners] == [(20_000, 30_000)] and not result.paths_sampled
    (row,) = [r for r in result.rows if r.name == "com.example.Listener"]
    with hprofkit.open_heap(b) as heap:
        counts, sampled = _path_counts(heap, "com.example.Listener", None)
    assert not sampled and sum(counts.values()) == row.count_b == 30_003
    assert "(sampled)" not in str(result)
