"""GPU risk warnings for a change of one cluster: what the diff means for the nodes and the VMs.

Pure: works on the profiles at both refs and on the objects built from them. Each warning names the
cluster, the profile line that causes it (at head; at base for what was removed) and what to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from renderer.bases import GPU_OPERATOR_NAMESPACE
from renderer.cozystack import (
    GPU_OPERATOR,
    KUBEVIRT,
    PLATFORM_PACKAGE,
    ChartFailure,
    coalesce,
    effective_values,
    predict_packages,
)
from renderer.model import Device
from renderer.objects import KubeObject, ObjectKey
from renderer.profile import LoadedProfile

__all__ = ["Risk", "RiskKind", "cluster_risks", "permitted_devices"]

RiskKind = Literal[
    "variant-switch",
    "gpu-operator-removed",
    "device-removed",
    "no-devices",
    "container-hami",
    "drift-detection-off",
    "platform-version",
]

Objects = Mapping[ObjectKey, KubeObject]
_PLATFORM_KEY = ObjectKey("cozystack.io", "Package", "", PLATFORM_PACKAGE)
_STANDALONE_KEY = ObjectKey("cozystack.io", "Package", "", GPU_OPERATOR)
_HELM_RELEASE = ObjectKey(
    "helm.toolkit.fluxcd.io", "HelmRelease", GPU_OPERATOR_NAMESPACE, "gpu-operator"
)
_GPU_VARIANTS = ("passthrough", "vgpu")
# The bundle's own conditions (iaas on, a full system variant) are checked by `validate`; a profile
# without platform.yaml cannot show them, so device wiring is predicted as if they hold.
_BUNDLE_ON = {"bundles": {"iaas": {"enabled": True}, "system": {"enabled": True}}}
_SHOWN_NAMES = 4


@dataclass(frozen=True, order=True)
class Risk:
    """One warning: where (cluster, file:line at `ref`), what kind, what happens and what to do."""

    cluster: str
    file: str
    line: int
    kind: RiskKind
    message: str
    ref: Literal["base", "head"] = "head"

    @property
    def where(self) -> str:
        at = " (base)" if self.ref == "base" else ""
        return f"{self.file}:{self.line}{at}"

    def __str__(self) -> str:
        return f"{self.cluster}: {self.where}: {self.message}"


def _values(objs: Objects) -> dict[str, Any] | None:
    """Effective platform values of the built platform Package (None off Cozystack)."""
    pkg = objs.get(_PLATFORM_KEY)
    if pkg is None:
        return None
    spec = pkg.get("spec") or {}
    values = ((spec.get("components") or {}).get("platform") or {}).get("values") or {}
    return effective_values(values, spec.get("variant"))


def _gpu_operator_on(values: dict[str, Any] | None) -> bool:
    bundles = (values or {}).get("bundles") or {}
    enabled = bundles.get("enabledPackages") or []
    return GPU_OPERATOR in enabled and GPU_OPERATOR not in (bundles.get("disabledPackages") or [])


def permitted_devices(lp: LoadedProfile, objs: Objects) -> dict[str, str]:
    """selector -> resourceName of every device KubeVirt will permit, from the built objects.

    On Cozystack the platform chart merges its default tables in (predicted from the built
    platform values); on plain Flux the partial KubeVirt object carries the list.
    """
    permitted: dict[str, Any] = {}
    if lp.profile.spec.platform.type == "cozystack":
        values = _values(objs)
        if values is None:
            return {}
        try:
            packages = predict_packages(
                coalesce(values, _BUNDLE_ON), lp.profile.spec.platform.version or "main"
            )
        except ChartFailure:
            return {}
        for pkg in packages:
            if pkg["metadata"]["name"] == KUBEVIRT:
                kv = ((pkg["spec"].get("components") or {}).get("kubevirt") or {}).get("values")
                permitted = (kv or {}).get("permittedHostDevices") or {}
    else:
        for key, obj in objs.items():
            if key.group == "kubevirt.io" and key.kind == "KubeVirt":
                config = (obj.get("spec") or {}).get("configuration") or {}
                permitted = config.get("permittedHostDevices") or {}
    out: dict[str, str] = {}
    for entry in permitted.get("pciHostDevices") or []:
        out[str(entry.get("pciVendorSelector", "")).upper()] = str(entry.get("resourceName", ""))
    for entry in permitted.get("mediatedDevices") or []:
        out[str(entry.get("mdevNameSelector", ""))] = str(entry.get("resourceName", ""))
    return out


class _Risks:
    def __init__(
        self,
        name: str,
        base: LoadedProfile | None,
        head: LoadedProfile,
        base_objs: Objects,
        head_objs: Objects,
    ):
        self.name = name
        self.base = base
        self.head = head
        self.base_objs = base_objs
        self.head_objs = head_objs
        self.out: list[Risk] = []

    def add(self, kind: RiskKind, path: tuple[str | int, ...], message: str) -> None:
        self.out.append(Risk(self.name, self.head.file, self.head.line(*path), kind, message))

    def add_base(self, kind: RiskKind, path: tuple[str | int, ...], message: str) -> None:
        assert self.base is not None
        lp = self.base
        self.out.append(Risk(self.name, lp.file, lp.line(*path), kind, message, "base"))


def _variant(r: _Risks) -> None:
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


def _gpu_operator(r: _Risks) -> None:
    if r.base is None:
        return
    at = ("spec", "variant")
    base_on = _gpu_operator_on(_values(r.base_objs))
    head_on = _gpu_operator_on(_values(r.head_objs))
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


def _selector(d: Device) -> str:
    """The key KubeVirt matches a device by (PCI selectors compared upper-case)."""
    return (d.pci_vendor_selector or "").upper() or d.mdev_name_selector or ""


def _device_of(lp: LoadedProfile, selector: str) -> tuple[int, Device] | None:
    return next(
        ((i, d) for i, d in enumerate(lp.profile.spec.devices) if _selector(d) == selector), None
    )


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN_NAMES])
    more = len(names) - _SHOWN_NAMES
    return shown + (f" and {more} more" if more > 0 else "")


def _devices(r: _Risks) -> None:
    head_spec = r.head.profile.spec
    head = permitted_devices(r.head, r.head_objs)
    if head_spec.variant in _GPU_VARIANTS and not head:
        replace = head_spec.replace_defaults
        r.add(
            "no-devices",
            ("spec", "replaceDefaults")
            if r.head.written("spec", "replaceDefaults")
            else ("spec", "devices"),
            (
                "spec.replaceDefaults: true with no device listed"
                if replace
                else "no device is permitted"
            )
            + ": no permittedHostDevices is rendered, so every GPU VM fails to start; list the "
            "GPUs in spec.devices" + (" or set replaceDefaults: false" if replace else ""),
        )
    if r.base is None:
        return
    base = permitted_devices(r.base, r.base_objs)
    if base and not head and head_spec.variant in _GPU_VARIANTS:
        return  # the no-devices warning above says it all
    kept = set(head.values())
    lost_defaults: list[str] = []
    lost_all: list[str] = []
    for selector, name in base.items():
        if name in kept:
            continue
        found = _device_of(r.base, selector)
        if head_spec.variant not in _GPU_VARIANTS:
            lost_all.append(name)
        elif found is None:
            lost_defaults.append(name)
        else:
            _lost_device(r, selector, name, *found, head)
    if lost_all:
        r.add(
            "device-removed",
            ("spec", "variant"),
            f"variant {head_spec.variant} has no KubeVirt wiring, so {len(lost_all)} GPU resource "
            f"name(s) are no longer permitted ({_names(lost_all)}): VMs that use them will not "
            "start; move them to another cluster first",
        )
    if lost_defaults:
        why = (
            "spec.replaceDefaults: true drops Cozystack's default device table"
            if head_spec.replace_defaults
            else "Cozystack's default device table no longer applies"
        )
        at = ("spec", "replaceDefaults") if head_spec.replace_defaults else ("spec", "variant")
        r.add(
            "device-removed",
            at,
            f"{why}: {len(lost_defaults)} resource name(s) are no longer permitted "
            f"({_names(lost_defaults)}); VMs that use them will not start: list the ones in use "
            "in spec.devices",
        )


def _lost_device(
    r: _Risks, selector: str, name: str, index: int, device: Device, head: dict[str, str]
) -> None:
    devices = list(enumerate(r.head.profile.spec.devices))
    renamed = _device_of(r.head, selector) if selector in head else None
    if renamed is None:
        renamed = next(((i, d) for i, d in devices if d.class_ == device.class_), None)
    new_name = head.get(_selector(renamed[1])) if renamed else None
    if renamed is not None and new_name is not None:
        r.add(
            "device-removed",
            ("spec", "devices", renamed[0], "resourceName"),
            f'device class "{device.class_}": resourceName {name} -> {new_name}: VMs whose GPU '
            f"deviceName is {name} will not start; change them to {new_name} in the same "
            "maintenance window, or keep the old name",
        )
        return
    r.add_base(
        "device-removed",
        ("spec", "devices", index),
        f'device class "{device.class_}" ({selector}, {name}) is removed: VMs whose GPU '
        f"deviceName is {name} will not start; move them to another GPU class first, or keep "
        "the device",
    )


def _hami(r: _Risks) -> None:
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


def _drift(r: _Risks) -> None:
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
        f"helm-controller no longer detects or corrects hand edits of what {_names(releases)} "
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


def _platform(r: _Risks) -> None:
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


_CHECKS = (_platform, _variant, _gpu_operator, _devices, _hami, _drift)


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
    r = _Risks(name, base, head, base_objs, head_objs)
    for check in _CHECKS:
        check(r)
    return r.out
