"""python -m hprofkit mcp driven by the MCP SDK's own client over stdio: every tool on real dumps,
its figures against the heap API (and sums over every object), --root refusals, a corrupt dump
as a tool error, bounded answers; the OpenHeaps cache directly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import hprofkit
from hprofkit import _mcp
from hprofkit._mcp_heaps import OpenHeaps, PathRefused
from conftest import dump_path

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

JDK8 = dump_path("mat__oracle_jdk8_05_x64.hprof")
JDK7 = dump_path("mat__oracle_jdk7_21_x64.hprof")
LEAKY = dump_path("leakcanary__leak_service_binder.hprof")
TOOLS = {"open", "overview", "histogram", "top_retainers", "dominator_children", "object", "path_to_root", "leaks",
         "waste", "diff", "sql"}


def serve(calls: list[tuple[str, dict[str, Any]]], *args: str) -> tuple[set[str], list[Any]]:
    """Starts `python -m hprofkit mcp ARGS`, lists its tools and makes `calls` in one session:
    the tool names and each call's result (a CallToolResult)."""
    env = {name: os.environ[name] for name in ("PYTHONPATH", "HPROFKIT_TEST_INSTALLED") if name in os.environ}
    params = StdioServerParameters(command=sys.executable, args=["-m", "hprofkit", "mcp", *args], env=env)

    async def session() -> tuple[set[str], list[Any]]:
        with open(os.devnull, "w") as errlog:  # the server logs each failed call on stderr
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    return names, [await client.call_tool(name, arguments) for name, arguments in calls]
    return anyio.run(session)


def answers(calls: list[tuple[str, dict[str, Any]]], *args: str) -> list[dict[str, Any]]:
    """Each call's JSON answer; a tool error fails the test."""
    _, results = serve(calls, *args)
    for (name, _), result in zip(calls, results):
        assert not result.is_error, (name, result.content)
    return [json.loads(result.content[0].text) for result in results]


def ids(rows: list[dict[str, Any]]) -> list[int]:
    return [int(row["id"], 16) for row in rows]


