"""gzip and bzip2 inputs, broken: every failure is an HprofError that names
the format and the offset in the compressed file, for open()/stats() and for
encode / decode / convert alike; a full temporary disk is an OSError about
that disk; files that cannot be mapped say what they are."""

from __future__ import annotations

import bz2
import gzip
import io
import os
import subprocess
import sys
import threading

import pytest

import hprofkit

pytestmark = pytest.mark.sanitize


def sample(android: bool = True) -> bytes:
    out = io.BytesIO()
    hprofkit.write_sample_dump(out, android=android, objects=200)
    return out.getvalue()


DUMP = sample()
GZ = gzip.compress(DUMP, mtime=0)
BZ2 = bz2.compress(DUMP)
COMPRESSED = {"gzip": GZ, "bzip2": BZ2}
JOBS = {
    "open": lambda src, dst: hprofkit.stats(src),
    "encode": lambda src, dst: hprofkit.encode(src, dst),
    "encode-tailor": lambda src, dst: hprofkit.encode(src, dst, format="tailor"),
    "convert": lambda src, dst: hprofkit.convert(src, dst),
}


def run(job: str, data: bytes, tmp_path) -> None:
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    JOBS[job](src, tmp_path / "out.bin")


@pytest.mark.parametrize("job", list(JOBS))
@pytest.mark.parametrize("kind", list(COMPRESSED))
def test_a_cut_compressed_input_is_truncated_at_its_end(job, kind, tmp_path):
    blob = COMPRESSED[kind]
    cuts = sorted({4, 10, 11, 30, len(blob) // 3, len(blob) // 2, len(blob) - 9, len(blob) - 4, len(blob) - 1})
    for cut in cuts:
        with pytest.raises(hprofkit.TruncatedError) as info:
            run(job, blob[:cut], tmp_path)
        assert info.value.offset == cut, cut
        assert f"truncated {kind} stream" in str(info.value) and f"compressed offset {cut} " in str(info.value)
        assert not (tmp_path / "out.bin").exists()


@pytest.mark.parametrize("job", list(JOBS))
def test_a_broken_deflate_block_is_corrupt_at_its_byte(job, tmp_path):
    """The first deflate block of the member says it is of the reserved type 3."""
    broken = GZ[:10] + b"\x07" + GZ[11:]
    with pytest.raises(hprofkit.CorruptError) as info:
        run(job, broken, tmp_path)
    assert info.value.offset == 10
    assert str(info.value).startswith("corrupt gzip stream at compressed offset 10: ")


@pytest.mark.parametrize("job", ["open", "convert"])
def test_flipped_bytes_in_a_gzip_input_are_found_at_or_after_the_flip(job, tmp_path):
    for at in (12, 100, len(GZ) // 2, len(GZ) - 6):  # deflate data, then the CRC-32 of the trailer
        broken = bytearray(GZ)
        broken[at] ^= 0x55
        with pytest.raises(hprofkit.CorruptError) as info:
            run(job, bytes(broken), tmp_path)
        assert at <= info.value.offset < len(GZ), at
        assert "gzip" in str(info.value)


def test_a_broken_bzip2_input_is_corrupt_near_where_it_gave_up(tmp_path):
    broken = bytearray(BZ2)
    broken[len(BZ2) // 2] ^= 0x55
    with pytest.raises(hprofkit.CorruptError) as info:
        run("open", bytes(broken), tmp_path)
    assert len(BZ2) // 2 <= info.value.offset <= len(BZ2)
    assert str(info.value).startswith("corrupt bzip2 stream near compressed offset ")


@pytest.mark.parametrize("kind", list(COMPRESSED))
def test_concatenated_streams_and_zero_padding_are_read_whole(kind, tmp_path):
    compress = {"gzip": lambda b: gzip.compress(b, mtime=0), "bzip2": bz2.compress}[kind]
    half = len(DUMP) // 2
    joined = compress(DUMP[:half]) + compress(DUMP[half:]) + b"\0" * 100
    src = tmp_path / "in.bin"
    src.write_bytes(joined)
    assert hprofkit.stats(src).to_dict() == hprofkit.stats(DUMP).to_dict()
    hprofkit.convert(src, tmp_path / "a.hprof")
    hprofkit.convert(io.BytesIO(DUMP), tmp_path / "b.hprof")
    assert (tmp_path / "a.hprof").read_bytes() == (tmp_path / "b.hprof").read_bytes()


def test_garbage_after_a_gzip_stream_is_corrupt(tmp_path):
    with pytest.raises(hprofkit.CorruptError) as info:
        run("open", GZ + b"trailing garbage", tmp_path)
    assert len(GZ) <= info.value.offset <= len(GZ) + 2  # where the second stream's magic number fails
    assert "data after the end of the previous one" in str(info.value)


def test_a_full_temporary_disk_is_an_oserror_about_that_disk(tmp_path):
    """open() unpacks a .gz into TMPDIR; a write that fails there (here past
    RLIMIT_FSIZE) is not a corrupt input."""
    src = tmp_path / "in.hprof.gz"
    src.write_bytes(gzip.compress(sample(android=False) * 1, mtime=0))
    code = """
import resource, sys, hprofkit
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    hprofkit.open(sys.argv[1])
except OSError as exc:
    print(type(exc).__name__, exc)
"""
    proc = subprocess.run([sys.executable, "-c", code, str(src)], capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("OSError [Errno 27] File too large while unpacking "), proc.stdout + proc.stderr
    assert str(src) in proc.stdout and "temporary file" in proc.stdout


def test_what_cannot_be_mapped_says_what_it_is(tmp_path):
    with pytest.raises(hprofkit.FormatError, match="/dev/zero is a character device, not a regular file"):
        hprofkit.open("/dev/zero")
    fifo = tmp_path / "dump.fifo"
    os.mkfifo(fifo)
    done = threading.Event()
    timer = threading.Timer(10, lambda: done.is_set() or os.close(os.open(fifo, os.O_WRONLY)))
    timer.start()  # unblocks a reader that waits for a writer (what happened before)
    try:
        with pytest.raises(hprofkit.FormatError, match="is a FIFO, not a regular file"):
            hprofkit.open(fifo)
    finally:
        done.set()
        timer.cancel()
    with pytest.raises(IsADirectoryError):
        hprofkit.open(tmp_path)
