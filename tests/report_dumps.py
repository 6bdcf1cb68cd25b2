"""Dumps for the report's tests, written with HprofWriter (leaky_heap):
an Android app with leaks of known fingerprints whose strings and class
names are hostile markup, and an earlier dump of it to diff against."""

from __future__ import annotations

from leaky_heap import LeakyHeap, android_app, watch

# Markup a page that parsed dump strings as HTML would run: each sets
# window.__pwned, which the browser tests check stays unset.
HOSTILE_TEXT = ("</script><script>window.__pwned='script'</script><!-- <img src=x "
                "onerror=\"window.__pwned='img'\"> \u2028\u2029 &amp; \ud800 end")
HOSTILE_CLASS = "com.evil.<img src=x onerror=window.__pwned='class'>"
# The hostile String's length: large enough to be among the biggest objects.
HOSTILE_PAD = 30_000


def hostile_app(path, activities: int = 2) -> dict[str, int]:
    """Writes the app; returns ids by role.  `activities` destroyed activities
    are kept by one static list (one leak fingerprint, that many leaks)."""
    heap: LeakyHeap = android_app()
    ids: dict[str, int] = {}
    watches: list[int] = []
    heap.cls(HOSTILE_CLASS, fields=[("payload", "object")])
    heap.cls("com.example.Registry", statics={"sActivities": ("object", None)})
    # A String whose text is markup, rooted on its own: a top-level dominator.
    ids["hostile_string"] = heap.string(HOSTILE_TEXT + "x" * HOSTILE_PAD)
    heap.roots.append(("jni_global", ids["hostile_string"]))
    # An object of a class whose name is markup, holding a big array.
    ids["hostile_object"] = heap.new(HOSTILE_CLASS, payload=heap.array([heap.string("p%d" % i) for i in range(50)]))
    heap.roots.append(("jni_global", ids["hostile_object"]))
    # Destroyed activities held by a static list: one fingerprint, `activities` leaks.
    kept = [heap.new("com.example.MainActivity", mDestroyed=True) for _ in range(activities)]
    ids["activities"] = kept[0]
    items = heap.array(kept)
    heap.set_static("com.example.Registry", "sActivities", "object",
                    heap.new("java.util.ArrayList", elementData=items, size=len(kept)))
    # A watched object whose watch key is markup.
    ids["presenter"] = heap.new("com.example.Presenter")
    heap.set_static("com.example.Leaks", "sApp", "object", ids["presenter"])
    watch(heap, watches, ids["presenter"], HOSTILE_TEXT)
    heap.set_static("com.example.Leaks", "sWatches", "object",
                    heap.new("java.util.ArrayList", elementData=heap.array(watches), size=len(watches)))
    heap.write(path)
    return ids
