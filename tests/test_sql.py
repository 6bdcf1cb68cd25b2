"""SQL that ports (issue #22): Perfetto's heap_graph_* views with Perfetto's documented queries run
unchanged, many dumps in one database (hprofkit.tables([...]), to_parquet, connect on the Parquet
files), the class_retained table against VisualVM's retained size by class, and primitive field
values in SQL.  The tables themselves, row for row against the API: test_tables.py."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import hprofkit
from hprofkit._waste import KINDS
from conftest import DATA, dump_path

JDK8 = "mat__oracle_jdk8_05_x64.hprof"
ART = "leakcanary__leak_service_binder.hprof"
PERFETTO_DUMPS = [JDK8, ART, "platform_art__RI.hprof", "mat__sun_jdk6_18_x32.hprof"]
ORACLE_DUMPS = ["heapdump__small_heap.bin", ART]

# Verbatim from Perfetto's docs (docs/data-sources/java-heap-profiler.md, "SQL"): the bytes used by
# class name, and the graphs' timestamps and processes.
PERFETTO_BYTES_BY_CLASS = """select c.name, sum(o.self_size)
       from heap_graph_object o join heap_graph_class c on (o.type_id = c.id)
       where reachable = 1 group by 1 order by 2 desc;"""
PERFETTO_GRAPHS = "select distinct graph_sample_ts, upid from heap_graph_object"

# The columns issue #22 names (Perfetto's, and what users query).
VIEW_COLUMNS = {
    "heap_graph_object": ["id", "type_id", "self_size", "native_size", "reachable", "heap_type", "root_type",
                          "root_distance", "retained_size", "dominator_id", "array_element_count", "value_string"],
    "heap_graph_reference": ["owner_id", "owned_id", "field_name", "field_type_name"],
    "heap_graph_class": ["id", "name", "deobfuscated_name", "superclass_id", "classloader_id", "kind", "location"],
}


def type_name(obj) -> str:
    """Perfetto's class name of an object: a class object's type is java.lang.Class<Name>."""
    return f"java.lang.Class<{obj.name}>" if obj.kind == "class" else obj.class_.name


def bytes_by_class(heap) -> dict[str, int]:
    """What Perfetto's first query answers, from the heap API."""
    out: dict[str, int] = {}
    for obj in heap.objects():
        if heap.retained_size(obj) > 0 and (obj.kind == "class" or obj.class_ is not None):
            out[type_name(obj)] = out.get(type_name(obj), 0) + obj.shallow_size
    return out


@pytest.fixture(scope="module", params=PERFETTO_DUMPS)
def heap_and_tables(request):
    with hprofkit.open_heap(dump_path(request.param)) as heap:
        yield heap, heap.tables()


def test_perfettos_bytes_by_class_runs_unchanged(heap_and_tables):
    heap, tables = heap_and_tables
    result = hprofkit.sql(tables, PERFETTO_BYTES_BY_CLASS)
    assert result.column_names == ["name", "sum(o.self_size)"]
    rows = [(r["name"], r["sum(o.self_size)"]) for r in result.to_pylist()]
    assert dict(rows) == bytes_by_class(heap)
    assert len(rows) == len(dict(rows))
    sizes = [size for _, size in rows]
    assert sizes == sorted(sizes, reverse=True)  # "order by 2 desc"


def test_perfettos_graph_query_runs_unchanged(heap_and_tables):
    _, tables = heap_and_tables
    # One heap: one graph, upid 0; its timestamp comes with the dumps table (many dumps, below).
    assert hprofkit.sql(tables, PERFETTO_GRAPHS).to_pylist() == [{"graph_sample_ts": None, "upid": 0}]


