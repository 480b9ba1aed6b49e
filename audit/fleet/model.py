"""Query results -> the fleet: one ClusterAudit per cluster that has pushed, worst news first.

Pure. The series are those the nightly audit pushes (audit/metrics.py, DESIGN §6); the queries
that read them are here too, so what is asked and how the answer is read stay side by side. Three
queries for the whole fleet, whatever its size: the state series of every cluster, the finding
counts by cluster and severity, and the per-finding series at or above the chosen severity.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kubedata.text import adopt_command

from audit.findings.finding import SEVERITIES
from audit.fleet.prometheus import Sample
from audit.metrics import PUSH_JOB

__all__ = [
    "MISSING_AFTER",
    "STATUSES",
    "ClusterAudit",
    "Fleet",
    "FleetFinding",
    "Status",
    "build_fleet",
    "counts_query",
    "findings_query",
    "state_query",
]

MISSING_AFTER = 36 * 3600.0
"""Seconds since the last complete audit after which a cluster's audit is missing (the
GpuGitopsAuditMissing alert's 36 h)."""
Status = Literal["missing", "incomplete", "drift", "clean"]
STATUSES: tuple[Status, ...] = ("missing", "incomplete", "drift", "clean")
"""In the order the fleet lists them: the worst news first."""
_STATE = {
    "gpu_gitops_audit_complete": "complete",
    "gpu_gitops_audit_timestamp_seconds": "last_audit",
    "gpu_gitops_audit_last_success_timestamp_seconds": "last_success",
    "gpu_gitops_audit_findings_omitted": "omitted",
    "gpu_gitops_audit_problems": "problems",
}


_SELECT = f'job="{PUSH_JOB}",cluster!=""'
"""The audit's own series (the alert rules select on the job too): with honor_labels the push's
job; a second scrape without it (exported_job) would count every finding twice."""


def _select(clusters: Sequence[str] | None) -> str:
    """The audit's series of these clusters (None: every cluster; none: no cluster), matched in
    Prometheus so a pull request touching a few clusters of a large fleet reads only theirs."""
    if clusters is None:
        return _SELECT
    if not clusters:
        return f'{_SELECT},cluster=""'
    alternatives = "|".join(re.escape(c) for c in sorted(set(clusters)))
    # a PromQL string literal: its backslashes and quotes escaped as in Go
    literal = alternatives.replace("\\", "\\\\").replace('"', '\\"')
    return f'job="{PUSH_JOB}",cluster=~"{literal}"'


def state_query(clusters: Sequence[str] | None = None) -> str:
    return '{__name__=~"' + "|".join(sorted(_STATE)) + '",' + _select(clusters) + "}"


def counts_query(clusters: Sequence[str] | None = None) -> str:
    return f"sum by (cluster, severity) (gpu_gitops_audit_findings{{{_select(clusters)}}})"


def findings_query(min_severity: str, clusters: Sequence[str] | None = None) -> str:
    wanted = SEVERITIES[: SEVERITIES.index(min_severity) + 1]
    return (
        'gpu_gitops_audit_finding{severity=~"' + "|".join(wanted) + '",' + _select(clusters) + "}"
    )


