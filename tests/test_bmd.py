"""Badoo's BMD format (issue 20): encode(format="bmd") writes what Badoo's
cruncher writes, decode() reads a BMD into what its decruncher writes, byte
for byte, against the golden vectors of ../shared/data/bmd (made by Badoo's
tools; benchmarks/bench_bmd.py --all-dumps checks every other 4-byte dump
against the tools themselves where ../shared/tools/badoo/build.sh built
them); beyond them: identifier size 8,
any record order, bounded memory; hostile BMD is one error naming its
offset."""

from __future__ import annotations

import gzip
import io
import random
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

import hprofkit
from hprofkit import _bmd, _hprof
from conftest import DATA, HPROF_DIR, INVENTORY, peer, raw_bytes
from hostile import traced_peak

BMD_DIR = DATA / "bmd"
OBF_DIR = DATA / "obfuscated"
JAR = OBF_DIR / "heapgen-obf.jar"
# name in ../shared/data/bmd, and the dump it was made from
GOLDEN = [("leakcanary__leak_service_binder", HPROF_DIR / "leakcanary__leak_service_binder.hprof"),
          ("platform_tools_base__dialer", HPROF_DIR / "platform_tools_base__dialer.android-hprof"),
          ("heapgen_s5_16mb_obf_android", OBF_DIR / "heapgen_s5_16mb_obf_android.hprof.gz")]
MiB = 1 << 20


def golden_bmd(name: str) -> bytes:
    return (BMD_DIR / f"{name}.bmd").read_bytes()


def golden_hprof(name: str, suffix: str = "decrunched") -> bytes:
    return gzip.decompress((BMD_DIR / f"{name}.{suffix}.hprof.gz").read_bytes())


def varint(v: int) -> bytes:
    """A BMD varint; a negative int32 sign-extended to 10 bytes, as Badoo writes it."""
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


HEAD = varint(1) + varint(18) + b"JAVA PROFILE 1.0.3"


def bmd(*fields: int | bytes) -> bytes:
    """A BMD: the header, then numbers as varints and bytes as they are."""
    return HEAD + b"".join(varint(f) if isinstance(f, int) else f for f in fields)


def _bmd_of(dump) -> bytes:
    """The BMD of a dump (bytes or a path)."""
    out = io.BytesIO()
    hprofkit.encode(dump, out, format="bmd")
    return out.getvalue()


def run_passes(core, data: bytes, piece: int = 1 << 20) -> bytes:
    """All a BMD filter writes, fed `data` as often as it asks."""
    out = []
    while True:
        out.extend(core.feed(data[i:i + piece]) for i in range(0, len(data), piece))
        out.append(core.flush())
        if not core.again:
            return b"".join(out)


# ---- byte for byte what Badoo's tools wrote ---------------------------------------------

