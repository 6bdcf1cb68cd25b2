"""The graph surfaces on hostile inputs (issue #19, hardening II: "no crash
or hang on the graph surfaces") and the batch path search (issue #24,
"More than one path").  Each test is a user's report, kept as a regression
test: the inputs are built by tests/hostile.py into a temporary folder, at
sizes that keep each test to seconds (benchmarks/bench_graph_hostile.py
runs the issue's sizes and prints time and peak memory).

A crash, a hang or a Ctrl-C ignored is watched from a child process: it
prints a line just before the call, the parent waits for the kernel to say
the child's thread runs, then acts (closes the heap, forks, sends SIGINT)
and bounds the wait for the outcome generously.  Memory is the child's
peak RSS (ru_maxrss) over the call, with a bound far from both the fixed
code's figure and the issue's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hprofkit
from hprofkit import match
from hprofkit.writer import HprofWriter

import hostile
from procstate import reap

TESTS = Path(__file__).resolve().parent

# What every child runs first: the hostile inputs, the peak RSS, and the
# state of one of its threads read with the GIL held (ctypes.PyDLL calls
# keep it), so that a thread seen running then is running C code without
# the GIL: inside a core computation.
PRELUDE = f"""
import ctypes, os, signal, sys, threading, time
sys.path.insert(0, {str(TESTS)!r})
import hprofkit, hostile
_libc = ctypes.PyDLL(None)

def peak_mb():
    # VmHWM, not ru_maxrss: that one starts from the parent's RSS at the fork.
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024

def thread_state(tid):
    buf = ctypes.create_string_buffer(4096)
    fd = _libc.open(f"/proc/self/task/{{tid}}/stat".encode(), 0)
    n = _libc.read(fd, buf, 4095)
    _libc.close(fd)
    text = buf.raw[:n].decode()
    return text[text.rindex(")") + 2]

def wait_inside(thread):
    '''True once `thread` is seen running while this one holds the GIL.'''
    while thread.is_alive():
        if thread_state(thread.native_id) in "RD":
            return True
        time.sleep(0.0002)
    return False
"""


def run_child(code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=timeout)


def process_stat(pid: int) -> tuple[str, int]:
    """A process's state letter and the CPU ticks it used (utime + stime)."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[11]) + int(fields[12])


