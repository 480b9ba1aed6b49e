"""Opening the checkout (errors that name what failed), resolving refs, reading a folder of a
commit through git (no checkout)."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from renderer.errors import GitError
from renderer.gitrepo import init_repo, open_repo, resolve, tree_files


def test_tree_files_reads_every_blob_under_the_folder_only(tmp_path: Path):
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
        got = tree_files(repo.head.commit, "ams1")
        assert got == {
            **{rel: data for rel, data in files.items() if rel.startswith("ams1/")},
            "ams1/link.yaml": b"empty.yaml",  # a link is a blob holding its target
        }
        assert tree_files(repo.head.commit, "clusters") == {}


# -- opening the checkout: the error names what failed ------------------------------------------


def _error(path: Path) -> str:
    with pytest.raises(GitError) as caught:
        open_repo(path)
    return str(caught.value)


def test_a_missing_folder_is_named_as_missing(tmp_path: Path) -> None:
    message = _error(tmp_path / "nope")
    assert message.startswith(f"{tmp_path / 'nope'} does not exist;")
    assert "git repository" not in message


def test_a_file_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "profile.yaml").write_text("x: 1\n")
    assert _error(tmp_path / "profile.yaml").startswith(
        f"{tmp_path / 'profile.yaml'} is not a folder;"
    )


def test_a_folder_outside_any_repository(tmp_path: Path) -> None:
    message = _error(tmp_path)
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
