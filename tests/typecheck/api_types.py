"""What mypy infers for the public API (issue #23): checked, never run, by
tests/test_packaging.py::test_mypy_strict_passes_over_the_package_and_its_api_types.  Each
assert_type fails the check when an annotation widens to Any or drifts."""

from __future__ import annotations

import io
import os
from typing import IO, Iterator

from typing_extensions import assert_type

import hprofkit
from hprofkit import Decoder, Encoder, Record, SubRecord
from hprofkit._hprof import PackDecoder, PackEncoder, TailorEncoder


def dumps(path: str, fd: int, out: IO[bytes]) -> None:
    with hprofkit.open(path) as dump:
        assert_type(dump.records(), Iterator[Record])
        assert_type(dump.subrecords(), Iterator[SubRecord])
        assert_type(dump.heap(mapping=path, progress=True), hprofkit.Heap)
    assert_type(hprofkit.open(b"JAVA PROFILE 1.0.2\0"), hprofkit.Dump)
    assert_type(hprofkit.open(io.BytesIO()), hprofkit.Dump)
    assert_type(hprofkit.open_heap(os.fspath(path), mapping=None), hprofkit.Heap)
    assert_type(hprofkit.encode(path, out, strip=["primitive_arrays"]), hprofkit.Result)
    assert_type(hprofkit.decode(b"", "-"), hprofkit.Result)


def feeds(fd: int) -> None:
    # Without an fd the output comes back as bytes; with one, the count
    # written there (or bytes again when fd < 0).
    encoder = Encoder()
    assert_type(encoder.feed(b""), bytes)
    assert_type(encoder.feed(b"", fd), "bytes | int")
    assert_type(encoder.flush(), bytes)
    assert_type(encoder.flush(fd), "bytes | int")
    decoder = Decoder()
    assert_type(decoder.feed(b""), bytes)
    assert_type(decoder.feed(b"", fd=fd), "bytes | int")
    assert_type(decoder.restore(b""), bytes)
    assert_type(decoder.flush(), bytes)
    for core in (PackEncoder(), PackDecoder(), TailorEncoder()):
        assert_type(core.feed(b""), bytes)
        assert_type(core.feed(b"", fd), "bytes | int")
        assert_type(core.flush(), bytes)
        assert_type(core.flush(fd=fd), "bytes | int")
