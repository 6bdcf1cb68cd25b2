"""Batches and tables: dumps per second for a task over N copies of a HeapGen dump, with one local
worker, with all of them, through the standard library's ProcessPoolExecutor (the peer: the pool
batch() used before its own) and through a Dask LocalCluster; the same over many copies of a small
dump, where the per-task cost of the pool shows; and heap.tables() build speed.

    python benchmarks/bench_batch.py [--dump FILE] [--mb 64] [--copies 8] [--task leaks]
                                     [--small-mb 1] [--small-copies 64]
                                     [--table-dump FILE] [--table-mb 256]

Without --dump (--table-dump) it writes a fresh HeapGen dump of --mb (--table-mb) MB into a
temporary folder, deleted at the end.  The copies are hard links (one page cache, as a fleet's dumps
on a warm disk).  Pool start-up is part of each local figure; the cluster's is timed apart."""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import shutil
import tempfile
import time
from pathlib import Path

import hprofkit

from _common import heapgen, timed, warm


def copies_of(dump: Path, n: int, folder: Path) -> list[Path]:
    out = []
    folder.mkdir(exist_ok=True)
    for k in range(n):
        target = folder / f"copy{k}.hprof"
        try:
            os.link(dump, target)
        except OSError:
            shutil.copyfile(dump, target)
        out.append(target)
    return out


def report(label: str, n: int, seconds: float, result: hprofkit.BatchResult) -> None:
    failed = len(result.failed)
    print(f"{label:<34}{n / seconds:>8.2f} dumps/s  ({n} in {seconds:.2f} s{f', {failed} FAILED' if failed else ''})")


def bench_pools(task: str, inputs: list[Path], size: int) -> None:
    """The local pool with one worker and with one per CPU, and the standard library's pool."""
    cpus = os.cpu_count() or 1
    print(f"task {task!r} over {len(inputs)} copies of a {size / 1e6:.1f} MB dump, {cpus} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    for jobs in sorted({1, cpus}):
        start = time.perf_counter()
        result = hprofkit.batch(task, inputs, jobs=jobs, progress=False)
        report(f"local pool, {jobs} worker(s)", len(inputs), time.perf_counter() - start, result)
    start = time.perf_counter()
    context = multiprocessing.get_context("forkserver")
    with concurrent.futures.ProcessPoolExecutor(cpus, mp_context=context) as peer:
        result = hprofkit.batch(task, inputs, executor=peer, progress=False)
    report(f"ProcessPoolExecutor, {cpus} worker(s)", len(inputs), time.perf_counter() - start, result)


def bench_batches(task: str, inputs: list[Path], size: int) -> None:
    cpus = os.cpu_count() or 1
    bench_pools(task, inputs, size)
    from distributed import Client, LocalCluster
    start = time.perf_counter()
    with LocalCluster(n_workers=cpus, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        print(f"{'LocalCluster start-up':<34}{time.perf_counter() - start:>8.2f} s")
        start = time.perf_counter()
        result = hprofkit.batch(task, inputs, executor=client, progress=False)
        report(f"LocalCluster, {cpus} worker(s)", len(inputs), time.perf_counter() - start, result)


def line(label: str, wall: float, cpu: float, size: int) -> None:
    print(f"{label:<34}{wall:>8.2f} s  {size / wall / 1e6:>6.0f} MB/s   (CPU {cpu:.2f} s, {size / cpu / 1e6:.0f} MB/s)")


def bench_tables(dump: Path) -> None:
    size = dump.stat().st_size
    warm(dump)
    import pyarrow  # noqa: F401 - imported before timing
    heap, open_wall, open_cpu = timed(lambda: hprofkit.open_heap(dump))
    with heap:
        _, lean_wall, lean_cpu = timed(lambda: heap.tables(retained=False))
        _, dom_wall, dom_cpu = timed(heap.compute_retained)
        full, full_wall, full_cpu = timed(heap.tables)
    rows = {name: table.num_rows for name, table in full.items()}
    arrow = sum(table.nbytes for table in full.values())
    print(f"tables of a {size / 1e6:.0f} MB dump: {rows['objects']:,} objects, {rows['references']:,} references, "
          f"{arrow / 1e6:.0f} MB of Arrow columns; load average {os.getloadavg()[0]:.1f}")
    line("open_heap (index build)", open_wall, open_cpu, size)
    line("tables(retained=False)", lean_wall, lean_cpu, size)
    print(f"{'dominator tree (compute_retained)':<34}{dom_wall:>8.2f} s  (CPU {dom_cpu:.2f} s)")
    line("tables() once dominators exist", full_wall, full_cpu, size)
    start = time.perf_counter()
    out = hprofkit.sql(full, "select c.name, count(*) n, sum(o.retained_size) r from objects o join classes c "
                             "on c.id = o.class_id group by 1 order by r desc limit 5")
    print(f"{'SQL: retained by class, top 5':<34}{time.perf_counter() - start:>8.2f} s  ({out.num_rows} rows)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="the dump to copy (default: a fresh HeapGen dump)")
    parser.add_argument("--mb", type=int, default=64, help="HeapGen size for the batch (MB)")
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--task", default="leaks", choices=["leaks", "stats", "histogram"])
    parser.add_argument("--small-mb", type=int, default=1, help="HeapGen size of the small dump (MB)")
    parser.add_argument("--small-copies", type=int, default=64)
    parser.add_argument("--table-dump", type=Path, help="the dump for the table build (default: HeapGen --table-mb)")
    parser.add_argument("--table-mb", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        folder = Path(tmp)
        dump = args.dump or heapgen(folder / f"heapgen-{args.mb}mb.hprof", args.mb)
        warm(dump)
        bench_batches(args.task, copies_of(dump, args.copies, folder / "big"), dump.stat().st_size)
        print()
        small = heapgen(folder / f"heapgen-{args.small_mb}mb.hprof", args.small_mb)
        bench_pools("stats", copies_of(small, args.small_copies, folder / "small"), small.stat().st_size)
        print()
        table_dump = args.table_dump or (dump if args.table_mb == args.mb else
                                         heapgen(folder / f"heapgen-{args.table_mb}mb.hprof", args.table_mb))
        bench_tables(table_dump)


if __name__ == "__main__":
    main()
