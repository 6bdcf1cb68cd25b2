"""The structure of src/, checked cheaply: the C core stays Python-free, the
module is defined in one file that only assembles the glue files, and
includes run one way (no cycle among the headers)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

SRC = ROOT / "src"
CORE = SRC / "core"
MODULE_FILE = SRC / "_hprof.c"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def glue_files(pattern: str = "*.[ch]") -> list[Path]:
    return sorted(SRC.glob(pattern))


def core_files() -> list[Path]:
    return sorted(CORE.glob("*.[ch]"))


def test_core_never_touches_python():
    offenders = []
    for path in core_files():
        text = path.read_text()
        if "Python.h" in text or re.search(r"\bPy[A-Z_][A-Za-z_]*\s*\(", text):
            offenders.append(path.name)
    assert offenders == []
    assert len(list(CORE.glob("*.c"))) >= 5


def test_only_the_module_file_defines_the_module():
    definers = [p.name for p in glue_files("*.c")
                if re.search(r"\bPyModuleDef\s+\w+\s*=|\bPyMODINIT_FUNC\b|\.m_methods\s*=\s*[A-Za-z_]", p.read_text())]
    assert definers == [MODULE_FILE.name]
    module = MODULE_FILE.read_text()
    # It only assembles: the functions, their tables and docstrings live in the glue file that implements them.
    assert not re.search(r"\bPyMethodDef\b|\bPyDoc_STRVAR\b|\bPyType_Spec\b", module)
    assert ".m_methods = NULL" in module


def test_every_glue_file_registers_its_own_part():
    parts = (SRC / "_hprof_parts.h").read_text()
    declared = set(re.findall(r"\bint (hprof_\w+_init)\(", parts))
    module = MODULE_FILE.read_text()
    defined = {}
    for path in glue_files("_hprof_*.c"):
        for name in re.findall(r"^int (hprof_\w+_init)\(", path.read_text(), re.M):
            defined[name] = path.name
    assert declared and set(defined) == declared
    assert all(name in module for name in declared)
    # Only the module file calls the parts; the shared helpers at the bottom call none.
    for path in glue_files("_hprof_*.c"):
        calls = {name for name in declared if re.search(rf"\b{name}\s*\(", path.read_text())} - {
            name for name, owner in defined.items() if owner == path.name}
        assert calls == set(), f"{path.name} calls {calls}"
    assert "_hprof_parts.h" not in (SRC / "_hprof_glue.c").read_text()


def include_graph() -> dict[Path, set[Path]]:
    """Every quoted #include of src/ and src/core/, resolved as the compiler does."""
    graph: dict[Path, set[Path]] = {}
    for path in glue_files() + core_files():
        edges = set()
        for name in INCLUDE.findall(path.read_text()):
            target = (path.parent / name).resolve()
            if not target.exists():
                target = (SRC / name).resolve()  # setup.py's include_dirs=["src"]
            assert target.exists(), f"{path.name} includes {name}, which does not exist"
            edges.add(target)
        graph[path.resolve()] = edges
    return graph


def test_includes_form_no_cycle():
    graph = include_graph()
    done: set[Path] = set()

    def visit(node: Path, path: list[Path]) -> None:
        for target in sorted(graph.get(node, ())):
            if target in path:
                cycle = path[path.index(target):] + [target]
                raise AssertionError("include cycle: " + " -> ".join(p.name for p in cycle))
            if target not in done:
                visit(target, path + [target])
        done.add(node)

    for node in sorted(graph):
        visit(node, [node])
    # The core never reaches up into the glue.
    for path in core_files():
        assert all(target.parent == CORE.resolve() for target in graph[path.resolve()]), path.name
