"""`gpu-gitops publish`: rendered commits in real git repositories, races and faults included."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import git
import pytest
import yaml

import renderer.publish.plan as plan_module
import renderer.publish.publish as publish_module
from gpu_gitops.cli import main
from gpu_gitops.console import Console
from renderer.kustomize.workers import SCRATCH_PREFIX, SWEEP_AFTER, build_overlays, scratch_dir
from renderer.overlays import cluster_overlay
from renderer.profile import INPUT_FILES
from renderer.publish.flat import (
    KUSTOMIZATION_FILE,
    METADATA_FILE,
    SOURCE_DIR,
    Metadata,
    blob_id,
    cluster_objects,
    folder_digest,
    profile_digest,
)
from renderer.publish.gitobjects import update_ref
from renderer.publish.plan import commit_message
from renderer.publish.publish import publish
from renderer.repofiles import LINK_REFUSED
from renderer.validate import check_clusters
from renderer.version import code_files, tool_version
from renderer.write import checkout_lock
from tests.conftest import REPO_ROOT
from tests.conftest import git_out as sh
from tests.hanging_remote import gpu_gitops, hang_on_push, running
from tests.renderer.profile_texts import folder_files

CLUSTERS = sorted(p.parent.name for p in (REPO_ROOT / "clusters").glob("*/gpu-profile.yaml"))
BRANCH = "refs/heads/rendered"


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits (ours and the tests') get a fixed identity, whatever ~/.gitconfig says."""
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A gitops checkout holding the example clusters, committed on main."""
    repo = tmp_path / "src"
    shutil.copytree(REPO_ROOT / "clusters", repo / "clusters")
    sh(tmp_path, "init", "-q", "-b", "main", str(repo))
    sh(repo, "add", "-A")
    sh(repo, "commit", "-qm", "Example clusters")
    return repo


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), Console(out, err))
    return code, out.getvalue(), err.getvalue()


def files_at(repo: Path, ref: str) -> dict[str, bytes]:
    commit = git.Repo(repo).commit(ref)
    return {
        str(b.path): b.data_stream.read() for b in commit.tree.traverse() if isinstance(b, git.Blob)
    }


def message_of(repo: Path, ref: str) -> str:
    return sh(repo, "log", "-1", "--format=%B", ref)[:-1]  # git log adds a newline


def tip(repo: Path, ref: str = BRANCH) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", ref],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or None


def edit(repo: Path, cluster: str, old: str, new: str, commit: bool = True) -> str:
    path = repo / "clusters" / cluster / "gpu-profile.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    if commit:
        sh(repo, "commit", "-qam", f"Edit {cluster}")
    return sh(repo, "rev-parse", "HEAD").strip()


def head(repo: Path) -> str:
    return sh(repo, "rev-parse", "HEAD").strip()


def state(repo: Path) -> tuple[bytes, str, dict[str, bytes]]:
    """Index bytes, status and every working-tree file: what publish must never change."""
    index = (repo / ".git" / "index").read_bytes()
    status = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=all",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    tree = {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in repo.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
    return index, status, tree


# --- a first publish and the layout -----------------------------------------------------------


def test_publish_creates_the_branch_with_one_file_per_object(source: Path):
    code, out, err = run("publish", "--repo", str(source))
    assert code == 0, err
    commit = out.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    assert tip(source) == commit
    assert err.startswith(f"committed to rendered from {head(source)[:12]}: ams1, ber1")
    files = files_at(source, commit)
    assert sorted({f.split("/")[0] for f in files}) == CLUSTERS
    built = build_overlays({lp.name: cluster_overlay(lp) for lp in check_clusters(source).profiles})
    for name in CLUSTERS:
        folder = {f.split("/", 1)[1]: data for f, data in files.items() if f.startswith(f"{name}/")}
        sources = {f for f in folder if f.startswith(f"{SOURCE_DIR}/")}
        objects = [f for f in folder if f not in {KUSTOMIZATION_FILE, METADATA_FILE, *sources}]
        # every object of the build, verbatim, one per file, all listed in kustomization.yaml
        docs = [d.encode() for d in built[name].split("---\n") if d]
        assert sorted(folder[f] for f in objects) == sorted(docs)
        assert yaml.safe_load(folder[KUSTOMIZATION_FILE])["resources"] == sorted(objects)
        for f in objects:
            obj = cluster_objects({KUSTOMIZATION_FILE: b"resources: [x]\n", "x": folder[f]})[0]
            ns = obj["metadata"].get("namespace")
            parts = [obj["kind"].lower(), *([ns] if ns else []), obj["metadata"]["name"]]
            assert f == "_".join(parts) + ".yaml"
        meta = json.loads(folder[METADATA_FILE])
        assert list(meta) == sorted(meta)
        assert meta == {
            "allowDirty": False,
            "outputDigest": folder_digest({f: blob_id(data) for f, data in folder.items()}),
            "profileDigest": meta["profileDigest"],
            "sourceCommit": head(source),
            "toolVersion": tool_version(),
        }
        assert meta["profileDigest"].startswith("sha256:")
        # the source files, verbatim (the bytes profileDigest hashes), not applied by Flux
        inputs = folder_files(source / "clusters" / name)
        present = {f: data for f, data in zip(INPUT_FILES, inputs, strict=True) if data}
        assert {f"source/{f}": data for f, data in present.items()} == {
            s: folder[s] for s in sources
        }
        assert meta["profileDigest"] == profile_digest(inputs)
        assert not [r for r in yaml.safe_load(folder[KUSTOMIZATION_FILE])["resources"] if "/" in r]
    message = message_of(source, commit)
    assert message.splitlines()[0] == "Render ams1, ber1, edge1, fra1, lab1, par1"
    assert message.rstrip().endswith(f"Source-Commit: {head(source)}")


def test_a_second_publish_with_nothing_changed_makes_no_commit(source: Path):
    first = run("publish", "--repo", str(source))[1].strip()
    code, out, err = run("publish", "--repo", str(source))
    assert (code, out, err) == (0, "", "no changes on rendered\n")
    assert tip(source) == first


def test_a_profile_change_rewrites_only_that_cluster(source: Path):
    first = run("publish", "--repo", str(source))[1].strip()
    before = head(source)
    after = edit(source, "lab1", "interval: 5m", "interval: 7m")
    code, out, err = run("publish", "--repo", str(source))
    assert code == 0, err
    second = out.strip()
    changed = sh(source, "diff", "--name-only", first, second).split()
    assert changed and all(path.startswith("lab1/") for path in changed)
    assert "lab1/helmrelease_gpu-operator_gpu-operator.yaml" in changed
    message = message_of(source, second)
    assert message == f"Render lab1\n\nRendered:\n- lab1\n\nSource-Commit: {after}\n"
    assert sh(source, "rev-parse", f"{second}^") == first + "\n"
    meta = {
        name: Metadata.from_bytes(files_at(source, second)[f"{name}/{METADATA_FILE}"])
        for name in CLUSTERS
    }
    assert {n: m.source_commit for n, m in meta.items() if m} == {
        n: after if n == "lab1" else before for n in CLUSTERS
    }


def test_removed_clusters_and_objects_are_pruned(source: Path):
    run("publish", "--repo", str(source))
    edit(source, "edge1", "hami: true", "hami: false")
    shutil.rmtree(source / "clusters" / "par1")
    sh(source, "commit", "-qam", "Drop par1")
    code, out, err = run("publish", "--repo", str(source))
    assert code == 0, err
    files = files_at(source, out.strip())
    assert not [f for f in files if f.startswith("par1/")]
    assert "edge1/helmrelease_kube-system_hami.yaml" not in files
    assert b"hami" not in files["edge1/kustomization.yaml"]
    subject = message_of(source, out.strip()).splitlines()[0]
    assert subject == "Render edge1; remove par1"


def test_unchanged_clusters_are_not_built_again(source: Path, monkeypatch: pytest.MonkeyPatch):
    run("publish", "--repo", str(source))
    edit(source, "fra1", "deviceManager: true", "deviceManager: false")
    seen: list[list[str]] = []

    def recording(overlays, progress=None):
        seen.append(sorted(overlays))
        return build_overlays(overlays, progress)

    monkeypatch.setattr(plan_module, "build_overlays", recording)
    assert run("publish", "--repo", str(source))[0] == 0
    assert seen == [["fra1"]]
    seen.clear()
    assert run("publish", "--repo", str(source))[2] == "no changes on rendered\n"
    assert seen == []


def test_a_new_tool_version_rebuilds_every_cluster(source: Path, monkeypatch: pytest.MonkeyPatch):
    run("publish", "--repo", str(source))
    monkeypatch.setattr(plan_module, "tool_version", lambda: "gpu-gitops 9.9.9")
    code, out, _ = run("publish", "--repo", str(source))
    assert code == 0
    changed = sh(source, "diff", "--name-only", f"{out.strip()}^", out.strip()).split()
    assert changed == [f"{name}/{METADATA_FILE}" for name in CLUSTERS]


# --- the source checkout --------------------------------------------------------------------------


def test_the_working_tree_and_index_are_untouched(source: Path):
    edit(source, "ams1", "interval: 10m", "interval: 9m", commit=False)
    sh(source, "add", "clusters/ams1/gpu-profile.yaml")
    edit(source, "lab1", "interval: 5m", "interval: 6m", commit=False)
    (source / "notes.txt").write_text("untracked\n")
    before = state(source)
    assert run("publish", "--repo", str(source))[0] == 2
    assert state(source) == before
    assert run("publish", "--allow-dirty", "--repo", str(source))[0] == 0
    assert state(source) == before


def test_a_dirty_tree_is_refused_unless_allowed(source: Path):
    edit(source, "lab1", "interval: 5m", "interval: 6m", commit=False)
    shutil.copytree(source / "clusters" / "edge1", source / "clusters" / "edge2")
    profile = source / "clusters" / "edge2" / "gpu-profile.yaml"
    profile.write_text(profile.read_text().replace("name: edge1", "name: edge2"))
    code, out, err = run("publish", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == (
        "gpu-gitops: error: uncommitted changes to the profiles of edge2, lab1: commit them, or "
        "pass --allow-dirty to publish the working tree (recorded in hydrator.metadata)\n"
    )
    assert tip(source) is None
    code, out, err = run("publish", "--allow-dirty", "--repo", str(source))
    assert code == 0, err
    assert err.startswith(
        f"rendered the working tree on {head(source)[:12]} (--allow-dirty): edge2, lab1\n"
    )
    files = files_at(source, out.strip())
    dirty = {
        name: json.loads(files[f"{name}/{METADATA_FILE}"])["allowDirty"]
        for name in [*CLUSTERS, "edge2"]
    }
    assert dirty == {name: name in ("edge2", "lab1") for name in dirty}
    # source/ holds the bytes that were built: the working tree's
    lab1 = (source / "clusters" / "lab1" / "gpu-profile.yaml").read_bytes()
    assert b"interval: 6m" in lab1 and files["lab1/source/gpu-profile.yaml"] == lab1
    message = message_of(source, out.strip())
    assert (
        "From the working tree (--allow-dirty), with uncommitted changes to: edge2, lab1."
        in message
    )
    assert message.rstrip().endswith(f"Source-Commit: {head(source)}")


def test_a_checked_out_branch_is_never_published_to(source: Path):
    code, _, err = run("publish", "--branch", "main", "--repo", str(source))
    assert code == 2
    assert "main is checked out" in err
    code, _, err = run("publish", "--branch", "bad..name", "--repo", str(source))
    assert code == 2
    assert '"bad..name" is not a valid branch name' in err


def test_an_older_source_does_not_overwrite_a_newer_render(source: Path):
    old = head(source)
    run("publish", "--repo", str(source))
    new = edit(source, "lab1", "interval: 5m", "interval: 7m")
    published = run("publish", "--repo", str(source))[1].strip()
    sh(source, "checkout", "-q", "--detach", old)
    code, out, err = run("publish", "--repo", str(source))
    assert (code, out) == (0, "")
    assert (
        err
        == f"no changes: rendered already holds a render of {new[:12]}, which includes {old[:12]}\n"
    )
    assert tip(source) == published


# --- faults and races -------------------------------------------------------------------------


def test_a_crash_before_the_ref_moves_leaves_the_branch(
    source: Path, monkeypatch: pytest.MonkeyPatch
):
    first = run("publish", "--repo", str(source))[1].strip()
    edit(source, "lab1", "interval: 5m", "interval: 7m")

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("power cut")

    monkeypatch.setattr(publish_module, "update_ref", crash)
    code, out, err = run("publish", "--repo", str(source))
    assert (code, out) == (2, "")
    assert "internal error (RuntimeError: power cut)" in err
    assert tip(source) == first
    assert sh(source, "fsck", "--no-dangling", "--no-progress") == ""
    # put back only the ref update: undo() would also drop the test identity of `identity`
    monkeypatch.setattr(publish_module, "update_ref", update_ref)
    assert run("publish", "--repo", str(source))[0] == 0  # the next publish simply goes on


def test_a_branch_moved_by_someone_else_is_published_on_again(
    source: Path, monkeypatch: pytest.MonkeyPatch
):
    first = run("publish", "--repo", str(source))[1].strip()
    edit(source, "lab1", "interval: 5m", "interval: 7m")
    repo = git.Repo(source)
    interloper = repo.git.commit_tree(f"{first}^{{tree}}", "-p", first, "-m", "someone else")
    calls: list[str] = []

    def racing(r, ref, new, old, reason):
        calls.append(new)
        if len(calls) == 1:  # another publisher lands first
            update_ref(r, ref, interloper, old, "interloper")
        update_ref(r, ref, new, old, reason)

    monkeypatch.setattr(publish_module, "update_ref", racing)
    result = publish(source)
    assert result.attempts == 2
    assert result.commit == tip(source)
    assert sh(source, "rev-parse", f"{result.commit}^").strip() == interloper
    assert result.changed == ("lab1",)


@pytest.fixture
def remote(tmp_path: Path, source: Path) -> Path:
    """A bare remote holding main and a first rendered branch, published from `source`."""
    bare = tmp_path / "remote.git"
    sh(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    sh(source, "remote", "add", "origin", str(bare))
    sh(source, "push", "-q", "origin", "main")
    code, _, err = run("publish", "--push", "--repo", str(source))
    assert code == 0, err
    assert err.endswith("pushed rendered to origin\n")
    return bare


def clone(remote: Path, path: Path) -> Path:
    sh(path.parent, "clone", "-q", str(remote), str(path))
    return path


def sources_in_history(repo: Path, ref: str = BRANCH) -> list[str]:
    return re.findall(r"^Source-Commit: ([0-9a-f]{40})$", sh(repo, "log", "--format=%B", ref), re.M)


def test_a_rejected_push_is_rebuilt_on_the_new_tip(tmp_path: Path, remote: Path):
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    a_head = edit(a, "lab1", "interval: 5m", "interval: 7m")
    b_head = edit(b, "edge1", "interval: 15m", "interval: 20m")
    code, out, err = run("publish", "--push", "--repo", str(b))
    assert code == 0, err
    b_commit = out.strip()
    code, out, err = run("publish", "--push", "--repo", str(a))  # a still sees the old tip
    assert code == 0, err
    assert err.endswith("pushed rendered to origin after 1 retry(s)\n")
    a_commit = out.strip()
    assert tip(remote) == a_commit == tip(a)
    assert sh(remote, "rev-parse", f"{a_commit}^").strip() == b_commit
    assert sources_in_history(remote)[:2] == [a_head, b_head]


def test_two_publishers_racing_on_one_remote_lose_no_commit(tmp_path: Path, remote: Path):
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    heads = {
        a: edit(a, "lab1", "interval: 5m", "interval: 7m"),
        b: edit(b, "edge1", "interval: 15m", "interval: 20m"),
    }
    start = threading.Barrier(2)
    results: dict[Path, tuple[int, str, str]] = {}

    def publisher(repo: Path) -> None:
        start.wait()
        results[repo] = run("publish", "--push", "--repo", str(repo))

    threads = [threading.Thread(target=publisher, args=(r,)) for r in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert {r: code for r, (code, _, _) in results.items()} == {a: 0, b: 0}, results
    commits = {r: out.strip() for r, (_, out, _) in results.items()}
    history = sh(remote, "rev-list", "--first-parent", "rendered").split()
    assert set(history[:2]) == set(commits.values()), "both landed, one on top of the other"
    assert sorted(sources_in_history(remote)[:2]) == sorted(heads.values())
    last = history[0]
    # the tree is the last publisher's render: its own change is there
    winner = next(r for r, c in commits.items() if c == last)
    meta = json.loads(
        files_at(remote, last)[f"{'lab1' if winner == a else 'edge1'}/{METADATA_FILE}"]
    )
    assert meta["sourceCommit"] == heads[winner]


def test_an_unreachable_remote_changes_nothing_locally(source: Path, tmp_path: Path):
    first = run("publish", "--repo", str(source))[1].strip()
    sh(source, "remote", "add", "origin", str(tmp_path / "gone.git"))
    edit(source, "lab1", "interval: 5m", "interval: 7m")
    refs = sh(source, "for-each-ref")
    code, out, err = run("publish", "--push", "--repo", str(source))
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert err.startswith("gpu-gitops: error: cannot push to origin: fatal: ")
    assert err.endswith("; the local branch is unchanged\n")
    assert sh(source, "for-each-ref") == refs
    assert tip(source) == first


def test_push_needs_a_known_remote(source: Path):
    code, _, err = run("publish", "--push", "--remote", "upstream", "--repo", str(source))
    assert code == 2
    assert 'no remote named "upstream"' in err


# --- a bad day: hand edits, odd branch names, a remote that says no or nothing, a kill ---


def _hand_edit(repo: Path, path: str, text: str) -> str:
    """A commit on the rendered branch that changes one file, as someone with push rights would."""
    work = repo.parent / "hand-edit"
    sh(repo, "worktree", "add", "-q", str(work), "rendered")
    (work / path).write_text(text)
    sh(work, "commit", "-qam", "hot fix")
    sh(repo, "worktree", "remove", str(work))
    return sh(repo, "rev-parse", BRANCH).strip()


def test_a_hand_edit_on_the_rendered_branch_is_rewritten_from_the_profile(source: Path):
    code, first, _ = run("publish", "--repo", str(source))
    assert code == 0
    original = files_at(source, first.strip())
    edited = next(f for f in sorted(original) if f.startswith("lab1/kubevirt_"))
    edited_tip = _hand_edit(source, edited, "apiVersion: v1\nkind: ConfigMap\n")
    code, out, err = run("publish", "--repo", str(source))
    assert code == 0
    assert err.splitlines() == [
        "lab1/: warning: on the rendered branch this folder does not match its hydrator.metadata "
        "(edited by hand?); it is rewritten from the profile",
        f"committed to rendered from {sh(source, 'rev-parse', 'HEAD')[:12]}: lab1",
    ]
    assert files_at(source, out.strip()) == original
    assert sh(source, "rev-parse", f"{out.strip()}^").strip() == edited_tip
    assert run("publish", "--repo", str(source))[2] == "no changes on rendered\n"


def test_a_file_added_by_hand_is_pruned_too(source: Path):
    run("publish", "--repo", str(source))
    work = source.parent / "hand-edit"
    sh(source, "worktree", "add", "-q", str(work), "rendered")
    (work / "edge1" / "extra_thing.yaml").write_text("apiVersion: v1\nkind: Secret\n")
    sh(work, "add", "-A")
    sh(work, "commit", "-qm", "sneak one in")
    sh(source, "worktree", "remove", str(work))
    code, out, err = run("publish", "--repo", str(source))
    assert code == 0
    assert "edge1/: warning: " in err
    assert "edge1/extra_thing.yaml" not in files_at(source, out.strip())


def test_publish_refuses_to_run_while_render_writes_the_checkout(source: Path):
    refs = sh(source, "for-each-ref")
    with checkout_lock(source):
        code, out, err = run("publish", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == (
        f"gpu-gitops: error: another gpu-gitops render or publish is running in {source}; "
        "run it again when it is done\n"
    )
    assert sh(source, "for-each-ref") == refs


def test_head_is_not_a_branch_to_publish_to(source: Path):
    refs = sh(source, "for-each-ref")
    code, out, err = run("publish", "--branch", "HEAD", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == (
        'gpu-gitops: error: "HEAD" is not a valid branch name; pass e.g. --branch rendered\n'
    )
    assert sh(source, "for-each-ref") == refs


def _hook(bare: Path, script: str) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\n" + script)
    hook.chmod(0o755)


def test_the_remote_rejection_reason_is_shown(source: Path, remote: Path):
    _hook(remote, "echo 'branch rendered is protected: ask #platform'\nexit 1\n")
    path = source / "clusters" / "lab1" / "gpu-profile.yaml"
    path.write_text(path.read_text().replace("interval: 5m", "interval: 6m"))
    sh(source, "commit", "-qam", "edit")
    before = sh(source, "rev-parse", BRANCH)
    code, out, err = run("publish", "--push", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == (
        "gpu-gitops: error: cannot push to origin: [remote rejected] (pre-receive hook declined); "
        "remote: branch rendered is protected: ask #platform; the local branch is unchanged\n"
    )
    assert sh(source, "rev-parse", BRANCH) == before


def test_a_silent_remote_is_given_up_on(
    source: Path, remote: Path, monkeypatch: pytest.MonkeyPatch
):
    _hook(remote, "sleep 5\n")
    monkeypatch.setenv("GPU_GITOPS_PUSH_TIMEOUT", "0.5")
    path = source / "clusters" / "lab1" / "gpu-profile.yaml"
    path.write_text(path.read_text().replace("interval: 5m", "interval: 6m"))
    sh(source, "commit", "-qam", "edit")
    before = sh(source, "rev-parse", BRANCH)
    code, out, err = run("publish", "--push", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == (
        "gpu-gitops: error: cannot push to origin: git push did not finish within the "
        "deadline of 0.5 s (GPU_GITOPS_PUSH_TIMEOUT); it was stopped; the local branch is "
        "unchanged\n"
    )
    assert sh(source, "rev-parse", BRANCH) == before


def test_a_hanging_hook_is_stopped_with_all_it_started(source: Path, remote: Path):
    """The hook sleeps 40 s and leaves a child: the command ends at its deadline, and neither
    the hook nor its child is running afterwards."""
    edit(source, "lab1", "interval: 5m", "interval: 6m")
    before = sh(source, "rev-parse", BRANCH)
    remote_before = sh(remote, "rev-parse", BRANCH)
    env = {**os.environ, "GPU_GITOPS_PUSH_TIMEOUT": "2"}
    with hang_on_push(remote) as pids:
        done = gpu_gitops("publish", "--push", "--repo", str(source), env=env, cwd=source)
        still = [p.name for p in pids if running(p)]
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(
        "gpu-gitops: error: cannot push to origin: git push did not finish within the "
        "deadline of 2 s (GPU_GITOPS_PUSH_TIMEOUT); it was stopped; the local branch is unchanged\n"
    )
    assert all(p.exists() for p in pids), "the hook ran"
    assert still == []
    assert sh(source, "rev-parse", BRANCH) == before
    assert sh(remote, "rev-parse", BRANCH) == remote_before


def test_a_bad_push_timeout_is_one_line(source: Path, remote: Path, monkeypatch):
    monkeypatch.setenv("GPU_GITOPS_PUSH_TIMEOUT", "soon")
    code, _, err = run("publish", "--push", "--repo", str(source))
    assert (code, err) == (
        2,
        "gpu-gitops: error: GPU_GITOPS_PUSH_TIMEOUT=soon is not a number of seconds above 0\n",
    )


# --- scratch on tmpfs --------------------------------------------------------------------------


def test_scratch_left_by_a_killed_run_is_removed_by_the_next(tmp_path: Path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from renderer.kustomize.workers import scratch_dir\n"
            "with scratch_dir('gpu-gitops-build-') as d:\n"
            "    open(d + '/overlay.yaml', 'w').write('x')\n"
            "    print(d, flush=True)\n"
            "    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    killed = Path(holder.stdout.readline().strip())
    assert killed.name.startswith(SCRATCH_PREFIX)
    with scratch_dir("gpu-gitops-test-") as mine:
        assert killed.is_dir(), "a folder in use is never taken"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        holder.stdout.close()
        assert killed.is_dir(), "SIGKILL leaves it"
        build_overlays({})
        assert killed.is_dir(), "a young one may be a run that does not lock: left for now"
        old = time.time() - SWEEP_AFTER - 1
        os.utime(killed, (old, old))
        build_overlays({})
        assert not killed.exists(), "the next run removed it"
        assert Path(mine).is_dir(), "but not one still in use"


# --- the message --------------------------------------------------------------------------------


def test_the_subject_names_clusters_and_stays_short():
    many = [f"c{i:04d}" for i in range(1000)]
    message = commit_message(many, ["old1"], "f" * 40)
    subject = message.splitlines()[0]
    assert len(subject) <= 72
    assert re.fullmatch(r"Render c0000, c0001(, c\d+)* and \d+ more; remove old1", subject)
    assert message.count("\n- c") == 1000
    assert message.endswith(f"\n\nSource-Commit: {'f' * 40}\n")
    assert commit_message([], ["a", "b"], "0" * 40).splitlines()[0] == "Remove a, b"


def test_a_linked_profile_is_never_published(source: Path, tmp_path: Path):
    """Committed or in the working tree (--allow-dirty), a link's target would be committed to
    the rendered branch under source/ and pushed: refused, with one line naming it."""
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN KEY-----\nPLANTED-SECRET-0123456789\n")
    profile = source / "clusters" / "lab1" / "gpu-profile.yaml"
    profile.unlink()
    profile.symlink_to(secret)
    code, out, err = run("publish", "--allow-dirty", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == f"clusters/lab1/gpu-profile.yaml: error: {LINK_REFUSED}\n"
    sh(source, "add", "-A")
    sh(source, "commit", "-qm", "link")
    code, out, err = run("publish", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == f"clusters/lab1/gpu-profile.yaml: error: {LINK_REFUSED}\n"
    assert tip(source) is None, "no rendered branch was made"


def test_the_tool_version_covers_every_module_that_shapes_the_output():
    """A reused cluster must be rebuilt when any renderer or base module changes, not only
    publish/'s: the digest reads every module under renderer/ and kubedata/."""
    hashed = {path.relative_to(REPO_ROOT).as_posix() for path in code_files()}
    for package in ("renderer", "kubedata"):
        expected = {
            p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / package).rglob("*.py")
        }
        assert expected <= hashed
    assert {
        "renderer/values/cozystack.py",
        "renderer/kustomize/worker.py",
        "renderer/rules/checks.py",
        "kubedata/objects.py",
    } <= hashed


