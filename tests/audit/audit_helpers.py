"""Helpers for the auditor's tests: git repositories under tmp_path and the demo snapshots."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import git

from audit.live import Live, SnapshotReader
from audit.snapshot import load_snapshot
from renderer.publish import publish
from tests.conftest import REPO_ROOT

DEMO = REPO_ROOT / "audit" / "demo"
EXAMPLES = REPO_ROOT / "clusters"


def init_repo(root: Path, clusters: dict[str, Path]) -> git.Repo:
    """A git repository at `root` whose first commit holds these cluster folders."""
    for name, folder in clusters.items():
        shutil.copytree(folder, root / "clusters" / name)
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "test")
        cfg.set_value("user", "email", "test@example.invalid")
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "profiles")
    return repo


def demo_repo(root: Path, publish_branch: bool = True) -> tuple[git.Repo, str | None]:
    """ams1 and sto1 profiles, published to the rendered branch; (repo, rendered tip)."""
    repo = init_repo(root, {"ams1": EXAMPLES / "ams1", "sto1": DEMO / "clusters" / "sto1"})
    tip = publish(root).tip if publish_branch else None
    return repo, tip


def demo_objects(cluster: str, applied: str | None) -> list[dict[str, Any]]:
    """The demo snapshot of `cluster`, with Flux's last applied revision set to `applied`."""
    objects = copy.deepcopy(load_snapshot(DEMO / "snapshots" / cluster))
    for obj in objects:
        if obj["kind"] == "Kustomization" and applied:
            obj["status"]["lastAppliedRevision"] = f"rendered@sha1:{applied}"
    return objects


def demo_live(cluster: str, applied: str | None) -> Live:
    return Live(SnapshotReader(demo_objects(cluster, applied)))


def write_snapshot(folder: Path, objects: list[dict[str, Any]]) -> Path:
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "objects.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})
    )
    return folder
