"""What the adopt commit and pull request say: the findings kept (who changed what, when), where
the live state was read, and the profile change. Pure; values appear only as the audit redacted
them, and no secret value is ever a profile value (plan.py refuses redacted findings)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from audit.findings.finding import Finding

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
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


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
        f"Live state read from {live_source} at {iso(when)} by `gpu-gitops adopt`: these "
        "hand edits are kept by putting them in git.",
        "",
        "| Finding | Object | Path | Changed by | Profile change |",
        "|---|---|---|---|---|",
    ]
    for item in adopted:
        f = item.finding
        out.append(
            f"| `{f.id}` | `{_cell(str(f.object))}` | `{_cell(f.path or '/')}` "
            f"| {_cell(who(f))} | `{_cell(item.file)}`: {_cell(_what(item))} |"
        )
    if refused:
        out += ["", f"<details><summary>Not adopted ({len(refused)})</summary>", ""]
        for r in refused:
            f = r.finding
            out.append(f"- `{f.id}` `{_cell(str(f.object))}` `{_cell(f.path or '/')}`: ")
            out.append(f"  {_cell(r.reason)}. Revert: `{_cell(r.revert)}`")
        out += ["", "</details>"]
    out += ["", diff_markdown.rstrip("\n")]
    return "\n".join(out) + "\n"
