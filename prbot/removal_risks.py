"""GPU risk warnings about what leaves the cluster: objects that leave the build, and Packages
that leave Cozystack's bundle.

Flux's Kustomization prunes (deletes) every object it applied that git no longer holds, unless the
object carries kustomize.toolkit.fluxcd.io/prune: disabled; a cluster gone from git is pruned only
when its Kustomization is deleted (lifecycle.py); the platform chart never deletes a
Package it stops rendering (helm.sh/resource-policy: keep), so that one keeps running. Each
warning says in plain words which of the two happens and what to do. Pure.
"""

from __future__ import annotations

from kubedata.objects import KubeObject, ObjectKey, key_of
from renderer.bases import (
    AUDIT_ALERTS_BASE,
    AUDIT_JOB_BASE,
    AUDIT_SECRET_NAMESPACES,
    BASES,
    FLUX_HAMI_BASE,
    PRUNE_DISABLED,
    audit_secrets_base,
)
from renderer.cozystack_names import GPU_OPERATOR, HAMI
from renderer.flux_names import FLUX_GPU_OPERATOR_RELEASE
from renderer.values.cozystack import packages_leaving

from prbot.risk_check import RiskCheck, RiskKind, built_platform_values

__all__ = ["kept_package_risks", "removed_object_risks"]

_STANDALONE = ObjectKey("cozystack.io", "Package", "", GPU_OPERATOR)
_GPU_OPERATOR_RELEASE = ObjectKey(
    "helm.toolkit.fluxcd.io", "HelmRelease", *FLUX_GPU_OPERATOR_RELEASE
)
_Path = tuple[str | int, ...]
_FIELD_OF_BASE: dict[str, _Path] = {
    FLUX_HAMI_BASE: ("spec", "hami"),
    AUDIT_JOB_BASE: ("spec", "audit"),
    AUDIT_ALERTS_BASE: ("spec", "audit"),
    **{audit_secrets_base(ns): ("spec", "audit") for ns in AUDIT_SECRET_NAMESPACES},
}
_FIELD_OF_OBJECT = {
    key_of(obj): field for base, field in _FIELD_OF_BASE.items() for obj in BASES[base].values()
}
"""The profile field that puts an object of these bases into the build, by the object's key (the
names are the bases' own: an object of the same name elsewhere is not theirs)."""


def _prune_disabled(obj: KubeObject) -> bool:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return all(annotations.get(k) == v for k, v in PRUNE_DISABLED.items())


def _kept(key: ObjectKey, cluster_removed: bool = False) -> str:
    """What staying in the cluster as last applied means, for an object Flux does not prune."""
    if key.kind == "KubeVirt" and cluster_removed:
        return (
            ", GPU wiring included (permittedHostDevices, mediated devices, feature gates): "
            "nothing reconciles it from git any more; edit it by hand if the cluster keeps "
            "running VMs"
        )
    if key.kind == "KubeVirt":
        return (
            ", GPU wiring included (permittedHostDevices, mediated devices, feature gates): keep "
            "spec.kubevirt in the profile, so the build declares the wiring empty and Flux "
            "removes it from the CR instead"
        )
    if key.kind == "Package":
        return ": its values are no longer reconciled from git; edit it by hand from now on"
    return ""


_WITH_IT = {
    "Namespace": "and everything in it with it",
    "HelmRelease": "and Helm uninstalls the release and what it installed",
    "Package": "and the Cozystack operator uninstalls what it installed",
    "KubeVirt": "and with it KubeVirt itself: every VM of the cluster stops",
    "CustomResourceDefinition": "and every object of that kind with it",
}
"""What else goes when an object of this kind is deleted."""


def _decommissioned(key: ObjectKey) -> tuple[RiskKind, str]:
    """What deleting the Kustomization of a cluster gone from git deletes with this object."""
    step = "the decommission step (deleting the Kustomization) deletes"
    if key in (_GPU_OPERATOR_RELEASE, _STANDALONE):
        return "gpu-operator-removed", (
            f"{step} {key} and with it the GPU Operator (its CRDs and node labels stay): GPU pods "
            "and VMs lose their devices; move GPU workloads off first"
        )
    what = _WITH_IT.get(key.kind, "")
    return "object-removed", f"{step} {key}{' ' + what if what else ''}"


