"""Comparison 1 (DESIGN §6): every object of the desired (rendered) state with the live one.

Why this exists: this is what Flux's kustomize-controller applies, so its drift is classified as
that controller reverts it. An object applied partially (`ssa: Merge`, as the plain-Flux KubeVirt
overlay is) is git's only where git declares it: its other fields are its creator's, and only
hand-written GPU wiring among them is drift (collect.py). It reads the most: every desired object,
listed ahead by kind (`Live.prefetch`) rather than read one GET at a time, and one kind at a time:
the live objects that differ are kept only until their findings are made, before the next kind
is read, so only one page of a kind is in memory at once, with the kind's objects that differ.
"""

from __future__ import annotations

from itertools import count
from typing import TYPE_CHECKING, NamedTuple

from kubedata.diff import Change
from kubedata.objects import KubeObject, ObjectKey, key_of

from audit.checks.flux import applied_by, kustomization_controller
from audit.compare.crd import Schema
from audit.compare.pairs import compare_objects, normalized_changes, unchanged
from audit.findings.classify import Controller, is_partial
from audit.findings.collect import Findings
from audit.sources.packed import PackedObjects
from audit.sources.state import AuditState

if TYPE_CHECKING:
    from audit.compare.worker import Worker

__all__ = ["compare_git"]


class _Drifted(NamedTuple):
    """What the findings of one compared pair need, kept until its kind has been compared."""

    live: KubeObject
    schema: Schema | None
    partial: bool
    changes: list[Change]


_MISSING = "missing"


WORKER_MIN = 2000
"""Desired objects from which the pairs that differ are normalized and diffed in a second
process (compare/worker.py): below, its start-up (about a tenth of a second, on the other core)
is more than it saves. Measured with benchmarks/bench_audit.py."""
BATCH = 250
"""Pairs handed to the worker at once."""


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
    made: dict[int, Findings | str] = {}
    labels = applied_by(state.kustomization)
    worker = state.worker if len(desired) >= WORKER_MIN and live.reader.lists_ahead else None
    for (group, kind), wanted in by_kind.items():
        with live.released(group, kind):
            for index, outcome in _compare_kind(state, wanted, labels, worker).items():
                # made now, while the kind's live objects are here, and taken in git's order
                made[index] = (
                    _findings(state, outcome, controller)
                    if isinstance(outcome, _Drifted)
                    else outcome
                )
    for index in sorted(made):
        found = made[index]
        if isinstance(found, Findings):
            findings.absorb(found)
        else:
            findings.add(findings.missing(desired[index], controller, "git"))


def _findings(state: AuditState, drifted: _Drifted, controller: Controller) -> Findings:
    """The findings (and noise) of one drifted object, made apart from the audit's."""
    state.saw(key_of(drifted.live), (change.pointer for change in drifted.changes))
    found = Findings(state.ctx)
    for change in drifted.changes:
        found.add(
            found.from_change(
                change,
                drifted.live,
                controller,
                "git",
                partial=drifted.partial,
                schema=drifted.schema,
            )
        )
    return found


class _Batches:
    """The pairs of one kind that differ raw, compared in batches of BATCH: by the worker when it
    is free, else here, pair by pair until it is, so the two cores share the work and neither
    waits for the other. A list that restarted hands an object again: its outcome is its latest
    handing's."""

    def __init__(
        self, worker: Worker, desired: PackedObjects, outcomes: dict[int, _Drifted | str]
    ) -> None:
        self.worker, self.desired, self.outcomes = worker, desired, outcomes
        self.batch: list[tuple[int, bytes, KubeObject, Schema | None]] = []
        self.waiting: dict[int, tuple[int, _Drifted]] = {}
        """By number: the index, and what its findings need but the changes."""
        self.latest: dict[int, int] = {}
        """The number of each index's latest handing."""
        self.numbers = count()

    def handed(self, index: int) -> int:
        number = self.latest[index] = next(self.numbers)
        return number

    def add(self, index: int, live_obj: KubeObject, pending: _Drifted) -> None:
        number = self.handed(index)
        self.waiting[number] = (index, pending)
        self.batch.append((number, self.desired.blob(index), live_obj, pending.schema))
        if len(self.batch) >= BATCH:
            self.flush()

    def flush(self) -> None:
        # pair by pair here while the worker is busy, the rest to it once it is free
        while self.batch and self.worker.busy:
            number, _, live_obj, schema = self.batch.pop()
            obj = self.desired[self.waiting[number][0]]
            self._settle([(number, normalized_changes(obj, live_obj, None, schema))])
        if self.batch:
            self._settle(self.worker.send(self.batch))
        self.batch.clear()

    def finish(self) -> None:
        if self.batch:
            self.flush()
        self._settle(self.worker.collect())

    def _settle(self, results: list[tuple[int, list[Change]]]) -> None:
        for number, changes in results:
            index, pending = self.waiting.pop(number)
            if self.latest[index] != number:
                continue  # handed again since
            if changes:
                self.outcomes[index] = pending._replace(changes=changes)
            else:
                self.outcomes.pop(index, None)


def _compare_kind(
    state: AuditState,
    wanted: list[tuple[int, ObjectKey]],
    labels: str | None,
    worker: Worker | None,
) -> dict[int, _Drifted | str]:
    """The desired objects of one kind (index in git, key) against the live ones, compared as
    the list's pages arrive (Live.prefetch), those that differ raw in batches when there is a
    worker; those the lists did not hand over are read by GET."""
    desired = state.desired.objects
    outcomes: dict[int, _Drifted | str] = {}
    by_name: dict[str, list[int]] = {}
    for index, key in wanted:
        by_name.setdefault(key.name, []).append(index)
    handed: set[int] = set()
    batches = _Batches(worker, desired, outcomes) if worker is not None else None

    def each(live_obj: KubeObject) -> None:
        key = key_of(live_obj)
        for index in by_name.get(key.name, ()):
            # a cluster-scoped object (no namespace) is the one git names, whatever namespace
            # the render gave it (as ApiReader.get reads it)
            if key.namespace and key.namespace != desired.keys[index].namespace:
                continue
            handed.add(index)
            obj = desired[index]
            if batches is None:
                outcome = _pair(state, obj, live_obj)
                if outcome is None:
                    outcomes.pop(index, None)  # handed again after the list restarted
                else:
                    outcomes[index] = outcome
                continue
            state.saw(key)
            schema = state.schema(live_obj)
            if unchanged(obj, live_obj):  # what _pair would say, without asking twice
                batches.handed(index)
                outcomes.pop(index, None)
                continue
            batches.add(index, live_obj, _Drifted(live_obj, schema, is_partial(obj, live_obj), []))

    whole = state.live.prefetch((key for _, key in wanted), labels, each=each)
    if batches is not None:
        batches.finish()
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
    state.saw(key_of(live_obj))
    schema = state.schema(live_obj)
    changes = compare_objects(obj, live_obj, schema=schema)
    if not changes:
        return None
    return _Drifted(live_obj, schema, is_partial(obj, live_obj), changes)
