"""Batches: one task over many dumps, on this machine or on a Dask cluster.

    result = hprofkit.batch("leaks", paths)                       # a local process pool
    result = hprofkit.batch("leaks", paths, executor=client)      # a distributed.Client: the same batch
    for group in result.leak_groups: print(group.dumps, group.fingerprint)

Each worker reduces one dump to a small summary (a histogram, leak fingerprints, what an encode wrote),
never a heap object, and the caller aggregates: the pattern fleets use (KOOM, LeakCanary's fingerprints,
Perfetto's batch trace processor).  One bad dump is one failed row; the batch goes on."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from . import tasks as _tasks
from ._classnames import stable_name

# Light to import (import hprofkit loads this module): the pool, Dask, pyarrow load when a batch runs.

__all__ = ["batch", "BatchResult", "BatchRow", "LeakGroup", "ClassTotal", "TASKS"]

TASKS = tuple(_tasks.BY_NAME)
NAMED_TASKS = ("stats", "histogram", "leaks", "report")  # the tasks that read a heap's names (and take heap options, a mapping)


@dataclass(frozen=True)
class BatchRow:
    """One input: ``input`` as given, ``ok``, ``error`` ("TruncatedError: ...", "worker died: signal 9
    (SIGKILL)", or None), the task's ``value`` (None when it failed) and the ``worker`` that ran it
    (a Dask worker's address, or "pid N" of a local worker; not compared: the same batch on two
    executors gives equal rows)."""
    input: Any
    ok: bool
    error: str | None
    value: Any
    worker: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LeakGroup:
    """Leaks of one fingerprint across the batch: how many ``dumps`` show it, their total
    ``retained_size``, the ``example`` report of the first dump (in input order) that shows it and
    its ``short_description`` (Leak.short_description: the leaking class and the suspect reference)."""
    fingerprint: str
    dumps: int
    retained_size: int
    example: str
    short_description: str = ""


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

    @classmethod
    def from_rows(cls, task: str, rows: Iterable[BatchRow]) -> BatchResult:
        """The result of rows gathered from batch(..., wait=False)'s futures, aggregates included."""
        rows = list(rows)
        result = cls(task, rows)
        if task in ("stats", "histogram"):
            result.histogram = _histogram(task, rows)
        elif task == "leaks":
            result.leak_groups = _leak_groups(rows)
        return result

    @property
    def failed(self) -> list[BatchRow]:
        """The rows that failed; each names its error and the worker it failed on."""
        return [row for row in self.rows if not row.ok]

    def _repr_html_(self) -> str:
        """The inputs, failures and leak groups or histogram (Jupyter)."""
        from ._html import batch_result
        return batch_result(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "rows": [{"input": _input_text(r.input), "ok": r.ok, "error": r.error, "value": r.value,
                      "worker": r.worker} for r in self.rows],
            "histogram": [{"class": c.name, "dumps": c.dumps, "instances": c.instances, "shallow_size": c.shallow_bytes}
                          for c in self.histogram],
            "leak_groups": [vars(g) for g in self.leak_groups],
        }

    def to_json(self, **dumps_options: Any) -> str:
        """The result as JSON (values must be JSON data: the built-in tasks' are)."""
        import json
        return json.dumps(self.to_dict(), **dumps_options)

    def to_tables(self) -> dict[str, Any]:
        """{"rows", "histogram", "leak_groups"} as pyarrow Tables (a row's value as JSON text)."""
        import json
        from ._tables import require
        pa = require("pyarrow", "tables", "BatchResult.to_tables()")
        rows = pa.table({
            "input": pa.array([_input_text(r.input) for r in self.rows], pa.string()),
            "ok": pa.array([r.ok for r in self.rows], pa.bool_()),
            "error": pa.array([r.error for r in self.rows], pa.string()),
            "value": pa.array([json.dumps(r.value) if r.ok else None for r in self.rows], pa.string()),
            "worker": pa.array([r.worker for r in self.rows], pa.string()),
        })
        histogram = pa.table({
            "class": pa.array([c.name for c in self.histogram], pa.string()),
            "dumps": pa.array([c.dumps for c in self.histogram], pa.int64()),
            "instances": pa.array([c.instances for c in self.histogram], pa.int64()),
            "shallow_size": pa.array([c.shallow_bytes for c in self.histogram], pa.int64()),
        })
        groups = pa.table({
            "fingerprint": pa.array([g.fingerprint for g in self.leak_groups], pa.string()),
            "dumps": pa.array([g.dumps for g in self.leak_groups], pa.int64()),
            "retained_size": pa.array([g.retained_size for g in self.leak_groups], pa.int64()),
            "example": pa.array([g.example for g in self.leak_groups], pa.string()),
            "short_description": pa.array([g.short_description for g in self.leak_groups], pa.string()),
        })
        return {"rows": rows, "histogram": histogram, "leak_groups": groups}

    def to_parquet(self, directory: str | os.PathLike[str]) -> str:
        """Writes to_tables() as directory/{rows,histogram,leak_groups}.parquet, atomically (as
        heap.to_parquet)."""
        from ._tables import to_parquet
        return to_parquet(self.to_tables(), directory)


def _input_text(value: Any) -> str:
    return os.fsdecode(value) if isinstance(value, (str, bytes, os.PathLike)) else repr(value)


# ---- what runs on a worker ----------------------------------------------------------------------

def _worker_name() -> str:
    """The Dask worker's address, else this process's id."""
    distributed = sys.modules.get("distributed")
    if distributed is not None:
        try:
            return str(distributed.get_worker().address)
        except ValueError:  # not in a Dask worker
            pass
    return f"pid {os.getpid()}"


def _run_one(fn: Callable[..., Any], given: Any, sent: Any, options: Mapping[str, Any]) -> BatchRow:
    """Runs on a worker: never raises for a bad input, so a remote failure is a row, not a lost task."""
    try:
        return BatchRow(given, True, None, fn(sent, **options), _worker_name())
    except Exception as exc:  # noqa: BLE001 - every failure becomes the row's error
        return BatchRow(given, False, f"{type(exc).__name__}: {exc}", None, _worker_name())


# ---- aggregation ---------------------------------------------------------------------------------

def _histogram(task: str, rows: Sequence[BatchRow]) -> list[ClassTotal]:
    totals: dict[str, list[int]] = {}
    for row in rows:
        if not row.ok:
            continue
        entries = row.value["histogram"] if task == "stats" else row.value
        seen: set[str] = set()
        for entry in entries:
            name, instances, size = ((entry["class"], entry["instances"], entry["shallow_size"])
                                     if isinstance(entry, Mapping) else entry)
            name = stable_name(name)  # a lambda's name differs from run to run
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
    groups: dict[str, list[Any]] = {}  # fingerprint -> [dumps, retained, example, short description]
    for row in rows:
        if not row.ok:
            continue
        seen: set[str] = set()
        for leak in row.value:
            group = groups.setdefault(leak["fingerprint"], [0, 0, leak["report"], leak.get("short_description", "")])
            if leak["fingerprint"] not in seen:
                group[0] += 1
                seen.add(leak["fingerprint"])
            group[1] += leak["retained_size"] or 0
    out = [LeakGroup(fp, *g) for fp, g in groups.items()]
    out.sort(key=lambda g: (-g.dumps, -g.retained_size, g.fingerprint))
    return out


# ---- running -------------------------------------------------------------------------------------

def _task_function(task: str | Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    """The task's name and the function the workers run."""
    if isinstance(task, str):
        if task not in _tasks.BY_NAME:
            raise ValueError(f"unknown task {task!r}: one of {', '.join(TASKS)}, or a callable")
        return task, _tasks.BY_NAME[task]
    if not callable(task):
        raise TypeError("task must be a task name or a callable")
    return getattr(task, "__name__", None) or repr(task), task


def _absolute(value: Any, paths: bool) -> Any:
    """An input as the workers get it: paths made absolute (a worker's directory is not the
    caller's).  Built-in tasks take paths; a callable's str inputs may be anything (a URL), so
    only its pathlib paths are made absolute."""
    if isinstance(value, os.PathLike) or (paths and isinstance(value, (str, bytes))):
        if hasattr(value, "absolute"):
            return value.absolute()
        return os.path.abspath(value)
    return value


def _plan_outputs(task: str, sent: Sequence[Any], output_dir: str | None) -> list[str]:
    """encode / decode / report: the output of each input, decided before any work.  Outputs whose names
    collide (a/app.hprof and b/app.hprof into one --output-dir) are named after their paths below
    the inputs' common folder (a-app.hpk, b-app.hpk); ValueError when two inputs would still write
    one file, or an output would replace an input of the batch."""
    suffix = _tasks.OUTPUT_SUFFIX[task]
    sources = [os.fspath(path) for path in sent]
    folders = [output_dir if output_dir is not None else os.path.dirname(path) for path in sources]
    outputs = [os.path.join(folder, _tasks.output_stem(path) + suffix) for folder, path in zip(folders, sources)]
    groups: dict[str, list[int]] = {}
    for k, output in enumerate(outputs):
        groups.setdefault(output, []).append(k)
    for members in groups.values():
        if len(members) < 2:
            continue
        common = os.path.commonpath([os.path.dirname(sources[k]) for k in members])
        below = {k: os.path.relpath(sources[k], common).replace(os.sep, "-") for k in members}
        for k in members:
            outputs[k] = os.path.join(folders[k], _tasks.output_stem(below[k]) + suffix)
        if len({outputs[k] for k in members}) < len(members):  # a.hprof and a.hprof.gz: keep their suffixes
            for k in members:
                outputs[k] = os.path.join(folders[k], below[k] + suffix)
    _check_outputs(sources, outputs)
    return outputs


def _check_outputs(sources: Sequence[str], outputs: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for k, output in enumerate(outputs):
        if output in seen:
            raise ValueError(f"{sources[seen[output]]} and {sources[k]} would both write {output}: "
                             f"give each input once, or rename one")
        seen[output] = k
    from ._output import same_file
    real_sources = {os.path.realpath(path): path for path in sources}
    for source, output in zip(sources, outputs):
        hit = real_sources.get(os.path.realpath(output))
        if hit is None:
            hit = next((path for path in sources if same_file(path, output)), None)
        if hit is not None:
            raise ValueError(f"the output of {source}, {output}, is the input {hit}: give output_dir")


def _task_key(name: str, given: Any) -> str:
    """A Dask key naming the task and the input: hprofkit-leaks-app.hprof-<unique hex>.  The
    dashboard groups tasks by the key's leading words (distributed's key_split): "hprofkit-leaks",
    as long as the input's name is not one word of letters; its dashes become "_" for that."""
    import uuid
    label = os.path.basename(os.fspath(given)) if isinstance(given, (str, os.PathLike)) else type(given).__name__
    return f"hprofkit-{name}-{label.replace('-', '_') or 'input'}-{uuid.uuid4().hex}"


def _dask_client(executor: Any) -> Any:
    """The distributed.Client that `executor` is, or None."""
    distributed = sys.modules.get("distributed")
    return executor if distributed is not None and isinstance(executor, distributed.Client) else None


def _progress_of(progress: bool | Callable[[int, int], object] | None) -> Any:
    """A callable progress(done, total), or None: None shows a line on a terminal or in a notebook."""
    if callable(progress):
        return progress
    if progress is False:
        return None
    from ._progress import Progress, in_notebook
    return Progress("batch", force=bool(progress) or in_notebook(), unit="dumps")


class _Submitter:
    """Sends tasks to the executor batch() was given: a local WorkerPool (None), a Dask Client (or
    a scheduler address, for which a Client is opened), or any concurrent.futures.Executor."""

    def __init__(self, executor: Any, jobs: int | None, inputs: int) -> None:
        self.owned_client = isinstance(executor, str)
        if self.owned_client:
            try:
                from distributed import Client
            except ImportError:
                raise ValueError("a scheduler address needs distributed: pip install 'hprofkit[dask]'") from None
            executor = Client(executor)
        self.pool: Any = None
        self.client = _dask_client(executor)
        if executor is None:
            from ._pool import WorkerPool
            self.pool = WorkerPool(min(jobs or os.cpu_count() or 1, max(1, inputs)))
            self.executor: Any = self.pool
        elif self.client is not None:
            self.executor = self.client
        else:
            import concurrent.futures
            if not isinstance(executor, concurrent.futures.Executor):
                get_executor = getattr(executor, "get_executor", None)
                if get_executor is None:
                    raise TypeError(f"executor must be a concurrent.futures.Executor, a distributed.Client or "
                                    f"a scheduler address, not {type(executor).__name__}")
                executor = get_executor()
            self.executor = executor

    def submit(self, name: str, fn: Callable[..., Any], given: Any, sent: Any, options: Mapping[str, Any]) -> Any:
        if self.client is not None:
            return self.client.submit(_run_one, fn, given, sent, options, key=_task_key(name, given), pure=False)
        return self.executor.submit(_run_one, fn, given, sent, options)

    def as_completed(self, futures: list[Any]) -> Iterable[Any]:
        if self.client is not None:
            from distributed import as_completed
            return as_completed(futures)
        import concurrent.futures
        return concurrent.futures.as_completed(futures)

    def stop(self, futures: list[Any]) -> None:
        """Cancels what has not run; the local pool also stops the tasks that run."""
        if self.pool is not None:
            self.pool.terminate()
        elif self.client is not None:
            self.client.cancel(futures)
        else:
            for future in futures:
                future.cancel()

    def close(self, wait: bool) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=wait)
        if self.owned_client and wait:
            self.client.close()


def _failure(future: Any, exc: BaseException, given: Any) -> BatchRow:
    """The row of a task that never answered: its worker died (local pool: WorkerDied; Dask:
    KilledWorker after its retries), it was cancelled, or its value did not pickle."""
    from ._pool import WorkerDied
    if isinstance(exc, WorkerDied):
        return BatchRow(given, False, str(exc), None, f"pid {exc.pid}")
    last = getattr(exc, "last_worker", None)
    return BatchRow(given, False, f"{type(exc).__name__}: {exc}", None, getattr(last, "address", None))


def batch(task: str | Callable[[Any], Any], inputs: Iterable[Any], executor: Any = None, *,
          jobs: int | None = None, output_dir: str | os.PathLike[str] | None = None,
          encode_options: Mapping[str, Any] | None = None, heap_options: Mapping[str, Any] | None = None,
          progress: bool | Callable[[int, int], object] | None = None, wait: bool = True,
          mapping: Any = None) -> Any:
    """Runs `task` over every input and gathers a BatchResult.

    task: "stats" (Stats.to_dict()), "histogram" ([[class, instances, shallow_size]]), "leaks"
      ([{fingerprint, short_description, retained_size, report}] from heap.find_leaks()), "encode" /
      "decode" (writes NAME.hpk / NAME.hprof into output_dir, by default beside the input; value
      {output, consumed, written, unfinished}: unfinished is None, or Result.unfinished as a dict
      when the dump was cut short), "report" (writes NAME.html, hprofkit.report's page; value
      {output, written, suspects, leaks, leak_groups}), or any picklable callable taking an input and returning a picklable value.  The named
      tasks are the functions of hprofkit.tasks.  Inputs that are not regular files (FIFOs,
      devices) fail at once, as rows.
    inputs: paths (as given in the rows; sent to the workers as absolute paths) or, for a callable,
      anything it takes.  Two inputs never write one output: colliding names are made unique from
      the inputs' paths (a/app.hprof, b/app.hprof -> a-app.hpk, b-app.hpk), or ValueError before
      any work; each row's value names its output.
    encode_options: hprofkit.encode's options of task "encode".  heap_options: how the heap tasks
      read each dump: heap_dump (stats, histogram, leaks, report) and semantics (leaks, report), as
      open_heap takes them; a mapping there is as mapping= (the command line's heap options carry one).
    executor: None for a local pool of `jobs` worker processes (default: one per CPU; a worker that
      dies fails its own input only); a distributed.Client or a scheduler address
      ("tcp://host:8786": a Client is opened for the batch), its tasks keyed
      "hprofkit-TASK-NAME-..."; or any concurrent.futures.Executor (not shut down here).
    progress: None (default) draws a line on a terminal's stderr or in a notebook; True always,
      False never; or a callable progress(done, total), called in the caller as results arrive.
    wait: False returns at once the futures (one per input, in input order), each resolving to
      the input's BatchRow; BatchResult.from_rows(task, rows) aggregates the rows gathered.
    mapping: the ProGuard/R8 mapping of obfuscated dumps (a hprofkit.Mapping or a mapping.txt path)
      for stats, histogram, leaks and report (clear names; leaks group across releases), or a callable
      input -> mapping (or None) for dumps of several builds; a callable task gets it as
      mapping=.  A worker reads a mapping file once."""
    name, fn = _task_function(task)
    builtin = isinstance(task, str)
    inputs = list(inputs)
    sent = [_absolute(value, builtin) for value in inputs]
    read_options = dict(heap_options or {})
    if read_options.get("mapping") is not None:
        if mapping is not None:
            raise ValueError("a mapping given twice: as mapping= and in heap_options")
        mapping = read_options["mapping"]
    read_options.pop("mapping", None)
    options: dict[str, Any] = {}
    if builtin and name == "encode":
        options = dict(encode_options or {})
    elif builtin and name in NAMED_TASKS:
        options = {k: v for k, v in read_options.items() if name in ("leaks", "report") or k == "heap_dump"}
    if builtin and name in _tasks.OUTPUT_SUFFIX:
        folder = os.path.abspath(os.fspath(output_dir)) if output_dir is not None else None
        outputs = _plan_outputs(name, sent, folder)  # the tasks make the folder (on a cluster, the workers')
        per_input = [{**options, "output": output} for output in outputs]
    else:
        per_input = [options] * len(inputs)
    if mapping is not None:
        if builtin and name not in NAMED_TASKS:
            raise ValueError(f"mapping: the {name} task reads no names ({', '.join(NAMED_TASKS)} do)")
        per_input = [{**opts, "mapping": _mapping_to_send(mapping(given) if callable(mapping) else mapping)}
                     for given, opts in zip(inputs, per_input)]
    submitter = _Submitter(executor, jobs, len(inputs))
    futures: list[Any] = []
    try:
        futures = [submitter.submit(name, fn, given, path, opts) for given, path, opts in zip(inputs, sent, per_input)]
        if not wait:
            return futures
        rows = _gather(submitter, futures, inputs, _progress_of(progress))
        # A callable's values are its own: aggregated only for the named tasks (a callable may be called "stats").
        return BatchResult.from_rows(name, rows) if builtin else BatchResult(name, rows)
    except BaseException:
        submitter.stop(futures)
        raise
    finally:
        submitter.close(wait)


def _mapping_to_send(mapping: Any) -> Any:
    """What a worker gets of a mapping: the absolute path of a mapping file (read once per
    worker), else the Mapping itself (pickled as its text)."""
    if isinstance(mapping, (str, os.PathLike)):
        return os.path.abspath(os.fspath(mapping))
    from ._mapping import Mapping
    if isinstance(mapping, Mapping) and mapping.path is not None and os.path.isfile(mapping.path):
        return os.path.abspath(mapping.path)
    if mapping is not None and not isinstance(mapping, Mapping):
        raise TypeError(f"mapping must be a Mapping, a path or a callable input -> either, "
                        f"not {type(mapping).__name__}")
    return mapping


def _gather(submitter: _Submitter, futures: list[Any], inputs: list[Any], progress: Any) -> list[BatchRow]:
    index = {id(future): k for k, future in enumerate(futures)}
    rows: list[BatchRow | None] = [None] * len(futures)
    try:
        for done, future in enumerate(submitter.as_completed(futures), 1):
            k = index[id(future)]
            try:
                rows[k] = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker lost, a value that did not pickle...
                rows[k] = _failure(future, exc, inputs[k])
            if progress is not None:
                progress(done, len(futures))
    finally:
        if progress is not None and hasattr(progress, "close"):
            progress.close()
    return [row for row in rows if row is not None]
