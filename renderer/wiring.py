"""What the profile's devices mean to KubeVirt: permittedHostDevices entries and feature gates."""

from __future__ import annotations

from typing import Any

from renderer.model import Device, MediatedDevicesConfiguration, to_data

__all__ = ["HOST_DEVICES_GATE", "mdev_configuration", "mdev_entries", "pci_entries"]

HOST_DEVICES_GATE = "HostDevices"
"""Alpha in KubeVirt 1.8/1.9, so it must be listed; Cozystack adds it whenever GPUs are on."""


def pci_entries(devices: list[Device]) -> list[dict[str, Any]]:
    """pciHostDevices entries, in profile order, spelled as KubeVirt (and Cozystack) write them."""
    return [
        {
            "pciVendorSelector": d.pci_vendor_selector,
            "resourceName": d.resource_name,
            "externalResourceProvider": d.external_resource_provider,
        }
        for d in devices
        if d.pci_vendor_selector is not None
    ]


def mdev_entries(devices: list[Device]) -> list[dict[str, Any]]:
    """mediatedDevices entries, in profile order."""
    return [
        {
            "mdevNameSelector": d.mdev_name_selector,
            "resourceName": d.resource_name,
            "externalResourceProvider": d.external_resource_provider,
        }
        for d in devices
        if d.mdev_name_selector is not None
    ]


def mdev_configuration(config: MediatedDevicesConfiguration) -> dict[str, Any]:
    """KubeVirt's mediatedDevicesConfiguration as written in the profile (unset fields left out)."""
    data: dict[str, Any] = to_data(config)
    return data
