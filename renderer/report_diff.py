"""`diff` output: text for people, JSON for tools, Markdown for one pull-request comment.

Risk warnings come first in every format. Markdown is budgeted as a whole: it never exceeds GitHub's
comment limit, every code fence it opens is closed, and what was cut is said at the end.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

from renderer.diff import FieldChange, ListKey, ObjectChange
from renderer.refdiff import ClusterDiff, RefDiff
from renderer.risks import Risk
from renderer.yaml_io import dump_yaml

__all__ = [
    "COMMENT_LIMIT",
    "MARKER",
    "change_lines",
    "render_json",
    "render_markdown",
    "render_text",
]

MARKER = "<!-- gpu-gitops:diff -->"
"""Hidden first line of the comment; `comment` finds its earlier comment by it."""
COMMENT_LIMIT = 65_536
"""GitHub's limit for an issue comment body. Budgeted in UTF-8 bytes, which are never fewer."""
_NOTICE_RESERVE = 1_024
_SHOWN_CUT_NAMES = 5
_MARKS = {"added": "+", "removed": "-", "changed": "±"}
_BACKTICKS = re.compile(r"`+")
_PLAIN_SCALAR = re.compile(r"[^\s\"'`{}\[\],&*#?|<>=!%@][^\n]*[^\s]|[^\s\"'`{}\[\],&*#?|<>=!%@]")


# --- shared: what each change looks like, dyff style ------------------------------------------


def _value_lines(value: Any) -> list[str]:
    if isinstance(value, str):
        if value and _PLAIN_SCALAR.fullmatch(value) and value not in ("true", "false", "null"):
            return [value]
        if "\n" in value.rstrip("\n"):
            return value.rstrip("\n").split("\n")
        return [json.dumps(value)]
    if isinstance(value, (dict, list)):
        if not value:
            return [json.dumps(value)]
        return dump_yaml(value).rstrip("\n").split("\n")
    return [json.dumps(value)]