def interrupted_inside(code: str, path: Path, bound: float = 30) -> str:
    """Runs `code` in a child, which prints "ready" just before its long
    call; once the kernel says it runs and has used a few ticks of CPU
    since (inside the call, not in the Python before it), sends SIGINT and
    waits up to `bound` seconds for it to end.  The child must catch
    KeyboardInterrupt and print "interrupted".  Returns its output."""
    proc = subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(code), str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()
        _, ticks = process_stat(proc.pid)
        while True:
            assert proc.poll() is None, proc.stderr.read()
            state, used = process_stat(proc.pid)
            if state in "RD" and used >= ticks + 5:
                break
        os.kill(proc.pid, signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {bound} s after SIGINT")
        assert proc.returncode == 0 and out.strip() == "interrupted", err[-3000:]
        return out
    finally:
        reap(proc)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    """Builds hostile dumps on first use: name -> path."""
    folder = tmp_path_factory.mktemp("hostile-graph")
    made: dict[str, Path] = {}

    def get(name: str, maker, *args) -> Path:
        if name not in made:
            made[name] = folder / f"{name}.hprof"
            hostile.write_dump(made[name], maker(*args))
        return made[name]
    return get


# ---- #19: crashes and hangs ------------------------------------------------------------

def test_close_while_another_thread_builds_the_referrer_index(dumps):
    """heap.close() while another thread is inside the first obj.referrers()
    (building the referrer index) was a segfault: the index was freed when
    the builder left, and referrers() then read it.  Now the builder gets
    ValueError, as every call on a closed heap."""
    path = dumps("shared", hostile.shared_target_dump, 4_000_000)
    proc = run_child("""
        outcomes = []
        for attempt in range(20):
            heap = hprofkit.open_heap(sys.argv[1])
            target = heap.object(hostile.object_id(0))
            result = []
            def work():
                try:
                    result.append(len(target.referrers()))
                except ValueError as exc:
                    result.append(str(exc))
            thread = threading.Thread(target=work)
            thread.start()
            inside = wait_inside(thread)
            heap.close()
            thread.join()
            if inside:
                outcomes.append(result[0])
                break
        print(outcomes)
    """, str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "['the heap is closed']"


def test_fork_while_another_thread_computes_retained_sizes(dumps):
    """os.fork() while another thread was inside heap.top_retainers(): the
    child's next top_retainers(1) never returned (the lock stayed held by a
    thread the child does not have).  Now the child computes them again."""
    path = dumps("list", hostile.linked_list_dump, 1_000_000)
    proc = run_child("""
        for attempt in range(20):
            heap = hprofkit.open_heap(sys.argv[1])
            thread = threading.Thread(target=heap.top_retainers)
            thread.start()
            if not wait_inside(thread):
                thread.join()
                continue
            pid = os.fork()
            if pid == 0:
                (obj, size), = heap.top_retainers(1)
                os.write(1, f"child {obj.id:#x} {size}\\n".encode())
                os._exit(0)
            thread.join()
            (obj, size), = heap.top_retainers(1)
            print(f"parent {obj.id:#x} {size}", flush=True)
            _, status = os.waitpid(pid, 0)
            print("child exit", os.waitstatus_to_exitcode(status))
            break
    """, str(path), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = sorted(proc.stdout.split("\n")[:-1])
    head = f"{hostile.object_id(0):#x} {1_000_000 * 16}"
    assert lines == sorted(["child exit 0", f"child {head}", f"parent {head}"]), proc.stdout


def test_ctrl_c_inside_path_to_root_over_a_deep_class_hierarchy(dumps):
    """path_to_root was super-linear in the depth of the class hierarchy
    (130 s here, 150,000 chained classes) and ignored Ctrl-C meanwhile.  The
    graph is built before; each round compiles the matchers and searches."""
    path = dumps("chain", hostile.class_chain_dump, 150_000)
    interrupted_inside("""
        heap = hprofkit.open_heap(sys.argv[1])
        deep = heap.object(hostile.object_id(0))
        heap.retained_size(deep)              # the graph and the dominators
        try:
            print("ready", flush=True)
            while True:
                path = heap.path_to_root(deep)
                assert len(path) == 2
        except KeyboardInterrupt:
            print("interrupted")
    """, path)


def test_ctrl_c_while_naming_paths_through_a_large_array(dumps):
    """Naming the hop Object[][i] scanned the array up to i, so the paths of
    12,000 elements at the end of a 320,000-slot array took minutes, in one
    call that ignored Ctrl-C.  The graph is built before."""
    path = dumps("wide", hostile.wide_array_dump, 320_000)
    interrupted_inside("""
        heap = hprofkit.open_heap(sys.argv[1])
        objs = [heap.object(hostile.object_id(k)) for k in range(308_000, 320_000)]
        heap.path_to_root(objs[0])            # the graph
        try:
            print("ready", flush=True)
            while True:
                names = [p.hops[-1].name for p in heap.paths_to_root(objs)]
                assert names[-1] == "[319999]"
        except KeyboardInterrupt:
            print("interrupted")
    """, path)


def test_hops_through_a_large_array_are_the_right_elements(dumps):
    path = dumps("wide-small", hostile.wide_array_dump, 5_000)
    heap = hprofkit.open_heap(path)
    holder = heap.object(hostile.HOLDER)
    objs = [heap.object(hostile.object_id(k)) for k in (4999, 0, 2500, 4999, 17)]
    for obj, p in zip(objs, heap.paths_to_root(objs)):
        assert p.hops[-1] == hprofkit.Hop("ARRAY_ENTRY", holder, f"[{(obj.id - hostile.OBJECT0) // 8}]", obj)


# ---- #19: memory ---------------------------------------------------------------------------

def test_path_to_root_of_a_long_list_is_linear_and_prints_folded(dumps):
    """path_to_root(tail) of a 10 M-long list took 77 s and 3.9 GB (a tuple,
    two handles and a name per hop); str(path) was a line per hop."""
    path = dumps("list2m", hostile.linked_list_dump, 2_000_000)
    proc = run_child("""
        heap = hprofkit.open_heap(sys.argv[1])
        tail = heap.object(hostile.object_id(1_999_999))
        heap.path_to_root(heap.object(hostile.object_id(0)))  # builds the graph
        before = peak_mb()
        path = heap.path_to_root(tail)
        text = str(path)
        print(len(path), round(peak_mb() - before), len(text.splitlines()))
        print(text.splitlines()[23])
        print(path.hops[1_000_000].name, path.hops[-1].target == tail)
    """, str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    hops, grown, lines = map(int, proc.stdout.split("\n")[0].split())
    assert hops == 2_000_000 and lines == 43
    assert grown < 150, f"the path took {grown} MB"  # 2 M hops, 13 B a node kept: 26 MB, and the search's 17
    assert proc.stdout.split("\n")[1:3] == ["│ … 1,999,980 more hops …", "next True"]


def test_find_leaks_on_a_long_leak_chain(dumps):
    """find_leaks on a 1 M-long leak chain took 41 s and 801 MB, and
    str(leak) was 88 MB of text."""
    path = dumps("leak", hostile.leak_chain_dump, 300_000)
    proc = run_child("""
        heap = hprofkit.open_heap(sys.argv[1])
        heap.compute_retained()
        before = peak_mb()
        (leak,) = heap.find_leaks()
        text = str(leak)
        print(len(leak.nodes), round(peak_mb() - before), len(text))
        print(leak.nodes[-1].status, leak.nodes[150_000].status, leak.nodes[150_000].suspect)
        print("│ … 299,981 more hops …" in text.splitlines())
    """, str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    nodes, grown, size = map(int, proc.stdout.split("\n")[0].split())
    assert nodes == 300_001 and size < 4_000
    assert grown < 100, f"find_leaks took {grown} MB"
    assert proc.stdout.split("\n")[1:3] == ["LEAKING UNKNOWN True", "True"]


def test_show_limits_referrers_before_making_them(dumps):
    """`show FILE ID --limit 5` on an object with 50 M referrers reached
    7.7 GB: the limit was applied after the full list."""
    path = dumps("shared", hostile.shared_target_dump, 4_000_000)
    out, peak = run_cli_measured("show", str(path), hex(hostile.object_id(0)), "--limit", "5")
    assert "referrers (4,000,000)" in out and "  ... 3,999,995 more" in out
    assert sum(line.startswith("  <Object[]@") for line in out.splitlines()) == 5
    # The referrer index (16 MB) and the mapping; not 4 M Referrers.
    assert peak < 250, f"show took {peak:.0f} MB"


CLI_MEASURED = ("import sys\nfrom hprofkit.cli import main\ncode = main(sys.argv[1:])\n"
                "print(next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')).split()[1], file=sys.stderr)\n"
                "sys.exit(code)")


def run_cli_measured(*args: str) -> tuple[str, float]:
    """The output and peak RSS (MB) of `python -m hprofkit ARGS`, which must succeed."""
    proc = subprocess.run([sys.executable, "-c", CLI_MEASURED, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, int(proc.stderr.split()[-1]) / 1024


def test_gc_roots_and_root_kinds_stay_small(dumps):
    """heap.gc_roots on 5 M roots peaked at 1.3 GB (a list of GcRoots), and
    `show` printed a line of 2.5 M root kinds whatever --limit said."""
    path = dumps("roots", hostile.many_roots_dump, 900_000)
    proc = run_child("""
        heap = hprofkit.open_heap(sys.argv[1])
        before = peak_mb()
        roots = heap.gc_roots
        last = roots[-1]
        print(len(roots), last.kind, roots[1].kind, len(roots[10:20]), round(peak_mb() - before))
        print(sum(1 for r in roots if r.kind == "UNKNOWN"), sum(1 for r in roots[::-1] if r.kind == "MONITOR_USED"))
    """, str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, second = proc.stdout.split("\n")[:2]
    count, last, kind, ten, grown = first.split()
    assert (count, last, kind, ten, second) == ("900000", "UNKNOWN", "MONITOR_USED", "10", "300000 300000")
    assert int(grown) < 20, f"gc_roots took {grown} MB"
    show = subprocess.run([sys.executable, "-m", "hprofkit", "show", str(path), hex(hostile.object_id(0)),
                           "--limit", "5"], capture_output=True, text=True, timeout=300)
    assert show.returncode == 0, show.stderr
    (line,) = [l for l in show.stdout.splitlines() if l.startswith("  GC roots")]
    assert line == "  GC roots    JNI_GLOBAL × 300,000, MONITOR_USED × 300,000, UNKNOWN × 300,000"


# ---- #24: more than one path ---------------------------------------------------------------

OBJ, MAP, NODE, ARR, REF, WEAK, THREAD = 0x100, 0x108, 0x110, 0x118, 0x120, 0x128, 0x130


def write_paths_dump(path: Path) -> None:
    """A map holding a node holding a leaf (JNI global on the map); a weak
    reference to an otherwise unreachable object; an Object[] held only
    through a Node held by another Object[]; an orphan."""
    with HprofWriter(path, id_size=4) as w:
        for cid, name in ((OBJ, "java/lang/Object"), (MAP, "Map"), (NODE, "Node"), (ARR, "[Ljava/lang/Object;"),
                          (REF, "java/lang/ref/Reference"), (WEAK, "java/lang/ref/WeakReference")):
            w.load_class(cid, name)
        with w.heap_dump() as seg:
            seg.root_jni_global(0x1000)
            seg.root_jni_global(0x2000)
            seg.root_jni_global(0x3000)
            seg.class_dump(OBJ)
            seg.class_dump(MAP, super_id=OBJ, fields=[("table", "object")], instance_size=4)
            seg.class_dump(NODE, super_id=OBJ, fields=[("value", "object")], instance_size=4)
            seg.class_dump(ARR, super_id=OBJ)
            seg.class_dump(REF, super_id=OBJ, fields=[("referent", "object")], instance_size=4)
            seg.class_dump(WEAK, super_id=REF, instance_size=4)
            seg.instance(0x1000, MAP, values=[0x1008])      # map.table -> node
            seg.instance(0x1008, NODE, values=[0x1010])     # node.value -> leaf
            seg.instance(0x1010, OBJ, values=[])
            seg.instance(0x2000, WEAK, values=[0x2008])     # weak.referent -> only weakly reachable
            seg.instance(0x2008, OBJ, values=[])
            seg.object_array(0x3000, ARR, [0x3008])         # Object[] -> node -> Object[]
            seg.instance(0x3008, NODE, values=[0x3010])
            seg.object_array(0x3010, ARR, [0x3018])
            seg.instance(0x3018, OBJ, values=[])
            seg.instance(0x4000, OBJ, values=[])            # unreachable
        w.heap_dump_end()


@pytest.fixture(scope="module")
def paths_heap(tmp_path_factory):
    path = tmp_path_factory.mktemp("paths") / "p.hprof"
    write_paths_dump(path)
    return hprofkit.open_heap(path)


def test_batch_gives_each_target_its_single_search_path(paths_heap):
    """paths_to_root([map, node]) returned None for a node that
    path_to_root(node) reaches: the targets were leaves of the search."""
    heap = paths_heap
    the_map, node, leaf = heap.object(0x1000), heap.object(0x1008), heap.object(0x1010)
    batch = heap.paths_to_root([the_map, node, leaf])
    assert batch == [heap.path_to_root(the_map), heap.path_to_root(node), heap.path_to_root(leaf)]
    assert [h.target for h in batch[2].hops] == [the_map, node, leaf]
    # The same target twice, and in any order.
    assert heap.paths_to_root([leaf, the_map, leaf]) == [batch[2], batch[0], batch[2]]


def test_batch_says_why_a_target_has_no_path(paths_heap):
    heap = paths_heap
    weakly, orphan, leaf, node = heap.object(0x2008), heap.object(0x4000), heap.object(0x1010), heap.object(0x1008)
    excluded = match.instance_field("Map", "table", description="the map is not a leak")
    answers = heap.paths_to_root([weakly, orphan, leaf], exclude=(excluded,))
    assert [bool(a) for a in answers] == [False, False, False]
    weak, gone, cut = answers
    assert weak is not None and weak.reason == "weakly reachable" and isinstance(weak, hprofkit.NoPath)
    assert [h.name for h in weak.path.hops] == ["JNI_GLOBAL", "referent"] and weak.path.target == weakly
    assert gone.reason == "unreachable" and gone.path is None and gone.target == orphan and len(gone) == 0
    assert cut.reason == "excluded" and cut.matcher is excluded
    assert [h.name for h in cut.path.hops] == ["JNI_GLOBAL", "table", "value"]
    assert "excluded by the map is not a leak" in str(cut) and str(cut.path) in str(cut)
    # path_to_root keeps its answer: None.
    assert heap.path_to_root(leaf, exclude=(excluded,)) is None and heap.path_to_root(weakly) is None
    # A library matcher still gives a path, flagged.
    library = excluded._replace(kind="library")
    (lib,) = heap.paths_to_root([node], exclude=(library,))
    assert lib and lib.library_matcher is library


def test_growth_paths_cross_objects_of_their_own_class(paths_heap, tmp_path):
    """Growth paths labelled 6,144 of 7,370 reachable Object[] "(not strongly
    reachable)": every object of the class was a leaf, so the route through
    another Object[] was cut."""
    from hprofkit.heapdiff import _path_counts
    counts, sampled = _path_counts(paths_heap, "java.lang.Object[]", (), 100)
    assert not sampled and sum(counts.values()) == 2
    assert ("(not strongly reachable)",) not in counts
    assert counts[("ROOT JNI_GLOBAL -> java.lang.Object[]", "ARRAY_ENTRY java.lang.Object[].[x] -> Node",
                   "INSTANCE_FIELD Node.value -> java.lang.Object[]")] == 1


def test_paths_print_as_leak_traces_do(tmp_path):
    """A Path printed `Object[][0]` and `GC Root: JAVA_FRAME` where a Leak
    printed LeakCanary's `Object[].[3]` and "Thread object"."""
    path = tmp_path / "t.hprof"
    with HprofWriter(path, id_size=4) as w:
        for cid, name in ((OBJ, "java/lang/Object"), (THREAD, "java/lang/Thread"), (ARR, "[Ljava/lang/Object;")):
            w.load_class(cid, name)
        with w.heap_dump() as seg:
            seg.root_thread_object(0x5000, 3)
            seg.root_java_frame(0x5008, 3, 0)
            seg.class_dump(OBJ)
            seg.class_dump(THREAD, super_id=OBJ, fields=[("name", "object")], instance_size=4)
            seg.class_dump(ARR, super_id=OBJ)
            seg.instance(0x5000, THREAD, values=[0])
            seg.object_array(0x5008, ARR, [0, 0, 0, 0x5010])
            seg.instance(0x5010, OBJ, values=[])
        w.heap_dump_end()
    heap = hprofkit.open_heap(path)
    found = heap.path_to_root(heap.object(0x5010))
    assert str(found) == "\n".join([
        "┬───",
        "│ GC Root: Thread object",
        "│",
        "├─ java.lang.Thread instance",
        "│    ↓ Thread<Java Local>",
        "├─ java.lang.Object[] array",
        "│    ↓ Object[].[3]",
        "╰→ java.lang.Object instance",
    ])
    (leak,) = heap.find_leaks(finders=(lambda h: [h.object(0x5010)],))
    lines = str(leak).splitlines()
    assert lines[2] == "│ GC Root: Thread object"
    assert "│    ↓ Thread<Java Local>" in lines and "│    ↓ Object[].[3]" in lines
