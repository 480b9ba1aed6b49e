"""`gpu-gitops publish`: build every cluster at the source commit and commit the flat output to the
rendered branch (DESIGN §5), with no checkout and without touching the working tree or the index.

1. Read each cluster's gpu-profile.yaml and platform.yaml at HEAD (with --allow-dirty and
   uncommitted changes under clusters/: from the working tree, and say so in the metadata).
2. Reuse the previous tip's folder of every cluster whose hydrator.metadata records the same
   input (profile digest, tool version, dirtiness): no parse, no build, no hashing.
3. Validate and build the others (pykustomize), lay them out flat (flat.py), hash the new files
   and trees, write them as one pack, `commit-tree`, and move the branch with `update-ref` from
   the tip it was built on, so a concurrent update fails cleanly and the publish is redone on the
   new tip (bounded).
4. --push: push the commit; a non-fast-forward rejection fetches the remote tip and rebuilds the
   commit on it (bounded, jittered backoff). The local branch moves only after the push landed.

A render whose source commit is older than the one the tip was rendered from (an ancestor of it)
is never committed over it: the tip already holds the newer render.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import git
import pykustomize

from renderer.build import build_overlays
from renderer.errors import GitError, Problem, ProfileError
from renderer.flat import METADATA_FILE, Metadata, cluster_files, profile_digest
from renderer.gitobjects import (
    MODE_DIR,
    MODE_FILE,
    GitCommandFailed,
    ObjectWriter,
    RefMoved,
    TreeEntries,
    commit_tree,
    read_blob,
    read_tree,
    ref_sha,
    run_git,
    update_ref,
)
from renderer.gitrepo import open_repo
from renderer.overlays import cluster_overlay
from renderer.profile import MAX_FILE_BYTES, PLATFORM_FILE, PROFILE_FILE
from renderer.validate import ClusterFiles, check_files

__all__ = [
    "MAX_ATTEMPTS",
    "PublishResult",
    "Sources",
    "commit_message",
    "publish",
    "read_sources",
    "tool_version",
]

MAX_ATTEMPTS = 5
"""Tries at moving the branch (or pushing it) before giving up."""
_BACKOFF_SECONDS = 0.05
_SUBJECT_WIDTH = 72
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}
# A push that lost a race: rejected as non-fast-forward, or the remote could not move its ref
# because a concurrent push moved it first ("failed to update ref", "cannot lock ref").
_RACE_LOST = re.compile(
    r"\[rejected\] \((non-fast-forward|fetch first)\)"
    r"|\[remote rejected\] \((failed to update ref|cannot lock ref|incorrect old value)"
)
_SOURCE_TRAILER = re.compile(r"^Source-Commit: ([0-9a-f]{40})$", re.MULTILINE)


@dataclass(frozen=True)
class Sources:
    """The input of a publish: each cluster's files, and the commit they come from."""

    commit: str
    files: dict[str, ClusterFiles]
    dirty: frozenset[str] = frozenset()
    """Clusters whose files were read from the working tree and differ from `commit`."""


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


