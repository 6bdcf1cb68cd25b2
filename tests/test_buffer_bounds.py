"""Nothing reads past the buffer it was given, whatever the bytes say, even
after they change.  Each case runs in a child process over a buffer that ends
right where an unreadable page begins, so that one byte read past the end is
a crash (before the fixes: SIGSEGV), not a silent read of whatever follows."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

import hprofkit
from conftest import raw_bytes

pytestmark = pytest.mark.sanitize

FENCE = """
import ctypes, mmap, sys
import hprofkit

def fenced(data):
    '''A writable view of a copy of data that ends where a PROT_NONE page begins.'''
    page = mmap.PAGESIZE
    size = -(-len(data) // page) * page + page
    m = mmap.mmap(-1, size)
    end = size - page
    m[end - len(data):end] = data
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    address = ctypes.addressof(ctypes.c_char.from_buffer(m))
    assert libc.mprotect(address + end, page, 0) == 0
    return memoryview(m)[end - len(data):end]

view = fenced(open(sys.argv[1], "rb").read())
"""


def run(code: str, data: bytes, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "input.bin"
    path.write_bytes(data)
    return subprocess.run([sys.executable, "-c", FENCE + code, str(path)], capture_output=True, text=True,
                          timeout=300)


def test_records_of_a_dump_cut_inside_a_heap_record(tmp_path):
    """The record whose body is cut is not yielded (so Record.subrecords()
    cannot walk past the end): TruncatedError at its offset instead."""
    data = raw_bytes("leakcanary__leak_service_binder.hprof")
    segment = [r for r in hprofkit.iter_records(data) if r.tag == 0x1C][3]
    cut = segment.offset + 9 + segment.length // 2
    proc = run("""
yielded = []
try:
    for record in hprofkit.iter_records(view):
        yielded.append(record)
        assert record.offset + 9 + record.length <= len(view), "a record past the end was yielded"
        if record.tag == 0x1C:
            for sub in record.subrecords():
                assert sub.offset + sub.length <= len(view)
except hprofkit.TruncatedError as exc:
    print(exc.offset, yielded[-1].offset)
""", data[:cut], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    error_offset, last_yielded = map(int, proc.stdout.split())
    assert error_offset == segment.offset and last_yielded < segment.offset


def test_subrecords_of_a_dump_cut_inside_a_heap_record(tmp_path):
    data = raw_bytes("mat__sun_jdk6_32bit.hprof")
    heap = next(r for r in hprofkit.iter_records(data) if r.tag == 0x0C)
    proc = run("""
try:
    for sub in hprofkit.iter_subrecords(view):
        pass
except hprofkit.TruncatedError as exc:
    print("truncated")
""", data[:heap.offset + 9 + heap.length - 3], tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "truncated\n"), proc.stderr[-3000:]


def class_dump_at_the_end() -> tuple[bytes, int]:
    """A dump whose last bytes are a CLASS_DUMP (no HEAP_DUMP_END after it),
    and the offset of that CLASS_DUMP."""
    out = io.BytesIO()
    with hprofkit.HprofWriter(out) as w:
        w.load_class(0x100, "C")
        with w.heap_dump() as heap:
            heap.class_dump(0x100, instance_size=8, constants=[(1, "int", 7)], statics=[("s", "long", 5)],
                            fields=[("f", "int"), ("g", "object")])
        data = out.getvalue()
    sub = [s for s in hprofkit.iter_subrecords(data) if s.tag == 0x20][-1]
    assert sub.offset + sub.length == len(data)
    return data, sub.offset


@pytest.mark.parametrize("getter", ["constants", "statics", "fields", "signers_id"])
@pytest.mark.parametrize("table", [0, 1, 2])  # which table's count is made huge
def test_class_dump_getters_after_the_buffer_changed(getter, table, tmp_path):
    """The tables are re-read at each getter call: once a count is changed
    to 65535 they no longer fit, which is CorruptError, not a read past the end."""
    data, offset = class_dump_at_the_end()
    layout = hprofkit.iter_subrecords(data)
    sub = [s for s in layout if s.tag == 0x20][-1]
    counts = {0: 1 + 7 * 4 + 8}  # the constant pool count follows the fixed fields
    counts[1] = counts[0] + 2 + (2 + 1 + 4)                 # one int constant
    counts[2] = counts[1] + 2 + (4 + 1 + 8)                 # one long static
    assert sub.constants == [(1, 10, 7)] and len(sub.statics) == 1 and len(sub.fields) == 2
    proc = run(f"""
sub = [s for s in hprofkit.iter_subrecords(view) if s.tag == 0x20][-1]
before = sub.{getter}
view[{offset + counts[table]}:{offset + counts[table] + 2}] = b"\\xff\\xff"
try:
    sub.{getter}
    print("no error")
except hprofkit.CorruptError as exc:
    print(exc.offset, exc.record)
""", data, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == [str(offset), "CLASS_DUMP"]
