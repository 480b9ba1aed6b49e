"""Cozystack's built-in GPU device tables, as the platform chart merges them into the KubeVirt CR.

Source: cozystack/cozystack@3c780acd (main; identical in v1.5.0..v1.6.2)
packages/core/platform/files/gpu-passthrough-defaults.yaml and gpu-vgpu-defaults.yaml.
Order matters: the chart concatenates defaults first, then the user's entries.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PASSTHROUGH_DEFAULTS", "VGPU_MDEV_DEFAULTS"]

PASSTHROUGH_DEFAULTS: tuple[dict[str, Any], ...] = (
    {
        "pciVendorSelector": "10DE:2335",
        "resourceName": "nvidia.com/GH100_H200_SXM_141GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:2330",
        "resourceName": "nvidia.com/GH100_H100_SXM5_80GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:2331",
        "resourceName": "nvidia.com/GH100_H100_PCIE",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:2321",
        "resourceName": "nvidia.com/GH100_H100L_94GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:26B9",
        "resourceName": "nvidia.com/AD102GL_L40S",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:26B5",
        "resourceName": "nvidia.com/AD102GL_L40",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:27B8",
        "resourceName": "nvidia.com/AD104GL_L4",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:20B2",
        "resourceName": "nvidia.com/GA100_A100_SXM4_80GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:20B0",
        "resourceName": "nvidia.com/GA100_A100_SXM4_40GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:20B5",
        "resourceName": "nvidia.com/GA100_A100_PCIE_80GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:20F1",
        "resourceName": "nvidia.com/GA100_A100_PCIE_40GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:20B7",
        "resourceName": "nvidia.com/GA100GL_A30_PCIE",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:2235",
        "resourceName": "nvidia.com/GA102GL_A40",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:2236",
        "resourceName": "nvidia.com/GA102GL_A10",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:1EB8",
        "resourceName": "nvidia.com/TU104GL_TESLA_T4",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:1DB1",
        "resourceName": "nvidia.com/GV100GL_TESLA_V100_SXM2_16GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:1DB5",
        "resourceName": "nvidia.com/GV100GL_TESLA_V100_SXM2_32GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:1DB4",
        "resourceName": "nvidia.com/GV100GL_TESLA_V100_PCIE_16GB",
        "externalResourceProvider": True,
    },
    {
        "pciVendorSelector": "10DE:1DF6",
        "resourceName": "nvidia.com/GV100GL_TESLA_V100S_PCIE_32GB",
        "externalResourceProvider": True,
    },
)
"""vfio-pci passthrough: pciHostDevices, used when the variant is default (passthrough)."""

VGPU_MDEV_DEFAULTS: tuple[dict[str, Any], ...] = (
    {
        "mdevNameSelector": "NVIDIA A100-40C",
        "resourceName": "nvidia.com/A100-40C",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA A100-80C",
        "resourceName": "nvidia.com/A100-80C",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA A40-48Q",
        "resourceName": "nvidia.com/A40-48Q",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA A40-24Q",
        "resourceName": "nvidia.com/A40-24Q",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA A30-24C",
        "resourceName": "nvidia.com/A30-24C",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA A10-24Q",
        "resourceName": "nvidia.com/A10-24Q",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA V100D-32C",
        "resourceName": "nvidia.com/V100D-32C",
        "externalResourceProvider": True,
    },
    {
        "mdevNameSelector": "NVIDIA T4-16Q",
        "resourceName": "nvidia.com/T4-16Q",
        "externalResourceProvider": True,
    },
)
"""vgpu: mediatedDevices, used only when gpu.vgpuDeviceManager.enabled (and not replaceDefaults)."""
