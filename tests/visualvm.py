"""VisualVM's heap library as the tests' independent parser (the oracle of
../shared/tools/oracle): HeapOracle.java (run.sh: totals and a histogram)
and HeapGraphOracle.java (graph.sh: one JSON line per object, class or GC
root), run as those scripts run them but compiled once: `java SOURCE.java`
compiles the source again at every call (5 s a call, 0.8 s compiled).  The
compiled programs run in one JVM per session (tests/peers/OracleServer.java),
which spares each call the JVM's start and warm-up.

Answers are kept for the session by the dump's content; those on the fixed
shared dumps also on disk (cache_dir()), keyed by the dump's sha256 and by
the oracle's own (its sources and VisualVM's jar): a changed dump or oracle
is asked again."""

from __future__ import annotations

import atexit
import gzip
import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, Sequence

VISUALVM_JAR = Path("/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar")
SOURCES = ("HeapOracle.java", "HeapGraphOracle.java")
SERVER = Path(__file__).resolve().parent / "peers" / "OracleServer.java"
ANSWER_TIMEOUT = 900.0  # seconds: VisualVM's retained sizes on the largest dump take a minute
# graph.sh's "retained" key, as objectLine() prints it (never inside a JSON string: quotes there are escaped)
RETAINED_KEY = re.compile(r',"retained":-?[0-9]+')
PRIMITIVE_ARRAYS = {p + "[]" for p in ("boolean", "char", "float", "double", "byte", "short", "int", "long")}


def cache_dir() -> Path:
    """Where the tests keep what outlives a session: $HPROFKIT_TEST_CACHE,
    else the user's cache directory; never the repository."""
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
    """Sessions may fill the same cache at once: an entry appears whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


class OracleRunner:
    """Runs the programs of `sources` (Java files, each with a main class of
    its name); `keep(path)` says which dumps' answers are kept on disk (the
    fixed shared ones: fresh dumps would only grow the cache)."""

    def __init__(self, sources: Sequence[Path], java: str, keep: Callable[[Path], bool]) -> None:
        self.sources = list(sources)
        self.java = java
        self.keep = keep
        self.key = sha256_of(*self.sources, SERVER, VISUALVM_JAR)
        self.answers: dict[tuple, str] = {}
        self.digests: dict[tuple, str] = {}
        self.classes = self._compile()
        self.server: subprocess.Popen | None = None
        self.server_lock = threading.Lock()  # one request at a time: the server runs them in turn
        atexit.register(self.close)  # the runners of tests/vvvalues.py have no fixture to end them

    def _compile(self) -> Path:
        """The compiled classes, per oracle and JDK (compiled at most once)."""
        jdk = Path(os.path.realpath(self.java)).parent
        target = cache_dir() / "oracle-classes" / hashlib.sha256(f"{self.key} {jdk}".encode()).hexdigest()[:32]
        if all((target / f"{source.stem}.class").is_file() for source in [*self.sources, SERVER]):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
        javac = shutil.which("javac", path=str(jdk)) or "javac"
        proc = subprocess.run([javac, "-nowarn", "-cp", str(VISUALVM_JAR), "-d", str(build),
                               *map(str, self.sources), str(SERVER)],
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

    def output(self, main: str, path: Path, *args: str) -> str:
        """What `java MAIN DUMP ARGS...` prints."""
        key = (self.digest(path), main, args)
        if key in self.answers:
            return self.answers[key]
        if main == "HeapGraphOracle" and args == ("objects", "--no-retained"):
            # Every object's line costs VisualVM about as much as the retained sizes (its path to a
            # root is walked for "depth"), and the tests ask both of the same dumps: one run serves
            # both (tests/test_peers.py checks the lines are the same without that key).
            self.answers[key] = RETAINED_KEY.sub("", self.output(main, path, "objects"))
            return self.answers[key]
        entry = None
        if self.keep(path):
            name = hashlib.sha256(repr((self.key,) + key).encode()).hexdigest()
            entry = cache_dir() / "oracle-answers" / f"{name}.gz"
            if entry.is_file():
                self.answers[key] = gzip.decompress(entry.read_bytes()).decode()
                return self.answers[key]
        with tempfile.TemporaryDirectory() as tmp:
            # VisualVM writes index caches next to the dump: a link in a temp dir takes them.
            link = Path(tmp) / "dump.hprof"
            link.symlink_to(path.resolve())
            status, out, err = self._run(main, str(link), *args)
        if status != 0:
            raise RuntimeError(f"oracle {main} failed on {path}: {err[-2000:]}")
        if entry is not None:
            write_atomically(entry, gzip.compress(out.encode(), 1))  # fast: written while the suite waits
        self.answers[key] = out
        return out

    def command(self, main: str, *args: str) -> list[str]:
        """The JVM running class `main` of the compiled oracle with `args`, as its own process."""
        return [self.java, "-Xmx8g", "-cp", f"{VISUALVM_JAR}{os.pathsep}{self.classes}", main, *args]

    def _run(self, main: str, *args: str) -> tuple[int, str, str]:
        """main(args) run by this session's OracleServer: (status, stdout, stderr)."""
        assert not any("\t" in a or "\n" in a for a in args)  # the request is one tab-separated line
        with self.server_lock:
            if self.server is None or self.server.poll() is not None:
                self.server = subprocess.Popen(self.command(SERVER.stem), stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE)
            server = self.server
            assert server.stdin is not None and server.stdout is not None
            try:
                server.stdin.write(("\t".join([main, *args]) + "\n").encode())
                server.stdin.flush()
                ready, _, _ = select.select([server.stdout], [], [], ANSWER_TIMEOUT)
                if not ready:
                    raise RuntimeError(f"the oracle's JVM answered nothing to {main} {' '.join(args)} "
                                       f"within {ANSWER_TIMEOUT:.0f} s")
                head = server.stdout.readline()
                if not head:  # its output closed: it ended (its stderr is the test's)
                    raise RuntimeError(f"the oracle's JVM ended (status {server.wait()}) on {main} {' '.join(args)}")
                status, out_size, err_size = map(int, head.split())
                out, err = server.stdout.read(out_size), server.stdout.read(err_size)
            except BaseException:
                self._end(kill=True)  # a half-read reply: the next request starts a new JVM
                raise
            return status, out.decode(), err.decode()

    def close(self) -> None:
        """Ends the server (it ends on its own when this process does: its input closes)."""
        with self.server_lock:
            self._end(kill=False)

    def _end(self, kill: bool) -> None:
        server, self.server = self.server, None
        if server is not None:
            if kill:
                server.kill()
            server.stdin.close()  # the server's readLine() sees the end
            server.wait()
            server.stdout.close()


