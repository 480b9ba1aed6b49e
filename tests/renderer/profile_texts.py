"""Profile texts and cluster folders shared by the renderer's tests."""

from __future__ import annotations

from pathlib import Path

from renderer.profile import INPUT_FILES, ClusterFiles

__all__ = ["HEAD", "IMPORTED", "PLATFORM_OK", "folder_files", "kubevirt_text", "write_cluster"]

HEAD = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: c1
spec:
"""
"""Lines 1-5 of a profile of cluster c1; the spec body starts on line 6."""

IMPORTED = (
    "{gpu-gitops.io/imported-from: https://api.c1.example.net:6443, "
    "gpu-gitops.io/imported-at: '2026-11-30T09:00:00Z'}"
)
"""The import mark as a flow mapping: a live file's annotations on one line (so a marked test
file keeps the line numbers of an unmarked one)."""

PLATFORM_OK = f"""\
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  {{name: cozystack.cozystack-platform, annotations: {IMPORTED}}}
spec:
  variant: isp-full
  components:
    platform:
      values:
        bundles:
          enabledPackages: [cozystack.external-dns]
"""
"""A platform.yaml the GPU bundle can render with."""


def kubevirt_text(
    gates: str = "[]", permitted: str = "{}", name: str = "kubevirt", namespace: str = "kubevirt"
) -> str:
    """A kubevirt.yaml as import writes it (marked), with these flow-style lists."""
    return (
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata:\n"
        f"  name: {name}\n  namespace: {namespace}\n  annotations: {IMPORTED}\n"
        "spec:\n  configuration:\n"
        f"    developerConfiguration: {{featureGates: {gates}}}\n"
        f"    permittedHostDevices: {permitted}\n"
    )


def folder_files(folder: Path) -> ClusterFiles:
    """The input files of a cluster folder on disk."""
    data = [(folder / f).read_bytes() if (folder / f).exists() else None for f in INPUT_FILES]
    return ClusterFiles(data[0] or b"", *data[1:])


def write_cluster(
    root: Path,
    text: str | bytes,
    name: str = "c1",
    platform: str | None = None,
    kubevirt: str | None = None,
) -> Path:
    """clusters/<name>/gpu-profile.yaml (and platform.yaml, kubevirt.yaml) under root."""
    folder = root / "clusters" / name
    folder.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    (folder / "gpu-profile.yaml").write_bytes(data)
    if platform is not None:
        (folder / "platform.yaml").write_text(platform)
    if kubevirt is not None:
        (folder / "kubevirt.yaml").write_text(kubevirt)
    return root
