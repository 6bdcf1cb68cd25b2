"""Headless Chromium through Selenium and Debian's chromium-driver, for the
report's browser tests and its benchmark: start it, open a page and wait for
the report's ready mark, read the console, save full-page screenshots."""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
from pathlib import Path
from typing import Any

# Debian's chromium and chromium-driver (.ci/run installs them).
CHROMIUM = ("/usr/bin/chromium", "chromium", "chromium-browser")
CHROMEDRIVER = ("/usr/bin/chromedriver", "chromedriver")
WIDTH, HEIGHT = 1360, 900


def _which(names: tuple[str, ...]) -> str | None:
    return next((found for found in map(shutil.which, names) if found), None)


def missing() -> str | None:
    """What is missing to run Chromium here (None when all is there)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium (pip install '.[test]')"
    if _which(CHROMIUM) is None:
        return "chromium (apt-get install chromium)"
    if _which(CHROMEDRIVER) is None:
        return "chromedriver (apt-get install chromium-driver)"
    return None


def usable() -> str | None:
    """The Chromium binary, if it, its driver and selenium are all there."""
    return _which(CHROMIUM) if missing() is None else None


def start() -> Any:
    """A headless Chromium (a selenium WebDriver) that keeps its console log."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for drivers online
    options = webdriver.ChromeOptions()
    options.binary_location = _which(CHROMIUM) or CHROMIUM[0]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars", "--no-first-run",
                 "--disable-background-networking", "--disable-extensions", "--force-color-profile=srgb"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=_which(CHROMEDRIVER)))


def open_page(driver: Any, path: Path, timeout: float = 120) -> None:
    """Loads the file and waits until the report says it is drawn
    (report.js sets data-hprofkit-ready on <html>)."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(Path(path).resolve().as_uri())
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.documentElement.dataset.hprofkitReady === '1'"))


def console(driver: Any) -> list[dict]:
    """The browser's console entries since the last call."""
    return driver.get_log("browser")


def console_errors(driver: Any) -> list[dict]:
    """Console entries at error level (uncaught exceptions, console.error,
    refused resources and Content Security Policy violations)."""
    return [entry for entry in console(driver) if entry.get("level") == "SEVERE"]


def screenshot(driver: Any, path: Path) -> Path:
    """A PNG of the whole page (beyond the window), written to path."""
    height = driver.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": WIDTH, "height": min(height, 16000), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def screenshot_folder(name: str, tmp_path_factory: Any, pytestconfig: Any) -> Path:
    """$HPROFKIT_ARTIFACTS/NAME (CI keeps it), or a temporary folder, named on the
    terminal past pytest's capture."""
    artifacts = os.environ.get("HPROFKIT_ARTIFACTS")
    folder = Path(artifacts) / name if artifacts else tmp_path_factory.mktemp(name)
    folder.mkdir(parents=True, exist_ok=True)
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\n{name.replace('-', ' ')}: {folder}", flush=True)
    return folder


def element_screenshot(driver: Any, element: Any, path: Path, margin: int = 8) -> Path:
    """A PNG of one element (and a margin around it), written to path."""
    x, y, width, height = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]", element)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": max(x - margin, 0), "y": max(y - margin, 0), "width": width + 2 * margin,
                 "height": min(height + 2 * margin, 16000), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path
