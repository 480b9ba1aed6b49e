"""The PR bot's commands: `diff` (rendered diff of two refs) and `comment` (one sticky comment)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from gpu_gitops.arguments import ACTIONS_BOT
from gpu_gitops.console import Console
from prbot.github import DEFAULT_API_URL, GitHub, GitHubError, parse_repo
from prbot.live_drift import (
    LiveFinding,
    LiveSource,
    check_live,
    git_field_changed,
    load_reports,
)
from prbot.refdiff import diff_refs
from prbot.report_diff import render_json, render_text
from prbot.report_markdown import COMMENT_LIMIT, MARKER, render_markdown

__all__ = ["cmd_comment", "cmd_diff"]

_MAX_BODY_READ = 4 * COMMENT_LIMIT


def _live_findings(source: str, clusters: list[str], deadline: float) -> LiveSource:
    """The live findings of these clusters in the source --live-findings names: a Prometheus URL
    (the nightly audits' series, every severity, only these clusters' read) or a folder of
    `audit -o json` reports."""
    if not source.startswith(("http://", "https://")):
        return load_reports(source)
    from audit.fleet.prometheus import Prometheus, fleet_budget, prometheus_auth
    from audit.fleet.words import iso
    from gpu_gitops.cli_fleet import read_fleet

    auth = prometheus_auth(os.environ)
    with Prometheus(source, fleet_budget(deadline), auth) as prometheus:
        # no changed cluster: still asked, so a wrong URL is an error on every pull request
        fleet = read_fleet(prometheus, time.time(), "info", clusters=clusters)
    found = tuple(
        LiveFinding(
            f.cluster,
            f.id,
            f.kind,
            f.namespace,
            f.name,
            f.path,
            f.manager,
            iso(f.changed) if f.changed else "",
        )
        for f in fleet.findings()
    )
    return LiveSource(prometheus.url, found, frozenset(c.name for c in fleet.clusters))


def cmd_diff(args: argparse.Namespace, console: Console) -> int:
    result = diff_refs(args.repo, args.base, args.head)
    if args.live_findings:
        changed = [c.name for c in result.clusters if c.changes]
        live = _live_findings(args.live_findings, changed, args.deadline)
        field_changed = git_field_changed(args.repo, result.base.commit, result.head.commit)
        result = check_live(result, live, field_changed)
    render = {"text": render_text, "markdown": render_markdown, "json": render_json}[args.output]
    console.data(render(result))
    return 1 if result.changed else 0


def _read_body(source: str) -> str:
    try:
        if source == "-":
            text = sys.stdin.read(_MAX_BODY_READ + 1)
        else:
            with Path(source).open(encoding="utf-8") as f:
                text = f.read(_MAX_BODY_READ + 1)
    except OSError as exc:
        raise GitHubError(f"cannot read the body from {source}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise GitHubError(f"the body in {source} is not UTF-8 text") from None
    return text


def cmd_comment(args: argparse.Namespace, console: Console) -> int:
    owner, name = parse_repo(args.github_repo)
    if args.pr < 1:
        raise GitHubError(f"--pr {args.pr} is not a pull request number")
    token = os.environ.get("GITHUB_TOKEN", "")
    if not token:
        raise GitHubError(
            "GITHUB_TOKEN is not set: export a token that may comment on pull requests "
            "(in GitHub Actions: env: GITHUB_TOKEN: ${{ github.token }})"
        )
    body = _read_body(args.body)
    if not body.strip():
        raise GitHubError("the comment body is empty; write it with gpu-gitops diff -o markdown")
    if not body.lstrip().startswith(MARKER):
        body = f"{MARKER}\n{body}"
    if len(body) > COMMENT_LIMIT:
        raise GitHubError(
            f"the body is {len(body)} characters, over GitHub's {COMMENT_LIMIT}; "
            "gpu-gitops diff -o markdown cuts its output to fit"
        )
    base_url = os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    with GitHub(token, base_url) as gh:
        author = args.author or gh.token_login() or ACTIONS_BOT
        posted = gh.upsert_comment(owner, name, args.pr, body, MARKER, author)
    console.say(f"{posted.action} comment {posted.id} on {owner}/{name}#{args.pr}")
    if posted.url:
        console.data(posted.url + "\n")
    return 0
