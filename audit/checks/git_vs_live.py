"""Comparison 1 (DESIGN §6): every object of the desired (rendered) state with the live one.

Why this exists: this is what Flux's kustomize-controller applies, so its drift is classified as
that controller reverts it. An object applied partially (`ssa: Merge`, as the plain-Flux KubeVirt
overlay is) is git's only where git declares it: its other fields are its creator's, and only
hand-written GPU wiring among them is drift (collect.py). It reads the most: every desired object,
listed ahead by kind (`Live.prefetch`) rather than read one GET at a time.
"""

from __future__ import annotations

from kubedata.objects import key_of

from audit.checks.flux import applied_by, kustomization_controller
from audit.compare.pairs import compare_objects
from audit.findings.classify import is_partial
from audit.kinds import live_key
from audit.sources.state import AuditState

__all__ = ["compare_git"]


def compare_git(state: AuditState) -> None:
    controller = kustomization_controller(state.kustomization)
    if controller.assumed:
        state.notes.append(
            f"no Flux Kustomization applies ./{state.desired.cluster}: git findings are "
            "classified as kustomize-controller would treat them"
        )
    live, findings = state.live, state.findings
    live.prefetch((live_key(o) for o in state.desired.objects), applied_by(state.kustomization))
    for obj in state.desired.objects:
        key = live_key(obj)
        live_obj = live.get(key)
        if live_obj is None:
            if key in live.unread:
                continue
            findings.add(findings.missing(obj, controller, "git"))
            continue
        compared = state.compared.setdefault(key_of(live_obj), set())
        partial = is_partial(obj, live_obj)
        schema = state.schema(live_obj)
        for change in compare_objects(obj, live_obj, schema=schema):
            compared.add(change.pointer)
            finding = findings.from_change(
                change, live_obj, controller, "git", partial=partial, schema=schema
            )
            findings.add(finding)
