"""Heap regression tests: assertions over heap dumps, for pytest or any runner.

    from hprofkit.testing import assert_no_leaks, assert_max_instances, assert_retained_below

    def test_no_activity_leak(hprof_heap):              # fixture of the pytest plugin
        heap = hprof_heap("dumps/after_rotation.hprof")  # .gz, packs and Tailor minis too
        assert_no_leaks(heap)
        assert_max_instances(heap, "com.example.MainActivity", 1)
        assert_retained_below(heap, "com.example.ImageCache", "2 MB")

Each assertion raises HeapCheckFailed (an AssertionError) whose report says
what to look at: the leak traces, the offending objects and what keeps them
alive, the diff table.  Under pytest (the plugin is registered when hprofkit
is installed) the message is one line, also the short summary's, and the
report is a section named "hprofkit" of the failure (in --junitxml's text
too); elsewhere the message holds the whole report.  Heaps may be given as
Heap objects or as paths.

Sizes are strings with units, as pytest-memray writes them ("2 MB", "512 KB";
binary units); growth allowances are "5%", a size, or a number of instances.
The assertions' own frames are hidden from pytest's tracebacks
(__tracebackhide__): a failure points at the test's line."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import sys
import tempfile
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Iterator, NoReturn, Protocol, Sequence

from . import _baseline, match
from ._dump import Dump
from ._errors import HprofError, NoHeapDumpError, UnsupportedError
from ._files import decode, encode
from ._output import check_not_same_file, check_replaceable, output_file
from ._heap import Heap, HeapObject, open_heap
from ._units import human_size, parse_size
from .leaks import Leak, default_exclude
from .heapdiff import DiffRow, HeapDiff, class_histogram, diff, growth_paths, retained_by_class

__all__ = ["HeapCheckFailed", "assert_no_leaks", "assert_max_instances", "assert_retained_below",
           "assert_no_growth", "assert_roundtrip", "Baseline", "CheckSettings", "check_dump"]

SECTION = "hprofkit"
_SHOWN = 5  # offending objects listed in a report, with their paths for the first _SHOWN_PATHS
_SHOWN_PATHS = 3


class HeapCheckFailed(AssertionError):
    """A heap assertion failed.  `summary` is one line; `report` the full text."""

    def __init__(self, summary: str, report: str, *, sectioned: bool = False) -> None:
        self.summary, self.report, self.sectioned = summary, report, sectioned
        super().__init__(summary if sectioned else f"{summary}\n\n{report}")


def _sink() -> list[str] | None:
    """The notes of the running pytest test, when the plugin runs one."""
    return getattr(sys.modules.get("_hprofkit_pytest"), "sink", None)


def _note(report: str) -> None:
    """Attaches a report to the running test's "hprofkit" section without failing it."""
    sink = _sink()
    if sink is not None:
        sink.append(report)


def _fail(summary: str, report: str) -> NoReturn:
    __tracebackhide__ = True
    sink = _sink()
    if sink is not None:
        sink.append(report)
    raise HeapCheckFailed(summary, report, sectioned=sink is not None)


@contextlib.contextmanager
def _heap(source: Heap | str | os.PathLike[str]) -> Iterator[Heap]:
    """The heap itself, or the heap of a path opened for the call."""
    if isinstance(source, Heap):
        yield source
        return
    with open_heap(source) as heap:
        yield heap


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}{'es' if word.endswith('s') else 's'}"


def _keepers(heap: Heap, objects: Sequence[HeapObject], exclude: Iterable[match.Matcher] | None = None) -> list[str]:
    """The paths from GC roots of the first objects: what keeps them alive."""
    lines: list[str] = []
    exclude = default_exclude(heap) if exclude is None else exclude
    shown = list(objects[:_SHOWN_PATHS])
    for obj, path in zip(shown, heap.paths_to_root(shown, exclude=exclude)):  # one search; a NoPath says why
        lines += ["", f"what keeps {obj!r} alive:", str(path) if path else f"  {path}"]
    return lines


# -- leaks ----------------------------------------------------------------------

