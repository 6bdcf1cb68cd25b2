"""Command line: python -m hprofkit info|stats|show|encode|decode|convert|leaks|demo ...

Every failure prints one line on stderr and exits with status 1."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import threading
from typing import Iterator, Sequence

from . import __version__, _cli_batch, _cli_diff, _cli_explore, _cli_leaks, _cli_reach
from ._cli_args import UsageError
from ._codec import FORMATS
from ._dump import Dump
from ._errors import HprofError
from ._files import Result, convert, decode, encode
from ._output import is_stdout
from ._progress import Progress
from ._stats import UnfinishedDump
from ._units import human_size

SIGPIPE = 13  # its number on every Unix; signal.SIGPIPE is absent on Windows


def _open(file: str) -> Dump:
    """The dump named on the command line; "-" reads standard input."""
    return Dump(sys.stdin.buffer if file == "-" else file)


def _stats(dump: Dump, heap_dump: int | None):
    """dump.stats() with a progress bar on a terminal, and a warning on
    stderr when a heap dump stops early."""
    progress = Progress("reading")
    try:
        stats = dump.stats(progress, heap_dump=heap_dump)
    finally:
        progress.close()
    _warn_unfinished(dump.path or "<stdin>", stats.unfinished)
    return stats


def _warn_unfinished(name: str, unfinished: UnfinishedDump | None) -> None:
    """One warning line on stderr for a dump that was cut short (the command
    still succeeds: what the dump holds was read, or written, whole)."""
    if unfinished is not None:
        print(f"hprofkit: warning: {unfinished.describe(name)}", file=sys.stderr)


def cmd_info(args: argparse.Namespace) -> int:
    with _open(args.file) as dump:
        stats = _stats(dump, args.heap_dump)
        on_disk = os.path.getsize(dump.path) if dump.path and os.path.isfile(dump.path) else None
        if args.json:
            doc: dict = {"file": args.file, "size": on_disk if on_disk is not None else dump.size,
                         "compression": dump.compression, "decompressed_size": dump.size, "format": dump.magic,
                         "datetime": dump.datetime.isoformat()}
            doc.update((k, v) for k, v in stats.to_dict().items() if k not in ("size", "heap", "histogram"))
            json.dump(doc, sys.stdout, indent=1)
            sys.stdout.write("\n")
            return 0
        out = sys.stdout
        out.write(f"file        {args.file}\n")
        if on_disk is None:  # a stream
            size = human_size(dump.size) + (f" (decompressed from {dump.compression})" if dump.compression else "")
        else:
            size = human_size(on_disk) + (f" ({dump.compression}; {human_size(dump.size)} decompressed)"
                                          if dump.compression else "")
        out.write(f"size        {size}\n")
        out.write(f"format      {dump.magic}, identifier size {dump.id_size}\n")
        out.write(f"timestamp   {dump.timestamp} ({dump.datetime.isoformat()})\n")
        out.write(f"heap dumps  {len(stats.heap_dumps)}{'' if stats.complete else ' (INCOMPLETE)'}\n")
        for d in stats.heap_dumps:
            out.write(f"  #{d.index:<9}offset {d.offset:,}, {d.records:,} records, {human_size(d.bytes)}, "
                      f"{d.instances:,} instances{'' if d.complete else ', no HEAP_DUMP_END'}\n")
        which = f"heap dump {stats.heap_dump}: " if len(stats.heap_dumps) > 1 else ""
        out.write(f"objects     {which}{stats.instances:,} instances, {stats.arrays:,} arrays, "
                  f"{stats.classes:,} classes, {stats.gc_roots:,} GC roots\n\n")
        out.write(f"{'record':<24}{'count':>12}{'bytes':>16}\n")
        for name, tally in stats.records.items():
            out.write(f"{name:<24}{tally.count:>12,}{tally.bytes:>16,}\n")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args.file) as dump:
        stats = _stats(dump, args.heap_dump)
    if args.json:
        json.dump(stats.to_dict(top=args.top, heap=args.heap), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(stats.format(top=args.top, heap=args.heap) + "\n")
    return 0


def _report(command: str, result: Result, stream) -> None:
    """Tailor's lines: the tag counter, then what was consumed and produced."""
    if result.counter:
        stream.write(f"{result.counter}\n")
    size = result.size if result.size is not None else result.consumed
    line = f"COMPLETE: {result.consumed}/{size} -> {result.output}"
    if command == "encode" and result.trimmed is not None and result.trimmed != result.output:
        line = f"COMPLETE: {result.consumed}/{size} -> {result.trimmed} (compressed {result.output})"
    elif command == "decode" and result.trimmed is not None:
        line += f" (from a {result.trimmed}-byte mini)"
    elif result.restored:
        line += f" ({result.restored} hashed strings given back)"
    stream.write(line + "\n")


