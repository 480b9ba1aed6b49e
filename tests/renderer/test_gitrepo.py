"""Opening the checkout (errors that name what failed), resolving refs, reading a folder of a
commit through git (no checkout)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import git
import pytest

from renderer.errors import GitError
from renderer.gitdir import (
    branch_name,
    find_sha,
    open_checkout,
    read_tree,
    resolve_sha,
    tree_entries,
)
from renderer.gitrepo import init_repo, open_repo, resolve

Opener = Callable[[Path], object]


def test_read_tree_reads_every_blob_under_the_folder_only(tmp_path: Path):
    files = {
        "ams1/deployment_a_web.yaml": b"kind: Deployment\n",
        "ams1/source/gpu-profile.yaml": b"spec: {}\n",
        "ams1/empty.yaml": b"",
        "ams1/binary.bin": bytes(range(256)) + b"\n\n",
        "ams10/other.yaml": b"not under ams1\n",
        "top.yaml": b"x: 1\n",
    }
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "ams1" / "link.yaml").symlink_to("empty.yaml")
    repo = init_repo(tmp_path, "files", user="t", email="t@example.invalid")
    with repo:
        got = read_tree(repo, repo.head.commit.hexsha, "ams1")
        assert got == {
            **{rel: data for rel, data in files.items() if rel.startswith("ams1/")},
            "ams1/link.yaml": b"empty.yaml",  # a link is a blob holding its target
        }
        assert read_tree(repo, repo.head.commit.hexsha, "clusters") == {}


# -- opening the checkout: the error names what failed ------------------------------------------


OPENERS = pytest.mark.parametrize("opener", [open_repo, open_checkout], ids=["gitpython", "git"])


def _error(path: Path, opener: Opener = open_repo) -> str:
    with pytest.raises(GitError) as caught:
        opener(path)
    return str(caught.value)


@OPENERS
def test_a_missing_folder_is_named_as_missing(tmp_path: Path, opener: Opener) -> None:
    message = _error(tmp_path / "nope", opener)
    assert message.startswith(f"{tmp_path / 'nope'} does not exist;")
    assert "git repository" not in message


@OPENERS
def test_a_file_is_not_a_folder(tmp_path: Path, opener: Opener) -> None:
    (tmp_path / "profile.yaml").write_text("x: 1\n")
    assert _error(tmp_path / "profile.yaml", opener).startswith(
        f"{tmp_path / 'profile.yaml'} is not a folder;"
    )


@OPENERS
def test_a_folder_outside_any_repository(tmp_path: Path, opener: Opener) -> None:
    message = _error(tmp_path, opener)
    assert message.startswith(f"{tmp_path} is not inside a git repository (no .git there or above)")


def test_a_refused_permission_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".git"))

    monkeypatch.setattr(git, "Repo", refuse)
    message = _error(tmp_path)
    assert message == (
        f"{tmp_path}: permission denied reading {tmp_path / '.git'}; run as a user who may read "
        "the checkout"
    )


def test_a_subfolder_opens_the_enclosing_repository(tmp_path: Path) -> None:
    (tmp_path / "clusters" / "ams1").mkdir(parents=True)
    (tmp_path / "clusters" / "ams1" / "gpu-profile.yaml").write_text("x: 1\n")
    init_repo(tmp_path, "first", user="t", email="t@example.invalid").close()
    with open_repo(tmp_path / "clusters" / "ams1") as repo:
        assert Path(repo.working_tree_dir or "") == tmp_path


def test_a_repository_without_commits_says_so(tmp_path: Path) -> None:
    git.Repo.init(tmp_path).close()
    with open_repo(tmp_path) as repo, pytest.raises(GitError) as caught:
        resolve(repo, "HEAD")
    assert str(caught.value) == f"{tmp_path} has no commits yet; commit the clusters/ folder first"


def test_an_unknown_ref_is_named(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a\n")
    repo = init_repo(tmp_path, "first", user="t", email="t@example.invalid")
    with repo, pytest.raises(GitError, match='unknown git ref "nope"'):
        resolve(repo, "nope")


def test_the_git_command_opens_the_enclosing_repository_and_resolves(tmp_path: Path) -> None:
    (tmp_path / "clusters" / "ams1").mkdir(parents=True)
    (tmp_path / "clusters" / "ams1" / "gpu-profile.yaml").write_text("x: 1\n")
    with init_repo(tmp_path, "first", user="t", email="t@example.invalid") as repo:
        head = repo.head.commit.hexsha
    checkout = open_checkout(tmp_path / "clusters" / "ams1")
    assert Path(checkout.git_dir) == tmp_path / ".git"
    assert Path(checkout.working_tree_dir or "") == tmp_path
    assert resolve_sha(checkout, "main") == head
    assert find_sha(checkout, "nope") is None
    assert find_sha(checkout, "0" * 40) is None
    assert branch_name(checkout) == "main"
    assert tree_entries(checkout, f"{head}:clusters") == {"ams1": "tree"}
    with pytest.raises(GitError, match='unknown git ref "nope"'):
        resolve_sha(checkout, "nope")
