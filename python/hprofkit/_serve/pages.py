"""The pages of hprofkit serve: server-rendered HTML, one query over the open
Heap each, every string from the dump through html.escape (esc), every
long list paged (?page=N, PAGE rows) and read only as far as that page.

Whole-heap results (histogram, class tree, leaks, waste, diff) are computed
once, on the first visit of their page, under a lock (threads share them)."""

from __future__ import annotations

import heapq
import html
import itertools
import struct
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Sequence, cast
from urllib.parse import quote, unquote

from .._report.dominators import Ranking, accumulation_chain
from .._report.images import thumbnail
from .._report.sections import accumulated_by_class, class_suspects, suspect_threshold
from .._units import human_size

if TYPE_CHECKING:
    from .._heap import Heap, HeapClass, HeapObject
    from .._report.objects import ObjectTable

PAGE = 50              # rows of a paged list
TEXT = 10_000          # a String's characters shown
SEARCH = 50            # results of each kind a search lists
SCAN = 100_000         # Strings a search page reads at most
LARGE_ARRAY = 1 << 20  # the waste page's large arrays: this many bytes or more
RANKED = 20 * PAGE     # a class's instances ranked by one pass (its first 20 pages)
CLASSES = 16           # classes whose ranking is kept
PATH_ENDS = 25         # hops shown at each end of a longer path from a GC root
PICTURE = 512          # a bitmap's picture: pixels on its longest side at most

STYLE = ("body{font:14px system-ui,sans-serif;margin:0 1.5em 2em;color:#222}nav{padding:.6em 0;"
         "border-bottom:1px solid #ccc;margin-bottom:1em}nav a{margin-right:1em}table{border-collapse:collapse}"
         "td,th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}"
         "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}pre{white-space:pre-wrap;"
         "word-break:break-all;background:#f6f6f6;padding:.5em}.muted{color:#777}nav form{display:inline}")

NAV = (("/", "Overview"), ("/dominators", "Dominator tree"), ("/classtree", "Class tree"),
       ("/histogram", "Histogram"), ("/threads", "Threads"), ("/waste", "Waste"), ("/leaks", "Leaks"),
       ("/diff", "Diff"))


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def hexid(obj_id: int) -> str:
    return f"0x{obj_id:x}"


def obj_href(obj: HeapObject) -> str:
    return f"/object/{hexid(obj.id)}"


def obj_link(obj: Optional[HeapObject]) -> str:
    """An object as a link: class name and id."""
    if obj is None:
        return "<span class=\"muted\">null</span>"
    return f"<a href=\"{obj_href(obj)}\">{esc(obj.class_name)} @ {hexid(obj.id)}</a>"


def class_href(name: str) -> str:
    return "/class/" + quote(name, safe="")


def size(n: int) -> str:
    return f"<td class=\"n\" title=\"{n:,} bytes\">{esc(human_size(n))}</td>"


def count(n: int) -> str:
    return f"<td class=\"n\">{n:,}</td>"


def table(head: Sequence[str], rows: Iterable[str]) -> str:
    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f"<table><tr>{cells}</tr>{''.join(rows)}</table>"


def row(*cells: str) -> str:
    return "<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells) + "</tr>"


