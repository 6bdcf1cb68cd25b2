"""The heap graph API on real dumps: look-ups, fields, strings, arrays,
references both ways, heap selection, size models, lifetimes, threads and
bad input.  (Agreement with VisualVM is test_heap_oracle.py.)"""

from __future__ import annotations

import gc
import struct
import threading

import pytest

import hprofkit
from conftest import dump_path, raw_bytes

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

JDK8 = "mat__oracle_jdk8_05_x64.hprof"
ANDROID = "leakcanary__leak_service_binder.hprof"
AGENT = "mat__sun_jdk6_31_hprofagent_compressedOops.hprof"  # two heap dumps


@pytest.fixture(scope="module")
def jdk8():
    with hprofkit.open_heap(dump_path(JDK8)) as heap:
        yield heap


@pytest.fixture(scope="module")
def android():
    with hprofkit.open_heap(dump_path(ANDROID)) as heap:
        yield heap


def test_counts_and_classes(jdk8):
    assert jdk8.object_count == sum(1 for _ in jdk8.objects())
    assert jdk8.class_count == len(jdk8.classes) > 100
    string = jdk8.find_class("java.lang.String")
    assert string.name == "java.lang.String" and string.kind == "class"
    assert string.class_name == "java.lang.Class" and string.class_ is jdk8.find_class("java.lang.Class")
    assert jdk8.classes_named("java.lang.String") == [string]
    assert jdk8.find_class("no.such.Class") is None and jdk8.classes_named("no.such.Class") == []
    assert jdk8.object(string.class_id) is string
    assert string.superclass is jdk8.find_class("java.lang.Object")
    assert string in jdk8.find_class("java.lang.Object").subclasses()
    assert sorted(f.name for f in string.fields()) == ["hash", "value"]
    assert sum(1 for _ in string.instances()) == string.instance_count > 0
    assert jdk8.find_class("char[]").instance_size is None
    with pytest.raises(KeyError):
        jdk8.object(12345)


def test_instances_with_subclasses(jdk8):
    thread = jdk8.find_class("java.lang.Thread")
    all_threads = list(thread.instances(subclasses=True))
    subclasses = set(thread.subclasses())
    assert len(all_threads) == thread.instance_count + sum(c.instance_count for c in subclasses)
    assert all(t.class_ is thread or t.class_ in subclasses for t in all_threads)


def test_fields_strings_and_values(jdk8):
    thread = next(jdk8.find_class("java.lang.Thread").instances())
    name = thread["name"]
    # JDK 8: Thread.name is a char[]
    assert name.kind == "primitive_array" and name.class_name == "char[]"
    assert thread["java.lang.Thread", "priority"] == thread["priority"]
    assert isinstance(thread["daemon"], bool)
    with pytest.raises(KeyError):
        thread["java.lang.Object", "priority"]
    with pytest.raises(KeyError):
        thread["noSuchField"]
    fields = thread.fields()
    assert [f.name for f in fields if f.declaring_class.name == "java.lang.Thread"][:2] == \
        [f.name for f in thread.class_.fields()][:2]
    assert {f.name: f.value for f in fields}["priority"] == thread["priority"]
    chars = "".join(name.tolist())
    view = name.values()
    assert view.format == ">H" and view.readonly and view.nbytes == 2 * len(name)
    assert "".join(chr(c) for c in struct.unpack(f">{len(name)}H", view)) == chars
    assert name[0] == chars[0] and name[-1] == chars[-1]
    with pytest.raises(IndexError):
        name[len(name)]
    strings = [s.as_str() for s in jdk8.find_class("java.lang.String").instances()]
    assert "java.lang.Thread" in strings or "main" in strings
    with pytest.raises(TypeError):
        thread.as_str()
    with pytest.raises(TypeError):
        len(thread)


def test_references_and_referrers(jdk8):
    for obj in list(jdk8.objects())[::97]:
        for ref in obj.references():
            assert ref.target_id != 0
            if ref.target is not None:
                assert any(r.source == obj and r.name == ref.name for r in ref.target.referrers())


