"""Cozystack's platform chart, as data: the values the profile sets and the Packages they make.

`platform_gpu_values` is what the renderer writes into the platform Package.
`predict_packages` re-states templates/bundles/iaas.yaml (and _helpers.tpl) for the Packages that
carry GPU wiring; the oracle tests render the real chart with Helm and compare.
Sources: cozystack/cozystack@3c780acd packages/core/platform/ (values*.yaml, bundles/iaas.yaml);
v1.6.2 (bfde94fd) for "1.5" and "1.6", which lacks main's bundles.system.enabled guard.
"""

from __future__ import annotations

import functools
from typing import Any

from kubedata.objects import KubeObject, copy_data

from renderer.cozystack_names import GPU_OPERATOR, HAMI, KUBEVIRT
from renderer.errors import RenderError
from renderer.model import ProfileSpec
from renderer.values.defaults import PASSTHROUGH_DEFAULTS, VGPU_MDEV_DEFAULTS
from renderer.values.wiring import (
    HOST_DEVICES_GATE,
    mdev_configuration,
    mdev_entries,
    pci_entries,
    permitted_host_devices,
)

__all__ = [
    "BUNDLE_VARIANTS",
    "CHART_COMMIT",
    "SUPPORTED_VERSIONS",
    "ChartFailure",
    "apply_gpu_values",
    "coalesce",
    "effective_values",
    "packages_leaving",
    "platform_gpu_values",
    "predict_packages",
]

SUPPORTED_VERSIONS = ("1.5", "1.6", "main")
CHART_COMMIT = "3c780acd"
"""The cozystack/cozystack commit whose platform chart "main" means (the sources above)."""
BUNDLE_VARIANTS = {"passthrough": "default", "vgpu": "vgpu"}
"""Profile variant -> bundles.iaas.gpuOperatorVariant. The bundle rejects anything else."""

# The chart defaults the GPU wiring reads (values.yaml), then what each platform PackageSource
# variant layers on top (values-<variant>.yaml; "default" layers nothing).
CHART_DEFAULTS: dict[str, Any] = {
    "bundles": {
        "system": {"enabled": False, "variant": "isp-full"},
        "iaas": {"enabled": False, "gpuOperatorVariant": "default"},
        "disabledPackages": [],
        "enabledPackages": [],
    },
    "resources": {"cpuAllocationRatio": 10},
    "gpu": {
        "replaceDefaults": False,
        "permittedHostDevices": {"pciHostDevices": [], "mediatedDevices": []},
        "mediatedDevicesConfiguration": {},
        "vgpuManager": {
            "repository": "",
            "image": "vgpu-manager",
            "version": "",
            "imagePullSecrets": [],
        },
        "vgpuDeviceManager": {"enabled": False},
    },
}
_FULL = {"iaas": {"enabled": True}, "paas": {"enabled": True}, "naas": {"enabled": True}}
PACKAGE_VARIANT_VALUES: dict[str, dict[str, Any]] = {
    "default": {},
    "isp-full": {"bundles": {"system": {"enabled": True, "variant": "isp-full"}, **_FULL}},
    "isp-full-generic": {
        "bundles": {
            "system": {"enabled": True, "variant": "isp-full-generic"},
            **_FULL,
            "enabledPackages": ["cozystack.backupstrategy-controller"],
        }
    },
    "isp-hosted": {
        "bundles": {
            "system": {"enabled": True, "variant": "isp-hosted"},
            "iaas": {"enabled": False},
            "paas": {"enabled": True},
            "naas": {"enabled": True},
        }
    },
}
_KEEP = {"helm.sh/resource-policy": "keep"}


class ChartFailure(RenderError):
    """The platform chart would refuse to render (its `fail` calls), with the chart's message."""


