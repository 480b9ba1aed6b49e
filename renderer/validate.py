"""Loading and checking a set of clusters: every problem of every profile, or the loaded set."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from renderer.bootstrap import url_problem
from renderer.checkout import origin_url
from renderer.errors import Problem, ProfileError
from renderer.profile import (
    ClusterFiles,
    LoadedProfile,
    discover_clusters,
    load_profile,
    load_profile_bytes,
)
from renderer.rules.checks import check_profile

__all__ = ["NO_CLUSTERS", "Checked", "ClusterFiles", "check_clusters", "check_files"]

NO_CLUSTERS = Problem("clusters/", 0, "", "no clusters/<name>/gpu-profile.yaml found")


@dataclass(frozen=True)
class Checked:
    """Profiles that passed, with the warnings found on the way."""

    profiles: tuple[LoadedProfile, ...]
    warnings: tuple[Problem, ...]


def check_clusters(root: Path, names: Sequence[str] = ()) -> Checked:
    """Load and check `names` (default: every cluster); ProfileError lists every error found."""
    names = list(names) or discover_clusters(root)
    origin = origin_url(root)

    # origin's URL is the default of spec.flux.url (see bootstrap.py)
    checked = _check(
        names, lambda name: dataclasses.replace(load_profile(root, name), origin_url=origin)
    )
    # Without a URL, render cannot write clusters/<name>/flux/: say so rather than skip silently.
    missing_url = [p for p in map(url_problem, checked.profiles) if p is not None]
    return dataclasses.replace(checked, warnings=tuple(sorted((*checked.warnings, *missing_url))))


def check_files(clusters: Mapping[str, ClusterFiles]) -> Checked:
    """Load and check clusters from the bytes of their files (e.g. read from a git commit)."""
    return _check(sorted(clusters), lambda name: load_profile_bytes(name, clusters[name]))


def _check(names: Sequence[str], load: Callable[[str], LoadedProfile]) -> Checked:
    if not names:
        raise ProfileError([NO_CLUSTERS])
    loaded: list[LoadedProfile] = []
    problems: list[Problem] = []
    for name in names:
        try:
            lp = load(name)
        except ProfileError as exc:
            problems += exc.problems
            continue
        problems += check_profile(lp)
        loaded.append(lp)
    if any(p.severity == "error" for p in problems):
        raise ProfileError(problems)
    return Checked(tuple(loaded), tuple(problems))
