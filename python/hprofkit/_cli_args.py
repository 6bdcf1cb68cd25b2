"""The command line's one grammar, shared by every command.

A command is made with command() (its --help ends with an example) and
takes its arguments through these helpers, so that each means the same
everywhere:

    p = command(sub, "top", cmd_top, "the largest retained sizes",
                example="hprofkit top app.hprof -n 10 --by class")
    add_heap_input(p)     # FILE (a dump, .gz/.bz2, pack, mini, or -), --heap-dump N, --semantics
    add_rows(p)           # -n/--top N
    add_json(p)           # --json

    def cmd_top(args):
        with read_heap(args) as heap: ...

Every value is checked by its argparse type (object_id, rows, ...): a bad
one is a usage error, reported by argparse with the command's usage line
(exit status 2), never a failure half-way through the command.  A check
that needs two arguments at once raises UsageError, which main() reports
the same way."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, TextIO

from ._cli_mapping import add_mapping_option, mapping_warnings, read_mapping
from ._units import parse_size

if TYPE_CHECKING:
    from ._heap import Heap

SEMANTICS = ("hprofkit", "visualvm")
ID_LIMIT = 1 << 64        # object ids are unsigned 64-bit
HEAP_DUMP_LIMIT = 1 << 32  # heap dumps are numbered with 32 bits
ROWS = 20                 # the default of -n/--top in text output


class UsageError(ValueError):
    """Arguments that are each valid but not together: main() reports it as
    argparse reports a bad argument (the command's usage line, exit 2)."""


# ---- argument types ----------------------------------------------------------------------

def _whole(text: str, what: str, base: int = 10) -> int:
    try:
        return int(text.strip(), base)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def whole_number(low: int, high: int | None = None, what: str = "a whole number") -> Callable[[str], int]:
    """An argparse type: a whole number from low to high (inclusive; high
    None: up to sys.maxsize, the most rows or items Python can count)."""
    top = sys.maxsize if high is None else high

    def parse(text: str) -> int:
        value = _whole(text, what)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {value}")
        if value > top:
            raise argparse.ArgumentTypeError(f"must be at most {top:,}, not {value:,}")
        return value
    return parse


rows = whole_number(1, what="a row count")
count = whole_number(0, what="a count")
THREADS_LIMIT = 256
threads = whole_number(0, THREADS_LIMIT, what="a thread count")
workers = whole_number(1, THREADS_LIMIT, what="a worker count")


def object_id(text: str) -> int:
    """An argparse type: an object id, decimal or 0x hex (0 to 2^64-1)."""
    value = _whole(text, "an object id (decimal or 0x hex)", 0)
    if not 0 <= value < ID_LIMIT:
        raise argparse.ArgumentTypeError(f"not an object id: {text!r} (0 to 0x{ID_LIMIT - 1:x})")
    return value


def object_or_class(text: str) -> int | str:
    """An argparse type: an object id (a whole number: decimal or 0x hex), or
    else a class name."""
    try:
        int(text.strip(), 0)
    except ValueError:
        return non_empty("a class name")(text)
    return object_id(text)


def heap_dump_number(text: str) -> int:
    """An argparse type: a heap dump number, from 0; negative counts from the end."""
    value = _whole(text, "a heap dump number")
    if not -HEAP_DUMP_LIMIT <= value < HEAP_DUMP_LIMIT:
        raise argparse.ArgumentTypeError(f"no heap dump {value}: a file holds at most {HEAP_DUMP_LIMIT - 1:,}")
    return value


def non_empty(what: str) -> Callable[[str], str]:
    """An argparse type: a non-empty name without surrounding blanks (a class
    name, a thread name...)."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{what} must not be empty")
        if text != text.strip():
            raise argparse.ArgumentTypeError(f"{what} has blanks around it: {text!r}")
        return text
    return parse


def class_member(text: str) -> tuple[str, str]:
    """An argparse type: CLASS.FIELD, as (class name, field name)."""
    class_name, dot, member = text.rpartition(".")
    if not dot or not class_name.strip() or not member.strip() or text != text.strip():
        raise argparse.ArgumentTypeError(f"expected CLASS.FIELD (com.example.Cache.sInstance), not {text!r}")
    return class_name, member


# ---- commands and their shared arguments ---------------------------------------------------

def command(sub: Any, name: str, func: Callable[[argparse.Namespace], int], help: str, *,
            example: str, description: str | None = None) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with an example (example: one or more
    lines, each a command line)."""
    lines = "\n".join(f"  {line}" for line in example.strip().splitlines())
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=description or help[:1].upper() + help[1:] + ".",
        epilog=f"example:\n{lines}", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=func, parser=p)
    return p


