"""The nightly audit job: built from spec.audit, with read-only RBAC on exactly what it reads."""

from __future__ import annotations

from typing import Any

import pytest

from kubedata.yaml_io import load_all
from renderer.audit_rbac import RbacRule, audit_rbac_rules, audit_reads, secret_namespaces
from renderer.bases import AUDIT_NAME, AUDIT_NAMESPACE
from renderer.errors import ProfileError
from renderer.kustomize.workers import build_overlays
from renderer.overlays import cluster_overlay
from renderer.profile import ClusterFiles, LoadedProfile, load_profile_bytes
from renderer.rules.checks import check_profile
from renderer.version import package_version
from tests.renderer.profile_texts import PLATFORM_OK, kubevirt_text
from tests.renderer.rbac_paths import request_rule, uncovered, unused

AUDIT = (
    "  audit: {image: ghcr.io/example/gpu-gitops:0.1.0, schedule: '5 4 * * *', "
    "output: prometheus}\n"
)
PROFILES = {
    "cozystack-hami": (
        "  platform: {type: cozystack, version: '1.6'}\n  variant: passthrough\n  hami: true\n"
    ),
    "cozystack-none": "  platform: {type: cozystack, version: '1.6'}\n  variant: none\n",
    "flux-passthrough": (
        "  platform: {type: flux}\n  variant: passthrough\n  kubevirt: {namespace: virt}\n"
        "  devices:\n  - {class: L40S, pciVendorSelector: '10DE:26B9', "
        "resourceName: nvidia.com/AD102GL_L40S}\n"
    ),
    "flux-container-hami": ("  platform: {type: flux}\n  variant: container\n  hami: true\n"),
    "flux-kubevirt-shares-namespace": (
        "  platform: {type: flux}\n  variant: vgpu\n  kubevirt: {namespace: gpu-operator}\n"
        "  vgpu: {manager: {repository: r.example.com/nvidia, version: '550.144.02'}}\n"
    ),
}


def loaded(spec: str, audit: str = AUDIT) -> LoadedProfile:
    head = "apiVersion: gpu-gitops/v1alpha1\nkind: GPUProfile\nmetadata: {name: c1}\nspec:\n"
    text = head + spec + audit
    platform = PLATFORM_OK.encode() if "type: cozystack" in spec else None
    lp = load_profile_bytes("c1", ClusterFiles(text.encode(), platform))
    if platform:
        return lp
    # plain Flux: the live KubeVirt CR spec.kubevirt names, imported (no gates, no devices)
    target = lp.profile.spec.kubevirt
    kubevirt = kubevirt_text(name=target.name, namespace=target.namespace).encode()
    return load_profile_bytes("c1", ClusterFiles(text.encode(), None, kubevirt))


def built(lp: LoadedProfile) -> list[dict[str, Any]]:
    errors = [p for p in check_profile(lp) if p.severity == "error"]
    assert not errors, errors
    return load_all(build_overlays({"c1": cluster_overlay(lp)})["c1"])


def granted(objs: list[dict[str, Any]]) -> list[RbacRule]:
    """Every (group, resource, namespace) the built RBAC grants, checking the verbs on the way."""
    out: list[RbacRule] = []
    for o in objs:
        if o["kind"] not in ("ClusterRole", "Role"):
            continue
        ns = o["metadata"].get("namespace") if o["kind"] == "Role" else None
        for rule in o["rules"]:
            assert rule["verbs"] == ["get", "list"], rule
            assert set(rule) == {"apiGroups", "resources", "verbs"}, "no resourceNames, no URLs"
            out += [(g, r, ns) for g in rule["apiGroups"] for r in rule["resources"]]
    return sorted(out, key=lambda r: (r[2] or "", r[0], r[1]))


@pytest.mark.parametrize("case", sorted(PROFILES))
def test_built_rbac_grants_exactly_the_audit_rules(case: str):
    lp = loaded(PROFILES[case])
    objs = built(lp)
    assert granted(objs) == audit_rbac_rules(lp.profile.spec)
    bindings = [o for o in objs if o["kind"] in ("ClusterRoleBinding", "RoleBinding")]
    assert len(bindings) == 2 + len(secret_namespaces(lp.profile.spec))
    for b in bindings:
        assert b["subjects"] == [
            {"kind": "ServiceAccount", "name": AUDIT_NAME, "namespace": AUDIT_NAMESPACE}
        ]
        role = next(
            o
            for o in objs
            if o["kind"] == b["roleRef"]["kind"]
            and o["metadata"]["name"] == b["roleRef"]["name"]
            and o["metadata"].get("namespace") == b["metadata"].get("namespace")
        )
        assert role is not None


