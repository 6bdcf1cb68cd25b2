"""The HTTP side of hprofkit serve: a standard library ThreadingHTTPServer
over one open Heap, and its security (a heap dump holds passwords and tokens).

- It binds 127.0.0.1 unless told another host (then serve() warns on stderr).
- Every request carries the random token: ?token= (the printed URL has it)
  or the cookie the first such visit sets (HttpOnly, SameSite=Strict);
  otherwise 403.
- The Host header must name this server (127.0.0.1:PORT, localhost:PORT or
  the host given), so a DNS rebinding page cannot read it: otherwise 403.
- Pages escape every string (pages.py) and go out with a Content Security
  Policy that runs no script at all, nosniff, and no CORS header.
Each request runs in its own thread; the Heap answers them concurrently."""

from __future__ import annotations

import hmac
import http.cookies
import os
import secrets
import sys
import threading
import traceback
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Optional, Union, cast
from urllib.parse import parse_qs, urlsplit

from .._report.page import sha256_source
from .pages import STYLE, NotFound, Pages

if TYPE_CHECKING:
    from .._heap import Heap

LOCAL = "127.0.0.1"
# No script at all, nothing fetched, no framing; the pages' one <style> block by its hash.
POLICY = (f"default-src 'none'; style-src {sha256_source(STYLE)}; img-src data:; base-uri 'none'; "
          "form-action 'self'; frame-ancestors 'none'")


