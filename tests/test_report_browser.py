"""The report as a person sees it, in headless Chromium (tests/chromium.py):
every section drawn with the figures the API gives, the biggest objects'
paths one click away, the histogram's sorting and filter, hostile strings
shown as text, the diff, views embedded in a notebook-like page, and no
console error anywhere.  Screenshots go to $HPROFKIT_ARTIFACTS/report-screenshots
(or a temporary folder), named on the terminal.

Marked `browser`: skipped where Chromium, chromium-driver or selenium is
missing, except under CI=true, where .ci/run installs them (conftest.peer)."""

from __future__ import annotations

import re
from collections import namedtuple
from pathlib import Path

import pytest

import chromium
import hprofkit
from conftest import HPROF_DIR
from hprofkit._report import Limits, write
from hprofkit._report.page import view_html
from leaky_heap import android_app
from report_dumps import HOSTILE_CLASS, HOSTILE_TEXT, hostile_app

pytestmark = pytest.mark.browser

SERVICE_BINDER = HPROF_DIR / "leakcanary__leak_service_binder.hprof"
JDK8 = HPROF_DIR / "mat__oracle_jdk8_05_x64.hprof"


@pytest.fixture(scope="session")
def shots(tmp_path_factory, pytestconfig):
    """The folder screenshots go to, named on the terminal."""
    return chromium.screenshot_folder("report-screenshots", tmp_path_factory, pytestconfig)


def show(browser, page: Path) -> None:
    """Opens the page, waits for report.js's ready mark, and clears the console."""
    chromium.open_page(browser, page)
    errors = chromium.console_errors(browser)
    assert not errors, errors


def no_console_errors(browser) -> None:
    errors = chromium.console_errors(browser)
    assert not errors, errors


def js(browser, script: str, *args):
    return browser.execute_script(script, *args)


def click(browser, element) -> None:
    """A real click, on the element brought to the middle of the window (not under the sticky top bar)."""
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def section_names(browser) -> list[str]:
    return js(browser, "return [...document.querySelectorAll('section[data-section]')].map(s => s.dataset.section)")


def top_level(heap, n):
    ranked = heap.top_retainers(heap.object_count)
    return [(obj, size) for obj, size in ranked if size > 0 and heap.dominator(obj) is None][:n]


def table_rows(browser, name: str) -> list[list]:
    """The visible rows of a table: per cell, its data-value as a number, else its text."""
    return js(browser, """
        const table = document.querySelector(`table[data-table='${arguments[0]}']`);
        return [...table.querySelectorAll('tr.hk-row')].map(tr => [...tr.cells].map(td => {
            const v = td.dataset.value !== undefined ? td : td.querySelector('[data-value]');
            return v ? Number(v.dataset.value) : td.textContent; }));""", name)


