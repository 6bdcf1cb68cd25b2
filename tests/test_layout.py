"""The structure of src/, checked cheaply: the C core stays Python-free, the
module is defined in one file that only assembles the glue files, the module
imports nothing from the package (Python stands on C), and includes and
calls run one way (no cycle among the headers, none among the files' calls,
read from the compiled objects with nm)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import ROOT, dump_path

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


# ---- Python stands on C ---------------------------------------------------------------------

IMPORT_CALL = re.compile(r"\bPyImport_\w+\s*\(([^;]*)", re.S)


def test_no_file_in_src_imports_the_package():
    """The package hands its classes down (hprofkit._hprof._register); C never imports them."""
    offenders = []
    for path in sorted(SRC.rglob("*.[ch]")):
        text = path.read_text()
        for call in IMPORT_CALL.finditer(text):
            if "hprofkit" in call.group(1) or not re.match(r'\s*"', call.group(1)):
                offenders.append(f"{path.relative_to(SRC)}: {call.group(0)[:80]}")
        if re.search(r'"hprofkit\.(?!_hprof\b)[a-z_.]+"', text):  # a module's name, not its own or a type's
            offenders.append(f"{path.relative_to(SRC)} names a package module")
    assert offenders == []


def test_the_module_works_without_the_package(tmp_path):
    """The extension loaded on its own, with every import of hprofkit refused: a heap is
    indexed, its classes named (modified UTF-8 and array names decoded in C), its objects
    iterated and read, its paths searched; errors say the package registered nothing."""
    from hprofkit import _hprof
    script = textwrap.dedent(f"""
        import importlib.machinery, importlib.util, sys

        class NoPackage:
            def find_spec(self, name, path=None, target=None):
                if name == "hprofkit" or name.startswith("hprofkit."):
                    raise ImportError("the C module imported " + name)

        sys.meta_path.insert(0, NoPackage())
        loader = importlib.machinery.ExtensionFileLoader("_hprof", {_hprof.__file__!r})
        spec = importlib.util.spec_from_loader("_hprof", loader)
        m = importlib.util.module_from_spec(spec)
        loader.exec_module(m)
        data = open({str(dump_path("leakcanary__leak_service_binder.hprof"))!r}, "rb").read()
        heap = m.Heap(data)
        string = heap.find_class("java.lang.String")
        assert type(string) is m.HeapClass and string.name == "java.lang.String"
        assert heap.find_class("char[]") is not None and heap.find_class("java.lang.Object[]") is not None
        texts = [s.as_str() for s in string.instances()]
        assert len(texts) == string.instance_count > 1000
        obj = next(iter(heap.objects()))
        assert type(obj) in (m.HeapObject, m.HeapClass) and obj.class_name
        routes = heap._routes([next(string.instances())], [])
        assert routes.status(0)[0] == 0 and routes.route(0)[0][0] == "ROOT"
        assert heap.retained_size(string) > 0
        try:
            m.Heap(data[:200])
        except RuntimeError as exc:
            assert "did not register" in str(exc), exc
        else:
            raise AssertionError("a truncated dump was indexed")
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


# ---- calls run one way ------------------------------------------------------------------------

def compile_objects(out: Path) -> dict[str, Path]:
    """Every .c of src/ and src/core/ compiled (unoptimised: quick) to an object in `out`."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.fail("a C compiler is needed to read the calls between files (cc)")
    include = sysconfig.get_paths()["include"]
    sources = sorted(SRC.glob("*.c")) + sorted(CORE.glob("*.c"))

    def build(source: Path) -> tuple[str, Path]:
        name = str(source.relative_to(SRC))
        obj = out / (name.replace("/", "__") + ".o")
        subprocess.run([cc, "-std=c99", "-O0", "-w", "-pthread", "-I", str(SRC), "-I", include, "-c", str(source),
                        "-o", str(obj)], check=True, capture_output=True)
        return name, obj

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(build, sources))


def call_graph(objects: dict[str, Path]) -> dict[str, set[str]]:
    """File -> the files whose functions (or data) it uses, from each object's defined and
    undefined symbols (nm)."""
    defined: dict[str, str] = {}
    used: dict[str, set[str]] = {}
    for name, obj in objects.items():
        out = subprocess.run(["nm", "-P", str(obj)], check=True, capture_output=True, text=True).stdout
        used[name] = set()
        for line in out.splitlines():
            symbol, kind = line.split()[:2]
            if kind == "U":
                used[name].add(symbol)
            elif kind.isupper():
                assert symbol not in defined, f"{symbol} is defined by {defined[symbol]} and {name}"
                defined[symbol] = name
    return {name: {defined[s] for s in symbols if s in defined} - {name} for name, symbols in used.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def calls(tmp_path_factory) -> dict[str, set[str]]:
    return call_graph(compile_objects(tmp_path_factory.mktemp("objects")))


def test_calls_form_no_cycle(calls):
    """No two files call each other, directly or through others: each file of src/ and
    src/core/ sits on a layer and calls only layers below it (docs/architecture.md).

    Headers are not nodes: a header's inline function counts as code of each file that
    includes it.  So a header's inline fast path calling its .c file's slow path, which
    includes the header (hp_pack_dec.h and hp_pack_decode_io.c), is not a circle here, and
    it is a fine one: the two are one unit split for speed."""
    assert len([name for name in calls if name.startswith("core/")]) >= 30
    assert cycles(calls) == []


def test_the_layers_of_the_glue_and_the_core(calls):
    glue = {name for name in calls if not name.startswith("core/")}
    # The core never calls the glue; the glue's bottom calls no other glue file.
    assert all(calls[name] <= {n for n in calls if n.startswith("core/")} for name in calls if name.startswith("core/"))
    assert calls["_hprof_glue.c"] & glue == set()
    # The heap glue's shared helpers sit below the types (and above the guarded reads only).
    assert calls["_hprof_heap_base.c"] & glue == {"_hprof_glue.c", "_hprof_heap_read.c"}
    assert calls["_hprof_heap_read.c"] & glue == {"_hprof_glue.c"}
    assert "_hprof_heap_object.c" not in calls["_hprof_heap.c"] and "_hprof_heap.c" not in calls["_hprof_heap_object.c"]
    # The core heap's build calls the look-ups, never the other way round.
    for name in ("core/hp_heap_class.c", "core/hp_heap_object.c", "core/hp_heap_size.c", "core/hp_heap_string.c"):
        assert "core/hp_heap_build.c" not in calls[name], name
    assert "core/hp_heap_class.c" in calls["core/hp_heap_build.c"]
