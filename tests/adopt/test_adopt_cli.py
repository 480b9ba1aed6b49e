"""`gpu-gitops adopt` on the demo snapshots: the branch and its one commit, idempotence, the pull
request against a local GitHub stand-in, and bad input (one line, exit 2, nothing left behind)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import git
import pytest

from adopt.pr import push_branch
from gpu_gitops import cli_adopt
from kubedata.budget import Budget
from prbot.report_markdown import MARKER as DIFF_MARKER
from tests.audit.audit_helpers import demo_empty, demo_objects, demo_repo, run, write_snapshot
from tests.hanging_remote import gpu_gitops, hang_on_push, running
from tests.prbot.test_comment import OWNER, PULLS, REPO, TOKEN, FakeGitHub, Fault
from tests.prbot.test_comment import github as github  # the fixture

DEVICE_ID = "4825d912b2"
"""The demo's `kubectl edit` of pciHostDevices (ams1): its id is stable across runs."""
NODE_ID = "fb063bf7a0"
LENS_ID = "47389ca596"


@dataclass
class Demo:
    root: Path
    repo: git.Repo
    origin: git.Repo
    main: str

    def adopt(self, *argv: str, cluster: str = "ams1") -> tuple[int, str, str]:
        snapshot = self.root / "snapshots" / cluster
        return run(
            "adopt", "--cluster", cluster, "--snapshot", str(snapshot),
            "--repo", str(self.repo.working_dir), *argv,
        )  # fmt: skip

    def branches(self) -> dict[str, str]:
        return {h.name: h.commit.hexsha for h in self.repo.heads}

    def unchanged(self) -> None:
        """The checkout is as it was: same branch, same tip, clean tree."""
        assert self.repo.active_branch.name == "main"
        assert self.repo.head.commit.hexsha == self.main
        assert not self.repo.is_dirty(untracked_files=True)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    """The demo repository; its git processes (GitPython's) end with the test."""
    repo, tip = demo_repo(tmp_path / "repo")
    origin = git.Repo.init(tmp_path / "origin.git", bare=True)
    repo.create_remote("origin", str(tmp_path / "origin.git"))
    repo.git.push("-q", "origin", "main")
    for cluster in ("ams1", "sto1"):
        snapshot = tmp_path / "snapshots" / cluster
        write_snapshot(snapshot, demo_objects(cluster, tip), demo_empty(cluster))
    with repo, origin:
        yield Demo(tmp_path, repo, origin, repo.head.commit.hexsha)


def audit_ids(demo: Demo, ref: str | None = None) -> list[str]:
    extra = ["--ref", ref] if ref else []
    snapshot = demo.root / "snapshots" / "ams1"
    _, out, _ = run(
        "audit", "--cluster", "ams1", "--snapshot", str(snapshot),
        "--repo", str(demo.repo.working_dir), "-o", "json", *extra,
    )  # fmt: skip
    return [f["id"] for f in json.loads(out)["findings"]]


def test_finding_ids_are_stable_across_runs(demo: Demo) -> None:
    first = audit_ids(demo)
    assert first == audit_ids(demo)
    assert {DEVICE_ID, NODE_ID, LENS_ID} <= set(first)
    assert len(set(first)) == len(first)


def test_dry_run_prints_the_profile_diff_and_writes_nothing(demo: Demo) -> None:
    before = demo.branches()
    code, out, err = demo.adopt("--dry-run")
    assert code == 0, err
    diff = [ln for ln in out.splitlines() if ln[:1] in "+-"]
    assert diff == [
        "--- a/clusters/ams1/gpu-profile.yaml",
        "+++ b/clusters/ams1/gpu-profile.yaml",
        "+    - class: GB202GL RTX PRO 6000 BLACKWELL WORKSTATION EDITION",
        '+      pciVendorSelector: "10DE:2BB1"',
        "+      resourceName: nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION",
        "+      externalResourceProvider: true",
        "-    gpu-ams1-02: vm-passthrough",
        "+    gpu-ams1-02: container",
    ]
    assert "dry run: would commit on branch adopt/ams1/" in err
    assert demo.branches() == before
    demo.unchanged()


