"""The package in a real notebook: cells executed by nbconvert in a real
ipykernel over a shared dump and a hostile one, each rich output checked
against the API's own figures, and every string from the dump shown as
text (never as markup)."""

from __future__ import annotations

import html
import json
import re

import pytest

import hprofkit
import notebook_run
from conftest import HPROF_DIR
from report_dumps import HOSTILE_CLASS, HOSTILE_TEXT

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

SHARED = HPROF_DIR / "leakcanary__leak_service_binder.hprof"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The analyst's notebook, executed once: (notebook, its folder, the hostile dump's ids)."""
    folder = tmp_path_factory.mktemp("notebook")
    nb, ids = notebook_run.analyst_notebook(folder, SHARED)
    return nb, folder, ids


@pytest.fixture(scope="module")
def heap():
    with hprofkit.open_heap(SHARED) as h:
        yield h


def figures_in_order(page: str, figures: list[str]) -> None:
    """Each figure appears in the page, after the one before."""
    at = 0
    for figure in figures:
        found = page.find(figure, at)
        assert found >= 0, f"{figure!r} missing after offset {at}"
        at = found + len(figure)


def test_heap_overview(executed, heap):
    page = notebook_run.html_of(executed[0], "open")
    figures_in_order(page, ["objects", f"{heap.object_count:,}", "classes", f"{heap.class_count:,}",
                            "GC roots", f"{len(heap.gc_roots):,}"])
    biggest = max(heap.classes, key=lambda c: c.instance_count)
    assert f"<code>{html.escape(biggest.name)}</code>" in page


def test_top_retainers_table_with_bars(executed, heap):
    top = heap.top_retainers(8)
    assert isinstance(top, list) and isinstance(top, hprofkit.ObjectTable)
    assert top == list(top) and top[:2] == [tuple(t) for t in top[:2]]
    assert json.loads(json.dumps([(o.id, n) for o, n in top])) == [[o.id, n] for o, n in top]
    page = notebook_run.html_of(executed[0], "top")
    figures = []
    for obj, size in top:
        figures += [f"@0x{obj.id:x}", f"{size:,} B"]
    figures_in_order(page, figures)
    widths = [float(w) for w in re.findall(r"<span style='width:([\d.]+)%'>", page)]
    assert widths == sorted(widths, reverse=True) and widths[0] == 100.0 and len(widths) == len(top)


def test_object_dominated_and_class(executed, heap):
    nb = executed[0]
    obj = next(o for o, _ in heap.top_retainers(50) if o.kind == "instance")
    page = notebook_run.html_of(nb, "biggest")
    path = heap.path_to_root(obj)
    figures_in_order(page, [f"@0x{obj.id:x}", f"{obj.shallow_size:,} B", f"{obj.retained_size:,} B",
                            f"{obj.retained_count:,} object", f"{len(obj.referrers()):,} referrer",
                            "path from a GC root"] + [f"@0x{hop.target.id:x}" for hop in path])
    assert obj.heap is heap
    dominated = obj.dominated(6)
    assert isinstance(dominated, hprofkit.ObjectTable)
    figures_in_order(notebook_run.html_of(nb, "dominated"),
                     [f for d in dominated for f in (f"@0x{d.id:x}", f"{d.retained_size:,} B")])
    thread = heap.find_class("java.lang.Thread")
    page = notebook_run.html_of(nb, "class")
    figures_in_order(page, [f"{thread.instance_count:,}", f"{thread.instances_retained_size:,} B",
                            f"{len(thread.fields())} field"])


def test_retained_by_table(executed, heap):
    groups = heap.retained_by("package")
    assert isinstance(groups, hprofkit.GroupTable) and groups == list(groups)
    page = notebook_run.html_of(executed[0], "packages")
    figures_in_order(page, [f for g in groups[:25] for f in (f"<code>{g.key}</code>", f"{g.objects:,}",
                                                             f"{g.retained_size:,} B")])
    assert f"{len(groups) - 25:,} more not shown" in page


def test_leak_trace_statuses_coloured(executed, heap):
    nb = executed[0]
    leak = heap.find_leaks()[0]
    page = notebook_run.html_of(nb, "leak")
    assert leak.fingerprint in page and html.escape(leak.short_description) in page
    statuses = re.findall(r"<li class='hkn-node-(LEAKING|NOT_LEAKING|UNKNOWN)'>", page)
    assert statuses == [node.status for node in leak.nodes]
    assert "leaking</span>" in page and ".hkn .hkn-LEAKING{background:#fde2e1" in page
    path_page = notebook_run.html_of(nb, "path")
    figures_in_order(path_page, [f"path of {len(leak.path):,} hops"] + [f"@0x{hop.target.id:x}" for hop in leak.path])


def test_hostile_strings_are_text(executed):
    nb, _, ids = executed
    page = notebook_run.html_of(nb, "hostile") + notebook_run.html_of(nb, "hostile_leaks")
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert html.escape(HOSTILE_CLASS) in page
    assert html.escape("</script><script>window.__pwned='script'</script>") in page
    assert f"@0x{ids['hostile_string']:x}" in page and f"@0x{ids['hostile_object']:x}" in page
    # The watch key, whole: its lone surrogate shown as an escape.
    key = HOSTILE_TEXT.encode("utf-8", "backslashreplace").decode("utf-8")
    assert html.escape(key) in page
    for out in notebook_run.outputs(nb, "hostile"):
        assert out["output_type"] in ("display_data", "execute_result"), out


def test_batch_result(executed):
    nb, folder, _ = executed
    page = notebook_run.html_of(nb, "batch")
    result = hprofkit.batch("leaks", [SHARED, folder / "hostile.hprof", folder / "missing.hprof"],
                            progress=False, jobs=1)
    assert f"3 inputs, <span class='hkn-fail'>1 failed</span>" in page
    figures_in_order(page, [f for g in result.leak_groups for f in (g.fingerprint[:12],)])
    assert html.escape(result.failed[0].error) in page


def test_long_paths_and_leaks_fold_as_their_text(tmp_path):
    """A 20,000-node leak chain (tests/hostile.py): the path and leak views show the
    first and last FOLD nodes and count the others, as str() does: a small page."""
    import hostile
    from hprofkit._reach import FOLD
    dump = tmp_path / "chain.hprof"
    hostile.write_dump(dump, hostile.leak_chain_dump(20_000))
    with hprofkit.open_heap(dump) as heap:
        (leak,) = heap.find_leaks()
        n = len(leak.nodes)
        for page in (leak._repr_html_(), leak.path._repr_html_()):
            assert f"… {n - 2 * FOLD:,} more hops …" in page
            assert page.count("<li") == 2 * FOLD + 2 and len(page) < 20_000
        assert re.findall(r"<li class='hkn-node-(\w+)'>", leak._repr_html_()) == \
            [leak.nodes[i].status for i in [*range(FOLD), *range(n - FOLD, n)]]


def test_result_lists_show_as_tables_in_human_units(heap):
    """#35: find_leaks(), threads(), bitmaps(), duplicate_bitmaps(), the waste queries, histogram(),
    fields(), references(), referrers() and slices of retained_by() printed a bare repr; each is
    now a list a notebook shows as a table of its first rows, sizes in human units."""
    from hprofkit._units import human_size
    obj = next(o for o, _ in heap.top_retainers(50) if o.kind == "instance" and o.referrer_count)
    results = {
        "leaks": (heap.find_leaks(), lambda lk: [html.escape(lk.short_description), lk.fingerprint[:12]]),
        "threads": (heap.threads(), lambda t: [html.escape(t.name or "unnamed"), human_size(t.retained_size)]),
        "duplicate_strings": (heap.duplicate_strings(), lambda d: [f"{d.count:,}", human_size(d.wasted_bytes)]),
        "collection_waste": (heap.collection_waste(), lambda c: [html.escape(c.class_name), f"{c.instances:,}"]),
        "large_arrays": (heap.large_arrays(4096), lambda a: [f"@0x{a.array.id:x}", human_size(a.bytes)]),
        "histogram": (heap.histogram(), lambda r: [html.escape(r.name), f"{r.instances:,}"]),
        "fields": (obj.fields(), lambda f: [html.escape(f.name)]),
        "references": (obj.references(), lambda r: [html.escape(r.name), f"@0x{r.target_id:x}"]),
        "referrers": (obj.referrers(), lambda r: [f"@0x{r.source_id:x}", html.escape(r.name)]),
        "duplicate_bitmaps": (heap.duplicate_bitmaps(), lambda g: [g.digest[:16], f"{len(g.bitmaps):,}"]),
    }
    for kind, (items, figures) in results.items():
        assert isinstance(items, hprofkit.ResultList) and items.kind == kind and items, kind
        page = items._repr_html_()
        assert re.search(rf"<div class='hkn-head'>{len(items):,} \w", page), kind
        figures_in_order(page, [f for item in items[:5] for f in figures(item)])
        assert isinstance(items[:3], hprofkit.ResultList) and items[:3] == list(items)[:3]
        if len(items) > 25:
            assert f"{len(items) - 25:,} more not shown" in page
    # A gallery of bitmaps, each its own figure.
    bitmaps = heap.bitmaps()
    page = bitmaps._repr_html_()
    assert page.count("<figure>") == min(len(bitmaps), 24) and "hkn-gallery" in page
    groups = heap.retained_by("class")[:3]
    assert isinstance(groups, hprofkit.GroupTable) and len(groups) == 3
    assert isinstance(heap.top_retainers(9)[:2], hprofkit.ObjectTable)
    # Still the lists they were: pickled, compared and dumped as JSON alike.
    import pickle
    strings = heap.duplicate_strings()
    assert pickle.loads(pickle.dumps(strings)) == strings and pickle.loads(pickle.dumps(strings)).kind == strings.kind
    assert json.loads(json.dumps(strings[:2])) == [list(d) for d in strings[:2]]


def test_a_diff_shows_sizes_in_human_units(heap):
    other = hprofkit.open_heap(HPROF_DIR / "platform_tools_base__dialer.android-hprof")
    result = hprofkit.diff(other, heap)
    page = result._repr_html_()
    from hprofkit._units import human_size
    row = result.rows[0]
    figures_in_order(page, [html.escape(row.name), f"{row.count_delta:+,}", human_size(abs(row.shallow_delta))])
    assert f"title='{row.shallow_delta:+,} B'" in page


def test_waste_shows_the_reports_view_of_every_kind(executed, heap):
    """heap.waste() in a notebook: report.js's waste view, its data every kind's figures, largest
    objects and holders as the report cuts them (the browser test sees it drawn)."""
    from hprofkit._report.sections import Limits
    page = notebook_run.html_of(executed[0], "waste")
    (raw,) = re.findall(r'data-hprofkit-view="waste"[^>]*>(.*?)</script>', page, re.S)
    data = json.loads(html.unescape(raw))
    w = heap.waste()
    assert data["total_bytes"] == w.total_bytes
    assert [(k["kind"], k["objects"], k["wasted_bytes"]) for k in data["kinds"]] == \
        [(k.kind, k.objects, k.wasted_bytes) for k in w]
    rows = data["objects"]["rows"]
    for row, kind in zip(data["kinds"], w):
        assert [(int(rows[r][0], 16), b) for r, b in row["items"]] == \
            [(i.object.id, i.wasted_bytes) for i in kind.items[:Limits().waste_items]]
        assert row["holders"] == [[str(h), h.objects, h.wasted_bytes] for h in kind.holders(Limits().waste_holders)]
    assert all(r[4] is None for r in rows)  # no dominator tree computed for the view
