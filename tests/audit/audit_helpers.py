"""Helpers for the auditor's tests: git repositories under tmp_path and the demo snapshots."""

from __future__ import annotations

import copy
import io
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import git

from audit.kube.snapshot import empty_lists, load_snapshot
from gpu_gitops.cli import main
from gpu_gitops.console import Console
from renderer.gitrepo import init_repo as renderer_init_repo
from renderer.publish.publish import publish
from tests.conftest import REPO_ROOT

DEMO = REPO_ROOT / "audit" / "demo"
EXAMPLES = REPO_ROOT / "clusters"


def init_repo(root: Path, clusters: dict[str, Path]) -> git.Repo:
    """A git repository at `root` whose first commit holds these cluster folders."""
    for name, folder in clusters.items():
        shutil.copytree(folder, root / "clusters" / name)
    return renderer_init_repo(root, "profiles", user="test", email="test@example.invalid")


def run(*argv: str) -> tuple[int, str, str]:
    """`gpu-gitops ARGV...` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), Console(out, err))
    return code, out.getvalue(), err.getvalue()


def audit_cli(
    cluster: str, live_flag: str, live: Path, repo: Path, *options: str
) -> tuple[int, str, str]:
    """`gpu-gitops audit --cluster CLUSTER LIVE_FLAG LIVE --repo REPO OPTIONS...`, where LIVE_FLAG
    is --snapshot (a folder) or --kubeconfig (a file)."""
    return run("audit", "--cluster", cluster, live_flag, str(live), "--repo", str(repo), *options)


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


def demo_empty(cluster: str) -> frozenset[str]:
    """The resources the demo snapshot of `cluster` dumped as empty lists."""
    return empty_lists(DEMO / "snapshots" / cluster)


def write_snapshot(folder: Path, objects: list[dict[str, Any]], empty: Iterable[str] = ()) -> Path:
    """A snapshot folder: `objects` in one List, and an empty List per resource in `empty`
    (`kubectl get` of a kind with no objects, in a file named after the resource)."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "objects.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})
    )
    for resource in empty:
        (folder / f"{resource}.yaml").write_text(
            yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": []})
        )
    return folder
