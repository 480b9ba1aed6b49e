"""Loading and checking a set of clusters: every problem of every profile, or the loaded set."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from renderer.errors import Problem, ProfileError
from renderer.profile import LoadedProfile, discover_clusters, load_profile
from renderer.rules import check_profile

__all__ = ["Checked", "check_clusters"]


@dataclass(frozen=True)
class Checked:
    """Profiles that passed, with the warnings found on the way."""

    profiles: tuple[LoadedProfile, ...]
    warnings: tuple[Problem, ...]


def check_clusters(root: Path, names: Sequence[str] = ()) -> Checked:
    """Load and check `names` (default: every cluster); ProfileError lists every error found."""
    names = list(names) or discover_clusters(root)
    if not names:
        raise ProfileError(
            [Problem("clusters/", 0, "", "no clusters/<name>/gpu-profile.yaml found")]
        )
    loaded: list[LoadedProfile] = []
    problems: list[Problem] = []
    for name in names:
        try:
            lp = load_profile(root, name)
        except ProfileError as exc:
            problems += exc.problems
            continue
        problems += check_profile(lp)
        loaded.append(lp)
    if any(p.severity == "error" for p in problems):
        raise ProfileError(problems)
    return Checked(tuple(loaded), tuple(problems))
