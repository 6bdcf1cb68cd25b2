"""Small helpers shared by the codecs: telling a buffer from a path or a
stream, opening only regular files, writing to a descriptor, and an ordered
thread pool."""

from __future__ import annotations

import collections
import concurrent.futures
import errno
import mmap
import os
import stat
from typing import IO, TYPE_CHECKING, Any, Callable, Protocol, Union

if TYPE_CHECKING:
    from typing_extensions import Buffer, TypeAlias, TypeIs


class Readable(Protocol):
    """A binary stream, as far as reading it goes."""

    def read(self, size: int = ..., /) -> bytes | None: ...


# A dump to read: a path ("-" is standard input where the codecs take it), a
# bytes-like object, or a binary stream (see hprofkit.open).
DumpSource: TypeAlias = Union[str, "os.PathLike[str]", "Buffer", Readable]
# Where output goes: a path (written atomically, see _output), "-" for
# standard output, or a binary file object.
Destination: TypeAlias = Union[str, "os.PathLike[str]", IO[bytes]]


_SPECIAL_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
                  stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


def special_kind(mode: int) -> str:
    """What a file of st_mode `mode` is, when it is not a regular file: "a FIFO"..."""
    return _SPECIAL_KINDS.get(stat.S_IFMT(mode), "a special file")


def open_regular(path: str, refuse: Callable[[str], BaseException]) -> IO[bytes]:
    """The file at path, opened for reading, when it is a regular file: else
    refuse(what it is) is raised ("a FIFO", "a character device"...) before
    anything is read, without waiting for a FIFO's writer; IsADirectoryError
    for a directory.  /dev/zero or a FIFO never end: they are refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(mode):
            raise refuse(special_kind(mode))
        os.set_blocking(fd, True)
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_buffer(source: Any) -> TypeIs[Buffer]:
    """Whether source is a bytes-like object (not a path, not a stream)."""
    if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)):
        return True
    if isinstance(source, (str, os.PathLike)) or hasattr(source, "read"):
        return False
    try:
        memoryview(source).release()
    except TypeError:
        return False
    return True


def to_fd(data: bytes, fd: int) -> bytes | int:
    """data itself, or, with fd >= 0, the number of its bytes written to fd."""
    if fd < 0:
        return data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    return len(data)


class OrderedJobs:
    """Jobs run on a thread pool; results come back in submission order.
    At most `window` jobs are in flight, which bounds memory."""

    def __init__(self, threads: int, name: str) -> None:
        self.threads = max(1, int(threads))
        self.window = 2 * self.threads
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix=name)
        self._pending: collections.deque[concurrent.futures.Future[Any]] = collections.deque()

    def submit(self, fn: Any, *args: Any) -> None:
        self._pending.append(self._pool.submit(fn, *args))

    def ready(self, wait_for: int | None = None) -> list[Any]:
        """Results of finished jobs in order; waits while more than `wait_for`
        (default: the window) are pending."""
        limit = self.window if wait_for is None else wait_for
        out = []
        while self._pending and (len(self._pending) > limit or self._pending[0].done()):
            out.append(self._pending.popleft().result())
        return out

    def close(self, cancel: bool = False) -> None:
        if cancel:
            for future in self._pending:
                future.cancel()
            self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=cancel)
