"""A small fleet pushed, night after night, with the project's own push (audit/metrics.py) to a
real Pushgateway that a real Prometheus scrapes: what the fleet tests read back.

- ams1: the real nightly command (`audit --snapshot ... --pushgateway`) on the demo data;
- fra1: night 1 three findings (high, medium, low), night 2 one high: the present is night 2;
- par1: night 1 one medium, night 2 incomplete: findings and last success stay night 1's;
- old1: its last complete audit 40 h ago: missing;
- ber1: clean;
- evil: label values that are markup (`<script>`, `"><img`), backticks and pipes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from audit.findings.finding import Finding, Manager, ObjectRef
from audit.kube.api import audit_budget
from audit.metrics import push_metrics
from audit.result import AuditResult
from tests.audit.audit_helpers import audit_cli, demo_objects, demo_repo, write_snapshot
from tests.prometheus import Prometheus, wait_for
from tests.pushgateway import Pushgateway

__all__ = ["HOSTILE", "TERMINAL", "PushedFleet", "finding", "push_fleet", "result", "scraped_value"]

HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>`|'
TERMINAL = "kubectl\x1b[2J\nedit"
"""A manager name that would clear a terminal and forge a line."""
HOUR = 3600.0


def finding(
    name: str,
    severity: str = "high",
    path: str = "/spec/replicas",
    manager: str = "kubectl-edit",
    when: str = "2026-11-30T03:01:02Z",
    kind: str = "Deployment",
    namespace: str = "gpu-operator",
) -> Finding:
    return Finding(
        type="modified",
        object=ObjectRef("apps/v1", kind, namespace, name),
        path=path,
        managers=[Manager(manager, "Update", when)],
        revert="never",
        severity=severity,  # type: ignore[arg-type]
    )


def result(
    cluster: str, complete: bool, when: float, findings: list[Finding] | None = None
) -> AuditResult:
    return AuditResult(
        cluster=cluster,
        desired_source="flux-applied",
        desired_revision="rendered@sha1:" + "c" * 40,
        findings=findings or [],
        problems=[] if complete else ["list nodes: 403 Forbidden"],
        timestamp=when,
    )


@dataclass(frozen=True)
class PushedFleet:
    pushgateway: Pushgateway
    prometheus: Prometheus
    night1: float
    """A query time at which Prometheus holds night 1 (all clusters pushed once)."""
    night2: float
    """A query time at which Prometheus holds night 2, the present."""
    repo: Path
    """The nightly command's gitops checkout (ams1, sto1)."""
    reports: Path
    """A folder with the nightly command's `audit -o json` report of ams1."""
    night1_ids: dict[str, list[str]]
    night2_ids: dict[str, list[str]]


def scraped_value(prom: Prometheus, promql: str, value: float) -> None:
    """Wait until Prometheus has scraped the latest push: `promql` is one sample of `value`."""

    def probe() -> bool | None:
        got = httpx.get(f"{prom.url}/api/v1/query", params={"query": promql}, timeout=10).json()
        result = got["data"]["result"]
        return True if len(result) == 1 and float(result[0]["value"][1]) == value else None

    wait_for(promql, probe)


def _push(pgw: Pushgateway, r: AuditResult) -> None:
    push_metrics(r, pgw.url, audit_budget(30))


def _nightly_command(pgw: Pushgateway, root: Path) -> Path:
    _, tip = demo_repo(root / "repo")
    snapshot = write_snapshot(root / "snap", demo_objects("ams1", tip))
    code, out, err = audit_cli(
        "ams1", "--snapshot", snapshot, root / "repo", "--pushgateway", pgw.url, "--fail-on",
        "never", "-o", "json",
    )  # fmt: skip
    assert code == 0, err
    (root / "reports").mkdir()
    (root / "reports" / "ams1.json").write_text(out, encoding="utf-8")
    return root / "repo"


def push_fleet(pgw: Pushgateway, prom: Prometheus, root: Path) -> PushedFleet:
    now = time.time()
    night, later = now - 30 * HOUR, now - 6 * HOUR
    n1 = {
        "fra1": [
            finding("dcgm", "high", manager="kubectl-edit"),
            finding("nvidia", "medium", "/spec/template/spec/containers/0/image", "helm"),
            finding("hami", "low", "/metadata/labels/x", "kubectl-label"),
        ],
        "par1": [finding("vm-web", "medium", "/spec/running", "virtctl", kind="VirtualMachine")],
        "old1": [finding("old", "high")],
        "ber1": [],
        "evil": [
            finding(HOSTILE, "high", "/spec/" + HOSTILE, HOSTILE, namespace="x<b>y"),
            finding("term", "high", "/spec/paused", TERMINAL),
        ],
    }
    _push(pgw, result("old1", True, now - 40 * HOUR, n1["old1"]))
    for name in ("fra1", "par1", "ber1", "evil"):
        _push(pgw, result(name, True, night, n1[name]))
    repo = _nightly_command(pgw, root)
    scraped_value(
        prom, 'gpu_gitops_audit_timestamp_seconds{job="gpu-gitops-audit",cluster="evil"}', night
    )
    scraped_value(
        prom, 'count(gpu_gitops_audit_complete{job="gpu-gitops-audit",cluster="ams1"})', 1
    )
    night1 = time.time()
    time.sleep(1.5)  # the next night's samples come after night1 in Prometheus's time
    n2 = {"fra1": [finding("dcgm", "high", manager="kubectl-edit")]}
    _push(pgw, result("fra1", True, later, n2["fra1"]))
    _push(pgw, result("par1", False, later))
    scraped_value(
        prom, 'gpu_gitops_audit_timestamp_seconds{job="gpu-gitops-audit",cluster="par1"}', later
    )
    scraped_value(
        prom, 'gpu_gitops_audit_timestamp_seconds{job="gpu-gitops-audit",cluster="fra1"}', later
    )
    night2 = time.time()
    return PushedFleet(
        pgw, prom, night1, night2, repo, root / "reports",
        {k: [f.id for f in v] for k, v in n1.items()},
        {k: [f.id for f in v] for k, v in n2.items()},
    )  # fmt: skip
