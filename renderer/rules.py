"""The rules of DESIGN §4 that a decoded profile must follow (sources: research/cozystack.md §7).

Each check returns Problems (errors or warnings) naming the file, line, field and the fix.
Pure: works on a LoadedProfile, reads no files.
"""

from __future__ import annotations

import re
from typing import Any

from renderer.cozystack import (
    BUNDLE_VARIANTS,
    GPU_OPERATOR,
    SUPPORTED_VERSIONS,
    effective_values,
)
from renderer.defaults import PASSTHROUGH_DEFAULTS, VGPU_MDEV_DEFAULTS
from renderer.errors import Problem, Severity
from renderer.model import DNS_SUBDOMAIN
from renderer.profile import PLATFORM_FILE, LoadedProfile
from renderer.schema import field_path

__all__ = ["check_profile"]

_EXTENDED_RESOURCE = re.compile(
    rf"(?P<domain>{DNS_SUBDOMAIN})/(?P<name>[A-Za-z0-9]([-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?)"
)
_SANDBOX_PCI_NAME = re.compile(r"nvidia\.com/[A-Z0-9_]+")
_MDEV_ARCHITECTURES = ("pascal", "volta", "turing", "ampere")
_SRIOV_VGPU_ARCHITECTURES = ("ada", "blackwell")
_Path = tuple[str | int, ...]


class _Checker:
    def __init__(self, lp: LoadedProfile):
        self.lp = lp
        self.spec = lp.profile.spec
        self.cozystack = self.spec.platform.type == "cozystack"
        self.problems: list[Problem] = []

    def add(self, path: _Path, message: str, severity: Severity = "error") -> None:
        line = self.lp.line(*path)
        self.problems.append(Problem(self.lp.file, line, field_path(path), message, severity))

    def warn(self, path: _Path, message: str) -> None:
        self.add(path, message, "warning")

    def platform_problem(self, path: _Path, message: str, severity: Severity = "error") -> None:
        doc = self.lp.platform
        assert doc is not None
        line = 1
        probe = path
        while probe:
            if probe in doc.marks:
                line = doc.marks[probe]
                break
            probe = probe[:-1]
        self.problems.append(Problem(doc.file, line, field_path(path), message, severity))


