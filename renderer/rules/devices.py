"""The device rules of DESIGN §4: spec.devices, their KubeVirt wiring and the vGPU settings.

Devices must name one selector and a valid extended resource name, must not repeat one another
or Cozystack's default tables, and must suit the variant and the GPU architecture. Pure.
"""

from __future__ import annotations

import re

from kubedata.yaml_io import Path

from renderer.model import Device
from renderer.rules.checker import RuleChecker
from renderer.rules.gpus import Inferred, architecture_of, inferred_architecture
from renderer.values.defaults import PASSTHROUGH_DEFAULTS, VGPU_MDEV_DEFAULTS

__all__ = ["check_devices", "check_mdev_creators", "check_vgpu", "check_wiring"]

_SANDBOX_PCI_NAME = re.compile(r"nvidia\.com/[A-Z0-9_]+")
_MDEV_ARCHITECTURES = ("pascal", "volta", "turing", "ampere")
_SRIOV_VGPU_ARCHITECTURES = ("ada", "blackwell")


def _named(arch: Inferred, device: Device) -> str:
    """The architecture, and what it was read from when the profile does not write it."""
    return arch.architecture if device.architecture else f"{arch.architecture} ({arch.source})"


def check_devices(c: RuleChecker) -> None:
    """Each entry of spec.devices: one selector, a valid resource name, no repeats."""
    spec = c.spec
    seen_pci: dict[str, int] = {}
    seen_mdev: dict[str, int] = {}
    for i, d in enumerate(spec.devices):
        at: Path = ("spec", "devices", i)
        if d.pci_vendor_selector and d.mdev_name_selector:
            c.add(at, "set either pciVendorSelector or mdevNameSelector, not both")
            continue  # every further check would guess which one was meant
        if not d.pci_vendor_selector and not d.mdev_name_selector:
            c.add(at, "set pciVendorSelector (a PCI device) or mdevNameSelector (a vGPU type)")
        implied = inferred_architecture(d)
        if d.architecture and implied and implied.architecture != d.architecture:
            c.warn(
                (*at, "architecture"),
                f"{implied.source}, which is {implied.architecture}, not {d.architecture}; "
                "correct architecture or remove it",
            )
        _check_plugin_name(c, d, at)
        if d.pci_vendor_selector:
            _check_pci_device(c, d, i, seen_pci)
        if d.mdev_name_selector:
            _check_mdev_device(c, d, i, seen_mdev)


def _check_plugin_name(c: RuleChecker, d: Device, at: Path) -> None:
    """The resource name the sandbox device plugin advertises, where it serves the device."""
    name = d.resource_name  # its syntax is checked by decoding (syntax.EXTENDED_RESOURCE)
    if (
        d.external_resource_provider
        and d.pci_vendor_selector
        and not _SANDBOX_PCI_NAME.fullmatch(name)
    ):
        c.warn(
            (*at, "resourceName"),
            f'"{name}" does not follow the sandbox device plugin\'s '
            "naming (nvidia.com/ + the upper-case pci.ids name, '_' for spaces); confirm "
            "with kubectl describe node",
        )
    elif d.external_resource_provider and d.mdev_name_selector:
        advertised = "nvidia.com/" + re.sub(r"\s+", "_", d.mdev_name_selector)
        if name != advertised:
            c.warn(
                (*at, "resourceName"),
                f'the sandbox device plugin advertises "{advertised}" '
                f'for "{d.mdev_name_selector}", not "{name}"; '
                "confirm with kubectl describe node",
            )


