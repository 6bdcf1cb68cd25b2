"""hprofkit.batch over the shared dumps (plus broken ones made here): the default process pool and a
real Dask cluster (distributed.LocalCluster: worker processes behind a scheduler address) give the
same rows and aggregates; one bad dump is one error row; the CLI drives both.  A worker killed from
outside (SIGKILL, as the OOM killer) fails its own input only; Ctrl-C and a killed caller leave no
worker behind; FIFOs are refused at once; two inputs never write one output."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster

import hprofkit
import hprofkit.tasks
from batch_tasks import histogram_or_hang
from conftest import INVENTORY, dump_path
from hprofkit._report import write as write_report
from hprofkit.batching import BatchResult, BatchRow

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

TESTS = Path(__file__).resolve().parent

ALL_DUMPS = [dump_path(e["file"]) for e in INVENTORY]


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Every shared dump, a truncated one and one that is not HPROF at all, in a mixed order."""
    tmp = tmp_path_factory.mktemp("bad")
    truncated = tmp / "truncated.hprof"
    truncated.write_bytes(dump_path("mat__oracle_jdk8_05_x64.hprof").read_bytes()[:300_000])
    garbage = tmp / "garbage.hprof"
    garbage.write_bytes(b"PK\x03\x04 this is a zip, not a heap dump" * 100)
    return ALL_DUMPS[:5] + [truncated] + ALL_DUMPS[5:] + [garbage]


def without_workers(data: dict) -> dict:
    """BatchResult.to_dict() without the workers (which differ from one executor to another)."""
    return {**data, "rows": [{k: v for k, v in row.items() if k != "worker"} for row in data["rows"]]}


def check_rows(result: BatchResult, inputs) -> None:
    assert [row.input for row in result.rows] == inputs  # in input order, as given
    errors = {row.input.name: row.error for row in result.rows if not row.ok}
    assert set(errors) == {"truncated.hprof", "garbage.hprof"}
    assert errors["truncated.hprof"].startswith("TruncatedError: ") and "offset" in errors["truncated.hprof"]
    assert errors["garbage.hprof"].startswith("FormatError: ")


@pytest.mark.parametrize("task", ["stats", "histogram"])
def test_pool_and_cluster_agree(task, inputs, client):
    local = hprofkit.batch(task, inputs, jobs=2)
    remote = hprofkit.batch(task, inputs, executor=client)
    check_rows(local, inputs)
    assert remote.rows == local.rows
    assert remote.histogram == local.histogram
    assert without_workers(remote.to_dict()) == without_workers(local.to_dict())
    # result.failed names the worker each input failed on: a local worker's pid, a Dask worker's address.
    workers = set(client.scheduler_info()["workers"])
    assert all(row.worker.startswith("pid ") and row.worker != f"pid {os.getpid()}" for row in local.rows)
    assert [row.worker in workers for row in remote.failed] == [True, True]
    # The values are what the single-dump API gives, and the totals add them up.
    for row in local.rows:
        if row.ok:
            stats = hprofkit.stats(row.input).to_dict()
            assert row.value == (stats if task == "stats" else
                                 [[h["class"], h["instances"], h["shallow_size"]] for h in stats["histogram"]])
    strings = [c for c in local.histogram if c.name == "java.lang.String"]
    want = [(h["instances"], h["shallow_size"]) for row in local.rows if row.ok
            for h in hprofkit.stats(row.input).to_dict()["histogram"] if h["class"] == "java.lang.String"]
    assert len(strings) == 1 and strings[0].instances == sum(w[0] for w in want)
    assert strings[0].shallow_bytes == sum(w[1] for w in want)
    assert local.histogram == sorted(local.histogram, key=lambda c: (-c.shallow_bytes, -c.instances, c.name))


def test_any_executor_and_callables(inputs, client):
    with ThreadPoolExecutor(2) as pool:
        threads = hprofkit.batch(os.path.getsize, inputs + ["/nonexistent.hprof"], executor=pool)
    remote = hprofkit.batch(os.path.getsize, inputs + ["/nonexistent.hprof"], executor=client.get_executor())
    assert threads.rows == remote.rows
    assert [r.value for r in threads.rows[:-1]] == [os.path.getsize(p) for p in inputs]
    assert threads.rows[-1].error.startswith("FileNotFoundError: ")
    assert threads.task == "getsize" and threads.histogram == [] and threads.leak_groups == []


