"""Small Android-style dumps written with HprofWriter, holding leaks whose
traces are known by construction (for test_leaks.py)."""

from __future__ import annotations

from hprofkit.writer import HprofWriter

_DEFAULTS = {"object": None, "boolean": False, "int": 0, "long": 0}


class LeakyHeap:
    """Classes, instances and Object[] arrays, written as one ART dump
    (every class a sticky-class root)."""

    def __init__(self) -> None:
        self._next = 0x10000
        self.classes: dict[str, dict] = {}
        self.objects: list[tuple] = []
        self.roots: list[tuple[str, int]] = []
        self.cls("java.lang.Object", None)
        self.cls("java.lang.Object[]", "java.lang.Object")
        self.cls("java.lang.String", fields=[("value", "object"), ("hash", "int")])
        self.cls("java.lang.ref.Reference", fields=[("referent", "object"), ("queue", "object")])
        self.cls("java.lang.ref.WeakReference", "java.lang.ref.Reference")

    def _id(self) -> int:
        self._next += 0x10
        return self._next

    def cls(self, name: str, superclass: str | None = "java.lang.Object", fields=(), statics=()) -> str:
        """Declares a class: fields [(name, type)], statics {name: (type, value)}."""
        self.classes[name] = {"id": self._id(), "super": superclass, "fields": list(fields),
                              "statics": dict(statics)}
        return name

    def set_static(self, class_name: str, name: str, type_: str, value) -> None:
        self.classes[class_name]["statics"][name] = (type_, value)

    def _layout(self, name: str) -> list[tuple[str, str]]:
        out = []
        while name is not None:
            out += self.classes[name]["fields"]
            name = self.classes[name]["super"]
        return out

    def new(self, class_name: str, **values) -> int:
        """An instance; fields not given are null, false or 0."""
        oid = self._id()
        self.objects.append(("instance", oid, class_name, values))
        return oid

    def set(self, oid: int, **values) -> None:
        for entry in self.objects:
            if entry[1] == oid:
                entry[3].update(values)

    def array(self, elements) -> int:
        oid = self._id()
        self.objects.append(("array", oid, list(elements)))
        return oid

    def string(self, text: str) -> int:
        chars = self._id()
        self.objects.append(("chars", chars, text))
        return self.new("java.lang.String", value=chars)

    def write(self, path) -> None:
        with HprofWriter(str(path), version="1.0.3", id_size=4) as w:
            for name, c in self.classes.items():
                w.load_class(c["id"], name)
            with w.heap_dump() as h:
                for name, c in self.classes.items():
                    sup = self.classes[c["super"]]["id"] if c["super"] else 0
                    h.class_dump(c["id"], super_id=sup, instance_size=4 * len(self._layout(name)),
                                 statics=[(n, t, v) for n, (t, v) in c["statics"].items()], fields=c["fields"])
                    h.root_sticky_class(c["id"])
                for entry in self.objects:
                    if entry[0] == "instance":
                        _, oid, name, values = entry
                        layout = self._layout(name)
                        h.instance(oid, self.classes[name]["id"], field_types=[t for _, t in layout],
                                   values=[values.get(n, _DEFAULTS[t]) for n, t in layout])
                    elif entry[0] == "array":
                        h.object_array(entry[1], self.classes["java.lang.Object[]"]["id"], entry[2])
                    else:
                        h.primitive_array(entry[1], "char", entry[2])
                for kind, oid in self.roots:
                    getattr(h, f"root_{kind}")(oid)
            w.heap_dump_end()


def android_app(sdk: int = 28, manufacturer: str = "Google") -> LeakyHeap:
    """An app with the Android framework classes the finders read, no leak yet."""
    heap = LeakyHeap()
    heap.cls("android.os.Build", statics={"MANUFACTURER": ("object", None)})
    heap.set_static("android.os.Build", "MANUFACTURER", "object", heap.string(manufacturer))
    heap.cls("android.os.Build$VERSION", statics={"SDK_INT": ("int", sdk)})
    heap.cls("leakcanary.KeyedWeakReference", "java.lang.ref.WeakReference",
             fields=[("key", "object"), ("description", "object"), ("watchUptimeMillis", "long"),
                     ("retainedUptimeMillis", "long")])
    heap.cls("android.content.Context")
    heap.cls("android.content.ContextWrapper", "android.content.Context", fields=[("mBase", "object")])
    heap.cls("android.app.Application", "android.content.ContextWrapper")
    heap.cls("android.app.Activity", "android.content.ContextWrapper",
             fields=[("mDestroyed", "boolean"), ("mFinished", "boolean"), ("mWindow", "object")])
    heap.cls("android.view.View", fields=[("mContext", "object"), ("mParent", "object"),
                                          ("mAttachInfo", "object"), ("mWindowAttachCount", "int")])
    heap.cls("android.view.inputmethod.InputMethodManager", fields=[("mServedView", "object")],
             statics={"sInstance": ("object", None)})
    heap.cls("java.util.ArrayList", fields=[("elementData", "object"), ("size", "int")])
    heap.cls("com.example.App", "android.app.Application", fields=[("leaked", "object")])
    heap.cls("com.example.MainActivity", "android.app.Activity", fields=[("presenters", "object")])
    heap.cls("com.example.Presenter", fields=[("view", "object")])
    heap.cls("com.example.Node", fields=[("next", "object")])
    heap.cls("com.example.Leaks", statics={"sApp": ("object", None), "sActivity": ("object", None),
                                           "sWatches": ("object", None), "sLoop": ("object", None)})
    return heap


def watch(heap: LeakyHeap, watches: list, referent, key: str, retained: int = 5000) -> int:
    """A KeyedWeakReference on referent, kept (as LeakCanary does) in a list the caller roots."""
    ref = heap.new("leakcanary.KeyedWeakReference", referent=referent, key=heap.string(key),
                   description=heap.string(f"watching {key}"), watchUptimeMillis=1000,
                   retainedUptimeMillis=retained)
    watches.append(ref)
    return ref
