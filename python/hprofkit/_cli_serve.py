"""Command line: python -m hprofkit serve FILE [--port N] [--host H]
[--baseline OTHER] [--no-browser] [--json] [--heap-dump N] [--semantics ...] [--mapping M]

Opens the dump once and serves it (hprofkit._serve) until Ctrl-C, which
ends it at once.  The URL, with its token, is the first line on stdout."""

from __future__ import annotations

import argparse
import sys
import webbrowser

from ._cli_args import add_heap_input, add_json, command, print_json, read_heap


def cmd_serve(args: argparse.Namespace) -> int:
    from ._serve.server import Server, warn_host
    warn_host(args.host)
    with read_heap(args) as heap:
        baseline = read_heap(args, file=args.baseline) if args.baseline else None
        try:
            server = Server(heap, host=args.host, port=args.port, baseline=baseline)
            try:  # from the first line printed on, Ctrl-C is the way to end it: not a failure
                if args.json:
                    print_json({"url": server.url, "host": server.host, "port": server.port})
                else:
                    print(server.url)
                sys.stdout.flush()
                print("hprofkit: serving; Ctrl-C stops", file=sys.stderr, flush=True)
                if not args.no_browser:
                    webbrowser.open(server.url)
                server.serve_forever()
            except KeyboardInterrupt:
                print("hprofkit: stopped", file=sys.stderr)
            finally:
                server.close()
        finally:
            if baseline is not None:
                baseline.close()
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = command(sub, "serve", cmd_serve,
                "a local web server over the heap (a page per object; token and 127.0.0.1 only; Ctrl-C stops)",
                example="hprofkit serve app.hprof --port 7000\nhprofkit serve new.hprof --baseline old.hprof --no-browser")
    add_heap_input(p)
    p.add_argument("--port", type=int, default=7000, metavar="N", help="the port (default 7000; 0: any free one)")
    p.add_argument("--host", default="127.0.0.1", metavar="H",
                   help="the address to bind (default 127.0.0.1; any other lets others read the dump: it warns)")
    p.add_argument("--baseline", metavar="OTHER", help="a dump the diff page compares this one against")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser")
    add_json(p, "the URL, host and port as one JSON object first (instead of the URL alone)")
