"""Truncated, corrupt, foreign and hostile inputs: each gives the right
HprofError subclass at the right byte offset, never a crash, hang or
unbounded allocation; the CLI prints one line and exits 1."""

from __future__ import annotations

import bisect
import gzip
import random
import subprocess
import sys
import tracemalloc

import pytest
from hypothesis import given, settings, strategies as st

import hprofkit
from conftest import raw_bytes

pytestmark = pytest.mark.sanitize

DUMPS = ["mat__sun_jdk6_32bit.hprof",                   # 1.0.1, one HEAP_DUMP, id 4
         "leakcanary__leak_service_binder.hprof",       # 1.0.3, Android segments
         "mat__sun_jdk6_18_x64.hprof",                  # id 8
         "mat__sun_jdk6_31_hprofagent_nocompressedOops.hprof"]  # agent records, two dumps


def units(data: bytes):
    """(start, head_end, end, tag, is_sub) of every record and sub-record."""
    out = []
    for r in hprofkit.iter_records(data):
        out.append((r.offset, r.offset + 9, r.offset + 9 + r.length, r.tag, False))
        if r.tag in (0x0C, 0x1C):
            for s in r.subrecords():
                out.append((s.offset, s.offset + s.length - len(s.data or b""), s.offset + s.length, s.tag, True))
    return out


def expected_error(cut: int, index):
    """Offset and tag of the unit a cut at `cut` leaves incomplete, or None:
    the sub-record it falls in, else the record (units in offset order)."""
    if cut < 31:
        return (0, None)
    for units in (index.subrecords, index.records):
        at = bisect.bisect_left(units, (cut,)) - 1  # the last unit starting before the cut
        if at >= 0 and cut < units[at][1]:
            return (units[at][0], units[at][2])
    return None


class Index:
    """start-sorted (start, end, tag) of the records and of the sub-records."""

    def __init__(self, units) -> None:
        self.all = units
        self.records = [(start, end, tag) for start, _, end, tag, is_sub in units if not is_sub]
        self.subrecords = [(start, end, tag) for start, _, end, tag, is_sub in units if is_sub]


def per_tag(units, rng, k):
    """Up to k units of each tag, drawn at random: every kind of record and
    sub-record is cut, not only the commonest (each cut parses from the start)."""
    by_tag: dict[int, list] = {}
    for unit in units:
        by_tag.setdefault(unit[3], []).append(unit)
    return [unit for tag in sorted(by_tag) for unit in rng.sample(by_tag[tag], min(k, len(by_tag[tag])))]


