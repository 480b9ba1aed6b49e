"""Findings as the comparisons make them: attributed, classified, explained, redacted; the noise
they skipped, counted for notes; and the reported list, each finding once, worst first.

Why this exists: every comparison (git, release, wiring, inventory) turns a difference into a
finding the same way, so that way is written once. Pure: nothing here reads the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubedata.diff import Change, show_path
from kubedata.objects import KubeObject, json_pointer

from audit.compare.crd import Schema
from audit.compare.defaults import is_known_default
from audit.findings.attribute import Attribution, ManagedEntry, attribute, managed_entries
from audit.findings.classify import Controller, classify, is_gitops_or_operator
from audit.findings.finding import (
    SEVERITIES,
    Comparison,
    Finding,
    FindingType,
    ObjectRef,
)
from audit.findings.provenance import ProfileContext, explain
from audit.findings.redact import scrub
from audit.findings.severity import is_gpu_path, severity_of

__all__ = ["Findings", "dedup", "message"]

_SEVERITY_ORDER = {s: i for i, s in enumerate(SEVERITIES)}


class Findings:
    """The findings of one audit, in the order they were made."""

    def __init__(self, ctx: ProfileContext) -> None:
        self.ctx = ctx
        self.made: list[Finding] = []
        self.reordered: list[str] = []
        """`object pointer` of lists only reordered (noise, noted)."""
        self.defaults_ignored = 0
        """Live-only fields no manager wrote: the API server's defaulting (noise, noted)."""
        self.unattributable: set[str] = set()
        """Objects whose drift cannot be attributed: they carry no managedFields."""
        self.creators_fields = 0
        """Live-only fields of partially applied objects, left to the object's creator (noise)."""
        self.pruned: list[str] = []
        """Declared fields the served CRD does not know: pruned on write, not removed by anyone."""

    def add(self, finding: Finding | None) -> None:
        if finding is not None:
            self.made.append(finding)

    def absorb(self, other: Findings) -> None:
        """Take what `other`, made apart, found and set aside as noise, after what this holds:
        as if it had been made here (the git comparison makes an object's findings while its
        kind's live objects are read, and takes them in git's order)."""
        self.made += other.made
        self.reordered += other.reordered
        self.defaults_ignored += other.defaults_ignored
        self.unattributable |= other.unattributable
        self.creators_fields += other.creators_fields
        self.pruned += other.pruned

    def finish(
        self,
        finding: Finding,
        controller: Controller,
        owners: Iterable[ManagedEntry],
        live_obj: KubeObject | None,
        field_path: tuple[str, ...],
        context: str = "",
    ) -> Finding:
        """Classify, explain and redact a finding; `context` prefixes the reason in its message."""
        owners = list(owners)
        if live_obj is not None and not managed_entries(live_obj):
            self.unattributable.add(str(ObjectRef.of(live_obj)))
        revert, release, missed, why = classify(finding, controller, owners, live_obj)
        finding.revert, finding.revert_release = revert, release
        finding.missed_by_drift_detection = missed
        finding.severity = severity_of(finding, field_path)
        finding.source, finding.fix = explain(finding, self.ctx, field_path)
        ref = finding.object
        finding.desired, hit_d = scrub(ref.group, ref.kind, field_path, finding.desired)
        finding.live, hit_l = scrub(ref.group, ref.kind, field_path, finding.live)
        finding.redacted = hit_d or hit_l
        if finding.redacted:
            finding.details = []
        finding.message = message(finding, context, why)
        return finding

    def from_change(
        self,
        change: Change,
        live_obj: KubeObject,
        controller: Controller,
        comparison: Comparison,
        context: str = "",
        partial: bool = False,
        schema: Schema | None = None,
    ) -> Finding | None:
        """The finding of one change; None for noise (a reorder, an API default, a field of a
        `partial` object that git does not declare and is not GPU wiring written by hand, a
        declared field the served CRD's `schema` does not keep)."""
        if change.kind == "reordered":
            self.reordered.append(f"{ObjectRef.of(live_obj)} {change.pointer}")
            return None
        if change.kind == "removed" and schema is not None and not schema.keeps(change.field_path):
            # no one removed it: the API server prunes what its CRD does not know
            self.pruned.append(f"{ObjectRef.of(live_obj)} {change.pointer} ({schema.source})")
            return None
        entries = managed_entries(live_obj)
        added = change.kind == "added"
        attribution = (
            attribute(entries, change.segments, within=change.after)
            if added
            else attribute(entries, change.segments)
        )
        if added and not attribution.attributed:
            ref = ObjectRef.of(live_obj)
            if attribution.has_managed_fields or is_known_default(
                ref.group, ref.kind, change.field_path, change.after
            ):
                # live-only, and no manager wrote it: the API server's defaulting did (or, with
                # no managedFields to tell, it is what some version of the CRD defaults there)
                self.defaults_ignored += 1
                return None
        if added and partial and not _hand_wiring(change, live_obj, attribution):
            # git owns only what it declares: the rest is the creator's (DESIGN §6)
            self.creators_fields += 1
            return None
        finding = Finding(
            type=change.kind,
            object=ObjectRef.of(live_obj),
            path=change.pointer,
            segments=change.segments,
            desired=change.before,
            live=change.after,
            comparison=comparison,
            managers=[e.public for e in attribution.managers],
            attributed=attribution.attributed,
            details=list(change.details),
        )
        owners = attribution.managers
        return self.finish(finding, controller, owners, live_obj, change.field_path, context)

    def of_field(
        self,
        ftype: FindingType,
        obj: KubeObject,
        segments: tuple[str, ...],
        desired: Any,
        live: Any,
        comparison: Comparison,
    ) -> Finding:
        """A finding on one field of a live object that no controller reverts, attributed to the
        managers that own the field."""
        attribution = attribute(managed_entries(obj), segments)
        finding = Finding(
            type=ftype,
            object=ObjectRef.of(obj),
            path=json_pointer(segments),
            segments=segments,
            desired=desired,
            live=live,
            comparison=comparison,
            managers=[e.public for e in attribution.managers],
            attributed=attribution.attributed,
        )
        return self.finish(finding, Controller("none"), attribution.managers, obj, segments)

    def missing(self, obj: KubeObject, controller: Controller, comparison: Comparison) -> Finding:
        """A declared object that does not exist live."""
        finding = Finding(
            type="missing",
            object=ObjectRef.of(obj),
            comparison=comparison,
            attributed=False,
        )
        return self.finish(finding, controller, (), None, ())

    def warnings(self) -> list[str]:
        """What limits the whole report, said once at its top."""
        if not self.unattributable:
            return []
        return [
            "attribution needs managedFields: "
            f"{len(self.unattributable)} drifted object(s) carry none "
            f"({', '.join(sorted(self.unattributable))}), so who changed them, and whether "
            "anything reverts what git does not declare, is unknown; capture live state with "
            "`kubectl get --show-managed-fields -o yaml`"
        ]

    def noise_notes(self) -> list[str]:
        """What was not reported, and why."""
        notes = []
        reordered = list(dict.fromkeys(self.reordered))
        if reordered:
            notes.append(
                f"{len(reordered)} list(s) only reordered (order carries no meaning there, "
                f"not drift): {'; '.join(reordered)}"
            )
        if self.creators_fields:
            notes.append(
                f"{self.creators_fields} live-only field(s) of partially applied objects "
                "(kustomize.toolkit.fluxcd.io/ssa: Merge) belong to the objects' creators and "
                "were not reported"
            )
        pruned = list(dict.fromkeys(self.pruned))
        if pruned:
            notes.append(
                f"{len(pruned)} declared field(s) the cluster's CRD does not know, so the API "
                f"server prunes them on write (upgrade the CRD to the chart's): {'; '.join(pruned)}"
            )
        if self.defaults_ignored:
            notes.append(
                f"{self.defaults_ignored} live-only field(s) no manager wrote (API defaults) "
                "were not reported"
            )
        return notes