def test_encode_and_decode_batches(tmp_path):
    sources = [dump_path(name) for name in ("mat__oracle_jdk8_05_x64.hprof", "leakcanary__leak_service_binder.hprof",
                                            "py-hprof__example-java.hprof.bz2")]
    packs = hprofkit.batch("encode", sources, jobs=2, output_dir=tmp_path / "packs")
    assert all(row.ok for row in packs.rows), packs.failed
    restored = hprofkit.batch("decode", [row.value["output"] for row in packs.rows], jobs=2,
                              output_dir=tmp_path / "restored")
    assert all(row.ok for row in restored.rows), restored.failed
    for source, pack, back in zip(sources, packs.rows, restored.rows):
        # The same bytes as the single-file API writes.
        hprofkit.encode(source, tmp_path / "one.hpk", threads=1)
        hprofkit.decode(tmp_path / "one.hpk", tmp_path / "one.hprof")
        assert (tmp_path / "one.hpk").read_bytes() == Path(pack.value["output"]).read_bytes()
        assert (tmp_path / "one.hprof").read_bytes() == Path(back.value["output"]).read_bytes()
        assert pack.value["written"] == os.path.getsize(pack.value["output"])


def test_report_batches_write_a_page_per_dump(tmp_path, client):
    """#22: report is a batch task too (hprofkit.tasks.report, the CLI's batch report), on the
    local pool and on a Dask cluster: a page per dump, named after it, holding what
    hprofkit.report writes, and the summary's counts are the heap's."""
    sources = [dump_path(name) for name in ("leakcanary__leak_service_binder.hprof", "mat__oracle_jdk8_05_x64.hprof")]
    pages = hprofkit.batch("report", sources, client, output_dir=tmp_path / "pages")
    assert all(row.ok for row in pages.rows), pages.failed
    for source, row in zip(sources, pages.rows):
        page = Path(row.value["output"])
        assert page == tmp_path / "pages" / (hprofkit.tasks.output_stem(source) + ".html")
        assert row.value["written"] == page.stat().st_size and page.read_text().startswith("<!DOCTYPE html>")
        with hprofkit.open_heap(source) as heap:
            assert row.value["leaks"] == len(heap.find_leaks())
        single = write_report(source, tmp_path / "one.html")  # report(), returning its JSON document
        assert row.value["suspects"] == len(single["sections"]["suspects"]["items"])
        assert row.value["leak_groups"] == len(single["sections"]["leaks"]["groups"])
    assert pages.rows[0].value["leaks"] > 0  # the LeakCanary dump's leak is in its page
    code, out, err = run_cli_session("batch", "report", *map(str, sources), "--jobs", "1",
                                     "--output-dir", str(tmp_path / "cli"))
    assert code == 0, err
    assert f"{sources[0]} -> {tmp_path}/cli/leakcanary__leak_service_binder.html (" in out
    assert f" bytes, {pages.rows[0].value['suspects']} suspects, {pages.rows[0].value['leaks']} leaks)" in out


def test_result_to_parquet(tmp_path, inputs):
    result = hprofkit.batch("histogram", inputs[:3], jobs=1)
    result.to_parquet(tmp_path / "out")
    rows = pq.read_table(tmp_path / "out" / "rows.parquet").to_pylist()
    assert [json.loads(r["value"]) for r in rows] == [r.value for r in result.rows]
    histogram = pq.read_table(tmp_path / "out" / "histogram.parquet").to_pylist()
    assert histogram == result.to_dict()["histogram"]  # the vocabulary of --json: class, shallow_size


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown task"):
        hprofkit.batch("nope", [])
    with pytest.raises(TypeError, match="executor"):
        hprofkit.batch("stats", [dump_path("mat__oracle_jdk8_05_x64.hprof")], executor=object())


def run_cli(*args: str):
    return subprocess.run([sys.executable, "-m", "hprofkit", "batch", *args], capture_output=True, text=True,
                          timeout=600)


