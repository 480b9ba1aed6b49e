"""The outcome of one audit: findings, notes, failed reads, the releases read; and its exit code.

Why this exists: the report formats (report.py) and the CLI need only this model, not the steps
that made it. An audit that could not read something is incomplete, and never clean (DESIGN §6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from audit.findings.finding import SEVERITIES, Finding
from audit.sources.helm_release import HelmRelease

__all__ = ["AuditResult", "ReleaseInfo"]


@dataclass(frozen=True)
class ReleaseInfo:
    release: str
    revision: int
    chart: str
    apply_method: str
    values_digest: str

    @classmethod
    def of(cls, release: HelmRelease) -> ReleaseInfo:
        chart = release.chart_name
        return cls(
            f"{release.namespace}/{release.name}",
            release.revision,
            f"{chart}-{release.chart_version}" if release.chart_version else chart,
            release.apply_method,
            release.values_digest,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "release": self.release,
            "revision": self.revision,
            "chart": self.chart,
            "applyMethod": self.apply_method,
            "valuesDigest": self.values_digest,
        }


@dataclass
class AuditResult:
    cluster: str
    desired_source: str
    desired_revision: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """What limits the whole report (no managedFields to attribute with), said at its top."""
    problems: list[str] = field(default_factory=list)
    """Reads that failed: the audit is incomplete."""
    releases: list[ReleaseInfo] = field(default_factory=list)
    timestamp: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.problems

    @property
    def drift(self) -> bool:
        return any(f.severity != "info" for f in self.findings)

    @property
    def exit_code(self) -> int:
        """2 incomplete (never clean), 1 drift, 0 clean."""
        return self.exit_status("low")

    def exit_status(self, fail_on: str) -> int:
        """2 incomplete (never clean), 1 a finding at or above `fail_on` (`audit --fail-on`;
        never: none is), else 0."""
        if not self.complete:
            return 2
        if fail_on == "never":
            return 0
        worst = SEVERITIES.index(fail_on)
        return 1 if any(SEVERITIES.index(f.severity) <= worst for f in self.findings) else 0
