"""Hostile checkouts: symlinks committed by a pull request, debris of killed renders.

Each attack runs the commands a CI job runs on a pull request (validate, render, render --check,
build) in a repository next to a folder `outside/` holding a planted secret. Every case asserts
the exit code, the one line naming the link, that the secret appears in no output, and that
nothing outside the repository changed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from renderer.repofiles import LINK_REFUSED
from tests.renderer.profile_texts import kubevirt_text
from tests.renderer.test_bad_input import GOOD_C1, run, tree

# with a Flux URL, so that render writes clusters/c1/flux/ too
PROFILE = GOOD_C1 + "  flux: {url: 'https://git.example.com/gitops.git'}\n"
SECRET = "ghp_PLANTEDsecretTOKEN0123456789abcdef"
COMMANDS = {
    "validate": ["validate"],
    "render": ["render"],
    "render-check": ["render", "--check"],
    "build": ["build", "--cluster", "c1"],
}


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """(repo, outside): a valid repository with cluster c1, and a folder beside it with secrets."""
    outside = tmp_path / "outside"
    (outside / "base").mkdir(parents=True)
    (outside / "c1").mkdir()
    (outside / "id_rsa").write_text(f"-----BEGIN KEY-----\n{SECRET}\n-----END KEY-----\n")
    (outside / "token").write_text(f"apiVersion: {SECRET}\n")
    (outside / "base" / "keep.txt").write_text("not yours\n")
    (outside / "c1" / "gpu-profile.yaml").write_text(PROFILE)
    repo = tmp_path / "repo"
    (repo / "clusters" / "c1").mkdir(parents=True)
    (repo / "clusters" / "c1" / "gpu-profile.yaml").write_text(PROFILE)
    (repo / "clusters" / "c1" / "kubevirt.yaml").write_text(kubevirt_text())
    return repo, outside


def _attack(repo: Path, outside: Path, argv: list[str]) -> tuple[int, str, str]:
    before = tree(outside)
    code, out, err = run(*argv, "--repo", str(repo))
    assert SECRET not in out + err
    assert tree(outside) == before, "nothing outside the repository changed"
    return code, out, err


def _link(path: Path, target: Path | str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


LINKS = {
    # link (repo-relative) -> target, relative to the link's folder or absolute (outside/...)
    "profile-absolute": ("clusters/c1/gpu-profile.yaml", "{outside}/token"),
    "profile-relative": ("clusters/c1/gpu-profile.yaml", "../../../outside/id_rsa"),
    "platform": ("clusters/c1/platform.yaml", "{outside}/token"),
    "cluster-folder": ("clusters/c1", "{outside}/c1"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("link", "target"), list(LINKS.values()), ids=list(LINKS))
def test_a_committed_link_is_refused_with_one_line(world, command, link, target):
    repo, outside = world
    _link(repo / link, target.format(outside=outside))
    before = tree(repo)
    code, out, err = _attack(repo, outside, COMMANDS[command])
    assert (code, out, err) == (2, "", f"{link}: error: {LINK_REFUSED}\n")
    assert tree(repo) == before


def test_a_profile_linked_inside_the_repository_is_refused_too(world):
    """A file reached through a link is never quoted, even one inside the checkout."""
    repo, outside = world
    (repo / "notes.yaml").write_text(f"apiVersion: {SECRET}\n")
    _link(repo / "clusters" / "c1" / "gpu-profile.yaml", "../../notes.yaml")
    code, _, err = _attack(repo, outside, ["validate"])
    assert (code, err) == (2, f"clusters/c1/gpu-profile.yaml: error: {LINK_REFUSED}\n")


@pytest.mark.parametrize(
    ("link", "target"),
    [
        pytest.param("overlays", "..", id="overlays-to-parent"),
        pytest.param("overlays", "{outside}", id="overlays-absolute"),
        pytest.param("overlays/base", "{outside}/base", id="base"),
        pytest.param("overlays/c1", "{outside}/c1", id="cluster-overlay"),
        pytest.param("clusters/c1/flux", "{outside}/c1", id="flux-folder"),
    ],
)
@pytest.mark.parametrize("command", ["render", "render-check"])
def test_render_never_writes_through_a_link(world, command, link, target):
    repo, outside = world
    _link(repo / link, target.format(outside=outside))
    before = tree(repo)
    code, out, err = _attack(repo, outside, COMMANDS[command])
    assert (code, out, err) == (2, "", f"{link}: error: {LINK_REFUSED}\n")
    assert tree(repo) == before
    assert sorted(p.name for p in outside.parent.iterdir()) == ["outside", "repo"]


def test_a_linked_file_inside_a_generated_folder_is_stale_and_replaced_not_followed(world):
    repo, outside = world
    assert run("render", "--repo", str(repo))[0] == 0
    _link(repo / "overlays" / "c1" / "kustomization.yaml", outside / "id_rsa")
    code, out, err = _attack(repo, outside, ["render", "--check"])
    assert (code, out) == (1, "")
    assert "stale: overlays/c1/kustomization.yaml" in err.splitlines()
    code, out, err = _attack(repo, outside, ["render"])
    assert (code, err) == (0, "wrote overlays/c1/\n")
    assert not (repo / "overlays" / "c1" / "kustomization.yaml").is_symlink()
    assert run("render", "--check", "--repo", str(repo))[0] == 0


# --- crash debris, removed clusters, umask, lock ----------------------------------------------


def test_debris_of_a_killed_render_is_reported_and_cleaned(world):
    repo, _ = world
    assert run("render", "--repo", str(repo))[0] == 0
    # a kill between the two renames of the swap: the overlay is gone, its staging copy is left
    (repo / "overlays" / "c1").rename(repo / "overlays" / ".c1.new-0123456789abcdef")
    (repo / "overlays" / ".base.old-fedcba9876543210").mkdir()
    code, _, err = run("render", "--check", "--repo", str(repo))
    assert code == 1
    stale = [line for line in err.splitlines() if line.startswith("stale: ")]
    assert stale[:2] == [
        "stale: overlays/.base.old-fedcba9876543210/",
        "stale: overlays/.c1.new-0123456789abcdef/",
    ]
    assert "stale: overlays/c1/kustomization.yaml" in stale
    assert run("render", "--repo", str(repo))[:2] == (0, "")
    assert sorted(p.name for p in (repo / "overlays").iterdir()) == ["base", "c1"]
    assert run("render", "--check", "--repo", str(repo))[0] == 0


def test_overlay_of_a_removed_cluster_is_reported_and_pruned(world):
    repo, _ = world
    (repo / "clusters" / "c2").mkdir()
    (repo / "clusters" / "c2" / "gpu-profile.yaml").write_text(PROFILE.replace("c1", "c2"))
    (repo / "clusters" / "c2" / "kubevirt.yaml").write_text(kubevirt_text())
    assert run("render", "--repo", str(repo))[0] == 0
    (repo / "clusters" / "c2" / "gpu-profile.yaml").unlink()
    (repo / "overlays" / "mine").mkdir()  # not generated: the user's, left alone
    (repo / "overlays" / "mine" / "kustomization.yaml").write_text("resources: []\n")
    code, _, err = run("render", "--check", "--repo", str(repo))
    assert (code, [x for x in err.splitlines() if "stale" in x]) == (1, ["stale: overlays/c2/"])
    # rendering one cluster prunes nothing
    assert run("render", "--cluster", "c1", "--repo", str(repo))[2] == "no changes\n"
    assert (repo / "overlays" / "c2").is_dir()
    assert run("render", "--repo", str(repo))[2] == "removed overlays/c2/\n"
    assert sorted(p.name for p in (repo / "overlays").iterdir()) == ["base", "c1", "mine"]


def test_generated_folders_and_files_follow_the_umask(world):
    repo, _ = world
    old = os.umask(0o022)
    try:
        assert run("render", "--repo", str(repo))[0] == 0
    finally:
        os.umask(old)
    folder = repo / "overlays" / "c1"
    assert folder.stat().st_mode & 0o777 == 0o755
    assert (folder / "kustomization.yaml").stat().st_mode & 0o777 == 0o644


def test_a_second_render_in_the_same_checkout_is_refused(world):
    from renderer.write import checkout_lock

    repo, _ = world
    with checkout_lock(repo):
        code, out, err = run("render", "--repo", str(repo))
    assert (code, out) == (2, "")
    assert err == (
        f"gpu-gitops: error: another gpu-gitops render or publish is running in {repo}; "
        "run it again when it is done\n"
    )
    assert not (repo / "overlays").exists()


def test_render_refuses_to_run_beside_a_publish(world):
    from renderer.write import checkout_lock

    repo, _ = world
    with checkout_lock(repo, shared=True), checkout_lock(repo, shared=True):
        code, _, err = run("render", "--repo", str(repo))  # two publishes hold it shared
    assert code == 2 and "render or publish is running" in err
    assert run("render", "--repo", str(repo))[0] == 0
