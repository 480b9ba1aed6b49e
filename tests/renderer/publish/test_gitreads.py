"""The batched reads of a publish: one ls-tree, one cat-file --batch, and the branch peek."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.errors import GitError
from renderer.gitdir import list_tree, read_objects
from renderer.gitrepo import init_repo
from renderer.publish.gitobjects import MODE_DIR, MODE_FILE
from renderer.publish.sources import profile_branch


def _repo(tmp_path: Path):
    (tmp_path / "clusters" / "a" / "source").mkdir(parents=True)
    (tmp_path / "clusters" / "a" / "gpu-profile.yaml").write_bytes(b"kind: GPUProfile\n")
    (tmp_path / "clusters" / "a" / "source" / "empty").write_bytes(b"")
    (tmp_path / "clusters" / "a" / "source" / "lines").write_bytes(b"\n\nx\n\n")
    return init_repo(tmp_path, "files", user="Test", email="test@example.invalid")


def test_list_tree_lists_trees_before_their_files_with_the_modes_of_a_tree_object(
    tmp_path: Path,
):
    with _repo(tmp_path) as repo:
        items = list_tree(repo, "HEAD", "clusters")
    assert [(mode, kind, path) for mode, kind, _, path in items] == [
        (MODE_DIR, "tree", "clusters"),
        (MODE_DIR, "tree", "clusters/a"),
        (MODE_FILE, "blob", "clusters/a/gpu-profile.yaml"),
        (MODE_DIR, "tree", "clusters/a/source"),
        (MODE_FILE, "blob", "clusters/a/source/empty"),
        (MODE_FILE, "blob", "clusters/a/source/lines"),
    ]


def test_read_objects_gives_each_content_in_order(tmp_path: Path):
    with _repo(tmp_path) as repo:
        blobs = [sha for _, kind, sha, _ in list_tree(repo, "HEAD") if kind == "blob"]
        assert read_objects(repo, blobs[::-1]) == [b"\n\nx\n\n", b"", b"kind: GPUProfile\n"]
        assert read_objects(repo, []) == []


def test_read_objects_refuses_an_id_the_repository_lacks(tmp_path: Path):
    with _repo(tmp_path) as repo, pytest.raises(GitError, match="is missing"):
        read_objects(repo, ["0" * 40])


@pytest.mark.parametrize(
    ("profile", "branch"),
    [
        (b"spec:\n  flux:\n    branch: prod\n", "prod"),
        (b'spec:\n  flux:\n    "bran\\x63h": prod\n', "prod"),  # no "branch" in the bytes
        (b"spec:\n  flux: {}\n", "rendered"),
        (b"spec: [\n", "rendered"),
    ],
)
def test_profile_branch(profile: bytes, branch: str):
    assert profile_branch(profile) == branch
