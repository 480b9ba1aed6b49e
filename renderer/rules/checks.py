"""The rules of DESIGN §4 that a decoded profile must follow (sources: research/cozystack.md §7).

Each check adds Problems (errors or warnings) naming the file, line, field and the fix. The device
rules are in devices.py (the GPU tables they read: gpus.py), platform.yaml's in platform.py, the
live platform's (packages leaving the bundle, devices in use) in live_state.py; HAMi, the nodes
and the labels of the audit's PrometheusRule are checked here (the audit job's other fields are
syntax, checked as they are decoded: syntax.py).
Pure: works on a LoadedProfile, reads no files.
"""

from __future__ import annotations

import re

from kubedata.text import shorten
from kubedata.yaml_io import Path

from renderer.errors import Problem
from renderer.profile import LoadedProfile
from renderer.rules.checker import RuleChecker
from renderer.rules.devices import check_devices, check_mdev_creators, check_vgpu, check_wiring
from renderer.rules.live_state import check_live_state
from renderer.rules.platform import check_container_takeover, check_platform
from renderer.rules.syntax import DNS_SUBDOMAIN, LABEL_KEY, LABEL_VALUE

__all__ = ["check_profile"]


def _hami_and_nodes(c: RuleChecker) -> None:
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
    own = {"passthrough": "vm-passthrough", "vgpu": "vm-vgpu"}.get(spec.variant)
    clash = {"passthrough": "vm-vgpu", "vgpu": "vm-passthrough"}.get(spec.variant)
    for node, workload in spec.nodes.items():
        at: Path = ("spec", "nodes", node)
        if not node_name.fullmatch(node):
            c.add(at, f'"{node}" is not a node name (DNS-1123 subdomain)')
        if workload == clash:
            # container is a fix only where HAMi serves container nodes (see below)
            c.add(
                at,
                f"the variant is one value per cluster: a {workload} node on a {spec.variant} "
                f"cluster gets no operands for it; label it {own}"
                + (" (or container, for HAMi)" if spec.hami else ""),
            )
        if workload == "container" and own and not spec.hami:
            c.warn(
                at,
                f"on variant {spec.variant} the GPU Operator runs no driver and no device "
                "plugin, so a container node's GPUs serve nothing; set spec.hami: true (HAMi "
                f"serves container nodes) or label it {own}",
            )
    # Listing a node as the default shows the author knows where unlisted nodes go.
    if own and "container" in spec.nodes.values() and own not in spec.nodes.values():
        c.warn(
            ("spec", "nodes"),
            f"GPU nodes not listed here run as {own} (the GPU Operator's "
            "sandboxWorkloads.defaultWorkload on this variant); list every GPU node that "
            "should run otherwise",
        )
    if spec.nodes and spec.variant in ("container", "none"):
        c.warn(
            ("spec", "nodes"),
            f"ignored: sandbox workloads are off on variant {spec.variant}, "
            "so the GPU Operator treats every node as container",
        )


_LABEL_KEY = re.compile(LABEL_KEY)
_LABEL_VALUE = re.compile(LABEL_VALUE)


def _alert_labels(c: RuleChecker) -> None:
    """The PrometheusRule's labels: what the API server would refuse at apply time."""
    alerts = c.spec.audit.alerts if c.spec.audit else None
    if isinstance(alerts, bool) or alerts is None:
        return
    for key, value in alerts.labels.items():
        at: Path = ("spec", "audit", "alerts", "labels", key)
        if not _LABEL_KEY.fullmatch(key):
            c.add(at, f'"{shorten(key)}" is not a label key ([prefix/]name, name at most 63)')
        elif not _LABEL_VALUE.fullmatch(value):
            c.add(at, f'"{shorten(value)}" is not a label value (at most 63 of A-Z a-z 0-9 -_.)')


_CHECKS = (
    check_platform,
    check_container_takeover,
    check_devices,
    check_wiring,
    check_vgpu,
    check_mdev_creators,
    _hami_and_nodes,
    _alert_labels,
    check_live_state,
)


def check_profile(lp: LoadedProfile) -> list[Problem]:
    """Every rule problem of a profile, errors and warnings, in file and line order."""
    c = RuleChecker(lp)
    for check in _CHECKS:
        check(c)
    return sorted(c.problems, key=lambda p: (p.file, p.line, p.severity, p.field))
