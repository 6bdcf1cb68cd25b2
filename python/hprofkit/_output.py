"""Where the file commands write, so that no file is ever lost or destroyed.

- A path naming a regular file, or nothing yet, is written atomically: into
  an unnamed file in the destination's directory (Linux O_TMPFILE), synced,
  then given its name in one step.  Until then no name exists, so nothing is
  left behind whatever ends the process, SIGKILL included.  Where O_TMPFILE
  is missing, a hidden ".NAME.XXXXXXXX.partial" file is used instead and
  removed on any exception (the CLI turns SIGTERM and SIGHUP into one).
- A symlink is followed: its target is replaced and the link kept.
- Anything else that exists (a FIFO, a character device such as /dev/null,
  a socket) is written into directly, never replaced; so is standard output
  named by a path (/dev/stdout, or the file it was redirected to).
- A file replaced keeps its permission bits; a new one gets those open()
  gives (0666 less the umask, which the kernel applies: the process-wide
  umask is never changed).
- The output may not be the input: same_file() compares device and inode,
  so links, symlinks and other spellings of a path are caught.
- An OSError names the destination, never the temporary file.
- A directory of outputs (Parquet tables) is new_directory(): filled under a
  hidden name beside it, then renamed into place; an existing name is refused."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import shutil
import stat
import sys
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator

from ._io import special_kind

if TYPE_CHECKING:
    from typing_extensions import TypeGuard

# Whether to try O_TMPFILE (tests turn it off to check the named fallback).
USE_TMPFILE = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def is_path(obj: object) -> TypeGuard[str | os.PathLike[str]]:
    return isinstance(obj, (str, os.PathLike)) and obj != "-"


def _stat(obj: Any, output: bool) -> os.stat_result | None:
    """What a path, "-" or a file object names (following symlinks), or None."""
    try:
        if isinstance(obj, str) and obj == "-":
            return os.fstat(1 if output else 0)
        if isinstance(obj, (str, os.PathLike)):
            return os.stat(obj)
        return os.fstat(obj.fileno())
    except (OSError, AttributeError, ValueError, TypeError, io.UnsupportedOperation):
        return None


def _same(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def same_file(a: Any, b: Any) -> bool:
    """Whether paths (or file objects) a and b name one existing file, symlinks followed."""
    return _same(_stat(a, output=False), _stat(b, output=False))


def check_not_same_file(src: Any, dst: Any) -> None:
    """ValueError when writing dst would overwrite the file src reads."""
    inside = _stat(src, output=False)
    if inside is not None and stat.S_ISREG(inside.st_mode) and _same(inside, _stat(dst, output=True)):
        shown = "standard output" if is_stdout(dst) else repr(os.fspath(dst)) \
            if isinstance(dst, (str, os.PathLike)) else "the output file"
        raise ValueError(f"{shown} is the input file: writing it would destroy the input")


def is_stdout(dst: Any) -> bool:
    """Whether dst is standard output: "-", or a path to what it is open on
    (/dev/stdout, /proc/self/fd/1, the file it was redirected to)."""
    if isinstance(dst, str) and dst == "-":
        return True
    return isinstance(dst, (str, os.PathLike)) and _same(_stat(dst, output=True), _stat("-", output=True))


def named(exc: OSError, name: str) -> OSError:
    """exc, naming `name` (the destination) instead of whatever it named."""
    out = OSError(exc.errno, exc.strerror or str(exc), name)
    out.__cause__ = None
    return out


@contextlib.contextmanager
def output_file(dst: Any) -> Iterator[IO[bytes]]:
    """A binary file to write the output into (see the module docstring).
    "-" is standard output; a file object is used as it is."""
    if is_stdout(dst):  # written where the caller's shell pointed it
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    if not isinstance(dst, (str, os.PathLike)):
        yield dst
        return
    shown = os.fspath(dst)
    try:
        st = os.stat(shown)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise named(exc, shown) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), shown)
    if st is not None and not stat.S_ISREG(st.st_mode):
        with _stream_into(shown, shown) as f:  # /dev/stdout and the like: opened as they are
            yield f
        return
    # A regular file, or none yet: what the path names once symlinks are followed.
    with _atomic(os.path.realpath(shown), shown, None if st is None else stat.S_IMODE(st.st_mode)) as f:
        yield f


@contextlib.contextmanager
def _stream_into(target: str, shown: str) -> Iterator[IO[bytes]]:
    """Writes into an existing FIFO, device or socket, as `cat > x` would."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise named(exc, shown) from None
    with open(fd, "wb") as f:
        yield f


