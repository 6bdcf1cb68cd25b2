"""hprofkit serve over HTTP (urllib and http.client against a server on port 0):
its security (token, cookie, Host header, headers), every page against the
heap API or a plain walk of the heap, paging, escaping of hostile strings,
concurrent requests, and the command line (URL first, SIGINT ends it)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import http.client
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from urllib.parse import quote, urlsplit

import pytest

import hprofkit
from conftest import HPROF_DIR
from leaky_heap import LeakyHeap
from procstate import end, reap
from hprofkit._serve import pages
from hprofkit._serve.pages import PAGE, RANKED
from report_dumps import HOSTILE_CLASS, HOSTILE_TEXT, hostile_app

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

JDK8 = HPROF_DIR / "mat__oracle_jdk8_05_x64.hprof"
DIALER = HPROF_DIR / "platform_tools_base__dialer.android-hprof"
PAGES = ["/", "/dominators", "/classtree", "/classtree/1", "/histogram", "/threads", "/waste", "/leaks", "/diff",
         "/search?q=java.lang"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve")
    ids = hostile_app(folder / "app.hprof", activities=3)
    hostile_app(folder / "base.hprof", activities=1)
    url = hprofkit.serve(folder / "app.hprof", baseline=folder / "base.hprof")
    yield url.server, ids
    url.close()


@pytest.fixture(scope="module")
def jdk8():
    heap = hprofkit.open_heap(JDK8)
    url = hprofkit.serve(heap)
    yield url.server
    url.close()
    heap.close()


def request(server, path, *, token=True, host=None, cookie=None):
    """(status, headers, body) of a GET; the token in the query unless told not."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    if token:
        path += ("&" if "?" in path else "?") + "token=" + server.token
    headers = {"Host": f"127.0.0.1:{server.port}" if host is None else host}
    if cookie:
        headers["Cookie"] = cookie
    conn.request("GET", path, headers=headers)
    answer = conn.getresponse()
    body = answer.read().decode("utf-8")
    conn.close()
    return answer.status, answer.headers, body


def ok(server, path):
    status, _, body = request(server, path)
    assert status == 200, body
    return body


def byte_figures(body):
    """The exact byte counts a page shows (each size cell's title)."""
    return [int(n.replace(",", "")) for n in re.findall(r'title="([\d,]+) bytes"', body)]


def object_ids(body):
    return [int(x, 16) for x in re.findall(r'href="/object/0x([0-9a-f]+)"', body)]


# ---- security ----------------------------------------------------------------------

def test_without_the_token_every_page_is_refused(jdk8):
    for path in PAGES + ["/object/0x1", "/nowhere"]:
        status, _, body = request(jdk8, path, token=False)
        assert status == 403 and "java" not in body
    status, _, _ = request(jdk8, "/?token=" + "x" * len(jdk8.token), token=False)
    assert status == 403
    status, _, _ = request(jdk8, "/", token=False, cookie=f"hprofkit_token_{jdk8.port}=wrong")
    assert status == 403
    status, _, _ = request(jdk8, "/", token=False, cookie=f"hprofkit_token_{jdk8.port + 1}={jdk8.token}")
    assert status == 403  # another server's cookie
    assert request(jdk8, "/?" + "&".join(f"f{i}=1" for i in range(30)))[0] == 400


