"""Batches: one task over many dumps, on this machine or on a Dask cluster.

    result = hprofkit.batch("leaks", paths)                       # a local process pool
    result = hprofkit.batch("leaks", paths, executor=client)      # a distributed.Client: the same batch
    for group in result.leak_groups: print(group.dumps, group.fingerprint)

Each worker reduces one dump to a small summary (a histogram, leak fingerprints, what an encode wrote),
never a heap object, and the caller aggregates: the pattern fleets use (KOOM, LeakCanary's fingerprints,
Perfetto's batch trace processor).  One bad dump is one failed row; the batch goes on."""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["batch", "BatchResult", "BatchRow", "LeakGroup", "ClassTotal", "TASKS"]

TASKS = ("stats", "leaks", "encode", "decode", "histogram")


@dataclass(frozen=True)
class BatchRow:
    """One input: ``input`` as given, ``ok``, ``error`` ("TruncatedError: ..." or None) and the task's
    ``value`` (None when it failed)."""
    input: Any
    ok: bool
    error: str | None
    value: Any


@dataclass(frozen=True)
class LeakGroup:
    """Leaks of one fingerprint across the batch: how many ``dumps`` show it, their total
    ``retained_size`` and the ``example`` report of the first dump (in input order) that shows it."""
    fingerprint: str
    dumps: int
    retained_size: int
    example: str


@dataclass(frozen=True)
class ClassTotal:
    """A class across the batch: in how many ``dumps`` it has objects, and their totals."""
    name: str
    dumps: int
    instances: int
    shallow_bytes: int


@dataclass
class BatchResult:
    """What a batch gives back: ``rows`` (one per input, in input order) and the aggregates:
    ``histogram`` (tasks "stats" and "histogram": classes by name, heaviest first) and
    ``leak_groups`` (task "leaks": by fingerprint, most widespread first)."""
    task: str
    rows: list[BatchRow]
    histogram: list[ClassTotal] = field(default_factory=list)
    leak_groups: list[LeakGroup] = field(default_factory=list)

    @property
    def failed(self) -> list[BatchRow]:
        return [row for row in self.rows if not row.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "rows": [{"input": _input_text(r.input), "ok": r.ok, "error": r.error, "value": r.value}
                     for r in self.rows],
            "histogram": [vars(c) for c in self.histogram],
            "leak_groups": [vars(g) for g in self.leak_groups],
        }

    def to_json(self, **dumps_options: Any) -> str:
        """The result as JSON (values must be JSON data: the built-in tasks' are)."""
        return json.dumps(self.to_dict(), **dumps_options)

    def to_tables(self) -> dict[str, Any]:
        """{"rows", "histogram", "leak_groups"} as pyarrow Tables (a row's value as JSON text)."""
        from ._tables import require
        pa = require("pyarrow", "tables", "BatchResult.to_tables()")
        rows = pa.table({
            "input": pa.array([_input_text(r.input) for r in self.rows], pa.string()),
            "ok": pa.array([r.ok for r in self.rows], pa.bool_()),
            "error": pa.array([r.error for r in self.rows], pa.string()),
            "value": pa.array([json.dumps(r.value) if r.ok else None for r in self.rows], pa.string()),
        })
        histogram = pa.table({
            "name": pa.array([c.name for c in self.histogram], pa.string()),
            "dumps": pa.array([c.dumps for c in self.histogram], pa.int64()),
            "instances": pa.array([c.instances for c in self.histogram], pa.int64()),
            "shallow_bytes": pa.array([c.shallow_bytes for c in self.histogram], pa.int64()),
        })
        groups = pa.table({
            "fingerprint": pa.array([g.fingerprint for g in self.leak_groups], pa.string()),
            "dumps": pa.array([g.dumps for g in self.leak_groups], pa.int64()),
            "retained_size": pa.array([g.retained_size for g in self.leak_groups], pa.int64()),
            "example": pa.array([g.example for g in self.leak_groups], pa.string()),
        })
        return {"rows": rows, "histogram": histogram, "leak_groups": groups}

    def to_parquet(self, directory: str | os.PathLike[str]) -> str:
        """Writes to_tables() as directory/{rows,histogram,leak_groups}.parquet, atomically (as
        heap.to_parquet)."""
        from ._tables import to_parquet
        return to_parquet(self.to_tables(), directory)