def coalesce(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's values coalescing: maps merge, null deletes the key, anything else replaces."""
    out: dict[str, Any] = copy_data(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = coalesce(out[key], value)
        else:
            out[key] = copy_data(value)
    return out


def effective_values(values: dict[str, Any], package_variant: str | None) -> dict[str, Any]:
    """The .Values the platform chart sees for a platform Package of this variant."""
    return coalesce(_layered(package_variant), values)


@functools.cache
def _layered(package_variant: str | None) -> dict[str, Any]:
    """The chart's defaults under the variant's (the same for every cluster: computed once, and
    copied by effective_values, never changed)."""
    return coalesce(CHART_DEFAULTS, PACKAGE_VARIANT_VALUES.get(package_variant or "default", {}))


def _with(names: list[str], name: str, wanted: bool) -> list[str]:
    """Keep the list's order; append `name` if wanted and absent, drop it if not wanted."""
    if wanted:
        return names if name in names else [*names, name]
    return [n for n in names if n != name]


def platform_gpu_values(spec: ProfileSpec, effective: dict[str, Any]) -> dict[str, Any]:
    """The GPU keys of the platform values, by top-level path ('bundles.x' keys are nested).

    `bundles.disabledPackages` is among them only when the profile changes it.
    """
    bundles = effective.get("bundles") or {}
    gpu_on = spec.variant in BUNDLE_VARIANTS
    hami_on = gpu_on and spec.hami
    enabled = _with(
        _with(list(bundles.get("enabledPackages") or []), GPU_OPERATOR, gpu_on), HAMI, hami_on
    )
    live_disabled = list(bundles.get("disabledPackages") or [])
    disabled = [
        n
        for n in live_disabled
        if not (n == GPU_OPERATOR and gpu_on) and not (n == HAMI and hami_on)
    ]
    current = (bundles.get("iaas") or {}).get("gpuOperatorVariant") or "default"
    variant = BUNDLE_VARIANTS.get(
        spec.variant, current if current in ("default", "vgpu") else "default"
    )
    manager = spec.vgpu.manager
    passthrough = spec.variant == "passthrough"
    # disabledPackages is the admin's list: written only when the profile must take a name out
    # of it (the list is atomic, so writing it replaces the live one whole).
    changed_disabled = {"bundles.disabledPackages": disabled} if disabled != live_disabled else {}
    return {
        "bundles.iaas.gpuOperatorVariant": variant,
        "bundles.enabledPackages": enabled,
        **changed_disabled,
        "gpu": {
            "replaceDefaults": spec.replace_defaults,
            "permittedHostDevices": {
                "pciHostDevices": pci_entries(spec.devices),
                # the chart ignores these on passthrough; writing them would only mislead readers
                "mediatedDevices": [] if passthrough else mdev_entries(spec.devices),
            },
            "mediatedDevicesConfiguration": {}
            if passthrough
            else mdev_configuration(spec.mediated_devices_configuration),
            "vgpuManager": {
                "repository": manager.repository,
                "image": manager.image,
                "version": manager.version,
                "imagePullSecrets": list(manager.image_pull_secrets),
            },
            "vgpuDeviceManager": {"enabled": spec.vgpu.device_manager},
        },
    }


def apply_gpu_values(values: dict[str, Any], gpu: dict[str, Any]) -> dict[str, Any]:
    """Platform values with the GPU keys of `platform_gpu_values` set, as the build sets them."""
    out: dict[str, Any] = copy_data(values)
    for key, value in gpu.items():
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = copy_data(value)
    return out


def _optional_on(values: dict[str, Any]) -> set[str]:
    bundles = values.get("bundles") or {}
    disabled = set(bundles.get("disabledPackages") or [])
    return {n for n in bundles.get("enabledPackages") or [] if n not in disabled}


def packages_leaving(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Packages the chart rendered with the `before` effective values and no longer renders.

    Each keeps running: the chart renders every Package with helm.sh/resource-policy: keep. A
    name leaves by dropping out of enabledPackages or by entering disabledPackages.
    """
    newly_disabled = set((after.get("bundles") or {}).get("disabledPackages") or []) - set(
        (before.get("bundles") or {}).get("disabledPackages") or []
    )
    return sorted((_optional_on(before) - _optional_on(after)) | newly_disabled)


def _package(name: str, variant: str, components: dict[str, Any] | None = None) -> KubeObject:
    spec: dict[str, Any] = {"variant": variant}
    if components:
        spec["components"] = components
    return {
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "Package",
        "metadata": {"name": name, "annotations": dict(_KEEP)},
        "spec": spec,
    }


def _get(values: dict[str, Any], *path: str) -> Any:
    """Nil-safe walk, as the chart's parenthesised ((.Values.gpu).x) accesses are."""
    node: Any = values
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _iaas_rendered(values: dict[str, Any], version: str) -> bool:
    """Whether the iaas bundle renders at all; ChartFailure where the chart's checks fail."""
    iaas_on = bool(_get(values, "bundles", "iaas", "enabled"))
    system_variant = _get(values, "bundles", "system", "variant")
    full = system_variant in ("isp-full", "isp-full-generic")
    if iaas_on and not full:
        raise ChartFailure(
            "bundles.iaas.enabled can only be true when bundles.system.variant is "
            "'isp-full' or 'isp-full-generic'"
        )
    if version == "main" and iaas_on and not _get(values, "bundles", "system", "enabled"):
        raise ChartFailure(
            "bundles.iaas.enabled requires bundles.system.enabled: the iaas bundle depends on "
            "packages emitted by the system bundle (cozystack.networking, "
            "cozystack.cozystack-engine, cozystack.cert-manager, "
            "cozystack.prometheus-operator-crds and cozystack.cozystack-basics). Enable the system "
            "bundle with bundles.system.variant: isp-full or isp-full-generic."
        )
    return iaas_on and full


def _kubevirt_values(values: dict[str, Any], variant: str, gpu_on: bool) -> dict[str, Any]:
    """The kubevirt Package's values: CPU ratio, and with the GPU Operator the host devices."""
    kubevirt: dict[str, Any] = {}
    ratio = _get(values, "resources", "cpuAllocationRatio")
    if ratio:
        kubevirt["cpuAllocationRatio"] = int(ratio)
    if not gpu_on:
        return kubevirt
    kubevirt["extraFeatureGates"] = [HOST_DEVICES_GATE]
    user_pci = _get(values, "gpu", "permittedHostDevices", "pciHostDevices") or []
    user_mdev = _get(values, "gpu", "permittedHostDevices", "mediatedDevices") or []
    replace = bool(_get(values, "gpu", "replaceDefaults"))
    mdev: list[Any] = []
    mdev_config: dict[str, Any] = {}
    if variant == "default":
        pci = ([] if replace else [dict(d) for d in PASSTHROUGH_DEFAULTS]) + list(user_pci)
    else:
        if not replace and _get(values, "gpu", "vgpuDeviceManager", "enabled"):
            mdev = [dict(d) for d in VGPU_MDEV_DEFAULTS]
        pci = list(user_pci)
        mdev += list(user_mdev)
        mdev_config = dict(_get(values, "gpu", "mediatedDevicesConfiguration") or {})
    permitted = permitted_host_devices(pci, mdev)
    if permitted:
        kubevirt["permittedHostDevices"] = permitted
    if mdev_config:
        kubevirt["mediatedDevicesConfiguration"] = mdev_config
    return kubevirt


def _gpu_operator_overrides(values: dict[str, Any], variant: str) -> dict[str, Any]:
    """The gpu-operator Package's values the bundle passes on (vgpu variant only)."""
    overrides: dict[str, Any] = {}
    if variant != "vgpu":
        return overrides
    mgr = _get(values, "gpu", "vgpuManager") or {}
    custom_image = "image" in mgr and (mgr.get("image") or "") != "vgpu-manager"
    if mgr.get("repository") or mgr.get("version") or custom_image or mgr.get("imagePullSecrets"):
        overrides["vgpuManager"] = mgr
    if _get(values, "gpu", "vgpuDeviceManager", "enabled"):
        overrides["vgpuDeviceManager"] = {"enabled": True}
    return overrides


def predict_packages(values: dict[str, Any], version: str) -> list[KubeObject]:
    """The GPU-relevant Packages (kubevirt, gpu-operator, hami) the iaas bundle renders.

    `values` are effective values (see `effective_values`). Raises ChartFailure where the chart
    fails, with the chart's own message.
    """
    if not _iaas_rendered(values, version):
        return []
    enabled = _get(values, "bundles", "enabledPackages") or []
    disabled = _get(values, "bundles", "disabledPackages") or []
    gpu_on = GPU_OPERATOR in enabled and GPU_OPERATOR not in disabled
    variant = _get(values, "bundles", "iaas", "gpuOperatorVariant") or "default"
    if variant not in ("default", "vgpu"):
        raise ChartFailure(
            f'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got "{variant}"'
        )
    out: list[KubeObject] = []
    if KUBEVIRT not in disabled:
        kubevirt = _kubevirt_values(values, variant, gpu_on)
        out.append(
            _package(KUBEVIRT, "default", {"kubevirt": {"values": kubevirt}} if kubevirt else None)
        )
    if gpu_on:
        overrides = _gpu_operator_overrides(values, variant)
        components = (
            {"gpu-operator": {"values": {"gpu-operator": overrides}}} if overrides else None
        )
        out.append(_package(GPU_OPERATOR, variant, components))
    if HAMI in enabled and HAMI not in disabled:
        out.append(_package(HAMI, "default"))
    return out
