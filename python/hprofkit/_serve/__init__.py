"""hprofkit serve: a local web server over one open Heap (server.py: HTTP,
threads and security; pages.py: the HTML pages, one query each)."""

from .server import Server, serve

__all__ = ["Server", "serve"]
