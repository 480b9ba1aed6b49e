"""Profile texts and cluster folders shared by the renderer's tests."""

from __future__ import annotations

from pathlib import Path

__all__ = ["HEAD", "PLATFORM_OK", "write_cluster"]

HEAD = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: c1
spec:
"""
"""Lines 1-5 of a profile of cluster c1; the spec body starts on line 6."""

PLATFORM_OK = """\
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: cozystack.cozystack-platform
spec:
  variant: isp-full
  components:
    platform:
      values:
        bundles:
          enabledPackages: [cozystack.external-dns]
"""
"""A platform.yaml the GPU bundle can render with."""


def write_cluster(
    root: Path, text: str | bytes, name: str = "c1", platform: str | None = None
) -> Path:
    """clusters/<name>/gpu-profile.yaml (and platform.yaml) under root; returns root."""
    folder = root / "clusters" / name
    folder.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    (folder / "gpu-profile.yaml").write_bytes(data)
    if platform is not None:
        (folder / "platform.yaml").write_text(platform)
    return root
