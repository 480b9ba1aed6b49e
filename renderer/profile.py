"""Reading clusters/<name>/gpu-profile.yaml (and the optional platform.yaml) from disk."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from renderer.errors import Problem, ProfileError
from renderer.model import DNS_LABEL, GPUProfile
from renderer.schema import decode
from renderer.yaml_io import Marks, load_marked

__all__ = [
    "MAX_FILE_BYTES",
    "PLATFORM_FILE",
    "PROFILE_FILE",
    "LoadedProfile",
    "PlatformDoc",
    "check_cluster_name",
    "discover_clusters",
    "load_profile",
    "parse_profile",
]

PROFILE_FILE = "gpu-profile.yaml"
PLATFORM_FILE = "platform.yaml"
MAX_FILE_BYTES = 256 * 1024
"""A profile is a page of YAML; anything larger is a mistake (or an attack) rather than a profile."""


@dataclass(frozen=True)
class PlatformDoc:
    """clusters/<name>/platform.yaml: the platform Package as it is today, with its line marks."""

    file: str
    obj: dict[str, Any]
    marks: Marks


@dataclass(frozen=True)
class LoadedProfile:
    """A decoded profile with where each field was written."""

    file: str
    profile: GPUProfile
    marks: Marks
    platform: PlatformDoc | None

    @property
    def name(self) -> str:
        return self.profile.metadata.name

    def line(self, *path: str | int) -> int:
        """Line of the nearest written ancestor of `path` (1 if none)."""
        while path and path not in self.marks:
            path = path[:-1]
        return self.marks.get(path, 1)

    def written(self, *path: str | int) -> bool:
        """Whether the profile spells out this field (rather than taking its default)."""
        return path in self.marks


def check_cluster_name(name: str, file: str = "--cluster") -> None:
    """Refuse names that are not DNS-1123 labels (and so never paths like ../x)."""
    if not re.fullmatch(DNS_LABEL, name):
        raise ProfileError(
            [
                Problem(
                    file,
                    0,
                    "",
                    f'"{name}" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
                )
            ]
        )


def _read(path: Path, display: str) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ProfileError(
                [Problem(display, 0, "", f"file is {size} bytes, over the {MAX_FILE_BYTES} limit")]
            )
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError([Problem(display, 0, "", "file not found")]) from None
    except UnicodeDecodeError:
        raise ProfileError([Problem(display, 0, "", "not UTF-8 text")]) from None
    except OSError as exc:
        raise ProfileError([Problem(display, 0, "", f"cannot read: {exc.strerror}")]) from None


def parse_profile(text: str, file: str, folder: str | None) -> tuple[GPUProfile, Marks]:
    """Decode profile text; `folder` (the cluster folder name) must equal metadata.name."""
    data, marks = load_marked(text, file)
    profile = decode(GPUProfile, data, file, marks)
    if folder is not None and profile.metadata.name != folder:
        line = marks.get(("metadata", "name"), 1)
        raise ProfileError(
            [
                Problem(
                    file,
                    line,
                    "metadata.name",
                    f'"{profile.metadata.name}" must equal the folder name "{folder}"; '
                    "rename one of them",
                )
            ]
        )
    return profile, marks


def _parse_platform(text: str, file: str) -> PlatformDoc:
    data, marks = load_marked(text, file)
    want = {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package"}
    problems = [
        Problem(file, marks.get((k,), 1), k, f'must be "{v}"')
        for k, v in want.items()
        if not isinstance(data, dict) or data.get(k) != v
    ]
    if isinstance(data, dict):
        name = (data.get("metadata") or {}).get("name")
        if name != "cozystack.cozystack-platform":
            line = marks.get(("metadata", "name"), 1)
            problems.append(
                Problem(file, line, "metadata.name", 'must be "cozystack.cozystack-platform"')
            )
        values = ((data.get("spec") or {}).get("components") or {}).get("platform", {})
        if not isinstance(values, dict) or not isinstance(values.get("values", {}), dict):
            line = marks.get(("spec", "components", "platform"), 1)
            problems.append(
                Problem(file, line, "spec.components.platform.values", "must be a mapping")
            )
    if problems:
        raise ProfileError(problems)
    return PlatformDoc(file, data, marks)


def load_profile(root: Path, name: str) -> LoadedProfile:
    """Load clusters/<name>/ under the repository `root`. Paths in messages are relative to it."""
    check_cluster_name(name)
    folder = root / "clusters" / name
    file = f"clusters/{name}/{PROFILE_FILE}"
    profile, marks = parse_profile(_read(folder / PROFILE_FILE, file), file, name)
    platform = None
    if (folder / PLATFORM_FILE).exists():
        pfile = f"clusters/{name}/{PLATFORM_FILE}"
        platform = _parse_platform(_read(folder / PLATFORM_FILE, pfile), pfile)
    return LoadedProfile(file, profile, marks, platform)


def discover_clusters(root: Path) -> list[str]:
    """Names of the folders under clusters/ that hold a profile, sorted."""
    base = root / "clusters"
    if not base.is_dir():
        return []
    return sorted(p.parent.name for p in base.glob(f"*/{PROFILE_FILE}"))
