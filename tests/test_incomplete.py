"""A dump cut short (issue 9): a run of HEAP_DUMP_SEGMENTs that stops
without its HEAP_DUMP_END is reported by encode, convert and decode, in the
library (Result.unfinished) and on the command line (one warning line in
info's words, exit status 0: the output is still written), never accepted
silently.  Real dumps, cut right after a segment."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import hprofkit
from hprofkit.cli import main
from hprofkit.writer import HprofWriter
from conftest import INVENTORY_BY_NAME, dump_path, raw_bytes

HOTSPOT = "mat__openjdk_jdk11_04_x64.hprof.gz"  # HotSpot 1.0.2: one segment, then HEAP_DUMP_END
ANDROID = "leakcanary__leak_service_binder.hprof"  # ART 1.0.3: 647 segments, then HEAP_DUMP_END
SEGMENT, END = 0x1C, 0x2C


def record_heads(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, tag, total length) of every record, read here with struct,
    not with hprofkit's parser."""
    at = data.index(b"\0") + 1 + 4 + 8
    heads = []
    while at < len(data):
        tag, _, length = struct.unpack_from(">BII", data, at)
        heads.append((at, tag, 9 + length))
        at += 9 + length
    assert at == len(data)
    return heads


def cut_after_segment(name: str, which: int = -1) -> tuple[bytes, int]:
    """The dump cut right after its `which`-th HEAP_DUMP_SEGMENT (the
    HEAP_DUMP_END and all that follows dropped), and the offset of the run's
    first segment."""
    data = raw_bytes(name)
    heads = record_heads(data)
    segments = [h for h in heads if h[1] == SEGMENT]
    offset, _, length = segments[which]
    assert any(tag == END for at, tag, _ in heads if at > offset)  # what the cut drops
    return data[:offset + length], segments[0][0]


def warning_line(name: str, end: int) -> str:
    return (f"hprofkit: warning: {name} is incomplete: heap dump 0 stops at offset {end:,} without its "
            f"HEAP_DUMP_END (the dump was cut short)")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(params=[(HOTSPOT, -1), (ANDROID, -1), (ANDROID, 300)], ids=["hotspot", "android", "android-mid"])
def cut(request, tmp_path) -> tuple[Path, hprofkit.UnfinishedDump]:
    name, which = request.param
    data, first = cut_after_segment(name, which)
    path = tmp_path / "cut.hprof"
    path.write_bytes(data)
    return path, hprofkit.UnfinishedDump(0, first, len(data), 1)


def test_encode_to_a_pack_and_decode_report_the_cut(cut, tmp_path):
    path, expected = cut
    assert hprofkit.stats(path).unfinished == expected  # what info says
    pack = tmp_path / "cut.hpk"
    result = hprofkit.encode(path, pack)
    assert result.incomplete and result.unfinished == expected and result.output == pack.stat().st_size
    # The pack restores the dump as cut (char[]/byte[] contents zeroed, lengths kept): the same offsets.
    restored = tmp_path / "restored.hprof"
    result = hprofkit.decode(pack, restored)
    assert result.incomplete and result.unfinished == expected
    assert restored.stat().st_size == path.stat().st_size
    assert hprofkit.stats(restored).unfinished == expected
    lossless = tmp_path / "lossless.hpk"
    assert hprofkit.encode(path, lossless, strip="none").unfinished == expected
    assert hprofkit.decode(lossless, tmp_path / "lossless.hprof").unfinished == expected
    assert (tmp_path / "lossless.hprof").read_bytes() == path.read_bytes()


def test_the_codecs_report_it_once_flushed(cut):
    path, expected = cut
    data = path.read_bytes()
    encoder = hprofkit.Encoder(strip="none")
    pack = encoder.feed(data)
    assert encoder.unfinished is None  # the input may go on
    pack += encoder.flush()
    assert encoder.unfinished == expected
    decoder = hprofkit.Decoder()
    restored = decoder.feed(pack)
    assert decoder.unfinished is None
    assert restored + decoder.flush() == data
    assert decoder.unfinished == expected