@pytest.mark.parametrize("dump", [SERVICE_BINDER, JDK8], ids=lambda p: p.stem)
def test_every_section_shows_the_apis_figures(browser, shots, tmp_path, dump):
    page = Path(hprofkit.report(dump, tmp_path / "report.html"))
    show(browser, page)
    with hprofkit.open(dump) as d:
        stats = d.stats()
    with hprofkit.open_heap(dump) as heap:
        android = heap.find_class("android.graphics.Bitmap") is not None
        assert section_names(browser) == ["overview", "suspects", "leaks", "histogram", "unreachable"] + \
            ["bitmaps"] * android + ["domtree", "flame", "threads", "waste"]
        figures = js(browser, """return Object.fromEntries([...document.querySelectorAll('[data-figure]')].map(
            t => [t.dataset.figure, Number(t.querySelector('[data-value]').dataset.value)]))""")
        # The reachable heap and the garbage, two figures that make stats()' record-level total.
        counted, garbage = heap.histogram(), heap.unreachable_histogram()
        assert figures == {"objects": heap.object_count, "classes": heap.class_count, "gc_roots": len(heap.gc_roots),
                           "total": sum(r.shallow_size for r in counted),
                           "unreachable": sum(r.shallow_size for r in garbage)}
        assert figures["total"] + figures["unreachable"] == sum(t.bytes for t in stats.heap_totals.values())
        def legend(kind):
            return js(browser, f"return [...document.querySelectorAll(\".hk-legend[data-kind='{kind}'] li\")].map("
                               "li => [li.dataset.part, Number(li.querySelector('.hk-legend-value').dataset.value)])")
        heaps = [[name, sum(r.per_heap[name][1] for r in counted if name in r.per_heap)] for name in stats.heaps]
        assert legend("heap") == (heaps if len(heaps) > 1 else [])
        # The composition: the classes of most shallow bytes, then the rest.
        by_shallow = sorted(counted, key=lambda r: (-r.shallow_size, r.name))[:8]
        total = figures["total"]
        assert legend("class") == [[r.name, r.shallow_size] for r in by_shallow] + \
            [["other classes", total - sum(r.shallow_size for r in by_shallow)]]
        # The chart of the biggest objects: the top-level dominators, each bar its retained size.
        bars = js(browser, "return [...document.querySelectorAll('button.hk-bar')].map(b => "
                           "[b.querySelector('[data-id]').dataset.id, Number(b.dataset.value)])")
        assert bars == [[f"{obj.id:x}", size] for obj, size in top_level(heap, 20)]
        # The histogram's first rows (largest retained first): each class's count and sizes.
        rows = table_rows(browser, "histogram")
        assert len(rows) == min(100, len(counted))
        instances_of = {r.class_.class_id: r.instances for r in counted}
        for name_cell, instances, shallow, retained in rows:
            name, class_id = re.fullmatch(r"(.+) @0x([0-9a-f]+)", name_cell).groups()
            cls = heap.object(int(class_id, 16))
            assert (cls.name, instances_of[cls.class_id], cls.instances_retained_size) == (name, instances, retained)
        assert [r[3] for r in rows] == sorted((r[3] for r in rows), reverse=True)
        # The unreachable objects, by class, most shallow bytes first.
        rows = table_rows(browser, "unreachable")
        assert [(re.fullmatch(r"(.+) @0x[0-9a-f]+", r[0]).group(1), r[1], r[2]) for r in rows] == \
            [(r.name, r.instances, r.shallow_size) for r in garbage[:100]]
        # Leak traces: one card per fingerprint, with its count of leaks.
        leaks = heap.find_leaks()
        cards = js(browser, "return [...document.querySelectorAll('article.hk-leak')].map(a => "
                            "[a.dataset.fingerprint, Number(a.dataset.count), a.querySelectorAll('.hk-trace-node').length])")
        assert sorted(c[:2] for c in cards) == sorted([fp, sum(lk.fingerprint == fp for lk in leaks)]
                                                      for fp in {lk.fingerprint for lk in leaks})
        for fingerprint, _, nodes in cards:
            assert nodes == len(next(lk for lk in leaks if lk.fingerprint == fingerprint).nodes)
    chromium.screenshot(browser, shots / f"report-{dump.stem}.png")
    no_console_errors(browser)


