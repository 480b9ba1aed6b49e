"""Fixtures shared by the renderer's tests."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from renderer.build import build_overlays
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[Any, list[dict[str, Any]]]]:
    """Cluster -> (loaded profile, built objects), through the renderer's own pipeline."""
    checked = check_clusters(REPO_ROOT)
    texts = build_overlays(render_profiles(checked.profiles).overlays)
    profiles = {lp.name: lp for lp in checked.profiles}
    return {
        name: (profiles[name], [d for d in yaml.safe_load_all(text) if d is not None])
        for name, text in texts.items()
    }