def test_the_audited_kinds_and_secret_namespaces():
    cozy = loaded(PROFILES["cozystack-hami"]).profile.spec
    rules = audit_rbac_rules(cozy)
    cluster_wide = {(g, r) for g, r, ns in rules if ns is None}
    assert cluster_wide == {
        ("", "namespaces"),
        ("", "nodes"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("cozystack.io", "packages"),
        ("helm.toolkit.fluxcd.io", "helmreleases"),
        ("kubevirt.io", "kubevirts"),
        ("kubevirt.io", "virtualmachines"),
        ("kustomize.toolkit.fluxcd.io", "kustomizations"),
        ("nvidia.com", "clusterpolicies"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("source.toolkit.fluxcd.io", "gitrepositories"),
        ("source.toolkit.fluxcd.io", "helmrepositories"),
        ("source.toolkit.fluxcd.io", "ocirepositories"),
    }
    own = {(g, r) for g, r, ns in rules if ns == AUDIT_NAMESPACE}
    assert own == {
        ("", "serviceaccounts"),
        ("batch", "cronjobs"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "roles"),
    }
    assert {(g, r) for g, r, ns in rules if ns == "cozy-system"} == {
        ("", "secrets"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "roles"),
    }
    assert ("", "secrets", None) not in audit_rbac_rules(cozy), "Secrets never cluster-wide"
    # HAMi's chart renders no object the audit compares: cozy-hami is not read
    assert secret_namespaces(cozy) == [
        "cozy-gpu-operator",
        "cozy-kubevirt",
        "cozy-system",
    ]
    none = loaded(PROFILES["cozystack-none"]).profile.spec
    assert secret_namespaces(none) == ["cozy-system"], "no GPU Operator, no KubeVirt wiring"
    flux = loaded(PROFILES["flux-passthrough"]).profile.spec
    # KubeVirt is no Helm release of the tool on plain Flux: its CA and TLS keys stay unread
    assert secret_namespaces(flux) == ["gpu-operator"]
    assert not any(g == "cozystack.io" for g, _, _ in audit_rbac_rules(flux))
    tenant = loaded(PROFILES["flux-container-hami"]).profile.spec
    assert secret_namespaces(tenant) == ["gpu-operator"], "never kube-system (HAMi's release)"
    shared = loaded(PROFILES["flux-kubevirt-shares-namespace"]).profile.spec
    assert secret_namespaces(shared) == ["gpu-operator"]
    assert audit_reads(shared).release_namespaces == ("gpu-operator",), "what the auditor reads"


def test_cronjob_runs_the_audit_non_root_on_a_read_only_root():
    objs = built(loaded(PROFILES["flux-passthrough"]))
    by_kind = {o["kind"]: o for o in objs}
    assert by_kind["Namespace"]  # gpu-gitops (and gpu-operator)
    sa = by_kind["ServiceAccount"]["metadata"]
    assert sa == {"name": AUDIT_NAME, "namespace": AUDIT_NAMESPACE}
    cron = by_kind["CronJob"]
    assert cron["apiVersion"] == "batch/v1"
    assert cron["metadata"]["namespace"] == AUDIT_NAMESPACE
    assert cron["spec"]["schedule"] == "5 4 * * *"
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == AUDIT_NAME
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == "ghcr.io/example/gpu-gitops:0.1.0"
    assert [*container["command"], *container["args"]] == [
        "gpu-gitops",
        "audit",
        "--cluster",
        "c1",
        "--in-cluster",
        "--fail-on",
        "never",
        "-o",
        "prometheus",
    ]
    assert container["resources"] == {
        "requests": {"cpu": "250m", "memory": "768Mi"},
        "limits": {"memory": "1536Mi"},
    }
    job = cron["spec"]["jobTemplate"]["spec"]
    assert pod["restartPolicy"] == "Never", "podFailurePolicy requires it"
    assert job["backoffLimit"] == 1
    # drift never fails the Job (--fail-on never); exit 2 (incomplete) is retried once, any
    # other failure fails the Job at once, an eviction is not counted (it is tried first)
    [ignore_eviction, retry_incomplete, fail_the_rest] = job["podFailurePolicy"]["rules"]
    assert ignore_eviction == {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    assert retry_incomplete == {
        "action": "Count",
        "onExitCodes": {"containerName": "audit", "operator": "In", "values": [2]},
    }
    assert fail_the_rest == {
        "action": "FailJob",
        "onExitCodes": {"containerName": "audit", "operator": "NotIn", "values": [2]},
    }
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    namespaces = {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
    restricted = next(
        o for o in objs if o["kind"] == "Namespace" and o["metadata"]["name"] == AUDIT_NAMESPACE
    )
    assert restricted["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert {"gpu-gitops", "gpu-operator"} <= namespaces


def test_no_audit_block_no_audit_objects():
    objs = built(loaded(PROFILES["flux-passthrough"], audit=""))
    assert not [
        o for o in objs if o["kind"] in ("CronJob", "ClusterRole", "Role", "ServiceAccount")
    ]


def test_audit_defaults_to_the_image_of_the_rendering_version():
    lp = loaded(PROFILES["flux-passthrough"], audit="  audit: {schedule: '@daily'}\n")
    assert not [p for p in check_profile(lp) if p.severity == "error"]
    cron = next(o for o in built(lp) if o["kind"] == "CronJob")
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"ghcr.io/gpu-gitops/gpu-gitops:{package_version()}"
    assert "--pushgateway" not in container["args"]
    assert not [o for o in built(lp) if o["kind"] == "PrometheusRule"], "alerts only when asked"


def test_audit_job_fields_come_from_the_profile():
    audit = (
        "  audit:\n    schedule: '0 2 * * 1-5'\n    pushgateway: http://pgw.monitoring:9091\n"
        "    alerts: true\n    resources: {requests: {cpu: 50m, memory: 700Mi}, "
        "limits: {memory: 2Gi}}\n"
    )
    lp = loaded(PROFILES["cozystack-none"], audit=audit)
    objs = built(lp)
    cron = next(o for o in objs if o["kind"] == "CronJob")
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert cron["spec"]["schedule"] == "0 2 * * 1-5"
    assert container["args"][-2:] == ["--pushgateway", "http://pgw.monitoring:9091"]
    assert container["resources"] == {
        "requests": {"cpu": "50m", "memory": "700Mi"},
        "limits": {"memory": "2Gi"},
    }
    (rule,) = [o for o in objs if o["kind"] == "PrometheusRule"]
    alerts = rule["spec"]["groups"][0]["rules"]
    assert [a["alert"] for a in alerts] == [
        "GpuGitopsHighDrift",
        "GpuGitopsAuditIncomplete",
        "GpuGitopsAuditMissing",
        "GpuGitopsAuditMissing",
    ]
    assert all('cluster="c1"' in a["expr"] for a in alerts)
    assert "36 * 3600" in alerts[2]["expr"] and alerts[3]["for"] == "36h"
    # the auditor compares the PrometheusRule with git: the job may read it, there only
    assert ("monitoring.coreos.com", "prometheusrules", AUDIT_NAMESPACE) in audit_rbac_rules(
        lp.profile.spec
    )
    assert granted(objs) == audit_rbac_rules(lp.profile.spec)


@pytest.mark.parametrize(
    ("audit", "field", "message"),
    [
        ("{schedule: '0 3 * *'}", "spec.audit.schedule", "has 4 fields; write five fields"),
        ("{schedule: '61 3 * * *'}", "spec.audit.schedule", "minute 61 is outside 0-59"),
        ("{image: 'ghcr.io/x/y:1 '}", "spec.audit.image", "contains whitespace"),
        ("{pushgateway: 'pgw:9091'}", "spec.audit.pushgateway", "is not an http or https URL"),
        ("{pushgateway: 'http://u:pw@pgw'}", "spec.audit.pushgateway", "carries a password"),
        (
            "{pushgateway: 'http://glpat-s3cret@pgw'}",
            "spec.audit.pushgateway",
            "carries user-info (a user name or token before @)",
        ),
        (
            "{alerts: {runbookBaseURL: 'https://glpat-s3cret@wiki/rb'}}",
            "spec.audit.alerts.runbookBaseURL",
            "carries user-info",
        ),
        ("{alerts: [x]}", "spec.audit.alerts", "expected true or false or a mapping, got a list"),
    ],
)
def test_bad_audit_fields_are_refused_with_file_and_line(audit: str, field: str, message: str):
    text = (
        "apiVersion: gpu-gitops/v1alpha1\nkind: GPUProfile\nmetadata: {name: c1}\nspec:\n"
        + PROFILES["cozystack-none"]
        + f"  audit: {audit}\n"
    )
    try:
        lp = load_profile_bytes("c1", ClusterFiles(text.encode()))
    except ProfileError as exc:
        problems = list(exc.problems)
    else:
        problems = [p for p in check_profile(lp) if p.severity == "error"]
    (problem,) = problems
    assert problem.field == field
    assert str(problem).startswith(f"clusters/c1/gpu-profile.yaml:7: error: {field}: ")
    assert message in str(problem)
    assert "s3cret" not in str(problem), "a credential is never echoed"


def test_request_paths_map_to_rules():
    assert request_rule("/api/v1/nodes?limit=500") == ("", "nodes", None)
    assert request_rule("/api/v1/namespaces") == ("", "namespaces", None)
    assert request_rule("/api/v1/namespaces/cozy-system") == ("", "namespaces", None)
    assert request_rule("/api/v1/namespaces/cozy-system/secrets") == ("", "secrets", "cozy-system")
    assert request_rule("/apis/kubevirt.io/v1/namespaces/x/kubevirts/kubevirt") == (
        "kubevirt.io",
        "kubevirts",
        "x",
    )
    assert request_rule("/apis/kubevirt.io/v1/virtualmachines") == (
        "kubevirt.io",
        "virtualmachines",
        None,
    )
    assert request_rule("/apis/kubevirt.io/v1") is None
    assert request_rule("/api") is None
    rules = audit_rbac_rules(loaded(PROFILES["flux-passthrough"]).profile.spec)
    paths = [
        "/api/v1/namespaces/gpu-operator/secrets",
        "/api/v1/namespaces/virt/secrets",
        "/api/v1/namespaces/kube-system/secrets",
        "/apis",
    ]
    assert uncovered(rules, paths) == [
        "/api/v1/namespaces/virt/secrets",
        "/api/v1/namespaces/kube-system/secrets",
    ]
    assert ("", "nodes", None) in unused(rules, paths)
