"""Which findings can be kept in git, and the profile edits that keep them; why the others
cannot, and the command that reverts them. Pure: findings, profile, a few live objects -> a plan.

Adoptable (DESIGN §6, issue 14): a finding whose provenance is a profile field and whose live value
that field can say.
- a device added by hand to `permittedHostDevices` (pci or mdev; on the KubeVirt CR or in Package
  values) -> `spec.devices`, with its selector, resource name and `externalResourceProvider`;
  a device removed by hand -> out of `spec.devices` (when the profile lists it);
- the GPU workload label of a Node -> `spec.nodes`;
- a feature gate added (or dropped) by hand on plain Flux -> `spec.kubevirt.featureGates`;
- `mediatedDevicesConfiguration` -> the profile's `mediatedDevicesConfiguration`;
- the vGPU manager's repository, image, version or pull secrets -> `spec.vgpu.manager`;
- HAMi or the GPU Operator enabled by hand (a hand-applied or kept Package, HelmRelease, or
  `cozystack.gpu-operator` added to the platform's `bundles.enabledPackages`) -> `spec.hami`,
  `spec.variant`;
- any other value set live in the platform Package -> `platform.yaml`.
Never adoptable: a redacted value or a platform value whose key looks like a secret (`password`,
`token`, `clientSecret`: secrets are never copied into git), and everything no profile field
renders. Whether an edit breaks a rule is known only after validation (run.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit.findings.finding import Finding
from audit.findings.provenance import patch_command
from kubedata.objects import KubeObject, ObjectKey, pointer_tokens
from kubedata.redact import secret_key, secret_paths
from renderer.cozystack_names import GPU_OPERATOR, HAMI, PLATFORM_PACKAGE, PLATFORM_VALUES
from renderer.flux_names import FLUX_HAMI_RELEASE
from renderer.profile import LoadedProfile, platform_path, profile_path
from renderer.render import WORKLOAD_LABEL

from adopt.yamledit import Edit

__all__ = ["Adoptable", "Plan", "Refused", "plan", "revert_command"]

_SELECTORS = {"pciHostDevices": "pciVendorSelector", "mediatedDevices": "mdevNameSelector"}
_VARIANTS = {"default": "passthrough", "vgpu": "vgpu", "container": "container"}
"""GPU Operator Package variants (and the bundle's gpuOperatorVariant) -> spec.variant."""
_MANAGER_FIELDS = ("repository", "image", "version", "imagePullSecrets")
_RENDERED_GATES = frozenset({"HostDevices"})
"""Gates the renderer adds itself on plain Flux (rule 4): never copied into featureGates."""


@dataclass(frozen=True)
class Adoptable:
    finding: Finding
    file: str
    """Repository-relative file the edits change."""
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Refused:
    finding: Finding
    reason: str
    revert: str


@dataclass(frozen=True)
class Plan:
    adoptable: tuple[Adoptable, ...]
    refused: tuple[Refused, ...]


@dataclass(frozen=True)
class _Context:
    cluster: str
    profile: LoadedProfile
    live: Mapping[ObjectKey, KubeObject]

    @property
    def profile_file(self) -> str:
        return profile_path(self.cluster)

    @property
    def platform_file(self) -> str:
        return platform_path(self.cluster)

    @property
    def flux(self) -> bool:
        return self.profile.profile.spec.platform.type == "flux"


class _No(Exception):
    """Not adoptable, and why."""


# -- devices -------------------------------------------------------------------------------------


def _entries(value: Any, list_name: str | None) -> list[dict[str, Any]]:
    """Device entries of a permittedHostDevices value at any depth of its pointer."""
    if isinstance(value, dict) and list_name is None:
        out: list[dict[str, Any]] = []
        for name in _SELECTORS:
            out += _entries(value.get(name), name)
        return out
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [e for e in value if isinstance(e, dict)]
    return []


def _class_name(entry: dict[str, Any]) -> str:
    """A readable class for a device only the cluster knows: its resource name, spelled out."""
    mdev = entry.get("mdevNameSelector")
    if isinstance(mdev, str) and mdev:
        return mdev.removeprefix("NVIDIA ").strip()
    name = str(entry.get("resourceName", "")).rpartition("/")[2]
    return name.replace("_", " ").strip() or str(entry.get("pciVendorSelector", "GPU"))


def _device(entry: dict[str, Any], selector: str) -> dict[str, Any]:
    # KubeVirt's own default for externalResourceProvider is false, the profile's is true: say it
    return {
        "class": _class_name(entry),
        selector: entry[selector],
        "resourceName": entry.get("resourceName", ""),
        "externalResourceProvider": bool(entry.get("externalResourceProvider", False)),
    }


def _devices(f: Finding, ctx: _Context, tokens: tuple[str, ...]) -> tuple[str, list[Edit]]:
    at = tokens.index("permittedHostDevices")
    rest = tokens[at + 1 :]
    list_name = rest[0] if rest else None
    if list_name is not None and list_name not in _SELECTORS:
        raise _No(f"{list_name} is not a device list the profile knows")
    live, desired = _entries(f.live, list_name), _entries(f.desired, list_name)
    edits: list[Edit] = []
    profile_selectors = {
        d.pci_vendor_selector or d.mdev_name_selector for d in ctx.profile.profile.spec.devices
    }

    def key(entry: dict[str, Any]) -> tuple[str, str]:
        for selector in _SELECTORS.values():
            if entry.get(selector):
                return selector, str(entry[selector])
        raise _No("a device entry has neither pciVendorSelector nor mdevNameSelector")

    have = {key(e) for e in desired}
    now = {key(e) for e in live}
    for entry in live:
        selector, value = key(entry)
        if (selector, value) not in have:
            edits.append(Edit("append", ("spec", "devices"), _device(entry, selector), selector))
    for entry in desired:
        selector, value = key(entry)
        if (selector, value) in now:
            continue
        if value not in profile_selectors:
            raise _No(
                f"the platform's default device table lists {value}, which is gone live: the "
                "profile can drop it only with spec.replaceDefaults: true and every kept device "
                "listed; edit the profile by hand"
            )
        edits.append(Edit("remove", ("spec", "devices"), {selector: value}, selector))
    if not edits and any(d.startswith("duplicate ") for d in f.details):
        raise _No(
            "the live list repeats a device selector, which spec.devices can hold only once "
            "(virt-handler advertises one resource per selector): delete the duplicate entry "
            "from the live object"
        )
    if not edits:
        raise _No("the live device list differs only in fields the profile does not set")
    return ctx.profile_file, edits


# -- the KubeVirt CR -----------------------------------------------------------------------------


def _kubevirt(f: Finding, ctx: _Context, tokens: tuple[str, ...]) -> tuple[str, list[Edit]]:
    config = ("spec", "configuration")
    if tokens[:2] != config:
        raise _No("only GPU wiring under spec.configuration comes from the profile")
    if "permittedHostDevices" in tokens:
        return _devices(f, ctx, tokens)
    if tokens[2:3] == ("mediatedDevicesConfiguration",):
        return _mdev_config(f, ctx, tokens[3:])
    if tokens[2:4] == ("developerConfiguration", "featureGates"):
        if not ctx.flux:
            raise _No(
                "on Cozystack the kubevirt chart writes the feature gates from spec.variant; "
                "no profile field takes a gate"
            )
        return _gates(f, ctx)
    raise _No("no profile field renders this part of the KubeVirt CR")


def _gates(f: Finding, ctx: _Context) -> tuple[str, list[Edit]]:
    live = [g for g in f.live or [] if isinstance(g, str)]
    desired = [g for g in f.desired or [] if isinstance(g, str)]
    path = ("spec", "kubevirt", "featureGates")
    edits = [Edit("append", path, g) for g in live if g not in desired and g not in _RENDERED_GATES]
    dropped = [g for g in desired if g not in live]
    if any(g in _RENDERED_GATES for g in dropped):
        raise _No("HostDevices is removed live, but every GPU cluster needs it (rule 4)")
    edits += [Edit("remove", path, g) for g in dropped]
    if not edits:
        raise _No("the gate list differs only in gates the renderer adds itself")
    return ctx.profile_file, edits


def _mdev_config(f: Finding, ctx: _Context, rest: tuple[str, ...]) -> tuple[str, list[Edit]]:
    path: tuple[str | int, ...] = (
        "spec",
        "mediatedDevicesConfiguration",
        *(int(t) if t.isdigit() else t for t in rest),
    )
    if f.live is None:
        return ctx.profile_file, [Edit("delete", path)]
    return ctx.profile_file, [Edit("set", path, f.live)]


# -- Packages, the ClusterPolicy, HelmReleases, Nodes --------------------------------------------


def _switch(f: Finding, ctx: _Context) -> tuple[str, list[Edit]]:
    """A GPU component enabled by hand: HAMi -> spec.hami; the GPU Operator -> spec.variant.
    Packages are cluster-wide, known by name; a HelmRelease by namespace and name."""
    ref = f.object
    package = ref.kind == "Package"
    if (package and ref.name == HAMI) or (ref.namespace, ref.name) == FLUX_HAMI_RELEASE:
        return ctx.profile_file, [Edit("set", ("spec", "hami"), True)]
    if package and ref.name == GPU_OPERATOR:
        live = ctx.live.get(f.object.key) or {}
        variant = str((live.get("spec") or {}).get("variant") or "default")
        if variant not in _VARIANTS:
            raise _No(f"the live Package runs variant {variant}, which is no profile variant")
        return ctx.profile_file, [Edit("set", ("spec", "variant"), _VARIANTS[variant])]
    raise _No("the profile has no switch for this object")


def _package(f: Finding, ctx: _Context, tokens: tuple[str, ...]) -> tuple[str, list[Edit]]:
    name = f.object.name
    if f.type in ("orphan", "unmanaged"):
        return _switch(f, ctx)
    if "permittedHostDevices" in tokens:
        return _devices(f, ctx, tokens)
    if "mediatedDevicesConfiguration" in tokens:
        at = tokens.index("mediatedDevicesConfiguration")
        return _mdev_config(f, ctx, tokens[at + 1 :])
    if "vgpuManager" in tokens:
        return _manager(f, ctx, tokens[tokens.index("vgpuManager") + 1 :])
    if name != PLATFORM_PACKAGE or tokens[:4] != PLATFORM_VALUES:
        raise _No("no profile field renders this part of the Package")
    values = tokens[4:]
    if values == ("bundles", "enabledPackages"):
        return _bundle_switch(f, ctx)
    if f.source is None or f.source.file != ctx.platform_file:
        raise _No(
            f"{'.'.join(values)} is one of the GPU keys the renderer writes from the profile; "
            "change the profile field that owns it"
        )
    if ctx.profile.platform is None:
        raise _No(
            f"{ctx.platform_file} does not exist: capture it first with "
            f"gpu-gitops import --cluster {ctx.cluster}"
        )
    secret = [t for t in values if secret_key(t)] or secret_paths(f.live)
    if secret:
        where = secret[0] if isinstance(secret[0], str) else ".".join(secret[0])
        raise _No(
            f"the value looks like a secret ({where}): secrets are never copied into git; keep "
            "it in a Secret"
        )
    path = tuple(int(t) if t.isdigit() else t for t in tokens)
    if f.live is None:
        return ctx.platform_file, [Edit("delete", path)]
    return ctx.platform_file, [Edit("set", path, f.live)]


def _bundle_switch(f: Finding, ctx: _Context) -> tuple[str, list[Edit]]:
    live, desired = list(f.live or []), list(f.desired or [])
    if GPU_OPERATOR in live and GPU_OPERATOR not in desired:
        package = ctx.live.get(f.object.key) or {}
        values: Any = package
        for token in (*PLATFORM_VALUES, "bundles", "iaas", "gpuOperatorVariant"):
            values = values.get(token) if isinstance(values, dict) else None
        variant = _VARIANTS.get(str(values or "default"))
        if variant is None:
            raise _No(f"the live gpuOperatorVariant {values} is not a profile variant")
        return ctx.profile_file, [Edit("set", ("spec", "variant"), variant)]
    raise _No(
        "bundles.enabledPackages is written from spec.variant; only the GPU Operator switched "
        "on by hand maps to a profile field"
    )


def _manager(f: Finding, ctx: _Context, rest: tuple[str, ...]) -> tuple[str, list[Edit]]:
    base = ("spec", "vgpu", "manager")
    if rest:
        if rest[0] not in _MANAGER_FIELDS:
            raise _No(f"vgpuManager.{rest[0]} is not a field of spec.vgpu.manager")
        if len(rest) > 1:
            raise _No(f"only the whole vgpuManager.{rest[0]} can be adopted")
        value = _secret_names(f.live) if rest[0] == "imagePullSecrets" else f.live
        return ctx.profile_file, [Edit("set", (*base, rest[0]), value)]
    live = f.live if isinstance(f.live, dict) else {}
    edits = [
        Edit("set", (*base, k), _secret_names(live[k]) if k == "imagePullSecrets" else live[k])
        for k in _MANAGER_FIELDS
        if k in live
    ]
    if not edits:
        raise _No("the live vgpuManager sets none of repository, image, version, imagePullSecrets")
    return ctx.profile_file, edits


def _secret_names(value: Any) -> list[str]:
    """Pull secrets by name only (`name: x` items or plain names); never their contents."""
    out = []
    for item in value or []:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str):
            raise _No("an imagePullSecrets entry names no Secret")
        out.append(name)
    return out


