"""The GPU wiring a profile implies, as partial objects the live ones are compared with.

Cozystack: the desired platform Package (its values merged over the live ones, as server-side
apply merges them) -> the platform chart's effective values -> `predict_packages` (the
`cozystack.kubevirt` and `cozystack.gpu-operator` Packages the iaas bundle renders) -> the KubeVirt
CR the kubevirt chart renders from the kubevirt Package's values
(packages/system/kubevirt/templates/kubevirt-cr.yaml: a static gate list plus extraFeatureGates,
permittedHostDevices and mediatedDevicesConfiguration when set).
Plain Flux: `renderer.values.flux.kubevirt_configuration` on the KubeVirt CR named in spec.kubevirt.
Only the wiring paths are compared (SCOPES): the rest of these objects is the release's business.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubedata.objects import KubeObject, ObjectKey, key_of
from renderer.cozystack_names import (
    GPU_OPERATOR,
    HAMI,
    KUBEVIRT,
    KUBEVIRT_RELEASE,
    PLATFORM_PACKAGE,
    platform_values,
)
from renderer.model import ProfileSpec
from renderer.values.cozystack import ChartFailure, effective_values, predict_packages
from renderer.values.flux import kubevirt_configuration

from audit.compare.patterns import Pattern, compile_pattern
from audit.kinds import live_key

__all__ = [
    "COZYSTACK_KUBEVIRT",
    "KUBEVIRT_STATIC_GATES",
    "ExpectedWiring",
    "cozystack_wiring",
    "flux_wiring",
    "kubevirt_cr_configuration",
    "permitted_resources",
    "ssa_merge",
]

KUBEVIRT_STATIC_GATES = (
    "HotplugVolumes",
    "ExpandDisks",
    "LiveMigration",
    "AutoResourceLimitsGate",
    "CPUManager",
    "GPU",
    "VMExport",
)
"""kubevirt-cr.yaml L16-26 (cozystack@3c780acd): always rendered, before extraFeatureGates."""

COZYSTACK_KUBEVIRT = ObjectKey("kubevirt.io", "KubeVirt", *KUBEVIRT_RELEASE)
"""The KubeVirt CR the kubevirt release renders, named as the release is."""
_CONFIG = "spec/configuration"
KUBEVIRT_SCOPE: tuple[Pattern, ...] = tuple(
    compile_pattern(f"{_CONFIG}/{p}")
    for p in (
        "developerConfiguration/featureGates",
        "permittedHostDevices",
        "mediatedDevicesConfiguration",
    )
)
_KV_VALUES = "spec/components/kubevirt/values"
KUBEVIRT_PACKAGE_SCOPE: tuple[Pattern, ...] = tuple(
    compile_pattern(f"{_KV_VALUES}/{p}")
    for p in ("extraFeatureGates", "permittedHostDevices", "mediatedDevicesConfiguration")
)
GPU_OPERATOR_PACKAGE_SCOPE = (compile_pattern("spec/variant"), compile_pattern("spec/components"))
PRESENCE_SCOPE = (compile_pattern("spec/variant"),)


@dataclass
class ExpectedWiring:
    objects: list[KubeObject] = field(default_factory=list)
    scopes: dict[ObjectKey, tuple[Pattern, ...]] = field(default_factory=dict)
    kubevirt: ObjectKey | None = None
    """The KubeVirt CR the wiring lands in."""
    permitted: frozenset[str] | None = None
    """resourceNames the profile permits (None: no permittedHostDevices at all)."""
    notes: list[str] = field(default_factory=list)

    def add(self, obj: KubeObject, scope: tuple[Pattern, ...]) -> None:
        self.objects.append(obj)
        self.scopes[key_of(obj)] = scope

    def get(self, key: ObjectKey) -> KubeObject | None:
        """The expected object whose live key is `key`."""
        return next((o for o in self.objects if live_key(o) == key), None)


def ssa_merge(live: Any, desired: Any) -> Any:
    """What server-side apply makes of a declared partial value over the live one: maps merge,
    anything else (lists are atomic in Package values) is replaced."""
    if isinstance(live, dict) and isinstance(desired, dict):
        out = copy.deepcopy(live)
        for key, value in desired.items():
            out[key] = ssa_merge(out.get(key), value)
        return out
    return copy.deepcopy(desired)


def kubevirt_cr_configuration(values: dict[str, Any]) -> dict[str, Any]:
    """The GPU fields of spec.configuration the kubevirt chart renders from its values."""
    gates = [*KUBEVIRT_STATIC_GATES, *(values.get("extraFeatureGates") or [])]
    config: dict[str, Any] = {"developerConfiguration": {"featureGates": gates}}
    if values.get("permittedHostDevices"):
        config["permittedHostDevices"] = copy.deepcopy(values["permittedHostDevices"])
    if values.get("mediatedDevicesConfiguration"):
        config["mediatedDevicesConfiguration"] = copy.deepcopy(
            values["mediatedDevicesConfiguration"]
        )
    return config


def _values(package: KubeObject | None, component: str) -> dict[str, Any]:
    spec = (package or {}).get("spec") or {}
    comp = (spec.get("components") or {}).get(component) or {}
    values = comp.get("values") if isinstance(comp, dict) else None
    return values if isinstance(values, dict) else {}


def cozystack_wiring(
    desired_platform: KubeObject, live_platform: KubeObject | None, version: str
) -> ExpectedWiring:
    """What the platform chart will render once Flux has applied the desired platform Package."""
    out = ExpectedWiring(kubevirt=COZYSTACK_KUBEVIRT)
    values = ssa_merge(platform_values(live_platform), platform_values(desired_platform))
    variant = ((desired_platform.get("spec") or {}).get("variant")) or (
        ((live_platform or {}).get("spec") or {}).get("variant")
    )
    try:
        packages = predict_packages(effective_values(values, variant), version)
    except ChartFailure as exc:
        out.notes.append(f"the platform chart would refuse the desired values: {exc}")
        return out
    by_name = {p["metadata"]["name"]: p for p in packages}
    kubevirt_pkg = by_name.get(KUBEVIRT)
    if kubevirt_pkg is not None:
        out.add(_bare(kubevirt_pkg), KUBEVIRT_PACKAGE_SCOPE)
        kv_values = _values(kubevirt_pkg, "kubevirt")
        config = kubevirt_cr_configuration(kv_values)
        out.add(
            {
                "apiVersion": "kubevirt.io/v1",
                "kind": "KubeVirt",
                "metadata": {
                    "name": COZYSTACK_KUBEVIRT.name,
                    "namespace": COZYSTACK_KUBEVIRT.namespace,
                },
                "spec": {"configuration": config},
            },
            KUBEVIRT_SCOPE,
        )
        out.permitted = permitted_resources(config.get("permittedHostDevices"))
    if GPU_OPERATOR in by_name:
        out.add(_bare(by_name[GPU_OPERATOR]), GPU_OPERATOR_PACKAGE_SCOPE)
    if HAMI in by_name:
        out.add(_bare(by_name[HAMI]), PRESENCE_SCOPE)
    return out


def _bare(package: KubeObject) -> KubeObject:
    """A predicted Package without the chart's metadata (compared by scope anyway)."""
    return {
        "apiVersion": package["apiVersion"],
        "kind": package["kind"],
        "metadata": {"name": package["metadata"]["name"]},
        "spec": copy.deepcopy(package.get("spec") or {}),
    }


