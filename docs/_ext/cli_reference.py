"""The ``cli-reference`` directive: every command's ``--help``, made from the argparse parsers.

The same parsers make ``hprofkit.cli.command_table()`` and the command line itself, so the
reference cannot drift from what ``hprofkit COMMAND --help`` prints.
"""

from __future__ import annotations

import argparse

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from hprofkit.cli import build_parser

WIDTH = 100


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def help_text(parser: argparse.ArgumentParser) -> str:
    # argparse wraps at $COLUMNS; a fixed width keeps the page the same on every machine.
    parser.formatter_class = lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=WIDTH)
    return parser.format_help()


class CliReference(SphinxDirective):
    """One section per command: its name as the title, its help as a literal block."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        sections = []
        for name, parser in subcommands().items():
            section = nodes.section(ids=[f"command-{name}"], names=[f"hprofkit {name}"])
            section += nodes.title(text=f"hprofkit {name}")
            section += nodes.literal_block(text=help_text(parser).rstrip())
            sections.append(section)
        return sections


def setup(app):
    app.add_directive("cli-reference", CliReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
