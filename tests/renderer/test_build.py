"""Building with pykustomize: byte-stable output and errors that name the overlay."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from renderer import kustomize
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


def test_a_missing_kustomize_library_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    kustomize._library.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    try:
        with pytest.raises(RuntimeError, match=r"^pykustomize's kustomize library \(_lib/.*\) is "):
            kustomize.kustomize_build(tmp_path)
    finally:
        kustomize._library.cache_clear()


def test_the_library_builds_in_process_as_the_workers_do(tmp_path: Path):
    (tmp_path / "kustomization.yaml").write_text("resources: [cm.yaml]\nnamePrefix: p-\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert kustomize.kustomize_build(tmp_path) == build_dir(tmp_path)
    assert "name: p-x" in build_dir(tmp_path)
