"""The base a cluster new to git is reviewed against: what its platform.yaml shows is live.

A Cozystack cluster's first commit is not a new cluster: its platform Package already runs a
variant, permits devices and enables packages. The profile this module derives from platform.yaml
(variant, devices, replaceDefaults, HAMi) and the platform Package itself go through the same risk
rules as any other change. Pure.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubedata.objects import KubeObject
from kubedata.yaml_io import Marks
from renderer.cozystack_names import GPU_OPERATOR, HAMI, PLATFORM_VALUES, platform_values
from renderer.model import Device, Variant
from renderer.platform_file import PLATFORM_KEY
from renderer.profile import LiveDoc, LoadedProfile
from renderer.values.cozystack import effective_values

from prbot.risk_check import Objects

__all__ = ["live_base"]

_SELECTORS = (("pciHostDevices", "pciVendorSelector"), ("mediatedDevices", "mdevNameSelector"))


def _gpu(values: dict[str, Any]) -> dict[str, Any]:
    gpu = values.get("gpu")
    return gpu if isinstance(gpu, dict) else {}


def _devices(doc: LiveDoc, values: dict[str, Any], marks: Marks) -> list[Device]:
    """The devices platform.yaml permits, each marked at its line of platform.yaml."""
    permitted = _gpu(values).get("permittedHostDevices")
    out: list[Device] = []
    for field, key in _SELECTORS:
        entries = permitted.get(field) if isinstance(permitted, dict) else None
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict) or not entry.get(key):
                continue
            name = str(entry.get("resourceName", ""))
            line = doc.marks.get((*PLATFORM_VALUES, "gpu", "permittedHostDevices", field, i), 1)
            marks[("spec", "devices", len(out))] = line
            out.append(
                Device(
                    class_=name,
                    resource_name=name,
                    pci_vendor_selector=str(entry[key]) if key == "pciVendorSelector" else None,
                    mdev_name_selector=str(entry[key]) if key == "mdevNameSelector" else None,
                    external_resource_provider=bool(entry.get("externalResourceProvider", True)),
                )
            )
    return out


def live_base(head: LoadedProfile) -> tuple[LoadedProfile, Objects] | None:
    """(profile, objects) standing for the live cluster, from head's platform.yaml; None when
    there is none to read (plain Flux, or no platform.yaml)."""
    doc = head.platform
    if doc is None or head.profile.spec.platform.type != "cozystack":
        return None
    spec_doc: dict[str, Any] = doc.obj.get("spec") or {}
    values = platform_values(doc.obj)
    bundles = effective_values(values, spec_doc.get("variant")).get("bundles") or {}
    disabled = set(bundles.get("disabledPackages") or [])
    on = {n for n in bundles.get("enabledPackages") or [] if n not in disabled}
    variant: Variant = "none"
    if GPU_OPERATOR in on:
        vgpu = (bundles.get("iaas") or {}).get("gpuOperatorVariant") == "vgpu"
        variant = "vgpu" if vgpu else "passthrough"
    bundle_line = doc.marks.get((*PLATFORM_VALUES, "bundles", "enabledPackages"), 1)
    marks: Marks = {("spec",): 1, ("spec", "variant"): bundle_line}
    devices = _devices(doc, values, marks)
    spec = dataclasses.replace(
        head.profile.spec,
        variant=variant,
        devices=devices,
        replace_defaults=bool(_gpu(values).get("replaceDefaults")),
        hami=HAMI in on,
        nodes={},  # node labels are not in platform.yaml: every node of the profile is new
    )
    profile = dataclasses.replace(head.profile, spec=spec)
    package: KubeObject = {
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "Package",
        "metadata": {"name": PLATFORM_KEY.name},
        "spec": spec_doc,
    }
    return LoadedProfile(doc.file, profile, marks, doc), {PLATFORM_KEY: package}
