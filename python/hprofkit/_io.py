"""Small I/O helper shared by the codecs."""

from __future__ import annotations

import os


def to_fd(data: bytes, fd: int) -> bytes | int:
    """data itself, or, with fd >= 0, the number of its bytes written to fd."""
    if fd < 0:
        return data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    return len(data)
