"""GPU risk warnings about devices: which resource names KubeVirt stops permitting, and why.

The names permitted before and after come from the built objects (on Cozystack, predicted from
the platform values the way the chart merges its default tables in), so a device that only moved
between the profile and a default table is not reported. Pure.
"""

from __future__ import annotations

from typing import Any

from renderer.cozystack_names import KUBEVIRT
from renderer.model import Device
from renderer.profile import LoadedProfile
from renderer.values.cozystack import ChartFailure, coalesce, predict_packages

from prbot.risk_check import Objects, RiskCheck, built_platform_values, shown_names

__all__ = ["device_risks", "permitted_devices"]

_GPU_VARIANTS = ("passthrough", "vgpu")
# The bundle's own conditions (iaas on, a full system variant) are checked by `validate`; a profile
# without platform.yaml cannot show them, so device wiring is predicted as if they hold.
_BUNDLE_ON = {"bundles": {"iaas": {"enabled": True}, "system": {"enabled": True}}}


def permitted_devices(lp: LoadedProfile, objs: Objects) -> dict[str, str]:
    """selector -> resourceName of every device KubeVirt will permit, from the built objects.

    On Cozystack the platform chart merges its default tables in (predicted from the built
    platform values); on plain Flux the partial KubeVirt object carries the list.
    """
    permitted: dict[str, Any] = {}
    if lp.profile.spec.platform.type == "cozystack":
        values = built_platform_values(objs)
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


def _selector(d: Device) -> str:
    """The key KubeVirt matches a device by (PCI selectors compared upper-case)."""
    return (d.pci_vendor_selector or "").upper() or d.mdev_name_selector or ""


def _device_of(lp: LoadedProfile, selector: str) -> tuple[int, Device] | None:
    return next(
        ((i, d) for i, d in enumerate(lp.profile.spec.devices) if _selector(d) == selector), None
    )


def device_risks(r: RiskCheck) -> None:
    """Resource names KubeVirt stops permitting, or a GPU variant left with none at all."""
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
            f"name(s) are no longer permitted ({shown_names(lost_all)}): VMs that use them will "
            "not start; move them to another cluster first",
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
            f"({shown_names(lost_defaults)}); VMs that use them will not start: list the ones in "
            "use in spec.devices",
        )


def _lost_device(
    r: RiskCheck, selector: str, name: str, index: int, device: Device, head: dict[str, str]
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