def _deleted(r: RiskCheck, key: ObjectKey) -> tuple[RiskKind, str]:
    """What Flux deleting the object does, in plain words."""
    if key == _GPU_OPERATOR_RELEASE:
        return "gpu-operator-removed", (
            f"Flux prunes HelmRelease {FLUX_GPU_OPERATOR_RELEASE} and Helm uninstalls "
            "the GPU Operator (its CRDs and node labels stay): GPU pods and VMs lose their "
            "devices; move GPU workloads off first"
        )
    if key == _STANDALONE:
        values = built_platform_values(r.head_objs)
        bundles = (values or {}).get("bundles") or {}
        if GPU_OPERATOR in (bundles.get("enabledPackages") or []):
            return "gpu-operator-removed", (
                f"Package {GPU_OPERATOR} moves from this tool's output to the platform bundle: "
                "Flux prunes the Package it applied, and the platform's Helm release recreates "
                "it only at its next upgrade; afterwards check kubectl get packages.cozystack.io "
                f"{GPU_OPERATOR} and reconcile the cozystack-platform release if it is missing"
            )
        return "gpu-operator-removed", (
            f"Flux prunes the standalone Package {GPU_OPERATOR} (variant container) and the GPU "
            "Operator is uninstalled: GPU pods lose their devices; move them off first"
        )
    what = _WITH_IT.get(key.kind, "")
    return "object-removed", (
        f"{key} leaves the build: Flux deletes it from the cluster (the Kustomization prunes "
        f"what git no longer holds){' ' + what if what else ''}; if it must stay, keep it in "
        "the profile or delete it on purpose"
    )


def _cause(r: RiskCheck, key: ObjectKey) -> _Path:
    """The profile field whose change removed the object (looked up at head, else at base)."""
    if (
        r.base is not None
        and r.base.profile.spec.platform.type != r.head.profile.spec.platform.type
    ):
        return ("spec", "platform", "type")
    if key.kind == "KubeVirt":  # named by spec.kubevirt, not by its base
        return ("spec", "kubevirt")
    return _FIELD_OF_OBJECT.get(key, ("spec", "variant"))


def removed_object_risks(r: RiskCheck, cluster_removed: bool = False) -> None:
    """One warning per object of the base build that the head build no longer holds."""
    for key in sorted(set(r.base_objs) - set(r.head_objs)):
        obj = r.base_objs[key]
        kind: RiskKind = "object-kept"
        if cluster_removed and _prune_disabled(obj):
            message = (
                f"{key} stays when the Kustomization is deleted: it carries "
                "kustomize.toolkit.fluxcd.io/prune: disabled (provided Flux has applied it "
                f"with that annotation: check kubectl get -o yaml){_kept(key, True)}"
            )
        elif cluster_removed:
            # nothing is pruned while the Kustomization only fails; deleting it is the step
            kind, message = _decommissioned(key)
        elif _prune_disabled(obj):
            message = (
                f"{key} leaves the build, but it carries kustomize.toolkit.fluxcd.io/prune: "
                "disabled, so Flux does not delete it (provided Flux has applied it with that "
                "annotation before this merge: check kubectl get -o yaml): it stays live as last "
                f"applied{_kept(key)}"
            )
        else:
            kind, message = _deleted(r, key)
        if cluster_removed:
            r.add_base(kind, _cause(r, key), message)
            continue
        r.add_written(kind, _cause(r, key), message)


def kept_package_risks(r: RiskCheck) -> None:
    """Packages the platform chart stops rendering keep running: each is announced."""
    before = built_platform_values(r.base_objs)
    after = built_platform_values(r.head_objs)
    if before is None or after is None:
        return
    container = r.head.profile.spec.variant == "container"
    for name in packages_leaving(before, after):
        delete = f"kubectl delete packages.cozystack.io {name}"
        if name == GPU_OPERATOR and container:
            continue  # the standalone container-variant Package of the same name takes it over
        if name == GPU_OPERATOR:
            r.add(
                "gpu-operator-removed",
                ("spec", "variant"),
                f"{GPU_OPERATOR} leaves bundles.enabledPackages, but the live Package stays "
                "(helm.sh/resource-policy: keep) and the GPU Operator keeps running: once Flux "
                f"has applied this, delete it by hand: {delete}",
            )
            continue
        why = (
            "HAMi keeps handing out nvidia.com/gpu next to the container variant's device plugin"
            if name == HAMI and container
            else "what it installed keeps running"
        )
        r.add_written(
            "package-kept",
            ("spec", "hami") if name == HAMI else ("spec", "variant"),
            f"{name} leaves the platform bundle, but the chart keeps the live Package "
            f"(helm.sh/resource-policy: keep) and {why}: once Flux has applied this, delete it "
            f"by hand: {delete}",
        )