def _leak_groups(leaks: Sequence[Leak]) -> list[list[Leak]]:
    """Leaks grouped by fingerprint (the same leak in several objects), biggest group first."""
    groups: dict[str, list[Leak]] = {}
    for leak in leaks:
        groups.setdefault(leak.fingerprint, []).append(leak)
    return sorted(groups.values(), key=lambda g: (-len(g), -sum(x.retained_size or 0 for x in g)))


def _leak_report(title: str, leaks: Sequence[Leak]) -> list[str]:
    lines: list[str] = []
    for n, group in enumerate(_leak_groups(leaks), 1):
        first = group[0]
        retained = sum(x.retained_size or 0 for x in group)
        lines += ["", f"{title} {n}: {_plural(len(group), 'object')}, retaining {human_size(retained)}, "
                      f"fingerprint {first.fingerprint}", str(first)]
    return lines


def assert_no_leaks(heap: Heap | str | os.PathLike[str], exclude: Iterable[match.Matcher] | None = None,
                    fail_on_library: bool = False) -> None:
    """Fails if the heap holds application leaks (heap.find_leaks): LeakCanary's
    watched objects still strongly reachable, destroyed activities, fragments,
    views and windows.  Library leaks (paths that must cross a matcher of
    kind "library") fail only with fail_on_library=True; otherwise they are
    reported in the "hprofkit" section, as LeakCanary's
    DetectLeaksAfterTestSuccess logs them.  exclude: reference matchers
    (hprofkit.match), default find_leaks's."""
    __tracebackhide__ = True
    with _heap(heap) as h:  # the report reads the heap: built before a path's heap closes
        leaks = h.find_leaks() if exclude is None else h.find_leaks(exclude=exclude)
        app = [x for x in leaks if not x.library]
        library = [x for x in leaks if x.library]
        failing = app + (library if fail_on_library else [])
        head = (f"{_plural(len(app), 'application leak')}, {_plural(len(library), 'library leak')}"
                + ("" if fail_on_library or not library else " (library leaks do not fail: fail_on_library=False)"))
        report = "\n".join([head] + _leak_report("APPLICATION LEAK", app) + _leak_report("LIBRARY LEAK", library))
        culprits = ", ".join(sorted({x.object.class_name for x in failing}))
    if failing:
        kinds = len(_leak_groups(failing))
        _fail(f"{_plural(len(failing), 'leak')} ({_plural(kinds, 'distinct trace')}): {culprits}", report)
    if library:
        _note(report)


# -- budgets --------------------------------------------------------------------

def _instances(heap: Heap, name: str, subclasses: bool) -> list[HeapObject]:
    seen: dict[int, HeapObject] = {}
    for cls in heap.classes_named(name):
        for obj in cls.instances(subclasses=subclasses):
            seen.setdefault(obj.id, obj)
    return list(seen.values())


def assert_max_instances(heap: Heap | str | os.PathLike[str], name: str, n: int, subclasses: bool = True) -> None:
    """Fails if the heap holds more than n instances of class `name` (of its
    subclasses too, unless subclasses=False; every class of that name, when
    several loaders define one).  A class absent from the dump has 0."""
    __tracebackhide__ = True
    with _heap(heap) as h:
        objects = _instances(h, name, subclasses)
        if len(objects) <= n:
            return
        by_class: dict[str, int] = {}
        for obj in objects:
            by_class[obj.class_name] = by_class.get(obj.class_name, 0) + 1
        lines = [f"{_plural(len(objects), 'instance')} of {name}{' (subclasses included)' if subclasses else ''}; "
                 f"at most {n:,} allowed", ""]
        lines += [f"{count:>10,}  {cls}" for cls, count in sorted(by_class.items(), key=lambda kv: -kv[1])]
        lines += ["", "first instances:"] + [f"  {obj!r}" for obj in objects[:_SHOWN]]
        lines += _keepers(h, objects)
        _fail(f"{_plural(len(objects), 'instance')} of {name}, at most {n:,} allowed", "\n".join(lines))


