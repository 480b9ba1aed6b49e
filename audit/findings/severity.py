"""How bad a finding is: GPU wiring first, then what survives the next reconcile.

Why this exists: severity orders every report and sets the exit code's meaning of "drift" (info
is not drift); it depends on which objects and paths carry the GPU wiring, a table of its own,
and not on how the finding is reverted (classify.py), except that medium needs drift that lasts.

Severity rules:

GPU objects are those that carry GPU wiring, by what they are, never by a name pattern: the KubeVirt
CR and the GPU Operator's ClusterPolicy by kind; the Packages and Helm releases that install the GPU
stack, as the renderer names them (GPU_PACKAGES, GPU_RELEASES). A chart that merely has "nvidia"
in its name (a DCGM exporter, say) carries no wiring and is not one.

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

from renderer.cozystack_names import (
    GPU_OPERATOR,
    GPU_OPERATOR_RELEASE,
    HAMI,
    HAMI_RELEASE,
    KUBEVIRT,
    KUBEVIRT_RELEASE,
    PLATFORM_PACKAGE,
    PLATFORM_RELEASE,
)
from renderer.flux_names import FLUX_GPU_OPERATOR_RELEASE, FLUX_HAMI_RELEASE

from audit.compare.patterns import Pattern, compile_pattern, matches
from audit.findings.finding import Finding, Severity

__all__ = [
    "GPU_PACKAGES",
    "GPU_PATHS",
    "GPU_RELEASES",
    "is_gpu_object",
    "is_gpu_path",
    "severity_of",
]

_P = compile_pattern
GPU_PATHS: dict[tuple[str, str], tuple[Pattern, ...]] = {
    ("kubevirt.io", "KubeVirt"): (
        _P("spec/configuration/permittedHostDevices/**"),
        _P("spec/configuration/developerConfiguration/featureGates/**"),
        _P("spec/configuration/mediatedDevicesConfiguration/**"),
    ),
    ("cozystack.io", "Package"): (
        _P("spec/variant"),  # the GPU Operator's variant on its Package (checked below)
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
_WIRING_KINDS = frozenset({("kubevirt.io", "KubeVirt"), ("nvidia.com", "ClusterPolicy")})
"""Kinds that are GPU wiring whatever their name: the KubeVirt CR, the GPU Operator's policy."""
GPU_PACKAGES = frozenset({PLATFORM_PACKAGE, KUBEVIRT, GPU_OPERATOR, HAMI})
"""Cozystack Packages that carry GPU wiring: the platform's GPU values and bundle keys, and the
Packages of the GPU stack."""
GPU_RELEASES = frozenset(
    {
        PLATFORM_RELEASE,
        KUBEVIRT_RELEASE,
        GPU_OPERATOR_RELEASE,
        HAMI_RELEASE,
        FLUX_GPU_OPERATOR_RELEASE,
        FLUX_HAMI_RELEASE,
    }
)
"""(namespace, name) of the HelmReleases that install the GPU stack: Cozystack's, generated from
the Packages, and the plain-Flux bases'."""
_RELEASES_OF_PACKAGES = frozenset({PLATFORM_RELEASE, KUBEVIRT_RELEASE})
"""Releases whose values are their Package's: GPU paths are checked on the Package instead."""
_PACKAGE = ("cozystack.io", "Package")
_HELM_RELEASE = ("helm.toolkit.fluxcd.io", "HelmRelease")


def is_gpu_object(group: str, kind: str, namespace: str, name: str) -> bool:
    """Whether the object carries GPU wiring (see the module docstring)."""
    if (group, kind) in _WIRING_KINDS:
        return True
    if (group, kind) == _PACKAGE:
        return name in GPU_PACKAGES
    if (group, kind) == _HELM_RELEASE:
        return (namespace, name) in GPU_RELEASES
    return False


def is_gpu_path(
    group: str, kind: str, namespace: str, name: str, field_path: tuple[str, ...]
) -> bool:
    """Whether the field is GPU wiring: a GPU_PATHS path of a GPU object."""
    if not is_gpu_object(group, kind, namespace, name):
        return False
    if (group, kind) == _PACKAGE and field_path == ("spec", "variant"):
        return name == GPU_OPERATOR  # the variant of another Package is not the GPU's
    if (group, kind) == _HELM_RELEASE and (namespace, name) in _RELEASES_OF_PACKAGES:
        return False
    return any(matches(p, field_path) for p in GPU_PATHS.get((group, kind), ()))


def _paths_within(field_path: tuple[str, ...], value: object) -> list[tuple[str, ...]]:
    """`field_path` and, where a whole map was added or removed there, every path inside it: a
    `developerConfiguration: {featureGates: [GPU]}` added whole is a gate added."""
    out = [field_path]
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _paths_within((*field_path, str(key)), sub)
    elif isinstance(value, list):
        for sub in value:
            out += _paths_within((*field_path, "*"), sub)
    return out


def severity_of(finding: Finding, field_path: tuple[str, ...] = ()) -> Severity:
    ref = finding.object
    gpu_object = is_gpu_object(ref.group, ref.kind, ref.namespace, ref.name)
    if finding.type == "orphan":
        return "high" if gpu_object else "medium"
    if finding.type == "unmanaged":
        return "medium" if gpu_object else "low"
    if finding.type == "suspended":
        return "medium" if gpu_object or ref.kind in ("Kustomization", "GitRepository") else "low"
    if finding.type == "missing":
        return "high" if gpu_object else "medium"
    whole = {"added": finding.live, "removed": finding.desired}.get(finding.type)
    if any(
        is_gpu_path(ref.group, ref.kind, ref.namespace, ref.name, path)
        for path in _paths_within(field_path, whole)
    ):
        return "high"  # whoever wrote it, managedFields or not (DESIGN §6)
    if finding.type == "added" and not finding.attributed:
        return "info"
    if field_path[:1] == ("metadata",):
        return "low"
    if gpu_object and finding.revert in ("never", "next-upgrade", "unknown"):
        return "medium"
    return "low"
