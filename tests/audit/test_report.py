"""Reports: the JSON contract, every format, and planted secrets that must never come out."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from audit.findings.finding import Finding, Manager, ObjectRef, Source
from audit.report import FORMATS, MARKDOWN_LIMIT, render_report, to_json
from audit.run import AuditResult, audit
from audit.sources.desired import Desired
from audit.sources.live import Live, SnapshotReader
from audit.sources.packed import PackedObjects
from tests.apiserver.helm import release_secret

CANARIES = {
    "git-string-data": "canary-git-stringdata-7f3a",
    "git-data": "canary-git-data-91b2",
    "live-data": "canary-live-data-c0de",
    "live-extra-key": "canary-live-extra-5e5e",
    "last-applied": "canary-last-applied-ab12",
    "hr-values-git": "canary-hr-values-git-3141",
    "hr-values-live": "canary-hr-values-live-2718",
    "release-config": "canary-release-config-1618",
}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _secret(**body: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "gpu-licensing", "namespace": "gpu-operator"},
        **body,
    }


def _hr(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "gpu-operator", "namespace": "gpu-operator"},
        "spec": {"interval": "10m", "values": values},
    }


def _mf(manager: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "manager": manager,
            "operation": "Update",
            "time": "2026-11-20T15:41:07Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        }
    ]


def planted() -> AuditResult:
    desired = Desired(
        "edge1",
        "rendered-tip",
        "rendered@sha1:" + "a" * 40,
        PackedObjects(
            (
                _secret(
                    stringData={"token": CANARIES["git-string-data"]},
                    data={"gridd.conf": b64(CANARIES["git-data"])},
                ),
                _hr({"driver": {"licensingConfig": {"password": CANARIES["hr-values-git"]}}}),
            )
        ),
    )
    live_secret = _secret(
        type="Opaque",
        data={
            "token": b64(CANARIES["live-data"]),
            "gridd.conf": b64(CANARIES["git-data"]),
            "extra": b64(CANARIES["live-extra-key"]),
        },
    )
    live_secret["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
            {"stringData": {"token": CANARIES["last-applied"]}}
        )
    }
    live_secret["metadata"]["managedFields"] = _mf(
        "kubectl-edit", {"f:data": {"f:token": {}, "f:extra": {}}}
    )
    live_hr = _hr({"driver": {"licensingConfig": {"password": CANARIES["hr-values-live"]}}})
    live_hr["metadata"]["managedFields"] = _mf("kubectl-edit", {"f:spec": {"f:values": {}}})
    record = {
        "name": "gpu-operator",
        "namespace": "gpu-operator",
        "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "gpu-operator", "version": "v26.3.1"}},
        "config": {"secret": CANARIES["release-config"]},
        "manifest": "",
        "apply_method": "ssa",
    }
    release = release_secret(record, revision=1, status="deployed", when="2026-11-01T00:00:00Z")
    release["metadata"]["namespace"] = "gpu-operator"
    live = Live(SnapshotReader([live_secret, live_hr, release]))
    return audit(desired, live, now=1_764_300_000.0)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_planted_secrets_never_appear_in_any_format(fmt: str) -> None:
    text = render_report(planted(), fmt)
    for name, canary in CANARIES.items():
        assert canary not in text, f"{name} leaked into {fmt}"
        assert b64(canary) not in text, f"{name} (base64) leaked into {fmt}"
        assert canary[:12] not in text


def test_secret_findings_are_kept_with_digests() -> None:
    doc = to_json(planted())
    paths = {(f["object"]["kind"], f["path"]): f for f in doc["findings"]}
    token = paths[("Secret", "/data/token")]
    assert token["type"] == "modified"
    assert set(token["desired"]) == {"redacted"}
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", token["desired"]["redacted"])
    assert token["desired"] != token["live"]
    assert token["managers"][0]["manager"] == "kubectl-edit"
    assert paths[("Secret", "/data/extra")]["type"] == "added"
    assert ("Secret", "/data/gridd.conf") not in paths  # same value in git and live
    values = [f for k, f in paths.items() if k[0] == "HelmRelease"]
    assert values and all(set(f["live"]) == {"redacted"} for f in values)
    assert doc["releases"][0]["valuesDigest"].startswith("sha256:")


def _result(findings: list[Finding], complete: bool = True) -> AuditResult:
    return AuditResult(
        cluster="ams1",
        desired_source="flux-applied",
        desired_revision="rendered@sha1:" + "b" * 40,
        findings=findings,
        problems=[] if complete else ["list helmreleases: 403 Forbidden"],
        timestamp=1_764_300_000.0,
    )


KV = ObjectRef("kubevirt.io/v1", "KubeVirt", "cozy-kubevirt", "kubevirt")


def _finding(**kw: Any) -> Finding:
    base: dict[str, Any] = {
        "type": "modified",
        "object": KV,
        "path": "/spec/configuration/permittedHostDevices/pciHostDevices",
        "desired": [],
        "live": [{"pciVendorSelector": "10DE:2BB1"}],
        "managers": [Manager("kubectl-edit", "Update", "2026-11-20T15:41:07Z")],
        "revert": "next-upgrade",
        "revert_release": "cozy-kubevirt/kubevirt",
        "missed_by_drift_detection": True,
        "severity": "high",
        "source": Source("clusters/ams1/gpu-profile.yaml", "spec.devices", 12),
        "message": "changed by kubectl-edit",
    }
    return Finding(**{**base, **kw})


def test_json_contract() -> None:
    doc = to_json(
        _result(
            [_finding(), _finding(revert="never", revert_release=None, severity="low", path="/x")]
        )
    )
    assert doc["schemaVersion"] == 1
    for key in ("cluster", "complete", "desiredRevision", "desiredSource", "findings"):
        assert key in doc
    f = doc["findings"][0]
    # DESIGN §6: a stable id per finding, for adopt: same drift, same id; another path, another
    assert re.fullmatch("[0-9a-f]{10}", f["id"])
    assert f["id"] == to_json(_result([_finding()]))["findings"][0]["id"]
    assert f["id"] != doc["findings"][1]["id"]
    assert list(f)[:13] == [
        "type",
        "object",
        "path",
        "desired",
        "live",
        "managers",
        "revert",
        "revertRelease",
        "missedByDriftDetection",
        "severity",
        "source",
        "message",
        "comparison",
    ]
    assert f["object"] == {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "namespace": "cozy-kubevirt",
        "name": "kubevirt",
    }
    assert f["managers"] == [
        {"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-20T15:41:07Z"}
    ]
    assert f["revertRelease"] == "cozy-kubevirt/kubevirt"
    assert f["source"] == {
        "file": "clusters/ams1/gpu-profile.yaml",
        "field": "spec.devices",
        "line": 12,
    }
    assert doc["findings"][1]["revertRelease"] is None
    json.dumps(doc)


def test_text_groups_by_severity_and_says_incomplete() -> None:
    text = render_report(_result([_finding(severity="low", path="/b"), _finding()], False))
    assert text.startswith("INCOMPLETE")
    assert text.index("HIGH (1)") < text.index("LOW (1)")
    assert "written by: kubectl-edit" in text
    assert "reverted: at the next upgrade of cozy-kubevirt/kubevirt" in text
    assert "could not read:" in text
    clean = render_report(_result([]))
    assert "no drift" in clean


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a text exposition, parsed by prometheus-client: (name, labels) -> value."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_prometheus_exposition() -> None:
    findings = [_finding(), _finding(path="/y")]
    got = samples(render_report(_result(findings), "prometheus"))
    high = (("revert", "next-upgrade"), ("severity", "high"), ("type", "modified"))
    assert got[("gpu_gitops_audit_findings", high)] == 2
    assert got[("gpu_gitops_audit_complete", ())] == 1
    assert got[("gpu_gitops_audit_timestamp_seconds", ())] == 1_764_300_000.0
    assert got[("gpu_gitops_audit_last_success_timestamp_seconds", ())] == 1_764_300_000.0
    assert [k for k in got if k[0] == "gpu_gitops_audit_findings"] == [
        ("gpu_gitops_audit_findings", high)
    ], "only the counts that are not zero"
    assert len([k for k in got if k[0] == "gpu_gitops_audit_finding"]) == 2
    # an incomplete audit is no success and not the present: what it prints (and pushes) leaves
    # the last complete audit's findings and last success as the Pushgateway holds them
    partial = samples(render_report(_result(findings, complete=False), "prometheus"))
    assert {k[0] for k in partial} == {
        "gpu_gitops_audit_complete",
        "gpu_gitops_audit_problems",
        "gpu_gitops_audit_timestamp_seconds",
    }
    assert partial[("gpu_gitops_audit_complete", ())] == 0


def test_markdown_table_and_cap() -> None:
    md = render_report(_result([_finding()]), "markdown")
    assert "| high | modified | `KubeVirt cozy-kubevirt/kubevirt` |" in md
    many = [_finding(path=f"/p{i}", message="x" * 400) for i in range(400)]
    capped = render_report(_result(many), "markdown")
    assert len(capped) <= MARKDOWN_LIMIT
    assert "truncated" in capped


HOSTILE = (
    "x\n\n</details>\n<!-- forged -->\n**clean** @acme [x](https://evil.example) \x1b[2J\u202e"
)


def test_values_and_names_from_a_hostile_server_are_inert_in_text_and_markdown() -> None:
    evil = ObjectRef("v1", "ConfigMap", "default", "cm`|" + HOSTILE)
    result = _result(
        [_finding(object=evil, live=HOSTILE, path="/data/" + HOSTILE, message=HOSTILE)],
        complete=False,
    )
    result.problems.append("list: 403 " + HOSTILE)
    result.notes.append(HOSTILE)
    text = render_report(result, "text")
    assert "\x1b" not in text and "\u202e" not in text
    assert not any(line.startswith(("</details>", "<!--", "**clean")) for line in text.splitlines())
    md = render_report(result, "markdown")
    assert "\x1b" not in md and "\u202e" not in md
    assert not any(line.startswith(("</details>\n", "**clean")) for line in md.splitlines())
    # what is left once the code spans (literal text on one line) are taken out
    prose = re.sub(r"`[^`\n]*`", "", md)
    assert "<!--" not in prose and "](https://evil" not in prose and "@acme" not in prose
    assert prose.count("</details>") == prose.count("<details>") == 1