class GraphOracle:
    """graph.sh: JSON lines per object, class or GC root."""

    def __init__(self, runner: OracleRunner) -> None:
        self.runner = runner

    def run(self, path: Path, mode: str, *args: str, retained: bool = False) -> list[dict]:
        """retained=True: with retained sizes (slower), an answer of its own."""
        text = self.runner.output("HeapGraphOracle", path, mode, *args, *([] if retained else ["--no-retained"]))
        # split("\n"), not splitlines(): String texts may hold U+2028, \x1c...
        return [json.loads(line) for line in text.split("\n") if line.strip()]


class Oracle:
    """run.sh's summary of a dump (totals, histogram); its histogram per class
    is read from graph.sh's class lines (the same counts and bytes), so one
    JVM run serves these and test_heap_oracle's classes."""

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
            if c["instances"]:
                key = (c["name"], None if c["name"] in PRIMITIVE_ARRAYS else c["id"])
                count, size = out.get(key, (0, 0))
                out[key] = (count + c["instances"], size + c["bytes"])
        return out


class LiveSet:
    """The reachable objects of a dump (docs/reference/behaviour.md, Eclipse MAT's rule),
    walked here from VisualVM's view: its GC roots (but ROOT_UNREACHABLE) and every
    object's references (graph.sh objects: fields, elements, statics, referents included),
    plus each object's class and a class's superclass and loader, read off `heap`'s records
    (and a class's reference statics, where VisualVM has no java.lang.Class object for it:
    old dumps).  objects: VisualVM's line of every object by id; live: the ids reached."""

    def __init__(self, graph: GraphOracle, path: Path, heap) -> None:
        self.objects = {o["id"]: o for o in graph.run(path, "objects")}
        known = set(self.objects) | {c.id for c in heap.classes}
        roots = [r["id"] for r in graph.run(path, "roots") if "unreachable" not in r["kind"].lower() and r["id"] in known]
        self.live = set(roots)
        stack = list(self.live)
        while stack:
            oid = stack.pop()
            obj = heap.object(oid)
            if oid in self.objects:
                targets = list(self.objects[oid]["refs"])
            else:
                targets = [f.value.id for f in obj.statics() if f.type == "object" and f.value is not None]
            if obj.kind == "class":
                targets += [c.id for c in (obj.loader, obj.superclass) if c is not None]
            elif obj.class_ is not None:
                targets.append(obj.class_.id)
            for target in targets:
                if target in known and target not in self.live:
                    self.live.add(target)
                    stack.append(target)

    def by_class(self, heap, ids) -> dict[int, int]:
        """{class id: instances} of the instances and arrays among ids (class objects apart)."""
        out: dict[int, int] = {}
        for oid in ids:
            obj = heap.object(oid)
            if obj.kind != "class":
                out[obj.class_.class_id] = out.get(obj.class_.class_id, 0) + 1
        return out

    def by_name(self, heap, ids, name=lambda n: n) -> dict[str, tuple[int, int]]:
        """{name(class name): (instances, VisualVM bytes)} of the instances and arrays among ids."""
        out: dict[str, tuple[int, int]] = {}
        for oid in ids:
            if heap.object(oid).kind != "class":
                line = self.objects[oid]
                key = name(line["class"])
                count, size = out.get(key, (0, 0))
                out[key] = (count + 1, size + line["size"])
        return out
