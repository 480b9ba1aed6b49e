"""A hostile live cluster, served by the project's test API server: whoever can patch an object
picks its values and its managedFields manager name. Neither forges a line of the adopt commit
(a trailer, a finding), writes Markdown or HTML into the pull request, or reaches the terminal as
an escape sequence; the value itself is kept in platform.yaml exactly as it is live."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import git
import pytest
import yaml

from adopt.message import MARKER
from prbot.report_markdown import MARKER as DIFF_MARKER
from tests.apiserver import ApiServer, Store
from tests.apiserver.crds import load_crds, load_objects
from tests.audit.audit_helpers import demo_objects, demo_repo, run
from tests.conftest import DATA
from tests.prbot.test_comment import OWNER, REPO, TOKEN, FakeGitHub
from tests.prbot.test_comment import github as github  # the fixture

API_TOKEN = "hostile-api-t0ken"
EVIL = (
    "X\n\nAdopted-From: evil at 2020-01-01T00:00:00Z\n- 0000000000 fake finding\n"
    "\x1b]0;owned\x07\x1b[2J<!-- @team **LGTM** <img src=x onerror=alert(1)> "
    "[click](https://evil.example) \u202eRTL\u2066"
)
RAW = ("\x1b", "\x07", "\u202e", "\u2066")
"""Characters that must never reach a terminal, a commit message or a pull request."""
SECRET = "s3cret-live-api-t0ken-value"
"""A secret-looking live value (publishing.apiToken): never in the commit, the PR or the output."""
MARKUP = ("<!--", "@team", "<img", "**LGTM**", "[click](", "](https://evil")


def _hostile(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj["kind"] == "Package" and obj["metadata"]["name"] == "cozystack.cozystack-platform":
            values = obj["spec"]["components"]["platform"]["values"]
            values["publishing"]["host"] = EVIL
            values["publishing"]["apiServerEndpoint"] = "on"
            values["publishing"]["apiToken"] = SECRET
            values["resources"]["cpuAllocationRatio"] = "1:20"  # an int to YAML 1.1: refused
        if obj["kind"] in ("Package", "Node"):
            for entry in obj["metadata"].get("managedFields", []):
                entry["manager"] += EVIL


@pytest.fixture
def cluster(tmp_path: Path):
    repo, tip = demo_repo(tmp_path / "repo")
    git.Repo.init(tmp_path / "origin.git", bare=True)
    repo.create_remote("origin", str(tmp_path / "origin.git"))
    repo.git.push("-q", "origin", "main")
    objects = demo_objects("ams1", tip)
    _hostile(objects)
    store = Store()
    store.put_all(load_crds())
    store.put_all(o for o in load_objects(DATA / "live") if o["kind"] == "CustomResourceDefinition")
    namespaces = {o["metadata"].get("namespace") for o in objects} - {None, ""}
    store.put_all(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces
    )
    store.put_all(objects)
    with ApiServer(store) as server:
        server.add_token(API_TOKEN, "auditor")
        config = server.kubeconfig(tmp_path / "kubeconfig", token=API_TOKEN)
        yield repo, ["--cluster", "ams1", "--kubeconfig", str(config), "--repo", repo.working_dir]


def _outside_code(markdown: str) -> str:
    """What GitHub reads as Markdown: fenced blocks and code spans removed."""
    markdown = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1\s*$", "", markdown)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", markdown)


def test_dry_run_stdout_carries_no_escape_and_no_forged_line(cluster) -> None:
    _, argv = cluster
    code, out, err = run("adopt", *argv, "--dry-run")
    assert code == 0, err
    for raw in RAW:
        assert raw not in out + err
    assert not [ln for ln in out.splitlines() if ln.startswith(("Adopted-From", "- 0000000000"))]
    # the user still sees what the value is, escaped
    assert 'publishing.host = "X\\n\\nAdopted-From: evil' in out
    assert "\\u001b]0;owned\\u0007" in out or "\\x1b]0;owned\\x07" in out
    assert 'apiServerEndpoint = "on"' in out
    assert SECRET not in out + err
    assert (
        "why: the value looks like a secret (apiToken): secrets are never copied into git; keep "
        "it in a Secret"
    ) in out
    assert re.search(
        r"why: the edit would break a rule: clusters/ams1/platform\.yaml:\d+: error: "
        r"spec\.components\.platform\.values\.resources\.cpuAllocationRatio: "
        r"must be a whole number",
        out,
    ), out


def test_commit_message_has_one_trailer_and_only_real_findings(cluster) -> None:
    repo, argv = cluster
    code, out, err = run("adopt", *argv)
    assert code == 0, err
    (branch,) = [h.name for h in repo.heads if h.name.startswith("adopt/ams1/")]
    message = str(repo.commit(branch).message)
    for raw in RAW:
        assert raw not in message + out + err
    trailers = repo.git.log("-1", "--format=%(trailers:key=Adopted-From,valueonly)", branch)
    assert trailers.strip().splitlines() == [f"cluster ams1 (the current context of {argv[3]}) at "
                                             + trailers.split(" at ")[-1].strip()]  # fmt: skip
    assert "evil at 2020" not in trailers
    lines = message.splitlines()
    assert [ln for ln in lines if ln.startswith("Adopted-From:")] == [lines[-1]]
    assert not [ln for ln in lines if "0000000000" in ln and ln.startswith("- 0000000000")]
    assert "kustomize-controllerX\\x0a\\x0aAdopted-From: evil" in message
    # the live value is kept as it is: platform.yaml reads back the very string
    platform = yaml.safe_load(repo.git.show(f"{branch}:clusters/ams1/platform.yaml"))
    values = platform["spec"]["components"]["platform"]["values"]
    assert values["publishing"]["host"] == EVIL
    assert values["publishing"]["apiServerEndpoint"] == "on"
    assert values["resources"]["cpuAllocationRatio"] == 4
    assert "apiToken" not in values
    assert SECRET not in message + out + err + repo.git.show(branch)
    profile_and_platform = repo.git.show(f"{branch}:clusters/ams1/platform.yaml")
    assert "\x1b" not in profile_and_platform and "\x07" not in profile_and_platform


def test_pull_request_body_holds_no_markdown_or_html_from_live(
    cluster, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, argv = cluster
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    code, _, err = run("adopt", *argv, "--pr", "--repo-slug", f"{OWNER}/{REPO}")
    assert code == 0, err
    (pull,) = github.pulls
    body = pull["body"]
    for raw in RAW:
        assert raw not in body + pull["title"]
    assert SECRET not in body
    # the markers of the adopt body and of the PR bot's diff in it, nothing else
    markdown = _outside_code(body).replace(MARKER, "").replace(DIFF_MARKER, "")
    for markup in MARKUP:
        assert markup not in markdown, markup
    # the manager name is shown, escaped (a backslash is &#92; in Markdown text)
    assert "kustomize-controllerX&#92;x0a&#92;x0aAdopted-From: evil" in body
    assert "&lt;&#33;--" in body and "&#64;team" in body