def test_every_tool_answers_as_the_heap_api():
    with hprofkit.open_heap(JDK8) as heap:
        top = heap.top_retainers(5)
        holder = top[0][0]
        strings = [o for o in heap.objects() if o.class_name == "java.lang.String" and o.as_str()]
        string = next(o for o in strings if heap.path_to_root(o) is not None)
        garbage_string = next(o for o in strings if heap.path_to_root(o) is None)
        p = str(JDK8)
        calls = [("open", {"path": p}), ("overview", {"path": p, "limit": 3}),
                 ("histogram", {"path": p, "limit": 7}), ("histogram", {"path": p, "unreachable": True}),
                 ("top_retainers", {"path": p, "limit": 5}), ("dominator_children", {"path": p}),
                 ("dominator_children", {"path": p, "object_id": hex(holder.id)}),
                 ("object", {"path": p, "object_id": hex(holder.id), "limit": 500}),
                 ("object", {"path": p, "object_id": str(string.id)}),
                 ("path_to_root", {"path": p, "object_id": hex(string.id)}),
                 ("path_to_root", {"path": p, "object_id": hex(garbage_string.id)}),
                 ("waste", {"path": p, "min_array_bytes": 1024}), ("diff", {"path": str(JDK7), "other_path": p}),
                 ("sql", {"path": p, "query": "select count(*) as n, sum(shallow_size) as bytes from objects"})]
        names, _ = serve([])
        assert names == TOOLS
        (opened, overview, hist, garbage, retainers, roots, dominated, obj, text, path, no_path, waste,
         diff, sql) = answers(calls)

        assert opened["objects"] == heap.object_count and opened["classes"] == heap.class_count
        assert opened["path"] == os.path.realpath(JDK8)
        # reachable and unreachable bytes split every instance's and array's shallow size between them
        every = sum(o.shallow_size for o in heap.objects() if o.kind != "class")
        assert overview["reachable_bytes"] + overview["unreachable_bytes"] == every
        assert overview["reachable_bytes"] == sum(r.shallow_size for r in heap.histogram())
        assert overview["unreachable_bytes"] == sum(r.shallow_size for r in heap.unreachable_histogram())
        assert ids(overview["top_retainers"]["rows"]) == [o.id for o, _ in top[:3]]

        expected = heap.histogram()
        assert [(r["class"], r["instances"], r["shallow_size"]) for r in hist["rows"]] == \
            [(r.name, r.instances, r.shallow_size) for r in expected[:7]]
        assert hist["total"] == len(expected) and hist["left_out"] == len(expected) - 7
        assert garbage["total"] == len(heap.unreachable_histogram())

        assert [(int(r["id"], 16), r["retained_size"]) for r in retainers["rows"]] == [(o.id, n) for o, n in top]
        assert ids(roots["rows"]) == [o.id for o in heap.dominator_roots(20)]
        assert roots["total"] == len(heap.dominator_roots())
        assert ids(dominated["rows"]) == [o.id for o in holder.dominated(20)]
        assert dominated["total"] == len(holder.dominated())
        # every child's dominator is the object asked about
        assert all(heap.dominator(heap.object(i)) == holder for i in ids(dominated["rows"]))

        assert obj["class"] == holder.class_name and obj["retained_size"] == holder.retained_size
        assert [f["name"] for f in obj["fields"]["rows"]] == [f.name for f in holder.fields()]
        assert obj["references"]["total"] == holder.reference_count
        assert obj["referrers"]["total"] == holder.referrer_count
        assert {r["target"]["id"] for r in obj["references"]["rows"] if isinstance(r["target"], dict)} == \
            {hex(r.target.id) for r in holder.references() if r.target is not None}
        assert text["string"] == {"text": string.as_str(), "length": len(string.as_str()), "cut": False}

        hops = heap.path_to_root(string).hops
        assert path["found"] and path["rows"][-1]["target"]["id"] == hex(string.id)
        assert [h["ref_type"] for h in path["rows"]] == [h.ref_type for h in hops]
        assert path["rows"][0]["ref_type"] == "ROOT"
        assert no_path == {"found": False, "reason": None}

        assert waste["duplicate_strings"]["total"] == len(heap.duplicate_strings())
        assert waste["collection_waste"]["total"] == len(heap.collection_waste())
        assert waste["large_arrays"]["total"] == len(heap.large_arrays(1024))
        assert all(a["bytes"] >= 1024 for a in waste["large_arrays"]["rows"])

        changes = {r.name: r for r in hprofkit.diff(str(JDK7), str(JDK8)).rows}
        assert diff["total"] == len(changes)
        for row in diff["rows"]:
            assert (row["count_delta"], row["bytes_delta"]) == (changes[row["class"]].count_delta,
                                                                changes[row["class"]].shallow_delta)
        assert [abs(r["bytes_delta"]) for r in diff["rows"]] == sorted((abs(r["bytes_delta"]) for r in diff["rows"]),
                                                                       reverse=True)
        assert sql["rows"] == [{"n": heap.object_count, "bytes": sum(o.shallow_size for o in heap.objects())}]


def test_leaks_as_find_leaks():
    with hprofkit.open_heap(LEAKY) as heap:
        found = heap.find_leaks()
        (leaks,) = answers([("leaks", {"path": str(LEAKY)})])
        assert found and leaks["total"] == len(found)
        assert ids([row["object"] for row in leaks["rows"]]) == [leak.object.id for leak in found[:20]]
        assert [row["retained_size"] for row in leaks["rows"]] == [leak.retained_size for leak in found[:20]]


def test_answers_are_bounded():
    p = str(JDK8)
    hist, capped, long_text = answers([
        ("histogram", {"path": p, "limit": 3}), ("histogram", {"path": p, "limit": 10 ** 9}),
        ("sql", {"path": p, "query": "select repeat('x', 5000) as s from range(1000)", "limit": 2})])
    with hprofkit.open_heap(JDK8) as heap:
        classes = len(heap.histogram())
    assert len(hist["rows"]) == 3 and hist["left_out"] == classes - 3
    assert classes > _mcp.MAX_LIMIT or len(capped["rows"]) == classes
    assert len(capped["rows"]) == min(classes, _mcp.MAX_LIMIT)
    assert long_text["total"] == 1000 and long_text["left_out"] == 998
    cell = long_text["rows"][0]["s"]
    assert cell == {"text": "x" * _mcp.TEXT_LIMIT, "length": 5000, "cut": True}


