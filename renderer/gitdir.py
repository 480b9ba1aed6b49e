"""Reading a git repository through the git command, without GitPython: the audit reads only
commits, trees and blobs, and importing GitPython cost a snapshot audit's start-up a quarter of
its time. A git.Repo is a GitDir too, so its users read through the same functions."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from renderer.errors import GitError

__all__ = [
    "Checkout",
    "GitDir",
    "TreeItem",
    "branch_name",
    "find_sha",
    "git_bytes",
    "list_tree",
    "not_a_checkout",
    "open_checkout",
    "read_blobs",
    "read_objects",
    "read_tree",
    "resolve_sha",
    "tree_entries",
    "unknown_ref",
]


# An entry of `git ls-tree -z`: "<mode> <type> <id>\t<path>\0". A tree's mode is padded to
# 040000, but a tree object (and publish's TreeEntries) says 40000. One regular expression over
# the whole listing, not a split per entry: a hundred thousand entries for ten thousand clusters.
_LS_TREE = re.compile(r"0*(\d+) (\w+) ([0-9a-f]+)\t([^\0]*)\0")


class GitDir(Protocol):
    """A repository: its .git folder, and its work tree when it has one (git.Repo is one)."""

    @property
    def git_dir(self) -> str | os.PathLike[str]: ...

    @property
    def working_tree_dir(self) -> str | os.PathLike[str] | None: ...


@dataclass(frozen=True)
class Checkout:
    """A repository opened by open_checkout."""

    git_dir: str
    path: Path
    """The folder it was opened from: the work tree is asked of git only for an error message."""

    @property
    def working_tree_dir(self) -> str | None:
        done = _git(["-C", str(self.path), "rev-parse", "--show-toplevel"])
        return done.stdout.decode(errors="surrogateescape").strip() or None


def not_a_checkout(path: Path, error: BaseException | None) -> GitError:
    """Why `path` opens no repository: no such folder, not a folder, no repository there or
    above, or (`error` a PermissionError) a permission refused."""
    if isinstance(error, PermissionError):
        denied = error.filename or path
        return GitError(
            f"{path}: permission denied reading {denied}; run as a user who may read the checkout"
        )
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        return GitError(f"{path} {what}; pass --repo DIR, the checkout of the gitops repository")
    return GitError(
        f"{path} is not inside a git repository (no .git there or above); pass --repo DIR, "
        "or run git init there"
    )


def open_checkout(path: Path) -> Checkout:
    """The git repository at (or above) `path`; a GitError that says what is wrong otherwise."""
    try:
        if not path.is_dir():
            raise not_a_checkout(path, None)
        done = _git(["-C", str(path), "rev-parse", "--absolute-git-dir"])
    except PermissionError as exc:
        raise not_a_checkout(path, exc) from None
    if done.returncode == 0:
        return Checkout(done.stdout.decode(errors="surrogateescape").strip(), path)
    reason = done.stderr.decode(errors="replace")
    if "not a git repository" in reason:
        raise not_a_checkout(path, None)
    if "Permission denied" in reason:
        raise not_a_checkout(path, PermissionError(13, "Permission denied", str(path)))
    raise GitError(f"{path}: git rev-parse failed: {_first_line(reason, done.returncode)}")


def unknown_ref(repo: GitDir, ref: str, has_head: bool) -> GitError:
    """Why `ref` names no commit: a repository without commits, or no such ref."""
    if not has_head:
        where = repo.working_tree_dir or repo.git_dir
        return GitError(f"{where} has no commits yet; commit the clusters/ folder first")
    return GitError(f'unknown git ref "{ref}"; check the branch or commit name')


def find_sha(repo: GitDir, ref: str) -> str | None:
    """The full sha of the commit a ref (branch, tag, sha, HEAD~1...) names; None when the
    repository has no such commit."""
    verify = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"]
    done = _git(["--git-dir", str(repo.git_dir), *verify])
    return done.stdout.decode().strip() or None if done.returncode == 0 else None


def resolve_sha(repo: GitDir, ref: str) -> str:
    """A ref -> the full sha of its commit; GitError naming the ref if unknown."""
    sha = find_sha(repo, ref)
    if sha is None:
        raise unknown_ref(repo, ref, find_sha(repo, "HEAD") is not None)
    return sha


def branch_name(repo: GitDir) -> str | None:
    """The branch HEAD is on; None when HEAD is detached."""
    done = _git(["--git-dir", str(repo.git_dir), "symbolic-ref", "--quiet", "HEAD"])
    head = done.stdout.decode(errors="surrogateescape").strip()
    return head.removeprefix("refs/heads/") if done.returncode == 0 and head else None


def tree_entries(repo: GitDir, treeish: str) -> dict[str, str]:
    """The entries of a tree (`<sha>` or `<sha>:<folder>`): name -> type (blob, tree, commit);
    empty when there is no such tree."""
    done = _git(["--git-dir", str(repo.git_dir), "ls-tree", "-z", treeish])
    entries: dict[str, str] = {}
    for entry in done.stdout.split(b"\0") if done.returncode == 0 else []:
        head, _, name = entry.partition(b"\t")
        fields = head.split()
        if len(fields) == 3:
            entries[name.decode(errors="surrogateescape")] = fields[1].decode()
    return entries


def read_tree(repo: GitDir, sha: str, top: str) -> dict[str, bytes]:
    """Every blob under `top` at commit `sha`: repo-relative path -> bytes.

    Two git processes whatever the number of files (ls-tree, then one cat-file --batch): reading
    the 18,620 files of a large cluster blob by blob through GitPython took three times as long.
    """
    return read_blobs(repo, list_tree(repo, sha, top))


def read_blobs(repo: GitDir, items: Iterable[TreeItem]) -> dict[str, bytes]:
    """The blobs among ls-tree's `items`: path -> bytes, in one cat-file --batch."""
    blobs = {path: sha for _, kind, sha, path in items if kind == "blob"}
    return dict(zip(blobs, read_objects(repo, list(blobs.values())), strict=True))


