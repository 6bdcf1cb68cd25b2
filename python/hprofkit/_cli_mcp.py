"""Command line: python -m hprofkit mcp [--root DIR]

Serves the heap to AI agents as MCP tools over standard input and output (hprofkit._mcp);
needs the `mcp` extra, whose absence is one error line."""

from __future__ import annotations

import argparse

from ._cli_args import command


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from ._mcp import serve
    except ImportError as exc:  # the mcp extra is not installed: the CLI's one line, not a traceback
        raise ValueError(str(exc)) from None
    serve(args.root)
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = command(sub, "mcp", cmd_mcp,
                "an MCP server (stdio) giving AI agents the heap as tools: overview, histogram, retainers, "
                "dominators, objects, paths, leaks, waste, diff, SQL",
                example="hprofkit mcp --root ~/dumps       # in an MCP client's configuration (docs/mcp.md)")
    p.add_argument("--root", default=None, metavar="DIR",
                   help="open only dumps under DIR (symbolic links resolved first; default: any file you can read)")
