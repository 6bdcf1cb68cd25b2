"""heap.tables(), heap.to_parquet() and hprofkit.sql() against the Python heap API, on every shared
dump with a heap: the tables hold exactly what the API answers, and SQL over them answers what the
API answers (instance counts per class, referrers of objects)."""

from __future__ import annotations

import random
import subprocess
import sys
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hprofkit
from conftest import INVENTORY, dump_path

HEAP_DUMPS = [e["file"] for e in INVENTORY if e["classes"] > 0]
JDK8 = "mat__oracle_jdk8_05_x64.hprof"


@pytest.fixture(scope="module", params=HEAP_DUMPS)
def heap_and_tables(request):
    with hprofkit.open_heap(dump_path(request.param)) as heap:
        yield heap, heap.tables()


def test_every_dump_with_a_heap_is_covered():
    assert len(HEAP_DUMPS) >= 20


def test_tables_hold_what_the_api_answers(heap_and_tables):
    heap, tables = heap_and_tables
    assert set(tables) == {"objects", "references", "classes", "roots", "class_retained"}
    for table in tables.values():
        table.validate(full=True)
    objects = tables["objects"]
    assert objects.column_names == ["id", "class_id", "kind", "shallow_size", "retained_size", "heap", "dominator_id"]
    expected = {"id": [], "class_id": [], "kind": [], "shallow_size": [], "heap": [], "retained_size": [],
                "dominator_id": []}
    references = []
    for obj in heap.objects():
        expected["id"].append(obj.id)
        expected["class_id"].append(obj.class_.class_id if obj.class_ is not None else None)
        expected["kind"].append(obj.kind)
        expected["shallow_size"].append(obj.shallow_size)
        expected["heap"].append(obj.heap_name)
        expected["retained_size"].append(heap.retained_size(obj))
        dominator = heap.dominator(obj)
        expected["dominator_id"].append(dominator.id if dominator is not None else None)
        references += [(obj.id, r.target_id, r.name) for r in obj.references()]
    for name, values in expected.items():
        assert objects.column(name).to_pylist() == values, name
    refs = tables["references"]
    assert refs.column_names == ["source_id", "target_id", "name"]
    assert list(zip(*(refs.column(c).to_pylist() for c in refs.column_names))) == references
    classes = tables["classes"].to_pylist()
    assert classes == [{"id": c.class_id, "name": c.name,
                        "super_id": c.superclass.class_id if c.superclass is not None else None,
                        "loader_id": c.loader.id if c.loader is not None else None,
                        "instance_size": c.instance_size} for c in heap.classes]
    assert tables["roots"].to_pylist() == [{"object_id": r.object_id, "kind": r.kind} for r in heap.gc_roots]
    groups = {g.key: g for g in heap.retained_by("class")}
    assert tables["class_retained"].to_pylist() == [
        {"class_id": c.class_id, "objects": c.instance_count,
         "shallow_size": groups[c].shallow_size if c in groups else 0, "retained_size": c.instances_retained_size}
        for c in heap.classes]


def test_sql_answers_what_the_api_answers(heap_and_tables):
    heap, tables = heap_and_tables
    counts = hprofkit.sql(tables, """
        select c.id, count(o.id) as n from classes c
        left join objects o on o.class_id = c.id and o.kind <> 'class'
        group by c.id""").to_pylist()
    assert {row["id"]: row["n"] for row in counts} == {c.class_id: c.instance_count for c in heap.classes}

    # Retained sizes: the top retainers (ties by id, as the API orders them).
    top = hprofkit.sql(tables, "select id, retained_size from objects order by retained_size desc, id limit 10")
    assert [(r["id"], r["retained_size"]) for r in top.to_pylist()] == [
        (obj.id, size) for obj, size in heap.top_retainers(10)]

    # Referrers: the most referenced objects and a seeded sample of the others.
    top = hprofkit.sql(tables, '''select target_id from "references" r join objects o on o.id = r.target_id
                                  group by 1 order by count(*) desc, 1 limit 5''')
    ids = top.column("target_id").to_pylist()
    ids += random.Random(14).sample(tables["objects"].column("id").to_pylist(), 20)
    for object_id in ids:
        got = hprofkit.sql(tables, "select source_id, name from refs where target_id = ?", [object_id]).to_pylist()
        want = [{"source_id": r.source_id, "name": r.name} for r in heap.object(object_id).referrers()]
        key = lambda row: (row["source_id"], str(row["name"]))  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key), hex(object_id)


@pytest.mark.parametrize("name", [JDK8, "leakcanary__leak_service_binder.hprof"])
def test_retained_columns_follow_the_semantics(name):
    with hprofkit.open_heap(dump_path(name), semantics="visualvm") as heap:
        objects = heap.tables()["objects"]
        assert objects.column("retained_size").to_pylist() == [heap.retained_size(o) for o in heap.objects()]
        doms = [heap.dominator(o) for o in heap.objects()]
        assert objects.column("dominator_id").to_pylist() == [d.id if d is not None else None for d in doms]
        lean = heap.tables(retained=False)
        assert lean["objects"].column("retained_size").null_count == lean["objects"].num_rows == objects.num_rows
        # class_retained without the dominators: the same counts, retained_size null.
        full = heap.tables()["class_retained"]
        assert lean["class_retained"].column("retained_size").null_count == full.num_rows == len(heap.classes)
        assert lean["class_retained"].drop(["retained_size"]).equals(full.drop(["retained_size"]))
        assert full.column("retained_size").to_pylist() == [c.instances_retained_size for c in heap.classes]


def test_sql_on_a_heap_and_parameters():
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        string = heap.find_class("java.lang.String")
        out = hprofkit.sql(heap, "select count(*) as n from objects where class_id = $id", {"id": string.class_id})
        assert out.to_pylist() == [{"n": string.instance_count}]
        assert isinstance(out, pa.Table)


def test_to_parquet_round_trip_and_atomicity(tmp_path):
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        tables = heap.tables()
        target = tmp_path / "jdk8"
        assert heap.to_parquet(target) == str(target)
        assert sorted(p.name for p in target.iterdir()) == [
            "class_retained.parquet", "classes.parquet", "objects.parquet", "references.parquet", "roots.parquet"]
        for name, table in tables.items():
            assert pq.read_table(target / f"{name}.parquet").to_pylist() == table.to_pylist(), name
        with pytest.raises(FileExistsError):
            heap.to_parquet(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jdk8"]  # no temporary directory left


def test_tables_from_threads_and_after_close():
    heap = hprofkit.open_heap(dump_path(JDK8))
    results = []
    threads = [threading.Thread(target=lambda: results.append(heap.tables())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(r["references"].equals(results[0]["references"]) for r in results)
    tables = results[0]
    heap.close()
    # The tables own their buffers: still readable after the heap is gone.
    assert tables["objects"].num_rows > 10000 and tables["references"].column("name").null_count == 0
    with pytest.raises(ValueError, match="closed"):
        heap.tables()


def test_missing_pyarrow_says_what_to_install():
    code = ("import sys; sys.modules['pyarrow'] = None; sys.modules['duckdb'] = None\n"
            "import hprofkit\n"
            f"heap = hprofkit.open_heap({str(dump_path(JDK8))!r})\n"
            "for call in (heap.tables, lambda: hprofkit.sql(heap, 'select 1')):\n"
            "    try:\n"
            "        call()\n"
            "    except ImportError as exc:\n"
            "        print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert len(lines) == 2
    assert "heap.tables() needs pyarrow: pip install 'hprofkit[tables]'" in lines[0]
    assert "hprofkit.sql() needs duckdb: pip install 'hprofkit[tables]'" in lines[1]
