"""The audit's metrics at a real Pushgateway (prometheus-pushgateway), grouped by job and cluster:
every push states the present (a clean night leaves no finding series of an earlier one; an
incomplete night keeps the last complete audit's picture and last-success time); one series per
finding, capped; and what a Pushgateway that is unreachable, redirects or trickles does to the run:
report printed, one error line, exit 2, within --deadline."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from audit.findings.finding import Finding, Manager, ObjectRef
from audit.kube.api import audit_budget
from audit.metrics import FINDING_SERIES_CAP, PushError, push_metrics, render_prometheus
from audit.result import AuditResult
from tests.audit.audit_helpers import audit_cli, demo_objects, demo_repo, write_snapshot
from tests.pushgateway import Pushgateway


def finding(name: str, severity: str = "high", time: str = "2026-11-30T03:01:02Z") -> Finding:
    return Finding(
        type="modified",
        object=ObjectRef("kubevirt.io/v1", "KubeVirt", "cozy-kubevirt", name),
        path="/spec/configuration/permittedHostDevices/pciHostDevices",
        managers=[
            Manager("kustomize-controller", "Apply", "2026-11-01T00:00:00Z"),
            Manager("kubectl-edit", "Update", time),
        ],
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


def group(cluster: str) -> tuple[tuple[str, str], ...]:
    return (("cluster", cluster), ("instance", ""), ("job", "gpu-gitops-audit"))


def test_pushes_grouped_by_job_and_cluster_and_keeps_the_last_success(
    pushgateway: Pushgateway,
) -> None:
    push_metrics(result("m1", True, 1000.0), pushgateway.url, audit_budget(30))
    push_metrics(result("m2", True, 1500.0), pushgateway.url, audit_budget(30))
    push_metrics(result("m1", False, 2000.0), pushgateway.url, audit_budget(30))
    got = pushgateway.samples()
    assert got[("gpu_gitops_audit_complete", group("m1"))] == 0
    assert got[("gpu_gitops_audit_timestamp_seconds", group("m1"))] == 2000.0
    # the incomplete run replaced its own metrics, not the last success (the 36 h alert's input)
    assert got[("gpu_gitops_audit_last_success_timestamp_seconds", group("m1"))] == 1000.0
    assert got[("gpu_gitops_audit_complete", group("m2"))] == 1, "another cluster's group stays"
    info = [k for k in got if k[0] == "gpu_gitops_audit_info" and ("cluster", "m1") in k[1]]
    assert info == [
        (
            "gpu_gitops_audit_info",
            (
                ("cluster", "m1"),
                ("desired_revision", "rendered@sha1:" + "c" * 40),
                ("desired_source", "flux-applied"),
                ("instance", ""),
                ("job", "gpu-gitops-audit"),
            ),
        )
    ]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens


def test_unreachable_pushgateway_is_one_error_line_after_the_report(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(PushError, match="could not be reached"):
        push_metrics(result("m1", True, 1.0), url, audit_budget(5))
    _, tip = demo_repo(tmp_path / "repo")
    snapshot = write_snapshot(tmp_path / "ams1", demo_objects("ams1", tip))
    code, out, err = audit_cli(
        "ams1", "--snapshot", snapshot, tmp_path / "repo", "-o", "json", "--pushgateway", url
    )
    assert code == 2, "drift was found (1), but the metrics were not delivered"
    assert out.startswith("{") and '"findings"' in out, "the report is still printed"
    assert err.splitlines() == [
        f"gpu-gitops: error: the Pushgateway at {url} could not be reached "
        "(ConnectionRefusedError: [Errno 111] Connection refused): the report above stands, the "
        "metrics were not delivered"
    ]


@pytest.mark.parametrize(
    "url", ["pgw:9091", "ftp://pgw", "http://user:pw@pgw:9091", "http://glpat-pw@pgw:9091"]
)
def test_bad_pushgateway_url_is_refused_before_the_audit(url: str, tmp_path: Path) -> None:
    code, out, err = audit_cli("ams1", "--snapshot", tmp_path, tmp_path, "--pushgateway", url)
    assert (code, out) == (2, "")
    assert err.startswith("gpu-gitops: error: --pushgateway: ") and len(err.splitlines()) == 1
    assert "pw" not in err.replace("--pushgateway", ""), "no credential echoed"


def series(samples: dict[Any, float], name: str, cluster: str) -> dict[Any, float]:
    return {
        labels: value
        for (metric, labels), value in samples.items()
        if metric == name and ("cluster", cluster) in labels
    }


def test_a_clean_night_after_drift_leaves_no_finding_series(pushgateway: Pushgateway) -> None:
    push_metrics(
        result("n1", True, 1000.0, [finding("a"), finding("b", "low")]),
        pushgateway.url,
        audit_budget(30),
    )
    got = pushgateway.samples()
    counts = series(got, "gpu_gitops_audit_findings", "n1")
    assert sorted(counts.values()) == [1.0, 1.0]
    assert len(series(got, "gpu_gitops_audit_finding", "n1")) == 2
    push_metrics(result("n1", True, 2000.0), pushgateway.url, audit_budget(30))
    got = pushgateway.samples()
    assert series(got, "gpu_gitops_audit_findings", "n1") == {}, "yesterday's 2 findings are gone"
    assert series(got, "gpu_gitops_audit_finding", "n1") == {}
    assert got[("gpu_gitops_audit_findings_omitted", group("n1"))] == 0
    assert got[("gpu_gitops_audit_last_success_timestamp_seconds", group("n1"))] == 2000.0


def test_an_incomplete_night_keeps_the_last_complete_picture(pushgateway: Pushgateway) -> None:
    push_metrics(result("n2", True, 1000.0, [finding("a")]), pushgateway.url, audit_budget(30))
    # tonight's partial audit saw nothing: a read that failed can hide drift
    push_metrics(result("n2", False, 2000.0), pushgateway.url, audit_budget(30))
    got = pushgateway.samples()
    assert got[("gpu_gitops_audit_complete", group("n2"))] == 0
    assert got[("gpu_gitops_audit_problems", group("n2"))] == 1
    assert got[("gpu_gitops_audit_timestamp_seconds", group("n2"))] == 2000.0
    assert got[("gpu_gitops_audit_last_success_timestamp_seconds", group("n2"))] == 1000.0
    assert list(series(got, "gpu_gitops_audit_findings", "n2").values()) == [1.0]
    assert len(series(got, "gpu_gitops_audit_finding", "n2")) == 1
    push_metrics(result("n2", True, 3000.0), pushgateway.url, audit_budget(30))
    got = pushgateway.samples()
    assert got[("gpu_gitops_audit_complete", group("n2"))] == 1
    assert got[("gpu_gitops_audit_problems", group("n2"))] == 0
    assert series(got, "gpu_gitops_audit_finding", "n2") == {}


def test_one_series_per_finding_with_its_change_time(pushgateway: Pushgateway) -> None:
    f = finding("kubevirt", time="2026-11-30T03:01:02Z")
    push_metrics(result("n3", True, 1000.0, [f]), pushgateway.url, audit_budget(30))
    (labels,) = series(pushgateway.samples(), "gpu_gitops_audit_finding", "n3").items()
    assert labels == (
        (
            ("cluster", "n3"),
            ("id", f.id),
            ("instance", ""),
            ("job", "gpu-gitops-audit"),
            ("kind", "KubeVirt"),
            ("manager", "kubectl-edit"),
            ("name", "kubevirt"),
            ("namespace", "cozy-kubevirt"),
            ("path", "/spec/configuration/permittedHostDevices/pciHostDevices"),
            ("revert", "never"),
            ("severity", "high"),
            ("type", "modified"),
        ),
        1796007662.0,  # 2026-11-30T03:01:02Z, the newest managedFields entry's
    )


def test_unknown_change_time_is_zero() -> None:
    f = finding("x")
    f.managers = []
    text = render_prometheus(result("n4", True, 1.0, [f]))
    line = next(x for x in text.splitlines() if x.startswith("gpu_gitops_audit_finding{"))
    assert line.endswith(" 0.0") and 'manager=""' in line


def test_the_most_severe_findings_up_to_the_cap_and_the_rest_counted() -> None:
    findings = [finding(f"low-{i}", "low") for i in range(FINDING_SERIES_CAP)]
    findings += [finding(f"high-{i}", "high") for i in range(5)]
    findings += [finding(f"info-{i}", "info") for i in range(7)]
    text = render_prometheus(result("n5", True, 1.0, findings))
    listed = [x for x in text.splitlines() if x.startswith("gpu_gitops_audit_finding{")]
    assert len(listed) == FINDING_SERIES_CAP
    assert sum('severity="high"' in x for x in listed) == 5, "every high one is listed"
    assert not any('severity="info"' in x for x in listed)
    assert "gpu_gitops_audit_findings_omitted 12.0" in text.splitlines()


def test_no_secret_value_reaches_a_label() -> None:
    f = Finding(
        type="modified",
        object=ObjectRef("v1", "Secret", "cozy-system", "creds"),
        path="/data/password",
        desired={"redacted": "sha256:" + "1" * 64},
        live={"redacted": "sha256:" + "2" * 64},
        severity="medium",
        redacted=True,
    )
    text = render_prometheus(result("n6", True, 1.0, [f]))
    assert "sha256" not in text and "redacted" not in text
    assert 'path="/data/password"' in text, "the key's name, not its value"
