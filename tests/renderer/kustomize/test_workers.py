"""Building overlays in the worker processes: byte-stable output, errors that name the overlay,
workers started ahead of the builds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from renderer.errors import BuildError
from renderer.kustomize import workers
from renderer.kustomize.library import library_path
from renderer.kustomize.workers import build_dir, start_workers


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


def test_a_started_worker_is_the_one_the_build_uses(tmp_path: Path):
    """start_workers is ahead of the build, not beside it: no second process is started."""
    start_workers(1)
    started = [w.proc.pid for w in workers._POOL]
    assert started
    (tmp_path / "kustomization.yaml").write_text("resources: []\n")
    build_dir(tmp_path)
    assert [w.proc.pid for w in workers._POOL][: len(started)] == started


def test_without_the_library_nothing_starts_and_the_build_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    workers._end_workers()
    library_path.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    try:
        start_workers(1)  # a head start only: it raises nothing
        assert not workers._POOL
        with pytest.raises(BuildError, match=r"^pykustomize's kustomize library \(_lib/.*\) is "):
            build_dir(tmp_path)
    finally:
        library_path.cache_clear()
