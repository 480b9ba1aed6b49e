"""Comparison 1 (DESIGN §6): every object of the desired (rendered) state with the live one.

Why this exists: this is what Flux's kustomize-controller applies, so its drift is classified as
that controller reverts it. An object applied partially (`ssa: Merge`, as the plain-Flux KubeVirt
overlay is) is git's only where git declares it: its other fields are its creator's, and only
hand-written GPU wiring among them is drift (collect.py). It reads the most: every desired object,
listed ahead by kind (`Live.prefetch`) rather than read one GET at a time, and one kind at a time,
so only the largest kind is in memory at once (with the objects that differ).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubedata.diff import Change
from kubedata.objects import KubeObject, ObjectKey, key_of

from audit.checks.flux import applied_by, kustomization_controller
from audit.compare.crd import Schema
from audit.compare.pairs import compare_objects
from audit.findings.classify import is_partial
from audit.sources.state import AuditState

__all__ = ["compare_git"]


@dataclass(frozen=True)
class _Drifted:
    """What the findings of one compared pair need, kept after its kind's live objects go."""

    live: KubeObject
    schema: Schema | None
    partial: bool
    changes: list[Change]


_MISSING = "missing"


def compare_git(state: AuditState) -> None:
    """Kind by kind (in the order each first appears in git): read the kind, compare its objects,
    keep only the pairs that differ, let go of the rest (Live.released); then make the findings
    in git's order, so the report is the same as comparing object by object."""
    controller = kustomization_controller(state.kustomization)
    if controller.assumed:
        state.notes.append(
            f"no Flux Kustomization applies ./{state.desired.cluster}: git findings are "
            "classified as kustomize-controller would treat them"
        )
    live, findings = state.live, state.findings
    desired = state.desired.objects
    by_kind: dict[tuple[str, str], list[tuple[int, ObjectKey]]] = {}
    for index, key in enumerate(desired.keys):
        by_kind.setdefault((key.group, key.kind), []).append((index, key))
    outcomes: dict[int, _Drifted | str] = {}
    labels = applied_by(state.kustomization)
    for (group, kind), wanted in by_kind.items():
        with live.released(group, kind):
            outcomes.update(_compare_kind(state, wanted, labels))
    for index in sorted(outcomes):
        outcome = outcomes[index]
        if outcome == _MISSING:
            findings.add(findings.missing(desired[index], controller, "git"))
        elif isinstance(outcome, _Drifted):
            compared = state.compared[key_of(outcome.live)]
            for change in outcome.changes:
                compared.add(change.pointer)
                finding = findings.from_change(
                    change,
                    outcome.live,
                    controller,
                    "git",
                    partial=outcome.partial,
                    schema=outcome.schema,
                )
                findings.add(finding)


def _compare_kind(
    state: AuditState, wanted: list[tuple[int, ObjectKey]], labels: str | None
) -> dict[int, _Drifted | str]:
    """The desired objects of one kind (index in git, key) against the live ones, compared as
    the list's pages arrive (Live.prefetch); those the lists did not hand over are read by GET."""
    desired = state.desired.objects
    outcomes: dict[int, _Drifted | str] = {}
    by_name: dict[str, list[int]] = {}
    for index, key in wanted:
        by_name.setdefault(key.name, []).append(index)
    handed: set[int] = set()

    def each(live_obj: KubeObject) -> None:
        key = key_of(live_obj)
        for index in by_name.get(key.name, ()):
            # a cluster-scoped object (no namespace) is the one git names, whatever namespace
            # the render gave it (as ApiReader.get reads it)
            if key.namespace and key.namespace != desired.keys[index].namespace:
                continue
            handed.add(index)
            outcome = _pair(state, desired[index], live_obj)
            if outcome is None:
                outcomes.pop(index, None)  # handed again after the list restarted
            else:
                outcomes[index] = outcome

    whole = state.live.prefetch((key for _, key in wanted), labels, each=each)
    for index, key in wanted:
        if index in handed:
            continue
        if (key.group, key.kind) in whole:
            outcomes[index] = _MISSING
            continue
        outcome = _compare(state, desired[index], key)
        if outcome is not None:
            outcomes[index] = outcome
    return outcomes


def _compare(state: AuditState, obj: KubeObject, key: ObjectKey) -> _Drifted | str | None:
    """One desired object against the live one read by `get`: _MISSING, what differs, or None
    (equal, or the live object could not be read)."""
    live_obj = state.live.get(key)
    if live_obj is None:
        return None if key in state.live.unread else _MISSING
    return _pair(state, obj, live_obj)


def _pair(state: AuditState, obj: KubeObject, live_obj: KubeObject) -> _Drifted | None:
    """What differs between a desired object and its live one (None: nothing)."""
    state.compared.setdefault(key_of(live_obj), set())
    schema = state.schema(live_obj)
    changes = compare_objects(obj, live_obj, schema=schema)
    if not changes:
        return None
    return _Drifted(live_obj, schema, is_partial(obj, live_obj), changes)