def assert_retained_below(heap: Heap | str | os.PathLike[str], name: str, limit: str | int,
                          per_instance: bool = False) -> None:
    """Fails if class `name` retains `limit` ("2 MB") or more: all its
    instances together (VisualVM's retained size of a class), or, with
    per_instance=True, any one instance."""
    __tracebackhide__ = True
    budget = parse_size(limit)
    with _heap(heap) as h:
        if per_instance:
            sized = sorted(((h.retained_size(obj), obj) for obj in _instances(h, name, False)),
                           key=lambda so: -so[0])
            over = [(size, obj) for size, obj in sized if size >= budget]
            if not over:
                return
            lines = [f"{_plural(len(over), 'instance')} of {name} retain {human_size(budget)} or more each "
                     f"(limit {limit!r})", ""]
            lines += [f"{human_size(size):>12}  {obj!r}" for size, obj in over[:_SHOWN]]
            lines += _keepers(h, [obj for _, obj in over])
            _fail(f"{name}: {_plural(len(over), 'instance')} over {human_size(budget)}, the largest retains "
                  f"{human_size(over[0][0])}", "\n".join(lines))
            return
        retained = retained_by_class(h, [name])[name]
        if retained < budget:
            return
        sized = sorted(((h.retained_size(obj), obj) for obj in _instances(h, name, False)), key=lambda so: -so[0])
        lines = [f"{name} retains {human_size(retained)} ({retained:,} B), limited to {human_size(budget)} "
                 f"({limit!r}); its {_plural(len(sized), 'instance')}, largest first:", ""]
        lines += [f"{human_size(size):>12}  {obj!r}" for size, obj in sized[:_SHOWN]]
        lines += _keepers(h, [obj for _, obj in sized])
        _fail(f"{name} retains {human_size(retained)}, limited to {human_size(budget)}", "\n".join(lines))


# -- growth -----------------------------------------------------------------------

def _allowance(allow: str | int) -> tuple[str, float]:
    """('ratio', 0.05) for '5%', ('bytes', n) for a size, ('count', n) for an int."""
    if isinstance(allow, int) and not isinstance(allow, bool):
        if allow < 0:
            raise ValueError(f"allow cannot be negative: {allow}")
        return "count", allow
    if isinstance(allow, str) and allow.strip().endswith("%"):
        try:
            ratio = float(allow.strip()[:-1]) / 100
        except ValueError:
            ratio = -1.0
        if not ratio >= 0:
            raise ValueError(f"not a percentage: {allow!r} (write '5%')")
        return "ratio", ratio
    return "bytes", parse_size(allow)


def _matches(name: str, patterns: Iterable[str] | None) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(name, p) for p in patterns)


def assert_no_growth(before: Heap | str | os.PathLike[str], after: Heap | str | os.PathLike[str],
                     classes: Iterable[str] | None = None, allow: str | int = "5%",
                     exclude: Iterable[match.Matcher] | None = None) -> None:
    """Fails if a class grew from `before` to `after` beyond `allow`: "5%"
    (of its instances or of its shallow bytes), a size ("64 KB" more shallow
    bytes) or an int (more instances).  classes: names or glob patterns
    ("com.example.*"), default every class.  The report shows the diff of the
    offending classes and the reference paths along which they grew."""
    __tracebackhide__ = True
    kind, amount = _allowance(allow)
    patterns = [classes] if isinstance(classes, str) else (list(classes) if classes is not None else None)

    def over(row: DiffRow) -> bool:
        if kind == "count":
            return row.count_delta > amount
        if kind == "bytes":
            return row.shallow_delta > amount
        return row.count_delta > row.count_a * amount or row.shallow_delta > row.shallow_a * amount

    with _heap(before) as a, _heap(after) as b:
        full = diff(a, b)
        offending = [r for r in full.grown if _matches(r.name, patterns) and over(r)]
        if not offending:
            return
        grown = HeapDiff(offending, _label(before), _label(after))
        grown.paths, grown.paths_sampled = growth_paths(
            a, b, [r.name for r in sorted(offending, key=lambda r: -r.count_delta)[:_SHOWN]], exclude=exclude)
    allowed = {"count": f"{amount:,.0f} more instances", "bytes": f"{human_size(amount)} more",
               "ratio": f"{amount:.0%} growth"}[kind]
    first = offending[0]
    _fail(f"{_plural(len(offending), 'class')} grew beyond {allowed}: {first.name} "
          f"{first.count_a:,} -> {first.count_b:,} instances"
          + (f" and {len(offending) - 1:,} more" if len(offending) > 1 else ""),
          f"{_plural(len(offending), 'class')} grew beyond {allowed} (allow={allow!r}):\n\n{grown.format(top=None)}")


