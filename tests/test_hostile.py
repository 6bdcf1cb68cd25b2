"""The hostile and extreme inputs of issue 9, small: each ends in an
HprofError or in a result made with bounded memory (the core allocates
through PyMem_Raw*, which tracemalloc sees).  benchmarks/bench_hostile.py
runs them full size and prints peak RSS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

import hprofkit
from hprofkit._errors import CorruptError
from conftest import ROOT
import hostile
from hostile import traced_peak
from procstate import bytes_written, end, has_open, reap, wait_for

MiB = 1 << 20


def records(data: bytes, header: int = 31) -> list[tuple[int, int]]:
    """(tag, length) of each top-level record."""
    out, pos = [], header
    while pos < len(data):
        length = int.from_bytes(data[pos + 5:pos + 9], "big")
        out.append((data[pos], length))
        pos += 9 + length
    assert pos == len(data)
    return out


def heap_bodies(data: bytes, header: int = 31) -> bytes:
    """The bodies of the heap records, joined: equal for outputs that cut them differently."""
    out, pos = [], header
    while pos < len(data):
        length = int.from_bytes(data[pos + 5:pos + 9], "big")
        if data[pos] in (0x0C, 0x1C):
            out.append(data[pos + 9:pos + 9 + length])
        pos += 9 + length
    return b"".join(out)


def test_a_crafted_pack_declaring_a_huge_stream_is_refused_unread(tmp_path):
    """A 70 KiB pack whose one block declares 64 MiB + 1 of zeros: refused
    from its frame, nothing inflated (issue 9: 1 MB -> 2 GB before)."""
    path = tmp_path / "bomb.hpk"
    path.write_bytes(hostile.pack_bomb((64 << 20) + 1))
    err, peak = traced_peak(lambda: pytest.raises(CorruptError, hprofkit.decode, path, tmp_path / "out"))
    assert "more than the 67108864 a block may hold" in str(err.value)
    assert peak < 16 * MiB  # decode()'s 8 MiB read buffer, nothing inflated
    assert not (tmp_path / "out").exists()
    # a legitimate pack the limit lets through: 8 MiB declared, max_block 16 MiB
    path.write_bytes(hostile.pack_bomb(8 << 20))
    result = hprofkit.decode(path, tmp_path / "out", max_block=16 << 20)
    assert result.output == 31 + 9 + (8 << 20)


@pytest.fixture(scope="module")
def roots_mini(tmp_path_factory) -> os.PathLike:
    path = tmp_path_factory.mktemp("hostile") / "roots.mini"
    path.write_bytes(hostile.mini_of_roots(4_000_000))  # a 20 MB segment, 40 KB of zlib
    return path


def test_a_tailor_mini_of_empty_roots_is_restored_in_bounded_memory(tmp_path, roots_mini):
    held = tmp_path / "held.hprof"
    hprofkit.decode(roots_mini, held)
    whole = held.read_bytes()
    assert records(whole) == [(0x1C, 20_000_000), (0x2C, 0)]
    # to a file: streamed, its length patched: the same bytes, 20 MB never held
    patched = tmp_path / "patched.hprof"
    blob = roots_mini.read_bytes()

    def restore():
        decoder = hprofkit.Decoder(max_record=MiB)
        with open(patched, "wb") as f:
            for i in range(0, len(blob), 4096):
                decoder.feed(blob[i:i + 4096], fd=f.fileno())
            decoder.flush(fd=f.fileno())
    _, peak = traced_peak(restore)
    assert peak < 12 * MiB  # two 4 MiB inflated pieces, the 1 MiB held, the writers: not 20 MB
    assert patched.read_bytes() == whole
    # to a pipe: cut into segments of at most the limit, the same roots
    proc = subprocess.run([sys.executable, "-c", "import sys, hprofkit; "
                           f"hprofkit.decode(sys.argv[1], '-', max_record={MiB})", str(roots_mini)],
                          capture_output=True, check=True)
    cut = proc.stdout
    assert heap_bodies(cut) == heap_bodies(whole)
    assert all(length <= MiB for tag, length in records(cut)) and len(records(cut)) > 20


def test_keep_all_pack_of_zeroed_arrays_is_restored_in_bounded_memory(tmp_path):
    """A legitimate 0.3 MB pack restoring to 300 MB (issue 9: 1.58 MB ->
    1.54 GB): blocks are inflated as they are restored, a window at a time."""
    pack = tmp_path / "zeros.hpk"
    encoder = hprofkit.Encoder(strip="none")
    with open(pack, "wb") as f:
        for chunk in hostile.zero_arrays_dump(300, MiB):
            f.write(encoder.feed(chunk))
        f.write(encoder.flush())
    out = tmp_path / "out.hprof"
    result, peak = traced_peak(lambda: hprofkit.decode(pack, out, threads=2))
    assert result.output == 31 + 300 * (9 + 14 + MiB) + 9
    assert peak < 48 * MiB
    with hprofkit.open(out) as dump:
        assert dump.stats().arrays == 300


def test_convert_of_one_long_sub_record_from_a_pipe(tmp_path):
    """One 8 MiB sub-record from a pipe, max_record 1 MiB: to a file its
    length is patched (the same bytes), to a pipe it gets a record of its
    own (issue 9: a 1.5 GB one made convert hold 1.45 GB)."""
    dump = b"".join(hostile.one_array_dump(8 * MiB))
    src = tmp_path / "one.hprof"
    src.write_bytes(dump)
    want = tmp_path / "want.hprof"
    hprofkit.convert(src, want)
    code = ("import sys, hprofkit; "
            f"hprofkit.convert('-', sys.argv[1], max_record={MiB})")
    out = tmp_path / "out.hprof"
    subprocess.run([sys.executable, "-c", code, str(out)], input=dump, check=True)
    assert out.read_bytes() == want.read_bytes()
    proc = subprocess.run([sys.executable, "-c", code, "-"], input=dump, capture_output=True, check=True)
    assert records(proc.stdout) == [(0x1C, 14 + 8 * MiB), (0x2C, 0)]
    assert proc.stdout == want.read_bytes()  # one sub-record: its record has the very same bytes


def test_app_only_pack_holding_a_long_record(tmp_path):
    """An app_only pack whose one 64 MiB segment spans blocks (its length
    comes at its end): streamed past max_record (issue 9: a 1 GB record
    made decode hold 1.93 GB)."""
    pack = tmp_path / "app.hpk"
    encoder = hprofkit.Encoder(strip="none", app_only=True)
    with open(pack, "wb") as f:
        for chunk in hostile.app_heap_dump(64, MiB):
            f.write(encoder.feed(chunk))
        f.write(encoder.flush())
    held = tmp_path / "held.hprof"
    hprofkit.decode(pack, held)
    whole = held.read_bytes()
    patched = tmp_path / "patched.hprof"
    _, peak = traced_peak(lambda: hprofkit.decode(pack, patched, max_record=2 * MiB, threads=1))
    assert patched.read_bytes() == whole
    assert peak < 40 * MiB  # read buffer, two blocks in flight, the writers: not the 64 MiB record
    proc = subprocess.run([sys.executable, "-c", "import sys, hprofkit; "
                           f"hprofkit.decode(sys.argv[1], '-', max_record={2 * MiB})", str(pack)],
                          capture_output=True, check=True)
    assert heap_bodies(proc.stdout) == heap_bodies(whole)
    assert max(length for tag, length in records(proc.stdout)) <= 2 * MiB


def test_classes_dumped_twice_round_trip():
    """Every class dumped again in a second heap dump (the case that made the
    pack model quadratic): the layouts follow the latest dump, both ways."""
    data = hostile.classes_twice_dump(3000)
    encoder = hprofkit.Encoder(strip="none", threads=1)
    blob = encoder.feed(data) + encoder.flush()
    decoder = hprofkit.Decoder(threads=1)
    assert decoder.feed(blob) + decoder.flush() == data


def test_ctrl_c_stops_a_decode_that_produces_gigabytes(tmp_path):
    """A 4 MB pack restoring to 3.8 GiB (within the restore limit): SIGINT stops it
    (KeyboardInterrupt between slices and every 32 MiB of output) instead of running to the end."""
    pack = tmp_path / "zeros.hpk"
    pack.write_bytes(hostile.pack_of_zeros(120))  # 120 blocks of 32 MiB
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code = ("import sys, hprofkit\n"
            "try:\n"
            "    hprofkit.decode(sys.argv[1], sys.argv[2])\n"
            "except KeyboardInterrupt:\n"
            "    sys.exit(3)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(pack), str(out_dir / "out.hprof")],
                            stderr=subprocess.PIPE, cwd=ROOT)
    try:
        # Ctrl-C once the decode has written its first block: inside the C loop, not before it.
        wait_for(proc, lambda: has_open(proc.pid, out_dir) and bytes_written(proc.pid) > 32 * MiB,
                 "wrote its first 32 MiB")
        os.kill(proc.pid, signal.SIGINT)
        assert end(proc) == 3, proc.stderr.read().decode()
    finally:
        reap(proc)
    assert os.listdir(out_dir) == []


# ---- restores that declare too much (#30) ------------------------------------------------

def test_a_pack_declaring_more_than_it_may_restore_is_refused_before_writing(tmp_path):
    """140 blocks of 32 MiB of zeros, 4.6 MB declaring 4.4 GiB in its end record: over the
    larger of 4 GiB and 1,000 times the pack, refused before a block is inflated (nothing
    written) by decode, open_heap and the CLI; max_output= raises the limit."""
    pack = hostile.pack_of_zeros(140)
    path, out = tmp_path / "zeros.hpk", tmp_path / "out.hprof"
    path.write_bytes(pack)
    end = len(pack) - 17  # the end record: 'E', three varints (1 + 4 + 5 bytes here), its CRC
    says = (f"the pack's end record at offset {end}: the restored dump would hold 4697621771 bytes (4.4 GiB), "
            f"over the {1000 * len(pack)} limit")
    for source in (path, pack):
        with pytest.raises(hprofkit.RestoreLimitError) as info:
            hprofkit.decode(source, out)
        assert str(info.value).startswith(says) and info.value.offset == end and not out.exists()
        with pytest.raises(hprofkit.RestoreLimitError, match="4.4 GiB"):
            hprofkit.open_heap(source)
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "top", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr == f"hprofkit: error: {says} (--max-output, max_output= raise it)\n"
    hprofkit._hprof.pack_check_end(pack[-hprofkit._hprof.PACK_END_MAX:], len(pack), 5 << 30)  # a limit above: passes
    # Read as a stream (its end record not there yet), the block taking it past the limit is refused.
    with pytest.raises(hprofkit.RestoreLimitError, match="pack block 1 at offset"):
        hprofkit.Decoder(threads=1, max_output="40 MiB").feed(pack[:len(pack) // 10])


def test_a_mini_read_as_a_stream_stops_at_the_sub_record_past_the_limit(tmp_path):
    """A bare mini of three byte[16 MiB] (50 bytes, each array restored as zeros): a stream
    declares no total, so the sub-record that takes the output past max_output is refused
    before it is written, and the output goes."""
    mini = hostile.mini_of_byte_arrays(3, 16 << 20)
    out = tmp_path / "out.hprof"
    with pytest.raises(hprofkit.RestoreLimitError) as info:
        hprofkit.decode(mini, out, max_output="40 MiB")
    assert str(info.value).startswith("the mini's sub-record at offset 39: the restored dump would hold 50331690 "
                                      "bytes (48.0 MiB), over the 41943040 limit")
    assert info.value.record == "PRIMITIVE_ARRAY_DUMP" and not out.exists()
    assert hprofkit.decode(mini, out).output > 48 << 20  # under the default limit
