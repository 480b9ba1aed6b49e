"""Reports of an audit: text (people), json (DESIGN §6 contract), markdown (PR bots, issues) and
prometheus (text exposition, metrics.py).

Findings arrive redacted (redact.py): no format adds a value a finding does not carry. An
incomplete audit says so first in every format, and is never presented as clean.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from kubedata.json_text import dumps_indented
from kubedata.text import inert, markdown_text

from audit.findings.finding import FINDING_TYPES, SEVERITIES, Finding
from audit.result import AuditResult

__all__ = ["FORMATS", "MARKDOWN_LIMIT", "SCHEMA_VERSION", "render_report", "to_json"]

SCHEMA_VERSION = 1
MARKDOWN_LIMIT = 65_536
"""GitHub's comment size limit (argocd-diff-preview uses the same cap)."""
_VALUE_WIDTH = 160


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def finding_json(f: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": f.type,
        "object": f.object.to_json(),
        "path": f.path,
        "desired": f.desired,
        "live": f.live,
        "managers": [m.to_json() for m in f.managers],
        "revert": f.revert,
        "revertRelease": f.revert_release if f.revert == "next-upgrade" else None,
        "missedByDriftDetection": f.missed_by_drift_detection,
        "severity": f.severity,
        "source": f.source.to_json() if f.source else None,
        "message": f.message,
        # additions to the contract
        "comparison": f.comparison,
        "attributed": f.attributed,
        "fix": f.fix,
        "id": f.id,
    }
    if f.details:
        out["details"] = list(f.details)
    if f.vms:
        out["vms"] = list(f.vms)
    if f.redacted:
        out["redacted"] = True
    return out


def _summary(findings: Iterable[Finding]) -> dict[str, Any]:
    findings = list(findings)
    return {
        "total": len(findings),
        "bySeverity": {s: sum(f.severity == s for f in findings) for s in SEVERITIES},
        "byType": {t: n for t in FINDING_TYPES if (n := sum(f.type == t for f in findings))},
    }


def to_json(result: AuditResult) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "cluster": result.cluster,
        "complete": result.complete,
        "desiredRevision": result.desired_revision,
        "desiredSource": result.desired_source,
        "findings": [finding_json(f) for f in result.findings],
        "generatedAt": _iso(result.timestamp),
        "summary": _summary(result.findings),
        "releases": [r.to_json() for r in result.releases],
        "notes": list(result.notes),
        "warnings": list(result.warnings),
        "problems": list(result.problems),
    }


def render_json(result: AuditResult) -> str:
    return dumps_indented(to_json(result), ensure_ascii=False) + "\n"


# -- text ----------------------------------------------------------------------------------------


def _short(value: Any, width: int = _VALUE_WIDTH) -> str:
    if value is None:
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _reverts(f: Finding) -> str:
    text = {
        "next-reconcile": "at the next reconcile",
        "next-upgrade": f"at the next upgrade of {f.revert_release or 'its release'}",
        "never": "never",
        "unknown": "unknown",
    }[f.revert]
    missed = "; drift detection misses it" if f.missed_by_drift_detection else ""
    return text + missed


def _headline(result: AuditResult) -> str:
    counts = Counter(f.severity for f in result.findings)
    parts = ", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s])
    n = len(result.findings)
    head = f"drift audit of {result.cluster}: {n} finding{'s' if n != 1 else ''}"
    return head + (f" ({parts})" if parts else "")


