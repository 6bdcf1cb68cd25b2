"""--mapping FILE on the command line: every command that reads a heap or
stats reads it (a ProGuard or R8 mapping.txt) before the dump, so a
malformed mapping fails first, with one line naming its line; a mapping
that does not fit the dump is one warning line on stderr."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from typing import Iterator

from ._errors import MappingWarning
from ._mapping import Mapping

HELP = "ProGuard or R8 mapping.txt of the build: clear names for an obfuscated (release) dump"


def add_mapping_option(p: argparse.ArgumentParser, pair: bool = False) -> None:
    """--mapping FILE (with `pair`: once for both dumps, or twice, A's then B's)."""
    if pair:
        p.add_argument("--mapping", action="append", default=None, metavar="FILE",
                       help=HELP + "; once for both dumps, or twice: A's, then B's (two releases)")
    else:
        p.add_argument("--mapping", default=None, metavar="FILE", help=HELP)


def read_mapping(args: argparse.Namespace) -> Mapping | None:
    """The --mapping of the command line (None without one)."""
    path = getattr(args, "mapping", None)
    if path is None:
        return None
    with mapping_warnings():  # a name given to several classes: warning lines
        return Mapping.read(path)


def read_mapping_pair(args: argparse.Namespace) -> tuple[Mapping | None, Mapping | None]:
    """A repeatable --mapping: (A's, B's), the same one for both when given once."""
    paths = args.mapping or []
    if len(paths) > 2:
        raise ValueError(f"--mapping: once for both dumps, or twice (A's, then B's), not {len(paths)} times")
    with mapping_warnings():
        mappings = [Mapping.read(p) for p in paths]
    if not mappings:
        return None, None
    return mappings[0], mappings[-1]


@contextlib.contextmanager
def mapping_warnings() -> Iterator[None]:
    """A MappingWarning (a mapping that does not fit the dump) as one line on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MappingWarning)
        try:
            yield
        finally:
            for w in caught:
                if issubclass(w.category, MappingWarning):
                    print(f"hprofkit: warning: {w.message}", file=sys.stderr)
                else:
                    warnings.showwarning(w.message, w.category, w.filename, w.lineno)
