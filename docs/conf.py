"""Sphinx configuration of hprofkit's documentation site.

Build: ``sphinx-build -W --keep-going -b html docs OUT`` (the ``docs`` extra).
Offline by design: no intersphinx, no CDN; the theme (furo) ships its assets.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))  # cli_reference, api_coverage

import hprofkit  # noqa: E402  (the installed package: autodoc documents what users import)

project = "hprofkit"
author = "the hprofkit authors"
copyright = "the hprofkit authors, Apache-2.0"
release = version = hprofkit.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "cli_reference",
    "api_coverage",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # [x](page.md#some-heading) links resolve

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Entries read Dump, open_heap(...), not hprofkit.Dump: every name on the page is hprofkit's.
add_module_names = False

# A type named in a signature (bytes, object, name) that is also an attribute of several
# classes is an "ambiguous" cross-reference to Sphinx; it stays plain text, which is right.
suppress_warnings = ["ref.python"]

html_theme = "furo"
html_title = f"hprofkit {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
