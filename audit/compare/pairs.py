"""Compare a desired object with the live one: a cheap check of the raw pair, else normalize
both sides (normalize.py) and diff them (differ.py).

Why this exists: it is the one entry point every comparison (git, release, wiring) calls, and
the audit's hot path: most objects a GitOps controller applied are unchanged but for metadata the
server sets, and `unchanged` settles those without normalizing, which costs ten times more.
Normalized pairs that are the same value have no drift either; only the rest are walked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedata.diff import Change
from kubedata.objects import KubeObject, same_value

from audit.compare.crd import Schema
from audit.compare.differ import compare_normalized
from audit.compare.known_types import (
    ALWAYS_DROPPED_ANNOTATIONS,
    EMPTY_MAP_IS_A_VALUE,
    INJECTED_ANNOTATIONS,
    INJECTED_LABELS,
    SERVER_METADATA,
    is_injected,
)
from audit.compare.normalize import normalize
from audit.compare.patterns import Pattern

__all__ = ["compare_normalized", "compare_objects", "normalized_changes", "unchanged"]


_LIVE_ONLY_METADATA = frozenset({*SERVER_METADATA, "ownerReferences", "finalizers"})
"""Metadata a live object may carry that git does not declare, and that is never drift."""
_NOT_COMPARED = ("apiVersion", "metadata", "status")


def _same_map(declared: Any, live: Any, injected: tuple[str, ...], keep_empty: bool) -> bool:
    """Labels or annotations: the declared ones equal live, and live adds only injected ones."""
    if keep_empty and any(
        m == {} or (isinstance(m, dict) and not ALWAYS_DROPPED_ANNOTATIONS.isdisjoint(m))
        for m in (declared, live)
    ):
        return False  # an empty map is a value there: left to the differ
    declared = {} if declared is None else declared
    live = {} if live is None else live
    if not isinstance(declared, dict) or not isinstance(live, dict):
        return False
    for key, value in declared.items():
        if key in ALWAYS_DROPPED_ANNOTATIONS:
            continue
        if type(value) is not str or type(live.get(key)) is not str or live[key] != value:
            return False
    return all(
        key in declared or key in ALWAYS_DROPPED_ANNOTATIONS or is_injected(key, injected)
        for key in live
    )


def unchanged(desired: KubeObject, live: KubeObject) -> bool:
    """Whether the raw pair certainly compares without any change: all but metadata and status
    the same value, and metadata differing only by what is never drift (server-set fields,
    injected labels and annotations). False means "normalize and compare", not drift.

    Most objects a GitOps controller applied pass this (ConfigMaps, Secrets, custom resources
    without schema defaults), and skip normalization, which costs ten times more."""
    rest_d = {k: v for k, v in desired.items() if k not in _NOT_COMPARED}
    rest_l = {k: v for k, v in live.items() if k not in _NOT_COMPARED}
    if not same_value(rest_d, rest_l):
        return False
    meta_d, meta_l = desired.get("metadata"), live.get("metadata")
    if not isinstance(meta_d, dict) or not isinstance(meta_l, dict):
        return False
    keep_empty = str(live.get("apiVersion", "")).rpartition("/")[0] in EMPTY_MAP_IS_A_VALUE
    keep_empty |= str(desired.get("apiVersion", "")).rpartition("/")[0] in EMPTY_MAP_IS_A_VALUE
    for name, injected in (("labels", INJECTED_LABELS), ("annotations", INJECTED_ANNOTATIONS)):
        if not _same_map(meta_d.get(name), meta_l.get(name), injected, keep_empty):
            return False
    for key, value in meta_d.items():
        if key in ("labels", "annotations") or key in SERVER_METADATA:
            continue
        if key not in meta_l or not same_value(value, meta_l[key]):
            return False
    return all(
        key in meta_d or key in _LIVE_ONLY_METADATA or key in ("labels", "annotations")
        for key in meta_l
    )


def compare_objects(
    desired: KubeObject,
    live: KubeObject,
    scope: Sequence[Pattern] | None = None,
    schema: Schema | None = None,
) -> list[Change]:
    """Normalize both sides, then compare (unless the raw pair is certainly unchanged); `schema`
    is the served CRD's, when it was read (crd.py)."""
    if scope is None and unchanged(desired, live):
        return []
    return normalized_changes(desired, live, scope, schema)


def normalized_changes(
    desired: KubeObject,
    live: KubeObject,
    scope: Sequence[Pattern] | None = None,
    schema: Schema | None = None,
) -> list[Change]:
    """What differs once both sides are normalized: compare_objects past its cheap check."""
    return compare_normalized(
        normalize(desired, declared=True, schema=schema),
        normalize(live, schema=schema),
        scope,
        schema,
    )