@contextlib.contextmanager
def _atomic(target: str, shown: str, mode: int | None) -> Iterator[IO[bytes]]:
    """A regular file that appears at `target` only once complete.  Names
    are resolved against the directory's descriptor, held throughout."""
    directory, name = os.path.split(target)
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise named(exc, shown) from None
    temp: str | None = None
    fd = -1
    try:
        fd, temp = _create(dir_fd, name)
        if mode is not None:
            os.fchmod(fd, mode & 0o777)  # what is replaced keeps its permissions
        with open(fd, "wb", closefd=False) as f:
            yield f
        os.fsync(fd)
        _commit(fd, temp, dir_fd, name)
        temp = None
        with contextlib.suppress(OSError):  # some file systems cannot sync a directory
            os.fsync(dir_fd)
    except OSError as exc:
        _remove(temp, dir_fd)
        raise named(exc, shown) from None
    except BaseException:
        _remove(temp, dir_fd)
        raise
    finally:
        if fd >= 0:
            os.close(fd)
        os.close(dir_fd)


def _partial_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(4)}.partial"


def _create(dir_fd: int, name: str) -> tuple[int, str | None]:
    """An open descriptor for the new file, and its temporary name (None for an unnamed file)."""
    if USE_TMPFILE:
        try:
            return os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o666, dir_fd=dir_fd), None
        except OSError as exc:  # a file system without O_TMPFILE: fall back to a name
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    while True:
        temp = _partial_name(name)
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666, dir_fd=dir_fd), temp
        except FileExistsError:
            continue


def _commit(fd: int, temp: str | None, dir_fd: int, name: str) -> None:
    """Gives the complete file (named `temp`, or unnamed) the name `name`."""
    if temp is None:
        # linkat(AT_FDCWD, "/proc/self/fd/N", dir_fd, name, AT_SYMLINK_FOLLOW)
        unnamed = f"/proc/self/fd/{fd}"
        try:
            os.link(unnamed, name, dst_dir_fd=dir_fd, follow_symlinks=True)
            return
        except FileExistsError:
            pass
        # The name is taken: name the file beside it, then rename it over
        # the old one (the only moment a temporary name exists).
        while True:
            temp = _partial_name(name)
            try:
                os.link(unnamed, temp, dst_dir_fd=dir_fd, follow_symlinks=True)
                break
            except FileExistsError:
                continue
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _remove(temp, dir_fd)
        raise


def _remove(temp: str | None, dir_fd: int) -> None:
    if temp is not None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)


def check_replaceable(dst: str | os.PathLike[str], owned: Callable[[str], bool], kind: str) -> None:
    """For a writer that replaces only files of its own kind (heap baselines):
    ValueError unless dst is missing, a regular file, or a symlink whose final
    target is a regular file that owned(target) accepts.  output_file would
    write into a FIFO or a device and replace any link's target: a baseline
    linked to the dump it describes must not become JSON.  A dangling link is
    refused too: where it points is nobody's choice for a new file."""
    shown = os.fspath(dst)
    try:
        link = stat.S_ISLNK(os.lstat(shown).st_mode)
        st = os.stat(shown)
    except FileNotFoundError:
        if not os.path.lexists(shown):
            return
        raise ValueError(f"{shown} is a symlink to {os.path.realpath(shown)}, which does not exist: "
                         f"not written through it") from None
    except OSError as exc:
        raise named(exc, shown) from None
    if not stat.S_ISREG(st.st_mode):
        what = special_kind(st.st_mode)
        target = f"a symlink to {os.path.realpath(shown)}, " if link else ""
        raise ValueError(f"{shown} is {target}{what}, not a regular file: not replaced")
    if link and not owned(os.path.realpath(shown)):
        raise ValueError(f"{shown} is a symlink to {os.path.realpath(shown)}, which is not {kind}: "
                         f"not written through it")


@contextlib.contextmanager
def new_directory(dst: str | os.PathLike[str]) -> Iterator[str]:
    """A directory to fill, which appears at `dst` only once complete, its files synced: the
    caller writes into the hidden temporary directory yielded.  FileExistsError when `dst` exists
    (whatever it is: a directory, a file, a symlink, a FIFO): nothing is replaced."""
    shown = os.fspath(dst)
    if os.path.lexists(shown):
        raise FileExistsError(errno.EEXIST, "exists: a new directory is written, nothing replaced", shown)
    parent, name = os.path.split(os.path.abspath(shown))
    try:
        temp = os.path.join(parent, _partial_name(name))
        os.mkdir(temp, 0o777)
    except OSError as exc:
        raise named(exc, shown) from None
    try:
        yield temp
        for entry in os.scandir(temp):
            if entry.is_file(follow_symlinks=False):
                _sync(entry.path)
        _sync(temp)
        if os.path.lexists(shown):  # appeared meanwhile: still never replaced
            raise FileExistsError(errno.EEXIST, "exists: a new directory is written, nothing replaced", shown)
        os.rename(temp, shown)
        with contextlib.suppress(OSError):
            _sync(parent)
    except OSError as exc:
        shutil.rmtree(temp, ignore_errors=True)
        raise named(exc, shown) from None
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _sync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
