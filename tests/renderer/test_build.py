"""Building with pykustomize: byte-stable output and errors that name the overlay."""

from __future__ import annotations

from pathlib import Path

import pytest

from renderer.build import build_dir
from renderer.errors import BuildError


def test_build_error_names_the_overlay_and_kustomize_reason(tmp_path: Path):
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "kustomization.yaml").write_text("resources: [missing.yaml]\n")
    with pytest.raises(BuildError) as exc:
        build_dir(bad)
    message = str(exc.value)
    assert message.startswith("kustomize build of broken failed: ")
    assert "missing.yaml" in message
    assert "\n" not in message


def test_same_overlay_builds_to_the_same_bytes(tmp_path: Path):
    (tmp_path / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {b: '2', a: '1'}\n"
    )
    assert build_dir(tmp_path) == build_dir(tmp_path)
