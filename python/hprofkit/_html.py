"""HTML for notebooks: what every _repr_html_ of the package is built of.

Everything a dump says (class names, String values, field names, thread
names, watch keys) is untrusted: it enters the markup only through text()
(html.escape, quotes included), never as markup.  Figures are formatted
here too, so that a table shows what the API returns.  The fragments carry
their own small stylesheet, scoped to .hkn, and no script: the interactive
views (flame graph, dominator tree) are report.js's, embedded by
_report.page.view_html."""

from __future__ import annotations

import html
from typing import Any, Iterable, Optional, Sequence

from . import _hprof
from ._units import human_size

# Rows a table shows before it says how many it left out: a repr must stay small whatever the heap.
ROWS = 25
STACK_ROWS = 256
# GC roots the heap's overview counts by kind (it makes each root to read its kind).
ROOTS_BY_KIND = 1_000_000

STYLE = """<style>
.hkn{font:13px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2430;max-width:1100px;text-align:left}
.hkn code,.hkn .hkn-mono{font:12.5px/1.4 ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;background:none;padding:0}
.hkn .hkn-head{font-size:14px;margin:2px 0 6px}
.hkn .hkn-muted{color:#6b7385}
.hkn .hkn-str{color:#a33d12;overflow-wrap:anywhere}
.hkn table.hkn-t{border-collapse:collapse;margin:4px 0 8px;table-layout:auto;width:auto}
.hkn table.hkn-t th{font-weight:600;color:#4a5264;border:0;border-bottom:1px solid #d5d9e2;padding:3px 10px;text-align:left;background:none}
.hkn table.hkn-t td{padding:2px 10px;border:0;border-bottom:1px solid #eef0f4;vertical-align:top;text-align:left;background:none}
.hkn table.hkn-t tr{background:none}
.hkn table.hkn-t td.hkn-num,.hkn table.hkn-t th.hkn-num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.hkn table.hkn-facts td{border:0;padding:1px 14px 1px 0}
.hkn table.hkn-facts td:first-child{color:#6b7385;white-space:nowrap}
.hkn .hkn-bar{display:inline-block;width:120px;height:9px;background:#eef0f4;border-radius:2px;vertical-align:middle}
.hkn .hkn-bar>span{display:block;height:9px;background:#3b6fd8;border-radius:2px}
.hkn ol.hkn-trace{list-style:none;margin:4px 0;padding:0 0 0 4px}
.hkn ol.hkn-trace>li{border-left:3px solid #d5d9e2;padding:2px 0 4px 10px;margin:0;overflow-wrap:anywhere;background:none}
.hkn .hkn-ref{color:#6b7385;padding-left:14px}
.hkn .hkn-suspect{text-decoration:underline wavy #c2410c;text-underline-offset:3px}
.hkn .hkn-status{display:inline-block;font-size:11px;font-weight:700;border-radius:3px;padding:0 5px;margin-left:6px}
.hkn .hkn-LEAKING{background:#fde2e1;color:#b42318}.hkn li.hkn-node-LEAKING{border-left-color:#e5484d}
.hkn .hkn-NOT_LEAKING{background:#dcf5e3;color:#1b7a3d}.hkn li.hkn-node-NOT_LEAKING{border-left-color:#30a46c}
.hkn .hkn-UNKNOWN{background:#eef0f4;color:#4a5264}
.hkn .hkn-fail{color:#b42318}
.hkn details>summary{cursor:pointer;color:#4a5264;font-weight:600;margin-top:4px}
.hkn .hkn-gallery{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end}
.hkn .hkn-gallery figure{margin:0;max-width:260px}.hkn .hkn-gallery img{max-width:256px}
</style>"""


def text(value: Any) -> str:
    """Any value as escaped text: the only way dump data enters markup.  A lone
    surrogate (a String in a dump may hold one) shows as its \\udxxx escape: it
    cannot be encoded, and a notebook's output is UTF-8."""
    return html.escape(str(value).encode("utf-8", "backslashreplace").decode("utf-8"), quote=True)


