"""The class histogram agrees with an independent parser: VisualVM's heap
library (../shared/tools/oracle), on the real dumps and on fresh HeapGen dumps.
Its counts and bytes per class are those of its class lines, which
test_heap_oracle checks heap.classes against: the same (cached) answer, no
second JVM run per dump."""

from __future__ import annotations

import pytest

import hprofkit
from conftest import INVENTORY

# Dumps the oracle can open: all but the synthetic one-record file.
ORACLE_DUMPS = [e["file"] for e in INVENTORY if e["instances"]]


def ours_by_class(stats: hprofkit.Stats) -> dict:
    out = {}
    for row in stats.histogram:
        key = (row.name, row.class_id)
        prev = out.get(key, (0, 0))
        out[key] = (prev[0] + row.instances, prev[1] + row.shallow_bytes)
    return out


def compare(ours: dict, theirs: dict) -> None:
    """Instances and shallow bytes per class: sizes follow VisualVM's model,
    compressed oops guessed on 64-bit dumps included."""
    assert {k: v[0] for k, v in ours.items()} == {k: v[0] for k, v in theirs.items()}
    assert {k: v[1] for k, v in ours.items()} == {k: v[1] for k, v in theirs.items()}


@pytest.mark.parametrize("name", ORACLE_DUMPS)
def test_histogram_equals_oracle(name, oracle, plain_path):
    path = plain_path(name)
    stats = hprofkit.stats(path)
    compare(ours_by_class(stats), oracle.counts_by_class(path))


def test_histogram_equals_oracle_on_fresh_heapgen_dumps(heapgen_dumps, oracle):
    for path in heapgen_dumps:
        stats = hprofkit.stats(path)
        compare(ours_by_class(stats), oracle.counts_by_class(path))


def test_histogram_equals_oracle_on_androidized_dump(android_heapgen_dump, oracle):
    stats = hprofkit.stats(android_heapgen_dump)
    compare(ours_by_class(stats), oracle.counts_by_class(android_heapgen_dump))


def test_array_names_follow_analyzers(plain_path):
    hotspot = {r.name for r in hprofkit.stats(plain_path("mat__sun_jdk6_18_x64.hprof")).histogram}
    android = {r.name for r in hprofkit.stats(plain_path("leakcanary__leak_service_binder.hprof")).histogram}
    for names in (hotspot, android):
        assert {"java.lang.String", "byte[]" if names is android else "char[]", "java.lang.Object[]"} <= names
        assert not any("/" in n or n.startswith("[") for n in names)
