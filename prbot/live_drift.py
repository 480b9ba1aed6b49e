"""Pull requests that know what is live: the PR's field changes against the live drift the
nightly audits found (`diff --live-findings`).

A change overwrites live drift when it touches a drifted field of the same object: the same JSON
pointer, an ancestor of it (a removed object, a replaced list) or a field inside it. Merged, Flux
applies git over the hand-made change. When the change writes exactly the live value (known only
from saved audit reports: Prometheus carries no values), it codifies the drift and the finding
closes. Pure, except `load_reports`, which reads a folder of `audit -o json` reports.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubedata.errors import GpuGitopsError
from kubedata.text import adopt_command, inert
from kubedata.yaml_io import load_all
from renderer.gitdir import git_bytes, open_checkout

from prbot.diff import ObjectChange

if TYPE_CHECKING:
    from prbot.refdiff import RefDiff  # refdiff.py holds a LiveDrift

__all__ = [
    "FieldChanged",
    "LiveDrift",
    "LiveFinding",
    "LiveFindingsError",
    "LiveHit",
    "LiveSource",
    "check_live",
    "git_field_changed",
    "load_reports",
]

MAX_REPORT_BYTES = 64 << 20
_UNKNOWN = object()


class LiveFindingsError(GpuGitopsError):
    """A --live-findings source that cannot be read."""


@dataclass(frozen=True)
class LiveFinding:
    """One live finding of a cluster's last complete audit."""

    cluster: str
    id: str
    kind: str
    namespace: str
    name: str
    path: str
    manager: str
    changed: str
    """When the field was changed (ISO 8601), "" unknown."""
    live: Any = _UNKNOWN
    """The live value, where the source has it (audit reports; not Prometheus)."""
    source: tuple[str, str] | None = None
    """(file, field) of the profile field that owns the value, where the source has it (audit
    reports): a Cozystack cluster's KubeVirt is built by the platform from the Package's values,
    so the pull request changes the profile field, not the live object."""

    @property
    def adopt(self) -> str:
        return adopt_command(self.cluster, self.id)


@dataclass(frozen=True)
class LiveSource:
    """What a --live-findings source holds."""

    name: str
    """Where the findings came from, for the report."""
    findings: tuple[LiveFinding, ...]
    audited: frozenset[str]
    """The clusters it has an audit of: a clean audit leaves no finding, yet it is an audit."""


@dataclass(frozen=True)
class LiveHit:
    finding: LiveFinding
    pointer: str
    """The changed field's JSON pointer ("" a whole object added or removed)."""
    codifies: bool

    def message(self, code: Callable[[str], str] = lambda t: f"`{inert(t)}`") -> str:
        """What the reviewer reads; `code` quotes a value (Markdown: kubedata.text.code_span)."""
        f = self.finding
        if self.codifies:
            return f"codifies live drift {code(f.id)}: the finding will close"
        who = f.manager or "an unknown manager"
        when = f.changed or "an unknown time"
        return (
            f"this merge overwrites a live change: {code(f.path)} set by {code(who)} at "
            f"{code(when)}; keep it with {code(f.adopt)} first"
        )


@dataclass(frozen=True)
class LiveDrift:
    source: str
    """Where the findings came from, for the report."""
    hits: dict[str, tuple[LiveHit, ...]]
    """Per changed cluster."""
    unaudited: tuple[str, ...]
    """Changed clusters the source has no audit of."""

    @property
    def overwrites(self) -> int:
        return sum(not h.codifies for hits in self.hits.values() for h in hits)


def _touches(change: str, drifted: str) -> bool:
    """The same field, an ancestor of it or a field inside it (JSON pointers)."""
    return (
        change == drifted
        or drifted.startswith(change + "/")
        or change.startswith(drifted + "/")
        or change == ""
    )


def _object_hits(change: ObjectChange, findings: list[LiveFinding]) -> list[LiveHit]:
    key = change.key
    mine = [
        f for f in findings if (f.kind, f.namespace, f.name) == (key.kind, key.namespace, key.name)
    ]
    hits = []
    for f in mine:
        if change.change != "changed":
            hits.append(LiveHit(f, "", codifies=False))
            continue
        touching = [fc for fc in change.fields if _touches(fc.pointer, f.path)]
        if not touching:
            continue
        codifies = all(
            fc.pointer == f.path and f.live is not _UNKNOWN and fc.after == f.live
            for fc in touching
        )
        hits.append(LiveHit(f, touching[0].pointer, codifies))
    return hits


FieldChanged = Callable[[str, str], bool]
"""(profile file, dotted field) -> whether the pull request changes that field."""


def _source_hit(f: LiveFinding, changed: FieldChanged | None) -> LiveHit | None:
    if f.source is None or changed is None or not changed(*f.source):
        return None
    return LiveHit(f, f"{f.source[0]} {f.source[1]}", codifies=False)


