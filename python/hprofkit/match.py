"""Reference matchers: references that path searches ignore or take last.

A matcher names a pattern of references, as LeakCanary's reference matchers
do.  ``kind="ignore"``: the reference is never traversed (an object reached
only through it has no path).  ``kind="library"``: the reference is traversed
only when nothing else reaches the object, and a path that must cross it is a
*library* leak, reported with the matcher's description.

    heap.path_to_root(obj, exclude=hprofkit.match.JDK_DEFAULTS)
    heap.find_leaks(exclude=hprofkit.match.ANDROID_DEFAULTS + (
        hprofkit.match.static_field("com.example.Cache", "sInstance", kind="library"),
    ))

JDK_DEFAULTS and ANDROID_DEFAULTS are plain tuples of matchers: data, easy to
extend by concatenation.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

KINDS = ("ignore", "library")
PATTERNS = ("instance_field", "static_field", "thread_local", "root_class")


class Matcher(NamedTuple):
    """One reference pattern.

    pattern: one of PATTERNS.  class_name: the class declaring the field
    (instance_field, static_field) or the root object's class, subclasses
    included (root_class); None for thread_local.  name: the field name, or
    the thread name for thread_local; None for root_class.
    """

    pattern: str
    class_name: Optional[str]
    name: Optional[str]
    kind: str = "ignore"
    description: str = ""

    def __repr__(self) -> str:
        target = ".".join(part for part in (self.class_name, self.name) if part)
        return f"<Matcher {self.pattern} {target} {self.kind}>"


def _matcher(pattern: str, class_name, name, kind: str, description: str) -> Matcher:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    for label, value in (("class name", class_name), ("name", name)):
        if value is not None and (not isinstance(value, str) or not value):
            raise TypeError(f"the {label} must be a non-empty str, not {value!r}")
    if not isinstance(description, str):
        raise TypeError(f"description must be a str, not {type(description).__name__}")
    return Matcher(pattern, class_name, name, kind, description)


def instance_field(class_name: str, field_name: str, *, kind: str = "ignore", description: str = "") -> Matcher:
    """References held by instance field `field_name` declared by `class_name`
    (so in instances of its subclasses too)."""
    return _matcher("instance_field", class_name, field_name, kind, description)


def static_field(class_name: str, field_name: str, *, kind: str = "ignore", description: str = "") -> Matcher:
    """The reference held by static field `field_name` of class `class_name`."""
    return _matcher("static_field", class_name, field_name, kind, description)


def thread_local(thread_name: str, *, kind: str = "ignore", description: str = "") -> Matcher:
    """References from the stack frames (Java locals) of the thread named `thread_name`."""
    return _matcher("thread_local", None, thread_name, kind, description)


def root_class(class_name: str, *, kind: str = "ignore", description: str = "") -> Matcher:
    """GC roots whose object is an instance of `class_name` or of a subclass."""
    return _matcher("root_class", class_name, None, kind, description)


# Shark's JdkReferenceMatchers: Reference referents are not strong, finalizer
# queues are bookkeeping, and these threads' locals are transient.
JDK_DEFAULTS: tuple[Matcher, ...] = (
    instance_field("java.lang.ref.Reference", "referent",
                   description="a Reference's referent is not a strong reference"),
    instance_field("java.lang.ref.Finalizer", "prev", description="the finalizer queue links"),
    instance_field("java.lang.ref.Finalizer", "next", description="the finalizer queue links"),
    instance_field("java.lang.ref.FinalizerReference", "prev", description="the finalizer queue links (Android)"),
    instance_field("java.lang.ref.FinalizerReference", "next", description="the finalizer queue links (Android)"),
    instance_field("sun.misc.Cleaner", "prev", description="the cleaner queue links"),
    instance_field("sun.misc.Cleaner", "next", description="the cleaner queue links"),
    thread_local("FinalizerWatchdogDaemon", description="the finalizer watchdog holds the object being finalized"),
    thread_local("main", description="the main thread's locals are transient while a heap dump is taken"),
)

# Known Android framework and vendor leaks: completed by the leak finders' work.
ANDROID_DEFAULTS: tuple[Matcher, ...] = JDK_DEFAULTS
