"""Revert classes, drift-detection blind spots and severities, rule by rule (research §4.9)."""

from __future__ import annotations

from typing import Any

import pytest

from audit.findings.attribute import ManagedEntry
from audit.findings.classify import Controller, IgnoreRule, classify, is_takeover_manager
from audit.findings.finding import Finding, ObjectRef
from audit.findings.severity import severity_of

KV = ObjectRef("kubevirt.io/v1", "KubeVirt", "cozy-kubevirt", "kubevirt")
PKG = ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.cozystack-platform")
PCI = "/spec/configuration/permittedHostDevices/pciHostDevices"
KS = Controller("kustomization", name="cozy-fluxcd/gpu-gitops")
OPERATOR_HR = Controller(
    "helm-release",
    name="cozy-kubevirt/kubevirt",
    operator_generated=True,
    apply_method="ssa",
    release="cozy-kubevirt/kubevirt",
)


def owner(manager: str, op: str = "Update", sub: str = "") -> ManagedEntry:
    return ManagedEntry(manager, op, "2026-11-20T15:41:07Z", sub, {})


def finding(ftype: str = "modified", ref: ObjectRef = KV, path: str = PCI) -> Finding:
    return Finding(type=ftype, object=ref, path=path)  # type: ignore[arg-type]


def live(**annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "cozy-kubevirt", "annotations": annotations},
    }


def revert(
    f: Finding,
    c: Controller,
    owners: list[ManagedEntry] | None = None,
    obj: dict[str, Any] | None = None,
) -> tuple[str, str | None, bool]:
    r, release, missed, _ = classify(f, c, owners or [], obj or live())
    return r, release, missed


# -- kustomize-controller ------------------------------------------------------------------------


@pytest.mark.parametrize("ftype", ["modified", "removed", "missing"])
def test_declared_fields_revert_at_the_next_reconcile(ftype: str) -> None:
    assert revert(finding(ftype, PKG), KS) == ("next-reconcile", None, False)


@pytest.mark.parametrize(
    ("manager", "op", "sub", "expected"),
    [
        ("kubectl-edit", "Update", "", "next-reconcile"),
        ("kubectl-client-side-apply", "Update", "", "next-reconcile"),
        ("kubectl", "Apply", "", "next-reconcile"),
        ("before-first-apply", "Update", "", "next-reconcile"),
        ("kubectl-scale", "Update", "scale", "never"),
        ("node-fetch", "Update", "", "never"),
        ("OpenAPI-Generator", "Update", "", "never"),
        ("flux-client-side-apply", "Update", "", "never"),
    ],
)
def test_added_fields_revert_only_under_taken_over_managers(
    manager: str, op: str, sub: str, expected: str
) -> None:
    got, _, missed = revert(finding("added", PKG), KS, [owner(manager, op, sub)])
    assert got == expected
    assert missed == (expected == "never")


def test_takeover_needs_every_owner() -> None:
    owners = [owner("kubectl-edit"), owner("node-fetch")]
    assert revert(finding("added", PKG), KS, owners)[0] == "never"
    assert is_takeover_manager(owner("kubectl-label"))
    assert not is_takeover_manager(owner("kubectl-edit", sub="status"))


def test_unattributed_addition_is_unknown() -> None:
    assert revert(finding("added", PKG), KS)[0] == "unknown"


def test_kustomize_opt_outs_and_suspend() -> None:
    f = finding("modified", PKG)
    merge = live(**{"kustomize.toolkit.fluxcd.io/ssa": "Merge"})
    assert revert(finding("added", PKG), KS, [owner("kubectl-edit")], merge)[0] == "never"
    disabled = live(**{"kustomize.toolkit.fluxcd.io/reconcile": "disabled"})
    assert revert(f, KS, obj=disabled)[0] == "never"
    assert revert(f, KS, obj=live(**{"kustomize.toolkit.fluxcd.io/ssa": "IfNotPresent"}))[0] == (
        "never"
    )
    suspended = Controller("kustomization", name="cozy-fluxcd/gpu-gitops", suspended=True)
    assert revert(f, suspended) == ("never", None, True)
    ignoring = Controller("kustomization", ignore=(IgnoreRule(("/spec/configuration",)),))
    assert revert(f, ignoring)[0] == "never"


# -- helm-controller -----------------------------------------------------------------------------


