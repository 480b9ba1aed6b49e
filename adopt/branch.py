"""The adopt branch: one commit on top of HEAD, made with git plumbing in a private index.

Neither the working tree, the checkout's index nor the current branch is touched: the commit's tree
is HEAD's with the changed files and the regenerated directories swapped in (a temporary index file,
`update-index --index-info`, `write-tree`), and the branch is created by a compare-and-swap
`update-ref` that fails if it exists. A failure before that leaves only unreferenced objects.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import git
from renderer.errors import GitError
from renderer.publish.gitobjects import (
    MODE_FILE,
    ZERO_SHA,
    ObjectWriter,
    commit_tree,
    object_id,
    ref_sha,
    run_git,
    update_ref,
)

from adopt.errors import AdoptError

__all__ = ["delete_branch", "ensure_clean", "make_commit", "same_content", "tree_blobs"]


def ensure_clean(repo: git.Repo) -> str:
    """HEAD's commit, when the checkout has no uncommitted change; AdoptError otherwise."""
    if repo.is_dirty(index=True, working_tree=True, untracked_files=False):
        raise AdoptError(
            f"{repo.working_tree_dir} has uncommitted changes (git status): commit or stash them, "
            "then adopt"
        )
    head = ref_sha(repo, "HEAD")
    if head is None:
        raise AdoptError(f"{repo.working_tree_dir} has no commit yet: commit the profiles first")
    return head


def tree_blobs(repo: git.Repo, commit: str, paths: Sequence[str]) -> dict[str, str]:
    """Blob id of every file at or under `paths` in `commit`."""
    out = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths)
    blobs: dict[str, str] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        info, _, path = entry.partition(b"\t")
        _, kind, sha = info.decode().split()
        if kind == "blob":
            blobs[path.decode()] = sha
    return blobs


def same_content(
    repo: git.Repo, commit: str, files: Mapping[str, bytes], dirs: Sequence[str]
) -> bool:
    """Whether `commit` holds exactly `files` in `dirs` and at the other paths of `files`."""
    have = tree_blobs(repo, commit, [*dirs, *files])
    want = {path: object_id("blob", data) for path, data in files.items()}
    return have == want


def make_commit(
    repo: git.Repo,
    base: str,
    files: Mapping[str, bytes],
    dirs: Sequence[str],
    message: str,
) -> str:
    """A commit on `base` whose `dirs` hold exactly the `files` under them; other `files` are
    written where they are; everything else is `base`'s."""
    writer = ObjectWriter()
    lines = [f"0 {ZERO_SHA}\t{path}" for path in tree_blobs(repo, base, dirs) if path not in files]
    lines += [f"{MODE_FILE} {writer.add('blob', data)}\t{path}" for path, data in files.items()]
    with tempfile.TemporaryDirectory(prefix="gpu-gitops-adopt-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        try:
            writer.write(repo)
            run_git(repo, "read-tree", base, env=env)
            run_git(
                repo,
                "update-index",
                "-z",
                "--index-info",
                data="\0".join(lines).encode() + b"\0",
                env=env,
            )
            tree = run_git(repo, "write-tree", env=env).decode().strip()
        except GitError as exc:
            raise AdoptError(f"cannot write the adopt commit: {exc}") from None
    return commit_tree(repo, tree, [base], message)


def create_branch(repo: git.Repo, branch: str, commit: str) -> None:
    """Create `branch` at `commit`; AdoptError if it exists (nothing is overwritten)."""
    try:
        update_ref(repo, f"refs/heads/{branch}", commit, None, "gpu-gitops adopt")
    except GitError as exc:
        raise AdoptError(f"cannot create branch {branch}: {exc}") from None


def delete_branch(repo: git.Repo, branch: str, commit: str) -> None:
    """Remove a branch this run made, if it still points where it was made."""
    with contextlib.suppress(GitError):
        run_git(repo, "update-ref", "-d", f"refs/heads/{branch}", commit)
