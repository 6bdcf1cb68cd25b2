"""A real notebook for the notebook tests: cells written with nbformat,
executed in a real ipykernel by nbconvert's ExecutePreprocessor (as
`jupyter nbconvert --execute` does), exported to HTML by its HTMLExporter.
Each cell's rich outputs are read back by the cell's name."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import ExecutePreprocessor


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


def to_html(nb: nbformat.NotebookNode, path: Path) -> Path:
    """The executed notebook as nbconvert exports it (the classic 'lab' template)."""
    body, _ = HTMLExporter().from_notebook_node(nb)
    path.write_text(body, encoding="utf-8")
    return path