def test_convert_and_encode_hprof_report_the_cut_of_an_android_dump(tmp_path):
    data, first = cut_after_segment(ANDROID)
    path = tmp_path / "cut.hprof"
    path.write_bytes(data)
    expected = hprofkit.UnfinishedDump(0, first, len(data), 1)
    result = hprofkit.convert(path, tmp_path / "standard.hprof")
    assert result.incomplete and result.unfinished == expected
    # The output is written, and is cut where the input was.
    assert hprofkit.stats(tmp_path / "standard.hprof").unfinished.index == 0
    result = hprofkit.encode(path, tmp_path / "stripped.hprof", format="hprof", strip="all")
    assert result.unfinished == expected
    assert hprofkit.stats(tmp_path / "stripped.hprof").unfinished == expected  # same length, zeroed contents
    converter = hprofkit.Converter()
    converter.feed(data)
    assert converter.unfinished is None
    converter.flush()
    assert converter.unfinished == (0, first, len(data), 1)
    # A Tailor mini cannot end without HEAP_DUMP_END: that format refuses, naming the offset.
    with pytest.raises(hprofkit.TruncatedError, match=f"HEAP_DUMP_END at offset {len(data)}"):
        hprofkit.encode(path, tmp_path / "cut.mini", format="tailor")
    assert not (tmp_path / "cut.mini").exists()


@pytest.mark.parametrize("name", [HOTSPOT, ANDROID])
def test_a_complete_dump_is_not_reported(name, tmp_path, capsys):
    source = dump_path(name)
    result = hprofkit.encode(source, tmp_path / "whole.hpk")
    assert not result.incomplete and result.unfinished is None
    result = hprofkit.decode(tmp_path / "whole.hpk", tmp_path / "whole.hprof")
    assert not result.incomplete and result.unfinished is None
    commands = [["encode", "-i", str(source), "-o", str(tmp_path / "cli.hpk")],
                ["decode", "-i", str(tmp_path / "cli.hpk"), "-o", str(tmp_path / "cli.hprof")]]
    if name == ANDROID:
        assert hprofkit.convert(source, tmp_path / "standard.hprof").unfinished is None
        commands += [["convert", "-i", str(source), "-o", str(tmp_path / "cli-standard.hprof")],
                     ["encode", "--format", "hprof", "--strip", "all", "-i", str(source), "-o",
                      str(tmp_path / "cli-stripped.hprof")],
                     ["encode", "--format", "tailor", "-i", str(source), "-o", str(tmp_path / "cli.mini")],
                     ["decode", "-i", str(tmp_path / "cli.mini"), "-o", str(tmp_path / "cli-mini.hprof")]]
    for command in commands:
        assert main(command) == 0, command
        assert capsys.readouterr().err == "", command


def test_stats_and_info_say_it_in_every_form(tmp_path, capsys):
    """stats() says it in its text, HTML and repr; the stats and info
    commands, in text and JSON, in one warning line; what is there is still
    counted."""
    data, _ = cut_after_segment(ANDROID)
    path = tmp_path / "cut.hprof"
    path.write_bytes(data)
    stats = hprofkit.stats(path)
    assert not stats.complete and not stats.heap_dumps[0].complete
    assert stats.instances == INVENTORY_BY_NAME[ANDROID]["instances"]
    assert "INCOMPLETE" in str(stats) and "INCOMPLETE" in stats._repr_html_() and "INCOMPLETE" in repr(stats)
    for command in (["stats"], ["info"], ["stats", "--json"], ["info", "--json"]):
        assert main([*command, str(path)]) == 0
        captured = capsys.readouterr()
        assert captured.err.splitlines() == [warning_line(str(path), len(data))], command
        if "--json" in command:
            assert json.loads(captured.out)["complete"] is False
    assert hprofkit.stats(dump_path(ANDROID)).complete


