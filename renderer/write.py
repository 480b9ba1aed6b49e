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
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from renderer.errors import WriteError
from renderer.repofiles import link_problem, repo_path

__all__ = ["checkout_lock", "extra_paths", "stale_files", "write_dirs"]

_DEBRIS = re.compile(r"\.[^/]+\.(new|old)-[0-9a-f]{16}")


def _read(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # missing, a link or unreadable: differs from any generated text
    with os.fdopen(fd, "rb") as f:
        return f.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None


def _present(base: Path) -> set[str]:
    """Every file (or link, or other non-folder) under `base`, never following a link."""
    out: set[str] = set()
    for top, dirs, files in os.walk(base):
        rel = Path(top).relative_to(base)
        out |= {(rel / f).as_posix() for f in files}
        # os.walk lists a link to a folder among the folders and does not enter it
        out |= {(rel / d).as_posix() for d in dirs if Path(top, d).is_symlink()}
    return out


def stale_files(root: Path, dirs: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Files under `root` that differ from `dirs` (dir -> relative path -> text): changed,
    missing, or present but no longer generated. Sorted, relative to root."""
    out: list[str] = []
    for d, files in dirs.items():
        base = repo_path(root, d)
        for rel, text in files.items():
            if _read(base / rel) != text.encode("utf-8"):
                out.append(f"{d}/{rel}")
        if base.is_dir():
            out += [f"{d}/{rel}" for rel in _present(base) - set(files)]
    return sorted(out)


def _debris(root: Path, dirs: Mapping[str, object]) -> list[Path]:
    parents = {repo_path(root, d).parent for d in dirs}
    found = (p for parent in parents if parent.is_dir() for p in parent.iterdir())
    return sorted(p for p in found if _DEBRIS.fullmatch(p.name))


def extra_paths(root: Path, dirs: Mapping[str, object], gone: Sequence[str]) -> list[str]:
    """Paths that no render would leave: debris of an interrupted render, and the generated
    folders `gone` of clusters that no longer exist. Relative to root, folders end in "/"."""
    extra = [p.relative_to(root).as_posix() + "/" for p in _debris(root, dirs)]
    return sorted([*extra, *(f"{d}/" for d in gone)])


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
    for p in _debris(root, dirs):
        _remove(p)
    changed = [d for d in dirs if stale_files(root, {d: dirs[d]})]
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
