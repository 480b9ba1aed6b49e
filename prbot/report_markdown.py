"""`diff -o markdown`: the body of one pull-request comment.

Risk warnings come first, then a summary table and one <details> section per cluster. The body is
budgeted as a whole: it never exceeds GitHub's comment limit, every code fence it opens is closed,
and what was cut is said at the end.
"""

from __future__ import annotations

import re

from kubedata.text import code_span, inert, markdown_text

from prbot.diff import ObjectChange
from prbot.diff_lines import (
    cluster_counts,
    node_line,
    object_lines,
    object_title,
    status_note,
)
from prbot.refdiff import ClusterDiff, RefDiff

__all__ = ["COMMENT_LIMIT", "MARKER", "render_markdown"]

MARKER = "<!-- gpu-gitops:diff -->"
"""Hidden first line of the comment; `comment` finds its earlier comment by it."""
COMMENT_LIMIT = 65_536
"""GitHub's limit for an issue comment body. Budgeted in UTF-8 bytes, which are never fewer."""
_NOTICE_RESERVE = 1_024
_SHOWN_CUT_NAMES = 5
_BACKTICKS = re.compile(r"`+")


def _md(text: str) -> str:
    """Text outside code, from profiles or git: one line (a newline could end the blockquote or
    table it sits in), nothing it could open (see markdown_text), no bidi control."""
    return markdown_text(text)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


class _Body:
    """The comment body under construction, with what had to be left out."""

    def __init__(self, limit: int):
        self.limit = limit - _NOTICE_RESERVE
        self.parts: list[str] = []
        self.size = 0
        self.full = False

    def fits(self, text: str, closing: int = 0) -> bool:
        return not self.full and self.size + _size(text) + closing <= self.limit

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += _size(text)

    def try_add(self, text: str, closing: int = 0) -> bool:
        if self.fits(text, closing):
            self.add(text)
            return True
        self.full = True
        return False


