"""The audit's Prometheus metrics: one registry (prometheus-client), printed by `-o prometheus` and
pushed to a Pushgateway by the nightly job.

Every push states the present (DESIGN §6). All of a cluster's series live in one Pushgateway
group, {job="gpu-gitops-audit", cluster=NAME}:

- a complete audit PUTs the group: the push replaces every series in it, so a finding fixed since
  the last night leaves no series behind, and the drift alert resolves;
- an incomplete audit POSTs only `complete` 0, its timestamp and its problem count: POST replaces
  the metrics of those names and keeps the others, so the findings of the last complete audit and
  `gpu_gitops_audit_last_success_timestamp_seconds` stay as they were. An incomplete audit's own
  findings are not the present (a read that failed can hide drift): pushing them would resolve
  the drift alert on a night nobody could look.

Labels carry names, ids, JSON pointers and field managers, never values: desired and live values
(where secrets are, redacted or not) are in no label.
"""

from __future__ import annotations

import http.client
import socket
import urllib.parse
from collections import Counter
from collections.abc import Callable
from datetime import datetime

from kubedata.budget import Budget, OverBudget
from prometheus_client import (
    CollectorRegistry,
    Gauge,
    generate_latest,
    push_to_gateway,
    pushadd_to_gateway,
)
from renderer.bases import AUDIT_NAME

from audit.errors import AuditError
from audit.findings.finding import FINDING_TYPES, REVERTS, SEVERITIES, Finding
from audit.result import AuditResult

__all__ = [
    "FINDING_LABELS",
    "FINDING_SERIES_CAP",
    "PUSH_JOB",
    "PushError",
    "audit_registry",
    "push_metrics",
    "render_prometheus",
]

PUSH_JOB = AUDIT_NAME
"""The Pushgateway `job` grouping label (the alert rules select on it)."""
PUSH_TIMEOUT = 30.0
"""Seconds one push may wait on a read, at most (the command's deadline may leave less)."""
FINDING_SERIES_CAP = 200
"""Per-finding series per cluster, most severe first: a cluster with thousands of drifted objects
must not flood Prometheus; `gpu_gitops_audit_findings_omitted` counts the rest."""
FINDING_LABELS = (
    "cluster",
    "id",
    "severity",
    "type",
    "revert",
    "kind",
    "namespace",
    "name",
    "path",
    "manager",
)
"""The labels of `gpu_gitops_audit_finding`: a contract (the fleet view and the PR bot read it)."""
_MAX_ANSWER = 64 << 10
"""Bytes of a Pushgateway's answer read: it says "" or one error line."""


class PushError(AuditError):
    """The Pushgateway could not be reached or refused the metrics."""


def _unix(time: str) -> float:
    try:
        return datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _change_time(finding: Finding) -> tuple[float, str]:
    """(Unix time, manager) of the newest managedFields entry over the finding's path; time 0
    when none has one, manager "" when no entry covers the path."""
    best_time, best_manager = 0.0, ""
    for m in finding.managers:
        when = _unix(m.time)
        if not best_manager or when > best_time:
            best_time, best_manager = when, m.manager
    return best_time, best_manager


