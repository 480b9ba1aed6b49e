"""Git repositories at the edges: opening the checkout, reading the files under clusters/ at a
ref without a checkout, and starting a fresh repository (the demo, benchmarks and tests)."""

from __future__ import annotations

from pathlib import Path

import git

from renderer.errors import GitError

__all__ = ["init_repo", "open_repo", "resolve", "tree_files"]


def open_repo(path: Path) -> git.Repo:
    """The git repository at (or above) `path`."""
    try:
        return git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{path} is not inside a git repository; pass --repo DIR") from None


def init_repo(root: Path, message: str, *, user: str, email: str) -> git.Repo:
    """A new repository at `root` (branch main) whose first commit holds everything under it.

    The committer identity goes into the repository's own config, so later commits made there
    (by git, gitpython or `publish`) work whatever the user's ~/.gitconfig says.
    """
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", user)
        cfg.set_value("user", "email", email)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", message)
    return repo


def resolve(repo: git.Repo, ref: str) -> git.Commit:
    """A ref (branch, tag, sha, HEAD~1...) -> commit; GitError naming the ref if unknown."""
    try:
        return repo.commit(ref)
    except (git.BadName, ValueError):
        raise GitError(f'unknown git ref "{ref}"; check the branch or commit name') from None


def tree_files(commit: git.Commit, top: str = "clusters") -> dict[str, bytes]:
    """Every blob under `top` at this commit: repo-relative path -> bytes."""
    try:
        tree = commit.tree / top
    except KeyError:
        return {}
    return {
        str(item.path): item.data_stream.read()
        for item in tree.traverse()
        if isinstance(item, git.Blob)
    }