def _label(source: Heap | str | os.PathLike[str]) -> str:
    return repr(source) if isinstance(source, Heap) else os.fspath(source)


# -- round trips -------------------------------------------------------------------

def _histogram_by_name(path: str) -> dict[str, tuple[int, int]]:
    """{class name: (instances, 0)} from the dump's stats (instances only: a
    trimmed dump keeps every object but not every array's bytes)."""
    out: dict[str, tuple[int, int]] = {}
    with Dump(path) as dump:
        for row in dump.stats().histogram:
            out[row.name] = (out.get(row.name, (0, 0))[0] + row.instances, 0)
    return out


def _first_difference(a: Any, b: Any) -> int:
    """The first offset where two buffers differ (len of the shorter if one is a prefix)."""
    step = 1 << 20
    for start in range(0, min(len(a), len(b)), step):
        if a[start:start + step] != b[start:start + step]:
            lo, hi = start, min(start + step, len(a), len(b))
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if a[lo:mid] != b[lo:mid]:
                    hi = mid
                else:
                    lo = mid
            return lo
    return min(len(a), len(b))


def _record_at(buffer: Any, offset: int) -> str:
    from ._dump import iter_records
    for record in iter_records(buffer):
        if record.offset <= offset < record.offset + 9 + record.length:
            return f"the {record.name} record at offset {record.offset:,}"
    return "the file header" if offset < 64 else "no record"


def assert_roundtrip(path: str | os.PathLike[str], format: str = "hprofkit", keep_all: bool = False) -> None:
    """Encodes the dump at `path` (format "hprofkit" or "tailor"), decodes it
    back and checks what came back: byte for byte with format="hprofkit"
    and keep_all=True (a lossless pack), else the same instances per class."""
    __tracebackhide__ = True
    if format not in ("hprofkit", "tailor"):
        raise ValueError(f"format must be 'hprofkit' or 'tailor', not {format!r}")
    if keep_all and format != "hprofkit":
        raise ValueError("keep_all=True needs format='hprofkit': Tailor's mini format always drops array contents")
    source = os.fspath(path)
    what = f"{source} through format={format!r}{' keep_all=True' if keep_all else ''}"
    with tempfile.TemporaryDirectory(prefix="hprofkit-roundtrip-") as tmp:
        packed, restored = os.path.join(tmp, "packed"), os.path.join(tmp, "restored.hprof")
        refused = None
        try:
            encode(source, packed, format=format, threads=1, strip="none" if keep_all else None)
        except UnsupportedError as exc:  # the dump is fine; the format cannot carry it
            refused = str(exc)
        if refused is not None:
            _fail(f"{what}: the format cannot carry this dump: {refused}",
                  f"{what}: {refused}\n(format='hprofkit' carries every dump hprofkit reads)")
        decode(packed, restored, threads=1)
        if keep_all:
            with Dump(source) as original, Dump(restored) as back:
                a, b = original.buffer, back.buffer
                if len(a) == len(b) and a[:] == b[:]:
                    return
                at = _first_difference(a, b)
                report = (f"{what}: the restored dump differs from the original at offset {at:,} (0x{at:x}), in "
                          f"{_record_at(a, at)}; original {len(a):,} bytes, restored {len(b):,} bytes "
                          f"(packed {os.path.getsize(packed):,})")
            _fail(f"{what}: restored bytes differ at offset {at:,}", report)
        table = HeapDiff.from_histograms(_histogram_by_name(source), _histogram_by_name(restored),
                                         a="original", b="restored")
        if table.rows:
            _fail(f"{what}: {_plural(len(table.rows), 'class')} changed instance counts",
                  f"{what}: instance counts per class differ after the round trip\n\n{table.format(top=None)}")


