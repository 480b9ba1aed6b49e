"""The platform rules of DESIGN §4: spec.platform, and the platform Package in platform.yaml.

On Cozystack the version must be supported, plain-Flux-only fields must be absent, and the
platform values must let the GPU bundle render (iaas on, a full system variant); problems found in
platform.yaml are reported at its own lines. Pure.
"""

from __future__ import annotations

from renderer.cozystack_names import PLATFORM_VALUES, platform_values
from renderer.profile import PLATFORM_FILE
from renderer.rules.checker import RuleChecker
from renderer.rules.versions import KNOWN, version_problem
from renderer.values.cozystack import BUNDLE_VARIANTS, SUPPORTED_VERSIONS, effective_values

__all__ = ["check_platform"]


def check_platform(c: RuleChecker) -> None:
    """spec.platform, then (on Cozystack) the platform values the bundle will see."""
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
        c.add(("spec", "platform"), f"version is required on Cozystack: {KNOWN}")
    elif version not in SUPPORTED_VERSIONS:
        c.add(("spec", "platform", "version"), version_problem(version))
    for key in ("kubevirt", "gpuOperatorVersion"):
        if c.lp.written("spec", key):
            c.add(
                ("spec", key),
                "plain Flux only: on Cozystack the platform renders the KubeVirt CR "
                "and the GPU Operator; remove it",
            )
    _platform_values(c, version or "main")


def _platform_values(c: RuleChecker, version: str) -> None:
    spec, doc = c.spec, c.lp.platform
    gpu_on = spec.variant in BUNDLE_VARIANTS
    if doc is None:
        _platform_file_missing(c)
        return
    spec_doc = doc.obj.get("spec") or {}
    variant = spec_doc.get("variant")
    eff = effective_values(platform_values(doc.obj), variant)
    vp = (*PLATFORM_VALUES, "bundles")
    iaas = (eff.get("bundles") or {}).get("iaas") or {}
    system = (eff.get("bundles") or {}).get("system") or {}
    if gpu_on and system.get("variant") == "isp-hosted":
        _hosted_platform(c)
    elif gpu_on:
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
    current = iaas.get("gpuOperatorVariant")
    if not gpu_on and current not in (None, "default", "vgpu"):
        c.platform_problem(
            (*vp, "iaas", "gpuOperatorVariant"),
            f'"{current}" makes the bundle fail to render; it is reset to "default"',
            "warning",
        )


def _platform_file_missing(c: RuleChecker) -> None:
    """DESIGN §3: platform.yaml is required on Cozystack: never write a list of unknown value."""
    c.add(
        ("spec", "platform", "type"),
        f"clusters/{c.lp.name}/{PLATFORM_FILE} is missing: the platform Package's "
        "bundles.enabledPackages is atomic, so the list built without it would replace the live "
        f"one whole; capture the live Package first: gpu-gitops import --cluster {c.lp.name} "
        "[--kubeconfig F] [--context C]",
    )


def _hosted_platform(c: RuleChecker) -> None:
    """isp-hosted: the host cluster provides network, storage and virtualisation (the chart's
    values-isp-hosted.yaml); switching to isp-full would install a second stack over the host's."""
    c.platform_problem(
        ("spec", "variant"),
        f"the profile's variant {c.spec.variant} needs KubeVirt GPU wiring, but this platform is "
        "hosted (bundles.system.variant isp-hosted: the host cluster provides virtualisation, "
        "and the iaas bundle never renders here); do not switch the platform to isp-full, which "
        "would install a second network and storage stack over the host's: offer GPU VMs from "
        "the host cluster's profile, and use variant container or none here",
    )