def test_the_command_line_warns_once_and_succeeds(tmp_path):
    data, _ = cut_after_segment(ANDROID, 300)
    path = tmp_path / "cut.hprof"
    path.write_bytes(data)
    line = warning_line(str(path), len(data))
    # info says it in these words; every command that reads the dump says the same.
    proc = run_cli("info", str(path))
    assert proc.returncode == 0 and proc.stderr.splitlines() == [line]
    pack, mini = tmp_path / "cut.hpk", tmp_path / "cut.mini"
    for command in (["encode", "-i", str(path), "-o", str(pack)],
                    ["encode", "--format", "hprof", "--strip", "all", "-i", str(path), "-o", str(tmp_path / "s.hprof")],
                    ["convert", "-i", str(path), "-o", str(tmp_path / "standard.hprof")]):
        proc = run_cli(*command)
        assert proc.returncode == 0 and proc.stderr.splitlines() == [line], (command, proc.stderr)
        assert proc.stdout.startswith("COMPLETE: ")
    # decode names the dump it wrote, as info on that dump would.
    restored = tmp_path / "restored.hprof"
    proc = run_cli("decode", "-i", str(pack), "-o", str(restored))
    assert proc.returncode == 0 and proc.stderr.splitlines() == [warning_line(str(restored), len(data))]
    assert run_cli("info", str(restored)).stderr == proc.stderr
    # Standard input and output.
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "encode", "-i", "-", "-o", "-"], input=data,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr.decode().splitlines()[-1] == warning_line("<stdin>", len(data))
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "decode", "-i", "-", "-o", "-"], input=proc.stdout,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0 and len(proc.stdout) == len(data)
    assert proc.stderr.decode().splitlines()[-1] == warning_line("<stdout>", len(data))
    # Tailor's format cannot hold it: an error naming the offset, exit 1, nothing written.
    proc = run_cli("encode", "--format", "tailor", "-i", str(path), "-o", str(mini))
    assert proc.returncode == 1 and proc.stderr.startswith("hprofkit: error: ") and f"offset {len(data)}" in proc.stderr
    assert not mini.exists()


def test_batch_encode_and_decode_report_the_cut(tmp_path, capsys):
    data, first = cut_after_segment(HOTSPOT)
    path = tmp_path / "cut.hprof"
    path.write_bytes(data)
    out = tmp_path / "out"
    result = hprofkit.batch("encode", [str(path), str(dump_path(ANDROID))], jobs=1, output_dir=out)
    cut_row, whole_row = result.rows
    assert cut_row.ok and cut_row.value["unfinished"] == {"index": 0, "offset": first, "end": len(data), "count": 1}
    assert whole_row.ok and whole_row.value["unfinished"] is None
    assert main(["batch", "encode", str(path), str(dump_path(ANDROID)), "--jobs", "1", "--output-dir", str(out)]) == 0
    assert capsys.readouterr().err.splitlines() == [warning_line(str(path), len(data))]
    assert main(["batch", "decode", str(out / "cut.hpk"), "--jobs", "1", "--output-dir", str(tmp_path / "back")]) == 0
    assert capsys.readouterr().err.splitlines() == [warning_line(str(tmp_path / "back" / "cut.hprof"), len(data))]


def test_a_heap_dump_record_after_an_open_run_is_reported_as_stats_reports_it(tmp_path):
    """The run a HEAP_DUMP interrupts stops without its HEAP_DUMP_END too;
    a second run left open at the end counts as one more."""
    out = io.BytesIO()
    with HprofWriter(out, version="1.0.2", id_size=4) as w:
        w.load_class(0x100, w.string("A"))
        with w.heap_dump() as seg:
            seg.class_dump(0x100)
            seg.instance(0x1000, 0x100, b"")
        with w.heap_dump(segment=False) as whole:
            whole.instance(0x2000, 0x100, b"")
        with w.heap_dump() as seg:
            seg.instance(0x3000, 0x100, b"")
    data = out.getvalue()
    stats = hprofkit.stats(data)
    assert [d.complete for d in stats.heap_dumps] == [False, True, False]
    first = stats.heap_dumps[0]
    expected = hprofkit.UnfinishedDump(0, first.offset, first.end, 2)
    assert stats.unfinished == expected and first.end < len(data)
    pack = tmp_path / "two.hpk"
    assert hprofkit.encode(data, pack, strip="none").unfinished == expected
    assert hprofkit.decode(pack, tmp_path / "two.hprof").unfinished == expected
    assert expected.describe("x").startswith("x is incomplete: heap dump 0 (and 1 more) stops at offset ")
