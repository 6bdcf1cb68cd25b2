"""Reference matchers: references that path searches ignore or take last.

A matcher names a pattern of references, as LeakCanary's reference matchers
do.  ``kind="ignore"``: the reference is never traversed (an object reached
only through it has no path).  ``kind="library"``: the reference is traversed
only when nothing else reaches the object, and a path that must cross it is a
*library* leak, reported with the matcher's description::

    heap.path_to_root(obj, exclude=hprofkit.match.JDK_DEFAULTS)
    heap.find_leaks(exclude=hprofkit.match.ANDROID_DEFAULTS + (
        hprofkit.match.static_field("com.example.Cache", "sInstance", kind="library"),
    ))

JDK_DEFAULTS (any JVM's) and ANDROID_DEFAULTS (those, Android's threads in
ANDROID_THREADS, and LeakCanary's known leaks) are plain tuples of matchers:
data, easy to extend by concatenation.  A matcher may be gated on the Android SDK level and
the device maker (``sdk``, ``manufacturer``): ``applicable()`` keeps the ones
that apply to a heap's build; ``heap.find_leaks`` applies it for you.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional

from . import _android_leaks

SdkRange = Optional[tuple[Optional[int], Optional[int]]]
KINDS = ("ignore", "library")
PATTERNS = ("instance_field", "static_field", "thread_local", "root_class")


class Matcher(NamedTuple):
    """One reference pattern.

    pattern: one of PATTERNS.  class_name: the class declaring the field
    (instance_field, static_field) or the root object's class, subclasses
    included (root_class); None for thread_local.  name: the field name, or
    the thread name for thread_local; None for root_class.  sdk: the
    inclusive (low, high) range of Android SDK levels it applies to, either
    end None for open; None for every level (and for non-Android heaps).
    manufacturer: the android.os.Build.MANUFACTURER it applies to (case
    ignored); None for every maker.
    """

    pattern: str
    class_name: Optional[str]
    name: Optional[str]
    kind: str = "ignore"
    description: str = ""
    sdk: SdkRange = None
    manufacturer: Optional[str] = None

    def applies_to(self, sdk: Optional[int], manufacturer: Optional[str]) -> bool:
        """Whether the matcher applies to a build (None: unknown, always applies)."""
        if self.sdk is not None and sdk is not None:
            low, high = self.sdk
            if (low is not None and sdk < low) or (high is not None and sdk > high):
                return False
        if self.manufacturer is not None and manufacturer is not None:
            return self.manufacturer.lower() == manufacturer.lower()
        return True

    def __repr__(self) -> str:
        target = ".".join(part for part in (self.class_name, self.name) if part)
        return f"<Matcher {self.pattern} {target} {self.kind}>"


def _matcher(pattern: str, class_name: Optional[str], name: Optional[str], kind: str, description: str,
             sdk: SdkRange = None, manufacturer: Optional[str] = None) -> Matcher:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    # What each pattern names: checked now, not when a search first uses the matcher.
    wanted = {"class name": pattern != "thread_local", "name": pattern != "root_class"}
    for label, value in (("class name", class_name), ("name", name)):
        if wanted[label] and (not isinstance(value, str) or not value):
            raise TypeError(f"{pattern}: the {label} must be a non-empty str, not {value!r}")
    if not isinstance(description, str):
        raise TypeError(f"description must be a str, not {type(description).__name__}")
    if sdk is not None and (not isinstance(sdk, tuple) or len(sdk) != 2
                            or not all(end is None or type(end) is int for end in sdk)):
        raise TypeError(f"sdk must be None or a (low, high) tuple of ints or None, not {sdk!r}")
    if manufacturer is not None and (not isinstance(manufacturer, str) or not manufacturer):
        raise TypeError(f"manufacturer must be None or a non-empty str, not {manufacturer!r}")
    return Matcher(pattern, class_name, name, kind, description, sdk, manufacturer)


def instance_field(class_name: str, field_name: str, *, kind: str = "ignore", description: str = "",
                   sdk: SdkRange = None, manufacturer: Optional[str] = None) -> Matcher:
    """References held by instance field `field_name` declared by `class_name`
    (so in instances of its subclasses too)."""
    return _matcher("instance_field", class_name, field_name, kind, description, sdk, manufacturer)


def static_field(class_name: str, field_name: str, *, kind: str = "ignore", description: str = "",
                 sdk: SdkRange = None, manufacturer: Optional[str] = None) -> Matcher:
    """The reference held by static field `field_name` of class `class_name`."""
    return _matcher("static_field", class_name, field_name, kind, description, sdk, manufacturer)


def thread_local(thread_name: str, *, kind: str = "ignore", description: str = "",
                 sdk: SdkRange = None, manufacturer: Optional[str] = None) -> Matcher:
    """References from the stack frames (Java locals) of the thread named `thread_name`."""
    return _matcher("thread_local", None, thread_name, kind, description, sdk, manufacturer)


def root_class(class_name: str, *, kind: str = "ignore", description: str = "",
               sdk: SdkRange = None, manufacturer: Optional[str] = None) -> Matcher:
    """GC roots whose object is an instance of `class_name` or of a subclass."""
    return _matcher("root_class", class_name, None, kind, description, sdk, manufacturer)


# Shark's JdkReferenceMatchers: Reference referents are not strong, finalizer
# queues are bookkeeping.  Any JVM's.
JDK_DEFAULTS: tuple[Matcher, ...] = (
    instance_field("java.lang.ref.Reference", "referent",
                   description="a Reference's referent is not a strong reference"),
    instance_field("java.lang.ref.Finalizer", "prev", description="the finalizer queue links"),
    instance_field("java.lang.ref.Finalizer", "next", description="the finalizer queue links"),
    instance_field("java.lang.ref.FinalizerReference", "prev", description="the finalizer queue links (Android)"),
    instance_field("java.lang.ref.FinalizerReference", "next", description="the finalizer queue links (Android)"),
    instance_field("sun.misc.Cleaner", "prev", description="the cleaner queue links"),
    instance_field("sun.misc.Cleaner", "next", description="the cleaner queue links"),
)

# LeakCanary's rules for Android's own threads: its main thread runs the
# looper, whose locals are transient while a heap dump is taken.  On a
# HotSpot dump the main thread is the program's (javac's JavaCompiler is one
# of its locals): these apply to Android heaps only.
ANDROID_THREADS: tuple[Matcher, ...] = (
    thread_local("FinalizerWatchdogDaemon", description="the finalizer watchdog holds the object being finalized"),
    thread_local("main", description="the main looper's locals are transient while a heap dump is taken"),
)


def _android(rows: tuple[_android_leaks.KnownReference, ...], kind: str) -> tuple[Matcher, ...]:
    return tuple(_matcher(pattern, class_name, name, kind, description, sdk, manufacturer)
                 for pattern, class_name, name, sdk, manufacturer, description in rows)


# LeakCanary's Android reference matchers: the JDK's, references LeakCanary
# itself holds, and the known framework and vendor leaks (library kind).
ANDROID_DEFAULTS: tuple[Matcher, ...] = (JDK_DEFAULTS + ANDROID_THREADS + _android(_android_leaks.IGNORED, "ignore")
                                         + _android(_android_leaks.KNOWN_LEAKS, "library"))


def applicable(matchers: Iterable[Matcher], sdk: Optional[int] = None,
               manufacturer: Optional[str] = None) -> tuple[Matcher, ...]:
    """The matchers that apply to an Android build of that SDK level and maker
    (None: unknown, keeps every matcher gated on it)."""
    kept = []
    for m in matchers:
        if not isinstance(m, Matcher):
            raise TypeError(f"exclude must hold hprofkit.match matchers, not {type(m).__name__}")
        if m.applies_to(sdk, manufacturer):
            kept.append(m)
    return tuple(kept)
