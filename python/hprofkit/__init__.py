"""hprofkit: scripted processing of HPROF heap dumps (HotSpot and Android ART).

    import hprofkit
    with hprofkit.open("app.hprof") as dump:
        print(dump.version, dump.id_size)
        for record in dump.records(): ...
        print(dump.stats())
"""

from ._hprof import Parser, Record, SubRecord
from ._errors import (CorruptError, FormatError, HprofError, OverrunError, TruncatedError,
                      UnsupportedError)
from ._dump import Dump, iter_records, iter_subrecords, open, stats
from ._stats import ClassRow, Stats, Tally
from ._codec import Converter, Decoder, Encoder
from ._files import EncodeWriter, Result, convert, decode, encode, encode_writer
from .writer import HprofWriter
from .sample import write_sample_dump
from . import match
from ._heap import Field, GcRoot, Heap, HeapClass, HeapObject, Reference, Referrer, StackFrame, open_heap

__version__ = "0.1.0"

__all__ = [
    "open", "Dump", "Parser", "Record", "SubRecord", "iter_records", "iter_subrecords", "stats", "Stats", "Tally",
    "ClassRow", "HprofWriter", "write_sample_dump", "Encoder", "Decoder", "Converter", "encode", "decode", "convert",
    "encode_writer", "EncodeWriter", "Result", "HprofError", "TruncatedError", "FormatError", "CorruptError",
    "OverrunError", "UnsupportedError", "open_heap", "Heap", "HeapObject", "HeapClass", "Reference", "Referrer",
    "Field", "GcRoot", "StackFrame", "match",
]
