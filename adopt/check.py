"""Validate and render one cluster from the bytes of its files, in memory: a change `validate`
would refuse is known before anything is written."""

from __future__ import annotations

import dataclasses

from renderer.errors import Problem
from renderer.render import Rendered, render_profiles
from renderer.validate import ClusterFiles, check_files

__all__ = ["check_render"]


def check_render(
    cluster: str, files: ClusterFiles, origin: str | None
) -> tuple[Rendered, tuple[Problem, ...]]:
    """(the generated tree, warnings); ProfileError as `validate` raises it.

    `origin` is the checkout's origin URL, the default of spec.flux.url, as `render` takes it.
    """
    checked = check_files({cluster: files})
    profiles = [dataclasses.replace(lp, origin_url=origin) for lp in checked.profiles]
    return render_profiles(profiles), checked.warnings
