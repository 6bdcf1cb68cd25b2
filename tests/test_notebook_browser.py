"""The analyst's notebook (tests/notebook_run.py), executed by nbconvert and
exported to HTML, as a person sees it in headless Chromium (tests/chromium.py):
the figures shown are the API's, statuses coloured, bars drawn to scale,
hostile strings shown as text that runs nothing, no console error.
Screenshots go to $HPROFKIT_ARTIFACTS/notebook-screenshots (or a temporary
folder), named on the terminal.

Marked `browser`: skipped where Chromium, chromium-driver or selenium is
missing, except under CI=true, where .ci/run installs them (conftest.peer)."""

from __future__ import annotations

import pytest

import chromium
import hprofkit
import notebook_run
from conftest import HPROF_DIR
from report_dumps import HOSTILE_CLASS

pytestmark = pytest.mark.browser

SHARED = HPROF_DIR / "leakcanary__leak_service_binder.hprof"


@pytest.fixture(scope="module")
def shots(tmp_path_factory, pytestconfig):
    """The folder screenshots go to, named on the terminal."""
    return chromium.screenshot_folder("notebook-screenshots", tmp_path_factory, pytestconfig)


@pytest.fixture(scope="module")
def page(tmp_path_factory, browser, shots):
    """The executed notebook's HTML, open in Chromium: (driver, the hostile dump's ids)."""
    folder = tmp_path_factory.mktemp("notebook-page")
    nb, ids = notebook_run.analyst_notebook(folder, SHARED)
    path = notebook_run.to_html(nb, folder / "analyst.html")
    chromium.open_page(browser, path)  # waits for report.js's mark: the embedded views are drawn
    chromium.screenshot(browser, shots / "notebook.png")
    return browser, ids


def cell_text(driver) -> str:
    """The visible text of every hprofkit output in the page."""
    return driver.execute_script(
        "return [...document.querySelectorAll('.hkn')].map(e => e.innerText).join('\\n')")


def test_no_console_error_and_nothing_hostile_ran(page):
    driver, ids = page
    assert chromium.console_errors(driver) == []
    assert driver.execute_script("return window.__pwned === undefined")
    # The hostile markup is in no element of the page: no <img> of the dump's, no extra script.
    assert driver.execute_script("return document.querySelectorAll('img[src=x]').length") == 0
    # Scripts that run (not the views' JSON data, which holds the markup escaped and inert).
    scripts = driver.execute_script(
        "return [...document.scripts].filter(s => !s.type || s.type.endsWith('javascript') || s.type === 'module')"
        ".map(s => s.text).join('\\n')")
    assert "__pwned" not in scripts
    text = cell_text(driver)
    assert HOSTILE_CLASS in text and "</script><script>window.__pwned='script'</script>" in text
    assert f"@0x{ids['hostile_string']:x}" in text


def test_figures_are_the_apis(page):
    driver, _ = page
    text = cell_text(driver)
    with hprofkit.open_heap(SHARED) as heap:
        for obj, size in heap.top_retainers(8):
            assert f"@0x{obj.id:x}" in text and f"{size:,} B" in text
        assert f"{heap.object_count:,}" in text
        leak = heap.find_leaks()[0]
        assert leak.fingerprint in text


def test_statuses_coloured_and_bars_to_scale(page):
    driver, _ = page
    colours = driver.execute_script(
        "return ['LEAKING', 'NOT_LEAKING', 'UNKNOWN'].map(s => {"
        " const e = document.querySelector('.hkn-status.hkn-' + s);"
        " return e ? getComputedStyle(e).backgroundColor : null; })")
    assert colours[0] == "rgb(253, 226, 225)" and colours[1] == "rgb(220, 245, 227)", colours
    # The top retainers' bars (the second cell): the first full width, each no longer than the one above.
    widths = driver.execute_script(
        "const cell = document.querySelectorAll('.jp-Cell')[1];"
        "return [...cell.querySelectorAll('.hkn-bar > span')].map(s => s.getBoundingClientRect().width)")
    assert widths[0] == pytest.approx(120, abs=1) and widths == sorted(widths, reverse=True)
    assert all(w >= 0 for w in widths) and len(widths) == 8


