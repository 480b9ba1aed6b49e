"""The installed gpu-gitops version, and the published image of that version.

The nightly audit job runs the image of the version that rendered it (so the job audits with the
code that rendered), and publish records the version in hydrator.metadata.
"""

from __future__ import annotations

import functools
import importlib.metadata

__all__ = ["IMAGE_REPOSITORY", "default_image", "package_version"]

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
