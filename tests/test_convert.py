"""Android -> standard conversion, against Debian's hprof-conv."""

from __future__ import annotations

import subprocess

import pytest

import hprofkit
from hprofkit.writer import HprofWriter
from conftest import HPROF_CONV, HPROF_DIR, TAILOR_DIR

SOURCES = [HPROF_DIR / "leakcanary__leak_service_binder.hprof",
           HPROF_DIR / "platform_tools_base__dialer.android-hprof",
           HPROF_DIR / "py-hprof__basic_reads.hprof",
           TAILOR_DIR / "art_like.hprof"]


def without_empty_segments(data: bytes) -> bytes:
    """hprof-conv -z leaves empty HEAP_DUMP_SEGMENTs, which VisualVM refuses; hprofkit drops them."""
    keep = [(r.offset, r.offset + 9 + r.length) for r in hprofkit.iter_records(data)
            if not (r.tag == 0x1C and r.length == 0)]
    return data[:31] + b"".join(data[a:b] for a, b in keep)


@pytest.mark.parametrize("z", [False, True], ids=["plain", "-z"])
@pytest.mark.parametrize("source", SOURCES, ids=[p.name for p in SOURCES])
def test_byte_identical_to_hprof_conv(source, z, tmp_path):
    reference = tmp_path / "ref.hprof"
    subprocess.run([HPROF_CONV, *(["-z"] if z else []), str(source), str(reference)], check=True,
                   capture_output=True)
    ours = tmp_path / "ours.hprof"
    hprofkit.convert(source, ours, app_only=z)
    expected = reference.read_bytes()
    if z:
        expected = without_empty_segments(expected)
    assert ours.read_bytes() == expected


def test_converted_dump_opens_in_the_oracle(tmp_path, oracle):
    source = SOURCES[0]
    out = tmp_path / "std.hprof"
    hprofkit.convert(source, out)
    with hprofkit.open(out) as dump:
        assert dump.version == "1.0.2"
    theirs = {k: v[0] for k, v in oracle.counts_by_class(out).items()}
    assert theirs == {k: v[0] for k, v in oracle.counts_by_class(source).items()}


def test_id_size_8_and_nodata_arrays_which_hprof_conv_gets_wrong(tmp_path):
    src = tmp_path / "android8.hprof"
    with HprofWriter(src, version="1.0.3", id_size=8) as w:
        w.string("java.lang.Object", sid=0x400001)
        w.load_class(0x1000, 0x400001)
        with w.heap_dump() as seg:
            seg.heap_dump_info("app", w.string("app"))
            seg.root_interned_string(0x2000)
            seg.root_jni_monitor(0x2000, 1, 5)
            seg.class_dump(0x1000)
            seg.instance(0x2000, 0x1000, b"")
            seg.primitive_array_nodata(0x3000, "int", 12)
        w.heap_dump_end()
    proc = subprocess.run([HPROF_CONV, str(src), str(tmp_path / "ref.hprof")], capture_output=True)
    out = tmp_path / "std.hprof"
    hprofkit.convert(src, out)
    with hprofkit.open(out) as dump:
        assert (dump.version, dump.id_size) == ("1.0.2", 8)
        subs = [(s.tag, s.id, s.count) for s in dump.subrecords()]
    assert subs == [(0xFF, 0x2000, None), (0xFF, 0x2000, None), (0x20, 0x1000, None), (0x21, 0x2000, 0),
                    (0x23, 0x3000, 0)]
    assert proc.returncode != 0 or (tmp_path / "ref.hprof").read_bytes() != out.read_bytes()


def test_standard_input_is_refused(tmp_path):
    with pytest.raises(hprofkit.FormatError, match="already in 1.0.2 format"):
        hprofkit.convert(HPROF_DIR / "platform_art__RI.hprof", tmp_path / "out.hprof")
    assert not (tmp_path / "out.hprof").exists()
