"""The fleet as text (people), markdown (issues, CI summaries) and json (tools); html.py has the
page. Pure: same fleet, byte-identical output. Every label value is untrusted (anyone who can
push to the Pushgateway writes them): text gets `inert`, markdown `markdown_text`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubedata.json_text import dumps_indented
from kubedata.text import code_span, inert, markdown_text

from audit.findings.finding import SEVERITIES
from audit.fleet.html import render_html
from audit.fleet.model import Fleet, FleetFinding
from audit.fleet.words import age, iso, reverts, status_text

__all__ = ["FORMATS", "SCHEMA_VERSION", "render_fleet", "to_json"]

SCHEMA_VERSION = 1


def _headline(fleet: Fleet) -> str:
    n = len(fleet.clusters)
    parts = ", ".join(f"{k} {s}" for s, k in fleet.by_status().items() if k)
    return f"fleet at {iso(fleet.at)}: {n} cluster{'s' if n != 1 else ''}" + (
        f" ({parts})" if parts else ""
    )


def _who(f: FleetFinding) -> str:
    who = f.manager or "an unknown manager"
    return f"set by {who} at {iso(f.changed)}" if f.changed else f"set by {who}, time unknown"


# -- text ----------------------------------------------------------------------------------------


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def render_text(fleet: Fleet) -> str:
    lines = [_headline(fleet), ""]
    if not fleet.clusters:
        lines.append("no cluster has pushed an audit (or none matches --cluster)")
        return "\n".join(lines) + "\n"
    head = ["CLUSTER", "STATUS", "LAST AUDIT", "AGE", *(s.upper() for s in SEVERITIES)]
    rows = [head] + [
        [inert(c.name), c.status, iso(c.last_audit), age(c.last_audit, fleet.at)]
        + [str(c.counts[s]) for s in SEVERITIES]
        for c in fleet.clusters
    ]
    lines += _table(rows)
    for c in fleet.clusters:
        if c.status in ("missing", "incomplete"):
            lines.append(f"  {inert(c.name)}: {status_text(c, fleet.at)}")
    lines += ["", f"findings at or above {fleet.min_severity}:"]
    listed = fleet.findings()
    if not listed:
        lines.append("  none")
    for f in listed:
        lines += [
            f"  {inert(f.cluster)}  {f.severity}  {inert(f.id)}  {inert(f.type)} "
            f"{inert(f.object)} {inert(f.path)}",
            f"      {inert(_who(f))}; {reverts(f.revert)}",
            f"      keep it: {inert(f.adopt)}",
        ]
    for c in fleet.clusters:
        if c.omitted:
            lines.append(
                f"  {inert(c.name)}: {c.omitted} more finding(s) without a series of their own: "
                f"gpu-gitops audit --cluster {inert(c.name)} -o json lists them"
            )
    return "\n".join(lines) + "\n"


# -- markdown ------------------------------------------------------------------------------------


def render_markdown(fleet: Fleet) -> str:
    lines = [f"### {markdown_text(_headline(fleet))}", ""]
    if not fleet.clusters:
        return "\n".join([*lines, "No cluster has pushed an audit."]) + "\n"
    lines += [
        "| cluster | status | last audit | age | " + " | ".join(SEVERITIES) + " |",
        "|---|---|---|---|" + "---:|" * len(SEVERITIES),
    ]
    for c in fleet.clusters:
        lines.append(
            f"| {markdown_text(c.name)} | {markdown_text(status_text(c, fleet.at))} | "
            f"{iso(c.last_audit)} | {age(c.last_audit, fleet.at)} | "
            + " | ".join(str(c.counts[s]) for s in SEVERITIES)
            + " |"
        )
    lines += ["", f"#### Findings at or above {fleet.min_severity}", ""]
    listed = fleet.findings()
    if not listed:
        lines.append("None.")
    else:
        lines += [
            "| cluster | severity | object | path | who, when | reverts | keep it |",
            "|---|---|---|---|---|---|---|",
        ]
    for f in listed:
        lines.append(
            f"| {markdown_text(f.cluster)} | {f.severity} | {markdown_text(f.object)} | "
            f"{code_span(f.path)} | {markdown_text(_who(f))} | {reverts(f.revert)} | "
            f"{code_span(f.adopt)} |"
        )
    return "\n".join(lines) + "\n"


# -- json ----------------------------------------------------------------------------------------


def _finding_json(f: FleetFinding) -> dict[str, Any]:
    return {
        "id": f.id,
        "severity": f.severity,
        "type": f.type,
        "revert": f.revert,
        "object": {"kind": f.kind, "namespace": f.namespace, "name": f.name},
        "path": f.path,
        "manager": f.manager,
        "changedAt": iso(f.changed) if f.changed else None,
        "adopt": f.adopt,
    }


def to_json(fleet: Fleet) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "at": iso(fleet.at),
        "minSeverity": fleet.min_severity,
        "summary": fleet.by_status(),
        "clusters": [
            {
                "cluster": c.name,
                "status": c.status,
                "lastAudit": iso(c.last_audit) if c.last_audit else None,
                "lastSuccess": iso(c.last_success) if c.last_success else None,
                "ageSeconds": int(fleet.at - c.last_audit) if c.last_audit else None,
                "complete": c.complete,
                "problems": c.problems,
                "bySeverity": c.counts,
                "omitted": c.omitted,
                "findings": [_finding_json(f) for f in c.findings],
            }
            for c in fleet.clusters
        ],
    }


def render_json(fleet: Fleet) -> str:
    return dumps_indented(to_json(fleet), ensure_ascii=False) + "\n"


FORMATS: dict[str, Callable[[Fleet], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "html": render_html,
}


def render_fleet(fleet: Fleet, fmt: str = "text") -> str:
    return FORMATS[fmt](fleet)
