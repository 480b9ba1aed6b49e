"""The pre-commit hook: declared so that a stock pre-commit installs it and runs it on every commit.

The end-to-end test needs a real pre-commit (from PyPI) and a package index for the hook's first
run: set GPU_GITOPS_PRE_COMMIT to its executable (`python3 -m venv v && v/bin/pip install
pre-commit`); without it only the declaration is checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT

PRE_COMMIT = os.environ.get("GPU_GITOPS_PRE_COMMIT")


def _hook() -> dict[str, object]:
    (hook,) = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hook, dict)
    return hook


def test_the_hook_needs_no_pip_install_and_runs_on_every_commit():
    hook = _hook()
    assert hook["id"] == "gpu-gitops-render-check"
    # language: python would pip-install pykustomize, refused for its Requires-Python
    assert hook["language"] == "script"
    entry = REPO_ROOT / str(hook["entry"])
    assert entry.is_file() and os.access(entry, os.X_OK)
    assert "--ignore-requires-python" in entry.read_text()
    assert 'gpu-gitops" render --check' in entry.read_text()
    # pre-commit hands no deleted files to a hook: without always_run a deletion-only commit
    # would skip it
    assert hook["always_run"] is True and hook["pass_filenames"] is False
    assert "files" not in hook


def _git(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *argv], cwd=repo, capture_output=True, text=True, check=False)


@pytest.mark.skipif(not PRE_COMMIT, reason="GPU_GITOPS_PRE_COMMIT names no pre-commit executable")
def test_a_stock_pre_commit_installs_the_hook_and_stops_a_deletion_only_commit(tmp_path):
    assert PRE_COMMIT
    hook_repo = tmp_path / "hook-repo"
    # the hook repository as committed plus this work tree's changes, as pre-commit clones it
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(hook_repo)], check=True)
    for path in (".pre-commit-hooks.yaml", str(_hook()["entry"])):
        shutil.copy2(REPO_ROOT / path, hook_repo / path)
    _git(hook_repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "hook")
    rev = _git(hook_repo, "rev-parse", "HEAD").stdout.strip()
    ops = tmp_path / "ops"
    ops.mkdir()
    _git(ops, "init", "-q")
    for folder in ("clusters", "overlays"):
        shutil.copytree(REPO_ROOT / folder, ops / folder)
    (ops / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: gpu-gitops-render-check\n"
    )
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    identity = ("-c", "user.name=t", "-c", "user.email=t@e")
    _git(ops, "add", "-A")
    assert _git(ops, *identity, "commit", "-qm", "init", "--no-verify").returncode == 0
    subprocess.run([PRE_COMMIT, "install"], cwd=ops, env=env, check=True, capture_output=True)

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        argv = ["git", *identity, "commit", "-qm", message]
        return subprocess.run(argv, cwd=ops, env=env, capture_output=True, text=True, check=False)

    _git(ops, "rm", "-rq", "clusters/lab1")
    refused = commit("only deletes a cluster's folder")
    assert refused.returncode != 0
    assert "stale: overlays/lab1/" in refused.stdout + refused.stderr
    _git(ops, "rm", "-rq", "overlays/lab1")
    accepted = commit("deletes the cluster and its overlay")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "render --check....." in accepted.stderr and "Passed" in accepted.stderr
