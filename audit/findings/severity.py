"""How bad a finding is: GPU wiring first, then what survives the next reconcile.

Why this exists: severity orders every report and sets the exit code's meaning of "drift" (info
is not drift); it depends on which objects and paths carry the GPU wiring, a table of its own,
and not on how the finding is reverted (classify.py), except that medium needs drift that lasts.

Severity rules:

  high    GPU wiring paths (GPU_PATHS: permittedHostDevices, featureGates,
          mediatedDevicesConfiguration, the gpu-operator Package's variant and components, the
          platform's gpu.* and GPU bundle keys, ClusterPolicy operand keys, GPU HelmRelease values);
          a VM asking for a device nothing permits; a missing or orphaned GPU object
  medium  other paths of GPU objects that survive the next reconcile; unmanaged GPU objects;
          suspended GPU or git-delivery Flux objects; Node workload labels
  low     everything else: metadata, non-GPU objects, drift the next reconcile removes
  info    live-only fields of objects without managedFields (a default cannot be told from an
          edit), except GPU wiring, which no default explains: high
"""

from __future__ import annotations

import re

from audit.compare.patterns import Pattern, compile_pattern, matches
from audit.findings.finding import Finding, Severity

__all__ = ["GPU_KINDS", "GPU_PATHS", "is_gpu_object", "is_gpu_path", "severity_of"]

_P = compile_pattern
GPU_PATHS: dict[tuple[str, str], tuple[Pattern, ...]] = {
    ("kubevirt.io", "KubeVirt"): (
        _P("spec/configuration/permittedHostDevices/**"),
        _P("spec/configuration/developerConfiguration/featureGates/**"),
        _P("spec/configuration/mediatedDevicesConfiguration/**"),
    ),
    ("cozystack.io", "Package"): (
        _P("spec/variant"),  # meaningful on cozystack.gpu-operator (checked by name below)
        _P("spec/components/gpu-operator/**"),
        _P("spec/components/kubevirt/values/permittedHostDevices/**"),
        _P("spec/components/kubevirt/values/extraFeatureGates/**"),
        _P("spec/components/kubevirt/values/mediatedDevicesConfiguration/**"),
        _P("spec/components/platform/values/gpu/**"),
        _P("spec/components/platform/values/bundles/iaas/gpuOperatorVariant"),
        _P("spec/components/platform/values/bundles/enabledPackages/**"),
        _P("spec/components/platform/values/bundles/disabledPackages/**"),
    ),
    ("nvidia.com", "ClusterPolicy"): tuple(
        _P(f"spec/{k}/**")
        for k in (
            "sandboxWorkloads",
            "sandboxDevicePlugin",
            "vfioManager",
            "vgpuManager",
            "vgpuDeviceManager",
            "driver",
            "devicePlugin",
        )
    ),
    ("helm.toolkit.fluxcd.io", "HelmRelease"): (_P("spec/values/**"),),
}
GPU_KINDS = frozenset(
    {("kubevirt.io", "KubeVirt"), ("nvidia.com", "ClusterPolicy"), ("cozystack.io", "Package")}
)
_GPU_NAMES = re.compile(r"(gpu-operator|hami|kubevirt|nvidia)", re.IGNORECASE)


def is_gpu_object(group: str, kind: str, name: str) -> bool:
    if (group, kind) in (("kubevirt.io", "KubeVirt"), ("nvidia.com", "ClusterPolicy")):
        return True
    if (group, kind) in (("cozystack.io", "Package"), ("helm.toolkit.fluxcd.io", "HelmRelease")):
        return bool(_GPU_NAMES.search(name)) or name == "cozystack.cozystack-platform"
    return False


def is_gpu_path(group: str, kind: str, name: str, field_path: tuple[str, ...]) -> bool:
    if not is_gpu_object(group, kind, name):
        return False
    if (group, kind) == ("cozystack.io", "Package") and field_path == ("spec", "variant"):
        return name == "cozystack.gpu-operator"
    if (group, kind) == ("helm.toolkit.fluxcd.io", "HelmRelease") and name in (
        "cozystack-platform",
        "kubevirt",
    ):
        return False  # their values are the Packages' (checked there)
    return any(matches(p, field_path) for p in GPU_PATHS.get((group, kind), ()))


def severity_of(finding: Finding, field_path: tuple[str, ...] = ()) -> Severity:
    ref = finding.object
    gpu_object = is_gpu_object(ref.group, ref.kind, ref.name)
    if finding.type == "orphan":
        return "high" if ref.name == "cozystack.gpu-operator" or gpu_object else "medium"
    if finding.type == "unmanaged":
        return "medium" if gpu_object else "low"
    if finding.type == "suspended":
        return "medium" if gpu_object or ref.kind in ("Kustomization", "GitRepository") else "low"
    if finding.type == "missing":
        return "high" if gpu_object else "medium"
    if is_gpu_path(ref.group, ref.kind, ref.name, field_path):
        return "high"  # whoever wrote it, managedFields or not (DESIGN §6)
    if finding.type == "added" and not finding.attributed:
        return "info"
    if field_path[:1] == ("metadata",):
        return "low"
    if gpu_object and finding.revert in ("never", "next-upgrade", "unknown"):
        return "medium"
    return "low"