def _cluster_policy(f: Finding, ctx: _Context, tokens: tuple[str, ...]) -> tuple[str, list[Edit]]:
    if tokens[:2] == ("spec", "vgpuManager"):
        return _manager(f, ctx, tokens[2:])
    raise _No("the GPU Operator's other settings follow spec.variant; no profile field takes them")


def _helmrelease(f: Finding, ctx: _Context, tokens: tuple[str, ...]) -> tuple[str, list[Edit]]:
    if f.type in ("orphan", "unmanaged") and ctx.flux:
        return _switch(f, ctx)
    raise _No("the HelmRelease's settings come from the profile as a whole, not one field")


def _node(f: Finding, ctx: _Context, tokens: tuple[str, ...]) -> tuple[str, list[Edit]]:
    if tokens != ("metadata", "labels", WORKLOAD_LABEL):
        raise _No("only the GPU workload label of a Node is in the profile")
    path = ("spec", "nodes", f.object.name)
    if f.live is None:
        return ctx.profile_file, [Edit("delete", path)]
    return ctx.profile_file, [Edit("set", path, f.live)]


_Rule = Callable[[Finding, _Context, tuple[str, ...]], tuple[str, list[Edit]]]
_RULES: dict[tuple[str, str], _Rule] = {
    ("kubevirt.io", "KubeVirt"): _kubevirt,
    ("cozystack.io", "Package"): _package,
    ("nvidia.com", "ClusterPolicy"): _cluster_policy,
    ("helm.toolkit.fluxcd.io", "HelmRelease"): _helmrelease,
    ("", "Node"): _node,
}