def _check_pci_device(c: RuleChecker, d: Device, i: int, seen: dict[str, int]) -> None:
    """spec.devices[i], a PCI device: not repeated, not in Cozystack's defaults, served by the
    right plugin, offerable on vgpu. `seen`: the first index of each selector so far."""
    spec, at = c.spec, ("spec", "devices", i)
    sel = (d.pci_vendor_selector or "").upper()
    defaults = {x["pciVendorSelector"].upper(): x for x in PASSTHROUGH_DEFAULTS}
    uses_defaults = c.cozystack and spec.variant == "passthrough" and not spec.replace_defaults
    if sel in seen:
        c.add(
            (*at, "pciVendorSelector"),
            f'"{d.pci_vendor_selector}" repeats spec.devices[{seen[sel]}]; '
            "virt-handler keys devices by selector, keep one",
        )
    elif uses_defaults and sel in defaults:
        c.add(
            (*at, "pciVendorSelector"),
            f'"{d.pci_vendor_selector}" is already in '
            f"Cozystack's default table ({defaults[sel]['resourceName']}); remove it, "
            "or set spec.replaceDefaults: true and list every device",
        )
    seen.setdefault(sel, i)
    if spec.variant == "passthrough" and not d.external_resource_provider:
        c.warn(
            (*at, "externalResourceProvider"),
            "on passthrough the GPU Operator's sandbox "
            "device plugin serves the device; set externalResourceProvider: true",
        )
    arch = architecture_of(d)
    if spec.variant == "vgpu" and arch and arch.architecture in _SRIOV_VGPU_ARCHITECTURES:
        if c.cozystack:
            c.add(
                at,
                f"SR-IOV vGPU on {_named(arch, d)} needs KubeVirt >= 1.9 (kubevirt#16890)"
                " and Cozystack ships 1.8.4; offer this GPU on a passthrough cluster",
            )
        elif tuple(int(x) for x in spec.kubevirt.version.split(".")) < (1, 9):
            c.add(
                at,
                f"SR-IOV vGPU on {_named(arch, d)} needs KubeVirt >= 1.9 (kubevirt#16890);"
                " upgrade KubeVirt and set spec.kubevirt.version",
            )


def _check_mdev_device(c: RuleChecker, d: Device, i: int, seen: dict[str, int]) -> None:
    """spec.devices[i], a vGPU type: not repeated, not in Cozystack's defaults, offered at all.
    `seen`: the first index of each selector so far."""
    spec, at = c.spec, ("spec", "devices", i)
    sel = d.mdev_name_selector or ""
    uses_defaults = (
        c.cozystack
        and spec.variant == "vgpu"
        and spec.vgpu.device_manager
        and not spec.replace_defaults
    )
    if sel in seen:
        c.add((*at, "mdevNameSelector"), f'"{sel}" repeats spec.devices[{seen[sel]}]; keep one')
    elif uses_defaults and sel in {x["mdevNameSelector"] for x in VGPU_MDEV_DEFAULTS}:
        c.add(
            (*at, "mdevNameSelector"),
            f'"{sel}" is already in Cozystack\'s vGPU default '
            "table (used while vgpu.deviceManager is on); remove it, or set "
            "spec.replaceDefaults: true and list every type",
        )
    seen.setdefault(sel, i)
    if spec.variant == "passthrough":
        c.warn(
            at,
            "passthrough drops mediatedDevices, so this device is not offered; "
            "remove it or use variant vgpu",
        )


def check_wiring(c: RuleChecker) -> None:
    """Whether the devices reach KubeVirt at all on this variant and platform."""
    spec = c.spec
    gpu_variant = spec.variant in ("passthrough", "vgpu")
    if spec.variant == "passthrough" and c.lp.written("spec", "mediatedDevicesConfiguration"):
        c.warn(
            ("spec", "mediatedDevicesConfiguration"), "passthrough drops it; remove it or use vgpu"
        )
    if not gpu_variant and spec.devices:
        c.warn(
            ("spec", "devices"),
            f"variant {spec.variant} has no KubeVirt wiring; the devices are ignored",
        )
    if gpu_variant:
        pci = any(d.pci_vendor_selector for d in spec.devices)
        mdev = any(d.mdev_name_selector for d in spec.devices) and spec.variant == "vgpu"
        defaults = (
            c.cozystack
            and not spec.replace_defaults
            and (spec.variant == "passthrough" or spec.vgpu.device_manager)
        )
        if not (pci or mdev or defaults):
            why = "spec.replaceDefaults is true and " if spec.replace_defaults else ""
            c.warn(
                ("spec", "devices"),
                f"{why}no device is listed, so no permittedHostDevices "
                "is rendered and every GPU VM fails; list the GPUs in spec.devices",
            )
    if not c.cozystack and spec.replace_defaults:
        c.warn(("spec", "replaceDefaults"), "plain Flux has no built-in device table; remove it")


