from typing import Any, Callable, Iterator

from typing_extensions import Buffer

GIL_MINSIZE: int
WHOLE_MAX: int

class Record:
    @property
    def tag(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def time(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def length(self) -> int: ...
    @property
    def body(self) -> memoryview: ...
    def subrecords(self) -> Iterator[SubRecord]: ...

class SubRecord:
    tag: int
    name: str
    offset: int
    length: int
    raw: memoryview
    data: memoryview | None
    id: int | None
    class_id: int | None
    super_id: int | None
    loader_id: int | None
    signers_id: int | None
    protection_domain_id: int | None
    ref: int | None
    thread_serial: int | None
    frame: int | None
    stack_serial: int | None
    heap: int
    heap_id: int | None
    name_id: int | None
    count: int | None
    elem_type: int | None
    instance_size: int | None
    constants: list[tuple[int, int, Any]] | None
    statics: list[tuple[int, int, Any]] | None
    fields: list[tuple[int, int]] | None

class Parser:
    def __init__(self, *, subrecords: bool = True) -> None: ...
    def feed(self, data: Buffer, /) -> list[tuple[Any, ...]]: ...
    def finish(self) -> list[tuple[Any, ...]]: ...
    @property
    def offset(self) -> int: ...
    @property
    def eof(self) -> bool: ...

def parse_header(buffer: Buffer, /) -> tuple[str, int, int, int, int]: ...
def tag_name(tag: int, /, sub: bool = False) -> str | None: ...
def type_size(type: int, id_size: int, /) -> int: ...
def records(buffer: Buffer, /) -> Iterator[Record]: ...
def subrecords(buffer: Buffer, /) -> Iterator[SubRecord]: ...
def stats(buffer: Buffer, /, *, progress: Callable[[int, int], object] | None = None) -> dict[str, Any]: ...
def walk(buffer: Buffer, /) -> int: ...
