"""The analyst's notebook (tests/notebook_run.py), executed by nbconvert and
exported to HTML, as a person sees it in headless Chromium (tests/chromium.py):
the figures shown are the API's, statuses coloured, bars drawn to scale,
hostile strings shown as text that runs nothing, no console error.
Screenshots go to $HPROFKIT_ARTIFACTS/notebook-screenshots (or a temporary
folder), named on the terminal.

Marked `browser`: skipped where Chromium, chromium-driver or selenium is
missing, except under CI=true, where .ci/run installs them (conftest.peer)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

import chromium
import hprofkit
import notebook_run
from conftest import HPROF_DIR, peer
from report_dumps import HOSTILE_CLASS

pytestmark = pytest.mark.browser

SHARED = HPROF_DIR / "leakcanary__leak_service_binder.hprof"


@pytest.fixture(scope="module")
def browser():
    peer("chromium")
    driver = chromium.start()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory, pytestconfig):
    """The folder screenshots go to, named on the terminal (past pytest's capture)."""
    artifacts = os.environ.get("HPROFKIT_ARTIFACTS")
    folder = Path(artifacts) / "notebook-screenshots" if artifacts else tmp_path_factory.mktemp("notebook-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\nnotebook screenshots: {folder}", flush=True)
    return folder


@pytest.fixture(scope="module")
def page(tmp_path_factory, browser, shots):
    """The executed notebook's HTML, open in Chromium: (driver, the hostile dump's ids)."""
    folder = tmp_path_factory.mktemp("notebook-page")
    nb, ids = notebook_run.analyst_notebook(folder, SHARED)
    path = notebook_run.to_html(nb, folder / "analyst.html")
    browser.get(path.resolve().as_uri())
    browser.execute_script("return document.readyState")  # get() returns once the page has loaded
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
    scripts = driver.execute_script("return [...document.scripts].map(s => s.text).join('\\n')")
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
