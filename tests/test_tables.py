"""heap.tables(), to_parquet() and hprofkit.sql() against the Python heap API, on every shared
dump with a heap: the tables hold exactly what the API answers (row for row, every column), and SQL
over them answers what the API answers.  Perfetto's views, many dumps and VisualVM's retained size
by class are in test_sql.py."""

from __future__ import annotations

import random
import subprocess
import sys
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import xxhash

import hprofkit
from conftest import INVENTORY, dump_path

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

HEAP_DUMPS = [e["file"] for e in INVENTORY if e["classes"] > 0]
JDK8 = "mat__oracle_jdk8_05_x64.hprof"
MAX_CHARS = 1024  # hprofkit._tables.MAX_CHARS: value_string keeps the first 1,024 chars by default
ELEMENT_SIZES = {"boolean[]": 1, "byte[]": 1, "char[]": 2, "short[]": 2, "int[]": 4, "float[]": 4, "long[]": 8,
                 "double[]": 8}
ROOT_RANK = {"STICKY_CLASS": 0, "JNI_GLOBAL": 1, "JNI_LOCAL": 2}


@pytest.fixture(scope="module", params=HEAP_DUMPS)
def heap_and_tables(request):
    with hprofkit.open_heap(dump_path(request.param)) as heap:
        yield heap, heap.tables(fields=True)


def test_every_dump_with_a_heap_is_covered():
    assert len(HEAP_DUMPS) >= 20


def payload(obj) -> bytes:
    """A primitive array's elements as the dump holds them."""
    return obj._payload(0, len(obj) * ELEMENT_SIZES[obj.class_.name])


def array_contents(heap, obj, data: bytes | None) -> dict:
    """array_nulls and array_refs_hash of an object array (its elements' ids, from its
    references: ids as the dump writes them, big-endian), array_trailing_zeros of a
    primitive array (from its bytes)."""
    row = {"array_nulls": None, "array_refs_hash": None, "array_trailing_zeros": None}
    if obj.kind == "object_array":
        targets = {r.name: r.target_id for r in obj.references()}
        ids = [targets.get(f"[{k}]", 0) for k in range(len(obj))]
        row["array_nulls"] = ids.count(0)
        row["array_refs_hash"] = signed(xxhash.xxh64_intdigest(b"".join(i.to_bytes(heap.id_size, "big") for i in ids)))
    elif data is not None:
        size = ELEMENT_SIZES[obj.class_.name]
        elements = [data[k:k + size] for k in range(0, len(data), size)]
        zeros = 0
        while zeros < len(elements) and not any(elements[len(elements) - 1 - zeros]):
            zeros += 1
        row["array_trailing_zeros"] = zeros
    return row


def signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def text_of(obj) -> tuple[str | None, int | None]:
    """value_string and string_length as the API gives them: the first MAX_CHARS UTF-16 units of
    obj.as_str(), an unpaired surrogate (one the cut leaves too) as U+FFFD."""
    if obj.kind != "instance" or obj.class_.name != "java.lang.String":
        return None, None
    text = obj.as_str()
    if text is None:
        return None, None
    units = text.encode("utf-16-le", "surrogatepass")
    return units[:2 * MAX_CHARS].decode("utf-16-le", "replace"), len(units) // 2


def root_types(heap) -> dict[int, str]:
    """Each rooted object's root_type: Perfetto's precedence, then the first in file order."""
    best: dict[int, tuple[int, int, str]] = {}
    for k, root in enumerate(heap.gc_roots):
        key = (ROOT_RANK.get(root.kind, 3), k, root.kind)
        if root.object_id not in best or key < best[root.object_id]:
            best[root.object_id] = key
    return {object_id: kind for object_id, (_, _, kind) in best.items()}


def kind_of(cls) -> str:
    """Perfetto's class kind (ART's class flags) from the API."""
    if cls.name.endswith("[]"):
        return "KIND_NOREFERENCES" if cls.name in ELEMENT_SIZES else "KIND_ARRAY"
    special = {"java.lang.String": "KIND_STRING", "java.lang.Class": "KIND_CLASS", "java.lang.DexCache": "KIND_DEXCACHE"}
    if cls.name in special:
        return special[cls.name]
    bases = {"java.lang.ref.SoftReference": "KIND_SOFT_REFERENCE", "java.lang.ref.WeakReference": "KIND_WEAK_REFERENCE",
             "java.lang.ref.FinalizerReference": "KIND_FINALIZER_REFERENCE",
             "java.lang.ref.FinalReference": "KIND_FINALIZER_REFERENCE",
             "java.lang.ref.PhantomReference": "KIND_PHANTOM_REFERENCE", "java.lang.ClassLoader": "KIND_CLASSLOADER"}
    walk = cls
    while walk is not None:
        if walk.name in bases:
            return bases[walk.name]
        walk = walk.superclass
    walk, has_refs = cls, False
    while walk is not None:
        has_refs |= any(f.type == "object" for f in walk.fields())
        walk = walk.superclass
    return "KIND_NORMAL" if has_refs else "KIND_NOREFERENCES"