def flux_wiring(spec: ProfileSpec, kubevirt: KubeObject | None) -> ExpectedWiring:
    """The KubeVirt configuration the renderer emits for a plain-Flux cluster (from the profile
    and kubevirt.yaml, the live CR it was published with)."""
    key = ObjectKey("kubevirt.io", "KubeVirt", spec.kubevirt.namespace, spec.kubevirt.name)
    out = ExpectedWiring(kubevirt=key)
    if spec.variant not in ("passthrough", "vgpu"):
        return out
    config = kubevirt_configuration(spec, kubevirt)
    out.add(
        {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {"name": key.name, "namespace": key.namespace},
            "spec": {"configuration": config},
        },
        KUBEVIRT_SCOPE,
    )
    out.permitted = permitted_resources(config.get("permittedHostDevices"))
    return out


def permitted_resources(permitted: Any) -> frozenset[str] | None:
    """resourceNames of a permittedHostDevices value (pci, mdev, usb); None when it is unset,
    which makes virt-controller skip the check (renderresources.go L460-494)."""
    if not isinstance(permitted, dict):
        return None
    names: set[str] = set()
    for list_name in ("pciHostDevices", "mediatedDevices", "usb"):
        for entry in permitted.get(list_name) or ():
            if isinstance(entry, dict) and entry.get("resourceName"):
                names.add(str(entry["resourceName"]))
    return frozenset(names)


def platform_package(objects: Iterable[KubeObject]) -> KubeObject | None:
    """The platform Package among desired objects, if the cluster is a Cozystack one."""
    for obj in objects:
        if obj.get("kind") == "Package" and (obj.get("metadata") or {}).get("name") == (
            PLATFORM_PACKAGE
        ):
            return obj
    return None
