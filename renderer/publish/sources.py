"""The input of a publish: each cluster's input files (profile and live files), and their commit.

The files are read from HEAD's tree. When the working tree has uncommitted changes to them (staged,
unstaged or untracked), a publish is refused unless --allow-dirty says to read the working tree
instead; the clusters read that way are recorded, so hydrator.metadata can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git
from kubedata.errors import YamlError
from kubedata.yaml_io import load_marked

from renderer.errors import GitError
from renderer.gitdir import list_tree, read_objects
from renderer.model import Flux
from renderer.profile import INPUT_FILES, MAX_FILE_BYTES, PROFILE_FILE, ClusterFiles
from renderer.publish.gitobjects import TreeEntries, run_git
from renderer.repofiles import link_problem, read_bytes

__all__ = ["Sources", "profile_branch", "read_sources"]

_MODE_LINK = "120000"
"""git's mode of a symbolic link."""


@dataclass(frozen=True)
class Sources:
    """The input of a publish: each cluster's files, and the commit they come from."""

    commit: str
    files: dict[str, ClusterFiles]
    dirty: frozenset[str] = frozenset()
    """Clusters whose files were read from the working tree and differ from `commit`."""


def profile_branch(profile: bytes) -> str:
    """The rendered branch a profile's Flux follows (spec.flux.branch, default rendered), read
    leniently: a profile that does not parse is refused when it is validated, on any branch."""
    # No key is `branch` without the word, or a backslash to spell it in a double-quoted key:
    # most profiles name no branch, and parsing them was a third of a no-op publish.
    if b"branch" not in profile and b"\\" not in profile:
        return _DEFAULT_BRANCH
    try:
        data, _ = load_marked(profile.decode("utf-8"), PROFILE_FILE)
    except (YamlError, UnicodeDecodeError):
        return _DEFAULT_BRANCH
    for key in ("spec", "flux", "branch"):
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, str) else _DEFAULT_BRANCH


_DEFAULT_BRANCH = Flux().branch


def _files_at(repo: git.Repo, commit: str) -> dict[str, ClusterFiles]:
    """The cluster files of a commit, read in two git processes whatever their number."""
    folders: dict[str, TreeEntries] = {}
    for mode, kind, sha, path in list_tree(repo, commit, "clusters"):
        parts = path.split("/")
        if len(parts) == 3 and kind == "blob":  # clusters/<folder>/<file>
            folders.setdefault(parts[1], {})[parts[2]] = (mode, sha)
    for folder, blobs in folders.items():
        for name in INPUT_FILES:
            if name in blobs and blobs[name][0] == _MODE_LINK:
                raise link_problem(f"clusters/{folder}/{name}")
    wanted = {
        (folder, name): blobs[name][1]
        for folder, blobs in folders.items()
        if PROFILE_FILE in blobs
        for name in INPUT_FILES
        if name in blobs
    }
    data = dict(zip(wanted, read_objects(repo, list(wanted.values())), strict=True))
    return {
        folder: ClusterFiles(
            data[folder, PROFILE_FILE], *(data.get((folder, name)) for name in INPUT_FILES[1:])
        )
        for folder, blobs in folders.items()
        if PROFILE_FILE in blobs
    }


def _files_in(root: Path) -> dict[str, ClusterFiles]:
    """The working tree's cluster files, read as render reads them: never through a link (they
    would be committed to the rendered branch, and pushed), never a FIFO or device."""
    out: dict[str, ClusterFiles] = {}
    for profile in sorted((root / "clusters").glob(f"*/{PROFILE_FILE}")):
        name = profile.parent.name
        data = [read_bytes(root, f"clusters/{name}/{f}", MAX_FILE_BYTES) for f in INPUT_FILES]
        if data[0] is not None:
            out[name] = ClusterFiles(data[0], *data[1:])
    return out


def _dirty_clusters(repo: git.Repo) -> set[str]:
    """Clusters with uncommitted changes to their input files (staged, unstaged or untracked)."""
    if repo.bare:
        return set()
    out = run_git(
        repo,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--",
        *(f"clusters/*/{f}" for f in INPUT_FILES),
        env={"GIT_OPTIONAL_LOCKS": "0"},  # a status must not even refresh the index
    )
    names: set[str] = set()
    tokens = iter(out.decode(errors="replace").split("\0"))
    for token in tokens:
        if len(token) < 4:
            continue
        paths = [token[3:]]
        if token[0] in "RC":
            paths.append(next(tokens, ""))  # the original path of a rename or copy
        names |= {p.split("/")[1] for p in paths if p.count("/") >= 2}
    return names


def read_sources(repo: git.Repo, allow_dirty: bool) -> Sources:
    """The clusters at HEAD; from the working tree instead when it has changes to them and
    `allow_dirty` says so (GitError otherwise)."""
    try:
        head = repo.head.commit
    except ValueError:
        raise GitError("the repository has no commits yet: commit clusters/ first") from None
    committed = _files_at(repo, head.hexsha)
    dirty = _dirty_clusters(repo)
    if not dirty:
        return Sources(head.hexsha, committed)
    if not allow_dirty:
        shown = ", ".join(sorted(dirty)[:5]) + (", ..." if len(dirty) > 5 else "")
        raise GitError(
            f"uncommitted changes to the profiles of {shown}: commit them, or pass "
            "--allow-dirty to publish the working tree (recorded in hydrator.metadata)"
        )
    assert repo.working_tree_dir is not None
    current = _files_in(Path(repo.working_tree_dir))
    changed = {n for n in current.keys() | committed.keys() if current.get(n) != committed.get(n)}
    return Sources(head.hexsha, current, frozenset(changed))
