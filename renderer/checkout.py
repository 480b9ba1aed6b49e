"""The git checkout around a folder, as the git CLI finds it.

Asked of `git` itself rather than GitPython: validate and render read only these two facts, and
a git process (a few ms) costs far less than importing GitPython (about 60 ms).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["checkout_root", "origin_url"]


def _git(cwd: Path, *args: str) -> str | None:
    """git's answer (stripped stdout), or None where git fails or is not installed."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def checkout_root(folder: Path) -> Path:
    """The top of the work tree holding `folder`, as `git rev-parse --show-toplevel` finds it
    (GIT_DIR and GIT_WORK_TREE included); `folder` itself when it is in no work tree."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    return Path(top) if top else folder


def origin_url(folder: Path) -> str | None:
    """URL of the `origin` remote of the repository holding `folder`; None if there is none."""
    if not folder.is_dir():
        return None
    return _git(folder, "config", "--get", "remote.origin.url") or None
