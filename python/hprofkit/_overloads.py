"""Fields of one class that share an obfuscated name, told apart.

ProGuard's ``-overloadaggressively`` (and R8) give several fields of a
class one name when their types differ: ``java.lang.String name -> a``,
``byte[] bitmap -> a``.  The mapping lists them in declaration order with
their types; the dump lists them with their HPROF basic types and values.
A field of the dump gets the clear name of the mapping's field that:

1. has its name and basic type (``int`` is ``int``; a reference field is
   any class or array type);
2. accepts its values: the runtime class of every object it refers to
   (of every instance, or the static's one) is assignable to the declared
   type, walking the dump's superclasses.  A class the dump shows to be a
   class (it has instances, instance fields or subclasses) accepts only
   its subclasses; any other type (an interface, or unknown) accepts every
   object; an array type only arrays of its element;
3. no other field took (each field of the mapping is one field of the dump);
4. comes at the dump field's place in the dump's order.  HotSpot writes
   the fields of a class in the class file's order, reversed up to JDK 20
   (HotSpot's FieldStream walks them backwards; JavaFieldStream, which newer
   dumps use, forwards); ART in its dex file's field order (ArtField arrays,
   dex field ids sorted by name, then type descriptor).  Which of the three
   a dump follows is read from the dump itself: the order of the fields its
   mapping names unambiguously (any class); the dump's format breaks a tie.

A field that the order decides only by the tie-break, or that nothing
decides, keeps a deterministic choice (the order's), and a MappingWarning
names the class and fields: ``ambiguities``."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple

from ._mapping import Mapping, _caller_level, _descriptor
from ._types import TYPE_CODES

_OBJECT = TYPE_CODES["object"]
_PRIMITIVES = {"boolean", "char", "float", "double", "byte", "short", "int", "long"}
# Types every array is assignable to besides array types (JLS 10.8).
_ARRAY_SUPERTYPES = {"java.lang.Object", "java.lang.Cloneable", "java.io.Serializable"}
# The dump's order: the class file's (new HotSpot), reversed (HotSpot to JDK 20), ART's (dex field ids).
FORWARD, REVERSE, ART = "class-file order", "reversed class-file order", "ART's dex order"
# Ambiguities warned about one by one (then one line for the rest).
_WARNINGS = 5


class MappedField(NamedTuple):
    rank: int  # its place among the class's fields in the mapping
    obfuscated: str
    clear: str
    type: str  # as the mapping writes it: "int", "byte[]", "com.example.Item"


class Ambiguity(NamedTuple):
    """Fields of the dump named `obfuscated` in class `clear_class` (the
    dump's `obfuscated_class`) that the mapping's `candidates` (clear names)
    did not tell apart: `chosen` names them, in the dump's order."""
    clear_class: str
    obfuscated_class: str
    obfuscated: str
    candidates: tuple[str, ...]
    chosen: tuple[str, ...]


@dataclass
class _Slot:
    """A static (kind 0) or instance field (kind 1) of one class of the dump."""
    kind: int
    position: int  # among the class's statics, or its own instance fields
    name: str
    type_code: int
    candidates: list[MappedField]

    @property
    def decided(self) -> bool:
        return len(self.candidates) == 1


@dataclass
class _Class:
    cls: Any  # its HeapClass
    obfuscated: str
    clear: str
    n_statics: int
    slots: list[_Slot]
    overloaded: bool = False


@dataclass
class Resolution:
    """Clear names for the fields of overloaded classes: per class ordinal,
    (k, clear name), k counting its statics then its own instance fields;
    and what stays ambiguous."""
    names: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    ambiguities: list[Ambiguity] = field(default_factory=list)


# -- types -------------------------------------------------------------------------------

def _basic_type(java_type: str) -> int:
    return TYPE_CODES[java_type] if java_type in _PRIMITIVES else _OBJECT


def _array_parts(name: str) -> tuple[str, int]:
    depth = 0
    while name.endswith("[]"):
        name, depth = name[:-2], depth + 1
    return name, depth


class _Hierarchy:
    """The dump's classes by clear name: superclass chains, and which names
    are surely classes (not interfaces: HPROF does not tell them apart, so
    only a class with instances, instance fields or subclasses is)."""

    def __init__(self, heap: Any) -> None:
        self._by_name: dict[str, Any] = {}
        self._chains: dict[int, frozenset[str]] = {}
        self.classes: set[str] = set()
        for cls in heap.classes:
            self._by_name.setdefault(cls.name, cls)
            sup = cls.superclass
            if sup is not None:
                self.classes.add(sup.name)
            if cls.instance_count or cls.fields():
                self.classes.add(cls.name)

    def _chain(self, cls: Any) -> frozenset[str]:
        """The names of cls and its superclasses."""
        found = self._chains.get(cls.ordinal)
        if found is None:
            names, c = [], cls
            while c is not None:
                names.append(c.name)
                c = c.superclass
            found = self._chains[cls.ordinal] = frozenset(names)
        return found

    def fits(self, name: str, declared: str) -> bool:
        """Whether an object of the class called `name` may be the value of a field of type `declared`."""
        if declared == "java.lang.Object":
            return True
        element, depth = _array_parts(name)
        want, want_depth = _array_parts(declared)
        if not depth:
            cls = self._by_name.get(name)
            if want_depth:
                return False
            return cls is None or declared in self._chain(cls) or declared not in self.classes
        if not want_depth or want_depth < depth:  # what is left of the array at that depth is an array
            return want in _ARRAY_SUPERTYPES
        if want_depth > depth:
            return False
        if element in _PRIMITIVES or want in _PRIMITIVES:
            return element == want
        return self.fits(element, want)


# -- the dump's classes -------------------------------------------------------------------

def _fields_by_name(listed: list[tuple[str, str, str]]) -> dict[tuple[str, int], list[MappedField]]:
    """A class's fields in the mapping by (obfuscated name, basic type), in the mapping's order."""
    out: dict[tuple[str, int], list[MappedField]] = {}
    for rank, (obfuscated, clear, java_type) in enumerate(listed):
        out.setdefault((obfuscated, _basic_type(java_type)), []).append(MappedField(rank, obfuscated, clear, java_type))
    return out


def overloads(mapping: Mapping, class_obfuscated: str, rows: list[tuple[str | None, int]]) -> bool:
    """Whether the mapping gives several fields of one basic type the name of
    one of `rows` (the class's statics and fields: (name, type code))."""
    by_name = _fields_by_name(mapping.fields(class_obfuscated))
    return any(len(by_name.get((name, type_code), ())) > 1 for name, type_code in rows if name is not None)


def _classes(heap: Any, mapping: Mapping) -> list[_Class]:
    """Every class of the heap the mapping lists with fields, with the
    candidates of each static and own instance field (rule 1); [] when no
    class has a field of several candidates."""
    listed = [(cls, fields) for cls in heap.classes if (fields := mapping.fields(cls.obfuscated_name))]
    if all(len({o for o, _, _ in fields}) == len(fields) for _, fields in listed):
        return []  # no two fields of one class share a name: the type rule named them all
    out = []
    for cls, fields in listed:
        by_name = _fields_by_name(fields)
        statics, own = heap._dump_fields(cls.ordinal)
        slots = []
        for kind, rows in enumerate((statics, own)):
            for position, (name, type_code) in enumerate(rows):
                if name is None or name.startswith("<"):  # HotSpot's <resolved_references>: no field of the program
                    continue
                slots.append(_Slot(kind, position, name, type_code, list(by_name.get((name, type_code), ()))))
        obfuscated = cls.obfuscated_name
        out.append(_Class(cls, obfuscated, mapping.class_name(obfuscated) or obfuscated, len(statics), slots,
                          any(len(s.candidates) > 1 for s in slots)))
    return out


def _narrow_by_values(entry: _Class, hierarchy: _Hierarchy) -> None:
    """Rule 2: drops the candidates whose type does not accept a value of
    the field.  Instances are read until every field is decided; a field
    whose values no candidate accepts keeps its candidates (the values say
    nothing the mapping knows)."""
    open_slots = [s for s in entry.slots if len(s.candidates) > 1 and s.type_code == _OBJECT]
    if not open_slots:
        return
    cls = entry.cls
    seen: dict[int, set[int]] = {id(s): set() for s in open_slots}

    def take(slot: _Slot, value: Any) -> None:
        target = getattr(value, "class_", None)
        if target is None or target.ordinal in seen[id(slot)]:
            return
        seen[id(slot)].add(target.ordinal)
        kept = [m for m in slot.candidates if hierarchy.fits(target.name, m.type)]
        if kept:
            slot.candidates = kept

    statics = cls.statics()
    for slot in open_slots:
        if slot.kind == 0:
            take(slot, statics[slot.position].value)
    instance_slots = [s for s in open_slots if s.kind == 1]
    if not instance_slots:
        return
    for obj in cls.instances(subclasses=True):
        own = [f for f in obj.fields() if f.declaring_class == cls]
        for slot in instance_slots:
            if slot.position < len(own):
                take(slot, own[slot.position].value)
        if all(s.decided for s in instance_slots):
            break


def _propagate(entry: _Class) -> None:
    """Rule 3: a field of the mapping decided for one slot is no other's."""
    changed = True
    while changed:
        changed = False
        taken = {s.candidates[0].rank for s in entry.slots if s.decided}
        for s in entry.slots:
            if len(s.candidates) > 1:
                left = [m for m in s.candidates if m.rank not in taken]
                if left and len(left) < len(s.candidates):
                    s.candidates, changed = left, True


# -- the dump's order ---------------------------------------------------------------------

def _order_keys(mapping: Mapping) -> dict[str, Callable[[MappedField], Any]]:
    def art(m: MappedField) -> tuple[str, str]:
        return m.obfuscated, _descriptor(m.type, lambda name: mapping.obfuscated_class(name) or name)
    return {FORWARD: lambda m: m.rank, REVERSE: lambda m: -m.rank, ART: art}


def _pairs(classes: list[_Class]) -> Iterator[tuple[MappedField, MappedField]]:
    """Consecutive decided fields of one class and kind, in the dump's order."""
    for entry in classes:
        for kind in (0, 1):
            decided = [s.candidates[0] for s in entry.slots if s.kind == kind and s.decided]
            yield from zip(decided, decided[1:])


def _orders(classes: list[_Class], keys: dict[str, Callable[[MappedField], Any]], android: bool) -> list[str]:
    """The orders that fit the dump best (most consecutive decided fields in
    their order), most likely first by the dump's format."""
    scores = {name: 0 for name in keys}
    for a, b in _pairs(classes):
        for name, key in keys.items():
            scores[name] += key(a) < key(b)
    preference = [ART, FORWARD, REVERSE] if android else [REVERSE, FORWARD, ART]
    best = max(scores.values())
    return [name for name in preference if scores[name] == best]


def _by_order(entry: _Class, orders: list[str], keys: dict[str, Callable[[MappedField], Any]]
              ) -> list[Ambiguity]:
    """Rule 4, per group of undecided fields of one kind, name and type."""
    ambiguities = []
    groups: dict[tuple[int, str, int], list[_Slot]] = {}
    for s in entry.slots:
        if len(s.candidates) > 1:
            groups.setdefault((s.kind, s.name, s.type_code), []).append(s)
    for (_kind, name, _type), group in groups.items():
        slots = [s for s in group if len(s.candidates) > 1]  # the groups before decided some
        if not slots:
            continue
        taken = {s.candidates[0].rank for s in entry.slots if s.decided}
        pool = sorted({m for s in slots for m in s.candidates if m.rank not in taken})
        choices = []
        for order in orders:
            ranked = sorted(pool, key=keys[order])
            if len(ranked) == len(slots) and all(m in s.candidates for s, m in zip(slots, ranked)):
                choices.append(tuple(ranked))
        if choices:
            chosen = choices[0]
        else:  # no order fits the candidates left: each field its first left, in the mapping's order
            picked: list[MappedField] = []
            for s in slots:
                left = [m for m in s.candidates if m not in picked] or s.candidates
                picked.append(left[0])
            chosen = tuple(picked)
        if len(set(choices)) != 1:
            ambiguities.append(Ambiguity(entry.clear, entry.obfuscated, name, tuple(m.clear for m in pool),
                                         tuple(m.clear for m in chosen)))
        for s, m in zip(slots, chosen):
            s.candidates = [m]
        _propagate(entry)
    return ambiguities


# -- the heap -----------------------------------------------------------------------------

def resolve(heap: Any, mapping: Mapping) -> Resolution | None:
    """The clear names of the fields the mapping gives one obfuscated name
    in some class of `heap` (a heap read with `mapping`), by the rules of
    the module docstring; None when it gives none."""
    classes = _classes(heap, mapping)
    if not any(c.overloaded for c in classes):
        return None
    hierarchy = _Hierarchy(heap)
    for entry in classes:
        if entry.overloaded:
            _narrow_by_values(entry, hierarchy)
            _propagate(entry)
    keys = _order_keys(mapping)
    android = any(name is not None for name in heap._heap_names())
    orders = _orders(classes, keys, android)
    resolution = Resolution()
    for entry in classes:
        if not entry.overloaded:
            continue
        resolution.ambiguities += _by_order(entry, orders, keys)
        resolution.names[entry.cls.ordinal] = [(s.position + (entry.n_statics if s.kind else 0), s.candidates[0].clear)
                                           for s in entry.slots if s.candidates and s.candidates[0].clear != s.name]
    return resolution


def rename(heap: Any, resolution: Resolution) -> None:
    """Gives the heap's fields the resolution's names."""
    heap._rename_fields([(ordinal, k, name) for ordinal, names in resolution.names.items() for k, name in names])


def warn_ambiguous(mapping: Mapping, dump: str, resolution: Resolution) -> None:
    """A MappingWarning per field group the resolution could not tell apart."""
    from ._errors import MappingWarning
    name = mapping.path or "the mapping"
    for a in resolution.ambiguities[:_WARNINGS]:
        warnings.warn(MappingWarning(
            f"{name} gives the name {a.obfuscated!r} to fields {', '.join(a.candidates)} of {a.clear_class} "
            f"({a.obfuscated_class}) that {dump} does not tell apart (types, values and order alike): named "
            f"{', '.join(a.chosen)} in the dump's order, a guess"), stacklevel=_caller_level())
    if len(resolution.ambiguities) > _WARNINGS:
        warnings.warn(MappingWarning(f"{name}: {len(resolution.ambiguities) - _WARNINGS:,} more groups of fields "
                                     f"of one obfuscated name are ambiguous in {dump}"), stacklevel=_caller_level())
