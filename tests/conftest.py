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
from typing import Iterator

import pytest
from hypothesis import HealthCheck, settings

from visualvm import SOURCES as ORACLE_SOURCES
from visualvm import VISUALVM_JAR, GraphOracle, Oracle, OracleRunner, cache_dir, sha256_of

import chromium

ROOT = Path(__file__).resolve().parents[1]
# On an xdist worker, PYTEST_XDIST_WORKER & co. would reach the pytest runs the
# tests start (pytester's, the README's suite), and plugins would take those
# runs for workers: pytest-benchmark, on a machine that has it, then aborts them
# with a warning the suite makes an error.  xdist itself reads its workerinput.
for _name in [name for name in os.environ if name.startswith("PYTEST_XDIST_")]:
    del os.environ[_name]
# .ci/run tests the wheel it built in a venv of its own: the tests must use
# that install (HPROFKIT_TEST_INSTALLED names its site-packages), not the source tree.
if os.environ.get("HPROFKIT_TEST_INSTALLED"):
    import hprofkit
    import hprofkit._hprof
    for module in (hprofkit, hprofkit._hprof):
        if not Path(module.__file__).resolve().is_relative_to(Path(os.environ["HPROFKIT_TEST_INSTALLED"]).resolve()):
            raise RuntimeError(f"{module.__name__} comes from {module.__file__}, not from the install under test "
                               f"({os.environ['HPROFKIT_TEST_INSTALLED']})")
DATA = Path(os.environ.get("HPROFKIT_DATA", ROOT.parent / "shared" / "data"))
SHARED_TOOLS = DATA.parent / "tools"
HPROF_DIR = DATA / "hprof"
TAILOR_DIR = DATA / "tailor"
# An sdist unpacked anywhere but beside ../shared/data carries the tests but
# not the dumps they read: then each test file is one skipped item.
DATA_MISSING = not (HPROF_DIR / "INVENTORY.json").is_file()
INVENTORY = [] if DATA_MISSING else json.loads((HPROF_DIR / "INVENTORY.json").read_text())
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
    "oracle": lambda: shutil.which("java") and shutil.which("javac") and VISUALVM_JAR.is_file() and
    ORACLE_SCRIPT.is_file() and str(ORACLE_SCRIPT),
    "strace": lambda: shutil.which("strace"),
    "proguard": lambda: shutil.which("proguard"),  # Debian's proguard-cli: tests/test_deobfuscate.py
    "chromium": lambda: chromium.usable(),  # with chromedriver and selenium (tests/chromium.py)
    # Go and the sources of Go's pprof (Debian's golang-go, golang-github-google-pprof-dev): tests/test_pprof.py
    "go-pprof": lambda: shutil.which("go") and (Path(GOCODE) / "src/github.com/google/pprof").is_dir() and
    shutil.which("go"),
}
GOCODE = "/usr/share/gocode"


def peer(name: str) -> str:
    """The path of peer tool `name` (hprof-conv, java, the VisualVM oracle, strace, proguard, chromium).
    A test that needs a missing one is skipped on a developer's machine and
    fails under CI=true, where .ci/run installs every peer."""
    path = PEERS[name]()
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"peer tool {name} is missing, and CI=true: .ci/run installs it")
    pytest.skip(f"peer tool {name} is not installed")


@pytest.fixture(scope="session")
def go_pprof() -> Iterator[str]:
    """Go's own pprof, built offline from Debian's sources once per session into the test
    cache (a folder per session: builds of two sessions never meet)."""
    go = peer("go-pprof")
    folder = cache_dir() / "go-pprof" / f"{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "pprof"
    env = dict(os.environ, GOPATH=GOCODE, GO111MODULE="off", GOCACHE=str(cache_dir() / "go-build"))
    subprocess.run([go, "build", "-o", str(binary), "github.com/google/pprof"], env=env, check=True,
                   capture_output=True, timeout=600)
    yield str(binary)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (tests/chromium.py), one per test module; skipped without
    it, except under CI=true (peer)."""
    peer("chromium")
    driver = chromium.start()
    yield driver
    driver.quit()


class WithoutData(pytest.File):
    """A test file collected without its data: one item that skips (fails under CI=true)."""

    def collect(self):
        yield NeedsData.from_parent(self, name="needs the shared dumps")


class NeedsData(pytest.Item):
    def runtest(self) -> None:
        message = f"the tests read the shared dumps in {DATA}, which is missing (HPROFKIT_DATA names another)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)

    def reportinfo(self):
        return self.path, None, self.name


def pytest_pycollect_makemodule(module_path, parent):
    if DATA_MISSING:
        return WithoutData.from_parent(parent, path=module_path)
    return None


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


# Plain copies of compressed shared dumps (plain_path): shared dumps too.
PLAIN_COPIES: set[Path] = set()


@pytest.fixture(scope="session")
def plain_path(raw_dir):
    """A plain (decompressed) path for any dump of the shared data."""
    def get(name: str) -> Path:
        if not name.endswith((".gz", ".bz2")):
            return dump_path(name)
        target = raw_dir / (name.rsplit(".", 1)[0])
        if not target.exists():
            target.write_bytes(raw_bytes(name))
            PLAIN_COPIES.add(target.resolve())
        return target
    return get


def is_shared_dump(path: Path) -> bool:
    """Whether `path` is one of the fixed shared dumps (or a plain copy of one),
    or a fresh dump kept for this run's seed (kept_dump)."""
    real = path.resolve()
    return real.is_relative_to(DATA.resolve()) or real in PLAIN_COPIES or real.is_relative_to(
        (cache_dir() / "fresh").resolve())


