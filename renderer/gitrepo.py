"""Git repositories through GitPython, at the edges: opening the checkout, resolving a ref, and
starting a fresh repository (the demo, benchmarks and tests). Reading files at a ref without a
checkout is renderer/gitdir.py's."""

from __future__ import annotations

from pathlib import Path

import git

from renderer.gitdir import not_a_checkout, resolve_sha

__all__ = ["init_repo", "open_repo", "resolve"]


def open_repo(path: Path) -> git.Repo:
    """The git repository at (or above) `path`; a GitError that says what is wrong otherwise:
    no such folder, not a folder, no repository there or above, or a permission refused."""
    try:
        if not path.is_dir():
            raise not_a_checkout(path, None)
        return git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise not_a_checkout(path, None) from None
    except PermissionError as exc:
        raise not_a_checkout(path, exc) from None


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
    return repo.commit(resolve_sha(repo, ref))
