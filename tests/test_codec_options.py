"""What the codecs accept: options a format cannot honour raise the same way
from Encoder, encode() and the CLI; arguments of the wrong type raise
TypeError before anything is allocated; `--format hprof --strip` writes a
plain dump whose secrets are gone and which analyzers still read; and one
codec object shared by threads takes calls in turn instead of crashing."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections import Counter

import pytest

import hprofkit
from hprofkit import _hprof
from hprofkit._errors import HprofError
from conftest import dump_path, raw_bytes

LEAK = "leakcanary__leak_service_binder.hprof"

# ---- one check of the options, everywhere ---------------------------------------------

REFUSED = [
    (dict(format="tailor", strip="none"), ValueError, "cannot be honoured"),
    (dict(format="tailor", strip="int"), ValueError, "cannot be honoured"),
    (dict(format="tailor", drop_traces=True), ValueError, "drop_traces"),
    (dict(format="hprof", level=6), ValueError, "not compressed"),
    (dict(format="hprof", drop_traces=True), ValueError, "drop_traces"),
    (dict(format="hprofkit", strip="bytes"), ValueError, "unknown primitive type"),
    (dict(format="pack"), ValueError, "unknown format"),
    (dict(level=6.5), TypeError, "level must be an int"),
    (dict(level=10), ValueError, "level must be in 0..9"),
    (dict(app_only="no"), TypeError, "app_only must be True or False"),
    (dict(drop_traces=1), TypeError, "drop_traces must be True or False"),
    (dict(threads=-1), ValueError, "threads"),
]


@pytest.mark.parametrize("options, error, words", REFUSED, ids=[str(o) for o, _, _ in REFUSED])
def test_encoder_and_encode_refuse_alike(tmp_path, options, error, words):
    with pytest.raises(error, match=re.escape(words)):
        hprofkit.Encoder(**options)
    with pytest.raises(error, match=re.escape(words)):
        hprofkit.encode(dump_path(LEAK), tmp_path / "out", **options)
    assert not (tmp_path / "out").exists()
    with pytest.raises(error, match=re.escape(words)):
        hprofkit.encode_writer(open(tmp_path / "w", "wb"), closefd=True, **options)


def coded(codec, data: bytes) -> bytes:
    return codec.feed(data) + codec.flush()


def nonzero_arrays(data: bytes) -> Counter:
    """Primitive arrays holding a byte other than 0, by element type."""
    return Counter(s.elem_type for s in hprofkit.iter_subrecords(data) if s.tag == 0x23 and any(s.data))


def by_class(rows) -> Counter:
    return Counter({(r.name, r.class_id): r.instances for r in rows})


def test_what_each_format_accepts():
    """Each policy a format accepts is the one it writes: Tailor's own by name
    or by its types; for hprof, a strip list and app_only; for hprofkit, type
    names and numbers mixed, and drop_traces."""
    data = raw_bytes(LEAK)
    source = hprofkit.stats(data)
    before = nonzero_arrays(data)
    assert before[5] and before[8] and before[10]  # char[], byte[], int[] with contents

    mini = coded(hprofkit.Encoder("tailor", strip="char,byte"), data)
    assert mini == coded(hprofkit.Encoder("tailor", strip="default"), data)
    restored = coded(hprofkit.Decoder(), mini)
    assert by_class(hprofkit.stats(restored).histogram) == by_class(source.histogram)
    assert not nonzero_arrays(restored)[5] and not nonzero_arrays(restored)[8]

    shared = coded(hprofkit.Encoder("hprof", strip="all", app_only=True), data)
    assert by_class(hprofkit.stats(shared).histogram) == by_class(source.heaps["app"])  # hprof-conv -z's objects
    assert nonzero_arrays(shared) == Counter()

    pack = coded(hprofkit.Encoder("hprofkit", strip=["int", 11], level=0, drop_traces=True), data)
    restored = coded(hprofkit.Decoder(), pack)
    kept = nonzero_arrays(restored)
    assert not kept[10] and not kept[11] and kept == Counter({t: n for t, n in before.items() if t not in (10, 11)})
    assert {r.tag for r in hprofkit.iter_records(restored)} == {r.tag for r in hprofkit.iter_records(data)} - {4, 5}


@pytest.mark.parametrize("make", [
    lambda: hprofkit.Encoder(), lambda: hprofkit.Encoder("tailor"), lambda: hprofkit.Encoder("hprof"),
    lambda: hprofkit.Decoder(), lambda: hprofkit.Converter(), lambda: _hprof.PackEncoder(),
    lambda: _hprof.PackDecoder(), lambda: _hprof.TailorDecoder(), lambda: _hprof.TailorEncoder(),
], ids=["Encoder", "Encoder-tailor", "Encoder-hprof", "Decoder", "Converter", "PackEncoder", "PackDecoder",
        "TailorDecoder", "TailorEncoder"])
def test_feed_takes_bytes_like_objects_only(make):
    codec = make()
    for bad in (123, 2 ** 31, "text", None, 1.5):
        with pytest.raises(TypeError):
            codec.feed(bad)
    codec.feed(memoryview(b""))  # any bytes-like object, empty included
    codec.feed(bytearray())


def test_constructors_take_bools_and_ints_only():
    for make in (lambda: hprofkit.Converter(app_only="no"), lambda: hprofkit.Converter(to_standard=1),
                 lambda: _hprof.TailorEncoder(app_only=1), lambda: _hprof.PackEncoder(drop_traces="yes"),
                 lambda: _hprof.PackEncoder(level=6.5), lambda: hprofkit.Decoder(threads="2"),
                 lambda: hprofkit.Decoder(max_record=1.5)):
        with pytest.raises(TypeError):
            make()
    for make in (lambda: _hprof.PackEncoder(level=10), lambda: _hprof.PackEncoder(threads=0),
                 lambda: _hprof.PackEncoder(block_size=1 << 30), lambda: _hprof.PackDecoder(max_block=-1),
                 lambda: hprofkit.Converter(strip_types=1), lambda: hprofkit.Decoder(max_record=-1)):
        with pytest.raises(ValueError):
            make()


# ---- --format hprof --strip: a dump that can be shared -------------------------------------

SECRET = re.compile(rb"password|passwd|secret|token|auth|session|cookie|credential|private|https?://", re.I)


def secret_looking(path) -> int:
    """char[] and byte[] contents of the dump that look like secrets: words
    of credentials, or URLs."""
    count = 0
    with hprofkit.open(path) as dump:
        for sub in dump.subrecords():
            if sub.tag == 0x23 and sub.elem_type in (5, 8):
                data = bytes(sub.data)
                text = data.decode("utf-16-be", "replace").encode() if sub.elem_type == 5 else data
                count += SECRET.search(text) is not None
    return count


@pytest.mark.parametrize("how", ["cli", "encode", "Encoder"])
def test_format_hprof_strip_zeroes_contents_and_keeps_the_dump(tmp_path, how, oracle):
    src, out = dump_path(LEAK), tmp_path / "shared.hprof"
    if how == "cli":
        from hprofkit.cli import main
        assert main(["encode", "--format", "hprof", "--strip", "char,byte", "-i", str(src), "-o", str(out)]) == 0
    elif how == "encode":
        hprofkit.encode(src, out, format="hprof", strip="char,byte")
    else:
        encoder = hprofkit.Encoder("hprof", strip="char,byte")
        data = raw_bytes(LEAK)
        out.write_bytes(b"".join(encoder.feed(data[i:i + 100_000]) for i in range(0, len(data), 100_000)) +
                        encoder.flush())
    assert secret_looking(src) > 100
    assert secret_looking(out) == 0
    assert out.stat().st_size == src.stat().st_size  # lengths kept
    with hprofkit.open(src) as a, hprofkit.open(out) as b:
        assert a.stats().to_dict() == b.stats().to_dict()
        kept = [(s.tag, s.offset) for s in a.subrecords()]
        assert kept == [(s.tag, s.offset) for s in b.subrecords()]
    if how == "cli":  # an independent analyzer sees the same classes and instances
        assert oracle.counts_by_class(out) == oracle.counts_by_class(src)


# ---- one object, several threads -------------------------------------------------------------

def run_threads(calls, threads=4):
    """Runs the calls spread over threads started together; the exceptions raised."""
    errors, barrier = [], threading.Barrier(threads)

    def run(part):
        barrier.wait()
        for call in part:
            try:
                call()
            except Exception as exc:  # noqa: BLE001 - the test looks at them
                errors.append(exc)

    workers = [threading.Thread(target=run, args=(calls[i::threads],)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return errors


@pytest.mark.parametrize("make", [lambda: hprofkit.Converter(to_standard=False),
                                  lambda: hprofkit.Encoder("hprof")], ids=["Converter", "Encoder-hprof"])
def test_calls_from_threads_take_turns(make):
    """Whole records fed from four threads at once: each call runs alone, so
    the output holds every record whole, in some order (before, such calls
    interleaved inside the converter and wrote wrong bytes)."""
    data = raw_bytes(LEAK)
    records = list(hprofkit.iter_records(data))
    start = records[0].offset
    pieces = [data[r.offset:r.offset + 9 + r.length] for r in records[:-1]]  # HEAP_DUMP_END last
    for _ in range(3):
        codec, outs, lock = make(), [], threading.Lock()
        codec.feed(data[:start])

        def feed(piece):
            out = codec.feed(piece)
            with lock:
                outs.append(out)
        assert run_threads([lambda p=p: feed(p) for p in pieces]) == []
        outs.append(codec.feed(data[records[-1].offset:]))
        outs.append(codec.flush())
        assert sorted(o for o in outs if o) == sorted(p for p in pieces + [data[records[-1].offset:]])


def test_a_mini_decoder_shared_by_threads_does_not_crash():
    """Today's bug: one Decoder() on a bare mini, fed from two threads, crashed."""
    mini = hprofkit.Encoder("tailor", level=0)
    data = raw_bytes(LEAK)
    blob = mini.feed(data) + mini.flush()
    for _ in range(5):
        decoder = hprofkit.Decoder()
        decoder.feed(blob[:100])
        pieces = [blob[i:i + 5000] for i in range(100, len(blob), 5000)]
        errors = run_threads([lambda p=p: decoder.feed(p) for p in pieces])
        assert all(isinstance(e, (HprofError, ValueError)) for e in errors), errors