def boundary_cuts(index, rng, size):
    """Cuts covering every boundary class: header, record head, body, sub-record
    boundary, sub-record head, payload, class-dump tables."""
    cuts = {0, 1, 10, 17, 18, 19, 25, 30}
    recs = [u for u in index if not u[4]]
    subs = [u for u in index if u[4]]
    for start, head, end, tag, _ in per_tag(recs, rng, 6):
        cuts |= {start + 1, start + 5, start + 8, min(head + 1, end), end}
    for start, head, end, tag, _ in per_tag(subs, rng, 12):
        cuts |= {start, start + 1, head - 1, head, (head + end) // 2, end}
    for start, head, end, tag, _ in [u for u in subs if u[3] == 0x20][:20]:
        cuts |= {start + 40, (start + end) // 2, end - 1}
    return sorted(c for c in cuts if 0 <= c < size)


@pytest.mark.parametrize("name", DUMPS)
def test_truncation_at_every_boundary_class(name):
    data = raw_bytes(name)
    index = Index(units(data))
    rng = random.Random(name)
    whole = memoryview(data)
    for cut in boundary_cuts(index.all, rng, len(data)):
        want = expected_error(cut, index)
        piece = whole[:cut]  # a view: no copy of the dump per cut
        if want is None:  # a clean record boundary: a valid, shorter dump
            hprofkit.stats(piece)
            continue
        with pytest.raises(hprofkit.TruncatedError) as info:
            hprofkit.stats(piece)
        assert (info.value.offset, info.value.tag) == want, cut
        assert f"at offset {want[0]} " in str(info.value)


def test_iterators_yield_then_raise():
    data = raw_bytes("leakcanary__leak_service_binder.hprof")
    cut = len(data) // 2
    seen = []
    with pytest.raises(hprofkit.TruncatedError) as info:
        for s in hprofkit.iter_subrecords(data[:cut]):
            seen.append(s.offset)
    assert seen and seen[-1] < info.value.offset <= cut


def first_sub(data: bytes, tag: int):
    return next(s for s in hprofkit.iter_subrecords(data) if s.tag == tag)


def patched(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


def test_unknown_subtag_is_corrupt_at_its_offset():
    data = raw_bytes("mat__sun_jdk6_32bit.hprof")
    s = first_sub(data, 0x21)
    with pytest.raises(hprofkit.CorruptError) as info:
        hprofkit.stats(patched(data, s.offset, b"\x77"))
    assert info.value.offset == s.offset and info.value.tag == 0x77
    assert "unknown heap sub-record tag" in str(info.value)


def test_absurd_array_count_overruns_its_segment():
    data = raw_bytes("leakcanary__leak_service_binder.hprof")
    s = first_sub(data, 0x23)
    bad = patched(data, s.offset + 1 + 4 + 4, (0x7FFFFFFF).to_bytes(4, "big"))
    tracemalloc.start()
    try:
        with pytest.raises(hprofkit.OverrunError) as info:
            hprofkit.stats(bad)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.offset == s.offset and info.value.record == "PRIMITIVE_ARRAY_DUMP"
    assert peak < 16 << 20  # nothing sized by the hostile count


def test_absurd_instance_length_overruns():
    data = raw_bytes("mat__sun_jdk6_18_x64.hprof")
    s = first_sub(data, 0x21)
    with pytest.raises(hprofkit.OverrunError) as info:
        list(hprofkit.iter_subrecords(patched(data, s.offset + 1 + 8 + 4 + 8, b"\xff\xff\xff\xff")))
    assert info.value.offset == s.offset


def test_bad_element_type_is_corrupt():
    data = raw_bytes("mat__sun_jdk6_32bit.hprof")
    s = first_sub(data, 0x23)
    with pytest.raises(hprofkit.CorruptError) as info:
        hprofkit.stats(patched(data, s.offset + 1 + 4 + 4 + 4, b"\x0c"))
    assert info.value.offset == s.offset


def test_short_segment_length_is_an_overrun():
    data = raw_bytes("leakcanary__leak_service_binder.hprof")
    segment = next(r for r in hprofkit.iter_records(data) if r.tag == 0x1C and r.length > 100)
    seg_offset = segment.offset
    last_offset = [s.offset for s in segment.subrecords()][-1]
    del segment
    # The segment now ends one byte into its last sub-record.
    new_length = last_offset + 1 - (seg_offset + 9)
    bad = patched(data, seg_offset + 5, new_length.to_bytes(4, "big"))
    with pytest.raises(hprofkit.OverrunError) as info:
        hprofkit.stats(bad)
    assert info.value.offset == last_offset


def test_record_length_past_the_end_is_truncation_of_that_record():
    data = raw_bytes("mat__sun_jdk6_32bit.hprof")
    rec = next(r for r in hprofkit.iter_records(data) if r.tag == 0x02)
    offset = rec.offset
    del rec
    bad = patched(data, offset + 5, b"\xff\xff\xff\xf0")
    with pytest.raises(hprofkit.TruncatedError) as info:
        hprofkit.stats(bad)
    assert (info.value.offset, info.value.record) == (offset, "LOAD_CLASS")


@pytest.mark.parametrize("blob,fragment", [
    (b"JAVA PROFILE 1.0.7\x00" + b"\x00" * 20, "unknown HPROF version"),
    (b"JAVA PROFILE 1.0.2\x00\x00\x00\x00\x03" + b"\x00" * 8, "identifier size"),
    (b"JAVA PROFILE 1.0.2\x00\xff\xff\xff\xff" + b"\x00" * 8, "identifier size"),
    (b"<html>not a dump</html>" * 3, "not an HPROF file"),
])
def test_foreign_data_is_a_format_error(blob, fragment):
    with pytest.raises(hprofkit.FormatError) as info:
        hprofkit.stats(blob)
    assert fragment in str(info.value)


def test_a_tailor_magic_is_read_as_a_mini():
    """A dump is opened as hprofkit.open_heap opens it: Tailor's magic starts a mini, restored
    first (#22); garbage after it is the mini's corruption, named at its offset."""
    with pytest.raises(hprofkit.CorruptError) as info:
        hprofkit.stats(b"JAVA PROFILE 6.0.1" + b"\x00" * 20)
    assert "mini stream" in str(info.value) and info.value.offset == 18


def test_bytes_with_a_gzip_magic_are_read_as_gzip():
    # gzip by its magic, then broken: a 10-byte header, then a stored block whose LEN and NLEN
    # (bytes 11-14) disagree, found at their last byte; as for files (test_compressed_input)
    with pytest.raises(hprofkit.CorruptError) as info:
        hprofkit.stats(b"\x1f\x8b\x08\x00" + b"\x00" * 40)
    assert "corrupt gzip stream" in str(info.value)
    assert info.value.offset == 14


def test_foreign_files_through_open(tmp_path):
    empty = tmp_path / "empty.hprof"
    empty.write_bytes(b"")
    with pytest.raises(hprofkit.FormatError):
        hprofkit.open(empty)
    broken_gz = tmp_path / "broken.hprof.gz"
    broken_gz.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-garbage")
    with pytest.raises(hprofkit.HprofError):
        hprofkit.open(broken_gz)
    cut_gz = tmp_path / "cut.hprof.gz"
    cut_gz.write_bytes(gzip.compress(raw_bytes("platform_art__RI.hprof"))[:5000])
    with pytest.raises(hprofkit.TruncatedError):
        hprofkit.open(cut_gz)


SAMPLE = raw_bytes("mat__sun_jdk6_31_hprofagent_compressedOops.hprof")[:120_000]


@settings(max_examples=150)
@given(st.lists(st.tuples(st.integers(0, len(SAMPLE) - 1), st.integers(0, 255)), min_size=1, max_size=8),
       st.integers(0, len(SAMPLE)))
def test_random_corruption_never_crashes(flips, cut):
    data = bytearray(SAMPLE[:cut])
    for at, value in flips:
        if at < len(data):
            data[at] = value
    try:
        hprofkit.stats(bytes(data))
    except hprofkit.HprofError as exc:
        assert exc.offset is not None and 0 <= exc.offset <= len(data)


def test_cli_error_is_one_line_and_exit_1(tmp_path):
    bad = tmp_path / "bad.hprof"
    bad.write_bytes(raw_bytes("mat__sun_jdk6_32bit.hprof")[:100_000])
    for command in ("stats", "info"):
        proc = subprocess.run([sys.executable, "-m", "hprofkit", command, str(bad)], capture_output=True, text=True)
        assert proc.returncode == 1
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hprofkit: error: truncated ")
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "stats", str(tmp_path / "missing.hprof")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1
