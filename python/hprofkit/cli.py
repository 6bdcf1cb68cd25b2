"""Command line: python -m hprofkit info|stats|encode|decode|convert|deobfuscate|show|path|top|diff|leaks|batch|bitmaps|report|pprof|serve|mcp|demo ...

Every command takes its arguments through one grammar (_cli_args.py).
Every failure prints one line on stderr and exits with status 1; a usage
error prints argparse's usage and one line, and exits with status 2."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import signal
import sys
import tempfile
import threading
from typing import Any, Callable, Iterator, Sequence, TextIO

from . import (
    __version__, _cli_batch, _cli_bitmaps, _cli_diff, _cli_explore, _cli_leaks, _cli_mcp, _cli_pprof, _cli_reach,
    _cli_report, _cli_serve, _cli_show, _cli_tree,
)
from . import _cli_args as grammar
from ._cli_args import UsageError
from ._codec import FORMATS, encoder_options
from ._pack import strip_mask
from ._dump import Dump
from ._cli_mapping import mapping_warnings, read_mapping
from ._deobfuscate import DeobfuscateResult, deobfuscate
from ._errors import HprofError
from ._mapping import Mapping
from ._files import Result, convert, decode, encode
from ._output import is_stdout
from ._progress import Progress, reporting
from ._stats import Stats, UnfinishedDump
from ._units import human_size

SIGPIPE = 13  # its number on every Unix; signal.SIGPIPE is absent on Windows


def _open(args: argparse.Namespace) -> Dump:
    """The dump named on the command line; "-" reads standard input."""
    return Dump(grammar.source(args.file), max_output=args.max_output)


def _stats(dump: Dump, heap_dump: int | None, mapping: Mapping | None = None) -> Stats:
    """dump.stats() with a progress bar on a terminal, and a warning on
    stderr when a heap dump stops early or the mapping does not fit."""
    progress = Progress("reading")
    try:
        with mapping_warnings():
            stats = dump.stats(progress, heap_dump=heap_dump, mapping=mapping)
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
    mapping = read_mapping(args)
    with _open(args) as dump:
        stats = _stats(dump, args.heap_dump, mapping)
        on_disk = os.path.getsize(dump.path) if dump.path and os.path.isfile(dump.path) else None
        if args.json:
            doc: dict[str, Any] = {"file": args.file, "size": on_disk if on_disk is not None else dump.size,
                         "compression": dump.compression, "decompressed_size": dump.size, "format": dump.magic,
                         "datetime": dump.datetime.isoformat()}
            doc.update((k, v) for k, v in stats.to_dict().items() if k not in ("size", "heap", "histogram"))
            grammar.print_json(doc)
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
    mapping = read_mapping(args)
    with _open(args) as dump:
        stats = _stats(dump, args.heap_dump, mapping)
    if args.json:
        grammar.print_json(stats.to_dict(top=args.top, heap=args.heap))
    else:
        sys.stdout.write(stats.format(top=args.top, heap=args.heap) + "\n")
    return 0


def _report(command: str, result: Result, stream: TextIO) -> None:
    """Tailor's lines: the tag counter, then what was consumed and produced
    (deobfuscate: first what it renamed)."""
    if isinstance(result, DeobfuscateResult):
        stream.write(f"renamed {result.classes:,} classes, {result.fields:,} fields, {result.frames:,} stack frames "
                     f"({result.strings:,} new strings)\n")
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


PROGRESS_LABELS = {"encode": "encoding", "decode": "decoding", "convert": "converting",
                   "deobfuscate": "deobfuscating"}
# OUT when only IN is named: IN's name with this, beside it (app.hprof.gz -> app.hpk).
OUTPUT_SUFFIXES = {"hprofkit": ".hpk", "tailor": ".mini", "hprof": ".trimmed.hprof", "bmd": ".bmd", "decode": ".hprof",
                   "convert": ".converted.hprof", "deobfuscate": ".deobfuscated.hprof"}
DEOBFUSCATE_COUNTS = ("classes", "fields", "frames", "strings", "mismatch")  # DeobfuscateResult's, in its JSON


def _result_json(args: argparse.Namespace, result: Result) -> dict[str, Any]:
    doc: dict[str, Any] = {"input": args.input, "output": args.output, "consumed": result.consumed, "size": result.size,
           "written": result.output, "trimmed": result.trimmed, "counter": result.counter, "restored": result.restored,
           "unfinished": dataclasses.asdict(result.unfinished) if result.unfinished else None}
    if args.command == "deobfuscate":
        doc.update((name, getattr(result, name)) for name in DEOBFUSCATE_COUNTS)
    return doc


def _run_file_command(args: argparse.Namespace, run: Callable[[Progress], Result]) -> int:
    # The library refuses an output that is the input file (same device and inode).
    progress = Progress(PROGRESS_LABELS[args.command])
    try:
        result = run(progress)
    finally:
        progress.close()
    # With the output on stdout, the report goes to stderr.
    report = sys.stderr if is_stdout(args.output) else sys.stdout
    if args.json:
        grammar.print_json(_result_json(args, result), report)
    else:
        _report(args.command, result, report)
    # Name the dump that was cut short: the source, or for decode the dump restored.
    if args.command == "decode":
        _warn_unfinished("<stdout>" if args.output == "-" else args.output, result.unfinished)
    else:
        _warn_unfinished("<stdin>" if args.input == "-" else args.input, result.unfinished)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    args.input, args.output = grammar.file_io(args, OUTPUT_SUFFIXES[args.format])
    if args.keep_all and args.strip is not None:
        raise UsageError("--keep-all and --strip say two things: --keep-all is --strip none")
    strip = "none" if args.keep_all else args.strip
    try:  # what the format cannot honour is a usage error, found before any file is opened
        encoder_options(args.format, level=args.level, app_only=args.app_only, threads=args.threads, strip=strip,
                        drop_traces=args.drop_traces)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return _run_file_command(args, lambda progress: encode(
        args.input, args.output, format=args.format, level=args.level, app_only=args.app_only,
        threads=args.threads, strip=strip, drop_traces=args.drop_traces, progress=progress))


def cmd_decode(args: argparse.Namespace) -> int:
    args.input, args.output = grammar.file_io(args, OUTPUT_SUFFIXES["decode"])
    return _run_file_command(args, lambda progress: decode(args.input, args.output, threads=args.threads,
                                                           strings=args.strings, progress=progress,
                                                           max_output=args.max_output))


def cmd_deobfuscate(args: argparse.Namespace) -> int:
    args.input, args.output = grammar.file_io(args, OUTPUT_SUFFIXES["deobfuscate"])
    mapping = read_mapping(args)  # a malformed mapping fails before the dump is read

    def run(progress: Progress) -> Result:
        with mapping_warnings():
            return deobfuscate(args.input, args.output, mapping=mapping, progress=progress)
    return _run_file_command(args, run)


def cmd_convert(args: argparse.Namespace) -> int:
    args.input, args.output = grammar.file_io(args, OUTPUT_SUFFIXES["convert"])
    return _run_file_command(args, lambda progress: convert(args.input, args.output, app_only=args.z,
                                                            progress=progress))


def cmd_demo(args: argparse.Namespace) -> int:
    from . import demo
    with tempfile.TemporaryDirectory(prefix="hprofkit-demo-") as tmp:
        return demo.run(tmp, sys.stdout)


def strip_types(text: str) -> str:
    """argparse type: encode's --strip (a preset or a list of primitive types)."""
    try:
        strip_mask(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hprofkit", description="Process HPROF heap dumps (HotSpot and Android).")
    parser.add_argument("--version", action="version", version=f"hprofkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = grammar.command(sub, "info", cmd_info, "header, sizes, heap dumps and record counts",
                        example="hprofkit info app.hprof\nadb shell am dumpheap ... | hprofkit info - --json")
    grammar.add_dump_input(p)
    grammar.add_json(p)

    p = grammar.command(sub, "stats", cmd_stats, "record and sub-record tallies and the class histogram",
                        example="hprofkit stats app.hprof -n 10 --heap app")
    grammar.add_dump_input(p)
    grammar.add_rows(p, None, "histogram rows to print (default 20; JSON: all)")
    p.add_argument("--heap", type=grammar.non_empty("a heap name"), default=None, metavar="NAME",
                   help="the histogram of one heap (Android: app, zygote, image; else default)")
    grammar.add_json(p)

    p = grammar.command(sub, "encode", cmd_encode,
                        "trim and compress a dump (hprofkit's format, Tailor's or Badoo's BMD)",
                        example="hprofkit encode app.hprof                       # app.hpk beside it\n"
                                "hprofkit encode app.hprof app.mini --format tailor")
    grammar.add_file_io(p, "the dump to encode", "the encoded file")
    p.add_argument("--format", choices=FORMATS, default="hprofkit",
                   help="hprofkit (default: compact, any dump, lossless where asked; OUT app.hpk), tailor (Tailor's "
                        "mini, for Tailor's decode.py; app.mini), hprof (plain HPROF, e.g. with --app-only; "
                        "app.trimmed.hprof), bmd (Badoo's BMD, what its cruncher writes: names hashed, primitive "
                        "values dropped; app.bmd)")
    p.add_argument("--level", type=int, default=None, choices=range(0, 10), metavar="N",
                   help="zlib level 0-9 (default 6, as encode.py; 0 = uncompressed); not for --format hprof")
    p.add_argument("--app-only", action="store_true", help="drop the zygote and image heaps' objects")
    p.add_argument("--strip", type=strip_types, default=None, metavar="TYPES",
                   help="primitive array contents to drop: default (char,byte as Tailor), all, none, or a list "
                        "such as int,long; with --format hprof they are zeroed, lengths kept (default none there), "
                        "so the dump can be shared and opened anywhere")
    p.add_argument("--keep-all", action="store_true",
                   help="hprofkit format: drop nothing (--strip none); decode gives back the dump byte for byte")
    p.add_argument("--drop-traces", action="store_true", help="hprofkit format: drop stack traces and frames")
    p.add_argument("--threads", type=grammar.threads, default=0, metavar="N",
                   help="compression threads (default 0: one per core; 1: exactly zlib's bytes, as encode.py)")
    grammar.add_json(p, "what was read and written as one JSON object (on stderr when OUT is stdout)")

    p = grammar.command(sub, "decode", cmd_decode,
                        "restore an hprofkit pack, a Tailor mini (zlib, gzip or bare) or a Badoo BMD to HPROF",
                        example="hprofkit decode app.hpk                         # app.hprof beside it\n"
                                "hprofkit decode app.mini - | hprofkit stats -")
    grammar.add_file_io(p, "the pack, mini or BMD", "the restored dump")
    p.add_argument("--threads", type=grammar.threads, default=0, metavar="N",
                   help="inflating threads (default: one per core)")
    p.add_argument("--strings", action="append", default=None, metavar="FILE",
                   help="BMD: a jar, apk, dex or text file (one name a line) whose class and field names give "
                        "hashed strings back, as Badoo's decruncher does; repeat for more")
    grammar.add_max_output(p)
    grammar.add_json(p, "what was read and written as one JSON object (on stderr when OUT is stdout)")

    p = grammar.command(sub, "convert", cmd_convert, "Android HPROF to standard HPROF (hprof-conv)",
                        example="hprofkit convert -z app.hprof app.converted.hprof    # as hprof-conv -z IN OUT")
    grammar.add_file_io(p, "the Android dump", "the standard dump")
    p.add_argument("-z", action="store_true", help="exclude the zygote and image heaps' objects")
    grammar.add_json(p, "what was read and written as one JSON object (on stderr when OUT is stdout)")

    p = grammar.command(sub, "deobfuscate", cmd_deobfuscate,
                        "rewrite an obfuscated dump with the clear names of its mapping.txt",
                        example="hprofkit deobfuscate app.hprof --mapping mapping.txt    # app.deobfuscated.hprof\n"
                                "hprofkit deobfuscate app.hprof clear.hprof --mapping build/mapping.txt")
    grammar.add_file_io(p, "the obfuscated dump", "the deobfuscated dump")
    p.add_argument("--mapping", required=True, metavar="FILE", help="the ProGuard or R8 mapping.txt of the build")
    grammar.add_json(p, "what was read, written and renamed as one JSON object (on stderr when OUT is stdout)")

    _cli_show.add_commands(sub)
    _cli_reach.add_commands(sub)
    _cli_tree.add_commands(sub)
    _cli_diff.add_commands(sub)
    _cli_leaks.add_commands(sub)
    _cli_batch.add_commands(sub)
    _cli_explore.add_commands(sub)
    _cli_bitmaps.add_commands(sub)
    _cli_report.add_commands(sub)
    _cli_pprof.add_commands(sub)
    _cli_serve.add_commands(sub)
    _cli_mcp.add_commands(sub)
    grammar.command(sub, "demo", cmd_demo, "write a sample dump and run the workflow on it", example="hprofkit demo")
    for command in sub.choices.values():
        command.set_defaults(parser=command)  # UsageError: reported with the command's own usage
    return parser


_SHARED_PARSER: list[argparse.ArgumentParser] = []


def _shared_parser() -> argparse.ArgumentParser:
    """The parser main() uses, built once per process: building it costs more than most failing
    commands (about 10 ms, mostly argparse's gettext look-ups), and parse_args() leaves it as
    it was, so every call and every thread may share it.  build_parser() stays a fresh one to
    inspect or change."""
    if not _SHARED_PARSER:
        _SHARED_PARSER.append(build_parser())  # threads that race here each build one: any serves
    return _SHARED_PARSER[0]


def command_table(width: int = 110) -> str:
    """The table of commands of docs/guides/cli.md, made from the parsers (tests/test_cli_grammar.py
    checks the page holds it): each command's usage, then what it does."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    lines = []
    for name, p in sub.choices.items():
        formatter = argparse.HelpFormatter(prog=p.prog, width=width)
        actions = [a for a in p._actions if not isinstance(a, argparse._HelpAction)]
        formatter.add_usage(None, actions, p._mutually_exclusive_groups, prefix="")
        lines.append(formatter.format_help().rstrip())
        lines.append(f"    # {helps[name]}")
    return "\n".join(lines)


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
    parser = _shared_parser()
    args = parser.parse_args(argv)
    try:
        # The heap commands' stages (index, dominators, leaks...) as a bar on a terminal's stderr.
        with _terminations_unwind(), reporting(sys.stderr.isatty()):
            func: Callable[[argparse.Namespace], int] = args.func
            return func(args)
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
