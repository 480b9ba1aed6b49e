"""Reading a folder of a commit through git (no checkout)."""

from __future__ import annotations

from pathlib import Path

from renderer.gitrepo import init_repo, tree_files


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
