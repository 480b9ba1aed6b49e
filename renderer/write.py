"""Writing generated trees: every directory is replaced whole, or not at all."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from renderer.errors import WriteError

__all__ = ["stale_files", "write_dirs"]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def stale_files(root: Path, dirs: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Files under `root` that differ from `dirs` (dir -> relative path -> text): changed,
    missing, or present but no longer generated. Sorted, relative to root."""
    out: list[str] = []
    for d, files in dirs.items():
        base = root / d
        for rel, text in files.items():
            if _read(base / rel) != text:
                out.append(f"{d}/{rel}")
        if base.is_dir():
            extra = {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()}
            out += [f"{d}/{rel}" for rel in extra - set(files)]
    return sorted(out)


def write_dirs(root: Path, dirs: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Replace each directory `root/<dir>` by exactly `files`; return the directories changed.

    Every new directory is staged next to its target first; only when all are staged are they
    swapped in, so an error while writing leaves every previous file untouched.
    """
    changed = [d for d in dirs if stale_files(root, {d: dirs[d]})]
    staged: list[tuple[Path, Path]] = []
    try:
        for d in changed:
            target = root / d
            target.parent.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
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
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
        stage.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return changed
