"""hprofkit serve: a local web server over one open Heap (server.py: HTTP,
threads and security; pages.py: the HTML pages, one query each)."""

from .server import URL, Server, serve

__all__ = ["URL", "Server", "serve"]
