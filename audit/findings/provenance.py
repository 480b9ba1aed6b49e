"""Which profile field should own a drifted GPU value, and the fix, in one sentence.

Every rule names the contract field of clusters/<name>/gpu-profile.yaml (DESIGN §3) that the
renderer turns into the drifted path, or platform.yaml for platform values the profile does not
own. The sentence ends with what happens to a hand edit, from the finding's revert class.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from renderer.cozystack_names import GPU_OPERATOR, HAMI, PLATFORM_PACKAGE, PLATFORM_VALUES
from renderer.flux_names import FLUX_GPU_OPERATOR_RELEASE, FLUX_HAMI_RELEASE
from renderer.profile import LoadedProfile, platform_path, profile_path

from audit.compare.patterns import compile_pattern, matches
from audit.findings.finding import Finding, Source

__all__ = ["ProfileContext", "explain", "patch_command"]

WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"


@dataclass(frozen=True)
class ProfileContext:
    cluster: str
    platform: str
    """cozystack or flux (from the profile; cozystack when a platform Package is desired)."""
    profile: LoadedProfile | None = None

    @property
    def profile_file(self) -> str:
        return self.profile.file if self.profile else profile_path(self.cluster)

    @property
    def platform_file(self) -> str:
        return platform_path(self.cluster)

    def source(self, field: tuple[str, ...], file: str | None = None) -> Source:
        file = file or self.profile_file
        line = 0
        if self.profile is not None and file == self.profile.file:
            line = self.profile.line(*field)
        return Source(file, ".".join(field), line)


def _consequence(finding: Finding) -> str:
    release = finding.revert_release or "the release"
    upgrade = release.rpartition("/")[2]
    return {
        "next-upgrade": f"a hand edit will be lost at the next {upgrade} upgrade",
        "next-reconcile": "a hand edit is lost at the next reconcile",
        "never": "nothing reverts it, so git and the cluster disagree until it is codified",
        "unknown": "whether anything reverts it is unknown",
    }[finding.revert]


Rule = Callable[[Finding, ProfileContext, tuple[str, ...]], tuple[Source, str] | None]


def _kubevirt(f: Finding, ctx: ProfileContext, fp: tuple[str, ...]) -> tuple[Source, str] | None:
    cons = _consequence(f)
    base = ("spec", "configuration")
    if fp[:3] == (*base, "permittedHostDevices"):
        src = ctx.source(("spec", "devices"))
        if any(d.startswith("duplicate ") for d in f.details):
            return src, (
                f"delete the duplicate entries from the live {f.object} (kubectl edit), keeping "
                f"the one spec.devices of {src.file} declares: a selector may appear once there, "
                f"and virt-handler advertises one resource per selector; {cons}"
            )
        if f.type == "removed":
            return src, (
                f"the device list lost entries git declares: restore them, or remove them from "
                f"spec.devices of {src.file} (set spec.replaceDefaults to drop platform defaults)"
            )
        return src, f"move this device into spec.devices of {src.file}; {cons}"
    if fp[:4] == (*base, "developerConfiguration", "featureGates"):
        if ctx.platform == "flux":
            src = ctx.source(("spec", "kubevirt", "featureGates"))
            return (
                src,
                f"list the feature gates in spec.kubevirt.featureGates of {src.file}; {cons}",
            )
        src = ctx.source(("spec", "variant"))
        return src, (
            "on Cozystack the kubevirt chart writes the gate list (HostDevices when "
            f"spec.variant enables GPUs in {src.file}); do not edit the CR: {cons}"
        )
    if fp[:3] == (*base, "mediatedDevicesConfiguration"):
        src = ctx.source(("spec", "mediatedDevicesConfiguration"))
        return src, f"set it in spec.mediatedDevicesConfiguration of {src.file}; {cons}"
    return None


_GPU_VALUE_FIELDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("gpu", "permittedHostDevices"), ("spec", "devices")),
    (("gpu", "replaceDefaults"), ("spec", "replaceDefaults")),
    (("gpu", "mediatedDevicesConfiguration"), ("spec", "mediatedDevicesConfiguration")),
    (("gpu", "vgpuManager"), ("spec", "vgpu", "manager")),
    (("gpu", "vgpuDeviceManager"), ("spec", "vgpu", "deviceManager")),
    (("bundles", "iaas", "gpuOperatorVariant"), ("spec", "variant")),
    (("bundles", "enabledPackages"), ("spec", "variant")),
    (("bundles", "disabledPackages"), ("spec", "variant")),
    (("permittedHostDevices",), ("spec", "devices")),
    (("extraFeatureGates",), ("spec", "variant")),
    (("mediatedDevicesConfiguration",), ("spec", "mediatedDevicesConfiguration")),
    (("gpu-operator", "vgpuManager"), ("spec", "vgpu", "manager")),
    (("gpu-operator", "vgpuDeviceManager"), ("spec", "vgpu", "deviceManager")),
)


def _package(f: Finding, ctx: ProfileContext, fp: tuple[str, ...]) -> tuple[Source, str] | None:
    cons = _consequence(f)
    name = f.object.name
    if f.type == "orphan" and name == GPU_OPERATOR:
        src = ctx.source(("spec", "variant"))
        return src, (
            f"spec.variant of {src.file} no longer enables the GPU Operator through the bundle, "
            "and helm.sh/resource-policy: keep left this Package running it: delete it "
            f"(kubectl delete packages.cozystack.io {GPU_OPERATOR}) or enable it in the "
            "profile"
        )
    if f.type in ("orphan", "unmanaged"):
        if name == GPU_OPERATOR:
            src = ctx.source(("spec", "variant"))
            return src, (
                f"codify it: spec.variant: container in {src.file} makes the renderer emit this "
                "Package; otherwise delete it"
            )
        if name == HAMI:
            src = ctx.source(("spec", "hami"))
            return src, f"codify it with spec.hami in {src.file}, or delete it"
        return None
    if name == GPU_OPERATOR and fp == ("spec", "variant"):
        src = ctx.source(("spec", "variant"))
        return src, f"set spec.variant in {src.file} (one variant per cluster); {cons}"
    in_values = fp[:2] == ("spec", "components") and fp[3:4] == ("values",)
    values = fp[4:] if in_values else ()
    for prefix, field in _GPU_VALUE_FIELDS:
        if values[: len(prefix)] == prefix:
            src = ctx.source(field)
            return src, f"set it through {'.'.join(field)} of {src.file}; {cons}"
    if name == PLATFORM_PACKAGE and fp[:4] == PLATFORM_VALUES:
        src = Source(ctx.platform_file, ".".join(fp).replace(".*", "[]"))
        return src, f"set {'.'.join(values) or 'it'} in {src.file}; {cons}"
    return None


_CLUSTER_POLICY = (
    (("spec", "driver", "licensingConfig"), ("spec", "vgpu", "licensing")),
    (("spec", "vgpuManager"), ("spec", "vgpu", "manager")),
    (("spec", "vgpuDeviceManager"), ("spec", "vgpu", "deviceManager")),
    (("spec", "devicePlugin"), ("spec", "hami")),
)


def _cluster_policy(
    f: Finding, ctx: ProfileContext, fp: tuple[str, ...]
) -> tuple[Source, str] | None:
    cons = _consequence(f)
    for prefix, field in _CLUSTER_POLICY:
        if fp[: len(prefix)] == prefix:
            src = ctx.source(field)
            return src, f"set it through {'.'.join(field)} of {src.file}; {cons}"
    if fp[:1] == ("spec",):
        src = ctx.source(("spec", "variant"))
        return src, (
            f"the GPU Operator's operands follow spec.variant of {src.file} (the variant's "
            f"values files); {cons}"
        )
    return None


# Exactly the paths renderer.values.flux.gpu_operator_values writes, each with the field that
# sets it; any other value of the release is not the profile's.
_HELMRELEASE = tuple(
    (compile_pattern(pattern), field)
    for pattern, field in (
        ("spec/driftDetection/**", ("spec", "flux", "driftDetection")),
        ("spec/interval", ("spec", "flux", "interval")),
        ("spec/chart/spec/version", ("spec", "gpuOperatorVersion")),
        ("spec/values/vgpuManager/repository", ("spec", "vgpu", "manager")),
        ("spec/values/vgpuManager/image", ("spec", "vgpu", "manager")),
        ("spec/values/vgpuManager/version", ("spec", "vgpu", "manager")),
        ("spec/values/vgpuManager/imagePullSecrets/**", ("spec", "vgpu", "manager")),
        ("spec/values/vgpuManager/enabled", ("spec", "variant")),
        ("spec/values/vgpuDeviceManager/enabled", ("spec", "vgpu", "deviceManager")),
        ("spec/values/driver/licensingConfig/**", ("spec", "vgpu", "licensing")),
        ("spec/values/devicePlugin/enabled", ("spec", "variant")),
        ("spec/values/driver/enabled", ("spec", "variant")),
        ("spec/values/sandboxWorkloads/enabled", ("spec", "variant")),
        ("spec/values/sandboxWorkloads/defaultWorkload", ("spec", "variant")),
        ("spec/values/vfioManager/enabled", ("spec", "variant")),
        ("spec/values/ccManager/enabled", ("spec", "variant")),
        ("spec/values", ("spec", "variant")),
    )
)


def _helmrelease(f: Finding, ctx: ProfileContext, fp: tuple[str, ...]) -> tuple[Source, str] | None:
    release = (f.object.namespace, f.object.name)
    if f.type == "suspended" or ctx.platform != "flux":
        return None
    if release not in (FLUX_GPU_OPERATOR_RELEASE, FLUX_HAMI_RELEASE):
        return None  # a HelmRelease of the same name elsewhere is not the profile's
    for pattern, field in _HELMRELEASE:
        if matches(pattern, fp):
            if release == FLUX_HAMI_RELEASE and fp[:2] == ("spec", "values"):
                return None  # the profile sets no value of HAMi's release
            src = ctx.source(field)
            return src, f"set it through {'.'.join(field)} of {src.file}; {_consequence(f)}"
    return None


def _node(f: Finding, ctx: ProfileContext, fp: tuple[str, ...]) -> tuple[Source, str] | None:
    if fp[:3] != ("metadata", "labels", WORKLOAD_LABEL):
        return None
    node = f.object.name
    src = ctx.source(("spec", "nodes", node))
    want = f.desired if isinstance(f.desired, str) else "<workload>"
    return src, (
        f"relabel it (kubectl label node {node} {WORKLOAD_LABEL}={want} --overwrite), or change "
        f"spec.nodes.{node} in {src.file}: nodes are never in git, so nothing reverts a label"
    )


def _vm(f: Finding, ctx: ProfileContext, fp: tuple[str, ...]) -> tuple[Source, str] | None:
    if "deviceName" not in fp:
        return None
    src = ctx.source(("spec", "devices"))
    return src, (
        f"add a device with resourceName {f.live} to spec.devices of {src.file}, or point the "
        "VM at a permitted resourceName"
    )


_RULES: dict[tuple[str, str], Rule] = {
    ("kubevirt.io", "KubeVirt"): _kubevirt,
    ("cozystack.io", "Package"): _package,
    ("nvidia.com", "ClusterPolicy"): _cluster_policy,
    ("helm.toolkit.fluxcd.io", "HelmRelease"): _helmrelease,
    ("", "Node"): _node,
    ("kubevirt.io", "VirtualMachine"): _vm,
}


def patch_command(f: Finding) -> str:
    """`kubectl patch` that sets the field back to what git declares (removes it if undeclared)."""
    ns = f" -n {shlex.quote(f.object.namespace)}" if f.object.namespace else ""
    kind = f.object.kind.lower()
    resource = f"{kind}.{f.object.group}" if f.object.group else kind
    if f.desired is None:
        patch: list[dict[str, Any]] = [{"op": "remove", "path": f.path}]
    else:
        patch = [{"op": "add", "path": f.path, "value": f.desired}]
    target = f"{resource} {shlex.quote(f.object.name)}{ns}"
    return f"kubectl patch {target} --type=json -p {shlex.quote(json.dumps(patch))}"


def _unowned(f: Finding, ctx: ProfileContext, fp: tuple[str, ...]) -> str:
    """The fix of a value in a release the profile renders that no profile field sets."""
    release = (f.object.namespace, f.object.name)
    if ctx.platform != "flux" or release not in (FLUX_GPU_OPERATOR_RELEASE, FLUX_HAMI_RELEASE):
        return ""
    if f.type not in ("modified", "added") or fp[:2] != ("spec", "values"):
        return ""
    # a value git declares is re-applied, never spelled out (it may be a redacted one)
    apply = "kubectl apply --server-side --force-conflicts -f -"
    revert = (
        patch_command(f)
        if f.desired is None
        else f"gpu-gitops build --cluster {ctx.cluster} | {apply}"
    )
    return (
        f"not owned by the profile: no field of {ctx.profile_file} sets "
        f"{'.'.join(fp)}, so the profile cannot carry it; revert it: {revert}"
    )


def explain(
    finding: Finding, ctx: ProfileContext, field_path: tuple[str, ...]
) -> tuple[Source | None, str]:
    """(profile source, fix sentence) for a finding; no source when no profile field owns it
    (with a fix that says so where the object is the profile's, else "")."""
    rule = _RULES.get((finding.object.group, finding.object.kind))
    found = rule(finding, ctx, field_path) if rule else None
    if found is None:
        return None, _unowned(finding, ctx, field_path)
    return found