def test_a_biggest_object_shows_its_path_from_a_gc_root_on_click(browser, shots, tmp_path):
    show(browser, Path(hprofkit.report(SERVICE_BINDER, tmp_path / "report.html")))
    with hprofkit.open_heap(SERVICE_BINDER) as heap:
        # A suspect's path is its own shortest; the others' come from one search for them all.
        ranked = top_level(heap, 20)
        total = sum(t.bytes for t in hprofkit.stats(SERVICE_BINDER).heap_totals.values())
        suspects = [obj for obj, size in ranked if size > total // 10]
        others = [obj for obj, _ in ranked if obj not in suspects]
        expected = dict(zip(others, heap.paths_to_root(others, exclude=())))
        expected.update((obj, heap.path_to_root(obj, exclude=())) for obj in suspects)
        assert suspects and suspects[0] == ranked[0][0]
        for obj, _ in ranked[:3]:
            path = expected[obj]
            button = browser.find_element("css selector", f"button.hk-bar:has([data-id='{obj.id:x}'])")
            click(browser, button)
            hops = js(browser, "return [...document.querySelectorAll('.hk-chart-details .hk-hop')].map(li => "
                               "[li.querySelector('.hk-via').textContent, li.querySelector('[data-id]').dataset.id])")
            assert [target for _, target in hops] == [f"{hop.target.id:x}" for hop in path.hops]
            assert hops[0][0] == f"GC root {path.hops[0].name}"
            assert js(browser, "return document.querySelector('.hk-chart-details .hk-details-head [data-id]')"
                               ".dataset.id") == f"{obj.id:x}"
        chromium.screenshot(browser, shots / "report-path-on-click.png")
        click(browser, button)  # a second click closes it
        assert js(browser, "return document.querySelector('.hk-chart-details').children.length") == 0
    no_console_errors(browser)


ClassRow = namedtuple("ClassRow", "name instances")


def test_the_histogram_sorts_filters_and_shows_more(browser, tmp_path):
    show(browser, Path(hprofkit.report(SERVICE_BINDER, tmp_path / "report.html")))
    with hprofkit.open_heap(SERVICE_BINDER) as heap:
        histogram = [ClassRow(r.name, r.instances) for r in heap.histogram()]
    table = "table[data-table='histogram']"
    header = {name: browser.find_element("css selector", f"{table} th[data-col='{i}']")
              for i, name in enumerate(("class", "instances", "shallow", "retained"))}
    click(browser, header["instances"])
    counts = [row[1] for row in table_rows(browser, "histogram")]
    assert counts == sorted((r.instances for r in histogram), reverse=True)[:100]
    click(browser, header["instances"])
    assert [row[1] for row in table_rows(browser, "histogram")] == sorted(r.instances for r in histogram)[:100]
    click(browser, header["class"])
    names = [row[0].split(" @0x")[0] for row in table_rows(browser, "histogram")]
    assert names == sorted(r.name for r in histogram)[:100]
    click(browser, browser.find_element("css selector", "section[data-section='histogram'] button.hk-more"))
    assert len(table_rows(browser, "histogram")) == min(200, len(histogram))
    # The filter: text or a regular expression, case ignored.
    browser.find_element("css selector", "section[data-section='histogram'] .hk-filter").send_keys("string$")
    names = [row[0].split(" @0x")[0] for row in table_rows(browser, "histogram")]
    assert sorted(names) == sorted(r.name for r in histogram if re.search("string$", r.name, re.I))
    status = js(browser, "return document.querySelector(\"section[data-section='histogram'] .hk-table-status\").textContent")
    assert status == f"Showing {len(names)} of {len(names)} {'class' if len(names) == 1 else 'classes'} matching"
    no_console_errors(browser)


def test_the_histogram_shows_one_android_heap_on_demand(browser, tmp_path):
    dialer = HPROF_DIR / "platform_tools_base__dialer.android-hprof"
    show(browser, Path(hprofkit.report(dialer, tmp_path / "report.html")))
    with hprofkit.open_heap(dialer) as heap:
        counted = heap.histogram()
    heaps = {name: [(r.name, *r.per_heap[name]) for r in counted if r.per_heap.get(name, (0,))[0]]
             for name in counted[0].per_heap}
    choice = browser.find_element("css selector", "section[data-section='histogram'] select.hk-heap-choice")
    assert [o.text for o in choice.find_elements("css selector", "option")] == \
        ["All heaps"] + [f"Heap: {name}" for name in heaps]
    from selenium.webdriver.support.ui import Select
    Select(choice).select_by_visible_text("Heap: app")
    choice = browser.find_element("css selector", "section[data-section='histogram'] select.hk-heap-choice")
    assert Select(choice).first_selected_option.text == "Heap: app"
    click(browser, browser.find_element("css selector", "table[data-table='histogram'] th[data-col='2']"))
    more = browser.find_element("css selector", "section[data-section='histogram'] button.hk-more")
    while more.is_displayed():
        click(browser, more)
    rows = table_rows(browser, "histogram")
    assert [r[2] for r in rows] == sorted((shallow for _, _, shallow in heaps["app"]), reverse=True)
    assert sorted((r[0].split(" @0x")[0], r[1], r[2]) for r in rows) == sorted(heaps["app"])
    header = js(browser, "return document.querySelector(\"table[data-table='histogram'] th[data-col='3']\").textContent")
    assert header == "Retained (all heaps)"
    no_console_errors(browser)


def test_bitmaps_show_as_images(browser, shots, tmp_path):
    show(browser, Path(hprofkit.report(SERVICE_BINDER, tmp_path / "report.html")))
    with hprofkit.open_heap(SERVICE_BINDER) as heap:
        found = sorted(heap.bitmaps(), key=lambda b: (-(b.byte_size or 0), b.object.id))
        # Each thumbnail loaded (the policy allows data: images) at the bitmap's proportions.
        shown = js(browser, "return [...document.querySelectorAll('figure.hk-bitmap')].map(f => { const i = "
                            "f.querySelector('img'); return [f.dataset.id, i && i.complete ? [i.naturalWidth, "
                            "i.naturalHeight] : null]; })")
        assert [obj_id for obj_id, _ in shown] == [f"{b.object.id:x}" for b in found]
        for (_, size), bmp in zip(shown, found):
            step = -(-max(bmp.width, bmp.height) // 96)
            assert size == ([-(-bmp.width // step), -(-bmp.height // step)] if bmp.has_pixels else None)
        dups = js(browser, "return [...document.querySelectorAll('.hk-duplicates')].map(d => Number(d.dataset.count))")
        assert dups == [len(g.bitmaps) for g in heap.duplicate_bitmaps()]
    section = browser.find_element("css selector", "section[data-section='bitmaps']")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    chromium.screenshot(browser, shots / "report-bitmaps.png")
    no_console_errors(browser)


def test_hostile_strings_render_as_text(browser, shots, tmp_path):
    hostile_app(tmp_path / "app.hprof", activities=2)
    show(browser, Path(hprofkit.report(tmp_path / "app.hprof", tmp_path / "report.html")))
    assert js(browser, "return window.__pwned === undefined && document.images.length === 0 && "
                       "document.querySelectorAll('script').length === 2")
    # The String's text, the class name and the watch key are on the page, as text (toWellFormed:
    # WebDriver cannot carry the text's lone surrogate back).
    before_surrogate = HOSTILE_TEXT.split("\ud800")[0]
    texts = js(browser, "return [...document.querySelectorAll('.hk-str')].map(e => e.textContent.toWellFormed())")
    assert any(t.startswith('"' + before_surrogate) for t in texts), texts
    titles = js(browser, "return [...document.querySelectorAll('.hk-class')].map(e => e.title)")
    assert HOSTILE_CLASS in titles
    labels = js(browser, "return [...document.querySelectorAll('.hk-labels li')].map(e => e.textContent.toWellFormed())")
    assert any(label.startswith("key = " + before_surrogate) for label in labels), labels
    chromium.screenshot(browser, shots / "report-hostile.png")
    no_console_errors(browser)


def test_leak_cards_come_a_page_at_a_time_with_their_objects_on_demand(browser, tmp_path):
    heap = android_app()
    for i in range(60):  # 60 fingerprints: each activity kept by a class of its own
        name = heap.cls(f"com.example.Holder{i}", statics={"sKept": ("object", None)})
        heap.set_static(name, "sKept", "object", heap.new("com.example.MainActivity", mDestroyed=True))
    heap.write(tmp_path / "app.hprof")
    show(browser, Path(hprofkit.report(tmp_path / "app.hprof", tmp_path / "report.html")))
    cards = "return document.querySelectorAll('article.hk-leak').length"
    more = browser.find_element("css selector", "section[data-section='leaks'] > div > button.hk-more")
    assert js(browser, cards) == 25 and more.text == "Show 25 more fingerprints"
    click(browser, more)
    assert js(browser, cards) == 50 and more.text == "Show 10 more fingerprints"
    click(browser, more)
    assert js(browser, cards) == 60 and not more.is_displayed()
    # A fingerprint of one leak shows its objects' table once opened.
    first = browser.find_element("css selector", "article.hk-leak")
    assert not first.find_elements("css selector", "table")
    click(browser, first.find_element("css selector", "summary"))
    # <details> fires "toggle" as a task of its own, after the click returns: wait for the table it draws.
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 120).until(lambda _: first.find_elements("css selector", "table[data-table='leak-objects']"))
    rows = first.find_elements("css selector", "table[data-table='leak-objects'] tr.hk-row")
    assert len(rows) == 1 and "MainActivity" in rows[0].text
    no_console_errors(browser)


def test_the_diff_shows_hprofkit_diff(browser, shots, tmp_path):
    hostile_app(tmp_path / "base.hprof", activities=1)
    hostile_app(tmp_path / "app.hprof", activities=4)
    show(browser, Path(hprofkit.report(tmp_path / "app.hprof", tmp_path / "report.html",
                                       baseline=tmp_path / "base.hprof")))
    assert section_names(browser) == ["overview", "diff", "suspects", "leaks", "histogram", "unreachable", "domtree",
                                      "flame", "threads", "waste"]
    expected = hprofkit.diff(tmp_path / "base.hprof", tmp_path / "app.hprof", retained=True, paths=True)
    rows = table_rows(browser, "diff")
    assert sorted((r[0], r[1], r[2], r[3]) for r in rows) == sorted(
        (r.name, r.count_delta, r.shallow_delta, r.retained_delta) for r in expected.rows)
    paths = js(browser, "return [...document.querySelectorAll('.hk-growth > li')].map(li => "
                        "[...li.querySelectorAll('.hk-growth-path code')].map(c => c.textContent))")
    assert paths == [list(p.path) for p in expected.paths]
    chromium.screenshot(browser, shots / "report-diff.png")
    no_console_errors(browser)


def test_views_embed_in_a_notebook_like_page(browser, shots, tmp_path):
    """Two outputs, each with the bundle (as two notebook cells would
    render): both drawn, the bundle defined once."""
    hostile_app(tmp_path / "app.hprof", activities=2)
    from hprofkit._report import collect
    from hprofkit._report.source import opened
    with opened(tmp_path / "app.hprof") as src:
        data = collect(src)
    context = {"objects": data["objects"], "paths": data["paths"]}
    cells = [view_html("histogram", data["sections"]["histogram"]),
             view_html("leaks", dict(data["sections"]["leaks"], **context))]
    page = tmp_path / "notebook.html"
    page.write_text("<!DOCTYPE html><meta charset=utf-8><title>cells</title><body>"
                    + "".join(f"<div class='cell'>{cell}</div>" for cell in cells) + "</body>")
    show(browser, page)
    assert js(browser, "return window.hprofkit.version") == 1
    assert js(browser, "return [...document.querySelectorAll('.hk-embed')].map(e => e.children.length > 0)") == [True, True]
    assert len(table_rows(browser, "histogram")) == len(data["sections"]["histogram"]["rows"])
    assert js(browser, "return document.querySelectorAll('article.hk-leak').length") == 2
    assert js(browser, "return window.__pwned === undefined && document.images.length === 0")
    chromium.screenshot(browser, shots / "notebook-views.png")
    no_console_errors(browser)


def section_body(browser, name: str):
    return browser.find_element("css selector", f"section[data-section='{name}'] .hk-section-body")


@pytest.mark.parametrize("dump", [SERVICE_BINDER, JDK8], ids=lambda p: p.stem)
def test_the_dominator_tree_opens_and_shows_paths_and_the_flame_graph_zooms(browser, shots, tmp_path, dump):
    show(browser, Path(hprofkit.report(dump, tmp_path / "report.html")))
    tree = section_body(browser, "domtree")
    with hprofkit.open_heap(dump) as heap:
        roots = heap.dominator_roots()
        top = tree.find_elements("css selector", ":scope > ul > li.hk-tnode")
        assert [li.get_attribute("data-id") for li in top] == [f"{o.id:x}" for o in roots[:20]]
        sizes = [int(e.get_attribute("data-value")) for e in tree.find_elements(
            "css selector", ":scope > ul > li > .hk-trow .hk-tsize")]
        assert sizes == [o.retained_size for o in roots[:20]]
        # Opening the first node with children shows what it dominates, largest first.
        node = next(li for li in top if li.find_element("css selector", ".hk-ttoggle").is_enabled())
        obj = heap.object(int(node.get_attribute("data-id"), 16))
        toggle = node.find_element("css selector", ".hk-ttoggle")
        click(browser, toggle)
        kids = node.find_elements("css selector", ":scope > ul > li.hk-tnode")
        assert [li.get_attribute("data-id") for li in kids] == [f"{o.id:x}" for o in obj.dominated(20)]
        assert all(li.is_displayed() for li in kids)
        # A click on a child names it, with its path from a GC root.
        child = heap.object(int(kids[0].get_attribute("data-id"), 16))
        click(browser, kids[0].find_element("css selector", ":scope > .hk-trow .hk-tobj"))
        card = kids[0].find_element("css selector", ":scope > .hk-details")
        path = heap.path_to_root(child, exclude=())
        hops = card.find_elements("css selector", "ol.hk-path > li.hk-hop:not(.hk-skip) .hk-target [data-id]")
        if path:
            assert hops[-1].get_attribute("data-id") == f"{child.id:x}"
            assert len(card.find_elements("css selector", "ol.hk-path > li.hk-hop")) == \
                min(len(path.hops), 25)
        else:
            assert "No strong path" in card.text
        chromium.element_screenshot(browser, tree, shots / f"report-domtree-{dump.stem}.png")
        # The flame graph draws the class tree: its widest frame below "all" is the class path that
        # retains most, not "more objects"; a click zooms on it and lists its largest objects, a second
        # zooms out.
        flame = section_body(browser, "flame")
        svg = flame.find_element("css selector", "svg")
        width = float(svg.get_attribute("width"))
        tree = heap.class_tree()
        top = tree.root.children[0]
        widest = js(browser, """
            const frames = [...arguments[0].querySelectorAll('g.hk-fnode')].filter(
                g => Number(g.querySelector('rect').getAttribute('y')) > 0);
            const g = frames.reduce((a, b) => Number(a.querySelector('rect').getAttribute('width')) >=
                                              Number(b.querySelector('rect').getAttribute('width')) ? a : b);
            return [g.dataset.id, g.classList.contains('hk-frest'), g.querySelector('title').textContent];""", flame)
        assert widest[:2] == [str(top.index), False]
        assert widest[2].startswith(f"{top.name}: {top.objects:,} object{'s' * (top.objects != 1)}, ")
        frame = flame.find_element("css selector", f"g.hk-fnode[data-id='{top.index}'] rect")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", svg)
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", frame)
        assert flame.get_attribute("data-focus") == str(top.index)
        frame = flame.find_element("css selector", f"g.hk-fnode[data-id='{top.index}'] rect")
        assert float(frame.get_attribute("width")) == pytest.approx(width - 1, abs=0.01)
        listed = [li.get_attribute("data-id") for li in flame.find_elements("css selector", ".hk-fobjects li")]
        assert listed == [f"{obj.id:x}" for obj, _ in top.sample(5)]
        chromium.element_screenshot(browser, flame, shots / f"report-flame-{dump.stem}.png")
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", frame)
        assert flame.get_attribute("data-focus") == ""
        assert flame.find_elements("css selector", ".hk-fobjects li") == []
        # The search box highlights the frames of a class, and only those.
        name = tree.root.children[1].name if len(tree.root.children) > 1 else top.name
        search = flame.find_element("css selector", "input.hk-fsearch")
        click(browser, search)
        search.send_keys(name)
        matched = js(browser, "return [...arguments[0].querySelectorAll('g.hk-fmatch title')].map(t => t.textContent)",
                     flame)
        assert matched and all(name.lower() in t.split(": ")[0].lower() for t in matched)
        dimmed = js(browser, "return [...arguments[0].querySelectorAll('g.hk-fdim title')].map(t => t.textContent)",
                    flame)
        assert all(name.lower() not in t.split(": ")[0].lower() for t in dimmed)
        # The status counts every frame of the document that matches, drawn or too narrow to draw.
        frames = [row for row in heap.flamegraph(frames=Limits().flame_frames).data["nodes"]
                  if name.lower() in row[0].lower()]
        assert len(matched) <= len(frames)
        assert flame.find_element("css selector", ".hk-fstatus").text.startswith(
            f"{len(frames):,} frame{'s' * (len(frames) != 1)} match")
    no_console_errors(browser)


def test_threads_and_waste_show_the_apis_figures(browser, shots, tmp_path):
    show(browser, Path(hprofkit.report(JDK8, tmp_path / "report.html")))
    with hprofkit.open_heap(JDK8) as heap:
        threads = sorted(heap.threads(), key=lambda t: (-t.retained_size, t.serial))
        shown = js(browser, "return [...document.querySelectorAll('details.hk-thread')].map(d => "
                            "[d.dataset.name, Number(d.dataset.frames)])")
        assert shown == [[t.name or "", len(t.frames)] for t in threads]
        # A thread opened: its stack as jstack prints it.
        deepest = max(range(len(threads)), key=lambda i: len(threads[i].frames))
        card = browser.find_elements("css selector", "details.hk-thread")[deepest]
        click(browser, card.find_element("css selector", "summary"))
        frames = [e.text for e in card.find_elements("css selector", "li.hk-frame > code")]
        assert frames == ["at " + str(f) for f in threads[deepest].frames][:len(frames)] and frames
        # Above the stack, what the thread retains (its stack's objects among them), largest first.
        kids = threads[deepest].object.dominated()
        assert card.find_element("css selector", "h4").get_attribute("textContent") == "Retains, largest first" and kids
        items = card.find_element("css selector", "ul.hk-held").find_elements("css selector", "li")
        assert [f"@0x{o.id:x}" in item.text for o, item in zip(kids, items)] == [True] * min(len(kids), 20)
        strings = heap.duplicate_strings()
        rows = table_rows(browser, "duplicate-strings")
        assert rows == [[s.text, s.count, s.wasted_bytes] for s in strings[:50]]
        collections = heap.collection_waste()
        rows = table_rows(browser, "collections")
        assert [[r[0], r[1], r[2], r[4]] for r in rows] == \
            [[c.class_name, c.instances, c.empty, c.wasted_bytes] for c in collections[:50]]
        # Every kind of waste, opened: the fields holding it and its largest objects.
        w = heap.waste()
        cards = browser.find_elements("css selector", "details.hk-waste-kind")
        assert [c.get_attribute("data-kind") for c in cards] == [k.kind for k in w if k.objects]
        for card in cards:
            kind = w[card.get_attribute("data-kind")]
            click(browser, card.find_element("css selector", "summary"))
            holders = [e.text for e in card.find_elements("css selector", "ul.hk-waste-holders code")]
            assert holders == [str(h) for h in kind.holders(Limits().waste_holders)]
            items = card.find_elements("css selector", "ul.hk-waste-items li")
            assert [f"@0x{i.object.id:x}" in e.text for i, e in zip(kind.items, items)] == \
                [True] * min(kind.objects, Limits().waste_items)
        more = browser.find_element("css selector", "section[data-section='waste']").text
        if len(strings) > Limits().duplicate_strings:
            assert f"and {len(strings) - Limits().duplicate_strings:,} more texts not listed" in more
    chromium.screenshot(browser, shots / "report-threads-waste.png")
    no_console_errors(browser)


def test_a_class_suspect_and_the_objects_accumulated_by_class(browser, tmp_path):
    """MAT's class suspect reads as MAT words it, and an accumulation point's table lists the
    classes of what it holds directly."""
    heap = android_app()
    heap.cls("com.example.Cache", fields=[("data", "object")])
    for i in range(40):
        heap.roots.append(("jni_global", heap.new("com.example.Cache", data=heap.string("c" * (200 + i)))))
    items = [heap.string("x" * 2000) for _ in range(30)] + [heap.new("com.example.Cache") for _ in range(5)]
    heap.roots.append(("jni_global", heap.array(items)))
    heap.write(tmp_path / "cache.hprof")
    data = write(tmp_path / "cache.hprof", tmp_path / "r.html")
    show(browser, tmp_path / "r.html")
    [group] = [g for g in data["sections"]["suspects"]["groups"] if g["class"] == "com.example.Cache"]
    card = "article.hk-class-suspect[data-class='com.example.Cache'] .hk-lead"
    lead = js(browser, f"return document.querySelector(\"{card}\").textContent")
    assert lead.startswith("40 instances of com.example.Cache occupy ")
    assert js(browser, f"return Number(document.querySelector(\"{card} [data-value]\").dataset.value)") == \
        group["retained"]
    # The single suspect's table: String and Cache, most retained first.
    click(browser, browser.find_element("css selector", "article.hk-suspect:not(.hk-class-suspect) "
                                                        ".hk-more-details:has(table[data-table='accumulated']) summary"))
    rows = table_rows(browser, "accumulated")
    [item] = data["sections"]["suspects"]["items"]
    assert [[r[0], r[1], r[2], r[3]] for r in rows] == item["accumulated"]["rows"]
    assert [r[0] for r in rows] == ["java.lang.String", "com.example.Cache"]
    no_console_errors(browser)
