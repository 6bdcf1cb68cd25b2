"""The batch tasks as plain functions: each takes one dump (a path) and returns a small summary of
plain data (dicts, lists, numbers, strings: picklable, JSON-ready), never a heap object.

    import dask.bag as db, hprofkit.tasks
    leaks = db.from_sequence(paths).map(hprofkit.tasks.leaks).compute()

hprofkit.batch runs the same functions by name ("leaks") and turns what a function raises into the
input's error row; called directly, they raise: HprofError subclasses for a bad dump, FormatError
for an input that is not a regular file (a FIFO or a device would block or never end)."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any, Callable

__all__ = ["stats", "histogram", "leaks", "encode", "decode", "report", "output_path", "BY_NAME", "OUTPUT_SUFFIX"]

# The tasks hprofkit.batch knows by name: each function below that is decorated with @_task.
BY_NAME: dict[str, Callable[..., Any]] = {}


def _task(fn: Callable[..., Any]) -> Callable[..., Any]:
    BY_NAME[fn.__name__] = fn
    return fn


@_task
def stats(path: str | os.PathLike[str], mapping: Any = None, *, heap_dump: int | None = None) -> dict[str, Any]:
    """hprofkit.stats(path, heap_dump=...).to_dict(): record tallies, heap dumps and the class histogram
    (with a mapping: a hprofkit.Mapping or a mapping.txt path, the clear class names)."""
    from ._dump import stats as read_stats
    return read_stats(path, heap_dump=heap_dump, mapping=mapping).to_dict()


@_task
def histogram(path: str | os.PathLike[str], mapping: Any = None, *, heap_dump: int | None = None) -> list[list[Any]]:
    """The class histogram: [[class name, instances, shallow size]], heaviest first."""
    from ._dump import stats as read_stats
    return [[row.name, row.instances, row.shallow_bytes]
            for row in read_stats(path, heap_dump=heap_dump, mapping=mapping).histogram]


@_task
def leaks(path: str | os.PathLike[str], mapping: Any = None, *, heap_dump: int = 0,
          semantics: str = "hprofkit") -> list[dict[str, Any]]:
    """heap.find_leaks() as [{fingerprint, short_description, retained_size, report}] (the heap as
    open_heap reads it: a dump, a pack or a Tailor mini; with a mapping, on clear names: a leak
    keeps its fingerprint across releases)."""
    from ._heap import open_heap
    with open_heap(path, heap_dump=heap_dump, semantics=semantics, mapping=mapping) as heap:
        return [{"fingerprint": leak.fingerprint, "short_description": leak.short_description,
                 "retained_size": leak.retained_size, "report": str(leak)} for leak in heap.find_leaks()]


@_task
def encode(path: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, *,
           output_dir: str | os.PathLike[str] | None = None, **encode_options: Any) -> dict[str, Any]:
    """Encodes the dump into `output` (default: output_path(path, ".hpk", output_dir)) with one
    thread (a batch runs a dump per worker); encode_options as hprofkit.encode.  Returns {output,
    consumed, written, unfinished}: unfinished is None, or Result.unfinished as a dict when the
    dump was cut short."""
    from ._files import encode as encode_file
    output = _output(path, output, OUTPUT_SUFFIX["encode"], output_dir)
    options = {"threads": 1, **encode_options}
    with _regular_file(path) as source:
        return _file_result(encode_file(source, output, **options), output)


@_task
def decode(path: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, *,
           output_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Restores an hprofkit pack or a Tailor mini into `output` (default: output_path(path,
    ".hprof", output_dir)); returns what encode() returns."""
    from ._files import decode as decode_file
    output = _output(path, output, OUTPUT_SUFFIX["decode"], output_dir)
    with _regular_file(path) as source:
        return _file_result(decode_file(source, output, threads=1), output)


@_task
def report(path: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, *,
           output_dir: str | os.PathLike[str] | None = None, heap_dump: int = 0,
           semantics: str = "hprofkit", mapping: Any = None) -> dict[str, Any]:
    """Writes hprofkit.report(path) into `output` (default: output_path(path, ".html", output_dir));
    with a mapping (a hprofkit.Mapping or a mapping.txt path), in the clear names.
    Returns {output, written (the page's bytes), suspects, leaks, leak_groups}: the counts of MAT's
    leak suspects, of the leaks found and of their fingerprints, so a fleet's summary can say which
    pages to open first."""
    from ._report import write
    output = _output(path, output, OUTPUT_SUFFIX["report"], output_dir)
    data = write(path, output, heap_dump=heap_dump, semantics=semantics, mapping=mapping)
    sections = data["sections"]
    return {"output": output, "written": os.path.getsize(output), "suspects": len(sections["suspects"]["items"]),
            "leaks": sections["leaks"]["total"], "leak_groups": len(sections["leaks"]["groups"])}


# ---- helpers -------------------------------------------------------------------------------------

# What the tasks that write a file name it after (app.hprof -> app.hpk).
OUTPUT_SUFFIX = {"encode": ".hpk", "decode": ".hprof", "report": ".html"}

_DUMP_SUFFIXES = (".gz", ".bz2", ".hprof", ".hpk", ".mini", ".bmd")


def output_stem(path: str | os.PathLike[str]) -> str:
    """The input's name without the suffixes hprofkit reads: app.hprof.gz -> app."""
    base = os.path.basename(os.fspath(path))
    for suffix in _DUMP_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    return base


def output_path(path: str | os.PathLike[str], suffix: str, output_dir: str | os.PathLike[str] | None = None) -> str:
    """Where a task writes the output of `path`: output_dir (created if missing), or beside the
    input, named after it (app.hprof.gz -> app.hpk)."""
    source = os.path.abspath(os.fspath(path))
    directory = os.fspath(output_dir) if output_dir is not None else os.path.dirname(source)
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, output_stem(source) + suffix)


def _output(path: str | os.PathLike[str], output: str | os.PathLike[str] | None, suffix: str,
            output_dir: str | os.PathLike[str] | None) -> str:
    """The output given (its folder made: on a cluster, the workers' folder), or output_path()."""
    if output is None:
        return output_path(path, suffix, output_dir)
    output = os.fspath(output)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    return output


def _regular_file(path: str | os.PathLike[str]) -> Any:
    """The input opened for reading: FormatError at once, without blocking, unless it is a regular
    file (a FIFO without a writer would block the worker for ever)."""
    from ._dump import _open_regular
    return _open_regular(os.fspath(path))


def _file_result(result: Any, output: str) -> dict[str, Any]:
    unfinished = asdict(result.unfinished) if result.unfinished else None
    return {"output": output, "consumed": result.consumed, "written": result.output, "unfinished": unfinished}
