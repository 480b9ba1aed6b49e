"""The rendered diff of two git refs: read clusters/ from both trees, build what changed, compare.

Profiles are read from the commits' trees, never from the working tree. A cluster whose inputs
(gpu-profile.yaml and platform.yaml blobs) are byte-identical at both refs renders the same objects,
so it is neither loaded nor built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import git
from kubedata.objects import KubeObject, ObjectKey
from kubedata.yaml_io import load_all
from renderer.errors import Problem, ProfileError
from renderer.gitrepo import open_repo, resolve
from renderer.kustomize.workers import build_overlays
from renderer.overlays import cluster_overlay
from renderer.profile import (
    INPUT_FILES,
    KUBEVIRT_FILE,
    MAX_FILE_BYTES,
    PLATFORM_FILE,
    PROFILE_FILE,
    ClusterFiles,
    LoadedProfile,
    check_cluster_name,
)
from renderer.validate import Checked, check_files

from prbot.diff import ObjectChange, diff_objects, index_objects
from prbot.live_base import live_base
from prbot.live_drift import LiveDrift
from prbot.nodes import NodeChange, node_changes
from prbot.risk_check import Risk
from prbot.risks import cluster_risks

__all__ = ["ClusterDiff", "RefDiff", "Side", "cluster_inputs", "diff_refs"]

Objects = dict[ObjectKey, KubeObject]


@dataclass(frozen=True)
class Side:
    """One ref: as the user named it and the commit it resolved to."""

    ref: str
    commit: str


@dataclass(frozen=True)
class ClusterDiff:
    """One cluster whose rendered objects changed, or that carries warnings."""

    name: str
    status: Literal["added", "removed", "renamed", "changed", "unchanged"]
    changes: tuple[ObjectChange, ...]
    risks: tuple[Risk, ...] = ()
    nodes: tuple[NodeChange, ...] = ()
    """spec.nodes changes: labels are not in git, so each comes with its kubectl command."""
    warnings: tuple[Problem, ...] = ()
    """What `validate` warns about the cluster's files at head."""
    renamed_from: str | None = None
    """The cluster's name at base, when git sees its gpu-profile.yaml renamed."""

    def count(self, change: Literal["added", "removed", "changed"]) -> int:
        return sum(1 for c in self.changes if c.change == change)


@dataclass(frozen=True)
class RefDiff:
    """Everything `diff` reports. `clusters` holds only clusters with changes or warnings."""

    base: Side
    head: Side
    clusters: tuple[ClusterDiff, ...]
    total: int
    rebuilt: tuple[str, ...] = field(default=())
    live: LiveDrift | None = None
    """The changes against the live drift (--live-findings); None: not checked."""

    @property
    def risks(self) -> tuple[Risk, ...]:
        return tuple(r for c in self.clusters for r in c.risks)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """validate's warnings about the head files of the clusters that changed."""
        return tuple(w for c in self.clusters for w in c.warnings)

    @property
    def changed(self) -> bool:
        return bool(self.clusters)


def cluster_inputs(commit: git.Commit) -> dict[str, dict[str, git.Blob]]:
    """Cluster name -> its input blobs at this commit (folders holding a gpu-profile.yaml)."""
    try:
        top = commit.tree / "clusters"
    except KeyError:
        return {}
    if not isinstance(top, git.Tree):
        return {}
    out: dict[str, dict[str, git.Blob]] = {}
    for folder in top.trees:
        blobs = {b.name: b for b in folder.blobs if b.name in INPUT_FILES}
        if PROFILE_FILE in blobs:
            out[folder.name] = blobs
    return out


def cluster_renames(repo: git.Repo, base: str, head: str) -> dict[str, str]:
    """New name -> old name of each cluster folder whose gpu-profile.yaml git sees renamed
    (`git diff -M`: similar content, metadata.name and all, under another folder)."""
    out: dict[str, str] = {}
    listing = repo.git.diff("-M", "--name-status", "-z", base, head, "--", "clusters")
    fields = listing.split("\0")
    i = 0
    while i < len(fields):
        status = fields[i]
        if status.startswith(("R", "C")):
            old, new = fields[i + 1], fields[i + 2]
            i += 3
            parts = [p.split("/") for p in (old, new)]
            if status[0] == "R" and all(
                len(p) == 3 and p[0] == "clusters" and p[2] == PROFILE_FILE for p in parts
            ):
                out[parts[1][1]] = parts[0][1]
            continue
        i += 2 if status else 1
    return out


def _renames(
    repo: git.Repo, sides: tuple[Side, Side], inputs: list[dict[str, dict[str, git.Blob]]]
) -> dict[str, str]:
    """Renames of a cluster gone at head to one new at head: reviewed as one cluster."""
    found = cluster_renames(repo, sides[0].commit, sides[1].commit)
    before, after = inputs
    return {
        new: old
        for new, old in found.items()
        if new in after and new not in before and old in before and old not in after
    }


