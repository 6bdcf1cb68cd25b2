"""Tailor's format: byte-exact with Tailor's own scripts (goldens made by
encode.py / decode.py), safe where they are not, and round trips that an
independent analyzer (the VisualVM oracle) confirms."""

from __future__ import annotations

import gzip
import io
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import hprofkit
from hprofkit.writer import HprofWriter
from conftest import HPROF_CONV, HPROF_DIR, TAILOR_DIR

GOLDENS = {
    "art_like": TAILOR_DIR / "art_like.hprof",
    "leak_service_binder": HPROF_DIR / "leakcanary__leak_service_binder.hprof",
    "dialer": HPROF_DIR / "platform_tools_base__dialer.android-hprof",
}
ANDROID_SOURCES = list(GOLDENS.values())


def mini_of(name: str) -> bytes:
    return (TAILOR_DIR / f"{name}.mini").read_bytes()


def restored_of(name: str) -> bytes:
    return (TAILOR_DIR / f"{name}.restored.hprof").read_bytes()


def encode_bytes(data: bytes, **options) -> bytes:
    encoder = hprofkit.Encoder("tailor", **options)
    return encoder.feed(data) + encoder.flush()


def decode_bytes(data: bytes) -> bytes:
    decoder = hprofkit.Decoder()
    return decoder.feed(data) + decoder.flush()


@pytest.mark.parametrize("name", GOLDENS)
def test_encode_equals_tailor_golden(name, tmp_path):
    out = tmp_path / "x.mini"
    result = hprofkit.encode(GOLDENS[name], out, format="tailor")
    assert zlib.decompress(out.read_bytes()) == zlib.decompress(mini_of(name))
    assert out.read_bytes()[:2] == b"\x78\x9c"  # level 6, as encode.py
    log = (TAILOR_DIR / f"{name}.encode.log").read_text().splitlines() if name != "art_like" else None
    if log:
        assert str(result.counter) == log[0]
        assert log[1] == f"COMPLETE: {result.consumed}/{result.size} -> {result.trimmed}"


@pytest.mark.parametrize("name", GOLDENS)
def test_decode_equals_tailor_golden(name, tmp_path):
    out = tmp_path / "restored.hprof"
    result = hprofkit.decode(TAILOR_DIR / f"{name}.mini", out)
    assert out.read_bytes() == restored_of(name)
    if name != "art_like":
        log = (TAILOR_DIR / f"{name}.decode.log").read_text().splitlines()
        assert str(result.counter) == log[0]


@pytest.mark.parametrize("wrap", ["level1", "level9", "bare", "gzip"])
def test_decode_accepts_every_framing(wrap):
    bare = zlib.decompress(mini_of("dialer"))
    blob = {"level1": zlib.compress(bare, 1), "level9": zlib.compress(bare, 9), "bare": bare,
            "gzip": gzip.compress(bare)}[wrap]
    assert decode_bytes(blob) == restored_of("dialer")


@pytest.mark.parametrize("level,threads", [(1, 1), (1, 2), (6, 2), (9, 1), (0, 1)])
def test_levels_and_threads_inflate_to_the_same_mini(level, threads):
    source = GOLDENS["leak_service_binder"].read_bytes()
    blob = encode_bytes(source, level=level, threads=threads)
    bare = zlib.decompress(mini_of("leak_service_binder"))
    assert (blob if level == 0 else zlib.decompress(blob)) == bare
    if level and threads == 1:
        assert blob == zlib.compress(bare, level)  # one thread: exactly zlib's stream
    assert decode_bytes(blob) == restored_of("leak_service_binder")


def test_encode_writer_trims_arbitrary_writes():
    source = GOLDENS["dialer"].read_bytes()
    sink = io.BytesIO()
    rng = random.Random(5)
    with hprofkit.encode_writer(sink, format="tailor", level=1) as writer:
        pos = 0
        while pos < len(source):
            n = rng.choice([1, 7, 100, 4096, 65536, 1 << 20])
            writer.write(source[pos:pos + n])
            pos += n
        assert writer.tell() == len(source)
    assert zlib.decompress(sink.getvalue()) == zlib.decompress(mini_of("dialer"))


# ---- inputs Tailor's format cannot hold: refused, nothing written ----------------

def android_dump(path: Path, build) -> Path:
    with HprofWriter(path, version="1.0.3", id_size=4) as w:
        build(w)
    return path


def minimal_heap(w, between=None, **class_options):
    w.string("java.lang.Object", sid=0x400001)
    w.load_class(0x1000, 0x400001)
    with w.heap_dump() as seg:
        seg.class_dump(0x1000, **class_options)
        seg.instance(0x2000, 0x1000, b"")
    if between:
        between(w)  # a record between the segment and HEAP_DUMP_END
    w.heap_dump_end()


