"""`gpu-gitops publish`: build every cluster at the source commit and commit the flat output to the
rendered branch (DESIGN §5), with no checkout and without touching the working tree or the index.

1. Read each cluster's gpu-profile.yaml and platform.yaml at HEAD (with --allow-dirty and
   uncommitted changes under clusters/: from the working tree, and say so in the metadata):
   sources.py.
2. Reuse the previous tip's folder of every cluster whose hydrator.metadata records the same
   input (profile digest, tool version, dirtiness): no parse, no build, no hashing.
3. Validate and build the others (pykustomize), lay them out flat (flat.py) with the cluster's
   source files under source/ (not applied), hash the new files and trees, write them as one pack
   and `commit-tree` (2 and 3: plan.py; git objects: gitobjects.py); then move the branch with
   `update-ref` from the tip it was built on, so a concurrent update fails cleanly and the publish
   is redone on the new tip (bounded).
4. --push: push the commit; a non-fast-forward rejection fetches the remote tip and rebuilds the
   commit on it (bounded, jittered backoff). The local branch moves only after the push landed.

A render whose source commit is older than the one the tip was rendered from (an ancestor of it)
is never committed over it: the tip already holds the newer render.
"""

from __future__ import annotations

import contextlib
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import git
from kubedata.budget import Budget

from renderer.errors import GitError, Problem, ProfileError
from renderer.gitrepo import open_repo
from renderer.publish.deadline import network_budget
from renderer.publish.gitobjects import GitCommandFailed, RefMoved, ref_sha, run_git, update_ref
from renderer.publish.plan import Plan, Publisher
from renderer.publish.sources import Sources, profile_branch, read_sources
from renderer.write import checkout_lock

__all__ = ["MAX_ATTEMPTS", "PublishResult", "publish", "publish_branches"]

MAX_ATTEMPTS = 5
"""Tries at moving the branch (or pushing it) before giving up."""
_BACKOFF_SECONDS = 0.05
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}
# A push that lost a race: rejected as non-fast-forward, or the remote could not move its ref
# because a concurrent push moved it first ("failed to update ref", "cannot lock ref").
_RACE_LOST = re.compile(
    r"\[rejected\] \((non-fast-forward|fetch first)\)"
    r"|\[remote rejected\] \((failed to update ref|cannot lock ref|incorrect old value)"
)


@dataclass(frozen=True)
class PublishResult:
    """What a publish did."""

    source: str
    commit: str | None
    """The new commit, or None when nothing changed."""
    tip: str | None
    """Where the branch points now (locally, and on the remote after a push)."""
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    dirty: tuple[str, ...] = ()
    pushed: bool = False
    attempts: int = 1
    superseded_by: str | None = None
    """The newer source commit the tip was already rendered from, when that made this a no-op."""
    warnings: tuple[Problem, ...] = ()
    branch: str = "rendered"


def _result(
    pub: Publisher,
    plan: Plan | None,
    commit: str | None,
    tip: str | None,
    *,
    attempts: int,
    pushed: bool = False,
    superseded_by: str | None = None,
) -> PublishResult:
    return PublishResult(
        source=pub.sources.commit,
        commit=commit,
        tip=tip,
        changed=tuple(plan.changed) if plan and commit else (),
        removed=tuple(plan.removed) if plan and commit else (),
        dirty=tuple(sorted(pub.sources.dirty)),
        pushed=pushed,
        attempts=attempts,
        superseded_by=superseded_by,
        warnings=tuple(pub.warnings),
        branch=pub.branch,
    )


def _backoff(attempt: int) -> None:
    time.sleep(random.uniform(0, _BACKOFF_SECONDS * 2**attempt))