def _why_not(f: Finding) -> str | None:
    """Reasons that hold whatever the object."""
    if f.type == "suspended":
        return "suspending a Flux object is an operation, not a profile value"
    if f.type == "missing" and f.object.kind == "VirtualMachine":
        return (
            "a VirtualMachine asks for a device no entry permits; the cluster does not say "
            "which PCI device that is: add it to spec.devices by hand, or fix the VM"
        )
    if f.type == "missing":
        return "the object is declared but absent live: there is nothing live to keep"
    # ownership first: a redacted value no profile field sets is refused for that, not as a secret
    if f.source is None:
        return "not owned by the profile: no field of gpu-profile.yaml or platform.yaml renders it"
    if f.redacted:
        return (
            "the value is redacted (a Secret's data or Helm release values, shown as a digest): "
            "redacted values are never copied into git"
        )
    return None


def _adopt_one(f: Finding, ctx: _Context) -> Adoptable | Refused:
    reason = _why_not(f)
    rule = _RULES.get((f.object.group, f.object.kind))
    if reason is None and rule is None:
        reason = "not owned by the profile: no profile field renders this object"
    if reason is None and rule is not None:
        try:
            file, edits = rule(f, ctx, pointer_tokens(f.path))
            return Adoptable(f, file, tuple(edits))
        except _No as exc:
            reason = str(exc)
    return Refused(f, reason or "", revert_command(f, ctx.cluster))


