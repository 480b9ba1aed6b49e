"""What the adopt commit and pull request say: the findings kept (who changed what, when), where
the live state was read, and the profile change. Pure; values appear only as the audit redacted
them, and no secret value is ever a profile value (plan.py refuses redacted findings).

Live values, object names and managedFields manager names are anyone's who can patch an object:
in the commit message every line is made inert (kubedata.text), so none can start another line (a
forged `Adopted-From:` trailer, a fake finding) or carry a terminal escape; in the pull request
they are Markdown-escaped text or closed code spans, never Markdown or HTML."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from audit.findings.finding import Finding
from kubedata.text import inert, markdown_code, markdown_text

from adopt.plan import Adoptable, Refused

__all__ = ["MARKER", "commit_message", "iso", "pr_body", "pr_title", "who"]

MARKER = "<!-- gpu-gitops:adopt -->"


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def who(f: Finding) -> str:
    """Who changed it and when, from managedFields."""
    if not f.managers:
        return "unattributed (no managedFields entry)"
    return ", ".join(f"{m.manager} at {m.time}" if m.time else m.manager for m in f.managers)


def _what(item: Adoptable) -> str:
    return "; ".join(str(e) for e in item.edits)


def pr_title(cluster: str, adopted: Sequence[Adoptable]) -> str:
    n = len(adopted)
    return f"Adopt live drift of {cluster}: {n} finding{'s' if n != 1 else ''}"


def commit_message(
    cluster: str, adopted: Sequence[Adoptable], live_source: str, when: float
) -> str:
    lines = [pr_title(cluster, adopted), ""]
    for item in adopted:
        f = item.finding
        lines.append(f"- {f.id} {f.object} {f.path or '/'} (changed by {who(f)})")
        lines.append(f"  {item.file}: {_what(item)}")
    lines += ["", f"Adopted-From: {live_source} at {iso(when)}"]
    return "\n".join(inert(line) for line in lines) + "\n"


def _code(text: str) -> str:
    return markdown_code(text, cell=True)


def pr_body(
    cluster: str,
    adopted: Sequence[Adoptable],
    refused: Sequence[Refused],
    live_source: str,
    when: float,
    diff_markdown: str,
) -> str:
    """The pull request: adopted findings first, then the rendered diff the PR bot would post."""
    out = [
        MARKER,
        f"## {pr_title(cluster, adopted)}",
        "",
        f"Live state read from {markdown_text(live_source)} at {iso(when)} by "
        "`gpu-gitops adopt`: these "
        "hand edits are kept by putting them in git.",
        "",
        "| Finding | Object | Path | Changed by | Profile change |",
        "|---|---|---|---|---|",
    ]
    for item in adopted:
        f = item.finding
        out.append(
            f"| {_code(f.id)} | {_code(str(f.object))} | {_code(f.path or '/')} "
            f"| {markdown_text(who(f))} | {_code(item.file)}: {markdown_text(_what(item))} |"
        )
    if refused:
        out += ["", f"<details><summary>Not adopted ({len(refused)})</summary>", ""]
        for r in refused:
            f = r.finding
            where = " ".join(markdown_code(t) for t in (f.id, str(f.object), f.path or "/"))
            out.append(f"- {where}: ")
            out.append(f"  {markdown_text(r.reason)}. Revert: {markdown_code(r.revert)}")
        out += ["", "</details>"]
    out += ["", diff_markdown.rstrip("\n")]
    return "\n".join(out) + "\n"
