"""The build worker (worker.py), run by its path on the standard library alone: the ctypes
binding to pykustomize's library builds what pykustomize itself builds, and a library that does not
load fails each build with the reason."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pykustomize
import pytest

from renderer.kustomize import worker
from renderer.kustomize.library import library_path
from renderer.kustomize.worker import Kustomize
from renderer.kustomize.workers import build_dir, materialize
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.conftest import REPO_ROOT


def test_a_library_that_does_not_load_fails_each_build_with_the_reason(tmp_path: Path):
    not_a_library = tmp_path / "libpykustomize.so"
    not_a_library.write_text("not ELF\n")
    answered = subprocess.run(
        [sys.executable, "-I", "-S", worker.__file__, str(not_a_library)],
        input=f'{{"path": "{tmp_path}"}}\n{{"path": "{tmp_path}"}}\n',
        capture_output=True,
        text=True,
        check=True,
    )
    answers = [json.loads(line) for line in answered.stdout.splitlines()]
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