def _listed(findings: list[Finding]) -> list[Finding]:
    """The findings that get a series of their own: the most severe, up to the cap."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    ordered = sorted(findings, key=lambda f: (rank[f.severity], f.id))
    return ordered[:FINDING_SERIES_CAP]


def _finding_series(registry: CollectorRegistry, result: AuditResult) -> None:
    series = Gauge(
        "gpu_gitops_audit_finding",
        "One finding of the last complete audit; value: when its field was last changed "
        "(managedFields time, Unix seconds; 0 unknown).",
        list(FINDING_LABELS),
        registry=registry,
    )
    listed = _listed(result.findings)
    for f in listed:
        when, manager = _change_time(f)
        obj = f.object
        series.labels(
            result.cluster, f.id, f.severity, f.type, f.revert, obj.kind, obj.namespace,
            obj.name, f.path, manager,
        ).set(when)  # fmt: skip
    Gauge(
        "gpu_gitops_audit_findings_omitted",
        f"Findings of the last complete audit without a series of their own (over the "
        f"{FINDING_SERIES_CAP} most severe).",
        registry=registry,
    ).set(len(result.findings) - len(listed))


def _state(registry: CollectorRegistry, result: AuditResult) -> None:
    """The series every push carries, complete or not."""
    Gauge(
        "gpu_gitops_audit_complete",
        "1 when the last audit read everything it needed, else 0.",
        registry=registry,
    ).set(int(result.complete))
    Gauge(
        "gpu_gitops_audit_timestamp_seconds", "When the audit ran, in Unix time.", registry=registry
    ).set(result.timestamp)
    Gauge(
        "gpu_gitops_audit_problems",
        "Reads the last audit could not make (0 when complete).",
        registry=registry,
    ).set(len(result.problems))


def audit_registry(result: AuditResult) -> CollectorRegistry:
    """The metrics of one audit: for an incomplete one only those it can vouch for (see the
    module's docstring)."""
    registry = CollectorRegistry(auto_describe=True)
    _state(registry, result)
    if not result.complete:
        return registry
    findings = Gauge(
        "gpu_gitops_audit_findings",
        "Findings of the last complete audit by type, severity and revert class.",
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
    _finding_series(registry, result)
    Gauge(
        "gpu_gitops_audit_last_success_timestamp_seconds",
        "When the last complete audit ran, in Unix time.",
        registry=registry,
    ).set(result.timestamp)
    Gauge(
        "gpu_gitops_audit_info",
        "The audited cluster and the desired revision of the last complete audit.",
        ["cluster", "desired_source", "desired_revision"],
        registry=registry,
    ).labels(result.cluster, result.desired_source, result.desired_revision).set(1)
    return registry


def render_prometheus(result: AuditResult) -> str:
    """Text exposition format."""
    return generate_latest(audit_registry(result)).decode()


def _where(url: str) -> str:
    """The URL for messages: scheme, host, port and path; never user-info or a query."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _sender(
    budget: Budget, gateway: str
) -> Callable[[str, str, float | None, list[tuple[str, str]], bytes], Callable[[], None]]:
    """A prometheus-client push handler: one request on http.client (which follows no
    redirect), the whole exchange within the command's deadline."""

    def handler(
        url: str, method: str, timeout: float | None, headers: list[tuple[str, str]], data: bytes
    ) -> Callable[[], None]:
        def send() -> None:
            parts = urllib.parse.urlsplit(url)
            https = parts.scheme == "https"
            cls = http.client.HTTPSConnection if https else http.client.HTTPConnection
            conn = cls(parts.hostname or "", parts.port, timeout=budget.timeout(timeout or 30.0))

            try:
                conn.connect()  # bounded by its timeout; then there is a socket to cut
                # kept here: once a response that closes the connection arrives, http.client
                # hands the socket to the response and conn.sock is None
                sock = conn.sock

                def cut() -> None:
                    sock.shutdown(socket.SHUT_RDWR)

                with budget.cutoff(cut, "the Pushgateway's answer"):
                    conn.request(method, parts.path, body=data, headers=dict(headers))
                    response = conn.getresponse()
                    response.read(_MAX_ANSWER)
            finally:
                conn.close()
            if 300 <= response.status < 400:
                raise PushError(
                    f"the Pushgateway at {gateway} answered HTTP {response.status} (a redirect), "
                    "which is not followed: the metrics were not delivered; set --pushgateway "
                    "to the Pushgateway's own address"
                )
            if response.status >= 400:
                raise PushError(
                    f"the Pushgateway at {gateway} refused the metrics: HTTP {response.status} "
                    f"{response.reason[:100]}"
                )

        return send

    return handler


def push_metrics(result: AuditResult, url: str, budget: Budget) -> None:
    """Push the audit's metrics to the Pushgateway at `url` (see the module's docstring), within
    `budget`'s deadline; PushError when they were not delivered."""
    gateway = _where(url)
    push = push_to_gateway if result.complete else pushadd_to_gateway
    try:
        push(
            url,
            job=PUSH_JOB,
            registry=audit_registry(result),
            grouping_key={"cluster": result.cluster},
            timeout=PUSH_TIMEOUT,
            handler=_sender(budget, gateway),
        )
    except OverBudget as exc:
        raise PushError(
            f"the Pushgateway at {gateway}: {exc}; the report above stands, the metrics "
            "were not delivered"
        ) from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise PushError(
            f"the Pushgateway at {gateway} could not be reached ({type(exc).__name__}: "
            f"{str(exc)[:200]}): the report above stands, the metrics were not delivered"
        ) from None
