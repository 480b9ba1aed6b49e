"""Writing generated trees: every directory is replaced whole, or not at all.

Only inside the repository: every generated path is checked for symbolic links first (a committed
`overlays -> ..` must not make render write outside). A new directory is staged next to its target
under a random name and swapped in; a kill between the two renames leaves debris named
`.<dir>.new-*` / `.<dir>.old-*`, which the next run removes (under the checkout lock, so it is
nobody's work in progress) and which `render --check` reports. Folders are created with the
user's umask.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from kubedata.files import read_regular

from renderer.errors import WriteError
from renderer.repofiles import FOLDER, Folders, link_problem, repo_path

__all__ = [
    "checkout_lock",
    "extra_paths",
    "file_digest",
    "outdated_dirs",
    "remove_debris",
    "replace_file",
    "stale_digests",
    "stale_files",
    "write_dirs",
]

_DEBRIS = re.compile(r"\.[^/]+\.(new|old)-[0-9a-f]{16}")
_ANY_SIZE = 1 << 40


def _read(name: str, dir_fd: int) -> bytes | None:
    try:
        return read_regular(name, _ANY_SIZE, follow=False, dir_fd=dir_fd)
    except OSError:
        return None  # missing, a link, a FIFO or unreadable: differs from any generated text


def _present(fd: int, prefix: str = "") -> set[str]:
    """Every file (or link, or other non-folder) under the folder `fd`, never following a link."""
    out: set[str] = set()
    with os.scandir(fd) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                out.add(prefix + entry.name)
                continue
            try:
                sub = os.open(entry.name, FOLDER, dir_fd=fd)
            except OSError:
                continue  # replaced or unreadable since it was listed: as os.walk, skip it
            try:
                out |= _present(sub, f"{prefix}{entry.name}/")
            finally:
                os.close(sub)
    return out


def file_digest(data: bytes) -> str:
    """What render's cache keeps of a generated file (renderer.render_cache)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stale_files(root: Path, dirs: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Files under `root` that differ from `dirs` (dir -> relative path -> text): changed,
    missing, or present but no longer generated. Sorted, relative to root."""
    return sorted(p for paths in _stale(root, dirs, _same_text).values() for p in paths)


def stale_digests(root: Path, digests: Mapping[str, Mapping[str, str]]) -> list[str]:
    """As stale_files, from the digests (file_digest) of the texts."""
    return sorted(p for paths in _stale(root, digests, _same_digest).values() for p in paths)


def outdated_dirs(root: Path, digests: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The folders of `digests` that hold a stale file, in their order."""
    return [d for d, paths in _stale(root, digests, _same_digest).items() if paths]


def _same_text(data: bytes | None, text: str) -> bool:
    return data == text.encode("utf-8")


def _same_digest(data: bytes | None, digest: str) -> bool:
    return data is not None and file_digest(data) == digest


def _stale(
    root: Path, dirs: Mapping[str, Mapping[str, str]], same: Callable[[bytes | None, str], bool]
) -> dict[str, list[str]]:
    """Folder -> its stale files (relative to root), one walk for all of them."""
    out: dict[str, list[str]] = {}
    with Folders(root) as folders:
        for d, files in dirs.items():
            fd = folders.get(d)
            if fd is None:
                out[d] = [f"{d}/{rel}" for rel in files]
                continue
            out[d] = [f"{d}/{rel}" for rel, want in files.items() if not same(_read(rel, fd), want)]
            out[d] += [f"{d}/{rel}" for rel in sorted(_present(fd) - files.keys())]
    return out


def _debris(root: Path, dirs: Iterable[str]) -> list[Path]:
    found: list[Path] = []
    with Folders(root) as folders:
        for parent in sorted({d.rpartition("/")[0] for d in dirs}):
            fd = folders.get(parent)
            names = [] if fd is None else os.listdir(fd)  # noqa: PTH208 (by descriptor)
            found += [root / parent / n for n in names if _DEBRIS.fullmatch(n)]
    return sorted(found)


def remove_debris(root: Path, dirs: Iterable[str]) -> None:
    """Remove what an interrupted render left beside the generated folders `dirs`. The caller
    holds `checkout_lock`, so it is nobody's work in progress."""
    for p in _debris(root, dirs):
        _remove(p)


def extra_paths(root: Path, dirs: Iterable[str], gone: Sequence[str]) -> list[str]:
    """Paths that no render would leave: debris of an interrupted render, and the generated
    folders `gone` of clusters that no longer exist. Relative to root, folders end in "/"."""
    extra = [p.relative_to(root).as_posix() + "/" for p in _debris(root, dirs)]
    return sorted([*extra, *(f"{d}/" for d in gone)])


def replace_file(path: Path, text: str) -> None:
    """Replace the file whole or not at all (a temporary file renamed over it)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            Path(tmp).replace(path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror}; nothing was changed") from None


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path)


@contextmanager
def checkout_lock(root: Path, shared: bool = False) -> Iterator[None]:
    """Hold the checkout's lock (flock on the folder itself: no lock file to leave behind):
    exclusive for render, which writes the working tree; shared for publish, which reads it
    (--allow-dirty) and may run beside another publish (its ref update settles that race)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WriteError(
                f"another gpu-gitops render or publish is running in {root}; run it again when "
                "it is done"
            ) from None
        yield
    finally:
        os.close(fd)  # releases the lock


def write_dirs(
    root: Path, dirs: Mapping[str, Mapping[str, str]], remove: tuple[str, ...] = ()
) -> list[str]:
    """Replace each directory `root/<dir>` by exactly `files`, and delete the folders `remove`;
    return the directories changed. The caller holds `checkout_lock`.

    Every new directory is staged next to its target first; only when all are staged are they
    swapped in, so an error while writing leaves every previous file untouched.
    """
    for d in remove:
        repo_path(root, d)
    remove_debris(root, dirs)
    changed = [d for d, paths in _stale(root, dirs, _same_text).items() if paths]
    staged: list[tuple[Path, Path]] = []
    try:
        for d in changed:
            target = repo_path(root, d)
            target.parent.mkdir(parents=True, exist_ok=True)
            # a random name, not the PID: a reused PID must not meet an old run's folder
            stage = target.with_name(f".{target.name}.new-{secrets.token_hex(8)}")
            stage.mkdir()
            staged.append((stage, target))
            for rel, text in dirs[d].items():
                path = stage / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    except OSError as exc:
        for stage, _ in staged:
            shutil.rmtree(stage, ignore_errors=True)
        raise WriteError(
            f"cannot write under {root}: {exc.strerror}; nothing was changed"
        ) from None
    for stage, target in staged:
        if target.is_symlink():
            raise link_problem(target.relative_to(root).as_posix())
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{secrets.token_hex(8)}")
            target.rename(old)
        stage.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    for d in remove:
        _remove(root / d)
    return changed + list(remove)