def test_cli_local_and_scheduler(tmp_path, inputs, client):
    paths = [str(p) for p in inputs[:4] + inputs[-1:]]
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    proc = run_cli("stats", *paths, "--jobs", "2", "--out", str(local))
    assert proc.returncode == 1 and proc.stderr == "hprofkit: error: 1 of 5 inputs failed\n"
    proc = run_cli("stats", *paths, "--scheduler", client.scheduler.address, "--out", str(remote))
    assert proc.returncode == 1 and proc.stderr == "hprofkit: error: 1 of 5 inputs failed\n"
    assert without_workers(json.loads(local.read_text())) == without_workers(json.loads(remote.read_text()))
    data = json.loads(local.read_text())
    assert [r["input"] for r in data["rows"]] == paths and [r["ok"] for r in data["rows"]] == [True] * 4 + [False]
    proc = run_cli("histogram", *paths[:2], "--jobs", "1")
    assert proc.returncode == 0 and proc.stdout.startswith("histogram: 2 inputs, 2 ok, 0 failed")
    assert "java.lang.String" in proc.stdout


def test_cli_leaks_summary_names_each_leak(tmp_path):
    """#22: a group's line named the fingerprint twice (its first report line is 'Signature: <it>');
    it names the leak -- its leaking class and suspect reference -- and gives the fingerprint once.
    The dump and its pack (read as open_heap reads it) are one group of two dumps."""
    source = dump_path("leakcanary__leak_service_binder.hprof")
    pack = tmp_path / "phone.hpk"
    hprofkit.encode(source, pack, threads=1)
    with hprofkit.open_heap(source) as heap:
        (leak,) = heap.find_leaks()
        fingerprint, retained, name = leak.fingerprint, leak.retained_size, leak.short_description
    assert name == "com.example.leakcanary.LeakyService via LeakyService$MyBinder.service"
    proc = run_cli("leaks", str(source), str(pack), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[2:4] == ["1 leak groups", f"{'dumps':>6}{'retained':>14}  {'fingerprint':<12}  leak"]
    assert lines[4].split() == ["2", f"{2 * retained:,}", fingerprint[:12], *name.split()]
    assert proc.stdout.count(fingerprint[:12]) == 1
    doc = json.loads(run_cli("leaks", str(source), "--jobs", "1", "--json").stdout)
    assert doc["leak_groups"][0]["short_description"] == name


def test_leak_groups_count_copies(tmp_path, client):
    """Copies of LeakCanary's dump (plain and gzipped) among leak-free and broken dumps: the groups
    count each copy once and add up what find_leaks reports on one copy."""
    import gzip
    source = dump_path("leakcanary__leak_service_binder.hprof")
    copies = [tmp_path / f"phone{k}.hprof" for k in range(3)]
    for copy in copies:
        copy.write_bytes(source.read_bytes())
    zipped = tmp_path / "phone3.hprof.gz"
    zipped.write_bytes(gzip.compress(source.read_bytes(), 1))
    broken = tmp_path / "broken.hprof"
    broken.write_bytes(source.read_bytes()[:500_000])
    inputs = copies[:2] + [dump_path("mat__oracle_jdk8_05_x64.hprof"), broken, copies[2], zipped]
    with hprofkit.open_heap(source) as heap:
        leaks = heap.find_leaks()
        expected = {leak.fingerprint: (sum(l.retained_size for l in leaks if l.fingerprint == leak.fingerprint),
                                       str(leak)) for leak in reversed(leaks)}
    assert expected, "the LeakCanary dump has leaks"
    local = hprofkit.batch("leaks", inputs, jobs=2)
    remote = hprofkit.batch("leaks", inputs, executor=client)
    assert remote.rows == local.rows and remote.leak_groups == local.leak_groups
    assert [row.ok for row in local.rows] == [True, True, True, False, True, True]
    assert local.rows[2].value == []  # the JDK 8 dump watches nothing
    assert {g.fingerprint: (g.dumps, g.retained_size, g.example) for g in local.leak_groups} == {
        fp: (4, 4 * retained, example) for fp, (retained, example) in expected.items()}


# ---- hprofkit.tasks, Dask keys, futures, addresses (#22) -------------------------------------------

def test_tasks_are_plain_functions_for_dask_bag(client):
    """The issue's example: dask.bag.from_sequence(paths).map(hprofkit.tasks.leaks) on the cluster."""
    import dask.bag
    paths = [str(dump_path(name)) for name in ("leakcanary__leak_service_binder.hprof", "mat__oracle_jdk8_05_x64.hprof")]
    leaks = dask.bag.from_sequence(paths, npartitions=2).map(hprofkit.tasks.leaks).compute(scheduler=client.get)
    assert leaks == [row.value for row in hprofkit.batch("leaks", paths, jobs=1).rows]
    assert leaks[0] and leaks[1] == []  # LeakCanary's dump leaks; the JDK 8 one watches nothing
    histograms = dask.bag.from_sequence(paths).map(hprofkit.tasks.histogram).compute(scheduler=client.get)
    assert histograms == [[[r.name, r.instances, r.shallow_bytes] for r in hprofkit.stats(p).histogram] for p in paths]
    with pytest.raises(hprofkit.TruncatedError):  # called directly, a task raises
        hprofkit.tasks.stats(dump_path("mat__oracle_jdk8_05_x64.hprof").read_bytes()[:300_000])


def test_dask_keys_name_the_task_and_input_and_wait_false_gives_futures(inputs, client):
    from distributed.utils import key_split
    futures = hprofkit.batch("histogram", inputs, executor=client, wait=False)
    assert len(futures) == len(inputs)
    for future, path in zip(futures, inputs):
        assert future.key.startswith(f"hprofkit-histogram-{path.name.replace('-', '_')}-")
        assert key_split(future.key) == "hprofkit-histogram"  # the dashboard's task group
    rows = client.gather(futures)
    assert all(isinstance(row, BatchRow) for row in rows)
    gathered = BatchResult.from_rows("histogram", rows)
    waited = hprofkit.batch("histogram", inputs, executor=client)
    check_rows(gathered, inputs)
    assert gathered.rows == waited.rows and gathered.histogram == waited.histogram
    # The local pool's futures too: concurrent.futures, the pool ends once they are done.
    local = hprofkit.batch("histogram", inputs[:3], wait=False, jobs=2)
    assert [future.result() for future in local] == waited.rows[:3]


def test_relative_paths_and_a_scheduler_address(tmp_path, client):
    """Inputs and --output-dir given relative to the caller's directory reach the workers (whose
    directory is another) as absolute paths; executor= takes the scheduler's address."""
    for name in ("mat__oracle_jdk8_05_x64.hprof", "leakcanary__leak_service_binder.hprof"):
        shutil.copyfile(dump_path(name), tmp_path / name)
    relative = ["mat__oracle_jdk8_05_x64.hprof", "leakcanary__leak_service_binder.hprof"]
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "batch", "encode", *relative, "--output-dir", "packs",
                           "--scheduler", client.scheduler.address, "--out", "result.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "result.json").read_text())["rows"]
    assert [row["input"] for row in rows] == relative  # as given
    for row, name in zip(rows, relative):
        output = tmp_path / "packs" / name.replace(".hprof", ".hpk")
        assert row["ok"] and row["value"]["output"] == str(output) and output.stat().st_size == row["value"]["written"]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = hprofkit.batch("stats", relative, executor=client.scheduler.address)
    finally:
        os.chdir(cwd)
    assert [row.ok for row in result.rows] == [True, True], result.failed
    assert result.rows[0].value == hprofkit.stats(dump_path(relative[0])).to_dict()


def test_a_progress_line_in_a_notebook(tmp_path):
    """batch() in a real Jupyter kernel (ipykernel, driven by jupyter_client as a notebook
    front-end is) draws its progress line on the cell's stderr; in a script whose stderr is a
    file, nothing is drawn unless asked (progress=True)."""
    from jupyter_client.manager import start_new_kernel
    dump = str(dump_path("mat__oracle_jdk8_05_x64.hprof"))
    code = f"import hprofkit\nresult = hprofkit.batch('histogram', [{dump!r}] * 3, jobs=1)\nprint(len(result.rows))"
    manager, kernel = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        msg_id = kernel.execute(code)
        streams = []
        while True:
            msg = kernel.get_iopub_msg(timeout=300)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            assert msg["msg_type"] != "error", msg["content"]
            if msg["msg_type"] == "stream":
                streams.append((msg["content"]["name"], msg["content"]["text"]))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)
    stderr = "".join(text for name, text in streams if name == "stderr")
    assert stderr.startswith("\rbatch [") and "] 100.0% 3/3 dumps, " in stderr and stderr.endswith("\n")
    assert ("stdout", "3\n") in streams
    script = code.replace("jobs=1)", "jobs=1, progress=PROGRESS)")
    for progress, drawn in (("None", False), ("True", True)):
        proc = subprocess.run([sys.executable, "-c", script.replace("PROGRESS", progress)], capture_output=True,
                              text=True, timeout=300)
        assert proc.stdout == "3\n" and ("3/3 dumps" in proc.stderr) == drawn, proc.stderr