def test_gc_roots(jdk8):
    roots = jdk8.gc_roots
    kinds = {r.kind for r in roots}
    assert {"STICKY_CLASS", "THREAD_OBJECT", "JAVA_FRAME"} <= kinds
    frames = [r for r in roots if r.kind == "JAVA_FRAME"]
    assert all(r.frame is not None and r.frame.depth >= 0 for r in frames)
    assert any(r.frame.method is not None for r in frames)
    for root in roots[:50]:
        if root.object is not None:
            assert root.kind in root.object.root_kinds


def test_android_heaps_and_strings(android):
    names = {o.heap_name for o in android.objects()}
    assert {"app", "zygote"} <= names
    assert android.find_class("java.lang.String").instance_count > 1000
    texts = [s.as_str() for s in android.find_class("java.lang.String").instances()]
    assert sum(t is not None for t in texts) == len(texts)


def test_repr_and_html(jdk8):
    string = next(jdk8.find_class("java.lang.String").instances())
    assert repr(string) == f"<String@0x{string.id:x} {string.shallow_size} B>"
    cls = jdk8.find_class("java.lang.Thread")
    assert repr(cls).startswith("<class java.lang.Thread@0x")
    html = cls._repr_html_()
    assert "java.lang.Thread" in html and "priority" in html


def test_two_heap_dumps_and_size_models(tmp_path):
    path = dump_path(AGENT)
    with hprofkit.open_heap(path) as first, hprofkit.open_heap(path, heap_dump=1) as second:
        assert first.heap_dump_count == 2
        assert first.object_count != second.object_count
    with pytest.raises(IndexError):
        hprofkit.open_heap(path, heap_dump=2)
    with pytest.raises(ValueError):
        hprofkit.open_heap(path, size_model="guess")
    with hprofkit.open(dump_path(JDK8)) as dump:
        compressed, plain = dump.heap(), dump.heap(size_model="uncompressed")
    assert compressed.reference_size == 4 and plain.reference_size == 8
    # Uncompressed: HotSpot's field bytes plus a two-id header, padded.
    string = plain.find_class("java.lang.String")
    assert string.instance_size == 8 * ((16 + 8 + 4 + 7) // 8)


def test_handles_outlive_their_heap():
    heap = hprofkit.open_heap(dump_path(JDK8))
    obj = next(heap.find_class("java.lang.String").instances())
    cls = heap.find_class("java.lang.String")
    arr = obj["value"]
    view = arr.values()
    heap.close()
    assert heap.closed
    for call in (lambda: obj.id, lambda: obj.fields(), lambda: cls.name, lambda: heap.object_count,
                 lambda: arr.values(), lambda: obj.referrers()):
        with pytest.raises(ValueError):
            call()
    assert bytes(view)  # an exported view keeps the mapping until released
    view.release()
    del heap
    gc.collect()
    with pytest.raises(ValueError):
        obj.as_str()


def test_threads_share_a_heap(jdk8):
    string = jdk8.find_class("java.lang.String")
    expected = [s.as_str() for s in string.instances()]
    results, errors = [], []

    def work():
        try:
            results.append([s.as_str() for s in string.instances()])
            next(string.instances()).referrers()
            jdk8.dangling_count
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(r == expected for r in results)


def test_bad_input_is_an_hprof_error(tmp_path):
    data = raw_bytes(JDK8)
    cut = tmp_path / "cut.hprof"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(hprofkit.HprofError) as info:
        hprofkit.open_heap(cut)
    assert info.value.offset is not None
    empty = tmp_path / "none.hprof"
    empty.write_bytes(raw_bytes("py-hprof__basic_reads.hprof"))
    with pytest.raises(IndexError):
        hprofkit.open_heap(empty)


def test_show_command(capsys):
    from hprofkit.cli import main
    path = str(dump_path(JDK8))
    assert main(["show", path, "java.lang.Thread", "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("class java.lang.Thread\n") and "statics (" in out and "referrers (" in out
    with hprofkit.open_heap(path) as heap:
        thread = next(heap.find_class("java.lang.Thread").instances())
        thread_id, thread_repr = thread.id, repr(thread)
    assert main(["show", path, hex(thread_id)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(thread_repr) and "priority" in out and "references (" in out
    assert main(["show", path, "0x7"]) == 1
    assert main(["show", path, "no.Such"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.startswith("hprofkit: error: ")