REFUSALS = {
    "stack frame": lambda w: (w.stack_frame(1, "run", "()V", "A.java", 1, 10), minimal_heap(w)),
    "long string": lambda w: (w.string("x" * 70_000, sid=0x500000), minimal_heap(w)),
    "huge instance size": lambda w: minimal_heap(w, instance_size=70_000),
    "string after segment": lambda w: minimal_heap(w, between=lambda w: w.string("late", sid=0x500001)),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_unrepresentable_input_is_refused_without_output(case, tmp_path):
    src = android_dump(tmp_path / "in.hprof", REFUSALS[case])
    hprofkit.stats(src)  # a valid dump
    out = tmp_path / "out.mini"
    with pytest.raises(hprofkit.UnsupportedError) as info:
        hprofkit.encode(src, out, format="tailor")
    assert info.value.offset is not None and "offset" in str(info.value)
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


@pytest.mark.parametrize("name", ["mat__sun_jdk6_18_x64.hprof", "platform_art__RI.hprof"])
def test_hotspot_dumps_are_refused(name, tmp_path):
    out = tmp_path / "out.mini"
    with pytest.raises(hprofkit.UnsupportedError):
        hprofkit.encode(HPROF_DIR / name, out, format="tailor")
    assert not out.exists()


# ---- truncated and corrupt minis: clean errors, no output ----------------------

def test_every_cut_of_a_mini_is_a_clean_error(tmp_path):
    for blob in (mini_of("art_like"), zlib.decompress(mini_of("art_like"))):
        for cut in range(len(blob)):
            with pytest.raises(hprofkit.HprofError) as info:
                decode_bytes(blob[:cut])
            assert info.value.offset is not None and 0 <= info.value.offset <= max(cut, 1)


def test_sampled_cuts_of_a_large_mini_leave_no_output(tmp_path):
    blob = mini_of("dialer")
    rng = random.Random(1)
    for cut in sorted(rng.sample(range(len(blob)), 25)):
        src = tmp_path / "cut.mini"
        src.write_bytes(blob[:cut])
        out = tmp_path / "out.hprof"
        with pytest.raises(hprofkit.TruncatedError):
            hprofkit.decode(src, out)
        assert not out.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.mini"]


def test_corrupt_mini_is_reported_with_an_offset():
    bare = bytearray(zlib.decompress(mini_of("art_like")))
    assert bare[18] == 0x01  # the first record, a STRING, right after the magic
    bare[18] = 0x77
    with pytest.raises(hprofkit.CorruptError) as info:
        decode_bytes(bytes(bare))
    assert info.value.offset == 18
    with pytest.raises(hprofkit.CorruptError):
        decode_bytes(mini_of("art_like")[:60] + b"\xff" * 40 + mini_of("art_like")[100:])
    with pytest.raises(hprofkit.FormatError):
        decode_bytes(b"this is not a mini at all")


def first_failing_byte(blob: bytes, wbits: int) -> int | None:
    """Where zlib itself first refuses `blob`, fed one byte at a time to a
    fresh inflater (None when it never does)."""
    z = zlib.decompressobj(wbits)
    for i in range(len(blob)):
        try:
            z.decompress(blob[i:i + 1])
        except zlib.error:
            return i
    return None


@pytest.mark.parametrize("wrap", ["zlib", "gzip"])
def test_broken_compressed_mini_is_reported_where_zlib_fails(wrap):
    """Issue 9: zlib mini corruption was reported "near offset 0" wherever it
    was.  A large mini compressed with a full flush at a few places, where a
    deflate block of the reserved type 3 is slipped in: the error names that
    byte, where zlib itself (fed byte by byte) refuses the stream, however the
    decoder was fed."""
    bare = zlib.decompress(mini_of("dialer"))
    for fraction in (0.3, 0.55, 0.8):
        half = int(len(bare) * fraction)
        c = zlib.compressobj(6, zlib.DEFLATED, 15 if wrap == "zlib" else 31)
        head = c.compress(bare[:half]) + c.flush(zlib.Z_FULL_FLUSH)  # ends on a byte boundary
        broken = head + b"\x06" + c.compress(bare[half:]) + c.flush()  # BFINAL 0, BTYPE 3: invalid
        assert first_failing_byte(broken, 15 if wrap == "zlib" else 31) == len(head)
        for step in (len(broken), 4096, 777):
            decoder = hprofkit.Decoder()
            with pytest.raises(hprofkit.CorruptError) as info:
                for start in range(0, len(broken), step):
                    decoder.feed(broken[start:start + step])
                decoder.flush()
            assert info.value.offset == len(head), (fraction, step)
            assert f"corrupt {wrap} stream at offset {len(head)}" in str(info.value)


# ---- round trips and --app-only, checked by the oracle --------------------------

def class_counts(oracle, path) -> dict:
    return {k: v[0] for k, v in oracle.counts_by_class(path).items()}


# art_like.hprof holds a ROOT_JNI_MONITOR (0x8E), which VisualVM misreads as a
# bare id: the oracle cannot open it, so it is checked with hprofkit's own histogram.
REAL_ANDROID = ANDROID_SOURCES[1:]


@pytest.mark.parametrize("source", REAL_ANDROID, ids=[p.name for p in REAL_ANDROID])
def test_round_trip_keeps_every_object(source, tmp_path, oracle):
    mini, restored = tmp_path / "x.mini", tmp_path / "x.hprof"
    hprofkit.encode(source, mini, format="tailor")
    hprofkit.decode(mini, restored)
    assert class_counts(oracle, restored) == class_counts(oracle, source)


def test_round_trip_of_the_synthetic_golden(tmp_path):
    mini, restored = tmp_path / "x.mini", tmp_path / "x.hprof"
    hprofkit.encode(GOLDENS["art_like"], mini, format="tailor")
    hprofkit.decode(mini, restored)
    counts = lambda p: {(r.name, r.class_id): r.instances for r in hprofkit.stats(p).histogram}
    assert counts(restored) == counts(GOLDENS["art_like"])


def test_round_trip_of_androidized_heapgen_dump(android_heapgen_dump, tmp_path, oracle):
    mini, restored = tmp_path / "x.mini", tmp_path / "x.hprof"
    hprofkit.encode(android_heapgen_dump, mini, format="tailor", level=1, threads=2)
    hprofkit.decode(mini, restored)
    assert class_counts(oracle, restored) == class_counts(oracle, android_heapgen_dump)


@pytest.mark.parametrize("source", REAL_ANDROID, ids=[p.name for p in REAL_ANDROID])
def test_app_only_matches_hprof_conv_z(source, tmp_path, oracle):
    conv = tmp_path / "conv-z.hprof"
    subprocess.run([HPROF_CONV, "-z", str(source), str(conv)], check=True, capture_output=True)
    # hprof-conv -z leaves empty segments, which VisualVM refuses: drop them for the reference.
    data = conv.read_bytes()
    keep = [(r.offset, r.offset + 9 + r.length) for r in hprofkit.iter_records(data)
            if not (r.tag == 0x1C and r.length == 0)]
    reference = tmp_path / "reference.hprof"
    reference.write_bytes(data[:31] + b"".join(data[a:b] for a, b in keep))
    # Tailor format, decoded by our decoder.
    mini, restored = tmp_path / "app.mini", tmp_path / "app.hprof"
    hprofkit.encode(source, mini, format="tailor", app_only=True)
    hprofkit.decode(mini, restored)
    assert class_counts(oracle, restored) == class_counts(oracle, reference)
    # Plain HPROF output.
    plain = tmp_path / "app-plain.hprof"
    hprofkit.encode(source, plain, format="hprof", app_only=True)
    assert class_counts(oracle, plain) == class_counts(oracle, reference)
    stats = hprofkit.stats(plain)
    assert stats.classes == hprofkit.stats(source).classes  # every CLASS_DUMP kept
    assert stats.gc_roots == hprofkit.stats(source).gc_roots
    with hprofkit.open(plain) as dump:
        assert all(r.length > 0 for r in dump.records() if r.tag == 0x1C)  # no empty segments


# ---- command line -------------------------------------------------------------

def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "hprofkit", *args], input=stdin, capture_output=True)