def test_adopt_makes_one_commit_on_a_new_branch_and_nothing_else(demo: Demo) -> None:
    code, out, err = demo.adopt()
    assert code == 0, err
    new = set(demo.branches()) - {"main", "rendered"}
    assert len(new) == 1
    branch = new.pop()
    assert branch.startswith("adopt/ams1/") and len(branch.rsplit("/", 1)[1]) == 10
    demo.unchanged()
    commit = demo.repo.commit(branch)
    assert [p.hexsha for p in commit.parents] == [demo.main]
    message = str(commit.message)
    assert message.startswith("Adopt live drift of ams1: 2 findings\n")
    assert f"- {DEVICE_ID} KubeVirt cozy-kubevirt/kubevirt" in message
    assert "(changed by kubectl-edit at 2026-11-20T15:41:07Z)" in message
    assert f"- {NODE_ID} Node gpu-ams1-02" in message
    assert LENS_ID not in message  # not adoptable: only listed on the console
    trailers = demo.repo.git.log("-1", "--format=%(trailers:key=Adopted-From)", branch)
    snapshot = demo.root / "snapshots" / "ams1"
    assert trailers.startswith(f"Adopted-From: snapshot {snapshot} at 20")
    # the profile changed only where it must; the overlay was rendered from it
    changed = demo.repo.git.diff("--name-only", demo.main, branch).splitlines()
    assert "clusters/ams1/gpu-profile.yaml" in changed
    assert "overlays/ams1/platform-package.patch.yaml" in changed
    assert not [p for p in changed if p.startswith("clusters/sto1/")]
    patch = demo.repo.git.show(f"{branch}:overlays/ams1/platform-package.patch.yaml")
    assert "10DE:2BB1" in patch
    # the console lists what was adopted and what was not, with the revert command
    assert f"  {LENS_ID}  KubeVirt cozy-kubevirt/kubevirt" in out
    assert "    revert: kubectl patch kubevirt.kubevirt.io kubevirt -n cozy-kubevirt" in out


def test_adopting_again_makes_no_new_branch(demo: Demo) -> None:
    assert demo.adopt()[0] == 0
    before = demo.branches()
    code, _, err = demo.adopt()
    assert code == 0
    assert "already holds this change: nothing new" in err
    assert demo.branches() == before


def test_one_finding_by_id(demo: Demo) -> None:
    code, out, err = demo.adopt("--finding", NODE_ID)
    assert code == 0, err
    assert f"adopt/ams1/{NODE_ID}" in demo.branches()
    diff = demo.repo.git.diff(demo.main, f"adopt/ams1/{NODE_ID}", "--", "clusters/")
    assert [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")] == [
        "-    gpu-ams1-02: vm-passthrough",
        "+    gpu-ams1-02: container",
    ]
    assert DEVICE_ID not in out  # only the named finding is considered


def test_every_finding_after_the_only_one_reuses_its_branch(demo: Demo) -> None:
    code, _, err = demo.adopt("--finding", "9e145d87f1", cluster="sto1")
    assert code == 0, err
    assert "adopt/sto1/9e145d87f1" in demo.branches()
    code, _, err = demo.adopt(cluster="sto1")
    # the orphaned gpu-operator Package is now on the adopt branch already
    assert code == 0
    assert "nothing new" in err


def _dirty(demo: Demo) -> None:
    profile = Path(str(demo.repo.working_dir)) / "clusters" / "ams1" / "gpu-profile.yaml"
    profile.write_text(profile.read_text() + "# local edit\n")


def _other_branch(demo: Demo) -> None:
    demo.adopt("--finding", NODE_ID)
    demo.repo.git.branch("-f", f"adopt/ams1/{DEVICE_ID}", "main")


