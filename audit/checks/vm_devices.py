"""VirtualMachines' GPUs against the live KubeVirt CR's permittedHostDevices (DESIGN §6).

Why this exists: a VM asking for a device no permitted `resourceName` names does not start
(virt-controller refuses it), and a VM using a device only a hand edit permits stops starting
once that edit is reverted. Both are read off live objects only; the findings made so far say
which permittedHostDevices drifted.
"""

from __future__ import annotations

from typing import Any

from kubedata.diff import Item
from kubedata.objects import KubeObject, json_pointer, key_of
from renderer.cozystack_names import KUBEVIRT_RELEASE

from audit.checks.wiring import permitted_resources
from audit.checks.wiring_vs_live import wiring_controller
from audit.findings.attribute import ManagedEntry, attribute, managed_entries
from audit.findings.classify import Controller
from audit.findings.finding import Finding, ObjectRef
from audit.kinds import KUBEVIRT, VIRTUAL_MACHINE, ns_name
from audit.sources.state import AuditState

__all__ = ["check_vms", "device_owners", "gpu_devices", "resource_names", "unpermitted"]


def gpu_devices(vm: KubeObject) -> list[tuple[tuple[str | int, ...], str]]:
    """(pointer parts, deviceName) of a VM's GPUs and host devices."""
    out = []
    base: tuple[str | int, ...] = ("spec", "template", "spec", "domain", "devices")
    devices = (
        (((vm.get("spec") or {}).get("template") or {}).get("spec") or {}).get("domain") or {}
    ).get("devices") or {}
    for list_name in ("gpus", "hostDevices"):
        for index, device in enumerate(devices.get(list_name) or ()):
            if isinstance(device, dict) and device.get("deviceName"):
                out.append(((*base, list_name, index, "deviceName"), str(device["deviceName"])))
    return out


def resource_names(value: Any) -> set[str]:
    """Every `resourceName` anywhere in a permittedHostDevices value."""
    names: set[str] = set()
    if isinstance(value, dict):
        for key, sub in value.items():
            if key == "resourceName" and isinstance(sub, str):
                names.add(sub)
            else:
                names |= resource_names(sub)
    elif isinstance(value, list):
        for sub in value:
            names |= resource_names(sub)
    return names


def check_vms(state: AuditState) -> None:
    live, findings = state.live, state.findings
    kv_key = state.expected.kubevirt
    kubevirt = live.get(kv_key) if kv_key else None
    if kubevirt is None:
        found = live.list(*KUBEVIRT)
        kubevirt = found[0] if len(found) == 1 else None
    if kubevirt is None:
        return
    if not live.requires(*VIRTUAL_MACHINE, "the check of VirtualMachines' GPU device names"):
        return
    config = (kubevirt.get("spec") or {}).get("configuration") or {}
    permitted = permitted_resources(config.get("permittedHostDevices"))
    # streamed, not kept (a cluster may run tens of thousands of VMs): per VM its devices and
    # findings, the latest handing's when a list restarts
    vms: dict[str, tuple[list[str], list[Finding]]] = {}

    def each(vm: KubeObject) -> None:
        devices = gpu_devices(vm)
        vms[ns_name(vm)] = (
            [name for _, name in devices],
            [
                unpermitted(state, vm, ptr, name, kubevirt)
                for ptr, name in devices
                if permitted is not None and name not in permitted
            ],
        )

    live.each(*VIRTUAL_MACHINE, each)
    uses: dict[str, list[str]] = {}
    for vm_name, (names, made) in vms.items():
        for name in names:
            uses.setdefault(name, []).append(vm_name)
        for finding in made:
            findings.add(finding)
    if permitted is None and vms:
        state.notes.append(
            f"{ObjectRef.of(kubevirt)} has no permittedHostDevices: virt-controller checks no "
            "GPU device names"
        )
    # VMs that depend on a drifted device (a device permitted live but not in git/release)
    for finding in findings.made:
        if finding.object.key != key_of(kubevirt) or "permittedHostDevices" not in finding.path:
            continue
        hand_added = resource_names(finding.live) - resource_names(finding.desired)
        dependents = sorted({vm for name in hand_added for vm in uses.get(name, [])})
        if dependents:
            finding.vms = dependents
            when = (
                f"after the next upgrade of {finding.revert_release}"
                if finding.revert == "next-upgrade"
                else "at the next reconcile"
                if finding.revert == "next-reconcile"
                else "if the edit is ever reverted"
            )
            finding.message += (
                f" {len(dependents)} VirtualMachine(s) use a device only this edit permits "
                f"and will not start {when}: {', '.join(dependents)}."
            )


def device_owners(vm: KubeObject, ptr: tuple[str | int, ...]) -> tuple[ManagedEntry, ...]:
    """Who wrote the VM's device at `ptr` (.../gpus/0/deviceName): an atomic device list's
    owner, or the owner of the item keyed by its name where the list is a map."""
    entries = managed_entries(vm)
    found = attribute(entries, ptr).managers
    device: Any = vm
    for part in ptr[:-1]:  # ptr was read off this VM (gpu_devices)
        device = device[part]
    if not found and device.get("name"):
        keyed = (*ptr[:-2], Item((("name", device["name"]),)), ptr[-1])
        found = attribute(entries, keyed).managers
    return found


def unpermitted(
    state: AuditState,
    vm: KubeObject,
    ptr: tuple[str | int, ...],
    name: str,
    kubevirt: KubeObject,
) -> Finding:
    """A VM asking for a GPU no permittedHostDevices entry names."""
    expected = state.expected
    planned = expected.permitted is not None and name in expected.permitted
    owners = device_owners(vm, ptr)
    finding = Finding(
        type="missing",
        object=ObjectRef.of(vm),
        path=json_pointer(ptr),
        segments=tuple(ptr),
        live=name,
        comparison="wiring",
        managers=[e.public for e in owners],
        attributed=bool(owners),
    )
    if planned:
        controller = wiring_controller(state, expected.kubevirt or key_of(kubevirt))
    else:
        controller = Controller("none")
    state.findings.finish(finding, controller, owners, vm, ("spec", "template", "deviceName"))
    finding.severity = "high"
    finding.revert = (
        "next-upgrade"
        if planned and state.ctx.platform == "cozystack"
        else ("next-reconcile" if planned else "never")
    )
    finding.revert_release = str(KUBEVIRT_RELEASE) if finding.revert == "next-upgrade" else None
    finding.message = (
        f"asks for GPU {name}, which no permittedHostDevices entry of {ObjectRef.of(kubevirt)} "
        "names: virt-controller refuses to start it"
        + (" until the profile's devices are rolled out" if planned else "")
    )
    return finding