def _type_name(value: Any) -> str:
    names = {dict: "map", list: "list", str: "string", bool: "bool", int: "int", float: "float"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _entry_word(fc: FieldChange) -> str:
    last = fc.path[-1] if fc.path else ""
    return "list entry" if isinstance(last, (int, ListKey)) else "map entry"


def _entries(n: int) -> str:
    return "one list entry" if n == 1 else f"{n} list entries"


def change_lines(fc: FieldChange) -> list[tuple[str, str]]:
    """(marker, text) lines of one field change: '!' describes it, '-'/'+' give the values."""
    if fc.change == "added":
        return [("!", f"+ one {_entry_word(fc)} added")] + [
            ("+", v) for v in _value_lines(fc.after)
        ]
    if fc.change == "removed":
        return [("!", f"- one {_entry_word(fc)} removed")] + [
            ("-", v) for v in _value_lines(fc.before)
        ]
    if fc.change == "reordered":
        return [
            ("!", "⇆ order changed"),
            ("-", ", ".join(map(str, fc.before))),
            ("+", ", ".join(map(str, fc.after))),
        ]
    before, after = fc.before, fc.after
    if isinstance(before, list) and isinstance(after, list):
        gone = [v for v in before if v not in after]
        new = [v for v in after if v not in before]
        if gone or new:
            counts = [f"{_entries(len(gone))} removed"] if gone else []
            counts += [f"{_entries(len(new))} added"] if new else []
            lines = [("!", "± " + ", ".join(counts))]
            lines += [("-", x) for v in gone for x in _value_lines(v)]
            lines += [("+", x) for v in new for x in _value_lines(v)]
            return lines
    if type(before) is not type(after) and not (
        isinstance(before, (int, float)) and isinstance(after, (int, float))
    ):
        head = f"± type change from {_type_name(before)} to {_type_name(after)}"
    else:
        head = "± value change"
    return (
        [("!", head)]
        + [("-", v) for v in _value_lines(before)]
        + [("+", v) for v in _value_lines(after)]
    )


def _title(change: ObjectChange) -> str:
    return f"{_MARKS[change.change]} {change.key}"


def _object_lines(change: ObjectChange) -> Iterator[tuple[str, str]]:
    """Lines of one object: whole body for added/removed, field changes for changed."""
    if change.change == "added":
        for line in _value_lines(change.after):
            yield "+", line
    elif change.change == "removed":
        for line in _value_lines(change.before):
            yield "-", line
    else:
        for fc in change.fields:
            yield "@", fc.display
            yield from change_lines(fc)


def _counts(c: ClusterDiff) -> str:
    return f"{c.count('added')} added, {c.count('changed')} changed, {c.count('removed')} removed"


def _headline(d: RefDiff) -> str:
    changed = sum(1 for c in d.clusters if c.changes)
    return (
        f"{d.base.ref} ({d.base.commit[:7]}) -> {d.head.ref} ({d.head.commit[:7]}): "
        f"{changed} of {d.total} cluster(s) change, {len(d.risks)} warning(s)"
    )


# --- text --------------------------------------------------------------------------------------


def render_text(d: RefDiff) -> str:
    """dyff's human style: warnings first, then per cluster each object's changed paths."""
    out = [f"gpu-gitops diff {_headline(d)}", ""]
    if d.risks:
        out.append(f"WARNINGS ({len(d.risks)})")
        out += [f"  ! {r}" for r in d.risks]
        out.append("")
    for c in d.clusters:
        status = "" if c.status in ("changed", "unchanged") else f" (cluster {c.status})"
        counts = _counts(c) if c.changes else "rendered objects unchanged"
        out.append(f"{c.name}{status}: {counts}")
        for change in c.changes:
            out.append(f"  {_title(change)}")
            for mark, text in _object_lines(change):
                if mark == "@":
                    out.append(f"    {text}")
                elif mark == "!":
                    out.append(f"      {text}")
                elif change.change == "changed":
                    out.append(f"        {mark} {text}")
                else:
                    out.append(f"    {mark} {text}")
        out.append("")
    if not d.clusters:
        out.append(f"no changes: all {d.total} cluster(s) render the same objects")
    return "\n".join(out).rstrip("\n") + "\n"


# --- json --------------------------------------------------------------------------------------


def _risk_json(r: Risk) -> dict[str, Any]:
    return {
        "cluster": r.cluster,
        "kind": r.kind,
        "file": r.file,
        "line": r.line,
        "ref": r.ref,
        "message": r.message,
    }


def _field_json(fc: FieldChange) -> dict[str, Any]:
    out: dict[str, Any] = {"path": fc.display, "pointer": fc.pointer, "change": fc.change}
    if fc.change != "added":
        out["before"] = fc.before
    if fc.change != "removed":
        out["after"] = fc.after
    return out


def _object_json(change: ObjectChange) -> dict[str, Any]:
    obj = change.after if change.after is not None else change.before
    key = change.key
    out: dict[str, Any] = {
        "object": {
            "apiVersion": (obj or {}).get("apiVersion", ""),
            "kind": key.kind,
            "namespace": key.namespace,
            "name": key.name,
        },
        "change": change.change,
    }
    if change.change == "changed":
        out["fields"] = [_field_json(fc) for fc in change.fields]
    else:
        out["manifest"] = obj
    return out


def render_json(d: RefDiff) -> str:
    """Machine-readable report (schemaVersion 1; fields may be added)."""
    doc = {
        "schemaVersion": 1,
        "base": {"ref": d.base.ref, "commit": d.base.commit},
        "head": {"ref": d.head.ref, "commit": d.head.commit},
        "changed": d.changed,
        "summary": {
            "clusters": d.total,
            "changedClusters": sum(1 for c in d.clusters if c.changes),
            "added": sum(c.count("added") for c in d.clusters),
            "changed": sum(c.count("changed") for c in d.clusters),
            "removed": sum(c.count("removed") for c in d.clusters),
            "warnings": len(d.risks),
        },
        "warnings": [_risk_json(r) for r in d.risks],
        "clusters": [
            {
                "name": c.name,
                "status": c.status,
                "added": c.count("added"),
                "changed": c.count("changed"),
                "removed": c.count("removed"),
                "warnings": [_risk_json(r) for r in c.risks],
                "objects": [_object_json(ch) for ch in c.changes],
            }
            for c in d.clusters
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


# --- markdown ----------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Text outside code: no HTML, no code spans or emphasis from user input."""
    return html.escape(text, quote=False).replace("`", "&#96;").replace("*", "&#42;")


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
        note = "" if c.status in ("changed", "unchanged") else f" ({c.status})"
        rows.append(
            f"| {_md(c.name)}{note} | {c.count('added')} | {c.count('changed')} "
            f"| {c.count('removed')} | {len(c.risks)} |"
        )
    return rows


def _object_block(change: ObjectChange) -> tuple[str, list[str], str]:
    """Header, fenced lines and fence of one object, in GitHub's diff highlighting."""
    lines: list[str] = []
    for mark, text in _object_lines(change):
        lines.append(f"@@ {text} @@" if mark == "@" else f"{mark} {text}")
    fence = _fence(lines)
    return f"#### {_md(_title(change))}\n\n{fence}diff\n", lines, fence


def _cluster_section(body: _Body, c: ClusterDiff) -> bool:
    """Add one <details> section; False when the budget ran out inside or before it."""
    summary = f"<b>{_md(c.name)}</b>: {_counts(c)}"
    if c.status in ("added", "removed"):
        summary += f" (cluster {c.status})"
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


def _notice(d: RefDiff, warnings: int, rows: int, partial: str | None, cut: list[str]) -> str:
    parts = []
    if warnings:
        parts.append(f"{warnings} warning(s)")
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
    cut_warnings = len(d.risks)
    if d.risks and body.try_add(f"> [!WARNING]\n> **{len(d.risks)} GPU risk warning(s)**\n>\n"):
        for r in d.risks:
            if not body.try_add(f"> - **{_md(r.cluster)}** `{_md(r.where)}`: {_md(r.message)}\n"):
                break
            cut_warnings -= 1
        body.add("\n")
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
    if cut_warnings or cut_rows or partial or cut:
        body.add(_notice(d, cut_warnings, cut_rows, partial, cut))
    text = "".join(body.parts)
    assert _size(text) <= limit, "markdown budget overrun"
    return text