# ---- one dead worker fails its own input only (#19) -------------------------------------------------

@pytest.fixture
def victim(tmp_path):
    """An input whose task announces its worker's pid on the FIFO victims.pid, then waits for ever;
    read_pid() reads one announced pid (the FIFO is held open for writing too: no early EOF)."""
    path = tmp_path / "victim.hprof"
    shutil.copyfile(dump_path("mat__oracle_jdk8_05_x64.hprof"), path)
    os.mkfifo(tmp_path / "victims.pid")
    fd = os.open(tmp_path / "victims.pid", os.O_RDWR)
    with os.fdopen(fd, "r") as announced:
        yield Victim(path, lambda: int(announced.readline()))


class Victim:
    def __init__(self, path: Path, read_pid) -> None:
        self.path, self.read_pid = path, read_pid


def pidfd(pid: int) -> int:
    return os.pidfd_open(pid)


def wait_exit(fd: int, seconds: float = 120) -> bool:
    """Whether the process behind pidfd fd has ended (the kernel says so); False after `seconds`."""
    return bool(select.select([fd], [], [], seconds)[0])


def test_a_killed_worker_fails_its_own_input_only(victim):
    """The issue's report: a worker SIGKILLed (as the OOM killer does) while it runs one input; every
    other input, running or queued, still gets its row, on a replaced worker."""
    good = ALL_DUMPS[:6] + ALL_DUMPS[6:12]
    inputs = good[:6] + [victim.path] + good[6:]
    killed = []

    def kill_the_victim() -> None:
        pid = victim.read_pid()
        killed.append(pid)
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_victim)
    killer.start()
    result = hprofkit.batch(histogram_or_hang, inputs, jobs=2)
    killer.join()
    rows = {row.input: row for row in result.rows}
    assert [row.input for row in result.rows] == inputs
    assert rows[victim.path].error == "worker died: signal 9 (SIGKILL)"
    assert rows[victim.path].worker == f"pid {killed[0]}"
    assert [row.input for row in result.failed] == [victim.path]
    for path in good:
        assert rows[path].value == hprofkit.tasks.histogram(path)


