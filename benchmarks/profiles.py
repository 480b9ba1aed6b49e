"""Realistic, varied cluster profiles for benchmarks (deterministic for a given seed)."""

from __future__ import annotations

import random
from pathlib import Path

from renderer.values.defaults import PASSTHROUGH_DEFAULTS

__all__ = ["write_profiles"]

_EXTRA_PCI = [
    (
        "RTX PRO 6000 Blackwell",
        "10DE:2BB5",
        "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_SERVER_EDITION",
    ),
    ("L40S", "10DE:26B9", "nvidia.com/AD102GL_L40S"),
    ("H100 PCIe", "10DE:2331", "nvidia.com/GH100_H100_PCIE"),
    ("A10", "10DE:2236", "nvidia.com/GA102GL_A10"),
]
_MDEV = [
    ("A100 20C", "NVIDIA A100-20C"),
    ("A40 12Q", "NVIDIA A40-12Q"),
    ("A10 4Q", "NVIDIA A10-4Q"),
]


_MARK = (
    "{gpu-gitops.io/imported-from: https://api.example.net:6443, "
    "gpu-gitops.io/imported-at: '2026-11-30T09:00:00Z'}"
)
"""import's mark (renderer/live_file.py), so the generated live files load."""


def _device_yaml(cls: str, selector_key: str, selector: str, resource: str) -> str:
    return (
        f'    - class: {cls}\n      {selector_key}: "{selector}"\n      resourceName: {resource}\n'
    )


def _profile(name: str, rng: random.Random) -> tuple[str, str | None]:
    cozystack = rng.random() < 0.6
    variant = rng.choice(["passthrough"] * 5 + ["vgpu"] * 2 + ["container", "none"])
    lines = [
        "apiVersion: gpu-gitops/v1alpha1",
        "kind: GPUProfile",
        f"metadata:\n  name: {name}",
        "spec:",
    ]
    if cozystack:
        version = rng.choice(["1.5", "1.6", "1.6", "main"])
        lines.append(f'  platform:\n    type: cozystack\n    version: "{version}"')
    else:
        lines.append("  platform:\n    type: flux")
    lines.append(f"  variant: {variant}")
    devices = ""
    if variant == "passthrough":
        known = {d["pciVendorSelector"] for d in PASSTHROUGH_DEFAULTS} if cozystack else set()
        for cls, sel, res in rng.sample(_EXTRA_PCI, rng.randint(1, 3)):
            if sel not in known:
                devices += _device_yaml(cls, "pciVendorSelector", sel, res)
    elif variant == "vgpu":
        for cls, sel in rng.sample(_MDEV, rng.randint(1, 2)):
            devices += _device_yaml(
                cls, "mdevNameSelector", sel, "nvidia.com/" + sel.replace(" ", "_")
            )
        lines.append(
            '  vgpu:\n    manager: {repository: registry.example.com/nvidia, version: "550.144.02"}'
        )
    if devices:
        lines.append("  devices:\n" + devices.rstrip("\n"))
    if variant in ("passthrough", "vgpu"):
        workload = "vm-passthrough" if variant == "passthrough" else "vm-vgpu"
        nodes = "".join(f"    {name}-gpu-{i}: {workload}\n" for i in range(rng.randint(1, 4)))
        lines.append("  nodes:\n" + nodes.rstrip("\n"))
    if not cozystack and variant in ("passthrough", "vgpu"):
        lines.append("  kubevirt:\n    featureGates: [LiveMigration, CPUManager]")
    platform = None
    if cozystack:
        platform = (
            "apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata:\n"
            f"  name: cozystack.cozystack-platform\n  annotations: {_MARK}\nspec:\n"
            f"  variant: {rng.choice(['isp-full', 'isp-full-generic'])}\n"
            "  components:\n    platform:\n      values:\n"
            f"        publishing: {{host: {name}.example.net}}\n"
            f"        resources: {{cpuAllocationRatio: {rng.choice([4, 8, 10])}}}\n"
        )
    return "\n".join(lines) + "\n", platform


def _kubevirt(name: str) -> str:
    """kubevirt.yaml of a plain-Flux cluster, as import writes it: no live gates or devices."""
    return (
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\n"
        f"metadata:\n  name: kubevirt\n  namespace: kubevirt\n  annotations: {_MARK}\n"
        "spec:\n  configuration:\n    developerConfiguration: {featureGates: []}\n"
    )


def write_profiles(root: Path, n: int, seed: int = 7) -> list[str]:
    """Write clusters/c0000..c<n-1>/ under root; return the names."""
    rng = random.Random(seed)
    names = [f"c{i:04d}" for i in range(n)]
    for name in names:
        profile, platform = _profile(name, rng)
        folder = root / "clusters" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "gpu-profile.yaml").write_text(profile)
        if platform:
            (folder / "platform.yaml").write_text(platform)
        elif "kubevirt:" in profile:  # plain Flux with GPU wiring: the live CR, imported
            (folder / "kubevirt.yaml").write_text(_kubevirt(name))
    return names
