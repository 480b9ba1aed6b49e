"""The audit's Prometheus metrics: one registry (prometheus-client), printed by `-o prometheus` and
pushed to a Pushgateway by the nightly job.

Pushed with POST (`pushadd`), grouped by job and cluster: it replaces the metrics of the same
names in the group and keeps the others, so `gpu_gitops_audit_last_success_timestamp_seconds`,
set only by a complete audit, survives incomplete runs and the "no successful audit for 36
hours" alert (renderer/bases.py) can fire. Labels carry counts and revisions, never values.
"""

from __future__ import annotations

import urllib.error
from collections import Counter

from prometheus_client import CollectorRegistry, Gauge, generate_latest, pushadd_to_gateway
from renderer.bases import AUDIT_NAME

from audit.errors import AuditError
from audit.findings.finding import FINDING_TYPES, REVERTS, SEVERITIES
from audit.result import AuditResult

__all__ = ["PUSH_JOB", "PushError", "audit_registry", "push_metrics", "render_prometheus"]

PUSH_JOB = AUDIT_NAME
"""The Pushgateway `job` grouping label (the alert rules select on it)."""
PUSH_TIMEOUT = 30.0


class PushError(AuditError):
    """The Pushgateway could not be reached or refused the metrics."""


def audit_registry(result: AuditResult) -> CollectorRegistry:
    """The metrics of one audit."""
    registry = CollectorRegistry(auto_describe=True)
    findings = Gauge(
        "gpu_gitops_audit_findings",
        "Findings of the last drift audit by type, severity and revert class.",
        ["type", "severity", "revert"],
        registry=registry,
    )
    counts = Counter((f.type, f.severity, f.revert) for f in result.findings)
    for ftype in FINDING_TYPES:
        for severity in SEVERITIES:
            for revert in REVERTS:
                n = counts.get((ftype, severity, revert))
                if n:
                    findings.labels(ftype, severity, revert).set(n)
    Gauge(
        "gpu_gitops_audit_complete",
        "1 when the audit read everything it needed, else 0.",
        registry=registry,
    ).set(int(result.complete))
    Gauge(
        "gpu_gitops_audit_timestamp_seconds", "When the audit ran, in Unix time.", registry=registry
    ).set(result.timestamp)
    if result.complete:
        Gauge(
            "gpu_gitops_audit_last_success_timestamp_seconds",
            "When the last complete audit ran, in Unix time.",
            registry=registry,
        ).set(result.timestamp)
    Gauge(
        "gpu_gitops_audit_info",
        "The audited cluster and the desired revision.",
        ["cluster", "desired_source", "desired_revision"],
        registry=registry,
    ).labels(result.cluster, result.desired_source, result.desired_revision).set(1)
    return registry


def render_prometheus(result: AuditResult) -> str:
    """Text exposition format."""
    return generate_latest(audit_registry(result)).decode()


def push_metrics(result: AuditResult, url: str, timeout: float = PUSH_TIMEOUT) -> None:
    """POST the audit's metrics to the Pushgateway at `url`, grouped by job and cluster."""
    try:
        pushadd_to_gateway(
            url,
            job=PUSH_JOB,
            registry=audit_registry(result),
            grouping_key={"cluster": result.cluster},
            timeout=timeout,
        )
    except urllib.error.HTTPError as exc:
        raise PushError(
            f"the Pushgateway at {url} refused the metrics: HTTP {exc.code} {exc.reason}"
        ) from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise PushError(
            f"the Pushgateway at {url} could not be reached ({reason}): the report above is "
            "complete, the metrics were not delivered"
        ) from None