@pytest.mark.parametrize("name,source", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_encode_writes_what_the_cruncher_wrote(name, source, tmp_path):
    out = tmp_path / "out.bmd"
    result = hprofkit.encode(source, out, format="bmd")
    assert out.read_bytes() == golden_bmd(name)
    assert result.output == len(golden_bmd(name)) and result.consumed == len(raw_bytes_of(source))
    assert result.counter["CLASS_DEFINITION"] > 800 and result.counter["ROOT_OBJECTS"] == 1


def raw_bytes_of(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_decode_writes_what_the_decruncher_wrote(name, tmp_path):
    out = tmp_path / "out.hprof"
    result = hprofkit.decode(BMD_DIR / f"{name}.bmd", out)
    assert out.read_bytes() == golden_hprof(name)
    assert result.consumed == len(golden_bmd(name)) and result.restored == 0
    with hprofkit.open(out) as dump:  # a dump hprofkit reads like any other
        assert dump.stats().instances == result.counter["INSTANCE_DUMP"]


def test_strings_from_the_jar_give_back_what_the_decruncher_gave_back(tmp_path):
    """The obfuscated app's jar names its classes a, b, c and HeapGen: the
    decruncher restores those four, and so do a jar and a text file here."""
    want = golden_hprof("heapgen_s5_16mb_obf_android", "decrunched_jar")
    names = tmp_path / "names.txt"
    names.write_text("a\nb\nc\nHeapGen\n")
    for strings in ([JAR], [names], [str(names), JAR]):
        out = tmp_path / "out.hprof"
        result = hprofkit.decode(BMD_DIR / "heapgen_s5_16mb_obf_android.bmd", out, strings=strings)
        assert out.read_bytes() == want
        assert result.restored == 4
    with pytest.raises(TypeError):
        hprofkit.decode(BMD_DIR / "heapgen_s5_16mb_obf_android.bmd", tmp_path / "x", strings=str(names))


def test_every_kind_of_source_gives_the_same_bytes(tmp_path):
    """A path and a buffer are read again for each pass; a compressed file,
    a file object and standard input go through a spool."""
    name, source = GOLDEN[1]
    want, hprof = golden_bmd(name), source.read_bytes()
    gz = tmp_path / "dump.hprof.gz"
    gz.write_bytes(gzip.compress(hprof, 1))
    for src in (hprof, memoryview(hprof), io.BytesIO(hprof), gz):
        out = io.BytesIO()
        hprofkit.encode(src, out, format="bmd")
        assert out.getvalue() == want
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "encode", "-i", "-", "-o", "-", "--format", "bmd"],
                          input=hprof, capture_output=True, check=True)
    assert proc.stdout == want
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "decode", "-i", "-", "-o", "-"], input=want,
                          capture_output=True, check=True)
    assert proc.stdout == golden_hprof(name)


def test_stream_codecs_keep_a_bmd_until_flush():
    name, source = GOLDEN[0]
    hprof, want = source.read_bytes(), golden_bmd(name)
    encoder = hprofkit.Encoder(format="bmd")
    pieces = [encoder.feed(hprof[i:i + 300_001]) for i in range(0, len(hprof), 300_001)]
    assert b"".join(pieces) == b""  # nothing until the whole dump is there
    assert encoder.flush() == want and encoder.eof and encoder.counter()["INSTANCE_DUMP"] == 25183
    decoder = hprofkit.Decoder()
    out = [decoder.feed(want[i:i + 7]) for i in range(0, 70, 7)]  # the kind known after 18 bytes
    assert decoder.kind == "bmd"
    out += [decoder.feed(want[70:]), decoder.flush()]
    assert b"".join(out) == golden_hprof(name) and decoder.restored == 0
    with pytest.raises(ValueError):
        decoder.feed(b"more")


def test_the_cli_encodes_and_decodes_with_strings(tmp_path):
    src, out, back = OBF_DIR / "heapgen_s5_16mb_obf_android.hprof.gz", tmp_path / "x.bmd", tmp_path / "x.hprof"
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "encode", "-i", str(src), "-o", str(out), "--format",
                           "bmd"], capture_output=True, text=True, check=True)
    assert "'HASHED_STRING': 40644" in proc.stdout and out.read_bytes() == golden_bmd("heapgen_s5_16mb_obf_android")
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "decode", "-i", str(out), "-o", str(back), "--strings",
                           str(JAR)], capture_output=True, text=True, check=True)
    assert "(4 hashed strings given back)" in proc.stdout
    assert back.read_bytes() == golden_hprof("heapgen_s5_16mb_obf_android", "decrunched_jar")


@pytest.mark.parametrize("option", [{"level": 3}, {"strip": "none"}, {"app_only": True}, {"drop_traces": True}])
def test_the_cruncher_has_no_options(option, tmp_path):
    with pytest.raises(ValueError, match="what Badoo's cruncher writes"):
        hprofkit.encode(GOLDEN[0][1], tmp_path / "x.bmd", format="bmd", **option)
    assert not (tmp_path / "x.bmd").exists()


# ---- strings hashed as the JVM hashes them -------------------------------------------------

JAVA_STRINGS = """
import java.io.*;
import java.util.HexFormat;
public class Strings {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String s = new String(HexFormat.of().parseHex(line.trim()));
            System.out.println(s.hashCode() + " " + HexFormat.of().formatHex(s.getBytes()));
        }
    }
}
"""


