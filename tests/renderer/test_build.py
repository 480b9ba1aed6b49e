"""Building with pykustomize: byte-stable output and errors that name the overlay."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pykustomize
import pytest

from renderer import build, kustomize_worker
from renderer.build import build_dir, materialize, start_workers
from renderer.errors import BuildError
from renderer.kustomize import library_path
from renderer.kustomize_worker import Kustomize
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.conftest import REPO_ROOT


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


def test_a_library_that_does_not_load_fails_each_build_with_the_reason(tmp_path: Path):
    not_a_library = tmp_path / "libpykustomize.so"
    not_a_library.write_text("not ELF\n")
    worker = subprocess.run(
        [sys.executable, "-I", "-S", kustomize_worker.__file__, str(not_a_library)],
        input=f'{{"path": "{tmp_path}"}}\n{{"path": "{tmp_path}"}}\n',
        capture_output=True,
        text=True,
        check=True,
    )
    answers = [json.loads(line) for line in worker.stdout.splitlines()]
    assert len(answers) == 2
    for ok, message in answers:
        assert ok is False
        assert message.startswith("cannot load kustomize's library: ")
        assert "libpykustomize.so" in message


def test_the_worker_runs_on_the_standard_library_alone(tmp_path: Path):
    """-S: no site-packages; a worker importing anything else fails at its first build."""
    (tmp_path / "kustomization.yaml").write_text("resources: [cm.yaml]\nnamePrefix: p-\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert "name: p-x" in build_dir(tmp_path)
    assert Kustomize(str(library_path())).build(str(tmp_path)) == build_dir(tmp_path)


def test_the_binding_builds_what_pykustomize_itself_builds(tmp_path: Path):
    """The ctypes binding reaches pykustomize's private C interface: if a pykustomize release
    changes it, this comparison with pykustomize's public API on every example overlay fails."""
    overlays = render_profiles(check_clusters(REPO_ROOT).profiles).overlays
    materialize(tmp_path, overlays)
    assert overlays
    for name in overlays:
        path = tmp_path / "overlays" / name
        public = asyncio.run(pykustomize.build(str(path))).yaml
        assert Kustomize(str(library_path())).build(str(path)) == public, name
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "kustomization.yaml").write_text("resources: [missing.yaml]\n")
    with pytest.raises(pykustomize.KustomizeError):
        asyncio.run(pykustomize.build(str(broken)))
    with pytest.raises(RuntimeError, match=r"missing\.yaml"):
        Kustomize(str(library_path())).build(str(broken))


def test_a_started_worker_is_the_one_the_build_uses(tmp_path: Path):
    """start_workers is ahead of the build, not beside it: no second process is started."""
    start_workers(1)
    started = [w.proc.pid for w in build._POOL]
    assert started
    (tmp_path / "kustomization.yaml").write_text("resources: []\n")
    build_dir(tmp_path)
    assert [w.proc.pid for w in build._POOL][: len(started)] == started


def test_without_the_library_nothing_starts_and_the_build_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    build._end_workers()
    library_path.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    try:
        start_workers(1)  # a head start only: it raises nothing
        assert not build._POOL
        with pytest.raises(BuildError, match=r"^pykustomize's kustomize library \(_lib/.*\) is "):
            build_dir(tmp_path)
    finally:
        library_path.cache_clear()