# --- each cluster to the branch its Flux follows --------------------------------------------------


def test_each_cluster_goes_to_its_own_branch_one_commit_each(source: Path):
    run("publish", "--repo", str(source))
    assert tip(source, "refs/heads/rendered-lab") is None
    edit(source, "lab1", "    interval: 5m\n", "    interval: 5m\n    branch: rendered-lab\n")
    code, out, err = run("publish", "--repo", str(source))
    assert code == 0, err
    rendered, lab = tip(source), tip(source, "refs/heads/rendered-lab")
    assert out.split() == [rendered, lab], "one commit per branch, in branch name order"
    assert err.splitlines() == [
        f"committed to rendered from {head(source)[:12]}: -lab1",
        f"committed to rendered-lab from {head(source)[:12]}: lab1",
    ]
    # lab1 leaves the branch it no longer follows and is all its own branch holds
    assert not [f for f in files_at(source, "rendered") if f.startswith("lab1/")]
    clusters = {f.split("/")[0] for f in files_at(source, "rendered-lab")}
    assert clusters == {"lab1"}
    # --branch publishes that branch's clusters only; the other branch is not moved
    edit(source, "lab1", "interval: 5m", "interval: 6m")
    code, out, err = run("publish", "--branch", "rendered-lab", "--repo", str(source))
    assert code == 0, err
    assert tip(source) == rendered and tip(source, "refs/heads/rendered-lab") == out.strip()
    assert err == f"committed to rendered-lab from {head(source)[:12]}: lab1\n"


def test_a_branch_no_profile_follows_is_refused(source: Path):
    code, out, err = run("publish", "--branch", "rendered-staging", "--repo", str(source))
    assert (code, out) == (2, "")
    assert err == (
        "clusters/: error: spec.flux.branch: no cluster follows branch rendered-staging (the "
        "profiles' branches: rendered); publish one of those, or set spec.flux.branch: "
        "rendered-staging in the profiles that should go there\n"
    )
    assert tip(source, "refs/heads/rendered-staging") is None
