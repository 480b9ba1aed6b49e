"""Git objects read and written without a checkout, through git's plumbing.

Trees are listed and objects read in batches by renderer/gitdir.py (list_tree, read_objects): one
object at a time through gitpython cost a round trip each (seconds for ten thousand clusters).

Blobs and trees are hashed in Python and written in one pack by `git index-pack` (a thousand loose
object files would cost seconds on a slow disk); commits are made by `git commit-tree`; a branch
moves only by `git update-ref <ref> <new> <old>`, a compare-and-swap that fails cleanly when
someone else moved it first. Nothing here reads or writes the working tree or the index, so
objects written before a failure are unreferenced and `git gc` collects them.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Mapping, Sequence

import git
from kubedata.budget import Budget
from kubedata.child import ChildTimeout, run_child

from renderer.errors import GitError

__all__ = [
    "MODE_DIR",
    "MODE_FILE",
    "GitCommandFailed",
    "ObjectWriter",
    "RefMoved",
    "TreeEntries",
    "commit_tree",
    "object_id",
    "ref_sha",
    "run_git",
    "tree_data",
    "update_ref",
]

MODE_FILE = "100644"
MODE_DIR = "40000"
ZERO_SHA = "0" * 40
TreeEntries = dict[str, tuple[str, str]]
"""A tree: entry name -> (mode, hex object id)."""
_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3}


class RefMoved(GitError):
    """A ref was not where this publish last saw it: someone else moved it first."""


class GitCommandFailed(GitError):
    """A git command exited non-zero; the message is its first error line."""

    def __init__(self, command: str, status: int, stdout: str, stderr: str):
        self.status, self.stdout, self.stderr = status, stdout, stderr
        lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
        self.reason = (fatal or lines or [f"exit {status}"])[0]
        super().__init__(f"git {command} failed: {self.reason}")


def run_git(
    repo: git.Repo,
    *args: str,
    data: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    deadline: Budget | None = None,
) -> bytes:
    """Run `git <args>` in the repository (stdin: `data`); stdout, or GitError naming stderr
    (or saying that it was stopped, with every process it started: a remote's hook, an ssh,
    after `timeout` seconds or when the command's `deadline` passed)."""
    within = f"{timeout:g} s" if timeout is not None else ""
    if deadline is not None:
        setting = f" ({deadline.setting})" if deadline.setting else ""
        within = f"the deadline of {deadline.seconds:g} s{setting}"
        if deadline.remaining() <= 0:
            raise GitError(f"{within} passed before git {args[0]} could start")
        timeout = deadline.remaining()
    # git's messages in English (GitCommandFailed reads them), as gitpython runs it
    full_env = {**os.environ, "LANGUAGE": "C", "LC_ALL": "C", **(env or {})}
    try:
        done = run_child(
            ["git", *args], cwd=str(repo.working_dir), env=full_env, data=data, timeout=timeout
        )
    except ChildTimeout:
        raise GitError(f"git {args[0]} did not finish within {within}; it was stopped") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    if done.returncode != 0:
        raise GitCommandFailed(
            args[0],
            done.returncode,
            done.stdout.decode(errors="replace"),
            done.stderr.decode(errors="replace"),
        )
    return done.stdout


def object_id(kind: str, data: bytes) -> str:
    """The id git gives an object of this type and content."""
    return hashlib.sha1(b"%s %d\0%s" % (kind.encode(), len(data), data)).hexdigest()


def _tree_key(item: tuple[str, tuple[str, str]]) -> bytes:
    # git orders a tree's entries by name, a directory's name as if it ended in "/"
    name, (mode, _) = item
    return name.encode() + (b"/" if mode == MODE_DIR else b"")


def tree_data(entries: Mapping[str, tuple[str, str]]) -> bytes:
    """The content of a tree object."""
    return b"".join(
        b"%s %s\0%s" % (mode.encode(), name.encode(), bytes.fromhex(sha))
        for name, (mode, sha) in sorted(entries.items(), key=_tree_key)
    )


class ObjectWriter:
    """Collects new objects and writes them in one pack."""

    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, bytes]] = {}

    def add(self, kind: str, data: bytes, known: frozenset[str] = frozenset()) -> str:
        """The id of the object; kept for writing unless it is in `known` (already stored)."""
        sha = object_id(kind, data)
        if sha not in known:
            self.pending[sha] = (kind, data)
        return sha

    def tree(
        self, entries: Mapping[str, tuple[str, str]], known: frozenset[str] = frozenset()
    ) -> str:
        return self.add("tree", tree_data(entries), known)

    def pack(self) -> bytes:
        """The pending objects as a version 2 pack, without deltas."""
        out = bytearray(b"PACK" + struct.pack(">II", 2, len(self.pending)))
        for kind, data in self.pending.values():
            size = len(data)
            byte = (_PACK_TYPES[kind] << 4) | (size & 0x0F)
            size >>= 4
            header = bytearray()
            while size:
                header.append(byte | 0x80)
                byte = size & 0x7F
                size >>= 7
            header.append(byte)
            out += header + zlib.compress(data, 1)
        out += hashlib.sha1(out).digest()
        return bytes(out)

    def write(self, repo: git.Repo) -> int:
        """Store the pending objects in the repository; the number written."""
        count = len(self.pending)
        if count:
            run_git(repo, "index-pack", "--stdin", data=self.pack())
            self.pending.clear()
        return count


def ref_sha(repo: git.Repo, ref: str) -> str | None:
    """Where a ref points, or None if it does not exist."""
    try:
        out = run_git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitCommandFailed:
        return None
    return out.decode().strip()


def commit_tree(repo: git.Repo, tree: str, parents: Sequence[str], message: str) -> str:
    """A new commit of `tree` (author and committer from git's own configuration)."""
    args = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    try:
        out = run_git(repo, *args, "-F", "-", data=message.encode())
    except GitCommandFailed as exc:
        if "identity" in exc.stderr or "user.email" in exc.stderr:
            raise GitError(
                "git does not know who commits: set git config user.name and user.email"
            ) from None
        raise
    return out.decode().strip()


def update_ref(repo: git.Repo, ref: str, new: str, old: str | None, reason: str) -> None:
    """Point `ref` at `new` if it still points at `old` (None: if it does not exist yet)."""
    try:
        run_git(repo, "update-ref", "-m", reason, ref, new, old or ZERO_SHA)
    except GitCommandFailed as exc:
        if "cannot lock ref" in exc.stderr:
            raise RefMoved(f"{ref} moved while publishing") from None
        raise