PROGRESS_LABELS = {"encode": "encoding", "decode": "decoding", "convert": "converting"}


def _run_file_command(args: argparse.Namespace, run) -> int:
    # The library refuses an output that is the input file (same device and inode).
    progress = Progress(PROGRESS_LABELS[args.command])
    try:
        result = run(progress)
    finally:
        progress.close()
    # With the output on stdout, the report goes to stderr.
    _report(args.command, result, sys.stderr if is_stdout(args.output) else sys.stdout)
    # Name the dump that was cut short: the source, or for decode the dump restored.
    if args.command == "decode":
        _warn_unfinished("<stdout>" if args.output == "-" else args.output, result.unfinished)
    else:
        _warn_unfinished("<stdin>" if args.input == "-" else args.input, result.unfinished)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    if args.keep_all and args.strip is not None:
        raise ValueError("--keep-all and --strip say two things: --keep-all is --strip none")
    strip = "none" if args.keep_all else args.strip
    # encode() refuses what the format cannot honour (--strip with tailor, --level with hprof...)
    return _run_file_command(args, lambda progress: encode(
        args.input, args.output, format=args.format, level=args.level, app_only=args.app_only,
        threads=args.threads, strip=strip, drop_traces=args.drop_traces, progress=progress))


def cmd_decode(args: argparse.Namespace) -> int:
    return _run_file_command(args, lambda progress: decode(args.input, args.output, threads=args.threads,
                                                           strings=args.strings, progress=progress))


def cmd_convert(args: argparse.Namespace) -> int:
    return _run_file_command(args, lambda progress: convert(args.input, args.output, app_only=args.z,
                                                            progress=progress))


SHOW_LIMIT = 50


def _value(value) -> str:
    return repr(value)


def _listing(out, title: str, rows: list[str], limit: int) -> None:
    out.write(f"{title} ({len(rows):,})\n")
    for row in rows[:limit]:
        out.write(f"  {row}\n")
    if len(rows) > limit:
        out.write(f"  ... {len(rows) - limit:,} more\n")


def _show_object(out, obj, limit: int) -> None:
    out.write(f"{obj!r}\n")
    out.write(f"  id          0x{obj.id:x} ({obj.id})\n  kind        {obj.kind}\n  class       {obj.class_name}\n")
    out.write(f"  size        {obj.shallow_size:,} B\n")
    if obj.heap_name is not None:
        out.write(f"  heap        {obj.heap_name}\n")
    if obj.root_kinds:
        out.write(f"  GC roots    {', '.join(obj.root_kinds)}\n")
    if obj.kind == "instance":
        if obj.class_name == "java.lang.String":
            out.write(f"  text        {obj.as_str()!r}\n")
        _listing(out, "fields", [f"{f.declaring_class.name}.{f.name}: {f.type} = {_value(f.value)}"
                                 for f in obj.fields()], limit)
    elif obj.kind in ("object_array", "primitive_array"):
        out.write(f"  length      {len(obj):,}\n")
        _listing(out, "elements", [f"[{i}] {_value(obj[i])}" for i in range(min(len(obj), limit))] +
                 [""] * max(0, len(obj) - limit), limit)
    _listing(out, "references", [f"{r.name} -> {_value(r.target) if r.target is not None else f'0x{r.target_id:x} (missing)'}"
                                 for r in obj.references()], limit)
    _listing(out, "referrers", [f"{_value(r.source)}.{r.name}" for r in obj.referrers()], limit)


