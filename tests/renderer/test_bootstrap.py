"""Flux bootstrap objects: clusters/<name>/flux/, valid against the real Flux CRDs."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
import yaml

from gpu_gitops.cli import main
from gpu_gitops.console import Console
from renderer.bootstrap import (
    GITREPOSITORY_FILE,
    KUSTOMIZATION_FILE,
    flux_objects,
    flux_url,
    source_url,
    url_problem,
)
from renderer.crds import Registry
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.conftest import REPO_ROOT
from tests.conftest import git_out as git

CRD_FILES = (
    "kustomize-controller/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    "source-controller/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
)
ORIGIN = "git@github.com:example/gitops.git"
CLUSTERS = sorted(p.parent.name for p in (REPO_ROOT / "clusters").glob("*/gpu-profile.yaml"))


def copy_examples(root: Path) -> None:
    """The example profiles under root/clusters, spec.flux.url kept only in ams1 (no flux/)."""
    shutil.copytree(
        REPO_ROOT / "clusters", root / "clusters", ignore=shutil.ignore_patterns("flux")
    )
    for profile in (root / "clusters").glob("*/gpu-profile.yaml"):
        if profile.parent.name != "ams1":
            text = profile.read_text()
            profile.write_text(re.sub(r"(?m)^  flux:\n    url: .*\n|^    url: .*\n", "", text))


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """The examples (most without spec.flux.url) in a checkout whose origin is scp-like."""
    repo = tmp_path / "gitops"
    copy_examples(repo)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "remote", "add", "origin", ORIGIN)
    return repo


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), Console(out, err))
    return code, out.getvalue(), err.getvalue()


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("origin", "url"),
    [
        ("git@github.com:example/gitops.git", "ssh://git@github.com/example/gitops.git"),
        ("gitlab.example.com:/srv/gitops.git", "ssh://gitlab.example.com/srv/gitops.git"),
        ("ssh://git@example.com:2222/gitops.git", "ssh://git@example.com:2222/gitops.git"),
        ("https://x-access-token:s3cr3t@github.com/o/r.git", "https://github.com/o/r.git"),
        ("http://git.example.com:8080/r", "http://git.example.com:8080/r"),
        ("/srv/git/gitops.git", None),
        ("../gitops.git", None),
        ("file:///srv/git/gitops.git", None),
        ("git://example.com/r.git", None),
    ],
)
def test_origin_urls_become_urls_flux_can_pull(origin: str, url: str | None):
    assert flux_url(origin) == url


def test_render_writes_the_flux_folders_and_keeps_the_profiles(checkout: Path):
    before = tree(checkout / "clusters")
    code, _, err = run("render", "--repo", str(checkout))
    assert code == 0, err
    after = tree(checkout / "clusters")
    assert {k: v for k, v in after.items() if "/flux/" not in k} == before
    for name in CLUSTERS:
        assert sorted(f for f in after if f.startswith(f"{name}/flux/")) == [
            f"{name}/flux/{KUSTOMIZATION_FILE}",
            f"{name}/flux/{GITREPOSITORY_FILE}",
        ]
        assert f"wrote clusters/{name}/flux/" in err
    assert not [f for f in after if f.endswith("flux/kustomization.yaml")], (
        "kustomize would take a kustomization.yaml there for its own configuration"
    )
    # rendering again changes nothing, and --check covers the flux folders
    assert run("render", "--repo", str(checkout))[2].endswith("no changes\n")
    assert run("render", "--check", "--repo", str(checkout))[0] == 0
    source = checkout / "clusters" / "lab1" / "flux" / GITREPOSITORY_FILE
    source.write_text(source.read_text() + "# edited by hand\n")
    (source.parent / "extra.yaml").write_text("{}\n")
    code, _, err = run("render", "--check", "--repo", str(checkout))
    assert code == 1
    assert "stale: clusters/lab1/flux/extra.yaml\n" in err
    assert f"stale: clusters/lab1/flux/{GITREPOSITORY_FILE}\n" in err


def test_flux_objects_point_at_the_cluster_folder_of_the_rendered_branch(checkout: Path):
    profiles = {lp.name: lp for lp in check_clusters(checkout).profiles}
    dirs = render_profiles(list(profiles.values())).dirs
    ams1 = {k: yaml.safe_load(v) for k, v in dirs["clusters/ams1/flux"].items()}
    assert ams1[GITREPOSITORY_FILE] == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "gpu-gitops", "namespace": "cozy-fluxcd"},
        "spec": {
            "interval": "10m",
            "url": "ssh://git@git.example.com/platform/gitops.git",  # spec.flux.url wins
            "ref": {"branch": "rendered"},
            "secretRef": {"name": "flux-system"},
        },
    }
    assert ams1[KUSTOMIZATION_FILE] == {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "gpu-gitops", "namespace": "cozy-fluxcd"},
        "spec": {
            "interval": "10m",
            "path": "./ams1",
            "prune": True,
            "wait": False,
            "sourceRef": {"kind": "GitRepository", "name": "gpu-gitops"},
        },
    }
    edge1 = {k: yaml.safe_load(v) for k, v in dirs["clusters/edge1/flux"].items()}
    assert edge1[GITREPOSITORY_FILE]["metadata"]["namespace"] == "flux-system"
    assert edge1[GITREPOSITORY_FILE]["spec"]["url"] == "ssh://git@github.com/example/gitops.git"
    assert "secretRef" not in edge1[GITREPOSITORY_FILE]["spec"]
    assert edge1[KUSTOMIZATION_FILE]["spec"]["interval"] == "15m"  # spec.flux.interval


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_flux_objects_match_the_real_crds(cluster: str, checkout: Path, reference_dir: Path):
    registry = Registry.from_files([reference_dir / f for f in CRD_FILES])
    (lp,) = check_clusters(checkout, [cluster]).profiles
    url = source_url(lp)
    assert url is not None
    for obj in flux_objects(lp, url).values():
        assert registry.errors(obj) == []


def test_a_flux_object_with_an_unknown_field_fails_the_crd_check(
    checkout: Path, reference_dir: Path
):
    registry = Registry.from_files([reference_dir / f for f in CRD_FILES])
    (lp,) = check_clusters(checkout, ["lab1"]).profiles
    objs = flux_objects(lp, "https://example.com/r.git")
    objs[KUSTOMIZATION_FILE]["spec"]["prunne"] = True
    objs[GITREPOSITORY_FILE]["spec"]["url"] = "git@example.com:r.git"
    errors = registry.errors(objs[KUSTOMIZATION_FILE]) + registry.errors(objs[GITREPOSITORY_FILE])
    assert any("prunne" in e for e in errors)
    assert any("/spec/url" in e for e in errors)


def test_without_url_or_origin_there_is_no_flux_folder_and_a_warning(tmp_path: Path):
    copy_examples(tmp_path)
    profiles = check_clusters(tmp_path).profiles
    dirs = render_profiles(profiles).dirs
    assert [d for d in dirs if d.startswith("clusters/")] == ["clusters/ams1/flux"]
    problems = {lp.name: url_problem(lp) for lp in profiles}
    assert problems["ams1"] is None
    assert str(problems["lab1"]).startswith("clusters/lab1/gpu-profile.yaml:") and str(
        problems["lab1"]
    ).endswith(
        "warning: spec.flux.url: not set and the checkout has no origin remote: "
        "clusters/lab1/flux/ is not written; set spec.flux.url"
    )


def test_profile_url_must_be_one_flux_can_pull(tmp_path: Path):
    folder = tmp_path / "clusters" / "c1"
    folder.mkdir(parents=True)
    (folder / "gpu-profile.yaml").write_text(
        "apiVersion: gpu-gitops/v1alpha1\nkind: GPUProfile\nmetadata: {name: c1}\nspec:\n"
        "  platform: {type: flux}\n  variant: none\n  flux: {url: 'git@example.com:r.git'}\n"
    )
    code, _, err = run("validate", "--repo", str(tmp_path))
    assert code == 2
    assert "spec.flux.url" in err and "ssh://" in err


def test_the_examples_pin_their_url_so_the_render_does_not_depend_on_the_remote():
    for lp in check_clusters(REPO_ROOT).profiles:
        assert lp.profile.spec.flux.url, f"{lp.file}: set spec.flux.url"