@pytest.mark.parametrize(
    ("argv", "prepare", "expected"),
    [
        (
            ["--finding", "0000000000"],
            None,
            "gpu-gitops: error: no finding 0000000000 in the audit of ams1: the ids are listed "
            "by gpu-gitops audit --cluster ams1",
        ),
        (
            ["--finding", LENS_ID],
            None,
            f"gpu-gitops: error: finding {LENS_ID} is not adoptable: not owned by the profile: no "
            "field of gpu-profile.yaml or platform.yaml renders it; to drop it instead: kubectl "
            "patch kubevirt.kubevirt.io kubevirt -n cozy-kubevirt --type=json -p "
            """'[{"op": "remove", "path": "/spec/configuration/developerConfiguration/"""
            """logVerbosity"}]'""",
        ),
        (
            [],
            _dirty,
            "has uncommitted changes (git status): commit or stash them, then adopt",
        ),
        (
            ["--finding", DEVICE_ID],
            _other_branch,
            f"gpu-gitops: error: branch adopt/ams1/{DEVICE_ID} already exists with other content: "
            f"merge or delete it (git branch -D adopt/ams1/{DEVICE_ID}), then adopt again",
        ),
        (
            ["--pr"],
            None,
            "gpu-gitops: error: --pr needs --repo-slug OWNER/NAME, the repository to open it in",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_leaves_nothing(demo, argv, prepare, expected) -> None:
    if prepare is not None:
        prepare(demo)
    before = demo.branches()
    code, _, err = demo.adopt(*argv)
    assert code == 2
    assert err.count("\n") == 1 and expected in err, err
    assert demo.branches() == before


def test_a_cluster_without_a_profile_is_refused(demo: Demo) -> None:
    profile = Path(str(demo.repo.working_dir)) / "clusters" / "sto1"
    demo.repo.git.rm("-rq", str(profile))
    demo.repo.git.commit("-qm", "retire sto1")
    code, _, err = demo.adopt(cluster="sto1")
    assert code == 2
    assert "clusters/sto1/gpu-profile.yaml" in err and err.count("\n") == 1
    assert not [b for b in demo.branches() if b.startswith("adopt/")]


def _pr(demo: Demo, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, *argv: str):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    code, out, err = demo.adopt("--pr", "--repo-slug", f"{OWNER}/{REPO}", *argv)
    assert TOKEN not in out + err
    return code, out, err


def test_pr_pushes_and_opens_then_updates_never_duplicates(demo, github, monkeypatch) -> None:
    code, out, err = _pr(demo, github, monkeypatch)
    assert code == 0, err
    (pull,) = github.pulls
    branch = pull["head"]["ref"]
    assert branch.startswith("adopt/ams1/") and pull["base"]["ref"] == "main"
    assert demo.origin.commit(branch).hexsha == demo.repo.commit(branch).hexsha
    body = pull["body"]
    assert pull["title"] == "Adopt live drift of ams1: 2 findings"
    assert f"| `{DEVICE_ID}` | `KubeVirt cozy-kubevirt/kubevirt` |" in body
    assert "kubectl-edit at 2026-11-20T15:41:07Z" in body
    assert "### gpu-gitops diff" in body and "10DE:2BB1" in body
    assert body.index(DEVICE_ID) < body.index("### gpu-gitops diff")
    assert TOKEN not in body
    assert f"created pull request #{pull['number']}" in err
    assert out.splitlines()[-1] == pull["html_url"]
    code, _, err = _pr(demo, github, monkeypatch)
    assert code == 0, err
    assert len(github.pulls) == 1
    assert f"updated pull request #{pull['number']}" in err
    assert [r.method for r in github.requests if r.path == PULLS].count("POST") == 1


def test_a_github_error_leaves_no_branch_here_or_there(demo, github, monkeypatch) -> None:
    github.faults.append(Fault("POST", PULLS, 403, body={"message": "Resource not accessible"}))
    before = demo.branches()
    code, _, err = _pr(demo, github, monkeypatch)
    assert code == 2
    assert err.count("\n") == 1
    assert "HTTP 403 (Resource not accessible)" in err
    assert demo.branches() == before
    assert not [h for h in demo.origin.heads if h.name.startswith("adopt/")]
    assert github.pulls == []


def _interrupt(*args: object, **kwargs: object) -> object:
    raise KeyboardInterrupt


def _push_then_interrupt(repo: git.Repo, remote: str, branch: str, deadline: Budget) -> None:
    """The push lands, then Ctrl-C arrives before the command learns of it."""
    push_branch(repo, remote, branch, deadline)
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("where", "replacement"),
    [("open_pull_request", _interrupt), ("push_branch", _push_then_interrupt)],
    ids=["while-opening-the-pull-request", "after-the-push-landed"],
)
def test_ctrl_c_leaves_no_branch_here_or_there(demo, github, monkeypatch, where, replacement):
    monkeypatch.setattr(cli_adopt, where, replacement)
    before = demo.branches()
    code, _, err = _pr(demo, github, monkeypatch)
    assert (code, err) == (130, "interrupted\n")
    assert demo.branches() == before
    assert not [h for h in demo.origin.heads if h.name.startswith("adopt/")]
    assert github.pulls == []


def test_a_detached_head_with_pr_is_refused_before_any_branch_is_made(demo, github, monkeypatch):
    demo.repo.git.checkout("-q", "--detach")
    before = demo.branches()
    code, _, err = _pr(demo, github, monkeypatch)
    assert code == 2
    assert err == "gpu-gitops: error: HEAD is detached: pass --base BRANCH for the pull request\n"
    assert demo.branches() == before
    assert not [h for h in demo.origin.heads if h.name.startswith("adopt/")]


def test_a_remote_branch_someone_else_pushed_is_never_deleted(demo, github, monkeypatch):
    branch = f"adopt/ams1/{DEVICE_ID}"
    theirs = demo.repo.git.commit_tree("main^{tree}", "-p", "main", "-m", "theirs")
    demo.repo.git.push("-q", "origin", f"{theirs}:refs/heads/{branch}")
    code, _, err = _pr(demo, github, monkeypatch, "--finding", DEVICE_ID)
    assert code == 2
    assert f"cannot push {branch} to origin" in err and err.count("\n") == 1
    assert demo.origin.commit(branch).hexsha == theirs
    assert branch not in demo.branches()


@pytest.mark.parametrize(
    ("hook", "told"),
    [
        ("pre-receive", ""),  # the ref never moved: nothing to undo there
        ("post-receive", "; branch {branch} was deleted from origin again"),  # it had landed
    ],
)
def test_a_hanging_remote_is_given_up_on_with_no_branch_left(
    demo: Demo, github: FakeGitHub, hook: str, told: str
) -> None:
    """The remote's hook sleeps 40 s and leaves a child: adopt --pr ends at its deadline (exit
    2, one line saying so), with no adopt branch here or there and nothing of the hook running."""
    env = {
        **os.environ,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": github.url,
        "GPU_GITOPS_PUSH_TIMEOUT": "2",
    }
    snapshot = demo.root / "snapshots" / "ams1"
    argv = ("adopt", "--cluster", "ams1", "--snapshot", str(snapshot), "--pr", "--repo-slug",
            f"{OWNER}/{REPO}", "--repo", str(demo.repo.working_dir))  # fmt: skip
    before = demo.branches()
    origin = Path(str(demo.origin.git_dir))
    with hang_on_push(origin, hook) as pids:
        done = gpu_gitops(*argv, env=env, cwd=demo.root)
        still = [p.name for p in pids if running(p)]
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("adopt 2 finding(s) of ams1:\n")  # the plan, as always
    (line,) = done.stderr.splitlines()
    branch = line.split("cannot push ")[1].split(" ")[0] if "cannot push " in line else "?"
    assert branch.startswith("adopt/ams1/")
    assert line == (
        f"gpu-gitops: error: cannot push {branch} to origin: git push did not finish within the "
        "deadline of 2 s (GPU_GITOPS_PUSH_TIMEOUT); it was stopped" + told.format(branch=branch)
    )
    assert still == []
    assert demo.branches() == before
    assert not [h for h in demo.origin.heads if h.name.startswith("adopt/")]
    assert github.pulls == []
    assert TOKEN not in done.stderr


def _many_findings(demo: Demo, count: int, value: str) -> None:
    """`count` values of platform.yaml changed live to `value`-like strings."""
    from renderer.publish.publish import publish

    path = Path(str(demo.repo.working_dir)) / "clusters" / "ams1" / "platform.yaml"
    keys = "".join(f"          k{i:04}: old\n" for i in range(count))
    path.write_text(path.read_text().replace("        resources:\n", f"        extra:\n{keys}"
                                             "        resources:\n"))  # fmt: skip
    demo.repo.git.commit("-qam", "extra values")
    demo.main = demo.repo.head.commit.hexsha
    tip = publish(Path(str(demo.repo.working_dir))).tip
    objects = demo_objects("ams1", tip)
    for obj in objects:
        if obj["metadata"]["name"] == "cozystack.cozystack-platform":
            values = obj["spec"]["components"]["platform"]["values"]
            values["extra"] = {f"k{i:04}": f"{value} {i}" for i in range(count)}
    write_snapshot(demo.root / "snapshots" / "ams1", objects, demo_empty("ams1"))


@pytest.mark.parametrize(("count", "length"), [(1000, 40), (20, 4000)])
def test_many_or_long_findings_make_a_body_github_takes(
    demo, github, monkeypatch, count: int, length: int
) -> None:
    _many_findings(demo, count, "a long live value " + "x" * length)
    code, _, err = _pr(demo, github, monkeypatch)
    assert code == 0, err
    (pull,) = github.pulls
    body = pull["body"]
    assert len(body.encode("utf-8")) <= 65_536
    total = count + 2  # and the demo's device and node label
    assert pull["title"] == f"Adopt live drift of ams1: {total} findings"
    rows = [ln for ln in body.splitlines() if ln.startswith("| `")]
    if count == 1000:
        assert 10 < len(rows) < total
        more = f"_{total - len(rows)} more findings adopted: the commit message lists every one._"
        assert more in body
    else:
        assert len(rows) == total and "more findings adopted" not in body
        assert "x" * 250 not in body.split("### gpu-gitops diff")[0]  # cells are shortened
    assert "### gpu-gitops diff" in body
    # the commit message lists all of them; the same input gives the same findings part (the
    # diff names the commit, which carries the time it was made)
    message = str(demo.repo.commit(pull["head"]["ref"]).message)
    assert message.count("\n- ") == total
    github.pulls.clear()
    demo.repo.git.push("-q", "origin", "--delete", pull["head"]["ref"])
    demo.repo.git.branch("-D", pull["head"]["ref"])
    assert _pr(demo, github, monkeypatch)[0] == 0
    (again,) = github.pulls
    findings = _timeless(body).split(DIFF_MARKER)[0]
    assert _timeless(again["body"]).split(DIFF_MARKER)[0] == findings


def _timeless(text: str) -> str:
    """`text` without the time the live state was read at (each run reads it anew)."""
    return re.sub(r"at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ by", "at T by", text)
