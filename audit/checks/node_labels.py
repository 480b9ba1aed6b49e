"""Node GPU workload labels against the profile's spec.nodes (DESIGN §6).

Why this exists: the GPU Operator picks each node's GPU mode (passthrough, vGPU, containers) from
the `nvidia.com/gpu.workload.config` label, and nodes are not in git: nothing reverts a wrong
label, so it is only found by looking.
"""

from __future__ import annotations

from kubedata.objects import KubeObject, ObjectKey

from audit.findings.collect import Findings
from audit.findings.finding import Finding, FindingType
from audit.findings.provenance import WORKLOAD_LABEL
from audit.kinds import meta
from audit.sources.state import AuditState

__all__ = ["DEFAULT_WORKLOAD", "check_nodes", "label_finding"]

DEFAULT_WORKLOAD = {"passthrough": "vm-passthrough", "vgpu": "vm-vgpu"}
"""The workload the GPU Operator assumes for an unlabelled node, per sandbox variant."""


def check_nodes(state: AuditState) -> None:
    profile = state.desired.profile
    if profile is None:
        return
    spec = profile.profile.spec
    if not spec.nodes:
        return
    if spec.variant not in DEFAULT_WORKLOAD:
        state.notes.append(
            f"spec.nodes not checked: sandbox workloads are off on variant {spec.variant}"
        )
        return
    if not state.live.requires("", "Node", "the check of spec.nodes against Node labels"):
        return
    for node, workload in sorted(spec.nodes.items()):
        key = ObjectKey("", "Node", "", node)
        live_node = state.live.get(key)
        if live_node is None:
            if key not in state.live.unread:
                state.notes.append(f"node {node} of spec.nodes does not exist")
            continue
        finding = label_finding(state.findings, live_node, workload, spec.variant)
        state.findings.add(finding)


def label_finding(
    findings: Findings, live_node: KubeObject, workload: str, variant: str
) -> Finding | None:
    """The finding of a node whose workload label is not the profile's; None when it is."""
    label = (meta(live_node).get("labels") or {}).get(WORKLOAD_LABEL)
    if label == workload:
        return None
    segments = ("metadata", "labels", WORKLOAD_LABEL)
    ftype: FindingType = "removed" if label is None else "modified"
    finding = findings.of_field(ftype, live_node, segments, workload, label, "wiring")
    default = label is None and workload == DEFAULT_WORKLOAD[variant]
    finding.severity = "low" if default else "medium"
    finding.message = (
        f"GPU workload label is {label!r}, the profile says {workload!r}"
        if label is not None
        else f"no GPU workload label; the profile says {workload!r}"
        + (" (the operator's default here, so only the label is missing)" if default else "")
    ) + "; nodes are not in git, so nothing reverts it"
    return finding
