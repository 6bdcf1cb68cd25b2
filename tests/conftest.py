"""Shared fixtures: the real dumps in ../shared/data, their inventory, the
VisualVM oracle and fresh HeapGen dumps, and peer() for the peer tools."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import chromium

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HPROFKIT_DATA", ROOT.parent / "shared" / "data"))
SHARED_TOOLS = DATA.parent / "tools"
HPROF_DIR = DATA / "hprof"
TAILOR_DIR = DATA / "tailor"
INVENTORY = json.loads((HPROF_DIR / "INVENTORY.json").read_text())
INVENTORY_BY_NAME = {entry["file"]: entry for entry in INVENTORY}
ANDROID_DUMPS = [e["file"] for e in INVENTORY if e["version"].endswith("1.0.3")]
# Debian's hprof-conv package installs it off PATH (.ci/run adds this directory to PATH).
HPROF_CONV_DIR = "/usr/lib/android-sdk/platform-tools"
HPROF_CONV = shutil.which("hprof-conv", path=f"{os.environ.get('PATH', '')}{os.pathsep}{HPROF_CONV_DIR}") \
    or "hprof-conv"
ORACLE_SCRIPT = SHARED_TOOLS / "oracle" / "run.sh"
# What each peer tool needs to be there.
PEERS = {
    "hprof-conv": lambda: shutil.which(HPROF_CONV),
    "java": lambda: shutil.which("java"),
    "oracle": lambda: shutil.which("java") and ORACLE_SCRIPT.is_file() and str(ORACLE_SCRIPT),
    "strace": lambda: shutil.which("strace"),
    "chromium": lambda: chromium.usable(),  # with chromedriver and selenium (tests/chromium.py)
}


def peer(name: str) -> str:
    """The path of peer tool `name` (hprof-conv, java, the VisualVM oracle, strace, chromium).
    A test that needs a missing one is skipped on a developer's machine and
    fails under CI=true, where .ci/run installs every peer."""
    path = PEERS[name]()
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"peer tool {name} is missing, and CI=true: .ci/run installs it")
    pytest.skip(f"peer tool {name} is not installed")

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")


def feed_in_pieces(codec, data: bytes, cuts=()) -> bytes:
    """All a stream codec (feed/flush) makes of `data` fed in pieces cut at `cuts`."""
    out, last = [], 0
    for cut in sorted(set(cuts)):
        out.append(codec.feed(data[last:cut]))
        last = cut
    out.append(codec.feed(data[last:]))
    out.append(codec.flush())
    return b"".join(out)


def dump_path(name: str) -> Path:
    return HPROF_DIR / name


def raw_bytes(name: str) -> bytes:
    """The decompressed bytes of a dump in the shared data."""
    path = dump_path(name)
    if name.endswith(".gz"):
        return gzip.decompress(path.read_bytes())
    if name.endswith(".bz2"):
        return bz2.decompress(path.read_bytes())
    return path.read_bytes()


@pytest.fixture(scope="session")
def raw_dir(tmp_path_factory) -> Path:
    """Decompressed copies of the compressed dumps (for peers that need plain files)."""
    return tmp_path_factory.mktemp("raw")


@pytest.fixture(scope="session")
def plain_path(raw_dir):
    """A plain (decompressed) path for any dump of the shared data."""
    def get(name: str) -> Path:
        if not name.endswith((".gz", ".bz2")):
            return dump_path(name)
        target = raw_dir / (name.rsplit(".", 1)[0])
        if not target.exists():
            target.write_bytes(raw_bytes(name))
        return target
    return get


class Oracle:
    """VisualVM's heap library (../shared/tools/oracle), one JVM per dump, cached."""

    def __init__(self) -> None:
        self.script = ORACLE_SCRIPT
        self.cache: dict[str, dict] = {}

    def run(self, path: Path, retained: bool = False) -> dict:
        key = f"{path}{' --retained' if retained else ''}"
        if key not in self.cache:
            args = ["bash", str(self.script), str(path)] + (["--retained"] if retained else [])
            proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"oracle failed on {path}: {proc.stderr[-2000:]}")
            self.cache[key] = json.loads(proc.stdout)
        return self.cache[key]

    def retained_by_class(self, path: Path) -> dict[str, tuple[int, int]]:
        """{"name@hexid": (instances, retained bytes)}: retained sizes follow every
        reference of the dump, so equal ones mean the same object graph."""
        return {key: (count, retained) for key, (count, _, retained) in self.run(path, True)["histogram"].items()}

    def counts_by_class(self, path: Path) -> dict[tuple[str, int | None], tuple[int, int]]:
        """{(class name, class id or None for primitive arrays): (instances, bytes)}."""
        out = {}
        for key, (count, size, *_) in self.run(path)["histogram"].items():
            name, hex_id = key.rsplit("@", 1)
            ident = None if name in PRIMITIVE_ARRAYS else int(hex_id, 16)
            prev = out.get((name, ident), (0, 0))
            out[(name, ident)] = (prev[0] + count, prev[1] + size)
        return out


class GraphOracle:
    """VisualVM's object graph (../shared/tools/oracle/graph.sh): JSON lines per
    object, class or GC root, cached per dump and mode for the session."""

    def __init__(self) -> None:
        self.script = SHARED_TOOLS / "oracle" / "graph.sh"
        self.cache: dict[tuple[str, tuple[str, ...]], list[dict]] = {}

    def run(self, path: Path, mode: str, *args: str, retained: bool = False) -> list[dict]:
        """retained=True: with retained sizes (slower), a cache entry of its own."""
        key = (str(path), (mode,) + args + (("retained",) if retained else ()))
        if key not in self.cache:
            cmd = ["bash", str(self.script), str(path), mode, *args] + ([] if retained else ["--no-retained"])
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                raise RuntimeError(f"graph oracle failed on {path}: {proc.stderr[-2000:]}")
            # split("\n"), not splitlines(): String texts may hold U+2028, \x1c...
            self.cache[key] = [json.loads(line) for line in proc.stdout.split("\n") if line.strip()]
        return self.cache[key]


@pytest.fixture(scope="session")
def graph_oracle() -> GraphOracle:
    return GraphOracle()


PRIMITIVE_ARRAYS = {p + "[]" for p in ("boolean", "char", "float", "double", "byte", "short", "int", "long")}


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    peer("oracle")
    return Oracle()


def run_heapgen(path: Path, megabytes: int, seed: int) -> Path:
    subprocess.run([peer("java"), str(SHARED_TOOLS / "heapgen" / "HeapGen.java"), str(path), str(megabytes),
                    str(seed)], check=True, capture_output=True, timeout=600)
    return path


@pytest.fixture(scope="session")
def heapgen_dumps(tmp_path_factory) -> list[Path]:
    """Two fresh HotSpot dumps from HeapGen, with seeds drawn for this run."""
    tmp = tmp_path_factory.mktemp("heapgen")
    seeds = [random.randrange(1 << 30) for _ in range(2)]
    return [run_heapgen(tmp / f"heapgen-{mb}mb-seed{seed}.hprof", mb, seed) for mb, seed in zip((4, 12), seeds)]


@pytest.fixture(scope="session")
def android_heapgen_dump(tmp_path_factory, heapgen_dumps) -> Path:
    """An ART-style dump made from a HeapGen dump by ../shared/tools/androidize."""
    out = tmp_path_factory.mktemp("androidized") / "art.hprof"
    subprocess.run(["python3", str(SHARED_TOOLS / "androidize" / "androidize.py"), str(heapgen_dumps[0]), str(out)],
                   check=True, capture_output=True, timeout=600)
    return out
