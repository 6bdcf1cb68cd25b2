"""Zero-copy iteration: records and sub-records point into the mapping, hold
its export while alive, and decode every field."""

from __future__ import annotations

import gc
import mmap
import struct

import pytest

import hprofkit
from conftest import dump_path, raw_bytes


def test_record_bodies_are_views_into_the_mapping():
    with hprofkit.open(dump_path("mat__sun_jdk6_32bit.hprof")) as dump:
        data = dump.buffer
        for record in dump.records():
            body = record.body
            assert isinstance(body, memoryview) and body.obj is data  # no copy: a view of the mmap
            assert data[record.offset] == record.tag
            assert struct.unpack_from(">I", data, record.offset + 5)[0] == record.length == len(body)
            assert body.tobytes() == data[record.offset + 9: record.offset + 9 + record.length]
            del body
        del record


def test_closing_the_mmap_under_a_live_iterator_raises_buffer_error():
    dump = hprofkit.open(dump_path("platform_art__RI.hprof"))
    it = dump.subrecords()
    first = next(it)
    with pytest.raises(BufferError):
        dump.buffer.close()
    del first
    with pytest.raises(BufferError):  # the iterator itself still holds the export
        dump.buffer.close()
    del it
    gc.collect()
    dump.buffer.close()
    dump.close()
    assert dump.closed


def test_records_outlive_the_dump_that_made_them():
    path = dump_path("platform_art__RI.hprof")
    with hprofkit.open(path) as dump:
        records = list(dump.records())
        subs = dump.subrecords()
        first_sub = next(subs)
    assert dump.closed
    data = path.read_bytes()
    # The mapping stays valid for as long as they live: bytes, and iteration, still work.
    assert records[-1].body.tobytes() == data[records[-1].offset + 9:]
    assert sum(1 for _ in subs) > 1000
    assert first_sub.raw.tobytes() == data[first_sub.offset:first_sub.offset + first_sub.length]


def test_exhausted_iterator_releases_the_export():
    dump = hprofkit.open(dump_path("platform_art__RI.hprof"))
    it = dump.records()
    count = sum(1 for _ in it)
    assert count > 0
    dump.close()  # the exhausted iterator no longer pins the mapping


def test_iter_records_over_any_buffer_and_record_subrecords():
    data = raw_bytes("leakcanary__leak_service_binder.hprof")
    records = list(hprofkit.iter_records(data))
    assert records[0].offset == 31 and records[-1].name == "HEAP_DUMP_END"
    from_records = [(s.offset, s.tag) for r in records if r.tag == 0x1C for s in r.subrecords()]
    whole = [(s.offset, s.tag) for s in hprofkit.iter_subrecords(bytearray(data))]
    assert from_records == whole
    with pytest.raises(TypeError):
        records[0].subrecords()  # a STRING holds no sub-records


def test_subrecord_fields_decode_real_bytes():
    data = raw_bytes("mat__sun_jdk6_18_x64.hprof")
    id_size = 8
    seen = set()
    for s in hprofkit.iter_subrecords(data):
        raw = s.raw.tobytes()
        assert raw[0] == s.tag and len(raw) == s.length
        if s.tag == 0x21:
            assert s.id == int.from_bytes(raw[1:9], "big")
            assert s.stack_serial == int.from_bytes(raw[9:13], "big")
            assert s.class_id == int.from_bytes(raw[13:21], "big")
            assert s.count == int.from_bytes(raw[21:25], "big") == len(s.data)
        elif s.tag == 0x22:
            assert s.count == int.from_bytes(raw[13:17], "big")
            assert s.class_id == int.from_bytes(raw[17:25], "big")
            assert len(s.data) == s.count * id_size and s.elem_type == 2
        elif s.tag == 0x23:
            assert s.elem_type == raw[17] and s.count == int.from_bytes(raw[13:17], "big")
        elif s.tag == 0x20:
            assert s.super_id == int.from_bytes(raw[13:21], "big")
            assert s.instance_size == int.from_bytes(raw[61:65], "big")
            fields = s.fields
            assert all(t in (2, 4, 5, 6, 7, 8, 9, 10, 11) for _, t in fields)
            for name_id, type_code, value in s.statics:
                assert type_code != 2 or isinstance(value, int)
        elif s.tag == 0x08:
            assert s.thread_serial == int.from_bytes(raw[9:13], "big")
            assert s.stack_serial == int.from_bytes(raw[13:17], "big")
        seen.add(s.tag)
        if s.tag not in (0x21, 0x22, 0x23):
            assert s.data is None
    assert {0x20, 0x21, 0x22, 0x23, 0x08} <= seen


def test_class_dump_tables_reconstruct_instance_layout():
    """Instance field bytes equal the sum of the class chain's field sizes."""
    data = raw_bytes("mat__sun_jdk6_32bit.hprof")
    sizes = {2: 4, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
    classes = {}
    instances = []
    for s in hprofkit.iter_subrecords(data):
        if s.tag == 0x20:
            classes[s.id] = (s.super_id, sum(sizes[t] for _, t in s.fields))
        elif s.tag == 0x21 and len(instances) < 2000:
            instances.append((s.class_id, s.count))
    for class_id, count in instances:
        total, c = 0, class_id
        while c:
            c, own = classes[c]
            total += own
        assert total == count


def test_repr_and_names():
    data = raw_bytes("platform_art__RI.hprof")
    record = next(hprofkit.iter_records(data))
    assert "Record" in repr(record) and record.name in repr(record)
    sub = next(hprofkit.iter_subrecords(data))
    assert sub.name in repr(sub)


def test_mmap_input_is_accepted_directly(tmp_path):
    path = dump_path("mat__sun_jdk5_64bit.hprof")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        n = sum(1 for _ in hprofkit.iter_records(m))
        stats = hprofkit.stats(m)
        assert n == sum(t.count for t in stats.records.values())