def test_root_refuses_paths_outside_it(tmp_path):
    inside = tmp_path / "dumps"
    inside.mkdir()
    shutil.copy(JDK8, inside / "app.hprof")
    (inside / "alias.hprof").symlink_to(inside / "app.hprof")
    (inside / "escape.hprof").symlink_to(JDK7)  # a link inside pointing outside
    calls = [("overview", {"path": str(inside / "alias.hprof")}),
             ("open", {"path": str(inside / "escape.hprof")}), ("open", {"path": str(JDK7)}),
             ("histogram", {"path": str(inside / ".." / ".." / JDK7.name)}),
             ("diff", {"path": str(inside / "app.hprof"), "other_path": str(JDK7)}),
             ("sql", {"path": str(JDK7), "query": "select 1"})]
    reads = [("sql", {"path": str(inside / "app.hprof"), "query": query}) for query in (
        f"select * from read_csv('{JDK7.parent / 'SOURCES.md'}')", f"copy (select 1) to '{tmp_path / 'out.csv'}'",
        "set enable_external_access = true")]
    _, (ok, *refused) = serve(calls + reads, "--root", str(inside))
    assert not ok.is_error
    for result in refused[:-len(reads)]:
        assert result.is_error and "outside the allowed root" in result.content[0].text
    for result in refused[-len(reads):]:  # DuckDB may not read or write files by name either
        assert result.is_error and ("disabled by config" in result.content[0].text
                                    or "Cannot change configuration" in result.content[0].text)
    assert not (tmp_path / "out.csv").exists()


def test_a_corrupt_dump_is_a_tool_error_and_the_server_goes_on(tmp_path):
    bad = tmp_path / "bad.hprof"
    bad.write_bytes(JDK8.read_bytes()[:40_000])  # cut inside the heap dump
    with pytest.raises(hprofkit.HprofError) as expected:
        hprofkit.open_heap(bad).close()
    calls = [("overview", {"path": str(bad)}), ("object", {"path": str(JDK8), "object_id": "0x1"}),
             ("open", {"path": str(tmp_path / "missing.hprof")}),
             ("sql", {"path": str(JDK8), "query": "select nothing from nowhere"}), ("open", {"path": str(JDK8)})]
    _, (corrupt, unknown, missing, bad_query, ok) = serve(calls)
    assert corrupt.is_error and " ".join(str(expected.value).split()) in corrupt.content[0].text
    assert "\n" not in corrupt.content[0].text
    assert unknown.is_error and "no object 0x1" in unknown.content[0].text
    assert missing.is_error and "is not a file" in missing.content[0].text
    assert bad_query.is_error and "nowhere" in bad_query.content[0].text
    assert not ok.is_error


def test_without_the_sdk_the_command_says_so_in_one_line():
    code = "import sys; sys.modules['mcp'] = None; from hprofkit.cli import main; sys.exit(main(['mcp']))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "pip install 'hprofkit[mcp]'" in proc.stderr


def test_the_core_never_imports_the_sdk():
    code = ("import sys, hprofkit, hprofkit.cli; hprofkit.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


def test_open_heaps_keeps_a_few_and_reopens_a_rewritten_dump(tmp_path):
    a, b = tmp_path / "a.hprof", tmp_path / "b.hprof"
    shutil.copy(JDK8, a)
    shutil.copy(JDK7, b)
    heaps = OpenHeaps(str(tmp_path), size=1)
    first = heaps.get(str(a))
    assert heaps.get(str(a)) is first  # kept between calls
    heaps.get(str(b))
    assert first.closed  # the least recently used, closed beyond the size
    again = heaps.get(str(a))
    os.utime(a, ns=(0, 12_345))  # a rewritten dump: its mtime changes
    rewritten = heaps.get(str(a))
    assert rewritten is not again and again.closed  # the heap of the old bytes is closed at once
    with pytest.raises(PathRefused):
        heaps.get(str(JDK8))
    heaps.close()
    assert rewritten.closed