def test_operator_generated_release_keeps_hand_edits_until_the_next_upgrade() -> None:
    assert revert(finding(), OPERATOR_HR, [owner("kubectl-edit")]) == (
        "next-upgrade",
        "cozy-kubevirt/kubevirt",
        True,
    )
    # even if someone added driftDetection to the generated HelmRelease: the operator rewrites it
    enabled = Controller(**{**OPERATOR_HR.__dict__, "drift_mode": "enabled"})
    assert revert(finding(), enabled)[0] == "next-upgrade"


def test_drift_detection_modes() -> None:
    base = {**OPERATOR_HR.__dict__, "operator_generated": False}
    assert revert(finding(), Controller(**{**base, "drift_mode": "enabled"})) == (
        "next-reconcile",
        "cozy-kubevirt/kubevirt",
        False,
    )
    assert revert(finding(), Controller(**{**base, "drift_mode": "warn"}))[::2] == (
        "next-upgrade",
        False,
    )
    enabled = Controller(**{**base, "drift_mode": "enabled"})
    opted_out = live(**{"helm.toolkit.fluxcd.io/driftDetection": "disabled"})
    assert revert(finding(), enabled, obj=opted_out)[0] == "next-upgrade"
    ignore = IgnoreRule((PCI,), {"kind": "KubeVirt"})
    ignored = Controller(**{**base, "drift_mode": "enabled", "ignore": (ignore,)})
    assert revert(finding(), ignored)[0] == "next-upgrade"
    other_kind = IgnoreRule((PCI,), {"kind": "ClusterPolicy"})
    not_ignored = Controller(**{**base, "drift_mode": "enabled", "ignore": (other_kind,)})
    assert revert(finding(), not_ignored)[0] == "next-reconcile"


def test_client_side_releases_keep_edits_unless_the_render_changes() -> None:
    csa = Controller(**{**OPERATOR_HR.__dict__, "apply_method": "csa"})
    assert revert(finding(), csa) == ("never", None, True)
    changing = Controller(**{**csa.__dict__, "next_render_changes": frozenset({PCI})})
    assert revert(finding(), changing)[0] == "next-upgrade"
    cm = ObjectRef("v1", "ConfigMap", "cozy-kubevirt", "x")
    assert revert(finding(ref=cm, path="/data/a"), csa)[0] == "next-upgrade"


def test_fields_the_chart_does_not_render_persist() -> None:
    assert revert(finding("added"), OPERATOR_HR, [owner("node-fetch")]) == ("never", None, True)


def test_suspended_release_reverts_nothing() -> None:
    suspended = Controller(**{**OPERATOR_HR.__dict__, "suspended": True})
    assert revert(finding(), suspended) == ("never", None, True)


def test_operator_rewrites_generated_helmrelease_specs() -> None:
    hr = ObjectRef("helm.toolkit.fluxcd.io/v2", "HelmRelease", "cozy-kubevirt", "kubevirt")
    operator = Controller("operator", name="cozystack-operator")
    assert revert(finding(ref=hr, path="/spec/driftDetection"), operator)[:2] == (
        "next-reconcile",
        None,
    )
    assert revert(finding(ref=hr, path="/spec/suspend"), operator)[0] == "never"


@pytest.mark.parametrize("ftype", ["orphan", "unmanaged", "suspended"])
def test_inventory_findings_never_revert(ftype: str) -> None:
    assert revert(finding(ftype, PKG, ""), Controller("none")) == ("never", None, True)


# -- severity ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "ftype", "field_path", "expected"),
    [
        (
            KV,
            "modified",
            ("spec", "configuration", "permittedHostDevices", "pciHostDevices"),
            "high",
        ),
        (
            KV,
            "modified",
            ("spec", "configuration", "developerConfiguration", "featureGates"),
            "high",
        ),
        (
            KV,
            "added",
            ("spec", "configuration", "developerConfiguration", "logVerbosity"),
            "medium",
        ),
        (KV, "added", ("metadata", "labels", "team"), "low"),
        (
            ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.gpu-operator"),
            "modified",
            ("spec", "variant"),
            "high",
        ),
        (
            ObjectRef("cozystack.io/v1alpha1", "Package", "", "cozystack.gpu-operator"),
            "orphan",
            (),
            "high",
        ),
        (
            PKG,
            "modified",
            ("spec", "components", "platform", "values", "gpu", "replaceDefaults"),
            "high",
        ),
        (
            PKG,
            "modified",
            ("spec", "components", "platform", "values", "publishing", "host"),
            "medium",
        ),
        (ObjectRef("v1", "ConfigMap", "a", "b"), "modified", ("data", "x"), "low"),
        (KV, "missing", (), "high"),
    ],
)
def test_severities(ref: ObjectRef, ftype: str, field_path: tuple[str, ...], expected: str) -> None:
    f = Finding(type=ftype, object=ref, revert="never")  # type: ignore[arg-type]
    assert severity_of(f, field_path) == expected