def test_tables_hold_what_the_api_answers(heap_and_tables):
    heap, tables = heap_and_tables
    assert set(tables) == {"objects", "references", "classes", "roots", "class_retained", "fields"}
    for table in tables.values():
        table.validate(full=True)
    objects = tables["objects"]
    assert objects.column_names == ["id", "class_id", "kind", "shallow_size", "retained_size", "heap", "dominator_id",
                                    "reachable", "root_distance", "root_type", "array_length", "array_hash",
                                    "array_nulls", "array_refs_hash", "array_trailing_zeros", "string_length",
                                    "value_string"]
    roots = root_types(heap)
    expected: dict[str, list] = {name: [] for name in objects.column_names}
    references, fields = [], []
    for obj in heap.objects():
        dominator = heap.dominator(obj)
        text, length = text_of(obj)
        is_array = obj.kind in ("object_array", "primitive_array")
        data = payload(obj) if obj.kind == "primitive_array" else None
        row = {"id": obj.id, "class_id": obj.class_.class_id if obj.class_ is not None else None, "kind": obj.kind,
               "shallow_size": obj.shallow_size, "retained_size": heap.retained_size(obj),
               "heap": obj.heap_name or "default", "dominator_id": dominator.id if dominator is not None else None,
               "reachable": heap.retained_size(obj) > 0, "root_type": roots.get(obj.id),
               "array_length": len(obj) if is_array else None,
               "array_hash": signed(xxhash.xxh64_intdigest(data)) if data is not None else None,
               **array_contents(heap, obj, data),
               "string_length": length, "value_string": text}
        for name, value in row.items():
            expected[name].append(value)
        references += [(obj.id, r.target_id, r.name) for r in obj.references()]
        if obj.kind == "instance":
            fields += [(obj.id, f.name, f.type, f.value) for f in obj.fields() if f.type != "object"]
        elif obj.kind == "class":
            fields += [(obj.id, f.name, f.type, f.value) for f in obj.statics() if f.type != "object"]
    for name, values in expected.items():
        if name != "root_distance":
            assert objects.column(name).to_pylist() == values, name
    # root_distance: -1 exactly where unreachable (a sample is checked against paths below).
    assert [d == -1 for d in objects.column("root_distance").to_pylist()] == [not r for r in expected["reachable"]]

    refs = tables["references"]
    assert refs.column_names == ["source_id", "target_id", "name", "qualified_name"]
    got = list(zip(*(refs.column(c).to_pylist() for c in ("source_id", "target_id", "name"))))
    assert got == references
    # qualified_name: "Declaring.field" for fields and statics, the name itself for "[i]" and "<loader>".
    for source_id, name, qualified in random.Random(3).sample(
            list(zip(*(refs.column(c).to_pylist() for c in ("source_id", "name", "qualified_name")))),
            min(300, refs.num_rows)):
        if name is None or name.startswith("[") or name == "<loader>":
            assert qualified == name
            continue
        source = heap.object(source_id)
        owners = [source] if source.kind == "class" else []
        walk = source.class_ if source.kind != "class" else None
        while walk is not None:
            owners.append(walk)
            walk = walk.superclass
        declared = {f"{c.name}.{f.name}" for c in owners
                    for f in (c.statics() if c is source else c.fields())}
        assert qualified in declared, (hex(source_id), name, qualified)

    classes = tables["classes"].to_pylist()
    assert classes == [{"id": c.class_id, "name": c.name, "obfuscated_name": c.obfuscated_name,
                        "super_id": c.superclass.class_id if c.superclass is not None else None,
                        "loader_id": c.loader.id if c.loader is not None else None,
                        "instance_size": c.instance_size, "kind": kind_of(c)} for c in heap.classes]
    assert tables["roots"].to_pylist() == [{"object_id": r.object_id, "kind": r.kind} for r in heap.gc_roots]
    # class_retained is heap.retained_by("class") (the union rule, tree's), one row per class.
    groups = {g.key: g for g in heap.retained_by("class", unreachable=True)}  # the tables hold every object
    assert tables["class_retained"].to_pylist() == [
        {"class_id": c.class_id, "objects": c.instance_count, "shallow_size": sum(o.shallow_size for o in c.instances()),
         "retained_size": c.instances_retained_size} for c in heap.classes]
    assert [(r["objects"], r["shallow_size"], r["retained_size"]) for r in tables["class_retained"].to_pylist()] == [
        (groups[c].objects, groups[c].shallow_size, groups[c].retained_size) if c in groups else (0, 0, 0)
        for c in heap.classes]

    table = tables["fields"]
    nan = "NaN"  # compared as a word: NaN equals nothing, itself included
    values = [i if t != "float" and t != "double" else nan if d != d else d for i, d, t in
              zip(*(table.column(c).to_pylist() for c in ("int_value", "double_value", "type")))]
    api = [(oid, name, typ, (ord(v) if typ == "char" else int(v) if typ == "boolean" else nan if v != v else v))
           for oid, name, typ, v in fields]
    assert list(zip(table.column("object_id").to_pylist(), table.column("name").to_pylist(),
                    table.column("type").to_pylist(), values)) == api