DUMP_INPUT_HELP = ("the dump: HPROF (plain, .gz or .bz2), an hprofkit pack, a Tailor mini or a Badoo BMD "
                   "(restored first), or - for stdin")


def printable(text: str) -> str:
    """text as one line of a terminal: a name holding a newline, an escape
    or a lone surrogate is shown with Python's escapes ('a\\nb')."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def byte_size(text: str) -> int:
    """A size as people write it ('64 MiB', '2G', 1048576)."""
    if text[-1:].upper() in ("K", "M", "G", "T"):
        text += "B"  # 2G as du and ls write it
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_max_output(p: argparse.ArgumentParser) -> None:
    """--max-output SIZE: what a pack, mini or BMD may restore to."""
    p.add_argument("--max-output", type=byte_size, default=None, metavar="SIZE",
                   help="the most a pack, mini or BMD may restore to (default: the larger of 4 GiB and 1,000 "
                        "times the input; one that declares more is refused before it is written)")


def add_unreachable(p: argparse.ArgumentParser, what: str = "the figures") -> None:
    """--unreachable: count garbage too (the analyses' unreachable=True)."""
    p.add_argument("--unreachable", action="store_true", default=None,
                   help=f"count unreachable objects (garbage the dump kept) in {what} too; by default only the "
                        "objects a GC root reaches are counted, as Eclipse MAT does (with --semantics visualvm: all)")


def add_dump_input(p: argparse.ArgumentParser) -> None:
    """The dump a command that reads records reads (info, stats): FILE,
    --heap-dump N, --mapping FILE (read_mapping reads it) and --max-output."""
    p.add_argument("file", metavar="FILE", help=DUMP_INPUT_HELP)
    add_heap_dump(p, default=None)
    add_mapping_option(p)
    add_max_output(p)


def add_heap_input(p: argparse.ArgumentParser, dest: str = "file", metavar: str = "FILE",
                   help: str = DUMP_INPUT_HELP) -> None:
    """The dump a heap command reads (positional), and the options of how it
    is read (add_heap_options, --max-output)."""
    p.add_argument(dest, metavar=metavar, help=help)
    add_heap_options(p)
    add_max_output(p)


def add_heap_dump(p: argparse.ArgumentParser, default: int | None = 0) -> None:
    """--heap-dump N: which heap dump of the file."""
    p.add_argument("--heap-dump", type=heap_dump_number, default=default, metavar="N",
                   help="which heap dump of the file (from 0; negative counts from the end; default: the first)")


def add_heap_options(p: argparse.ArgumentParser, pair: bool = False) -> None:
    """--heap-dump, --semantics and --mapping: which heap dump of the file,
    which reference graph (for a command that reads its dumps itself, as
    diff), and the ProGuard/R8 mapping.txt of an obfuscated dump (with
    `pair`, for a command that reads two dumps: --mapping once for both, or
    twice, A's then B's; _cli_mapping.read_mapping_pair reads them)."""
    add_heap_dump(p)
    p.add_argument("--semantics", choices=SEMANTICS, default="hprofkit",
                   help="reference graph of paths and retained sizes: hprofkit (default; Reference referents are "
                        "weak) or visualvm (VisualVM's graph and retained sizes)")
    add_mapping_option(p, pair)


_MAPPING_OF_ARGS: Any = object()  # heap_options' default: read --mapping


def heap_options(args: argparse.Namespace, mapping: Any = _MAPPING_OF_ARGS) -> dict[str, Any]:
    """The keyword arguments of hprofkit.open_heap that add_heap_options gave;
    `mapping`, when given, in place of --mapping's (diff passes A's or B's)."""
    return {"heap_dump": args.heap_dump, "semantics": args.semantics,
            "mapping": read_mapping(args) if mapping is _MAPPING_OF_ARGS else mapping}


def source(file: str) -> Any:
    """What the command line names: a path, or standard input for "-"."""
    return sys.stdin.buffer if file == "-" else file


def read_heap(args: argparse.Namespace, file: str | None = None, mapping: Any = _MAPPING_OF_ARGS) -> Heap:
    """The Heap of the command's input (args.file, or `file`), read as its
    --heap-dump, --semantics, --mapping and --max-output say (or with
    `mapping`, as heap_options takes it); a mapping that does not fit is a
    warning line."""
    from ._heap import open_heap
    options = heap_options(args, mapping)  # a malformed mapping fails before the dump is read
    with mapping_warnings():
        return open_heap(source(args.file if file is None else file), max_output=getattr(args, "max_output", None),
                         **options)


def add_rows(p: argparse.ArgumentParser, default: int | None = ROWS, help: str | None = None, *,
             minimum: int = 1, aliases: tuple[str, ...] = ()) -> None:
    """-n/--top N: how many rows a listing prints (minimum or more); aliases:
    a command's older spelling of it (show --limit)."""
    p.add_argument("-n", "--top", *aliases, dest="top", type=rows if minimum == 1 else whole_number(minimum),
                   default=default, metavar="N", help=help or f"rows to print (default {default})")


def add_file_io(p: argparse.ArgumentParser, what_in: str, what_out: str) -> None:
    """IN [OUT] of a command that writes a file (encode, decode, convert),
    positional as hprof-conv takes them, with -i/--input and -o/--output as
    aliases; file_io() resolves them."""
    p.add_argument("input", nargs="?", metavar="IN", help=f"{what_in}, or - for stdin")
    p.add_argument("output", nargs="?", metavar="OUT",
                   help=f"{what_out}, or - for stdout (default: beside IN, named after it; never replacing a file)")
    p.add_argument("-i", "--input", dest="input_option", metavar="IN", help="IN, as an option")
    p.add_argument("-o", "--output", dest="output_option", metavar="OUT", help="OUT, as an option")


def file_io(args: argparse.Namespace, suffix: str) -> tuple[str, str]:
    """The input and output add_file_io took: OUT defaults to IN's name with
    `suffix` (app.hprof.gz -> app.hpk), beside it, and must not exist then."""
    from .tasks import output_stem
    names = []
    for what, positional, option in (("IN", args.input, args.input_option), ("OUT", args.output, args.output_option)):
        if positional is not None and option is not None:
            raise UsageError(f"{what} given twice: {positional!r} and {option!r}")
        names.append(positional if positional is not None else option)
    given_in, given_out = names
    if given_in is None:
        raise UsageError("IN is missing: the file to read, or - for stdin")
    if given_out is not None:
        return given_in, given_out
    if given_in == "-":
        raise UsageError("name OUT (a file, or - for stdout) when IN is standard input")
    default = os.path.join(os.path.dirname(given_in), output_stem(given_in) + suffix)
    if os.path.lexists(default):
        raise UsageError(f"{default} exists: name OUT to replace it")
    return given_in, default


def add_json(p: argparse.ArgumentParser, what: str = "one JSON object") -> None:
    """--json: print the result as JSON on standard output (print_json).
    Every command names the same things alike: id (an object's), class (a
    class name), class_id, kind, instances, shallow_size, retained_size,
    retained_count; a comparison suffixes them _a, _b and _delta."""
    p.add_argument("--json", action="store_true", help=f"print {what}")


def print_json(doc: Any, out: TextIO | None = None) -> None:
    """doc as indented JSON and a newline, on standard output (or out)."""
    out = sys.stdout if out is None else out
    json.dump(doc, out, indent=1, ensure_ascii=False)
    out.write("\n")