def _digest(blobs: Mapping[str, git.Blob]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, b.hexsha) for name, b in blobs.items()))


def _load(
    side: Side, inputs: Mapping[str, Mapping[str, git.Blob]], names: Sequence[str]
) -> Checked:
    """Load and check the clusters' input files straight from their blobs.

    ProfileError problems name the ref the way git does, e.g. main:clusters/ams1/gpu-profile.yaml.
    """
    present = [n for n in names if n in inputs]
    if not present:
        return Checked((), ())
    files: dict[str, ClusterFiles] = {}
    problems: list[Problem] = []
    for name in present:
        try:
            check_cluster_name(name, f"clusters/{name}")
        except ProfileError as exc:
            problems += exc.problems
            continue
        data: dict[str, bytes] = {}
        for blob in inputs[name].values():
            if blob.size > MAX_FILE_BYTES:  # refused before its bytes are read
                path = f"clusters/{name}/{blob.name}"
                problems.append(
                    Problem(
                        path, 0, "", f"file is {blob.size} bytes, over the {MAX_FILE_BYTES} limit"
                    )
                )
                continue
            data[blob.name] = blob.data_stream.read()
        if PROFILE_FILE in data:
            files[name] = ClusterFiles(
                data[PROFILE_FILE], data.get(PLATFORM_FILE), data.get(KUBEVIRT_FILE)
            )
    try:
        if problems:
            raise ProfileError(problems)
        checked = check_files(files)
    except ProfileError as exc:
        raise ProfileError(
            [
                Problem(f"{side.ref}:{p.file}", p.line, p.field, p.message, p.severity)
                for p in exc.problems
                if p.severity == "error"
            ]
        ) from None
    return checked


def _build(profiles: Mapping[str, LoadedProfile]) -> dict[str, Objects]:
    if not profiles:
        return {}
    built = build_overlays({name: cluster_overlay(lp) for name, lp in profiles.items()})
    return {name: index_objects(load_all(text)) for name, text in built.items()}


def diff_refs(repo_dir: Path, base: str, head: str = "HEAD", *, reuse: bool = True) -> RefDiff:
    """Render and build the clusters at both refs and compare them.

    reuse=False rebuilds every cluster at both refs (the baseline the benchmark measures).
    Raises ProfileError (problems at both refs, each naming its ref) or GitError.
    """
    repo = open_repo(repo_dir)
    try:
        sides = (Side(base, resolve(repo, base).hexsha), Side(head, resolve(repo, head).hexsha))
        inputs = [cluster_inputs(repo.commit(s.commit)) for s in sides]
        renames = _renames(repo, sides, inputs)
        everything = sorted(set(inputs[0]) | set(inputs[1]))
        # a cluster whose inputs are the same at both refs builds the same: nothing to review
        changed = [
            n for n in everything if _digest(inputs[0].get(n, {})) != _digest(inputs[1].get(n, {}))
        ]
        names = changed if reuse else everything
        checked: list[Checked] = []
        problems: list[Problem] = []
        for i, side in enumerate(sides):
            try:
                checked.append(_load(side, inputs[i], names))
            except ProfileError as exc:
                problems += exc.problems
    finally:
        repo.close()
    if problems:
        raise ProfileError(problems)
    profiles = [{lp.name: lp for lp in c.profiles} for c in checked]
    objects = [_build(p) for p in profiles]
    clusters: list[ClusterDiff] = []
    for name in changed:
        if name in renames.values():
            continue  # reviewed under its new name
        old = renames.get(name, name)
        before, after = objects[0].get(old, {}), objects[1].get(name, {})
        changes = diff_objects(before, after)
        was, now = profiles[0].get(old), profiles[1].get(name)
        # a cluster new to git is reviewed against what its platform.yaml shows is live
        live = live_base(now) if was is None and now is not None else None
        risks = (
            cluster_risks(name, live[0], now, live[1], after, added=True)
            if live is not None
            else cluster_risks(
                name,
                was,
                now,
                before,
                after,
                added=was is None and now is not None,
                renamed_from=renames.get(name),
            )
        )
        nodes = node_changes(was, now)
        warnings = tuple(p for p in checked[1].warnings if p.file.startswith(f"clusters/{name}/"))
        if not (changes or risks or nodes or warnings):
            continue
        status: Literal["added", "removed", "renamed", "changed", "unchanged"]
        if name in renames:
            status = "renamed"
        elif name not in inputs[0]:
            status = "added"
        elif name not in inputs[1]:
            status = "removed"
        else:
            status = "changed" if changes else "unchanged"
        clusters.append(
            ClusterDiff(
                name, status, tuple(changes), tuple(risks), nodes, warnings, renames.get(name)
            )
        )
    # a renamed cluster is one cluster, under its new name
    total = len(everything) - len(renames)
    return RefDiff(sides[0], sides[1], tuple(clusters), total, tuple(names))
