"""Defaults of several upstream versions (known_types.DEFAULTS): what every version defaults is
noise on both sides; what some versions default is noise only live, undeclared and unowned."""

from __future__ import annotations

import copy
from typing import Any

from audit.compare.defaults import is_known_default
from audit.compare.pairs import compare_objects
from audit.findings.classify import Controller
from audit.findings.collect import Findings
from audit.findings.finding import Finding
from audit.findings.provenance import ProfileContext

HELM = Controller(
    "helm-release", name="gpu-operator/gpu-operator", release="gpu-operator/gpu-operator"
)


def policy(spec: dict[str, Any], managed: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": copy.deepcopy(spec),
    }
    if managed is not None:
        obj["metadata"]["managedFields"] = managed
    return obj


def entry(manager: str, spec: dict[str, Any], op: str = "Apply") -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": op,
        "time": "2026-11-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": spec},
    }


def findings_of(desired: dict[str, Any], live: dict[str, Any]) -> tuple[list[Finding], Findings]:
    findings = Findings(ProfileContext("lab1", "flux"))
    made = [findings.from_change(c, live, HELM, "release") for c in compare_objects(desired, live)]
    return [f for f in made if f is not None], findings


RENDERED: dict[str, Any] = {
    "operator": {"runtimeClass": "nvidia"},
    "sandboxWorkloads": {"enabled": True},
}
"""What the chart renders (gpu-operator values -> ClusterPolicy), in part."""
# A v25.3 ClusterPolicy read under a v26 CRD keeps v25's defaults in etcd
V25_LEFT = {
    "operator": {"defaultRuntime": "docker"},
    "migManager": {"config": {"name": "default-mig-parted-config"}},
}


def live_v25(managed: list[dict[str, Any]] | None) -> dict[str, Any]:
    spec: dict[str, Any] = copy.deepcopy(RENDERED)
    spec["operator"]["defaultRuntime"] = "docker"
    spec["migManager"] = {
        "config": {"name": "default-mig-parted-config", "default": "all-disabled"}
    }
    spec["sandboxWorkloads"]["mode"] = "kubevirt"  # v26's default
    return policy(spec, managed)


HELM_ENTRY = entry(
    "helm",
    {"f:operator": {"f:runtimeClass": {}}, "f:sandboxWorkloads": {"f:enabled": {}}},
)


def test_some_versions_defaults_left_in_etcd_are_not_drift() -> None:
    for managed in ([HELM_ENTRY], None):
        made, findings = findings_of(policy(RENDERED), live_v25(managed))
        assert made == [], [(f.path, f.managers) for f in made]
        assert findings.defaults_ignored == 3  # defaultRuntime, migManager, sandboxWorkloads.mode


def test_the_same_values_written_by_someone_are_drift() -> None:
    k9s = entry("k9s", {"f:operator": {"f:defaultRuntime": {}}}, "Update")
    [found], _ = findings_of(policy(RENDERED), live_v25([HELM_ENTRY, k9s]))
    # runtimeClass is a default of every version, normalized away on both sides
    assert (found.path, found.type, found.live) == (
        "/spec/operator",
        "added",
        {"defaultRuntime": "docker"},
    )
    assert [m.manager for m in found.managers] == ["k9s"]


def test_a_child_normalization_removed_does_not_attribute_the_rest() -> None:
    """Git does not declare `operator`; live has v25's defaultRuntime (unowned) and v26's
    runtimeClass default, which helm once rendered: helm's ownership of runtimeClass (removed as
    a default) must not make defaultRuntime "left by an earlier revision"."""
    live = policy(
        {"operator": {"defaultRuntime": "docker", "runtimeClass": "nvidia"}},
        [entry("helm", {"f:operator": {"f:runtimeClass": {}}})],
    )
    made, findings = findings_of(policy({}), live)
    assert made == [] and findings.defaults_ignored == 1


def test_a_version_dependent_default_is_compared_when_declared() -> None:
    """cdi.enabled defaults to false up to v25.3 and to true from v25.10: neither value may be
    dropped from a declared object, or a change between them would vanish."""
    made, _ = findings_of(policy({"cdi": {"enabled": True}}), policy({"cdi": {"enabled": False}}))
    [found] = made
    assert (found.path, found.desired, found.live) == ("/spec/cdi/enabled", True, False)


def test_is_known_default() -> None:
    group, kind = "nvidia.com", "ClusterPolicy"
    assert is_known_default(group, kind, ("spec", "cdi", "enabled"), False)
    assert is_known_default(group, kind, ("spec", "cdi", "enabled"), True)
    assert not is_known_default(group, kind, ("spec", "cdi", "enabled"), "true")
    assert is_known_default(group, kind, ("spec", "migManager"), V25_LEFT["migManager"])
    assert not is_known_default(group, kind, ("spec", "migManager"), {"config": {"name": "mine"}})
    assert not is_known_default(group, kind, ("spec", "migManager"), {})
    assert not is_known_default("kubevirt.io", "KubeVirt", ("spec", "cdi", "enabled"), False)
