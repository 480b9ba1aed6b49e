"""What the profile's devices mean to KubeVirt: permittedHostDevices entries and feature gates."""

from __future__ import annotations

from typing import Any

from renderer.model import Device, MediatedDevicesConfiguration, to_data

__all__ = [
    "HOST_DEVICES_GATE",
    "mdev_configuration",
    "mdev_entries",
    "pci_entries",
    "permitted_host_devices",
]

HOST_DEVICES_GATE = "HostDevices"
"""Alpha in KubeVirt 1.8/1.9, so it must be listed; Cozystack adds it whenever GPUs are on."""


def _entries(key: str, selected: list[tuple[str | None, Device]]) -> list[dict[str, Any]]:
    """One entry per (selector, device) whose selector is set, in profile order."""
    return [
        {
            key: selector,
            "resourceName": d.resource_name,
            "externalResourceProvider": d.external_resource_provider,
        }
        for selector, d in selected
        if selector is not None
    ]


def pci_entries(devices: list[Device]) -> list[dict[str, Any]]:
    """pciHostDevices entries, in profile order, spelled as KubeVirt (and Cozystack) write them."""
    return _entries("pciVendorSelector", [(d.pci_vendor_selector, d) for d in devices])


def mdev_entries(devices: list[Device]) -> list[dict[str, Any]]:
    """mediatedDevices entries, in profile order."""
    return _entries("mdevNameSelector", [(d.mdev_name_selector, d) for d in devices])


def permitted_host_devices(pci: list[Any], mdev: list[Any]) -> dict[str, list[Any]]:
    """KubeVirt's permittedHostDevices of these entries; an empty list is left out."""
    return {k: v for k, v in (("pciHostDevices", pci), ("mediatedDevices", mdev)) if v}


def mdev_configuration(config: MediatedDevicesConfiguration) -> dict[str, Any]:
    """KubeVirt's mediatedDevicesConfiguration as written in the profile (unset fields left out)."""
    data: dict[str, Any] = to_data(config)
    return data
