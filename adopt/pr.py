"""The adopt pull request: push the branch, then open it (or update the open one) through the PR
bot's GitHub client, with the same retry policy as `comment`. The body is the adopted findings
followed by the rendered diff and GPU risk warnings of base..branch, as the PR bot would post them.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import git
from prbot.github import GitHub, Posted, parse_repo
from prbot.refdiff import diff_refs
from prbot.report_markdown import COMMENT_LIMIT, render_markdown
from renderer.errors import GitError
from renderer.publish.gitobjects import run_git

from adopt.errors import AdoptError
from adopt.message import pr_body, pr_title
from adopt.run import Prepared, Written

__all__ = ["delete_remote_branch", "open_pull_request", "push_branch"]


def push_branch(repo: git.Repo, remote: str, branch: str) -> None:
    """Push the branch (never forced: a remote branch with other commits is an error)."""
    try:
        run_git(repo, "push", "--quiet", remote, f"refs/heads/{branch}:refs/heads/{branch}")
    except GitError as exc:
        raise AdoptError(f"cannot push {branch} to {remote}: {exc}") from None


def delete_remote_branch(repo: git.Repo, remote: str, branch: str, commit: str) -> None:
    """Undo a push this run made, if the remote branch points at its `commit` (best effort: the
    push may not have happened, and a branch someone else pushed is never deleted)."""
    lease = f"--force-with-lease=refs/heads/{branch}:{commit}"
    with contextlib.suppress(GitError):
        run_git(repo, "push", "--quiet", lease, remote, f":refs/heads/{branch}")


def open_pull_request(
    repo: git.Repo,
    prepared: Prepared,
    written: Written,
    *,
    slug: str,
    base: str,
    token: str,
    api_url: str,
    live_source: str,
    when: float,
) -> Posted:
    """Open (or update) the pull request of `written.branch` into `base`."""
    owner, name = parse_repo(slug)
    head = prepared.adopted
    intro = pr_body(prepared.cluster, head, prepared.refused, live_source, when, "")
    diff = diff_refs(Path(str(repo.working_dir)), prepared.base, written.commit)
    body = pr_body(
        prepared.cluster,
        head,
        prepared.refused,
        live_source,
        when,
        render_markdown(diff, limit=max(COMMENT_LIMIT - len(intro) - 1, 4096)),
    )
    with GitHub(token, api_url) as gh:
        title = pr_title(prepared.cluster, head)
        return gh.upsert_pull(owner, name, written.branch, base, title, body)
