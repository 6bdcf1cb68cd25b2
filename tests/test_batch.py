"""hprofkit.batch over the shared dumps (plus broken ones made here): the default process pool and a
real Dask cluster (distributed.LocalCluster: worker processes behind a scheduler address) give the
same rows and aggregates; one bad dump is one error row; the CLI drives both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from distributed import Client, LocalCluster

import hprofkit
from conftest import INVENTORY, dump_path
from hprofkit.batching import BatchResult

ALL_DUMPS = [dump_path(e["file"]) for e in INVENTORY]


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
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
    assert remote.to_json() == local.to_json()
    # The values are what the single-dump API gives, and the totals add them up.
    for row in local.rows:
        if row.ok:
            stats = hprofkit.stats(row.input).to_dict()
            assert row.value == (stats if task == "stats" else
                                 [[h["class"], h["instances"], h["shallow_bytes"]] for h in stats["histogram"]])
    strings = [c for c in local.histogram if c.name == "java.lang.String"]
    want = [(h["instances"], h["shallow_bytes"]) for row in local.rows if row.ok
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


def test_result_to_parquet(tmp_path, inputs):
    result = hprofkit.batch("histogram", inputs[:3], jobs=1)
    result.to_parquet(tmp_path / "out")
    rows = pq.read_table(tmp_path / "out" / "rows.parquet").to_pylist()
    assert [json.loads(r["value"]) for r in rows] == [r.value for r in result.rows]
    histogram = pq.read_table(tmp_path / "out" / "histogram.parquet").to_pylist()
    assert histogram == [vars(c) for c in result.histogram]


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
    assert json.loads(local.read_text()) == json.loads(remote.read_text())
    data = json.loads(local.read_text())
    assert [r["input"] for r in data["rows"]] == paths and [r["ok"] for r in data["rows"]] == [True] * 4 + [False]
    proc = run_cli("histogram", *paths[:2], "--jobs", "1")
    assert proc.returncode == 0 and proc.stdout.startswith("histogram: 2 inputs, 2 ok, 0 failed")
    assert "java.lang.String" in proc.stdout


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