def _branch_ref(repo: git.Repo, branch: str) -> str:
    ref = f"refs/heads/{branch}"
    try:
        if branch == "HEAD":  # refs/heads/HEAD is a valid ref name that every git tool misreads
            raise GitCommandFailed("check-ref-format", 1, "", "")
        run_git(repo, "check-ref-format", ref)
    except GitCommandFailed:
        raise GitError(
            f'"{branch}" is not a valid branch name; pass e.g. --branch rendered'
        ) from None
    for line in run_git(repo, "worktree", "list", "--porcelain").decode().splitlines():
        if line == f"branch {ref}":
            raise GitError(
                f"{branch} is checked out, and publishing would change it under the working "
                "tree: publish to a branch nobody works on (default: rendered)"
            )
    return ref


def _publish_local(pub: Publisher, ref: str) -> PublishResult:
    for attempt in range(1, MAX_ATTEMPTS + 1):
        tip = ref_sha(pub.repo, ref)
        newer = pub.newer_source(tip) if tip else None
        if newer:
            return _result(pub, None, None, tip, superseded_by=newer, attempts=attempt)
        plan = pub.plan(tip)
        if plan.unchanged:
            return _result(pub, plan, None, tip, attempts=attempt)
        commit = pub.commit(plan)
        try:
            update_ref(pub.repo, ref, commit, tip, f"gpu-gitops publish: {commit[:12]}")
        except RefMoved:
            _backoff(attempt)
            continue
        return _result(pub, plan, commit, commit, attempts=attempt)
    raise GitError(f"{ref} kept moving while publishing ({MAX_ATTEMPTS} tries); run it again")


def _push(repo: git.Repo, remote: str, commit: str, branch: str, budget: Budget) -> bool:
    """Push `commit` to the remote branch: True when it landed, False when another push won."""
    try:
        run_git(
            repo,
            "push",
            "--porcelain",
            remote,
            f"{commit}:refs/heads/{branch}",
            env=_NO_PROMPT,
            deadline=budget,
        )
    except GitCommandFailed as exc:
        if _RACE_LOST.search(exc.stdout + exc.stderr):
            return False
        raise GitError(
            f"cannot push to {remote}: {_rejection(exc)}; the local branch is unchanged"
        ) from None
    except GitError as exc:
        raise GitError(f"cannot push to {remote}: {exc}; the local branch is unchanged") from None
    return True


def _rejection(exc: GitCommandFailed) -> str:
    """Why the remote said no: the ref's status from --porcelain output and what the remote
    printed (a hook's reason), else git's own error line."""
    status = [line.split("\t")[-1] for line in exc.stdout.splitlines() if line.startswith("!\t")]
    said = [line.strip() for line in exc.stderr.splitlines() if line.startswith("remote:")][:3]
    return "; ".join([*status[:1], *said]) or exc.reason


def _fetch(repo: git.Repo, remote: str, branch: str, budget: Budget) -> str | None:
    """The remote branch's tip (also stored as its remote-tracking ref), None if it is gone."""
    tracking = f"refs/remotes/{remote}/{branch}"
    try:
        run_git(
            repo,
            "fetch",
            "--no-tags",
            "--quiet",
            remote,
            f"+refs/heads/{branch}:{tracking}",
            env=_NO_PROMPT,
            deadline=budget,
        )
    except GitCommandFailed as exc:
        if "couldn't find remote ref" in exc.stderr:
            return None
        raise GitError(f"cannot fetch {branch} from {remote}: {exc.reason}") from None
    return ref_sha(repo, tracking)