class NotFound(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.html = esc(message)


def page_number(query: dict[str, str], name: str = "page") -> int:
    """The query's page (or another count), 0 when absent; NotFound unless a whole number."""
    try:
        n = int(query.get(name, "0"))
    except ValueError:
        raise NotFound(f"{name} must be a whole number") from None
    if n < 0:
        raise NotFound(f"{name} must be 0 or more")
    return n


def pager(path: str, page: int, more: bool) -> str:
    """Links to the previous and next page of a list."""
    links = []
    if page > 0:
        links.append(f"<a href=\"{path}?page={page - 1}\">previous</a>")
    if more:
        links.append(f"<a href=\"{path}?page={page + 1}\">next</a>")
    return f"<p class=\"pager\">page {page} {' '.join(links)}</p>" if links else ""


def primitives(view: memoryview) -> tuple[Any, ...]:
    """A primitive array's values: its memoryview is in the dump's byte order (">H"...),
    which memoryview.tolist() does not read."""
    fmt = view.format
    order, code = (fmt[0], fmt[1:]) if fmt[0] in "<>!=@" else ("@", fmt)
    return struct.unpack(f"{order}{len(view)}{code}", view.tobytes())


def is_collection(obj: HeapObject) -> bool:
    """A collection hprofkit reads (fill_ratio: read from the collection's head, not a walk)."""
    try:
        obj.fill_ratio
    except TypeError:
        return False
    return True


def window(items: Sequence[Any], page: int) -> tuple[Sequence[Any], bool]:
    """The page's rows of a list read up to one past that page, and whether more follow."""
    start = page * PAGE
    return items[start:start + PAGE], len(items) > start + PAGE


class _Itself:
    """The report's object table (sections' table.row) for pages that name objects themselves."""

    @staticmethod
    def row(obj: HeapObject) -> HeapObject:
        return obj


class Pages:
    """Renders a path and query to an HTML page (render), over one Heap."""

    def __init__(self, heap: Heap, baseline: Optional[Heap] = None) -> None:
        self.heap = heap
        self.baseline = baseline
        self._cache: dict[str, Any] = {}
        self._lock = threading.Lock()  # guards _key_locks and _ranked
        self._key_locks: dict[str, threading.Lock] = {}
        self._ranked: OrderedDict[int, list[HeapObject]] = OrderedDict()
        self.routes: dict[str, Callable[[str, dict[str, str]], tuple[str, str]]] = {
            "": self.overview, "object": self.object_page, "entries": self.entries, "class": self.class_page,
            "search": self.search, "dominators": self.dominators, "classtree": self.classtree, "histogram": self.histogram,
            "threads": self.threads, "waste": self.waste, "leaks": self.leaks, "diff": self.diff}

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """compute() the first time a key is asked for, and its result after: one lock a
        key, so one result being computed holds up only the pages that wait for it."""
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            if key not in self._cache:
                self._cache[key] = compute()
            return self._cache[key]

    def render(self, path: str, query: dict[str, str]) -> str:
        head, _, rest = path.strip("/").partition("/")
        route = self.routes.get(head)
        if route is None:
            raise NotFound(f"no page {path}")
        title, body = route(unquote(rest), query)
        return self.frame(title, body)

    def frame(self, title: str, body: str) -> str:
        nav = "".join(f"<a href=\"{href}\">{label}</a>" for href, label in NAV)
        search = ("<form action=\"/search\" method=\"get\"><input name=\"q\" "
                  "placeholder=\"id, class or text\"> <button>Search</button></form>")
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)} - hprofkit"
                f"</title><link rel=\"icon\" href=\"data:,\"><style>{STYLE}</style></head><body><nav>{nav}{search}"
                f"</nav><h1>{esc(title)}</h1>{body}</body></html>\n")

    def object_of(self, text: str) -> HeapObject:
        try:
            obj_id = int(text, 16) if text.lower().startswith("0x") else int(text)
            return self.heap.object(obj_id)
        except (ValueError, KeyError, OverflowError):
            raise NotFound(f"no object {text}") from None

    # ---- overview ---------------------------------------------------------------

    def histogram_rows(self) -> list[Any]:
        rows: list[Any] = self.once("histogram", self.heap.histogram)
        return rows

    def overview(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        heap = self.heap
        reachable = sum(c.shallow_size for c in self.histogram_rows())
        garbage = self.once("unreachable", heap.unreachable_histogram)
        top = [(o, heap.retained_size(o)) for o in heap.dominator_roots(20)]
        facts = table(("", ""), (
            row("objects", count(heap.object_count)), row("classes", count(heap.class_count)),
            row("GC roots", count(heap.gc_root_count)), row("reachable heap", size(reachable)),
            row("unreachable", size(sum(c.shallow_size for c in garbage)))))
        body = (facts + self.once("suspects", lambda: self.suspects(reachable, top)) + "<h2>Top retainers</h2>"
                + table(("object", "retained"), (row(obj_link(o), size(s)) for o, s in top)))
        return "Overview", body

    def suspects(self, reachable: int, top: list[tuple[HeapObject, int]]) -> str:
        """MAT's suspects as the report finds them (_report.sections): each top-level dominator
        holding more than 10% of the reachable heap, with its accumulation point and what that
        point holds by class; then the classes whose other top-level dominators hold as much."""
        heap, threshold = self.heap, suspect_threshold(reachable)

        def share(n: int) -> str:
            return f"<td class=\"n\">{100 * n / max(reachable, 1):.1f}%</td>"

        singles = [(o, n) for o, n in top if n > threshold]
        ranking = Ranking(heap)
        parts = ["<h2>Leak suspects</h2>"]
        for obj, held in singles:
            chain, _ = accumulation_chain(ranking, obj, held)
            point = chain[-1][0]
            by_class = accumulated_by_class(heap, point)
            parts.append(
                f"<h3>{obj_link(obj)} holds {esc(human_size(held))} ({100 * held / max(reachable, 1):.1f}%)</h3>"
                + f"<p>accumulation point: {obj_link(point)}</p>"
                + table(("class (what it dominates directly)", "objects", "shallow", "retained"), (
                    row(f"<a href=\"{class_href(name)}\">{esc(name)}</a>", count(n), size(shallow), size(kept))
                    for name, n, shallow, kept in by_class["rows"])))
        groups = class_suspects(heap, cast("ObjectTable", _Itself()), threshold, {o.id for o, _ in singles})
        for g in groups:
            parts.append(
                f"<h3>{g['instances']:,} instances of <a href=\"{class_href(g['class'])}\">{esc(g['class'])}</a> "
                f"occupy {esc(human_size(g['retained']))} ({100 * g['retained'] / max(reachable, 1):.1f}%)</h3>"
                + table(("object", "retained", "share"), (row(obj_link(o), size(n), share(n)) for o, n in g["biggest"])))
        if not singles and not groups:
            parts.append(f"<p>No object, and no class's top-level dominators, hold more than 10% "
                         f"({esc(human_size(threshold))}) of the reachable heap.</p>")
        return "".join(parts)

    # ---- one object ---------------------------------------------------------------

    def object_page(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        heap, obj, page = self.heap, self.object_of(rest), page_number(query)
        cls = obj.class_
        parts = [table(("", ""), (
            row("class", f"<a href=\"{class_href(obj.class_name)}\">{esc(obj.class_name)}</a>" if cls else
                esc(obj.class_name)),
            row("id", hexid(obj.id)), row("kind", esc(obj.kind)), row("shallow size", size(obj.shallow_size)),
            row("retained size", size(heap.retained_size(obj))),
            row("immediate dominator", obj_link(heap.dominator(obj))),
            row("dominator tree", f"<a href=\"/dominators/{hexid(obj.id)}\">its node</a>"),
            row("GC root", esc(", ".join(obj.root_kinds)) or "no")))]
        text = obj.as_str() if obj.class_name == "java.lang.String" else None
        if text is not None:
            cut = f" (first {TEXT:,} of {len(text):,} characters)" if len(text) > TEXT else ""
            parts.append(f"<h2>Text{cut}</h2><pre>{esc(text[:TEXT])}</pre>")
        if obj.kind == "instance":
            parts.append("<h2>Fields</h2>" + table(("field", "type", "value"), (
                row(esc(f.name), esc(f.type), self.value(f.value)) for f in obj.fields())))
            if is_collection(obj):
                parts.append(f"<p><a href=\"/entries/{hexid(obj.id)}\">its entries</a></p>")
            parts.append(self.picture(obj))
        elif obj.kind == "class":
            name = cast("HeapClass", obj).name
            parts.append(f"<p><a href=\"{class_href(name)}\">class {esc(name)}</a>: its instances</p>"
                         + self.statics(obj))
        else:
            parts.append(self.elements(obj, page))
        parts.append(self.path(obj))
        refs = obj.referrers((page + 1) * PAGE + 1)[page * PAGE:]
        parts.append(f"<h2>Referrers ({obj.referrer_count:,})</h2>" + table(("object", "through"), (
            row(obj_link(r.source), esc(r.name)) for r in refs[:PAGE]))
            + pager(obj_href(obj), page, len(refs) > PAGE))
        below = obj.dominated((page + 1) * PAGE + 1)[page * PAGE:]
        parts.append("<h2>Dominates (largest retained first)</h2>" + table(("object", "retained"), (
            row(obj_link(o), size(heap.retained_size(o))) for o in below[:PAGE]))
            + pager(obj_href(obj), page, len(below) > PAGE))
        return f"{obj.class_name} @ {hexid(obj.id)}", "".join(parts)

    def picture(self, obj: HeapObject) -> str:
        """An android.graphics.Bitmap's picture (PICTURE pixels on its longest side at most),
        or why there is none; nothing for other objects."""
        bitmaps = self.once("bitmaps", lambda: {b.object.id: b for b in self.heap.bitmaps()})
        bmp = bitmaps.get(obj.id)
        if bmp is None:
            return ""
        uri, why = thumbnail(bmp, PICTURE)
        shown = f"<img src=\"{uri}\" alt=\"the bitmap\">" if uri else f"<p>No picture: {esc(why)}</p>"
        return f"<h2>Bitmap ({bmp.width} x {bmp.height})</h2>{shown}"

    def value(self, value: Any) -> str:
        if hasattr(value, "class_name"):
            return obj_link(value)
        return "<span class=\"muted\">null</span>" if value is None else esc(repr(value))

    def statics(self, cls: Any) -> str:
        return "<h2>Static fields</h2>" + table(("field", "type", "value"), (
            row(esc(f.name), esc(f.type), self.value(f.value)) for f in cls.statics()))

    def elements(self, obj: HeapObject, page: int) -> str:
        """An array's elements of one page: a primitive array's from its values, an object array's
        from its references (both read only up to that page)."""
        start = page * PAGE
        length = len(obj)
        if obj.kind == "object_array":
            refs = obj.references(start + PAGE)[start:]
            rows = (row(esc(r.name), obj_link(r.target)) for r in refs)
        else:
            values: Sequence[Any] = primitives(obj.values()[start:start + PAGE])
            if obj.class_name == "char[]":
                values = [chr(v) for v in values]
            rows = (row(f"[{start + i}]", esc(repr(v))) for i, v in enumerate(values))
        return (f"<h2>Elements ({length:,})</h2>" + table(("index", "value"), rows)
                + pager(obj_href(obj), page, length > start + PAGE))

    def entries(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        """A collection's entries (a map's) or elements, one page: the walk reads the
        whole collection (obj.entries()/elements()), so the object page only links here."""
        obj, page = self.object_of(rest), page_number(query)
        try:
            walked: list[Any] = obj.entries()
            head: tuple[str, ...] = ("key", "value")
        except TypeError:
            try:
                walked = obj.elements()
            except TypeError:
                raise NotFound(f"{obj.class_name} @ {hexid(obj.id)} is no collection hprofkit knows") from None
            head = ("element",)
        shown, more = window(walked, page)
        rows = (row(*(self.value(v) for v in item)) if head == ("key", "value") else row(self.value(item))
                for item in shown)
        return (f"Entries of {obj.class_name} @ {hexid(obj.id)} ({len(walked):,})",
                f"<p>{obj_link(obj)}</p>" + table(head, rows) + pager(f"/entries/{hexid(obj.id)}", page, more))

    def path(self, obj: HeapObject) -> str:
        path = self.heap.path_to_root(obj)
        if path is None:
            return "<h2>Path from a GC root</h2><p>No GC root reaches it.</p>"
        hops = path.hops
        n = len(hops)
        shown = range(n) if n <= 2 * PATH_ENDS else [*range(PATH_ENDS), -1, *range(n - PATH_ENDS, n)]
        rows = (row(esc(hops[i].ref_type), esc(hops[i].name or ""), obj_link(hops[i].target)) if i >= 0 else
                row(f"<span class=\"muted\">{n - 2 * PATH_ENDS:,} hops more</span>", "", "") for i in shown)
        return f"<h2>Path from a GC root ({n:,} hops)</h2>" + table(("edge", "name", "object"), rows)

    # ---- classes ----------------------------------------------------------------------

    def class_page(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        heap, page = self.heap, page_number(query)
        classes = heap.classes_named(rest)
        if not classes:
            raise NotFound(f"no class {rest}")
        parts = []
        for cls in classes:
            shown, more = window(self.ranked_instances(cls, (page + 1) * PAGE + 1), page)
            subs = cls.subclasses()
            parts.append(
                f"<h2>{obj_link(cls)}</h2>" + table(("", ""), (
                    row("instances", count(cls.instance_count)),
                    row("retained by its instances", size(cls.instances_retained_size)),
                    row("superclass", f"<a href=\"{class_href(cls.superclass.name)}\">{esc(cls.superclass.name)}</a>"
                        if cls.superclass else "none")))
                + "<h3>Instances (largest retained first)</h3>"
                + table(("object", "retained"), (row(obj_link(o), size(heap.retained_size(o))) for o in shown))
                + pager(class_href(rest), page, more) + self.statics(cls)
                + "<h3>Subclasses</h3>" + ("<ul>" + "".join(
                    f"<li><a href=\"{class_href(s.name)}\">{esc(s.name)}</a></li>" for s in subs) + "</ul>"
                    if subs else "<p>none</p>"))
        return f"class {rest}", "".join(parts)

    def ranked_instances(self, cls: Any, want: int) -> list[HeapObject]:
        """cls's `want` (or more) instances of largest retained size (ties: lower id first).
        One pass over the instances keeps the RANKED largest (or twice `want`) for the
        following pages; a class's ranking is kept for the CLASSES classes seen last."""
        with self._lock:
            kept = self._ranked.get(cls.class_id)
            if kept is not None:
                self._ranked.move_to_end(cls.class_id)
        if kept is None or (len(kept) < want and len(kept) < cls.instance_count):
            heap = self.heap
            kept = heapq.nlargest(max(RANKED, 2 * want), cls.instances(), key=lambda o: (heap.retained_size(o), -o.id))
            with self._lock:
                self._ranked[cls.class_id] = kept
                while len(self._ranked) > CLASSES:
                    self._ranked.popitem(last=False)
        return kept[:want]

    def search(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        """By object id, by class name (a part of it), by a String's text (a part of it): SEARCH each."""
        q = query.get("q", "").strip()
        if not q:
            return "Search", "<p>Give ?q= an object id, a class name or a String's text.</p>"
        heap, parts = self.heap, []
        try:
            obj = heap.object(int(q, 16) if q.lower().startswith("0x") else int(q))
            parts.append(f"<h2>Object</h2><p>{obj_link(obj)}</p>")
        except (ValueError, KeyError, OverflowError):
            pass
        needle = q.lower()
        names = sorted({c.name for c in heap.classes if needle in c.name.lower()})
        parts.append(f"<h2>Classes</h2><ul>" + "".join(
            f"<li><a href=\"{class_href(n)}\">{esc(n)}</a></li>" for n in names[:SEARCH]) + "</ul>")
        parts.append(self.string_search(q, query))
        return f"Search: {q}", "".join(parts)

    def string_search(self, q: str, query: dict[str, str]) -> str:
        """The Strings holding q, SEARCH at most, from the query's `from` (a position among
        the Strings) on, reading SCAN Strings at most: a link goes on from where it stopped."""
        start = page_number(query, "from")
        cls = self.heap.find_class("java.lang.String")
        total = cls.instance_count if cls else 0
        found, position = [], start
        for s in itertools.islice(cls.instances() if cls else (), start, start + SCAN):
            position += 1
            text = s.as_str()  # an instance of java.lang.String
            if text is not None and q in text:
                found.append(row(obj_link(s), f"<pre>{esc(text[:200])}</pre>"))
                if len(found) == SEARCH:
                    break
        more = (f"<p>Read Strings {start:,} to {position:,} of {total:,}: <a href=\"/search?q={quote(q, safe='')}"
                f"&amp;from={position}\">search on</a></p>" if position < total else "")
        return "<h2>Strings</h2>" + table(("object", "text"), found) + more

    # ---- trees --------------------------------------------------------------------

    def dominators(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        """A dominator tree node's children (largest retained first, paged); without a node, the roots."""
        heap, page = self.heap, page_number(query)
        want = (page + 1) * PAGE + 1
        if rest:
            node = self.object_of(rest)
            parent = heap.dominator(node)
            up = (f"<p>up: <a href=\"/dominators/{hexid(parent.id)}\">{esc(parent.class_name)} @ {hexid(parent.id)}"
                  "</a></p>" if parent is not None else "<p>up: <a href=\"/dominators\">the roots</a></p>")
            children = [(o, heap.retained_size(o)) for o in node.dominated(want)]
            title, here = f"Dominator tree: {node.class_name} @ {hexid(node.id)}", f"/dominators/{hexid(node.id)}"
            head = up + f"<p>{obj_link(node)} retains {esc(human_size(heap.retained_size(node)))}</p>"
        else:
            children = [(o, heap.retained_size(o)) for o in heap.dominator_roots(want)]
            title, here, head = "Dominator tree", "/dominators", ""
        shown, more = window(children, page)
        rows = (row(f"<a href=\"/dominators/{hexid(o.id)}\">{esc(o.class_name)} @ {hexid(o.id)}</a>", size(s),
                    f"<a href=\"{obj_href(o)}\">object</a>") for o, s in shown)
        return title, head + table(("child", "retained", ""), rows) + pager(here, page, more)

    def classtree(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        tree, page = self.once("classtree", self.heap.class_tree), page_number(query)
        try:
            node = tree.nodes[int(rest or "0")]
        except (ValueError, IndexError):
            raise NotFound(f"no class tree node {rest}") from None
        trail = []
        up = node
        while up is not None:
            trail.append(f"<a href=\"/classtree/{up.index}\">{esc(up.name)}</a>")
            up = up.parent
        shown, more = window(node.children, page)
        body = (f"<p>{' &larr; '.join(trail)}</p>" + table(("", ""), (
            row("objects", count(node.objects)), row("shallow", size(node.shallow_size)),
            row("retained", size(node.retained_size))))
            + "<h2>Children</h2>" + table(("class path step", "objects", "shallow", "retained"), (
                row(f"<a href=\"/classtree/{c.index}\">{esc(c.name)}</a>", count(c.objects), size(c.shallow_size),
                    size(c.retained_size)) for c in shown))
            + pager(f"/classtree/{node.index}", page, more))
        if node.objects:
            body += "<h2>Sample objects</h2>" + table(("object", "retained"), (
                row(obj_link(o), size(s)) for o, s in node.sample(10)))
        return f"Class tree: {node.name}", body

    # ---- whole-heap tables ------------------------------------------------------------

    def histogram(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        rows, page = self.histogram_rows(), page_number(query)
        shown, more = window(rows, page)
        return f"Histogram ({len(rows):,} classes, reachable objects)", table(
            ("class", "instances", "shallow"), (
                row(f"<a href=\"{class_href(c.name)}\">{esc(c.name)}</a>", count(c.instances), size(c.shallow_size))
                for c in shown)) + pager("/histogram", page, more)

    def threads(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        threads, page = self.once("threads", self.heap.threads), page_number(query)
        shown, more = window(threads, page)
        rows = (row(esc(t.name or ""), obj_link(t.object), size(t.retained_size),
                    "<pre>" + esc("\n".join(str(f) for f in t.frames[:20])) + "</pre>") for t in shown)
        return f"Threads ({len(threads):,})", table(("name", "object", "retained", "stack (top 20)"), rows) + \
            pager("/threads", page, more)

    def waste(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        heap = self.heap
        dups = self.once("duplicate_strings", heap.duplicate_strings)
        waste = self.once("collection_waste", heap.collection_waste)
        large = self.once("large_arrays", lambda: heap.large_arrays(LARGE_ARRAY))
        return "Waste", (
            f"<h2>Duplicate strings ({len(dups):,}, the first {PAGE})</h2>" + table(("text", "copies", "wasted"), (
                row(f"<pre>{esc(d.text[:200])}</pre>", count(d.count), size(d.wasted_bytes)) for d in dups[:PAGE]))
            + f"<h2>Collections ({len(waste):,})</h2>" + table(("class", "instances", "wasted"), (
                row(f"<a href=\"{class_href(w.class_.name)}\">{esc(w.class_.name)}</a>", count(w.instances),
                    size(w.wasted_bytes)) for w in waste[:PAGE]))
            + f"<h2>Large arrays ({len(large):,}, {esc(human_size(LARGE_ARRAY))} or more)</h2>" + table(
                ("array", "bytes"), (row(obj_link(a.array), size(a.bytes)) for a in large[:PAGE])))

    def leaks(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        leaks, page = self.once("leaks", self.heap.find_leaks), page_number(query)
        shown, more = window(leaks, page)
        return f"Leaks ({len(leaks):,})", table(("object", "retained", "trace"), (
            row(obj_link(lk.object), size(lk.retained_size), f"<pre>{esc(lk)}</pre>") for lk in shown)) + \
            pager("/leaks", page, more)

    def diff(self, rest: str, query: dict[str, str]) -> tuple[str, str]:
        baseline = self.baseline
        if baseline is None:
            return "Diff", "<p>No baseline: start serve with --baseline OTHER.</p>"
        from ..heapdiff import diff
        rows = self.once("diff", lambda: sorted(diff(baseline, self.heap).rows,
                                                key=lambda r: (-abs(r.shallow_delta), r.name)))
        page = page_number(query)
        shown, more = window(rows, page)
        return "Diff against the baseline", table(("class", "instances", "shallow bytes"), (
            row(f"<a href=\"{class_href(c.name)}\">{esc(c.name)}</a>", f"<td class=\"n\">{c.count_delta:+,}</td>",
                f"<td class=\"n\">{c.shallow_delta:+,}</td>") for c in shown)) + pager("/diff", page, more)
