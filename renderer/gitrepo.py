"""Git repositories at the edges: opening the checkout, reading the files under clusters/ at a
ref without a checkout, and starting a fresh repository (the demo, benchmarks and tests)."""

from __future__ import annotations

from pathlib import Path

import git

from renderer.errors import GitError
from renderer.publish.gitobjects import list_tree, read_objects

__all__ = ["find_commit", "init_repo", "open_repo", "resolve", "tree_files"]


def open_repo(path: Path) -> git.Repo:
    """The git repository at (or above) `path`; a GitError that says what is wrong otherwise:
    no such folder, not a folder, no repository there or above, or a permission refused."""
    try:
        if not path.is_dir():
            what = "is not a folder" if path.exists() else "does not exist"
            raise GitError(f"{path} {what}; pass --repo DIR, the checkout of the gitops repository")
        return git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{path} is not inside a git repository (no .git there or above); pass --repo DIR, "
            "or run git init there"
        ) from None
    except PermissionError as exc:
        denied = exc.filename or path
        raise GitError(
            f"{path}: permission denied reading {denied}; run as a user who may read the checkout"
        ) from None


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


def find_commit(repo: git.Repo, ref: str) -> git.Commit | None:
    """The commit a ref (branch, tag, sha, HEAD~1...) names; None when the repository has no such
    commit. GitPython hands out a full sha without reading it (the all-zero one too), so the
    commit is read here, not at its first use."""
    try:
        commit = repo.commit(ref)
        commit.tree  # noqa: B018 - reads the object: a sha the repository lacks fails here
    except (git.BadName, ValueError):
        return None
    return commit


def resolve(repo: git.Repo, ref: str) -> git.Commit:
    """A ref (branch, tag, sha, HEAD~1...) -> commit; GitError naming the ref if unknown."""
    commit = find_commit(repo, ref)
    if commit is None:
        if not repo.head.is_valid():
            where = repo.working_tree_dir or repo.git_dir
            raise GitError(f"{where} has no commits yet; commit the clusters/ folder first")
        raise GitError(f'unknown git ref "{ref}"; check the branch or commit name')
    return commit


def tree_files(commit: git.Commit, top: str = "clusters") -> dict[str, bytes]:
    """Every blob under `top` at this commit: repo-relative path -> bytes.

    Two git processes whatever the number of files (ls-tree, then one cat-file --batch): reading
    the 18,620 files of a large cluster blob by blob through GitPython took three times as long.
    """
    listing = list_tree(commit.repo, commit.hexsha, top)
    blobs = {path: sha for _, kind, sha, path in listing if kind == "blob"}
    return dict(zip(blobs, read_objects(commit.repo, list(blobs.values())), strict=True))
