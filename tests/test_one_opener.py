"""Issue #22, one way to open anything: hprofkit.open_heap (and dump.heap())
takes what hprofkit.open takes -- paths, buffers, BytesIO, binary files, a
pipe -- holding plain HPROF, gzip, bzip2, an hprofkit pack or a Tailor mini
(zlib, gzip or bare), and every heap command reads its dump through it, "-"
included.  `leaks x.hpk` said "not an HPROF file" while diff(x.hpk, y)
worked; `leaks -` looked for a file named "-"."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import os
import subprocess
import sys
import threading

import pytest

import hprofkit
import hprofkit.testing
from conftest import DATA


def sample() -> bytes:
    out = io.BytesIO()
    hprofkit.write_sample_dump(out, android=True, objects=60)
    return out.getvalue()


DUMP = sample()


def encoded(**options) -> bytes:
    enc = hprofkit.Encoder(**options)
    return enc.feed(DUMP) + enc.flush()


PACK = encoded(threads=1, strip="none")
MINI = encoded(format="tailor", threads=1)
FORMS = {"hprof": DUMP, "gz": gzip.compress(DUMP, mtime=0), "bz2": bz2.compress(DUMP), "pack": PACK,
         "zlib mini": MINI, "bare mini": encoded(format="tailor", level=0),
         "gzip mini": gzip.compress(encoded(format="tailor", level=0), mtime=0)}
# A Tailor mini drops the contents of char[] and byte[]: the objects stay.
IDS = sorted(o.id for o in hprofkit.open_heap(DUMP).objects())


def ids(heap) -> list[int]:
    with heap:
        return sorted(o.id for o in heap.objects())


def pipe_of(data: bytes):
    """The read end of a pipe a thread writes data into (a stream that cannot be mapped)."""
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as f:
            f.write(data)
    threading.Thread(target=feed, daemon=True).start()
    return os.fdopen(read, "rb")


@pytest.mark.parametrize("form", list(FORMS))
def test_open_heap_takes_any_source_of_any_form(form, tmp_path):
    data = FORMS[form]
    path = tmp_path / f"dump.{form.replace(' ', '-')}"
    path.write_bytes(data)
    assert ids(hprofkit.open_heap(path)) == IDS
    assert ids(hprofkit.open_heap(str(path), heap_dump=-1)) == IDS
    assert ids(hprofkit.open_heap(data)) == IDS
    assert ids(hprofkit.open_heap(io.BytesIO(data))) == IDS
    with open(path, "rb") as f:
        assert ids(hprofkit.open_heap(f)) == IDS
    with pipe_of(data) as f:
        assert ids(hprofkit.open_heap(f)) == IDS
    with hprofkit.open(path) as dump:  # Dump.heap() of the same: the Dump holds the restored dump
        assert dump.id_size == 4 and dump.version == "1.0.3"
        assert ids(dump.heap()) == IDS
        if form in ("pack", "zlib mini", "bare mini", "gzip mini"):
            assert dump.compression.startswith("hprofkit pack" if form == "pack" else "Tailor mini")


def test_a_restored_pack_is_the_dump():
    """Restored into an anonymous temporary file: byte for byte the dump a lossless pack holds."""
    with hprofkit.open(PACK) as dump:
        assert bytes(dump.buffer) == DUMP and dump.compression == "hprofkit pack"
    assert hprofkit.stats(PACK).to_dict()["histogram"] == hprofkit.stats(DUMP).to_dict()["histogram"]


@pytest.mark.parametrize("data, error", [(PACK[:len(PACK) // 2], hprofkit.TruncatedError),
                                         (MINI[:40], hprofkit.HprofError)], ids=["cut pack", "cut mini"])
def test_a_damaged_pack_or_mini_is_an_hprof_error(data, error):
    with pytest.raises(error):
        hprofkit.open_heap(data)


def test_one_opener():
    """open_any was a second public way to open a heap."""
    assert not hasattr(hprofkit.testing, "open_any") and "open_any" not in hprofkit.testing.__all__


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", *args], input=stdin, capture_output=True, timeout=300)


HEAP_COMMANDS = {"show": ["show", "{}", "java.lang.String", "-n", "2"], "path": ["path", "{}", hex(IDS[-1])],
                 "top": ["top", "{}", "-n", "3"], "leaks": ["leaks", "{}"], "diff": ["diff", "{}", "{}"]}


@pytest.mark.parametrize("command", list(HEAP_COMMANDS))
def test_every_heap_command_reads_a_pack_a_mini_and_stdin(command, tmp_path):
    plain = tmp_path / "app.hprof"
    plain.write_bytes(DUMP)
    pack = tmp_path / "app.hpk"
    pack.write_bytes(PACK)
    mini = tmp_path / "app.mini"
    mini.write_bytes(MINI)
    argv = HEAP_COMMANDS[command]
    want = run(*(a.format(plain) for a in argv))
    assert want.returncode in (0, 1) and want.stderr == b""  # path: 1 when no strong path
    for name in (pack, mini):
        got = run(*(a.format(name) for a in argv))
        assert (got.returncode, got.stderr) == (want.returncode, b""), got.stderr
        if command != "diff" and name == pack:  # a diff names its dumps; a mini has no byte[] contents
            assert got.stdout == want.stdout
    stdin = [a.format("-") for a in argv]
    if command == "diff":
        stdin[-1] = str(plain)  # one of the two from stdin
    got = run(*stdin, stdin=PACK)
    assert (got.returncode, got.stderr) == (want.returncode, b""), got.stderr
    if command != "diff":
        assert got.stdout == want.stdout


def test_diff_reads_one_dump_from_stdin_not_two():
    proc = run("diff", "-", "-")
    assert proc.returncode == 2 and b"A and B cannot both be standard input" in proc.stderr


def test_batch_reads_packs_too(tmp_path):
    pack = tmp_path / "app.hpk"
    pack.write_bytes(PACK)
    proc = run("batch", "leaks", str(pack), "--jobs", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"][0]["ok"]


def test_open_heap_reads_a_bmd(tmp_path):
    """Badoo's BMD too (identifiers renumbered, names hashed: the objects' count is kept)."""
    path = tmp_path / "app.bmd"
    path.write_bytes(encoded(format="bmd"))
    with hprofkit.open(path) as dump:
        assert dump.compression == "Badoo BMD"
        with dump.heap() as heap:
            assert heap.object_count == len(IDS)
    proc = run("top", str(path), "-n", "2", "--json")
    assert proc.returncode == 0 and len(json.loads(proc.stdout)) == 2


# -- a mapping through the one opener (issue #20 meets #22) ------------------------------------

OBFUSCATED = DATA / "obfuscated" / "heapgen_s5_16mb_obf_android.hprof.gz"
MAPPING = DATA / "obfuscated" / "mapping.txt"
CLEAR_KEY = json.loads((DATA / "obfuscated" / "heapgen_s5_16mb_clear_histogram.json").read_text())


def clear_names(heap) -> dict[str, tuple[str, list[str], list[str]]]:
    """{clear class name: (the dump's name, field names, static names)} of the mapped classes."""
    with heap:
        return {name: (cls.obfuscated_name, [f.name for f in cls.fields()], [f.name for f in cls.statics()])
                for name in CLEAR_KEY["classes"] if (cls := heap.find_class(name)) is not None}


@pytest.fixture(scope="module")
def obfuscated_forms(tmp_path_factory) -> dict[str, object]:
    """The shared obfuscated dump as a pack and as a Tailor mini (names kept), written once."""
    folder = tmp_path_factory.mktemp("obfuscated")
    forms = {}
    for form, options in (("pack", dict(format="hprofkit", strip="none")), ("mini", dict(format="tailor"))):
        path = folder / f"app.{form}"
        hprofkit.encode(OBFUSCATED, path, threads=1, **options)
        forms[form] = path
    return forms


@pytest.mark.parametrize("form", ["pack", "mini"])
def test_a_pack_or_mini_opened_with_a_mapping_has_the_clear_names(obfuscated_forms, form):
    """open_heap, Dump.heap and the heap commands restore a pack or a mini and then apply the
    mapping: the clear names of the plain dump read through it, fields and statics included."""
    want = clear_names(hprofkit.open_heap(OBFUSCATED, mapping=MAPPING))
    assert set(want) == set(CLEAR_KEY["classes"]) and want["HeapGen$Listener"][1] == ["weight", "id", "owner"]
    path = obfuscated_forms[form]
    with hprofkit.open_heap(path) as plain:  # the names of the release build, without its mapping
        assert plain.find_class("HeapGen$Listener") is None and plain.find_class("b") is not None
    assert clear_names(hprofkit.open_heap(path, mapping=MAPPING)) == want
    assert clear_names(hprofkit.open_heap(path.read_bytes(), mapping=hprofkit.Mapping.read(MAPPING))) == want
    with hprofkit.open(path) as dump:
        assert clear_names(dump.heap(mapping=MAPPING)) == want
    proc = run("show", str(path), "HeapGen$Listener", "--mapping", str(MAPPING), "--json")
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert [c["class"] for c in json.loads(proc.stdout)["classes"]] == ["HeapGen$Listener"]