def view(driver, name: str, nth: int = 0):
    """The element report.js drew the nth `name` view into."""
    return driver.execute_script(
        "const data = document.querySelectorAll(`script[data-hprofkit-view='${arguments[0]}']`)[arguments[1]];"
        "return document.getElementById(data.dataset.hprofkitTarget)", name, nth)


def test_dominator_tree_opens_a_node(page, shots):
    driver, _ = page
    tree = view(driver, "domtree")
    with hprofkit.open_heap(SHARED) as heap:
        roots = heap.dominator_roots()
        top = tree.find_elements("css selector", ":scope > ul > li.hk-tnode")
        assert [li.get_attribute("data-id") for li in top] == [f"{o.id:x}" for o in roots[:20]]
        sizes = [int(e.get_attribute("data-value")) for e in tree.find_elements(
            "css selector", ":scope > ul > li > .hk-trow .hk-tsize")]
        assert sizes == [o.retained_size for o in roots[:20]]
        assert f"and {len(roots) - 20:,} more objects" in tree.text
        # Open the first node with children: its children, as obj.dominated() gives them.
        node = next(li for li in top if li.find_element("css selector", ".hk-ttoggle").is_enabled())
        obj = heap.object(int(node.get_attribute("data-id"), 16))
        toggle = node.find_element("css selector", ".hk-ttoggle")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", toggle)
        toggle.click()
        assert toggle.get_attribute("aria-expanded") == "true"
        kids = node.find_elements("css selector", ":scope > ul > li.hk-tnode")
        assert [li.get_attribute("data-id") for li in kids] == [f"{o.id:x}" for o in obj.dominated(20)]
        assert all(li.is_displayed() for li in kids)
    chromium.element_screenshot(driver, tree, shots / "dominator-tree.png")
    toggle.click()
    assert not kids[0].is_displayed()
    assert chromium.console_errors(driver) == []


def test_flame_graph_zooms_on_click(page, shots):
    driver, _ = page
    flame = view(driver, "flame")
    svg = flame.find_element("css selector", "svg")
    width = float(svg.get_attribute("width"))
    with hprofkit.open_heap(SHARED) as heap:
        biggest = str(heap.class_tree().root.children[0].index)
    chromium.element_screenshot(driver, flame, shots / "flame-graph.png")
    frame = flame.find_element("css selector", f"g.hk-fnode[data-id='{biggest}'] rect")
    before = float(frame.get_attribute("width"))
    assert 0 < before < width / 2
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", svg)
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", frame)
    assert flame.get_attribute("data-focus") == biggest
    frame = flame.find_element("css selector", f"g.hk-fnode[data-id='{biggest}'] rect")
    assert float(frame.get_attribute("width")) == pytest.approx(width - 1, abs=0.01)
    chromium.element_screenshot(driver, flame, shots / "flame-graph-zoomed.png")
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", frame)
    assert flame.get_attribute("data-focus") == ""
    assert chromium.console_errors(driver) == []


def test_views_show_hostile_names_as_text(page):
    driver, ids = page
    tree = view(driver, "domtree", 1)
    assert HOSTILE_CLASS in tree.text and f"@0x{ids['hostile_object']:x}" in tree.text
    assert driver.execute_script("return window.__pwned === undefined")


def test_waste_cards_open_on_their_holders(page, shots):
    driver, _ids = page
    with hprofkit.open_heap(SHARED) as heap:
        w = [k for k in heap.waste() if k.objects]
        cards = driver.find_elements("css selector", "details.hk-waste-kind")
        assert [c.get_attribute("data-kind") for c in cards] == [k.kind for k in w] and cards
        card, kind = cards[0], w[0]
        driver.execute_script("arguments[0].open = true; arguments[0].scrollIntoView()", card)
        holders = [e.text for e in card.find_elements("css selector", "ul.hk-waste-holders code")]
        assert holders == [str(h) for h in kind.holders(10)]
        chromium.screenshot(driver, shots / "notebook-waste.png")
