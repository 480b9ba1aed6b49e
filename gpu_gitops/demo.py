"""`gpu-gitops demo`: the whole loop on the built-in example clusters, offline: validate, render,
build, publish the rendered branch, audit built-in snapshots of two live clusters, and adopt one
hand edit into a profile on a branch."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import git

import audit
from adopt.run import prepare, write_branch
from audit.kinds import KUSTOMIZATION
from audit.report import render_report
from audit.result import AuditResult
from audit.run import audit_cluster
from audit.sources.live import Live, SnapshotReader
from gpu_gitops.cli_adopt import report_plan
from gpu_gitops.console import Console
from kubedata.text import adopt_command
from kubedata.yaml_io import load_all
from renderer.errors import RenderError
from renderer.gitrepo import init_repo
from renderer.kustomize.workers import build_overlays
from renderer.publish.publish import publish
from renderer.render import label_commands, render_profiles
from renderer.validate import check_clusters
from renderer.write import write_dirs

__all__ = ["audit_snapshots", "cmd_demo", "demo_dir", "examples_dir", "run_demo"]


def examples_dir() -> Path:
    """The example clusters: packaged in the wheel, or the checkout's clusters/ in development."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "examples" / "clusters", here.parent / "clusters"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the example clusters are missing from this installation")


# Commits of the demo carry fixed dates, so the revisions it prints are the same on every run.
_DEMO_DATE = "2026-01-01T00:00:00+0000"


@contextlib.contextmanager
def _fixed_commit_dates() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")}
    os.environ.update(dict.fromkeys(saved, _DEMO_DATE))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    return run_demo(console)


def run_demo(console: Console) -> int:
    # the repository is closed on the way out: its git helper processes end with the demo
    with (
        _fixed_commit_dates(),
        tempfile.TemporaryDirectory(prefix="gpu-gitops-demo-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        root = Path(tmp)
        shutil.copytree(examples_dir(), root / "clusters")
        # the second audited cluster of the demo (GPUs retired): see audit/demo/
        for folder in sorted((demo_dir() / "clusters").iterdir()):
            shutil.copytree(folder, root / "clusters" / folder.name)
        repo = stack.enter_context(
            init_repo(
                root,
                "Example GPU profiles",
                user="gpu-gitops demo",
                email="demo@gpu-gitops.invalid",
            )
        )
        console.say(f"demo repository: {len(list((root / 'clusters').iterdir()))} example clusters")

        checked = check_clusters(root)
        for w in checked.warnings:
            console.problem(str(w))
        rendered = render_profiles(checked.profiles)
        write_dirs(root, rendered.dirs)
        total = len(rendered.overlays)
        done = 0

        def tick(name: str) -> None:
            nonlocal done
            done += 1
            console.progress(done, total, f"built {name}")

        built = build_overlays(rendered.overlays, progress=tick)
        rows = [("cluster", "platform", "variant", "objects")]
        for lp in checked.profiles:
            spec = lp.profile.spec
            kinds = Counter(o["kind"] for o in load_all(built[lp.name]))
            summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
            platform = f"{spec.platform.type} {spec.platform.version or ''}".strip()
            rows.append((lp.name, platform, spec.variant, summary))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            console.data("  ".join([*cells, row[3]]) + "\n")
        for lp in checked.profiles:
            for command in label_commands(lp):
                console.data(f"label nodes of {lp.name}: {command}\n")
        audit_snapshots(root, repo, console)
    return 0


def demo_dir() -> Path:
    """audit/demo/: live snapshots of two clusters (package data) and the extra demo profile."""
    return Path(audit.__file__).resolve().parent / "demo"


def audit_snapshots(root: Path, repo: git.Repo, console: Console) -> None:
    """Publish the rendered branch, then audit each built-in snapshot against what Flux applied.

    The snapshots name a placeholder revision as Kustomization.status.lastAppliedRevision: the
    demo puts in the commit it has just published, as Flux would have applied it.
    """
    if repo.is_dirty(untracked_files=True):
        repo.git.add("-A")
        repo.git.commit("-q", "-m", "Render overlays")
    try:
        tip = publish(root).tip
    except RenderError as exc:
        console.say(f"publish failed ({exc}); auditing against the profiles instead")
        tip = None
    for folder in sorted((demo_dir() / "snapshots").iterdir()):
        reader = SnapshotReader.of_folder(folder)
        for obj in reader.by_kind.get(KUSTOMIZATION, ()):
            status = obj.get("status") or {}
            if tip and "lastAppliedRevision" in status:
                status["lastAppliedRevision"] = f"rendered@sha1:{tip}"
        console.data(f"\n=== audit of the built-in snapshot of {folder.name} ===\n")
        result = audit_cluster(
            folder.name,
            Live(reader),
            repo=repo,
            now=_DEMO_TIME,
        )
        console.data(render_report(result, "text"))
        if folder.name == _ADOPTED[0]:
            adopt_one(repo, result, console)


_DEMO_TIME = 1_767_225_600.0
"""_DEMO_DATE as Unix time: the audit time the demo's adopt commit names."""
_ADOPTED = ("ams1", "KubeVirt", "/spec/configuration/permittedHostDevices/pciHostDevices")
"""The drift the demo keeps: the RTX PRO 6000 Workstation added to ams1 by `kubectl edit`."""


def adopt_one(repo: git.Repo, result: AuditResult, console: Console) -> None:
    """`gpu-gitops adopt --finding ID` on the hand-added device: the profile diff and the branch."""
    cluster, kind, path = _ADOPTED
    finding = next(f for f in result.findings if (f.object.kind, f.path) == (kind, path))
    console.data(
        f"\n=== {adopt_command(cluster, finding.id)} (keep the hand-added device in git) ===\n"
    )
    prepared = prepare(repo, result, {}, [finding.id])
    report_plan(prepared, console)
    console.data(prepared.diff)
    written = write_branch(repo, prepared, f"the built-in snapshot of {cluster}", result.timestamp)
    # no commit id here: it changes with every example profile, and the output must not
    console.data(f"branch {written.branch}: one commit on main, ready for review\n")