# -- baselines ---------------------------------------------------------------------

BASELINE_FORMAT = _baseline.FORMAT  # the format check() writes (it reads hprofkit._baseline.READ_FORMATS)
_REWRITE = "rewrite it with pytest --hprof-update-baselines, then review the diff and commit it"


class BaselineLedger(Protocol):
    """What a pytest session keeps of its baselines (the plugin's): which
    files its tests used and wrote, and the dumps they read (never written)."""
    inputs: set[str]

    def used(self, path: str) -> None: ...

    def wrote(self, path: str, created: bool) -> None: ...


class Baseline:
    """A per-test snapshot of a heap summary in a JSON file (the
    `hprof_baseline` fixture): per-class instances and shallow bytes, and
    the retained bytes of chosen classes.  check() compares; a missing file
    fails; with update=True (pytest --hprof-update-baselines) check() writes
    the file when its text changes.  test_name is the test's id inside its
    module; the file's name is made from it (see hprofkit._baseline: distinct
    ids never share a file).  ledger: the session's record (the plugin's)."""

    def __init__(self, directory: str | os.PathLike[str], test_name: str, *, update: bool = False,
                 ledger: BaselineLedger | None = None) -> None:
        self.directory = os.fspath(directory)
        self.test_name = test_name
        self.update = update
        self.ledger = ledger

    def path(self, name: str | None = None) -> str:
        return os.path.join(self.directory, _baseline.stem(self.test_name, name) + ".json")

    @staticmethod
    def summary(heap: Heap, retained: Iterable[str] = (), mask: Iterable[str] = (), *,
                unreachable: bool = False) -> dict[str, Any]:
        """What a baseline holds: {"classes": {name: [instances, shallow]}, "retained": {name: bytes}}
        of the reachable objects (unreachable=True: every object, as format-2 baselines count)."""
        masks = list(mask)
        classes = {n: list(v) for n, v in class_histogram(heap, unreachable).items() if not _masked(n, masks)}
        names = [n for n in retained if not _masked(n, masks)]
        return {"format": BASELINE_FORMAT, "classes": dict(sorted(classes.items())),
                "retained": retained_by_class(heap, names) if names else {}}

    def check(self, heap: Heap | str | os.PathLike[str], *, retained: Iterable[str] = (),
              mask: Iterable[str] = (), name: str | None = None) -> None:
        """Compares the heap's summary with the baseline (exactly, except the
        classes matching a `mask` glob pattern, expected to vary).  `name`
        tells several baselines of one test apart."""
        __tracebackhide__ = True
        retained, mask = list(retained), list(mask)
        path = self.path(name)
        if self.ledger is not None:
            self.ledger.used(path)
        if self.update:
            with _heap(heap) as h:
                current = self.summary(h, retained, mask)
            self._write(path, _baseline.render(current, self.test_name, name).encode(), heap)
            return
        stored, path = self._stored(path, name)
        with _heap(heap) as h:  # an older baseline counted garbage too: compared as it was written
            current = self.summary(h, retained, mask, unreachable=stored["format"] in _baseline.COUNTS_GARBAGE)
        base = {n: v for n, v in stored["classes"].items() if not _masked(n, mask)}
        now = {n: (v[0], v[1]) for n, v in current["classes"].items()}
        table = HeapDiff.from_histograms(base, now, stored["retained"] if retained else None,
                                         current["retained"] if retained else None, a=path, b=_label(heap))
        if table.rows:
            _fail(f"heap differs from its baseline in {_plural(len(table.rows), 'class')}: "
                  + ", ".join(r.name for r in table.rows[:3]) + (", ..." if len(table.rows) > 3 else ""),
                  f"the heap differs from the baseline (a: baseline, b: this heap); if the change is "
                  f"expected, rerun with --hprof-update-baselines or mask the class\n\n{table.format(top=None)}")

    def _stored(self, path: str, name: str | None) -> tuple[dict[str, Any], str]:
        """The baseline's fields and the file they came from: its own, or a
        format-1 file under the name baselines had before (read for one release)."""
        __tracebackhide__ = True
        unreadable = None
        try:
            return _baseline.read(path), path
        except _baseline.BaselineError as exc:
            unreadable = str(exc)
        except FileNotFoundError:
            pass
        if unreadable is not None:  # failed outside the except: no chained traceback
            _fail(f"heap baseline {path} is unreadable: {unreadable}", f"{path}: {unreadable}\n{_REWRITE}")
        legacy = os.path.join(self.directory, _baseline.legacy_stem(self.test_name, name) + ".json")
        if legacy != path:
            with contextlib.suppress(OSError, _baseline.BaselineError):
                stored = _baseline.read(legacy)
                if stored["format"] == 1:  # a format-2 file there is another test's
                    if self.ledger is not None:
                        self.ledger.used(legacy)
                    _note(f"read {legacy}, a baseline under its format-1 name; "
                          f"pytest --hprof-update-baselines writes it as {path}")
                    return stored, legacy
        _fail(f"no heap baseline {path}", f"no heap baseline at {path}\n"
              "run pytest --hprof-update-baselines to write it, then review and commit it")

    def _write(self, path: str, text: bytes, heap: Heap | str | os.PathLike[str]) -> None:
        """Writes the baseline if its text changed: atomically, never into a
        dump the session reads, never through a link to what is not a baseline."""
        __tracebackhide__ = True
        created = not os.path.lexists(path)
        with contextlib.suppress(OSError, _baseline.BaselineError):
            if _baseline.read_bytes(path) == text:
                return
        inputs = set(self.ledger.inputs) if self.ledger is not None else set()
        if not isinstance(heap, Heap):
            inputs.add(os.fspath(heap))
        refused = None
        try:
            for source in sorted(inputs):
                check_not_same_file(source, path)
            check_replaceable(path, _baseline.is_baseline, _baseline.KIND)
            os.makedirs(self.directory, exist_ok=True)
            with output_file(path) as f:
                f.write(text)
        except (OSError, ValueError) as exc:
            refused = str(exc)
        if refused is not None:
            _fail(f"heap baseline not written: {refused}", f"heap baseline {path} not written: {refused}")
        if self.ledger is not None:
            self.ledger.wrote(path, created)
        _note(f"baseline {'written' if created else 'updated'}: {path}")


