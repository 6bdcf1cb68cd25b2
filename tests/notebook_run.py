"""A real notebook for the notebook tests: cells written with nbformat,
executed in a real ipykernel by nbconvert's ExecutePreprocessor (as
`jupyter nbconvert --execute` does), exported to HTML by its HTMLExporter.
Each cell's rich outputs are read back by the cell's name."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import ExecutePreprocessor

from report_dumps import HOSTILE_CLASS, hostile_app


def build(cells: dict[str, str]) -> nbformat.NotebookNode:
    """A notebook of code cells, each named (metadata 'name') by its key."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for name, source in cells.items():
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["name"] = name
        nb.cells.append(cell)
    return nb


def execute(nb: nbformat.NotebookNode, folder: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Runs every cell in a fresh python3 kernel started in `folder` (an error in a cell raises)."""
    ExecutePreprocessor(timeout=timeout, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(folder)}})
    return nb


def outputs(nb: nbformat.NotebookNode, name: str) -> list[dict]:
    return next(cell.outputs for cell in nb.cells if cell.metadata.get("name") == name)


def html_of(nb: nbformat.NotebookNode, name: str) -> str:
    """The cell's text/html outputs, joined (display_data and execute_result)."""
    return "".join(out.get("data", {}).get("text/html", "") for out in outputs(nb, name))


# The lab template loads require.js and MathJax from a CDN, which a test machine may not
# reach (and the page needs neither): empty data: scripts stand in for them.
_OFFLINE = {"require_js_url": "data:text/javascript,", "mathjax_url": "data:text/javascript,"}


def to_html(nb: nbformat.NotebookNode, path: Path) -> Path:
    """The executed notebook as nbconvert exports it (its 'lab' template), offline."""
    body, _ = HTMLExporter(**_OFFLINE).from_notebook_node(nb)
    path.write_text(body, encoding="utf-8")
    return path


def analyst_cells(shared: Path, hostile: Path, ids: dict[str, int]) -> dict[str, str]:
    """What an analyst runs: the overview, the biggest objects, one object, a leak and
    its path, a class, the hostile dump's objects and leaks, the dominator tree and
    flame graph views, the waste, a batch with a failure."""
    return {
        "open": f"import hprofkit\nheap = hprofkit.open_heap({str(shared)!r})\nheap",
        "top": "heap.top_retainers(8)",
        "biggest": "biggest = next(o for o, _ in heap.top_retainers(50) if o.kind == 'instance')\nbiggest",
        "dominated": "biggest.dominated(6)",
        "packages": "heap.retained_by('package')",
        "leak": "leaks = heap.find_leaks()\nleaks[0]",
        "path": "leaks[0].path",
        "class": "heap.find_class('java.lang.Thread')",
        "hostile": (f"bad = hprofkit.open_heap({str(hostile)!r})\n"
                    f"display(bad.object({ids['hostile_string']}), bad.object({ids['hostile_object']}), "
                    f"bad.find_class({HOSTILE_CLASS!r}))\nbad"),
        "hostile_leaks": "from IPython.display import display\ndisplay(*bad.find_leaks())",
        "tree": "heap.dominator_tree()",
        "flame": "heap.flamegraph()",
        "waste": "heap.waste()",
        "hostile_tree": "bad.dominator_tree()",
        "batch": (f"hprofkit.batch('leaks', [{str(shared)!r}, {str(hostile)!r}, 'missing.hprof'], "
                  "progress=False, jobs=1)"),
    }


def analyst_notebook(folder: Path, shared: Path) -> tuple[nbformat.NotebookNode, dict[str, int]]:
    """analyst_cells over `shared` and a hostile dump written into folder, executed:
    (the notebook, the hostile dump's ids)."""
    ids = hostile_app(folder / "hostile.hprof", activities=2)
    return execute(build(analyst_cells(shared, folder / "hostile.hprof", ids)), folder), ids