def check_vgpu(c: RuleChecker) -> None:
    """spec.vgpu: the manager image, the Device Manager and guest licensing."""
    spec, vgpu = c.spec, c.spec.vgpu
    if spec.variant == "vgpu" and not (vgpu.manager.repository and vgpu.manager.version):
        c.add(
            ("spec", "vgpu", "manager"),
            "the vGPU Manager image is not redistributable: set "
            "repository and version to the image in your private registry",
        )
    if spec.variant != "vgpu" and c.lp.written("spec", "vgpu", "manager"):
        c.warn(("spec", "vgpu", "manager"), "ignored unless spec.variant is vgpu")
    if vgpu.device_manager:
        if spec.variant != "vgpu":
            c.warn(("spec", "vgpu", "deviceManager"), "ignored unless spec.variant is vgpu")
        late = {
            _named(arch, d)
            for d in spec.devices
            if (arch := architecture_of(d)) and arch.architecture not in _MDEV_ARCHITECTURES
        }
        if late and spec.variant == "vgpu":  # elsewhere the Device Manager is not deployed
            c.add(
                ("spec", "vgpu", "deviceManager"),
                f"the vGPU Device Manager runs on Pascal..Ampere "
                f"only (it crash-loops on {', '.join(sorted(late))}); set it to false",
            )
    lic = vgpu.licensing
    if lic.secret_name and not (not c.cozystack and spec.variant == "container"):
        c.warn(
            ("spec", "vgpu", "licensing", "secretName"),
            "vGPU guests license themselves (token "
            "and gridd.conf via cloud-init), so a host cluster emits nothing for it; it is used "
            "only on plain Flux with variant container, where the operator runs the driver",
        )


def check_mdev_creators(c: RuleChecker) -> None:
    """Mediated devices need exactly one creator: the vGPU Device Manager or KubeVirt itself."""
    spec = c.spec
    if spec.variant != "vgpu":
        return
    config = spec.mediated_devices_configuration
    kubevirt = config.enabled is not False and bool(
        config.mediated_device_types
        or config.mediated_devices_types
        or any(
            n.mediated_device_types or n.mediated_devices_types
            for n in config.node_mediated_device_types or []
        )
    )
    manager = spec.vgpu.device_manager
    at: Path = ("spec", "mediatedDevicesConfiguration")
    if manager and kubevirt:
        c.add(
            at,
            "two creators of mediated devices: KubeVirt creates these types and the vGPU Device "
            "Manager (spec.vgpu.deviceManager) creates its own, each removing the other's; keep "
            "one: set vgpu.deviceManager: false, or mediatedDevicesConfiguration.enabled: false",
        )
    # a device with both selectors is an error already; which one was meant is a guess
    mdev = [
        i for i, d in enumerate(spec.devices) if d.mdev_name_selector and not d.pci_vendor_selector
    ]
    if mdev and not manager and not kubevirt:
        c.warn(
            ("spec", "devices", mdev[0], "mdevNameSelector"),
            "nothing creates this mediated device type, so no VM can get one: list its "
            "nvidia-NNN type in spec.mediatedDevicesConfiguration.mediatedDeviceTypes (KubeVirt "
            "creates it), or set spec.vgpu.deviceManager: true (Pascal..Ampere)",
        )