def _masked(name: str, masks: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, m) for m in masks)


# -- dumps as test items ----------------------------------------------------------------

# The field patterns take (class, field), the others one name: called as the entry says.
_MATCHER_KEYS: dict[str, Callable[..., match.Matcher]] = {
    "instance_field": match.instance_field, "static_field": match.static_field,
    "thread_local": match.thread_local, "root_class": match.root_class}
_DEFAULTS = {"android": match.ANDROID_DEFAULTS, "jdk": match.JDK_DEFAULTS, "none": ()}


@dataclass
class CheckSettings:
    """The checks `pytest --hprof-check DIR` runs on each dump, from
    `[tool.hprofkit]` in pyproject.toml::

        [tool.hprofkit]
        leaks = true                  # no application leaks (the default)
        fail_on_library = false
        defaults = "android"          # matchers the leak search starts from: android, jdk, none
        exclude = [
          { static_field = "com.example.Registry.sListeners", kind = "library", description = "..." },
          { instance_field = "com.example.Holder.mView" },
          { thread_local = "worker-1" },
          { root_class = "com.example.NativeBridge" },
        ]
        max_instances = { "com.example.MainActivity" = 1 }
        retained_below = { "com.example.ImageCache" = "2 MB" }
        mapping = "app/build/outputs/mapping/release/mapping.txt"   # dumps of a release build

    With a mapping (relative to the pyproject.toml), dumps are read with its clear names, so the
    checks name classes and fields as the source does.
    """
    leaks: bool = True
    fail_on_library: bool = False
    exclude: tuple[match.Matcher, ...] = match.ANDROID_DEFAULTS
    max_instances: dict[str, int] = field(default_factory=dict)
    retained_below: dict[str, str | int] = field(default_factory=dict)
    mapping: str | None = None

    @classmethod
    def from_toml(cls, table: dict[str, Any]) -> "CheckSettings":
        """Reads the [tool.hprofkit] table; ValueError names what is wrong."""
        known = {"leaks", "fail_on_library", "defaults", "exclude", "max_instances", "retained_below", "mapping"}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"[tool.hprofkit]: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})")
        defaults = table.get("defaults", "android")
        if defaults not in _DEFAULTS:
            raise ValueError(f"[tool.hprofkit] defaults = {defaults!r}: choose android, jdk or none")
        entries = _typed(table, "exclude", list, [], "a list of tables")
        exclude = tuple(_DEFAULTS[defaults]) + tuple(_matcher(entry) for entry in entries)
        settings = cls(_typed(table, "leaks", bool, True, "true or false"),
                       _typed(table, "fail_on_library", bool, False, "true or false"), exclude,
                       dict(_typed(table, "max_instances", dict, {}, "a table of class = count")),
                       dict(_typed(table, "retained_below", dict, {}, "a table of class = size")))
        for name, n in settings.max_instances.items():
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ValueError(f"[tool.hprofkit] max_instances {name!r} = {n!r}: write a count")
        for name, size in settings.retained_below.items():
            parse_size(size)
        mapping = table.get("mapping")
        if mapping is not None and not isinstance(mapping, str):
            raise ValueError(f"[tool.hprofkit] mapping = {mapping!r}: write the path of a mapping.txt")
        settings.mapping = mapping
        return settings


