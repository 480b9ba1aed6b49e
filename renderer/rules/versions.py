"""What a spec.platform.version the tool does not render for means: a patch release (write its
minor), a release newer than the tool (upgrade it), one older than the GPU bundle, or not a
version at all. Pure: the message only; the caller decides where it goes."""

from __future__ import annotations

import re

from renderer.values.cozystack import CHART_COMMIT, SUPPORTED_VERSIONS

__all__ = ["KNOWN", "version_problem"]

_RELEASES = tuple(v for v in SUPPORTED_VERSIONS if v != "main")
_MAIN = f'"main" = main at the pinned chart commit cozystack@{CHART_COMMIT}'
KNOWN = ", ".join(f'"{v}"' for v in _RELEASES) + f' or "main" ({_MAIN})'
"""The accepted values, spelled for messages."""
_VERSION = re.compile(r"v?(?P<major>[0-9]+)\.(?P<minor>[0-9]+)(?:\.(?P<patch>[0-9]+))?")


def _minor(release: str) -> tuple[int, int]:
    major, minor = release.split(".")
    return int(major), int(minor)


def version_problem(version: str) -> str:
    """Why `version` (not one of SUPPORTED_VERSIONS) is refused, and what to write instead."""
    m = _VERSION.fullmatch(version)
    if m is None:
        return f'"{version}" is not a Cozystack version: use {KNOWN}'
    minor = (int(m["major"]), int(m["minor"]))
    spelled = f"{minor[0]}.{minor[1]}"
    if minor > max(map(_minor, _RELEASES)):
        return (
            f'"{version}" is newer than the versions this tool knows: {KNOWN}; upgrade gpu-gitops'
        )
    if minor < min(map(_minor, _RELEASES)):
        return (
            f'"{version}" is older than the GPU bundle: GPU wiring through the bundle starts at '
            f"v{_RELEASES[0]}.0; use {KNOWN}"
        )
    if spelled in _RELEASES:
        what = "a patch release" if m["patch"] is not None else "a release tag"
        return f'"{version}" is {what}: the profile names the minor version, write "{spelled}"'
    return f'"{version}" is not a version this tool renders for: use {KNOWN}'
