"""Shared fixtures: the real dumps in ../shared/data, their inventory, the
VisualVM oracle and fresh HeapGen dumps, and peer() for the peer tools."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

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
VISUALVM_JAR = Path("/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar")
# What each peer tool needs to be there.
PEERS = {
    "hprof-conv": lambda: shutil.which(HPROF_CONV),
    "java": lambda: shutil.which("java"),
    "oracle": lambda: shutil.which("java") and shutil.which("javac") and VISUALVM_JAR.is_file() and
    ORACLE_SCRIPT.is_file() and str(ORACLE_SCRIPT),
    "strace": lambda: shutil.which("strace"),
}


def peer(name: str) -> str:
    """The path of peer tool `name` (hprof-conv, java, the VisualVM oracle, strace).
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
            PLAIN_COPIES.add(target.resolve())
        return target
    return get


ORACLE_SOURCES = [ORACLE_SCRIPT.parent / "HeapOracle.java", ORACLE_SCRIPT.parent / "HeapGraphOracle.java"]
# Plain copies of compressed shared dumps (plain_path): shared dumps too.
PLAIN_COPIES: set[Path] = set()


def cache_dir() -> Path:
    """Where the tests keep what outlives a session (the compiled oracle, its
    answers on the shared dumps): $HPROFKIT_TEST_CACHE, else the user's cache
    directory; never the repository."""
    if os.environ.get("HPROFKIT_TEST_CACHE"):
        return Path(os.environ["HPROFKIT_TEST_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hprofkit-tests"


def sha256_of(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def write_atomically(path: Path, data: bytes) -> None:
    """Concurrent sessions may fill the same cache: each entry appears whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


class OracleRunner:
    """VisualVM's heap library (../shared/tools/oracle): HeapOracle.java and
    HeapGraphOracle.java, run as run.sh and graph.sh run them, but compiled
    once (java SOURCE.java compiles again at every call: 5 s a call).
    Answers are kept for the session by the dump's content; those on the
    shared dumps also on disk (cache_dir()), keyed by the dump's sha256 and by
    the oracle's own sha256 (its sources and VisualVM's jar), so a changed
    oracle or dump is asked again."""

    def __init__(self) -> None:
        self.key = sha256_of(*ORACLE_SOURCES, VISUALVM_JAR)
        self.answers: dict[tuple, str] = {}
        self.digests: dict[tuple, str] = {}
        self.classes = self._compile()

    def _compile(self) -> Path:
        java_home = Path(os.path.realpath(peer("java"))).parent.parent
        target = cache_dir() / "oracle-classes" / hashlib.sha256(f"{self.key} {java_home}".encode()).hexdigest()[:32]
        if (target / "HeapGraphOracle.class").is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
        proc = subprocess.run(["javac", "-nowarn", "-cp", str(VISUALVM_JAR), "-d", str(build), *map(str, ORACLE_SOURCES)],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise RuntimeError(f"javac of the oracle failed: {proc.stderr[-2000:]}")
        try:
            os.rename(build, target)
        except OSError:  # another session compiled it first
            shutil.rmtree(build, ignore_errors=True)
        return target

    def digest(self, path: Path) -> str:
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
        if key not in self.digests:
            self.digests[key] = sha256_of(path)
        return self.digests[key]

    @staticmethod
    def shared(path: Path) -> bool:
        real = path.resolve()
        return real.is_relative_to(DATA.resolve()) or real in PLAIN_COPIES

    def output(self, main: str, path: Path, *args: str) -> str:
        """What `java MAIN DUMP ARGS...` prints."""
        key = (self.digest(path), main, args)
        if key in self.answers:
            return self.answers[key]
        entry = None
        if self.shared(path):
            name = hashlib.sha256(repr((self.key,) + key).encode()).hexdigest()
            entry = cache_dir() / "oracle-answers" / f"{name}.json.gz"
            if entry.is_file():
                self.answers[key] = gzip.decompress(entry.read_bytes()).decode()
                return self.answers[key]
        with tempfile.TemporaryDirectory() as tmp:
            # VisualVM writes index caches next to the dump: a link in a temp dir takes them.
            link = Path(tmp) / "dump.hprof"
            link.symlink_to(path.resolve())
            cmd = [peer("java"), "-Xmx8g", "-cp", f"{VISUALVM_JAR}{os.pathsep}{self.classes}", main, str(link), *args]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"oracle {main} failed on {path}: {proc.stderr[-2000:]}")
        if entry is not None:
            write_atomically(entry, gzip.compress(proc.stdout.encode(), 6))
        self.answers[key] = proc.stdout
        return proc.stdout


@pytest.fixture(scope="session")
def oracle_runner() -> OracleRunner:
    peer("oracle")
    return OracleRunner()


class Oracle:
    """VisualVM's summary of a dump (run.sh: totals and a histogram), and its
    histogram per class, read from the class lines of graph.sh (the same
    counts and bytes: one JVM run serves these tests and test_heap_oracle's)."""

    def __init__(self, runner: OracleRunner) -> None:
        self.runner = runner
        self.graph = GraphOracle(runner)

    def run(self, path: Path, retained: bool = False) -> dict:
        return json.loads(self.runner.output("HeapOracle", path, *(["--retained"] if retained else [])))

    def retained_by_class(self, path: Path) -> dict[str, tuple[int, int]]:
        """{"name@hexid": (instances, retained bytes)}: retained sizes follow every
        reference of the dump, so equal ones mean the same object graph."""
        return {f"{c['name']}@{c['id']:x}": (c["instances"], c["retained"])
                for c in self.graph.run(path, "classes", retained=True) if c["instances"]}

    def counts_by_class(self, path: Path) -> dict[tuple[str, int | None], tuple[int, int]]:
        """{(class name, class id or None for primitive arrays): (instances, bytes)}."""
        out: dict[tuple[str, int | None], tuple[int, int]] = {}
        for c in self.graph.run(path, "classes"):
            if not c["instances"]:
                continue
            key = (c["name"], None if c["name"] in PRIMITIVE_ARRAYS else c["id"])
            prev = out.get(key, (0, 0))
            out[key] = (prev[0] + c["instances"], prev[1] + c["bytes"])
        return out


class GraphOracle:
    """VisualVM's object graph (graph.sh): JSON lines per object, class or GC root."""

    def __init__(self, runner: OracleRunner) -> None:
        self.runner = runner

    def run(self, path: Path, mode: str, *args: str, retained: bool = False) -> list[dict]:
        """retained=True: with retained sizes (slower), an answer of its own."""
        text = self.runner.output("HeapGraphOracle", path, mode, *args, *([] if retained else ["--no-retained"]))
        # split("\n"), not splitlines(): String texts may hold U+2028, \x1c...
        return [json.loads(line) for line in text.split("\n") if line.strip()]


@pytest.fixture(scope="session")
def graph_oracle(oracle_runner) -> GraphOracle:
    return GraphOracle(oracle_runner)


PRIMITIVE_ARRAYS = {p + "[]" for p in ("boolean", "char", "float", "double", "byte", "short", "int", "long")}


@pytest.fixture(scope="session")
def oracle(oracle_runner) -> Oracle:
    return Oracle(oracle_runner)


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