WORKER_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
import hprofkit
from batch_tasks import histogram_or_hang
def done(n, total):
    print("done", n, flush=True)
try:
    hprofkit.batch(histogram_or_hang, {inputs!r}, jobs={jobs}, progress=done)
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr)
    sys.exit(130)
"""


def start_batch_script(tmp_path, inputs, jobs: int) -> subprocess.Popen:
    """A script running a batch in a process group of its own (as a shell's foreground job); it
    prints "done N" as results arrive."""
    script = WORKER_SCRIPT.format(tests=str(TESTS), inputs=[str(p) for p in inputs], jobs=jobs)
    return subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def descendants(pid: int) -> set[int]:
    """Every process below pid (children, theirs...), from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def sleeping(pid: int) -> bool:
    """Whether the kernel says the process waits (state S: blocked in a read, a wait...)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "S"
    except OSError:
        return True  # gone


def kill_left(fds: list[int], pids: list[int]) -> None:
    """Cleanup for a failing run: kills what is left and closes the pidfds."""
    for fd, pid in zip(fds, pids):
        if not wait_exit(fd, 0):
            os.kill(pid, signal.SIGKILL)
        os.close(fd)


def test_ctrl_c_stops_the_workers_without_a_traceback(tmp_path, victim):
    """SIGINT to the batch's process group (a terminal's Ctrl-C) while one worker runs a task and
    the others wait for work: the caller stops with one line, no worker prints a
    KeyboardInterrupt traceback (the issue's report: an idle worker did), none is left running."""
    good = [dump_path("mat__oracle_jdk8_05_x64.hprof"), dump_path("leakcanary__leak_service_binder.hprof")]
    proc = start_batch_script(tmp_path, [*good, victim.path], jobs=3)
    pid = victim.read_pid()
    assert [proc.stdout.readline(), proc.stdout.readline()] == ["done 1\n", "done 2\n"]
    below = descendants(proc.pid)
    fds, pids = [], []
    for child in below:
        try:
            fds.append(pidfd(child))
            pids.append(child)
        except ProcessLookupError:
            pass
    try:
        assert pid in below
        while not all(sleeping(child) for child in below):  # the others idle: blocked waiting for work
            select.select([], [], [], 0.01)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 130 and stderr == "interrupted\n"
        assert all(wait_exit(fd) for fd in fds), "a worker outlived the batch"
    finally:
        kill_left(fds, pids)


def test_a_killed_caller_leaves_no_worker(tmp_path, victim):
    """The caller SIGKILLed mid-batch (nothing of it runs again): every process it started ends
    with it (the issue: the forkserver and the workers were left orphaned)."""
    proc = start_batch_script(tmp_path, [victim.path], jobs=1)
    pid = victim.read_pid()
    pids = sorted(descendants(proc.pid))
    fds = [pidfd(child) for child in pids]
    try:
        assert pid in pids
        proc.kill()
        proc.communicate(timeout=300)
        assert all(wait_exit(fd) for fd in fds), "a process of the batch outlived its caller"
    finally:
        kill_left(fds, pids)


def test_a_script_without_a_main_guard_fails_its_rows_not_the_machine(tmp_path):
    """Workers import the caller's main script (as multiprocessing's spawn does): one that calls
    batch() unguarded must not start workers without end; each row says its worker failed."""
    script = tmp_path / "noguard.py"
    script.write_text("import os, hprofkit\n"
                      "r = hprofkit.batch(os.path.getsize, ['a', 'b'], jobs=1, progress=False)\n"
                      "print([row.error for row in r.rows])\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout == "['worker died: exit status 1', 'worker died: exit status 1']\n"
    # One error per worker (3.13's tracebacks also show the raise's source line, message included).
    assert proc.stderr.count("RuntimeError: hprofkit.batch started while a batch worker imports the main module: "
                             "guard the script's batch call with `if __name__ == '__main__':`") == 2


# ---- inputs that are not regular files, outputs that collide (#19) ----------------------------------

def run_cli_session(*args: str, cwd=None):
    """The CLI in a session of its own, killed whole (workers included) if it hangs."""
    proc = subprocess.Popen([sys.executable, "-m", "hprofkit", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode, out, err


@pytest.mark.parametrize("task", ["encode", "decode", "stats", "leaks"])
def test_a_fifo_input_is_refused_at_once(tmp_path, task):
    """A FIFO without a writer is one failed row, the other inputs are processed, and the command
    ends (it used to wait for a writer for ever)."""
    fifo = tmp_path / "pipe.hprof"
    os.mkfifo(fifo)
    good = tmp_path / "good.hprof"
    shutil.copyfile(dump_path("mat__oracle_jdk8_05_x64.hprof"), good)
    if task == "decode":
        hprofkit.encode(good, tmp_path / "good.hpk")
        good = tmp_path / "good.hpk"
    code, out, err = run_cli_session("batch", task, str(fifo), str(good), "--output-dir", str(tmp_path / "out"),
                                     "--out", str(tmp_path / "result.json"))
    assert code == 1 and err.endswith("hprofkit: error: 1 of 2 inputs failed\n")
    rows = json.loads((tmp_path / "result.json").read_text())["rows"]
    assert rows[0]["error"].startswith("FormatError: not an HPROF file: ") and "is a FIFO" in rows[0]["error"]
    assert rows[1]["ok"]


def test_diff_refuses_a_fifo_at_once(tmp_path):
    fifo = tmp_path / "pipe.hprof"
    os.mkfifo(fifo)
    dump = str(dump_path("mat__oracle_jdk8_05_x64.hprof"))
    for a, b in ((dump, str(fifo)), (str(fifo), dump)):
        code, out, err = run_cli_session("diff", a, b)
        assert code == 1 and out == ""
        assert err == (f"hprofkit: error: not an HPROF file: {fifo} is a FIFO, not a regular file (stream it "
                       f"into encode/convert with -i -, or save it to a file first)\n")


def test_two_inputs_of_one_name_write_two_outputs(tmp_path):
    """The issue's report: a/app.hprof and b/app.hprof into one --output-dir kept one app.hpk."""
    sources = {"a": dump_path("mat__oracle_jdk8_05_x64.hprof"), "b": dump_path("leakcanary__leak_service_binder.hprof")}
    for folder, source in sources.items():
        (tmp_path / folder).mkdir()
        shutil.copyfile(source, tmp_path / folder / "app.hprof")
    code, out, err = run_cli_session("batch", "encode", "a/app.hprof", "b/app.hprof", "--output-dir", "out",
                                     cwd=tmp_path)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a-app.hpk", "b-app.hpk"]
    for folder, source in sources.items():  # each output names its input, and holds its encoding
        assert f"  {folder}/app.hprof -> {tmp_path}/out/{folder}-app.hpk (" in out
        hprofkit.encode(source, tmp_path / "one.hpk", threads=1)
        assert (tmp_path / "out" / f"{folder}-app.hpk").read_bytes() == (tmp_path / "one.hpk").read_bytes()
    # A file given twice, or a plain and a gzipped copy beside it, are told apart or refused before any work.
    shutil.copyfile(sources["a"], tmp_path / "a" / "app.hprof.gz")  # (not gzipped: only the name counts)
    result = hprofkit.batch("encode", [tmp_path / "a/app.hprof", tmp_path / "a/app.hprof.gz"], jobs=1,
                            output_dir=tmp_path / "twins")
    assert sorted(p.name for p in (tmp_path / "twins").iterdir()) == ["app.hprof.gz.hpk", "app.hprof.hpk"]
    assert [row.value["output"] for row in result.rows] == [str(tmp_path / "twins" / "app.hprof.hpk"),
                                                            str(tmp_path / "twins" / "app.hprof.gz.hpk")]
    with pytest.raises(ValueError, match="would both write"):
        hprofkit.batch("encode", [tmp_path / "a/app.hprof", tmp_path / "a" / ".." / "a/app.hprof"],
                       output_dir=tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_a_decode_output_never_replaces_an_input(tmp_path):
    """decode app.hpk beside app.hprof, both inputs: app.hprof is not replaced while it is read
    (the outputs are told apart); a pack named app.hprof is refused before any work."""
    shutil.copyfile(dump_path("mat__oracle_jdk8_05_x64.hprof"), tmp_path / "app.hprof")
    hprofkit.encode(tmp_path / "app.hprof", tmp_path / "app.hpk", strip="none")  # lossless
    before = (tmp_path / "app.hprof").read_bytes()
    result = hprofkit.batch("decode", [tmp_path / "app.hpk", tmp_path / "app.hprof"], jobs=2)
    assert result.rows[0].value["output"] == str(tmp_path / "app.hpk.hprof")
    assert (tmp_path / "app.hpk.hprof").read_bytes() == before
    assert (tmp_path / "app.hprof").read_bytes() == before
    assert result.rows[1].error.startswith("FormatError: ")  # a dump, not a pack
    (tmp_path / "pack").mkdir()
    os.rename(tmp_path / "app.hpk", tmp_path / "pack" / "app.hprof")
    with pytest.raises(ValueError, match="is the input"):
        hprofkit.batch("decode", [tmp_path / "pack" / "app.hprof"])


# ---- import hprofkit stays light (#22) --------------------------------------------------------------

def test_import_hprofkit_loads_at_most_60_modules():
    """`import hprofkit` in a fresh interpreter: what a call needs is imported when it is called (the
    pool, Dask, multiprocessing, sockets and logging when a batch runs)."""
    code = ("import sys; before = set(sys.modules); import hprofkit; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert len(loaded) <= 60, (len(loaded), loaded)
    assert not {"multiprocessing", "socket", "logging", "concurrent.futures"} & set(loaded)


def test_cli_summary_shows_each_input_on_one_line(tmp_path):
    """#30: an input named with a newline split its line of the summary (a failure's and an
    encode's); names are shown with Python's escapes, one line each."""
    good = tmp_path / "good\nname.hprof"
    shutil.copy(dump_path("leakcanary__leak_service_binder.hprof"), good)
    bad = tmp_path / "bad\x1b[2Jname.hprof"
    bad.write_bytes(b"not a dump\n")
    proc = run_cli("stats", str(good), str(bad), "--jobs", "1")
    assert proc.returncode == 1
    failed = [line for line in proc.stdout.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith(f"  FAILED {tmp_path}/bad\\x1b[2Jname.hprof: ")
    assert "\x1b" not in proc.stdout
    out = tmp_path / "packs"
    proc = run_cli("encode", str(good), "--jobs", "1", "--output-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if " -> " in line]
    assert line.startswith(f"  {tmp_path}/good\\nname.hprof -> {out}/good\\nname.")