@dataclass(frozen=True)
class FleetFinding:
    """One gpu_gitops_audit_finding series."""

    cluster: str
    id: str
    severity: str
    type: str
    revert: str
    kind: str
    namespace: str
    name: str
    path: str
    manager: str
    changed: float
    """When its field was last changed (managedFields time, Unix seconds); 0 unknown."""

    @property
    def object(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @property
    def adopt(self) -> str:
        return adopt_command(self.cluster, self.id)


@dataclass(frozen=True)
class ClusterAudit:
    name: str
    status: Status
    last_audit: float | None
    """When the last audit ran, complete or not (None: never said)."""
    last_success: float | None
    complete: bool
    problems: int
    counts: dict[str, int]
    """Findings of the last complete audit by severity (all of them, listed or not)."""
    omitted: int
    """Findings without a series of their own (over the push's cap)."""
    findings: tuple[FleetFinding, ...] = field(default=())
    """The listed findings at or above the fleet's min_severity."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def worst(self) -> str | None:
        return next((s for s in SEVERITIES if self.counts.get(s)), None)


@dataclass(frozen=True)
class Fleet:
    at: float
    """The time the queries were evaluated at (Unix seconds)."""
    min_severity: str
    clusters: tuple[ClusterAudit, ...]

    def findings(self) -> list[FleetFinding]:
        return [f for c in self.clusters for f in c.findings]

    def by_status(self) -> dict[Status, int]:
        return {s: sum(c.status == s for c in self.clusters) for s in STATUSES}


def _selected(name: str, globs: Sequence[str]) -> bool:
    return not globs or any(fnmatch.fnmatchcase(name, g) for g in globs)


def _finding(s: Sample) -> FleetFinding:
    get = s.labels.get
    return FleetFinding(
        get("cluster", ""), get("id", ""), get("severity", ""), get("type", ""),
        get("revert", ""), get("kind", ""), get("namespace", ""), get("name", ""),
        get("path", ""), get("manager", ""), s.value if s.value > 0 else 0.0,
    )  # fmt: skip


def _status(
    complete: bool, last_success: float | None, counts: dict[str, int], at: float
) -> Status:
    if last_success is None or at - last_success > MISSING_AFTER:
        return "missing"
    if not complete:
        return "incomplete"
    return "drift" if any(counts.values()) else "clean"


def _order(c: ClusterAudit) -> tuple[int, int, int, str]:
    worst = c.worst()
    rank = SEVERITIES.index(worst) if worst else len(SEVERITIES)
    return (STATUSES.index(c.status), rank, -c.total, c.name)


def _finding_order(f: FleetFinding) -> tuple[int, str, str, str]:
    rank = SEVERITIES.index(f.severity) if f.severity in SEVERITIES else len(SEVERITIES)
    return (rank, f.kind, f"{f.namespace}/{f.name}", f.path + "\0" + f.id)


def build_fleet(
    state: Iterable[Sample],
    counts: Iterable[Sample],
    findings: Iterable[Sample],
    *,
    at: float,
    min_severity: str,
    globs: Sequence[str] = (),
) -> Fleet:
    """The fleet the three queries' answers describe, at `at`, for the clusters `globs` match
    (fnmatch, case-sensitive; none: every cluster)."""
    values: dict[str, dict[str, float]] = {}
    for s in state:
        name = s.labels.get("cluster", "")
        key = _STATE.get(s.labels.get("__name__", ""))
        if key and _selected(name, globs):
            values.setdefault(name, {})[key] = s.value
    by_severity: dict[str, dict[str, int]] = {}
    for s in counts:
        name = s.labels.get("cluster", "")
        if name in values:
            row = by_severity.setdefault(name, {})
            row[s.labels.get("severity", "")] = row.get(s.labels.get("severity", ""), 0) + int(
                s.value
            )
    listed: dict[str, list[FleetFinding]] = {}
    for s in findings:
        f = _finding(s)
        if f.cluster in values:
            listed.setdefault(f.cluster, []).append(f)
    clusters = []
    for name, v in values.items():
        complete = v.get("complete", 0.0) == 1.0
        row = {sev: by_severity.get(name, {}).get(sev, 0) for sev in SEVERITIES}
        clusters.append(
            ClusterAudit(
                name=name,
                status=_status(complete, v.get("last_success"), row, at),
                last_audit=v.get("last_audit"),
                last_success=v.get("last_success"),
                complete=complete,
                problems=int(v.get("problems", 0)),
                counts=row,
                omitted=int(v.get("omitted", 0)),
                findings=tuple(sorted(set(listed.get(name, [])), key=_finding_order)),
            )
        )
    return Fleet(at, min_severity, tuple(sorted(clusters, key=_order)))
