"""Rules about the live files `import` writes: present where the build merges into a live object,
marked as imports (or as written by hand), naming the object the profile names, and what the
build's atomic lists drop from them (DESIGN §3). Pure.
"""

from __future__ import annotations

import json
from typing import Any

from kubedata.yaml_io import Path

from renderer.cozystack_names import PLATFORM_VALUES, platform_values
from renderer.live_file import HAND_WRITTEN, IMPORTED_AT, IMPORTED_FROM, import_command, provenance
from renderer.overlays import has_kubevirt_object
from renderer.profile import KUBEVIRT_FILE, LiveDoc
from renderer.rules.checker import RuleChecker
from renderer.rules.live_state import dropped_devices
from renderer.values.cozystack import apply_gpu_values, effective_values, platform_gpu_values
from renderer.values.flux import kubevirt_configuration, live_feature_gates
from renderer.values.wiring import HOST_DEVICES_GATE

__all__ = ["check_live_files"]

_ANNOTATIONS = ("metadata", "annotations")
_CONFIG = ("spec", "configuration")
_PERMITTED = (*_CONFIG, "permittedHostDevices")


def _lists(value: Any, at: Path) -> list[tuple[Path, list[Any]]]:
    """Every list inside `value`, with its path under `at`: what an apply replaces whole."""
    if isinstance(value, list):
        return [(at, value)]
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _lists(v, (*at, k))]
    return []


def _item(value: Any) -> str:
    """A list item as a message shows it: a device by its selector, anything else as JSON."""
    if isinstance(value, dict):
        selector = value.get("pciVendorSelector") or value.get("mdevNameSelector")
        return str(selector) if selector else json.dumps(value, sort_keys=True)
    return str(value)


def _marked(c: RuleChecker, doc: LiveDoc, built: dict[str, Any], at: Path) -> None:
    """Refuse a live file without import's mark; warn for each list a hand-written one replaces
    (`built`: what the build writes at `at`, by key)."""
    state = provenance(doc)
    if state == "imported":
        return
    if state == "unmarked":
        c.file_problem(
            doc,
            _ANNOTATIONS,
            f"not written by gpu-gitops import (no {IMPORTED_FROM} and {IMPORTED_AT} "
            "annotations), so nothing says it is the live state the build replaces lists of; "
            f'capture it: {import_command(c.lp.name)}, or annotate it {HAND_WRITTEN}: "true"',
        )
        return
    for path, value in _lists(built, at):
        shown = ", ".join(map(_item, value)) or "nothing"
        c.file_problem(
            doc,
            (*_ANNOTATIONS, HAND_WRITTEN),
            f"written by hand: the built {'.'.join(map(str, path[len(at) :]))} [{shown}] "
            "replaces the live list whole, and nothing shows this file holds what is live; "
            f"compare it with the cluster, or capture it: {import_command(c.lp.name)}",
            "warning",
        )


def _platform_file(c: RuleChecker) -> None:
    doc = c.lp.platform
    if not c.cozystack or doc is None:
        return
    spec = doc.obj.get("spec") or {}
    values = platform_values(doc.obj)
    gpu = platform_gpu_values(c.spec, effective_values(values, spec.get("variant")))
    _marked(c, doc, apply_gpu_values({}, gpu), PLATFORM_VALUES)


def _kubevirt_missing(c: RuleChecker) -> None:
    c.add(
        ("spec", "kubevirt") if c.lp.written("spec", "kubevirt") else ("spec", "platform", "type"),
        f"clusters/{c.lp.name}/{KUBEVIRT_FILE} is missing: the KubeVirt CR's featureGates and "
        "permittedHostDevices lists are atomic, so the lists built without it would replace "
        "the live ones whole (every live gate and device gone); capture the live CR first: "
        f"{import_command(c.lp.name)}",
    )


def _gate_fields(c: RuleChecker, live_gates: list[str]) -> None:
    """spec.kubevirt.removeFeatureGates: explicit, never contradicting what the profile needs."""
    target = c.spec.kubevirt
    at = ("spec", "kubevirt", "removeFeatureGates")
    needed = set(target.feature_gates)
    if c.spec.variant in ("passthrough", "vgpu"):
        needed.add(HOST_DEVICES_GATE)
    for i, gate in enumerate(target.remove_feature_gates):
        if gate in needed:
            why = "featureGates lists it" if gate in target.feature_gates else "GPU wiring needs it"
            c.add((*at, i), f"{gate} cannot be removed: {why}; drop one of the two")
        elif gate not in live_gates:
            c.warn((*at, i), f"{gate} is not a live gate ({KUBEVIRT_FILE}): nothing to remove")


def _kubevirt_file(c: RuleChecker) -> None:
    doc = c.lp.kubevirt
    if not has_kubevirt_object(c.lp):
        return  # nothing merges into the CR (a file kept for a later switch is harmless)
    if doc is None:
        _kubevirt_missing(c)
        return
    target = c.spec.kubevirt
    meta = doc.obj.get("metadata") or {}
    named = (meta.get("namespace"), meta.get("name"))
    if named != (target.namespace, target.name):
        c.file_problem(
            doc,
            ("metadata",),
            f"is the KubeVirt CR {named[0]}/{named[1]}, but spec.kubevirt names "
            f"{target.namespace}/{target.name}; capture that one: {import_command(c.lp.name)}",
        )
        return
    _gate_fields(c, live_feature_gates(doc.obj))
    config = kubevirt_configuration(c.spec, doc.obj)
    _marked(c, doc, config, _CONFIG)
    built = config.get("permittedHostDevices") or {}
    kept = {
        field: {
            str(e.get(key, "")).upper() if key == "pciVendorSelector" else str(e.get(key, ""))
            for e in built[field]
        }
        for field, key in (
            ("pciHostDevices", "pciVendorSelector"),
            ("mediatedDevices", "mdevNameSelector"),
        )
        if field in built
    }
    live = ((doc.obj.get("spec") or {}).get("configuration") or {}).get("permittedHostDevices")
    if c.spec.variant in ("passthrough", "vgpu"):
        dropped_devices(c, doc, _PERMITTED, live, kept, "move it to spec.devices")
    else:
        dropped_devices(
            c,
            doc,
            _PERMITTED,
            live,
            kept,
            "move or stop those VMs first",
            f"variant {c.spec.variant} permits no devices",
        )


def check_live_files(c: RuleChecker) -> None:
    _platform_file(c)
    _kubevirt_file(c)
