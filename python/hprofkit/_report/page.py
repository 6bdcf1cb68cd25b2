"""The HTML around the data: the report page, and one view for a notebook.

The data goes in a <script type="application/json"> element, which the
browser never runs; report.js reads it and builds the page with DOM calls,
inserting every string from the dump as text.  Inside that element the HTML
parser only looks for "</script" (and "<!--"): script_json() escapes every
"<", ">" and "&" as JSON \\u escapes, and ensure_ascii writes U+2028, U+2029
and lone surrogates (which a String in a dump may hold) as \\u escapes too,
so the JSON stays valid, pure ASCII and inert.

The page's Content Security Policy allows only its own script and style
(by hash) and data: images: nothing is fetched, no inline handler runs."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
from importlib import resources
from typing import Any

ASSETS = ("report.js", "report.css")


_read: dict[str, str] = {}


def asset(name: str) -> str:
    """report.js or report.css, as shipped in the package (read once)."""
    text = _read.get(name)
    if text is None:
        text = _read[name] = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return text


def script_json(data: Any) -> str:
    """data as JSON that is safe inside <script type="application/json">."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def sha256_source(text: str) -> str:
    """A CSP source allowing exactly this script or style text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_report(data: dict[str, Any]) -> bytes:
    """The whole report page (UTF-8)."""
    js, css = asset("report.js"), asset("report.css")
    policy = (f"default-src 'none'; script-src {sha256_source(js)}; style-src {sha256_source(css)}; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    title = html.escape(f"hprofkit report: {data.get('title', '')}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"color-scheme\" content=\"light\">\n"
        f"<title>{title}</title>\n<link rel=\"icon\" href=\"data:,\">\n"
        f"<style>{css}</style>\n</head>\n<body class=\"hk-page\">\n"
        "<div id=\"hprofkit-report\" class=\"hk\"><noscript>This report draws itself with JavaScript: "
        "open it in a browser with scripts enabled.</noscript></div>\n"
        "<script type=\"application/json\" id=\"hprofkit-report-data\" data-hprofkit-view=\"report\" "
        f"data-hprofkit-target=\"hprofkit-report\">{script_json(data)}</script>\n"
        f"<script>{js}</script>\n</body>\n</html>\n"
    ).encode("utf-8")


def view_html(view: str, data: Any) -> str:
    """One view (report.js's hprofkit.views[view]) as an HTML fragment for a
    notebook's _repr_html_: its element, its data and the bundle, which
    defines itself once per page and draws every view not drawn yet."""
    target = "hk-" + secrets.token_hex(8)
    return (f"<style>{asset('report.css')}</style>"
            f"<div id=\"{target}\" class=\"hk hk-embed\"></div>"
            f"<script type=\"application/json\" data-hprofkit-view=\"{html.escape(view)}\" "
            f"data-hprofkit-target=\"{target}\">{script_json(data)}</script>"
            f"<script>{asset('report.js')}</script>")