def plan(
    cluster: str,
    findings: Sequence[Finding],
    profile: LoadedProfile,
    live: Mapping[ObjectKey, KubeObject],
) -> Plan:
    """Every finding, adoptable (with its edits) or refused (with why and how to revert it)."""
    ctx = _Context(cluster, profile, live)
    out = [_adopt_one(f, ctx) for f in findings]
    return Plan(
        tuple(o for o in out if isinstance(o, Adoptable)),
        tuple(o for o in out if isinstance(o, Refused)),
    )


# -- reverting -----------------------------------------------------------------------------------


def _resource(f: Finding) -> str:
    kind = f.object.kind.lower()
    return f"{kind}.{f.object.group}" if f.object.group else kind


def _target(f: Finding) -> str:
    ns = f" -n {shlex.quote(f.object.namespace)}" if f.object.namespace else ""
    return f"{_resource(f)} {shlex.quote(f.object.name)}{ns}"


def revert_command(f: Finding, cluster: str) -> str:
    """The command that drops the drift (lets git win), without a secret in it."""
    if f.type == "suspended":
        kind = f.object.kind.lower()
        return f"flux resume {kind} {shlex.quote(f.object.name)} -n {f.object.namespace}"
    if f.type in ("orphan", "unmanaged"):
        return f"kubectl delete {_target(f)}"
    if f.object.kind == "Node" and pointer_tokens(f.path) == ("metadata", "labels", WORKLOAD_LABEL):
        node = shlex.quote(f.object.name)
        if f.desired is None:
            return f"kubectl label node {node} {WORKLOAD_LABEL}-"
        return f"kubectl label node {node} {WORKLOAD_LABEL}={f.desired} --overwrite"
    if f.type == "missing" and f.object.kind == "VirtualMachine":
        return f"kubectl edit {_target(f)}"
    if f.revert == "next-upgrade" and f.revert_release:
        ns, _, name = f.revert_release.partition("/")
        return f"flux reconcile helmrelease {shlex.quote(name)} -n {ns} --force"
    # (a redacted field git does not declare is removed: nothing secret to spell out)
    if f.type == "missing" or (f.redacted and f.desired is not None):
        # re-apply what git declares (a secret's value is never spelled out in a command)
        apply = "kubectl apply --server-side --force-conflicts -f -"
        return f"gpu-gitops build --cluster {cluster} | {apply}"
    return patch_command(f)
