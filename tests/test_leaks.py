"""Leak traces (hprofkit.leaks): finders, statuses, suspects, fingerprints,
matchers and the `leaks` command, on LeakCanary's dump and on small dumps
whose leaks are known by construction (tests/leaky_heap.py)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

import hprofkit
from hprofkit import leaks, match
from conftest import HPROF_CONV, HPROF_DIR
from leaky_heap import LeakyHeap, android_app, watch

SERVICE_BINDER = HPROF_DIR / "leakcanary__leak_service_binder.hprof"
# LeakCanary's own test (ServiceBinderLeakTest.realBinderLeak) watches this key in that dump.
SERVICE_BINDER_KEY = "b3abfae6-2c53-42e1-b8c1-96b0558dbeae"
BINDER_ROOTS = match.root_class("android.os.Binder", description="binder stubs are held by native code")


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def scenario(path, sdk: int = 28) -> dict[str, int]:
    """The leaks of an app, each on a path of known shape; returns the ids by role."""
    heap = android_app(sdk=sdk)
    ids, watches = {}, []

    def array_list(*items) -> int:
        return heap.new("java.util.ArrayList", elementData=heap.array(items), size=len(items))

    # A destroyed activity kept by the Application (a singleton: not leaking).
    ids["act1"] = heap.new("com.example.MainActivity", mDestroyed=True)
    ids["app"] = heap.new("com.example.App", leaked=array_list(ids["act1"]))
    heap.set_static("com.example.Leaks", "sApp", "object", ids["app"])
    watch(heap, watches, ids["act1"], "k-activity")
    # A destroyed activity in a static, holding a watched presenter.
    ids["presenter"] = heap.new("com.example.Presenter")
    ids["act2"] = heap.new("com.example.MainActivity", mDestroyed=True, presenters=array_list(ids["presenter"]))
    heap.set_static("com.example.Leaks", "sActivity", "object", ids["act2"])
    watch(heap, watches, ids["presenter"], "k-presenter")
    # A destroyed activity kept only through InputMethodManager.mServedView (a known library leak).
    ids["act3"] = heap.new("com.example.MainActivity", mDestroyed=True)
    ids["view"] = heap.new("android.view.View", mContext=ids["act3"], mAttachInfo=heap.new("com.example.Node"),
                           mWindowAttachCount=1)
    ids["imm"] = heap.new("android.view.inputmethod.InputMethodManager", mServedView=ids["view"])
    heap.set_static("android.view.inputmethod.InputMethodManager", "sInstance", "object", ids["imm"])
    watch(heap, watches, ids["act3"], "k-imm")
    # A cycle (n1 <-> n2, n3 -> n3) in a static; n2 is watched.
    ids["n1"], ids["n2"], ids["n3"] = (heap.new("com.example.Node") for _ in range(3))
    heap.set(ids["n1"], next=ids["n2"])
    heap.set(ids["n2"], next=ids["n1"])
    heap.set(ids["n3"], next=ids["n3"])
    heap.set_static("com.example.Leaks", "sLoop", "object", ids["n1"])
    watch(heap, watches, ids["n2"], "k-cycle")
    # Not leaks: a cleared reference, an unreachable cycle, an object only its
    # KeyedWeakReference reaches, a watch still in its grace period.
    watch(heap, watches, None, "k-null")
    ids["island"] = heap.new("com.example.Node")
    heap.set(ids["island"], next=heap.new("com.example.Node", next=ids["island"]))
    watch(heap, watches, ids["island"], "k-island")
    watch(heap, watches, heap.new("com.example.Presenter"), "k-weak")
    watch(heap, watches, ids["app"], "k-pending", retained=-1)
    heap.set_static("com.example.Leaks", "sWatches", "object", array_list(*watches))
    heap.write(path)
    return ids


@pytest.fixture(scope="module")
def app_dump(tmp_path_factory):
    path = tmp_path_factory.mktemp("leaks") / "app.hprof"
    return path, scenario(path)


@pytest.fixture(scope="module")
def app_leaks(app_dump):
    path, ids = app_dump
    heap = hprofkit.open_heap(path)
    return heap, ids, heap.find_leaks()


def by_key(found) -> dict:
    return {leak.key or f"object {leak.object.id:#x}": leak for leak in found}


def trace(leak) -> list[tuple[str, str]]:
    return [(node.class_name, node.status) for node in leak.nodes]


# ---- the finders ---------------------------------------------------------------

def test_finders_report_each_strongly_reachable_candidate_once(app_leaks):
    heap, ids, found = app_leaks
    assert [leak.object.id for leak in found] == [ids["act1"], ids["act3"], ids["n2"], ids["act2"]]
    assert [leak.key for leak in found] == ["k-activity", "k-imm", "k-cycle", None]


def test_keyed_weak_reference_finder_skips_cleared_and_pending_watches(app_dump):
    path, ids = app_dump
    with hprofkit.open_heap(path) as heap:
        found = {c.key: c.object.id for c in leaks.KEYED_WEAK_REFERENCE(heap)}
        assert "k-null" not in found and "k-pending" not in found
        assert found["k-island"] == ids["island"]          # a candidate, but no strong path: not a leak
        reasons = {c.reason for c in leaks.KEYED_WEAK_REFERENCE(heap)}
        assert "ObjectWatcher was watching this because watching k-cycle" in reasons


def test_destroyed_activity_finder(app_dump):
    path, ids = app_dump
    with hprofkit.open_heap(path) as heap:
        found = [(c.object.id, c.reason) for c in leaks.DESTROYED_ACTIVITY(heap)]
    assert found == [(ids[name], "Activity#mDestroyed is true") for name in ("act1", "act2", "act3")]


def test_detached_view_and_destroyed_window_finders(tmp_path):
    heap = android_app()
    heap.cls("android.view.Window", fields=[("mDestroyed", "boolean")])
    heap.cls("com.example.Holder", statics={"sViews": ("object", None), "sWindows": ("object", None)})
    activity = heap.new("com.example.MainActivity", mDestroyed=True)
    themed = heap.new("android.content.ContextWrapper", mBase=activity)
    detached = heap.new("android.view.View", mContext=themed)                   # a root, detached: found
    child = heap.new("android.view.View", mContext=themed, mParent=detached)    # not a root
    attached = heap.new("android.view.View", mContext=activity, mAttachInfo=heap.new("com.example.Node"))
    live = heap.new("android.view.View", mContext=heap.new("com.example.MainActivity"))
    heap.set_static("com.example.Holder", "sViews", "object", heap.array([detached, child, attached, live]))
    window, open_window = heap.new("android.view.Window", mDestroyed=True), heap.new("android.view.Window")
    heap.set_static("com.example.Holder", "sWindows", "object", heap.array([window, open_window]))
    heap.write(tmp_path / "components.hprof")
    with hprofkit.open_heap(tmp_path / "components.hprof") as h:
        assert [c.object.id for c in leaks.DETACHED_VIEW(h)] == [detached]
        assert [c.object.id for c in leaks.DESTROYED_WINDOW(h)] == [window]
        found = h.find_leaks()
        # The detached view is a leaf of the search: the activity's path goes through the attached view.
        assert [leak.object.id for leak in found] == [activity, detached, window]
        assert [n.object.id for n in found[0].nodes[-2:]] == [attached, activity]
        assert [leak.nodes[-1].reason for leak in found] == [
            "Activity#mDestroyed is true", "View.mContext references a destroyed activity", "Window#mDestroyed is true"]


# ---- statuses, suspects, fingerprints -------------------------------------------

def test_application_leak_statuses_and_suspects(app_leaks):
    heap, ids, found = app_leaks
    leak = by_key(found)["k-activity"]
    assert leak.root_kind == "STICKY_CLASS" and not leak.library
    assert trace(leak) == [("com.example.Leaks", "NOT_LEAKING"), ("com.example.App", "NOT_LEAKING"),
                           ("java.util.ArrayList", "UNKNOWN"), ("java.lang.Object[]", "UNKNOWN"),
                           ("com.example.MainActivity", "LEAKING")]
    assert [n.reason for n in leak.nodes] == [
        "App↓ is not leaking and a class is never leaking", "Application is a singleton", "", "",
        "ObjectWatcher was watching this because watching k-activity and Activity#mDestroyed is true"]
    assert [n.reference.name for n in leak.nodes if n.suspect] == ["leaked", "elementData", "[0]"]
    assert leak.fingerprint == sha1("com.example.App" "leaked" "java.util.ArrayList" "elementData"
                                    "java.lang.Object[]" "[x]")


def test_nodes_below_the_first_leaking_one_are_leaking(app_dump):
    path, ids = app_dump
    heap = hprofkit.open_heap(path)
    (leak,) = [leak for leak in heap.find_leaks(finders=(leaks.KEYED_WEAK_REFERENCE,)) if leak.key == "k-presenter"]
    # With only the KeyedWeakReference finder the destroyed activity is no leaf: the path crosses it.
    assert trace(leak) == [("com.example.Leaks", "NOT_LEAKING"), ("com.example.MainActivity", "LEAKING"),
                           ("java.util.ArrayList", "LEAKING"), ("java.lang.Object[]", "LEAKING"),
                           ("com.example.Presenter", "LEAKING")]
    assert [n.reason for n in leak.nodes[2:4]] == ["MainActivity↑ is leaking"] * 2
    assert [n.reference.name for n in leak.nodes if n.suspect] == ["sActivity"]
    assert leak.fingerprint == sha1("com.example.Leaks" "sActivity")


def test_cycle_and_rendering(app_leaks):
    heap, ids, found = app_leaks
    leak = by_key(found)["k-cycle"]
    size = leak.retained_size
    assert leak.retained_count == 1 and size == heap.object(ids["n2"]).shallow_size
    assert str(leak) == "\n".join([
        f"Signature: {sha1('com.example.Leaks' 'sLoop' 'com.example.Node' 'next')}",
        "┬───",
        "│ GC Root: System class",
        "│",
        "├─ com.example.Leaks class",
        "│    Leaking: NO (a class is never leaking)",
        "│    ↓ static Leaks.sLoop",
        "│                   ~~~~~",
        "├─ com.example.Node instance",
        "│    Leaking: UNKNOWN",
        "│    ↓ Node.next",
        "│           ~~~~",
        "╰→ com.example.Node instance",
        "     Leaking: YES (ObjectWatcher was watching this because watching k-cycle)",
        f"     Retaining {size} B in 1 objects",
        "     key = k-cycle",
    ])
    assert json.loads(json.dumps(leak.to_dict()))["trace"][1]["reference"] == {
        "type": "INSTANCE_FIELD", "owner": "com.example.Node", "name": "next", "suspect": True}


def test_library_leak_matches_a_known_framework_leak(app_leaks):
    heap, ids, found = app_leaks
    leak = by_key(found)["k-imm"]
    assert leak.library
    assert (leak.pattern.class_name, leak.pattern.name) == ("android.view.inputmethod.InputMethodManager",
                                                            "mServedView")
    assert "InputMethodManager" in leak.description and str(leak).startswith("Library leak match: ")
    assert trace(leak) == [("android.view.inputmethod.InputMethodManager", "NOT_LEAKING"),
                           ("android.view.inputmethod.InputMethodManager", "NOT_LEAKING"),
                           ("android.view.View", "LEAKING"), ("com.example.MainActivity", "LEAKING")]
    assert leak.nodes[2].reason == "View.mContext references a destroyed activity"
    assert leak.fingerprint == sha1("android.view.inputmethod.InputMethodManager" "mServedView")


def test_sdk_gating(tmp_path):
    # InputMethodManager.mServedView is a known leak up to SDK 33 only.
    scenario(tmp_path / "sdk34.hprof", sdk=34)
    with hprofkit.open_heap(tmp_path / "sdk34.hprof") as heap:
        assert leaks.android_build(heap) == (34, "Google")
        leak = by_key(heap.find_leaks())["k-imm"]
    assert not leak.library and leak.pattern is None


def test_ignored_and_library_matchers_change_the_outcome(app_dump):
    path, ids = app_dump
    with hprofkit.open_heap(path) as heap:
        ignored = heap.find_leaks(exclude=match.ANDROID_DEFAULTS + (match.instance_field("com.example.App", "leaked"),))
        assert ids["act1"] not in [leak.object.id for leak in ignored]
        library = match.instance_field("com.example.App", "leaked", kind="library", description="our cache")
        leak = by_key(heap.find_leaks(exclude=match.ANDROID_DEFAULTS + (library,)))["k-activity"]
        assert leak.library and leak.description == "our cache"
        # Without matchers a referent is still no strong reference: the graph never holds one.
        weak = by_key(heap.find_leaks(exclude=()))
        assert "k-weak" not in weak and "k-island" not in weak and "k-cycle" in weak
        with pytest.raises(TypeError):
            heap.find_leaks(exclude=("java.lang.ref.Reference.referent",))


def test_custom_finder(app_dump):
    path, ids = app_dump
    def presenters(h):
        yield from h.find_class("com.example.Presenter").instances()
    found = hprofkit.open_heap(path).find_leaks(finders=(presenters,))
    # The watched presenter (through the destroyed activity); the other is only weakly reachable.
    assert [(leak.object.id, leak.key) for leak in found] == [(ids["presenter"], None)]


def test_hostile_field_types_and_cycles(tmp_path):
    # Fields the finders read, declared with the wrong types; a wrapper wrapping itself; a
    # parent cycle between two views on the path.
    heap = LeakyHeap()
    heap.cls("leakcanary.KeyedWeakReference", "java.lang.ref.WeakReference",
             fields=[("key", "int"), ("description", "int"), ("retainedUptimeMillis", "object")])
    heap.cls("android.content.ContextWrapper", fields=[("mBase", "object")])
    heap.cls("android.app.Activity", "android.content.ContextWrapper",
             fields=[("mDestroyed", "int"), ("mFinished", "object")])
    heap.cls("android.view.View", fields=[("mContext", "object"), ("mParent", "object"), ("mAttachInfo", "int"),
                                          ("mWindowAttachCount", "object"), ("mTag", "object")])
    heap.cls("androidx.fragment.app.Fragment", fields=[("mFragmentManager", "object"), ("mTag", "int")])
    heap.cls("com.example.Holder", statics={"sView": ("object", None), "sFragment": ("object", None),
                                            "sWatches": ("object", None)})
    wrapper = heap.new("android.content.ContextWrapper")
    heap.set(wrapper, mBase=wrapper)
    activity = heap.new("android.app.Activity", mDestroyed=1, mFinished=wrapper, mBase=wrapper)
    watched = heap.new("java.lang.Object")
    v1, v2 = heap.new("android.view.View", mContext=wrapper, mTag=watched), heap.new("android.view.View")
    heap.set(v1, mParent=v2)
    heap.set(v2, mParent=v1, mContext=activity)
    heap.set_static("com.example.Holder", "sView", "object", v1)
    fragment = heap.new("androidx.fragment.app.Fragment", mTag=7)
    heap.set_static("com.example.Holder", "sFragment", "object", fragment)
    ref = heap.new("leakcanary.KeyedWeakReference", referent=watched, key=5, description=6,
                   retainedUptimeMillis=activity)
    heap.set_static("com.example.Holder", "sWatches", "object", heap.array([ref]))
    heap.write(tmp_path / "hostile.hprof")
    found = hprofkit.open_heap(tmp_path / "hostile.hprof").find_leaks()
    assert [(leak.object.id, leak.key) for leak in found] == [(watched, None), (fragment, None)]
    assert trace(found[0])[-2:] == [("android.view.View", "UNKNOWN"), ("java.lang.Object", "LEAKING")]
    assert found[1].nodes[-1].reason == "Fragment.mFragmentManager is null"
    with pytest.raises(TypeError):
        hprofkit.open_heap(tmp_path / "hostile.hprof").find_leaks(finders=(lambda h: [42],))


# ---- LeakCanary's dump ----------------------------------------------------------

def service_binder_leak(path, exclude=match.ANDROID_DEFAULTS + (BINDER_ROOTS,)):
    # Leaks hold handles: the heap stays open while they live.
    return hprofkit.open_heap(path).find_leaks(exclude=exclude)


def test_service_binder_leak_as_leakcanary_reports_it():
    # LeakCanary's ServiceBinderLeakTest: with binder roots excluded, the leak is found, is not an
    # excluded (library) leak, and its first element is a static field of the LeakyService class.
    (leak,) = service_binder_leak(SERVICE_BINDER)
    assert leak.key == SERVICE_BINDER_KEY and not leak.library
    assert leak.object.class_name == "com.example.leakcanary.LeakyService"
    assert leak.root_kind == "STICKY_CLASS"
    first = leak.nodes[0]
    assert first.object.kind == "class" and first.class_name == "com.example.leakcanary.LeakyService"
    assert first.reference.ref_type == "STATIC_FIELD" and first.status == "NOT_LEAKING"
    assert leak.nodes[-1].status == "LEAKING" and leak.nodes[-1].labels[0] == f"key = {SERVICE_BINDER_KEY}"
    assert leak.retained_size >= leak.object.shallow_size and leak.retained_count >= 1


def test_service_binder_without_exclusions_is_held_by_a_native_binder_root():
    (leak,) = service_binder_leak(SERVICE_BINDER, exclude=None)
    assert leak.key == SERVICE_BINDER_KEY
    assert leak.root_kind == "JNI_GLOBAL"
    assert "android.os.Binder" in {c.name for c in _superclasses(leak.nodes[0].object.class_)}


def _superclasses(cls):
    while cls is not None:
        yield cls
        cls = cls.superclass


def test_fingerprint_survives_pack_round_trip_and_hprof_conv(tmp_path):
    (original,) = service_binder_leak(SERVICE_BINDER)
    # The default pack drops char[] contents (the key's text), not what the fingerprint hashes.
    packed, restored = tmp_path / "binder.hpk", tmp_path / "restored.hprof"
    hprofkit.encode(str(SERVICE_BINDER), str(packed))
    hprofkit.decode(str(packed), str(restored))
    converted = tmp_path / "converted.hprof"
    subprocess.run([HPROF_CONV, str(SERVICE_BINDER), str(converted)], check=True, capture_output=True)
    ours = tmp_path / "ours.hprof"
    hprofkit.convert(str(SERVICE_BINDER), str(ours))
    for copy in (restored, converted, ours):
        found = service_binder_leak(copy)
        assert [leak.fingerprint for leak in found] == [original.fingerprint], copy.name
        assert [(n.class_name, n.status) for n in found[0].nodes] == trace(original), copy.name


# ---- ANDROID_DEFAULTS -----------------------------------------------------------

def test_android_defaults_are_data():
    library = [m for m in match.ANDROID_DEFAULTS if m.kind == "library"]
    assert len(library) >= 80 and all(m.description for m in match.ANDROID_DEFAULTS)
    assert set(match.JDK_DEFAULTS) <= set(match.ANDROID_DEFAULTS)
    assert len(set(match.ANDROID_DEFAULTS)) == len(match.ANDROID_DEFAULTS)
    for m in match.ANDROID_DEFAULTS:
        assert m.pattern in match.PATTERNS and (m.sdk is None or len(m.sdk) == 2)
    samsung_19 = match.applicable(match.ANDROID_DEFAULTS, 19, "SAMSUNG")
    pixel_19 = match.applicable(match.ANDROID_DEFAULTS, 19, "Google")
    spen = ("static_field", "com.samsung.android.smartclip.SpenGestureManager", "mContext")
    assert spen in {m[:3] for m in samsung_19} and spen not in {m[:3] for m in pixel_19}
    assert len(pixel_19) < len(samsung_19) < len(match.applicable(match.ANDROID_DEFAULTS))
    assert match.instance_field("a.B", "c") == ("instance_field", "a.B", "c", "ignore", "", None, None)
    with pytest.raises(TypeError):
        match.static_field("a.B", "c", sdk=(21,))


def test_default_exclude_by_producer():
    with hprofkit.open_heap(SERVICE_BINDER) as heap:
        assert leaks.default_exclude(heap) is match.ANDROID_DEFAULTS
        assert leaks.android_build(heap)[0] == 19
    with hprofkit.open_heap(HPROF_DIR / "mat__oracle_jdk8_05_x64.hprof") as heap:
        assert leaks.default_exclude(heap) is match.JDK_DEFAULTS
        assert leaks.android_build(heap) == (None, None)
        assert heap.find_leaks() == []


# ---- the command ------------------------------------------------------------------

def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "hprofkit", "leaks", *map(str, args)], capture_output=True,
                          text=True)


def test_cli_report_json_and_matchers(app_dump):
    path, ids = app_dump
    text = run_cli(path)
    assert text.returncode == 0 and text.stderr == ""
    assert text.stdout.splitlines()[0] == "4 leaks: 3 application, 1 library; 4 distinct fingerprints"
    assert text.stdout.count("┬───") == 4
    report = json.loads(run_cli(path, "--json").stdout)
    assert [leak["key"] for leak in report["leaks"]] == ["k-activity", "k-imm", "k-cycle", None]
    assert (report["application"], report["library"]) == (3, 1)
    ignored = json.loads(run_cli(path, "--json", "--ignore", "com.example.App.leaked").stdout)
    assert [leak["key"] for leak in ignored["leaks"]] == ["k-imm", "k-cycle", None]
    library = json.loads(run_cli(path, "--json", "--library", "com.example.Leaks.sLoop").stdout)
    cycle = [leak for leak in library["leaks"] if leak["key"] == "k-cycle"][0]
    assert cycle["library"] and cycle["pattern"] == {
        "pattern": "static_field", "class_name": "com.example.Leaks", "name": "sLoop", "kind": "library",
        "description": "--library com.example.Leaks.sLoop", "sdk": None, "manufacturer": None}


def test_cli_ignore_root_reproduces_leakcanarys_binder_test():
    report = json.loads(run_cli(SERVICE_BINDER, "--json", "--ignore-root", "android.os.Binder").stdout)
    (leak,) = report["leaks"]
    assert leak["key"] == SERVICE_BINDER_KEY and leak["root"] == "STICKY_CLASS" and not leak["library"]
    assert leak["trace"][0]["class"] == "com.example.leakcanary.LeakyService"
    assert leak["trace"][0]["reference"]["type"] == "STATIC_FIELD"


def test_cli_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.hprof"
    bad.write_bytes(b"JAVA PROFILE 1.0.2\0\0\0\0\4")
    proc = run_cli(bad)
    assert proc.returncode == 1 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("hprofkit: error: ")
    proc = run_cli(SERVICE_BINDER, "--ignore", "nodot")  # a bad argument: argparse's usage error
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == ("hprofkit leaks: error: argument --ignore: expected CLASS.FIELD "
                                            "(com.example.Cache.sInstance), not 'nodot'")
