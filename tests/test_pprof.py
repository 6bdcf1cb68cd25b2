"""hprofkit.pprof and `hprofkit pprof`, read back by Go's own pprof (built from
Debian's sources: conftest.go_pprof): `pprof -top` gives each class its flat
bytes (the shallow sizes of its nodes) and its cum (the union of its nodes'
subtrees: the retained size of the outermost nodes of the class), `pprof
-traces` each class tree node's stack and shallow bytes, both against
heap.class_tree() figures added up here; by sites, against
allocation_sites() of an hprof agent's dump.  And the command line: its
output, its refusal to overwrite the input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict

import pytest

import hprofkit
from conftest import HPROF_DIR

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

CLASS_TREE_DUMPS = ["mat__oracle_jdk8_05_x64.hprof", "leakcanary__leak_service_binder.hprof"]
AGENT_DUMP = HPROF_DIR / "mat__oracle_jdk7_21_hprofagent.hprof"
ROW = re.compile(r"^\s*(\d+)B?\s+[\d.]+%\s+[\d.]+%\s+(\d+)B?\s+[\d.]+%\s+(.+)$")


def go(pprof: str, *args: str) -> str:
    return subprocess.run([pprof, *args], check=True, capture_output=True, text=True, timeout=300).stdout


def top(pprof: str, path, index: str) -> dict[str, tuple[int, int]]:
    """pprof -top of every function, none dropped: name -> (flat, cum), in bytes or objects."""
    out = go(pprof, "-top", "-unit=B", "-nodefraction=0", "-edgefraction=0", "-nodecount=1000000",
             f"-sample_index={index}", str(path))
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return rows


def traces(pprof: str, path) -> Counter:
    """pprof -traces: each sample's (bytes, stack leaf first)."""
    out = go(pprof, "-traces", "-unit=B", str(path))
    samples: Counter = Counter()
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        value, leaf = lines[0].split(None, 1)
        samples[(int(value.rstrip("B")), (leaf.strip(), *(line.strip() for line in lines[1:])))] += 1
    return samples


def class_figures(tree) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """Per class name, from the class tree: (flat, cum) in bytes and in objects, as
    pprof adds them up: flat the nodes' own, cum the subtrees of the nodes of the class
    that have no node of the class above them."""
    flat_b, flat_o = defaultdict(int), defaultdict(int)
    cum_b, cum_o = defaultdict(int), defaultdict(int)
    subtree_objects = {}
    for node in reversed(tree.nodes):
        subtree_objects[node.index] = node.objects + sum(subtree_objects[c.index] for c in node.children)
    for _, node in tree.walk():
        if node.parent is None:
            continue
        flat_b[node.name] += node.shallow_size
        flat_o[node.name] += node.objects
        if node.name not in node.path[:-1]:
            cum_b[node.name] += node.retained_size
            cum_o[node.name] += subtree_objects[node.index]
    return ({name: (flat_b[name], cum_b[name]) for name in cum_b},
            {name: (flat_o[name], cum_o[name]) for name in cum_o})


@pytest.mark.parametrize("name", CLASS_TREE_DUMPS)
def test_go_pprof_reads_the_class_tree_as_hprofkit_counts_it(go_pprof, tmp_path, name):
    out = tmp_path / "heap.pb.gz"
    with hprofkit.open_heap(HPROF_DIR / name) as heap:
        written = hprofkit.pprof(heap, out)
        tree = heap.class_tree()
        names = [node.name for node in tree.nodes[1:]]
        by_bytes, by_objects = class_figures(tree)
        assert len(set(names)) == len({(n.name, n.class_.class_id if n.class_ else None) for n in tree.nodes[1:]}), \
            "two classes share a name: the profile names them apart, and this test would have to too"
        assert written["samples"] == len(tree) - 1
        assert (written["objects"], written["bytes"]) == (sum(n.objects for n in tree.nodes), tree.root.retained_size)
        assert top(go_pprof, out, "space") == by_bytes
        assert top(go_pprof, out, "objects") == by_objects
        # A sample per node: its classes from the root, leaf first, and its shallow bytes
        # (pprof leaves out a sample worth nothing).
        expected = Counter((n.shallow_size, tuple(reversed(n.path))) for n in tree.nodes[1:] if n.shallow_size)
        assert traces(go_pprof, out) == expected
        # The total is every reachable byte: what the top-level dominators retain.
        assert sum(flat for flat, _ in by_bytes.values()) == sum(o.retained_size for o in heap.dominator_roots())


def test_go_pprof_reads_the_allocation_sites(go_pprof, tmp_path):
    out = tmp_path / "sites.pb.gz"
    with hprofkit.open_heap(AGENT_DUMP) as heap:
        hprofkit.pprof(heap, out, by="sites")
        sites = heap.allocation_sites()
    assert sum(len(s.frames) > 1 for s in sites) > 10  # stacks worth the name

    def function(f):
        return f"{f.class_name or '?'}.{f.method or '?'}"
    flat, cum = defaultdict(int), defaultdict(int)
    for site in sites:
        names = [function(f) for f in site.frames] or ["<no stack trace>"]
        flat[names[0]] += site.bytes
        for fn in set(names):
            cum[fn] += site.bytes
    assert top(go_pprof, out, "space") == {fn: (flat[fn], cum[fn]) for fn in cum if cum[fn]}
    # A sample per site: its stack, top frame first, and its bytes.
    assert traces(go_pprof, out) == Counter(
        (site.bytes, tuple(function(f) for f in site.frames) or ("<no stack trace>",)) for site in sites if site.bytes)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", "pprof", *args], capture_output=True, text=True,
                          timeout=300)


def test_the_command_line_writes_the_profile_and_never_the_input(go_pprof, tmp_path):
    dump = HPROF_DIR / CLASS_TREE_DUMPS[0]
    out = tmp_path / "heap.pb.gz"
    proc = run_cli(str(dump), "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    said = json.loads(proc.stdout)
    with hprofkit.open_heap(dump) as heap:
        tree = heap.class_tree()
    assert (said["output"], said["by"], said["samples"], said["bytes"], said["size"]) == \
        (str(out), "class-tree", len(tree) - 1, tree.root.retained_size, out.stat().st_size)
    assert "Type: space" in go(go_pprof, "-top", str(out))
    # The input is never the output, whatever spells it.
    link = tmp_path / "same.hprof"
    link.symlink_to(dump)
    before = dump.stat().st_size
    proc = run_cli(str(dump), "-o", str(link))
    assert proc.returncode != 0 and "is the input file" in proc.stderr
    assert dump.stat().st_size == before
    proc = run_cli(str(dump), "--by", "stacks")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    with pytest.raises(ValueError, match="by must be one of"):
        hprofkit.pprof(dump, tmp_path / "x.pb.gz", by="stacks")
