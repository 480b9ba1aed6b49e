"""What Cozystack calls the GPU pieces: each Package, and the namespace and name of the Helm release
it installs. One table: the renderer writes these names, the audit looks for them.

Source: cozystack/cozystack@3c780acd packages/core/platform/sources/ (gpu-operator.yaml,
kubevirt.yaml, hami.yaml: `install.namespace`, `install.releaseName`); the platform release is the
platform chart's own.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "GPU_OPERATOR",
    "GPU_OPERATOR_RELEASE",
    "HAMI",
    "HAMI_RELEASE",
    "KUBEVIRT",
    "KUBEVIRT_RELEASE",
    "PLATFORM_PACKAGE",
    "PLATFORM_RELEASE",
    "PLATFORM_VALUES",
    "Release",
    "platform_values",
]

PLATFORM_PACKAGE = "cozystack.cozystack-platform"
GPU_OPERATOR = "cozystack.gpu-operator"
HAMI = "cozystack.hami"
KUBEVIRT = "cozystack.kubevirt"
PLATFORM_VALUES = ("spec", "components", "platform", "values")
"""Where the platform Package (and platform.yaml) holds the platform chart's values."""


def platform_values(package: Any) -> dict[str, Any]:
    """The platform chart's values of a platform Package, the object itself (not a copy); {} where
    a step of PLATFORM_VALUES is missing or no mapping."""
    node = package
    for key in PLATFORM_VALUES:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


class Release(NamedTuple):
    """A Helm release a Package (or, on plain Flux, a HelmRelease: flux_names) installs: its
    namespace (also its workloads') and its name; the (namespace, name) pair Helm's release
    Secrets are read by."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


PLATFORM_RELEASE = Release("cozy-system", "cozystack-platform")
KUBEVIRT_RELEASE = Release("cozy-kubevirt", "kubevirt")
GPU_OPERATOR_RELEASE = Release("cozy-gpu-operator", "gpu-operator")
HAMI_RELEASE = Release("cozy-hami", "hami")
"""The release each Package installs (KubeVirt's: its `kubevirt` component, the KubeVirt CR and
its permittedHostDevices)."""