def _hand_wiring(change: Change, live_obj: KubeObject, attribution: Attribution) -> bool:
    """GPU wiring that no GitOps controller or the object's operator wrote (or, without
    managedFields, that nobody can vouch for): drift even where git does not declare it."""
    ref = ObjectRef.of(live_obj)
    if not is_gpu_path(ref.group, ref.kind, ref.namespace, ref.name, change.field_path):
        return False
    return not attribution.attributed or any(
        not is_gitops_or_operator(m.manager, ref.group, ref.kind) for m in attribution.managers
    )


def message(finding: Finding, context: str, why: str) -> str:
    """What happened, by whom, and why it is (not) reverted."""
    where = show_path(finding.segments) or "the object"
    owners = ", ".join(str(m) for m in finding.managers)
    by = f" by {owners}" if owners else ""
    verb = {
        "modified": f"{where} was changed{by}",
        "added": f"{where} is set live{by} but git does not declare it",
        "removed": f"{where} is declared but absent live"
        + ("" if owners else " (managedFields do not record who removed it)"),
        "missing": "declared but does not exist live",
        "orphan": "orphaned",
        "unmanaged": "not managed by git or Helm",
        "suspended": "suspended",
    }[finding.type]
    if finding.type == "modified" and not finding.managers:
        verb += " (no managedFields entry owns it: unattributable)"
    details = f": {'; '.join(finding.details)}" if finding.details else ""
    return f"{verb}{details}. {context}{why}." if why else f"{verb}{details}."


def dedup(findings: list[Finding]) -> list[Finding]:
    """Each finding once (two comparisons may report the same values), worst first."""
    seen: dict[tuple[object, ...], Finding] = {}
    by_path: dict[tuple[object, ...], Finding] = {}
    out: list[Finding] = []
    for finding in findings:
        identity = finding.identity
        if identity in seen:
            first = seen[identity]
            first.vms = sorted(set(first.vms) | set(finding.vms))
            first.source = first.source or finding.source
            continue
        # a suspended Flux object also shows as a live-only /spec/suspend: keep the former
        spot = (finding.object.key, finding.path)
        if finding.type == "suspended" and spot in by_path:
            out.remove(by_path[spot])
        seen[identity] = finding
        by_path[spot] = finding
        out.append(finding)
    return sorted(
        out,
        key=lambda f: (_SEVERITY_ORDER[f.severity], str(f.object), f.path, f.comparison),
    )