def check_live(d: RefDiff, live: LiveSource, field_changed: FieldChanged | None = None) -> RefDiff:
    """The diff with its live drift: hits per changed cluster, overwrites first. A finding is
    hit by a changed built field over it, or (`field_changed`) by a change of the profile field
    that owns it."""
    by_cluster: dict[str, list[LiveFinding]] = {}
    for f in live.findings:
        by_cluster.setdefault(f.cluster, []).append(f)
    hits: dict[str, tuple[LiveHit, ...]] = {}
    unaudited = []
    for c in d.clusters:
        if not c.changes:
            continue
        if c.name not in live.audited:
            unaudited.append(c.name)
            continue
        mine = by_cluster.get(c.name, [])
        found = [h for ch in c.changes for h in _object_hits(ch, mine)]
        hit = {h.finding.id for h in found}
        found += [
            h for f in mine if f.id not in hit and (h := _source_hit(f, field_changed)) is not None
        ]
        if found:
            hits[c.name] = tuple(sorted(found, key=lambda h: (h.codifies, h.finding.id)))
    return replace(d, live=LiveDrift(live.name, hits, tuple(unaudited)))


def _source(doc: Any) -> tuple[str, str] | None:
    if (
        isinstance(doc, dict)
        and isinstance(doc.get("file"), str)
        and isinstance(doc.get("field"), str)
    ):
        return doc["file"], doc["field"]
    return None


def _field(doc: Any, dotted: str) -> Any:
    """The value at a dotted profile field (spec.devices, spec.nodes.NAME); None when absent."""
    for part in dotted.split("."):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


def git_field_changed(repo_dir: Path, base: str, head: str) -> FieldChanged:
    """Whether a profile field differs between two commits (read from their trees)."""
    # the git command, not GitPython: the closure outlives this call, and a GitPython repository
    # left open keeps git processes until the garbage collector finds it
    repo = open_checkout(repo_dir)
    cache: dict[tuple[str, str], Any] = {}

    def doc(commit: str, file: str) -> Any:
        if (commit, file) not in cache:
            try:
                data = git_bytes(repo, "cat-file", "blob", f"{commit}:{file}")
                docs = load_all(data.decode("utf-8"), file)
            except (ValueError, UnicodeDecodeError, GpuGitopsError):  # GitError: no such file
                docs = []
            cache[commit, file] = docs[0] if docs else None
        return cache[commit, file]

    def changed(file: str, field: str) -> bool:
        return bool(_field(doc(base, file), field) != _field(doc(head, file), field))

    return changed


def _report_findings(path: Path, doc: Any) -> list[LiveFinding]:
    def bad(field: str) -> LiveFindingsError:
        return LiveFindingsError(f"{path}: {field}: not an `audit -o json` report")

    if not isinstance(doc, dict) or not isinstance(doc.get("cluster"), str):
        raise bad("cluster")
    if not isinstance(doc.get("findings"), list):
        raise bad("findings")
    out = []
    for i, f in enumerate(doc["findings"]):
        obj = f.get("object") if isinstance(f, dict) else None
        if not isinstance(obj, dict) or not isinstance(f.get("id"), str):
            raise bad(f"findings[{i}]")
        managers = [m for m in f.get("managers") or [] if isinstance(m, dict)]
        newest = max(managers, key=lambda m: str(m.get("time") or ""), default={})
        out.append(
            LiveFinding(
                cluster=doc["cluster"],
                id=f["id"],
                kind=str(obj.get("kind", "")),
                namespace=str(obj.get("namespace") or ""),
                name=str(obj.get("name", "")),
                path=str(f.get("path", "")),
                manager=str(newest.get("manager") or ""),
                changed=str(newest.get("time") or ""),
                live=f.get("live", _UNKNOWN),
                source=_source(f.get("source")),
            )
        )
    return out


def load_reports(source: str) -> LiveSource:
    """The findings of every `*.json` audit report in the folder `source` (one per cluster); an
    incomplete audit's findings are kept: they are what was seen."""
    folder = Path(source)
    if not folder.is_dir():
        raise LiveFindingsError(f"--live-findings {inert(source)}: not a folder or a URL")
    findings: list[LiveFinding] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            if path.stat().st_size > MAX_REPORT_BYTES:
                raise LiveFindingsError(f"{path}: over {MAX_REPORT_BYTES >> 20} MB")
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise LiveFindingsError(f"{path}: cannot read it: {exc.strerror}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            where = f"{path}:{line}" if line else str(path)
            raise LiveFindingsError(f"{where}: not JSON (an `audit -o json` report)") from None
        got = _report_findings(path, doc)
        cluster = doc["cluster"]
        if cluster in seen:
            raise LiveFindingsError(
                f"{path}: cluster: {inert(cluster)} already has a report ({seen[cluster].name})"
            )
        seen[cluster] = path
        findings += got
    if not seen:
        raise LiveFindingsError(f"--live-findings {inert(source)}: no *.json audit report in it")
    return LiveSource(source, tuple(findings), frozenset(seen))