class Server:
    """A running hprofkit serve: url (with the token), token, port; close()
    stops it (and closes the heaps it opened itself)."""

    def __init__(self, heap: Heap, *, host: str = LOCAL, port: int = 0, token: Optional[str] = None,
                 baseline: Optional[Heap] = None, owned: tuple[Heap, ...] = ()) -> None:
        self.heap = heap
        self.token = token or secrets.token_urlsafe(32)
        self.pages = Pages(heap, baseline)
        self._owned = owned
        self._httpd = _HTTPServer((host, port), self)
        # Ctrl-C and close() do not wait for a page being made: a Heap closed under a running
        # query frees its index when that query leaves (the C core counts its users).
        self._httpd.daemon_threads = True
        self.host = host
        self.port: int = self._httpd.server_address[1]
        shown = "127.0.0.1" if host in ("", "0.0.0.0") else host  # a URL a browser on this machine opens
        shown = f"[{shown}]" if ":" in shown else shown
        self.url = f"http://{shown}:{self.port}/?token={self.token}"
        self.allowed_hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}", f"{shown.lower()}:{self.port}",
                              f"{host.lower()}:{self.port}"}
        # Named by port: browsers send 127.0.0.1's cookies to every port, so servers side by side
        # would overwrite each other's.
        self.cookie = f"hprofkit_token_{self.port}"
        self._thread: Optional[threading.Thread] = None

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.1)

    def start(self) -> "Server":
        """Serves in a background thread (a notebook keeps working)."""
        self._thread = threading.Thread(target=self.serve_forever, name="hprofkit-serve", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()
        for heap in self._owned:
            heap.close()

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<hprofkit serve {self.url}>"

    def _authorized(self, query_token: Optional[str], cookie: Optional[str]) -> bool:
        return any(given is not None and hmac.compare_digest(given.encode(), self.token.encode())
                   for given in (query_token, cookie))


class _HTTPServer(ThreadingHTTPServer):
    """The standard library's threaded server, knowing the hprofkit Server it answers for."""

    def __init__(self, address: tuple[str, int], app: Server) -> None:
        self.app = app
        super().__init__(address, Handler)


class Handler(BaseHTTPRequestHandler):
    """One request: the Host and the token checked, then the page of its path."""

    server_version = "hprofkit"
    sys_version = ""

    def do_GET(self) -> None:
        self._answer(head=False)

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def _answer(self, head: bool) -> None:
        server = cast(_HTTPServer, self.server).app
        if (self.headers.get("Host") or "").lower() not in server.allowed_hosts:
            return self._send(403, "<h1>403</h1><p>Wrong Host header.</p>", head)
        url = urlsplit(self.path)
        try:
            query = parse_qs(url.query, max_num_fields=20)
        except ValueError:
            return self._send(400, "<h1>400</h1><p>Too many query fields.</p>", head)
        given = query.pop("token", [None])[0]
        cookie = http.cookies.SimpleCookie()
        try:
            cookie.load(self.headers.get("Cookie") or "")
        except http.cookies.CookieError:
            pass
        kept = cookie[server.cookie].value if server.cookie in cookie else None
        if not server._authorized(given, kept):
            return self._send(403, "<h1>403</h1><p>This server needs the token of the URL it printed.</p>",
                              head)
        extra = {}
        if given is not None:  # the first visit: the links of its page carry no token, the cookie does
            extra["Set-Cookie"] = f"{server.cookie}={server.token}; HttpOnly; SameSite=Strict; Path=/"
        try:
            status, body = 200, server.pages.render(url.path, {k: v[0] for k, v in query.items()})
        except NotFound as e:
            status, body = 404, server.pages.frame("Not found", f"<p>{e.html}</p>")
        except Exception:  # one page's failure is that page's, the server goes on
            traceback.print_exc(file=sys.stderr)
            status, body = 500, server.pages.frame("Error", "<p>This page failed (see the server's stderr).</p>")
        self._send(status, body, head, extra)

    def _send(self, status: int, body: str, head: bool, extra: Optional[dict[str, str]] = None) -> None:
        data = body.encode("utf-8", "backslashreplace")  # a lone surrogate of a dump String, as \\udXXX
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")  # the token never leaves in a Referer
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the URL carries the token
        pass


class URL(str):
    """What serve() returns: the URL with its token (a str, to print or open), and
    the running Server behind it (.server); close() stops it, as does leaving a
    `with` block."""

    server: Server

    def __new__(cls, server: Server) -> "URL":
        url = super().__new__(cls, server.url)
        url.server = server
        return url

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> "URL":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve(heap_or_path: Union[Heap, str, os.PathLike[str]], port: int = 0, *, host: str = LOCAL,
          token: Optional[str] = None, open_browser: bool = False,
          baseline: Union[Heap, str, os.PathLike[str], None] = None, mapping: Any = None) -> URL:
    """Serves the heap (or the dump at a path, opened here) in a background
    thread (a notebook keeps working) and returns its URL, with the token:
    a str whose close() stops the server (and closes what serve() opened).
    port: 0 (default) takes any free one.  host: the address to bind (127.0.0.1;
    any other is announced on stderr: whoever reaches it with the token reads
    the dump); token: the secret every request must carry (default: a random
    one); open_browser: open the URL in the default browser; baseline: a heap
    or dump the diff page compares against; mapping: the ProGuard/R8 mapping
    of the dumps serve() opens."""
    from .._heap import Heap, open_heap
    owned: list[Heap] = []
    try:
        if not isinstance(heap_or_path, Heap):
            heap_or_path = open_heap(heap_or_path, mapping=mapping)
            owned.append(heap_or_path)
        if baseline is not None and not isinstance(baseline, Heap):
            baseline = open_heap(baseline, mapping=mapping)
            owned.append(baseline)
        server = Server(heap_or_path, host=host, port=port, token=token, baseline=baseline, owned=tuple(owned))
    except BaseException:
        for heap in owned:
            heap.close()
        raise
    warn_host(host)
    server.start()
    if open_browser:
        webbrowser.open(server.url)
    return URL(server)


def warn_host(host: str) -> None:
    if host != LOCAL:
        print(f"hprofkit: WARNING: serving on {host}, not 127.0.0.1 only: anyone who can reach it and has the "
              "token reads the whole heap dump (passwords, tokens, personal data)", file=sys.stderr)