def render_text(result: AuditResult) -> str:
    lines = []
    if not result.complete:
        lines.append("INCOMPLETE: some reads failed; this is not a clean bill of health")
    lines.append(_headline(result))
    lines += [f"WARNING: {w}" for w in result.warnings]
    lines.append(f"desired: {result.desired_revision} ({result.desired_source})")
    for release in result.releases:
        lines.append(
            f"release: {release.release} revision {release.revision} ({release.chart}), "
            f"applied {release.apply_method}"
        )
    for severity in SEVERITIES:
        group = [f for f in result.findings if f.severity == severity]
        if not group:
            continue
        lines += ["", f"{severity.upper()} ({len(group)})"]
        for f in group:
            lines.append(f"  {f.type:<9} {f.object}  {f.path or ''}".rstrip())
            lines.append(f"    id: {f.id}")
            lines.append(f"    {f.message}")
            if f.type in ("modified", "added", "removed") and not f.details:
                lines.append(f"    desired: {_short(f.desired)}")
                lines.append(f"    live:    {_short(f.live)}")
            if f.managers:
                lines.append(f"    written by: {', '.join(str(m) for m in f.managers)}")
            elif f.type in ("modified", "added"):
                lines.append("    written by: unattributable (no managedFields entry owns it)")
            lines.append(f"    reverted: {_reverts(f)}")
            if f.source:
                lines.append(f"    owned by: {f.source}")
            if f.fix:
                lines.append(f"    fix: {f.fix}")
    if not result.findings:
        lines += ["", "no drift" if result.complete else "no drift found in what could be read"]
    if result.notes:
        lines += ["", "notes:"] + [f"  - {n}" for n in result.notes]
    if result.problems:
        lines += ["", "could not read:"] + [f"  - {p}" for p in result.problems]
    # values and names come from the cluster: no line of them may hold a terminal escape or
    # start another line
    return "\n".join(inert(line) for line in lines) + "\n"


# -- markdown ------------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Text from the cluster or git, made inert for Markdown (see kubedata.text)."""
    return markdown_text(text)


def _span(text: str) -> str:
    """A code span of untrusted text: one line, and no backtick to end it early."""
    return "`" + inert(text).replace("`", "'") + "`"


def _code(value: Any) -> str:
    return _span(_short(value, 120))


def render_markdown(result: AuditResult) -> str:
    out = [f"## gpu-gitops {_headline(result)}", ""]
    if not result.complete:
        out += ["> [!WARNING]", "> Incomplete audit: some reads failed (listed below).", ""]
    for warning in result.warnings:
        out += ["> [!NOTE]", f"> {_md(warning)}", ""]
    out.append(f"Desired state: `{result.desired_revision}` ({result.desired_source})")
    out.append("")
    if result.findings:
        out += [
            "| Severity | Type | Object | Path | Written by | Reverted | Profile field |",
            "|---|---|---|---|---|---|---|",
        ]
        for f in result.findings:
            managers = ", ".join(m.manager for m in f.managers) or "—"
            source = _span(str(f.source)) if f.source else "—"
            out.append(
                f"| {f.severity} | {f.type} | {_span(str(f.object))} | {_span(f.path or '/')} "
                f"| {_md(managers)} | {_md(_reverts(f))} | {source} |"
            )
        out += ["", "<details><summary>Details and fixes</summary>", ""]
        for f in result.findings:
            out.append(
                f"- **{f.severity}** {f.type} {_span(str(f.object))} {_span(f.path or '/')} "
                f"(id `{f.id}`): "
            )
            out.append(f"  {_md(f.message)}")
            if f.type in ("modified", "added", "removed") and not f.details:
                out.append(f"  desired {_code(f.desired)}, live {_code(f.live)}")
            if f.fix:
                out.append(f"  Fix: {_md(f.fix)}")
        out += ["", "</details>"]
    else:
        out.append("No drift." if result.complete else "No drift found in what could be read.")
    if result.notes:
        out += ["", "Notes:", ""] + [f"- {_md(n)}" for n in result.notes]
    if result.problems:
        out += ["", "Could not read:", ""] + [f"- {_md(p)}" for p in result.problems]
    text = "\n".join(out) + "\n"
    if len(text) > MARKDOWN_LIMIT:
        cut = text[: MARKDOWN_LIMIT - 200].rsplit("\n", 1)[0]
        text = cut + "\n\n…truncated: run `gpu-gitops audit -o json` for every finding.\n"
    return text


def _prometheus(result: AuditResult) -> str:
    # prometheus_client loads only for this format (start-up of every other audit)
    from audit.metrics import render_prometheus

    return render_prometheus(result)


FORMATS: dict[str, Callable[[AuditResult], str]] = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
    "prometheus": _prometheus,
}


def render_report(result: AuditResult, fmt: str = "text") -> str:
    return FORMATS[fmt](result)