FEED_FROM_THREADS = """
import sys, threading, hprofkit
from hprofkit._errors import HprofError
data = open(sys.argv[1], "rb").read()
chunks = [data[i:i + 1_000_000] for i in range(0, len(data), 1_000_000)]
for _ in range(5):
    encoder, errors = hprofkit.Encoder(), []
    def feed(part):
        for chunk in part:
            try:
                encoder.feed(chunk)
            except Exception as exc:
                errors.append(exc)
    workers = [threading.Thread(target=feed, args=(chunks[i::4],)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    # chunks out of order are corrupt; after that error, feed() is refused
    assert all(isinstance(e, (HprofError, ValueError)) for e in errors), errors
print("ok")
"""


def test_a_pack_encoder_fed_by_threads_does_not_crash(tmp_path):
    """The issue's crash: one Encoder() (pack) fed 1 MB chunks from four
    threads killed the interpreter (SIGSEGV/SIGABRT three runs in three: the
    encoder kept a thread state on the object).  Run in a child process, so a
    crash fails this test instead of ending the run."""
    dump = tmp_path / "leak.hprof"
    dump.write_bytes(raw_bytes(LEAK))
    child = subprocess.run([sys.executable, "-c", FEED_FROM_THREADS, str(dump)], capture_output=True, text=True,
                           timeout=600)
    assert child.returncode == 0 and child.stdout.strip() == "ok", child.stderr[-2000:]