def test_cli_encode_decode_and_pipes(tmp_path):
    src = GOLDENS["leak_service_binder"]
    mini = tmp_path / "x.mini"
    proc = run_cli("encode", "--format", "tailor", "-i", str(src), "-o", str(mini))
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    assert lines == (TAILOR_DIR / "leak_service_binder.encode.log").read_text().splitlines()[:1] + [
        f"COMPLETE: 3755395/3755395 -> 2135561 (compressed {mini.stat().st_size})"]
    proc = run_cli("decode", "-i", "-", "-o", "-", stdin=mini.read_bytes())
    assert proc.returncode == 0 and proc.stdout == restored_of("leak_service_binder")
    assert b"COMPLETE:" in proc.stderr


def test_cli_failure_is_one_line_exit_1_and_no_output(tmp_path):
    out = tmp_path / "out.mini"
    proc = run_cli("encode", "--format", "tailor", "-i", str(HPROF_DIR / "mat__sun_jdk6_32bit.hprof"), "-o", str(out))
    assert proc.returncode == 1 and len(proc.stderr.decode().strip().splitlines()) == 1
    assert proc.stderr.startswith(b"hprofkit: error: ") and not out.exists()
    cut = tmp_path / "cut.mini"
    cut.write_bytes(mini_of("dialer")[:1000])
    proc = run_cli("decode", "-i", str(cut), "-o", str(tmp_path / "r.hprof"))
    assert proc.returncode == 1 and b"truncated" in proc.stderr and not (tmp_path / "r.hprof").exists()
