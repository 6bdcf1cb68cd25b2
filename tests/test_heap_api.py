"""The heap API as the package's Python classes over the C types, without
traps (issue 23): every handle C makes is a hprofkit.HeapObject, as small as
the C struct; a class's retained figures, fields() and exclude mean one thing
each; module names do not hide their functions."""

from __future__ import annotations

import gc
import importlib
import inspect
import sys

import pytest

import hprofkit
from hprofkit import _hprof, match
from conftest import dump_path

ANDROID = "leakcanary__leak_service_binder.hprof"


@pytest.fixture(scope="module")
def heap():
    with hprofkit.open_heap(dump_path(ANDROID)) as h:
        yield h


def test_the_public_classes_are_python_classes_over_the_c_types(heap):
    assert hprofkit.Heap is not _hprof.Heap and issubclass(hprofkit.Heap, _hprof.Heap)
    assert hprofkit.HeapObject is not _hprof.HeapObject and issubclass(hprofkit.HeapObject, _hprof.HeapObject)
    assert issubclass(hprofkit.HeapClass, _hprof.HeapClass) and issubclass(hprofkit.HeapClass, hprofkit.HeapObject)
    assert type(heap) is hprofkit.Heap
    with hprofkit.open(dump_path(ANDROID)) as dump:
        assert type(dump.heap()) is hprofkit.Heap
    # What is written in Python is a plain method of the Python class, written once.
    for name in ("path_to_root", "paths_to_root", "find_leaks", "tables", "to_parquet"):
        assert inspect.isfunction(getattr(hprofkit.Heap, name)) and not hasattr(_hprof.Heap, name), name
    assert inspect.isfunction(hprofkit.HeapClass._repr_html_) and not hasattr(_hprof.HeapClass, "_repr_html_")


def test_every_handle_c_makes_is_of_the_package_classes(heap):
    string = heap.find_class("java.lang.String")
    obj = next(string.instances())
    leaky = next(heap.find_class("com.example.leakcanary.LeakyService").instances())
    handles = [string, obj, obj["value"], obj.class_, next(heap.objects()), heap.object(obj.id), heap.classes[0],
               string.superclass, *heap.classes_named("java.lang.String"), *string.subclasses(),
               *(r.target for r in leaky.references() if r.target is not None),
               *(r.source for r in leaky.referrers()), *(f.value for f in leaky.fields() if f.type == "object" and f.value is not None),
               *(f.declaring_class for f in string.fields()),
               *(r.object for r in heap.gc_roots[:50] if r.object is not None),
               *(o for o, _ in heap.top_retainers(5)), heap.dominator(obj),
               *(hop.target for hop in heap.path_to_root(leaky).hops),
               *heap.find_class("java.lang.Object[]").instances(), *string.instances(subclasses=True)]
    assert len(handles) > 1000
    assert all(isinstance(h, hprofkit.HeapObject) for h in handles)
    assert all(type(h) in (hprofkit.HeapObject, hprofkit.HeapClass) for h in handles)
    assert all(type(h) is hprofkit.HeapClass for h in handles if h.kind == "class")


def test_a_handle_is_still_the_c_struct(heap):
    """__slots__ = () and no collector header: an object handle is as small as the C type's
    struct, untracked by the collector, and freed by the C deallocator."""
    obj = next(heap.find_class("java.lang.String").instances())
    assert sys.getsizeof(obj) == _hprof.HeapObject.__basicsize__
    assert not gc.is_tracked(obj) and not hasattr(obj, "__dict__")
    with pytest.raises(TypeError):
        hprofkit.HeapObject()


def test_class_retained_figures_are_named_for_what_they_are(heap):
    """retained_size and retained_count are the class object's own, as for any object;
    the figures by class are instances_retained_size and instances_retained_count."""
    string = heap.find_class("java.lang.String")
    assert string.retained_size == heap.retained_size(string) < string.instances_retained_size
    assert string.retained_count == heap.retained_count(string) < string.instances_retained_count
    instances = list(string.instances())
    assert string.instances_retained_size <= sum(s.retained_size for s in instances)
    assert len(instances) <= string.instances_retained_count <= sum(s.retained_count for s in instances)


def test_fields_is_a_method_on_classes_and_objects(heap):
    string = heap.find_class("java.lang.String")
    declared = string.fields()
    assert type(declared) is list and [f.name for f in declared] == ["value", "hashCode", "offset", "count"]
    assert all(f.declaring_class == string and f.value is None for f in declared)
    obj = next(string.instances())
    assert [f.name for f in obj.fields()][:4] == ["value", "hashCode", "offset", "count"]
    # The property form of one release ago still answers, with a warning.
    with pytest.warns(DeprecationWarning, match=r"cls\.fields\(\)"):
        assert [f.name for f in string.fields] == [f.name for f in declared]
    with pytest.warns(DeprecationWarning):
        assert len(string.fields) == 4


def test_exclude_is_one_rule(heap):
    """None: the heap's defaults (ANDROID_DEFAULTS here); (): none; the same in
    path_to_root, paths_to_root and find_leaks."""
    assert hprofkit.leaks.default_exclude(heap) == match.ANDROID_DEFAULTS
    leaky = next(heap.find_class("com.example.leakcanary.LeakyService").instances())
    assert heap.path_to_root(leaky) == heap.path_to_root(leaky, exclude=None) == \
        heap.path_to_root(leaky, exclude=match.ANDROID_DEFAULTS)
    assert heap.path_to_root(leaky, exclude=()) is not None
    leaks = [(leak.fingerprint, leak.path) for leak in heap.find_leaks()]
    assert leaks and leaks == [(leak.fingerprint, leak.path) for leak in heap.find_leaks(exclude=match.ANDROID_DEFAULTS)]
    for name in ("path_to_root", "paths_to_root", "find_leaks"):
        assert inspect.signature(getattr(hprofkit.Heap, name)).parameters["exclude"].default is None, name


def test_module_names_do_not_hide_their_functions():
    assert callable(hprofkit.diff) and callable(hprofkit.batch)
    assert importlib.import_module("hprofkit.heapdiff").diff is hprofkit.diff
    assert importlib.import_module("hprofkit.batching").batch is hprofkit.batch
    for name in ("hprofkit.diff", "hprofkit.batch"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(name)


def test_star_import_leaves_pathlib_path_alone():
    namespace: dict[str, object] = {}
    exec("from pathlib import Path\nfrom hprofkit import *", namespace)
    import pathlib
    assert namespace["Path"] is pathlib.Path and namespace["HeapPath"] is hprofkit.HeapPath
    with pytest.warns(DeprecationWarning, match="HeapPath"):
        assert hprofkit.Path is hprofkit.HeapPath
