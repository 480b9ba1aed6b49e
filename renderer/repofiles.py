"""Paths of the checkout: read and written only inside it, never through a symbolic link.

A pull request can commit a symlink. Followed, `clusters/x/gpu-profile.yaml -> ~/.ssh/id_rsa`
would print the key in a parse error, and `overlays -> ..` would make render delete and write
outside the repository. So every step below the repository root is checked with lstat, and a
link is refused with one line naming it, whether it points inside the checkout or not.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kubedata.files import NotRegularFile, TooLarge, read_regular

from renderer.errors import Problem, ProfileError

__all__ = ["FOLDER", "LINK_REFUSED", "Folders", "link_problem", "read_bytes", "repo_path"]

LINK_REFUSED = (
    "is a symbolic link; gpu-gitops reads and writes files of the repository only, never through "
    "a link: replace it with the file or folder itself"
)


def link_problem(rel: str) -> ProfileError:
    return ProfileError([Problem(rel, 0, "", LINK_REFUSED)])


def repo_path(root: Path, rel: str) -> Path:
    """`root/rel`, after checking that no existing step of `rel` is a symbolic link.

    `rel` is a relative path with "/" separators and no "." or ".." steps (a cluster name is a
    DNS label, the rest are the tool's own names). Missing steps are fine: they will be created.
    """
    path = root
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a plain relative path: {rel!r}")
    for i, part in enumerate(parts):
        path = path / part
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:
            return root / rel
        except NotADirectoryError:
            return root / rel  # a file where a folder should be: the caller's read or write fails
        if stat.S_ISLNK(mode):
            raise link_problem("/".join(parts[: i + 1]))
    return path


FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""os.open flags of a folder to read files of (`dir_fd`), refused when it is a link."""


class Folders:
    """Descriptors of the checkout's folders, for reading many files of many folders quickly
    (`dir_fd`): `with Folders(root) as folders: fd = folders.get("overlays/ams1")`.

    Each step of a path is opened relative to the one before without following a link, so a link
    put in place while they are read cannot lead outside the checkout. The folders above the last
    one asked for stay open: asked for in order, folders share their parents' descriptors.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._open: dict[str, int] = {}

    def __enter__(self) -> Folders:
        self._open[""] = os.open(self._root, FOLDER & ~os.O_NOFOLLOW)  # the root may be a link
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._open.values():
            os.close(fd)
        self._open.clear()

    def get(self, rel: str) -> int | None:
        """The descriptor of `root/rel`, valid until the next call: None when a step of `rel` is
        missing or is not a folder; a link is refused as by repo_path."""
        fd = self._step(rel)
        for key in [k for k in self._open if k and not (rel == k or rel.startswith(k + "/"))]:
            os.close(self._open.pop(key))
        return fd

    def _step(self, rel: str) -> int | None:
        if rel in self._open:
            return self._open[rel]
        parent, _, part = rel.rpartition("/")
        at = self._step(parent)
        if at is None:
            return None
        try:
            fd = os.open(part, FOLDER, dir_fd=at)
        except NotADirectoryError:  # what O_NOFOLLOW says of a link, as of a file
            if stat.S_ISLNK(os.lstat(part, dir_fd=at).st_mode):
                raise link_problem(rel) from None
            return None
        except OSError:
            return None
        self._open[rel] = fd
        return fd


def read_bytes(root: Path, rel: str, limit: int) -> bytes | None:
    """The bytes of the regular file `root/rel` (None if absent); over `limit` bytes is refused.

    Opened without following a link and without blocking, so a FIFO or a device committed in the
    link's place can neither hang nor flood the read.
    """
    path = repo_path(root, rel)
    try:
        return read_regular(path, limit, follow=False)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        raise ProfileError(
            [Problem(rel, 0, "", "not a regular file; it must be YAML text")]
        ) from None
    except TooLarge as exc:
        message = f"file is {exc.size} bytes, over the {limit} limit"
        raise ProfileError([Problem(rel, 0, "", message)]) from None
    except OSError as exc:
        if path.is_symlink():
            raise link_problem(rel) from None
        raise ProfileError([Problem(rel, 0, "", f"cannot read: {exc.strerror}")]) from None