def _show_class(out, cls, limit: int) -> None:
    out.write(f"class {cls.name}\n")
    out.write(f"  id          0x{cls.class_id:x}\n")
    out.write(f"  superclass  {cls.superclass.name if cls.superclass is not None else '-'}\n")
    out.write(f"  loader      {_value(cls.loader)}\n")
    if cls.instance_size is not None:
        out.write(f"  instance    {cls.instance_size:,} B\n")
    out.write(f"  instances   {cls.instance_count:,}\n")
    out.write(f"  subclasses  {len(cls.subclasses()):,}\n")
    _listing(out, "fields", [f"{f.name}: {f.type}" for f in cls.fields()], limit)
    _listing(out, "statics", [f"{f.name}: {f.type} = {_value(f.value)}" for f in cls.statics()], limit)
    _listing(out, "referrers", [f"{_value(r.source)}.{r.name}" for r in cls.referrers()], limit)


def cmd_show(args: argparse.Namespace) -> int:
    from ._heap import open_heap
    what = args.what
    with open_heap(args.file) as heap:
        try:
            object_id = int(what, 0)
        except ValueError:
            object_id = None
        if object_id is not None:
            try:
                _show_object(sys.stdout, heap.object(object_id), args.limit)
            except KeyError:
                raise ValueError(f"no object 0x{object_id:x} in the heap dump") from None
            return 0
        classes = heap.classes_named(what)
        if not classes:
            raise ValueError(f"no class {what!r} in the heap dump")
        for cls in classes:
            _show_class(sys.stdout, cls, args.limit)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from . import demo
    with tempfile.TemporaryDirectory(prefix="hprofkit-demo-") as tmp:
        return demo.run(tmp, sys.stdout)


