"""Paths of the checkout: read and written only inside it, never through a symbolic link.

A pull request can commit a symlink. Followed, `clusters/x/gpu-profile.yaml -> ~/.ssh/id_rsa`
would print the key in a parse error, and `overlays -> ..` would make render delete and write
outside the repository. So every step below the repository root is checked with lstat, and a
link is refused with one line naming it, whether it points inside the checkout or not.
"""

from __future__ import annotations

import stat
from pathlib import Path

from kubedata.files import NotRegularFile, TooLarge, read_regular

from renderer.errors import Problem, ProfileError

__all__ = ["LINK_REFUSED", "link_problem", "read_bytes", "repo_path"]

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