def strings_dump(texts: list[bytes]) -> bytes:
    """A dump of nothing but STRING records holding `texts`."""
    out = [b"JAVA PROFILE 1.0.3\0" + struct.pack(">IQ", 4, 0)]
    for i, text in enumerate(texts):
        out.append(struct.pack(">BIII", 1, 0, 4 + len(text), i + 1) + text)
    return b"".join(out)


def bmd_strings(data: bytes) -> list[tuple[int, int, bytes | None]]:
    """(hash or None, length, clear bytes or None) of each string record of a BMD."""
    pos = len(HEAD)

    def number() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            b = data[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value

    out: list[tuple[int, int, bytes | None]] = []
    while True:
        tag = number()
        if tag not in (1, 2):
            return out
        number()
        length = number()
        if tag == 1:
            out.append((None, length, data[pos:pos + length]))
            pos += length
        else:
            out.append((struct.unpack("<i", struct.pack("<I", number() & 0xFFFFFFFF))[0], length, None))


def test_string_hashes_are_the_jvms(tmp_path):
    """Strings are hashed (and kept java.lang names written) as the JVM's
    String makes them of the bytes: malformed UTF-8 replaced its way."""
    java = peer("java")
    rng = random.Random(20)
    odd = [0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
    texts = [bytes(rng.choice(odd) if rng.random() < 0.8 else rng.randrange(256) for _ in range(rng.randrange(9)))
             for _ in range(3000)]
    texts += [b"java.lang" + t for t in texts[:500]]  # kept in clear: written as Java re-encodes them
    (tmp_path / "Strings.java").write_text(JAVA_STRINGS)
    proc = subprocess.run([java, "-Dfile.encoding=UTF-8", str(tmp_path / "Strings.java")], text=True,
                          input="\n".join(t.hex() for t in texts) + "\n", capture_output=True, check=True)
    jvm = [line.split(" ") for line in proc.stdout.splitlines()]
    ours = bmd_strings(_bmd_of(strings_dump(texts)))
    assert len(ours) == len(texts) == len(jvm)
    for text, (hash_text, *hexes), (hashed, length, clear) in zip(texts, jvm, ours):
        encoded = bytes.fromhex(hexes[0] if hexes else "")
        assert length == len(encoded), text
        if clear is None:
            assert hashed == int(hash_text), text
        else:
            assert clear == encoded, text


# ---- beyond the cruncher ------------------------------------------------------------------

def test_8_byte_ids_which_the_cruncher_refuses(tmp_path):
    """An 8-byte-id HotSpot dump (Badoo's cruncher stops: "not implemented
    for idSize = 8"): hprofkit writes its BMD, whose dump has the source's
    objects with 4-byte ids, as the format carries them."""
    name = "mat__sun_jdk6_18_x64.hprof"
    hprofkit.encode(HPROF_DIR / name, tmp_path / "ours.bmd", format="bmd")
    hprofkit.decode(tmp_path / "ours.bmd", tmp_path / "ours.hprof")
    with hprofkit.open(HPROF_DIR / name) as src, hprofkit.open(tmp_path / "ours.hprof") as back:
        a, b = src.stats(), back.stats()
        assert (src.id_size, back.id_size) == (8, 4)
        assert (b.instances, b.arrays, b.classes) == (a.instances, a.arrays, a.classes)


def test_a_class_dumped_before_its_load_class(tmp_path):
    """The cruncher stops at a CLASS_DUMP whose LOAD_CLASS comes later; a
    third pass writes its definition, named, before any instance."""
    data = raw_bytes("platform_art__RI.hprof")
    records = list(hprofkit.iter_records(data))
    loads = b"".join(bytes(data[r.offset:r.offset + 9 + r.length]) for r in records if r.tag == 0x02)
    rest = b"".join(bytes(data[r.offset:r.offset + 9 + r.length]) for r in records if r.tag != 0x02)
    del records
    late = data[:31] + rest + loads  # every LOAD_CLASS after the heap
    core = _hprof.BmdEncoder()
    out = run_passes(core, late)
    assert core.passes == 3
    counts = core.counter()
    assert counts["CLASS_DEFINITION"] == hprofkit.stats(data).classes
    decoded = run_passes(_hprof.BmdDecoder(), out)
    strings, names = {}, []
    for r in hprofkit.iter_records(decoded):
        body = bytes(r.body)
        if r.tag == 0x01:
            strings[body[:4]] = body[4:]
        elif r.tag == 0x02:
            names.append(body[12:])
    assert len(names) == counts["CLASS_DEFINITION"] and all(n in strings for n in names)
    assert b"java.lang.String" in {strings[n] for n in names}  # named, though its LOAD_CLASS came after its dump


def test_heaps_past_4_gib_go_in_segments():
    """The decruncher writes one HEAP_DUMP (a byte array: it fails past 2
    GiB); longer heaps are cut in segments (shown with a small limit)."""
    data = golden_bmd("platform_tools_base__dialer")
    whole = run_passes(_hprof.BmdDecoder(), data)
    cut = run_passes(_hprof.BmdDecoder(max_heap_record=65536), data)
    heap = lambda d: b"".join(bytes(r.body) for r in hprofkit.iter_records(d) if r.tag in (0x0C, 0x1C))
    assert heap(cut) == heap(whole)
    tags = [r.tag for r in hprofkit.iter_records(cut)]
    assert tags.count(0x1C) > 20 and tags[-1] == 0x2C and 0x0C not in tags


# ---- hostile input ----------------------------------------------------------------------------

HOSTILE = [
    # a 12-byte record asking the decoder for 2 GiB of placeholder '+'
    ("string-hash bomb", bmd(2, 1, 0x7FFFFFFF, 12345), hprofkit.CorruptError, 21,
     "a hashed string claiming more bytes than max_string at offset 21 (in the BMD HASHED_STRING record at offset 20)"),
    ("varint without end", bmd(2, b"\xff" * 12), hprofkit.CorruptError, 21, "a varint that does not end within 10"),
    ("count past the input", bmd(6, 1, 2, 0x3FFFFF00, 1, 2), hprofkit.TruncatedError, 20,
     "truncated BMD OBJECT_ARRAY record at offset 20"),
    ("roots past the input", bmd(5, 0x7FFFFFFF, 9), hprofkit.TruncatedError, 20, "ROOT_OBJECTS record at offset 20"),
    ("negative count", bmd(6, 1, 2, -3), hprofkit.CorruptError, 23, "a negative array length"),
    ("superclass loop", bmd(3, 5, 6, 1, 0, 0, 0, 0, 3, 6, 5, 1, 0, 0, 0, 0, 4, 1, 5), hprofkit.CorruptError, 37,
     "an instance whose superclass chain loops"),
    ("class after instance", bmd(3, 5, 0, 1, 0, 0, 0, 0, 4, 1, 5, 3, 6, 0, 1, 0, 0, 0, 0), hprofkit.CorruptError, 31,
     "a class definition after an instance"),
    ("unknown tag", bmd(9), hprofkit.CorruptError, 20, "an unknown record tag"),
    ("cut header", HEAD[:9], hprofkit.TruncatedError, 0, "truncated BMD header"),
    # #30: ten long[0x1FFFFFFD] placeholders, 100 bytes restoring to 40 GB: refused before writing
    ("placeholder bomb", bmd(*[v for k in range(10) for v in (7, 100 + k, 7, 0x1FFFFFFD)]),
     hprofkit.RestoreLimitError, 20, "the BMD PRIMITIVE_ARRAY_PLACEHOLDER record at offset 20: the restored dump "
     "would hold 4294967317 bytes (4.0 GiB), over the 4294967296 limit (--max-output, max_output= raise it)"),
]


def test_max_output_bounds_what_a_bmd_restores_to(tmp_path):
    """A 16 MiB placeholder: refused under max_output 8 MiB (before the heap is written, by
    decode, open_heap and the CLI's --max-output), restored under the default limit."""
    src, out = tmp_path / "array.bmd", tmp_path / "out.hprof"
    src.write_bytes(bmd(7, 100, 7, 2 << 20))
    for limit in ("8 MiB", 8 << 20):
        with pytest.raises(hprofkit.RestoreLimitError, match="over the 8388608 limit"):
            hprofkit.decode(src, out, max_output=limit)
        assert not out.exists()
    with pytest.raises(hprofkit.RestoreLimitError):
        hprofkit.open_heap(src, max_output="8 MiB")
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "decode", str(src), str(out), "--max-output", "8M"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "over the 8388608 limit" in proc.stderr
    assert hprofkit.decode(src, out).output > 16 << 20
    with pytest.raises(ValueError, match="max_output must be a size of at least 1 byte"):
        hprofkit.decode(src, out, max_output=0)


@pytest.mark.sanitize
@pytest.mark.parametrize("what,data,error,offset,says", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_bmd_is_one_error_naming_its_offset(what, data, error, offset, says, tmp_path):
    src, out = tmp_path / "hostile.bmd", tmp_path / "out.hprof"
    src.write_bytes(data)
    info, peak = traced_peak(lambda: pytest.raises(error, hprofkit.decode, src, out))
    assert says in str(info.value) and info.value.offset == offset
    assert peak < 16 * MiB and not out.exists()
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "decode", "-i", str(src), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and says in proc.stderr


@pytest.mark.sanitize
def test_every_prefix_of_a_bmd_is_clean_or_truncated():
    data = golden_bmd("platform_tools_base__dialer")
    cuts = sorted({0, 1, 5, 17, 18, 19, 20, 21} | set(random.Random(3).sample(range(len(data)), 150)))
    clean = 0
    for cut in cuts:
        try:
            run_passes(_hprof.BmdDecoder(), data[:cut], piece=4096)
            clean += 1  # it ended between two records
        except hprofkit.TruncatedError as exc:
            assert exc.offset <= cut
        except hprofkit.FormatError:
            assert cut < 18
    assert clean >= 1


SAMPLE = _bmd_of(HPROF_DIR / "mat__sun_jdk6_31_hprofagent_compressedOops.hprof")


@pytest.mark.sanitize
@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(0, len(SAMPLE) - 1), st.integers(0, 255)), min_size=1, max_size=6))
@example(flips=[(31, 0)])  # a string's length made 0: its empty text was taken for a failed allocation
def test_random_corruption_never_crashes(flips):
    data = bytearray(SAMPLE)
    for at, value in flips:
        data[at] = value
    core = _hprof.BmdDecoder()
    with open("/dev/null", "wb") as sink:  # a changed count can ask for gigabytes of zeroed arrays
        try:
            while True:
                core.feed(data, fd=sink.fileno())
                core.flush(fd=sink.fileno())
                if not core.again:
                    break
        except hprofkit.HprofError as exc:
            assert exc.offset is not None and 0 <= exc.offset <= len(data)


