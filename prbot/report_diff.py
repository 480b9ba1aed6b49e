"""`diff` output for people and tools: text in dyff's style, and JSON (schemaVersion 1).

Risk warnings come first in both. The pull-request comment (Markdown) is report_markdown.py; what
each change looks like is shared with it (diff_lines.py).
"""

from __future__ import annotations

from typing import Any

from kubedata.json_text import dumps_indented
from kubedata.text import inert

from prbot.diff import FieldChange, ObjectChange
from prbot.diff_lines import (
    cluster_counts,
    headline,
    node_line,
    object_lines,
    object_title,
    status_note,
)
from prbot.refdiff import RefDiff
from prbot.risk_check import Risk

__all__ = ["render_json", "render_text"]


def render_text(d: RefDiff) -> str:
    """dyff's human style: warnings first, then per cluster each object's changed paths."""
    out = [f"gpu-gitops diff {headline(d)}", ""]
    if d.risks:
        out.append(f"WARNINGS ({len(d.risks)})")
        out += [f"  ! {r}" for r in d.risks]
        out.append("")
    out += _live_text(d)
    for c in d.clusters:
        status = "" if c.status in ("changed", "unchanged") else f" (cluster {status_note(c)})"
        counts = cluster_counts(c) if c.changes else "rendered objects unchanged"
        out.append(f"{c.name}{status}: {counts}")
        for change in c.changes:
            out.append(f"  {object_title(change)}")
            for mark, text in object_lines(change):
                if mark == "@":
                    out.append(f"    {text}")
                elif mark == "!":
                    out.append(f"      {text}")
                elif change.change == "changed":
                    out.append(f"        {mark} {text}")
                else:
                    out.append(f"    {mark} {text}")
        if c.nodes:
            out.append("  nodes: labels are not in git; once Flux has applied the merge, run")
            for n in c.nodes:
                out.append(f"    {node_line(n)}")
                out.append(f"      {n.command}")
        if c.warnings:
            out.append(f"  validate: {len(c.warnings)} warning(s) at head")
            out += [f"    {w}" for w in c.warnings]
        out.append("")
    if not d.clusters:
        out.append(f"no changes: all {d.total} cluster(s) render the same objects")
    return "\n".join(out).rstrip("\n") + "\n"


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


def _live_text(d: RefDiff) -> list[str]:
    if d.live is None:
        return []  # said in the PR comment only (report_markdown.py)
    out = [f"LIVE DRIFT (from {inert(d.live.source)}): {d.live.overwrites} overwritten"]
    for cluster, hits in d.live.hits.items():
        out += [f"  {'+' if h.codifies else '!'} {inert(cluster)}: {h.message()}" for h in hits]
    out += [f"  ? {inert(n)}: no audit of it in the live findings" for n in d.live.unaudited]
    return [*out, ""]


def _live_json(d: RefDiff) -> dict[str, Any] | None:
    if d.live is None:
        return None
    return {
        "source": d.live.source,
        "hits": [
            {
                "cluster": cluster,
                "finding": h.finding.id,
                "kind": "codifies" if h.codifies else "overwrites",
                "object": {
                    "kind": h.finding.kind,
                    "namespace": h.finding.namespace,
                    "name": h.finding.name,
                },
                "path": h.finding.path,
                "changedPointer": h.pointer,
                "manager": h.finding.manager,
                "changedAt": h.finding.changed or None,
                "adopt": h.finding.adopt,
                "message": h.message(),
            }
            for cluster, hits in d.live.hits.items()
            for h in hits
        ],
        "unaudited": list(d.live.unaudited),
    }


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
            "validateWarnings": len(d.warnings),
            "nodes": sum(len(c.nodes) for c in d.clusters),
        },
        "warnings": [_risk_json(r) for r in d.risks],
        "liveDrift": _live_json(d),
        "clusters": [
            {
                "name": c.name,
                "status": c.status,
                "renamedFrom": c.renamed_from,
                "added": c.count("added"),
                "changed": c.count("changed"),
                "removed": c.count("removed"),
                "warnings": [_risk_json(r) for r in c.risks],
                "objects": [_object_json(ch) for ch in c.changes],
                "nodes": [
                    {"node": n.node, "before": n.before, "after": n.after, "command": n.command}
                    for n in c.nodes
                ],
                "validateWarnings": [
                    {"file": w.file, "line": w.line, "field": w.field, "message": w.message}
                    for w in c.warnings
                ],
            }
            for c in d.clusters
        ],
    }
    return dumps_indented(doc) + "\n"