def _publish_push(pub: Publisher, ref: str, branch: str, remote: str) -> PublishResult:
    repo = pub.repo
    if remote not in {r.name for r in repo.remotes}:
        raise GitError(f'no remote named "{remote}": add it (git remote add) or pass --remote')
    start = ref_sha(repo, ref)
    base = start or ref_sha(repo, f"refs/remotes/{remote}/{branch}")
    budget = network_budget()  # every push and fetch below, in all
    for attempt in range(1, MAX_ATTEMPTS + 1):
        newer = pub.newer_source(base) if base else None
        if newer:
            return _result(pub, None, None, start, superseded_by=newer, attempts=attempt)
        plan = pub.plan(base)
        commit = None if plan.unchanged else pub.commit(plan)
        target = commit or base
        if target is None:
            return _result(pub, plan, None, None, attempts=attempt)
        if _push(repo, remote, target, branch, budget):
            if target != start:
                try:
                    update_ref(
                        repo, ref, target, start, f"gpu-gitops publish --push: {target[:12]}"
                    )
                except RefMoved:
                    moved = f"moved meanwhile and was left as it is; {remote} has {target}"
                    pub.warnings.append(Problem(ref, 0, "", moved, "warning"))
            return _result(pub, plan, commit, target, pushed=True, attempts=attempt)
        base = _fetch(repo, remote, branch, budget)
        _backoff(attempt)
    raise GitError(
        f"the push to {remote} was rejected {MAX_ATTEMPTS} times (others keep publishing); "
        "the local branch is unchanged: run it again"
    )


def _on_branch(sources: Sources, branch: str) -> Sources:
    """The clusters whose Flux follows `branch` (spec.flux.branch): a cluster is written to the
    branch its GitRepository pulls, and leaves any other (its folder there is removed)."""
    files = {n: f for n, f in sources.files.items() if profile_branch(f[0]) == branch}
    if not files:
        follow = sorted({profile_branch(f[0]) for f in sources.files.values()})
        raise ProfileError(
            [
                Problem(
                    "clusters/",
                    0,
                    "spec.flux.branch",
                    f"no cluster follows branch {branch} (the profiles' branches: "
                    f"{', '.join(follow)}); publish one of those, or set spec.flux.branch: "
                    f"{branch} in the profiles that should go there",
                )
            ]
        )
    return Sources(sources.commit, files, sources.dirty & set(files))


def _sources(repo: git.Repo, allow_dirty: bool) -> Sources:
    sources = read_sources(repo, allow_dirty)
    if not sources.files:
        raise ProfileError(
            [Problem("clusters/", 0, "", "no clusters/<name>/gpu-profile.yaml found")]
        )
    return sources


def _publish_one(
    repo: git.Repo,
    sources: Sources,
    branch: str,
    push: bool,
    remote: str,
    progress: Callable[[int, int, str], None] | None,
) -> PublishResult:
    ref = _branch_ref(repo, branch)
    pub = Publisher(repo, _on_branch(sources, branch), progress, branch)
    if push:
        return _publish_push(pub, ref, branch, remote)
    return _publish_local(pub, ref)


def publish(
    path: Path,
    *,
    branch: str = "rendered",
    push: bool = False,
    remote: str = "origin",
    allow_dirty: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> PublishResult:
    """Render, build and commit to `branch` every cluster of the checkout at `path` whose
    spec.flux.branch is `branch` (ProfileError when none is)."""
    repo = open_repo(path)
    tree = repo.working_tree_dir
    with repo, checkout_lock(Path(tree), shared=True) if tree else contextlib.nullcontext():
        return _publish_one(repo, _sources(repo, allow_dirty), branch, push, remote, progress)


def publish_branches(
    path: Path,
    *,
    push: bool = False,
    remote: str = "origin",
    allow_dirty: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[PublishResult, ...]:
    """`publish` to every branch a profile names, in name order: one commit per branch, each
    moved (or pushed) compare-and-swap on its own; the first failure stops the rest."""
    repo = open_repo(path)
    tree = repo.working_tree_dir
    with repo, checkout_lock(Path(tree), shared=True) if tree else contextlib.nullcontext():
        sources = _sources(repo, allow_dirty)
        branches = sorted({profile_branch(f[0]) for f in sources.files.values()})
        for branch in branches:
            _branch_ref(repo, branch)  # every name checked before anything is written
        return tuple(
            _publish_one(repo, sources, branch, push, remote, progress) for branch in branches
        )