def positive_int(text: str) -> int:
    """argparse type: an int of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hprofkit", description="Process HPROF heap dumps (HotSpot and Android).")
    parser.add_argument("--version", action="version", version=f"hprofkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    dump_help = "HPROF dump (plain, gzip or bzip2), or - for stdin"
    heap_dump_help = "which heap dump of the file to describe (from 0; default: the first)"

    p = sub.add_parser("info", help="header, sizes, heap dumps and record counts")
    p.add_argument("file", help=dump_help)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--heap-dump", type=int, default=None, metavar="N", help=heap_dump_help)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("stats", help="record and sub-record tallies and the class histogram")
    p.add_argument("file", help=dump_help)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--top", type=positive_int, default=None, metavar="N",
                   help="histogram rows to show (default 20; JSON: all)")
    p.add_argument("--heap", default=None, metavar="NAME",
                   help="the histogram of one heap (Android: app, zygote, image; else default)")
    p.add_argument("--heap-dump", type=int, default=None, metavar="N", help=heap_dump_help)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("encode", help="trim and compress a dump (hprofkit's format, Tailor's or Badoo's BMD)")
    p.add_argument("-i", "--input", required=True, help="source dump, or - for stdin")
    p.add_argument("-o", "--output", required=True, help="destination, or - for stdout")
    p.add_argument("--format", choices=FORMATS, default="hprofkit",
                   help="hprofkit (default: compact, any dump, lossless where asked), tailor (Tailor's mini, "
                        "for Tailor's decode.py), hprof (plain HPROF, e.g. with --app-only), bmd (Badoo's BMD, "
                        "what its cruncher writes: names hashed, primitive values dropped)")
    p.add_argument("--level", type=int, default=None, choices=range(0, 10), metavar="N",
                   help="zlib level 0-9 (default 6, as encode.py; 0 = uncompressed); not for --format hprof")
    p.add_argument("--app-only", action="store_true", help="drop the zygote and image heaps' objects")
    p.add_argument("--strip", default=None, metavar="TYPES",
                   help="primitive array contents to drop: default (char,byte as Tailor), all, none, or a list "
                        "such as int,long; with --format hprof they are zeroed, lengths kept (default none there), "
                        "so the dump can be shared and opened anywhere")
    p.add_argument("--keep-all", action="store_true",
                   help="hprofkit format: drop nothing (--strip none); decode gives back the dump byte for byte")
    p.add_argument("--drop-traces", action="store_true", help="hprofkit format: drop stack traces and frames")
    p.add_argument("--threads", type=int, default=0, metavar="N",
                   help="compression threads (default 0: one per core; 1: exactly zlib's bytes, as encode.py)")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("decode", help="restore an hprofkit pack, a Tailor mini (zlib, gzip or bare) or a Badoo "
                                      "BMD to HPROF")
    p.add_argument("-i", "--input", required=True, help="encoded file, or - for stdin")
    p.add_argument("-o", "--output", required=True, help="restored dump, or - for stdout")
    p.add_argument("--threads", type=int, default=0, metavar="N", help="inflating threads (default: one per core)")
    p.add_argument("--strings", action="append", default=None, metavar="FILE",
                   help="BMD: a jar, apk, dex or text file (one name a line) whose class and field names give "
                        "hashed strings back, as Badoo's decruncher does; repeat for more")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("convert", help="Android HPROF to standard HPROF (hprof-conv)")
    p.add_argument("-i", "--input", required=True, help="Android dump, or - for stdin")
    p.add_argument("-o", "--output", required=True, help="standard dump, or - for stdout")
    p.add_argument("-z", action="store_true", help="exclude the zygote and image heaps' objects")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("show", help="an object (by id) or a class (by name): fields, references, referrers")
    p.add_argument("file", help="HPROF dump (.hprof, .gz or .bz2)")
    p.add_argument("what", metavar="ID|CLASS", help="object id (decimal or 0x hex) or class name (java.lang.String)")
    p.add_argument("--limit", type=int, default=SHOW_LIMIT, metavar="N", help="rows per list (default 50)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("demo", help="write a sample dump and run the workflow on it")
    p.set_defaults(func=cmd_demo)
    _cli_reach.add_commands(sub)
    _cli_diff.add_commands(sub)
    _cli_leaks.add_commands(sub)
    _cli_batch.add_commands(sub)
    _cli_explore.add_commands(sub)
    return parser


def _quiet_stdout() -> None:
    """Points standard output at /dev/null, so that flushing it at exit
    does not fail again on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised in the main thread so that what is under way
    unwinds as for Ctrl-C (an output file being written is removed)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated(signum)


@contextlib.contextmanager
def _terminations_unwind() -> Iterator[None]:
    """SIGTERM and SIGHUP raise _Terminated while the command runs (where
    they would have killed the process outright, and only then)."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) == signal.SIG_DFL:
                previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command; every failure is one line on stderr and exit status 1,
    every usage error argparse's usage line and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _terminations_unwind():
            return args.func(args)
    except _Terminated as exc:
        # Cleaned up: now die of the signal, as without the handler.
        signal.signal(exc.signum, signal.SIG_DFL)
        os.kill(os.getpid(), exc.signum)
        return 128 + exc.signum
    except BrokenPipeError:
        # The reader went away (`... | head`): stop quietly, with the status
        # a shell reports for a process a closed pipe ended (128 + SIGPIPE).
        _quiet_stdout()
        return 128 + SIGPIPE
    except KeyboardInterrupt:
        print("hprofkit: interrupted", file=sys.stderr)
        return 130
    except UsageError as exc:  # arguments valid alone but not together: argparse's report, exit 2
        getattr(args, "parser", parser).error(_one_line(exc))
    except (HprofError, OSError, ValueError) as exc:
        print(f"hprofkit: error: {_one_line(exc)}", file=sys.stderr)
    except Exception as exc:  # a bug: still one line, never a traceback
        print(f"hprofkit: error: internal error, please report it: {type(exc).__name__}: {_one_line(exc)}",
              file=sys.stderr)
    return 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def run() -> None:
    """The console entry point (python -m hprofkit, hprofkit).  A write to a
    closed pipe ends the process as it ends cat: by SIGPIPE, silently."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
