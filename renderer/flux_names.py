"""What the plain-Flux bases call the GPU pieces: the namespace and name of each HelmRelease that
installs them. One table, beside cozystack_names: the renderer writes these names, the PR bot, the
audit and adopt look for them.
"""

from __future__ import annotations

from renderer.cozystack_names import Release

__all__ = ["FLUX_GPU_OPERATOR_RELEASE", "FLUX_HAMI_RELEASE"]

FLUX_GPU_OPERATOR_RELEASE = Release("gpu-operator", "gpu-operator")
FLUX_HAMI_RELEASE = Release("kube-system", "hami")
"""The HelmReleases of the flux-gpu-operator and flux-hami bases (renderer.bases): NVIDIA's chart in
a namespace of its own (its operands run privileged), HAMi's in kube-system."""
