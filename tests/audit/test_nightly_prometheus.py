"""The nightly audit night after night, in the monitoring stack platform teams run: Debian's real
Prometheus and Pushgateway on loopback, the built CronJob's own command against the test API
server, and what a platform team sees each morning through Prometheus's HTTP API.

Nights: drift (a hand edit of the GPU wiring), clean (the edit reverted), incomplete (the API
server refuses a read), drift again. Prometheus scrapes the Pushgateway every second, with
`honor_labels: true` as the README says and, as a second job, without it, and evaluates the
product's own rules from the built PrometheusRule, with one change, said here: every `for` is
shortened to 1 s (a test cannot wait 1 h or 36 h; `promtool test rules` holds the real durations,
tests/renderer/test_alert_rules.py). Each step waits, polling, until Prometheus has scraped that
night's push; nothing is timed.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from renderer.profile import load_profile
from renderer.publish.publish import publish
from tests.apiserver import ApiServer, Store
from tests.audit.audit_helpers import EXAMPLES, init_repo
from tests.audit.incluster import cronjob, live_cluster, rendered_files, run_job
from tests.audit.test_audit_job_e2e import crds
from tests.prometheus import Prometheus, wait_for
from tests.pushgateway import Pushgateway

CLUSTER = "lab1"  # plain Flux, passthrough: the KubeVirt CR's permittedHostDevices are GPU wiring
WHERE = f'job="gpu-gitops-audit",cluster="{CLUSTER}"'
Night = dict[str, Any]


@pytest.fixture
def cluster(
    tmp_path: Path, pushgateway: Pushgateway, prometheus_binary: str
) -> Iterator[tuple[ApiServer, list[dict[str, Any]], Prometheus]]:
    """The published lab1 with the audit job (metrics to the Pushgateway, alerts on), live on
    the test API server; a Prometheus scraping the Pushgateway with the built rules."""
    folder = tmp_path / "profiles" / CLUSTER
    shutil.copytree(EXAMPLES / CLUSTER, folder, ignore=shutil.ignore_patterns("flux"))
    profile = folder / "gpu-profile.yaml"
    profile.write_text(
        profile.read_text() + f"  audit:\n    pushgateway: {pushgateway.url}\n    alerts: true\n"
    )
    repo = init_repo(tmp_path / "repo", {CLUSTER: folder})
    tip = publish(tmp_path / "repo").tip
    assert tip
    files = rendered_files(repo, tip)
    lp = load_profile(tmp_path / "repo", CLUSTER)
    store = Store()
    store.put_all(crds())
    with ApiServer(store) as server:
        objects = live_cluster(server, lp, files, tip, "ssh://git@example.com/gitops.git")
        (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
        groups = copy.deepcopy(rule["spec"]["groups"])
        for r in groups[0]["rules"]:
            if "for" in r:
                r["for"] = "1s"  # the one change to the product's rules: see the docstring
        rules = tmp_path / "rules.yaml"
        rules.write_text(yaml.safe_dump({"groups": groups}))
        (tmp_path / "prometheus").mkdir()
        with Prometheus(tmp_path / "prometheus", pushgateway.url, [rules]) as prom:
            yield server, objects, prom


def _night(
    server: ApiServer, job: dict[str, Any], prom: Prometheus, pgw: Pushgateway, folder: Path
) -> Night:
    """Run the CronJob's command; wait until Prometheus has scraped its push; the report."""
    run = run_job(job, server, folder)
    report: Night = json.loads(run.stdout)
    report["exit"] = run.code
    group = (("cluster", CLUSTER), ("instance", ""), ("job", "gpu-gitops-audit"))
    pushed = pgw.samples()
    stamp = pushed[("gpu_gitops_audit_timestamp_seconds", group)]
    wait_for(
        "Prometheus to scrape the night's push",
        lambda: (
            True
            if prom.query(f"gpu_gitops_audit_timestamp_seconds{{{WHERE}}}") == {_labels(): stamp}
            else None
        ),
    )
    report["stamp"] = stamp
    return report


def _labels(**extra: str) -> tuple[tuple[str, str], ...]:
    """The labels of a honoured series (Prometheus drops the empty instance="")."""
    return tuple(sorted({"job": "gpu-gitops-audit", "cluster": CLUSTER, **extra}.items()))