def _input_text(value: Any) -> str:
    return os.fsdecode(value) if isinstance(value, (str, bytes, os.PathLike)) else repr(value)


# ---- the built-in tasks (module-level: workers unpickle them by name) ----------------------------

def _histogram_of(stats: Any) -> list[list[Any]]:
    return [[row.name, row.instances, row.shallow_bytes] for row in stats.histogram]


def _task_stats(path: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    from ._dump import stats
    return stats(path).to_dict()


def _task_histogram(path: Any, options: Mapping[str, Any]) -> list[list[Any]]:
    from ._dump import stats
    return _histogram_of(stats(path))


def _task_leaks(path: Any, options: Mapping[str, Any]) -> list[dict[str, Any]]:
    from ._heap import open_heap
    with open_heap(path) as heap:
        return [{"fingerprint": leak.fingerprint, "retained_size": leak.retained_size, "report": str(leak)}
                for leak in heap.find_leaks()]


def _output_path(path: Any, options: Mapping[str, Any], suffix: str) -> str:
    source = os.fspath(path)
    base = os.path.basename(source)
    for old in (".gz", ".bz2", ".hprof", ".hpk", ".mini"):
        if base.endswith(old):
            base = base[: -len(old)]
    directory = options.get("output_dir") or os.path.dirname(os.path.abspath(source))
    os.makedirs(directory, exist_ok=True)  # on the worker: a cluster's output_dir is the workers' path
    return os.path.join(os.fspath(directory), base + suffix)


def _file_result(result: Any, output: str) -> dict[str, Any]:
    unfinished = asdict(result.unfinished) if result.unfinished else None
    return {"output": output, "consumed": result.consumed, "written": result.output, "unfinished": unfinished}


def _task_encode(path: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    from ._files import encode
    output = _output_path(path, options, ".hpk")
    # One thread: the batch already runs a dump per worker.
    return _file_result(encode(path, output, threads=1, **options.get("encode", {})), output)


def _task_decode(path: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    from ._files import decode
    output = _output_path(path, options, ".hprof")
    if os.path.abspath(output) == os.path.abspath(os.fspath(path)):
        raise ValueError(f"decoding {path} would overwrite it: give output_dir")
    return _file_result(decode(path, output, threads=1), output)


_BUILTIN: dict[str, Callable[[Any, Mapping[str, Any]], Any]] = {
    "stats": _task_stats, "histogram": _task_histogram, "leaks": _task_leaks,
    "encode": _task_encode, "decode": _task_decode,
}


def _run_one(task: str | Callable[[Any], Any], path: Any, options: Mapping[str, Any]) -> tuple[bool, str | None, Any]:
    """Runs on a worker: never raises for a bad input, so a remote failure is a row, not a lost task."""
    try:
        value = _BUILTIN[task](path, options) if isinstance(task, str) else task(path)
        return True, None, value
    except Exception as exc:  # noqa: BLE001 - every failure becomes the row's error
        return False, f"{type(exc).__name__}: {exc}", None


# ---- aggregation ---------------------------------------------------------------------------------

def _histogram(task: str, rows: Sequence[BatchRow]) -> list[ClassTotal]:
    totals: dict[str, list[int]] = {}
    for row in rows:
        if not row.ok:
            continue
        entries = row.value["histogram"] if task == "stats" else row.value
        seen: set[str] = set()
        for entry in entries:
            name, instances, size = ((entry["class"], entry["instances"], entry["shallow_bytes"])
                                     if isinstance(entry, Mapping) else entry)
            total = totals.setdefault(name, [0, 0, 0])
            if name not in seen:  # a name twice in one dump (two loaders) is one dump
                total[0] += 1
                seen.add(name)
            total[1] += instances
            total[2] += size
    out = [ClassTotal(name, *t) for name, t in totals.items()]
    out.sort(key=lambda c: (-c.shallow_bytes, -c.instances, c.name))
    return out


def _leak_groups(rows: Sequence[BatchRow]) -> list[LeakGroup]:
    groups: dict[str, list[Any]] = {}  # fingerprint -> [dumps, retained, example]
    for row in rows:
        if not row.ok:
            continue
        seen: set[str] = set()
        for leak in row.value:
            group = groups.setdefault(leak["fingerprint"], [0, 0, leak["report"]])
            if leak["fingerprint"] not in seen:
                group[0] += 1
                seen.add(leak["fingerprint"])
            group[1] += leak["retained_size"] or 0
    out = [LeakGroup(fp, *g) for fp, g in groups.items()]
    out.sort(key=lambda g: (-g.dumps, -g.retained_size, g.fingerprint))
    return out


# ---- running -------------------------------------------------------------------------------------

def _default_executor(jobs: int | None, inputs: int) -> concurrent.futures.Executor:
    workers = max(1, min(jobs or os.cpu_count() or 1, inputs))
    # forkserver: workers start from a clean process, not a fork of a caller with threads.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context)


def _as_executor(executor: Any) -> concurrent.futures.Executor:
    """A concurrent.futures.Executor as is; a distributed.Client through client.get_executor()."""
    if isinstance(executor, concurrent.futures.Executor):
        return executor
    get_executor = getattr(executor, "get_executor", None)
    if get_executor is not None:
        return get_executor()
    raise TypeError(f"executor must be a concurrent.futures.Executor or a distributed.Client, "
                    f"not {type(executor).__name__}")


def batch(task: str | Callable[[Any], Any], inputs: Iterable[Any], executor: Any = None, *,
          jobs: int | None = None, output_dir: str | os.PathLike[str] | None = None,
          encode_options: Mapping[str, Any] | None = None,
          progress: Callable[[int, int], object] | None = None) -> BatchResult:
    """Runs `task` over every input and gathers a BatchResult.

    task: "stats" (Stats.to_dict()), "histogram" ([[class, instances, shallow_bytes]]), "leaks"
      ([{fingerprint, retained_size, report}] from heap.find_leaks()), "encode" / "decode" (writes
      NAME.hpk / NAME.hprof into output_dir, by default beside the input; value {output, consumed,
      written, unfinished}: unfinished is None, or Result.unfinished as a dict when the dump was cut
      short), or any picklable callable taking an input and returning a picklable value.
    inputs: paths (as given in the rows) or, for a callable, anything it takes.
    executor: None for a local process pool of `jobs` workers (default: one per CPU); a
      distributed.Client or any concurrent.futures.Executor (not shut down here).
    progress: called as progress(done, total) in the caller as results arrive."""
    if isinstance(task, str) and task not in _BUILTIN:
        raise ValueError(f"unknown task {task!r}: one of {', '.join(TASKS)}, or a callable")
    if not isinstance(task, str) and not callable(task):
        raise TypeError("task must be a task name or a callable")
    inputs = list(inputs)
    options: dict[str, Any] = {}
    if output_dir is not None:
        options["output_dir"] = os.fspath(output_dir)
    if encode_options:
        options["encode"] = dict(encode_options)
    owned = executor is None
    pool = _default_executor(jobs, len(inputs)) if owned else _as_executor(executor)
    outcomes: list[tuple[bool, str | None, Any] | None] = [None] * len(inputs)
    try:
        futures = {pool.submit(_run_one, task, path, options): k for k, path in enumerate(inputs)}
        done = 0
        for future in concurrent.futures.as_completed(futures):
            k = futures[future]
            try:
                outcomes[k] = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker lost, an unpicklable value...
                outcomes[k] = (False, f"{type(exc).__name__}: {exc}", None)
            done += 1
            if progress is not None:
                progress(done, len(inputs))
    finally:
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)
    rows = [BatchRow(path, *outcome) for path, outcome in zip(inputs, outcomes) if outcome is not None]
    name = task if isinstance(task, str) else getattr(task, "__name__", repr(task))
    result = BatchResult(name, rows)
    if task in ("stats", "histogram"):
        result.histogram = _histogram(task, rows)
    elif task == "leaks":
        result.leak_groups = _leak_groups(rows)
    return result
