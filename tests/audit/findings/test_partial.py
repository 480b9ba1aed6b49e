"""What git owns of a partially applied object (`ssa: Merge`), and GPU wiring's severity with and
without managedFields."""

from __future__ import annotations

import copy
from typing import Any

from audit.compare.pairs import compare_objects
from audit.findings.classify import Controller
from audit.findings.collect import Findings
from audit.findings.finding import Finding
from audit.findings.provenance import ProfileContext

FLUX = Controller("kustomization", name="flux-system/lab1")
GATES = "/spec/configuration/developerConfiguration/featureGates"
MDEV = "/spec/configuration/mediatedDevicesConfiguration"


def entry(manager: str, fields: dict[str, Any], op: str = "Update") -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": op,
        "time": "2026-11-21T09:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": fields},
    }


def partial() -> dict[str, Any]:
    """The plain-Flux overlay: only the GPU wiring, applied with ssa: Merge."""
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {
            "name": "kubevirt",
            "namespace": "kubevirt",
            "annotations": {"kustomize.toolkit.fluxcd.io/ssa": "Merge"},
        },
        "spec": {"configuration": {"developerConfiguration": {"featureGates": ["HostDevices"]}}},
    }


def live(managed: list[dict[str, Any]] | None, **config: Any) -> dict[str, Any]:
    obj = partial()
    obj["spec"]["configuration"].update(config)
    obj["spec"].update(imagePullPolicy="IfNotPresent", certificateRotateStrategy={})
    if managed is not None:
        obj["metadata"]["managedFields"] = managed
    return obj


def audit_pair(desired: dict[str, Any], live_obj: dict[str, Any]) -> tuple[list[Finding], Findings]:
    findings = Findings(ProfileContext("lab1", "flux"))
    made = [
        findings.from_change(c, live_obj, FLUX, "git", partial=True)
        for c in compare_objects(desired, live_obj)
    ]
    return [f for f in made if f is not None], findings


MDEV_VALUE = {"mediatedDeviceTypes": ["nvidia-222"]}
INSTALLER = entry(
    "kubectl-client-side-apply", {"f:imagePullPolicy": {}, "f:certificateRotateStrategy": {}}
)
FLUX_ENTRY = entry(
    "kustomize-controller",
    {"f:configuration": {"f:developerConfiguration": {"f:featureGates": {}}}},
    "Apply",
)


def test_fields_git_does_not_declare_are_the_creators() -> None:
    made, findings = audit_pair(partial(), live([INSTALLER, FLUX_ENTRY]))
    assert made == []
    assert findings.creators_fields == 2
    assert findings.warnings() == []


def test_hand_written_wiring_is_drift_with_or_without_managed_fields() -> None:
    edit = entry("kubectl-edit", {"f:configuration": {"f:mediatedDevicesConfiguration": {}}})
    obj = live([INSTALLER, FLUX_ENTRY, edit], mediatedDevicesConfiguration=MDEV_VALUE)
    [found], findings = audit_pair(partial(), obj)
    assert (found.type, found.path, found.severity) == ("added", MDEV, "high")
    assert [m.manager for m in found.managers] == ["kubectl-edit"]
    assert found.revert == "never" and found.missed_by_drift_detection  # ssa: Merge keeps it
    assert findings.creators_fields == 2  # imagePullPolicy, certificateRotateStrategy
    # the same object as `kubectl get -o yaml` prints it (managedFields hidden)
    [bare], findings = audit_pair(partial(), live(None, mediatedDevicesConfiguration=MDEV_VALUE))
    assert (bare.type, bare.path, bare.severity, bare.revert) == ("added", MDEV, "high", "unknown")
    assert bare.managers == [] and not bare.attributed
    [warning] = findings.warnings()
    assert "attribution needs managedFields" in warning
    assert "`kubectl get --show-managed-fields -o yaml`" in warning


def test_wiring_written_by_the_operator_is_not_drift() -> None:
    hco = entry(
        "hyperconverged-cluster-operator",
        {"f:configuration": {"f:mediatedDevicesConfiguration": {}}},
    )
    obj = live([INSTALLER, FLUX_ENTRY, hco], mediatedDevicesConfiguration=MDEV_VALUE)
    made, findings = audit_pair(partial(), obj)
    assert made == [] and findings.creators_fields == 3


def test_a_declared_gate_changed_by_hand_is_reverted_at_the_next_reconcile() -> None:
    lens = entry(
        "node-fetch", {"f:configuration": {"f:developerConfiguration": {"f:featureGates": {}}}}
    )
    for managed in ([INSTALLER, lens], None):
        obj = live(managed)
        obj["spec"]["configuration"]["developerConfiguration"]["featureGates"] = [
            "HostDevices",
            "Snapshot",
        ]
        [found], _ = audit_pair(partial(), copy.deepcopy(obj))
        assert (found.type, found.path, found.severity) == ("modified", GATES, "high")
        assert found.revert == "next-reconcile"
        assert [m.manager for m in found.managers] == (["node-fetch"] if managed else [])