def _devices(c: _Checker) -> None:
    spec = c.spec
    seen_pci: dict[str, int] = {}
    seen_mdev: dict[str, int] = {}
    defaults_pci = {d["pciVendorSelector"].upper(): d for d in PASSTHROUGH_DEFAULTS}
    defaults_mdev = {d["mdevNameSelector"]: d for d in VGPU_MDEV_DEFAULTS}
    uses_pci_defaults = c.cozystack and spec.variant == "passthrough" and not spec.replace_defaults
    uses_mdev_defaults = (
        c.cozystack
        and spec.variant == "vgpu"
        and spec.vgpu.device_manager
        and not spec.replace_defaults
    )
    for i, d in enumerate(spec.devices):
        at: _Path = ("spec", "devices", i)
        if d.pci_vendor_selector and d.mdev_name_selector:
            c.add(at, "set either pciVendorSelector or mdevNameSelector, not both")
            continue  # every further check would guess which one was meant
        if not d.pci_vendor_selector and not d.mdev_name_selector:
            c.add(at, "set pciVendorSelector (a PCI device) or mdevNameSelector (a vGPU type)")
        name = d.resource_name
        m = _EXTENDED_RESOURCE.fullmatch(name)
        if m and m["domain"].endswith("kubernetes.io"):
            c.add(
                (*at, "resourceName"),
                f'"{name}": the kubernetes.io domain is reserved for Kubernetes; '
                'use the device plugin\'s, e.g. "nvidia.com/GA102GL_A10"',
            )
        elif not m or len(m["domain"]) > 253:
            c.add(
                (*at, "resourceName"),
                f'"{name}" is not a valid extended resource name '
                '(domain/name, no spaces), e.g. "nvidia.com/GA102GL_A10"',
            )
        elif (
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
        if d.pci_vendor_selector:
            sel = d.pci_vendor_selector.upper()
            if sel in seen_pci:
                c.add(
                    (*at, "pciVendorSelector"),
                    f'"{d.pci_vendor_selector}" repeats spec.devices[{seen_pci[sel]}]; '
                    "virt-handler keys devices by selector, keep one",
                )
            elif uses_pci_defaults and sel in defaults_pci:
                c.add(
                    (*at, "pciVendorSelector"),
                    f'"{d.pci_vendor_selector}" is already in '
                    f"Cozystack's default table ({defaults_pci[sel]['resourceName']}); remove it, "
                    "or set spec.replaceDefaults: true and list every device",
                )
            seen_pci.setdefault(sel, i)
            if spec.variant == "passthrough" and not d.external_resource_provider:
                c.warn(
                    (*at, "externalResourceProvider"),
                    "on passthrough the GPU Operator's sandbox "
                    "device plugin serves the device; set externalResourceProvider: true",
                )
            if spec.variant == "vgpu" and d.architecture in _SRIOV_VGPU_ARCHITECTURES:
                if c.cozystack:
                    c.add(
                        at,
                        f"SR-IOV vGPU on {d.architecture} needs KubeVirt >= 1.9 (kubevirt#16890)"
                        " and Cozystack ships 1.8.4; offer this GPU on a passthrough cluster",
                    )
                elif tuple(int(x) for x in spec.kubevirt.version.split(".")) < (1, 9):
                    c.add(
                        at,
                        f"SR-IOV vGPU on {d.architecture} needs KubeVirt >= 1.9 (kubevirt#16890);"
                        " upgrade KubeVirt and set spec.kubevirt.version",
                    )
        if d.mdev_name_selector:
            sel = d.mdev_name_selector
            if sel in seen_mdev:
                c.add(
                    (*at, "mdevNameSelector"),
                    f'"{sel}" repeats spec.devices[{seen_mdev[sel]}]; keep one',
                )
            elif uses_mdev_defaults and sel in defaults_mdev:
                c.add(
                    (*at, "mdevNameSelector"),
                    f'"{sel}" is already in Cozystack\'s vGPU default '
                    "table (used while vgpu.deviceManager is on); remove it, or set "
                    "spec.replaceDefaults: true and list every type",
                )
            seen_mdev.setdefault(sel, i)
            if spec.variant == "passthrough":
                c.warn(
                    at,
                    "passthrough drops mediatedDevices, so this device is not offered; "
                    "remove it or use variant vgpu",
                )


def _wiring(c: _Checker) -> None:
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


def _vgpu(c: _Checker) -> None:
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
        late = sorted(
            {d.architecture for d in spec.devices if d.architecture} - set(_MDEV_ARCHITECTURES)
        )
        if late and spec.variant == "vgpu":  # elsewhere the Device Manager is not deployed
            c.add(
                ("spec", "vgpu", "deviceManager"),
                f"the vGPU Device Manager runs on Pascal..Ampere "
                f"only (it crash-loops on {', '.join(late)}); set it to false",
            )
    lic = vgpu.licensing
    if lic.config_map_name:
        c.warn(
            ("spec", "vgpu", "licensing", "configMapName"),
            "deprecated by the GPU Operator: use "
            "secretName (a Secret with client_configuration_token.tok and gridd.conf)",
        )
    if lic.secret_name and not (not c.cozystack and spec.variant == "container"):
        c.warn(
            ("spec", "vgpu", "licensing", "secretName"),
            "vGPU guests license themselves (token "
            "and gridd.conf via cloud-init), so a host cluster emits nothing for it; it is used "
            "only on plain Flux with variant container, where the operator runs the driver",
        )


def _hami_and_nodes(c: _Checker) -> None:
    spec = c.spec
    if spec.hami and spec.variant == "none":
        c.add(("spec", "hami"), "HAMi needs the GPU Operator; choose a variant or set hami: false")
    if spec.hami and c.cozystack and spec.variant == "container":
        c.add(
            ("spec", "hami"),
            "on a Cozystack management cluster HAMi and the container variant both "
            "register nvidia.com/gpu; use passthrough with container-labelled nodes, or drop hami",
        )
    if (
        spec.hami
        and spec.variant in ("passthrough", "vgpu")
        and "container" not in spec.nodes.values()
    ):
        c.warn(
            ("spec", "hami"),
            "HAMi serves only nodes labelled container; label GPU nodes in spec.nodes",
        )
    node_name = re.compile(DNS_SUBDOMAIN)
    clash = {"passthrough": "vm-vgpu", "vgpu": "vm-passthrough"}.get(spec.variant)
    for node, workload in spec.nodes.items():
        at: _Path = ("spec", "nodes", node)
        if not node_name.fullmatch(node):
            c.add(at, f'"{node}" is not a node name (DNS-1123 subdomain)')
        if workload == clash:
            c.add(
                at,
                f"the variant is one value per cluster: a {workload} node on a {spec.variant} "
                "cluster gets no operands for it; label it container or "
                f"{'vm-passthrough' if spec.variant == 'passthrough' else 'vm-vgpu'}",
            )
    if spec.nodes and spec.variant in ("container", "none"):
        c.warn(
            ("spec", "nodes"),
            f"ignored: sandbox workloads are off on variant {spec.variant}, "
            "so the GPU Operator treats every node as container",
        )


def _platform(c: _Checker) -> None:
    spec = c.spec
    version = spec.platform.version
    if not c.cozystack:
        if version is not None:
            c.warn(
                ("spec", "platform", "version"), "ignored on plain Flux; set spec.kubevirt.version"
            )
        if spec.flux.drift_detection == "disabled":
            c.warn(
                ("spec", "flux", "driftDetection"),
                "hand edits of the emitted HelmReleases will go unnoticed; use enabled or warn",
            )
        return
    if version is None:
        c.add(("spec", "platform"), 'version is required on Cozystack: "1.5", "1.6" or "main"')
    elif version not in SUPPORTED_VERSIONS:
        c.add(
            ("spec", "platform", "version"),
            f'"{version}" is not supported: use "1.5", "1.6" or '
            '"main" (GPU wiring through the bundle starts at v1.5.0)',
        )
    for key in ("kubevirt", "gpuOperatorVersion"):
        if c.lp.written("spec", key):
            c.add(
                ("spec", key),
                "plain Flux only: on Cozystack the platform renders the KubeVirt CR "
                "and the GPU Operator; remove it",
            )
    _platform_values(c, version or "main")


def _platform_values(c: _Checker, version: str) -> None:
    spec, doc = c.spec, c.lp.platform
    gpu_on = spec.variant in BUNDLE_VARIANTS
    if doc is None:
        # enabledPackages is written on every variant (container removes the gpu-operator).
        c.warn(
            ("spec", "platform"),
            f"no clusters/{c.lp.name}/{PLATFORM_FILE}: "
            + ("the bundle conditions cannot be checked and " if gpu_on else "")
            + "the bundles.enabledPackages written here "
            "replaces the live list when Flux applies it; save the live Package there "
            "(kubectl get packages.cozystack.io cozystack.cozystack-platform -o yaml)",
        )
        return
    spec_doc = doc.obj.get("spec") or {}
    variant = spec_doc.get("variant")
    platform = (spec_doc.get("components") or {}).get("platform") or {}
    values: dict[str, Any] = platform.get("values") or {}
    eff = effective_values(values, variant)
    vp = ("spec", "components", "platform", "values", "bundles")
    iaas = (eff.get("bundles") or {}).get("iaas") or {}
    system = (eff.get("bundles") or {}).get("system") or {}
    if gpu_on:
        shown = f'"{variant}"' if variant else "unset (default)"
        full = system.get("variant") in ("isp-full", "isp-full-generic")
        if not iaas.get("enabled") and (*vp, "iaas", "enabled") in doc.marks and full:
            c.platform_problem(
                (*vp, "iaas", "enabled"),
                "bundles.iaas.enabled is false, so the GPU bundle installs nothing; set it to true",
            )
        elif not iaas.get("enabled"):
            c.platform_problem(
                ("spec", "variant"),
                f"bundles.iaas.enabled is off (platform "
                f"variant {shown}), so the GPU bundle installs nothing; set the Package's "
                "spec.variant to isp-full or isp-full-generic",
            )
        elif not full:
            c.platform_problem(
                (*vp, "system", "variant"),
                "the GPU bundle needs bundles.system.variant isp-full or isp-full-generic",
            )
        elif version == "main" and not system.get("enabled"):
            c.platform_problem(
                (*vp, "system", "enabled"),
                "on Cozystack main the iaas bundle requires bundles.system.enabled: true",
            )
    elif GPU_OPERATOR in ((eff.get("bundles") or {}).get("enabledPackages") or []):
        # The standalone container Package has the same name: it takes the kept one over.
        fix = (
            "the standalone container-variant Package of the same name takes it over"
            if spec.variant == "container"
            else "delete it by hand"
        )
        c.platform_problem(
            (*vp, "enabledPackages"),
            f"{GPU_OPERATOR} is removed from "
            "enabledPackages, but the live Package stays (helm.sh/resource-policy: "
            f"keep): {fix}",
            "warning",
        )
    current = iaas.get("gpuOperatorVariant")
    if not gpu_on and current not in (None, "default", "vgpu"):
        c.platform_problem(
            (*vp, "iaas", "gpuOperatorVariant"),
            f'"{current}" makes the bundle fail to render; it is reset to "default"',
            "warning",
        )


def _audit(c: _Checker) -> None:
    audit = c.spec.audit
    if audit is not None and not audit.image:
        c.add(
            ("spec", "audit", "image"),
            "is required when spec.audit is set: name the image that holds gpu-gitops, "
            "e.g. ghcr.io/example/gpu-gitops:0.1.0",
        )


_CHECKS = (_platform, _devices, _wiring, _vgpu, _hami_and_nodes, _audit)


def check_profile(lp: LoadedProfile) -> list[Problem]:
    """Every rule problem of a profile, errors and warnings, in file and line order."""
    c = _Checker(lp)
    for check in _CHECKS:
        check(c)
    return sorted(c.problems, key=lambda p: (p.file, p.line, p.severity, p.field))
