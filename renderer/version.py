"""The installed gpu-gitops version, and the published image of that version.

The nightly audit job runs the image of the version that rendered it (so the job audits with the
code that rendered), and publish records the version in hydrator.metadata.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from pathlib import Path

__all__ = ["IMAGE_REPOSITORY", "code_files", "default_image", "package_version", "tool_version"]

IMAGE_REPOSITORY = "ghcr.io/gpu-gitops/gpu-gitops"
"""Where the release workflow (.github/workflows/release.yml) pushes the image, tagged X.Y.Z."""


@functools.cache
def package_version() -> str:
    """The installed distribution's version ("0+unknown" when run from an uninstalled tree)."""
    try:
        return importlib.metadata.version("gpu-gitops")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def default_image() -> str:
    """spec.audit.image when the profile names none: this version's published image."""
    return f"{IMAGE_REPOSITORY}:{package_version()}"


def code_files() -> list[Path]:
    """Every module whose code decides the rendered output: the renderer's and the base's."""
    renderer = Path(__file__).resolve().parent
    return sorted(
        path
        for package in (renderer, renderer.parent / "kubedata")
        for path in package.rglob("*.py")
    )


@functools.cache
def tool_version() -> str:
    """gpu-gitops version, a digest of the renderer's code, and the versions of the libraries
    that print its output (PyYAML writes the overlays, kustomize builds them).

    A cluster whose input files and tool version are unchanged is not rendered again (render's
    cache) nor built again (publish), so the digest covers every module that can change what a
    render or a build emits.
    """
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for path in code_files():
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    version = package_version()
    code = h.hexdigest()[:12]
    kustomize = importlib.metadata.version("pykustomize")
    pyyaml = importlib.metadata.version("PyYAML")
    return f"gpu-gitops {version} (renderer {code}), pykustomize {kustomize}, PyYAML {pyyaml}"
