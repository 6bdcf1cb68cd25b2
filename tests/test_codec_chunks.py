"""The stream codecs give the same output for any split of their input."""

from __future__ import annotations

import zlib

from hypothesis import given, settings, strategies as st

import hprofkit
from conftest import HPROF_DIR, TAILOR_DIR, feed_in_pieces

SOURCE = (HPROF_DIR / "leakcanary__leak_service_binder.hprof").read_bytes()
MINI = zlib.decompress((TAILOR_DIR / "leak_service_binder.mini").read_bytes())
SMALL = (TAILOR_DIR / "art_like.hprof").read_bytes()


cuts = lambda data: st.lists(st.integers(0, len(data)), max_size=50)
EXPECTED_MINI = feed_in_pieces(hprofkit.Encoder("tailor", level=0), SOURCE, [])
EXPECTED_RESTORED = feed_in_pieces(hprofkit.Decoder(), MINI, [])
EXPECTED_CONVERTED = feed_in_pieces(hprofkit.Converter(app_only=True), SOURCE, [])


@settings(max_examples=40)
@given(cuts(SOURCE))
def test_encoder_split_invariance(c):
    assert feed_in_pieces(hprofkit.Encoder("tailor", level=0), SOURCE, c) == EXPECTED_MINI


@settings(max_examples=40)
@given(cuts(MINI))
def test_decoder_split_invariance(c):
    assert feed_in_pieces(hprofkit.Decoder(), MINI, c) == EXPECTED_RESTORED


@settings(max_examples=40)
@given(cuts(SOURCE))
def test_converter_split_invariance(c):
    assert feed_in_pieces(hprofkit.Converter(app_only=True), SOURCE, c) == EXPECTED_CONVERTED


def test_one_byte_feeds_everywhere():
    mini = feed_in_pieces(hprofkit.Encoder("tailor", level=0), SMALL, [])
    assert feed_in_pieces(hprofkit.Encoder("tailor", level=0), SMALL, range(len(SMALL))) == mini
    restored = feed_in_pieces(hprofkit.Decoder(), mini, [])
    assert feed_in_pieces(hprofkit.Decoder(), mini, range(len(mini))) == restored
    compressed = feed_in_pieces(hprofkit.Encoder("tailor", level=6), SMALL, [])
    assert feed_in_pieces(hprofkit.Decoder(), compressed, range(len(compressed))) == restored


def test_misuse_after_flush():
    for codec in (hprofkit.Encoder("tailor"), hprofkit.Decoder(), hprofkit.Converter()):
        data = SOURCE if not isinstance(codec, hprofkit.Decoder) else MINI
        feed_in_pieces(codec, data, [])
        assert codec.eof
        try:
            codec.feed(b"x")
        except ValueError:
            continue
        raise AssertionError(f"{type(codec).__name__} accepted data after flush()")
