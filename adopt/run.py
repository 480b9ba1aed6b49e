"""Adopting the findings of one audit: pick them, edit the profile, validate and render, commit.

`prepare` decides everything and writes nothing: which findings are adopted, the edited files, the
regenerated directories and the profile diff (what `--dry-run` prints). `write_branch` then makes
the one commit on `adopt/<cluster>/<short id>`, or finds it already made (idempotent).

Each adoptable finding's edits are applied on top of the ones before and validated at once, so a
finding whose edit a rule refuses is reported with that rule's message and the others still go in
(named with --finding, it is an error instead: nothing is written).
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git
from audit.findings.finding import ID_LENGTH, Finding
from audit.result import AuditResult
from audit.sources.live import Live
from kubedata.objects import KubeObject, ObjectKey
from kubedata.yaml_io import load_all
from kubedata.yaml_scalars import same_data
from renderer.checkout import origin_url
from renderer.errors import Problem, ProfileError
from renderer.profile import (
    ClusterFiles,
    kubevirt_path,
    load_profile_bytes,
    platform_path,
    profile_path,
)
from renderer.publish.gitobjects import ref_sha
from renderer.render import Rendered

from adopt.branch import create_branch, ensure_clean, make_commit, same_content, tree_blobs
from adopt.check import check_render
from adopt.errors import AdoptError
from adopt.message import commit_message
from adopt.plan import Adoptable, Refused, plan, revert_command
from adopt.yamledit import Edit, apply_edits

__all__ = ["Prepared", "Written", "branch_name", "live_objects", "prepare", "write_branch"]


@dataclass(frozen=True)
class Prepared:
    cluster: str
    base: str
    """The commit the change is made on (HEAD)."""
    adopted: tuple[Adoptable, ...]
    already: tuple[Adoptable, ...]
    """Adoptable, but the profile already says it (adopted before, not yet rolled out)."""
    refused: tuple[Refused, ...]
    sources: dict[str, bytes]
    """Changed profile files: path -> new bytes."""
    generated: dict[str, bytes]
    """Regenerated files (render) under `dirs`: path -> bytes."""
    dirs: tuple[str, ...]
    diff: str
    """Unified diff of the changed profile files."""
    warnings: tuple[Problem, ...]

    @property
    def branch(self) -> str:
        return branch_name(self.cluster, [a.finding for a in self.adopted])


@dataclass(frozen=True)
class Written:
    branch: str
    commit: str
    created: bool
    """False: the branch already held exactly this change."""


def branch_name(cluster: str, findings: Sequence[Finding]) -> str:
    """adopt/<cluster>/<id of the one finding, or a digest of the ids of several>."""
    ids = sorted(f.id for f in findings)
    short = ids[0] if len(ids) == 1 else hashlib.sha256("\n".join(ids).encode()).hexdigest()
    return f"adopt/{cluster}/{short[:ID_LENGTH]}"


def live_objects(result: AuditResult, live: Live) -> Mapping[ObjectKey, KubeObject]:
    """The live Packages the plan reads beyond the findings (a hand-applied Package's variant,
    the platform's gpuOperatorVariant): read once the audit is done, while `live` is open."""
    out: dict[ObjectKey, KubeObject] = {}
    for f in result.findings:
        if f.object.kind == "Package" and f.object.key not in out:
            obj = live.get(f.object.key)
            if obj is not None:
                out[f.object.key] = obj
    return out


def _read(repo: git.Repo, commit: str, path: str) -> bytes | None:
    blobs = tree_blobs(repo, commit, [path])
    if path not in blobs:
        return None
    data: bytes = repo.odb.stream(bytes.fromhex(blobs[path])).read()
    return data


def _first_error(exc: ProfileError) -> str:
    errors = [p for p in exc.problems if p.severity == "error"] or exc.problems
    return str(errors[0]) if errors else "the profile does not validate"


def _unrendered(
    item: Adoptable,
    before: Rendered,
    after: Rendered,
    old: Sequence[Problem],
    new: Sequence[Problem],
) -> str | None:
    """Why an edit the rules accept would still not keep the drift: the render does not change
    (a device type the variant drops, say), so what reverts it now still would. Node labels are
    never rendered (the audit checks them against the profile itself)."""
    if all(e.path[:2] == ("spec", "nodes") for e in item.edits) or before.dirs != after.dirs:
        return None
    known = {(w.field, w.message) for w in old}
    said = [f"{w.field}: {w.message}" for w in new if (w.field, w.message) not in known]
    why = f" ({said[0]})" if said else ""
    return f"the profile would take it but render nothing from it{why}"


def _select(result: AuditResult, wanted: Sequence[str]) -> list[Finding]:
    by_id = {f.id: f for f in result.findings}
    for fid in wanted:
        if fid not in by_id:
            raise AdoptError(
                f"no finding {fid} in the audit of {result.cluster}: the ids are listed by "
                f"gpu-gitops audit --cluster {result.cluster}"
            )
    if wanted:
        return [by_id[fid] for fid in dict.fromkeys(wanted)]
    return list(result.findings)


def _head_texts(repo: git.Repo, base: str, cluster: str) -> dict[str, bytes | None]:
    """The cluster's profile and live files at HEAD (None: absent); the profile must exist."""
    profile_file = profile_path(cluster)
    profile = _read(repo, base, profile_file)
    if profile is None:
        raise AdoptError(
            f"{profile_file}: no profile for cluster {cluster} at HEAD; write one (see README "
            "'GPU profile') before adopting its drift"
        )
    live = (platform_path(cluster), kubevirt_path(cluster))
    return {profile_file: profile, **{f: _read(repo, base, f) for f in live}}


def _files(texts: Mapping[str, bytes | None], cluster: str) -> ClusterFiles:
    """The input files of `_head_texts` (possibly edited), as the renderer loads them."""
    return ClusterFiles(
        texts[profile_path(cluster)] or b"",
        texts[platform_path(cluster)],
        texts[kubevirt_path(cluster)],
    )


def _unified_diff(original: Mapping[str, bytes | None], changed: Mapping[str, bytes]) -> str:
    """`git diff`-style text of the changed files, in path order."""
    return "".join(
        "".join(
            difflib.unified_diff(
                (original[path] or b"").decode().splitlines(True),
                data.decode().splitlines(True),
                f"a/{path}",
                f"b/{path}",
            )
        )
        for path, data in sorted(changed.items())
    )


_ALREADY = "already"


def _is_no_op(doc: Any, edit: Edit) -> bool:
    """Whether `edit` leaves the loaded document `doc` as it is."""
    node: Any = doc
    for key in edit.path:
        in_list = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not in_list and not (isinstance(node, dict) and key in node):
            return edit.op in ("delete", "remove")
        node = node[key]
    if edit.op == "set":
        return same_data(node, edit.value)
    if edit.op == "delete":
        return False
    items = node if isinstance(node, list) else []
    hit = any(
        isinstance(i, dict) and i.get(edit.match) == edit.value[edit.match]
        if edit.match and isinstance(edit.value, dict)
        else same_data(i, edit.value)
        for i in items
    )
    return hit if edit.op == "append" else not hit


def _split_already(
    items: Sequence[Adoptable], texts: Mapping[str, bytes | None]
) -> tuple[list[Adoptable], list[Adoptable]]:
    """(the findings the profile already says, the others), each file loaded once."""
    docs = {f: (load_all((texts[f] or b"").decode()) or [None])[0] for f in {i.file for i in items}}
    said = [all(_is_no_op(docs[i.file], e) for e in i.edits) for i in items]
    return (
        [i for i, s in zip(items, said, strict=True) if s],
        [i for i, s in zip(items, said, strict=True) if not s],
    )


def _surely_rendered(item: Adoptable, platform_file: str) -> bool:
    """Every platform.yaml value is rendered into the platform Package, and node labels are never
    rendered (the audit reads them from the profile): neither can render nothing."""
    return item.file == platform_file or all(e.path[:2] == ("spec", "nodes") for e in item.edits)


@dataclass
class _Trial:
    """The profile texts with the findings adopted so far, and their validated render."""

    cluster: str
    origin: str | None
    wanted: Sequence[str]
    texts: dict[str, bytes | None]
    rendered: Rendered
    warnings: tuple[Problem, ...]
    adopted: list[Adoptable] = field(default_factory=list)

    def _check(self, texts: Mapping[str, bytes | None]) -> tuple[Rendered, tuple[Problem, ...]]:
        return check_render(self.cluster, _files(texts, self.cluster), self.origin)

    def batch(self, items: Sequence[Adoptable]) -> bool:
        """Adopt all of `items` at once if together they break no rule and render (else False:
        nothing changed)."""
        texts = dict(self.texts)
        for file in dict.fromkeys(i.file for i in items):
            edits = [e for i in items if i.file == file for e in i.edits]
            texts[file] = apply_edits((texts[file] or b"").decode(), edits, file).encode()
        try:
            rendered, warnings = self._check(texts)
        except ProfileError:
            return False
        if rendered.dirs == self.rendered.dirs and any(
            i.file == platform_path(self.cluster) for i in items
        ):
            return False
        self.texts, self.rendered, self.warnings = texts, rendered, warnings
        self.adopted += items
        return True

    def halving(self, items: Sequence[Adoptable]) -> list[Adoptable]:
        """Adopt `items` in as few checks as it takes: all at once, else each half in turn; the
        single findings a rule refuses are returned (for `one`, which says why)."""
        if not items or (len(items) > 1 and self.batch(items)):
            return []
        if len(items) == 1:
            return list(items)
        half = len(items) // 2
        return self.halving(items[:half]) + self.halving(items[half:])

    def one(self, item: Adoptable) -> str | None:
        """Adopt `item` on top of the others: None, _ALREADY, or why it cannot be (AdoptError
        when it was named with --finding)."""
        old = self.texts[item.file] or b""
        new_text = apply_edits(old.decode(), item.edits, item.file).encode()
        if new_text == old:
            return _ALREADY
        texts = {**self.texts, item.file: new_text}
        try:
            rendered, warnings = self._check(texts)
            reason = _unrendered(item, self.rendered, rendered, self.warnings, warnings)
        except ProfileError as exc:
            reason = f"the edit would break a rule: {_first_error(exc)}"
        if reason:
            if self.wanted:
                raise AdoptError(f"finding {item.finding.id} cannot be adopted: {reason}")
            return reason
        self.texts, self.rendered, self.warnings = texts, rendered, warnings
        self.adopted.append(item)
        return None


def prepare(
    repo: git.Repo,
    result: AuditResult,
    live: Mapping[ObjectKey, KubeObject],
    wanted: Sequence[str] = (),
) -> Prepared:
    """Everything adopt will write, decided without writing. AdoptError on bad input."""
    cluster = result.cluster
    base = ensure_clean(repo)
    texts = _head_texts(repo, base, cluster)
    origin = origin_url(Path(repo.working_dir)) if repo.working_dir else None
    try:
        loaded = load_profile_bytes(cluster, _files(texts, cluster))
        rendered, warnings = check_render(cluster, _files(texts, cluster), origin)
    except ProfileError as exc:
        raise AdoptError(
            f"the profile at HEAD does not validate ({_first_error(exc)}): fix it first"
        ) from None
    findings = _select(result, wanted)
    planned = plan(cluster, findings, loaded, live)
    refused = list(planned.refused)
    if wanted and refused:
        r = refused[0]
        raise AdoptError(
            f"finding {r.finding.id} is not adoptable: {r.reason}; to drop it instead: {r.revert}"
        )
    original = dict(texts)
    for item in planned.adoptable:
        if texts[item.file] is None:
            raise AdoptError(f"{item.file} does not exist: capture it first with gpu-gitops import")
    trial = _Trial(cluster, origin, wanted, texts, rendered, warnings)
    already, pending = _split_already(planned.adoptable, texts)
    # the findings whose edit surely renders (a platform.yaml value, a node label) are applied and
    # checked together: a thousand of them must not cost a thousand validate-and-render runs
    # (where a rule refuses some, halves are tried until they are found); the others one by one
    platform_file = platform_path(cluster)
    sure = [i for i in pending if _surely_rendered(i, platform_file)]
    rest = [i for i in pending if not _surely_rendered(i, platform_file)]
    for item in trial.halving(sure) + rest:
        reason = trial.one(item)
        if reason == _ALREADY:
            already.append(item)
        elif reason:
            refused.append(Refused(item.finding, reason, revert_command(item.finding, cluster)))
    texts, rendered, warnings = trial.texts, trial.rendered, trial.warnings
    position = {id(a): i for i, a in enumerate(planned.adoptable)}
    adopted = sorted(trial.adopted, key=lambda a: position[id(a)])
    already.sort(key=lambda a: position[id(a)])
    sources = {p: d for p, d in texts.items() if d is not None and d != original[p]}
    generated = {
        f"{d}/{rel}": text.encode()
        for d, files in rendered.dirs.items()
        for rel, text in files.items()
    }
    diff = _unified_diff(original, sources)
    order = {f.id: i for i, f in enumerate(result.findings)}
    return Prepared(
        cluster,
        base,
        tuple(adopted),
        tuple(already),
        tuple(sorted(refused, key=lambda r: order[r.finding.id])),
        sources,
        generated,
        tuple(rendered.dirs),
        diff,
        warnings,
    )


def write_branch(repo: git.Repo, prepared: Prepared, live_source: str, when: float) -> Written:
    """Commit the change on its branch; the existing branch when it already holds this change."""
    branch = prepared.branch
    files = {**prepared.generated, **prepared.sources}
    existing = ref_sha(repo, f"refs/heads/{branch}")
    if existing:
        if same_content(repo, existing, files, prepared.dirs):
            return Written(branch, existing, created=False)
        raise AdoptError(
            f"branch {branch} already exists with other content: merge or delete it "
            f"(git branch -D {branch}), then adopt again"
        )
    message = commit_message(prepared.cluster, prepared.adopted, live_source, when)
    commit = make_commit(repo, prepared.base, files, prepared.dirs, message)
    create_branch(repo, branch, commit)
    return Written(branch, commit, created=True)
