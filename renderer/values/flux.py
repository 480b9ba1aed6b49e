"""Plain Flux + KubeVirt: GPU Operator values per variant and the KubeVirt configuration.

The variant values follow Cozystack's packages/system/gpu-operator/values-*.yaml (@3c780acd)
minus its wrapper-chart `gpu-operator:` key, since plain Flux installs NVIDIA's chart directly.
"""

from __future__ import annotations

from typing import Any

from renderer.model import ProfileSpec
from renderer.values.wiring import (
    HOST_DEVICES_GATE,
    mdev_configuration,
    mdev_entries,
    pci_entries,
    permitted_host_devices,
)

__all__ = [
    "feature_gates",
    "gpu_operator_values",
    "kubevirt_configuration",
    "live_feature_gates",
]


def gpu_operator_values(spec: ProfileSpec) -> dict[str, Any]:
    """Helm values of NVIDIA's gpu-operator chart for the profile's variant."""
    # Cozystack's base values.yaml: confidential computing off; device manager opt-in.
    values: dict[str, Any] = {
        "ccManager": {"enabled": False},
        "vgpuDeviceManager": {"enabled": spec.vgpu.device_manager and spec.variant == "vgpu"},
    }
    if spec.variant == "passthrough":
        values |= {
            "sandboxWorkloads": {"enabled": True, "defaultWorkload": "vm-passthrough"},
            "driver": {"enabled": False},
            "devicePlugin": {"enabled": False},
        }
    elif spec.variant == "vgpu":
        manager = spec.vgpu.manager
        values |= {
            "sandboxWorkloads": {"enabled": True, "defaultWorkload": "vm-vgpu"},
            "driver": {"enabled": False},
            "devicePlugin": {"enabled": False},
            "vgpuManager": {
                "enabled": True,
                "repository": manager.repository,
                "image": manager.image,
                "version": manager.version,
                "imagePullSecrets": list(manager.image_pull_secrets),
            },
        }
    elif spec.variant == "container":
        # Unlike Cozystack's management nodes (host driver preinstalled), a plain-Flux container
        # cluster lets the operator run the driver, so driver and toolkit stay on.
        driver: dict[str, Any] = {"enabled": True}
        licensing = spec.vgpu.licensing
        if licensing.secret_name or licensing.config_map_name:
            # configMapName is deprecated but still read by the operator: emitted, never dropped
            names = {
                "secretName": licensing.secret_name,
                "configMapName": licensing.config_map_name,
            }
            driver["licensingConfig"] = {k: v for k, v in names.items() if v} | {"nlsEnabled": True}
        values |= {
            "sandboxWorkloads": {"enabled": False},
            "driver": driver,
            # HAMi brings its own device plugin; both would register nvidia.com/gpu.
            "devicePlugin": {"enabled": not spec.hami},
            "vfioManager": {"enabled": False},
        }
    return values


def live_feature_gates(live: dict[str, Any] | None) -> list[str]:
    """The feature gates of kubevirt.yaml (the live KubeVirt CR), in their order."""
    spec = (live or {}).get("spec") or {}
    developer = (spec.get("configuration") or {}).get("developerConfiguration") or {}
    return [str(g) for g in developer.get("featureGates") or []]


def feature_gates(spec: ProfileSpec, live: dict[str, Any] | None) -> list[str]:
    """The complete gate list of the build (the list is atomic): the live gates, then what the
    profile adds (HostDevices with GPU wiring, spec.kubevirt.featureGates), without the gates
    spec.kubevirt.removeFeatureGates turns off. Order: live first, so an unchanged cluster
    builds its live list as it is."""
    wiring = [HOST_DEVICES_GATE] if spec.variant in ("passthrough", "vgpu") else []
    wanted = [*live_feature_gates(live), *wiring, *spec.kubevirt.feature_gates]
    removed = set(spec.kubevirt.remove_feature_gates)
    return [g for g in dict.fromkeys(wanted) if g not in removed]


def kubevirt_configuration(spec: ProfileSpec, live: dict[str, Any] | None) -> dict[str, Any]:
    """spec.configuration of the partial KubeVirt object: the fields this tool owns; `live` is
    kubevirt.yaml's object, whose feature gates the built list keeps.

    Without GPU wiring (container, none) the device parts are declared empty: server-side apply
    then removes the wiring from the live CR, which stays.
    """
    gates = feature_gates(spec, live)
    if spec.variant not in ("passthrough", "vgpu"):
        return {
            "developerConfiguration": {"featureGates": gates},
            "permittedHostDevices": {"pciHostDevices": [], "mediatedDevices": []},
            "mediatedDevicesConfiguration": {
                "mediatedDeviceTypes": [],
                "nodeMediatedDeviceTypes": [],
            },
        }
    config: dict[str, Any] = {"developerConfiguration": {"featureGates": gates}}
    pci = pci_entries(spec.devices)
    mdev = mdev_entries(spec.devices) if spec.variant == "vgpu" else []
    permitted = permitted_host_devices(pci, mdev)
    if permitted:
        config["permittedHostDevices"] = permitted
    if spec.variant == "vgpu":
        mdev_config = mdev_configuration(spec.mediated_devices_configuration)
        if mdev_config:
            config["mediatedDevicesConfiguration"] = mdev_config
    return config
