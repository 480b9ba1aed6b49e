"""Rules about what is live today (platform.yaml) that the profile would drop or leave behind.

`dropped_devices` is shared with kubevirt.yaml's rules (live_files.py).

Kept packages that leave the bundle keep running (the chart renders every Package with
helm.sh/resource-policy: keep), devices permitted live but missing from spec.devices stop being
permitted, and a licensing field the cluster never emits is refused rather than dropped. Pure.
"""

from __future__ import annotations

from typing import Any

from kubedata.yaml_io import Path

from renderer.cozystack_names import GPU_OPERATOR, HAMI, PLATFORM_VALUES, platform_values
from renderer.profile import LiveDoc
from renderer.rules.checker import RuleChecker
from renderer.values.cozystack import (
    apply_gpu_values,
    effective_values,
    packages_leaving,
    platform_gpu_values,
)

__all__ = ["check_live_state", "dropped_devices"]

_SELECTORS = {"pciHostDevices": "pciVendorSelector", "mediatedDevices": "mdevNameSelector"}


def _live_values(c: RuleChecker) -> tuple[dict[str, Any], str | None] | None:
    """platform.yaml's values and Package variant (None off Cozystack or without the file)."""
    doc = c.lp.platform
    if not c.cozystack or doc is None:
        return None
    return platform_values(doc.obj), (doc.obj.get("spec") or {}).get("variant")


def _kept_packages(c: RuleChecker) -> None:
    """Every package leaving the bundle is announced with its delete command; container with a
    kept HAMi left running is an error (both hand out nvidia.com/gpu)."""
    live = _live_values(c)
    if live is None:
        return
    values, package_variant = live
    before = effective_values(values, package_variant)
    after = effective_values(
        apply_gpu_values(values, platform_gpu_values(c.spec, before)), package_variant
    )
    at = (*PLATFORM_VALUES, "bundles", "enabledPackages")
    for name in packages_leaving(before, after):
        delete = f"kubectl delete packages.cozystack.io {name}"
        if name == GPU_OPERATOR and c.spec.variant == "container":
            c.platform_problem(
                at,
                f"{name} leaves the bundle; the chart keeps its live Package (helm.sh/resource-"
                "policy: keep) and the standalone container-variant Package of the same name "
                "takes it over: nothing to delete",
                "warning",
            )
            continue
        if name == HAMI and c.spec.variant == "container":
            c.add(
                ("spec", "variant"),
                f"{HAMI} is enabled in {c.lp.platform.file if c.lp.platform else ''} and leaves "
                "the bundle here, but the chart keeps its live Package (helm.sh/resource-policy: "
                "keep): HAMi would keep running next to the container variant's device plugin "
                f"(both register nvidia.com/gpu); first delete it ({delete}), take it out of the "
                "live bundles.enabledPackages, then run gpu-gitops import --cluster "
                f"{c.lp.name}",
            )
            continue
        c.platform_problem(
            at,
            f"{name} leaves the bundle, but the chart renders it with helm.sh/resource-policy: "
            "keep, so the live Package and what it installed keep running; once Flux has "
            f"applied this, delete it: {delete}",
            "warning",
        )


def _selector(entry: Any, key: str) -> str:
    value = str(entry.get(key, "")) if isinstance(entry, dict) else ""
    return value.upper() if key == "pciVendorSelector" else value


def dropped_devices(
    c: RuleChecker,
    doc: LiveDoc,
    at: Path,
    permitted: Any,
    kept: dict[str, set[str]],
    fix: str,
    reason: str = "not in spec.devices",
) -> None:
    """One warning per device the live `permitted` (a permittedHostDevices value of `doc`, at
    `at`) lists that the built list of the same name (`kept`: list -> selectors) does not: both
    lists are atomic, so the built one replaces the live one whole."""
    if not isinstance(permitted, dict):
        return  # nothing permitted live (a value of another shape is the chart's problem)
    for field, selectors in kept.items():
        entries = permitted.get(field) or []
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            selector = _selector(entry, _SELECTORS[field])
            if not selector or selector in selectors:
                continue
            name = entry.get("resourceName", "") if isinstance(entry, dict) else ""
            c.file_problem(
                doc,
                (*at, field, i),
                f"device {selector} ({name}) is permitted live but {reason}: the profile's list "
                "replaces the live one, so KubeVirt stops permitting it and VMs that use it will "
                f"not start; {fix}",
                "warning",
            )


def _dropped_devices(c: RuleChecker) -> None:
    """One warning per device platform.yaml permits that the profile's list would replace."""
    live = _live_values(c)
    if live is None or c.lp.platform is None or c.spec.variant not in ("passthrough", "vgpu"):
        return
    gpu = live[0].get("gpu")
    permitted = gpu.get("permittedHostDevices") if isinstance(gpu, dict) else None
    profile = {(d.pci_vendor_selector or "").upper() for d in c.spec.devices} | {
        d.mdev_name_selector or "" for d in c.spec.devices
    }
    kept = {"pciHostDevices": profile}
    if c.spec.variant == "vgpu":  # the chart ignores mediatedDevices on passthrough
        kept["mediatedDevices"] = profile
    at = (*PLATFORM_VALUES, "gpu", "permittedHostDevices")
    dropped_devices(c, c.lp.platform, at, permitted, kept, "move it to spec.devices")


def _licensing_config_map(c: RuleChecker) -> None:
    """configMapName is emitted where the operator runs the driver, refused elsewhere."""
    if not c.spec.vgpu.licensing.config_map_name:
        return
    at = ("spec", "vgpu", "licensing", "configMapName")
    if not c.cozystack and c.spec.variant == "container":
        c.warn(
            at,
            "deprecated by the GPU Operator (emitted as driver.licensingConfig.configMapName): "
            "use secretName, a Secret with client_configuration_token.tok and gridd.conf",
        )
        return
    c.add(
        at,
        "nothing on this cluster would use it: vGPU guests license themselves (token and "
        "gridd.conf via cloud-init); only a plain-Flux container cluster, where the GPU Operator "
        "runs the driver, licenses it; remove it (and prefer secretName there)",
    )


def check_live_state(c: RuleChecker) -> None:
    _kept_packages(c)
    _dropped_devices(c)
    _licensing_config_map(c)
