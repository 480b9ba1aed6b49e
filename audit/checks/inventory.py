"""The inventory (DESIGN §6): live GPU objects nothing applies, suspended Flux objects, and hand
edits of operator-generated HelmReleases.

Why this exists: the three comparisons start from what git, the releases and the profile declare,
so they cannot see what none of them declares: Packages left behind by
`helm.sh/resource-policy: keep` or pruned from git but not from the cluster (orphans), objects
applied by hand (unmanaged), and Flux objects suspended so that nothing reconciles.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubedata.diff import show_path
from kubedata.objects import KubeObject, ObjectKey, json_pointer, key_of

from audit.checks.flux import is_suspended, operator_generated
from audit.checks.releases_vs_live import release_objects
from audit.findings.attribute import managed_entries, owned_fields
from audit.findings.classify import Controller
from audit.findings.collect import Findings
from audit.findings.finding import Finding, FindingType, ObjectRef
from audit.findings.severity import is_gpu_object
from audit.kinds import (
    CLUSTER_POLICY,
    FLUX_KINDS,
    HELM_RELEASE,
    KUBEVIRT,
    KUSTOMIZATION,
    PACKAGE,
    live_key,
    meta,
    ns_name,
)
from audit.sources.helm_release import HelmRelease
from audit.sources.state import AuditState

__all__ = ["inventory", "inventory_ids", "ownership", "suspended"]


def inventory(state: AuditState) -> None:
    live, findings = state.live, state.findings
    # what the profile's wiring predicts is owned too: a kept Package the profile asks for again
    # is rendered by the platform release's next upgrade, not left behind
    desired_keys = {*state.desired.objects.keys, *map(live_key, state.expected.objects)}
    inventories = inventory_ids(live.list(*KUSTOMIZATION))
    ours = ns_name(state.kustomization) if state.kustomization else None
    # Packages exist on Cozystack only; the job's RBAC grants them there only (audit_rbac)
    packages = (PACKAGE,) if state.ctx.platform == "cozystack" else ()
    for kind in (*packages, HELM_RELEASE, KUBEVIRT, CLUSTER_POLICY):
        for obj in live.list(*kind):
            key = key_of(obj)
            if key in desired_keys:
                continue
            verdict = ownership(obj, key, state.releases, inventories, ours)
            if verdict is None:
                continue
            ftype, why = verdict
            finding = Finding(
                type=ftype,
                object=ObjectRef.of(obj),
                comparison="inventory",
                attributed=False,
            )
            owners = managed_entries(obj)
            finding.managers = [e.public for e in owners if not e.subresource]
            findings.finish(finding, Controller("none"), owners, obj, ())
            finding.message = why
            findings.add(finding)
    for kind in FLUX_KINDS:
        for obj in live.list(*kind):
            if is_suspended(obj):
                findings.add(suspended(findings, obj))
    for hr in live.list(*HELM_RELEASE):
        where = meta(hr)
        namespace, name = str(where.get("namespace", "")), str(where.get("name", ""))
        if operator_generated(hr) and is_gpu_object(*HELM_RELEASE, namespace, name):
            hand_edited_spec(findings, hr)


def hand_edited_spec(findings: Findings, hr: KubeObject) -> None:
    """kubectl edits of an operator-generated HelmRelease spec: the operator rewrites them."""
    for entry in managed_entries(hr):
        if entry.subresource or not entry.manager.startswith("kubectl"):
            continue
        for path in owned_fields(entry.fields):
            if path[:1] != ("spec",) or path == ("spec", "suspend"):
                continue
            live_value: Any = hr
            for part in path:
                live_value = live_value.get(part) if isinstance(live_value, dict) else None
            finding = Finding(
                type="modified",
                object=ObjectRef.of(hr),
                path=json_pointer(path),
                segments=path,
                live=live_value,
                comparison="inventory",
                managers=[entry.public],
            )
            controller = Controller("operator", name="cozystack-operator")
            findings.add(findings.finish(finding, controller, [entry], hr, path))
            finding.message = (
                f"{show_path(path)} of an operator-generated HelmRelease was edited by "
                f"{entry.public}; the Cozystack operator rewrites the spec from its Package at "
                "its next reconcile (transient): change the Package, or the profile, instead"
            )


def inventory_ids(kustomizations: Iterable[KubeObject]) -> set[str]:
    """The ids of every object the Kustomizations' inventories hold."""
    ids: set[str] = set()
    for ks in kustomizations:
        for entry in ((ks.get("status") or {}).get("inventory") or {}).get("entries") or ():
            if isinstance(entry, dict) and entry.get("id"):
                ids.add(str(entry["id"]))
    return ids


def ownership(
    obj: KubeObject,
    key: ObjectKey,
    releases: dict[tuple[str, str], HelmRelease],
    inventories: set[str],
    ours: str | None,
) -> tuple[FindingType, str] | None:
    """None when something owns the object, else (finding type, explanation)."""
    obj_meta = meta(obj)
    annotations = obj_meta.get("annotations") or {}
    labels = obj_meta.get("labels") or {}
    release_name = annotations.get("meta.helm.sh/release-name")
    if release_name:
        where = (str(annotations.get("meta.helm.sh/release-namespace", "")), str(release_name))
        release = releases.get(where)
        if release is None:
            return None  # a release this audit did not read: assume it owns the object
        if any(live_key(o) == key for o in release_objects(release)):
            return None
        keep = annotations.get("helm.sh/resource-policy") == "keep"
        return "orphan", (
            f"left behind by release {where[0]}/{where[1]}"
            + (
                " (helm.sh/resource-policy: keep): its newest revision no longer renders it, "
                "and Helm never deletes a kept object"
                if keep
                else ": its newest revision no longer renders it"
            )
        )
    if obj_meta.get("ownerReferences"):
        return None
    inventory_id = f"{key.namespace}_{key.name}_{key.group}_{key.kind}"
    ks_name = labels.get("kustomize.toolkit.fluxcd.io/name")
    if ks_name:
        ks = f"{labels.get('kustomize.toolkit.fluxcd.io/namespace', '')}/{ks_name}"
        if ks == ours and inventory_id not in inventories:
            return "orphan", (
                f"labelled as applied by Kustomization {ks} but no longer in git or its "
                "inventory: removed from git and not pruned"
            )
        return None
    if inventory_id in inventories:
        return None
    if key.kind == "HelmRelease" and any("cozystack.io" in k for k in labels):
        return None  # Cozystack's application API makes these
    return "unmanaged", (
        "applied by hand: no git render, Helm release or Flux inventory owns it, so nothing "
        "reconciles or prunes it"
    )


def suspended(findings: Findings, obj: KubeObject) -> Finding:
    """A suspended Flux object: it applies and reverts nothing until resumed."""
    finding = findings.of_field("suspended", obj, ("spec", "suspend"), None, True, "inventory")
    kind = str(obj.get("kind", "")).lower()
    obj_meta = meta(obj)
    finding.fix = (
        f"flux resume {kind} -n {obj_meta.get('namespace', '')} {obj_meta.get('name', '')}"
    )
    finding.message = (
        f"suspended: {obj.get('kind')} {ns_name(obj)} applies and reverts nothing until it "
        "is resumed"
    )
    if obj.get("kind") == "HelmRelease":
        finding.message += "; hand edits of its objects survive even its upgrades meanwhile"
    return finding