@pytest.fixture(scope="session")
def oracle_runner() -> Iterator[OracleRunner]:
    peer("oracle")
    runner = OracleRunner([ORACLE_SCRIPT.parent / name for name in ORACLE_SOURCES], java=peer("java"),
                          keep=is_shared_dump)
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def graph_oracle(oracle_runner) -> GraphOracle:
    return GraphOracle(oracle_runner)


@pytest.fixture(scope="session")
def oracle(oracle_runner) -> Oracle:
    return Oracle(oracle_runner)


def run_heapgen(path: Path, megabytes: int, seed: int) -> Path:
    subprocess.run([peer("java"), str(SHARED_TOOLS / "heapgen" / "HeapGen.java"), str(path), str(megabytes),
                    str(seed)], check=True, capture_output=True, timeout=600)
    return path


def run_androidize(source: Path, out: Path) -> Path:
    subprocess.run(["python3", str(SHARED_TOOLS / "androidize" / "androidize.py"), str(source), str(out)],
                   check=True, capture_output=True, timeout=600)
    return out


# HPROFKIT_TEST_SEED fixes the fresh dumps' seeds: .ci/run draws one per run, so that both its runs
# of the suite, and every xdist worker of each, read the same fresh dumps, made once and kept with the
# oracle's answers on them (the oracle answers the same bytes alike).  Without it each session draws
# its own seeds and makes its own dumps.
RUN_SEED = os.environ.get("HPROFKIT_TEST_SEED")


def kept_dump(tmp_path_factory, name: str, make, *tools: Path) -> Path:
    """The fresh dump (or folder) `name`, made by make(path): kept in the test cache under the
    sha256 of the tools that make it when the run's seed is fixed, else made in this session's
    temp dir."""
    if RUN_SEED is None:
        return make(tmp_path_factory.mktemp("fresh") / name)
    target = cache_dir() / "fresh" / sha256_of(*tools)[:16] / name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = make(target.parent / f".partial-{os.getpid()}-{name}")  # HeapGen wants .hprof at the end
        try:
            os.rename(partial, target)  # sessions making it at once: it appears whole
        except OSError:  # another session's folder came first
            shutil.rmtree(partial)
    return target


@pytest.fixture(scope="session")
def heapgen_dumps(tmp_path_factory) -> list[Path]:
    """Two fresh HotSpot dumps from HeapGen, with seeds drawn for this run."""
    rng = random.Random(int(RUN_SEED)) if RUN_SEED is not None else random
    seeds = [rng.randrange(1 << 30) for _ in range(2)]
    heapgen = SHARED_TOOLS / "heapgen" / "HeapGen.java"
    return [kept_dump(tmp_path_factory, f"heapgen-{mb}mb-seed{seed}.hprof",
                      lambda path, mb=mb, seed=seed: run_heapgen(path, mb, seed), heapgen)
            for mb, seed in zip((4, 12), seeds)]


@pytest.fixture(scope="session")
def android_heapgen_dump(tmp_path_factory, heapgen_dumps) -> Path:
    """An ART-style dump made from a HeapGen dump by ../shared/tools/androidize."""
    source = heapgen_dumps[0]
    return kept_dump(tmp_path_factory, source.stem + "-art.hprof", lambda path: run_androidize(source, path),
                     SHARED_TOOLS / "heapgen" / "HeapGen.java", SHARED_TOOLS / "androidize" / "androidize.py")