def _typed(table: dict[str, Any], key: str, kind: type, default: Any, what: str) -> Any:
    """table[key] when it is a `kind` (the default when absent); ValueError
    otherwise: leaks = "no" is no boolean, though bool("no") is True."""
    value = table.get(key, default)
    if not isinstance(value, kind):
        raise ValueError(f"[tool.hprofkit] {key} = {value!r}: write {what}")
    return value


def _matcher(entry: object) -> match.Matcher:
    if not isinstance(entry, dict):
        raise ValueError(f"[tool.hprofkit] exclude entry {entry!r}: write a table such as "
                         "{ static_field = \"com.example.Cache.sInstance\" }")
    keys = [k for k in entry if k in _MATCHER_KEYS]
    extra = set(entry) - set(_MATCHER_KEYS) - {"kind", "description"}
    if len(keys) != 1 or extra:
        raise ValueError(f"[tool.hprofkit] exclude entry {entry!r}: name exactly one of "
                         f"{', '.join(_MATCHER_KEYS)} (plus kind, description)")
    pattern, target = keys[0], entry[keys[0]]
    options = {k: entry[k] for k in ("kind", "description") if k in entry}
    if pattern in ("instance_field", "static_field"):
        owner, dot, field_name = str(target).rpartition(".")
        if not dot or not owner or not field_name:
            raise ValueError(f"[tool.hprofkit] exclude {pattern} = {target!r}: write Class.field")
        return _MATCHER_KEYS[pattern](owner, field_name, **options)
    return _MATCHER_KEYS[pattern](target, **options)


def check_dump(path: str | os.PathLike[str], settings: CheckSettings) -> None:
    """Runs the configured checks on one dump; one HeapCheckFailed gathers
    every failing check (a summary line each, and their reports)."""
    failures: list[HeapCheckFailed] = []
    try:
        opened = open_heap(path, mapping=settings.mapping)
    except NoHeapDumpError as exc:
        raise HprofError(f"{exc}: nothing to check", 0) from None
    with opened as heap:
        checks: list[Callable[[], None]] = []
        if settings.leaks:
            checks.append(partial(assert_no_leaks, heap, settings.exclude, settings.fail_on_library))
        checks += [partial(assert_max_instances, heap, name, n) for name, n in settings.max_instances.items()]
        checks += [partial(assert_retained_below, heap, name, size) for name, size in settings.retained_below.items()]
        for check in checks:
            try:
                check()
            except HeapCheckFailed as exc:
                failures.append(exc)
    if failures:
        raise HeapCheckFailed("; ".join(f.summary for f in failures),
                              "\n\n".join(f.report for f in failures),
                              sectioned=all(f.sectioned for f in failures))
