"""GPU risk warnings for a change of one cluster: what the diff means for the nodes and the VMs.

Pure: works on the profiles at both refs and on the objects built from them. Each warning names the
cluster, the profile line that causes it (at head; at base for what was removed) and what to do.
The warnings about devices are in device_risks.py, about what leaves the cluster in
removal_risks.py; the Risk type and the change examined are in risk_check.py.
"""

from __future__ import annotations

from renderer.profile import LoadedProfile

from prbot.device_risks import device_risks
from prbot.lifecycle import added_risks, removed_note, renamed_risks, source_risks
from prbot.nodes import node_changes
from prbot.removal_risks import kept_package_risks, removed_object_risks
from prbot.risk_check import Objects, Risk, RiskCheck, shown_names

__all__ = ["cluster_risks"]


def _variant(r: RiskCheck) -> None:
    if r.base is None:
        return
    old, new = r.base.profile.spec.variant, r.head.profile.spec.variant
    if old != new:
        r.add(
            "variant-switch",
            ("spec", "variant"),
            f"variant {old} -> {new}: the GPU Operator reworks every GPU node of the cluster "
            "(drivers, VFIO binding and device plugins are swapped) and GPU VMs restart; "
            "plan a maintenance window, stop or move GPU VMs and drain the GPU nodes first; "
            + _relabels(r, new),
        )


def _relabels(r: RiskCheck, variant: str) -> str:
    """Node labels are not in git: what to relabel by hand after the merge, for this variant."""
    changes = node_changes(r.base, r.head)
    if changes:
        return "then relabel the nodes: " + "; ".join(c.command for c in changes)
    if variant in ("container", "none"):
        return (
            "node workload labels are ignored on this variant (sandbox workloads are off); "
            "no relabel is needed"
        )
    return (
        "spec.nodes does not change: check that each GPU node's nvidia.com/gpu.workload.config "
        f"label suits {variant} (kubectl get nodes -L nvidia.com/gpu.workload.config)"
    )


def _hami(r: RiskCheck) -> None:
    spec = r.head.profile.spec
    before = r.base.profile.spec if r.base else None
    if (
        spec.variant == "container"
        and spec.hami
        and not (before and before.variant == "container" and before.hami)
    ):
        r.add(
            "container-hami",
            ("spec", "hami"),
            "variant container with HAMi: the GPU Operator's device plugin is turned off and "
            "HAMi's device plugin and scheduler hand out nvidia.com/gpu; GPU pods keep their "
            "devices until restarted and then need HAMi; check the GPU workloads against HAMi "
            "(nvidia.com/gpu, gpumem, gpucores) before merging",
        )


def _drift(r: RiskCheck) -> None:
    if r.base is None:
        return
    old = r.base.profile.spec.flux.drift_detection
    new = r.head.profile.spec.flux.drift_detection
    if old == "disabled" or new != "disabled":
        return
    releases = sorted(
        f"{k.namespace}/{k.name}"
        for k, obj in r.head_objs.items()
        if k.kind == "HelmRelease"
        and ((obj.get("spec") or {}).get("driftDetection") or {}).get("mode") == "disabled"
    )
    which = (
        f"helm-controller no longer detects or corrects hand edits of what {shown_names(releases)} "
        "installed"
        if releases
        else "this tool emits no HelmRelease here, so nothing changes today, but hand edits "
        "will go unnoticed on any it emits later"
    )
    r.add(
        "drift-detection-off",
        ("spec", "flux", "driftDetection"),
        f"driftDetection {old} -> disabled: {which}; keep enabled, or use warn to only report",
    )


def _platform(r: RiskCheck) -> None:
    if r.base is None:
        return
    old, new = r.base.profile.spec.platform, r.head.profile.spec.platform
    if old.type != new.type:
        r.add(
            "platform-version",
            ("spec", "platform", "type"),
            f"platform {old.type} -> {new.type}: every object rendered for this cluster is "
            "replaced (Flux prunes the old ones); make sure the cluster really changed platform",
        )
    elif old.version != new.version:
        r.add(
            "platform-version",
            ("spec", "platform", "version"),
            f"platform version {old.version} -> {new.version}: output is now rendered for "
            f"Cozystack {new.version}'s platform chart, but this does not upgrade the cluster; "
            "merge it together with (or after) the platform upgrade",
        )


_CHECKS = (
    _platform,
    _variant,
    kept_package_risks,
    removed_object_risks,
    device_risks,
    _hami,
    _drift,
    source_risks,
)


def cluster_risks(
    name: str,
    base: LoadedProfile | None,
    head: LoadedProfile | None,
    base_objs: Objects,
    head_objs: Objects,
    *,
    added: bool = False,
    renamed_from: str | None = None,
) -> list[Risk]:
    """The warnings for one cluster whose profile changed, was added (`base` is then what its
    platform.yaml shows is live, if anything), renamed, or removed (`head` None)."""
    if head is None:
        if base is None:
            return []
        # the cluster leaves git: every warning is at a line of its last profile
        gone = RiskCheck(name, base, base, base_objs, {})
        gone.add_base("cluster-removed", ("metadata", "name"), removed_note(base))
        removed_object_risks(gone, cluster_removed=True)
        return gone.out
    r = RiskCheck(name, base, head, base_objs, head_objs)
    if added:
        added_risks(r)
    if renamed_from is not None:
        renamed_risks(r, renamed_from)
    for check in _CHECKS:
        if not (added and check is source_risks):  # a live base has no bootstrap objects
            check(r)
    return r.out
