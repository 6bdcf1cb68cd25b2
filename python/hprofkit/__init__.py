"""hprofkit: scripted processing of HPROF heap dumps (HotSpot and Android ART).

    import hprofkit
    with hprofkit.open("app.hprof") as dump:
        print(dump.version, dump.id_size)
        for record in dump.records(): ...
        print(dump.stats())
"""

import importlib
from typing import TYPE_CHECKING, Any

from . import _errors, _events, _hprof
from ._hprof import Parser, Record, SubRecord
from ._errors import (CorruptError, FileChangedError, FormatError, HprofError, OverrunError,
                      TruncatedError, UnsupportedError)
from ._dump import Dump, iter_records, iter_subrecords, open, stats
from ._stats import ClassRow, HeapDump, Stats, Tally, UnfinishedDump
from ._events import EndEvent, HeaderEvent, RecordEvent, SubrecordEvent
from ._codec import Converter, Decoder, Encoder
from ._files import EncodeWriter, Result, convert, decode, encode, encode_writer
from . import match
from ._heap import Field, GcRoot, GcRoots, Heap, HeapClass, HeapObject, Reference, Referrer, StackFrame, open_heap

# Python stands on C: the package hands its classes down to the C module
# once, here, and the module never imports the package (docs/architecture.md).
_hprof._register(errors=_errors, events=_events, heap_object=HeapObject, heap_class=HeapClass)
from ._reach import Hop, Hops, NoPath, Path
from .diff import DiffRow, HeapDiff, diff  # the function hides the module's name: import hprofkit.diff's parts by name
from .batch import BatchResult, BatchRow, ClassTotal, LeakGroup
from .batch import batch  # the function; the module stays importable as hprofkit.batch's sys.modules entry

__version__ = "0.1.0"

if TYPE_CHECKING:
    from . import leaks
    from ._tables import sql
    from .sample import write_sample_dump
    from .writer import HprofWriter

# Imported on first use: the command line and most scripts need none of
# them, and they are a third of the package's import time.
_LAZY = {"HprofWriter": "writer", "write_sample_dump": "sample", "leaks": "leaks", "sql": "_tables"}


def __getattr__(name: str) -> Any:
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
    "OverrunError", "UnsupportedError", "FileChangedError", "open_heap", "Heap", "HeapObject", "HeapClass",
    "Reference", "Referrer", "Field", "GcRoot", "GcRoots", "StackFrame", "match", "Hop", "Hops", "Path", "NoPath", "leaks", "diff", "HeapDiff",
    "DiffRow", "sql", "batch", "BatchResult", "BatchRow", "LeakGroup", "ClassTotal",
]
