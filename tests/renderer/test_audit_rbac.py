"""The nightly audit job: built from spec.audit, with read-only RBAC on exactly what it reads."""

from __future__ import annotations

from typing import Any

import pytest

from renderer.audit_rbac import RbacRule, audit_rbac_rules, helm_secret_namespaces
from renderer.bases import AUDIT_NAME, AUDIT_NAMESPACE
from renderer.build import build_overlays
from renderer.overlays import cluster_overlay
from renderer.profile import LoadedProfile, load_profile_bytes
from renderer.rules.checks import check_profile
from renderer.yaml_io import load_all
from tests.renderer.profile_texts import PLATFORM_OK
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
    return load_profile_bytes("c1", text.encode(), platform)


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
    assert len(bindings) == 2 + len(helm_secret_namespaces(lp.profile.spec))
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
    assert helm_secret_namespaces(cozy) == [
        "cozy-gpu-operator",
        "cozy-hami",
        "cozy-kubevirt",
        "cozy-system",
    ]
    none = loaded(PROFILES["cozystack-none"]).profile.spec
    assert helm_secret_namespaces(none) == ["cozy-system"]
    flux = loaded(PROFILES["flux-passthrough"]).profile.spec
    assert helm_secret_namespaces(flux) == ["gpu-operator", "virt"]
    assert not any(g == "cozystack.io" for g, _, _ in audit_rbac_rules(flux))
    tenant = loaded(PROFILES["flux-container-hami"]).profile.spec
    assert helm_secret_namespaces(tenant) == ["gpu-operator", "kube-system"]
    shared = loaded(PROFILES["flux-kubevirt-shares-namespace"]).profile.spec
    assert helm_secret_namespaces(shared) == ["gpu-operator"]


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
        "-o",
        "prometheus",
    ]
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


def test_audit_needs_an_image():
    lp = loaded(PROFILES["flux-passthrough"], audit="  audit: {schedule: '0 1 * * *'}\n")
    (problem,) = [p for p in check_profile(lp) if p.severity == "error"]
    assert problem.field == "spec.audit.image"
    assert str(problem).startswith(
        "clusters/c1/gpu-profile.yaml:10: error: spec.audit.image: is required when spec.audit "
        "is set: name the image"
    )


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
    paths = ["/api/v1/namespaces/virt/secrets", "/api/v1/namespaces/kube-system/secrets", "/apis"]
    assert uncovered(rules, paths) == ["/api/v1/namespaces/kube-system/secrets"]
    assert ("", "nodes", None) in unused(rules, paths)