def _settled(prom: Prometheus, firing: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Wait until exactly `firing` fires (rules are evaluated every second after the scrape)."""
    return wait_for(f"alerts {sorted(firing)}", lambda: firing if prom.firing() == firing else None)


def _finding_series(prom: Prometheus) -> dict[str, tuple[dict[str, str], float]]:
    return {
        dict(labels)["id"]: (dict(labels), value)
        for labels, value in prom.query(f"gpu_gitops_audit_finding{{{WHERE}}}").items()
    }


def _edit_wiring(server: ApiServer, kubevirt: dict[str, Any]) -> None:
    edited = copy.deepcopy(kubevirt)
    devices = edited["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"]
    devices.append({"pciVendorSelector": "10DE:FFFF", "resourceName": "nvidia.com/HAND_EDIT"})
    server.store.put(edited, manager="kubectl-edit", keep_server_fields=False)


def test_a_week_of_nights_as_prometheus_sees_it(
    cluster: tuple[ApiServer, list[dict[str, Any]], Prometheus],
    pushgateway: Pushgateway,
    tmp_path: Path,
) -> None:
    server, objects, prom = cluster
    job = cronjob(objects)
    assert job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"][4:6] == [
        "--fail-on",
        "never",
    ]
    (kubevirt,) = [o for o in objects if o["kind"] == "KubeVirt"]
    # before the first night: nothing was ever pushed for this cluster
    _settled(prom, {("GpuGitopsAuditMissing", "never-pushed")})

    # night 1, drift: the Job succeeds; the alert, the per-finding series
    _edit_wiring(server, kubevirt)
    one = _night(server, job, prom, pushgateway, tmp_path / "n1")
    assert (one["exit"], one["complete"]) == (0, True), "drift does not fail the Job"
    high = [f for f in one["findings"] if f["severity"] == "high"]
    assert high, one["findings"]
    _settled(prom, {("GpuGitopsHighDrift", "")})
    series = _finding_series(prom)
    ids = {f["id"] for f in one["findings"]}
    assert set(series) == ids
    edit = next(f for f in high if f["managers"] and f["managers"][-1]["manager"] == "kubectl-edit")
    labels, changed = series[edit["id"]]
    assert labels["manager"] == "kubectl-edit" and labels["kind"] == "KubeVirt"
    assert labels["path"] == edit["path"] and labels["severity"] == "high"
    assert changed > 0, "the change time from managedFields"
    (drift_alert,) = [a for a in prom.alerts() if a["labels"]["alertname"] == "GpuGitopsHighDrift"]
    assert drift_alert["labels"]["cluster"] == CLUSTER
    assert drift_alert["annotations"]["runbook_url"].endswith("#gpugitopshighdrift")
    assert prom.query(f"gpu_gitops_audit_last_success_timestamp_seconds{{{WHERE}}}") == {
        _labels(): one["stamp"]
    }

    # night 2, clean: the edit is reverted; the drift alert resolves, no finding series is left
    server.store.put(kubevirt, manager="kustomize-controller", keep_server_fields=False)
    two = _night(server, job, prom, pushgateway, tmp_path / "n2")
    assert (two["exit"], two["complete"], two["findings"]) == (0, True, [])
    _settled(prom, set())
    assert _finding_series(prom) == {}
    assert prom.query(f"gpu_gitops_audit_findings{{{WHERE}}}") == {}
    assert prom.query(f"gpu_gitops_audit_last_success_timestamp_seconds{{{WHERE}}}") == {
        _labels(): two["stamp"]
    }

    # night 3, incomplete: the API server refuses the Nodes; the Job fails (exit 2); its own
    # alert fires; the last success stays night 2's
    server.faults.status(403, count=10**6, match="/nodes")
    three = _night(server, job, prom, pushgateway, tmp_path / "n3")
    assert (three["exit"], three["complete"]) == (2, False)
    _settled(prom, {("GpuGitopsAuditIncomplete", "")})
    assert prom.query(f"gpu_gitops_audit_complete{{{WHERE}}}") == {_labels(): 0.0}
    assert prom.query(f"gpu_gitops_audit_last_success_timestamp_seconds{{{WHERE}}}") == {
        _labels(): two["stamp"]
    }

    # night 4, drift again: the API answers, the edit is back
    server.faults.clear()
    _edit_wiring(server, kubevirt)
    four = _night(server, job, prom, pushgateway, tmp_path / "n4")
    assert (four["exit"], four["complete"]) == (0, True)
    _settled(prom, {("GpuGitopsHighDrift", "")})
    assert set(_finding_series(prom)) == {f["id"] for f in four["findings"]}
    assert prom.query(f"gpu_gitops_audit_last_success_timestamp_seconds{{{WHERE}}}") == {
        _labels(): four["stamp"]
    }

    # without honor_labels the same series are the scrape target's: job is the scrape job's
    # name, the pushed one is exported_job, and no rule (job="gpu-gitops-audit") sees them
    # (that job scrapes on its own clock: wait for it to see night 4's push)
    plain_query = f'gpu_gitops_audit_complete{{job="pushgateway-plain",cluster="{CLUSTER}"}}'
    plain = wait_for(
        "the plain scrape of night 4",
        lambda: got if list((got := prom.query(plain_query)).values()) == [1.0] else None,
    )
    ((plain_labels, _),) = plain.items()
    assert dict(plain_labels)["exported_job"] == "gpu-gitops-audit"
    assert all(a["labels"]["job"] == "gpu-gitops-audit" for a in prom.alerts())
    assert not prom.query(f'gpu_gitops_audit_complete{{exported_job="gpu-gitops-audit",{WHERE}}}')