@functools.cache
def tool_version() -> str:
    """gpu-gitops version, a digest of the renderer's code, and the kustomize library version."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    try:
        version = importlib.metadata.version("gpu-gitops")
    except importlib.metadata.PackageNotFoundError:
        version = "0+unknown"
    code = h.hexdigest()[:12]
    return f"gpu-gitops {version} (renderer {code}), pykustomize {pykustomize.__version__}"


# --- reading the sources ----------------------------------------------------------------------


def _files_at(commit: git.Commit) -> dict[str, ClusterFiles]:
    try:
        top = commit.tree / "clusters"
    except KeyError:
        return {}
    out: dict[str, ClusterFiles] = {}
    for folder in top.trees:
        blobs = {b.name: b for b in folder.blobs}
        if PROFILE_FILE in blobs:
            platform = blobs.get(PLATFORM_FILE)
            out[folder.name] = (
                blobs[PROFILE_FILE].data_stream.read(),
                platform.data_stream.read() if platform else None,
            )
    return out


def _read_limited(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(MAX_FILE_BYTES + 1)  # the loader reports anything longer


def _files_in(root: Path) -> dict[str, ClusterFiles]:
    out: dict[str, ClusterFiles] = {}
    for profile in sorted((root / "clusters").glob(f"*/{PROFILE_FILE}")):
        platform = profile.with_name(PLATFORM_FILE)
        out[profile.parent.name] = (
            _read_limited(profile),
            _read_limited(platform) if platform.exists() else None,
        )
    return out


def _dirty_clusters(repo: git.Repo) -> set[str]:
    """Clusters with uncommitted changes to their input files (staged, unstaged or untracked)."""
    if repo.bare:
        return set()
    out = run_git(
        repo,
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--",
        f"clusters/*/{PROFILE_FILE}",
        f"clusters/*/{PLATFORM_FILE}",
        env={"GIT_OPTIONAL_LOCKS": "0"},  # a status must not even refresh the index
    )
    names: set[str] = set()
    tokens = iter(out.decode(errors="replace").split("\0"))
    for token in tokens:
        if len(token) < 4:
            continue
        paths = [token[3:]]
        if token[0] in "RC":
            paths.append(next(tokens, ""))  # the original path of a rename or copy
        names |= {p.split("/")[1] for p in paths if p.count("/") >= 2}
    return names


def read_sources(repo: git.Repo, allow_dirty: bool) -> Sources:
    """The clusters at HEAD; from the working tree instead when it has changes to them and
    `allow_dirty` says so (GitError otherwise)."""
    try:
        head = repo.head.commit
    except ValueError:
        raise GitError("the repository has no commits yet: commit clusters/ first") from None
    committed = _files_at(head)
    dirty = _dirty_clusters(repo)
    if not dirty:
        return Sources(head.hexsha, committed)
    if not allow_dirty:
        shown = ", ".join(sorted(dirty)[:5]) + (", ..." if len(dirty) > 5 else "")
        raise GitError(
            f"uncommitted changes to the profiles of {shown}: commit them, or pass "
            "--allow-dirty to publish the working tree (recorded in hydrator.metadata)"
        )
    assert repo.working_tree_dir is not None
    current = _files_in(Path(repo.working_tree_dir))
    changed = {n for n in current.keys() | committed.keys() if current.get(n) != committed.get(n)}
    return Sources(head.hexsha, current, frozenset(changed))


# --- the commit -------------------------------------------------------------------------------


def _names(names: Sequence[str], width: int) -> str:
    shown: list[str] = []
    for i, name in enumerate(names):
        rest = len(names) - i - 1
        more = f" and {rest} more" if rest else ""
        if shown and len(", ".join([*shown, name])) + len(more) > width:
            return ", ".join(shown) + f" and {len(names) - len(shown)} more"
        shown.append(name)
    return ", ".join(shown)


def commit_message(
    changed: Sequence[str], removed: Sequence[str], source: str, dirty: Sequence[str] = ()
) -> str:
    """Subject naming the clusters, a body listing them, and the Source-Commit trailer."""
    parts = []
    if changed:
        parts.append("Render " + _names(changed, _SUBJECT_WIDTH // (1 + bool(removed)) - 8))
    if removed:
        verb = "remove " if changed else "Remove "
        parts.append(verb + _names(removed, _SUBJECT_WIDTH // (1 + bool(changed)) - 8))
    body: list[str] = []
    if changed:
        body += ["Rendered:", *(f"- {n}" for n in changed)]
    if removed:
        body += ["Removed:", *(f"- {n}" for n in removed)]
    if dirty:
        body += [
            "",
            "From the working tree (--allow-dirty), with uncommitted changes to: "
            + ", ".join(dirty)
            + ".",
        ]
    return "; ".join(parts) + "\n\n" + "\n".join(body) + f"\n\nSource-Commit: {source}\n"


@dataclass
class _Plan:
    parent: str | None
    parent_tree: str | None
    tree: str
    changed: list[str]
    removed: list[str]
    writer: ObjectWriter

    @property
    def unchanged(self) -> bool:
        return self.tree == self.parent_tree


@dataclass
class _Publisher:
    repo: git.Repo
    sources: Sources
    progress: Callable[[int, int, str], None] | None = None
    """Called after each build: (done, total, cluster)."""
    metadata: dict[str, Metadata] = field(default_factory=dict)
    outputs: dict[str, dict[str, bytes]] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        tool = tool_version()
        for name, (profile, platform) in self.sources.files.items():
            self.metadata[name] = Metadata(
                self.sources.commit,
                profile_digest(profile, platform),
                tool,
                name in self.sources.dirty,
            )

    def build(self, names: Sequence[str]) -> None:
        """Validate and build these clusters (once per publish, whatever the attempts)."""
        names = [n for n in names if n not in self.outputs]
        if not names:
            return
        checked = check_files({n: self.sources.files[n] for n in names})
        self.warnings += checked.warnings
        overlays = {lp.name: cluster_overlay(lp) for lp in checked.profiles}
        done = 0

        def tick(name: str) -> None:
            nonlocal done
            done += 1
            if self.progress:
                self.progress(done, len(overlays), f"built {name}")

        for name, text in build_overlays(overlays, tick).items():
            self.outputs[name] = cluster_files(text, self.metadata[name])

    def plan(self, parent: str | None) -> _Plan:
        """The tree of this publish on top of `parent`, reusing its unchanged folders."""
        repo, writer = self.repo, ObjectWriter()
        parent_tree = repo.commit(parent).tree.hexsha if parent else None
        old_root: TreeEntries = read_tree(repo, parent_tree) if parent_tree else {}
        entries: TreeEntries = {}
        known: dict[str, frozenset[str]] = {}
        todo: list[str] = []
        for name, meta in sorted(self.metadata.items()):
            old = old_root.get(name)
            if old is not None and old[0] == MODE_DIR:
                old_files = read_tree(repo, old[1])
                known[name] = frozenset({old[1], *(sha for _, sha in old_files.values())})
                entry = old_files.get(METADATA_FILE)
                old_meta = Metadata.from_bytes(read_blob(repo, entry[1])) if entry else None
                if old_meta is not None and old_meta.same_input(meta):
                    entries[name] = old
                    continue
            todo.append(name)
        self.build(todo)
        for name in todo:
            seen = known.get(name, frozenset())
            files = {
                file: (MODE_FILE, writer.add("blob", data, seen))
                for file, data in self.outputs[name].items()
            }
            entries[name] = (MODE_DIR, writer.tree(files, seen))
        tree = writer.tree(entries, frozenset({parent_tree}) if parent_tree else frozenset())
        changed = sorted(n for n, e in entries.items() if old_root.get(n) != e)
        removed = sorted(set(old_root) - set(entries))
        return _Plan(parent, parent_tree, tree, changed, removed, writer)

    def commit(self, plan: _Plan) -> str:
        plan.writer.write(self.repo)
        dirty = sorted(self.sources.dirty & set(plan.changed))
        message = commit_message(plan.changed, plan.removed, self.sources.commit, dirty)
        return commit_tree(self.repo, plan.tree, [plan.parent] if plan.parent else [], message)

    def newer_source(self, tip: str) -> str | None:
        """The source commit of `tip` when it descends from ours (so it holds a newer render)."""
        message = self.repo.commit(tip).message
        if isinstance(message, bytes):
            message = message.decode(errors="replace")
        m = _SOURCE_TRAILER.search(message)
        if m is None or m[1] == self.sources.commit:
            return None
        try:
            run_git(self.repo, "merge-base", "--is-ancestor", self.sources.commit, m[1])
        except GitCommandFailed:
            return None  # not an ancestor, or their source is unknown here: ours goes on top
        return m[1]

    def result(
        self,
        plan: _Plan | None,
        commit: str | None,
        tip: str | None,
        *,
        attempts: int,
        pushed: bool = False,
        superseded_by: str | None = None,
    ) -> PublishResult:
        return PublishResult(
            source=self.sources.commit,
            commit=commit,
            tip=tip,
            changed=tuple(plan.changed) if plan and commit else (),
            removed=tuple(plan.removed) if plan and commit else (),
            dirty=tuple(sorted(self.sources.dirty)),
            pushed=pushed,
            attempts=attempts,
            superseded_by=superseded_by,
            warnings=tuple(self.warnings),
        )


def _backoff(attempt: int) -> None:
    time.sleep(random.uniform(0, _BACKOFF_SECONDS * 2**attempt))


def _branch_ref(repo: git.Repo, branch: str) -> str:
    ref = f"refs/heads/{branch}"
    try:
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


def _publish_local(pub: _Publisher, ref: str) -> PublishResult:
    for attempt in range(1, MAX_ATTEMPTS + 1):
        tip = ref_sha(pub.repo, ref)
        newer = pub.newer_source(tip) if tip else None
        if newer:
            return pub.result(None, None, tip, superseded_by=newer, attempts=attempt)
        plan = pub.plan(tip)
        if plan.unchanged:
            return pub.result(plan, None, tip, attempts=attempt)
        commit = pub.commit(plan)
        try:
            update_ref(pub.repo, ref, commit, tip, f"gpu-gitops publish: {commit[:12]}")
        except RefMoved:
            _backoff(attempt)
            continue
        return pub.result(plan, commit, commit, attempts=attempt)
    raise GitError(f"{ref} kept moving while publishing ({MAX_ATTEMPTS} tries); run it again")


def _push(repo: git.Repo, remote: str, commit: str, branch: str) -> bool:
    """Push `commit` to the remote branch: True when it landed, False when another push won."""
    try:
        run_git(
            repo, "push", "--porcelain", remote, f"{commit}:refs/heads/{branch}", env=_NO_PROMPT
        )
    except GitCommandFailed as exc:
        if _RACE_LOST.search(exc.stdout + exc.stderr):
            return False
        raise GitError(
            f"cannot push to {remote}: {exc.reason}; the local branch is unchanged"
        ) from None
    return True


def _fetch(repo: git.Repo, remote: str, branch: str) -> str | None:
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
        )
    except GitCommandFailed as exc:
        if "couldn't find remote ref" in exc.stderr:
            return None
        raise GitError(f"cannot fetch {branch} from {remote}: {exc.reason}") from None
    return ref_sha(repo, tracking)


def _publish_push(pub: _Publisher, ref: str, branch: str, remote: str) -> PublishResult:
    repo = pub.repo
    if remote not in {r.name for r in repo.remotes}:
        raise GitError(f'no remote named "{remote}": add it (git remote add) or pass --remote')
    start = ref_sha(repo, ref)
    base = start or ref_sha(repo, f"refs/remotes/{remote}/{branch}")
    for attempt in range(1, MAX_ATTEMPTS + 1):
        newer = pub.newer_source(base) if base else None
        if newer:
            return pub.result(None, None, start, superseded_by=newer, attempts=attempt)
        plan = pub.plan(base)
        commit = None if plan.unchanged else pub.commit(plan)
        target = commit or base
        if target is None:
            return pub.result(plan, None, None, attempts=attempt)
        if _push(repo, remote, target, branch):
            if target != start:
                try:
                    update_ref(
                        repo, ref, target, start, f"gpu-gitops publish --push: {target[:12]}"
                    )
                except RefMoved:
                    moved = f"moved meanwhile and was left as it is; {remote} has {target}"
                    pub.warnings.append(Problem(ref, 0, "", moved, "warning"))
            return pub.result(plan, commit, target, pushed=True, attempts=attempt)
        base = _fetch(repo, remote, branch)
        _backoff(attempt)
    raise GitError(
        f"the push to {remote} was rejected {MAX_ATTEMPTS} times (others keep publishing); "
        "the local branch is unchanged: run it again"
    )


def publish(
    path: Path,
    *,
    branch: str = "rendered",
    push: bool = False,
    remote: str = "origin",
    allow_dirty: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
) -> PublishResult:
    """Render, build and commit every cluster of the checkout at `path` to `branch`."""
    repo = open_repo(path)
    with repo:
        ref = _branch_ref(repo, branch)
        sources = read_sources(repo, allow_dirty)
        if not sources.files:
            raise ProfileError(
                [Problem("clusters/", 0, "", "no clusters/<name>/gpu-profile.yaml found")]
            )
        pub = _Publisher(repo, sources, progress)
        if push:
            return _publish_push(pub, ref, branch, remote)
        return _publish_local(pub, ref)
