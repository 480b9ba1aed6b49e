"""GPU risk warnings for a change of one cluster: what the diff means for the nodes and the VMs.

Pure: works on the profiles at both refs and on the objects built from them. Each warning names the
cluster, the profile line that causes it (at head; at base for what was removed) and what to do.
The warnings about devices are in device_risks.py; the Risk type and the change examined are in
risk_check.py.
"""

from __future__ import annotations

from typing import Any

from kubedata.objects import ObjectKey
from renderer.bases import GPU_OPERATOR_NAMESPACE
from renderer.cozystack import GPU_OPERATOR
from renderer.profile import LoadedProfile

from prbot.device_risks import device_risks
from prbot.risk_check import Objects, Risk, RiskCheck, built_platform_values, shown_names

__all__ = ["cluster_risks"]

_STANDALONE_KEY = ObjectKey("cozystack.io", "Package", "", GPU_OPERATOR)
_HELM_RELEASE = ObjectKey(
    "helm.toolkit.fluxcd.io", "HelmRelease", GPU_OPERATOR_NAMESPACE, "gpu-operator"
)


def _gpu_operator_on(values: dict[str, Any] | None) -> bool:
    bundles = (values or {}).get("bundles") or {}
    enabled = bundles.get("enabledPackages") or []
    return GPU_OPERATOR in enabled and GPU_OPERATOR not in (bundles.get("disabledPackages") or [])


def _variant(r: RiskCheck) -> None:
    if r.base is None:
        return
    old, new = r.base.profile.spec.variant, r.head.profile.spec.variant
    if old != new:
        r.add(
            "variant-switch",
            ("spec", "variant"),
            f"variant {old} -> {new}: the GPU Operator reworks every GPU node of the cluster "
            "(drivers, VFIO binding and device plugins are swapped) and GPU VMs restart; "
            "plan a maintenance window, stop or move GPU VMs and drain the GPU nodes first",
        )


def _gpu_operator(r: RiskCheck) -> None:
    if r.base is None:
        return
    at = ("spec", "variant")
    base_on = _gpu_operator_on(built_platform_values(r.base_objs))
    head_on = _gpu_operator_on(built_platform_values(r.head_objs))
    standalone_base = _STANDALONE_KEY in r.base_objs
    standalone_head = _STANDALONE_KEY in r.head_objs
    if base_on and not head_on and not standalone_head:
        r.add(
            "gpu-operator-removed",
            at,
            f"{GPU_OPERATOR} leaves bundles.enabledPackages, but the live Package stays "
            "(helm.sh/resource-policy: keep) and the GPU Operator keeps running: once Flux has "
            f"applied this, delete it by hand: kubectl delete packages.cozystack.io {GPU_OPERATOR}",
        )
    elif standalone_base and not standalone_head:
        if head_on:
            r.add(
                "gpu-operator-removed",
                at,
                f"Package {GPU_OPERATOR} moves from this tool's output to the platform bundle: "
                "Flux prunes the Package it applied, and the platform's Helm release recreates "
                f"it only at its next upgrade; afterwards check kubectl get packages.cozystack.io "
                f"{GPU_OPERATOR} and reconcile the cozystack-platform release if it is missing",
            )
        else:
            r.add(
                "gpu-operator-removed",
                at,
                f"Flux prunes the standalone Package {GPU_OPERATOR} (variant container) and the "
                "GPU Operator is uninstalled: GPU pods lose their devices; move them off first",
            )
    if _HELM_RELEASE in r.base_objs and _HELM_RELEASE not in r.head_objs:
        r.add(
            "gpu-operator-removed",
            at,
            f"Flux prunes HelmRelease {GPU_OPERATOR_NAMESPACE}/gpu-operator and Helm uninstalls "
            "the GPU Operator (its CRDs and node labels stay): GPU pods and VMs lose their "
            "devices; move GPU workloads off first",
        )


def _hami(r: RiskCheck) -> None:
    spec = r.head.profile.spec
    before = r.base.profile.spec if r.base else None
    if (
        spec.variant == "container"
        and spec.hami
        and not (before and before.variant == "container" and before.hami)
    ):
        r.add(
            "container-hami",
            ("spec", "hami"),
            "variant container with HAMi: the GPU Operator's device plugin is turned off and "
            "HAMi's device plugin and scheduler hand out nvidia.com/gpu; GPU pods keep their "
            "devices until restarted and then need HAMi; check the GPU workloads against HAMi "
            "(nvidia.com/gpu, gpumem, gpucores) before merging",
        )


def _drift(r: RiskCheck) -> None:
    if r.base is None:
        return
    old = r.base.profile.spec.flux.drift_detection
    new = r.head.profile.spec.flux.drift_detection
    if old == "disabled" or new != "disabled":
        return
    releases = sorted(
        f"{k.namespace}/{k.name}"
        for k, obj in r.head_objs.items()
        if k.kind == "HelmRelease"
        and ((obj.get("spec") or {}).get("driftDetection") or {}).get("mode") == "disabled"
    )
    which = (
        f"helm-controller no longer detects or corrects hand edits of what {shown_names(releases)} "
        "installed"
        if releases
        else "this tool emits no HelmRelease here, so nothing changes today, but hand edits "
        "will go unnoticed on any it emits later"
    )
    r.add(
        "drift-detection-off",
        ("spec", "flux", "driftDetection"),
        f"driftDetection {old} -> disabled: {which}; keep enabled, or use warn to only report",
    )


def _platform(r: RiskCheck) -> None:
    if r.base is None:
        return
    old, new = r.base.profile.spec.platform, r.head.profile.spec.platform
    if old.type != new.type:
        r.add(
            "platform-version",
            ("spec", "platform", "type"),
            f"platform {old.type} -> {new.type}: every object rendered for this cluster is "
            "replaced (Flux prunes the old ones); make sure the cluster really changed platform",
        )
    elif old.version != new.version:
        r.add(
            "platform-version",
            ("spec", "platform", "version"),
            f"platform version {old.version} -> {new.version}: output is now rendered for "
            f"Cozystack {new.version}'s platform chart, but this does not upgrade the cluster; "
            "merge it together with (or after) the platform upgrade",
        )


_CHECKS = (_platform, _variant, _gpu_operator, device_risks, _hami, _drift)


def cluster_risks(
    name: str,
    base: LoadedProfile | None,
    head: LoadedProfile | None,
    base_objs: Objects,
    head_objs: Objects,
) -> list[Risk]:
    """The warnings for one cluster whose profile changed (none for a removed cluster)."""
    if head is None:
        return []
    r = RiskCheck(name, base, head, base_objs, head_objs)
    for check in _CHECKS:
        check(r)
    return r.out
