"""Reading a small file that someone else may have replaced by a FIFO, a device or a huge file.

A kubeconfig's tokenFile, a profile: each is a page of text. Opened without blocking (a FIFO
nobody writes to would hang the read) and only when it is a regular file (/dev/zero never ends),
at most `limit` bytes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kubedata.errors import KubeDataError

__all__ = ["NotRegularFile", "TooLarge", "read_regular"]


class NotRegularFile(KubeDataError, OSError):
    """A folder, FIFO, socket or device where a file was expected (an OSError, as the open's own
    errors are: callers catch them together and name the file)."""


class TooLarge(KubeDataError, OSError):
    """Larger than the limit; `size` is its size."""

    def __init__(self, size: int):
        super().__init__(f"{size} bytes")
        self.size = size


def read_regular(
    path: Path | str, limit: int, *, follow: bool = True, dir_fd: int | None = None
) -> bytes:
    """The bytes of the regular file at `path` (relative to the folder `dir_fd` when given);
    NotRegularFile, TooLarge, or the OSError of the open (FileNotFoundError...). `follow=False`
    refuses a symbolic link (ELOOP)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile("not a regular file")
        if info.st_size > limit:
            raise TooLarge(info.st_size)
        data = _read_all(fd, limit + 1, info.st_size + 1)
        if len(data) > limit:  # grew while read
            raise TooLarge(len(data))
        return data
    finally:
        os.close(fd)


def _read_all(fd: int, limit: int, expected: int) -> bytes:
    """Up to `limit` bytes of the open file `fd`, to its end, in reads of `expected` bytes (its
    size: one read, unless it grew; os.read may return fewer)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(limit - size, max(expected, 1 << 12)))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
