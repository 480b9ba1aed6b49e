"""render and render --check over time: the render cache saves the parse and the render of the
clusters whose inputs did not change, and never changes what is said or written."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from gpu_gitops.cli import main
from gpu_gitops.console import Console
from renderer import incremental, render_cache
from renderer.errors import ProfileError
from renderer.incremental import render_checkout
from renderer.profile import ClusterFiles, LoadedProfile, load_profile_bytes
from renderer.render import render_profiles
from renderer.render_cache import CACHE_FILE
from renderer.validate import check_clusters
from renderer.write import file_digest
from tests.conftest import REPO_ROOT
from tests.conftest import git_out as _git

ORIGIN = "https://git.example.com/fleet/gitops.git"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The example clusters in a git checkout, their spec.flux.url taken from its origin."""
    shutil.copytree(REPO_ROOT / "clusters", tmp_path / "clusters")
    for flux in (tmp_path / "clusters").glob("*/flux"):
        shutil.rmtree(flux)
    for profile in (tmp_path / "clusters").glob("*/gpu-profile.yaml"):
        text = re.sub(r"^    url: .*\n", "", profile.read_text(), flags=re.MULTILINE)
        profile.write_text(re.sub(r"^  flux:\n(?!    )", "", text, flags=re.MULTILINE))
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "remote", "add", "origin", ORIGIN)
    return tmp_path


def run(repo: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--repo", str(repo)], Console(out, err))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The clusters whose profile is parsed, in order."""
    seen: list[str] = []

    def counting(name: str, files: ClusterFiles) -> LoadedProfile:
        seen.append(name)
        return load_profile_bytes(name, files)

    monkeypatch.setattr(incremental, "load_profile_bytes", counting)
    return seen


def _without_cache(repo: Path) -> None:
    (repo / ".git" / CACHE_FILE).unlink(missing_ok=True)


def test_an_unchanged_checkout_is_checked_without_parsing_a_profile(repo: Path, parses: list[str]):
    first = run(repo, "render")
    assert first[0] == 0
    assert len(parses) == 6
    parses.clear()
    assert run(repo, "render", "--check") == (0, "", "generated files are up to date\n")
    assert parses == [], "every cluster came from the cache"
    assert run(repo, "render") == (0, first[1], "no changes\n")
    assert first[1].startswith("kubectl label node gpu-ams1-01 "), "with its label commands"
    assert parses == []


@pytest.mark.parametrize("origin", [True, False], ids=["origin", "no-origin-warnings"])
def test_what_is_said_and_written_is_the_same_with_and_without_the_cache(repo: Path, origin: bool):
    if not origin:
        _git(repo, "remote", "remove", "origin")
    assert run(repo, "render")[0] == 0
    tree = _tree(repo)
    runs = [run(repo, "render", "--check"), run(repo, "render")]
    _without_cache(repo)
    assert [run(repo, "render", "--check"), run(repo, "render")] == runs
    assert _tree(repo) == tree
    said = runs[0][2]
    assert ("warning: spec.flux.url: not set" in said) == (not origin)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    }


def test_an_edited_profile_is_rendered_again_and_only_it(repo: Path, parses: list[str]):
    run(repo, "render")
    parses.clear()
    profile = repo / "clusters" / "lab1" / "gpu-profile.yaml"
    profile.write_text(profile.read_text() + "# a comment\n")
    assert run(repo, "render", "--check")[0] == 0, "a comment changes no output"
    assert parses == ["lab1"]
    parses.clear()
    assert run(repo, "render", "--check")[0] == 0
    assert parses == [], "its new entry is kept"


def test_a_hand_edit_of_a_generated_file_is_found_and_undone(repo: Path, parses: list[str]):
    run(repo, "render")
    target = repo / "overlays" / "ams1" / "kustomization.yaml"
    good = target.read_bytes()
    target.write_text("# edited by hand\n")
    (repo / "clusters" / "ams1" / "flux" / "extra.yaml").write_text("x: 1\n")
    parses.clear()
    assert run(repo, "render", "--check") == (
        1,
        "",
        "stale: clusters/ams1/flux/extra.yaml\n"
        "stale: overlays/ams1/kustomization.yaml\n"
        "generated files are out of date: run gpu-gitops render and commit them\n",
    )
    assert parses == [], "the digests are enough to find it"
    code, _, said = run(repo, "render")
    assert (code, said) == (0, "wrote overlays/ams1/\nwrote clusters/ams1/flux/\n")
    assert parses == ["ams1"], "rendered again for its text"
    assert target.read_bytes() == good
    assert not (repo / "clusters" / "ams1" / "flux" / "extra.yaml").exists()


