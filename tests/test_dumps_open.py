"""Every real dump opens, and what hprofkit counts equals INVENTORY.json."""

from __future__ import annotations

from collections import Counter

import pytest

import hprofkit
from conftest import INVENTORY, dump_path

NAMES = [e["file"] for e in INVENTORY]


def hexkeys(counter) -> dict[str, int]:
    return {f"0x{tag:02X}": n for tag, n in counter.items()}


@pytest.mark.parametrize("entry", INVENTORY, ids=NAMES)
def test_header_matches_inventory(entry):
    with hprofkit.open(dump_path(entry["file"])) as dump:
        assert dump.magic == entry["version"]
        assert dump.id_size == entry["id_size"]
        assert dump.timestamp == entry["timestamp_ms"]
        assert dump.size == (entry["decompressed_size"] or entry["size"])
        assert dump.compression == {"gz": "gzip", "bz2": "bzip2"}.get(entry["compression"], entry["compression"])


@pytest.mark.parametrize("entry", INVENTORY, ids=NAMES)
def test_stats_counts_match_inventory(entry):
    stats = hprofkit.stats(dump_path(entry["file"]))
    assert {f"0x{t:02X}": c for t, (c, _) in stats.record_tags.items()} == entry["top_level_records"]
    # Sub-records are tallied per heap dump: those of every dump add up to the file's.
    subrecords: Counter = Counter()
    with hprofkit.open(dump_path(entry["file"])) as dump:
        for index in range(len(dump.heap_dumps)):
            subrecords.update({t: c for t, (c, _) in dump.stats(heap_dump=index).subrecord_tags.items()})
        # Record bytes (heads included) add up to the file minus its header.
        assert sum(t.bytes for t in stats.records.values()) == dump.size - dump.header_length
    assert hexkeys(subrecords) == entry["heap_subrecords"]
    assert sum(d.instances for d in stats.heap_dumps) == entry["instances"]
    assert sum(d.classes for d in stats.heap_dumps) == entry["classes"]
    assert stats.complete


@pytest.mark.parametrize("entry", INVENTORY, ids=NAMES)
def test_iterators_match_inventory(entry):
    with hprofkit.open(dump_path(entry["file"])) as dump:
        records = Counter(r.tag for r in dump.records())
        subrecords = Counter(s.tag for s in dump.subrecords())
    assert hexkeys(records) == entry["top_level_records"]
    assert hexkeys(subrecords) == entry["heap_subrecords"]


def test_android_heap_switches_are_seen():
    entry = next(e for e in INVENTORY if e["file"].startswith("leakcanary"))
    with hprofkit.open(dump_path(entry["file"])) as dump:
        heaps = Counter(s.heap for s in dump.subrecords() if s.tag == 0x21)
        info_heaps = [s.heap_id for s in dump.subrecords() if s.tag == 0xFE]
    assert len(info_heaps) == entry["android_heap_dump_info"]
    assert set(info_heaps) <= {0x41, 0x49, 0x5A}
    # Instances live in named heaps, and the app heap holds some of them.
    assert set(heaps) <= {0, 0x41, 0x49, 0x5A} and heaps[0x41] > 0
    assert sum(heaps.values()) == entry["instances"]