def count(n: Optional[int]) -> str:
    return "—" if n is None else f"{n:,}"


def size(n: Optional[int]) -> str:
    """Bytes as '12,345 B (12.1 KiB)': the exact figure first, then a readable one."""
    if n is None:
        return "—"
    return f"{n:,} B" if n < 1024 else f"{n:,} B <span class='hkn-muted'>({text(human_size(n))})</span>"


def fragment(*parts: str) -> str:
    """The outer element of every repr: the scoped stylesheet and the parts."""
    return f"<div class='hkn'>{STYLE}{''.join(parts)}</div>"


def head(html_text: str) -> str:
    return f"<div class='hkn-head'>{html_text}</div>"


def facts(pairs: Iterable[tuple[str, str]]) -> str:
    """Two columns of (label, markup) pairs; labels are the package's own words."""
    rows = "".join(f"<tr><td>{text(k)}</td><td>{v}</td></tr>" for k, v in pairs)
    return f"<table class='hkn-t hkn-facts'>{rows}</table>"


def bar(value: int, largest: int) -> str:
    width = 100.0 * value / largest if largest > 0 else 0.0
    return f"<span class='hkn-bar'><span style='width:{width:.1f}%'></span></span>"


def table(columns: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool] = (),
          total: Optional[int] = None, shown: int = ROWS) -> str:
    """A table of markup cells (each already escaped or formatted here); numeric
    columns right-aligned.  At most `shown` rows; `total` rows exist in all."""
    def cell(tag: str, i: int, content: str) -> str:
        cls = " class='hkn-num'" if i < len(numeric) and numeric[i] else ""
        return f"<{tag}{cls}>{content}</{tag}>"
    body = []
    for n, row in enumerate(rows):
        if n == shown:
            break
        body.append("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>")
    more = ""
    if total is not None and total > len(body):
        more = f"<div class='hkn-muted'>{total - len(body):,} more not shown</div>"
    header = "<tr>" + "".join(cell("th", i, text(c)) for i, c in enumerate(columns)) + "</tr>"
    return f"<table class='hkn-t'>{header}{''.join(body)}</table>{more}"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def details(summary: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{body}</details>"


# ---- objects --------------------------------------------------------------------------------

def object_label(obj: Any) -> str:
    """'java.lang.String@0x1f2' (a class: 'class Foo@0x…'), escaped, with a String's text."""
    if obj is None:
        return "<span class='hkn-muted'>null</span>"
    if obj.kind == "class":
        return f"<code>class {text(obj.name)}</code> <span class='hkn-muted'>@0x{obj.id:x}</span>"
    label = f"<code>{text(obj.class_name)}</code> <span class='hkn-muted'>@0x{obj.id:x}</span>"
    if obj.class_name == "java.lang.String":
        value = obj.as_str()
        if value is not None:
            label += f" <span class='hkn-str'>{text(_short_repr(value))}</span>"
    return label


def _short_repr(value: str, limit: int = 80) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


def value(v: Any) -> str:
    """A field's value: an object's label, or the primitive's repr."""
    if isinstance(v, _hprof.HeapObject):
        return object_label(v)
    if v is None:
        return object_label(None)
    return f"<code>{text(repr(v))}</code>"


def object_table(pairs: Sequence[tuple[Any, int]], total: Optional[int] = None, what: str = "retained") -> str:
    """(object, bytes) rows with bars against the largest: top_retainers(), dominated()."""
    largest = max((n for _, n in pairs), default=0)
    rows = ([count(i + 1), object_label(obj), size(n), bar(n, largest)] for i, (obj, n) in enumerate(pairs))
    return table(["#", "object", what, ""], rows, numeric=[True, False, True, False],
                 total=len(pairs) if total is None else total)


def group_table(groups: Sequence[Any]) -> str:
    """heap.retained_by()'s Groups: key, objects, shallow and retained size, a bar."""
    largest = max((g.retained_size for g in groups), default=0)

    def key(k: Any) -> str:
        if isinstance(k, _hprof.HeapObject):
            return object_label(k)
        return "<span class='hkn-muted'>none</span>" if k is None else f"<code>{text(k)}</code>"
    rows = ([key(g.key), count(g.objects), size(g.shallow_size), size(g.retained_size), bar(g.retained_size, largest)]
            for g in groups)
    return table(["group", "objects", "shallow", "retained", ""], rows, numeric=[False, True, True, True, False],
                 total=len(groups))


def class_tree(tree: Any, max_depth: int = 4, rows: int = 8) -> str:
    """ClassTree._repr_html_: its top levels, indented, with bars against the root."""
    total = tree.root.retained_size
    body = []
    for depth, node, hidden, hidden_bytes in tree.rows(max_depth, rows):
        pad = f"<span style='padding-left:{depth * 14}px'></span>"
        if node is None:
            body.append(["", f"{pad}<span class='hkn-muted'>… {hidden:,} more</span>", "", size(hidden_bytes),
                         bar(hidden_bytes, total)])
        else:
            body.append([count(node.objects), f"{pad}<code>{text(node.name)}</code>", size(node.shallow_size),
                         size(node.retained_size), bar(node.retained_size, total)])
    return fragment(head(f"Class tree: {plural(len(tree), 'node')}, {size(total)} retained"),
                    table(["objects", "class", "shallow", "retained", ""], body,
                          numeric=[True, False, True, True, False], shown=len(body)))


def heap_object(obj: Any) -> str:
    """HeapObject._repr_html_: what it is, what it keeps, its fields or elements,
    who refers to it and its path from a GC root."""
    pairs = [("kind", text(obj.kind)), ("shallow size", size(obj.shallow_size)),
             ("retained size", size(obj.retained_size) + f" in {plural(obj.retained_count, 'object')}")]
    if obj.heap_name:
        pairs.append(("heap", text(obj.heap_name)))
    if obj.root_kinds:
        pairs.append(("GC root", text(", ".join(obj.root_kinds))))
    parts = [head(object_label(obj)), facts(pairs)]
    if obj.kind == "instance":
        fields = obj.fields()
        parts.append(details(plural(len(fields), "field"), table(
            ["field", "type", "value"],
            ([text(f.name), text(f.type), value(f.value)] for f in fields), total=len(fields)), open_=True))
    elif obj.kind in ("object_array", "primitive_array"):
        n = len(obj)
        items = [obj[i] for i in range(min(n, ROWS))]
        parts.append(details(plural(n, "element"), table(
            ["index", "value"], ([count(i), value(v)] for i, v in enumerate(items)),
            numeric=[True, False], total=n), open_=True))
    referrers = obj.referrers(limit=ROWS)
    parts.append(details(plural(obj.referrer_count, "referrer"), table(
        ["from", "reference"], ([object_label(r.source), f"<code>{text(r.name)}</code>"] for r in referrers),
        total=obj.referrer_count)))
    path = obj.heap.path_to_root(obj)
    parts.append(details("path from a GC root", _hops(path) if path is not None
                         else "<div class='hkn-muted'>no strong path: unreachable, or held only by weak references "
                              "or excluded ones</div>", open_=path is not None and len(path) <= 12))
    return fragment(*parts)


def _folded(n: int) -> list[int]:
    """The nodes a trace shows, as str() does: all, or the first and last FOLD (-1 for the gap)."""
    from ._reach import FOLD
    return list(range(n)) if n <= 2 * FOLD + 1 else [*range(FOLD), -1, *range(n - FOLD, n)]


def _gap(n: int) -> str:
    from ._reach import FOLD
    return f"<li class='hkn-muted'>… {n - 2 * FOLD:,} more hops …</li>"


def _root(hops: Any) -> str:
    from ._reach import root_description
    return f"<li><span class='hkn-muted'>GC root</span> <code>{text(root_description(hops))}</code></li>"


def _library(matcher: Any) -> str:
    if matcher is None:
        return ""
    return f"<div class='hkn-muted'>library leak match: {text(matcher.description or repr(matcher))}</div>"


def _hops(path: Any) -> str:
    """A path's hops from the root down, each reference named, folded as str(path) folds."""
    from ._reach import _describe, reference_line
    hops = path.hops
    items = [_root(hops)]
    for i in _folded(len(hops)):
        if i < 0:
            items.append(_gap(len(hops)))
            continue
        target = path._target(i)
        ref = "" if i == 0 else f"<div class='hkn-ref'><code>{text(reference_line(hops[i]).strip())}</code></div>"
        items.append(f"<li>{ref}<code>{text(_describe(target))}</code> "
                     f"<span class='hkn-muted'>@0x{target.id:x}</span></li>")
    return f"{_library(path.library_matcher)}<ol class='hkn-trace'>{''.join(items)}</ol>"


def heap_path(path: Any) -> str:
    """HeapPath._repr_html_: the hops from the root down, each reference named."""
    return fragment(head(f"path of {len(path.hops):,} hops to {object_label(path.target)}"), _hops(path))


_STATUS_WORDS = {"LEAKING": "leaking", "NOT_LEAKING": "not leaking", "UNKNOWN": "unknown"}


def _trace_node(node: Any) -> str:
    """One node of a leak trace: its class, status (coloured), reason, what it retains
    when leaking, its labels, and the reference leaving it (underlined when suspect)."""
    from .leaks import LEAKING, _type_name
    status = node.status if node.status in _STATUS_WORDS else "UNKNOWN"
    why = f" <span class='hkn-muted'>{text(node.reason)}</span>" if node.reason else ""
    retained = ""
    if node.status == LEAKING:
        retained = (f"<div class='hkn-muted'>retaining {size(node.object.retained_size)} in "
                    f"{plural(node.object.retained_count, 'object')}</div>")
    extra = "".join(f"<div class='hkn-muted'>{text(label)}</div>" for label in node.labels)
    ref = ""
    if node.reference is not None and node.owner is not None:
        static = "static " if node.reference.ref_type == "STATIC_FIELD" else ""
        dot = "" if node.reference.ref_type == "LOCAL" else "."
        name = text(node.reference_display)
        if node.suspect:
            name = f"<span class='hkn-suspect'>{name}</span>"
        ref = f"<div class='hkn-ref'>↓ <code>{text(static + node.owner.rsplit('.', 1)[-1] + dot)}{name}</code></div>"
    return (f"<li class='hkn-node-{status}'><code>{text(node.class_name)}</code> "
            f"<span class='hkn-muted'>{text(_type_name(node.object))} @0x{node.object.id:x}</span>"
            f"<span class='hkn-status hkn-{status}'>{_STATUS_WORDS[status]}</span>{why}{retained}{extra}{ref}</li>")


def leak(lk: Any) -> str:
    """Leak._repr_html_: LeakCanary's trace, each node's status coloured, the
    suspect references underlined; folded as str(leak) folds."""
    nodes = lk.nodes
    items = [_root(lk.path.hops)]
    for i in _folded(len(nodes)):
        items.append(_gap(len(nodes)) if i < 0 else _trace_node(nodes[i]))
    pairs = [("signature", f"<code>{text(lk.fingerprint)}</code>"),
             ("retained", size(lk.retained_size) + ("" if lk.retained_count is None
                                                    else f" in {plural(lk.retained_count, 'object')}"))]
    if lk.key is not None:
        pairs.append(("watch key", text(lk.key)))
    if lk.library:
        pairs.append(("library leak", text(lk.description or repr(lk.pattern))))
    kind = "library leak" if lk.library else "leak"
    return fragment(head(f"{kind}: {text(lk.short_description)}"), facts(pairs),
                    f"<ol class='hkn-trace'>{''.join(items)}</ol>")


def heap(h: Any) -> str:
    """Heap._repr_html_: the overview, cheap to make (no dominators computed: the
    reachable objects are marked over the reference graph): counts, the reachable
    heap and the unreachable bytes, GC roots by kind, the classes with most
    reachable instances (docs/reference/behaviour.md)."""
    roots: dict[str, int] = {}
    if h.gc_root_count <= ROOTS_BY_KIND:  # a GcRoot is made for each: beyond, the count alone
        for root in h.gc_roots:
            roots[root.kind] = roots.get(root.kind, 0) + 1
    pairs = [("objects", count(h.object_count)), ("classes", count(h.class_count)),
             ("GC roots", count(h.gc_root_count)), ("semantics", text(h.semantics)),
             ("identifiers", f"{h.id_size} bytes"), ("index memory", size(h.memory))]
    if h.heap_dump_count > 1:
        pairs.append(("heap dumps in file", count(h.heap_dump_count)))
    if h.dangling_count:
        pairs.append(("dangling references", count(h.dangling_count)))
    counted = h.histogram()
    garbage = h.unreachable_histogram()
    counts_all = h._members(None) == "all"
    pairs.append(("heap counted" if counts_all else "reachable heap",
                  size(sum(r.shallow_size for r in counted)) + f" in {count(sum(r.instances for r in counted))} "
                  "instances and arrays"))
    pairs.append(("unreachable", size(sum(r.shallow_size for r in garbage))
                  + f" in {count(sum(r.instances for r in garbage))} objects"
                  + (" (counted, as VisualVM does)" if counts_all else " (garbage the dump kept: counted nowhere)")))
    classes = sorted(counted, key=lambda c: c.instances, reverse=True)
    most = classes[0].instances if classes else 0
    class_rows = ([f"<code>{text(c.name)}</code>", count(c.instances), bar(c.instances, most)] for c in classes)
    root_rows = ([f"<code>{text(k)}</code>", count(n)] for k, n in sorted(roots.items(), key=lambda kv: -kv[1]))
    return fragment(head("<b>Heap</b>"), facts(pairs),
                    details("classes by instance count (every object)" if counts_all else
                            "classes by reachable instances",
                            table(["class", "instances", ""], class_rows, numeric=[False, True, False],
                                  total=len(classes)), open_=True),
                    details("GC roots by kind", table(["kind", "roots"], root_rows, numeric=[False, True])))


def heap_class(cls: Any) -> str:
    """HeapClass._repr_html_: the class, its counts, declared fields and statics."""
    fields = cls.fields()
    statics = cls.statics()
    superclass = cls.superclass.name if cls.superclass is not None else "—"
    pairs = [("extends", f"<code>{text(superclass)}</code>"), ("instances", count(cls.instance_count))]
    if cls.instance_size is not None:
        pairs.append(("instance size", size(cls.instance_size)))
    pairs.append(("retained by instances", size(cls.instances_retained_size)
                  + f" in {plural(cls.instances_retained_count, 'object')}"))
    parts = [head(object_label(cls)), facts(pairs)]
    if fields:
        parts.append(details(plural(len(fields), "field"), table(
            ["name", "type"], ([text(f.name), text(f.type)] for f in fields), total=len(fields)), open_=True))
    if statics:
        parts.append(details(plural(len(statics), "static"), table(
            ["name", "type", "value"], ([text(f.name), text(f.type), value(f.value)] for f in statics),
            total=len(statics))))
    return fragment(*parts)


def batch_result(result: Any) -> str:
    """BatchResult._repr_html_: how many inputs ran, the failures, the leak
    groups or the histogram across dumps."""
    failed = result.failed
    parts = [head(f"<b>batch</b> <code>{text(result.task)}</code>: {len(result.rows):,} inputs, "
                  + (f"<span class='hkn-fail'>{len(failed):,} failed</span>" if failed else "none failed"))]
    if result.leak_groups:
        most = max(g.dumps for g in result.leak_groups)
        rows = ([text(g.short_description or g.fingerprint[:12]), count(g.dumps), bar(g.dumps, most),
                 size(g.retained_size), f"<code>{text(g.fingerprint[:12])}</code>"] for g in result.leak_groups)
        parts.append(details(plural(len(result.leak_groups), "leak group"), table(
            ["leak", "dumps", "", "retained", "signature"], rows, numeric=[False, True, False, True, False],
            total=len(result.leak_groups)), open_=True))
    if result.histogram:
        most = max(c.shallow_bytes for c in result.histogram)
        rows = ([f"<code>{text(c.name)}</code>", count(c.dumps), count(c.instances), size(c.shallow_bytes),
                 bar(c.shallow_bytes, most)] for c in result.histogram)
        parts.append(details("classes across the dumps", table(
            ["class", "dumps", "instances", "shallow", ""], rows, numeric=[False, True, True, True, False],
            total=len(result.histogram)), open_=True))
    if failed:
        rows = ([text(_input(r.input)), f"<span class='hkn-fail'>{text(r.error)}</span>", text(r.worker or "")]
                for r in failed)
        parts.append(details(plural(len(failed), "failure"), table(["input", "error", "worker"], rows,
                                                                total=len(failed)), open_=True))
    return fragment(*parts)


def _input(given: Any) -> str:
    from .batching import _input_text
    return _input_text(given)


# ---- threads ---------------------------------------------------------------------------------

def thread(t: Any) -> str:
    """Thread._repr_html_: the stack as jstack prints it, top first, each frame with the
    objects it holds, and the thread object's retained size."""
    name = "<span class='hkn-muted'>unnamed</span>" if t.name is None else f"<code>{text(t.name)}</code>"
    pairs = [("thread object", object_label(t.object)), ("daemon", text("—" if t.daemon is None else t.daemon)),
             ("retained size", size(t.retained_size)), ("serial", count(t.serial))]
    if t.held:
        pairs.append(("also held", ", ".join(object_label(o) for o in t.held[:ROWS]) +
                      (f" <span class='hkn-muted'>and {len(t.held) - ROWS:,} more</span>" if len(t.held) > ROWS else "")))
    rows = ([count(i), f"<code>{text(frame)}</code>", ", ".join(object_label(o) for o in frame.locals)]
            for i, frame in enumerate(t.frames))
    # A stack is read whole, as jstack prints it: up to STACK_ROWS frames (a deeper one says how many more).
    frames = table(["#", "frame", "holds"], rows, numeric=[True, False, False], total=len(t.frames), shown=STACK_ROWS)
    return fragment(head(f"Thread {name}"), facts(pairs),
                    details(plural(len(t.frames), "frame"), frames, open_=True))


# ---- lists of results -------------------------------------------------------------------------

def _leaks(items: Sequence[Any]) -> str:
    largest = max((lk.retained_size or 0 for lk in items), default=0)
    rows = ([f"<code>{text(lk.short_description)}</code>", "library" if lk.library else "application",
             size(lk.retained_size), bar(lk.retained_size or 0, largest), f"<code>{text(lk.fingerprint[:12])}</code>"]
            for lk in items)
    return table(["leak", "kind", "retained", "", "signature"], rows, numeric=[False, False, True, False, False],
                 total=len(items))


def _threads(items: Sequence[Any]) -> str:
    largest = max((t.retained_size for t in items), default=0)
    rows = (["<span class='hkn-muted'>unnamed</span>" if t.name is None else f"<code>{text(t.name)}</code>",
             text("—" if t.daemon is None else t.daemon), count(len(t.frames)), size(t.retained_size),
             bar(t.retained_size, largest)] for t in items)
    return table(["thread", "daemon", "frames", "retained", ""], rows, numeric=[False, False, True, True, False],
                 total=len(items))


def _bitmaps(items: Sequence[Any]) -> str:
    """A gallery: each Bitmap's own figure (its picture scaled down, its description)."""
    shown = items[:GALLERY]
    cells = "".join(f"<div class='hkn-cell'>{b._repr_html_()}</div>" for b in shown)
    more = f"<div class='hkn-muted'>{len(items) - len(shown):,} more not shown</div>" if len(items) > len(shown) else ""
    return f"<div class='hkn-gallery'>{cells}</div>{more}"


def _duplicate_bitmaps(items: Sequence[Any]) -> str:
    rows = ([f"<code>{text(g.digest[:16])}</code>", count(len(g.bitmaps)), size(g.wasted_bytes),
             ", ".join(object_label(b.object) for b in g.bitmaps[:3])] for g in items)
    return table(["pixels", "bitmaps", "wasted", "first"], rows, numeric=[False, True, True, False], total=len(items))


def _fields(items: Sequence[Any]) -> str:
    rows = ([f"<code>{text(f.name)}</code>", text(f.type), value(f.value)] for f in items)
    return table(["field", "type", "value"], rows, total=len(items))


def _references(items: Sequence[Any]) -> str:
    rows = ([f"<code>{text(r.name)}</code>", object_label(r.target)] for r in items)
    return table(["reference", "to"], rows, total=len(items))


def _referrers(items: Sequence[Any]) -> str:
    rows = ([object_label(r.source), f"<code>{text(r.name)}</code>"] for r in items)
    return table(["from", "through"], rows, total=len(items))


def _duplicate_strings(items: Sequence[Any]) -> str:
    largest = max((d.wasted_bytes for d in items), default=0)
    rows = ([f"<span class='hkn-str'>{text(_short_repr(d.text))}</span>", count(d.count), size(d.wasted_bytes),
             bar(d.wasted_bytes, largest)] for d in items)
    return table(["text", "copies", "wasted", ""], rows, numeric=[False, True, True, False], total=len(items))


def _collection_waste(items: Sequence[Any]) -> str:
    largest = max((c.wasted_bytes for c in items), default=0)
    rows = ([f"<code>{text(c.class_name)}</code>", count(c.instances), count(c.empty),
             "—" if c.mean_fill is None else f"{c.mean_fill:.2f}", size(c.wasted_bytes), bar(c.wasted_bytes, largest)]
            for c in items)
    return table(["class", "instances", "empty", "fill", "wasted", ""], rows,
                 numeric=[False, True, True, True, True, False], total=len(items))


def _large_arrays(items: Sequence[Any]) -> str:
    return object_table([(a.array, a.bytes) for a in items], what="shallow")


def _histogram(items: Sequence[Any]) -> str:
    largest = max((r.shallow_size for r in items), default=0)
    rows = ([f"<code>{text(r.name)}</code>", count(r.instances), size(r.shallow_size), bar(r.shallow_size, largest)]
            for r in items)
    return table(["class", "instances", "shallow", ""], rows, numeric=[False, True, True, False], total=len(items))


GALLERY = 24  # bitmaps a gallery shows
_LISTS: dict[str, Any] = {
    "leaks": _leaks, "threads": _threads, "bitmaps": _bitmaps, "duplicate_bitmaps": _duplicate_bitmaps,
    "fields": _fields, "references": _references, "referrers": _referrers, "duplicate_strings": _duplicate_strings,
    "collection_waste": _collection_waste, "large_arrays": _large_arrays, "histogram": _histogram,
}


def result_list(kind: str, items: Sequence[Any]) -> str:
    """ResultList._repr_html_: the list of results of one kind as a table (a gallery of
    bitmaps), its first rows, and how many it holds."""
    one, many = _NOUNS[kind]
    return fragment(head(f"{len(items):,} {one if len(items) == 1 else many}"), _LISTS[kind](items))


_NOUNS = {"leaks": ("leak", "leaks"), "threads": ("thread", "threads"), "bitmaps": ("bitmap", "bitmaps"),
          "duplicate_bitmaps": ("group of identical bitmaps", "groups of identical bitmaps"),
          "fields": ("field", "fields"), "references": ("reference", "references"),
          "referrers": ("referrer", "referrers"), "duplicate_strings": ("duplicated text", "duplicated texts"),
          "collection_waste": ("collection class", "collection classes"),
          "large_arrays": ("large array", "large arrays"), "histogram": ("class", "classes")}
