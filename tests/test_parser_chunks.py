"""The push parser gives the same structure for any split of the input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import hprofkit
from conftest import raw_bytes

SMALL = raw_bytes("platform_art__RI.hprof")[:300_000]  # cut: the tail ends in a truncation
WHOLE = raw_bytes("mat__sun_jdk6_31_hprofagent_compressedOops.hprof")


def parse(data: bytes, cuts: list[int]):
    parser = hprofkit.Parser()
    events, last = [], 0
    for cut in sorted(set(cuts)):
        events += parser.feed(data[last:cut])
        last = cut
    events += parser.feed(data[last:])
    try:
        events += parser.finish()
        error = None
    except hprofkit.HprofError as exc:
        error = (type(exc), exc.offset, exc.tag)
    return events, error


ONE_SHOT = parse(WHOLE, [])
ONE_SHOT_SMALL = parse(SMALL, [])


def test_one_shot_matches_the_iterators():
    events, error = ONE_SHOT
    assert error is None and events[-1] == ("end",)
    records = [(r.tag, r.offset, r.length) for r in hprofkit.iter_records(WHOLE)]
    assert [e[1:] for e in events if e[0] == "record"] == records
    subs = [(s.tag, s.offset, s.length, s.id) for s in hprofkit.iter_subrecords(WHOLE)]
    assert [e[1:5] for e in events if e[0] == "subrecord"] == subs


@settings(max_examples=60)
@given(st.lists(st.integers(min_value=0, max_value=len(WHOLE)), max_size=40))
def test_any_split_gives_the_same_structure(cuts):
    assert parse(WHOLE, cuts) == ONE_SHOT


@settings(max_examples=60)
@given(st.lists(st.integers(min_value=0, max_value=len(SMALL)), max_size=40))
def test_any_split_gives_the_same_truncation(cuts):
    events, error = parse(SMALL, cuts)
    assert error is not None and error[0] is hprofkit.TruncatedError
    assert (events, error) == ONE_SHOT_SMALL


def test_one_byte_feeds():
    data = WHOLE[:60_000]
    parser = hprofkit.Parser()
    events = []
    for i in range(len(data)):
        events += parser.feed(data[i:i + 1])
    with pytest.raises(hprofkit.TruncatedError):
        parser.finish()
    assert events == parse(data, [])[0]


def test_feed_after_finish_is_misuse():
    parser = hprofkit.Parser()
    parser.feed(WHOLE)
    parser.finish()
    assert parser.eof
    with pytest.raises(ValueError):
        parser.feed(b"x")