def _fence(lines: list[str]) -> str:
    longest = max((len(m) for line in lines for m in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def _summary_table(d: RefDiff) -> list[str]:
    rows = [
        "| Cluster | Added | Changed | Removed | Warnings |",
        "|---|---:|---:|---:|---:|",
    ]
    for c in d.clusters:
        note = "" if c.status in ("changed", "unchanged") else f" ({_md(status_note(c))})"
        rows.append(
            f"| {_md(c.name)}{note} | {c.count('added')} | {c.count('changed')} "
            f"| {c.count('removed')} | {len(c.risks)} |"
        )
    return rows


def _object_block(change: ObjectChange) -> tuple[str, list[str], str]:
    """Header, fenced lines and fence of one object, in GitHub's diff highlighting."""
    lines: list[str] = []
    for mark, text in object_lines(change):
        # in a fence longer than any backtick run it holds, so only one line each and no bidi
        text = inert(text)
        lines.append(f"@@ {text} @@" if mark == "@" else f"{mark} {text}")
    fence = _fence(lines)
    return f"#### {_md(object_title(change))}\n\n{fence}diff\n", lines, fence


def _cluster_section(body: _Body, c: ClusterDiff) -> bool:
    """Add one <details> section; False when the budget ran out inside or before it."""
    summary = f"<b>{_md(c.name)}</b>: {cluster_counts(c)}"
    if c.status in ("added", "removed", "renamed"):
        summary += f" (cluster {_md(status_note(c))})"
    if c.risks:
        summary += f", ⚠️ {len(c.risks)} warning(s)"
    close = "</details>\n\n"
    if not body.try_add(f"<details>\n<summary>{summary}</summary>\n\n", _size(close)):
        return False
    if not c.changes and not body.try_add(
        "_The rendered objects do not change._\n\n", _size(close)
    ):
        body.add(close)
        return False
    for change in c.changes:
        header, lines, fence = _object_block(change)
        end = f"{fence}\n\n"
        if not body.try_add(header, _size(end) + _size(close)):
            body.add(close)
            return False
        for i, line in enumerate(lines):
            if not body.try_add(line + "\n", _size(end) + _size(close)):
                cut = len(lines) - i
                body.add(end)
                body.add(f"_✂️ {cut} more line(s) of this object cut._\n\n")
                body.add(close)
                return False
        body.add(end)
    body.add(close)
    return True


def _nodes_block(d: RefDiff) -> str:
    """spec.nodes changes and their commands: labels are not in git, so nothing applies them."""
    lines: list[str] = []
    for c in d.clusters:
        for n in c.nodes:
            lines += [inert(f"# {c.name}: {node_line(n)}"), inert(n.command)]
    if not lines:
        return ""
    fence = _fence(lines)
    return (
        f"**Node labels to set by hand** ({sum(len(c.nodes) for c in d.clusters)} node(s); "
        "labels are not in git, so run these once Flux has applied the merge):\n\n"
        f"{fence}sh\n" + "".join(line + "\n" for line in lines) + f"{fence}\n\n"
    )


def _live_block(d: RefDiff) -> str:
    """The changes against what is live: overwrites as a warning, codifications as a note."""
    if d.live is None:
        return "_Live drift not checked (no `--live-findings`)._\n\n"
    over = [(c, h) for c, hits in d.live.hits.items() for h in hits if not h.codifies]
    codify = [(c, h) for c, hits in d.live.hits.items() for h in hits if h.codifies]
    out = f"_Live drift checked against {code_span(d.live.source)}._\n\n"
    if over:
        out += f"> [!WARNING]\n> **{len(over)} live change(s) this merge overwrites**\n>\n"
        out += "".join(f"> - **{_md(c)}**: {h.message(code_span)}\n" for c, h in over) + "\n"
    if codify:
        out += f"> [!NOTE]\n> **{len(codify)} live drift finding(s) this merge codifies**\n>\n"
        out += "".join(f"> - **{_md(c)}**: {h.message(code_span)}\n" for c, h in codify) + "\n"
    if d.live.unaudited:
        names = ", ".join(_md(n) for n in d.live.unaudited)
        out += f"_No audit in the live findings for: {names}._\n\n"
    return out


def _validate_block(d: RefDiff) -> str:
    """What `validate` warns about the changed clusters at head."""
    if not d.warnings:
        return ""
    items = "".join(f"> - {_md(str(w))}\n" for w in d.warnings)
    return f"> [!NOTE]\n> **validate: {len(d.warnings)} warning(s) at head**\n>\n{items}\n"


def _notice(
    d: RefDiff, warnings: int, blocks: list[str], rows: int, partial: str | None, cut: list[str]
) -> str:
    parts = []
    if warnings:
        parts.append(f"{warnings} warning(s)")
    parts += [f"the {b}" for b in blocks]
    if rows:
        parts.append(f"{rows} summary row(s)")
    if partial:
        parts.append(f"the rest of {partial}")
    if cut:
        names = ", ".join(cut[:_SHOWN_CUT_NAMES]) + (", …" if len(cut) > _SHOWN_CUT_NAMES else "")
        parts.append(f"{len(cut)} cluster section(s) ({names})")
    return (
        "---\n✂️ **Cut to fit GitHub's 65,536-character comment limit:** "
        + "; ".join(parts)
        + ". For the full diff run "
        + f"`gpu-gitops diff --base {d.base.commit[:12]} --head {d.head.commit[:12]}`.\n"
    )


def render_markdown(d: RefDiff, limit: int = COMMENT_LIMIT) -> str:
    """The pull-request comment: marker, warnings, summary table, one <details> per cluster."""
    body = _Body(limit)
    body.add(f"{MARKER}\n### gpu-gitops diff\n\n")
    changed = sum(1 for c in d.clusters if c.changes)
    body.add(
        f"`{d.base.commit[:7]}` ({_md(d.base.ref)}) → `{d.head.commit[:7]}` ({_md(d.head.ref)}): "
        f"**{changed}** of {d.total} cluster(s) change.\n\n"
    )
    if not d.clusters:
        body.add(f"No rendered changes: all {d.total} cluster(s) render the same objects.\n")
        return "".join(body.parts)
    # After the first cut nothing else is added (body.full), so one reserve covers the closers.
    live = _live_block(d)
    cut_live = not body.try_add(live)
    cut_warnings = len(d.risks)
    if d.risks and body.try_add(f"> [!WARNING]\n> **{len(d.risks)} GPU risk warning(s)**\n>\n"):
        for r in d.risks:
            if not body.try_add(f"> - **{_md(r.cluster)}** `{_md(r.where)}`: {_md(r.message)}\n"):
                break
            cut_warnings -= 1
        body.add("\n")
    cut_blocks = [
        what
        for what, block in (
            ("node labels", _nodes_block(d)),
            ("validate warnings", _validate_block(d)),
        )
        if block and not body.try_add(block)
    ]
    if cut_live:
        cut_blocks.insert(0, "live drift")
    rows = _summary_table(d)
    cut_rows = len(rows) - 2
    if body.try_add("\n".join(rows[:2]) + "\n"):
        for row in rows[2:]:
            if not body.try_add(row + "\n"):
                break
            cut_rows -= 1
        body.add("\n")
    partial = None
    cut: list[str] = []
    for i, c in enumerate(d.clusters):
        if body.full:
            cut = [x.name for x in d.clusters[i:]]
            break
        before = body.size
        if not _cluster_section(body, c):
            if body.size > before:
                partial = c.name
                cut = [x.name for x in d.clusters[i + 1 :]]
            else:
                cut = [x.name for x in d.clusters[i:]]
            break
    if cut_warnings or cut_blocks or cut_rows or partial or cut:
        body.add(_notice(d, cut_warnings, cut_blocks, cut_rows, partial, cut))
    text = "".join(body.parts)
    assert _size(text) <= limit, "markdown budget overrun"
    return text
