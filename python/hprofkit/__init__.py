"""hprofkit: scripted processing of HPROF heap dumps (HotSpot and Android ART).

    import hprofkit
    with hprofkit.open("app.hprof") as dump:
        print(dump.version, dump.id_size)
        for record in dump.records(): ...
        print(dump.stats())
"""

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from . import _errors, _events, _hprof
from ._hprof import Parser, Record, SubRecord
from ._errors import (CorruptError, FileChangedError, FormatError, HprofError, MappingError, MappingWarning,
                      NoHeapDumpError, OverrunError, RestoreLimitError, TruncatedError, UnsupportedError)
from ._events import EndEvent, HeaderEvent, RecordEvent, SubrecordEvent
from . import match
from ._heap import (Field, GcRoot, GcRoots, GroupTable, Heap, HeapClass, HeapObject, ObjectTable, Reference,
                    Referrer, ResultList, StackFrame, open_heap)
from ._layout import Layout
from ._values import AllocationSite, AllocSite, ClassCount, CollectionWaste, DuplicateString, Frame, LargeArray, Thread
from ._waste import Holder, Waste, WasteItem, WasteKind

# Python stands on C: the package hands its classes down to the C module
# once, here, and the module never imports the package (docs/architecture.md).
_hprof._register(errors=_errors, events=_events, heap_object=HeapObject, heap_class=HeapClass)
from ._reach import HeapPath, Hop, Hops, NoPath
# The modules are named apart from their functions (hprofkit.diff and hprofkit.batch are the
# functions), so that neither hides the other: import hprofkit.heapdiff / hprofkit.batching.
from .heapdiff import DiffRow, HeapDiff, diff
from .batching import BatchResult, BatchRow, ClassTotal, LeakGroup, batch

__version__ = "0.1.0"

if TYPE_CHECKING:
    from . import leaks
    from ._bitmaps import Bitmap, DuplicateBitmaps
    from ._codec import Converter, Decoder, Encoder
    from ._deobfuscate import DeobfuscateResult, deobfuscate
    from ._dump import Dump, iter_records, iter_subrecords, open, stats
    from ._files import EncodeWriter, Result, convert, decode, encode, encode_writer
    from ._mapping import MappedFrame, Mapping
    from ._stats import ClassRow, HeapDump, Stats, Tally, UnfinishedDump
    from ._tables import connect, sql, tables, to_parquet
    from ._classtree import ClassNode, ClassTree
    from ._tree import ROOT, Group, MergedPath, MergedPaths
    from .sample import write_sample_dump
    from .writer import HprofWriter
    from ._report import report
    from ._pprof import pprof
    from ._serve import serve

# Imported on first use: `import hprofkit` stays light (at most 60 modules,
# tests/test_batch.py), and the command line and most scripts need few of them.
_LAZY = {"HprofWriter": "writer", "write_sample_dump": "sample", "leaks": "leaks",
         **dict.fromkeys(["ROOT", "Group", "MergedPath", "MergedPaths"], "_tree"),
         **dict.fromkeys(["ClassNode", "ClassTree"], "_classtree"),
         "report": "_report", "pprof": "_pprof", "serve": "_serve",
         **dict.fromkeys(["Bitmap", "DuplicateBitmaps"], "_bitmaps"),
         **dict.fromkeys(["sql", "tables", "to_parquet", "connect"], "_tables"),
         **dict.fromkeys(["open", "Dump", "iter_records", "iter_subrecords", "stats"], "_dump"),
         **dict.fromkeys(["ClassRow", "HeapDump", "Stats", "Tally", "UnfinishedDump"], "_stats"),
         **dict.fromkeys(["Converter", "Decoder", "Encoder"], "_codec"),
         **dict.fromkeys(["EncodeWriter", "Result", "convert", "decode", "encode", "encode_writer"], "_files"),
         **dict.fromkeys(["Mapping", "MappedFrame"], "_mapping"),
         **dict.fromkeys(["deobfuscate", "DeobfuscateResult"], "_deobfuscate")}


# Old names, kept one release with a DeprecationWarning (not in __all__: `from hprofkit
# import *` must not put Path over pathlib.Path).
_DEPRECATED = {"Path": "HeapPath"}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(f"hprofkit.{name} is now hprofkit.{new}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return globals()[new]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hprofkit' has no attribute {name!r}")
    value = importlib.import_module(f"{__name__}.{module}")
    if name != module:
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "open", "Dump", "Parser", "Record", "SubRecord", "iter_records", "iter_subrecords", "stats", "Stats", "Tally",
    "ClassRow", "HeapDump", "UnfinishedDump", "HeaderEvent", "RecordEvent", "SubrecordEvent", "EndEvent", "HprofWriter", "write_sample_dump", "Encoder", "Decoder", "Converter", "encode", "decode", "convert",
    "encode_writer", "EncodeWriter", "Result", "HprofError", "TruncatedError", "FormatError", "CorruptError",
    "OverrunError", "UnsupportedError", "RestoreLimitError", "FileChangedError", "NoHeapDumpError", "open_heap", "Heap", "Layout", "HeapObject", "HeapClass",
    "Reference", "Referrer", "Field", "GcRoot", "GcRoots", "StackFrame", "match", "Hop", "Hops", "HeapPath", "NoPath", "leaks", "diff", "HeapDiff",
    "DiffRow", "sql", "tables", "to_parquet", "connect", "report", "pprof", "serve", "batch", "BatchResult", "BatchRow", "LeakGroup",
    "ClassTotal", "Bitmap", "DuplicateBitmaps", "ROOT", "Group", "MergedPath", "MergedPaths", "ClassNode", "ClassTree",
    "AllocationSite", "AllocSite", "ClassCount", "CollectionWaste", "DuplicateString", "LargeArray", "ObjectTable",
    "Holder", "Waste", "WasteItem", "WasteKind",
    "GroupTable", "ResultList",
    "Mapping", "MappedFrame", "MappingError", "MappingWarning", "deobfuscate", "DeobfuscateResult",
]
# hprofkit.Thread and hprofkit.Frame (heap.threads()'s rows) are left out of __all__: `from
# hprofkit import *` must not put them over threading.Thread or a notebook's Frame.
