"""The interface people expect (issue 10) and stats hardening (issue 9):
standard input, --version, closed pipes, JSON totals, histograms per heap,
files holding several heap dumps, in-memory sources,
parser events, names that do not decode, the notebook table."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import hprofkit
from hprofkit import cli
from hprofkit.cli import main
from hprofkit.writer import HprofWriter
from conftest import HPROF_CONV, INVENTORY_BY_NAME, dump_path, raw_bytes

ANDROID = "leakcanary__leak_service_binder.hprof"
TWO_DUMPS = "mat__oracle_jdk7_21_hprofagent.hprof"  # the old hprof agent: two HEAP_DUMP records
TWO_RUNS = "mat__sun_jdk6_31_hprofagent_compressedOops.hprof"  # two runs of segments, each with its END
HOTSPOT = "mat__sun_jdk6_32bit.hprof"


def hprofkit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "hprofkit", *args]


def class_rows(rows) -> int:
    """Instances in histogram rows of instance classes (not arrays)."""
    return sum(r.instances for r in rows if r.class_id is not None and not r.name.endswith("[]"))


# -- standard input -------------------------------------------------------------

@pytest.mark.parametrize("compress", [None, gzip.compress, bz2.compress], ids=["plain", "gzip", "bzip2"])
def test_stats_reads_standard_input_from_a_pipe(compress):
    data = raw_bytes(ANDROID)
    piped = compress(data) if compress else data
    proc = subprocess.run(hprofkit_cmd("stats", "-", "--json"), input=piped, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    from_pipe = json.loads(proc.stdout)
    from_path = hprofkit.stats(dump_path(ANDROID)).to_dict()
    assert from_pipe == from_path


def test_info_reads_standard_input_redirected_from_a_file(tmp_path):
    with open(dump_path(TWO_DUMPS), "rb") as f:
        proc = subprocess.run(hprofkit_cmd("info", "-", "--json"), stdin=f, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["file"] == "-" and doc["size"] == INVENTORY_BY_NAME[TWO_DUMPS]["size"]
    assert len(doc["heap_dumps"]) == 2


def test_info_and_stats_read_stdin_in_process(capsys, monkeypatch):
    data = gzip.compress(raw_bytes(HOTSPOT))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["info", "-"]) == 0
    out = capsys.readouterr().out
    assert "file        -" in out and "decompressed from gzip" in out and "heap dumps  1" in out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["stats", "-", "--top", "2"]) == 0
    assert "top 2 of" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["encode", "convert"])
def test_compressed_standard_input_is_recognised_by_its_magic(command, tmp_path):
    source = raw_bytes(ANDROID)
    out = tmp_path / "out"
    extra = ["--keep-all"] if command == "encode" else []
    proc = subprocess.run(hprofkit_cmd(command, "-i", "-", "-o", str(out), *extra), input=bz2.compress(source),
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = tmp_path / "expected"
    (hprofkit.encode if command == "encode" else hprofkit.convert)(
        dump_path(ANDROID), expected, **({"strip": "none"} if command == "encode" else {}))
    assert out.read_bytes() == expected.read_bytes()


# -- the process: --version, a closed pipe ------------------------------------------

def test_version():
    proc = subprocess.run(hprofkit_cmd("--version"), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == f"hprofkit {hprofkit.__version__}"


def ended_by_closed_pipe(args: list[str]) -> tuple[int, bytes]:
    """Runs args with stdout on a pipe that is closed after the first bytes; (status, stderr)."""
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(10)
        proc.stdout.close()
        err = proc.stderr.read()
        return proc.wait(timeout=120), err


def test_a_closed_pipe_ends_quietly_as_cat_does(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps(hprofkit.stats(dump_path("mat__HeapDumpSample.hprof")).to_dict(), indent=1))
    assert report.stat().st_size > 1 << 16  # more than a pipe buffer holds
    cat_status, cat_err = ended_by_closed_pipe(["cat", str(report)])
    status, err = ended_by_closed_pipe(hprofkit_cmd("stats", "--json", str(dump_path("mat__HeapDumpSample.hprof"))))
    assert cat_status == -signal.SIGPIPE and cat_err == b""
    assert (status, err) == (cat_status, cat_err)
    status, err = ended_by_closed_pipe(hprofkit_cmd("convert", "-i", str(dump_path(ANDROID)), "-o", "-"))
    assert (status, err) == (cat_status, b"")


def test_a_closed_pipe_in_process_returns_the_shells_status(capsys, monkeypatch):
    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(sys, "stdout", Closed())
    assert main(["stats", str(dump_path(HOTSPOT))]) == 128 + signal.SIGPIPE
    assert capsys.readouterr().err == ""


# -- arguments, progress --------------------------------------------------------------

@pytest.mark.parametrize("top", ["0", "-3", "two"])
def test_top_must_be_positive(top, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["stats", str(dump_path(HOTSPOT)), "--top", top])
    assert exc.value.code == 2
    assert "--top" in capsys.readouterr().err


@pytest.mark.parametrize("command,label", [("encode", "encoding"), ("decode", "decoding"),
                                           ("convert", "converting")])
def test_progress_bar_names_the_command(command, label, tmp_path, monkeypatch):
    drawn = io.StringIO()

    class Shown(cli.Progress):
        def __init__(self, text: str) -> None:
            super().__init__(text, stream=drawn, force=True)

    monkeypatch.setattr(cli, "Progress", Shown)
    source = dump_path(ANDROID)
    if command == "decode":
        source = tmp_path / "x.hpk"
        hprofkit.encode(dump_path(ANDROID), source)
    assert main([command, "-i", str(source), "-o", str(tmp_path / "out")]) == 0
    assert f"\r{label} [" in drawn.getvalue() and "eing" not in drawn.getvalue()


# -- JSON ----------------------------------------------------------------------------------

def test_stats_json_has_the_totals_and_class_ids(capsys):
    assert main(["stats", str(dump_path(ANDROID)), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    entry = INVENTORY_BY_NAME[ANDROID]
    assert doc["instances"] == entry["instances"] and doc["classes"] == entry["classes"]
    assert doc["arrays"] == entry["obj_arrays"] + entry["prim_arrays"] and doc["gc_roots"] == entry["gc_roots"]
    assert doc["complete"] is True and doc["heap_dump"] == 0 and len(doc["heap_dumps"]) == 1
    by_id = {s.id: s for s in hprofkit.iter_subrecords(raw_bytes(ANDROID)) if s.tag == 0x20}
    rows = [r for r in doc["histogram"] if r["class_id"] is not None]
    assert rows and all(r["class_id"] in by_id for r in rows)
    assert all(r["class_id"] is None for r in doc["histogram"] if r["class"] in ("byte[]", "char[]", "int[]"))
    instances = sum(r["instances"] for r in doc["histogram"] if r["class_id"] is not None
                    and not r["class"].endswith("[]"))
    assert instances == doc["instances"]


def test_info_json(capsys):
    assert main(["info", "--json", str(dump_path("py-hprof__example-java.hprof.bz2"))]) == 0
    doc = json.loads(capsys.readouterr().out)
    entry = INVENTORY_BY_NAME["py-hprof__example-java.hprof.bz2"]
    assert doc["compression"] == "bzip2" and doc["size"] == entry["size"]
    assert doc["decompressed_size"] == entry["decompressed_size"] and doc["format"] == entry["version"]
    assert doc["timestamp"] == entry["timestamp_ms"] and doc["instances"] == entry["instances"]
    assert doc["records"]["STRING"]["count"] == entry["top_level_records"]["0x01"]
    assert "histogram" not in doc and doc["complete"] is True


# -- Android heaps ------------------------------------------------------------------

def test_histogram_per_heap_agrees_with_the_subrecords():
    stats = hprofkit.stats(dump_path(ANDROID))
    assert set(stats.heaps) == {"app", "zygote"}
    counted: Counter = Counter()
    with hprofkit.open(dump_path(ANDROID)) as dump:
        for sub in dump.subrecords():
            if sub.tag in (0x21, 0x22, 0x23, 0xC3):
                counted[{0x41: "app", 0x5A: "zygote", 0x49: "image"}[sub.heap]] += 1
    assert {name: t.count for name, t in stats.heap_totals.items()} == dict(counted)
    # The heaps' rows add up to the histogram of all heaps, class by class.
    merged: Counter = Counter()
    for rows in stats.heaps.values():
        for r in rows:
            assert r.heap in stats.heaps
            merged[(r.name, r.class_id)] += r.instances
    assert merged == Counter({(r.name, r.class_id): r.instances for r in stats.histogram})


def test_app_heap_histogram_equals_hprof_conv_minus_z(tmp_path):
    # hprof-conv -z keeps the objects of the app heap (and drops the zygote's
    # and image's): its output's histogram is our app heap's.
    out = tmp_path / "app.hprof"
    subprocess.run([HPROF_CONV, "-z", str(dump_path(ANDROID)), str(out)], check=True, capture_output=True)
    theirs = Counter({(r.name, r.class_id): r.instances for r in hprofkit.stats(out).histogram})
    ours = Counter({(r.name, r.class_id): r.instances for r in hprofkit.stats(dump_path(ANDROID)).heaps["app"]})
    assert ours == theirs


def test_stats_heap_option(capsys):
    assert main(["stats", str(dump_path(ANDROID)), "--heap", "app", "--json", "--top", "3"]) == 0
    doc = json.loads(capsys.readouterr().out)
    app = hprofkit.stats(dump_path(ANDROID)).heaps["app"]
    assert doc["heap"] == "app" and [r["class"] for r in doc["histogram"]] == [r.name for r in app[:3]]
    assert doc["heaps"]["app"]["instances"] == sum(r.instances for r in app)
    assert main(["stats", str(dump_path(ANDROID)), "--heap", "app"]) == 0
    assert "in heap app" in capsys.readouterr().out
    assert main(["stats", str(dump_path(ANDROID)), "--heap", "nope"]) == 1
    err = capsys.readouterr().err
    assert "no heap named 'nope'" in err and "app" in err and err.count("\n") == 1


def test_hotspot_dumps_have_one_default_heap():
    stats = hprofkit.stats(dump_path(HOTSPOT))
    assert list(stats.heaps) == ["default"] and stats.heaps["default"] == [
        hprofkit.ClassRow(r.name, r.instances, r.shallow_bytes, r.class_id, "default") for r in stats.histogram]


# -- several heap dumps in one file ------------------------------------------------------

@pytest.mark.parametrize("name", [TWO_DUMPS, TWO_RUNS])
def test_heap_dumps_are_listed_and_selected(name):
    data = raw_bytes(name)
    records = list(hprofkit.iter_records(data))
    with hprofkit.open(dump_path(name)) as dump:
        dumps = dump.heap_dumps
        assert [d.index for d in dumps] == [0, 1] and all(d.complete for d in dumps)
        # Each dump's span holds its records, and its counts are its sub-records'.
        for d in dumps:
            mine = [r for r in records if d.offset <= r.offset < d.end]
            assert mine[0].offset == d.offset and mine[-1].offset + 9 + mine[-1].length == d.end
            assert {r.tag for r in mine} <= {0x0C, 0x1C, 0x2C} and len(mine) == d.records
            assert sum(9 + r.length for r in mine) == d.bytes
            subs = list(dump.subrecords(heap_dump=d.index))
            assert len(subs) == d.subrecords and all(d.offset < s.offset < d.end for s in subs)
            tags = Counter(s.tag for s in subs)
            assert (tags[0x21], tags[0x20], tags[0x22], tags[0x23] + tags[0xC3]) == (
                d.instances, d.classes, d.object_arrays, d.primitive_arrays)
            stats = dump.stats(heap_dump=d.index)
            # The totals are those of what is histogrammed.
            assert stats.heap_dump == d.index and stats.instances == d.instances == class_rows(stats.histogram)
            assert stats.subrecord_tags[0x21][0] == d.instances
        assert sum(d.subrecords for d in dumps) == sum(1 for _ in dump.subrecords())
        assert dump.stats(heap_dump=-1).heap_dump == 1 and dump.stats().heap_dump == 0
        assert [s.offset for s in dump.subrecords(heap_dump=-2)] == [s.offset for s in dump.subrecords(heap_dump=0)]
        with pytest.raises(ValueError, match="no heap dump 2: the file holds 2"):
            dump.stats(heap_dump=2)
        with pytest.raises(ValueError):
            dump.subrecords(heap_dump=-3)


def test_heap_dump_option(capsys):
    assert main(["stats", str(dump_path(TWO_DUMPS)), "--heap-dump", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["heap_dump"] == 1 and doc["instances"] == doc["heap_dumps"][1]["instances"]
    assert main(["info", str(dump_path(TWO_DUMPS)), "--heap-dump", "1"]) == 0
    out = capsys.readouterr().out
    assert "heap dumps  2" in out and "objects     heap dump 1: " in out
    assert main(["stats", str(dump_path(TWO_DUMPS)), "--heap-dump", "5"]) == 1
    assert "no heap dump 5" in capsys.readouterr().err


# -- in-memory and stream sources ----------------------------------------------------------

def test_open_takes_buffers_and_streams(tmp_path):
    data = raw_bytes(TWO_DUMPS)
    expected = hprofkit.stats(dump_path(TWO_DUMPS)).to_dict()
    with open(dump_path(TWO_DUMPS), "rb") as f:
        moved = io.BufferedReader(io.BytesIO(b"junk" + data))
        moved.read(4)
        sources = [data, bytearray(data), memoryview(data), io.BytesIO(data), gzip.compress(data),
                   io.BytesIO(bz2.compress(data)), f, moved]
        for source in sources:
            with hprofkit.open(source) as dump:
                assert dump.stats().to_dict() == expected, type(source)
                assert dump.size == len(data)
        assert not f.closed  # a file passed in stays the caller's
    with hprofkit.open(data) as dump:
        assert "<buffer>" in repr(dump) and dump.buffer is data
    with pytest.raises(hprofkit.TruncatedError, match="offset 0"):
        hprofkit.open(b"")
    with pytest.raises(hprofkit.FormatError, match="empty"):
        hprofkit.open(io.BytesIO(gzip.compress(b"")))


@pytest.mark.parametrize("kind", ["bytes", "BytesIO"])
def test_codecs_take_what_stats_takes(kind, tmp_path):
    data = raw_bytes(ANDROID)
    wrap = (lambda b: b) if kind == "bytes" else io.BytesIO
    packed, converted = tmp_path / "a.hpk", tmp_path / "a.std"
    hprofkit.encode(wrap(data), packed, strip="none")
    restored = io.BytesIO()
    hprofkit.decode(wrap(packed.read_bytes()), restored)
    assert restored.getvalue() == data
    hprofkit.convert(wrap(data), converted)
    expected = tmp_path / "b.std"
    hprofkit.convert(dump_path(ANDROID), expected)
    assert converted.read_bytes() == expected.read_bytes()


# -- parser events --------------------------------------------------------------------------

def test_parser_events_are_named_tuples_with_class_ids_and_payloads():
    data = raw_bytes(ANDROID)
    parser = hprofkit.Parser()
    assert "no header yet" in repr(parser)
    events = parser.feed(data[:1_000_000]) + parser.feed(bytearray(data[1_000_000:])) + parser.finish()
    assert "JAVA PROFILE 1.0.3" in repr(parser) and "finished" in repr(parser)
    header, end = events[0], events[-1]
    assert isinstance(header, hprofkit.HeaderEvent) and header == ("header", "JAVA PROFILE 1.0.3", 4,
                                                                     INVENTORY_BY_NAME[ANDROID]["timestamp_ms"])
    assert isinstance(end, hprofkit.EndEvent) and end == ("end",)
    subs = [e for e in events if isinstance(e, hprofkit.SubrecordEvent)]
    records = [e for e in events if e[0] == "record"]
    assert [(r.tag, r.name, r.offset, r.length) for r in records] == [
        (r.tag, r.name, r.offset, r.length) for r in hprofkit.iter_records(data)]
    theirs = list(hprofkit.iter_subrecords(data))
    assert len(subs) == len(theirs)
    for event, sub in zip(subs, theirs):
        kind, tag, offset, length, *_ = event
        assert (kind, tag, offset, length) == ("subrecord", sub.tag, sub.offset, sub.length)
        assert (event.name, event.id, event.class_id, event.heap) == (sub.name, sub.id, sub.class_id, sub.heap)
        assert (event.payload is None) == (sub.data is None)
        if sub.data is not None:
            assert event.payload == sub.data and event.payload.readonly


def test_a_long_subrecord_split_across_chunks_streams_its_payload():
    out = io.BytesIO()
    with HprofWriter(out, version="1.0.2", id_size=4) as w:
        with w.heap_dump() as seg:
            seg.primitive_array(0x10, "byte", bytes(range(256)) * 8192)  # 2 MiB
            seg.primitive_array(0x20, "byte", b"xy")
        w.heap_dump_end()
    data = out.getvalue()
    parser = hprofkit.Parser()
    events = [e for e in parser.feed(data[:100_000]) + parser.feed(data[100_000:]) + parser.finish()
              if e[0] == "subrecord"]
    assert [e.id for e in events] == [0x10, 0x20]
    assert events[0].payload is None and events[1].payload == b"xy"
    whole = [e for e in hprofkit.Parser().feed(data) if e[0] == "subrecord"]
    assert len(whole[0].payload) == 2 << 20  # in one chunk it is a view


# -- names that are not valid UTF-8 ------------------------------------------------------------

def test_a_class_name_with_an_invalid_byte_decodes_with_replacement():
    out = io.BytesIO()
    with HprofWriter(out, version="1.0.2", id_size=4) as w:
        w.load_class(0x100, w.string(b"com/example/Bad\xffName"))
        w.load_class(0x200, w.string(b"com/example/Astral\xed\xa0\xbd\xed\xb8\x80"))  # modified UTF-8
        with w.heap_dump() as seg:
            seg.class_dump(0x100)
            seg.class_dump(0x200)
            seg.instance(0x1000, 0x100, b"")
            seg.instance(0x1008, 0x200, b"")
        w.heap_dump_end()
    names = {r.name for r in hprofkit.stats(out.getvalue()).histogram}
    assert names == {"com.example.Bad\ufffdName", "com.example.Astral\U0001F600"}


# -- the notebook table --------------------------------------------------------------------------

def test_notebook_table_is_padded_with_totals_and_a_settable_top():
    stats = hprofkit.stats(dump_path(ANDROID))
    page = stats._repr_html_()
    headline = page.split("</div>", 1)[0]
    assert "25,183 instances" in headline and "3,645 classes" in headline and "GC roots" in headline
    assert "padding:" in page and "text-align:right" in page
    assert page.count("<tr>") == 1 + len(stats.records) + 1 + len(stats.subrecords) + 1 + len(stats.heaps) + 1 + 20
    stats.top_n = 3
    assert stats._repr_html_().count("<tr>") == page.count("<tr>") - 17 and "top 3 of" in str(stats)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            stats.top_n = bad


def test_codec_reprs_tell_format_and_progress():
    data = raw_bytes("leakcanary__leak_service_binder.hprof")
    conv = hprofkit.Converter()
    assert repr(conv) == "<hprofkit.Converter 0 bytes in, 0 out>"
    converted = conv.feed(data) + conv.flush()
    assert repr(conv) == f"<hprofkit.Converter {len(data):,} bytes in, {len(converted):,} out, finished>"
    enc = hprofkit.Encoder("tailor")
    assert repr(enc) == "<hprofkit.Encoder format='tailor', 0 bytes in, 0 out>"
    packed = enc.feed(data) + enc.flush()
    assert repr(enc) == "<hprofkit.Encoder format='tailor', finished>"
    dec = hprofkit.Decoder()
    assert repr(dec) == "<hprofkit.Decoder kind=None, 0 bytes in, 0 out>"
    restored = dec.feed(packed)
    assert f"kind='zlib', {len(packed):,} bytes in, {len(restored):,} out" in repr(dec)