def test_unattributable_additions_are_info() -> None:
    f = Finding(type="added", object=KV, attributed=False)
    assert severity_of(f, ("spec", "x")) == "info"


# -- the decision points, as tables ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("managers", "expected"),
    [
        (["helm-controller"], ("next-upgrade", "cozy-kubevirt/kubevirt", True)),
        (["helm", "Helm"], ("next-upgrade", "cozy-kubevirt/kubevirt", True)),
        (["helm-controller", "kubectl-edit"], ("never", None, True)),
        (["kubectl-edit", "helm-controller"], ("never", None, True)),
        (["kubectl-edit"], ("never", None, True)),
    ],
    ids=["helm", "helm-cli", "helm-and-hand", "hand-and-helm", "hand"],
)
def test_a_live_only_field_of_a_release_reverts_only_when_helm_alone_owns_it(
    managers: list[str], expected: tuple[str, str | None, bool]
) -> None:
    """Helm removes at the next upgrade what an earlier revision wrote, never what another
    manager also owns."""
    assert revert(finding("added"), OPERATOR_HR, [owner(m) for m in managers]) == expected


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("enabled", ("next-reconcile", False)),
        ("warn", ("next-upgrade", False)),
        ("disabled", ("next-upgrade", True)),
        ("", ("next-upgrade", True)),
    ],
)
def test_a_missing_object_of_a_release_by_drift_detection_mode(
    mode: str, expected: tuple[str, bool]
) -> None:
    """Drift detection in `warn` mode reports a missing object (not missed), and does not fix it."""
    release = Controller(
        **{**OPERATOR_HR.__dict__, "operator_generated": False, "drift_mode": mode}
    )
    assert revert(finding("missing"), release)[::2] == expected


@pytest.mark.parametrize(
    ("rule", "path", "applies"),
    [
        ("/spec/a", "/spec/a", True),
        ("/spec/a", "/spec/a/b", True),
        ("/spec/a/", "/spec/a/b", True),
        ("/spec/a", "/spec/ab", False),
        ("/spec/a", "/spec/abc/d", False),
        ("/spec/a/b", "/spec/a", False),
        ("", "/metadata/labels/x", True),
    ],
)
def test_an_ignore_rule_covers_its_path_and_below_never_a_longer_name(
    rule: str, path: str, applies: bool
) -> None:
    assert IgnoreRule((rule,)).applies({}, path) is applies


@pytest.mark.parametrize(
    ("kind", "group", "expected"),
    [
        ("Kustomization", "kustomize.toolkit.fluxcd.io/v1", "medium"),
        ("GitRepository", "source.toolkit.fluxcd.io/v1", "medium"),
        ("HelmRelease", "helm.toolkit.fluxcd.io/v2", "low"),
        ("OCIRepository", "source.toolkit.fluxcd.io/v1beta2", "low"),
    ],
)
def test_a_suspended_git_delivery_object_is_medium_any_other_low(
    kind: str, group: str, expected: str
) -> None:
    """A suspended Kustomization or GitRepository stops every change from git (DESIGN §6)."""
    ref = ObjectRef(group, kind, "flux-system", "apps")
    f = Finding(type="suspended", object=ref, path="/spec/suspend", revert="never")
    assert severity_of(f, ("spec", "suspend")) == expected


@pytest.mark.parametrize(
    ("reverted", "expected"),
    [
        ("never", "medium"),
        ("next-upgrade", "medium"),
        ("unknown", "medium"),
        ("next-reconcile", "low"),
    ],
)
def test_other_drift_of_a_gpu_object_is_medium_only_while_it_lasts(
    reverted: str, expected: str
) -> None:
    log = ("spec", "configuration", "developerConfiguration", "logVerbosity")
    f = Finding(type="modified", object=KV, revert=reverted)  # type: ignore[arg-type]
    assert severity_of(f, log) == expected
