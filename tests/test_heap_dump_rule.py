"""Issue #19, wrong results and errors: which heap dump a record belongs to is
one rule everywhere (dump.heap_dumps, stats(heap_dump=N), open_heap(heap_dump=N)
and dump.subrecords(heap_dump=N) agree on crafted files that mix HEAP_DUMP
records with runs of segments, with and without HEAP_DUMP_END), and a file
without the heap dump asked for is a NoHeapDumpError."""

from __future__ import annotations

import io
import pickle

import pytest

import hprofkit
from conftest import dump_path
from hprofkit.writer import HprofWriter

OBJECT, THING = 0x100, 0x108
OBJECT_KINDS = ("INSTANCE_DUMP", "OBJECT_ARRAY_DUMP", "PRIMITIVE_ARRAY_DUMP", "CLASS_DUMP")


def crafted(pattern: str) -> bytes:
    """A dump of heap records: 'S' a HEAP_DUMP_SEGMENT, 'D' a HEAP_DUMP, 'E' a
    HEAP_DUMP_END.  Classes are in the first heap record; each heap record
    holds an instance and a byte[] whose ids tell the record."""
    out = io.BytesIO()
    w = HprofWriter(out, version="1.0.2", id_size=4)
    w.load_class(OBJECT, "java/lang/Object")
    w.load_class(THING, "a/Thing")
    for i, c in enumerate(pattern):
        if c == "E":
            w.heap_dump_end()
            continue
        with w.heap_dump(segment=c == "S") as h:
            if i == 0:
                h.class_dump(OBJECT)
                h.class_dump(THING, super_id=OBJECT, fields=[("n", "int")])
            h.instance(0x1000 + 16 * i, THING, values=[i])
            h.primitive_array(0x1008 + 16 * i, "byte", bytes([i]))
            h.root_unknown(0x1000 + 16 * i)
    w.close()
    return out.getvalue()


# "SSD": a run of segments without its END, then a HEAP_DUMP: the Dump saw 2
# heap dumps, the Heap 1 (the HEAP_DUMP's objects as heap dump 0); "SDSD": 4 and 2.
PATTERNS = {"SSD": 2, "SDSD": 4, "SSE": 1, "SESE": 2, "SSESD": 3, "DD": 2, "DSSE": 2, "DSS": 2, "SSDSSE": 3}


@pytest.mark.parametrize("pattern, dumps", PATTERNS.items())
def test_every_reader_numbers_heap_dumps_alike(pattern, dumps, tmp_path):
    path = tmp_path / f"{pattern}.hprof"
    path.write_bytes(crafted(pattern))
    with hprofkit.open(path) as dump:
        assert len(dump.heap_dumps) == dumps
        for n in range(dumps):
            subs = [s for s in dump.subrecords(heap_dump=n) if s.name in OBJECT_KINDS]
            ids = {s.id for s in subs}
            stats = dump.stats(heap_dump=n)
            with hprofkit.open_heap(path, heap_dump=n) as heap:
                assert heap.heap_dump_count == dumps
                assert {o.id for o in heap.objects()} == ids, f"heap dump {n} of {pattern}"
                assert heap.object_count == stats.instances + stats.arrays + stats.classes == len(ids)
            with dump.heap(heap_dump=n) as heap:
                assert {o.id for o in heap.objects()} == ids
        with pytest.raises(hprofkit.NoHeapDumpError, match=f"no heap dump {dumps}: the file holds {dumps}"):
            hprofkit.open_heap(path, heap_dump=dumps)
        with pytest.raises(hprofkit.NoHeapDumpError, match=f"no heap dump {dumps}: the file holds {dumps}"):
            dump.stats(heap_dump=dumps)


BASIC_READS = dump_path("py-hprof__basic_reads.hprof")  # a valid dump without a heap dump


def test_a_dump_without_a_heap_dump_is_an_hprof_error():
    """open_heap raised a bare IndexError ("internal error" on the command line)."""
    with pytest.raises(hprofkit.NoHeapDumpError) as caught:
        hprofkit.open_heap(BASIC_READS)
    exc = caught.value
    assert isinstance(exc, hprofkit.HprofError) and isinstance(exc, IndexError)  # code catching IndexError still does
    assert str(exc) == "the file holds no heap dump" and exc.offset == 31 and exc.tag is None
    assert str(pickle.loads(pickle.dumps(exc))) == str(exc)
    with hprofkit.open(BASIC_READS) as dump:
        with pytest.raises(hprofkit.NoHeapDumpError, match="the file holds no heap dump"):
            dump.heap()
        with pytest.raises(hprofkit.NoHeapDumpError, match="the file holds no heap dump"):
            dump.stats(heap_dump=0)