def test_views_have_the_issues_columns_and_answer_what_the_api_answers(heap_and_tables):
    heap, tables = heap_and_tables
    with hprofkit.connect(tables) as con:
        for view, wanted in VIEW_COLUMNS.items():
            described = {row[0]: row[1] for row in con.execute(f"describe {view}").fetchall()}
            assert set(wanted) <= set(described), (view, set(wanted) - set(described))
            for column, type_ in described.items():
                if column.endswith(("_id", "_size")) or column == "id":
                    assert type_ == "BIGINT", (view, column, type_)
        # Every object once, every reference once, every class (and each class object's type) once.
        n_objects, n_classes, n_refs = (con.execute(f"select count(*) from {v}").fetchone()[0]
                                        for v in ("heap_graph_object", "heap_graph_class", "heap_graph_reference"))
        assert n_objects == tables["objects"].num_rows
        assert n_classes == 2 * len(heap.classes)
        assert n_refs == tables["references"].num_rows
        # type_id joins every object whose class the dump names.
        joined = con.execute("""select count(*) from heap_graph_object o
                                join heap_graph_class c on o.type_id = c.id""").fetchone()[0]
        assert joined == sum(1 for o in heap.objects() if o.kind == "class" or o.class_ is not None)
        # root_type as Perfetto spells it (its HeapGraphRoot.Type: "ROOT_JAVA_FRAME"...), per object.
        got = dict(con.execute("select id, root_type from heap_graph_object where root_type is not null").fetchall())
        kinds = tables["objects"].select(["id", "root_type"]).to_pylist()
        assert got == {r["id"]: "ROOT_" + r["root_type"] for r in kinds if r["root_type"] is not None}
        assert "ROOT_STICKY_CLASS" in set(got.values())
        # A sample of objects, column by column against the API.
        ids = tables["objects"].column("id").to_pylist()
        for object_id in ids[::max(1, len(ids) // 50)]:
            obj = heap.object(object_id)
            row = con.execute("""select c.name, o.self_size, o.native_size, o.reachable, o.heap_type, o.retained_size,
                                        o.dominator_id, o.array_element_count, o.value_string
                                 from heap_graph_object o left join heap_graph_class c on o.type_id = c.id
                                 where o.id = ?""", [object_id]).fetchone()
            dominator = heap.dominator(obj)
            want_count = len(obj) if obj.kind == "primitive_array" else None
            assert row[:8] == ((type_name(obj) if obj.kind == "class" or obj.class_ is not None else None),
                               obj.shallow_size, 0, heap.retained_size(obj) > 0, obj.heap_name or "default",
                               heap.retained_size(obj), dominator.id if dominator is not None else None,
                               want_count), hex(object_id)
            refs = con.execute("""select owned_id, field_name from heap_graph_reference where owner_id = ?""",
                               [object_id]).fetchall()
            # field_name is Perfetto's "Declaring.field"; an array's "[i]" and "<loader>" as hprofkit names them;
            # field_type_name the class of the object referred to ("unknown" when it is absent).
            refs = con.execute("""select owned_id, field_name, field_type_name from heap_graph_reference
                                  where owner_id = ?""", [object_id]).fetchall()
            assert sorted((t, n.rsplit(".", 1)[-1], c) for t, n, c in refs) == sorted(
                (r.target_id, r.name, r.target.class_.name if r.target is not None and r.target.class_ is not None
                 else "unknown") for r in obj.references()), hex(object_id)


@pytest.mark.parametrize("name", ["heapgen_s5_16mb_obf.hprof.gz", "heapgen_s5_16mb_obf_android.hprof.gz"])
def test_a_mapped_class_has_perfettos_name_and_deobfuscated_name(name):
    # Perfetto's name is the trace's (obfuscated) one; deobfuscated_name the clear one where the
    # mapping renamed the class, else null; hprofkit's own classes table carries both.
    path = DATA / "obfuscated" / name
    with hprofkit.open_heap(path, mapping=DATA / "obfuscated" / "mapping.txt") as heap:
        tables = heap.tables()
        by_id = {c.class_id: c for c in heap.classes}
        own = tables["classes"].select(["id", "name", "obfuscated_name"]).to_pylist()
        assert {r["id"]: (r["name"], r["obfuscated_name"]) for r in own} == {
            i: (c.name, c.obfuscated_name) for i, c in by_id.items()}
        renamed = {i for i, c in by_id.items() if c.name != c.obfuscated_name}
        assert {by_id[i].name for i in renamed} >= {"HeapGen$Activity", "HeapGen$Node", "HeapGen$Listener"}
        with hprofkit.connect(tables) as con:
            rows = con.execute("select id, name, deobfuscated_name from heap_graph_class where id >= 0").fetchall()
            assert {i: (n, d) for i, n, d in rows} == {
                i: (c.obfuscated_name, c.name if i in renamed else None) for i, c in by_id.items()}
            activity = next(i for i in renamed if by_id[i].name == "HeapGen$Activity")
            assert con.execute("select name, deobfuscated_name from heap_graph_class where id = ?",
                               [~activity]).fetchone() == (f"java.lang.Class<{by_id[activity].obfuscated_name}>",
                                                           "java.lang.Class<HeapGen$Activity>")
            # Perfetto's usual spelling of a class's name gives the clear names.
            clear = dict(con.execute("""select ifnull(c.deobfuscated_name, c.name), sum(o.self_size)
                                        from heap_graph_object o join heap_graph_class c on o.type_id = c.id
                                        where reachable = 1 group by 1""").fetchall())
        assert clear == bytes_by_class(heap)
    with hprofkit.open_heap(path) as heap:  # no mapping: the dump's names, nothing deobfuscated
        tables = heap.tables(retained=False)
        assert tables["classes"].column("obfuscated_name").to_pylist() == tables["classes"].column("name").to_pylist()
        assert hprofkit.sql(tables, "select count(*) as n from heap_graph_class where deobfuscated_name is not null"
                            ).to_pylist() == [{"n": 0}]


def test_today_names_keep_working_beside_the_views():
    with hprofkit.open_heap(dump_path(ART)) as heap:
        tables = heap.tables(retained=False)
        old = hprofkit.sql(tables, 'select count(*) as n from "references"').to_pylist()
        assert old == hprofkit.sql(tables, "select count(*) as n from refs").to_pylist() == [
            {"n": tables["references"].num_rows}]
        # An ART dump's heaps keep their names; a HotSpot dump's heap is "default" (test_tables).
        heaps = hprofkit.sql(tables, "select distinct heap_type from heap_graph_object order by 1").to_pylist()
        assert [r["heap_type"] for r in heaps] == sorted({o.heap_name for o in heap.objects()})


def test_many_dumps_are_one_database(tmp_path):
    paths = [dump_path(JDK8), dump_path(ART)]
    heap_b = hprofkit.open_heap(paths[1])
    try:
        # Heaps and paths alike; a path is opened for its turn and closed.
        together = hprofkit.tables([paths[0], heap_b], fields=True)
        singles = [hprofkit.tables(paths[0], fields=True), heap_b.tables(fields=True)]
    finally:
        heap_b.close()
    assert set(together) == set(singles[0]) | {"dumps"}
    for name, table in singles[0].items():
        assert together[name].column_names == ["dump"] + table.column_names, name
        for number, single in enumerate(singles):
            mine = together[name].filter(together[name].column("dump").to_numpy() == number).drop(["dump"])
            # compared as text: a NaN field value equals nothing, itself included
            assert repr(mine.to_pylist()) == repr(single[name].to_pylist()), (name, number)
    stamps = []
    for path in paths:
        with hprofkit.open(path) as dump:
            stamps.append(dump.timestamp)
    dumps = together["dumps"].to_pylist()
    assert [d["dump"] for d in dumps] == [0, 1]
    assert [d["path"] for d in dumps] == [str(paths[0]), None]  # a heap passed in has no path of ours
    assert round(dumps[0]["timestamp"].timestamp() * 1000) == stamps[0]  # the header's ms since the epoch
    assert [d["objects"] for d in dumps] == [s["objects"].num_rows for s in singles]

    # Perfetto's queries over both: one graph per dump (upid = dump), classes joined within their dump.
    graphs = hprofkit.sql(together, PERFETTO_GRAPHS + " order by upid").to_pylist()
    assert [g["upid"] for g in graphs] == [0, 1]
    assert graphs[0]["graph_sample_ts"] == stamps[0] * 1_000_000  # Perfetto's ns
    merged: dict[str, int] = {}
    for single in singles:
        for row in hprofkit.sql(single, PERFETTO_BYTES_BY_CLASS).to_pylist():
            merged[row["name"]] = merged.get(row["name"], 0) + row["sum(o.self_size)"]
    both = {r["name"]: r["sum(o.self_size)"] for r in hprofkit.sql(together, PERFETTO_BYTES_BY_CLASS).to_pylist()}
    assert both == merged

    # The same as Parquet files, written one dump at a time through the output path.
    out = tmp_path / "fleet"
    assert hprofkit.to_parquet(paths, out, fields=True) == str(out)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{name}.parquet" for name in together)
    objects = pq.read_table(out / "objects.parquet")
    assert objects.column("dump").to_pylist() == together["objects"].column("dump").to_pylist()
    assert objects.column("id").to_pylist() == together["objects"].column("id").to_pylist()
    with hprofkit.connect(out) as con:
        from_files = dict(con.execute(PERFETTO_BYTES_BY_CLASS).fetchall())
        assert from_files == both
        assert con.execute("select count(*) from heap_graph_primitive").fetchone()[0] == together["fields"].num_rows
    with pytest.raises(FileExistsError):
        hprofkit.to_parquet(paths, out)
    with pytest.raises(ValueError, match="no dumps"):
        hprofkit.tables([])


@pytest.mark.parametrize("name", ORACLE_DUMPS)
def test_class_retained_is_visualvms_retained_size_by_class(name, oracle, plain_path):
    """The top classes by retained size, the obvious query, answer what VisualVM answers."""
    path = plain_path(name)
    with hprofkit.open_heap(path, semantics="visualvm") as heap:
        rows = hprofkit.sql(heap, """select c.name, c.id, r.objects, r.retained_size
                                     from class_retained r join classes c on c.id = r.class_id
                                     where r.objects > 0 order by r.retained_size desc""").to_pylist()
    got = {f"{r['name']}@{r['id']:x}": (r["objects"], r["retained_size"]) for r in rows}
    assert got == oracle.retained_by_class(path)


def test_fields_make_primitive_values_queryable():
    """fields=True: a primitive field is a row (int_value, or double_value for float and double),
    in the fields table and Perfetto's heap_graph_primitive."""
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        tables = heap.tables(fields=True, retained=False)
        got = {r["object_id"]: r["int_value"] for r in hprofkit.sql(tables, """
            select f.object_id, f.int_value from fields f join objects o on o.id = f.object_id
            join classes c on c.id = o.class_id
            where c.name = 'java.lang.Integer' and f.name = 'value'""").to_pylist()}
        integer = heap.find_class("java.lang.Integer")
        assert got == {obj.id: obj["value"] for obj in integer.instances()}
        assert len(got) == integer.instance_count > 0
        perfetto = hprofkit.sql(tables, """select field_set_id, int_value from heap_graph_primitive
                                           where field_name = 'java.lang.Integer.value'""").to_pylist()
        assert {r["field_set_id"]: r["int_value"] for r in perfetto} == got


# ---- the waste kinds as queries (#32): docs/waste.md's queries against heap.waste() ----------

WASTE_DOC = Path(__file__).resolve().parents[1] / "docs" / "waste.md"


def waste_queries() -> dict[str, str]:
    """docs/waste.md's SQL blocks by the kind their first line names ("-- kind: NAME ...")."""
    text = WASTE_DOC.read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```sql\n")[1:]]
    return {b.split("\n", 1)[0].split()[2]: b for b in blocks}


@pytest.mark.parametrize("name", ["mat__openjdk_jdk11_04_x64.hprof.gz", "leakcanary__leak_service_binder.hprof",
                                  "mat__oracle_jdk8_05_x64.hprof"])
def test_the_docs_waste_queries_find_what_waste_finds(name):
    queries = waste_queries()
    assert set(queries) == set(KINDS) - {"empty_collections", "small_collections", "sparse_collections"}
    with hprofkit.open_heap(dump_path(name)) as heap:
        w = heap.waste(unreachable=True)
        tables = heap.tables(retained=False, fields=True, max_chars=1 << 20)
        for kind, query in queries.items():
            params = [heap.reference_size] if "?" in query else None
            rows = hprofkit.sql(tables, query, params).to_pylist()
            found = {r["id"]: r["wasted_bytes"] for r in rows}
            expected = {i.object.id: i.wasted_bytes for i in w[kind].items}
            if kind == "duplicate_strings":
                assert set(found) == set(expected), kind
            else:
                assert found == expected, kind
