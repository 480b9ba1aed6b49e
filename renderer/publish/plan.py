"""The commit a publish makes: the rendered tree on top of the branch's tip, and its message.

A cluster folder of the tip whose hydrator.metadata records the same input (profile digest, tool
version, dirtiness) and the folder's own digest (so a hand edit on the branch is caught) is reused
as it is: no parse, no build, no hashing of file contents. The other clusters are
validated and built once per publish (whatever the attempts), laid out flat (flat.py) with their
source files under `source/`, and their new blobs and trees are collected for one pack. The
message ends in a Source-Commit trailer, which tells a later publish whether the tip already
holds a render of a newer source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import git

from renderer.errors import Problem
from renderer.gitdir import list_tree, read_objects
from renderer.kustomize.workers import build_overlays
from renderer.overlays import cluster_overlay
from renderer.publish.flat import (
    METADATA_FILE,
    SOURCE_DIR,
    Metadata,
    cluster_files,
    folder_digest,
    profile_digest,
)
from renderer.publish.gitobjects import (
    MODE_DIR,
    MODE_FILE,
    GitCommandFailed,
    ObjectWriter,
    TreeEntries,
    commit_tree,
    run_git,
)
from renderer.publish.sources import Sources
from renderer.validate import check_files
from renderer.version import tool_version

__all__ = ["Plan", "Publisher", "commit_message"]

_SUBJECT_WIDTH = 72
_EDITED = (
    "on the rendered branch this folder does not match its hydrator.metadata (edited by hand?); "
    "it is rewritten from the profile"
)
_SOURCE_TRAILER = re.compile(r"^Source-Commit: ([0-9a-f]{40})$", re.MULTILINE)


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


def _folder_tree(
    writer: ObjectWriter, files: Mapping[str, bytes], seen: frozenset[str]
) -> tuple[str, str]:
    """The tree entry of a folder of `path -> bytes`; `dir/file` is a file of a subfolder."""
    entries: TreeEntries = {}
    subfolders: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        head, slash, rest = path.partition("/")
        if slash:
            subfolders.setdefault(head, {})[rest] = data
        else:
            entries[path] = (MODE_FILE, writer.add("blob", data, seen))
    for head, sub in subfolders.items():
        entries[head] = _folder_tree(writer, sub, seen)
    return (MODE_DIR, writer.tree(entries, seen))


@dataclass
class _OldFolder:
    """A cluster folder of the tip: its tree, its entries and those of its source/ subfolder."""

    tree: str
    files: TreeEntries = field(default_factory=dict)
    source: TreeEntries = field(default_factory=dict)
    metadata: str | None = None
    """The blob id of its hydrator.metadata, if it has one."""

    def known(self) -> frozenset[str]:
        """Ids already stored, so a rebuild does not write them again."""
        shas = (sha for _, sha in (*self.files.values(), *self.source.values()))
        return frozenset({self.tree, *shas})

    def blobs(self) -> dict[str, str]:
        """path -> blob id, as folder_digest takes them."""
        out = {f: sha for f, (mode, sha) in self.files.items() if mode != MODE_DIR}
        return out | {f"{SOURCE_DIR}/{f}": sha for f, (_, sha) in self.source.items()}


def _read_tip(repo: git.Repo, tree: str) -> tuple[TreeEntries, dict[str, _OldFolder]]:
    """The top-level entries of the tip's tree and its folders, listed by one git process."""
    root: TreeEntries = {}
    folders: dict[str, _OldFolder] = {}
    for mode, kind, sha, path in list_tree(repo, tree):
        name, _, rest = path.partition("/")
        if not rest:
            root[name] = (mode, sha)
            if mode == MODE_DIR:
                folders[name] = _OldFolder(sha)
        elif "/" not in rest:
            folders[name].files[rest] = (mode, sha)
            if rest == METADATA_FILE and kind == "blob":
                folders[name].metadata = sha
        else:
            sub, _, file = rest.partition("/")
            if sub == SOURCE_DIR and "/" not in file:
                folders[name].source[file] = (mode, sha)
    return root, folders


def _old_metadata(repo: git.Repo, folders: Mapping[str, _OldFolder]) -> dict[str, Metadata | None]:
    """The hydrator.metadata of these folders that have one, read by one git process."""
    shas = {name: f.metadata for name, f in folders.items() if f.metadata is not None}
    data = read_objects(repo, list(shas.values()))
    return {name: Metadata.from_bytes(d) for name, d in zip(shas, data, strict=True)}


@dataclass
class Plan:
    """The tree of one attempt on top of `parent`, with the objects still to be written."""

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
class Publisher:
    """One publish of `sources` into `repo`: builds kept across attempts, warnings collected."""

    repo: git.Repo
    sources: Sources
    progress: Callable[[int, int, str], None] | None = None
    """Called after each build: (done, total, cluster)."""
    branch: str = "rendered"
    """The branch written; `sources` holds the clusters that follow it."""
    metadata: dict[str, Metadata] = field(default_factory=dict)
    outputs: dict[str, dict[str, bytes]] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        tool = tool_version()
        for name, files in self.sources.files.items():
            self.metadata[name] = Metadata(
                self.sources.commit,
                profile_digest(files),
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
            self.outputs[name] = cluster_files(text, self.metadata[name], self.sources.files[name])

    def plan(self, parent: str | None) -> Plan:
        """The tree of this publish on top of `parent`, reusing its unchanged folders."""
        repo, writer = self.repo, ObjectWriter()
        parent_tree = repo.commit(parent).tree.hexsha if parent else None
        old_root, folders = _read_tip(repo, parent_tree) if parent_tree else ({}, {})
        old_metadata = _old_metadata(repo, {n: f for n, f in folders.items() if n in self.metadata})
        entries: TreeEntries = {}
        todo: list[str] = []
        for name, meta in sorted(self.metadata.items()):
            old_meta = old_metadata.get(name)
            if old_meta is not None and old_meta.same_input(meta):
                if old_meta.output_digest == folder_digest(folders[name].blobs()):
                    entries[name] = old_root[name]
                    continue
                if old_meta.output_digest:  # older tools wrote none: rebuild quietly
                    self.warnings.append(Problem(f"{name}/", 0, "", _EDITED, "warning"))
            todo.append(name)
        self.build(todo)
        for name in todo:
            known = folders[name].known() if name in folders else frozenset()
            entries[name] = _folder_tree(writer, self.outputs[name], known)
        tree = writer.tree(entries, frozenset({parent_tree}) if parent_tree else frozenset())
        changed = sorted(n for n, e in entries.items() if old_root.get(n) != e)
        removed = sorted(set(old_root) - set(entries))
        return Plan(parent, parent_tree, tree, changed, removed, writer)

    def commit(self, plan: Plan) -> str:
        """Write the plan's objects and commit its tree; the new commit (no ref moves)."""
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