def many_instances(n: int) -> bytes:
    """A BMD of one class, n instances and n roots."""
    instances = b"".join(varint(4) + varint(100 + i) + varint(1) + varint(100 + i // 2) for i in range(n))
    roots = varint(5) + varint(n) + b"".join(varint(100 + i) for i in range(n))
    return bmd(3, 1, 0, 1, 0, 0, 1, 2, 0, 8) + instances + roots


@pytest.mark.sanitize
def test_decoding_memory_does_not_grow_with_the_heap(tmp_path):
    """A 3 MB BMD of 400,000 instances and roots decodes (to a file) in the
    memory of a 30 KB one: what the decruncher holds whole is streamed."""
    peaks = []
    for n in (2_000, 400_000):
        src = tmp_path / f"{n}.bmd"
        src.write_bytes(many_instances(n))
        result, peak = traced_peak(lambda: hprofkit.decode(src, tmp_path / "out.hprof"))
        assert result.counter["INSTANCE_DUMP"] == n
        peaks.append(peak)
    assert peaks[1] < peaks[0] + MiB and peaks[1] < 24 * MiB


def test_an_input_that_changes_between_passes_is_refused():
    data = golden_bmd("leakcanary__leak_service_binder")
    core = _hprof.BmdDecoder()
    core.feed(data)
    core.flush()
    assert core.again
    with pytest.raises(hprofkit.CorruptError, match="changed between passes"):
        core.feed(data[:-1])
        core.flush()


def test_one_filter_fed_by_threads_never_crashes():
    """Calls take turns (the output is then whatever the turns made of it)."""
    data = golden_bmd("platform_tools_base__dialer")
    core = _hprof.BmdDecoder()
    errors = []

    def feed() -> None:
        try:
            for i in range(0, len(data), 50_000):
                core.feed(data[i:i + 50_000])
        except (hprofkit.HprofError, ValueError) as exc:
            errors.append(exc)

    threads = [threading.Thread(target=feed) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        core.flush()
    except (hprofkit.HprofError, ValueError):
        pass


# ---- where hashed strings come back from --------------------------------------------------

def tiny_dex(classes: dict[str, list[str]]) -> bytes:
    """A dex of just what Badoo's decruncher reads: its class definitions'
    names and the names of the (instance) fields each defines."""
    descriptor = {c: f"L{c.replace('.', '/')};" for c in classes}
    strings = sorted(set(descriptor.values()) | {f for fs in classes.values() for f in fs})
    index = {s: i for i, s in enumerate(strings)}
    types = [index[descriptor[c]] for c in classes]
    fields = [(types[i], index[f]) for i, fs in enumerate(classes.values()) for f in fs]
    string_ids = 112  # after the header
    type_ids = string_ids + 4 * len(strings)
    field_ids = type_ids + 4 * len(types)
    class_defs = field_ids + 8 * len(fields)
    data = class_defs + 32 * len(classes)
    blob, string_at, class_data = bytearray(), [], []
    for s in strings:
        string_at.append(data + len(blob))
        blob += bytes([len(s)]) + s.encode() + b"\0"  # utf16 size, MUTF-8, NUL
    first = 0
    for fs in classes.values():  # no statics, len(fs) instance fields, no methods; field index diffs
        class_data.append(data + len(blob))
        blob += bytes([0, len(fs), 0, 0]) + b"".join(bytes([first if k == 0 else 1, 1]) for k in range(len(fs)))
        first += len(fs)
    out = bytearray(b"dex\n035\0" + bytes(string_ids - 8))
    struct.pack_into("<II", out, 56, len(strings), string_ids)
    struct.pack_into("<II", out, 64, len(types), type_ids)
    struct.pack_into("<II", out, 80, len(fields), field_ids)
    struct.pack_into("<II", out, 96, len(classes), class_defs)
    out += b"".join(struct.pack("<I", o) for o in string_at)
    out += b"".join(struct.pack("<I", t) for t in types)
    out += b"".join(struct.pack("<HHI", c, 0, n) for c, n in fields)
    out += b"".join(struct.pack("<IIIIIIII", t, 1, 0, 0, 0, 0, d, 0) for t, d in zip(types, class_data))
    return bytes(out + blob)


def test_names_come_from_jars_apks_dex_and_text(tmp_path):
    dex = tiny_dex({"com.app.Main": ["count", "next"], "com.app.Node": ["left"]})
    assert list(_bmd.dex_names(dex)) == ["com.app.Main", "count", "next", "com.app.Node", "left"]
    (tmp_path / "classes.dex").write_bytes(dex)
    with zipfile.ZipFile(tmp_path / "app.apk", "w") as z:
        z.writestr("classes.dex", dex)
        z.writestr("classes2.dex", tiny_dex({"com.app.Late": ["y"]}))
    with zipfile.ZipFile(tmp_path / "lib.jar", "w") as z:
        z.writestr("com/lib/Util.class", b"")
        z.writestr("META-INF/MANIFEST.MF", b"")
    (tmp_path / "names.txt").write_text("first\n\nsécond\r\n")
    names = _bmd.names_from([tmp_path / "app.apk", tmp_path / "lib.jar", tmp_path / "classes.dex",
                             tmp_path / "names.txt"])
    assert names == [b"com.app.Main", b"count", b"next", b"com.app.Node", b"left", b"com.app.Late", b"y",
                     b"com/lib/Util", b"com.lib.Util", b"first", "sécond".encode()]
    (tmp_path / "bad.dex").write_bytes(b"dex\n035\0" + bytes(20))
    with pytest.raises(ValueError, match="cannot read names from"):
        _bmd.names_from([tmp_path / "bad.dex"])
