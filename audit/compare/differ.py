"""The audit's use of the one diff engine (kubedata.diff): two normalized objects -> the changes
between them, with JSON pointers.

Why this exists: a pair that differs must say where and how, so that each finding points at one
field that can be attributed to its manager and classified. The same value on both sides
(kubedata.objects.same_value) settles the common case (no drift) first; otherwise the engine
walks both trees under the audit's policy:

- lists as server-side apply treats them (known_types.LIST_RULES): keyed lists (containers by
  name, pciHostDevices by pciVendorSelector...) matched by key, so a reorder never reads as drift;
  atomic lists reported once, on the list, with item-level details;
- a path declared in git with an empty list is not `removed` when live has none (normalize.py);
- a live-only path counts as `added` unless the server populates it or a controller injects it
  (labels, annotations): those count only when git declares them;
- `reordered` (only the order of a list whose order carries no meaning changed) is noise: a note,
  never a finding;
- `scope` limits the walk to some field paths (wiring checks);
- lists LIST_RULES does not know are merged as the served CRD's `schema` marks them (crd.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedata.diff import Change, Differ, ListRule, Segment
from kubedata.objects import KubeObject, same_value

from audit.compare.crd import Schema
from audit.compare.known_types import (
    INJECTED_ANNOTATIONS,
    INJECTED_LABELS,
    is_injected,
    list_rule,
    server_populated,
)
from audit.compare.patterns import Pattern, matches

__all__ = ["compare_normalized"]


class _AuditDiffer(Differ):
    sides = ("git", "live")

    def __init__(
        self, group: str, kind: str, scope: Sequence[Pattern] | None, schema: Schema | None
    ) -> None:
        super().__init__()
        self.live_only_ignored = server_populated(group, kind)
        self.scope = scope
        self.schema = schema
        self._list_path: tuple[str, ...] = ()

    def walk_list(
        self,
        b: list[Any],
        a: list[Any],
        segs: tuple[Segment, ...],
        ptr: str,
        fpath: tuple[str, ...],
    ) -> None:
        self._list_path = fpath  # for list_rule, which the walk asks first, by name only
        super().walk_list(b, a, segs, ptr, fpath)

    def list_rule(self, name: str, before: list[Any], after: list[Any]) -> ListRule:
        served = self.schema.list_rule(self._list_path) if self.schema else None
        return list_rule(name, before, after, served)

    def in_scope(self, fpath: tuple[str, ...]) -> bool:
        if self.scope is None:
            return True
        # a path is in scope when it lies under a scope pattern, or leads to one
        return any(
            matches(p[: len(fpath)], fpath) or matches(p, fpath[: len(p)]) for p in self.scope
        )

    def ignored_addition(self, fpath: tuple[str, ...]) -> bool:
        if len(fpath) == 3 and fpath[0] == "metadata":
            if fpath[1] == "labels" and is_injected(fpath[2], INJECTED_LABELS):
                return True
            if fpath[1] == "annotations" and is_injected(fpath[2], INJECTED_ANNOTATIONS):
                return True
        return any(matches(p, fpath) for p in self.live_only_ignored)

    def ignored_removal(self, fpath: tuple[str, ...], value: Any) -> bool:
        # declared empty, live empty or absent: the same (normalize.py)
        return isinstance(value, list) and not value

    def ignores_below(self, fpath: tuple[str, ...]) -> bool:
        if fpath in (("metadata",), ("metadata", "labels"), ("metadata", "annotations")):
            return True
        n = len(fpath)
        return any(len(p) > n and matches(p[:n], fpath) for p in self.live_only_ignored)


def compare_normalized(
    desired: KubeObject,
    live: KubeObject,
    scope: Sequence[Pattern] | None = None,
    schema: Schema | None = None,
) -> list[Change]:
    """Changes from the desired to the live object (both normalized); `scope` limits them to
    these field paths; the served CRD's `schema` says how the lists it marks are merged."""
    if same_value(desired, live):
        return []
    group = str(live.get("apiVersion") or desired.get("apiVersion", "")).rpartition("/")[0]
    kind = str(live.get("kind") or desired.get("kind", ""))
    # apiVersion is not identity (the same object is served at several versions) and kind is.
    d = {k: v for k, v in desired.items() if k != "apiVersion"}
    lv = {k: v for k, v in live.items() if k != "apiVersion"}
    return _AuditDiffer(group, kind, scope, schema).compare(d, lv)
