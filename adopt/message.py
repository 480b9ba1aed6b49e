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
from kubedata.text import inert, markdown_code, markdown_text, shorten

from adopt.plan import Adoptable, Refused

__all__ = ["FINDINGS_LIMIT", "MARKER", "commit_message", "iso", "pr_body", "pr_title", "who"]

MARKER = "<!-- gpu-gitops:adopt -->"
FINDINGS_LIMIT = 32_768
"""UTF-8 bytes of the body's findings part; the rendered diff gets the rest of GitHub's 65,536.
Findings past it are counted in a note, never cut mid-row: the commit message lists them all."""
CELL_CHARS = 200
"""A value or manager name longer than this is shortened in the body (the diff shows it whole)."""
_NOTE_RESERVE = 512


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


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _text(text: str) -> str:
    return markdown_text(shorten(inert(text), CELL_CHARS))


def _row(item: Adoptable) -> str:
    f = item.finding
    return (
        f"| {_code(f.id)} | {_code(str(f.object))} | {_code(f.path or '/')} "
        f"| {_text(who(f))} | {_code(item.file)}: {_text(_what(item))} |"
    )


def _refused_lines(r: Refused) -> str:
    f = r.finding
    where = " ".join(markdown_code(t) for t in (f.id, str(f.object), f.path or "/"))
    return f"- {where}: \n  {_text(r.reason)}. Revert: {markdown_code(shorten(r.revert, 1000))}"


def _fitting(lines: list[str], size: int, limit: int) -> list[str]:
    """The first of `lines` that fit in `limit` bytes with `size` already used."""
    kept: list[str] = []
    for line in lines:
        size += _size(line) + 1
        if size > limit - _NOTE_RESERVE:
            break
        kept.append(line)
    return kept


def pr_body(
    cluster: str,
    adopted: Sequence[Adoptable],
    refused: Sequence[Refused],
    live_source: str,
    when: float,
    diff_markdown: str,
    limit: int = FINDINGS_LIMIT,
) -> str:
    """The pull request: adopted findings first (within `limit` bytes), then the rendered diff
    the PR bot would post."""
    out = [
        MARKER,
        f"## {pr_title(cluster, adopted)}",
        "",
        f"Live state read from {markdown_text(live_source)} at {iso(when)} by "
        "`gpu-gitops adopt`: these hand edits are kept by putting them in git.",
        "",
        "| Finding | Object | Path | Changed by | Profile change |",
        "|---|---|---|---|---|",
    ]
    rows = _fitting([_row(item) for item in adopted], _size("\n".join(out)), limit)
    out += rows
    if len(rows) < len(adopted):
        more = len(adopted) - len(rows)
        out += ["", f"_{more} more finding{'s' if more != 1 else ''} adopted: the commit message "
                "lists every one._"]  # fmt: skip
    if refused:
        out += ["", f"<details><summary>Not adopted ({len(refused)})</summary>", ""]
        shown = _fitting([_refused_lines(r) for r in refused], _size("\n".join(out)), limit)
        out += shown
        if len(shown) < len(refused):
            out += ["", f"_{len(refused) - len(shown)} more not adopted: gpu-gitops adopt "
                    "--dry-run lists every one, with the command that reverts it._"]  # fmt: skip
        out += ["", "</details>"]
    out += ["", diff_markdown.rstrip("\n")]
    return "\n".join(out) + "\n"
