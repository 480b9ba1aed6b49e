"""The adopt pull request: push the branch, then open it (or update the open one) through the PR
bot's GitHub client, with the same retry policy as `comment`. The body is the adopted findings
followed by the rendered diff and GPU risk warnings of base..branch, as the PR bot would post them.

The push and the GitHub calls draw on one deadline (renderer.publish.deadline, the
GPU_GITOPS_PUSH_TIMEOUT of `publish --push`): a remote whose hook hangs is stopped with all it
started, and a GitHub that answers slowly is given up on. Undoing a failed run deletes the remote
branch only where it holds this run's commit, with its own short bound.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import git
from kubedata.budget import Budget
from prbot.github import GitHub, Posted, parse_repo
from prbot.refdiff import diff_refs
from prbot.report_markdown import COMMENT_LIMIT, render_markdown
from renderer.errors import GitError
from renderer.publish.gitobjects import run_git

from adopt.errors import AdoptError
from adopt.message import pr_body, pr_title
from adopt.run import Prepared, Written

__all__ = ["CLEANUP_SECONDS", "delete_remote_branch", "open_pull_request", "push_branch"]

CLEANUP_SECONDS = 30.0
"""What each git step of undoing a push may take at most (no more than the deadline itself)."""
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}


def push_branch(repo: git.Repo, remote: str, branch: str, deadline: Budget) -> None:
    """Push the branch (never forced: a remote branch with other commits is an error)."""
    try:
        run_git(
            repo,
            "push",
            "--quiet",
            remote,
            f"refs/heads/{branch}:refs/heads/{branch}",
            env=_NO_PROMPT,
            deadline=deadline,
        )
    except GitError as exc:
        raise AdoptError(f"cannot push {branch} to {remote}: {exc}") from None


def delete_remote_branch(
    repo: git.Repo, remote: str, branch: str, commit: str, deadline: Budget
) -> str:
    """Undo what this run may have pushed: the remote branch, where it holds `commit`. What
    became of it, for the error message ("" when the remote never had it)."""
    ref = f"refs/heads/{branch}"
    timeout = min(CLEANUP_SECONDS, deadline.seconds)

    def holds() -> bool:
        listed = run_git(repo, "ls-remote", remote, ref, env=_NO_PROMPT, timeout=timeout)
        return commit.encode() in listed

    try:
        if not holds():
            return ""
        lease = f"--force-with-lease={ref}:{commit}"  # never a branch someone else moved
        with contextlib.suppress(GitError):  # a hook that hangs after the ref moved: look again
            run_git(
                repo, "push", "--quiet", lease, remote, f":{ref}", env=_NO_PROMPT, timeout=timeout
            )
        if not holds():
            return f"branch {branch} was deleted from {remote} again"
    except GitError:
        pass
    return f"{remote} may still hold branch {branch}: delete it with git push {remote} :{ref}"


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
    deadline: Budget,
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
        # the findings part is at most FINDINGS_LIMIT bytes: the diff has the rest of the limit
        render_markdown(diff, limit=COMMENT_LIMIT - len(intro.encode("utf-8")) - 1),
    )
    with GitHub(token, api_url, budget=deadline) as gh:
        title = pr_title(prepared.cluster, head)
        return gh.upsert_pull(owner, name, written.branch, base, title, body)
