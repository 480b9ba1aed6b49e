"""Render: validated profiles -> the generated files of the repository (overlays/ and friends)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from renderer.bootstrap import FLUX_DIR, flux_files
from renderer.model import Workload
from renderer.overlays import Overlay, base_files, cluster_overlay
from renderer.profile import LoadedProfile

__all__ = ["Rendered", "label_commands", "render_profiles"]

WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"


@dataclass(frozen=True)
class Rendered:
    """Generated directories (repo-relative dir -> file -> text) and the overlays by cluster.

    The directories are overlays/base, overlays/<name> and clusters/<name>/flux (the Flux
    bootstrap objects; absent when no URL is known): each is replaced whole, so a cluster's
    gpu-profile.yaml and platform.yaml, next to its flux/, are never touched.
    """

    dirs: dict[str, dict[str, str]]
    overlays: dict[str, Overlay]


def render_profiles(profiles: Sequence[LoadedProfile]) -> Rendered:
    """Pure: the generated tree for these profiles."""
    overlays = {lp.name: cluster_overlay(lp) for lp in profiles}
    dirs = {"overlays/base": base_files()}
    dirs |= {f"overlays/{name}": o.files for name, o in sorted(overlays.items())}
    for lp in sorted(profiles, key=lambda lp: lp.name):
        flux = flux_files(lp)
        if flux is not None:
            dirs[f"clusters/{lp.name}/{FLUX_DIR}"] = flux
    return Rendered(dirs, overlays)


def label_commands(lp: LoadedProfile) -> list[str]:
    """Nodes are never put in git (Flux would create or prune them): label them by hand."""
    nodes: dict[str, Workload] = lp.profile.spec.nodes
    return [
        f"kubectl label node {node} {WORKLOAD_LABEL}={workload} --overwrite"
        for node, workload in sorted(nodes.items())
    ]
