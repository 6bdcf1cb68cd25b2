"""hprofkit serve as a person uses it, in headless Chromium (tests/chromium.py):
from the overview to a suspect, to its object page, along a reference link,
back up the dominator tree; a visit without the token refused; hostile
strings shown as text; a bitmap's picture drawn; no console error (a Content Security Policy violation
is one).  Screenshots go to $HPROFKIT_ARTIFACTS/serve-screenshots (or a
temporary folder), named on the terminal.

Marked `browser`: skipped where Chromium, chromium-driver or selenium is
missing, except under CI=true (conftest.peer)."""

from __future__ import annotations

import pytest

import chromium
import hprofkit
from conftest import HPROF_DIR
from report_dumps import HOSTILE_TEXT, hostile_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shots(tmp_path_factory, pytestconfig):
    return chromium.screenshot_folder("serve-screenshots", tmp_path_factory, pytestconfig)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve-browser")
    ids = hostile_app(folder / "app.hprof", activities=3)
    url = hprofkit.serve(folder / "app.hprof")
    yield url.server, ids
    url.close()


def no_console_errors(browser) -> None:
    errors = chromium.console_errors(browser)
    assert not errors, errors


def follow(browser, link) -> None:
    """A real click on a link, and the next page loaded."""
    from selenium.webdriver.support.ui import WebDriverWait
    old = browser.find_element("tag name", "html")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    WebDriverWait(browser, 60).until(lambda d: d.find_element("tag name", "html") != old)


def test_click_from_a_suspect_along_a_reference_and_up_the_dominator_tree(browser, served, shots):
    server, ids = served
    heap = server.heap
    browser.get(server.url)
    chromium.screenshot(browser, shots / "overview.png")
    suspects = browser.find_elements("css selector", "h3 > a[href^='/object/']")  # a suspect heads its section
    assert suspects, "the hostile app has top-level dominators over 10% of its heap"
    first = suspects[0]
    suspect = heap.object(int(first.get_attribute("href").rsplit("/0x", 1)[1], 16))
    assert heap.dominator(suspect) is None
    follow(browser, first)
    assert browser.current_url.endswith(f"/object/0x{suspect.id:x}")  # the token went into the cookie
    chromium.screenshot(browser, shots / "suspect.png")
    # Along a reference: a field's value, or an array's element.
    refs = browser.find_elements("xpath", "//h2[normalize-space(.)='Fields' or starts-with(normalize-space(.), 'Elements')]"
                                          "/following-sibling::table[1]//a[starts-with(@href, '/object/')]")
    assert refs
    target = heap.object(int(refs[0].get_attribute("href").rsplit("/0x", 1)[1], 16))
    assert target.id in {r.target_id for r in suspect.references()}
    follow(browser, refs[0])
    assert browser.find_element("tag name", "h1").text == f"{target.class_name} @ 0x{target.id:x}"
    chromium.screenshot(browser, shots / "reference.png")
    # Up the dominator tree, node by node, to its roots.
    follow(browser, browser.find_element("link text", "its node"))
    chain = []
    while True:
        up = browser.find_element("xpath", "//p[starts-with(normalize-space(.), 'up:')]/a")
        href = up.get_attribute("href").split("?")[0]
        if href.endswith("/dominators"):
            break
        chain.append(int(href.rsplit("/0x", 1)[1], 16))
        follow(browser, up)
    expected, node = [], heap.dominator(target)
    while node is not None:
        expected.append(node.id)
        node = heap.dominator(node)
    assert chain == expected and suspect.id in chain
    follow(browser, up)
    chromium.screenshot(browser, shots / "dominator-roots.png")
    rows = browser.find_elements("css selector", "a[href^='/dominators/0x']")
    assert f"/dominators/0x{suspect.id:x}" in {r.get_attribute("href").split("?")[0].split(str(server.port))[1]
                                               for r in rows}
    no_console_errors(browser)


def test_without_the_token_the_browser_is_refused(browser, served):
    server, _ = served
    # Another host name of this server: the browser has no cookie for it.
    browser.get(f"http://localhost:{server.port}/")
    assert "403" in browser.find_element("tag name", "h1").text
    assert not browser.find_elements("css selector", "a[href^='/object/']")
    chromium.console(browser)  # the refusal's entry: expected, and read here


def test_hostile_strings_show_as_text(browser, served, shots):
    server, ids = served
    browser.get(server.url.replace("/?", f"/object/0x{ids['hostile_string']:x}?"))
    chromium.screenshot(browser, shots / "hostile-string.png")
    shown = browser.find_element("css selector", "pre").text
    assert shown.startswith(HOSTILE_TEXT.split("\u2028")[0])  # as text, markup and all
    assert browser.execute_script("return window.__pwned === undefined && !document.querySelector('img[src=x]')")
    no_console_errors(browser)


def test_a_bitmap_draws_under_the_policy(browser, shots):
    """The picture is a data: image the page's policy allows: Chromium draws it."""
    with hprofkit.serve(HPROF_DIR / "platform_tools_base__dialer.android-hprof") as url:
        bmp = next(b for b in url.server.heap.bitmaps() if b.has_pixels)
        browser.get(url.replace("/?", f"/object/0x{bmp.object.id:x}?"))
        chromium.screenshot(browser, shots / "bitmap.png")
        drawn = browser.execute_script("const i = document.querySelector('img'); return [i.complete, i.naturalWidth]")
        assert drawn[0] and drawn[1] == min(bmp.width, round(bmp.width * 512 / max(bmp.width, bmp.height)))
        no_console_errors(browser)