TreeItem = tuple[str, str, str, str]
"""One entry of `git ls-tree`: mode (as in TreeEntries), type, id and path; a plain tuple, as the
regular expression finds it (ten thousand clusters list a hundred thousand entries)."""


def list_tree(repo: GitDir, treeish: str, *paths: str) -> list[TreeItem]:
    """Every entry of a tree under `paths` (all when none), subtrees before their contents."""
    out = git_bytes(repo, "ls-tree", "-r", "-t", "-z", "--full-tree", treeish, "--", *paths)
    items: list[TreeItem] = _LS_TREE.findall(out.decode(errors="surrogateescape"))
    return items


def read_objects(repo: GitDir, shas: Sequence[str]) -> list[bytes]:
    """The contents of these objects, in order (GitError if one is missing)."""
    if not shas:
        return []
    ids = "".join(f"{sha}\n" for sha in shas)
    # --buffer: git flushes its output once at the end, not after every object
    out = git_bytes(repo, "cat-file", "--batch", "--buffer", data=ids)
    contents = []
    pos = 0
    for sha in shas:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")  # "<sha> <type> <size>", or "<sha> missing"
        if len(header) != 3:
            raise GitError(f"object {sha} is missing from the repository")
        size = int(header[2])
        contents.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1  # the content ends in a newline of the batch's own
    return contents


def git_bytes(repo: GitDir, *args: str, data: str | None = None) -> bytes:
    """The output of `git ARGS` in the repository; GitError with git's reason if it fails."""
    done = _git(["--git-dir", str(repo.git_dir), *args], data)
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace")
        raise GitError(f"git {args[0]} failed: {_first_line(reason, done.returncode)}")
    return done.stdout


def _first_line(reason: str, code: int) -> str:
    lines = reason.strip().splitlines()
    return lines[0] if lines else str(code)


def _git(args: list[str], data: str | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args],
        input=data.encode() if data is not None else None,
        capture_output=True,
        check=False,
    )