def test_root_distance_is_the_length_of_the_path(heap_and_tables):
    heap, tables = heap_and_tables
    objects = tables["objects"]
    ids, distances = objects.column("id").to_pylist(), objects.column("root_distance").to_pylist()
    sample = random.Random(5).sample(range(len(ids)), min(60, len(ids)))
    for k in sample:
        path = heap.path_to_root(heap.object(ids[k]), exclude=())
        # references from the root object (a frame root's LOCAL hop is no reference)
        want = -1 if path is None else sum(1 for hop in path.hops if hop.ref_type not in ("ROOT", "LOCAL"))
        assert distances[k] == want, hex(ids[k])


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
        tables = heap.tables()
        objects = tables["objects"]
        assert objects.column("retained_size").to_pylist() == [heap.retained_size(o) for o in heap.objects()]
        doms = [heap.dominator(o) for o in heap.objects()]
        assert objects.column("dominator_id").to_pylist() == [d.id if d is not None else None for d in doms]
        assert tables["class_retained"].column("retained_size").to_pylist() == [
            c.instances_retained_size for c in heap.classes]
        lean = heap.tables(retained=False)
        for column in ("retained_size", "dominator_id", "reachable", "root_distance"):
            assert lean["objects"].column(column).null_count == objects.num_rows, column
        assert lean["class_retained"].column("retained_size").null_count == lean["class_retained"].num_rows
        # Everything else is the same.
        for table in ("references", "classes", "roots"):
            assert lean[table].equals(tables[table]), table
        keep = [c for c in objects.column_names if c not in ("retained_size", "dominator_id", "reachable",
                                                              "root_distance")]
        assert lean["objects"].select(keep).equals(objects.select(keep))


def test_max_chars_cuts_the_strings_and_says_so():
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        objects = heap.tables(max_chars=5, retained=False)["objects"]
        rows = [r for r in objects.select(["id", "string_length", "value_string"]).to_pylist()
                if r["value_string"] is not None]
        assert any(r["string_length"] > 5 for r in rows)
        for row in random.Random(2).sample(rows, 200):
            full = heap.object(row["id"]).as_str()
            assert row["string_length"] == len(full.encode("utf-16-le", "surrogatepass")) // 2
            assert row["value_string"] == full.encode("utf-16-le", "surrogatepass")[:10].decode("utf-16-le", "replace")
        with pytest.raises(ValueError, match="max_chars"):
            heap.tables(max_chars=1 << 21)


def test_types_are_int64_and_sql_arithmetic_stays_int64():
    """Issue #22: shallow_size was uint64 and retained_size int64, so retained - shallow became a
    HUGEINT in DuckDB and a float in pandas."""
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        tables = heap.tables()
        for name, table in tables.items():
            for field in table.schema:
                if field.name.endswith(("id", "size", "_length", "objects")):
                    assert field.type == pa.int64(), (name, field.name, field.type)
        out = hprofkit.sql(tables, """select retained_size - shallow_size as kept, sum(shallow_size) as total
                                      from objects group by 1 order by 1 desc limit 3""")
        assert out.schema.field("kept").type == pa.int64()
        assert out.schema.field("total").type == pa.int64()  # a sum of int64 sizes, not a DECIMAL(38)
        frame = out.to_pandas()
        assert str(frame["kept"].dtype) == "int64" and str(frame["total"].dtype) == "int64"
        heaps = hprofkit.sql(tables, "select distinct heap from objects").to_pylist()
        assert heaps == [{"heap": "default"}]  # a HotSpot dump: as stats() names its heap


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
    assert len(results) == 4 and all(r["references"].equals(results[0]["references"]) and
                                     r["objects"].equals(results[0]["objects"]) for r in results)
    tables = results[0]
    heap.close()
    # The tables own their buffers: still readable after the heap is gone.
    assert tables["objects"].num_rows > 10000 and tables["references"].column("name").null_count == 0
    assert tables["objects"].column("value_string").null_count < tables["objects"].num_rows
    with pytest.raises(ValueError, match="closed"):
        heap.tables()


def test_array_hashes_find_duplicate_arrays():
    """Duplicate primitive arrays in SQL: equal hashes are equal contents."""
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        groups = hprofkit.sql(heap, """
            select class_id, array_hash, list(id) as ids from objects
            where kind = 'primitive_array' group by 1, 2 having count(*) > 1""", retained=False).to_pylist()
        assert groups
        for group in groups:
            contents = {payload(heap.object(i)) for i in group["ids"]}
            assert len(contents) == 1


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
    assert "hprofkit.connect() needs duckdb: pip install 'hprofkit[tables]'" in lines[1]
