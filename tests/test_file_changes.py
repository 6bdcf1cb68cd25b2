"""A mapped dump that shrinks under a running walk: the pages past its new end
raise SIGBUS, which must become FileChangedError (an HprofError) for every
walk over a mapping, never kill the interpreter.  Each case runs in a child
process with a real file, truncated for real (by the child itself at a known
point, or by `truncate` from outside while the CLI runs)."""

from __future__ import annotations

import signal
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hprofkit

from conftest import raw_bytes
from procstate import HANG_GUARD, has_mapped, is_stopped, reap, wait_for

pytestmark = pytest.mark.sanitize

SHRUNK = 1 << 20  # the size the dump is truncated to


def write_dump(path: Path, megabytes: int) -> Path:
    """A valid dump of `megabytes` MiB: 1 KiB STRING records for the first
    quarter, then heap segments of 5-byte ROOT_UNKNOWN sub-records (every
    page holds record or sub-record heads, so any walk reads every page)."""
    string = struct.pack(">BII", 0x01, 0, 4 + 1015) + struct.pack(">I", 7) + b"s" * 1015
    segment_body = (b"\xff" + struct.pack(">I", 1)) * ((16 << 20) // 5)
    segment = struct.pack(">BII", 0x1C, 0, len(segment_body)) + segment_body
    with open(path, "wb") as f:
        f.write(b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 4, 0))
        f.write(string * ((megabytes << 20) // 4 // len(string)))
        for _ in range(megabytes * 3 // 4 // 16):
            f.write(segment)
        f.write(struct.pack(">BII", 0x2C, 0, 0))
    return path


@pytest.fixture(scope="module")
def dump_file(tmp_path_factory) -> Path:
    return write_dump(tmp_path_factory.mktemp("changing") / "t.hprof", 96)


# Each job walks the dump and truncates it at a known point of the walk, then
# goes on walking: the next read of a page past 1 MiB faults.
JOBS = {
    "stats": """
with hprofkit.open(path) as dump:
    dump.stats(progress=lambda done, total: shrink())
""",
    "records": """
with hprofkit.open(path) as dump:
    for i, record in enumerate(dump.records()):
        if i == 10:
            shrink()
""",
    "subrecords": """
with hprofkit.open(path) as dump:
    for i, sub in enumerate(dump.subrecords()):
        if i == 10:
            shrink()
""",
    "Record.subrecords": """
with hprofkit.open(path) as dump:
    heap = next(r for r in dump.records() if r.tag == 0x1C)
    shrink()
    for sub in heap.subrecords():
        pass
""",
    # The heap build has no progress callback, but it runs the Python signal
    # handlers every 16 MiB of input (for Ctrl-C): an alarm set just before
    # it is handled, and truncates the dump, at the build's first check.
    "heap build": """
import signal
signal.signal(signal.SIGALRM, lambda *args: shrink())
with hprofkit.open(path) as dump:
    signal.setitimer(signal.ITIMER_REAL, 0.001)
    dump.heap()
""",
    "walk": """
from hprofkit import _hprof
with hprofkit.open(path) as dump:
    shrink()
    _hprof.walk(dump.buffer)
""",
    "iter_subrecords of a memoryview": """
import mmap
with open(path, "rb") as f:
    view = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    shrink()
    for sub in hprofkit.iter_subrecords(view):
        pass
""",
    # The stream types read their input on the calling thread (the pack
    # codec's workers get copies of its blocks); Tailor and the converter
    # take Android dumps: the header says 1.0.3.
    **{f"{codec}.feed of a mapping": f"""
import mmap
from hprofkit import _hprof
with open(path, "r+b") as f:
    f.write(b"JAVA PROFILE 1.0.{2 if codec == "PackEncoder" else 3}")
    f.flush()
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    codec = _hprof.{codec}()
    shrink()
    codec.feed(m)
""" for codec in ("TailorEncoder", "Converter", "PackEncoder")},
    "Parser.feed of a mapping": """
import mmap
with open(path, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    shrink()
    hprofkit.Parser().feed(m)
""",
}

PRELUDE = """
import os, sys
import hprofkit
path = sys.argv[1]
def shrink():
    os.truncate(path, {shrunk})
try:
{job}
except hprofkit.FileChangedError as exc:
    print(type(exc).__name__, exc.offset, exc, file=sys.stderr)
    sys.exit(3)
sys.exit(0)
"""


def run_job(job: str, path: Path) -> subprocess.CompletedProcess:
    """Runs the code `job` on `path` in a child (PRELUDE around it)."""
    body = "\n".join("    " + line for line in job.strip().splitlines())
    code = PRELUDE.format(shrunk=SHRUNK, job=body)
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)


def changed_offset(proc: subprocess.CompletedProcess) -> int:
    """The offset of the FileChangedError the child ended with (exit 3)."""
    assert proc.returncode == 3, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    name, offset, message = proc.stderr.split(" ", 2)
    assert name == "FileChangedError"
    assert "the file changed while it was read" in message and f"offset {offset} " in message
    return int(offset)


@pytest.mark.parametrize("job", list(JOBS))
def test_a_walk_over_a_shrinking_mapping_raises(job, dump_file, tmp_path):
    path = tmp_path / "t.hprof"
    path.write_bytes(dump_file.read_bytes())
    size = path.stat().st_size
    assert SHRUNK <= changed_offset(run_job(JOBS[job], path)) < size


def test_a_class_dump_getter_after_the_file_shrank(tmp_path):
    """SubRecord getters re-read the mapping: a CLASS_DUMP past the new end."""
    path = tmp_path / "classes.hprof"
    with hprofkit.HprofWriter(path) as w:
        w.load_class(0x100, "C")
        with w.heap_dump() as heap:
            for i in range(600_000):  # pushes the CLASS_DUMP well past 1 MiB
                heap.root_unknown(0x200 + i)
            heap.class_dump(0x100, instance_size=4, fields=[("f", "int")], statics=[("s", "long", 5)])
    job = """
with hprofkit.open(path) as dump:
    cls = [s for s in dump.subrecords() if s.tag == 0x20][-1]
    assert cls.offset > 2 * (1 << 20)
    shrink()
    cls.statics
"""
    changed_offset(run_job(job, path))


# Walks of a built heap: each reads the objects' bytes from the mapping.
HEAP_WALKS = {
    "referrer index": "heap.object(heap.find_class('java.lang.String').id).referrers()",
    "dangling count": "heap.dangling_count",
    "stats of a 64-bit dump (its size model indexes the heap)": "dump.stats(progress=progress)",
    "heap.tables() (the objects' columns first)": "heap.tables(retained=False)",
    "the references table's columns": "heap._columns(['references'])",
    "the String values' and field values' columns": "heap._columns(['strings', 'fields'])",
}


@pytest.mark.parametrize("walk", list(HEAP_WALKS))
def test_a_heap_walk_after_the_file_shrank(walk, tmp_path):
    path = tmp_path / "x64.hprof"
    path.write_bytes(raw_bytes("mat__sun_jdk6_18_x64.hprof"))
    job = f"""
with hprofkit.open(path) as dump:
    heap = dump.heap()
    progress = lambda done, total: done == total and shrink()  # after the last slice, before the model
    if "progress" not in {HEAP_WALKS[walk]!r}:
        shrink()
    {HEAP_WALKS[walk]}
"""
    changed_offset(run_job(job, path))


def test_parser_payload_views_of_a_mapping_that_shrank(tmp_path):
    """Parser.feed(mapping) copies the chunk for its payload views when the
    first sub-record with a payload comes (at 1,056,602 in this dump, before
    the new end): the copy reaches past the new end and faults there, at the
    first page memcpy touches past it (which one depends on the CPU: on one
    machine 3,020,809 of 3,020,841)."""
    path = tmp_path / "x64.hprof"
    path.write_bytes(raw_bytes("mat__sun_jdk6_18_x64.hprof"))
    size = path.stat().st_size
    job = f"""
import mmap
with open(path, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    os.truncate(path, {2 * SHRUNK})
    hprofkit.Parser().feed(m)
"""
    assert 2 * SHRUNK <= changed_offset(run_job(job, path)) < size


@pytest.mark.parametrize("codec, dump", [("Pack", "mat__sun_jdk6_18_x64.hprof"),
                                         ("Tailor", "platform_tools_base__dialer.android-hprof")])
def test_a_decoder_fed_a_mapping_that_shrank(codec, dump, tmp_path):
    encoder = getattr(hprofkit._hprof, f"{codec}Encoder")()
    path = tmp_path / "encoded"
    path.write_bytes(encoder.feed(raw_bytes(dump)) + encoder.flush())
    assert path.stat().st_size > 3 * 4096
    job = f"""
import mmap
from hprofkit import _hprof
with open(path, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    os.truncate(path, 8192)
    _hprof.{codec}Decoder().feed(m)
"""
    assert changed_offset(run_job(job, path)) == 8192


# Reads through handles taken before the file shrank (to nothing): each reads
# the dump's bytes from the mapping (an object's header, a value, a name, a
# String's text, a class dump's fields, a stack frame).  `before` runs first;
# the read is made once before the shrink (it works) and once after (it
# raises), unless `cached` (a read whose answer the heap keeps after the
# first: made after the shrink only).
HANDLE_SETUP = """
heap = dump.heap()
String = heap.find_class("java.lang.String")
string = next(s for s in String.instances() if s.as_str())
ints = next(o for o in heap.find_class("int[]").instances() if len(o) > 1)
array = next(o for o in heap.objects() if o.kind == "object_array" and len(o) > 1)
"""
HANDLE_READS = {
    'obj["value"]': ("", 'string["value"]'),
    'obj["a.Class", "name"]': ("", 'string["java.lang.String", "count"]'),
    "obj.fields()": ("", "string.fields()"),
    "obj.as_str()": ("", "string.as_str()"),
    "obj.references()": ("", "array.references()"),
    "obj.referrers()": ("", "string.referrers()"),
    "arr[i]": ("", "ints[1]"),
    "arr[-1]": ("", "array[-1]"),
    "len(arr)": ("", "len(ints)"),
    "arr.tolist()": ("", "ints.tolist()"),
    "arr.values()": ("", "ints.values()"),
    "arr.shallow_size": ("", "ints.shallow_size"),
    "repr(arr)": ("", "repr(ints)"),
    "class_object[static]": ("", 'String["CASE_INSENSITIVE_ORDER"]'),
    "cls.statics()": ("", "String.statics()"),
    "cls.fields()": ("", "String.fields()"),
    "cls.subclasses()": ("", "heap.find_class('java.lang.Object').subclasses()"),
    "cls.instances(subclasses=True)": ("", "heap.find_class('java.lang.Object').instances(subclasses=True)"),
    "cls.name (first use)": ("first = hprofkit.open_heap(path).classes[0]", "first.name cached"),
    "heap.find_class (first use)": ("other = hprofkit.open_heap(path)", "other.find_class('java.lang.String') cached"),
    "heap.gc_roots (stack frames)": ("", "list(heap.gc_roots)"),
}


@pytest.mark.parametrize("read", list(HANDLE_READS))
def test_a_handle_read_after_the_file_shrank(read, tmp_path):
    """issue #9: a field read on a heap whose file was truncated after it was
    opened raises FileChangedError, naming an offset of the file."""
    path = tmp_path / "x64.hprof"
    path.write_bytes(raw_bytes("mat__sun_jdk6_18_x64.hprof"))
    size = path.stat().st_size
    before, expression = HANDLE_READS[read]
    cached = expression.endswith(" cached")
    expression = expression.removesuffix(" cached")
    job = f"""
import os
with hprofkit.open(path) as dump:
{textwrap.indent(HANDLE_SETUP.strip(), "    ")}
    {before}
    value = {"None" if cached else expression}
    os.truncate(path, 0)
    value = {expression}
    print("no error:", repr(value)[:200], file=sys.stderr)
"""
    assert 0 <= changed_offset(run_job(job, path)) < size


def test_an_android_heap_name_after_the_file_shrank(tmp_path):
    path = tmp_path / "dialer.hprof"
    path.write_bytes(raw_bytes("platform_tools_base__dialer.android-hprof"))
    job = """
import os
heap = hprofkit.open_heap(path)
obj = next(o for o in heap.objects() if o.heap_name == "app")
os.truncate(path, 0)
obj.heap_name
"""
    changed_offset(run_job(job, path))


def test_the_cli_says_the_file_changed_when_truncate_shrinks_it_under_stats(tmp_path):
    """The issue's reproduction: `hprofkit stats t.hprof & truncate -s 1M t.hprof`."""
    path = write_dump(tmp_path / "t.hprof", 160)
    proc = subprocess.Popen([sys.executable, "-m", "hprofkit", "stats", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(proc, lambda: has_mapped(proc.pid, path), "mapped the dump")
        # Stopped while the file shrinks: it cannot end before the truncate,
        # nor report the change before the check that it was still at work.
        proc.send_signal(signal.SIGSTOP)
        wait_for(proc, lambda: is_stopped(proc.pid), "stopped")
        assert proc.poll() is None, "stats ended before the file was truncated: make the dump bigger"
        subprocess.run(["truncate", "-s", "1M", str(path)], check=True)
        proc.send_signal(signal.SIGCONT)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        reap(proc)
    assert proc.returncode == 1, f"exit {proc.returncode} ({signal.Signals(-proc.returncode).name if proc.returncode < 0 else ''}): {err}"
    assert err.count("\n") == 1 and err.startswith("hprofkit: error: the file changed while it was read"), err
    assert out == ""


def test_faults_that_are_not_ours_still_kill(tmp_path):
    """The handler chains: a SIGBUS outside any guard (here Python's own mmap
    reading a page past the end) still ends the process as before."""
    path = tmp_path / "t.hprof"
    path.write_bytes(b"\0" * (4 << 20))
    code = """
import mmap, os, sys
import hprofkit
hprofkit.stats(b"JAVA PROFILE 1.0.2\\0\\0\\0\\0\\4" + bytes(8))  # a guarded walk installs the handler
with open(sys.argv[1], "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
os.truncate(sys.argv[1], 4096)
m[3 << 20]
"""
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    if "AddressSanitizer" in proc.stderr:  # the sanitized build: ASan's handler came before ours
        assert "AddressSanitizer: BUS" in proc.stderr and "mmap_subscript" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == -signal.SIGBUS, proc.stderr