def test_a_foreign_host_header_is_refused(jdk8):
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends its own name as Host."""
    for host in (f"evil.example:{jdk8.port}", "127.0.0.1", f"127.0.0.1:{jdk8.port + 1}", ""):
        assert request(jdk8, "/", host=host)[0] == 403
    assert request(jdk8, "/", host=f"localhost:{jdk8.port}")[0] == 200


def test_the_first_visit_sets_a_strict_cookie_that_then_suffices(jdk8):
    status, headers, _ = request(jdk8, "/")
    assert status == 200
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    pair = cookie.split(";")[0]
    assert pair == f"hprofkit_token_{jdk8.port}={jdk8.token}"
    status, headers, _ = request(jdk8, "/histogram", token=False, cookie=pair)
    assert status == 200 and "Set-Cookie" not in headers


def test_every_page_answers_with_the_policy_and_no_cors(jdk8):
    heap = jdk8.heap
    obj = heap.top_retainers(1)[0][0]
    for path in PAGES + [f"/object/0x{obj.id:x}", f"/dominators/0x{obj.id:x}",
                         "/class/" + quote(obj.class_name, safe="")]:
        status, headers, body = request(jdk8, path)
        assert status == 200, path
        assert "script-src" not in headers["Content-Security-Policy"]  # default-src 'none': no script runs
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert not any(k.lower().startswith("access-control") for k in headers)
        assert "<script" not in body
        # The one style the policy allows is the page's own, by its hash.
        style = re.search(r"<style>(.*?)</style>", body, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert f"style-src 'sha256-{digest}';" in headers["Content-Security-Policy"]
        assert " style=" not in body


def test_serve_returns_the_url_with_a_random_token():
    with hprofkit.open_heap(JDK8) as heap, hprofkit.serve(heap) as a, hprofkit.serve(heap) as b:
        assert isinstance(a, str) and a.server.token != b.server.token and len(a.server.token) >= 32
        assert a == f"http://127.0.0.1:{a.server.port}/?token={a.server.token}"
        with urllib.request.urlopen(a) as answer:
            assert answer.status == 200
    assert a.server._httpd.socket.fileno() == -1  # closed: its socket listens no more


def test_serve_closes_what_it_opened():
    url = hprofkit.serve(JDK8)
    heap = url.server.heap
    url.close()
    assert heap.closed


# ---- the pages' figures --------------------------------------------------------------

def test_overview_shows_the_reachable_heap_and_the_suspects(hostile):
    """The reachable heap by a plain walk from the GC roots over every reference; the
    suspects: the objects no other dominates holding more than 10% of it."""
    server, _ = hostile
    heap = server.heap
    seen, todo = set(), [r.object_id for r in heap.gc_roots]
    while todo:
        obj_id = todo.pop()
        if obj_id in seen:
            continue
        try:
            obj = heap.object(obj_id)
        except KeyError:
            continue
        seen.add(obj_id)
        todo.extend(r.target_id for r in obj.references())
    reachable = sum(heap.object(i).shallow_size for i in seen)
    body = ok(server, "/")
    assert f'title="{reachable:,} bytes"' in body
    suspects = {o.id for o in heap.objects() if heap.dominator(o) is None and o.id in seen
                and heap.retained_size(o) > reachable // 10}
    assert suspects
    shown = {int(x, 16) for x in re.findall(r'<h3><a href="/object/0x([0-9a-f]+)"', body)}
    assert shown == suspects


def test_object_page_shows_sizes_fields_referrers_and_path(jdk8):
    heap = jdk8.heap
    obj = next(o for o, _ in heap.top_retainers(50) if o.kind == "instance" and o.referrer_count)
    body = ok(jdk8, f"/object/0x{obj.id:x}")
    figures = byte_figures(body)
    assert figures[:2] == [obj.shallow_size, heap.retained_size(obj)]
    # Every reference field is a link to its target.
    links = set(object_ids(body))
    for f in obj.fields():
        if hasattr(f.value, "id"):
            assert f.value.id in links
    # Referrers: the objects whose references name it (a plain walk of the heap).
    referrers = {o.id for o in heap.objects() if any(r.target_id == obj.id for r in o.references())}
    shown = set(object_ids(body.split("<h2>Referrers")[1].split("<h2>")[0]))
    assert referrers and shown <= referrers and len(shown) == min(len(referrers), PAGE)
    # The path: each hop's target, root first, ending at the object.
    path = heap.path_to_root(obj)
    hops = object_ids(body.split("<h2>Path from a GC root")[1].split("<h2>")[0])
    assert len(path.hops) <= 2 * pages.PATH_ENDS
    assert hops == [h.target.id for h in path.hops] and hops[-1] == obj.id


def test_a_long_path_shows_its_ends(tmp_path):
    """A chain of 300 nodes from a static: the path's first and last PATH_ENDS hops, and how
    many between (the chain written here, its order known)."""
    heap = LeakyHeap()
    heap.cls("com.example.Node", fields=[("next", "object")])
    heap.cls("com.example.Holder", statics={"sHead": ("object", None)})
    chain = [heap.new("com.example.Node")]
    for _ in range(299):
        chain.append(heap.new("com.example.Node"))
        heap.set(chain[-2], next=chain[-1])
    heap.set_static("com.example.Holder", "sHead", "object", chain[0])
    heap.write(tmp_path / "chain.hprof")
    with hprofkit.serve(tmp_path / "chain.hprof") as url:
        body = ok(url.server, f"/object/0x{chain[-1]:x}")
    section = body.split("<h2>Path from a GC root")[1].split("<h2>")[0]
    hops = object_ids(section)
    assert hops[-pages.PATH_ENDS:] == chain[-pages.PATH_ENDS:]
    assert len(hops) == 2 * pages.PATH_ENDS and hops[1:pages.PATH_ENDS] == chain[:pages.PATH_ENDS - 1]
    total = 1 + len(chain)  # the class's static, then every node
    assert f"({total:,} hops)" in section and f"{total - 2 * pages.PATH_ENDS:,} hops more" in section


def test_dominator_pages_walk_down_and_up(jdk8):
    heap = jdk8.heap
    roots = ok(jdk8, "/dominators")
    top = re.findall(r'href="/dominators/0x([0-9a-f]+)"', roots)
    assert top and len(top) <= PAGE
    first = heap.object(int(top[0], 16))
    assert heap.dominator(first) is None
    assert byte_figures(roots)[0] == max(heap.retained_size(heap.object(int(x, 16))) for x in top)
    node = ok(jdk8, f"/dominators/0x{first.id:x}")
    children = [int(x, 16) for x in re.findall(r'href="/dominators/0x([0-9a-f]+)"', node)]
    # Its children: the objects whose immediate dominator it is, largest retained first.
    assert all(heap.dominator(heap.object(c)) == first for c in children)
    sizes = [heap.retained_size(heap.object(c)) for c in children]
    assert sizes == sorted(sizes, reverse=True)
    if children:
        below = ok(jdk8, f"/dominators/0x{children[0]:x}")
        assert f'up: <a href="/dominators/0x{first.id:x}"' in below


def test_histogram_pages_hold_every_class_once(jdk8):
    """Paged to the end, the histogram lists every reachable class with its instances,
    against a plain count over the objects a GC root reaches."""
    heap = jdk8.heap
    seen, page = [], 0
    while True:
        body = ok(jdk8, f"/histogram?page={page}")
        names = [html.unescape(quote_back) for quote_back in re.findall(r'<a href="/class/[^"]*">([^<]*)</a>', body)]
        assert len(names) <= PAGE
        seen += names
        if f"?page={page + 1}" not in body:
            break
        page += 1
    assert len(seen) == len(set(seen)) == len(heap.histogram())
    assert page == (len(seen) - 1) // PAGE
    counts = {c.name: c.instances for c in heap.histogram()}
    assert set(seen) == set(counts)


@pytest.mark.parametrize("bad", ["-1", "x", "1e3"])
def test_a_bad_page_number_is_a_404(jdk8, bad):
    assert request(jdk8, f"/histogram?page={bad}")[0] == 404


def test_a_page_past_the_end_is_empty(jdk8):
    body = ok(jdk8, "/histogram?page=100000")
    assert "/class/" not in body.split("</nav>")[1] and "next</a>" not in body


def test_class_page_ranks_instances_by_retained_size(jdk8):
    heap = jdk8.heap
    cls = heap.find_class("java.lang.String")
    body = ok(jdk8, "/class/java.lang.String")
    ids = object_ids(body.split("<h3>Instances")[1].split("<h2>Static fields")[0])
    ranked = sorted(heap.retained_size(o) for o in cls.instances())[::-1][:PAGE]
    assert [heap.retained_size(heap.object(i)) for i in ids] == ranked
    assert f"<td class=\"n\">{cls.instance_count:,}</td>" in body


def test_class_pages_past_the_first_ranking(jdk8):
    """Pages beyond the instances ranked by the first pass (RANKED) rank again, the same way."""
    heap = jdk8.heap
    ranked = sorted(heap.find_class("java.lang.String").instances(), key=lambda o: (-heap.retained_size(o), o.id))
    assert len(ranked) > (RANKED // PAGE + 2) * PAGE
    for page in (1, RANKED // PAGE - 1, RANKED // PAGE + 1, 0):
        body = ok(jdk8, f"/class/java.lang.String?page={page}")
        ids = object_ids(body.split("<h3>Instances")[1].split("<h2>Static fields")[0])
        assert ids == [o.id for o in ranked[page * PAGE:(page + 1) * PAGE]], page


def test_search_finds_an_id_a_class_and_a_string(hostile):
    server, ids = hostile
    body = ok(server, f"/search?q=0x{ids['presenter']:x}")
    assert f"/object/0x{ids['presenter']:x}" in body
    assert "com.example.Presenter" in ok(server, "/search?q=Presenter")
    body = ok(server, "/search?q=" + quote("window.__pwned"))
    assert f"/object/0x{ids['hostile_string']:x}" in body


def test_a_string_search_goes_on_where_it_stopped(jdk8, monkeypatch):
    """Followed to the end, the search on links list every String holding the text once
    (against a plain pass over the Strings), each page reading SCAN Strings at most."""
    monkeypatch.setattr(pages, "SCAN", 500)
    heap = jdk8.heap
    cls = heap.find_class("java.lang.String")
    q = "java/"
    holding = [s.id for s in cls.instances() if q in (s.as_str() or "")]
    assert len(holding) > pages.SEARCH and cls.instance_count > 2 * pages.SCAN
    seen, path, visits = [], f"/search?q={quote(q)}", 0
    while path:
        body = ok(jdk8, path)
        visits += 1
        seen += object_ids(body.split("<h2>Strings")[1])
        more = re.search(r'<a href="(/search\?[^"]*)">search on</a>', body)
        path = html.unescape(more.group(1)) if more else None
    assert seen == holding
    assert visits >= cls.instance_count // pages.SCAN
    assert request(jdk8, "/search?q=x&from=-1")[0] == 404


def test_unknown_objects_and_classes_are_404(jdk8):
    assert request(jdk8, "/object/0x1")[0] == 404
    assert request(jdk8, "/object/zz")[0] == 404
    assert request(jdk8, "/class/no.such.Class")[0] == 404
    assert request(jdk8, "/classtree/999999999")[0] == 404


def test_an_array_pages_its_elements(hostile):
    server, ids = hostile
    heap = server.heap
    array = heap.object(ids["hostile_object"]).fields()[0].value
    body = ok(server, f"/object/0x{array.id:x}")
    elements = object_ids(body.split("<h2>Elements")[1].split("<h2>")[0])
    assert elements == [e.id for e in array.tolist()][:PAGE]
    rest = ok(server, f"/object/0x{array.id:x}?page=1")
    assert object_ids(rest.split("<h2>Elements")[1].split("<h2>")[0]) == [e.id for e in array.tolist()][PAGE:2 * PAGE]


def test_a_primitive_array_pages_its_values(hostile):
    """The hostile String's char[] (big-endian in the dump), as tolist() reads it."""
    server, ids = hostile
    chars = server.heap.object(ids["hostile_string"]).fields()
    array = next(f.value for f in chars if f.name == "value")
    values = array.tolist()
    assert len(values) > 2 * PAGE
    for page in (0, 1, len(values) // PAGE):
        body = ok(server, f"/object/0x{array.id:x}?page={page}")
        cells = re.findall(r"<tr><td>\[(\d+)\]</td><td>([^<]*)</td></tr>", body)
        expected = list(enumerate(values))[page * PAGE:(page + 1) * PAGE]
        assert [(int(i), html.unescape(v)) for i, v in cells] == [(i, repr(chr(v) if isinstance(v, int) else v))
                                                                  for i, v in expected]
        assert (f"?page={page + 1}" in body) == (len(values) > (page + 1) * PAGE)


def test_a_collection_links_its_entries_which_page(hostile, jdk8):
    server, ids = hostile
    heap = server.heap
    registry = heap.find_class("com.example.Registry")
    activities = next(f.value for f in registry.statics() if f.name == "sActivities")
    body = ok(server, f"/object/0x{activities.id:x}")
    assert f'href="/entries/0x{activities.id:x}"' in body
    listed = object_ids(ok(server, f"/entries/0x{activities.id:x}").split("</p>", 1)[1])
    assert listed == sorted(o.id for o in heap.find_class("com.example.MainActivity").instances())
    assert "/entries/" not in ok(server, f"/object/0x{ids['presenter']:x}")  # no collection
    assert request(server, f"/entries/0x{ids['presenter']:x}")[0] == 404
    # A map of more than a page, against entries().
    heap = jdk8.heap
    cls = heap.find_class("java.util.HashMap")
    big = max(cls.instances(), key=lambda m: heap.retained_size(m))
    entries = big.entries()
    assert len(entries) > PAGE
    for page in (0, 1):
        body = ok(jdk8, f"/entries/0x{big.id:x}?page={page}").split("</p>", 1)[1]
        cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", body)
        assert cells == [(jdk8.pages.value(k), jdk8.pages.value(v)) for k, v in entries[page * PAGE:(page + 1) * PAGE]]


def test_a_bitmap_shows_its_picture():
    """Android's bitmaps (the dialer's ARGB_8888 ones): the object page embeds a PNG of the
    bitmap's shape, scaled to PICTURE pixels at most (read back from the PNG's header)."""
    with hprofkit.serve(DIALER) as url:
        heap = url.server.heap
        bitmaps = [b for b in heap.bitmaps() if b.has_pixels]
        assert bitmaps
        for bmp in bitmaps[:3]:
            body = ok(url.server, f"/object/0x{bmp.object.id:x}")
            png = base64.b64decode(re.search(r'<img src="data:image/png;base64,([^"]+)"', body).group(1))
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
            width, height = struct.unpack(">II", png[16:24])
            scale = min(1.0, pages.PICTURE / max(bmp.width, bmp.height))
            assert abs(width - bmp.width * scale) <= 1 and abs(height - bmp.height * scale) <= 1
        other = next(o for o in heap.objects() if o.kind == "instance" and o.class_name != "android.graphics.Bitmap")
        assert "<img" not in ok(url.server, f"/object/0x{other.id:x}")


def test_leaks_and_diff_pages(hostile):
    server, ids = hostile
    heap = server.heap
    leaks = heap.find_leaks()
    body = ok(server, "/leaks")
    assert set(object_ids(body)) >= {lk.object.id for lk in leaks}
    assert f"Leaks ({len(leaks):,})" in body
    diff = ok(server, "/diff")
    assert "com.example.MainActivity" in diff and "+2" in diff  # 3 activities against 1


# ---- hostile strings -------------------------------------------------------------

def test_hostile_strings_render_as_text(hostile):
    server, ids = hostile
    for path in ["/", f"/object/0x{ids['hostile_string']:x}", f"/object/0x{ids['hostile_object']:x}",
                 "/class/" + quote(HOSTILE_CLASS, safe=""), "/histogram", "/leaks", "/waste",
                 "/search?q=" + quote(HOSTILE_TEXT[:20]), "/dominators", "/classtree"]:
        body = ok(server, path)
        assert "<script" not in body.lower() and "window.__pwned" not in body.replace(
            html.escape("window.__pwned"), ""), path
    text = ok(server, f"/object/0x{ids['hostile_string']:x}")
    # As text, a lone surrogate (not UTF-8) as its escape.
    assert html.escape(HOSTILE_TEXT).encode("utf-8", "backslashreplace").decode("utf-8") in text


# ---- threads ---------------------------------------------------------------------------

def test_concurrent_requests_answer_as_one_at_a_time(jdk8):
    heap = jdk8.heap
    objs = [o for o, _ in heap.top_retainers(8)]
    paths = [f"/object/0x{o.id:x}" for o in objs] + PAGES
    alone = {p: ok(jdk8, p) for p in paths}
    results: list[tuple[str, int, str]] = []
    lock = threading.Lock()

    def fetch(p):
        status, _, body = request(jdk8, p)
        with lock:
            results.append((p, status, body))

    threads = [threading.Thread(target=fetch, args=(p,)) for p in paths * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 * len(paths)
    assert all(status == 200 and body == alone[p] for p, status, body in results)


# ---- the command line ------------------------------------------------------------------

@contextlib.contextmanager
def serve_cli(*options):
    """`python -m hprofkit serve JDK8 --port 0 --no-browser OPTIONS` running; reaped at the end."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "hprofkit", "serve", str(JDK8), "--port", "0", "--no-browser",
                             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        yield proc
    finally:
        reap(proc)


def test_the_cli_prints_the_url_first_and_stops_on_sigint():
    with serve_cli() as proc:
        url = proc.stdout.readline().strip()  # the first line: serving from here on
        parts = urlsplit(url)
        assert parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.query.startswith("token=")
        conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=60)
        conn.request("GET", "/?" + parts.query)
        assert conn.getresponse().status == 200
        conn.close()
        proc.send_signal(signal.SIGINT)
        assert end(proc) == 0
        assert proc.stderr.read().splitlines()[-1] == "hprofkit: stopped"


def test_the_cli_warns_when_it_binds_another_host():
    with serve_cli("--host", "0.0.0.0", "--json") as proc:
        warning = proc.stderr.readline()
        assert "WARNING" in warning and "0.0.0.0" in warning
        first = json.loads("".join(iter(proc.stdout.readline, "}\n")) + "}")  # serving from here on
        assert first["host"] == "0.0.0.0"
        assert first["url"] == f"http://127.0.0.1:{first['port']}/?" + first["url"].split("?")[1]
        proc.send_signal(signal.SIGINT)
        assert end(proc) == 0