def test_a_new_tool_version_renders_everything_again(
    repo: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
):
    run(repo, "render")
    parses.clear()
    monkeypatch.setattr(render_cache, "tool_version", lambda: "gpu-gitops 9.9.9")
    assert run(repo, "render", "--check")[0] == 0
    assert len(parses) == 6


def test_a_new_origin_renders_the_flux_folders_again(repo: Path):
    run(repo, "render")
    _git(repo, "remote", "set-url", "origin", "https://git.example.com/other.git")
    code, _, said = run(repo, "render", "--check")
    assert code == 1
    assert "stale: clusters/ams1/flux/gitrepository.yaml\n" in said


@pytest.mark.parametrize(
    "damage",
    [b"", b"{", b'{"format": 0, "clusters": {}}', b'{"format": 1, "clusters": {"ams1": 7}}'],
    ids=["empty", "not-json", "other-format", "bad-entry"],
)
def test_a_damaged_cache_is_an_empty_one(repo: Path, damage: bytes):
    run(repo, "render")
    (repo / ".git" / CACHE_FILE).write_bytes(damage)
    assert run(repo, "render", "--check") == (0, "", "generated files are up to date\n")
    assert render_cache.load_cache(repo / ".git").keys() == {
        "ams1",
        "ber1",
        "edge1",
        "fra1",
        "lab1",
        "par1",
    }, "and is written anew"


def test_a_cache_that_cannot_be_written_changes_nothing(repo: Path):
    (repo / ".git" / "gpu-gitops").write_text("a file where the folder goes\n")
    first = run(repo, "render")
    assert first[0] == 0
    assert run(repo, "render", "--check")[0] == 0


def test_outside_a_git_checkout_there_is_no_cache(tmp_path: Path):
    shutil.copytree(REPO_ROOT / "clusters", tmp_path / "clusters")
    assert run(tmp_path, "render")[0] == 0
    assert run(tmp_path, "render", "--check")[0] == 0
    assert not list(tmp_path.rglob("render-cache.json"))


def test_errors_are_listed_as_check_clusters_lists_them_cached_clusters_included(repo: Path):
    run(repo, "render")
    bad = repo / "clusters" / "fra1" / "gpu-profile.yaml"
    bad.write_text(bad.read_text().replace("kind: GPUProfile", "kind: GPUProfil"))
    with pytest.raises(ProfileError) as direct:
        check_clusters(repo)
    with pytest.raises(ProfileError) as cached:
        render_checkout(repo)
    assert cached.value.problems == direct.value.problems


def test_the_digests_are_those_of_render_profiles(repo: Path):
    run(repo, "render")
    for _ in range(2):  # rendered, then from the cache
        result = render_checkout(repo)
        checked = check_clusters(repo)
        dirs = render_profiles(checked.profiles).dirs
        assert result.warnings == checked.warnings
        assert list(result.digests) == list(dirs)
        assert result.digests == {
            d: {f: file_digest(t.encode()) for f, t in files.items()} for d, files in dirs.items()
        }
        assert result.texts(list(dirs)) == dirs


def test_a_removed_cluster_leaves_the_cache(repo: Path):
    run(repo, "render")
    shutil.rmtree(repo / "clusters" / "par1")
    code, _, said = run(repo, "render")
    assert (code, said) == (0, "removed overlays/par1/\n")
    assert "par1" not in render_cache.load_cache(repo / ".git")


def test_render_of_one_cluster_keeps_the_others_entries(repo: Path):
    run(repo, "render")
    assert run(repo, "render", "--cluster", "ams1")[0] == 0
    assert len(render_cache.load_cache(repo / ".git")) == 6
