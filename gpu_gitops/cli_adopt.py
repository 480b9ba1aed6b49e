"""`gpu-gitops adopt`: keep live drift by putting it in git, as one reviewed commit on a branch
(and, on request, a pull request).

Exit codes (DESIGN §7): 0 adopted or nothing to adopt; 2 error: nothing written, no branch left.
"""

from __future__ import annotations

import argparse
import os

import git

from adopt.branch import delete_branch, ensure_clean
from adopt.errors import AdoptError
from adopt.message import iso
from adopt.pr import delete_remote_branch, open_pull_request, push_branch
from adopt.run import Prepared, live_objects, prepare, write_branch
from gpu_gitops.cli_audit import live_source, run_audit
from gpu_gitops.commands import say_warnings
from gpu_gitops.console import Console
from kubedata.text import inert, inert_lines
from prbot.github import DEFAULT_API_URL, parse_repo
from renderer.errors import RenderError
from renderer.gitrepo import open_repo
from renderer.publish.deadline import network_budget

__all__ = ["cmd_adopt", "report_plan"]


def report_plan(prepared: Prepared, console: Console) -> None:
    """What is adopted, what was already, and what cannot be (with the command that reverts it)."""
    lines: list[str] = []
    if prepared.adopted:
        lines.append(f"adopt {len(prepared.adopted)} finding(s) of {prepared.cluster}:")
        for item in prepared.adopted:
            f = item.finding
            lines.append(f"  {f.id}  {f.object}  {f.path or '/'}")
            lines += [f"    {item.file}: {edit}" for edit in item.edits]
    if prepared.already:
        lines.append(f"already in the profile ({len(prepared.already)}), not yet rolled out:")
        for a in prepared.already:
            lines.append(f"  {a.finding.id}  {a.finding.object}  {a.finding.path or '/'}")
    if prepared.refused:
        lines.append(f"not adoptable ({len(prepared.refused)}):")
        for r in prepared.refused:
            lines.append(f"  {r.finding.id}  {r.finding.object}  {r.finding.path or '/'}")
            lines.append(f"    why: {r.reason}")
            lines.append(f"    revert: {r.revert}")
    if lines:  # live names and values in each: every line made inert, one line each
        console.data("".join(inert(line) + "\n" for line in lines))


def _current_branch(repo: git.Repo) -> str:
    if repo.head.is_detached:
        raise AdoptError("HEAD is detached: pass --base BRANCH for the pull request")
    return str(repo.active_branch.name)


def cmd_adopt(args: argparse.Namespace, console: Console) -> int:
    token = ""
    if args.pr:
        if not args.repo_slug:
            raise AdoptError("--pr needs --repo-slug OWNER/NAME, the repository to open it in")
        parse_repo(args.repo_slug)
        network_budget()  # a bad GPU_GITOPS_PUSH_TIMEOUT is refused before the audit
        token = os.environ.get("GITHUB_TOKEN", "")
        if not token:
            raise AdoptError(
                "GITHUB_TOKEN is not set: export a token that may push and open pull requests"
            )
    # the checkout's git processes (GitPython keeps some running) end with the command
    with open_repo(args.repo) as repo:
        return _adopt(args, console, repo, token)


def _adopt(args: argparse.Namespace, console: Console, repo: git.Repo, token: str) -> int:
    ensure_clean(repo)  # before the audit: a dirty tree is refused at once
    source = live_source(args)
    result, prepared = run_audit(
        args,
        console,
        lambda result, live: (
            result,
            prepare(repo, result, live_objects(result, live), args.finding),
        ),
    )
    if not result.complete:
        raise AdoptError(
            f"the audit of {args.cluster} is incomplete ({len(result.problems)} read(s) failed): "
            "adopting from a partial view could drop what was not read; run gpu-gitops audit"
        )
    report_plan(prepared, console)
    if not prepared.adopted:
        console.say(f"nothing to adopt in {args.cluster}")
        return 0
    if args.dry_run:
        say_warnings(console, prepared.warnings)
        console.data(inert_lines(prepared.diff))
        console.say(f"dry run: would commit on branch {prepared.branch}; nothing was written")
        return 0
    base = (args.base or _current_branch(repo)) if args.pr else ""
    written = write_branch(repo, prepared, source, result.timestamp)
    posted = None
    if args.pr:
        deadline = network_budget()  # the push and every GitHub call, in all
        try:
            push_branch(repo, args.remote, written.branch, deadline)
            posted = open_pull_request(
                repo,
                prepared,
                written,
                slug=args.repo_slug,
                base=base,
                token=token,
                api_url=os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
                live_source=source,
                when=result.timestamp,
                deadline=deadline,
            )
        except BaseException as exc:
            # Ctrl-C too (no Exception): a push cut short or stopped at the deadline may have
            # landed: the remote branch goes too, where it still points at this run's commit
            if not written.created:
                raise
            undone = delete_remote_branch(
                repo, args.remote, written.branch, written.commit, deadline
            )
            delete_branch(repo, written.branch, written.commit)
            if undone and isinstance(exc, AdoptError | RenderError):
                raise AdoptError(f"{exc}; {undone}") from None
            raise
    if written.created:
        console.say(f"branch {written.branch}: commit {written.commit[:12]}")
    else:
        console.say(f"branch {written.branch} already holds this change: nothing new")
    if posted is not None:
        console.say(f"{posted.action} pull request #{posted.id} on {args.repo_slug}")
        if posted.url:
            console.data(posted.url + "\n")
    # the adopted profile's warnings, once nothing can fail any more (an error is one line)
    say_warnings(console, prepared.warnings)
    console.say(f"read at {iso(result.timestamp)} from {source}")
    return 0
