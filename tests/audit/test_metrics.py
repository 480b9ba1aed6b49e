"""The audit's metrics at a real Pushgateway (prometheus-pushgateway), grouped by job and cluster,
and what an unreachable Pushgateway does to the run: report printed, one error line, exit 2."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from audit.metrics import PushError, push_metrics
from audit.result import AuditResult
from tests.audit.audit_helpers import audit_cli, demo_objects, demo_repo, write_snapshot
from tests.pushgateway import Pushgateway


def result(cluster: str, complete: bool, when: float) -> AuditResult:
    return AuditResult(
        cluster=cluster,
        desired_source="flux-applied",
        desired_revision="rendered@sha1:" + "c" * 40,
        findings=[],
        problems=[] if complete else ["list nodes: 403 Forbidden"],
        timestamp=when,
    )


def group(cluster: str) -> tuple[tuple[str, str], ...]:
    return (("cluster", cluster), ("instance", ""), ("job", "gpu-gitops-audit"))


def test_pushes_grouped_by_job_and_cluster_and_keeps_the_last_success(
    pushgateway: Pushgateway,
) -> None:
    push_metrics(result("m1", True, 1000.0), pushgateway.url)
    push_metrics(result("m2", True, 1500.0), pushgateway.url)
    push_metrics(result("m1", False, 2000.0), pushgateway.url)
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
        push_metrics(result("m1", True, 1.0), url, timeout=5)
    _, tip = demo_repo(tmp_path / "repo")
    snapshot = write_snapshot(tmp_path / "ams1", demo_objects("ams1", tip))
    code, out, err = audit_cli(
        "ams1", "--snapshot", snapshot, tmp_path / "repo", "-o", "json", "--pushgateway", url
    )
    assert code == 2, "drift was found (1), but the metrics were not delivered"
    assert out.startswith("{") and '"findings"' in out, "the report is still printed"
    assert err.splitlines() == [
        f"gpu-gitops: error: the Pushgateway at {url} could not be reached ([Errno 111] "
        "Connection refused): the report above is complete, the metrics were not delivered"
    ]


@pytest.mark.parametrize("url", ["pgw:9091", "ftp://pgw", "http://user:pw@pgw:9091"])
def test_bad_pushgateway_url_is_refused_before_the_audit(url: str, tmp_path: Path) -> None:
    code, out, err = audit_cli("ams1", "--snapshot", tmp_path, tmp_path, "--pushgateway", url)
    assert (code, out) == (2, "")
    assert err.startswith("gpu-gitops: error: --pushgateway: ") and len(err.splitlines()) == 1
    assert "pw" not in err.replace("--pushgateway", ""), "no credential echoed"
